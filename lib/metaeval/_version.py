"""Private leaf: the installed distribution's version, for every layer that records it (cache keys, provenance,
``metaeval --version``). It imports nothing from the package, so importing it from any layer draws no arrow
upward to the package root (which re-exports the layers).

Examples
--------
>>> from metaeval._version import __version__
>>> isinstance(__version__, str) and len(__version__) > 0
True
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    __version__: str = version("metaeval")
except PackageNotFoundError:  # pragma: no cover - running from a tree that was never installed
    __version__ = "0+unknown"
