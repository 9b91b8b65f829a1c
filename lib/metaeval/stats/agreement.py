"""Agreement of metric and human scores over pairs: the statistics WMT and summarization use since 2021.

X (metric) and Z (human) are N systems x M inputs, as everywhere in :mod:`metaeval.stats`. Levels say which
vectors are compared (see :func:`metaeval.stats._pairs.level_groups`): ``"system"`` (per-system means),
``"summary"`` (per input, over systems; mt-metrics-eval ``average_by="item"``), ``"per-system"`` (per system,
over inputs; ``average_by="sys"``) and ``"global"`` (all cells; ``average_by="none"``). A statistic computed
on several groups is the mean over the groups where it is defined.

* :func:`pairwise_accuracy`: Kocmi et al. (2021), as mt-metrics-eval's ``stats.Agreement`` computes it;
* :func:`tie_calibrated_accuracy`: acc_eq with its optimal tie threshold epsilon, Deutsch, Foster & Freitag
  (2023), as mt-metrics-eval's ``tau_optimization`` searches it;
* :func:`tau_23`: its tau version at a fixed threshold; :func:`kendall_like`: WMT20's Kendall-like tau
  (Mathur et al., 2020), as mt-metrics-eval's ``stats.KendallLike``;
* :func:`grouped_correlation` (micro averaging, undefined groups as zeros) and
  :func:`pairwise_difference_pearson`: mt-metrics-eval's ``AverageCorrelation`` options;
* :func:`soft_pairwise_accuracy`: Thompson et al. (2024), as mt-metrics-eval's ``pce`` module computes it;
* :func:`delta_correlations`: Deutsch, Dror & Roth (2022), system pairs by the size of their score difference,
  with Boot-Both intervals.

References: Kocmi et al. (2021), "To Ship or Not to Ship", WMT, https://aclanthology.org/2021.wmt-1.57;
Deutsch, Foster & Freitag (2023), "Ties Matter", EMNLP, https://aclanthology.org/2023.emnlp-main.798;
Thompson et al. (2024) in Freitag et al., "Are LLMs Breaking MT Metrics?", WMT24,
https://aclanthology.org/2024.wmt-1.2; Mathur et al. (2020), "Results of the WMT20 Metrics Shared Task",
https://aclanthology.org/2020.wmt-1.77; Deutsch, Dror & Roth (2022), "Re-Examining System-Level Correlations
of Automatic Summarization Evaluation Metrics", NAACL, https://aclanthology.org/2022.naacl-main.442.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from metaeval._warnings import warn_degenerate
from metaeval.stats._kernels import draw_counts, snap
from metaeval.stats._pairs import beyond_counts_rows, level_groups, pairwise_agreement
from metaeval.stats.correlation import (
    ConfidenceInterval,
    batch_corr,
    check_coefficient,
    check_confidence_level,
    check_bool,
    check_level,
    check_matrices,
    check_rng,
)
from metaeval.stats.resampling import check_n_resamples, draw_indices, percentile_interval

__all__ = [
    "TieCalibrationResult",
    "SoftPairwiseResult",
    "DeltaCorrelationResult",
    "KendallLikeResult",
    "pairwise_accuracy",
    "kendall_like",
    "grouped_correlation",
    "pairwise_difference_pearson",
    "tau_23",
    "tie_calibrated_accuracy",
    "soft_pairwise_accuracy",
    "delta_correlations",
    "pairwise_pvalues",
    "DEFAULT_DELTAS",
]


def _check_number(name: str, value: float, *, rate: bool = False) -> None:
    """Refuse anything but a real number >= 0 (with ``rate``: in (0, 1])."""
    real = not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))
    if not (real and (0 < value <= 1 if rate else value >= 0)):
        raise ValueError(f"{name} must be {'in (0, 1]' if rate else 'a non-negative number'}, got {value!r}")


def _mean_defined(values: np.ndarray) -> float:
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else np.nan


# ----------------------------------------------------------------------------------------------------
# Pairwise accuracy


def pairwise_accuracy(
    X, Z, *, level: str = "system", human_ties: str = "agree", nan_policy: str = "raise"
) -> float:
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
    human_ties : {"agree", "skip"}
        ``"agree"`` (default): every pair counts, a pair tied by both sides agrees (mt-metrics-eval's
        ``Agreement``). ``"skip"``: pairs the humans tie are left out of numerator and denominator (the WMT
        convention of Kocmi et al., 2021, whose human scores decide every pair they count).
    nan_policy : {"raise", "omit"}
        ``"omit"`` leaves out every cell missing (NaN or None) in X or in Z, from both.

    Returns
    -------
    float
        NaN if no group has a pair left (two scored entries; with ``"skip"``, two the humans do not tie).

    Examples
    --------
    Three systems, pairs (0,1), (0,2), (1,2): the metric orders (0,1) and (1,2) as the humans do, and ties
    (0,2), which the humans order:

    >>> pairwise_accuracy([[3.0] * 3, [1.0] * 3, [3.0] * 3], [[3.0] * 3, [1.0] * 3, [2.0] * 3])
    0.6666666666666666

    Two systems the humans tie and the metric ties too: mt-metrics-eval counts the pair as agreeing, the
    WMT convention leaves it out (and nothing is left):

    >>> pairwise_accuracy([[1.0], [1.0]], [[2.0], [2.0]])
    1.0
    """
    check_level(level)
    if human_ties not in ("agree", "skip"):
        raise ValueError(f"human_ties must be 'agree' or 'skip', got {human_ties!r}")
    X, Z = check_matrices(nan_policy, min_size=1, X=X, Z=Z)
    x, z, w = level_groups(X, Z, level)
    acc = _mean_defined(pairwise_agreement(x, z, w, human_ties == "skip"))
    if np.isnan(acc):
        warn_degenerate(f"the {level}-level pairwise accuracy is NaN: no group has a pair "
                        + ("the humans do not tie" if human_ties == "skip" else "(two scored entries)"))
    return acc


