"""Datasets you download: ``metaeval download NAME [FOLDER]`` (or :func:`download`).

Some public human-judgment datasets have no licence that lets the compendium redistribute them (no licence file
in the authors' repository): the atlas's datasets with ``distribution="download"`` (``metaeval datasets`` lists
them). :func:`download` fetches the authors' files at a pinned commit, checks each file's sha256 (for a folder of
one small file per input, as Multi_SummEval's texts, the sha256 of the folder's SHA256SUMS listing), converts
them into the dataset contract (``data/README.md``) and writes the folder with a ``PROVENANCE.md`` (URLs, commit,
sha256, the licence statement, the citation and every transformation). Afterwards
:func:`metaeval.datasets.load` takes the name::

    metaeval download dialsummeval            # -> $METAEVAL_DATASETS/dialsummeval (or the user data folder)
    python -c "import metaeval.datasets as d; print(d.load('dialsummeval').shape)"

Where the data go: ``FOLDER`` if given, else ``$METAEVAL_DATASETS/<name>`` or the platformdirs user data folder
(``~/.local/share/metaeval/datasets/<name>`` on Linux), which is where ``load(name)`` looks. The folder is
written like every metaeval output (:mod:`metaeval._outputs`), with a manifest ``.metaeval-run.download.json``;
an existing folder is replaced only if an earlier download of the same dataset wrote it and nobody changed it
(and only with ``force=True``); a folder of yours is never touched.

Without network the download fails with one line naming the URL and how to supply the file: a mirror or a local
folder (``base_url``, ``--base-url``, ``$METAEVAL_DOWNLOAD_BASE``; see :func:`download`)::

    metaeval download dialsummeval --base-url ~/Downloads    # holding the file(s) the error named
"""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import metaeval._outputs as _outputs
import metaeval._resources as _resources
from metaeval.data import _atlas_download
from metaeval.data.atlas import atlas_datasets
from metaeval.data.formats import DataError, parse_record, write_dataset

__all__ = ["DownloadError", "DownloadResult", "download", "downloaded_path", "download_names", "is_downloaded"]

#: The "notebook" name of a download in the one ownership mechanism (:mod:`metaeval._outputs`).
DOWNLOAD_RUN = "download"
RECORDS = "records.jsonl"


class DownloadError(DataError):
    """A download that failed (no network, a file whose sha256 differs, a folder that may not be written)."""


@dataclass(frozen=True)
class DownloadResult:
    """What :func:`download` did.

    Attributes
    ----------
    name : str
    folder : Path
        The dataset folder (``load(folder)`` reads it; ``load(name)`` too when it is the default folder).
    n_records : int
        JSONL records written.
    fetched : bool
        False when the folder already held this download and nothing was fetched (pass ``force=True``).
    """

    name: str
    folder: Path
    n_records: int
    fetched: bool


def download_names() -> list[str]:
    """The datasets :func:`download` knows, in the atlas's order.

    >>> download_names()[:3]
    ['dialsummeval', 'opinsummeval', 'koh2022-arxiv']
    """
    return list(_atlas_download.SPECS)


def _spec(name: str) -> _atlas_download.DownloadSpec:
    if not isinstance(name, str) or name not in _atlas_download.SPECS:
        raise DataError(f"name must be a dataset to download ({', '.join(download_names())}), got {name!r}")
    return _atlas_download.SPECS[name]


def datasets_dir() -> Path:
    """``$METAEVAL_DATASETS`` if set, else the user data folder's ``metaeval/datasets`` (platformdirs).

    Raises
    ------
    DataError
        ``$METAEVAL_DATASETS`` names something that is not a folder (a file: every dataset folder would be "inside"
        a file, which the operating system reports only as "File exists" or "Not a directory").
    """
    env = os.environ.get("METAEVAL_DATASETS")
    if env:
        folder = Path(env).expanduser()
        if folder.exists() and not folder.is_dir():
            raise DataError(f"$METAEVAL_DATASETS={env} is a file, not a folder: set it to a folder for the downloaded "
                            "datasets (created if missing), or unset it to use the user data folder")
        return folder
    import platformdirs

    return Path(platformdirs.user_data_dir("metaeval", appauthor=False)) / "datasets"


