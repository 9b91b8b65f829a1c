"""Tests of one metric against many candidates, sharing the random draws (:class:`SharedDrawTests`).

The power study of Deutsch, Dror & Roth (2021) compares ROUGE-1 with eleven degraded copies of it in each of a
thousand trials: one draw of coins or indices per test and trial, shared by every candidate and level, and the
resampled sums of all candidates at once, make it several times faster than one test at a time
(``benchmarks/REPORT.md``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from metaeval._warnings import warn_degenerate
from metaeval.stats._kernels import (
    bootstrap_pvalue,
    coins,
    pearson_rows,
    perm_summary_pearson,
    permutation_pvalue,
    standardize,
)
from metaeval.stats.correlation import (
    check_matrices,
    check_rng,
    effective_n,
    level_corr,
)
from metaeval.stats.resampling import (
    RESAMPLE_METHODS,
    auto_batch,
    check_n_resamples,
    draw_indices,
    resampled_corr,
    warn_dropped,
)
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


class SharedDrawTests:
    """One-sided tests of "X correlates more strongly with Z than candidate Y_k does", for many candidates at
    once, sharing the random draws (Pearson, system and summary level): the batched form of
    :func:`~metaeval.stats.significance.pairwise_tests` for one metric against many.

    :meth:`pvalues` draws one set of permutation coins per permutation test and one set of bootstrap indices
    per bootstrap test, which every candidate and both levels share, and gives each test's p-values
    (``permutation_test``'s and ``bootstrap_test``'s statistics and p-value rules; Williams' test draws nothing).
    The bootstrap tests take every candidate through ``bootstrap_ci``'s kernels at once; the permutation tests'
    permuted system means are matrix products of the coins with the stacked matrices of every candidate, and
    their summary level is ``permutation_test``'s compiled kernel, every candidate reading the same coins.
    Permutations are processed in fixed chunks, so results do not depend on memory.

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
        X, Z = self.X, self.Z
        mats = [X, *Ys]
        deltas = {}
        for level in self.levels:
            # every matrix on the same resamples, by bootstrap_ci's kernels
            corr = resampled_corr(mats, Z, rows, cols, level, "pearson", auto_batch(self.N, self.M, level, "pearson"))
            deltas[level] = corr[0] - corr[1:]
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
