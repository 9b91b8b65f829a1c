"""Bootstrap confidence intervals of correlations, resampling systems, inputs or both (Deutsch et al., 2021).

All resampling indices of a call are drawn up front from one ``numpy.random.Generator`` (rows for every
resample, then columns for every resample), then the correlations are computed chunk by chunk. The chunk
size (``batch``) therefore changes memory use and nothing else: the same seed gives the same result.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Literal, Sequence

import numba
import numpy as np

from scipy import special

from metaeval._warnings import warn_degenerate
from metaeval.stats._pairs import SORTED_FROM
from metaeval.stats._kernels import (
    bootstrap_indices,
    draw_counts,
    pearson_row,
    pearson_vector,
    pair_tables_fit,
    sign,
    tau_b,
    warn_dropped,
)
from metaeval.stats.correlation import (
    REGISTRY,
    ConfidenceInterval,
    check_bool,
    check_coefficient,
    check_confidence_level,
    check_level,
    check_matrices,
    check_rng,
    level_corr,
    mean_of_defined,
    system_corr,
    warn_if_nan,
)

__all__ = ["BootstrapResult", "bootstrap_ci", "draw_indices", "draw_counts", "RESAMPLE_METHODS", "auto_batch"]

RESAMPLE_METHODS = ("both", "systems", "inputs")
Resample = Literal["both", "systems", "inputs"]


@dataclass(frozen=True)
class BootstrapResult:
    """Result of :func:`bootstrap_ci`.

    Attributes
    ----------
    statistic : float
        The correlation on the original data.
    confidence_interval : ConfidenceInterval
        Percentile interval (linear interpolation) of the valid resampled correlations.
    bootstrap_distribution : ndarray
        The valid resampled correlations (resamples where the correlation is undefined are dropped).
    standard_error : float
        Standard deviation (ddof=1) of ``bootstrap_distribution``.
    n_dropped : int
        Resamples dropped because their correlation was undefined.
    """

    statistic: float
    confidence_interval: ConfidenceInterval
    bootstrap_distribution: np.ndarray
    standard_error: float
    n_dropped: int = 0



def _size(n_bytes: float) -> str:
    """Bytes in the unit that shows them (``0.0 GiB`` said nothing for a 1 MiB limit)."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{n_bytes:.0f} bytes"

def check_resample(resample: str, allowed=RESAMPLE_METHODS) -> None:
    if resample not in allowed:
        raise ValueError(f"resample must be one of {allowed}, got {resample!r}")


def check_n_resamples(n_resamples) -> None:
    if not isinstance(n_resamples, (int, np.integer)) or isinstance(n_resamples, bool) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")


def check_batch(batch) -> None:
    if batch is not None and (not isinstance(batch, (int, np.integer)) or batch < 1):
        raise ValueError(f"batch must be a positive integer or None, got {batch!r}")


def memory_limit() -> float:
    """Bytes one resampling call may allocate: ``$METAEVAL_MAX_MEMORY`` (bytes, or with a K/M/G suffix), else
    half of this machine's physical memory."""
    import os

    env = os.environ.get("METAEVAL_MAX_MEMORY", "").strip()
    if env:
        units = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
        scale = units.get(env[-1].upper(), 1)
        try:
            return float(env[:-1] if scale > 1 else env) * scale
        except ValueError:
            raise ValueError(f"METAEVAL_MAX_MEMORY must be a number of bytes such as 4G, got {env!r}") from None
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2
    except (ValueError, OSError, AttributeError):  # pragma: no cover - platforms without sysconf
        return 4 * 2**30


def check_memory(n_resamples: int, batch: int | None, up_front: float, per_resample: float) -> None:
    """Refuse, before allocating, a call whose arrays would not fit: ``up_front`` bytes for all resamples at
    once (indices, coins, results) and ``per_resample`` bytes of temporaries per resample of a chunk."""
    limit = memory_limit()
    checks = [(up_front, f"n_resamples={n_resamples}", "for its resampling draws", "use fewer resamples")]
    if batch is None:
        checks.append((per_resample, "one resample", "of temporaries at this size",
                       "use a coarser level, another coefficient or fewer systems/inputs"))
    else:
        checks.append((batch * per_resample, f"batch={batch}", "per chunk", "use a smaller batch or leave it None"))
    for need, subject, what, fix in checks:
        if need > limit:
            raise ValueError(f"{subject} needs about {_size(need)} {what}, more than the limit of {_size(limit)} "
                             f"(half this machine's memory, or $METAEVAL_MAX_MEMORY): {fix}")


