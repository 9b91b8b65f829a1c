"""Output folders of runs and cards: metaeval only ever replaces what it wrote itself.

Private: the one implementation of the ownership rules, shared by every writer of folders: the notebook runner
(:mod:`metaeval.run.notebooks`, through :mod:`metaeval.run.outputs`), the report card (:mod:`metaeval.studies.card`)
and ``metaeval import`` (:mod:`metaeval.data.tabular`), so that they can never disagree on what may be written or
deleted.

Every finished run leaves a manifest, ``.metaeval-run.<notebook>.json``, in its folder: the notebook, its
paper, the parameters and the sha256 of every file the run wrote. Before a run replaces its files,
:func:`check_target` makes sure that the folder is empty, or holds only previous runs (the manifests' files,
this notebook's unchanged). Notebooks of the same paper may share a folder (``results/deutsch2021/summeval``):
a run then replaces only its own files and keeps the others'. Anything else is refused with a message that
says why: the compendium root or a folder above it, a non-empty folder the runner did not write, another
paper's results, files added or edited by hand. Nothing is ever deleted that the runner cannot prove it wrote.

A run is staged in ``.partial-<name>-<pid>`` next to its folder and renamed into place when every cell
succeeded. A failed run keeps what it produced in ``<name>.<notebook>.failed`` (``FAILED.txt`` names the cell);
staging folders left by a killed run (SIGTERM, SIGKILL, power loss) are removed by the next run.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import metaeval._resources as _resources
from metaeval._io import remove_own_tree
from metaeval._resources import sha256

__all__ = [
    "EDITOR_ARTEFACTS",
    "is_editor_artefact",
    "remove_run_folder",
    "MANIFEST",
    "MANIFEST_PREFIX",
    "RUNNER_FILES",
    "RUNNER_MARKS",
    "STAGING_MARK",
    "OutputDirError",
    "check_target",
    "check_sweep_root",
    "write_manifest",
    "read_manifest",
    "clean_stale",
    "clean_stale_under",
    "staging_dir",
    "keep_failed",
    "swap_into_place",
    "manifest_name",
    "read_manifests",
    "failed_dir",
]

MANIFEST_PREFIX = ".metaeval-run."
FAILED_NOTE = "FAILED.txt"
#: Files the running layer writes next to a run's outputs (sweep bookkeeping); they are the runner's own.
RUNNER_FILES = frozenset({"_sweep_status.json"})


def manifest_name(notebook: str) -> str:
    """The manifest file of ``notebook``'s run in a folder."""
    return f"{MANIFEST_PREFIX}{notebook}.json"


MANIFEST = manifest_name("<notebook>")


#: What editors and tools leave in any folder they open, all listed in the compendium's ``.gitignore``: merely
#: opening an executed notebook in JupyterLab creates ``.ipynb_checkpoints/``. They are neither the user's
#: results nor a run's: the ownership check ignores them and a run carries them over unchanged (never deletes
#: them). Folder names match any path component; the other patterns match file names.
EDITOR_ARTEFACTS = (".ipynb_checkpoints/", "__pycache__/", ".DS_Store", "*.tmp", "*~", ".*.swp")


def is_editor_artefact(rel: str) -> bool:
    """True for a path (relative to a run folder, ``/``-separated) that an editor or tool left there.

    >>> is_editor_artefact(".ipynb_checkpoints/23_x-checkpoint.ipynb"), is_editor_artefact("table.csv")
    (True, False)
    """
    parts = rel.rstrip("/").split("/")
    folders = parts if rel.endswith("/") else parts[:-1]  # git names an untracked folder "name/"
    return any(pattern[:-1] in folders if pattern.endswith("/") else fnmatch.fnmatchcase(parts[-1], pattern)
               for pattern in EDITOR_ARTEFACTS)


def _is_runner_file(name: str) -> bool:
    return name in RUNNER_FILES or name == ".metaeval-staging" or (
        "/" not in name and name.startswith(MANIFEST_PREFIX) and name.endswith(".json"))


class OutputDirError(ValueError):
    """An output folder the runner refuses to write to; raised before anything runs."""


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink())


