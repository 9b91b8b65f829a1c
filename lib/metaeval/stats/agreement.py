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
"""Fixed bands ``[low, high)`` in ROUGE points: the labelled alternative to the paper's percentile buckets
(``deltas="percentiles"``, the default of :func:`delta_correlations`); pass your own in your score's units."""

PERCENTILES = "percentiles"
"""``deltas`` value of the paper's buckets: cumulative deciles of each metric's own |difference|."""


@dataclass(frozen=True)
class DeltaCorrelationResult:
    """Result of :func:`delta_correlations`: one entry per bucket.

    Percentile buckets (``percent`` is an array): bucket k holds the pairs with ``|difference| <= high[k]``
    (``low`` is 0), ``high[k]`` the |difference| of the pair at ``percent[k]`` % of the pairs sorted by it (the
    paper's ``u``). Fixed bands (``percent`` is None): ``low <= |difference| < high``. ``n_pairs`` counts the
    system pairs in the bucket on the original data; ``confidence_interval`` is the Boot-Both percentile
    interval over the resamples where the bucket's statistic is defined (``n_resamples_used``); NaN where the
    statistic is.
    """

    low: np.ndarray
    high: np.ndarray
    n_pairs: np.ndarray
    statistic: np.ndarray
    confidence_interval: ConfidenceInterval
    n_resamples_used: np.ndarray
    coefficient: str
    percent: np.ndarray | None = None

    def to_frame(self):
        import pandas as pd

        frame = pd.DataFrame({"low": self.low, "high": self.high, "n_pairs": self.n_pairs,
                              "statistic": self.statistic, "ci_low": self.confidence_interval.low,
                              "ci_high": self.confidence_interval.high, "n_resamples": self.n_resamples_used})
        if self.percent is not None:
            frame.insert(0, "percent", self.percent)
        return frame


DELTA_COEFFICIENTS = ("kendall", "pairwise-accuracy")


def _pair_tau(sx, sz, inside):
    """The authors' ``calculate_tau`` over the pairs ``inside`` (B, P): ``(P - Q) / sqrt((P + Q + T) * (P + Q +
    U))``, T the pairs tied by the metric only, U those tied by the humans only (a pair tied by both counts in
    neither). NaN where the denominator is 0 (the authors return 0 when P + Q + T is 0)."""
    prod = sx * sz
    conc = (inside & (prod > 0)).sum(axis=-1)
    disc = (inside & (prod < 0)).sum(axis=-1)
    tx = (inside & (sx == 0) & (sz != 0)).sum(axis=-1)
    tz = (inside & (sx != 0) & (sz == 0)).sum(axis=-1)
    denom = np.sqrt(((conc + disc + tx) * (conc + disc + tz)).astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (conc - disc) / np.where(denom > 0, denom, 1.0), np.nan)


