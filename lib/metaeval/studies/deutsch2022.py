"""Deutsch, Dror & Roth (2022), "Re-Examining System-Level Correlations of Automatic Summarization Evaluation
Metrics", and the pairwise statistics of today's metric comparisons, as library calls used by
``notebooks/24_deutsch2022_system_level.py``.

* :func:`delta_table`: system-level agreement over the system pairs whose ROUGE difference falls in each delta
  bucket (the paper's main figure), with Boot-Both intervals;
* :func:`ranking_stability`: how well the system ranking on k judged documents agrees with the ranking on all of
  them, for each score;
* :func:`agreement_table`, :func:`accuracy_clusters`: pairwise accuracy (Kocmi et al., 2021), acc_eq and its
  epsilon (Deutsch, Foster & Freitag, 2023), soft pairwise accuracy (Thompson et al., 2024) and WMT-style
  significance clusters;
* :func:`replicability_table`: is metric A better than B on every dataset? (partial conjunction, Dror et al.,
  2017);
* :func:`read_unjudged`, :func:`unjudged_cis`: the parts that need the metric's scores on the unjudged test
  documents (the paper scores all 11,490 CNN/DailyMail test documents; they are not public here).

Deutsch, D., Dror, R., & Roth, D. (2022). Re-Examining System-Level Correlations of Automatic Summarization
Evaluation Metrics. *NAACL 2022*, 6038-6052. https://doi.org/10.18653/v1/2022.naacl-main.442
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from metaeval.stats.agreement import (
    DEFAULT_DELTAS,
    delta_correlations,
    pairwise_accuracy,
    soft_pairwise_accuracy,
    tie_calibrated_accuracy,
)
from metaeval.stats.correlation import batch_corr
from metaeval.stats.multiplicity import partial_conjunction_test, significance_clusters

__all__ = [
    "DOI",
    "ANTHOLOGY",
    "CITATIONS",
    "DEFAULT_DELTAS",
    "rouge_points",
    "delta_table",
    "ranking_stability",
    "agreement_table",
    "accuracy_clusters",
    "replicability_table",
    "read_unjudged",
    "unjudged_cis",
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


def delta_table(
    mats: Mapping[str, np.ndarray],
    Z: np.ndarray,
    *,
    by: np.ndarray | str = "human",
    deltas: Sequence[tuple[float, float]] = DEFAULT_DELTAS,
    coefficient: str = "kendall",
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """One row per (metric, delta bucket): the bucket's pairs, tau (or pairwise accuracy) and its 95% Boot-Both
    interval (:func:`metaeval.delta_correlations`). ``by``: a score matrix in whose units ``deltas`` are given
    (the paper: ROUGE points), or ``"metric"`` / ``"human"``. Every metric uses the same resampling draws."""
    rng = np.random.default_rng(rng)
    seed = int(rng.integers(2**63 - 1))
    frames = []
    for name, X in mats.items():
        res = delta_correlations(X, Z, deltas=deltas, by=by, coefficient=coefficient, n_resamples=n_resamples,
                                 rng=seed)
        frame = res.to_frame()
        frame.insert(0, "metric", name)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


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
    rng = np.random.default_rng(rng)
    seed = int(rng.integers(2**63 - 1))
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
            ps = []
            for d in names:
                t = tests[d]
                i, j = t.names.index(a), t.names.index(b)  # type: ignore[attr-defined]
                ps.append(float(t.pvalues[i, j]))  # type: ignore[attr-defined]
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
    would silently drop out of the correlation)."""
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
    from metaeval.stats.resampling import bootstrap_ci

    rng = np.random.default_rng(rng)
    seed = int(rng.integers(2**63 - 1))
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
