"""Incremental rebuilds: what a notebook run depends on, whether this machine already ran it, and whether the
outputs reproduce the committed ones.

A run's *inputs* are its notebook source, the library modules it imports (transitively, read from the source
code's import statements, including imports inside functions), the content of every data file it can read (each
embedded file ``SHA256SUMS`` lists, hashed from its bytes, shipped vectors included; or the files of a dataset
given as a path) and its effective parameters. :func:`fingerprint` hashes each of them.

*What ran here* is recorded on this machine, not in the committed results: after a run the runner writes a
record (:func:`record_run`: the fingerprint and the sha256 of every output) into the checkout's state folder
``.cache/runs/`` (``$METAEVAL_STATE`` overrides it; git ignores it). :func:`unchanged` tells ``metaeval run-all``
that a run can be skipped: this machine ran it with the same inputs and its outputs are exactly as that run left
them. A fresh clone has no record, so its first ``run-all`` runs everything, and
:func:`metaeval.run.reproduction.reproduction_report` then compares every output with the committed file at a
stated precision (``run-all --report``). ``run-all --force`` reruns everything.

The dependency rule is conservative: an import anywhere in a module counts, even one only some code paths reach,
so a run is never skipped when a module it might use changed; a module that nothing a notebook imports reaches
(another paper's study module) never reruns it. Every embedded data file counts for every run (a notebook may
read another dataset's files, e.g. the WordNet vectors), so an edited data byte reruns every run that reads it.

>>> from metaeval import _resources
>>> deps = library_dependencies(_resources.notebooks_root() / "23_deutsch2021_normality.py")
>>> "metaeval/studies/deutsch.py" in deps, "metaeval/studies/graham.py" in deps
(True, False)
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import metaeval._resources as _resources

__all__ = ["INPUTS_KEY", "fingerprint", "library_dependencies", "up_to_date", "changed_inputs", "unchanged",
           "state_dir", "record_run", "read_record"]

#: The manifest key holding a run's fingerprint.
INPUTS_KEY = "inputs"
_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # lib/metaeval


def _relative(path: Path) -> str:
    """``metaeval/<...>.py``: a module's name in a fingerprint, the same in a checkout and an installed wheel."""
    return path.resolve().relative_to(_PACKAGE_DIR.parent).as_posix()


@lru_cache(maxsize=None)
def _module_file(name: str) -> Path | None:
    """The source file of the metaeval module ``name``, of the module a short alias (``metaeval.deutsch``) or a
    lazy name of the package (``metaeval.correlate``) loads, or None (an attribute of a module, such as
    ``metaeval.stats.correlation.correlate``: that module is a dependency already and its imports are followed).
    Read from the package's files and tables: importing a module to find its file would cost a no-op run-all the
    import of the whole library (numba, scipy: seconds)."""
    import metaeval

    local = _file_of(name)
    parent, _, attr = name.rpartition(".")
    if local is not None or parent != "metaeval":
        return local
    target = metaeval._ALIASES.get(attr) or metaeval._LAZY.get(attr)
    return _file_of(target) if target else None


def _file_of(name: str) -> Path | None:
    """The source file of module ``name`` in the package's folder (``a/b.py`` or ``a/b/__init__.py``), or None.

    >>> _file_of("metaeval.run.incremental").name, _file_of("metaeval.run").name, _file_of("metaeval.deutsch")
    ('incremental.py', '__init__.py', None)
    """
    parts = name.split(".")
    if parts[0] != "metaeval":
        return None
    base = _PACKAGE_DIR.joinpath(*parts[1:])
    for path in (base.with_suffix(".py") if len(parts) > 1 else None, base / "__init__.py"):
        if path is not None and path.is_file():
            return path.resolve()
    return None


def _imports(tree: ast.AST, package: str) -> set[str]:
    """Every metaeval name a module or notebook imports or reads as ``metaeval.<name>``."""
    names: set[str] = set()
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names.add(alias.name)
                if alias.name == "metaeval":
                    aliases.add(alias.asname or "metaeval")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            names.add(f"metaeval.{node.attr}")
    return {n for n in names if n == "metaeval" or n.startswith("metaeval.")}


def _package_inits(path: Path) -> set[Path]:
    """The ``__init__.py`` files Python runs before the module at ``path``."""
    inits = set()
    folder = path.parent
    while folder.is_relative_to(_PACKAGE_DIR):
        init = folder / "__init__.py"
        if init.is_file():
            inits.add(init.resolve())
        folder = folder.parent
    return inits


def _dependencies(source: Path, package: str) -> set[Path]:
    """The library modules (and their packages' ``__init__.py``) the file at ``source`` imports directly."""
    found = set()
    for name in _imports(ast.parse(source.read_text(encoding="utf-8"), filename=str(source)), package):
        file = _module_file(name)
        if file is not None and file.is_relative_to(_PACKAGE_DIR):
            found |= {file, *_package_inits(file)}
    return found


@lru_cache(maxsize=None)
def _direct_dependencies(path: Path) -> frozenset[Path]:
    return frozenset(_dependencies(path, ".".join(path.relative_to(_PACKAGE_DIR.parent).parts[:-1])))