# ----------------------------------------------------------------------------------------------------
# WMT20's Kendall-like tau


@dataclass(frozen=True)
class KendallLikeResult:
    """Result of :func:`kendall_like`: the mean over groups of ``(C - D) / (C + D)``, and the counts summed
    over groups."""

    statistic: float
    concordant: int
    discordant: int
    n_pairs: int


def kendall_like(
    X, Z, *, level: str = "summary", threshold: float = 25.0, nan_policy: str = "raise"
) -> KendallLikeResult:
    """WMT20's "Kendall-like" tau (Mathur et al., 2020), as mt-metrics-eval's ``stats.KendallLike``.

    Only pairs whose human scores differ by at least ``threshold`` count (WMT DA: 25 points). Such a pair
    is concordant if the metric orders it as the humans do, and discordant otherwise, *including a metric
    tie*; ``tau = (C - D) / (C + D)``. As in the reference code, the human difference is compared with
    ``>= threshold``, so with ``threshold=0`` a pair the humans tie counts (as discordant).

    Parameters
    ----------
    X, Z : array_like (N, M)
        Metric and human scores, systems x inputs.
    level : {"summary", "per-system", "global", "system"}
        ``"summary"`` (mt-metrics-eval ``average_by="item"``, its default for this statistic) averages over
        inputs the tau of each input's systems.
    threshold : float
        Smallest human difference of a counted pair (in the human scores' units).
    nan_policy : {"raise", "omit"}
        ``"omit"`` leaves out every cell missing in X or in Z.

    Returns
    -------
    KendallLikeResult
        ``statistic`` is NaN (with a warning) where no group has a counted pair; a group without one is
        left out of the mean (mt-metrics-eval averages a 0 for a group of two or more entries with no
        counted pair).

    Examples
    --------
    The reference's own case: one pair below the threshold, four concordant, one discordant:

    >>> res = kendall_like([[2.0], [1.0], [4.0], [3.0]], [[10.0], [11.0], [100.0], [150.0]], level="global")
    >>> float(res.statistic), res.concordant, res.discordant
    (0.6, 4, 1)
    """
    check_level(level)
    _check_number("threshold", threshold)
    X, Z = check_matrices(nan_policy, min_size=1, X=X, Z=Z)
    x, z, w = level_groups(X, Z, level)
    # counts by sorting (O(n log n) per group): the pairs with |z_i - z_j| >= threshold that x orders alike;
    # at threshold 0 every pair counts, a human tie too
    if threshold > 0:
        c = beyond_counts_rows(z, x, w, threshold, inclusive=True)[0]
        counted = beyond_counts_rows(z, z, w, threshold, inclusive=True)[0]
    else:
        c, _, _, counted = beyond_counts_rows(z, x, w)
    d = counted - c
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where(c + d > 0, (c - d) / np.maximum(c + d, 1), np.nan)
    stat = _mean_defined(tau)
    if np.isnan(stat):
        warn_degenerate(f"the {level}-level Kendall-like tau is NaN: no pair has a human difference of at "
                        f"least {threshold}")
    return KendallLikeResult(stat, int(c.sum()), int(d.sum()), int((c + d).sum()))


