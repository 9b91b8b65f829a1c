"""Agreement of metric and human scores over pairs: the statistics WMT and summarization use since 2021.

X (metric) and Z (human) are N systems x M inputs, as everywhere in :mod:`metaeval.stats`. Levels say which
vectors are compared (see :func:`metaeval.stats._pairs.level_groups`): ``"system"`` (per-system means),
``"summary"`` (per input, over systems; mt-metrics-eval ``average_by="item"``), ``"per-system"`` (per system,
over inputs; ``average_by="sys"``) and ``"global"`` (all cells; ``average_by="none"``). A statistic computed
on several groups is the mean over the groups where it is defined.

* :func:`pairwise_accuracy`: Kocmi et al. (2021), as mt-metrics-eval's ``stats.Agreement`` computes it;
* :func:`tie_calibrated_accuracy`: acc_eq with its optimal tie threshold epsilon, Deutsch, Foster & Freitag
  (2023), as mt-metrics-eval's ``tau_optimization`` searches it;
* :func:`soft_pairwise_accuracy`: Thompson et al. (2024), as mt-metrics-eval's ``pce`` module computes it;
* :func:`delta_correlations`: Deutsch, Dror & Roth (2022), system pairs by the size of their score difference,
  with Boot-Both intervals.

References: Kocmi et al. (2021), "To Ship or Not to Ship", WMT, https://aclanthology.org/2021.wmt-1.57;
Deutsch, Foster & Freitag (2023), "Ties Matter", EMNLP, https://aclanthology.org/2023.emnlp-main.798;
Thompson et al. (2024) in Freitag et al., "Are LLMs Breaking MT Metrics?", WMT24,
https://aclanthology.org/2024.wmt-1.2; Deutsch, Dror & Roth (2022), "Re-Examining System-Level Correlations
of Automatic Summarization Evaluation Metrics", NAACL, https://aclanthology.org/2022.naacl-main.442.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from metaeval._warnings import warn_degenerate
from metaeval.stats._kernels import snap
from metaeval.stats._pairs import GROUPINGS, level_groups, pair_signs, pairwise_agreement
from metaeval.stats.correlation import ConfidenceInterval, check_confidence_level, check_matrices
from metaeval.stats.resampling import check_n_resamples, draw_indices, percentile_interval

__all__ = [
    "TieCalibrationResult",
    "SoftPairwiseResult",
    "DeltaCorrelationResult",
    "pairwise_accuracy",
    "tie_calibrated_accuracy",
    "soft_pairwise_accuracy",
    "delta_correlations",
    "pairwise_pvalues",
    "DEFAULT_DELTAS",
]


def _check_grouping(level: str) -> None:
    if level not in GROUPINGS:
        raise ValueError(f"level must be one of {GROUPINGS}, got {level!r}")


def _mean_defined(values: np.ndarray) -> float:
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else np.nan


# ----------------------------------------------------------------------------------------------------
# Pairwise accuracy


def pairwise_accuracy(X, Z, *, level: str = "system", nan_policy: str = "raise") -> float:
    """Share of pairs that the metric orders as the humans do (Kocmi et al., 2021).

    A pair agrees when ``sign(x_i - x_j) == sign(z_i - z_j)``. This is mt-metrics-eval's ``stats.Agreement``
    (used by its ``CompareMetricsWithGlobalAccuracy``): every pair counts, so a pair tied in both scores
    agrees, and a pair tied in only one of them disagrees (a metric tie on a pair the humans order is an
    error; so is a metric preference on a pair the humans tie). With continuous human scores human ties are
    rare; where they matter, :func:`tie_calibrated_accuracy` is the statistic designed for them.

    Parameters
    ----------
    X, Z : array_like (N, M)
        Metric and human scores, systems x inputs.
    level : {"system", "summary", "per-system", "global"}
        ``"system"`` compares the N system means (Kocmi et al.'s setting); the others average the accuracy
        over groups (see the module docstring).
    nan_policy : {"raise", "omit"}

    Returns
    -------
    float
        NaN if no group has two scored entries.

    Examples
    --------
    Three systems, pairs (0,1), (0,2), (1,2): the metric orders (0,1) and (1,2) as the humans do, and ties
    (0,2), which the humans order:

    >>> pairwise_accuracy([[3.0] * 3, [1.0] * 3, [3.0] * 3], [[3.0] * 3, [1.0] * 3, [2.0] * 3])
    0.6666666666666666
    """
    _check_grouping(level)
    X, Z = _matrices(X, Z, nan_policy)
    x, z, w = level_groups(X, Z, level)
    acc = _mean_defined(pairwise_agreement(x, z, w))
    if np.isnan(acc):
        warn_degenerate(f"the {level}-level pairwise accuracy is NaN: no group has two scored entries")
    return acc


# ----------------------------------------------------------------------------------------------------
# Tie calibration (Deutsch, Foster & Freitag, 2023)


@dataclass(frozen=True)
class TieCalibrationResult:
    """Result of :func:`tie_calibrated_accuracy`.

    Attributes
    ----------
    statistic : float
        acc_eq at ``epsilon``.
    epsilon : float
        The tie threshold: metric differences ``|x_i - x_j| <= epsilon`` count as ties. The smallest optimal
        one when searched.
    thresholds, accuracies : ndarray
        Every candidate threshold (0 and each distinct metric difference, ascending) and acc_eq at it
        (empty when ``epsilon`` was given).
    """

    statistic: float
    epsilon: float
    thresholds: np.ndarray
    accuracies: np.ndarray


def _pair_table(X: np.ndarray, Z: np.ndarray, level: str):
    """Per valid pair: |metric difference|, human tie, concordance (metric and human order agree), group
    weight; and the number of groups with a pair."""
    x, z, w = level_groups(X, Z, level)
    n = x.shape[-1]
    iu, ju = np.triu_indices(n, k=1)
    dm = np.abs(x[:, iu] - x[:, ju])
    dh = z[:, iu] - z[:, ju]
    valid = np.ones(dm.shape, dtype=bool) if w is None else (w[:, iu] > 0) & (w[:, ju] > 0)
    per_group = valid.sum(axis=1)
    groups = np.count_nonzero(per_group)
    sx, sz, _ = pair_signs(x, z, None)
    concordant = (sx * sz > 0) & valid
    human_tie = (dh == 0) & valid
    return dm[valid], human_tie[valid], concordant[valid], per_group, valid, groups


def tie_calibrated_accuracy(
    X, Z, *, level: str = "global", epsilon: float | None = None, nan_policy: str = "raise"
) -> TieCalibrationResult:
    """Pairwise accuracy with ties, acc_eq, at the tie threshold that maximises it (Deutsch et al., 2023).

    For a threshold epsilon, a pair is correct when the humans tie it and the metric difference is at most
    epsilon, or the humans order it and the metric orders it the same way by more than epsilon:
    ``acc_eq = (concordant + tied in both) / pairs`` (mt-metrics-eval ``KendallVariants(variant="acc23")``).
    The search tries 0 and every distinct metric difference of a pair, as mt-metrics-eval's
    ``tau_optimization`` does, and returns the smallest threshold with the highest mean over groups. Counts
    are exact integers when every group has the same number of pairs.

    Parameters
    ----------
    X, Z : array_like (N, M)
    level : {"global", "system", "summary", "per-system"}
        The paper's setting is ``"global"`` at segment level (``average_by="none"``) and ``"summary"`` /
        ``"per-system"`` for the grouped variants.
    epsilon : float, optional
        Evaluate acc_eq at this threshold instead of searching it.
    nan_policy : {"raise", "omit"}

    Returns
    -------
    TieCalibrationResult

    Examples
    --------
    Humans tie systems 0 and 1; the metric separates them by 0.1 and everything else by >= 1:

    >>> res = tie_calibrated_accuracy([[0.0], [0.1], [2.0]], [[1.0], [1.0], [3.0]], level="global")
    >>> float(res.statistic), float(res.epsilon)
    (1.0, 0.1)
    """
    _check_grouping(level)
    X, Z = _matrices(X, Z, nan_policy)
    dm, human_tie, concordant, per_group, valid, groups = _pair_table(X, Z, level)
    if groups == 0:
        warn_degenerate(f"acc_eq at {level} level is NaN: no group has a pair")
        return TieCalibrationResult(np.nan, np.nan, np.empty(0), np.empty(0))
    equal = len(set(per_group[per_group > 0].tolist())) == 1
    # weight of one pair in the mean over groups: 1 / (pairs of its group * groups)
    group_of = np.broadcast_to(np.arange(valid.shape[0])[:, None], valid.shape)[valid]
    weight = 1.0 / (per_group[group_of] * groups)

    def score(correct: np.ndarray) -> float:
        if equal:
            return float(np.count_nonzero(correct)) / (per_group.max() * groups)
        return float(weight[correct].sum())

    if epsilon is not None:
        if (isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.integer, np.floating))
                or not epsilon >= 0):
            raise ValueError(f"epsilon must be a non-negative number, got {epsilon!r}")
        correct = (human_tie & (dm <= epsilon)) | (concordant & (dm > epsilon))
        return TieCalibrationResult(score(correct), float(epsilon), np.empty(0), np.empty(0))
    # At threshold 0 only exact metric ties are ties; raising it to a pair's (positive) difference turns the
    # pair into a metric tie: it gains if the humans tie it, loses if it was concordant. Pairs the metric
    # already ties do not change.
    base_correct = (human_tie & (dm == 0)) | (concordant & (dm > 0))
    order = np.argsort(dm, kind="stable")
    d = dm[order]
    if equal:
        step = np.where(d > 0, human_tie[order].astype(np.int64) - concordant[order], 0)
        curve = (np.count_nonzero(base_correct) + np.cumsum(step)) / (per_group.max() * groups)
    else:
        step = np.where(d > 0, human_tie[order].astype(float) - concordant[order], 0.0) * weight[order]
        curve = weight[base_correct].sum() + np.cumsum(step)
    last = np.r_[d[1:] != d[:-1], True]  # a threshold flips every pair with that difference
    thresholds, accuracies = d[last], curve[last]
    if thresholds.size == 0 or thresholds[0] > 0:
        thresholds = np.r_[0.0, thresholds]
        accuracies = np.r_[score(base_correct), accuracies]
    best = int(np.nanargmax(accuracies))
    return TieCalibrationResult(float(accuracies[best]), float(thresholds[best]), thresholds, accuracies)


def _matrices(X, Z, nan_policy: str):
    """:func:`check_matrices`, also for toy inputs of fewer than 3 systems or inputs (the pair statistics
    are defined on any pair)."""
    shape = np.shape(X)
    if len(shape) == 2 and min(shape) >= 3:
        return check_matrices(nan_policy, X=X, Z=Z)
    X, Z = np.asarray(X, dtype=float), np.asarray(Z, dtype=float)
    if X.ndim != 2 or X.shape != Z.shape:
        raise ValueError(f"X and Z must be N x M matrices of one shape, got {X.shape} and {Z.shape}")
    if np.isnan(X).any() or np.isnan(Z).any():
        raise ValueError("X and Z contain NaN; toy inputs (fewer than 3 systems or inputs) must be complete")
    return X, Z


# ----------------------------------------------------------------------------------------------------
# Soft pairwise accuracy (Thompson et al., 2024)


@dataclass(frozen=True)
class SoftPairwiseResult:
    """Result of :func:`soft_pairwise_accuracy`.

    ``metric_pvalues[i, j]`` / ``human_pvalues[i, j]`` (i < j; NaN elsewhere): permutation p-value of
    "system i is better than system j" from the metric's and from the humans' scores.
    """

    statistic: float
    metric_pvalues: np.ndarray
    human_pvalues: np.ndarray


def _signs(rng: np.random.Generator, n_resamples: int, n_inputs: int) -> np.ndarray:
    # Drawn as mt-metrics-eval's pce.compute_pairwise_p_values draws them (uniform float32, rounded to 0/1,
    # mapped to -1/+1), so that rng=4 reproduces its masks.
    u = rng.random(size=(n_resamples, n_inputs), dtype=np.float32)
    return np.rint(u).astype(np.float64) * 2.0 - 1.0


def pairwise_pvalues(X, signs: np.ndarray) -> np.ndarray:
    """Paired permutation p-values of "system i > system j" (i < j) over inputs, sharing the sign flips.

    ``p[i, j] = #{b : sum_m s_bm (x_im - x_jm) >= sum_m (x_im - x_jm)} / B``: the system difference of
    sums with each input's pair swapped where ``s = -1`` (Thompson's ``compute_pairwise_p_values``). Sums
    that are equal in exact arithmetic are compared with a tolerance of 1e-9 of the largest possible sum,
    so that rounding does not decide ties of discrete human scores.
    """
    X = np.asarray(X, dtype=float)
    N, M = X.shape
    totals = X.sum(axis=1)
    partial = signs @ X.T  # (B, N)
    tol = 1e-9 * max(1.0, float(np.abs(X).sum(axis=1).max()))
    p = np.full((N, N), np.nan)
    iu, ju = np.triu_indices(N, k=1)
    null = np.take(partial, iu, axis=1) - np.take(partial, ju, axis=1)
    test = totals[iu] - totals[ju]
    p[iu, ju] = np.count_nonzero(null >= test - tol, axis=0) / signs.shape[0]
    return p


def soft_pairwise_accuracy(
    X, Z, *, n_resamples: int = 1000, rng: np.random.Generator | int | None = None
) -> SoftPairwiseResult:
    """Soft pairwise accuracy, 1 - mean |p_metric - p_human| over system pairs (Thompson et al., 2024).

    For every pair of systems, a paired permutation test over inputs gives the p-value of "i is better
    than j" once from the metric's scores and once from the humans'; the statistic rewards a metric whose
    confidence in each ordering matches the humans'. Both tests use the same sign flips (as mt-metrics-eval
    does, whose default seed is 4: ``rng=4`` reproduces its draws).

    Parameters
    ----------
    X, Z : array_like (N, M)
        Metric and human scores; no missing cells.
    n_resamples : int
        Sign-flip permutations (mt-metrics-eval: 1000).
    rng : Generator, int or None

    Returns
    -------
    SoftPairwiseResult

    Examples
    --------
    A metric that is an increasing linear function of the human scores has the same p-values:

    >>> Z = np.arange(12.0).reshape(3, 4) ** 1.5
    >>> float(soft_pairwise_accuracy(2 * Z + 1, Z, n_resamples=200, rng=0).statistic)
    1.0
    """
    X, Z = check_matrices("raise", X=X, Z=Z)
    check_n_resamples(n_resamples)
    signs = _signs(np.random.default_rng(rng), n_resamples, X.shape[1])
    pm, ph = pairwise_pvalues(X, signs), pairwise_pvalues(Z, signs)
    iu = np.triu_indices(X.shape[0], k=1)
    return SoftPairwiseResult(float(1.0 - np.mean(np.abs(pm[iu] - ph[iu]))), pm, ph)


# ----------------------------------------------------------------------------------------------------
# Correlations by delta bucket (Deutsch, Dror & Roth, 2022)

DEFAULT_DELTAS: tuple[tuple[float, float], ...] = ((0.0, 0.5), (0.5, 1.0), (1.0, 2.0), (2.0, 5.0), (5.0, np.inf))
"""ROUGE points: the buckets of the paper's figure are in this spirit; pass your own in your score's units."""


@dataclass(frozen=True)
class DeltaCorrelationResult:
    """Result of :func:`delta_correlations`: one entry per bucket ``[low, high)``.

    ``n_pairs`` counts the system pairs in the bucket on the original data; ``confidence_interval`` is the
    Boot-Both percentile interval over the resamples where the bucket is not empty (``n_resamples_used``).
    """

    low: np.ndarray
    high: np.ndarray
    n_pairs: np.ndarray
    statistic: np.ndarray
    confidence_interval: ConfidenceInterval
    n_resamples_used: np.ndarray
    coefficient: str

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame({"low": self.low, "high": self.high, "n_pairs": self.n_pairs,
                             "statistic": self.statistic, "ci_low": self.confidence_interval.low,
                             "ci_high": self.confidence_interval.high, "n_resamples": self.n_resamples_used})


DELTA_COEFFICIENTS = ("kendall", "pairwise-accuracy")


def _bucket_stats(xs, zs, bs, distinct, edges, coefficient):
    """Per bucket statistic over pairs i < j of system scores ``(B, N)``; ``distinct`` (B, P) marks pairs of
    two different systems. Returns (B, K) statistics and pair counts."""
    N = xs.shape[-1]
    iu, ju = np.triu_indices(N, k=1)
    sx = np.sign(xs[:, iu] - xs[:, ju])
    sz = np.sign(zs[:, iu] - zs[:, ju])
    db = np.abs(bs[:, iu] - bs[:, ju])
    value = sx * sz if coefficient == "kendall" else (sx == sz).astype(float)
    out = np.full((xs.shape[0], len(edges)), np.nan)
    counts = np.zeros((xs.shape[0], len(edges)), dtype=np.int64)
    for k, (low, high) in enumerate(edges):
        inside = distinct & (db >= low) & (db < high)
        counts[:, k] = inside.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, k] = np.where(counts[:, k] > 0, (value * inside).sum(axis=1) / np.maximum(counts[:, k], 1), np.nan)
    return out, counts


def _check_deltas(deltas) -> list[tuple[float, float]]:
    try:
        edges = [(float(lo), float(hi)) for lo, hi in deltas]
    except (TypeError, ValueError):
        raise ValueError("deltas must be a sequence of (low, high) pairs, e.g. [(0, 0.5), (0.5, 1)]") from None
    if not edges or any(not (0 <= lo < hi) for lo, hi in edges):
        raise ValueError(f"deltas must be non-empty (low, high) pairs with 0 <= low < high, got {deltas!r}")
    return edges


def delta_correlations(
    X,
    Z,
    *,
    deltas: Sequence[tuple[float, float]] = DEFAULT_DELTAS,
    by="metric",
    coefficient: str = "kendall",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> DeltaCorrelationResult:
    """System-level agreement over the system pairs whose score difference lies in each delta bucket.

    Deutsch, Dror & Roth (2022), Section 5: the system-level Kendall tau written over pairs,
    ``tau = sum_{i<j} sign(x_i - x_j) sign(z_i - z_j) / #pairs``, restricted to the pairs with
    ``low <= |b_i - b_j| < high``, where ``b`` is the system score that defines "how far apart" two systems
    are. System scores are means over inputs.

    Parameters
    ----------
    X, Z : array_like (N, M)
        Metric and human scores.
    deltas : sequence of (low, high)
        Buckets of ``|b_i - b_j|`` in the units of ``b``.
    by : "metric", "human" or array_like (N, M)
        ``b``: the metric's scores, the humans', or another score matrix (e.g. ROUGE in points, as the paper
        buckets every metric's pairs by their ROUGE difference).
    coefficient : {"kendall", "pairwise-accuracy"}
        ``"kendall"``: the tau over pairs above; ``"pairwise-accuracy"``: the share of pairs with equal signs.
    n_resamples : int
        Boot-Both resamples (systems and inputs; 0 for no interval). A resample's pairs are the pairs of two
        different drawn systems (two copies of one system are not a pair), bucketed by their resampled
        difference.
    confidence_level : float
    rng : Generator, int or None

    Returns
    -------
    DeltaCorrelationResult

    Examples
    --------
    Four systems 1 point apart; the metric swaps the two closest:

    >>> Z = np.repeat([[0.0], [1.0], [2.0], [3.0]], 3, axis=1)
    >>> X = np.repeat([[0.0], [1.0], [3.0], [2.9]], 3, axis=1)
    >>> res = delta_correlations(X, Z, deltas=[(0, 1.5), (1.5, 4)], by="human", n_resamples=0)
    >>> res.n_pairs.tolist(), res.statistic.tolist()
    ([3, 3], [0.3333333333333333, 1.0])
    """
    X, Z = check_matrices("raise", X=X, Z=Z)
    if isinstance(by, str):
        if by not in ("metric", "human"):
            raise ValueError(f"by must be 'metric', 'human' or an N x M score matrix, got {by!r}")
        B = X if by == "metric" else Z
    else:
        (B,) = check_matrices("raise", by=by)
        if B.shape != X.shape:
            raise ValueError(f"by has shape {B.shape} but X has shape {X.shape}")
    if coefficient not in DELTA_COEFFICIENTS:
        raise ValueError(f"coefficient must be one of {DELTA_COEFFICIENTS}, got {coefficient!r}")
    edges = _check_deltas(deltas)
    if n_resamples != 0:
        check_n_resamples(n_resamples)
    check_confidence_level(confidence_level)
    N, M = X.shape
    xm, zm, bm = (snap(A.mean(axis=1))[None, :] for A in (X, Z, B))
    P = N * (N - 1) // 2
    stat, counts = _bucket_stats(xm, zm, bm, np.ones((1, P), dtype=bool), edges, coefficient)
    low = np.array([e[0] for e in edges])
    high = np.array([e[1] for e in edges])
    ci_low = np.full(len(edges), np.nan)
    ci_high = np.full(len(edges), np.nan)
    used = np.zeros(len(edges), dtype=np.int64)
    if n_resamples:
        rows, cols = draw_indices(N, M, n_resamples, "both", np.random.default_rng(rng))
        col_counts = np.zeros((n_resamples, M))
        np.add.at(col_counts, (np.arange(n_resamples)[:, None], cols), 1.0)
        res = []
        for A in (X, Z, B):
            full = col_counts @ A.T / M  # (B, N): every system's mean over the drawn inputs
            res.append(snap(np.take_along_axis(full, rows, axis=1)))
        iu, ju = np.triu_indices(N, k=1)
        distinct = rows[:, iu] != rows[:, ju]
        boot, _ = _bucket_stats(res[0], res[1], res[2], distinct, edges, coefficient)
        for k in range(len(edges)):
            ok = boot[:, k][~np.isnan(boot[:, k])]
            used[k] = ok.size
            ci_low[k], ci_high[k] = percentile_interval(ok, confidence_level)
    # one interval per bucket: ConfidenceInterval holds arrays here (its fields are annotated as scalars)
    interval = ConfidenceInterval(ci_low, ci_high)  # type: ignore[arg-type]
    return DeltaCorrelationResult(low, high, counts[0], stat[0], interval, used, coefficient)
