"""The embedded atlas datasets' entries (data/atlas/<name>/): one :func:`metaeval.data.atlas.register` call each.

Private: read through :func:`metaeval.data.atlas.atlas_datasets`.
"""

from __future__ import annotations
