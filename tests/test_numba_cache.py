"""numba's cache of the compiled kernels cannot serve stale code (issue 45): it lives in a folder named by the
library's fingerprint (``metaeval._io.use_numba_cache``), so editing a compiled callee in another file, which
numba's own cache (keyed on the caller's file) does not notice, gives the new result. Each step runs in a fresh
interpreter on a copy of the package, as a user who edits the library would."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import metaeval
from metaeval import _io

CALLEE = "import numba\n\n\n@numba.njit(cache=True)\ndef weight(x):\n    return {} * x\n"
CALLER = ("import numba\n\nfrom metaeval.stats._probe_callee import weight\n\n\n@numba.njit(cache=True)\n"
          "def total(n):\n    s = 0.0\n    for i in range(n):\n        s += weight(i)\n    return s\n")
RUN = ("import os, metaeval\nfrom metaeval.stats._probe_caller import total\n"
       "print(total(4), os.environ.get('NUMBA_CACHE_DIR', '-'), total.stats.cache_hits.get((numba_int,), 0))")


def _package_copy(root: Path) -> Path:
    package = root / "metaeval"
    shutil.copytree(Path(metaeval.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    (package / "stats" / "_probe_callee.py").write_text(CALLEE.format("1.0"), encoding="utf-8")
    (package / "stats" / "_probe_caller.py").write_text(CALLER, encoding="utf-8")
    return package


def _run(root: Path) -> tuple[float, str, int]:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = str(root)
    code = "import numba\nnumba_int = numba.int64\n" + RUN
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                         timeout=300).stdout.split()
    return float(out[0]), out[1], int(out[2])


def test_an_edited_callee_in_another_file_gives_the_new_result(tmp_path):
    package = _package_copy(tmp_path)
    first, again = _run(tmp_path), _run(tmp_path)
    (package / "stats" / "_probe_callee.py").write_text(CALLEE.format("2.0"), encoding="utf-8")
    edited = _run(tmp_path)
    # numba's own cache gives 6.0 again: the caller's file, its key, did not change
    assert (first[0], again[0], edited[0]) == (6.0, 6.0, 12.0)  # 0 + 1 + 2 + 3, then twice that
    assert (first[2], again[2], edited[2]) == (0, 1, 0)  # compiled, from the cache, compiled
    folder = Path(first[1])
    assert folder.parent == package / "__pycache__" and (folder / _io.NUMBA_CACHE_MARK).is_file()
    assert again[1] == first[1] != edited[1]


def test_only_the_newest_own_cache_folders_are_kept(tmp_path):
    package = _package_copy(tmp_path)
    cache = package / "__pycache__"
    foreign = cache / "numba-0123456789abcdef"  # not made by metaeval (no mark): never removed
    foreign.mkdir(parents=True)
    made = []
    for k in range(_io.NUMBA_CACHES_KEPT + 2):
        (package / "stats" / "_probe_callee.py").write_text(CALLEE.format(f"{k}.0"), encoding="utf-8")
        made.append(Path(_run(tmp_path)[1]))
        # distinct modification times of the marks, whatever the file system's resolution
        os.utime(made[-1] / _io.NUMBA_CACHE_MARK, (1e9 + k, 1e9 + k))
    kept = sorted(p for p in cache.glob("numba-*") if (p / _io.NUMBA_CACHE_MARK).is_file())
    assert kept == sorted(made[-_io.NUMBA_CACHES_KEPT:]) and foreign.is_dir()


def test_an_old_cache_folder_with_a_file_numba_did_not_write_is_kept(tmp_path):
    """The prune removes a marked folder only if it holds numba's files and the mark: a user's file keeps it."""
    root = tmp_path / "__pycache__"
    folders = []
    for k in range(_io.NUMBA_CACHES_KEPT + 2):
        folder = root / f"numba-{k:016x}"
        folder.mkdir(parents=True)
        (folder / _io.NUMBA_CACHE_MARK).write_text("")
        (folder / "m.f-1.py311.nbi").write_bytes(b"")
        os.utime(folder / _io.NUMBA_CACHE_MARK, (1e9 + k, 1e9 + k))
        folders.append(folder)
    (folders[0] / "notes.txt").write_text("mine")  # oldest, with a user's file
    _io._prune_numba_caches(root)
    assert folders[0].is_dir() and not folders[1].exists()
    assert all(f.is_dir() for f in folders[2:])
