"""Tests of whether metric X correlates with human Z more strongly than metric Y does.

* :func:`permutation_test`: Perm-Both / Perm-Systems / Perm-Inputs (Deutsch et al., 2021, Alg. 2).
* :func:`bootstrap_test`: paired bootstrap test (Boot-Both / -Systems / -Inputs).
* :func:`williams_test`: Williams' t-test for dependent correlations sharing one variable (Graham, 2015).
* :func:`pairwise_tests`: one test over every ordered pair of many metrics, sharing resampling draws.
* Helpers: :func:`paired_ttest`, :func:`shapiro`; :func:`bonferroni`, :func:`holm` (defined in
  :mod:`~metaeval.stats.multiplicity`, with the FDR adjustments, and re-exported here).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Mapping, Sequence

import numba
import numpy as np
from scipy import stats

from metaeval.stats._kernels import (
    bootstrap_pvalue,
    coins as draw_coins,
    monte_carlo_pvalue,
    pair_tables_fit,
    perm_summary_pearson,
    perm_system_pearson,
    permutation_pvalue,
    sign,
    snap,
    standardize,
    t_pvalue,
    tail_count,
    tau_b,
)
from metaeval.stats.correlation import (
    FISHER_COEFFICIENTS,
    batch_corr,
    check_bool,
    check_coefficient,
    check_level,
    check_matrices,
    check_rng,
    effective_n,
    level_corr,
    mean_of_defined,
    system_corr,
)
from metaeval._warnings import warn_degenerate
from metaeval.stats.multiplicity import adjust, bonferroni, holm
from metaeval.stats.resampling import (
    RESAMPLE_METHODS,
    auto_batch,
    per_resample_bytes,
    check_memory,
    warn_dropped,
    check_batch,
    check_n_resamples,
    check_resample,
    draw_indices,
    resampled_corr,
)

__all__ = [
    "PermutationResult",
    "BootstrapTestResult",
    "WilliamsResult",
    "PairwiseResult",
    "permutation_test",
    "bootstrap_test",
    "williams_test",
    "pairwise_tests",
    "paired_ttest",
    "shapiro",
    "EarlyStopping",
    "bonferroni",
    "holm",
    "williams_matrix",
    "PERMUTATION_METHODS",
]

#: ``both`` swaps each cell independently (the paper's Alg. 2 and the SacreROUGE code of its experiments).
#: ``rows-xor-columns`` is what nlpstats 0.0.1 calls "both": whole rows, then whole columns are swapped,
#: so a cell is swapped iff its row coin XOR its column coin came up; its null distribution differs.
PERMUTATION_METHODS = ("both", "systems", "inputs", "rows-xor-columns")
ALTERNATIVES = ("greater", "less", "two-sided")


@dataclass(frozen=True)
class PermutationResult:
    """Result of :func:`permutation_test`: ``statistic`` = r(X, Z) - r(Y, Z); ``n_dropped`` permutations
    were left out of ``null_distribution`` because a correlation was undefined in them; ``n_resamples_used``
    permutations were computed (fewer than asked when early stopping fixed the decision)."""

    statistic: float
    pvalue: float
    null_distribution: np.ndarray
    n_dropped: int = 0
    n_resamples_used: int | None = None


@dataclass(frozen=True)
class EarlyStopping:
    """Curtailed permutation test: stop once the decision at ``alpha`` can no longer change.

    After every ``block`` permutations (a multiple of ``block``, whatever ``batch`` is), with c of the b
    permutations done as extreme as observed, d of them undefined, and R = P - b still to do, the full test's
    p-value ``(c_P + 1) / (P_valid + 1)`` is at least ``(c + 1) / (P - d + 1)`` and at most
    ``(c + R + 1) / (P - d + 1)``. The test stops when the lower bound exceeds ``alpha`` (it cannot reject) or
    the upper bound is at most ``alpha`` (it must reject): its decision is the full test's on the same draws,
    exactly, and its type-I error is the full test's. The p-value returned is (c + 1) / (b - d + 1) over the
    permutations done, on the same side of ``alpha`` as the full one. (mt-metrics-eval's
    ``PermutationSigDiffParams`` instead stops at p < 0.02 or p > 0.5 after a block, a heuristic that can
    change the decision.)
    """

    alpha: float = 0.05
    block: int = 1000

    def __post_init__(self):
        if not (isinstance(self.alpha, (int, float)) and 0 < self.alpha < 1):
            raise ValueError(f"EarlyStopping.alpha must be in (0, 1), got {self.alpha!r}")
        if isinstance(self.block, bool) or not isinstance(self.block, (int, np.integer)) or self.block < 1:
            raise ValueError(f"EarlyStopping.block must be a positive integer, got {self.block!r}")

    def decided(self, count: int, done: int, dropped: int, total: int) -> bool:
        """Whether the decision of the full test of ``total`` permutations is already fixed."""
        # the p-value rule at the two extremes: no further permutation as extreme, or every one
        low = monte_carlo_pvalue(count, total - dropped)
        high = monte_carlo_pvalue(count + (total - done), total - dropped)
        return low > self.alpha or high <= self.alpha


@dataclass(frozen=True)
class BootstrapTestResult:
    """Result of :func:`bootstrap_test`: ``statistic`` = r(X, Z) - r(Y, Z); ``n_dropped`` resamples were left
    out of ``bootstrap_distribution`` because a correlation was undefined in them."""

    statistic: float
    pvalue: float
    bootstrap_distribution: np.ndarray
    n_dropped: int = 0


@dataclass(frozen=True)
class WilliamsResult:
    """Result of :func:`williams_test`: ``statistic`` is Williams' t with ``df`` = n - 3 degrees of freedom."""

    statistic: float
    pvalue: float
    df: int
    r_xz: float
    r_yz: float
    r_xy: float


