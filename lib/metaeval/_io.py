"""Private file helpers: atomic writes and the user cache folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence

__all__ = ["atomic_write", "cache_dir", "remove_own_tree"]


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


def remove_own_tree(path: str | os.PathLike[str], marks: Sequence[str]) -> bool:
    """Remove the folder ``path`` only if this program wrote it: it holds a file matching one of ``marks``
    (names or glob patterns: a staging marker, a run manifest, a card's provenance) or is empty.

    The single place where the runner and the card delete folders, so that a path computed wrongly can
    never take a user's folder with it: anything else (a file, a link, a folder without a mark) is left
    alone and reported by the return value (False).
    """
    import shutil

    path = Path(path)
    if path.is_symlink() or not path.is_dir():
        return False
    if any(path.iterdir()) and not any(next(path.glob(mark), None) is not None for mark in marks):
        return False
    shutil.rmtree(path, ignore_errors=True)
    return True
