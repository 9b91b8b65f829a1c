"""The loader's internals: the embedded datasets' table, resolving a name or path to files, merging records
into a :class:`~metaeval.data._dataset.Dataset`, and the in-process and on-disk caches of parsed datasets.

Private: :mod:`metaeval.data.datasets` holds the public API (:func:`~metaeval.data.datasets.load`, ...).
"""

from __future__ import annotations

import functools
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import metaeval._resources as _resources
from metaeval.data.formats import (
    FORMAT_HELP,
    DataError,
    DataWarning,
    Record,
    ReferenceRecords,
    parse_record,
    read_dataset_yml,
    read_jsonl,
)
from metaeval.data import tabular
from metaeval.data._dataset import Dataset, DatasetInfo, _infer_human


def data_dir() -> Path:
    """The folder of embedded data: ``$METAEVAL_DATA`` if set, else the compendium's ``data/``."""
    return _resources.data_root()


_SUMMEVAL_HUMAN = tuple(f"{who}.{dim}" for who in ("expert", "turker")
                        for dim in ("coherence", "consistency", "fluency", "relevance"))
_SUMMEVAL_META: dict[str, Any] = {"human_scores": list(_SUMMEVAL_HUMAN), "default_human": "expert.relevance",
                                  "recall_oriented": False}
_REALSUMM_META: dict[str, Any] = {"human_scores": ["litepyramid.recall"], "default_human": "litepyramid.recall",
                                  "recall_oriented": True, "display_names": {"litepyramid.recall": "LitePyramid"}}

# name -> (paths relative to data_dir(), description, metadata as in dataset.yml)
_Entry = tuple[tuple[str, ...], str, dict[str, Any]]
_KNOWN: dict[str, _Entry] = {
    "summeval": (
        ("summeval/summeval_joined.jsonl", "deutsch2021/fabbri2020"),
        ("SummEval: 16 systems x 100 CNN/DM inputs, texts, 11 references, expert and crowd ratings, "
         "Deutsch et al.'s metric scores"),
        _SUMMEVAL_META,
    ),
    "realsumm": (
        ("realsumm/realsumm_joined.jsonl", "deutsch2021/bhandari2020"),
        ("REALSumm: 24 systems x 100 CNN/DM inputs, texts, 1 reference, LitePyramid recall, "
         "Deutsch et al.'s metric scores"),
        _REALSUMM_META,
    ),
    "fabbri2020": (
        ("deutsch2021/fabbri2020",),
        "Deutsch et al. (2021) metric scores + ratings on SummEval, no texts (16 x 100)",
        _SUMMEVAL_META,
    ),
    "bhandari2020": (
        ("deutsch2021/bhandari2020",),
        "Deutsch et al. (2021) metric scores + LitePyramid on REALSumm, no texts (24 x 100)",
        _REALSUMM_META,
    ),
}
_ALIASES = {
    "deutsch2021": "fabbri2020",
    "deutsch2021/fabbri2020": "fabbri2020",
    "deutsch2021/bhandari2020": "bhandari2020",
}


@functools.cache
def _known() -> dict[str, _Entry]:
    """The table of embedded names: the entries above, then every embedded atlas dataset (read from
    :mod:`metaeval.data.atlas` on first use, not at import: the registry's tables may import the data layer)."""
    from metaeval.data.atlas import atlas_datasets

    atlas: dict[str, _Entry] = {name: ((entry.folder,), _atlas_description(entry), {})
                                for name, entry in atlas_datasets("embedded").items()
                                if name not in _KNOWN and entry.folder}
    return {**_KNOWN, **atlas}


def _atlas_description(entry: Any) -> str:
    texts = "texts" if entry.texts else "no texts"
    who = f"{entry.annotators} annotators" if entry.annotators else "aggregated scores"
    return (f"{entry.title}: {entry.systems} systems x {entry.inputs} inputs, {entry.domain} ({entry.language}), "
            f"{entry.judgment} {entry.default_human}, {who}, {texts}; {entry.licence}")


# ----------------------------------------------------------------------------------------------------
# Loading