def downloaded_path(name: str) -> Path:
    """The default folder of dataset ``name`` (where :func:`download` writes it and ``load(name)`` reads it),
    whether or not it has been downloaded yet.

    >>> import os; os.environ["METAEVAL_DATASETS"] = "/tmp/ds"
    >>> downloaded_path("dialsummeval").as_posix()
    '/tmp/ds/dialsummeval'
    >>> del os.environ["METAEVAL_DATASETS"]
    """
    _spec(name)
    return datasets_dir() / name


def _manifest(folder: Path) -> dict[str, Any] | None:
    return _outputs.read_manifest(folder, DOWNLOAD_RUN) if folder.is_dir() else None


def is_downloaded(name: str, folder: str | os.PathLike[str] | None = None) -> bool:
    """True if ``folder`` (default :func:`downloaded_path`) holds a finished download of ``name``."""
    target = Path(folder) if folder is not None else downloaded_path(name)
    manifest = _manifest(target)
    return manifest is not None and manifest.get("parameters", {}).get("dataset") == name


def check_unchanged(folder: str | os.PathLike[str]) -> None:
    """Refuse a downloaded dataset folder whose files differ from what :func:`download` wrote there.

    The download's manifest (``.metaeval-run.download.json``) holds the sha256 of every file it wrote, from the
    pinned, checked source files; a record appended, a score edited or an extra ``.jsonl`` (which ``load`` would
    merge in) is refused by name, as the embedded ``data/`` refuses the same edits. Each file is hashed once per
    state in a process (:func:`metaeval._resources.has_sha256`).

    Raises
    ------
    DataError
        A file the download did not write, one it wrote that is missing, or one whose sha256 differs.
    """
    folder = Path(folder)
    manifest = _manifest(folder)
    if manifest is None:
        return
    own = manifest["files"]
    mark = _outputs.manifest_name(DOWNLOAD_RUN)
    present = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                     if (p.is_file() or p.is_symlink()) and p.name != mark)
    fix = f"run `metaeval download {manifest.get('parameters', {}).get('dataset', 'NAME')} --force` to restore it"
    extra = [f for f in present if f not in own and not _outputs.is_editor_artefact(f)]
    if extra:
        raise DataError(f"{folder / extra[0]}: not written by metaeval download (its manifest lists "
                        f"{', '.join(sorted(own))}); move it out of the folder, or {fix}")
    for rel, digest in sorted(own.items()):
        path = folder / rel
        if not path.is_file():
            raise DataError(f"{path}: written by metaeval download and now missing; {fix}")
        if not _resources.has_sha256(path, digest):
            raise DataError(f"{path}: changed since metaeval download wrote it (sha256 differs from its manifest); "
                            f"{fix}, or, to keep the edit, copy the folder without its {mark} as a dataset of your own")


def _mirror(base: str) -> str:
    """``base`` as a URL: a folder path (relative, absolute or ``~``) becomes its ``file://`` URL.

    Examples
    --------
    >>> _mirror("https://example.org/m"), _mirror("/")
    ('https://example.org/m', 'file:///')
    """
    if "://" in base:
        return base
    folder = Path(base).expanduser()
    if not folder.is_dir():
        raise DownloadError(f"--base-url {base}: neither a URL nor a folder; give the folder holding the files "
                            "(side by side, or as <owner>/<repo>/<commit>/<path>) or a URL such as file:///srv/mirror")
    return folder.resolve().as_uri()


#: Read limit for a pinned file whose size is not pinned (the files of a pinned folder, each a small text).
MAX_UNSIZED_BYTES = 256 * 2**20


def _get(url: str, local: list[str], name: str, base: str, size: int | None = None) -> bytes:
    """The bytes of a pinned file at ``url``, or (a local mirror) at one of the ``local`` paths under it; at most
    ``size`` + 1 bytes are read (:data:`MAX_UNSIZED_BYTES` without a pinned size: a link to ``/dev/zero`` is
    refused, not read into memory). A failure is one line naming the URL and how to supply the file."""
    limit = (size if size is not None else MAX_UNSIZED_BYTES) + 1
    if base.startswith("file:"):
        for candidate in (url, *(f"{base.rstrip('/')}/{quote(p)}" for p in local)):
            found = Path(urllib.request.url2pathname(urllib.parse.urlsplit(candidate).path))
            if found.exists() and not found.is_dir():  # a FIFO or device there is refused by _fetch, not skipped
                return _fetch(candidate, limit)
    try:
        return _fetch(url, limit)
    except DownloadError as exc:
        if base != _atlas_download.DEFAULT_BASE and not base.startswith("file:"):
            raise  # a mirror of the user's own: its error is the whole story
        raise DownloadError(f"{exc}; without network, fetch {url} elsewhere, put it in a folder (as {local[-1]}) "
                            f"and run: metaeval download {name} --base-url FOLDER") from None