# ----------------------------------------------------------------------------------------------------
# Grouped correlations: micro averaging, NaN groups as zeros, Pearson of pairwise differences


def grouped_correlation(
    X,
    Z,
    *,
    level: str = "per-system",
    coefficient="pearson",
    average: str = "macro",
    replace_nans_with_zeros: bool = False,
    nan_policy: str = "raise",
) -> float:
    """A correlation averaged over groups, with mt-metrics-eval's ``AverageCorrelation`` options.

    :func:`metaeval.correlate` is the macro average over the groups where the coefficient is defined. Here
    ``average="micro"`` weights each group by its number of scored entries (mt-metrics-eval
    ``macro=False``), and ``replace_nans_with_zeros=True`` counts a group of two or more scored entries
    whose coefficient is undefined (constant scores) as 0 instead of leaving it out. Groups with fewer than
    two scored entries are left out either way, as in the reference.

    Parameters
    ----------
    X, Z : array_like (N, M)
        Metric and human scores, systems x inputs.
    level : {"per-system", "summary", "global", "system"}
        The groups: each system (``average_by="sys"``), each input (``"item"``), all cells (``"none"``).
    coefficient : {"pearson", "spearman", "kendall", "kendall-c", "pairwise-accuracy"} or callable
    average : {"macro", "micro"}
    replace_nans_with_zeros : bool
    nan_policy : {"raise", "omit"}
        ``"omit"`` leaves out every cell missing in X or in Z.

    Returns
    -------
    float
        NaN with a warning if no group counts.

    Examples
    --------
    The first system's metric scores are constant, so its Pearson is undefined:

    >>> X, Z = [[2.0, 2, 2], [4, 5, 6]], [[1.0, 2, 3], [4, 5, 6]]
    >>> grouped_correlation(X, Z), grouped_correlation(X, Z, replace_nans_with_zeros=True)
    (1.0, 0.5)
    """
    check_level(level)
    check_coefficient(coefficient)
    if average not in ("macro", "micro"):
        raise ValueError(f"average must be 'macro' or 'micro', got {average!r}")
    replace_nans_with_zeros = check_bool(replace_nans_with_zeros, "replace_nans_with_zeros")
    # each group's coefficient is scale-free: each input (system) on its own scale, as correlate() does, so
    # that one cell of 1e200 does not push the other groups' values into float64's subnormal range
    X, Z = check_matrices(nan_policy, level=level, min_size=1, X=X, Z=Z)
    x, z, w = level_groups(X, Z, level)
    size = np.full(x.shape[0], x.shape[1]) if w is None else np.count_nonzero(w > 0, axis=1)
    r = np.asarray(batch_corr(x, z, coefficient, w), dtype=float)
    counts = size >= 2
    if replace_nans_with_zeros:
        r = np.where(counts & np.isnan(r), 0.0, r)
    keep = counts & ~np.isnan(r)
    weight = (size if average == "micro" else np.ones_like(size))[keep].astype(float)
    if not keep.any():
        warn_degenerate(f"the {level}-level {average} mean correlation is NaN: the coefficient is undefined "
                        "in every group")
        return np.nan
    return float(np.sum(weight * r[keep]) / np.sum(weight))