def _resolve(name_or_path: Any) -> tuple[str, list[Path], dict[str, Any], str]:
    """(name, files, metadata, description) of a dataset name or path."""
    if name_or_path is None or not isinstance(name_or_path, (str, os.PathLike)):
        raise DataError(
            f"name_or_path must be a dataset name ({', '.join(_known())}) or a path, got {type(name_or_path).__name__}"
        )
    text = os.fspath(name_or_path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not text.strip():
        raise DataError(
            f"name_or_path is empty; give a dataset name ({', '.join(_known())}) or the path of a folder or JSONL file"
        )
    key = _ALIASES.get(text, text)
    if key in _known():
        rels, desc, meta = _known()[key]
        meta = dict(meta)
        files: list[Path] = []
        for rel in rels:
            path = data_dir() / rel
            if not path.exists():
                raise DataError(f"dataset {key!r}: {path} does not exist (embedded data missing; see data/README.md)")
            found = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
            if not found:
                try:  # a deleted file that SHA256SUMS lists: named, rather than a dataset without records
                    _resources.refuse_unlisted([path])
                except _resources.ChecksumError as exc:
                    raise DataError(f"dataset {key!r}: {exc}") from None
                raise DataError(f"dataset {key!r}: {path} holds no *.jsonl data file (embedded data missing; restore "
                                "the folder from the repository, see data/README.md)")
            files.extend(found)
            if path.is_dir() and (path / "dataset.yml").exists():  # an atlas folder carries its own metadata
                meta = {**read_dataset_yml(path / "dataset.yml"), **meta}
        return key, files, meta, desc
    try:
        return _resolve_path(text)
    except (OSError, ValueError) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"{text!r}: cannot be read as a dataset ({exc})") from None


def _resolve_downloaded(name: str) -> tuple[str, list[Path], dict[str, Any], str] | None:
    """(name, files, metadata, description) of a downloaded atlas dataset, None if ``name`` is not one; a
    DataError saying how to get it when it is one but has not been downloaded."""
    from metaeval.data import download

    if name not in download.download_names():
        return None
    folder = download.downloaded_path(name)
    if not download.is_downloaded(name, folder):
        raise DataError(f"dataset {name!r} is not downloaded: run `metaeval download {name}` (it is looked for in "
                        f"{folder}; set $METAEVAL_DATASETS to look elsewhere)")
    return (name, *_resolve_path(str(folder))[1:])


def _resolve_path(text: str) -> tuple[str, list[Path], dict[str, Any], str]:
    downloaded = _resolve_downloaded(text)  # a downloaded dataset's name (metaeval download) before a path
    if downloaded is not None:
        return downloaded

    path = Path(text).expanduser()
    if not path.exists():
        import difflib

        near = difflib.get_close_matches(text, sorted(_known()), n=1)  # worded as run.params' choice hints
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise DataError(
            f"unknown dataset {text!r}{hint}: not a known name ({', '.join(sorted(_known()))}) "
            "and no file or directory of that name exists"
        )
    meta: dict[str, Any] = {}
    if path.is_dir():
        from metaeval.data import download

        download.check_unchanged(path)  # a downloaded folder: its files as the download wrote them
        files = sorted(p for p in path.glob("*.jsonl") if p.is_file())
        if not files:
            nested = sorted(p.name for p in path.iterdir() if p.is_dir() and any(p.glob("*.jsonl")))
            hint = f" (its subfolders {', '.join(nested)} do: load one of them)" if nested else ""
            raise DataError(f"{path}: directory holds no *.jsonl files{hint}; {FORMAT_HELP}")
        yml = path / "dataset.yml"
        if not yml.exists() and (path / "dataset.yaml").exists():
            yml = path / "dataset.yaml"
        if yml.exists():
            meta = read_dataset_yml(yml)
        unread = sorted(p.name for p in path.iterdir() if not p.name.startswith(".")
                        and p.suffix.lower() in (".json", ".gz", ".jsonlines", ".ndjson", *tabular.TABLE_SUFFIXES))
        if unread:
            tables = [n for n in unread if tabular.is_table(n)]
            hint = (f"; a table is read by load('{path / tables[0]}', columns=...) or converted into the folder's "
                    f"format with `metaeval import {path / tables[0]} DEST`") if tables else ""
            warnings.warn(f"{path}: only *.jsonl files are read; not reading {', '.join(unread)}{hint}", DataWarning,
                          stacklevel=4)
    else:
        files = [path]
    return readable_name(text), files, meta, str(meta.get("description", ""))


def readable_name(path: str | os.PathLike[str]) -> str:
    """The name a user dataset is shown under: its folder name (file name without suffix), never a whole path;
    ``parent/name`` when that name is an embedded dataset's (so it is never mistaken for it, and a figure title
    never carries a long temporary path).

    Examples
    --------
    >>> readable_name("/tmp/x/my_study"), readable_name("runs/study.csv"), readable_name("/data/summeval")
    ('my_study', 'study', 'data/summeval')
    """
    path = Path(path)
    if path.name in ("", ".", ".."):
        path = path.resolve()
    name = (path.stem if path.suffix else path.name) or str(path)
    if name in _known() or name in _ALIASES:
        parent = path.resolve().parent.name
        name = f"{parent}/{name}" if parent else str(path.resolve())
    return name


