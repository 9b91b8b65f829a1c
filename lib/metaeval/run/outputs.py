"""Output folders of notebook runs: the runner only ever replaces what it wrote itself.

Every finished run leaves a manifest, ``.metaeval-run.json``, in its folder: the notebook, the parameters and
the sha256 of every file the run wrote. Before a run replaces a folder, :func:`check_target` makes sure that
the folder is empty, or holds exactly a previous run of the same notebook (the manifest's files, unchanged,
and nothing else). Anything else is refused with a message that says why: the compendium root or a folder
above it, a non-empty folder the runner did not write, another notebook's results, files added or edited by
hand. Nothing is ever deleted that the runner cannot prove it wrote.

A run is staged in ``.partial-<name>-<pid>`` next to its folder and renamed into place when every cell
succeeded. A failed run keeps what it produced in ``<name>.failed`` (with ``FAILED.txt`` naming the cell);
staging folders left by a killed run (SIGTERM, SIGKILL, power loss) are removed by the next run.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from metaeval import _resources

__all__ = [
    "MANIFEST",
    "OutputDirError",
    "check_target",
    "check_sweep_root",
    "write_manifest",
    "read_manifest",
    "clean_stale",
    "staging_dir",
    "keep_failed",
    "swap_into_place",
]

MANIFEST = ".metaeval-run.json"
FAILED_NOTE = "FAILED.txt"
#: Files the running layer writes next to a run's outputs (sweep bookkeeping); they are the runner's own.
RUNNER_FILES = frozenset({MANIFEST, "_sweep_status.json"})


class OutputDirError(ValueError):
    """An output folder the runner refuses to write to; raised before anything runs."""


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink())


def _sha256(path: Path) -> str:
    return _resources.sha256(path)


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The manifest of a run folder, or None if it has none (or an unreadable one)."""
    path = Path(folder) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("files"), dict) else None


def write_manifest(folder: str | os.PathLike[str], notebook: str, parameters: Mapping[str, Any],
                   status: str = "done") -> Path:
    """Record every file now in ``folder`` (with its sha256) as written by a run of ``notebook``.

    The manifest holds no time stamp, so a rerun with the same seeds writes the same bytes.
    """
    folder = Path(folder)
    files = {name: _sha256(folder / name) for name in _files(folder) if name not in RUNNER_FILES}
    params = {k: v for k, v in parameters.items() if k != "output_dir"}
    data = {"notebook": notebook, "status": status, "parameters": params, "files": files}
    path = folder / MANIFEST
    path.write_text(json.dumps(data, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")
    return path


def _protected(target: Path) -> str | None:
    """Why ``target`` may never be a run folder, or None."""
    root = _resources.project_root().resolve()
    home = Path.home().resolve()
    if target == Path(target.anchor):
        return "it is the root of the file system"
    if target == home:
        return "it is your home folder"
    if target == root:
        return "it is the root of the compendium (the repository)"
    if root.is_relative_to(target):
        return f"it contains the compendium ({root})"
    for name in (".git", ".venv", "data", "lib", "notebooks", "tests", "requirements", "benchmarks", "tools"):
        special = root / name
        if target == special or target.is_relative_to(special):
            return f"it is (inside) the compendium's {name}/ folder, which holds no results"
    if target == root / "results":
        return "it is the compendium's results/ folder, which holds every notebook's results"
    return None


def _shown(names: list[str], total: int) -> str:
    return ", ".join(names[:3]) + (f" and {total - 3} more" if total > 3 else "")


def _git_restorable(target: Path, notebook: str) -> bool:
    """True for a results folder of ``notebook`` written before manifests existed, whose files are all
    tracked by git and unmodified: replacing it loses nothing that ``git checkout`` cannot restore."""
    import subprocess

    root = _resources.project_root().resolve()
    if not target.is_relative_to(root / "results") or not (target / f"{notebook}.ipynb").is_file():
        return False
    try:
        tracked = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", str(target)],
                                 capture_output=True, check=True, timeout=30).stdout.split(b"\0")
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "-z", "--untracked-files=all",
                                "--ignored", "--", str(target)], capture_output=True, check=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    present = {(target / f).relative_to(root).as_posix() for f in _files(target)}
    return bool(present) and present <= {t.decode() for t in tracked if t} and not dirty.strip(b"\0")