def pairwise_difference_pearson(X, Z, *, level: str = "summary", nan_policy: str = "raise") -> float:
    """Pearson correlation of the pairwise differences (mt-metrics-eval ``Pearson(pdp=True)``).

    Within each group, every pair of scored entries gives a metric difference ``x_i - x_j`` and a human
    difference ``z_i - z_j``; the differences of all groups are pooled into one Pearson correlation. Both
    orders of a pair (and the zero self-differences) enter the reference's vectors, so their mean is 0 and
    the statistic is ``sum dx dz / sqrt(sum dx^2 sum dz^2)`` over the pairs i < j. It compares the systems
    within an input (``level="summary"``, the reference's use) without rewarding a metric for the inputs'
    different difficulty. At ``level="global"`` it equals Pearson's r of the cells.

    Parameters
    ----------
    X, Z : array_like (N, M)
    level : {"summary", "per-system", "global", "system"}
    nan_policy : {"raise", "omit"}
        ``"omit"`` leaves out every cell missing in X or in Z.

    Returns
    -------
    float
        NaN with a warning where undefined: no pair (one system per input, which the reference refuses
        with an error), or all differences zero.

    Examples
    --------
    >>> X, Z = [[2.0, 1, 4], [3, 3, 7]], [[1.0, 2, 3], [4, 5, 6]]
    >>> round(pairwise_difference_pearson(X, Z, level="summary"), 3)
    0.926
    """
    check_level(level)
    X, Z = check_matrices(nan_policy, min_size=1, X=X, Z=Z)
    x, z, w = level_groups(X, Z, level)
    # sum_{i<j} (x_i - x_j)(z_i - z_j) = n sum_i (x_i - mean x)(z_i - mean z) within a group of n entries: the
    # sums over the n (n - 1) / 2 pairs from the entries (O(n) memory; 10^5 cells asked for 9.3 GiB of pairs)
    valid = np.ones(x.shape, bool) if w is None else w > 0
    n = valid.sum(axis=1)
    xc, zc = _centred(x, valid, n), _centred(z, valid, n)
    sxx, szz = float(np.sum(n * np.sum(xc * xc, axis=1))), float(np.sum(n * np.sum(zc * zc, axis=1)))
    if sxx == 0 or szz == 0:
        warn_degenerate(f"the {level}-level Pearson of pairwise differences is NaN: "
                        + ("no group has two scored entries" if not (n >= 2).any() else
                           "every pairwise difference of " + ("X" if sxx == 0 else "Z") + " is zero"))
        return np.nan
    sxz = float(np.sum(n * np.sum(xc * zc, axis=1)))
    return float(np.clip(sxz / np.sqrt(sxx) / np.sqrt(szz), -1.0, 1.0))


def _centred(v: np.ndarray, valid: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Each group's valid entries minus their mean, 0 elsewhere and in a constant group (exactly: a mean of
    equal values such as 0.1 need not equal them, and a difference of 1e-17 is not a difference)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(valid, v, 0.0).sum(axis=1, keepdims=True) / n[:, None]
    low = np.where(valid, v, np.inf).min(axis=1, keepdims=True)
    high = np.where(valid, v, -np.inf).max(axis=1, keepdims=True)
    return np.where(valid & (high > low), v - mean, 0.0)


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


#: the most pairs the threshold search of :func:`tie_calibrated_accuracy` tables (about 70 bytes each, 0.3 GB);
#: beyond it the search is refused with the sample rate that fits (a fixed epsilon needs no table)
PAIR_LIMIT = 4_000_000
#: pairs built at once while the table is filled (or sampled)
_PAIR_BLOCK = 1 << 21


def _group_pairs(x: np.ndarray, z: np.ndarray, block: int = _PAIR_BLOCK):
    """(the metric's absolute difference, human tie, concordance) of the pairs i < j of one group's entries, in
    ``np.triu_indices`` order, a block of rows i at a time (each block about ``block`` pairs)."""
    k = x.size
    i0 = 0
    while i0 < k - 1:
        i1 = i0 + 1
        count = k - 1 - i0
        while i1 < k - 1 and count + (k - 1 - i1) <= block:
            count += k - 1 - i1
            i1 += 1
        ii = np.repeat(np.arange(i0, i1), k - 1 - np.arange(i0, i1))
        starts = np.cumsum(np.r_[0, k - 1 - np.arange(i0, i1)])[:-1]
        jj = np.arange(ii.size) - np.repeat(starts, k - 1 - np.arange(i0, i1)) + ii + 1
        dx, dz = x[ii] - x[jj], z[ii] - z[jj]
        yield np.abs(dx), dz == 0, ((dx > 0) & (dz > 0)) | ((dx < 0) & (dz < 0))
        i0 = i1


