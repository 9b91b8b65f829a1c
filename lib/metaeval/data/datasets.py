"""Datasets: the embedded real data, user data in SacreROUGE "Metrics" JSONL form, and synthetic data.

Every dataset is a grid of N systems x M inputs. Any score (metric or human rating) gives an N x M
matrix with rows = systems and columns = inputs, both sorted as strings (the order the reference
statistics code uses, so matrices agree cell for cell with it).

Score names are the nested ``metrics`` keys joined with ``.``::

    {"metrics": {"qa-eval": {"f1": 0.25}, "expert": {"relevance": [2, 4, 3]}}}
    -> "qa-eval.f1" = 0.25, "expert.relevance" = 3.0 (mean), ratings("expert.relevance") = [2, 4, 3]

A list value (several annotators) is averaged; the individual values stay available through
:meth:`Dataset.ratings`. For the joined SummEval file, ``expert.<dim>`` and ``turker.<dim>`` hold the
expert and crowd ratings of coherence, consistency, fluency and relevance.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Literal, Mapping

import numpy as np
import pandas as pd

from metaeval import _resources

__all__ = [
    "Dataset",
    "DataError",
    "load",
    "known_datasets",
    "data_dir",
    "verify_checksums",
    "synthetic",
    "SyntheticDataset",
]


class DataError(ValueError):
    """A data file is missing, corrupt, malformed or does not form the expected grid."""


def data_dir() -> Path:
    """The folder of embedded data: ``$METAEVAL_DATA`` if set, else the compendium's ``data/``."""
    return _resources.data_root()


# name -> (path relative to data_dir(), description)
_KNOWN: dict[str, tuple[str, str]] = {
    "summeval": (
        "summeval/summeval_joined.jsonl",
        "SummEval: 16 systems x 100 CNN/DM documents, texts, 11 references, expert and crowd ratings",
    ),
    "fabbri2020": (
        "deutsch2021/fabbri2020",
        "Deutsch et al. (2021) per-summary scores of 8 metrics + ratings on SummEval",
    ),
}
_ALIASES = {"deutsch2021": "fabbri2020", "deutsch2021/fabbri2020": "fabbri2020"}


def known_datasets() -> dict[str, str]:
    """Names accepted by :func:`load` with a one-line description of each."""
    return {name: desc for name, (_, desc) in _KNOWN.items()}


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