def _percentile_thresholds(db, distinct):
    """The authors' ``get_percentile_deltas`` per row of ``db`` (B, P) over its ``distinct`` pairs: with
    ``step = ceil(P' / 10)`` for the P' pairs, threshold k (k = 1, ..., 10) is the |difference| of the pair at
    position ``min(k * step, P') - 1`` in increasing order. Returns (B, 10) thresholds (NaN without pairs) and
    the number of buckets the authors' loop makes for each row, ``ceil(P' / step)``."""
    n = distinct.sum(axis=1)
    ordered = np.sort(np.where(distinct, db, np.inf), axis=1)
    step = np.maximum(-(-n // 10), 1)
    k = np.arange(1, 11)
    idx = np.minimum(k[None, :] * step[:, None], np.maximum(n, 1)[:, None]) - 1
    thr = np.take_along_axis(ordered, idx, axis=1)
    thr[n == 0] = np.nan
    return thr, np.where(n > 0, -(-n // step), 0)


def _bucket_stats(xs, zs, bs, distinct, edges, coefficient):
    """Per bucket statistic over pairs i < j of system scores ``(B, N)``; ``distinct`` (B, P) marks pairs of
    two different systems. ``edges`` is a list of [low, high) bands, or None for the percentile buckets.
    Returns (B, K) statistics, pair counts and (percentile buckets) thresholds."""
    N = xs.shape[-1]
    iu, ju = np.triu_indices(N, k=1)
    sx = np.sign(xs[:, iu] - xs[:, ju])
    sz = np.sign(zs[:, iu] - zs[:, ju])
    db = np.abs(bs[:, iu] - bs[:, ju])
    if edges is None:
        thr, _ = _percentile_thresholds(db, distinct)
        masks = [distinct & (db <= thr[:, [k]]) for k in range(thr.shape[1])]
    else:
        thr = None
        masks = [distinct & (db >= low) & (db < high) for low, high in edges]
    out = np.full((xs.shape[0], len(masks)), np.nan)
    counts = np.zeros((xs.shape[0], len(masks)), dtype=np.int64)
    for k, inside in enumerate(masks):
        counts[:, k] = inside.sum(axis=1)
        if coefficient == "kendall":
            out[:, k] = _pair_tau(sx, sz, inside)
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                out[:, k] = np.where(counts[:, k] > 0, ((sx == sz) & inside).sum(axis=1)
                                     / np.maximum(counts[:, k], 1), np.nan)
    return out, counts, thr


def validate_deltas(deltas) -> list[tuple[float, float]] | None:
    """``deltas`` of :func:`delta_correlations` checked: None for ``"percentiles"``, else the bands as floats."""
    if isinstance(deltas, str):
        if deltas != PERCENTILES:
            raise ValueError(f"deltas must be 'percentiles' (the paper's buckets) or a sequence of (low, high) "
                             f"bands, e.g. [(0, 0.5), (0.5, 1)], got {deltas!r}")
        return None
    try:
        edges = [(float(lo), float(hi)) for lo, hi in deltas]
    except (TypeError, ValueError):
        raise ValueError("deltas must be 'percentiles' or a sequence of (low, high) pairs, e.g. "
                         "[(0, 0.5), (0.5, 1)]") from None
    if not edges or any(not (0 <= lo < hi) for lo, hi in edges):
        raise ValueError(f"deltas must be non-empty (low, high) pairs with 0 <= low < high, got {deltas!r}")
    return edges


def delta_correlations(
    X,
    Z,
    *,
    deltas: str | Sequence[tuple[float, float]] = PERCENTILES,
    by="metric",
    coefficient: str = "kendall",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> DeltaCorrelationResult:
    """System-level agreement over the system pairs whose score difference is small: Deutsch, Dror & Roth
    (2022), Section 5 and Figure 6, as the authors' code computes it.

    Default (``deltas="percentiles"``, ``by="metric"``), as ``syslevel/delta_correlations/plot_combined.py``
    of CogComp/re-examining-correlations: the system pairs sorted by the *metric's own* |difference of system
    scores| ``|b_i - b_j|``; with ``step = ceil(#pairs / 10)``, bucket k (10 %, 20 %, ..., 100 % of the pairs)
    holds every pair whose |difference| is at most that of the pair at position ``k * step`` (cumulative, ties
    included, so a bucket can hold more pairs than its share; fewer than 10 buckets when #pairs is small, as
    the authors' loop). Kendall's tau over the bucket's pairs is the authors' ``calculate_tau``,
    ``(P - Q) / sqrt((P + Q + T) * (P + Q + U))`` (P concordant, Q discordant, T tied by the metric only, U
    tied by the humans only). System scores are means over inputs.

    Parameters
    ----------
    X, Z : array_like (N, M)
        Metric and human scores.
    deltas : "percentiles" or sequence of (low, high)
        ``"percentiles"``: the paper's cumulative buckets above. A sequence: fixed bands
        ``low <= |b_i - b_j| < high`` in the units of ``b`` (e.g. :data:`DEFAULT_DELTAS`, ROUGE points with
        ``by`` the ROUGE-1 matrix: one ROUGE band for every metric, *not* the paper's Figure 6).
    by : "metric", "human" or array_like (N, M)
        ``b``: the metric's own scores (the paper), the humans', or another score matrix.
    coefficient : {"kendall", "pairwise-accuracy"}
        ``"kendall"``: the authors' tau above; ``"pairwise-accuracy"``: the share of pairs with equal signs.
    n_resamples : int
        Boot-Both resamples (systems and inputs; 0 for no interval). A resample's pairs are the pairs of two
        different drawn systems (two copies of one system are not a pair), bucketed by their resampled
        difference (percentile buckets: the resample's own percentiles).
    confidence_level : float
    rng : Generator, int or None

    Returns
    -------
    DeltaCorrelationResult
        NaN, with a :class:`~metaeval.DegenerateResultWarning` saying why, for a bucket without pairs or whose
        pairs are all tied by the humans or all by the metric (constant human scores: tau is undefined, and
        so is its interval).

    Examples
    --------
    Four systems 1 point apart; the metric swaps the two closest (by the metric, 0.1 apart):

    >>> Z = np.repeat([[0.0], [1.0], [2.0], [3.0]], 3, axis=1)
    >>> X = np.repeat([[0.0], [1.0], [3.0], [2.9]], 3, axis=1)
    >>> res = delta_correlations(X, Z, n_resamples=0)
    >>> res.percent.tolist(), res.n_pairs.tolist()
    ([10, 20, 30, 40, 50, 60], [1, 2, 3, 4, 5, 6])
    >>> [round(t, 3) for t in res.statistic.tolist()]
    [-1.0, 0.0, 0.333, 0.5, 0.6, 0.667]

    The fixed-band view, every metric's pairs bucketed by the humans' difference:

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
    edges = validate_deltas(deltas)
    if n_resamples != 0:
        check_n_resamples(n_resamples)
    check_confidence_level(confidence_level)
    N, M = X.shape
    xm, zm, bm = (snap(A.mean(axis=1))[None, :] for A in (X, Z, B))
    P = N * (N - 1) // 2
    stat, counts, thr = _bucket_stats(xm, zm, bm, np.ones((1, P), dtype=bool), edges, coefficient)
    percent = None
    if edges is None:
        _, n_buckets = _percentile_thresholds(np.zeros((1, P)), np.ones((1, P), dtype=bool))
        K = int(n_buckets[0])
        stat, counts = stat[:, :K], counts[:, :K]
        percent = 10 * np.arange(1, K + 1)
        low, high = np.zeros(K), thr[0, :K]
    else:
        K = len(edges)
        low = np.array([e[0] for e in edges])
        high = np.array([e[1] for e in edges])
    ci_low = np.full(K, np.nan)
    ci_high = np.full(K, np.nan)
    used = np.zeros(K, dtype=np.int64)
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
        boot, _, _ = _bucket_stats(res[0], res[1], res[2], distinct, edges, coefficient)
        for k in range(K):
            if np.isnan(stat[0, k]):
                continue  # no interval around an undefined statistic
            ok = boot[:, k][~np.isnan(boot[:, k])]
            used[k] = ok.size
            ci_low[k], ci_high[k] = percentile_interval(ok, confidence_level)
    undefined = [k for k in range(K) if np.isnan(stat[0, k])]
    if undefined:
        names = [f"{percent[k]} %" if percent is not None else f"[{low[k]:g}, {high[k]:g})" for k in undefined]
        empty = [n for k, n in zip(undefined, names) if counts[0, k] == 0]
        tied = [n for k, n in zip(undefined, names) if counts[0, k] > 0]
        why = []
        if empty:
            why.append(f"bucket(s) {', '.join(empty)} hold no system pair")
        if tied:
            why.append(f"in bucket(s) {', '.join(tied)} every pair is tied by the human scores or every pair by the "
                       "metric (e.g. constant scores), so Kendall's tau is undefined")
        warn_degenerate(f"delta_correlations: {'; '.join(why)}; their statistic and interval are NaN")
    # one interval per bucket: ConfidenceInterval holds arrays here (its fields are annotated as scalars)
    interval = ConfidenceInterval(ci_low, ci_high)  # type: ignore[arg-type]
    return DeltaCorrelationResult(low, high, counts[0], stat[0], interval, used, coefficient, percent)
