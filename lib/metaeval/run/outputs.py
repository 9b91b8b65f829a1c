"""Output folders of notebook runs: the runner only ever replaces what it wrote itself.

The rules and their one implementation live in the private module :mod:`metaeval._outputs`, shared by the
runner (this layer) and the report card (:mod:`metaeval.studies.card`, a layer below, which writes its folders
by the same rules); this module is their public face for the running layer, with the same names
(``metaeval._outputs.__all__``). See :mod:`metaeval._outputs` for the rules: run manifests
(``.metaeval-run.<name>.json`` with the sha256 of every file written), protected folders, staging and the atomic
swap into place.
"""

from __future__ import annotations

from metaeval._outputs import *  # noqa: F403 - the public face of the private module
from metaeval._outputs import __all__ as __all__