def _pair_table(X: np.ndarray, Z: np.ndarray, level: str, sample_rate: float, rng: np.random.Generator):
    """Per (sampled) pair: the metric's absolute difference, human tie, concordance (metric and human order
    agree), group; and the pairs per group. Built a block at a time, each pair kept with probability
    ``sample_rate`` (the draws in the order of the pairs, as one draw over all of them), so that the memory is
    that of the kept pairs; refused when they would exceed :data:`PAIR_LIMIT`."""
    x, z, w = level_groups(X, Z, level)
    valid = np.ones(x.shape, bool) if w is None else w > 0
    n = valid.sum(axis=1).astype(np.int64)
    total = int(np.sum(n * (n - 1) // 2))
    if total * sample_rate > PAIR_LIMIT:
        fits = PAIR_LIMIT / total
        raise ValueError(
            f"tie_calibrated_accuracy: searching epsilon at level {level!r} tables {total:,} pairs"
            + (f" x sample_rate {sample_rate:g}" if sample_rate < 1 else "")
            + f" (about {total * sample_rate * 70 / 2**30:.1f} GiB), more than the limit of {PAIR_LIMIT:,}: pass "
            f"sample_rate={10 ** np.floor(np.log10(fits)) * np.floor(fits / 10 ** np.floor(np.log10(fits))):.2g} "
            "or less (mt-metrics-eval samples 0.1 of the pairs) or a fixed epsilon (counted by sorting)")
    parts: list[tuple[np.ndarray, ...]] = []
    for g in range(x.shape[0]):
        for dm, tie, conc in _group_pairs(x[g, valid[g]], z[g, valid[g]]):
            if sample_rate < 1:
                keep = rng.random(dm.size) < sample_rate
                dm, tie, conc = dm[keep], tie[keep], conc[keep]
            parts.append((dm, tie, conc, np.full(dm.size, g)))
    if not parts:
        return np.empty(0), np.empty(0, bool), np.empty(0, bool), np.empty(0, np.int64), np.zeros(x.shape[0], int)
    dm, tie, conc, group_of = (np.concatenate(c) for c in zip(*parts))
    return dm, tie, conc, group_of, np.bincount(group_of, minlength=x.shape[0])


def tie_calibrated_accuracy(
    X,
    Z,
    *,
    level: str = "global",
    epsilon: float | None = None,
    variant: str = "acc23",
    sample_rate: float = 1.0,
    rng: np.random.Generator | int | None = None,
    nan_policy: str = "raise",
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
    variant : {"acc23", "23"}
        ``"acc23"``: acc_eq; ``"23"``: tau_eq = ``(C + T_both - D - T_human - T_metric) / pairs``
        = 2 acc_eq - 1 (mt-metrics-eval ``variant="23"``), maximised by the same threshold.
    sample_rate : float in (0, 1]
        Share of the pairs used, each kept independently with this probability (mt-metrics-eval's
        ``sample_rate``, whose ``KendallWithTiesOpt`` default is 0.1 for speed): the search and the statistic
        are then over the sampled pairs, an approximation. 1 (default) uses every pair, no randomness.
    rng : Generator, int or None
        Randomness of the pair sampling (``numpy.random.default_rng``); ignored when ``sample_rate=1``.
    nan_policy : {"raise", "omit"}
        ``"omit"`` leaves out every cell missing in X or in Z (as the reference filters such pairs).

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
    check_level(level)
    if variant not in ("acc23", "23"):
        raise ValueError(f"variant must be 'acc23' or '23', got {variant!r}")
    _check_number("sample_rate", sample_rate, rate=True)
    rng = check_rng(rng)  # checked even when sample_rate=1 leaves it unused: a bad seed is a bad argument
    X, Z = check_matrices(nan_policy, min_size=1, X=X, Z=Z)
    return _tie_calibrated(X, Z, level, epsilon, sample_rate, rng, variant == "23")


def _at_epsilon(X, Z, level: str, epsilon: float, tau: bool) -> TieCalibrationResult:
    """acc_eq (tau_eq) at a fixed threshold from counts by sorting (O(n log n) per group, no pair table): a pair
    is correct when the metric orders it as the humans do by more than epsilon, or the humans tie it and the
    metric difference is at most epsilon (pairs the humans tie minus those the metric separates by more)."""
    x, z, w = level_groups(X, Z, level)
    beyond, human_tie_beyond, human_ties, pairs = beyond_counts_rows(x, z, w, epsilon)
    correct = beyond + human_ties - human_tie_beyond
    scored = pairs > 0
    groups = int(np.count_nonzero(scored))
    if groups == 0:
        warn_degenerate(f"acc_eq at {level} level is NaN: no group has a pair")
        return TieCalibrationResult(np.nan, np.nan, np.empty(0), np.empty(0))
    if len(set(pairs[scored].tolist())) == 1:  # exact counts, as the reference's exact values
        total = int(pairs.max()) * groups
        n_correct = int(correct.sum())
        value = (2 * n_correct - total) / total if tau else n_correct / total
    else:
        acc = float(np.sum(correct[scored] / (pairs[scored] * groups)))
        value = 2 * acc - 1 if tau else acc
    return TieCalibrationResult(float(value), epsilon, np.empty(0), np.empty(0))


def _tie_calibrated(X, Z, level, epsilon, sample_rate, rng, tau: bool) -> TieCalibrationResult:
    """acc_eq, or with ``tau`` tau_eq = (correct - wrong) / pairs, from exact counts where the groups have
    equal numbers of pairs (so that the reference's exact values come out exactly)."""
    if epsilon is not None:
        _check_number("epsilon", epsilon)
    if epsilon is not None and sample_rate == 1:
        return _at_epsilon(X, Z, level, float(epsilon), tau)
    dm, human_tie, concordant, group_of, per_group = _pair_table(X, Z, level, sample_rate, rng)
    groups = np.count_nonzero(per_group)
    if groups == 0:
        warn_degenerate(f"acc_eq at {level} level is NaN: no group has a pair")
        return TieCalibrationResult(np.nan, np.nan, np.empty(0), np.empty(0))
    equal = len(set(per_group[per_group > 0].tolist())) == 1
    # weight of one pair in the mean over groups: 1 / (pairs of its group * groups)
    weight = 1.0 / (per_group[group_of] * groups)

    total = int(per_group.max()) * groups

    def from_count(n_correct):
        return (2 * n_correct - total) / total if tau else n_correct / total

    def score(correct: np.ndarray) -> float:
        if equal:
            return float(from_count(np.count_nonzero(correct)))
        acc = float(weight[correct].sum())
        return 2 * acc - 1 if tau else acc

    if epsilon is not None:
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
        curve = from_count(np.count_nonzero(base_correct) + np.cumsum(step))
    else:
        step = np.where(d > 0, human_tie[order].astype(float) - concordant[order], 0.0) * weight[order]
        curve = weight[base_correct].sum() + np.cumsum(step)
        curve = 2 * curve - 1 if tau else curve
    last = np.r_[d[1:] != d[:-1], True]  # a threshold flips every pair with that difference
    thresholds, accuracies = d[last], curve[last]
    if thresholds.size == 0 or thresholds[0] > 0:
        thresholds = np.r_[0.0, thresholds]
        accuracies = np.r_[score(base_correct), accuracies]
    best = int(np.nanargmax(accuracies))
    return TieCalibrationResult(float(accuracies[best]), float(thresholds[best]), thresholds, accuracies)


def tau_23(X, Z, *, level: str = "global", epsilon: float = 0.0, nan_policy: str = "raise") -> float:
    """Kendall's tau_23 of Deutsch, Foster & Freitag (2023) at a fixed tie threshold (no calibration).

    ``(C + T_both - D - T_human - T_metric) / pairs``, where a metric difference ``<= epsilon`` is a tie:
    the tau version of acc_eq (``2 acc_eq - 1``), mt-metrics-eval ``KendallVariants(variant="23")``.
    Unlike tau-b it rewards a metric for tying what the humans tie. The mean over groups, as
    :func:`tie_calibrated_accuracy`; use that function with ``variant="23"`` to search ``epsilon``.

    Examples
    --------
    >>> tau_23([[1.0, 1, 2, 2, 4, 3, 3]], [[1.0, 1, 1, 2, 2, 3, 4]])  # mt-metrics-eval's test: (14 - 7) / 21
    0.3333333333333333
    """
    return tie_calibrated_accuracy(X, Z, level=level, epsilon=epsilon, variant="23", nan_policy=nan_policy).statistic


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
    """Soft pairwise accuracy, 1 - mean ``|p_metric - p_human|`` over system pairs (Thompson et al., 2024).

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
    X, Z = check_matrices("raise", min_size=1, X=X, Z=Z)  # defined from two systems (one pair)
    check_n_resamples(n_resamples)
    signs = _signs(check_rng(rng), n_resamples, X.shape[1])
    pm, ph = pairwise_pvalues(X, signs), pairwise_pvalues(Z, signs)
    iu = np.triu_indices(X.shape[0], k=1)
    return SoftPairwiseResult(float(1.0 - np.mean(np.abs(pm[iu] - ph[iu]))), pm, ph)


# ----------------------------------------------------------------------------------------------------
# Correlations by delta bucket (Deutsch, Dror & Roth, 2022)

DEFAULT_DELTAS: tuple[tuple[float, float], ...] = ((0.0, 0.5), (0.5, 1.0), (1.0, 2.0), (2.0, 5.0), (5.0, np.inf))
"""Fixed bands ``[low, high)`` in ROUGE points: the labelled alternative to the paper's percentile buckets
(``deltas="percentiles"``, the default of :func:`delta_correlations`); pass your own in your score's units."""

PERCENTILES = "percentiles"
"""``deltas`` value of the paper's buckets: cumulative deciles of each metric's own ``|difference|``."""


@dataclass(frozen=True)
class DeltaCorrelationResult:
    """Result of :func:`delta_correlations`: one entry per bucket.

    Percentile buckets (``percent`` is an array): bucket k holds the pairs with ``|difference| <= high[k]``
    (``low`` is 0), ``high[k]`` the ``|difference|`` of the pair at ``percent[k]`` % of the pairs sorted by it (the
    paper's ``u``). Fixed bands (``percent`` is None): ``low <= |difference| < high``. ``n_pairs`` counts the
    system pairs in the bucket on the original data; ``confidence_interval`` is the Boot-Both percentile
    interval over the resamples where the bucket's statistic is defined (``n_resamples_used``); NaN where the
    statistic is. ``bootstrap_distribution`` holds every resample's statistic per bucket (None without
    resamples), so that a contrast between buckets (e.g. the closest against all pairs) can be bootstrapped from
    the same draws.
    """

    low: np.ndarray
    high: np.ndarray
    n_pairs: np.ndarray
    statistic: np.ndarray
    confidence_interval: ConfidenceInterval
    n_resamples_used: np.ndarray
    coefficient: str
    percent: np.ndarray | None = None
    bootstrap_distribution: np.ndarray | None = None  # (n_resamples, K); NaN where a resample's bucket is undefined

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
    ``step = ceil(P' / 10)`` for the P' pairs, threshold k (k = 1, ..., 10) is the ``|difference|`` of the pair at
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
    # snapped like the means: equal differences of snapped means can differ in their last bits, and the
    # percentile buckets include every pair tied with the threshold
    db = snap(np.abs(bs[:, iu] - bs[:, ju]), axis=-1)
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
    of CogComp/re-examining-correlations: the system pairs sorted by the *metric's own* difference of system
    scores ``|b_i - b_j|``; with ``step = ceil(#pairs / 10)``, bucket k (10 %, 20 %, ..., 100 % of the pairs)
    holds every pair whose ``|difference|`` is at most that of the pair at position ``k * step`` (cumulative, ties
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
        low, high = np.array(edges).T
    ci_low = np.full(K, np.nan)
    ci_high = np.full(K, np.nan)
    used = np.zeros(K, dtype=np.int64)
    distribution = None
    if n_resamples:
        rows, cols = draw_indices(N, M, n_resamples, "both", check_rng(rng))
        col_counts = draw_counts(cols, M)
        # every system's mean over the drawn inputs (B, N), at the drawn systems
        xb, zb, bb = (snap(np.take_along_axis(col_counts @ A.T / M, rows, axis=1)) for A in (X, Z, B))
        iu, ju = np.triu_indices(N, k=1)
        distinct = rows[:, iu] != rows[:, ju]
        boot, _, _ = _bucket_stats(xb, zb, bb, distinct, edges, coefficient)
        distribution = boot[:, :K]
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
    return DeltaCorrelationResult(low, high, counts[0], stat[0], interval, used, coefficient, percent, distribution)