@dataclass(frozen=True)
class PairwiseResult:
    """Result of :func:`pairwise_tests`.

    ``pvalues[i, j]`` tests H1 "metric i correlates more strongly with the human scores than metric j"
    (NaN on the diagonal); ``statistics[i, j]`` = r_i - r_j (Williams: the t statistic).
    """

    names: tuple[str, ...]
    correlations: np.ndarray
    statistics: np.ndarray
    pvalues: np.ndarray

    def not_outperformed(self, alpha: float = 0.05) -> np.ndarray:
        """Boolean per metric: no other metric is significantly better at ``alpha``."""
        return np.asarray(~(self.pvalues < alpha).any(axis=0))

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(self.pvalues, index=list(self.names), columns=list(self.names))


def _check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")


def _two_metric_inputs(X, Y, Z, level, coefficient, alternative, nan_policy, *, resample=None, n_resamples=None,
                       batch=None):
    """Validate the arguments shared by the two-metric tests; returns X, Y, Z as arrays and the validity mask."""
    check_level(level)
    check_coefficient(coefficient)
    _check_alternative(alternative)
    if resample is not None:
        check_resample(*resample)
        check_n_resamples(n_resamples)
        check_batch(batch)
    # a resampling test needs 2 systems and 2 inputs to resample anything; Williams' test is defined from 4 systems
    # (n - 3 degrees of freedom) on any number of inputs, and says so with NaN below that
    X, Y, Z = check_matrices(nan_policy, min_size=1 if resample is None else 2, X=X, Y=Y, Z=Z)
    w = None if not np.isnan(X).any() else (~np.isnan(X)).astype(float)
    return X, Y, Z, w


def _standardize(X: np.ndarray) -> np.ndarray:
    """One z-score over the whole matrix (population sd), as Alg. 2 does before swapping cells."""
    Xs = standardize(X)
    if np.isnan(Xs).all():
        raise ValueError("cannot standardize a constant matrix: all its scores are equal")
    return Xs


@numba.njit(cache=True)
def _kendall_summary_perm(Xs, Ys, Z, coins):  # pragma: no cover - compiled
    """Per-input Kendall tau-b with Z of the two permuted matrices (X's cells swapped with Y's where
    ``coins[b, m, n]``) on every permutation: arrays (B, M) for X and for Y; NaN where a column is constant.

    For each input and pair of systems i < j, the sign of the difference of the permuted X values takes
    one of four values according to the two coins (X or Y in each cell); a table holds its product with
    Z's sign and whether it is non-zero, and the permuted Y uses the opposite coins. Counts are exact
    integers and tau from them by the one formula, :func:`~metaeval.stats._kernels.tau_b` (as
    :func:`~metaeval.stats.correlation.batch_corr`).
    O(M N^2) tables, O(B M N^2 / 2) look-ups."""
    N, M = Xs.shape
    B = coins.shape[0]
    P = N * (N - 1) // 2
    prod4 = np.empty((M, P, 4), np.int64)
    tied4 = np.empty((M, P, 4), np.int64)
    nz = np.zeros(M, np.int64)
    for m in range(M):
        p = 0
        for i in range(N):
            for j in range(i + 1, N):
                sz = sign(Z[i, m], Z[j, m])
                for ci in range(2):
                    for cj in range(2):
                        a = Ys[i, m] if ci else Xs[i, m]
                        b = Ys[j, m] if cj else Xs[j, m]
                        sx = sign(a, b)
                        prod4[m, p, 2 * ci + cj] = sx * sz
                        tied4[m, p, 2 * ci + cj] = sx != 0
                nz[m] += sz != 0
                p += 1
    out_x = np.empty((B, M))
    out_y = np.empty((B, M))
    for b in range(B):
        for m in range(M):
            c = coins[b, m]
            s_x = 0
            s_y = 0
            n_x = 0
            n_y = 0
            p = 0
            for i in range(N):
                ci = 2 * np.int64(c[i])
                for j in range(i + 1, N):
                    k = ci + c[j]
                    s_x += prod4[m, p, k]
                    n_x += tied4[m, p, k]
                    s_y += prod4[m, p, 3 - k]
                    n_y += tied4[m, p, 3 - k]
                    p += 1
            out_x[b, m] = tau_b(s_x, n_x, nz[m])
            out_y[b, m] = tau_b(s_y, n_y, nz[m])
    return out_x, out_y