def _local_paths(path: str, others: list[str]) -> list[str]:
    """Where a local mirror may hold the file of repository path ``path``: at that path (a clone), and by its
    own name when no other pinned file (``others``) has that name."""
    own = path.rsplit("/", 1)[-1]
    return [path] + ([own] if sum(p.rsplit("/", 1)[-1] == own for p in others) == 1 else [])


def _fetch(url: str, limit: int) -> bytes:
    """At most ``limit`` bytes of ``url``; a local file must be a regular file (checked before it is opened: a
    FIFO would block the read forever, and ``timeout`` does not apply to ``file://``)."""
    if url.startswith("file:"):
        import stat

        path = urllib.request.url2pathname(urllib.parse.urlsplit(url).path)
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = None  # urlopen reports the missing file below
        if mode is not None and not stat.S_ISREG(mode):
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) \
                else "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            raise DownloadError(f"cannot download {url}: {path} is {kind}, not a regular file; put the pinned file "
                                "itself there")
    try:
        with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - https or a file:// mirror
            data = bytes(response.read(limit))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise DownloadError(f"cannot download {url}: {' '.join(str(reason).split())}") from None
    if len(data) >= limit:
        raise DownloadError(f"cannot download {url}: it holds more than the {limit - 1} bytes expected (read stopped "
                            "there); the mirror's file is not the pinned one")
    return data


def _provenance(spec: _atlas_download.DownloadSpec, base: str, converted: Any) -> str:
    entry = atlas_datasets()[spec.name]
    lines = [f"# {entry.title}", "", f"Written by `metaeval download {spec.name}`; not part of the compendium's "
             "repository.", "", "## Source files", "", "| file | URL at the pinned commit | sha256 | bytes |",
             "|---|---|---|---|"]
    for f in spec.files:
        lines.append(f"| `{f.path}` | {f.url()} | `{f.sha256}` | {f.size} |")
    for d in spec.folders:
        lines.append(f"| `{d.path}/` ({d.count} files, one per input id) | {d.url('')} | `{d.sha256sums}` (sha256 of "
                     "the folder's SHA256SUMS listing) | |")
    if base != _atlas_download.DEFAULT_BASE:
        lines += ["", f"Fetched from the mirror `{base}` (same layout; every sha256 checked)."]
    repos = sorted({f"{f.repo}@{f.commit}" for f in spec.files})
    lines += ["", f"Repository and commit: {', '.join(repos)}.", "", "## Licence", "", spec.licence + "."]
    if spec.terms_note:
        lines += ["", f"Note: {spec.terms_note}."]
    lines += ["", "## Citation", "", entry.citation + ".", "", "## Transformations", ""]
    lines += [f"- {step}" for step in converted.transformations]
    lines += [f"- written as `{RECORDS}` (sorted by instance, then system) and `dataset.yml` (human scores, "
              "default, display names)", ""]
    if entry.notes:
        lines += ["## Notes", "", entry.notes + ".", ""]
    return "\n".join(lines)


