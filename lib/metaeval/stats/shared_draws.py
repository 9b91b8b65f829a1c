"""Tests of one metric against many candidates, sharing the random draws (:class:`SharedDrawTests`).

The power study of Deutsch, Dror & Roth (2021) compares ROUGE-1 with eleven degraded copies of it in each of a
thousand trials: one draw of coins or indices per test and trial, shared by every candidate and level, and the
resampled sums of all candidates at once, make it several times faster than one test at a time
(``benchmarks/REPORT.md``).
"""

from __future__ import annotations

from typing import Sequence

import numba
import numpy as np

from metaeval._warnings import warn_degenerate
from metaeval.stats._kernels import (
    bootstrap_pvalue,
    coins,
    draw_counts,
    pearson_row,
    pearson_rows,
    perm_summary_pearson,
    permutation_pvalue,
    standardize,
)
from metaeval.stats.correlation import (
    batch_corr,
    check_matrices,
    check_rng,
    effective_n,
    level_corr,
    mean_of_defined,
)
from metaeval.stats.resampling import RESAMPLE_METHODS, check_n_resamples, draw_indices, warn_dropped
from metaeval.stats.significance import PERMUTATION_METHODS, williams_pvalue

__all__ = ["SharedDrawTests", "TESTS", "check_tests"]

#: the tests :class:`SharedDrawTests` runs
TESTS = ("williams", *(f"perm-{m}" for m in PERMUTATION_METHODS), *(f"boot-{m}" for m in RESAMPLE_METHODS))


def check_tests(tests: Sequence[str]) -> None:
    """A non-empty list of names of :data:`TESTS`, or a one-line error naming the choices."""
    if isinstance(tests, str) or not len(tests):
        raise ValueError(f"tests must be a non-empty list of test names, e.g. ['perm-both', 'williams'], got {tests!r}")
    for test in tests:
        if test not in TESTS:
            raise ValueError(f"test must be one of {TESTS}, got {test!r}")


@numba.njit(cache=True)
def _all_distinct(raw):  # pragma: no cover - compiled
    """(J, M): whether the N values of each column of each matrix are all different."""
    J, N, M = raw.shape
    out = np.ones((J, M), np.bool_)
    for j in range(J):
        for m in range(M):
            col = np.sort(raw[j, :, m])
            for n in range(1, N):
                if col[n] == col[n - 1]:
                    out[j, m] = False
                    break
    return out


@numba.njit(cache=True)
def _boot_summary_from_sums(S, raw, Zraw, rows, cols, distinct, z_distinct):  # pragma: no cover - compiled
    """Summary-level Pearson of each matrix X_j with Z on every bootstrap resample (rows and columns drawn),
    given the sums over each resample's drawn systems (with multiplicity) ``S`` (B, 2 + 3J, M): of Z and Z^2,
    then of every X_j, of X_j^2 and of X_j Z, each centred per column (one matrix product of the draw counts
    with the stacked values, made by the caller).

    ``raw`` (J, N, M), ``Zraw``: the values, on which constancy is decided exactly (a column of distinct
    values is constant only when a single system was drawn: ``distinct``, ``z_distinct``). The correlation
    is the mean of the defined per-input r over the drawn inputs (with multiplicity). Returns the means
    (J, B), the per-input r (J, B, M) and the ``weak`` cells the caller recomputes. O(J B M)."""
    J, N, M = raw.shape
    B = rows.shape[0]
    r = np.empty((J, B, M))
    means = np.empty((J, B))
    weak = np.zeros((J, B, M), np.bool_)
    for b in range(B):
        cnt = np.zeros(N)
        colcnt = np.zeros(M)
        z_def = np.zeros(M, np.bool_)
        defined = np.zeros(M, np.bool_)
        for i in range(N):
            cnt[rows[b, i]] += 1.0
        single = cnt[rows[b, 0]] == N
        for i in range(cols.shape[1]):
            colcnt[cols[b, i]] += 1.0
        first = rows[b, 0]
        for m in range(M):
            if z_distinct[m]:
                z_def[m] = not single
                continue
            z_def[m] = False
            for i in range(1, N):
                if Zraw[rows[b, i], m] != Zraw[first, m]:
                    z_def[m] = True
                    break
        for j in range(J):
            Xr = raw[j]
            for m in range(M):
                if not z_def[m]:
                    defined[m] = False
                elif distinct[j, m]:
                    defined[m] = not single
                else:
                    defined[m] = False
                    for i in range(1, N):
                        if Xr[rows[b, i], m] != Xr[first, m]:
                            defined[m] = True
                            break
            means[j, b] = pearson_row(N, S[b, 2 + j], S[b, 0], S[b, 2 + J + j], S[b, 1], S[b, 2 + 2 * J + j],
                                       defined, colcnt, r[j, b], weak[j, b])
    return means, r, weak


