"""The dataset itself: :class:`Dataset` (a systems x inputs grid of scores, with texts), :class:`DatasetInfo`,
display names and the inference of human scores. Private: re-exported by :mod:`metaeval.data.datasets`; below
the loader (:mod:`metaeval.data._loading`), so that both build a :class:`Dataset` without an import cycle.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import compress
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from metaeval.data.formats import DataError, DataWarning

if TYPE_CHECKING:
    from metaeval.metrics.variants import RougeVariant

IncompletePolicy = Literal["raise", "keep-nan", "drop-inputs", "drop-systems"]
_POLICIES = ("raise", "keep-nan", "drop-inputs", "drop-systems")


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


def _rouge_variant(name: str) -> RougeVariant | None:
    """The variant a metaeval ROUGE key or signature (``R-2|stem=1|stop=0|F``) names, else None."""
    from metaeval.metrics.variants import RougeVariant, parse_variant

    try:
        v = parse_variant(name)
    except (ValueError, KeyError, AttributeError):
        return None
    return v if isinstance(v, RougeVariant) else None


def _rouge_display(score: str) -> str | None:
    """``R-2|stem=1|stop=0|F`` or its signature -> "ROUGE-2 F (stem)"; None if not a ROUGE key/signature."""
    v = _rouge_variant(score)
    if v is None:
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


def _ids(ids: Sequence[str], limit: int = 10) -> str:
    return ", ".join(ids[:limit]) + (" ..." if len(ids) > limit else "")


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
        >>> from metaeval.data.datasets import load
        >>> load("fabbri2020").describe().set_index("score").loc["qa-eval.f1", ["complete", "missing"]].tolist()
        [1600, 0]
        """
        missing, human = self.scores.isna().sum(), set(self.info.human_scores)
        rows = [(n, self.display_name(n), n in human, int(len(self.scores) - missing[n]), int(missing[n]))
                for n in self.score_names]
        return pd.DataFrame(rows, columns=["score", "display_name", "human", "complete", "missing"])

    def summary_text(self) -> str:
        """The multi-line description printed by ``metaeval describe``."""
        n, m = self.shape
        lines = [f"dataset: {self.name}"]
        if self.info.description:
            lines.append(f"description: {self.info.description}")
        shown = _ids(self.systems, 8)
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
            table["coverage"] = ["complete" if k == 0 else f"{_cells(k)} missing" for k in table["missing"]]
            table["human"] = table["human"].map({True: "yes", False: ""})
            lines.append(f"scores: {len(table)}")
            lines.append(table[["score", "display_name", "human", "coverage"]].to_string(index=False))
            lines.extend(self._missing_lines(list(table.loc[table["missing"] > 0, "score"])))
        return "\n".join(lines)

    def _missing_lines(self, names: Sequence[str], limit: int = 10) -> list[str]:
        """``metaeval describe``'s list of missing cells (system, input) per incomplete score, and what
        ``incomplete="drop-inputs"`` / ``"drop-systems"`` would leave out: the error messages point here."""
        if not names:
            return []
        lines = ["missing cells (system, input):"]
        for name in names:
            cells = np.argwhere(np.isnan(self._column(name)[0]))
            shown = ", ".join(f"({self.systems[i]}, {self.inputs[j]})" for i, j in cells[:limit])
            more = f" and {len(cells) - limit} more" if len(cells) > limit else ""
            lines.append(f"  {name}: {shown}{more}")
        mask = self._missing_mask(list(names), texts=False)
        lines.append(f"  drop-inputs would leave out {self._left_out(mask, 'drop-inputs')}; drop-systems "
                     f"{self._left_out(mask, 'drop-systems')}")
        return lines

    @staticmethod
    def kept(mask: np.ndarray, incomplete: str) -> tuple[np.ndarray, np.ndarray]:
        """The systems and inputs (boolean masks) that ``incomplete`` keeps of a grid whose missing cells are
        ``mask``: drop-inputs leaves out the inputs with a missing cell, drop-systems the systems. A system (an
        input) with none of the cells is outside the scores' grid (XSum's Gold, the reference annotated as a
        system, has no metric score): it is left out first, else nothing would be kept.

        >>> [k.tolist() for k in Dataset.kept(np.array([[0, 0, 1], [1, 1, 1], [0, 0, 0]], bool), "drop-inputs")]
        [[True, False, True], [True, True, False]]
        """
        m = mask if incomplete == "drop-inputs" else mask.T
        inside = np.asarray(~m.all(axis=1))
        keep = np.asarray(~m[inside].any(axis=0))
        return (inside, keep) if incomplete == "drop-inputs" else (keep, inside)

    def _left_out(self, mask: np.ndarray, incomplete: str) -> str:
        """What :meth:`kept` leaves out: ``"2 of 500 inputs and 1 of 5 systems with none of the cells (Gold)"``."""
        axes = list(zip((self.systems, self.inputs), self.kept(mask, incomplete), ("systems", "inputs")))
        (ids, keep, axis), (o_ids, o_keep, o_axis) = axes[::-1] if incomplete == "drop-inputs" else axes
        out, other = list(compress(ids, ~keep)), list(compress(o_ids, ~o_keep))
        return f"{len(out)} of {len(ids)} {axis}" + (
            f" and {len(other)} of {len(o_ids)} {o_axis} with none of the cells ({_ids(other)})" if other else "")

    # -- matrices ------------------------------------------------------------------------------------

    def computable(self, name: str) -> bool:
        """True for a metaeval ROUGE key or signature (``R-2|stem=1|stop=0|F``) that the dataset does not store
        but can score from its texts: :meth:`matrix` and :meth:`require` accept it (scored on first use)."""
        return name not in self.scores.columns and self.has_texts and _rouge_variant(name) is not None

    def _column(self, name: str) -> tuple[np.ndarray, int]:
        """The N x M values of a score (stored, or scored from the texts on first use) and its missing count."""
        if name not in self._cache:
            if self.computable(name):
                from metaeval.metrics.rouge import score

                assert self.texts is not None
                frame = score(self.texts["summary"].tolist(), [list(r) for r in self.texts["references"]], [name],
                              columns="key", warn=False)
                values = frame.iloc[:, 0].to_numpy(dtype=float).reshape(self.shape)
            elif name in self.scores.columns:
                values = self.scores[name].to_numpy(dtype=float).reshape(self.shape)
            else:
                raise KeyError(f"unknown score {name!r} in dataset {self.name!r}; known: {', '.join(self.score_names)}")
            self._cache[name] = (values, int(np.isnan(values).sum()))
        return self._cache[name]

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
        >>> from metaeval.data.datasets import load
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
        return np.fromiter(self.texts[column], dtype=object, count=len(self.texts)).reshape(self.shape)

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
        """Drop the inputs (columns) or systems (rows) that have a masked cell (:meth:`kept`), with a warning
        naming them."""
        axis_name = "inputs" if incomplete == "drop-inputs" else "systems"
        ids = self.inputs if incomplete == "drop-inputs" else self.systems
        keep_s, keep_i = self.kept(mask, incomplete)
        if not keep_s.any() or not keep_i.any():
            raise DataError(
                f"dataset {self.name!r}: every one of the {len(ids)} {axis_name} misses some of {what}; "
                f"incomplete={incomplete!r} would leave nothing"
            )
        dropped = list(compress(ids, ~(keep_i if incomplete == "drop-inputs" else keep_s)))
        warnings.warn(
            f"dataset {self.name!r}: dropped {self._left_out(mask, incomplete)} where {what} is missing "
            f"(incomplete={incomplete!r}): {_ids(dropped)}",
            DataWarning,
            stacklevel=3,
        )
        return self.subset(compress(self.systems, keep_s), compress(self.inputs, keep_i))

    def require(
        self,
        *,
        scores: str | Iterable[str] = (),
        texts: bool = False,
        incomplete: IncompletePolicy = "raise",
        purpose: str = "this analysis",
        fix: str | None = None,
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
        fix : str, optional
            How the caller's user chooses a policy, in the error message (e.g. ``"rerun with -p incomplete
            drop-inputs"``); by default the Python form ``incomplete='drop-inputs'``.

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
        >>> from metaeval.data.datasets import load
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
        parts = [f"{n!r} ({_cells(self._column(n)[1])})" for n in names if self._column(n)[1]]
        if texts and self.texts is not None and not self.has_texts:
            parts.append("texts")
        what = " and ".join(parts)
        if incomplete == "raise":
            cells = ", ".join(f"({self.systems[i]}, {self.inputs[j]})" for i, j in np.argwhere(mask)[:5])
            # what each choice would cost, so that the user can choose
            raise DataError(
                f"dataset {self.name!r}: {what} missing in {int(mask.sum())} of {mask.size} cells (e.g. {cells}); "
                f"{purpose} needs them complete: "
                + (fix or "pass incomplete='drop-inputs', 'drop-systems' or 'keep-nan'")
                + f" (drop-inputs leaves out {self._left_out(mask, 'drop-inputs')}, drop-systems "
                f"{self._left_out(mask, 'drop-systems')})"
            )
        if incomplete == "keep-nan":
            return replace(self, nan_ok=self.nan_ok | frozenset(names))
        return self._drop(mask, incomplete, what)