def draw_indices(
    n_systems: int, n_inputs: int, n_resamples: int, resample: str, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap row and column indices, shapes ``(B, N)`` and ``(B, M)``: rows first, then columns, as
    :func:`~metaeval.stats._kernels.bootstrap_indices` draws them."""
    return bootstrap_indices(rng, (n_resamples,), n_systems, n_inputs, resample)


def _pair_elements(n_systems: int, n_inputs: int, level: str, coefficient: str) -> float | None:
    """Elements of the pair arrays a pair coefficient builds per resample, or None where it builds none (its
    registry ``memory``: "short-pairs" count vectors of :data:`~metaeval.stats._pairs.SORTED_FROM` entries or more
    by sorting, O(n); "pairs" always build all pairs)."""
    N, M = n_systems, n_inputs
    memory = REGISTRY[coefficient].memory if isinstance(coefficient, str) and coefficient in REGISTRY else "cells"
    if memory == "cells":
        return None
    if level == "summary":
        vectors, n = M, N
    elif level == "per-system":
        vectors, n = N, M
    elif level == "global":
        vectors, n = 1, N * M
    else:  # system level: the pairs of N system scores (few), next to the N x M resampled cells
        return N * (N - 1) / 2 + N * M
    if n >= SORTED_FROM and memory == "short-pairs":
        return None
    return vectors * n * (n - 1) / 2


def per_resample_bytes(n_systems: int, n_inputs: int, level: str, coefficient: str) -> float:
    """Bytes of temporaries per resample of a chunk: the largest array a kernel builds (as :func:`auto_batch`
    counts its elements) times a few float64 copies of it."""
    pairs = _pair_elements(n_systems, n_inputs, level, coefficient)
    return 32.0 * (n_systems * n_inputs if pairs is None else pairs)


def auto_batch(n_systems: int, n_inputs: int, level: str, coefficient: str, budget: float = 2e7) -> int:
    """A chunk size that keeps the largest temporary array of a kernel near ``budget`` elements."""
    pairs = _pair_elements(n_systems, n_inputs, level, coefficient)
    if pairs is None and level == "system":
        return 10_000
    per = n_systems * n_inputs if pairs is None else pairs
    return int(max(1, min(10_000, budget // (4 * per))))


@numba.njit(cache=True)
def _pair_sign_tables(X, Z):  # pragma: no cover - compiled
    """For every input m and pair of systems i < j (in ``np.triu_indices`` order): sign(X[i] - X[j]) *
    sign(Z[i] - Z[j]) and whether each sign is non-zero, as (M, P) int64 arrays (P = N (N - 1) / 2)."""
    N, M = X.shape
    P = N * (N - 1) // 2
    prod = np.empty((M, P), np.int64)
    tx = np.empty((M, P), np.int64)
    tz = np.empty((M, P), np.int64)
    for m in range(M):
        p = 0
        for i in range(N):
            for j in range(i + 1, N):
                sx = sign(X[i, m], X[j, m])
                sz = sign(Z[i, m], Z[j, m])
                prod[m, p] = sx * sz
                tx[m, p] = sx != 0
                tz[m, p] = sz != 0
                p += 1
    return prod, tx, tz


@numba.njit(cache=True)
def _kendall_summary_boot(X, Z, rows, cols):  # pragma: no cover - compiled
    """Per-input Kendall tau-b of X with Z on every bootstrap resample: array (B, M), entry (b, j) for the
    drawn input ``cols[b, j]`` over the drawn systems ``rows[b]``; NaN where X or Z is constant.

    Two drawn copies of one system tie in both variables, so a pair of distinct systems (i, j) drawn
    w_i and w_j times counts w_i w_j times: S = sum w_i w_j sx sz, n_x = sum w_i w_j [sx != 0] (likewise
    n_z), exact integers, and tau from them by the one formula, :func:`~metaeval.stats._kernels.tau_b` (as
    :func:`~metaeval.stats.correlation.batch_corr`). Each drawn input is computed once per resample.
    O(N^2 M) for the tables, then O(B N^2 / 2) per distinct drawn input."""
    N, M = X.shape
    B = rows.shape[0]
    prod, tx, tz = _pair_sign_tables(X, Z)
    out = np.empty((B, cols.shape[1]))
    w = np.zeros(N, np.int64)
    pw = np.empty(N * (N - 1) // 2, np.int64)
    tau = np.empty(M)
    done = np.full(M, -1, np.int64)
    for b in range(B):
        w[:] = 0
        for i in range(N):
            w[rows[b, i]] += 1
        p = 0
        for i in range(N):
            for j in range(i + 1, N):
                pw[p] = w[i] * w[j]
                p += 1
        for jj in range(cols.shape[1]):
            m = cols[b, jj]
            if done[m] != b:
                s = 0
                nx = 0
                nz = 0
                for q in range(pw.shape[0]):
                    s += pw[q] * prod[m, q]
                    nx += pw[q] * tx[m, q]
                    nz += pw[q] * tz[m, q]
                tau[m] = tau_b(s, nx, nz)
                done[m] = b
            out[b, jj] = tau[m]
    return out


# Compiled Pearson of every resample, for resampled_corr: in one call instead of many small numpy operations (a
# bootstrap on a few systems and inputs spent its time calling them); sums added in their natural order.


#: resamples whose system sums _boot_system_pearson forms side by side (the loop over a block vectorizes; a loop over
#: the N systems of one resample is short)
_BOOT_BLOCK = 128


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _boot_system_pearson(mats, Z, rows, cols):  # pragma: no cover - compiled
    """System-level Pearson r of each matrix of ``mats`` (K, N, M) with Z on every resample: (K, B). A resample's
    system means are (column multiplicities . X[n]) / M, added over the inputs in order, taken at the drawn rows;
    r by :func:`~metaeval.stats._kernels.pearson_vector`."""
    K, N, M = mats.shape
    B, R = rows.shape
    out = np.empty((K, B))
    counts = np.empty((M, _BOOT_BLOCK))  # the multiplicities of a block's resamples, input by input
    acc = np.empty(_BOOT_BLOCK)
    sums = np.empty((K + 1, _BOOT_BLOCK, N))  # sums[K]: Z's
    xs, zs = np.empty(R), np.empty(R)
    for b0 in range(0, B, _BOOT_BLOCK):
        L = min(_BOOT_BLOCK, B - b0)
        counts[:, :L] = 0.0
        for j in range(L):
            for i in range(cols.shape[1]):
                counts[cols[b0 + j, i], j] += 1.0
        for k in range(K + 1):
            V = Z if k == K else mats[k]
            for n in range(N):
                acc[:L] = 0.0
                for m in range(M):
                    v = V[n, m]
                    c = counts[m]
                    for j in range(L):
                        acc[j] += c[j] * v
                for j in range(L):
                    sums[k, j, n] = acc[j] / M
        for j in range(L):
            b = b0 + j
            for i in range(R):
                zs[i] = sums[K, j, rows[b, i]]
            for k in range(K):
                for i in range(R):
                    xs[i] = sums[k, j, rows[b, i]]
                out[k, b] = pearson_vector(xs, zs)
    return out


@numba.njit(cache=True, nogil=True)
def _drawn_sum(weights, A, out):  # pragma: no cover - compiled
    """``out[m]`` = the sum over the drawn systems n (``weights[n]`` times drawn) of ``weights[n] A[n, m]``, over n
    in order (an undrawn system adds nothing)."""
    out[:] = 0.0
    for n in range(A.shape[0]):
        if weights[n] != 0.0:
            f = weights[n]
            for m in range(A.shape[1]):
                out[m] += f * A[n, m]


@numba.njit(cache=True, nogil=True)
def _varies_among_drawn(weights, V, first, out):  # pragma: no cover - compiled
    """``out[m]``: whether column m of ``V`` takes two values among the drawn systems (``first`` one of them)."""
    out[:] = False
    for n in range(V.shape[0]):
        if weights[n] != 0.0:
            for m in range(V.shape[1]):
                out[m] = out[m] | (V[n, m] != V[first, m])


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _boot_summary_pearson(mats, Xc, XX, XZ, Z, Zc, ZZ, rows, cols):  # pragma: no cover - compiled
    """Summary-level Pearson r of each matrix of ``mats`` (K, N, M) with Z on every resample: (K, B), and the
    resamples to recompute (K, B): those with a cell whose variance lost its digits in the sums.

    Per resample: the sums over the drawn systems (with multiplicity) of the column-centred Xc, XX = Xc Xc,
    XZ = Xc Zc and of Zc, ZZ, r by :func:`~metaeval.stats._kernels.pearson_row`, then the mean of defined r over
    the drawn inputs. A resampled column is constant iff its drawn values are equal (what the integer codes decide
    there)."""
    K, N, M = mats.shape
    B = rows.shape[0]
    out = np.empty((K, B))
    redo = np.zeros((K, B), np.bool_)
    weights = np.empty(N)
    sz, szz = np.empty(M), np.empty(M)
    sx, sxx, sxz = np.empty(M), np.empty(M), np.empty(M)
    z_def, x_def = np.empty(M, np.bool_), np.empty(M, np.bool_)
    r, weak = np.empty(M), np.zeros(M, np.bool_)
    drawn = np.empty(M)  # how often each input was drawn: the weights of the mean over the drawn inputs
    for b in range(B):
        weights[:] = 0.0
        for i in range(rows.shape[1]):
            weights[rows[b, i]] += 1.0
        drawn[:] = 0.0
        for j in range(cols.shape[1]):
            drawn[cols[b, j]] += 1.0
        first = rows[b, 0]
        _drawn_sum(weights, Zc, sz)
        _drawn_sum(weights, ZZ, szz)
        _varies_among_drawn(weights, Z, first, z_def)
        for k in range(K):
            X = mats[k]
            _drawn_sum(weights, Xc[k], sx)
            _drawn_sum(weights, XX[k], sxx)
            _drawn_sum(weights, XZ[k], sxz)
            _varies_among_drawn(weights, X, first, x_def)
            for m in range(M):
                x_def[m] = x_def[m] & z_def[m]
            mean = pearson_row(N, sx, sz, sxx, szz, sxz, x_def, drawn, r, weak)
            refine = False
            for m in range(M):  # no early exit: a loop that vectorizes
                refine = refine | weak[m]
            redo[k, b] = refine
            out[k, b] = np.nan if refine else mean
    return out, redo


def resampled_corr(
    mats: list[np.ndarray],
    Z: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    level: str,
    coefficient: str,
    batch: int,
    w: np.ndarray | None = None,
    aggs: list[str] | None = None,
) -> np.ndarray:
    """Correlations with Z of each matrix in ``mats`` on every resample: array (len(mats), B).

    ``aggs`` gives each matrix's system-level aggregation (mean by default, or median). One path per case:
    inputs-only resampling at summary level (each input's correlation once), compiled kernels for Kendall and
    Pearson at summary level and Pearson at system level, the system means as one product for the other
    coefficients at system level, and the general path (:func:`_gathered_corr`) for the rest."""
    aggs = aggs or ["mean"] * len(mats)
    plain = w is None and set(aggs) == {"mean"}
    if level == "summary" and plain and _rows_identity(rows):
        return _inputs_only_summary(mats, Z, cols, coefficient)
    if level == "summary" and plain and coefficient == "kendall" and pair_tables_fit(Z.shape[0], Z.shape[1]):
        # Per-input Kendall over resampled systems: concordant/discordant counts from pair-sign tables and the
        # systems' multiplicities, in a compiled kernel (the same integers and formula as batch_corr).
        rows_c, cols_c = np.ascontiguousarray(rows), np.ascontiguousarray(cols)
        Zf = np.ascontiguousarray(Z, dtype=float)
        out = np.empty((len(mats), rows.shape[0]))
        for k, X in enumerate(mats):
            out[k] = mean_of_defined(_kendall_summary_boot(np.ascontiguousarray(X, dtype=float), Zf, rows_c, cols_c))
        return out
    if level == "summary" and plain and coefficient == "pearson":
        return _pearson_summary_compiled(mats, Z, rows, cols, batch)
    if level == "system" and plain and coefficient == "pearson":
        return _boot_system_pearson(np.stack(mats), Z, np.ascontiguousarray(rows, dtype=np.int64),
                                    np.ascontiguousarray(cols, dtype=np.int64))
    if level == "system" and plain:
        return _system_means_corr(mats, Z, rows, cols, coefficient, batch)
    return _gathered_corr(mats, Z, rows, cols, level, coefficient, batch, w, aggs)


def _inputs_only_summary(mats: list[np.ndarray], Z: np.ndarray, cols: np.ndarray, coefficient: str) -> np.ndarray:
    """:func:`resampled_corr` when only inputs are resampled, at summary level: each input's correlation does not
    change, only which inputs are averaged (with multiplicity), so they are computed once."""
    out = np.empty((len(mats), cols.shape[0]))
    for k, X in enumerate(mats):
        per_input = level_corr(X.T[:, :, None], Z.T[:, :, None], "global", coefficient)
        out[k] = mean_of_defined(per_input[cols])
    return out


def _pearson_summary_compiled(mats: list[np.ndarray], Z: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                              batch: int) -> np.ndarray:
    """Per-input Pearson over resampled systems from sums over the drawn rows (with multiplicity) of the
    column-centred matrices, for every resample in one compiled call; the few resamples with nearly constant
    columns (a variance below 1e-6 of its mean square in the sums) again through :func:`_gathered_corr`, which
    computes their r from the values."""
    Zc = Z - Z.mean(axis=0)
    stacked = np.stack([X - X.mean(axis=0) for X in mats])
    rows_c = np.ascontiguousarray(rows, dtype=np.int64)
    cols_c = np.ascontiguousarray(cols, dtype=np.int64)
    out, redo = _boot_summary_pearson(np.stack(mats), stacked, stacked * stacked, stacked * Zc, Z, Zc, Zc * Zc,
                                      rows_c, cols_c)
    for metric in np.nonzero(redo.any(axis=1))[0]:
        index = np.nonzero(redo[metric])[0]
        out[metric, index] = _gathered_corr([mats[metric]], Z, rows_c[index], cols_c[index], "summary", "pearson",
                                            batch, None, ["mean"])[0]
    return out


def _system_means_corr(mats: list[np.ndarray], Z: np.ndarray, rows: np.ndarray, cols: np.ndarray, coefficient: str,
                       batch: int) -> np.ndarray:
    """System level: the system means of a resample are (column multiplicities @ X.T) / M, then the drawn rows: a
    matrix product instead of gathering B x N x M cells."""
    B = rows.shape[0]
    out = np.empty((len(mats), B))
    for start in range(0, B, batch):
        r, c = rows[start : start + batch], cols[start : start + batch]
        counts = draw_counts(c, Z.shape[1])
        # einsum, not BLAS: each sum is taken in the same order whatever the chunk size (BLAS blocking
        # would change the last bits with the batch size, and results must not depend on it)
        zs = np.take_along_axis(np.einsum("bm,nm->bn", counts, Z), r, axis=1) / Z.shape[1]
        for k, X in enumerate(mats):
            xs = np.take_along_axis(np.einsum("bm,nm->bn", counts, X), r, axis=1) / X.shape[1]
            out[k, start : start + batch] = system_corr(xs, zs, coefficient)
    return out


def _gathered_corr(mats: list[np.ndarray], Z: np.ndarray, rows: np.ndarray, cols: np.ndarray, level: str,
                   coefficient: str, batch: int, w: np.ndarray | None, aggs: list[str]) -> np.ndarray:
    """The general path: each resampled matrix gathered cell by cell (B x N x M per batch), then correlated."""
    B = rows.shape[0]
    out = np.empty((len(mats), B))
    for start in range(0, B, batch):
        r = rows[start : start + batch][:, :, None]
        c = cols[start : start + batch][:, None, :]
        Zb = Z[r, c]
        wb = None if w is None else w[r, c]
        for k, X in enumerate(mats):
            out[k, start : start + batch] = level_corr(X[r, c], Zb, level, coefficient, wb, agg=aggs[k])
    return out


def _rows_identity(rows: np.ndarray) -> bool:
    return rows.strides[0] == 0 and np.array_equal(rows[0], np.arange(rows.shape[1]))


def min_resamples(confidence_level: float) -> int:
    """The fewest resamples a percentile interval at ``confidence_level`` can rest on: each tail of
    (1 - confidence_level) / 2 must hold at least one resample (40 at 95 %, 200 at 99 %).

    Examples
    --------
    >>> min_resamples(0.95), min_resamples(0.99)
    (40, 200)
    """
    return int(math.ceil(2 / (1 - confidence_level) - 1e-9))


def warn_few_resamples(n: int, confidence_level: float, what: str = "n_resamples", stacklevel: int = 4) -> None:
    """Warn (DegenerateResultWarning) when ``n`` resamples are too few for a percentile interval at the level."""
    need = min_resamples(confidence_level)
    if n < need:
        warn_degenerate(
            f"{what}={n} is too few for a {confidence_level:.0%} percentile interval: each tail of "
            f"{(1 - confidence_level) / 2:.3g} needs at least one resample beyond the bound, so at least {need} "
            "(a few thousand for bounds stable to the second decimal); the interval is not a "
            f"{confidence_level:.0%} interval", stacklevel=stacklevel)


def _valid_resamples(samples: np.ndarray, confidence_level: float) -> np.ndarray:
    """The defined resampled statistics, with the warnings (at the caller's caller) of those dropped and of too few
    left for the interval."""
    valid = samples[~np.isnan(samples)]
    warn_dropped(samples.size - valid.size, samples.size, "resamples", "the interval", stacklevel=5)
    if valid.size:
        warn_few_resamples(int(valid.size), confidence_level,
                           "n_resamples" if valid.size == samples.size else "the number of valid resamples", 5)
    return valid


def percentile_interval(samples: np.ndarray, confidence_level: float) -> ConfidenceInterval:
    if samples.size == 0:
        return ConfidenceInterval(np.nan, np.nan)
    low, high = percentile_rows(samples, confidence_level)
    return ConfidenceInterval(float(low), float(high))


def percentile_rows(samples: np.ndarray, confidence_level: float) -> np.ndarray:
    """The lower and upper percentile bounds at ``confidence_level`` along the last axis of ``samples`` (linear
    interpolation): array (2, ...)."""
    alpha = 1 - confidence_level
    return np.percentile(samples, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=-1)


def bootstrap_ci(
    X,
    Z,
    *,
    level: str = "system",
    coefficient: str = "pearson",
    resample: str = "both",
    n_resamples: int = 9999,
    confidence_level: float = 0.95,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    nan_policy: str = "raise",
    paired_inputs: bool = True,
    unjudged=None,
    method: str = "percentile",
) -> BootstrapResult:
    """Bootstrap percentile CI of the correlation between metric X and human Z (Boot-Systems/-Inputs/-Both).

    Parameters
    ----------
    X, Z : array_like (N, M)
        Metric and human scores, systems x inputs.
    level : {"system", "summary", "global"}
    coefficient : {"pearson", "spearman", "kendall"}
    resample : {"both", "systems", "inputs"}
        Boot-Both draws systems and inputs independently with replacement (the sample is
        ``X[rows][:, cols]``); Boot-Systems only rows, Boot-Inputs only columns.
    n_resamples : int
    confidence_level : float in (0, 1)
    rng : Generator, int or None
        Passed to ``numpy.random.default_rng``.
    batch : int, optional
        Resamples per chunk (memory only; results do not depend on it).
    nan_policy : {"raise", "omit"}
        See :func:`metaeval.correlate`.
    paired_inputs : bool
        False: the metric's and the humans' inputs are resampled independently (system level only; nlpstats'
        ``paired_inputs=False``, Deutsch, Dror & Roth 2022), for system scores computed over different
        documents. Draws: rows, then the humans' columns, then the metric's.
    unjudged : array_like (N, M'), optional
        The metric's scores on inputs the humans did not judge (needs ``paired_inputs=False``): the metric's
        system score is its mean over X's and these inputs together, the humans' over Z's.
    method : {"percentile", "BCa"}
        BCa (bias-corrected and accelerated, as ``scipy.stats.bootstrap``: jackknife over the resampled
        dimension) applies when one dimension is resampled (``resample="systems"`` or ``"inputs"``) on paired
        inputs; with the same ``rng`` it draws the same indices as ``scipy.stats.bootstrap(paired=True)``.

    Returns
    -------
    BootstrapResult

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(16, 50)); X = Z + rng.normal(size=(16, 50))
    >>> res = bootstrap_ci(X, Z, level="system", n_resamples=999, rng=1)
    >>> res.confidence_interval.low < res.statistic < res.confidence_interval.high
    True
    """
    check_level(level)
    check_coefficient(coefficient)
    check_resample(resample)
    check_n_resamples(n_resamples)
    check_confidence_level(confidence_level)
    check_batch(batch)
    paired_inputs = check_bool(paired_inputs, "paired_inputs")
    if method not in ("percentile", "BCa"):
        raise ValueError(f"method must be 'percentile' or 'BCa', got {method!r}")
    if not paired_inputs or unjudged is not None:
        if method != "percentile":
            raise ValueError("method='BCa' needs paired inputs; use the percentile interval with paired_inputs=False")
        return _unpaired_bootstrap(X, Z, unjudged, level, coefficient, resample, n_resamples, confidence_level, rng,
                                   batch, paired_inputs)
    if method == "BCa" and resample == "both":
        raise ValueError("method='BCa' needs one resampled dimension (its jackknife leaves out one system or one "
                         "input); use resample='systems' or 'inputs', or the percentile interval")
    X, Z = check_matrices(nan_policy, X=X, Z=Z)
    w = None if not np.isnan(X).any() else (~np.isnan(X)).astype(float)
    rng = check_rng(rng)
    N, M = X.shape
    check_memory(n_resamples, batch, n_resamples * (8.0 * (N + M) + 16), per_resample_bytes(N, M, level, coefficient))
    statistic = float(level_corr(X, Z, level, coefficient, w))
    warn_if_nan(statistic, f"the {level}-level {coefficient} correlation")
    rows, cols = draw_indices(N, M, n_resamples, resample, rng)
    batch = batch or auto_batch(N, M, level, coefficient)
    samples = resampled_corr([X], Z, rows, cols, level, coefficient, batch, w)[0]
    valid = _valid_resamples(samples, confidence_level)
    se = float(np.std(valid, ddof=1)) if valid.size > 1 else np.nan
    if method == "BCa":
        interval = _bca_interval(X, Z, w, level, coefficient, resample, statistic, valid, confidence_level)
    else:
        interval = percentile_interval(valid, confidence_level)
    return BootstrapResult(statistic, interval, valid, se, int(samples.size - valid.size))


def percentile_intervals(X, Z, *, level: str, coefficient: str, resamples: Sequence[str], n_resamples: int,
                         confidence_level: float, rng: np.random.Generator | int | None,
                         statistic: float | None = None) -> list[ConfidenceInterval]:
    """The percentile intervals of ``bootstrap_ci(X, Z, level=level, coefficient=coefficient, resample=r,
    n_resamples=n_resamples, confidence_level=confidence_level, rng=rng)`` for each r of ``resamples`` in turn,
    and the same warnings: one generator draws every resample's indices in that order, the matrices are
    validated and the correlation computed once (a simulation that bootstraps a small matrix three ways spent
    a third of its time repeating them). ``statistic``: ``float(level_corr(X, Z, level, coefficient))`` if the
    caller has it; used when validation leaves X and Z as they are (otherwise it is computed on the validated,
    possibly rescaled, matrices, as bootstrap_ci does)."""
    given = X, Z
    check_level(level)
    check_coefficient(coefficient)
    for resample in resamples:
        check_resample(resample)
    check_n_resamples(n_resamples)
    check_confidence_level(confidence_level)
    X, Z = check_matrices("raise", X=X, Z=Z)
    rng = check_rng(rng)
    N, M = X.shape
    check_memory(n_resamples, None, n_resamples * (8.0 * (N + M) + 16), per_resample_bytes(N, M, level, coefficient))
    if statistic is None or X is not given[0] or Z is not given[1]:
        statistic = float(level_corr(X, Z, level, coefficient))
    distributions = []
    for resample in resamples:
        # Python shows a warning once per line until a change of its filters resets that registry, and each
        # bootstrap_ci call's validation makes one (nanmax under warnings.catch_warnings): separate calls show
        # their warnings even when an earlier call showed the same. So that each method's are shown likewise:
        with warnings.catch_warnings():
            pass
        warn_if_nan(statistic, f"the {level}-level {coefficient} correlation")
        rows, cols = draw_indices(N, M, n_resamples, resample, rng)
        samples = resampled_corr([X], Z, rows, cols, level, coefficient, auto_batch(N, M, level, coefficient))[0]
        distributions.append(_valid_resamples(samples, confidence_level))
    if len({valid.size for valid in distributions}) == 1 and distributions[0].size:
        # one np.percentile call for all (each row's percentiles are the same floats as its own call's)
        low, high = percentile_rows(np.stack(distributions), confidence_level)
        return [ConfidenceInterval(float(a), float(b)) for a, b in zip(low, high)]
    return [percentile_interval(valid, confidence_level) for valid in distributions]


def _bca_interval(X, Z, w, level, coefficient, resample, statistic, samples, confidence_level) -> ConfidenceInterval:
    """BCa endpoints as ``scipy.stats.bootstrap`` computes them (Efron & Tibshirani 14.3, 15.4): bias from the
    share of resamples below the estimate, acceleration from the jackknife over the resampled dimension."""
    if samples.size == 0 or np.isnan(statistic):
        return ConfidenceInterval(np.nan, np.nan)
    axis = 0 if resample == "systems" else 1
    n = X.shape[axis]
    jack = np.empty(n)
    for i in range(n):
        keep = np.delete(np.arange(n), i)
        jack[i] = float(level_corr(np.take(X, keep, axis=axis), np.take(Z, keep, axis=axis), level, coefficient,
                                   None if w is None else np.take(w, keep, axis=axis)))
    jack = jack[~np.isnan(jack)]
    z0 = special.ndtri((np.count_nonzero(samples < statistic) + np.count_nonzero(samples <= statistic))
                       / (2 * samples.size))
    u = (jack.size - 1) * (jack.mean() - jack)
    a = (np.sum(u**3) / jack.size**3) / (6 * (np.sum(u**2) / jack.size**2) ** 1.5) if np.any(u) else 0.0
    z_alpha = special.ndtri((1 - confidence_level) / 2)
    alphas = [special.ndtr(z0 + (z0 + z) / (1 - a * (z0 + z))) for z in (z_alpha, -z_alpha)]
    if not np.all(np.isfinite(alphas)):
        warn_degenerate("the BCa interval is NaN (degenerate bootstrap distribution)", stacklevel=4)
        return ConfidenceInterval(np.nan, np.nan)
    low, high = np.percentile(samples, [100 * alphas[0], 100 * alphas[1]])
    return ConfidenceInterval(float(low), float(high))


def _unpaired_bootstrap(X, Z, unjudged, level, coefficient, resample, n_resamples, confidence_level, rng, batch,
                        paired_inputs) -> BootstrapResult:
    """System-level Boot-Both/-Inputs/-Systems with the metric's and the humans' inputs resampled
    independently (the metric's pool being X's inputs plus ``unjudged``)."""
    if paired_inputs:
        raise ValueError("unjudged needs paired_inputs=False: the metric's and the humans' inputs differ")
    if level != "system":
        raise ValueError(f"paired_inputs=False applies at level='system' only (a summary- or global-level "
                         f"correlation pairs each metric score with a human score), got level={level!r}")
    X, Z = check_matrices("raise", X=X, Z=Z)
    pool = X
    if unjudged is not None:
        try:
            U = np.asarray(unjudged, dtype=float)
        except (TypeError, ValueError):
            raise TypeError("unjudged must be a numeric N x M' matrix (systems x unjudged inputs)") from None
        if U.ndim != 2 or U.shape[0] != X.shape[0] or U.shape[1] < 1:
            raise ValueError(f"unjudged must be a matrix with X's {X.shape[0]} systems as rows and one column per "
                             f"unjudged input, got shape {U.shape}")
        if not np.isfinite(U).all():
            raise ValueError("unjudged contains NaN or infinite values; every system needs a score on every input")
        pool = np.hstack([X, U])
    rng = check_rng(rng)
    N, M = Z.shape
    P = pool.shape[1]
    check_memory(n_resamples, batch, n_resamples * (8.0 * (N + M + P) + 16), 32.0 * (N * (M + P)))
    statistic = float(system_corr(pool.mean(axis=1), Z.mean(axis=1), coefficient))
    warn_if_nan(statistic, f"the system-level {coefficient} correlation")
    rows, zcols = draw_indices(N, M, n_resamples, resample, rng)
    xcols = (rng.integers(0, P, size=(n_resamples, P)) if resample in ("both", "inputs")
             else np.broadcast_to(np.arange(P), (n_resamples, P)))
    batch = batch or auto_batch(N, max(M, P), level, coefficient)
    samples = np.empty(n_resamples)
    for start in range(0, n_resamples, batch):
        r = rows[start : start + batch]
        cz = draw_counts(zcols[start : start + batch], M)
        cx = draw_counts(xcols[start : start + batch], P)
        # einsum: the same summation order whatever the chunk size
        zs = np.take_along_axis(np.einsum("bm,nm->bn", cz, Z), r, axis=1) / M
        xs = np.take_along_axis(np.einsum("bm,nm->bn", cx, pool), r, axis=1) / P
        samples[start : start + batch] = system_corr(xs, zs, coefficient)
    valid = _valid_resamples(samples, confidence_level)
    se = float(np.std(valid, ddof=1)) if valid.size > 1 else np.nan
    return BootstrapResult(statistic, percentile_interval(valid, confidence_level), valid, se,
                           int(samples.size - valid.size))