def read_manifests(folder: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The manifests of the runs in a folder, by notebook (unreadable ones are left out)."""
    found = {}
    for path in Path(folder).glob(f"{MANIFEST_PREFIX}*.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("files"), dict) and isinstance(data.get("notebook"), str):
            found[data["notebook"]] = data
    return found


def read_manifest(folder: str | os.PathLike[str], notebook: str) -> dict[str, Any] | None:
    """The manifest of ``notebook``'s run in a folder, or None."""
    return read_manifests(folder).get(notebook)


def write_manifest(folder: str | os.PathLike[str], notebook: str, parameters: Mapping[str, Any],
                   status: str = "done", paper: str | None = None) -> Path:
    """Record every file now in ``folder`` (with its sha256) as written by a run of ``notebook``.

    The manifest holds no time stamp and nothing of the machine, so a rerun with the same seeds writes the same
    bytes and a committed manifest is reproduced byte for byte. What a run depended on (its inputs) is this
    machine's record, kept outside the results (:func:`metaeval.run.incremental.record_run`).
    """
    folder = Path(folder)
    files = {name: sha256(folder / name) for name in _files(folder)
             if not _is_runner_file(name) and not is_editor_artefact(name)}
    params = {k: v for k, v in parameters.items() if k != "output_dir"}
    data = {"notebook": notebook, "paper": paper, "status": status, "parameters": params, "files": files}
    path = folder / manifest_name(notebook)
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


def _usable(target: Path, refusing: str) -> bool:
    """Raise for a folder no run may write (``refusing`` starts the message); True when the folder exists."""
    why = _protected(target)
    if why:
        raise OutputDirError(f"{refusing}: {why}; choose a new or empty folder")
    if target.exists() and not target.is_dir():
        raise OutputDirError(f"{refusing}: it is a file, not a folder")
    return target.exists()


def _shown(names: list[str], total: int) -> str:
    return ", ".join(names[:3]) + (f" and {total - 3} more" if total > 3 else "")


def check_target(folder: str | os.PathLike[str], notebook: str, given: str | os.PathLike[str] | None = None,
                 paper: str | None = None) -> Path:
    """Return the resolved folder if a run of ``notebook`` may write there; raise :class:`OutputDirError`.

    Allowed: a folder that does not exist, an empty folder, a folder holding only previous runs (this
    notebook's files unchanged; other notebooks' runs only if they are of the same ``paper``, and they are
    kept). ``given`` is the folder as the user wrote it.
    """
    name = repr(str(given if given is not None else folder))
    target = Path(folder).expanduser().resolve()
    if given is not None and str(given) != str(target):
        name += f" ({target})"
    if not _usable(target, f"refusing output_dir {name}"):
        return target
    present = [f for f in _files(target) if not _is_runner_file(f) and not is_editor_artefact(f)]
    entries = sorted(e for e in os.listdir(target) if not is_editor_artefact(e + ("/" if (target / e).is_dir()
                                                                                  else "")))
    manifests = read_manifests(target)
    if not present and not manifests:
        return target
    if not manifests:
        raise OutputDirError(
            f"refusing output_dir {name}: the folder is not empty and was not written by metaeval "
            f"(no {MANIFEST}; it holds {_shown(entries, len(entries))}); a run replaces its whole folder, so "
            "choose a new or empty folder"
        )
    others = {nb: m for nb, m in manifests.items() if nb != notebook}
    strangers = [nb for nb, m in others.items() if paper is None or m.get("paper") != paper]
    if strangers:
        raise OutputDirError(
            f"refusing output_dir {name}: it holds the results of notebook {strangers[0]!r}"
            + (f" (another paper than {paper!r})" if paper else "") + f", not {notebook!r}; choose another folder"
        )
    owned = {f for m in manifests.values() for f in m["files"]}
    extra = [f for f in present if f not in owned]
    if extra:
        raise OutputDirError(
            f"refusing output_dir {name}: it holds files no previous run wrote "
            f"({_shown(extra, len(extra))}); move them elsewhere first, a run replaces what it wrote"
        )
    own = manifests.get(notebook, {"files": {}})["files"]
    changed = [f for f, digest in own.items() if (target / f).is_file() and sha256(target / f) != digest]
    if changed:
        raise OutputDirError(
            f"refusing output_dir {name}: files of the previous run were edited since "
            f"({_shown(changed, len(changed))}); move them elsewhere first, a run replaces what it wrote"
        )
    return target


def check_sweep_root(folder: str | os.PathLike[str], notebook: str) -> Path:
    """The resolved sweep folder if a sweep of ``notebook`` may write there: new, empty, or a sweep folder of
    the same notebook (``sweep.json``); a sweep never deletes its folder, but it writes ``sweep.csv``."""
    target = Path(folder).expanduser().resolve()
    if not _usable(target, f"refusing sweep folder {str(folder)!r}"):
        return target
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
    except OSError:  # PermissionError: another user's process, alive
        return True
    return True


def _remove_stale(paths: Iterable[Path]) -> list[Path]:
    """Remove the staging and backup folders among ``paths`` (``<prefix>-<pid>``) whose process is gone."""
    removed = []
    for path in paths:
        pid = path.name.rsplit("-", 1)[-1]
        if not path.is_dir() or path.is_symlink() or not pid.isdigit():
            continue
        if (int(pid) == os.getpid() or not _pid_alive(int(pid))) and remove_run_folder(path):
            removed.append(path)
    return removed


def clean_stale(final: Path) -> list[Path]:
    """Remove staging and backup folders of ``final`` left by runs whose process is gone; returns them."""
    prefixes = (f".partial-{final.name}-", f".old-{final.name}-")
    return _remove_stale(p for prefix in prefixes for p in final.parent.glob(f"{prefix}*")
                         if p.name[len(prefix):].isdigit())


def clean_stale_under(root: str | os.PathLike[str]) -> list[Path]:
    """Remove every staging (``.partial-<name>-<pid>``) and backup (``.old-<name>-<pid>``) folder under ``root``
    whose process is gone (a run killed by SIGKILL or a power loss) and that the runner marked as its own;
    returns them. A folder of a live process (a run in progress) stays."""
    return _remove_stale(p for prefix in (".partial-", ".old-") for p in sorted(Path(root).rglob(f"{prefix}*")))


def staging_dir(final: Path) -> Path:
    """A fresh staging folder next to ``final`` (same file system, so the final rename is atomic)."""
    clean_stale(final)
    staging = final.parent / f".partial-{final.name}-{os.getpid()}"
    staging.mkdir(parents=True)
    (staging / STAGING_MARK).touch()
    return staging


STAGING_MARK = ".metaeval-staging"


RUNNER_MARKS = (STAGING_MARK, f"{MANIFEST_PREFIX}*.json")


def remove_run_folder(path: str | os.PathLike[str]) -> bool:
    """Remove a folder only if a run or card wrote it (a staging folder it marked, or a run or backup holding its
    manifest); any other folder stays. True if removed. A folder known by its manifests only goes if every file
    in it is one they list, with the content they recorded, or a manifest, a runner file or an editor's artefact
    (:data:`EDITOR_ARTEFACTS`): a file a user added or edited there (notes in a ``.failed`` folder) keeps it."""
    path = Path(path)
    # A staging folder goes whole: the runner made it (its name and its mark) and only the run writes there.
    # A mark in a folder of another name (copied by a user) does not count: that folder needs the manifests.
    if path.name.startswith(".partial-") and (path / STAGING_MARK).is_file():
        return remove_own_tree(path, RUNNER_MARKS)
    listed = {name: digest for m in read_manifests(path).values() for name, digest in m["files"].items()}

    def owns(name: str) -> bool:
        return (_is_runner_file(name) or is_editor_artefact(name)
                or name in listed and (path / name).is_file() and sha256(path / name) == listed[name])

    return remove_own_tree(path, RUNNER_MARKS, owns)


@contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on ``folder`` (``flock`` on its descriptor: no lock file is left behind) while runs
    sharing it swap their files in."""
    fd = None
    try:
        import fcntl

        fd = os.open(folder, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
    except (ImportError, OSError):  # pragma: no cover - no flock (Windows): runs of one folder in sequence
        pass
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)


def swap_into_place(staging: Path, final: Path, notebook: str, paper: str | None = None) -> None:
    """Replace ``notebook``'s files in ``final`` by the run in ``staging``; other runs of the folder (same
    paper) are carried over unchanged. The old results stay until the new ones are complete."""
    with _folder_lock(final.parent):
        if final.exists():
            check_target(final, notebook, paper=paper)  # again: files may have appeared while the notebook ran
            for other, manifest in read_manifests(final).items():
                if other == notebook:
                    continue
                clash = [f for f in manifest["files"] if (staging / f).exists()]
                if clash:
                    raise OutputDirError(f"{notebook} and {other} both write {_shown(clash, len(clash))} into "
                                         f"{final}; give one of them another output_dir")
                for f in [*manifest["files"], manifest_name(other)]:
                    _carry(final / f, staging / f)
            # what editors left (JupyterLab's checkpoints of the executed notebook) stays where it was
            for f in _files(final):
                if is_editor_artefact(f) and not (staging / f).exists():
                    _carry(final / f, staging / f)
        backup = final.parent / f".old-{final.name}-{os.getpid()}"
        if final.exists():
            os.replace(final, backup)
        (staging / STAGING_MARK).unlink(missing_ok=True)
        os.replace(staging, final)
        remove_run_folder(backup)


def _carry(source: Path, copy: Path) -> None:
    if source.exists():
        copy.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, copy)
        except OSError:
            shutil.copy2(source, copy)


def failed_dir(final: Path, notebook: str) -> Path:
    """Where a failed run of ``notebook`` for ``final`` keeps what it produced."""
    return final.parent / f"{final.name}.{notebook}.failed"


def keep_failed(staging: Path, final: Path, notebook: str, parameters: Mapping[str, Any], message: str,
                paper: str | None = None) -> Path:
    """Move a failed run's staging folder to ``<final>.<notebook>.failed`` (replacing an older failed run,
    which the runner wrote) with ``FAILED.txt`` saying which cell failed and why."""
    failed = failed_dir(final, notebook)
    (staging / FAILED_NOTE).write_text(message.rstrip("\n") + "\n", encoding="utf-8")
    write_manifest(staging, notebook, parameters, status="failed", paper=paper)
    if failed.exists():
        old = read_manifest(failed, notebook)
        # not ours, or ours with a file the user added or edited there: leave it, and keep this run apart
        if old is None or old.get("status") != "failed" or not remove_run_folder(failed):
            failed = final.parent / f"{failed.name}-{os.getpid()}"
    (staging / STAGING_MARK).unlink(missing_ok=True)
    os.replace(staging, failed)
    return failed