class _Collector:
    """Merges records keyed by (system, input) from several files: the same value twice (LitePyramid in both
    REALSumm files) is accepted, two different values for one cell and score are an error naming both places."""

    def __init__(self) -> None:
        self.scores: dict[str, dict[tuple[str, str], float]] = {}
        self.ratings: dict[str, dict[tuple[str, str], list[float]]] = {}
        self.origin: dict[tuple[str, tuple[str, str]], str] = {}
        self.summary: dict[tuple[str, str], tuple[str, str]] = {}
        self.refs: dict[tuple[str, str], tuple[list[str], str]] = {}
        self.input_refs: dict[str, tuple[list[str], str]] = {}
        self.systems: set[str] = set()
        self.inputs: set[str] = set()

    def add(self, rec: Record) -> None:
        self.inputs.add(rec.instance_id)
        if rec.summarizer_id is None:
            assert rec.references is not None
            self._merge(self.input_refs, rec.instance_id, rec.references, rec,
                        f"references for input {rec.instance_id!r} with different texts")
            return
        key = (rec.summarizer_id, rec.instance_id)
        self.systems.add(rec.summarizer_id)
        for name, value in rec.scores.items():
            column = self.scores.setdefault(name, {})
            old = column.get(key)
            if old is None or (math.isnan(old) and not math.isnan(value)):
                column[key] = value
                self.origin[(name, key)] = rec.where
            elif not math.isnan(value) and old != value:
                raise DataError(
                    f"{rec.where}: duplicate score {name!r} for system {key[0]!r}, input {key[1]!r} with a "
                    f"different value ({value!r} here, {old!r} first seen at {self.origin[(name, key)]})"
                )
        for name, values in rec.ratings.items():
            rcolumn = self.ratings.setdefault(name, {})
            prev = rcolumn.get(key)
            if prev is None:
                rcolumn[key] = values
            elif prev != values:
                raise DataError(
                    f"{rec.where}: duplicate ratings {name!r} for system {key[0]!r}, input {key[1]!r} with different "
                    f"values ({values} here, {prev} first seen at {self.origin[(name, key)]})"
                )
        if rec.summary is not None:
            self._merge(self.summary, key, rec.summary, rec,
                        f"summary for system {key[0]!r}, input {key[1]!r} with a different text")
        if rec.references is not None:
            self._merge(self.refs, key, rec.references, rec,
                        f"references for system/input {key!r} with different texts")

    @staticmethod
    def _merge(table: dict, key: Any, text: Any, rec: Record, what: str) -> None:
        """Keep the first ``(text, where)`` of ``key``; another text for it is an error saying ``what``."""
        first = table.get(key)
        if first is None:
            table[key] = (text, rec.where)
        elif first[0] != text:
            raise DataError(f"{rec.where}: duplicate {what} (first seen at {first[1]})")


def _build(name: str, c: _Collector, info: DatasetInfo) -> Dataset:
    systems = sorted(c.systems)
    inputs = sorted(c.inputs)
    if not systems:
        raise DataError(
            f"dataset {name!r}: no record names a system (summarizer_id); only input-level references were found"
        )
    n, m = len(systems), len(inputs)
    s_index = {s: k for k, s in enumerate(systems)}
    i_index = {i: k for k, i in enumerate(inputs)}
    index = pd.MultiIndex.from_product([systems, inputs], names=["system", "input"])

    columns: dict[str, np.ndarray] = {}
    for score in sorted(c.scores):
        arr = np.full(n * m, np.nan)
        cells = c.scores[score]
        pos = np.fromiter((s_index[s] * m + i_index[i] for s, i in cells), dtype=np.int64, count=len(cells))
        arr[pos] = np.fromiter(cells.values(), dtype=float, count=len(cells))
        columns[score] = arr
    scores = pd.DataFrame(columns, index=index)

    ratings: dict[str, np.ndarray] = {}
    for score in sorted(c.ratings):
        rcells = c.ratings[score]
        width = max(len(v) for v in rcells.values())
        rarr = np.full((n, m, width), np.nan)
        for (s, i), values in rcells.items():
            rarr[s_index[s], i_index[i], : len(values)] = values
        ratings[score] = rarr

    texts = None
    if c.summary or c.refs or c.input_refs:
        summaries: list[str | None] = [None] * (n * m)
        for (s, i), (text, _) in c.summary.items():
            summaries[s_index[s] * m + i_index[i]] = text
        refs: list[list[str] | None] = [None] * (n * m)
        for inp, (shared, _) in c.input_refs.items():
            refs[i_index[inp]::m] = [shared] * n  # every system's cell of the input
        for (s, i), (own, where) in c.refs.items():
            shared_entry = c.input_refs.get(i)
            if shared_entry is not None and shared_entry[0] != own:
                raise DataError(
                    f"{where}: references for system {s!r}, input {i!r} differ from the input's references given "
                    f"at {shared_entry[1]}"
                )
            refs[s_index[s] * m + i_index[i]] = own
        # object dtype: a missing text stays None (pandas 3 would infer a string column holding NaN)
        texts = pd.DataFrame({"summary": pd.Series(summaries, index=index, dtype=object),
                              "references": pd.Series(refs, index=index, dtype=object)})

    return Dataset(name, tuple(systems), tuple(inputs), scores, ratings, texts, info)


