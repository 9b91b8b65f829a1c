"""Where the compendium's files are: embedded data, notebooks, the project root, and data checksums.

Private: the one place that knows the layout of a source checkout versus an installed wheel, so that no
other module computes paths from ``__file__``.

* In a source checkout (``pip install -e .``), the data live in ``<root>/data`` and the notebooks in
  ``<root>/notebooks``.
* In an installed wheel (``pip install .``), the same files are package data: ``metaeval/_data`` and
  ``metaeval/_notebooks`` (``pyproject.toml`` maps the two folders into the package).
* ``$METAEVAL_DATA``, ``$METAEVAL_NOTEBOOKS`` and ``$METAEVAL_ROOT`` override each of them.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path
from typing import Iterable

__all__ = ["data_root", "notebooks_root", "project_root", "is_checkout", "sha256", "verify_checksums", "ChecksumError",
           "data_files", "is_documentation", "refuse_unlisted", "has_sha256", "cached_sha256", "file_state"]

_PACKAGE = Path(__file__).resolve().parent


class ChecksumError(ValueError):
    """An embedded data file is missing or its sha256 differs from ``SHA256SUMS``."""


def is_checkout() -> bool:
    """True when the package runs from a source checkout of the compendium (editable install)."""
    root = _PACKAGE.parents[1]
    return (root / "pyproject.toml").is_file() and (root / "notebooks").is_dir() and (root / "data").is_dir()


def project_root() -> Path:
    """The compendium root: ``$METAEVAL_ROOT``, the source checkout, or else the current directory.

    Relative ``output_dir`` parameters of notebooks are resolved against it.
    """
    env = os.environ.get("METAEVAL_ROOT")
    if env:
        return Path(env).resolve()
    return _PACKAGE.parents[1] if is_checkout() else Path.cwd().resolve()


def _folder(variable: str, name: str) -> Path:
    """``$variable``, else the checkout's ``<root>/<name>``, else the wheel's ``metaeval/_<name>``."""
    env = os.environ.get(variable)
    if env:
        return Path(env)
    return _PACKAGE.parents[1] / name if is_checkout() else _PACKAGE / f"_{name}"


def data_root() -> Path:
    """The folder of embedded data (``$METAEVAL_DATA`` if set)."""
    return _folder("METAEVAL_DATA", "data")


def notebooks_root() -> Path:
    """The folder of the numbered analysis notebooks (``$METAEVAL_NOTEBOOKS`` if set)."""
    return _folder("METAEVAL_NOTEBOOKS", "notebooks")


def sha256(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@lru_cache(maxsize=8)
def _read_checksums(root: Path) -> dict[str, str]:
    sums = root / "SHA256SUMS"
    if not sums.exists():
        return {}
    table = {}
    for line in sums.read_text().splitlines():
        if line.strip():
            digest, rel = line.split(maxsplit=1)
            table[rel.strip()] = digest
    return table


def file_state(path: str | os.PathLike[str]) -> tuple[Path, int, int, int, int]:
    """A file's resolved path, mtime, ctime, inode and size: the key of what a process read from it, which every
    edit changes (ctime changes on every write, even one that keeps the size and sets the mtime back) and so
    does a replacement (another inode)."""
    p = Path(path).resolve()
    st = p.stat()
    return p, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_size


@lru_cache(maxsize=4096)
def _sha256_at(state: tuple[Path, int, int, int, int]) -> str:
    return sha256(state[0])


def cached_sha256(path: str | os.PathLike[str]) -> str:
    """:func:`sha256` of a file, hashed once per state of the file in a process (:func:`file_state`): an edited or
    replaced file is hashed again, never served a stale digest."""
    return _sha256_at(file_state(path))


def has_sha256(path: str | os.PathLike[str], expected: str) -> bool:
    """True if the file's sha256 is ``expected`` (:func:`cached_sha256`)."""
    return cached_sha256(path) == expected


def expected_sha256(path: str | os.PathLike[str]) -> str | None:
    """The sha256 that ``SHA256SUMS`` lists for an embedded file, or None (user data, or not listed)."""
    root = data_root().resolve()
    try:
        rel = Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return None
    return _read_checksums(root).get(rel)


#: Files of the data folder that document the data (no program reads them); ``SHA256SUMS`` need not list them.
DOCUMENTATION = ("README*", "LICENSE*", "PROVENANCE*", "SHA256SUMS", ".gitattributes", ".gitignore")
#: Folders of the data folder that document how the data were made: the conversion scripts (``_build/``),
#: which the provenance files cite and no program of the library reads.
DOCUMENTATION_FOLDERS = ("_build/",)


