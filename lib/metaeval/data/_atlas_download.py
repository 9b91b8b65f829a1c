"""The downloaded atlas datasets' entries (``metaeval download NAME``): one
:func:`metaeval.data.atlas.register` call each, next to the pinned files and the converter.

Private: read through :func:`metaeval.data.atlas.atlas_datasets`.
"""

from __future__ import annotations