def check_target(folder: str | os.PathLike[str], notebook: str, given: str | os.PathLike[str] | None = None) -> Path:
    """Return the resolved folder if a run of ``notebook`` may replace it; raise :class:`OutputDirError`.

    Allowed: a folder that does not exist, an empty folder, a folder holding exactly a previous run of the
    same notebook (its manifest lists every file, each unchanged), or a results folder of that notebook
    from before manifests whose files git tracks unmodified. ``given`` is the folder as the user wrote it.
    """
    name = repr(str(given if given is not None else folder))
    target = Path(folder).expanduser().resolve()
    if given is not None and str(given) != str(target):
        name += f" ({target})"
    why = _protected(target)
    if why:
        raise OutputDirError(f"refusing output_dir {name}: {why}; choose a new or empty folder")
    if not target.exists():
        return target
    if not target.is_dir():
        raise OutputDirError(f"refusing output_dir {name}: it is a file, not a folder")
    entries = sorted(os.listdir(target))
    if not entries or set(_files(target)) <= RUNNER_FILES:
        return target
    manifest = read_manifest(target)
    if manifest is None:
        if _git_restorable(target, notebook):
            return target
        raise OutputDirError(
            f"refusing output_dir {name}: the folder is not empty and was not written by metaeval "
            f"(no {MANIFEST}; it holds {_shown(entries, len(entries))}); a run replaces its whole folder, so "
            "choose a new or empty folder"
        )
    if manifest.get("notebook") != notebook:
        raise OutputDirError(
            f"refusing output_dir {name}: it holds the results of notebook {manifest.get('notebook')!r}, "
            f"not {notebook!r}; choose another folder"
        )
    present = _files(target)
    listed = manifest["files"]
    extra = [f for f in present if f not in listed and f not in RUNNER_FILES]
    if extra:
        raise OutputDirError(
            f"refusing output_dir {name}: it holds files the previous run did not write "
            f"({_shown(extra, len(extra))}); move them elsewhere first, a run replaces its whole folder"
        )
    changed = [f for f, digest in listed.items() if (target / f).is_file() and _sha256(target / f) != digest]
    if changed:
        raise OutputDirError(
            f"refusing output_dir {name}: files of the previous run were edited since "
            f"({_shown(changed, len(changed))}); move them elsewhere first, a run replaces its whole folder"
        )
    return target


def check_sweep_root(folder: str | os.PathLike[str], notebook: str) -> Path:
    """The resolved sweep folder if a sweep of ``notebook`` may write there: new, empty, or a sweep folder of
    the same notebook (``sweep.json``); a sweep never deletes its folder, but it writes ``sweep.csv``."""
    target = Path(folder).expanduser().resolve()
    why = _protected(target)
    if why:
        raise OutputDirError(f"refusing sweep folder {str(folder)!r}: {why}; choose a new or empty folder")
    if not target.exists():
        return target
    if not target.is_dir():
        raise OutputDirError(f"refusing sweep folder {str(folder)!r}: it is a file, not a folder")
    entries = sorted(os.listdir(target))
    if not entries:
        return target
    try:
        previous = json.loads((target / "sweep.json").read_text(encoding="utf-8")).get("notebook")
    except (OSError, ValueError, AttributeError):
        raise OutputDirError(
            f"refusing sweep folder {str(folder)!r}: it is not empty and holds no sweep (no sweep.json; it holds "
            f"{_shown(entries, len(entries))}); choose a new or empty folder"
        ) from None
    if Path(str(previous)).stem != Path(notebook).stem:
        raise OutputDirError(f"refusing sweep folder {str(folder)!r}: it holds a sweep of {previous!r}, not "
                             f"{Path(notebook).name!r}; choose another folder")
    return target


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError as exc:  # pragma: no cover
        return exc.errno != errno.ESRCH
    return True


def clean_stale(final: Path) -> list[Path]:
    """Remove staging and backup folders of ``final`` left by runs whose process is gone; returns them."""
    removed: list[Path] = []
    parent = final.parent
    if not parent.is_dir():
        return removed
    for prefix in (f".partial-{final.name}-", f".old-{final.name}-"):
        for path in parent.glob(f"{prefix}*"):
            pid_text = path.name[len(prefix):]
            if not pid_text.isdigit() or not path.is_dir():
                continue
            if int(pid_text) == os.getpid() or not _pid_alive(int(pid_text)):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    return removed


def staging_dir(final: Path) -> Path:
    """A fresh staging folder next to ``final`` (same file system, so the final rename is atomic)."""
    clean_stale(final)
    staging = final.parent / f".partial-{final.name}-{os.getpid()}"
    staging.mkdir(parents=True)
    return staging


def swap_into_place(staging: Path, final: Path) -> None:
    """Replace ``final`` by ``staging``: the old results stay until the new ones are complete."""
    backup = final.parent / f".old-{final.name}-{os.getpid()}"
    if final.exists():
        os.replace(final, backup)
    os.replace(staging, final)
    shutil.rmtree(backup, ignore_errors=True)


def keep_failed(staging: Path, final: Path, notebook: str, parameters: Mapping[str, Any], message: str) -> Path:
    """Move a failed run's staging folder to ``<final>.failed`` (replacing an older failed run of the same
    folder, which the runner wrote) with ``FAILED.txt`` saying which cell failed and why."""
    failed = final.parent / f"{final.name}.failed"
    (staging / FAILED_NOTE).write_text(message.rstrip("\n") + "\n", encoding="utf-8")
    write_manifest(staging, notebook, parameters, status="failed")
    if failed.exists():
        old = read_manifest(failed)
        if old is None or old.get("status") != "failed":
            # not ours: leave it, and keep the failed run in its staging folder's place instead
            failed = final.parent / f"{final.name}.failed-{os.getpid()}"
        else:
            shutil.rmtree(failed)
    os.replace(staging, failed)
    return failed