def _pair_null(Xs: np.ndarray, Ys: np.ndarray, Z: np.ndarray, coins: np.ndarray, coins_t: np.ndarray,
               level: str) -> np.ndarray:
    """The Pearson null distribution of one pair (system or summary level) from the compiled kernels: r(X', Z) -
    r(Y', Z) for all ``coins`` (B, N, M); ``coins_t`` are the coins as (N, M, B) uint8."""
    if level == "system":
        return perm_system_pearson(coins_t, coins_t.shape[2], Ys - Xs, Xs.mean(axis=1), Ys.mean(axis=1),
                                   Z.mean(axis=1))
    return perm_summary_pearson(Xs[None], Ys[None], Z[None], np.packbits(coins), np.zeros(1, np.int64), len(coins))[0]


def _transposed_coins(coins: np.ndarray) -> np.ndarray:
    """Boolean coins (B, N, M) as the (N, M, B) bytes the compiled Pearson kernels read."""
    return np.ascontiguousarray(coins.view(np.uint8).transpose(1, 2, 0))


def _swapped_deltas(Xs, Ys, Z, coins, level, coefficient, w, agg_x="mean", agg_y="mean") -> np.ndarray:
    """The general path: the permuted matrices built cell by cell (B x N x M), then correlated."""
    Xp = np.where(coins, Ys, Xs)
    Yp = np.where(coins, Xs, Ys)
    return level_corr(Xp, Z, level, coefficient, w, agg=agg_x) - level_corr(Yp, Z, level, coefficient, w, agg=agg_y)


def _permutation_deltas(Xs, Ys, Z, coins, level, coefficient, w, agg_x="mean", agg_y="mean") -> np.ndarray:
    """r(X', Z) - r(Y', Z) of every permutation of ``coins`` (B, N, M): one path per case (compiled Pearson at
    system and summary level and Kendall at summary level, the system means as one product for the other
    coefficients at system level, else the permuted matrices themselves)."""
    plain = w is None and agg_x == agg_y == "mean"
    if plain and coefficient == "pearson" and level in ("system", "summary"):
        return _pair_null(Xs, Ys, Z, coins, _transposed_coins(coins), level)
    if level == "system" and plain:
        # A permuted system mean is mean(Xs) + (coins . (Ys - Xs)) / M per row: one batched product,
        # no B x N x M copies of the swapped matrices.
        M = Xs.shape[1]
        # einsum keeps the summation order independent of the chunk size (BLAS would not)
        shift = np.einsum("bnm,nm->bn", coins, Ys - Xs) / M
        zs = Z.mean(axis=1)
        xs = Xs.mean(axis=1) + shift
        ys = Ys.mean(axis=1) - shift
        return system_corr(xs, zs, coefficient) - system_corr(ys, zs, coefficient)
    if (level == "summary" and coefficient == "kendall" and w is None
            and pair_tables_fit(Xs.shape[0], Xs.shape[1], per_pair=64)):
        # Compiled: concordant/discordant counts of both permuted matrices from per-pair sign tables.
        rx, ry = _kendall_summary_perm(
            np.ascontiguousarray(Xs, dtype=float), np.ascontiguousarray(Ys, dtype=float),
            np.ascontiguousarray(Z, dtype=float), np.ascontiguousarray(coins.transpose(0, 2, 1), dtype=np.uint8),
        )
        return mean_of_defined(rx) - mean_of_defined(ry)
    return _swapped_deltas(Xs, Ys, Z, coins, level, coefficient, w, agg_x, agg_y)