def _info(name: str, meta: Mapping[str, Any], score_names: Sequence[str], files: Sequence[Path],
          description: str) -> DatasetInfo:
    where = f"dataset {name!r} (dataset.yml)"
    known = set(score_names)
    human = list(meta.get("human_scores") or _infer_human(score_names))
    default = meta.get("default_human")
    for score in list(meta.get("human_scores", [])) + ([default] if default else []):
        if score not in known:
            raise DataError(f"{where}: human score {score!r} is not among the scores ({', '.join(score_names)})")
    for score in meta.get("display_names", {}):
        if score not in known:
            raise DataError(f"{where}: display_names names an unknown score {score!r}")
    if default is None and human:
        default = human[0]
    if default is not None and default not in human:
        human.insert(0, default)
    return DatasetInfo(
        description=description,
        human_scores=tuple(human),
        default_human=default,
        recall_oriented=bool(meta.get("recall_oriented", False)),
        display_names=dict(meta.get("display_names", {})),
        sources=tuple(str(f) for f in files),
    )


def _stat_key(files: Sequence[Path]) -> tuple:
    return tuple((str(f.resolve()), (st := f.stat()).st_mtime_ns, st.st_size) for f in files)


_LOADED: dict[tuple, Dataset] = {}
_LOADED_MAX = 8


def _load_cached(name: str, files: tuple[Path, ...], stat_key: tuple | None, policy: ReferenceRecords,
                 ignore: frozenset[str], description: str, meta: Mapping[str, Any]) -> Dataset:
    """Read and merge the files, reusing an identical earlier call's result (in this process, then on disk).

    Only embedded datasets whose sha256 was just verified are cached (``stat_key`` not None); user files are
    always read again (a rewrite within the file system's timestamp granularity could be missed).
    """
    meta_key = repr(sorted(meta.items()))
    key = (name, stat_key, policy, ignore, description, meta_key)
    hit = _LOADED.get(key) if stat_key is not None else None
    if hit is not None:
        return hit
    disk = _disk_cache_path(name, files, policy, ignore, description, meta_key) if stat_key is not None else None
    ds = _read_disk_cache(disk, name) if disk is not None else None
    if ds is None:
        ds = _parse_files(name, files, policy, ignore, description, meta)
        if disk is not None:
            _write_disk_cache(disk, ds)
    if stat_key is not None:
        if len(_LOADED) >= _LOADED_MAX:
            _LOADED.pop(next(iter(_LOADED)))
        _LOADED[key] = ds
    return ds


def _parse_files(name: str, files: tuple[Path, ...], policy: ReferenceRecords, ignore: frozenset[str],
                 description: str, meta: Mapping[str, Any]) -> Dataset:
    collector = _Collector()
    for file in files:
        n_records = 0
        for lineno, raw in read_jsonl(file):
            n_records += 1
            rec = parse_record(raw, f"{file}:{lineno}", reference_records=policy, ignore_fields=ignore)
            if rec is not None:
                collector.add(rec)
        if n_records == 0:
            raise DataError(f"{file}: the file is empty (no JSON records); {FORMAT_HELP}")
    ds = _build(name, collector, DatasetInfo())
    return replace(ds, info=_info(name, meta, ds.score_names, files, description))


