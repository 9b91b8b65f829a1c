"""Private file helpers: atomic writes and the user cache folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

__all__ = ["atomic_write", "cache_dir"]


def cache_dir() -> Path:
    """``$METAEVAL_CACHE`` if set, else the user cache folder (``platformdirs``), e.g. ``~/.cache/metaeval``."""
    env = os.environ.get("METAEVAL_CACHE")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("metaeval", appauthor=False))


def atomic_write(path: str | os.PathLike[str], write: Callable[[Path], object]) -> None:
    """Call ``write(tmp_path)`` then rename onto ``path``: nothing half-written is ever at ``path``.

    The temporary file sits in the same folder (a rename is atomic only within one file system) and is
    removed if ``write`` fails.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".partial-{os.getpid()}-{path.name}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
