"""Output folders of notebook runs: the runner only ever replaces what it wrote itself.

The running layer's public face of the private :mod:`metaeval._outputs`, with the same names: the one
implementation of the rules (run manifests ``.metaeval-run.<name>.json`` with the sha256 of every file written,
protected folders, staging and the atomic swap into place), shared with the report card
(:mod:`metaeval.studies.card`, a layer below, which writes its folders by the same rules).
"""

from __future__ import annotations

from metaeval._outputs import *  # noqa: F403 - the public face of the private module
from metaeval._outputs import __all__ as __all__
