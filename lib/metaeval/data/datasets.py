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

import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from metaeval import _resources
from metaeval.data.formats import (
    DataError,
    DataWarning,
    Record,
    ReferenceRecords,
    parse_record,
    read_dataset_yml,
    read_jsonl,
)
from metaeval.data import tabular
from metaeval.data.synthetic import SyntheticDataset, synthetic

__all__ = [
    "DataError",
    "DataWarning",
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

IncompletePolicy = Literal["raise", "keep-nan", "drop-inputs", "drop-systems"]
_POLICIES = ("raise", "keep-nan", "drop-inputs", "drop-systems")


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
_KNOWN: dict[str, tuple[tuple[str, ...], str, dict[str, Any]]] = {
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


def known_datasets() -> dict[str, str]:
    """Names accepted by :func:`load` with a one-line description of each.

    Examples
    --------
    >>> sorted(known_datasets())
    ['bhandari2020', 'fabbri2020', 'realsumm', 'summeval']
    """
    return {name: desc for name, (_, desc, _) in _KNOWN.items()}


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


# ----------------------------------------------------------------------------------------------------
# Display names and human scores

_PRETTY = {
    "qa-eval": "QAEval", "rouge-1": "ROUGE-1", "rouge-2": "ROUGE-2", "rouge-3": "ROUGE-3", "rouge-4": "ROUGE-4",
    "rouge-l": "ROUGE-L", "rouge-su4": "ROUGE-SU4", "rouge-w": "ROUGE-W", "bertscore": "BERTScore", "s3": "S3",
    "litepyramid": "LitePyramid", "pyramid": "Pyramid", "js-2": "JS-2", "bewte": "BEwTE", "meteor": "METEOR",
    "moverscore": "MoverScore", "bleu": "BLEU",
}
_STATS = {"f1": "F1", "recall": "R", "precision": "P", "em": "EM", "lerc": "LERC", "pyr": "Pyr", "resp": "Resp"}
_HUMAN_GROUPS = {"expert": "expert", "turker": "crowd", "crowd": "crowd", "human": "human", "annotator": "human"}
# First name components that mark a human judgment, in the order human_scores lists them.
_HUMAN_PREFIXES = ("expert", "human", "annotator", "litepyramid", "pyramid", "responsiveness", "crowd", "turker")


# Words shown in capitals in display names ("human.normalized_acu" -> "Normalized ACU (human)").
_ACRONYMS = frozenset({"acu", "scu", "nacu", "qa", "nli", "f1", "bleu", "rouge", "bert", "mt", "llm", "gpt", "sts"})


def _words(text: str) -> str:
    words = text.replace("_", " ").split()
    out = [w.upper() if w.lower() in _ACRONYMS else w for w in words]
    if out and out[0] == words[0]:
        out[0] = out[0][:1].upper() + out[0][1:]
    return " ".join(out)


def _rouge_display(score: str) -> str | None:
    """``R-2|stem=1|stop=0|F`` or its signature -> "ROUGE-2 F (stem)"; None if not a ROUGE key/signature."""
    from metaeval.metrics.variants import RougeVariant, parse_variant

    try:
        v = parse_variant(score)
    except (ValueError, KeyError, AttributeError):
        return None
    if not isinstance(v, RougeVariant):
        return None
    options = [o for o, on in (("stem", v.stem), ("no stopwords", v.stop), ("best reference", v.refs == "B")) if on]
    name = f"ROUGE-{v.measure.name.removeprefix('R-')} {v.stat}"
    return f"{name} ({', '.join(options)})" if options else name


def display_name(score: str) -> str:
    """A readable default name of a score: ``expert.relevance`` -> "Relevance (expert)".

    Examples
    --------
    >>> display_name("expert.relevance"), display_name("qa-eval.f1"), display_name("rouge-2.recall")
    ('Relevance (expert)', 'QAEval-F1', 'ROUGE-2-R')
    >>> display_name("turker.coherence"), display_name("METEOR"), display_name("human.normalized_acu")
    ('Coherence (crowd)', 'METEOR', 'Normalized ACU (human)')
    >>> display_name("normalized_acu"), display_name("relevance"), display_name("AutoSummENG")
    ('Normalized ACU', 'Relevance', 'AutoSummENG')
    >>> display_name("R-2|stem=1|stop=0|F"), display_name("rouge-l|stem:no|stop:yes|stat:R|refs:A")
    ('ROUGE-2 F (stem)', 'ROUGE-L R (no stopwords)')
    """
    if "|" in score:  # a metaeval ROUGE key or signature; any other signature already says what it is
        return _rouge_display(score) or score
    head, _, tail = score.partition(".")
    if tail and head.lower() in _HUMAN_GROUPS and "." not in tail:
        return f"{_words(tail)} ({_HUMAN_GROUPS[head.lower()]})"
    pretty = _PRETTY.get(head.lower(), head)
    if not tail:  # a bare name: a table's column such as "normalized_acu" -> "Normalized ACU"
        return pretty if head.lower() in _PRETTY or not (head.islower() or "_" in head) else _words(head)
    return f"{pretty}-{_STATS.get(tail.lower(), tail)}"


def _infer_human(names: Sequence[str]) -> list[str]:
    rank = {p: k for k, p in enumerate(_HUMAN_PREFIXES)}
    human = [n for n in names if n.partition(".")[0].lower() in rank]
    return sorted(human, key=lambda n: (rank[n.partition(".")[0].lower()], n))


def _cells(k: int) -> str:
    return f"{k} cell" if k == 1 else f"{k} cells"


# ----------------------------------------------------------------------------------------------------
# The dataset


@dataclass(frozen=True)
class DatasetInfo:
    """What a dataset says about itself (``dataset.yml`` or inferred)."""

    description: str = ""
    human_scores: tuple[str, ...] = ()
    default_human: str | None = None
    recall_oriented: bool = False
    display_names: Mapping[str, str] = field(default_factory=dict)
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class Dataset:
    """A systems x inputs grid of scores, with texts where the source has them.

    Attributes
    ----------
    name : str
        Dataset name or path it was loaded from.
    systems, inputs : tuple of str
        Sorted (as strings) system ids and input ids: the rows and columns of every matrix.
    scores : pandas.DataFrame
        One row per (system, input) cell (MultiIndex ``system``, ``input``), one column per score; NaN where a
        score is missing.
    ratings_table : dict
        For scores that came as lists (several annotators): name -> array (N, M, n_annotators).
    texts : pandas.DataFrame or None
        Columns ``summary`` (str) and ``references`` (list of str), same index as ``scores``; None where a cell
        has no text; the whole frame is None for scores-only data.
    info : DatasetInfo
        Human scores, default human score, display names, recall orientation, source files.
    nan_ok : frozenset of str
        Scores whose missing cells :meth:`matrix` returns as NaN (``incomplete="keep-nan"``).
    """

    name: str
    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    scores: pd.DataFrame
    ratings_table: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False)
    texts: pd.DataFrame | None = field(default=None, repr=False)
    info: DatasetInfo = field(default_factory=DatasetInfo, repr=False)
    nan_ok: frozenset[str] = field(default=frozenset(), repr=False)
    _cache: dict[str, tuple[np.ndarray, int]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    # -- description ---------------------------------------------------------------------------------

    @property
    def score_names(self) -> list[str]:
        """Every score that :meth:`matrix` accepts."""
        return list(self.scores.columns)

    @property
    def shape(self) -> tuple[int, int]:
        """(number of systems, number of inputs)."""
        return len(self.systems), len(self.inputs)

    @property
    def has_texts(self) -> bool:
        """True when every cell has a summary and every input at least one reference."""
        if self.texts is None:
            return False
        return bool(self.texts["summary"].notna().all() and self.texts["references"].notna().all())

    @property
    def n_references(self) -> int:
        """References per input: the minimum over inputs (0 without texts)."""
        if self.texts is None:
            return 0
        return int(min((len(r) if isinstance(r, list) else 0) for r in self.texts["references"]))

    @property
    def human_scores(self) -> list[str]:
        """The human judgments among the scores (``dataset.yml``'s ``human_scores``, else inferred)."""
        return list(self.info.human_scores)

    @property
    def default_human(self) -> str:
        """The human score analyses use unless told otherwise (``dataset.yml``'s ``default_human``)."""
        if self.info.default_human is None:
            raise DataError(
                f"dataset {self.name!r} has no human score (scores: {', '.join(self.score_names) or 'none'}); "
                "name one with default_human in dataset.yml, or pass the human score explicitly"
            )
        return self.info.default_human

    @property
    def recall_oriented(self) -> bool:
        """True when the dataset's study used recall variants of the metrics (REALSumm)."""
        return self.info.recall_oriented

    def display_name(self, score: str) -> str:
        """A readable name of a score (``dataset.yml``'s ``display_names``, else :func:`display_name`)."""
        return self.info.display_names.get(score) or display_name(score)

    def describe(self) -> pd.DataFrame:
        """One row per score: name, display name, human?, complete cells, missing cells.

        Examples
        --------
        >>> load("fabbri2020").describe().set_index("score").loc["qa-eval.f1", ["complete", "missing"]].tolist()
        [1600, 0]
        """
        missing = self.scores.isna().sum()
        human = set(self.info.human_scores)
        rows = [
            {
                "score": name,
                "display_name": self.display_name(name),
                "human": name in human,
                "complete": int(len(self.scores) - missing[name]),
                "missing": int(missing[name]),
            }
            for name in self.score_names
        ]
        return pd.DataFrame(rows, columns=["score", "display_name", "human", "complete", "missing"])

    def summary_text(self) -> str:
        """The multi-line description printed by ``metaeval describe``."""
        n, m = self.shape
        lines = [f"dataset: {self.name}"]
        if self.info.description:
            lines.append(f"description: {self.info.description}")
        shown = ", ".join(self.systems[:8]) + (" ..." if n > 8 else "")
        lines.append(f"systems: {n} ({shown})")
        lines.append(f"inputs: {m}")
        if self.texts is None:
            lines.append("texts: no (scores only)")
        else:
            counts = [len(r) if isinstance(r, list) else 0 for r in self.texts["references"]]
            n_summaries = int(self.texts["summary"].notna().sum())
            lines.append(f"texts: {'yes' if self.has_texts else 'partial'} ({n_summaries} of {n * m} summaries)")
            lo, hi = min(counts), max(counts)
            lines.append(f"references per input: {lo}" + (f" to {hi}" if hi != lo else ""))
        lines.append(f"human scores: {', '.join(self.human_scores) or 'none'}")
        lines.append(f"default human score: {self.info.default_human or 'none'}")
        lines.append(f"recall-oriented: {'yes' if self.recall_oriented else 'no'}")
        table = self.describe()
        if table.empty:
            lines.append("scores: none")
        else:
            table["coverage"] = [
                "complete" if k == 0 else f"{_cells(k)} missing" for k in table["missing"]
            ]
            table["human"] = table["human"].map({True: "yes", False: ""})
            lines.append(f"scores: {len(table)}")
            lines.append(table[["score", "display_name", "human", "coverage"]].to_string(index=False))
        return "\n".join(lines)

    # -- matrices ------------------------------------------------------------------------------------

    def computable(self, name: str) -> bool:
        """True for a metaeval ROUGE key or signature (``R-2|stem=1|stop=0|F``) that the dataset does not store
        but can score from its texts: :meth:`matrix` and :meth:`require` accept it (scored on first use)."""
        if name in self.scores.columns or not self.has_texts:
            return False
        from metaeval.metrics.variants import RougeVariant, parse_variant

        try:
            return isinstance(parse_variant(name), RougeVariant)
        except (ValueError, KeyError, AttributeError):
            return False

    def _scored(self, name: str) -> np.ndarray:
        from metaeval.metrics.rouge import score

        assert self.texts is not None
        frame = score(self.texts["summary"].tolist(), [list(r) for r in self.texts["references"]], [name],
                      columns="key", warn=False)
        return frame.iloc[:, 0].to_numpy(dtype=float).reshape(self.shape)

    def _column(self, name: str) -> tuple[np.ndarray, int]:
        cached = self._cache.get(name)
        if cached is None and self.computable(name):
            values = self._scored(name)
            cached = (values, int(np.isnan(values).sum()))
            self._cache[name] = cached
        if cached is None:
            if name not in self.scores.columns:
                raise KeyError(
                    f"unknown score {name!r} in dataset {self.name!r}; known: {', '.join(self.score_names)}"
                )
            values = self.scores[name].to_numpy(dtype=float).reshape(len(self.systems), len(self.inputs))
            cached = (values, int(np.isnan(values).sum()))
            self._cache[name] = cached
        return cached

    def matrix(self, name: str, *, allow_nan: bool = False) -> np.ndarray:
        """The N x M matrix (systems x inputs) of one score (a fresh copy: callers may modify it).

        Parameters
        ----------
        name : str
            A score name (see :attr:`score_names`).
        allow_nan : bool
            Return NaN for missing cells instead of raising (also the case for scores made ``keep-nan`` by
            :meth:`require` or :func:`load`).

        Examples
        --------
        >>> ds = load("fabbri2020")
        >>> ds.matrix("expert.relevance").shape
        (16, 100)
        """
        values, n_missing = self._column(name)
        if n_missing and not allow_nan and name not in self.nan_ok:
            missing = np.argwhere(np.isnan(values))
            cells = ", ".join(f"({self.systems[i]}, {self.inputs[j]})" for i, j in missing[:5])
            raise DataError(
                f"score {name!r} of dataset {self.name!r} is missing in {n_missing} of {values.size} cells, e.g. "
                f"{cells}; use ds.require(scores=[{name!r}], incomplete='drop-inputs' | 'drop-systems' | 'keep-nan'), "
                "or pass allow_nan=True to keep them as NaN"
            )
        return values.copy()

    def ratings(self, name: str) -> np.ndarray:
        """Individual annotator ratings of a list-valued score: array (N, M, n_annotators), NaN-padded."""
        if name not in self.ratings_table:
            raise KeyError(
                f"score {name!r} has no individual ratings; list-valued scores: "
                f"{', '.join(self.ratings_table) or 'none'}"
            )
        return self.ratings_table[name]

    def system_scores(self, name: str) -> pd.Series:
        """Per-system mean of a score (the system-level score), indexed by system id."""
        values = self.matrix(name, allow_nan=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN row gives NaN, which is the answer
            means = np.nanmean(values, axis=1)
        return pd.Series(means, index=list(self.systems), name=name)

    # -- texts ---------------------------------------------------------------------------------------

    def summaries(self) -> np.ndarray:
        """System summaries as an N x M object array of str (texts datasets only)."""
        return self._text_grid("summary")

    def references(self) -> np.ndarray:
        """References as an N x M object array of lists of str (texts datasets only)."""
        return self._text_grid("references")

    def _text_grid(self, column: str) -> np.ndarray:
        if self.texts is None:
            raise DataError(f"dataset {self.name!r} has no texts; this analysis needs summaries and references")
        grid = np.empty(self.shape, dtype=object)
        flat = self.texts[column].to_list()
        m = len(self.inputs)
        for k, value in enumerate(flat):
            grid[k // m, k % m] = value
        return grid

    # -- restriction ---------------------------------------------------------------------------------

    def subset(self, systems: Iterable[str] | None = None, inputs: Iterable[str] | None = None) -> Dataset:
        """A dataset restricted to some systems and/or inputs (ids must exist)."""
        systems = tuple(sorted(systems)) if systems is not None else self.systems
        inputs = tuple(sorted(inputs)) if inputs is not None else self.inputs
        for arg, ids, known in (("systems", systems, self.systems), ("inputs", inputs, self.inputs)):
            unknown = sorted(set(ids) - set(known))
            if unknown:
                raise KeyError(f"{arg}: unknown ids {unknown[:5]}{' ...' if len(unknown) > 5 else ''}")
        if systems == self.systems and inputs == self.inputs:
            return self
        index = pd.MultiIndex.from_product([systems, inputs], names=["system", "input"])
        si = [self.systems.index(s) for s in systems]
        ii = [self.inputs.index(i) for i in inputs]
        ratings = {k: v[np.ix_(si, ii)] for k, v in self.ratings_table.items()}
        texts = self.texts.loc[index] if self.texts is not None else None
        return Dataset(self.name, systems, inputs, self.scores.loc[index], ratings, texts, self.info, self.nan_ok)

    def _missing_mask(self, scores: Sequence[str], texts: bool) -> np.ndarray:
        """N x M mask of cells where a listed score (or, with ``texts``, a summary or reference) is missing."""
        mask = np.zeros(self.shape, dtype=bool)
        for name in scores:
            mask |= np.isnan(self._column(name)[0])
        if texts and self.texts is not None:
            t = self.texts
            mask |= (t["summary"].isna() | t["references"].isna()).to_numpy().reshape(self.shape)
        return mask

    def _drop(self, mask: np.ndarray, incomplete: IncompletePolicy, what: str) -> Dataset:
        """Drop the inputs (columns) or systems (rows) that have a masked cell, with a warning naming them."""
        axis_name = "inputs" if incomplete == "drop-inputs" else "systems"
        ids = self.inputs if incomplete == "drop-inputs" else self.systems
        bad: list[bool] = np.asarray(mask.any(axis=0 if incomplete == "drop-inputs" else 1)).tolist()
        dropped = [x for x, b in zip(ids, bad) if b]
        kept = [x for x, b in zip(ids, bad) if not b]
        if not kept:
            raise DataError(
                f"dataset {self.name!r}: every one of the {len(ids)} {axis_name} misses some of {what}; "
                f"incomplete={incomplete!r} would leave nothing"
            )
        warnings.warn(
            f"dataset {self.name!r}: dropped {len(dropped)} of {len(ids)} {axis_name} where {what} is missing "
            f"(incomplete={incomplete!r}): {', '.join(dropped[:10])}{' ...' if len(dropped) > 10 else ''}",
            DataWarning,
            stacklevel=3,
        )
        return self.subset(**{axis_name: kept})

    def require(
        self,
        *,
        scores: str | Iterable[str] = (),
        texts: bool = False,
        incomplete: IncompletePolicy = "raise",
        purpose: str = "this analysis",
    ) -> Dataset:
        """Check that the dataset has what an analysis uses, and resolve incompleteness of just that.

        Parameters
        ----------
        scores : str or iterable of str
            The scores the analysis uses; each must exist.
        texts : bool
            The analysis needs summaries and references.
        incomplete : {"raise", "drop-inputs", "drop-systems", "keep-nan"}
            When a listed score (or, with ``texts``, a text) misses cells: raise, drop the inputs or the systems
            that have missing cells (a :class:`DataWarning` names them), or keep them as NaN (``matrix`` then
            returns NaN for those scores).
        purpose : str
            Named in the error message, e.g. ``"notebook 21 (power)"``.

        Returns
        -------
        Dataset
            This dataset, or a smaller one.

        Raises
        ------
        DataError
            One line naming the missing texts, an unknown score, or the incomplete score and its missing cells.

        Examples
        --------
        >>> ds = load("fabbri2020")
        >>> ds.require(scores=["qa-eval.f1", "expert.relevance"]).shape
        (16, 100)
        >>> ds.require(texts=True, purpose="notebook 21")
        Traceback (most recent call last):
        ...
        metaeval.data.formats.DataError: dataset 'fabbri2020' has no texts; notebook 21 needs summaries and references
        """
        if incomplete not in _POLICIES:
            raise ValueError(
                f"incomplete must be 'raise', 'keep-nan', 'drop-inputs' or 'drop-systems', got {incomplete!r}"
            )
        names = [scores] if isinstance(scores, str) else list(scores)
        for name in names:
            if name not in self.scores.columns and not self.computable(name):
                raise DataError(
                    f"dataset {self.name!r} has no score {name!r}; {purpose} needs it "
                    f"(scores: {', '.join(self.score_names) or 'none'})"
                )
        if texts and self.texts is None:
            raise DataError(f"dataset {self.name!r} has no texts; {purpose} needs summaries and references")
        mask = self._missing_mask(names, texts)
        if not mask.any():
            return self
        parts = [f"{n!r} ({_cells(int(np.isnan(self._column(n)[0]).sum()))})" for n in names
                 if np.isnan(self._column(n)[0]).any()]
        if texts and self.texts is not None and not self.has_texts:
            parts.append("texts")
        what = " and ".join(parts)
        if incomplete == "raise":
            cells = ", ".join(f"({self.systems[i]}, {self.inputs[j]})" for i, j in np.argwhere(mask)[:5])
            raise DataError(
                f"dataset {self.name!r}: {what} missing in {int(mask.sum())} of {mask.size} cells (e.g. {cells}); "
                f"{purpose} needs them complete: pass incomplete='drop-inputs', 'drop-systems' or 'keep-nan'"
            )
        if incomplete == "keep-nan":
            return replace(self, nan_ok=self.nan_ok | frozenset(names))
        return self._drop(mask, incomplete, what)


# ----------------------------------------------------------------------------------------------------
# Loading


def _resolve(name_or_path: Any) -> tuple[str, list[Path], dict[str, Any], str]:
    """(name, files, metadata, description) of a dataset name or path."""
    if name_or_path is None or not isinstance(name_or_path, (str, os.PathLike)):
        raise DataError(
            f"name_or_path must be a dataset name ({', '.join(_KNOWN)}) or a path, got {type(name_or_path).__name__}"
        )
    text = os.fspath(name_or_path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not text.strip():
        raise DataError(
            f"name_or_path is empty; give a dataset name ({', '.join(_KNOWN)}) or the path of a folder or JSONL file"
        )
    key = _ALIASES.get(text, text)
    if key in _KNOWN:
        rels, desc, meta = _KNOWN[key]
        files: list[Path] = []
        for rel in rels:
            path = data_dir() / rel
            if not path.exists():
                raise DataError(f"dataset {key!r}: {path} does not exist (embedded data missing; see data/README.md)")
            files.extend(sorted(path.glob("*.jsonl")) if path.is_dir() else [path])
        return key, files, dict(meta), desc
    try:
        return _resolve_path(text)
    except (OSError, ValueError) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"{text!r}: cannot be read as a dataset ({exc})") from None


def _resolve_path(text: str) -> tuple[str, list[Path], dict[str, Any], str]:
    path = Path(text).expanduser()
    if not path.exists():
        raise DataError(
            f"unknown dataset {text!r}: not a known name ({', '.join(sorted(_KNOWN))}) "
            "and no file or directory of that name exists"
        )
    meta: dict[str, Any] = {}
    if path.is_dir():
        files = sorted(p for p in path.glob("*.jsonl") if p.is_file())
        if not files:
            nested = sorted(p.name for p in path.iterdir() if p.is_dir() and any(p.glob("*.jsonl")))
            hint = f" (its subfolders {', '.join(nested)} do: load one of them)" if nested else ""
            raise DataError(f"{path}: directory holds no *.jsonl files{hint}; {_formats_hint()}")
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
    the path as given when that name is an embedded dataset's (so it is never mistaken for it).

    Examples
    --------
    >>> readable_name("/tmp/x/my_study"), readable_name("runs/study.csv"), readable_name("/data/summeval")
    ('my_study', 'study', '/data/summeval')
    """
    path = Path(path)
    name = (path.stem if path.suffix else path.name) or str(path)
    if name in _KNOWN or name in _ALIASES or name in ("", ".", ".."):
        name = str(path.resolve()) if name in ("", ".", "..") else str(path)
    return name


def _formats_hint() -> str:
    from metaeval.data.formats import FORMAT_HELP

    return FORMAT_HELP


class _Collector:
    """Merges normalized records keyed by (system, input) from one or more files.

    The same value given twice (e.g. LitePyramid in both REALSumm files) is accepted; two different values
    for one cell and one score are an error naming both places.
    """

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
            self._merge_refs(self.input_refs, rec.instance_id, rec.references, rec, "for input")
            return
        key = (rec.summarizer_id, rec.instance_id)
        self.systems.add(rec.summarizer_id)
        for name, value in rec.scores.items():
            column = self.scores.setdefault(name, {})
            old = column.get(key)
            if old is None or (math.isnan(old) and not math.isnan(value)):
                column[key] = value
                self.origin[(name, key)] = rec.where
            elif old != value and not (math.isnan(old) and math.isnan(value)) and not math.isnan(value):
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
            first = self.summary.get(key)
            if first is None:
                self.summary[key] = (rec.summary, rec.where)
            elif first[0] != rec.summary:
                raise DataError(
                    f"{rec.where}: duplicate summary for system {key[0]!r}, input {key[1]!r} with a different text "
                    f"(first seen at {first[1]})"
                )
        if rec.references is not None:
            self._merge_refs(self.refs, key, rec.references, rec, "for system/input")

    @staticmethod
    def _merge_refs(table: dict, key: Any, refs: list[str], rec: Record, what: str) -> None:
        first = table.get(key)
        if first is None:
            table[key] = (refs, rec.where)
        elif first[0] != refs:
            raise DataError(
                f"{rec.where}: duplicate references {what} {key!r} with different texts (first seen at {first[1]})"
            )


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
        for inp, (shared, where) in c.input_refs.items():
            j = i_index[inp]
            for k in range(n):
                refs[k * m + j] = shared
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
    out = []
    for f in files:
        st = f.stat()
        out.append((str(f.resolve()), st.st_mtime_ns, st.st_size))
    return tuple(out)


_LOADED: dict[tuple, Dataset] = {}
_LOADED_MAX = 8


def _load_cached(name: str, files: tuple[Path, ...], stat_key: tuple | None, policy: ReferenceRecords,
                 ignore: frozenset[str], description: str, meta_key: str, meta: Mapping[str, Any]) -> Dataset:
    """Read and merge the files, reusing the result of an identical earlier call in this process.

    Only embedded datasets whose sha256 was just verified are cached (``stat_key`` not None): their content is
    known exactly. User files are always read again, since a rewrite within the file system's timestamp
    granularity could otherwise be missed. A Dataset is immutable (frozen, matrices handed out as copies), so
    sharing it is safe.
    """
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
            raise DataError(f"{file}: the file is empty (no JSON records); {_formats_hint()}")
    ds = _build(name, collector, DatasetInfo())
    return replace(ds, info=_info(name, meta, ds.score_names, files, description))


# Parsed embedded datasets on disk: every notebook process loads its dataset, and parsing the JSONL costs
# about 0.35 s of CPU where reading the cache entry (parquet, npz, JSON: no pickle) costs about 0.05 s. Only
# embedded files whose sha256 was verified in this process are served from it, under a key made of those
# sha256 values, the load options, the source of the code that parses (this module, formats.py, synthetic.py)
# and the pandas, numpy and Python versions; so a changed data file is refused by the checksum before the
# cache is looked at, and a changed parser or library misses the cache.
_CODE = (Path(__file__), Path(__file__).with_name("formats.py"), Path(__file__).with_name("synthetic.py"))


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
    """A parsed dataset from the cache (parquet, npz without pickles, JSON: nothing in it runs code), or None
    (absent, or corrupt: then a warning, and the files are parsed again)."""
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
        verify_checksums(files)
    policy = reference_records if reference_records is not None else meta.get("reference_records", "raise")
    if policy not in ("raise", "skip", "as-systems"):
        raise ValueError(f"reference_records must be 'raise', 'skip' or 'as-systems', got {policy!r}")
    if isinstance(ignore_fields, str):
        ignore_fields = [ignore_fields]
    ignore = frozenset(ignore_fields) | frozenset(meta.get("ignore_fields", ()))

    meta_key = repr(sorted(meta.items()))
    cacheable = verify and name in _KNOWN
    ds = _load_cached(name, tuple(files), _stat_key(files) if cacheable else None, policy, ignore, description,
                      meta_key, meta)
    return _apply_incomplete(ds, incomplete)


def _apply_incomplete(ds: Dataset, incomplete: IncompletePolicy) -> Dataset:
    if incomplete == "keep-nan":
        return replace(ds, nan_ok=frozenset(ds.score_names))
    if incomplete in ("drop-inputs", "drop-systems"):
        mask = ds._missing_mask(ds.score_names, texts=True)
        if mask.any():
            return ds._drop(mask, incomplete, "a score or text")
    return ds


_ROLES = ("doc", "system", "summary", "reference", "score", "human", "ignore")


def _from_table(frame: pd.DataFrame, source: str, name: str, header_lines: int, roles: Mapping[str, Any]) -> Dataset:
    unknown = sorted(set(roles) - set(_ROLES))
    if unknown:
        raise DataError(f"columns: unknown role {unknown[0]!r}; roles are {', '.join(_ROLES)}")
    mapping = tabular.infer_columns(frame, source=source, **roles)
    collector = _Collector()
    for where, record in tabular.frame_records(frame, mapping, source, header_lines=header_lines):
        rec = parse_record(record, where)
        if rec is not None:
            collector.add(rec)
    ds = _build(name, collector, DatasetInfo())
    meta = tabular.dataset_meta(mapping, source)
    return replace(ds, info=_info(name, meta, ds.score_names, [], str(meta["description"])))


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
    roles = {k: v for k, v in (("doc", doc), ("system", system), ("summary", summary), ("reference", reference),
                               ("score", score), ("human", human), ("ignore", ignore)) if v is not None}
    return _apply_incomplete(_from_table(frame, name, name, 0, roles), incomplete)