def library_dependencies(source: str | os.PathLike) -> dict[str, str]:
    """``{module path: sha256}`` of every library module the notebook (or module) at ``source`` imports,
    transitively (including the packages' ``__init__.py``)."""
    todo = _dependencies(Path(source), "")
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo |= _direct_dependencies(path) - seen
    return {_relative(p): _resources.sha256(p) for p in sorted(seen)}


def _data_checksums(dataset: Any) -> dict[str, str]:
    """The data a run can read, by content: the sha256 of the bytes of every embedded data file (not of the
    checksum list, which an edit of a data file may leave unchanged) and, for a dataset given as a path, of
    each of its files.

    Raises
    ------
    metaeval._resources.ChecksumError
        The data folder holds a file ``SHA256SUMS`` does not list (named), or a listed file is missing.
    """
    digest = _resources.cached_sha256
    out = {f"data/{rel}": digest(path) for rel, path in _resources.data_files().items()}
    if isinstance(dataset, (str, os.PathLike)) and str(dataset):
        path = Path(dataset)
        if not path.is_absolute():
            path = _resources.project_root() / path
        if path.is_dir():
            out.update({str(Path(dataset) / f.relative_to(path)): digest(f) for f in sorted(path.rglob("*"))
                        if f.is_file()})
        elif path.is_file():
            out[str(dataset)] = digest(path)
    return out


def fingerprint(notebook: str | os.PathLike, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """What a run of ``notebook`` (a source path) with the effective ``parameters`` depends on, hashed.

    ``output_dir`` is left out: where the outputs go does not change them.
    """
    source = Path(notebook)
    params = {k: v for k, v in parameters.items() if k != "output_dir"}
    return {
        "notebook": _resources.sha256(source),
        "library": library_dependencies(source),
        "data": _data_checksums(params.get("dataset")),
        "parameters": hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode("utf-8")).hexdigest(),
    }


def changed_inputs(manifest: Mapping[str, Any] | None, current: Mapping[str, Any]) -> list[str]:
    """What differs between the fingerprint stored in ``manifest`` and ``current`` (empty: nothing)."""
    if not manifest or manifest.get("status") != "done" or INPUTS_KEY not in manifest:
        return ["no record of the inputs of the last run"]
    old = manifest[INPUTS_KEY]
    changes = [key for key in ("notebook", "parameters") if old.get(key) != current.get(key)]
    for key in ("library", "data"):
        before, now = old.get(key, {}), current.get(key, {})
        changes += [f"{key} {name}" for name in sorted(set(before) | set(now)) if before.get(name) != now.get(name)]
    return changes


def up_to_date(folder: str | os.PathLike, manifest: Mapping[str, Any] | None, current: Mapping[str, Any]) -> bool:
    """True when the run that wrote ``folder`` had the inputs ``current`` and its outputs are untouched."""
    if changed_inputs(manifest, current):
        return False
    assert manifest is not None
    folder = Path(folder)
    for name, digest in manifest.get("files", {}).items():
        path = folder / name
        if not path.is_file() or _resources.sha256(path) != digest:
            return False
    return True


def state_dir() -> Path:
    """Where this machine records the runs it did: ``$METAEVAL_STATE``, else ``<compendium root>/.cache/runs``
    (ignored by git: a fresh clone has no record and runs everything)."""
    env = os.environ.get("METAEVAL_STATE")
    return Path(env) if env else _resources.project_root() / ".cache" / "runs"


def _record_path(folder: str | os.PathLike, notebook: str) -> Path:
    key = f"{Path(folder).resolve()}\0{notebook}"
    return state_dir() / f"{notebook}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:16]}.json"


def record_run(folder: str | os.PathLike, notebook: str, inputs: Mapping[str, Any],
               files: Mapping[str, str]) -> Path:
    """Record that this machine ran ``notebook`` into ``folder`` with ``inputs`` and wrote ``files``
    (``{name: sha256}``); written atomically."""
    from metaeval._io import atomic_write

    path = _record_path(folder, notebook)
    data = {"folder": str(Path(folder).resolve()), "notebook": notebook, "status": "done",
            INPUTS_KEY: dict(inputs), "files": dict(files)}
    text = json.dumps(data, indent=1, sort_keys=True, default=str) + "\n"
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return path


def read_record(folder: str | os.PathLike, notebook: str) -> dict[str, Any] | None:
    """This machine's record of its last run of ``notebook`` into ``folder``, or None."""
    try:
        data = json.loads(_record_path(folder, notebook).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("files"), dict) else None


def unchanged(source: str | os.PathLike, parameters: Mapping[str, Any], folder: str | os.PathLike,
              notebook: str) -> bool:
    """True when this machine ran ``notebook`` (its source at ``source``) into ``folder`` with the inputs of a
    run with the effective ``parameters`` now, and the outputs are untouched since: ``run-all`` skips it."""
    from metaeval.run.outputs import read_manifest

    folder = Path(folder)
    if not folder.is_dir():
        return False
    manifest = read_manifest(folder, notebook)
    record = read_record(folder, notebook)
    if manifest is None or record is None or manifest.get("files") != record.get("files"):
        return False
    return up_to_date(folder, record, fingerprint(source, parameters))