def permutation_test(
    X,
    Y,
    Z,
    *,
    level: str = "system",
    coefficient: str = "pearson",
    resample: str = "both",
    n_resamples: int = 9999,
    alternative: str = "greater",
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    nan_policy: str = "raise",
    early_stopping: bool | EarlyStopping = False,
) -> PermutationResult:
    """Permutation test of H1: r(X, Z) > r(Y, Z) (``alternative="greater"``) between two metrics.

    X and Y are first standardized by one z-score each over the whole matrix; then each permutation swaps
    the two metrics' scores in randomly chosen cells: every cell independently (``"both"``, Alg. 2),
    whole systems (``"systems"``), whole inputs (``"inputs"``), or ``"rows-xor-columns"`` (nlpstats' "both").
    p = (count + 1) / (P + 1), count = permutations with a difference at least as extreme as observed.

    Parameters
    ----------
    X, Y, Z : array_like (N, M)
        Two metrics and the human scores.
    level, coefficient :
        As in :func:`metaeval.correlate`.
    resample : {"both", "systems", "inputs", "rows-xor-columns"}
    n_resamples : int
        Number of permutations P.
    alternative : {"greater", "less", "two-sided"}
    rng, batch, nan_policy :
        As in :func:`metaeval.bootstrap_ci`.
    early_stopping : bool or EarlyStopping
        Stop as soon as the decision at ``alpha`` can no longer change (``True``: alpha 0.05, checked every
        1000 permutations; see :class:`EarlyStopping` for the bound). The decision equals the full test's.

    Returns
    -------
    PermutationResult

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(10, 20))
    >>> X = Z + rng.normal(size=(10, 20)); Y = rng.normal(size=(10, 20))
    >>> permutation_test(X, Y, Z, level="summary", n_resamples=199, rng=0).pvalue
    0.005
    """
    X, Y, Z, w = _two_metric_inputs(X, Y, Z, level, coefficient, alternative, nan_policy,
                                    resample=(resample, PERMUTATION_METHODS), n_resamples=n_resamples, batch=batch)
    N, M = X.shape
    check_memory(n_resamples, batch, n_resamples * (N * M * 1.2 + 8), per_resample_bytes(N, M, level, coefficient))
    Xs, Ys = _standardize(X), _standardize(Y)
    if w is not None:
        Xs, Ys, Z = np.nan_to_num(Xs), np.nan_to_num(Ys), np.nan_to_num(Z)
    rng = check_rng(rng)
    observed = float(level_corr(Xs, Z, level, coefficient, w) - level_corr(Ys, Z, level, coefficient, w))
    batch = batch or max(1, auto_batch(X.shape[0], X.shape[1], level, coefficient) // 2)
    # All coins are drawn first, in one fixed order, so that chunking cannot change the result.
    coins = draw_coins(rng, (n_resamples,), N, M, resample)
    stop = EarlyStopping() if early_stopping is True else early_stopping or None
    if stop is not None and not isinstance(stop, EarlyStopping):
        raise ValueError(f"early_stopping must be True, False or an EarlyStopping, got {early_stopping!r}")
    # Blocks of the stopping rule are cut independently of ``batch``, so the permutations used (and the result)
    # do not depend on it.
    block = stop.block if stop is not None else n_resamples
    null = np.empty(n_resamples)
    done = 0
    for first in range(0, n_resamples, block):
        last = min(first + block, n_resamples)
        for start in range(first, last, batch):
            end = min(start + batch, last)
            null[start:end] = _permutation_deltas(Xs, Ys, Z, coins[start:end], level, coefficient, w)
        done = last
        if stop is not None and done < n_resamples and not np.isnan(observed):
            seen = null[:done]
            ok = seen[~np.isnan(seen)]
            if stop.decided(tail_count(ok, observed, alternative), done, done - ok.size, n_resamples):
                break
    null = null[:done]
    valid = null[~np.isnan(null)]
    dropped = null.size - valid.size
    pvalue = permutation_pvalue(valid, observed, alternative, dropped, done)
    return PermutationResult(observed, pvalue, valid, dropped, done)


def bootstrap_test(
    X,
    Y,
    Z,
    *,
    level: str = "system",
    coefficient: str = "pearson",
    resample: str = "both",
    n_resamples: int = 9999,
    alternative: str = "greater",
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    nan_policy: str = "raise",
) -> BootstrapTestResult:
    """Paired bootstrap test of H1: r(X, Z) > r(Y, Z), resampling systems, inputs or both.

    Each resample takes the same rows/columns of X, Y and Z and computes delta* = r(X*, Z*) - r(Y*, Z*).
    Centering the bootstrap distribution at the observed delta gives the null; the p-value is the share of
    resamples with ``delta* >= 2 * delta`` (``"less"``: ``<=``; two-sided: ``|delta* - delta| >= |delta|``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(10, 20))
    >>> X = Z + rng.normal(size=(10, 20)); Y = rng.normal(size=(10, 20))
    >>> res = bootstrap_test(X, Y, Z, n_resamples=999, rng=0)
    >>> round(res.statistic, 2), round(float(res.pvalue), 2)      # 10 system means: too few to separate X and Y
    (0.31, 0.31)
    >>> float(bootstrap_test(X, Y, Z, level="summary", n_resamples=999, rng=0).pvalue)   # 200 summaries
    0.0
    """
    X, Y, Z, w = _two_metric_inputs(X, Y, Z, level, coefficient, alternative, nan_policy,
                                    resample=(resample, RESAMPLE_METHODS), n_resamples=n_resamples, batch=batch)
    rng = check_rng(rng)
    N, M = X.shape
    check_memory(n_resamples, batch, n_resamples * (8.0 * (N + M) + 24), per_resample_bytes(N, M, level, coefficient))
    observed = float(level_corr(X, Z, level, coefficient, w) - level_corr(Y, Z, level, coefficient, w))
    rows, cols = draw_indices(X.shape[0], X.shape[1], n_resamples, resample, rng)
    batch = batch or auto_batch(X.shape[0], X.shape[1], level, coefficient)
    rx, ry = resampled_corr([X, Y], Z, rows, cols, level, coefficient, batch, w)
    deltas = rx - ry
    valid = deltas[~np.isnan(deltas)]
    dropped = deltas.size - valid.size
    if np.isnan(observed):
        warn_degenerate("the observed difference of correlations is NaN (a correlation is undefined on the "
                        "data); the p-value is NaN")
        return BootstrapTestResult(observed, np.nan, valid, dropped)
    warn_dropped(dropped, deltas.size, "resamples", "the p-value")
    return BootstrapTestResult(observed, bootstrap_pvalue(valid, observed, alternative), valid, dropped)


def williams_pvalue(r12, r13, r23, n, alternative: str):
    """Williams' test from the three correlations (vectorized). r12 = r(X,Z), r13 = r(Y,Z), r23 = r(X,Y).
    ``alternative`` has no default: every caller says which test it runs (the paper's is one-sided)."""
    r12, r13, r23 = (np.abs(np.asarray(v, dtype=float)) for v in (r12, r13, r23))
    n = np.asarray(n, dtype=float)  # floats: with n = 3 the formula is NaN (df = 0), not a ZeroDivisionError
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (r12 - r13) * np.sqrt((n - 1) * (1 + r23) / (2 * (n - 1) / (n - 3) * det + rbar**2 * (1 - r23) ** 3))
        t = np.where(n > 3, t, np.nan)
    return t, t_pvalue(t, np.maximum(n - 3, 1), alternative)


def _warn_williams_small(n: int, level: str) -> None:
    if n <= 3:
        warn_degenerate(f"Williams' test is NaN: it has n - 3 degrees of freedom and n = {n} at the {level} level "
                        "(it needs at least 4 systems)")


def williams_test(
    X,
    Y,
    Z,
    *,
    level: str = "system",
    coefficient: str = "pearson",
    alternative: str = "two-sided",
    nan_policy: str = "raise",
) -> WilliamsResult:
    """Williams' test for the difference of two dependent correlations r(X,Z) and r(Y,Z) (Graham, 2015).

    ``t = (r12 - r13) sqrt((n-1)(1+r23) / (2 (n-1)/(n-3) |R| + ((r12+r13)/2)^2 (1-r23)^3))`` with
    ``|R| = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23``, df = n - 3. As psych's ``r.test`` and the reference
    code, the correlations enter as absolute values. ``n`` is :func:`metaeval.correlation.effective_n`
    (the number of systems at system *and* summary level). r(X, Y) is computed at the same level.

    The default ``alternative="two-sided"`` is scipy's convention and nlpstats' default (the p-value is twice
    the smaller one-sided one). Graham (2015), Graham & Baldwin (2014) and mt-metrics-eval's
    ``WilliamsSigDiff(one_sided=True)`` test one-sided, H1: r(X,Z) > r(Y,Z): pass ``alternative="greater"``
    for theirs (the studies that reproduce them do). Defined for n >= 4 (n - 3 degrees of freedom), NaN with a
    warning below.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(20, 5))
    >>> X = Z + 0.3 * rng.normal(size=(20, 5)); Y = Z + 2 * rng.normal(size=(20, 5))
    >>> williams_test(X, Y, Z, alternative="greater").pvalue < 0.05
    True
    """
    X, Y, Z, w = _two_metric_inputs(X, Y, Z, level, coefficient, alternative, nan_policy)
    check_coefficient(coefficient, FISHER_COEFFICIENTS)  # Williams' formula is for correlation coefficients
    r12 = float(level_corr(X, Z, level, coefficient, w))
    r13 = float(level_corr(Y, Z, level, coefficient, w))
    r23 = float(level_corr(X, Y, level, coefficient, w))
    n = effective_n(X, level=level)
    if n <= 3:
        warn_degenerate(f"Williams' test is NaN: it has n - 3 degrees of freedom and needs n >= 4, got n = {n} "
                        f"at the {level} level")
        return WilliamsResult(np.nan, np.nan, n - 3, r12, r13, r23)
    if np.isnan([r12, r13, r23]).any():
        const = [name for name, M in (("Z (human)", Z), ("X", X), ("Y", Y))
                 if np.nanmax(M) == np.nanmin(M)]
        warn_degenerate(f"Williams' test is NaN: a correlation is undefined (r(X,Z)={r12}, r(Y,Z)={r13}, "
                        f"r(X,Y)={r23})" + (f"; constant scores in {', '.join(const)}" if const
                                            else f"; constant scores at the {level} level"))
    elif abs(r23) == 1.0:
        warn_degenerate(f"Williams' test is NaN: r(X,Y) = {r23:+.0f} at the {level} level "
                        + ("(X and Y are the same metric)" if np.array_equal(X, Y, equal_nan=True)
                           else "(X and Y are perfectly correlated)")
                        + ": the two correlations with Z cannot differ, there is nothing to test")
        return WilliamsResult(np.nan, np.nan, n - 3, r12, r13, r23)
    _warn_williams_small(n, level)
    t, p = williams_pvalue(r12, r13, r23, n, alternative)
    return WilliamsResult(float(t), float(p), n - 3, r12, r13, r23)


# ----------------------------------------------------------------------------------------------------
# All pairs


def _check_test(test: object) -> None:
    kind, _, method = test.partition("-") if isinstance(test, str) else ("", "", "")
    if not (test == "williams" or (kind == "boot" and method in RESAMPLE_METHODS)
            or (kind == "perm" and method in PERMUTATION_METHODS)):
        choices = ", ".join(["'williams'"] + [f"'boot-{m}'" for m in RESAMPLE_METHODS]
                            + [f"'perm-{m}'" for m in PERMUTATION_METHODS])
        raise ValueError(f"test must be one of {choices}, got {test!r} (e.g. test='perm-both')")


def pairwise_tests(
    metrics: Mapping[str, np.ndarray] | Sequence[np.ndarray],
    Z,
    *,
    test: str = "perm-both",
    level: str = "system",
    coefficient: str = "pearson",
    n_resamples: int = 9999,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    progress: bool = False,
    aggregates: Sequence[str] | None = None,
    correction: str = "none",
) -> PairwiseResult:
    """One-sided test of "metric i beats metric j" for every ordered pair of many metrics.

    ``correction`` adjusts the K(K-1) p-values for multiplicity: ``"none"``, ``"bonferroni"``, ``"holm"``
    (family-wise error), ``"fdr_bh"`` or ``"fdr_by"`` (false discovery rate; see
    :func:`metaeval.stats.multiplicity.adjust`). The correlations and statistics are unchanged.

    ``aggregates`` (system level only) gives each metric's system-score aggregation, ``"mean"`` or
    ``"median"`` (Graham's median variants); permutation tests then aggregate each permuted matrix with
    the aggregation of the metric it stands for.

    Bootstrap tests share one set of resampling indices across all metrics (each metric's resampled
    correlations are computed once, K sets instead of K^2). Permutation tests share one set of coins: the
    pair (j, i) under the same coins is the mirror of (i, j), so each unordered pair is computed once.

    Returns
    -------
    PairwiseResult
        ``pvalues[i, j]`` for H1: r_i > r_j.
    """
    check_bool(progress, "progress")
    names, mats, Z, aggs = _pairwise_inputs(metrics, Z, test, level, coefficient, n_resamples, batch, aggregates,
                                            correction)
    corr = np.array([float(level_corr(m, Z, level, coefficient, agg=a)) for m, a in zip(mats, aggs)])
    rng = check_rng(rng)
    kind, _, method = test.partition("-")
    # filled in below: p-values off the diagonal, Williams' t for the statistics
    stat, pvals = corr[:, None] - corr[None, :], np.full((len(mats), len(mats)), np.nan)
    if test == "williams":
        _pairwise_williams(mats, corr, level, coefficient, aggs, stat, pvals)
    elif kind == "boot":
        _pairwise_bootstrap(mats, Z, method, level, coefficient, n_resamples, rng, batch, aggs, stat, pvals)
    else:
        _pairwise_permutation(mats, Z, method, level, coefficient, n_resamples, rng, batch, aggs, progress, pvals)
    return PairwiseResult(names, corr, stat, adjust(pvals, correction=correction))


def _pairwise_inputs(metrics, Z, test, level, coefficient, n_resamples, batch, aggregates, correction):
    """:func:`pairwise_tests`' arguments checked, before any test runs: the names, the validated matrices and Z,
    and each metric's system-score aggregation."""
    if not isinstance(metrics, Mapping):
        metrics = {str(k): m for k, m in enumerate(metrics)}
    names, mats = tuple(metrics), list(metrics.values())
    if len(mats) < 2:
        raise ValueError(f"metrics needs at least 2 metrics, got {len(mats)}")
    check_level(level)
    check_coefficient(coefficient)
    check_n_resamples(n_resamples)
    check_batch(batch)
    named = {f"metrics[{n!r}]": m for n, m in zip(names, mats)}
    *mats, Z = check_matrices("raise", min_size=3, **named, Z=Z)
    K = len(mats)
    adjust([], correction=correction)  # an unknown correction fails before any test runs
    _check_test(test)
    if test == "williams":
        check_coefficient(coefficient, FISHER_COEFFICIENTS)
    else:
        N, M = Z.shape
        # a byte per coin, and another for the transposed copy of the compiled Pearson path
        coin_bytes = 2.2 if test.startswith("perm-") and coefficient == "pearson" else 1.2
        up_front = n_resamples * (N * M * coin_bytes + 8.0 * (N + M) + 8.0 * K)
        check_memory(n_resamples, batch, up_front, per_resample_bytes(N, M, level, coefficient))
    aggs = list(aggregates) if aggregates is not None else ["mean"] * K
    if len(aggs) != K:
        raise ValueError(f"aggregates has {len(aggs)} entries for {K} metrics")
    if level != "system" and set(aggs) != {"mean"}:
        raise ValueError("aggregates other than 'mean' apply to level='system' only")
    return names, mats, Z, aggs


def _pairwise_williams(mats, corr, level, coefficient, aggs, stat, pvals) -> None:
    """Williams' t and one-sided p-value of every ordered pair (no draws)."""
    n = effective_n(mats[0], level=level)
    _warn_williams_small(n, level)
    for i, j in combinations(range(len(mats)), 2):
        if level == "system":
            r_ij = float(batch_corr(_aggregate(mats[i], aggs[i]), _aggregate(mats[j], aggs[j]), coefficient))
        else:
            r_ij = float(level_corr(mats[i], mats[j], level, coefficient))
        t, p = williams_pvalue(corr[i], corr[j], r_ij, n, "greater")
        stat[i, j], pvals[i, j] = t, p
        stat[j, i], pvals[j, i] = -t, williams_pvalue(corr[j], corr[i], r_ij, n, "greater")[1]


def _pairwise_bootstrap(mats, Z, method, level, coefficient, n_resamples, rng, batch, aggs, stat, pvals) -> None:
    """Paired bootstrap of every pair: one set of resampling indices, each metric's resampled correlations once."""
    K = len(mats)
    rows, cols = draw_indices(Z.shape[0], Z.shape[1], n_resamples, method, rng)
    batch = batch or auto_batch(Z.shape[0], Z.shape[1], level, coefficient)
    samples = resampled_corr(mats, Z, rows, cols, level, coefficient, batch, aggs=aggs)
    dropped = 0
    for i, j in combinations(range(K), 2):
        deltas = samples[i] - samples[j]
        deltas = deltas[~np.isnan(deltas)]
        dropped += n_resamples - deltas.size
        pvals[i, j] = bootstrap_pvalue(deltas, stat[i, j], "greater")
        pvals[j, i] = bootstrap_pvalue(-deltas, stat[j, i], "greater")
    warn_dropped(dropped, n_resamples * K * (K - 1) // 2, "resampled differences (over all pairs)", "the p-values")


def _pairwise_permutation(mats, Z, method, level, coefficient, n_resamples, rng, batch, aggs, progress,
                          pvals) -> None:
    """Permutation test of every pair under one set of coins: the pair (j, i) under the same coins is the mirror
    of (i, j), so each unordered pair's null is computed once."""
    coins = draw_coins(rng, (n_resamples,), Z.shape[0], Z.shape[1], method)
    std = [_standardize(m) for m in mats]
    batch = batch or max(1, auto_batch(Z.shape[0], Z.shape[1], level, coefficient) // 2)
    # Pearson at system or summary level: each pair's null from the compiled kernels in one call
    compiled = coefficient == "pearson" and set(aggs) == {"mean"} and level in ("system", "summary")
    coins_t = _transposed_coins(coins) if compiled else None
    own = [float(level_corr(s, Z, level, coefficient, agg=a)) for s, a in zip(std, aggs)]
    pairs = list(combinations(range(len(mats)), 2))
    iterator = pairs
    if progress:
        from tqdm import tqdm

        iterator = tqdm(pairs, desc="pairs")
    dropped = 0
    for i, j in iterator:
        observed = float(own[i] - own[j])
        if coins_t is not None:
            null = _pair_null(std[i], std[j], Z, coins, coins_t, level)
        else:
            null = np.concatenate([
                _permutation_deltas(std[i], std[j], Z, coins[s : s + batch], level, coefficient, None, aggs[i],
                                    aggs[j])
                for s in range(0, n_resamples, batch)
            ])
        valid = null[~np.isnan(null)]
        dropped += null.size - valid.size
        if valid.size == 0 or np.isnan(observed):
            continue  # NaN p-values, counted in the warning below
        pvals[i, j] = monte_carlo_pvalue(tail_count(valid, observed, "greater"), valid.size)
        pvals[j, i] = monte_carlo_pvalue(tail_count(-valid, -observed, "greater"), valid.size)
    warn_dropped(dropped, n_resamples * len(pairs), "permuted differences (over all pairs)", "the p-values")


def _aggregate(X: np.ndarray, agg: str) -> np.ndarray:
    scores = np.median(X, axis=1) if agg == "median" else X.mean(axis=1)
    return snap(scores)


def williams_matrix(system_scores, human, *, coefficient: str = "pearson", names=None) -> PairwiseResult:
    """Williams' test for every ordered pair of metrics given their *system-level* scores.

    Parameters
    ----------
    system_scores : array (N, K)
        One column per metric: a score per system (any aggregation, e.g. corpus BLEU or median ROUGE).
    human : array (N,)
        The human system scores.

    Returns
    -------
    PairwiseResult
        ``pvalues[i, j]`` for H1: r(metric i, human) > r(metric j, human), n = N systems.
    """
    S = np.asarray(system_scores, dtype=float)
    h = np.asarray(human, dtype=float)
    if S.ndim != 2 or h.shape != (S.shape[0],):
        raise ValueError(f"system_scores must be (N, K) and human (N,), got {S.shape} and {h.shape}")
    if S.shape[0] < 4:
        raise ValueError("Williams' test needs at least 4 systems")
    if not np.isfinite(S).all() or not np.isfinite(h).all():
        raise ValueError("system_scores and human must be finite")
    check_coefficient(coefficient)
    K, n = S.shape[1], S.shape[0]
    cols = np.column_stack([S, h]).T  # (K+1, N)
    corr_all = batch_corr(cols[:, None, :], cols[None, :, :], coefficient)
    r_h = corr_all[:K, K]
    t, p = williams_pvalue(r_h[:, None], r_h[None, :], corr_all[:K, :K], n, "greater")
    t, p = np.asarray(t, dtype=float), np.asarray(p, dtype=float)
    np.fill_diagonal(p, np.nan)
    np.fill_diagonal(t, np.nan)
    names = tuple(names) if names is not None else tuple(str(k) for k in range(K))
    return PairwiseResult(names, r_h, t, p)


# ----------------------------------------------------------------------------------------------------
# Helpers


def paired_ttest(a, b, *, alternative: str = "two-sided"):
    """Paired t-test between two systems' per-input scores (``scipy.stats.ttest_rel``)."""
    _check_alternative(alternative)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"a and b must be 1-D and of equal length, got shapes {a.shape} and {b.shape}")
    return stats.ttest_rel(a, b, alternative=alternative)


def shapiro(x):
    """Shapiro-Wilk normality test (``scipy.stats.shapiro``); NaN statistic and p-value, with a
    DegenerateResultWarning saying why, for non-finite, constant or too-short data.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     res = shapiro([1, 2, np.inf, 4])
    >>> float(res.pvalue), str(w[0].message)[:39]
    (nan, 'Shapiro-Wilk is NaN: x has 1 non-finite')
    """
    x = np.asarray(x, dtype=float).ravel()
    nan = stats._morestats.ShapiroResult(np.nan, np.nan)
    bad = int(np.count_nonzero(~np.isfinite(x)))
    if bad:
        # scipy returns p = 1.0 for such data, which would read as "no evidence against normality"
        warn_degenerate(f"Shapiro-Wilk is NaN: x has {bad} non-finite value(s) (inf or NaN); drop them first")
        return nan
    if x.size < 3:
        warn_degenerate(f"Shapiro-Wilk is NaN: it needs at least 3 values, x has {x.size}")
        return nan
    if np.ptp(x) == 0:
        warn_degenerate("Shapiro-Wilk is NaN: x is constant (normality is undefined for equal values)")
        return nan
    return stats.shapiro(x)
