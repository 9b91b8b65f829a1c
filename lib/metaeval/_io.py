"""Private file helpers: atomic writes, the user cache folder, numba's cache of the compiled kernels (in a folder
named by the library's fingerprint: :func:`use_numba_cache`), removal of folders this program wrote, and cache
entries that cannot execute code when read (:func:`save_cached`, :func:`load_cached`)."""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from metaeval._resources import sha256

__all__ = ["TABLE_FLOAT_FORMAT", "write_table", "use_numba_cache", "numba_fingerprint",
           "atomic_write", "cache_dir", "remove_own_tree", "CacheWarning", "CacheEntry", "save_cached", "load_cached"]


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


#: The mark of a numba cache folder this program made (the only ones it prunes) and how many it keeps.
NUMBA_CACHE_MARK = ".metaeval-numba-cache"
NUMBA_CACHES_KEPT = 3


def numba_fingerprint() -> str:
    """16 hex digits of the sha256 of the path and bytes of every module of the package whose source names numba
    (every module with a compiled function, and so every module a compiled function can call)."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        data = path.read_bytes()
        if b"numba" in data:
            digest.update(path.relative_to(package).as_posix().encode("utf-8") + b"\0" + data + b"\0")
    return digest.hexdigest()[:16]


def use_numba_cache() -> Path | None:
    """Keep numba's on-disk cache of the library's compiled kernels in a folder named by :func:`numba_fingerprint`
    (``lib/metaeval/__pycache__/numba-<fingerprint>/``, else in the user cache folder), and return it.

    numba keys a cached kernel on its own file's time stamp only: a kernel in ``resampling.py`` cached before
    ``_kernels.tau_b`` (its callee, another file) was edited would come back compiled with the old ``tau_b``.
    Here any edit of any compiled module names another folder, so nothing compiled from older code is found.
    Runs before any compiled module is imported (``metaeval/__init__.py``) and sets ``NUMBA_CACHE_DIR``, which
    the runner's kernels and every subprocess inherit. A new folder prunes the older ones this
    program made (the mark :data:`NUMBA_CACHE_MARK`) beyond the :data:`NUMBA_CACHES_KEPT` newest. None (numba's
    own default then) when no folder is writable.
    """
    name = f"numba-{numba_fingerprint()}"
    for root in (lambda: Path(__file__).resolve().parent / "__pycache__", lambda: cache_dir() / "numba"):
        folder = root() / name
        try:
            if not (folder / NUMBA_CACHE_MARK).is_file():
                folder.mkdir(parents=True, exist_ok=True)
                (folder / NUMBA_CACHE_MARK).touch()
                _prune_numba_caches(folder.parent)
            if not os.access(folder, os.W_OK):
                continue
        except OSError:
            continue
        os.environ["NUMBA_CACHE_DIR"] = str(folder)
        if "numba" in sys.modules:  # numba read its environment at import: read it again
            from numba.core import config

            config.reload_config()
        return folder
    return None


def _prune_numba_caches(root: Path) -> None:
    ours = sorted((p for p in root.glob("numba-*") if (p / NUMBA_CACHE_MARK).is_file()),
                  key=lambda p: (p / NUMBA_CACHE_MARK).stat().st_mtime, reverse=True)
    for old in ours[NUMBA_CACHES_KEPT:]:
        # only numba's index and data files and the mark: a file of anyone else's keeps the folder
        remove_own_tree(old, [NUMBA_CACHE_MARK],
                        lambda name: name == NUMBA_CACHE_MARK or name.endswith((".nbi", ".nbc")))


#: How every table the compendium writes prints a float unless its caller chose fewer digits: 10 significant
#: digits, the precision results are compared at (``metaeval.run.reproduction``), not the 17 of a float's repr,
#: whose last digits move with the order of a sum and say nothing about the result.
TABLE_FLOAT_FORMAT = "%.10g"


def write_table(frame: Any, path: str | os.PathLike[str], **to_csv: Any) -> Path:
    """Write the DataFrame ``frame`` as CSV at ``path`` atomically, floats at :data:`TABLE_FLOAT_FORMAT` unless
    ``float_format`` is given; other keyword arguments go to ``DataFrame.to_csv``.

    >>> import pandas as pd, tempfile
    >>> path = write_table(pd.DataFrame({"r": [1 / 3, 0.25]}), Path(tempfile.mkdtemp()) / "t.csv", index=False)
    >>> path.read_text().splitlines()
    ['r', '0.3333333333', '0.25']
    """
    path = Path(path)
    to_csv.setdefault("float_format", TABLE_FLOAT_FORMAT)
    atomic_write(path, lambda tmp: frame.to_csv(tmp, **to_csv))
    return path


def remove_own_tree(path: str | os.PathLike[str], marks: Sequence[str],
                    owns: Callable[[str], bool] | None = None) -> bool:
    """Remove the folder ``path`` only if this program wrote it: it is empty, or it holds a file matching one of
    ``marks`` (names or glob patterns: a staging marker, a run manifest, a card's provenance) and, when ``owns``
    is given, ``owns(name)`` vouches for every file in it (``/``-separated names relative to ``path``: e.g. the
    files a manifest lists, with the content it recorded). A file a user added or edited keeps the whole folder.

    The single place where the runner and the card delete folders, so that a path computed wrongly can
    never take a user's folder with it: anything else (a file, a link, a folder without a mark, a folder with a
    file nobody vouches for) is left alone and reported by the return value (False).
    """
    path = Path(path)
    if path.is_symlink() or not path.is_dir():
        return False
    if any(path.iterdir()):
        if not any(next(path.glob(mark), None) is not None for mark in marks):
            return False
        if owns is not None:
            for item in path.rglob("*"):
                if (item.is_file() or item.is_symlink()) and not owns(item.relative_to(path).as_posix()):
                    return False
    shutil.rmtree(path, ignore_errors=True)
    return True


# ----------------------------------------------------------------------------------------------------
# Cache entries that cannot run code: tables as parquet, arrays as npz without pickles, metadata as JSON


class CacheWarning(UserWarning):
    """A cache entry was unreadable, corrupt or failed validation; it is recomputed."""


@dataclass(frozen=True)
class CacheEntry:
    """What :func:`load_cached` read: tables by name, arrays by name and the JSON metadata."""

    frames: dict[str, Any]
    arrays: dict[str, Any]
    meta: dict[str, Any]


CACHE_FORMAT = 1


def _part(path: Path, name: str) -> Path:
    return path.with_name(f"{path.stem}.{name}")


def save_cached(path: str | os.PathLike[str], *, frames: Mapping[str, Any] | None = None,
                arrays: Mapping[str, Any] | None = None, meta: Mapping[str, Any] | None = None) -> bool:
    """Write a cache entry: ``<stem>.<name>.parquet`` per table, ``<stem>.arrays.npz`` for the arrays and, last,
    ``path`` (JSON: the metadata and the sha256 of every part), so an entry without its JSON is incomplete and
    never read. Nothing in it can execute code when read (no pickle). Each file is written atomically; a cache
    folder that cannot be written only costs the next process the computation (returns False).
    """
    import json

    import numpy as np

    path = Path(path)
    parts: dict[str, str] = {}
    try:
        for name, frame in (frames or {}).items():
            target = _part(path, f"{name}.parquet")
            def write_parquet(tmp: Path, frame: Any = frame) -> None:
                frame.to_parquet(tmp, engine="pyarrow")

            atomic_write(target, write_parquet)
            parts[target.name] = sha256(target)
        if arrays:
            target = _part(path, "arrays.npz")
            plain = {name: np.asarray(value) for name, value in arrays.items()}
            if any(a.dtype.hasobject for a in plain.values()):
                raise TypeError("save_cached stores numeric and string arrays only (no objects, which need pickle)")

            def write_npz(tmp: Path) -> None:
                with open(tmp, "wb") as fh:  # a file object: np.savez would append ".npz" to a path
                    np.savez(fh, **plain)  # type: ignore[arg-type]  # numpy's stub types the kwds badly

            atomic_write(target, write_npz)
            parts[target.name] = sha256(target)
        record = {"format": CACHE_FORMAT, "frames": sorted(frames or {}), "arrays": sorted(arrays or {}),
                  "parts": parts, "meta": dict(meta or {})}
        text = json.dumps(record, sort_keys=True, ensure_ascii=False, allow_nan=True)
        atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    except OSError:
        return False
    return True


def load_cached(path: str | os.PathLike[str], *, validate: Callable[[CacheEntry], str | None] | None = None,
                what: str = "cache entry") -> CacheEntry | None:
    """Read an entry written by :func:`save_cached`, or None.

    None without a word when there is no entry; None with a :class:`CacheWarning` (the caller recomputes and
    overwrites it) when the entry is unreadable, a part is missing or its sha256 differs from the one written
    with it, or ``validate(entry)`` returns a reason (shapes, index ranges, finite values, ...). Parquet is read
    with pyarrow and arrays with ``allow_pickle=False``: a planted pickle is an error, never code that runs.

    Examples
    --------
    >>> import tempfile, numpy as np, pandas as pd
    >>> folder = Path(tempfile.mkdtemp())
    >>> save_cached(folder / "e.json", frames={"t": pd.DataFrame({"a": [1.0]})}, arrays={"x": np.arange(3)},
    ...             meta={"k": 1})
    True
    >>> entry = load_cached(folder / "e.json")
    >>> entry.frames["t"].a.tolist(), entry.arrays["x"].tolist(), entry.meta
    ([1.0], [0, 1, 2], {'k': 1})
    """
    import json
    import warnings

    import numpy as np

    path = Path(path)
    if not path.exists():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(record, dict) or record.get("format") != CACHE_FORMAT:
            raise ValueError("not an entry of this version")
        parts = record["parts"]
        for name, digest in parts.items():
            if "/" in name or "\\" in name or not name.startswith(path.stem + "."):
                raise ValueError(f"part {name!r} is not beside the entry")
            part = path.with_name(name)
            if sha256(part) != digest:
                raise ValueError(f"{name} does not match the sha256 written with it")
        frames = {}
        for name in record["frames"]:
            import pandas as pd

            frames[name] = pd.read_parquet(_part(path, f"{name}.parquet"), engine="pyarrow")
        arrays = {}
        if record["arrays"]:
            with np.load(_part(path, "arrays.npz"), allow_pickle=False) as npz:
                arrays = {name: npz[name] for name in record["arrays"]}
        entry = CacheEntry(frames=frames, arrays=arrays, meta=dict(record["meta"]))
        why = validate(entry) if validate is not None else None
    except Exception as exc:  # whatever is wrong with it, the computation is the fallback, never a crash
        why = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
    if why:
        warnings.warn(f"{what} {path} is corrupt or invalid ({why}); recomputing it", CacheWarning, stacklevel=2)
        return None
    return entry
