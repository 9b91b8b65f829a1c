"""Deutsch, Dror & Roth (2022), "Re-Examining System-Level Correlations of Automatic Summarization Evaluation
Metrics", and the pairwise statistics of today's metric comparisons, as library calls used by
``notebooks/24_deutsch2022_system_level.py``.

* :func:`delta_table`: system-level agreement over the system pairs whose score difference is small (the
  paper's Figure 6: cumulative deciles of each metric's own ``|difference|``, the authors' tau), or in fixed bands
  of one score's difference (the labelled alternative), with Boot-Both intervals; :func:`delta_sentences`
  says what the table shows;
* :func:`ranking_stability`: how well the system ranking on k judged documents agrees with the ranking on all of
  them, for each score;
* :func:`agreement_table`, :func:`accuracy_clusters`: pairwise accuracy (Kocmi et al., 2021), acc_eq and its
  epsilon (Deutsch, Foster & Freitag, 2023), soft pairwise accuracy (Thompson et al., 2024) and WMT-style
  significance clusters;
* :func:`replicability_table`: is metric A better than B on every dataset? (partial conjunction, Dror et al.,
  2017);
* :func:`read_unjudged`, :func:`unjudged_cis`: the parts that need the metric's scores on the unjudged test
  documents (the paper scores all 11,490 CNN/DailyMail test documents; they are not public here);
* :func:`choose_metrics`, :func:`choose_bucket`, :func:`check_complete`, :func:`dropped_note`,
  :func:`replication_plan`, :func:`replication_tests`: the notebook's defaults taken from the dataset and its
  parameters checked before anything is computed (on a user's dataset: the user's score names, never the
  paper's labels).

Deutsch, D., Dror, R., & Roth, D. (2022). Re-Examining System-Level Correlations of Automatic Summarization
Evaluation Metrics. *NAACL 2022*, 6038-6052. https://doi.org/10.18653/v1/2022.naacl-main.442
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from metaeval._markup import md_text
from metaeval.data.datasets import INCOMPLETE_FIX, DataError, Dataset, known_datasets, load
from metaeval.stats.agreement import (
    DEFAULT_DELTAS,
    PERCENTILES,
    delta_correlations,
    pairwise_accuracy,
    soft_pairwise_accuracy,
    tie_calibrated_accuracy,
    validate_deltas,
)
from metaeval.stats.correlation import batch_corr
from metaeval.stats.multiplicity import partial_conjunction_test, significance_clusters
from metaeval.stats.resampling import bootstrap_ci, percentile_interval
from metaeval.stats.significance import pairwise_tests
from metaeval.studies.deutsch import paper_column, paper_metrics

__all__ = [
    "DOI",
    "ANTHOLOGY",
    "CITATIONS",
    "DEFAULT_DELTAS",
    "PERCENTILES",
    "FIGURE6",
    "rouge_points",
    "check_deltas",
    "delta_table",
    "delta_sentences",
    "ClosestPairs",
    "closest_pairs",
    "ranking_stability",
    "agreement_table",
    "accuracy_clusters",
    "replicability_table",
    "read_unjudged",
    "unjudged_cis",
    "INCOMPLETE",
    "MetricChoice",
    "BucketChoice",
    "ReplicationPlan",
    "is_embedded",
    "choose_metrics",
    "choose_bucket",
    "check_complete",
    "dropped_note",
    "replication_plan",
    "replication_tests",
]

DOI = "https://doi.org/10.18653/v1/2022.naacl-main.442"
ANTHOLOGY = "https://aclanthology.org/2022.naacl-main.442"
CITATIONS = {
    "deutsch2022": "Deutsch, Dror & Roth (2022), NAACL, https://aclanthology.org/2022.naacl-main.442",
    "kocmi2021": "Kocmi et al. (2021), WMT, https://aclanthology.org/2021.wmt-1.57",
    "deutsch2023": "Deutsch, Foster & Freitag (2023), EMNLP, https://aclanthology.org/2023.emnlp-main.798",
    "thompson2024": "Freitag et al. (2024, soft pairwise accuracy by Thompson), WMT, https://aclanthology.org/2024.wmt-1.2",
    "dror2017": "Dror et al. (2017), TACL 5, https://doi.org/10.1162/tacl_a_00074",
}


def rouge_points(X: np.ndarray) -> np.ndarray:
    """ROUGE in points (0-100): scores stored as fractions (every value <= 1, as REALSumm stores them) are
    multiplied by 100; SummEval stores points already."""
    X = np.asarray(X, dtype=float)
    return X * 100.0 if np.nanmax(np.abs(X)) <= 1.0 else X


FIGURE6 = {
    "summeval": {
        "ROUGE-1": (0.17, 0.08, 0.17, 0.04, 0.00, 0.11, 0.24, 0.33, 0.41, 0.45),
        "BERTScore": (0.17, 0.42, 0.50, 0.54, 0.60, 0.67, 0.71, 0.71, 0.74, 0.77),
        "QAEval-F1": (0.50, 0.42, 0.44, 0.50, 0.57, 0.61, 0.67, 0.71, 0.72, 0.75),
    },
    "realsumm": {
        "ROUGE-1": (-0.07, 0.18, 0.33, 0.43, 0.50, 0.57, 0.62, 0.67, 0.71, 0.73),
        "BERTScore": (0.29, 0.18, 0.12, 0.20, 0.24, 0.36, 0.44, 0.51, 0.53, 0.57),
        "QAEval-F1": (0.14, 0.18, 0.31, 0.38, 0.49, 0.56, 0.62, 0.67, 0.71, 0.73),
    },
}
"""The authors' printed Figure 6 values, tau at 10 %, 20 %, ..., 100 % of the system pairs
(CogComp/re-examining-correlations, ``reproducibility/expected.txt``, commit 753c6dd; "fabbri" is SummEval,
"bhandari" REALSumm). The paper scores the systems on the full CNN/DailyMail test set (11,490 documents), the
embedded data on the 100 judged ones: the same procedure on other system scores."""


def check_deltas(deltas: Any) -> str | list[tuple[float, float]]:
    """Notebook 24's ``deltas`` checked before anything is computed: None or ``"percentiles"`` (the paper's
    buckets) or fixed bands ``[[low, high], ...]``.

    Examples
    --------
    >>> check_deltas(None), check_deltas([[0, 0.5], [0.5, 100]])
    ('percentiles', [(0.0, 0.5), (0.5, 100.0)])
    >>> check_deltas([[1, 0]])
    Traceback (most recent call last):
    ...
    ValueError: deltas must be 'percentiles' (the paper's buckets: deciles of each metric's own |difference|) or
    fixed bands [[low, high], ...] with 0 <= low < high, got [[1, 0]]; leave it None for the paper's buckets
    """
    if deltas is None:
        return PERCENTILES
    try:
        edges = validate_deltas(deltas)
    except ValueError:
        raise ValueError(f"deltas must be 'percentiles' (the paper's buckets: deciles of each metric's own "
                         f"|difference|) or fixed bands [[low, high], ...] with 0 <= low < high, got {deltas!r}; "
                         "leave it None for the paper's buckets") from None
    return PERCENTILES if edges is None else edges


def delta_table(
    mats: Mapping[str, np.ndarray],
    Z: np.ndarray,
    *,
    by: np.ndarray | str = "metric",
    deltas: str | Sequence[tuple[float, float]] = PERCENTILES,
    coefficient: str = "kendall",
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """One row per (metric, delta bucket): the bucket's pairs, tau (or pairwise accuracy) and its 95% Boot-Both
    interval (:func:`metaeval.delta_correlations`).

    Default, the paper's Figure 6 as the authors compute it: for each metric, the cumulative deciles of *its
    own* ``|difference of system scores|`` (column ``percent``; ``high`` is the bucket's largest ``|difference|``, the
    paper's ``u``) and the authors' tie-corrected tau. The alternative view: ``deltas`` fixed bands
    ``[low, high)`` of the differences of ``by`` (a score matrix in the bands' units, e.g. ROUGE-1 points, the
    same for every metric; or ``"human"``). Every metric uses the same resampling draws.

    Examples
    --------
    >>> Z = np.repeat([[0.0], [1.0], [2.0], [3.0]], 3, axis=1)
    >>> table = delta_table({"A": Z + [[0], [0], [2], [0.9]], "B": Z}, Z, n_resamples=0)
    >>> print(table[table["percent"] == 30][["metric", "n_pairs", "high", "statistic"]].to_string(index=False))
    metric  n_pairs  high  statistic
         A        3   2.9   0.333333
         B        3   1.0   1.000000
    """
    seed = int(np.random.default_rng(rng).integers(2**63 - 1))
    frames = []
    for name, X in mats.items():
        res = delta_correlations(X, Z, deltas=deltas, by=by, coefficient=coefficient, n_resamples=n_resamples,
                                 rng=seed)
        frame = res.to_frame()
        frame.insert(0, "metric", name)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _ci(row) -> str:
    """" [low, high]" of a row's interval, or nothing where it has none."""
    if pd.isna(row["ci_low"]) or pd.isna(row["ci_high"]):
        return ""
    return f" [{row['ci_low']:.2f}, {row['ci_high']:.2f}]"


def _tau(row) -> str:
    return "τ undefined (NaN)" if pd.isna(row["statistic"]) else f"τ = {row['statistic']:.2f}{_ci(row)}"


def delta_sentences(delta: pd.DataFrame, overall: Mapping[str, float], *, units: str = "") -> list[str]:
    """The conclusions of :func:`delta_table`, one bullet per metric and a count, generated from the table:
    the closest bucket against the widest (percentile view: 10 % against 100 %; bands: the first against the
    last). A bucket without pairs says "no pairs" and carries no interval; the count is over the metrics whose
    closest bucket has an interval. ``overall``: each metric's tau over all pairs. Names are quoted as text
    (:func:`metaeval._markup.md_text`).

    Examples
    --------
    >>> rows = [{"metric": "A", "low": 0.0, "high": 0.5, "n_pairs": 0, "statistic": np.nan, "ci_low": np.nan,
    ...          "ci_high": np.nan}, {"metric": "A", "low": 5.0, "high": 9.0, "n_pairs": 3, "statistic": 1.0,
    ...          "ci_low": 0.5, "ci_high": 1.0}]
    >>> for line in delta_sentences(pd.DataFrame(rows), {"A": 1.0}, units="points"):
    ...     print(line)
    * **A**: no pairs 0–0.5 points apart, τ = 1.00 [0.50, 1.00] over the 3 pairs 5–9 points apart (all pairs: τ = 1.00).
    * No metric has an interval on its closest pairs.
    """
    percentile = "percent" in delta.columns and delta["percent"].notna().any()
    lines = []
    with_ci = including = 0
    for name in dict.fromkeys(delta["metric"]):
        block = delta[delta["metric"] == name]
        first, last = block.iloc[0], block.iloc[-1]
        if percentile:
            near = (f"{_tau(first)} over the {int(first['percent'])} % of pairs closest by its own score "
                    f"({int(first['n_pairs'])} pairs, |difference| ≤ {first['high']:.3g})")
            far = f"{_tau(last)} over all {int(last['n_pairs'])} pairs"
        else:
            def band(row):
                where = f"{row['low']:g}–{row['high']:g}{' ' + units if units else ''} apart"
                return (f"no pairs {where}" if row["n_pairs"] == 0
                        else f"{_tau(row)} over the {int(row['n_pairs'])} pairs {where}")
            near, far = band(first), band(last)
        # the percentile view's last bucket is all pairs already
        text = (f"* **{md_text(name)}**: {near}, {far}"
                + ("" if percentile else f" (all pairs: τ = {overall[name]:.2f})"))
        if _ci(first):
            with_ci += 1
            inside = first["ci_low"] <= 0 <= first["ci_high"]
            including += int(inside)
            text += "; the closest-pairs interval " + ("includes 0." if inside else "excludes 0.")
        else:
            text += "."
        lines.append(text)
    if with_ci:
        lines.append(f"* For {including} of {with_ci} metrics the 95% Boot-Both interval of τ on the closest pairs "
                     "includes 0: on differences that small, the data cannot show that these metrics order systems "
                     "better than chance. (Intervals, not tests between buckets: nothing here compares two buckets' "
                     "τ.)")
    else:
        lines.append("* No metric has an interval on its closest pairs.")
    return lines


@dataclass(frozen=True)
class ClosestPairs:
    """:func:`closest_pairs`: tau on the closest bucket against tau on all pairs, and their difference's
    Boot-Both percentile interval (both buckets from the same resamples)."""

    close: float
    every: float
    n_close: int
    n_every: int
    difference: float
    ci_low: float
    ci_high: float
    n_resamples_used: int


def closest_pairs(X: np.ndarray, Z: np.ndarray, *, n_resamples: int = 1000, confidence_level: float = 0.95,
                  rng: np.random.Generator | int | None = None) -> ClosestPairs:
    """The paper's contrast as :func:`delta_table` and :func:`delta_sentences` state it for notebook 24: the
    authors' tau over the 10 % of system pairs closest by the metric's *own* ``|difference|`` (the first of the
    percentile buckets, ``deltas="percentiles"``, ``by="metric"``) against tau over all pairs (the last bucket),
    with the Boot-Both percentile interval of ``close - every`` (each resample's own percentiles; resamples where
    either bucket's tau is undefined are left out and counted).

    Examples
    --------
    >>> Z = np.repeat(np.arange(8.0)[:, None], 3, axis=1)
    >>> X = Z.copy(); X[[0, 1]] = X[[1, 0]]  # swaps systems 0 and 1: 7 pairs 1 apart (ties included), 1 discordant
    >>> r = closest_pairs(X, Z, n_resamples=0)
    >>> r.n_close, round(r.close, 3), round(r.every, 3), r.n_every
    (7, 0.714, 0.929, 28)
    """
    res = delta_correlations(X, Z, deltas=PERCENTILES, by="metric", coefficient="kendall", n_resamples=n_resamples,
                             confidence_level=confidence_level, rng=rng)
    close, every = float(res.statistic[0]), float(res.statistic[-1])
    lo = hi = np.nan
    used = 0
    if res.bootstrap_distribution is not None:
        diff = res.bootstrap_distribution[:, 0] - res.bootstrap_distribution[:, -1]
        diff = diff[~np.isnan(diff)]
        used = int(diff.size)
        lo, hi = percentile_interval(diff, confidence_level)
    return ClosestPairs(close, every, int(res.n_pairs[0]), int(res.n_pairs[-1]), close - every, float(lo),
                        float(hi), used)


def ranking_stability(
    mats: Mapping[str, np.ndarray],
    *,
    sizes: Sequence[int],
    n_trials: int = 200,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Kendall tau-b between the system ranking on k randomly drawn documents (without replacement) and the
    ranking on all documents, per score and k: mean and 2.5/97.5 percentiles over ``n_trials`` draws. Every
    score uses the same draws, so the rows of one k are paired."""
    rng = np.random.default_rng(rng)
    first = next(iter(mats.values()))
    M = first.shape[1]
    bad = [k for k in sizes if not 1 <= int(k) <= M]
    if bad:
        raise ValueError(f"sizes must be between 1 and the {M} inputs, got {bad}")
    draws = {int(k): np.argsort(rng.random((n_trials, M)), axis=1)[:, : int(k)] for k in sizes}
    rows = []
    for name, X in mats.items():
        full = X.mean(axis=1)
        for k, idx in draws.items():
            sub = np.take_along_axis(np.broadcast_to(X, (n_trials,) + X.shape), idx[:, None, :], axis=2).mean(axis=2)
            tau = batch_corr(sub, full, "kendall")
            ok = tau[~np.isnan(tau)]
            lo, hi = np.percentile(ok, [2.5, 97.5]) if ok.size else (np.nan, np.nan)
            rows.append({"score": name, "documents": k, "tau_mean": float(ok.mean()) if ok.size else np.nan,
                         "tau_low": float(lo), "tau_high": float(hi), "trials": int(ok.size)})
    return pd.DataFrame(rows)


def agreement_table(
    mats: Mapping[str, np.ndarray],
    Z: np.ndarray,
    *,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Per metric: system-level pairwise accuracy, acc_eq and its epsilon (system level, the epsilon in the
    metric's units), acc_eq at the summary level, and soft pairwise accuracy (all metrics share the sign
    flips)."""
    seed = int(np.random.default_rng(rng).integers(2**63 - 1))
    rows = []
    for name, X in mats.items():
        tie_sys = tie_calibrated_accuracy(X, Z, level="system")
        tie_sum = tie_calibrated_accuracy(X, Z, level="summary")
        rows.append({
            "metric": name,
            "pairwise_accuracy": pairwise_accuracy(X, Z, level="system"),
            "acc_eq_system": tie_sys.statistic,
            "epsilon_system": tie_sys.epsilon,
            "acc_eq_summary": tie_sum.statistic,
            "epsilon_summary": tie_sum.epsilon,
            "soft_pairwise_accuracy": soft_pairwise_accuracy(X, Z, n_resamples=n_resamples, rng=seed).statistic,
        })
    return pd.DataFrame(rows)


def accuracy_clusters(tests, *, alpha: float = 0.05) -> pd.DataFrame:
    """WMT-style ranks of the metrics from a :class:`~metaeval.PairwiseResult` (its statistics and p-values):
    :func:`metaeval.significance_clusters` as a table."""
    return significance_clusters(tests, alpha=alpha).to_frame()


def replicability_table(
    tests: Mapping[str, object], *, alpha: float = 0.05, method: str = "bonferroni"
) -> pd.DataFrame:
    """For every ordered pair of metrics present in all datasets: the one-sided p-value of "A beats B" on each
    dataset, the partial-conjunction p-value that A beats B on *all* of them (u = n), and Dror et al.'s count of
    datasets on which the effect replicates.

    ``tests`` maps a dataset name to its :class:`~metaeval.PairwiseResult` (metric names must match across
    datasets).
    """
    names = list(tests)
    common = [m for m in tests[names[0]].names if all(m in tests[d].names for d in names)]  # type: ignore[attr-defined]
    rows = []
    for a in common:
        for b in common:
            if a == b:
                continue
            ps = [float(t.pvalues[t.names.index(a), t.names.index(b)])  # type: ignore[attr-defined]
                  for t in (tests[d] for d in names)]
            if any(np.isnan(ps)):
                continue
            res = partial_conjunction_test(ps, u=len(ps), method=method, alpha=alpha)
            row = {"metric_a": a, "metric_b": b}
            row.update({f"p_{d}": p for d, p in zip(names, ps)})
            row.update({"p_all": res.pvalue, "n_replicated": res.n_replicated, "n_datasets": len(ps)})
            rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.sort_values(["n_replicated", "p_all"], ascending=[False, True], ignore_index=True) if rows else frame


def read_unjudged(path: str | Path, systems: Sequence[str], scores: Sequence[str]) -> dict[str, np.ndarray]:
    """Metric scores on the documents without human judgments, from a CSV with columns ``system``, ``input`` and
    one column per score name: one N x M' matrix per score, rows in the order of ``systems``.

    Every system of the dataset must be present with the same documents; extra systems are an error (they
    would silently drop out of the correlation). This is notebook 24's ``unjudged_scores``: with the metrics'
    scores on the other CNN/DailyMail test documents (the paper's setting), ``metaeval run 24 -p dataset realsumm
    -p unjudged_scores unjudged.csv`` adds ``unjudged_cis.csv``.

    Examples
    --------
    A file with two unjudged documents for every REALSumm system, scored by ROUGE-1 recall:

    >>> import tempfile
    >>> from metaeval.datasets import load
    >>> ds = load("realsumm")
    >>> rows = [{"system": s, "input": f"test-{j}", "rouge-1.recall": [0.40, 0.41][j]} for s in ds.systems
    ...         for j in range(2)]
    >>> path = Path(tempfile.mkdtemp()) / "unjudged.csv"
    >>> pd.DataFrame(rows).to_csv(path, index=False)
    >>> print(path.read_text().splitlines()[:3])
    ['system,input,rouge-1.recall', 'banditsumm_out,test-0,0.4', 'banditsumm_out,test-1,0.41']
    >>> read_unjudged(path, ds.systems, ["rouge-1.recall"])["rouge-1.recall"].shape
    (24, 2)
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"unjudged_scores: no file {path}; give a CSV with columns system, input, <score>...")
    frame = pd.read_csv(path)
    missing_cols = [c for c in ("system", "input", *scores) if c not in frame.columns]
    if missing_cols:
        raise ValueError(f"{path} lacks the columns {missing_cols}; it needs system, input and one column per score")
    frame["system"] = frame["system"].astype(str)
    known = set(map(str, systems))
    extra = sorted(set(frame["system"]) - known)
    absent = sorted(known - set(frame["system"]))
    if extra or absent:
        raise ValueError(f"{path}: systems not in the dataset {extra[:3]}, dataset systems missing {absent[:3]}")
    out = {}
    for score in scores:
        wide = frame.pivot(index="system", columns="input", values=score).reindex([str(s) for s in systems])
        if wide.isna().any().any():
            raise ValueError(f"{path}: score {score!r} is missing for some (system, input) cells")
        out[score] = wide.to_numpy(dtype=float)
    return out


def unjudged_cis(
    mats: Mapping[str, np.ndarray],
    unjudged: Mapping[str, np.ndarray],
    Z: np.ndarray,
    *,
    coefficient: str = "kendall",
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """System-level correlation with the metric's system scores over judged + unjudged documents and the humans'
    over the judged ones, with the Boot-Both interval that resamples the two document sets independently
    (``bootstrap_ci(..., paired_inputs=False)``), next to the judged-only correlation and interval."""
    seed = int(np.random.default_rng(rng).integers(2**63 - 1))
    rows = []
    for name, X in mats.items():
        if name not in unjudged:
            continue
        judged = bootstrap_ci(X, Z, level="system", coefficient=coefficient, n_resamples=n_resamples, rng=seed)
        full = bootstrap_ci(X, Z, level="system", coefficient=coefficient, n_resamples=n_resamples, rng=seed,
                            paired_inputs=False, unjudged=unjudged[name])  # type: ignore[call-arg]
        rows.append({"metric": name, "judged_r": judged.statistic, "judged_low": judged.confidence_interval.low,
                     "judged_high": judged.confidence_interval.high, "all_r": full.statistic,
                     "all_low": full.confidence_interval.low, "all_high": full.confidence_interval.high,
                     "unjudged_documents": unjudged[name].shape[1]})
    return pd.DataFrame(rows)


# -- the notebook's defaults and checks on the dataset it is given ---------------------------------------------

INCOMPLETE = ("raise", "drop-inputs", "drop-systems")
"""The values of notebook 24's ``incomplete`` (``keep-nan`` is not one: every statistic here needs full cells)."""

_WHERE = "notebook 24"


def is_embedded(dataset: str | os.PathLike[str], ds: Dataset) -> bool:
    """True when ``dataset`` named one of the embedded datasets (SummEval, REALSumm, ...), not a path.

    Only those are shown with the paper's short metric labels ("ROUGE-2" for ``rouge-2.f1``); a user's own data
    keeps its score names.

    Examples
    --------
    >>> from metaeval.datasets import load
    >>> is_embedded("realsumm", load("realsumm")), is_embedded("/data/realsumm", load("realsumm"))
    (True, False)
    """
    text = os.fspath(dataset)
    # the paper's data only (SummEval, REALSumm and Deutsch et al.'s files): an atlas dataset is embedded too,
    # but has none of the paper's metrics to label
    if not isinstance(text, str) or ds.name not in known_datasets() or paper_column(ds.name) is None:
        return False
    # a name (or an alias such as "deutsch2021") that load() resolved; a path that happens to end in
    # "summeval" is the user's folder
    return text in known_datasets() or ("/" not in text and os.sep not in text and not Path(text).expanduser().exists())


@dataclass(frozen=True)
class MetricChoice:
    """The metrics notebook 24 compares: score names in order, and the label each has in the outputs."""

    scores: list[str]
    labels: dict[str, str]
    embedded: bool = False

    @property
    def names(self) -> list[str]:
        """The labels, in the order of ``scores``."""
        return [self.labels[s] for s in self.scores]


def choose_metrics(
    ds: Dataset, metrics: Sequence[str] | None, *, human: str, embedded: bool
) -> MetricChoice:
    """The metrics to compare and their labels, checked before anything is computed.

    Parameters
    ----------
    ds : Dataset
    metrics : sequence of str or None
        Score names; None: on an embedded dataset the paper's metrics as it stores them
        (:func:`metaeval.studies.deutsch.paper_metrics`), on a user's dataset every score that is not a human
        score (the paper's metrics are rarely there under the paper's names, and the user's own metric is the
        point of the run).
    human : str
        The ground truth (never one of the metrics).
    embedded : bool
        :func:`is_embedded`: label the paper's metrics with the paper's names ("ROUGE-2"); else keep the
        dataset's score names.

    Raises
    ------
    DataError
        A score the dataset does not have (listing its metric scores), the human score among the metrics, or
        fewer than 2 metrics (pairwise accuracy compares metrics).

    Examples
    --------
    >>> import pandas as pd
    >>> from metaeval.datasets import from_frame
    >>> df = pd.DataFrame({"doc": list("aabb"), "system": list("xyxy"), "LitePyramid": [.5, .4, .6, .3],
    ...                    "ROUGE-2 F1": [.2, .1, .3, .1], "METEOR (%)": [20., 15., 25., 12.]})
    >>> ds = from_frame(df, name="study", human="LitePyramid")
    >>> choose_metrics(ds, None, human="LitePyramid", embedded=False).names
    ['METEOR (%)', 'ROUGE-2 F1']
    >>> choose_metrics(ds, ["ROUGE-1"], human="LitePyramid", embedded=False)
    Traceback (most recent call last):
    ...
    metaeval.data.formats.DataError: metrics: dataset 'study' has no score 'ROUGE-1' (its metric scores: METEOR
    (%), ROUGE-2 F1)
    """
    paper = paper_metrics(ds.score_names, recall_oriented=ds.recall_oriented)
    humans = set(ds.human_scores) | {human}
    available = [s for s in ds.score_names if s not in humans]
    if metrics is None:
        scores = list(paper.values()) if embedded else available
        scores = [s for s in scores if s != human]
    else:
        if isinstance(metrics, str):
            metrics = [metrics]
        scores = list(dict.fromkeys(metrics))
        unknown = [s for s in scores if s not in ds.score_names and not ds.computable(s)]
        if unknown:
            raise DataError(f"metrics: dataset {ds.name!r} has no score {unknown[0]!r} "
                            f"(its metric scores: {', '.join(available) or 'none'})")
        if human in scores:
            raise DataError(f"metrics: {human!r} is the ground truth (human); compare other scores "
                            f"(its metric scores: {', '.join(available) or 'none'})")
    if len(scores) < 2:
        raise DataError(f"metrics: notebook 24 compares metrics and needs at least 2, got {scores} (dataset "
                        f"{ds.name!r}, its metric scores: {', '.join(available) or 'none'}); give them with "
                        f"-p metrics '[\"A\", \"B\"]'")
    label_of = {v: k for k, v in paper.items()} if embedded else {}
    return MetricChoice(scores=scores, labels={s: label_of.get(s, s) for s in scores}, embedded=embedded)


@dataclass(frozen=True)
class BucketChoice:
    """The score whose system differences define the delta buckets: its name, its label, and a note when it is
    not the one asked for (the paper's ROUGE-1 is missing). ``own``: each metric's own score (the paper's
    percentile buckets; ``score`` is None)."""

    score: str | None
    label: str
    human: bool = False
    note: str | None = None
    own: bool = False


def choose_bucket(
    ds: Dataset, bucket_score: str | None, choice: MetricChoice, *, human: str, percentiles: bool = False
) -> BucketChoice:
    """Resolve ``bucket_score``. With ``percentiles`` (the paper's buckets), None is each metric's own score.
    With fixed bands, None is the dataset's ROUGE-1 (recall on a recall-oriented dataset, F
    otherwise; under any spelling), else the first metric; ``"human"`` the ground truth; otherwise a metric's
    label or any score of the dataset.

    Examples
    --------
    >>> from metaeval.datasets import load
    >>> ds = load("realsumm")
    >>> choice = choose_metrics(ds, None, human=ds.default_human, embedded=True)
    >>> choose_bucket(ds, None, choice, human=ds.default_human)
    BucketChoice(score='rouge-1.recall', label='ROUGE-1', human=False, note=None, own=False)
    >>> choose_bucket(ds, None, choice, human=ds.default_human, percentiles=True).own
    True
    >>> few = choose_metrics(ds, ["rouge-2.recall", "qa-eval.f1"], human=ds.default_human, embedded=True)
    >>> choose_bucket(ds, "ROUGE-3", few, human=ds.default_human)
    Traceback (most recent call last):
    ...
    ValueError: bucket_score must be None, 'human' or one of the metrics ['ROUGE-2', 'QAEval-F1'] (or a score of
    dataset 'realsumm'), got 'ROUGE-3'; set it with -p bucket_score NAME
    """
    by_label = {label: score for score, label in choice.labels.items()}
    if bucket_score is None and percentiles:
        return BucketChoice(None, "its own score", own=True)
    if bucket_score is None:
        rouge1 = paper_metrics(ds.score_names, recall_oriented=ds.recall_oriented).get("ROUGE-1")
        if rouge1 is not None:
            return BucketChoice(rouge1, choice.labels.get(rouge1, "ROUGE-1" if choice.embedded else rouge1))
        first = choice.scores[0]
        values = ds.require(scores=[first], incomplete="keep-nan", purpose=_WHERE).matrix(first)
        unit = "×100, as its values are at most 1" if np.nanmax(np.abs(values)) <= 1.0 else "as stored"
        return BucketChoice(first, choice.labels[first], note=(
            f"bucket_score is None and dataset {ds.name!r} has no ROUGE-1: the delta buckets are differences in "
            f"its first metric, {choice.labels[first]} ({unit}), in the units of deltas; set another with "
            "-p bucket_score NAME."))
    if bucket_score in ("human", human):
        return BucketChoice(human, "human", human=True)
    if bucket_score in by_label:
        return BucketChoice(by_label[bucket_score], bucket_score)
    if bucket_score in ds.score_names:
        return BucketChoice(bucket_score, choice.labels.get(bucket_score, bucket_score))
    raise ValueError(f"bucket_score must be None, 'human' or one of the metrics {choice.names} (or a score of "
                     f"dataset {ds.name!r}), got {bucket_score!r}; set it with -p bucket_score NAME")


def _missing(ds: Dataset, scores: Sequence[str]) -> dict[str, np.ndarray]:
    """Per score with missing cells: its N x M mask of missing cells."""
    relaxed = ds.require(scores=list(scores), incomplete="keep-nan", purpose=_WHERE)
    masks = {s: np.isnan(relaxed.matrix(s)) for s in scores}
    return {s: m for s, m in masks.items() if m.any()}


def check_complete(ds: Dataset, scores: Sequence[str], incomplete: str) -> None:
    """Refuse, before anything is computed, scores with missing cells when ``incomplete`` is ``"raise"``,
    naming the cells and the setting that drops them (with how many inputs or systems each would drop).

    Examples
    --------
    >>> import pandas as pd
    >>> from metaeval.datasets import from_frame
    >>> df = pd.DataFrame({"doc": list("aabb"), "system": list("xyxy"), "LitePyramid": [.5, .4, .6, .3],
    ...                    "BERTScore": [.2, None, .3, .1]})
    >>> ds = from_frame(df, name="study", human="LitePyramid")
    >>> check_complete(ds, ["LitePyramid"], "raise")
    >>> check_complete(ds, ["LitePyramid", "BERTScore"], "raise")
    Traceback (most recent call last):
    ...
    metaeval.data.formats.DataError: dataset 'study': 'BERTScore' (1 cell) missing in 1 of 4 cells (e.g. (y, a));
    notebook 24 needs them complete: set the notebook's parameter `incomplete` to drop-inputs or drop-systems
    (`-p incomplete drop-inputs` on the command line, or in its parameters cell), or leave 'BERTScore' out of
    metrics (drop-inputs leaves out 1 of 2 inputs, drop-systems 1 of 2 systems)
    >>> check_complete(ds, ["BERTScore"], "keep-nan")
    Traceback (most recent call last):
    ...
    ValueError: incomplete must be one of ('raise', 'drop-inputs', 'drop-systems'), got 'keep-nan'
    """
    if incomplete not in INCOMPLETE:
        raise ValueError(f"incomplete must be one of {INCOMPLETE}, got {incomplete!r}")
    if incomplete != "raise":
        return
    # the data layer's one rule and message (with what each choice drops), in this notebook's words
    masks = _missing(ds, scores)
    ds.require(scores=list(scores), incomplete="raise", purpose=_WHERE,
               fix=f"{INCOMPLETE_FIX}, or leave {' and '.join(repr(s) for s in masks)} out of metrics")


def dropped_note(before: Dataset, after: Dataset, incomplete: str, scores: Sequence[str]) -> str | None:
    """One line saying which inputs or systems ``incomplete`` dropped, and because of which scores (None when
    nothing was dropped).

    Examples
    --------
    >>> import pandas as pd
    >>> from metaeval.datasets import from_frame
    >>> df = pd.DataFrame({"doc": list("aabb"), "system": list("xyxy"), "LitePyramid": [.5, .4, .6, .3],
    ...                    "BERTScore": [.2, None, .3, .1]})
    >>> ds = from_frame(df, name="study", human="LitePyramid")
    >>> dropped_note(ds, ds.subset(inputs=["b"]), "drop-inputs", ["LitePyramid", "BERTScore"])
    "incomplete = 'drop-inputs': dropped 1 of 2 inputs (a), where BERTScore has missing cells; the analysis uses
    the other 1 inputs and 2 systems."
    """
    axis = "inputs" if incomplete == "drop-inputs" else "systems"
    old, new = (before.inputs, after.inputs) if axis == "inputs" else (before.systems, after.systems)
    kept = set(new)
    dropped = [x for x in old if x not in kept]
    if not dropped:
        return None
    which = ", ".join(_missing(before, scores)) or "a score"
    shown = ", ".join(map(str, dropped[:10])) + (" ..." if len(dropped) > 10 else "")
    return (f"incomplete = {incomplete!r}: dropped {len(dropped)} of {len(old)} {axis} ({shown}), where {which} "
            f"has missing cells; the analysis uses the other {len(after.inputs)} inputs and {len(after.systems)} "
            "systems.")


@dataclass(frozen=True)
class ReplicationPlan:
    """The datasets of the replicability table and, for each, the score of every common metric (keyed by the
    label of this notebook's metric); ``note`` says why the table is skipped (then ``datasets`` is empty)."""

    datasets: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, dict[str, str]] = field(default_factory=dict)
    note: str | None = None

    @property
    def skipped(self) -> bool:
        return not self.datasets


def _paper_keys(ds: Dataset) -> dict[str, str]:
    """score name -> the key that matches it across datasets: the paper's metric name when the score is one
    of the paper's metrics (any spelling, the dataset's statistic), else the score name itself."""
    inverse = {v: k for k, v in paper_metrics(ds.score_names, recall_oriented=ds.recall_oriented).items()}
    return {s: inverse.get(s, s) for s in ds.score_names}


def _scores_by_key(ds: Dataset) -> dict[str, str]:
    """The inverse of :func:`_paper_keys`, the paper's metrics first (a score literally named "ROUGE-2" does not
    displace the dataset's ROUGE-2 under its own spelling)."""
    keys = _paper_keys(ds)
    out = {k: s for s, k in keys.items() if k != s}
    for s, k in keys.items():
        out.setdefault(k, s)
    return out


def _same(a: Dataset, b: Dataset) -> bool:
    return (a.name == b.name and tuple(a.systems) == tuple(b.systems) and tuple(a.inputs) == tuple(b.inputs)
            and a.score_names == b.score_names)


def replication_plan(
    dataset: str | os.PathLike[str],
    ds: Dataset,
    replicate_on: Sequence[str],
    choice: MetricChoice,
    *,
    incomplete: str = "raise",
) -> ReplicationPlan:
    """Check, before anything is computed, that the replicability table can run: this dataset must be one of
    ``replicate_on`` (its tests are the ones the notebook computes), and at least 2 of its metrics must be in
    every other dataset (matched by the paper's metric, "ROUGE-2" for ``rouge-2.recall`` and ``ROUGE-2 F1``,
    else by score name). Otherwise the plan is skipped, with a one-line note saying why. The plan's keys are
    the datasets' names (the entries of ``replicate_on`` when two share a name).

    ``ds`` is the dataset as loaded (before incomplete cells are dropped). Each other dataset's default human
    score and common metrics are checked here as :func:`check_complete` checks this one's (``incomplete``).

    Examples
    --------
    >>> import pandas as pd
    >>> from metaeval.datasets import from_frame, load
    >>> df = pd.DataFrame({"doc": list("aabb"), "system": list("xyxy"), "LitePyramid": [.5, .4, .6, .3],
    ...                    "ROUGE-2 F1": [.2, .1, .3, .1], "METEOR (%)": [20., 15., 25., 12.]})
    >>> ds = from_frame(df, name="study", human="LitePyramid")
    >>> choice = choose_metrics(ds, None, human="LitePyramid", embedded=False)
    >>> print(replication_plan("study.csv", ds, ["summeval", "realsumm"], choice).note)
    Replicability skipped: replicate_on = ['summeval', 'realsumm'] does not include this dataset (study); it
    combines this dataset's tests with those of the others: list it among them (e.g. -p replicate_on
    '["study.csv", "summeval"]') or set -p replicate_on '[]'.
    >>> realsumm = load("realsumm")
    >>> plan = replication_plan("realsumm", realsumm, ["summeval", "realsumm"],
    ...                         choose_metrics(realsumm, ["rouge-2.recall", "qa-eval.f1"], human="litepyramid.recall",
    ...                                        embedded=True))
    >>> plan.metrics["summeval"]
    {'ROUGE-2': 'rouge-2.f1', 'QAEval-F1': 'qa-eval.f1'}
    """
    if not replicate_on:
        return ReplicationPlan(note="replicate_on is empty: the replicability table is skipped.")
    if isinstance(replicate_on, str):
        replicate_on = [replicate_on]
    own_keys = _paper_keys(ds)
    datasets: dict[str, Any] = {}
    metrics: dict[str, dict[str, str]] = {}
    found_self = False
    for entry in replicate_on:
        other = load(entry)
        # the dataset's name labels its p-value column (p_summeval), the entry itself if two share a name
        name = other.name if other.name not in datasets else str(entry)
        if not found_self and (os.fspath(entry) == os.fspath(dataset) or _same(other, ds)):
            found_self = True
            datasets[name] = None  # the notebook's own tests
            metrics[name] = {choice.labels[s]: s for s in choice.scores}
            continue
        keys = _scores_by_key(other)
        metrics[name] = {choice.labels[s]: keys[own_keys.get(s, s)] for s in choice.scores
                         if own_keys.get(s, s) in keys}
        datasets[name] = other
    listed = list(map(str, replicate_on))
    if not found_self:
        example = f"'[\"{os.fspath(dataset)}\", \"{listed[0]}\"]'"
        return ReplicationPlan(note=(
            f"Replicability skipped: replicate_on = {listed} does not include this dataset ({ds.name}); it combines "
            f"this dataset's tests with those of the others: list it among them (e.g. -p replicate_on {example}) "
            "or set -p replicate_on '[]'."))
    common = [label for label in choice.names if all(label in m for m in metrics.values())]
    if len(common) < 2:
        return ReplicationPlan(note=(
            f"Replicability skipped: {len(common)} of this notebook's metrics ({', '.join(common) or 'none'}) "
            f"{'is' if len(common) == 1 else 'are'} in every dataset of replicate_on = {listed}; comparing metrics "
            "across datasets needs 2 (a metric matches the paper's metric of that name, else the same score name)."))
    metrics = {name: {label: m[label] for label in common} for name, m in metrics.items()}
    for name, other in datasets.items():
        if other is not None:
            check_complete(other, [other.default_human, *metrics[name].values()], incomplete)
    return ReplicationPlan(datasets=datasets, metrics=metrics)


def replication_tests(
    plan: ReplicationPlan,
    own: Any,
    *,
    incomplete: str = "raise",
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> dict[str, Any]:
    """The one-sided Perm-Both tests of pairwise accuracy on every dataset of ``plan``: ``own`` (this
    notebook's :class:`~metaeval.PairwiseResult`, unadjusted) for this dataset; for each other one, its common
    metrics against its own default human score, from a generator seeded with ``seed``.

    Examples
    --------
    >>> from metaeval.datasets import load
    >>> realsumm = load("realsumm")
    >>> choice = choose_metrics(realsumm, ["rouge-2.recall", "qa-eval.f1"], human="litepyramid.recall",
    ...                         embedded=True)
    >>> plan = replication_plan("realsumm", realsumm, ["summeval", "realsumm"], choice)
    >>> tests = replication_tests(plan, "realsumm's own tests", n_resamples=20)
    >>> tests["realsumm"], tests["summeval"].names
    ("realsumm's own tests", ('ROUGE-2', 'QAEval-F1'))
    """
    tests: dict[str, Any] = {}
    for name, other in plan.datasets.items():
        if other is None:
            tests[name] = own
            continue
        chosen = plan.metrics[name]
        human = other.default_human
        other = other.require(scores=[human, *chosen.values()], incomplete=incomplete,
                              purpose=f"{_WHERE} (replicate_on)")
        tests[name] = pairwise_tests({label: other.matrix(score) for label, score in chosen.items()},
                                     other.matrix(human), test="perm-both", level="system",
                                     coefficient="pairwise-accuracy", n_resamples=n_resamples,
                                     rng=np.random.default_rng(seed))
    return tests