def _flatten(metrics: Mapping, prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


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
        One row per (system, input) cell (MultiIndex ``system``, ``input``), one column per score.
    ratings_table : dict
        For scores that came as lists (several annotators): name -> array (N, M, n_annotators).
    texts : pandas.DataFrame or None
        Columns ``summary`` and ``references`` (list of str), same index as ``scores``.
    """

    name: str
    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    scores: pd.DataFrame
    ratings_table: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False)
    texts: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def score_names(self) -> list[str]:
        """Every score that :meth:`matrix` accepts."""
        return list(self.scores.columns)

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.systems), len(self.inputs)

    def matrix(self, name: str, *, allow_nan: bool = False) -> np.ndarray:
        """The N x M matrix (systems x inputs) of one score.

        Parameters
        ----------
        name : str
            A score name (see :attr:`score_names`).
        allow_nan : bool
            Return NaN for missing cells instead of raising.

        Examples
        --------
        >>> ds = load("fabbri2020")                      # doctest: +SKIP
        >>> ds.matrix("expert.relevance").shape          # doctest: +SKIP
        (16, 100)
        """
        if name not in self.scores.columns:
            raise KeyError(
                f"unknown score {name!r} in dataset {self.name!r}; known: {', '.join(self.score_names)}"
            )
        values = self.scores[name].to_numpy(dtype=float).reshape(len(self.systems), len(self.inputs))
        if not allow_nan and np.isnan(values).any():
            missing = np.argwhere(np.isnan(values))
            cells = ", ".join(f"({self.systems[i]}, {self.inputs[j]})" for i, j in missing[:5])
            raise DataError(
                f"score {name!r} is missing in {len(missing)} of {values.size} cells, e.g. {cells}; "
                "pass allow_nan=True to keep them as NaN, or load(..., incomplete='drop-inputs')"
            )
        return values

    def ratings(self, name: str) -> np.ndarray:
        """Individual annotator ratings of a list-valued score: array (N, M, n_annotators)."""
        if name not in self.ratings_table:
            raise KeyError(
                f"score {name!r} has no individual ratings; list-valued scores: "
                f"{', '.join(self.ratings_table) or 'none'}"
            )
        return self.ratings_table[name]

    def system_scores(self, name: str) -> pd.Series:
        """Per-system mean of a score (the system-level score), indexed by system id."""
        return pd.Series(np.nanmean(self.matrix(name, allow_nan=True), axis=1), index=list(self.systems), name=name)

    def summaries(self) -> np.ndarray:
        """System summaries as an N x M object array of str (texts datasets only)."""
        return self._text_grid("summary")

    def references(self) -> np.ndarray:
        """References as an N x M object array of lists of str (texts datasets only)."""
        return self._text_grid("references")

    def _text_grid(self, column: str) -> np.ndarray:
        if self.texts is None:
            raise DataError(f"dataset {self.name!r} has no texts (only scores)")
        grid = np.empty(self.shape, dtype=object)
        flat = self.texts[column].to_list()
        for k, value in enumerate(flat):
            grid[k // len(self.inputs), k % len(self.inputs)] = value
        return grid

    def subset(self, systems: Iterable[str] | None = None, inputs: Iterable[str] | None = None) -> "Dataset":
        """A dataset restricted to some systems and/or inputs (ids must exist)."""
        systems = tuple(sorted(systems)) if systems is not None else self.systems
        inputs = tuple(sorted(inputs)) if inputs is not None else self.inputs
        for arg, ids, known in (("systems", systems, self.systems), ("inputs", inputs, self.inputs)):
            unknown = sorted(set(ids) - set(known))
            if unknown:
                raise KeyError(f"{arg}: unknown ids {unknown[:5]}{' ...' if len(unknown) > 5 else ''}")
        index = pd.MultiIndex.from_product([systems, inputs], names=["system", "input"])
        si = [self.systems.index(s) for s in systems]
        ii = [self.inputs.index(i) for i in inputs]
        ratings = {k: v[np.ix_(si, ii)] for k, v in self.ratings_table.items()}
        texts = self.texts.loc[index] if self.texts is not None else None
        return Dataset(self.name, systems, inputs, self.scores.loc[index], ratings, texts)


# ----------------------------------------------------------------------------------------------------
# Loading


IncompletePolicy = Literal["raise", "keep-nan", "drop-inputs", "drop-systems"]


def _resolve(name_or_path: str | os.PathLike) -> tuple[str, Path]:
    text = str(name_or_path)
    key = _ALIASES.get(text, text)
    if key in _KNOWN:
        return key, data_dir() / _KNOWN[key][0]
    path = Path(text)
    if path.exists():
        return text, path
    raise DataError(
        f"unknown dataset {text!r}: not a known name ({', '.join(sorted(_KNOWN))}) "
        "and no file or directory of that name exists"
    )


def _read_jsonl(path: Path) -> Iterable[tuple[int, dict]]:
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise DataError(f"{path}:{lineno}: expected a JSON object, got {type(record).__name__}")
            yield lineno, record


def _require(record: dict, key: str, kind: type, where: str):
    if key not in record:
        raise DataError(f"{where}: missing field {key!r}")
    value = record[key]
    if not isinstance(value, kind):
        raise DataError(f"{where}: field {key!r} must be {kind.__name__}, got {type(value).__name__}")
    return value


def _cell_values(flat: dict[str, object], where: str) -> tuple[dict[str, float], dict[str, list]]:
    scalars: dict[str, float] = {}
    lists: dict[str, list] = {}
    for name, value in flat.items():
        if isinstance(value, bool) or value is None:
            raise DataError(f"{where}: metric {name!r} is {value!r}, expected a number or list of numbers")
        if isinstance(value, (int, float)):
            scalars[name] = float(value)
        elif isinstance(value, list):
            if not value or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
                raise DataError(f"{where}: metric {name!r} must be a non-empty list of numbers")
            lists[name] = [float(v) for v in value]
            scalars[name] = float(np.mean(lists[name]))
        else:
            raise DataError(f"{where}: metric {name!r} has unsupported type {type(value).__name__}")
    return scalars, lists


class _Collector:
    """Merges records keyed by (system, input) from one or more files, rejecting duplicates."""

    def __init__(self) -> None:
        self.scores: dict[tuple[str, str], dict[str, float]] = {}
        self.lists: dict[tuple[str, str], dict[str, list]] = {}
        self.texts: dict[tuple[str, str], dict] = {}
        self.origin: dict[tuple[tuple[str, str], str], str] = {}

    def add(self, key, scalars, lists, where, texts=None) -> None:
        cell = self.scores.setdefault(key, {})
        for name, value in scalars.items():
            if name in cell:
                raise DataError(
                    f"{where}: duplicate score {name!r} for system {key[0]!r}, input {key[1]!r} "
                    f"(first seen at {self.origin[(key, name)]})"
                )
            cell[name] = value
            self.origin[(key, name)] = where
        if lists:
            self.lists.setdefault(key, {}).update(lists)
        if texts is not None:
            if key in self.texts:
                raise DataError(f"{where}: duplicate texts for system {key[0]!r}, input {key[1]!r}")
            self.texts[key] = texts


def _load_metrics_file(path: Path, collector: _Collector) -> None:
    for lineno, record in _read_jsonl(path):
        where = f"{path}:{lineno}"
        input_id = _require(record, "instance_id", str, where)
        system_id = _require(record, "summarizer_id", str, where)
        if record.get("summarizer_type", "peer") != "peer":
            continue  # reference "summarizers" are not systems under evaluation
        metrics = _require(record, "metrics", dict, where)
        scalars, lists = _cell_values(_flatten(metrics), where)
        collector.add((system_id, input_id), scalars, lists, where)


def _load_joined_summeval(path: Path, collector: _Collector) -> None:
    for lineno, record in _read_jsonl(path):
        where = f"{path}:{lineno}"
        input_id = _require(record, "instance_id", str, where)
        system_id = _require(record, "summarizer_id", str, where)
        summary = _require(record, "summary", str, where)
        references = _require(record, "references", list, where)
        if not all(isinstance(r, str) for r in references):
            raise DataError(f"{where}: field 'references' must be a list of strings")
        ratings = {
            "expert": _require(record, "expert_annotations", dict, where),
            "turker": _require(record, "turker_annotations", dict, where),
        }
        scalars, lists = _cell_values(_flatten(ratings), where)
        collector.add(
            (system_id, input_id), scalars, lists, where, texts={"summary": summary, "references": references}
        )


def _is_joined_format(path: Path) -> bool:
    for _, record in _read_jsonl(path):
        return "summary" in record and "references" in record
    raise DataError(f"{path}: the file is empty")


def load(
    name_or_path: str | os.PathLike = "summeval",
    *,
    incomplete: IncompletePolicy = "raise",
    verify: bool = True,
) -> Dataset:
    """Load an embedded dataset by name, or user data by path.

    Parameters
    ----------
    name_or_path : str or path
        ``"summeval"`` (texts + ratings), ``"fabbri2020"`` (alias ``"deutsch2021"``: Deutsch et al.'s
        metric scores), a directory of SacreROUGE "Metrics" ``*.jsonl`` files, or one such file
        (or a file in the joined SummEval form).
    incomplete : {"raise", "keep-nan", "drop-inputs", "drop-systems"}
        What to do when some (system, input) cells lack a record or a score: raise an error listing
        them, keep them as NaN, or drop the inputs (columns) / systems (rows) that have them.
    verify : bool
        Check the sha256 of embedded files against ``data/SHA256SUMS``.

    Returns
    -------
    Dataset

    Examples
    --------
    >>> ds = load("summeval")                               # doctest: +SKIP
    >>> ds.shape, ds.matrix("expert.relevance").mean()      # doctest: +SKIP
    ((16, 100), 3.77...)
    """
    if incomplete not in ("raise", "keep-nan", "drop-inputs", "drop-systems"):
        raise ValueError(
            f"incomplete must be 'raise', 'keep-nan', 'drop-inputs' or 'drop-systems', got {incomplete!r}"
        )
    name, path = _resolve(name_or_path)
    if path.is_dir():
        files = sorted(path.glob("*.jsonl"))
        if not files:
            raise DataError(f"{path}: directory holds no *.jsonl files")
    elif path.exists():
        files = [path]
    else:
        raise DataError(f"dataset {name!r}: {path} does not exist")
    if verify:
        verify_checksums(files)

    collector = _Collector()
    for file in files:
        if _is_joined_format(file):
            _load_joined_summeval(file, collector)
        else:
            _load_metrics_file(file, collector)
    if not collector.scores:
        raise DataError(f"dataset {name!r}: no peer records found in {path}")
    return _build(name, collector, incomplete)


def _build(name: str, c: _Collector, incomplete: IncompletePolicy) -> Dataset:
    systems = sorted({s for s, _ in c.scores})
    inputs = sorted({i for _, i in c.scores})
    index = pd.MultiIndex.from_product([systems, inputs], names=["system", "input"])
    scores = pd.DataFrame.from_dict(c.scores, orient="index")
    scores.index = pd.MultiIndex.from_tuples(scores.index, names=["system", "input"])
    scores = scores.reindex(index)
    scores = scores[sorted(scores.columns)]

    missing = scores.isna()
    if missing.to_numpy().any():
        bad = missing.any(axis=1)
        if incomplete == "raise":
            cells = list(scores.index[bad])
            per_score = missing.sum()
            per_score = per_score[per_score > 0]
            detail = ", ".join(f"{k}: {v}" for k, v in per_score.items())
            raise DataError(
                f"dataset {name!r}: incomplete grid of {len(systems)} systems x {len(inputs)} inputs; "
                f"{len(cells)} cells lack a record or score (e.g. {cells[:5]}; missing per score: {detail}). "
                "Choose load(..., incomplete='keep-nan' | 'drop-inputs' | 'drop-systems')"
            )
        if incomplete == "drop-inputs":
            bad_inputs = set(scores.index[bad].get_level_values("input"))
            inputs = [i for i in inputs if i not in bad_inputs]
        elif incomplete == "drop-systems":
            bad_systems = set(scores.index[bad].get_level_values("system"))
            systems = [s for s in systems if s not in bad_systems]
        if len(systems) == 0 or len(inputs) == 0:
            raise DataError(f"dataset {name!r}: dropping incomplete cells left an empty grid")
        index = pd.MultiIndex.from_product([systems, inputs], names=["system", "input"])
        scores = scores.reindex(index)

    ratings: dict[str, np.ndarray] = {}
    list_names = sorted({n for cell in c.lists.values() for n in cell})
    for lname in list_names:
        width = max(len(cell.get(lname, [])) for cell in c.lists.values())
        arr = np.full((len(systems), len(inputs), width), np.nan)
        for i, s in enumerate(systems):
            for j, inp in enumerate(inputs):
                values = c.lists.get((s, inp), {}).get(lname)
                if values is not None:
                    arr[i, j, : len(values)] = values
        ratings[lname] = arr

    texts = None
    if c.texts:
        rows = [c.texts.get(key, {"summary": None, "references": None}) for key in index]
        texts = pd.DataFrame(rows, index=index)
    return Dataset(name, tuple(systems), tuple(inputs), scores, ratings, texts)


# ----------------------------------------------------------------------------------------------------
# Synthetic data with known population correlations


@dataclass(frozen=True)
class SyntheticDataset:
    """Synthetic metric and human scores with known population correlations.

    Attributes
    ----------
    human : ndarray (N, M)
    metrics : ndarray (K, N, M)
        K metrics, exchangeable given the human scores (equal population correlations with it).
    system_correlation : float
        Population Pearson correlation between a metric's and the human *true system quality*
        (the system-level correlation as the number of inputs grows).
    system_correlation_finite : float
        Population correlation between system means over the M inputs actually drawn.
    summary_correlation : float
        Population Pearson correlation, within one input, between metric and human scores across systems
        (what the summary-level correlation estimates).
    """

    human: np.ndarray
    metrics: np.ndarray
    system_correlation: float
    system_correlation_finite: float
    summary_correlation: float


def synthetic(
    n_systems: int,
    n_inputs: int,
    *,
    system_correlation: float,
    summary_correlation: float,
    n_metrics: int = 1,
    system_sd: float = 1.0,
    noise_sd: float = 1.0,
    shared_system_effect: bool = True,
    rng: np.random.Generator | int | None = None,
) -> SyntheticDataset:
    """Draw a systems x inputs grid with known population correlations between metric and human scores.

    Model: system quality ``a_i`` (human) and ``b_ki`` (metric k) are jointly normal with correlation
    ``rho_s`` (``system_correlation``), variance ``system_sd**2``; each cell adds noise ``e_ij`` (human) and
    ``f_kij`` (metric) that are jointly normal with correlation ``rho_e`` and variance ``noise_sd**2``.
    Metric k is ``b_ki + f_kij``, human ``a_i + e_ij``. ``rho_e`` is solved so that the within-input
    correlation equals ``summary_correlation``: ``(rho_s s^2 + rho_e t^2) / (s^2 + t^2)``.

    With ``shared_system_effect=True`` (default) all metrics share one system effect ``b_i`` and differ only
    by independent cell noise: any two metrics are exchangeable *cell by cell*, the null hypothesis under
    which Perm-Both (which swaps single cells) is exact. With ``False`` each metric has its own ``b_ki``:
    the metrics are exchangeable only as whole systems, and cell-wise Perm-Both rejects too often (a
    teaching example of what its null assumes; Perm-Systems stays valid).

    Examples
    --------
    >>> d = synthetic(16, 100, system_correlation=0.8, summary_correlation=0.3, rng=0)
    >>> d.metrics.shape, round(d.summary_correlation, 2)
    ((1, 16, 100), 0.3)
    """
    for arg, value in (("n_systems", n_systems), ("n_inputs", n_inputs), ("n_metrics", n_metrics)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{arg} must be a positive integer, got {value!r}")
    for arg, value in (("system_correlation", system_correlation), ("summary_correlation", summary_correlation)):
        if not -1 <= value <= 1:
            raise ValueError(f"{arg} must be in [-1, 1], got {value!r}")
    if system_sd <= 0 or noise_sd <= 0:
        raise ValueError("system_sd and noise_sd must be positive")
    rng = np.random.default_rng(rng)
    s2, t2 = system_sd**2, noise_sd**2
    rho_e = (summary_correlation * (s2 + t2) - system_correlation * s2) / t2
    if not -1 <= rho_e <= 1:
        raise ValueError(
            f"summary_correlation={summary_correlation} cannot be reached with system_correlation="
            f"{system_correlation}, system_sd={system_sd}, noise_sd={noise_sd} (needs a cell-noise correlation "
            f"of {rho_e:.3f}); change noise_sd or the correlations"
        )
    a = rng.standard_normal(n_systems) * system_sd
    n_effects = 1 if shared_system_effect else n_metrics
    u = rng.standard_normal((n_effects, n_systems)) * system_sd
    b = np.broadcast_to(system_correlation * a + np.sqrt(1 - system_correlation**2) * u, (n_metrics, n_systems))
    e = rng.standard_normal((n_systems, n_inputs)) * noise_sd
    f = rho_e * e + np.sqrt(1 - rho_e**2) * rng.standard_normal((n_metrics, n_systems, n_inputs)) * noise_sd
    human = a[:, None] + e
    metrics = b[:, :, None] + f
    finite = (system_correlation * s2 + rho_e * t2 / n_inputs) / (s2 + t2 / n_inputs)
    return SyntheticDataset(human, metrics, float(system_correlation), float(finite), float(summary_correlation))
