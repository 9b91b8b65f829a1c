"""Datasets: one contract for summaries, references and scores, the embedded data, and synthetic data.

A dataset is a folder (or one file) of JSONL records keyed by (``instance_id``, ``summarizer_id``); each
record holds any of: the summary text, the reference texts, and scores (metric values and human
judgments; nested objects are flattened with ``.``). Records for the same key may be spread over several
files of the folder and are merged. The accepted record formats (SacreROUGE "Metrics" and summaries JSONL,
the embedded SummEval/REALSumm joined files, ``metaeval rouge`` input and output) are listed in
:mod:`metaeval.data.formats` and documented in ``data/README.md``. An optional ``dataset.yml`` in the
folder names the default human score, the human scores, display names and whether the dataset's metrics
are recall-oriented; without it these are inferred.

Every dataset is a grid of N systems x M inputs, the union of all keys given. Any score gives an N x M
matrix with rows = systems and columns = inputs, both sorted as strings (the order the reference
statistics code uses, so matrices agree cell for cell with it)::

    {"metrics": {"qa-eval": {"f1": 0.25}, "expert": {"relevance": [2, 4, 3]}}}
    -> "qa-eval.f1" = 0.25, "expert.relevance" = 3.0 (mean), ratings("expert.relevance") = [2, 4, 3]

A score that misses some cells does not stop loading: it is refused when used (:meth:`Dataset.matrix`,
:meth:`Dataset.require`), where ``incomplete=`` chooses to drop inputs or systems, or to keep NaN.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

import metaeval._resources as _resources
from metaeval.data.formats import DataError, DataWarning, ReferenceRecords, parse_record
from metaeval.data import tabular
from metaeval.data.synthetic import SyntheticDataset, synthetic

# The dataset type and the loader's internals live in private modules; their public names are re-exported here,
# where users import them from.
from metaeval.data._dataset import _POLICIES, Dataset, DatasetInfo, IncompletePolicy, display_name
from metaeval.data._loading import (
    _known,
    _build,
    _Collector,
    _info,
    _load_cached,
    _resolve,
    _stat_key,
    data_dir,
    readable_name,
)

__all__ = [
    "DataError",
    "DataWarning",
    "INCOMPLETE_FIX",
    "NO_INCOMPLETE_FIX",
    "Dataset",
    "SyntheticDataset",
    "data_dir",
    "display_name",
    "from_frame",
    "known_datasets",
    "load",
    "synthetic",
    "verify_checksums",
]


def known_datasets() -> dict[str, str]:
    """Names accepted by :func:`load` with a one-line description of each: SummEval, REALSumm and Deutsch et
    al.'s files, and every embedded dataset of the atlas (:func:`metaeval.data.atlas.atlas_datasets`).

    Examples
    --------
    >>> sorted(known_datasets())  # doctest: +NORMALIZE_WHITESPACE
    ['bhandari2020', 'fabbri2020', 'faceval', 'frank-cnndm', 'frank-xsum', 'goyal2022-bbc', 'goyal2022-cnn',
     'goyal2022-keyword', 'hanna', 'realsumm', 'squality', 'summeval', 'wmt20-mqm-ende', 'wmt20-mqm-zhen',
     'wmt21-mqm-ende', 'wmt21-mqm-zhen', 'xsum-hallucinations']
    """
    return {name: desc for name, (_, desc, _) in _known().items()}


#: The one wording of the fix for a score with missing cells that a notebook needs complete: for a notebook with an
#: ``incomplete`` parameter (the runner's check before the kernel, :func:`metaeval.run.session.start`, notebook 24)
#: and for one without.
INCOMPLETE_FIX = ("set the notebook's parameter `incomplete` to drop-inputs or drop-systems (`-p incomplete "
                  "drop-inputs` on the command line, or in its parameters cell)")
NO_INCOMPLETE_FIX = ("this notebook has no `incomplete` parameter: complete the missing cells or choose complete "
                     "scores (`metaeval describe DATASET` lists the missing cells)")


def verify_checksums(paths: Iterable[Path]) -> None:
    """Check embedded files against ``data/SHA256SUMS``; files not listed there are user data and pass.

    Raises
    ------
    DataError
        A listed file is missing or its sha256 differs.
    """
    try:
        _resources.verify_checksums(paths)
    except _resources.ChecksumError as exc:
        raise DataError(str(exc)) from None


def load(
    name_or_path: str | os.PathLike[str] = "summeval",
    *,
    incomplete: IncompletePolicy = "raise",
    verify: bool = True,
    reference_records: ReferenceRecords | None = None,
    ignore_fields: Iterable[str] = (),
    columns: Mapping[str, Any] | None = None,
) -> Dataset:
    """Load an embedded dataset by name, or user data by path (a folder, a JSONL file, or a table).

    Parameters
    ----------
    name_or_path : str or path
        An embedded name (:func:`known_datasets`: ``"summeval"``, ``"realsumm"``, ``"fabbri2020"`` (alias
        ``"deutsch2021"``), ``"bhandari2020"``), a folder of ``*.jsonl`` files (merged on instance and
        summarizer; an optional ``dataset.yml`` beside them), or one JSONL file. See ``data/README.md``.
    incomplete : {"raise", "keep-nan", "drop-inputs", "drop-systems"}
        Loading never fails because a score is incomplete: ``"raise"`` (default) refuses an incomplete score
        when it is used (:meth:`Dataset.matrix`, :meth:`Dataset.require`); ``"keep-nan"`` lets every matrix
        hold NaN; ``"drop-inputs"``/``"drop-systems"`` drop, at load, the inputs (columns) / systems (rows)
        where any score or text is missing, with a :class:`DataWarning` naming them.
    verify : bool
        Check the sha256 of embedded files against ``data/SHA256SUMS``.
    reference_records : {"raise", "skip", "as-systems"}, optional
        What to do with records whose ``summarizer_type`` is ``"reference"`` (a reference scored like a
        system): refuse (default, or ``dataset.yml``'s setting), leave them out, or keep them as systems.
    ignore_fields : iterable of str
        Top-level record fields to leave out instead of refusing them as unknown (added to ``dataset.yml``'s).
    columns : mapping, optional
        For a table (``.csv``, ``.tsv``, ``.parquet``): the roles of its columns, as :func:`from_frame`'s
        keywords (``{"doc": "article", "human": ["relevance"]}``); unnamed roles are inferred.

    Returns
    -------
    Dataset

    Examples
    --------
    >>> ds = load("summeval")
    >>> ds.shape, ds.n_references, ds.default_human, round(float(ds.matrix("expert.relevance").mean()), 4)
    ((16, 100), 11, 'expert.relevance', 3.7771)
    """
    if incomplete not in _POLICIES:
        raise ValueError(
            f"incomplete must be 'raise', 'keep-nan', 'drop-inputs' or 'drop-systems', got {incomplete!r}"
        )
    if isinstance(name_or_path, (str, os.PathLike)) and tabular.is_table(os.fspath(name_or_path)) \
            and Path(os.fspath(name_or_path)).expanduser().is_file():
        path = Path(os.fspath(name_or_path)).expanduser()
        header = 0 if path.suffix.lower() in (".parquet", ".pq") else 1
        ds = _from_table(tabular.read_table(path), str(path), readable_name(path), header, dict(columns or {}))
        return _apply_incomplete(ds, incomplete)
    if columns:
        raise DataError(f"columns= maps the columns of a table (.csv, .tsv, .parquet); {name_or_path!r} is not one")
    name, files, meta, description = _resolve(name_or_path)
    if verify:
        if name in _known():  # an unlisted file beside the embedded ones is refused where the data are read
            try:
                _resources.refuse_unlisted({f.parent for f in files})
            except _resources.ChecksumError as exc:
                raise DataError(str(exc)) from None
        verify_checksums(files)
    policy = reference_records if reference_records is not None else meta.get("reference_records", "raise")
    if policy not in ("raise", "skip", "as-systems"):
        raise ValueError(f"reference_records must be 'raise', 'skip' or 'as-systems', got {policy!r}")
    if isinstance(ignore_fields, str):
        ignore_fields = [ignore_fields]
    ignore = frozenset(ignore_fields) | frozenset(meta.get("ignore_fields", ()))

    cacheable = verify and name in _known()
    ds = _load_cached(name, tuple(files), _stat_key(files) if cacheable else None, policy, ignore, description, meta)
    return _apply_incomplete(ds, incomplete)


def _apply_incomplete(ds: Dataset, incomplete: IncompletePolicy) -> Dataset:
    if incomplete == "keep-nan":
        return replace(ds, nan_ok=frozenset(ds.score_names))
    if incomplete in ("drop-inputs", "drop-systems"):
        mask = ds._missing_mask(ds.score_names, texts=True)
        if mask.any():
            return ds._drop(mask, incomplete, "a score or text")
    return ds


_ROLES = tabular.ColumnRoles.NAMES


def _from_table(frame: pd.DataFrame, source: str, name: str, header_lines: int, roles: Mapping[str, Any]) -> Dataset:
    unknown = sorted(set(roles) - set(_ROLES))
    if unknown:
        raise DataError(f"columns: unknown role {unknown[0]!r}; roles are {', '.join(_ROLES)}")
    mapping = tabular.infer_columns(frame, source=source, roles=tabular.ColumnRoles.of(**roles))
    collector = _Collector()
    for where, record in tabular.frame_records(frame, mapping, source, header_lines=header_lines):
        rec = parse_record(record, where)
        if rec is not None:
            collector.add(rec)
    ds = _build(name, collector, DatasetInfo())
    meta = tabular.dataset_meta(mapping, source)
    return replace(ds, info=_info(name, meta, ds.score_names, [], str(meta["description"])))


def _index_as_columns(frame: pd.DataFrame, ids: Iterable[str | None] = ()) -> pd.DataFrame:
    """Index levels that hold ids (``df.set_index(["doc", "system"])``, a groupby's result) as columns: levels
    named ``ids`` (the doc= and system= given) or like a document or system column; any other index (0, 1, ...,
    a level named otherwise) is not data and stays out."""
    wanted = {i for i in ids if i is not None}
    names = [n for n in frame.index.names if n is not None
             and (n in wanted or tabular.names_an_id(n))]
    if not names:
        return frame
    clash = [str(n) for n in names if n in frame.columns]
    if clash:
        raise DataError(f"frame: index level {clash[0]!r} is also a column; drop one of them (df.reset_index("
                        "drop=True), or rename the level)")
    return frame.reset_index(level=names)


def from_frame(
    frame: pd.DataFrame,
    *,
    name: str = "frame",
    doc: str | None = None,
    system: str | None = None,
    summary: str | None = None,
    reference: str | Iterable[str] | None = None,
    score: str | Iterable[str] | None = None,
    human: str | Iterable[str] | None = None,
    ignore: str | Iterable[str] | None = None,
    incomplete: IncompletePolicy = "raise",
) -> Dataset:
    """A dataset from a DataFrame in long format (one row per document x system) or wide format (columns
    ``FIELD:SYSTEM``, or two-level columns ``(FIELD, SYSTEM)``); see :mod:`metaeval.data.tabular`.

    Parameters
    ----------
    frame : pandas.DataFrame
    name : str
        The dataset's name (shown in titles).
    doc, system, summary : str, optional
        The document, system and summary columns (default: inferred from common names such as ``doc``,
        ``doc_id``, ``instance_id``; ``system``, ``model``, ``summarizer_id``; ``summary``).
    reference, score, human, ignore : str or list of str, optional
        Reference columns (several, or one column of lists), score columns (default: every other column),
        the human scores among them (default: by name, e.g. ``relevance``, ``expert.*``), columns to leave out.
    incomplete : {"raise", "keep-nan", "drop-inputs", "drop-systems"}
        As in :func:`load`.

    Examples
    --------
    >>> df = pd.DataFrame({"doc": ["d1", "d1", "d2", "d2"], "model": ["A", "B", "A", "B"],
    ...                    "relevance": [4, 2, 5, 3], "rouge-2.f1": [0.3, 0.1, 0.4, 0.2]})
    >>> ds = from_frame(df, name="study")
    >>> ds.shape, ds.default_human, ds.matrix("rouge-2.f1").tolist()
    ((2, 2), 'relevance', [[0.3, 0.4], [0.1, 0.2]])
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    frame = _index_as_columns(frame, (doc, system))
    if frame.empty:
        raise DataError(f"frame: no rows (columns: {', '.join(map(str, frame.columns)) or 'none'}); pass a "
                        "DataFrame with one row per document x system (or per document, in the wide format)")
    roles = {k: v for k, v in (("doc", doc), ("system", system), ("summary", summary), ("reference", reference),
                               ("score", score), ("human", human), ("ignore", ignore)) if v is not None}
    return _apply_incomplete(_from_table(frame, name, name, 0, roles), incomplete)