def is_documentation(rel: str) -> bool:
    """True for a data-folder file that documents the data rather than holds it.

    >>> is_documentation("summeval/LICENSE.SummEval"), is_documentation("wordnet30/ppr/v2.npz")
    (True, False)
    >>> is_documentation("_build/hanna.py"), is_documentation("atlas/hanna/hanna.jsonl")
    (True, False)
    """
    import fnmatch

    if rel.startswith(DOCUMENTATION_FOLDERS):
        return True
    return any(fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], pattern) for pattern in DOCUMENTATION)


def _unlisted(rel: str, root: Path) -> ChecksumError:
    return ChecksumError(
        f"data file {rel} in {root} is not listed in {root / 'SHA256SUMS'}: the embedded data are exactly the "
        "files listed there, and an unlisted file is never used; move it out of the data folder, or, if it is "
        f"meant to be part of the data, add its line (`cd {root} && sha256sum {rel} >> SHA256SUMS`)")


def _listed_files(folder: Path, root: Path, table: dict[str, str]) -> dict[str, Path]:
    """``{relative path: path}`` of the files of ``folder`` (in the data folder ``root``) that ``table`` lists;
    raises :class:`ChecksumError` for a data file it does not list."""
    found = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        rel = path.relative_to(root).as_posix()
        if rel in table:
            found[rel] = path
        elif not is_documentation(rel):
            raise _unlisted(rel, root)
    return found


def data_files() -> dict[str, Path]:
    """``{relative path: path}`` of every embedded data file (those ``SHA256SUMS`` lists), checking that the
    data folder holds no other data file (documentation files aside, :func:`is_documentation`).

    Raises
    ------
    ChecksumError
        A file of the data folder that ``SHA256SUMS`` does not list (named), or a listed file that is missing.
    """
    root = data_root().resolve()
    table = _read_checksums(root)
    if not table:  # no checksum list (a bare data folder given by $METAEVAL_DATA): nothing to check against
        return {}
    found = _listed_files(root, root, table)
    missing = sorted(set(table) - set(found))
    if missing:
        raise ChecksumError(f"embedded data file {missing[0]} is missing from {root}; restore it from the repository")
    return found


def refuse_unlisted(folders: Iterable[str | os.PathLike[str]]) -> None:
    """Refuse a data file in these folders of the data folder that ``SHA256SUMS`` does not list, and a file it
    lists there that is missing.

    An embedded dataset reads named files of its folders; a file dropped beside them (an edited copy, an extra
    ``.jsonl``) would be ignored without a word, while ``run-all``'s fingerprint refuses it. Listing the folders
    costs no hashing (the listed files are hashed by :func:`verify_checksums` when they are read).

    Raises
    ------
    ChecksumError
        The first unlisted data file (documentation files aside), with the two ways out; or the first listed
        file of these folders that is missing (a deleted file would otherwise only show as a dataset without
        some of its records).
    """
    root = data_root().resolve()
    table = _read_checksums(root)
    if not table:
        return
    for folder in folders:
        folder = Path(folder).resolve()
        if not folder.is_relative_to(root):
            continue
        _listed_files(folder, root, table)
        prefix = folder.relative_to(root).as_posix().rstrip("/") + "/"
        missing = sorted(rel for rel in table if rel.startswith(prefix) and "/" not in rel[len(prefix):]
                         and not (root / rel).exists())
        if missing:
            raise ChecksumError(f"embedded data file {missing[0]} is missing from {root} (SHA256SUMS lists it); "
                                f"restore it from the repository (`git checkout -- {missing[0]}` in the data folder)")


def verify_checksums(paths: Iterable[str | os.PathLike[str]]) -> None:
    """Check embedded files against ``SHA256SUMS``; files outside the data folder are user data and pass.

    Raises
    ------
    ChecksumError
        A listed file is missing or its sha256 differs, or a file of the data folder is not listed (an unlisted
        file there is refused by name, never used silently).
    """
    root = data_root().resolve()
    table = _read_checksums(root)
    for p in paths:
        path = Path(p).resolve()
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            continue
        if rel not in table:
            if table and path.is_file() and not is_documentation(rel):
                raise _unlisted(rel, root)
            continue
        if not path.exists():
            raise ChecksumError(f"embedded data file {rel} is missing from {root}")
        if not has_sha256(path, table[rel]):
            raise ChecksumError(
                f"embedded data file {rel} has sha256 {cached_sha256(path)}, expected {table[rel]} "
                "(data/SHA256SUMS): the file was modified or is corrupt; restore it from the repository"
            )