# Parsed embedded datasets on disk: every notebook kernel loads its dataset; load() costs 0.8-1.5 s of CPU
# without the cache entry (parquet, npz, JSON: no pickle), 0.1-0.2 s with it (measured 2026-12-02). The key
# holds the files' verified sha256, the load options, the parsing code and the library versions: a changed
# file is refused by its checksum first, and a changed parser or library misses the cache.
_CODE = tuple(Path(__file__).with_name(module)
              for module in ("datasets.py", "formats.py", "synthetic.py", "_dataset.py", "_loading.py"))


def _disk_cache_path(name: str, files: Sequence[Path], policy: str, ignore: frozenset[str], description: str,
                     meta_key: str) -> Path | None:
    import hashlib
    import sys

    digests = [_resources.expected_sha256(f) for f in files]
    if any(d is None for d in digests):
        return None
    h = hashlib.sha256()
    # the paths too: the Dataset records where its files are (info.sources)
    h.update(repr((name, [str(f.resolve()) for f in files], digests, policy, sorted(ignore), description, meta_key,
                   pd.__version__, np.__version__, sys.version_info[:2])).encode())
    try:
        for code in _CODE:
            h.update(code.read_bytes())
    except OSError:  # an installation without its sources: no way to tell parser versions apart, no cache
        return None
    from metaeval._io import cache_dir

    return cache_dir() / "datasets" / f"{name}-{h.hexdigest()[:32]}.json"


def _read_disk_cache(path: Path, name: str) -> Dataset | None:
    """A parsed dataset from the cache, or None (absent; or corrupt: a warning, and the files are parsed again)."""
    from metaeval._io import load_cached

    entry = load_cached(path, validate=lambda e: _invalid_cached_dataset(e, name), what="cached dataset")
    if entry is None:
        return None
    meta = entry.meta
    texts = None
    if meta["texts"] is not None:
        cells = pd.MultiIndex.from_tuples([tuple(c) for c in meta["texts"]["index"]], names=["system", "input"])
        texts = pd.DataFrame({"summary": pd.Series(meta["texts"]["summary"], dtype=object, index=cells),
                              "references": pd.Series(meta["texts"]["references"], dtype=object, index=cells)})
    fields_ = dict(meta["info"])
    info = DatasetInfo(**{**fields_, "human_scores": tuple(fields_["human_scores"]),
                          "sources": tuple(fields_["sources"])})
    ratings = {score: entry.arrays[f"ratings_{k}"] for k, score in enumerate(meta["ratings"])}
    return Dataset(name=meta["name"], systems=tuple(meta["systems"]), inputs=tuple(meta["inputs"]),
                   scores=entry.frames["scores"], ratings_table=ratings, texts=texts, info=info,
                   nan_ok=frozenset(meta["nan_ok"]))


def _invalid_cached_dataset(entry, name: str) -> str | None:
    meta, scores = entry.meta, entry.frames.get("scores")
    if meta.get("name") != name or scores is None:
        return "it is another dataset's entry"
    shape = (len(meta["systems"]), len(meta["inputs"]))
    if not set(scores.index.get_level_values(0)) <= set(meta["systems"]) or \
            not set(scores.index.get_level_values(1)) <= set(meta["inputs"]) or not scores.index.is_unique:
        return "its score rows are not cells of its systems x inputs grid"
    if any(entry.arrays.get(f"ratings_{k}") is None or entry.arrays[f"ratings_{k}"].shape[:2] != shape
           for k in range(len(meta["ratings"]))):
        return "its ratings do not have the grid's shape"
    if meta["texts"] is not None and not (len(meta["texts"]["index"]) == len(meta["texts"]["summary"])
                                          == len(meta["texts"]["references"])):
        return "its texts are not one per cell"
    return None


def _write_disk_cache(path: Path, ds: Dataset) -> None:
    from dataclasses import asdict

    from metaeval._io import save_cached

    texts = None
    if ds.texts is not None:
        texts = {"index": [list(map(str, c)) for c in ds.texts.index],
                 "summary": [None if s is None else str(s) for s in ds.texts["summary"]],
                 "references": [None if r is None else [str(x) for x in r] for r in ds.texts["references"]]}
    names = list(ds.ratings_table)
    meta = {"name": ds.name, "systems": list(ds.systems), "inputs": list(ds.inputs), "texts": texts,
            "info": {**asdict(ds.info), "display_names": dict(ds.info.display_names)}, "nan_ok": sorted(ds.nan_ok),
            "ratings": names}
    save_cached(path, frames={"scores": ds.scores},
                arrays={f"ratings_{k}": np.asarray(ds.ratings_table[n]) for k, n in enumerate(names)}, meta=meta)