class SharedDrawTests:
    """One-sided tests of "X correlates more strongly with Z than candidate Y_k does", for many candidates at
    once, sharing the random draws (Pearson, system and summary level): the batched form of
    :func:`~metaeval.stats.significance.pairwise_tests` for one metric against many.

    :meth:`pvalues` draws one set of permutation coins per permutation test and one set of bootstrap indices
    per bootstrap test, which every candidate and both levels share, and gives each test's p-values
    (``permutation_test``'s and ``bootstrap_test``'s statistics and p-value rules; Williams' test draws nothing).
    System level: resampled or permuted system means are matrix products of the resampling weights with the
    stacked matrices of every candidate. Summary level: compiled kernels accumulate each input's sums over the
    drawn or swapped cells and decide constancy exactly on the values, as the single tests do; the few cells
    whose variance lost its digits are recomputed from their values. Resamples are processed in fixed chunks,
    so results do not depend on memory.

    Parameters
    ----------
    X, Z : ndarray (N, M)
        The metric every candidate is compared with, and the human scores.
    levels : sequence of {"system", "summary"}
    n_resamples : int

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(6, 12)); X = Z + rng.normal(size=Z.shape)
    >>> candidates = np.stack([Z + s * rng.normal(size=Z.shape) for s in (3.0, 0.5)])
    >>> p = SharedDrawTests(X, Z, levels=("system",), n_resamples=199).pvalues(candidates, ["perm-both"], rng=1)
    >>> p["perm-both", "system"].shape
    (2,)
    """

    def __init__(self, X, Z, *, levels: Sequence[str] = ("system", "summary"), n_resamples: int = 1000):
        X, Z = check_matrices("raise", X=X, Z=Z)
        check_n_resamples(n_resamples)
        if isinstance(levels, str) or not len(levels) or not set(levels) <= {"system", "summary"}:
            raise ValueError(f"levels must be a non-empty list of 'system' and 'summary', got {levels!r}")
        levels = tuple(levels)
        self.X, self.Z, self.levels, self.B = X, Z, levels, n_resamples
        self.N, self.M = X.shape
        self.Xs = standardize(X)
        self.r_xz = {lv: float(level_corr(X, Z, lv, "pearson")) for lv in levels}
        self.rs_xz = {lv: float(level_corr(self.Xs, Z, lv, "pearson")) for lv in levels}
        self.Zc = np.ascontiguousarray(Z - Z.mean(axis=0))
        # resamples per chunk: the largest temporaries are about 24 x chunk x N x M bytes per matrix
        self.chunk = int(max(1, min(n_resamples, 2**22 // (self.N * self.M))))

    def pvalues(self, candidates, tests: Sequence[str], rng) -> dict[tuple[str, str], np.ndarray]:
        """p-values of H1 "r(X, Z) > r(Y_k, Z)" for every candidate Y_k of ``candidates`` (K, N, M), test of
        ``tests`` ("williams", "perm-<method>", "boot-<method>") and level: ``{(test, level): array (K,)}``."""
        Ys = np.asarray(candidates, dtype=float)
        if Ys.ndim != 3 or Ys.shape[1:] != self.X.shape:
            raise ValueError(f"candidates must be an array (K, N, M) of matrices shaped like X {self.X.shape}, "
                             f"got shape {Ys.shape}")
        check_tests(tests)
        rng = check_rng(rng)
        out: dict[tuple[str, str], np.ndarray] = {}
        # An R_k equal to X (k = 100%) has a null distribution of exact zeros (both metrics are the same
        # matrix in every resample), so its resampling p-value is known without resampling: 1, or NaN when
        # the correlation itself is undefined. Only the other values of k are resampled.
        same = np.array([np.array_equal(Y, self.X) for Y in Ys])
        # an R_k that kept no token of any summary (tiny texts, small k) is constant: no correlation, no test
        constant = np.array([np.nanmax(Y) == np.nanmin(Y) for Y in Ys]) & ~same
        if constant.any() and any(t != "williams" for t in tests):
            warn_degenerate(f"R_k is constant in {int(constant.sum())} of {len(Ys)} values of k (no token kept, or "
                            "every score equal): its correlation is undefined, so its resampling p-values are NaN")
        tested = ~same & ~constant
        differ = Ys[tested]
        for test in tests:
            if test == "williams":
                for level in self.levels:
                    r13 = level_corr(Ys, self.Z[None], level, "pearson")
                    r23 = level_corr(self.X[None], Ys, level, "pearson")
                    n = effective_n(self.X, level=level)  # type: ignore[arg-type]
                    p = np.asarray(williams_pvalue(self.r_xz[level], r13, r23, n, "greater")[1], dtype=float)
                    # r(X, R_k) = +-1 (k = 1): nothing to test, NaN as williams_test says (not t = 0, p = 0.5)
                    out[test, level] = np.where(np.abs(np.asarray(r23, dtype=float)) == 1.0, np.nan, p)
                continue
            # the draws are made even when every R_k equals X, so the random stream does not depend on it
            if test.startswith("perm-"):
                bits = self._coins(rng, test[5:])
                pvalues = self._permutation(differ, bits) if len(differ) else {}
            else:
                rows, cols = draw_indices(self.N, self.M, self.B, test[5:], rng)
                pvalues = self._bootstrap(differ, rows, cols) if len(differ) else {}
            for level in self.levels:
                p = np.full(len(Ys), np.nan)
                p[tested] = pvalues.get(level, [])
                if same.any():
                    observed = 0.0 if np.isfinite(self.r_xz[level]) else np.nan
                    zeros = np.zeros(self.B)
                    p[same] = (permutation_pvalue(zeros, observed, "greater", 0, self.B) if test.startswith("perm-")
                               else np.nan if np.isnan(observed) else bootstrap_pvalue(zeros, 0.0, "greater"))
                out[test, level] = p
        return out

    # -- permutation tests (Alg. 2): swap the standardized scores of X and Y_k in the coins' cells

    def _coins(self, rng: np.random.Generator, method: str) -> np.ndarray:
        """Swap indicators as (M, B, N) uint8. Perm-Both's are independent fair bits, a random byte per input,
        permutation and 8 systems (the law of :func:`~metaeval.stats.significance.permutation_test`'s coins, another
        mapping of random bits to cells); the structured methods come from the single test's function."""
        N, M, B = self.N, self.M, self.B
        if method == "both":
            packed = rng.integers(0, 256, size=(M, B, (N + 7) // 8), dtype=np.uint8)
            return np.unpackbits(packed, axis=-1, count=N, bitorder="little")
        return np.ascontiguousarray(coins(rng, (B,), N, M, method).transpose(2, 0, 1), dtype=np.uint8)

    def _permutation(self, Ys: np.ndarray, bits: np.ndarray) -> dict[str, np.ndarray]:
        K, M, B = Ys.shape[0], self.M, self.B
        Xs, Z = self.Xs, self.Z
        Yss = np.stack([standardize(Y) for Y in Ys])
        D = np.ascontiguousarray((Yss - Xs).transpose(1, 2, 0))  # (N, M, K): what a swap adds to X's cell
        nulls = {level: np.empty((K, B)) for level in self.levels}
        for start in range(0, B, self.chunk):
            c = bits[:, start : start + self.chunk]  # (M, b, N)
            b = c.shape[1]
            if "system" in self.levels:
                # shift[k, b, n] = sum_m coins[b, n, m] D[k, n, m] / M: one matrix product per system
                cf = np.ascontiguousarray(c.transpose(2, 1, 0), dtype=float)  # (N, b, M)
                shift = np.matmul(cf, D).transpose(2, 1, 0) / M
                zs = Z.mean(axis=1)
                xs = Xs.mean(axis=1) + shift
                ys = Yss.mean(axis=2)[:, None, :] - shift
                nulls["system"][:, start : start + b] = pearson_rows(xs, zs) - pearson_rows(ys, zs)
            if "summary" in self.levels:
                # every candidate reads the same packed coins (b, N, M): one call of permutation_test's kernel
                packed = np.packbits(c.transpose(1, 2, 0))
                nulls["summary"][:, start : start + b] = perm_summary_pearson(
                    np.broadcast_to(Xs, Yss.shape), Yss, np.broadcast_to(Z, Yss.shape), packed, np.zeros(K, np.int64),
                    b)
        pvalues = {}
        for level in self.levels:
            observed = self.rs_xz[level] - level_corr(Yss, Z[None], level, "pearson")
            pvalues[level] = np.array([
                permutation_pvalue(null[~np.isnan(null)], float(obs), "greater", int(np.isnan(null).sum()), B)
                for null, obs in zip(nulls[level], observed)
            ])
        return pvalues

    # -- paired bootstrap tests: the same rows and columns of X, Y_k and Z

    def _bootstrap(self, Ys: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> dict[str, np.ndarray]:
        K, N, M, B = Ys.shape[0], self.N, self.M, self.B
        X, Z = self.X, self.Z
        deltas = {level: np.empty((K, B)) for level in self.levels}
        raw = np.ascontiguousarray(np.concatenate([X[None], Ys]))  # (K + 1, N, M)
        if "summary" in self.levels:
            # each resample's sums over its drawn systems, of every matrix at once: draw counts (b, N) times
            # the centred values, their squares and their products with Z, stacked as (N, (2 + 3 (K + 1)) M)
            centred = raw - raw.mean(axis=1, keepdims=True)
            stacked = np.concatenate([self.Zc[None], self.Zc[None] ** 2, centred, centred**2, centred * self.Zc])
            stacked = np.ascontiguousarray(stacked.transpose(1, 0, 2).reshape(N, -1))
            distinct = _all_distinct(raw)
            z_distinct = _all_distinct(Z.reshape(1, N, M))[0]
        for start in range(0, B, self.chunk):
            r, c = rows[start : start + self.chunk], cols[start : start + self.chunk]
            b = r.shape[0]
            if "system" in self.levels:
                counts = draw_counts(c, M)  # (b, M): how often each input was drawn
                sums = counts @ np.concatenate([Z, raw.reshape((K + 1) * N, M)]).T  # (b, (K + 2) N)
                sums = np.take_along_axis(sums.reshape(b, K + 2, N), r[:, None, :], axis=2) / M
                corr = pearson_rows(sums[:, 1:].transpose(1, 0, 2), sums[:, 0][None])  # (K + 1, b)
                deltas["system"][:, start : start + b] = corr[0] - corr[1:]
            if "summary" in self.levels:
                S = (draw_counts(r, N) @ stacked).reshape(b, -1, M)
                means, per_input, weak = _boot_summary_from_sums(S, raw, Z, np.ascontiguousarray(r),
                                                                 np.ascontiguousarray(c), distinct, z_distinct)
                for j, bb in {(j, bb) for j, bb, _ in zip(*np.nonzero(weak))} if weak.any() else ():
                    # the variance lost its digits in the sums: r from the drawn values themselves
                    for m in np.flatnonzero(weak[j, bb]):
                        per_input[j, bb, m] = batch_corr(raw[j, r[bb], m], Z[r[bb], m], "pearson")
                    means[j, bb] = mean_of_defined(per_input[j, bb][c[bb]])
                deltas["summary"][:, start : start + b] = means[0] - means[1:]
        pvalues = {}
        for level in self.levels:
            observed = self.r_xz[level] - level_corr(Ys, Z[None], level, "pearson")
            ps = []
            for d, obs in zip(deltas[level], observed):
                valid = d[~np.isnan(d)]
                if np.isnan(obs):
                    ps.append(np.nan)
                    continue
                warn_dropped(d.size - valid.size, d.size, "resamples", "the p-value")
                ps.append(bootstrap_pvalue(valid, float(obs), "greater"))
            pvalues[level] = np.array(ps)
        return pvalues