def download(name: str, folder: str | os.PathLike[str] | None = None, *, base_url: str | None = None,
             force: bool = False, show: Callable[[str], object] | None = print) -> DownloadResult:
    """Fetch dataset ``name``'s pinned files, check their sha256, convert them and write the dataset folder.

    Parameters
    ----------
    name : str
        One of :func:`download_names`.
    folder : path, optional
        Where to write the dataset; default :func:`downloaded_path` (where ``load(name)`` looks).
    base_url : str, optional
        Replaces ``https://raw.githubusercontent.com`` in every URL (default ``$METAEVAL_DOWNLOAD_BASE``), e.g.
        ``file:///srv/mirror`` holding ``<owner>/<repo>/<commit>/<path>``, or a folder path holding the files in
        that layout, at their repository paths (a clone) or side by side under their own names.
    force : bool
        Download again and replace an earlier download of this dataset in ``folder`` (never a folder metaeval
        did not write). Without it an existing download is left as it is.
    show : callable or None
        Receives the lines saying where the data came from, under which terms and where they went (default
        ``print``; None: silent).

    Returns
    -------
    DownloadResult

    Raises
    ------
    DownloadError
        No network or a file not found (the message names the URL), a file whose sha256 differs from the pinned
        one (naming the file, the expected and the received sha256), or a folder that may not be written.
    """
    spec = _spec(name)
    target_given = folder if folder is not None else downloaded_path(name)
    try:
        target = _outputs.check_target(target_given, DOWNLOAD_RUN, given=target_given, paper=DOWNLOAD_RUN)
    except _outputs.OutputDirError as exc:
        raise DownloadError(f"{target_given}: exists and was not written by metaeval download (or was changed "
                            f"since); choose a new folder, or remove it yourself ({exc})") from None
    manifest = _manifest(target)
    if manifest is not None:
        previous = manifest.get("parameters", {}).get("dataset")
        if previous != name:
            raise DownloadError(f"{target}: holds the download of {previous!r}, not {name!r}; choose another folder")
        if not force:
            if show is not None:
                show(f"{name}: already downloaded in {target} (pass --force / force=True to download it again)")
            n = sum(1 for line in (target / RECORDS).read_text(encoding="utf-8").splitlines() if line.strip())
            return DownloadResult(name, target, n, fetched=False)
    base = _mirror(base_url or os.environ.get("METAEVAL_DOWNLOAD_BASE") or _atlas_download.DEFAULT_BASE)
    payload: dict[str, bytes] = {}
    for f in spec.files:
        url = f.url(base)
        data = _get(url, _local_paths(f.path, [g.path for g in spec.files]), name, base, size=f.size)
        got = hashlib.sha256(data).hexdigest()
        if got != f.sha256:
            raise DownloadError(f"{f.path} ({url}): sha256 mismatch: expected {f.sha256}, got {got} "
                                f"({len(data)} bytes, expected {f.size}); nothing was written")
        payload[f.path] = data
    if spec.folders and spec.folder_names is not None:
        names = spec.folder_names(payload)
        for pinned in spec.folders:
            listing = ""
            for file_name in sorted(names):
                local = [f"{pinned.path}/{file_name}", f"{pinned.path.rsplit('/', 1)[-1]}/{file_name}"]
                data = _get(pinned.url(file_name, base), local, name, base)
                listing += f"{hashlib.sha256(data).hexdigest()}  {file_name}\n"
                payload[f"{pinned.path}/{file_name}"] = data
            got = hashlib.sha256(listing.encode()).hexdigest()
            if got != pinned.sha256sums or len(names) != pinned.count:
                raise DownloadError(f"{pinned.path}/ ({len(names)} files under {pinned.url('', base)}): sha256 of "
                                    f"its SHA256SUMS listing mismatch: expected {pinned.sha256sums} ({pinned.count} "
                                    f"files), got {got}; nothing was written")
    converted = spec.convert(payload)
    for i, record in enumerate(converted.records, 1):  # the reader's own checks, before anything is written
        parse_record(record, f"{name}: record {i}", reference_records="skip")
    write_dataset(target, DOWNLOAD_RUN, converted.records, converted.meta,
                  {"dataset": name, "source": sorted({f"{f.repo}@{f.commit}" for f in spec.files})},
                  {"PROVENANCE.md": _provenance(spec, base, converted)})
    if show is not None:
        for f in spec.files:
            show(f"{name}: {f.url()} (sha256 {f.sha256[:12]}... checked)")
        for d in spec.folders:
            show(f"{name}: {d.url('')} ({d.count} files; sha256 of their listing {d.sha256sums[:12]}... checked)")
        show(f"{name}: terms: {spec.licence}" + (f"; {spec.terms_note}" if spec.terms_note else ""))
        show(f"{name}: {len(converted.records)} records written to {target} (see its PROVENANCE.md; cite: "
             f"{atlas_datasets()[name].citation})")
    return DownloadResult(name, target, len(converted.records), fetched=True)
