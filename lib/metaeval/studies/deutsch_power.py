"""Deutsch, Dror & Roth (2021), Figure 3: how often does each test find that ROUGE-1 correlates better with
the human scores than R_k, ROUGE-1 on a random k % of each summary's tokens? (``notebooks/21_deutsch2021_power.py``)

* :class:`RougeOneSubsampler` (R_k), :func:`power_simulation` (the trials, batched over k and levels for
  Pearson) and :func:`power_table` (rejection rates).

Every name here is also reachable as ``metaeval.studies.deutsch.<name>``. Every trial draws from its own child
generator (``rng.spawn``), so results do not depend on how trials are scheduled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numba
import numpy as np
import pandas as pd

from metaeval.stats._kernels import (
    bootstrap_pvalue,
    coins,
    draw_counts,
    pearson_row,
    perm_summary_shared,
    permutation_pvalue,
    standardize,
)
from metaeval.stats._planning_kernels import _check_alpha, _check_choice, _check_trials
from metaeval.stats.correlation import (
    COEFFICIENTS,
    FISHER_COEFFICIENTS,
    batch_corr,
    check_coefficient,
    check_level,
    effective_n,
    level_corr,
    mean_of_defined,
)
from metaeval._warnings import warn_degenerate
from metaeval.stats.resampling import RESAMPLE_METHODS, check_n_resamples, draw_indices, warn_dropped
from metaeval.stats.significance import (
    PERMUTATION_METHODS,
    bootstrap_test,
    permutation_test,
    williams_pvalue,
    williams_test,
)

__all__ = ["RougeOneSubsampler", "power_simulation", "power_table"]


def _progress(iterable, enabled: bool, **kwargs):
    if not enabled:
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, **kwargs)


@numba.njit(cache=True)
def _subset_hits(tok, tok_off, ref_tok, ref_off, order, counts, out, n_vocab):  # pragma: no cover - compiled
    """Clipped unigram hits of the first counts[q, s] tokens of each summary s in a random order."""
    budget = np.zeros(n_vocab, np.int64)
    for s in range(tok_off.shape[0] - 1):
        a, b = tok_off[s], tok_off[s + 1]
        ra, rb = ref_off[s], ref_off[s + 1]
        L = b - a
        for i in range(ra, rb):
            budget[ref_tok[i]] += 1
        cum = np.zeros(L + 1, np.int64)
        for p in range(L):
            t = tok[a + order[a + p]]
            hit = 0
            if budget[t] > 0:
                budget[t] -= 1
                hit = 1
            cum[p + 1] = cum[p] + hit
        for q in range(counts.shape[0]):
            out[q, s] = cum[counts[q, s]]
        for i in range(ra, rb):
            budget[ref_tok[i]] = 0


@numba.njit(cache=True)
def _segment_order(keys, off):  # pragma: no cover - compiled
    """Within each segment, the positions sorted by their keys (stable): ``np.lexsort((keys, segment))``
    minus the segment starts, one small sort per segment."""
    order = np.empty(keys.shape[0], np.int64)
    for s in range(off.shape[0] - 1):
        a, b = off[s], off[s + 1]
        order[a:b] = np.argsort(keys[a:b], kind="mergesort")
    return order


@dataclass
class RougeOneSubsampler:
    """ROUGE-1 (ROUGE-1.5.5 tokens) of each summary's tokens, or of a random k% of them (Deutsch et al.'s R_k).

    Parameters
    ----------
    summaries, references : sequences (N*M,) in the dataset's cell order
    stem, stop : bool
        ROUGE-1.5.5 ``-m`` and ``-s``.
    stat : {"F", "R", "P"}
        The paper uses F1 on SummEval (recall on datasets where ROUGE recall was the metric).
    """

    summaries: Sequence[str]
    references: Sequence[str]
    stem: bool = True
    stop: bool = False
    stat: str = "F"

    def __post_init__(self):
        from metaeval.metrics.text import process_tokens, tokenize

        if self.stat not in ("F", "R", "P"):
            raise ValueError(f"stat must be 'F', 'R' or 'P', got {self.stat!r}")
        vocab: dict[str, int] = {}

        def ids(text):
            tokens = process_tokens(tokenize(text), stem=self.stem, stop=self.stop)
            return [vocab.setdefault(t, len(vocab)) for t in tokens]

        peer = [ids(s) for s in self.summaries]
        ref = [ids(r) for r in self.references]
        self.tok = np.array([t for p in peer for t in p], np.int64)
        self.tok_off = np.concatenate([[0], np.cumsum([len(p) for p in peer])]).astype(np.int64)
        self.ref_tok = np.array([t for r in ref for t in r], np.int64)
        self.ref_off = np.concatenate([[0], np.cumsum([len(r) for r in ref])]).astype(np.int64)
        self.peer_len = np.diff(self.tok_off).astype(float)
        self.ref_len = np.diff(self.ref_off).astype(float)
        self.n_vocab = max(len(vocab), 1)

    def sample(self, ks: Sequence[float] | np.ndarray, rng) -> np.ndarray:
        """R_k for every k: array (len(ks), n_summaries). Each summary's tokens are put in one random order
        and R_k uses its first int(len * k) tokens (a uniformly random subset without replacement for each k;
        the subsets of one call are nested)."""
        ks = np.asarray(ks, float)
        if ((ks <= 0) | (ks > 1)).any():
            raise ValueError("ks must be fractions in (0, 1]")
        rng = np.random.default_rng(rng)
        keys = rng.random(self.tok.shape[0])
        order = _segment_order(keys, self.tok_off)  # position within its summary, in random order
        # int(len * k) tokens, as the paper's code; computed once here so kernel and scores agree
        counts = (np.diff(self.tok_off)[None, :] * ks[:, None]).astype(np.int64)
        hits = np.zeros(counts.shape, np.int64)
        _subset_hits(self.tok, self.tok_off, self.ref_tok, self.ref_off, order.astype(np.int64), counts, hits,
                     self.n_vocab)
        return self._score(hits.astype(float), counts.astype(float))

    def full(self) -> np.ndarray:
        """ROUGE-1 of the whole summaries (k = 100 %): array (n_summaries,)."""
        return self.sample([1.0], 0)[0]

    def _score(self, hits, peer_count):
        with np.errstate(invalid="ignore", divide="ignore"):
            R = np.where(self.ref_len > 0, hits / self.ref_len, 0.0)
            P = np.where(peer_count > 0, hits / peer_count, 0.0)
            F = np.where(P + R > 0, 2 * P * R / (P + R), 0.0)
        return {"F": F, "R": R, "P": P}[self.stat]


def power_simulation(
    full: np.ndarray,
    sampler: RougeOneSubsampler,
    Z: np.ndarray,
    *,
    ks: Sequence[float] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    n_trials: int = 1000,
    n_resamples: int = 1000,
    tests: Sequence[str] = ("boot-both", "perm-both", "williams"),
    levels: Sequence[str] = ("system", "summary"),
    coefficient: str = "pearson",
    alpha: float = 0.05,
    rng=None,
    progress: bool = False,
    batched: bool = True,
) -> pd.DataFrame:
    """Power of each test to find that ROUGE-1 (``full``) correlates more strongly than R_k.

    Returns one row per trial x k x level x test with the one-sided p-value and whether it rejects at
    ``alpha``. At k = 1 the two metrics are identical, so the rejection rate estimates the type-I error.

    Each trial draws R_k for every k from its own child generator (``rng.spawn``). With ``batched=True``
    (Pearson at system and summary level; other settings run one test at a time) the trial then draws one
    set of permutation coins per permutation test and one set of bootstrap indices per bootstrap test, which
    every k and both levels share, and computes the resampled sums of all k at once with matrix products:
    ~20x faster than ``batched=False``, which runs :func:`~metaeval.stats.significance.permutation_test`,
    :func:`~metaeval.stats.significance.bootstrap_test` and :func:`~metaeval.stats.significance.williams_test`
    once per k, level and test with fresh draws. Each test keeps its exact distribution (only the draws are
    shared across k and levels, so the rejection rates agree within Monte-Carlo error; Williams' p-values,
    which draw nothing, are identical). Memory: the coins (B x N x M float64) and the resampled sums
    (about B x M x (3K + 10) float64 for K values of k), e.g. 40 MB for SummEval's 16 x 100 with B = 1000.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> texts = [" ".join(rng.choice(list("abcdefghij"), 30)) for _ in range(5 * 8)]
    >>> sampler = RougeOneSubsampler(texts, texts[::-1])
    >>> Z = rng.normal(size=(5, 8)) + sampler.full().reshape(5, 8)
    >>> trials = power_simulation(sampler.full(), sampler, Z, ks=(0.3, 1.0), n_trials=3, n_resamples=99, rng=1)
    >>> trials.shape, sorted(trials["test"].unique())
    ((36, 6), ['boot-both', 'perm-both', 'williams'])
    >>> trials[trials["k"] == 1.0]["reject"].any()   # identical metrics: no test rejects
    np.False_
    """
    Z = np.asarray(Z, float)
    if Z.ndim != 2:
        raise ValueError(f"Z must be a systems x inputs matrix, got shape {Z.shape}")
    N, M = Z.shape
    full = np.asarray(full, float)
    if full.size != N * M:
        raise ValueError(f"full must hold one score per cell of Z ({N} x {M} = {N * M}), got {full.size}")
    X = full.reshape(N, M)
    _check_power_options(ks, n_trials, n_resamples, tests, levels, coefficient, alpha)
    rng = np.random.default_rng(rng)
    fast = batched and coefficient == "pearson" and set(levels) <= {"system", "summary"}
    batched_trial = _BatchedPowerTrial(X, Z, tuple(levels), n_resamples) if fast else None
    rows = []
    for trial, child in enumerate(_progress(rng.spawn(n_trials), progress, desc="trials")):
        Rk = sampler.sample(ks, child)
        if batched_trial is not None:
            pvalues = batched_trial.run(Rk.reshape(len(ks), N, M), tests, child)
            for q, k in enumerate(ks):
                for level in levels:
                    for test in tests:
                        rows.append((trial, float(k), level, test, float(pvalues[test, level][q])))
            continue
        for q, k in enumerate(ks):
            Y = Rk[q].reshape(N, M)
            for level in levels:
                for test in tests:
                    if test == "williams":
                        p = williams_test(X, Y, Z, level=level, coefficient=coefficient, alternative="greater").pvalue
                    elif test.startswith("perm-"):
                        p = permutation_test(X, Y, Z, level=level, coefficient=coefficient, resample=test[5:],
                                             n_resamples=n_resamples, rng=child).pvalue
                    else:
                        p = bootstrap_test(X, Y, Z, level=level, coefficient=coefficient, resample=test[5:],
                                           n_resamples=n_resamples, rng=child).pvalue
                    rows.append((trial, float(k), level, test, float(p)))
    frame = pd.DataFrame(rows, columns=["trial", "k", "level", "test", "pvalue"])
    frame["reject"] = frame["pvalue"] < alpha
    return frame


def _check_power_options(ks, n_trials, n_resamples, tests, levels, coefficient, alpha) -> None:
    """Every option of :func:`power_simulation`, checked once, before any trial, by the validators the single
    tests and the planner use (the batched path calls the kernels directly, which check nothing)."""
    _check_trials(n_trials)
    check_n_resamples(n_resamples)
    _check_alpha(alpha)
    k = np.asarray(ks, dtype=float) if not isinstance(ks, (str, bytes)) else np.array([np.nan])
    if k.ndim != 1 or k.size == 0 or not np.all((k > 0) & (k <= 1)):
        raise ValueError(f"ks must be a non-empty list of token shares in (0, 1], got {ks!r}")
    if isinstance(tests, str) or not len(tests):
        raise ValueError(f"tests must be a non-empty list of test names, e.g. ['perm-both', 'williams'], got {tests!r}")
    allowed = ("williams", *(f"perm-{m}" for m in PERMUTATION_METHODS), *(f"boot-{m}" for m in RESAMPLE_METHODS))
    for test in tests:
        _check_choice("test", test, allowed)
    if isinstance(levels, str) or not len(levels):
        raise ValueError(f"levels must be a non-empty list of levels, e.g. ['system', 'summary'], got {levels!r}")
    for level in levels:
        check_level(level)
    # Williams' test needs a coefficient with Fisher constants; the resampling tests take any built-in one
    check_coefficient(coefficient, FISHER_COEFFICIENTS if "williams" in tests else COEFFICIENTS)


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


@numba.njit(cache=True)
def _pearson_rows(x, z):  # pragma: no cover - compiled
    """Pearson r of every row of ``x`` (R, N) with ``z`` (R or 1, N), as :func:`metaeval.correlation.batch_corr`
    computes it: centred sums, NaN where a row is constant (decided exactly on the values), clipped."""
    R, N = x.shape
    out = np.empty(R)
    for i in range(R):
        zi = z[i] if z.shape[0] > 1 else z[0]
        mx = 0.0
        mz = 0.0
        x_const = True
        z_const = True
        for n in range(N):
            mx += x[i, n]
            mz += zi[n]
            x_const = x_const and x[i, n] == x[i, 0]
            z_const = z_const and zi[n] == zi[0]
        mx /= N
        mz /= N
        sxz = 0.0
        sxx = 0.0
        szz = 0.0
        for n in range(N):
            a = x[i, n] - mx
            c = zi[n] - mz
            sxz += a * c
            sxx += a * a
            szz += c * c
        if x_const or z_const or not (sxx > 0 and szz > 0):
            out[i] = np.nan
        else:
            out[i] = min(1.0, max(-1.0, sxz / np.sqrt(sxx * szz)))
    return out


def _system_pearson(xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
    """Pearson of system scores ``xs`` (..., N) with ``zs`` (..., N) or (N,), over the last axis."""
    x = np.ascontiguousarray(xs.reshape(-1, xs.shape[-1]))
    z = np.ascontiguousarray(np.broadcast_to(zs, xs.shape).reshape(-1, xs.shape[-1]) if zs.ndim > 1 else zs[None])
    return _pearson_rows(x, z).reshape(xs.shape[:-1])


class _BatchedPowerTrial:
    """The tests of one power-simulation trial for all k at once (Pearson, system and summary level).

    System level: resampled or permuted system means are matrix products of the resampling weights with
    the stacked matrices of every k. Summary level: compiled kernels accumulate each input's sums over
    the drawn or swapped cells and decide constancy exactly on the values, as the single tests do; the
    few cells whose variance lost its digits are recomputed from their values. Resamples are processed in
    fixed chunks, so results do not depend on memory.
    """

    def __init__(self, X: np.ndarray, Z: np.ndarray, levels: tuple[str, ...], n_resamples: int):
        self.X, self.Z, self.levels, self.B = X, Z, levels, n_resamples
        self.N, self.M = X.shape
        self.Xs = standardize(X)
        self.r_xz = {lv: float(level_corr(X, Z, lv, "pearson")) for lv in levels}
        self.rs_xz = {lv: float(level_corr(self.Xs, Z, lv, "pearson")) for lv in levels}
        self.Zc = np.ascontiguousarray(Z - Z.mean(axis=0))
        # resamples per chunk: the largest temporaries are about 24 x chunk x N x M bytes per matrix
        self.chunk = int(max(1, min(n_resamples, 2**22 // (self.N * self.M))))

    def run(self, Ys: np.ndarray, tests: Sequence[str], rng: np.random.Generator) -> dict:
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
                bits, packed = self._coins(rng, test[5:])
                pvalues = self._permutation(differ, bits, packed) if len(differ) else {}
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

    def _coins(self, rng: np.random.Generator, method: str) -> tuple[np.ndarray, np.ndarray]:
        """Swap indicators as (M, B, N) uint8 and packed 8 systems per byte (M, B, ceil(N / 8)).

        Perm-Both's coins are independent fair bits: random bytes are drawn directly in packed form (the same
        law as :func:`~metaeval.stats.significance.permutation_test`'s, another mapping of random bits to
        cells); the structured methods come from the same function as the single test."""
        N, M, B = self.N, self.M, self.B
        if method == "both":
            packed = rng.integers(0, 256, size=(M, B, (N + 7) // 8), dtype=np.uint8)
            if N % 8:
                packed[:, :, -1] &= np.uint8((1 << (N % 8)) - 1)  # no coins for systems that do not exist
            bits = np.unpackbits(packed, axis=-1, count=N, bitorder="little")
        else:
            bits = np.ascontiguousarray(coins(rng, (B,), N, M, method).transpose(2, 0, 1), dtype=np.uint8)
            packed = np.packbits(bits, axis=-1, bitorder="little")
        return bits, packed

    def _permutation(self, Ys: np.ndarray, bits: np.ndarray, packed: np.ndarray) -> dict[str, np.ndarray]:
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
                nulls["system"][:, start : start + b] = _system_pearson(xs, zs) - _system_pearson(ys, zs)
            if "summary" in self.levels:
                means, r, weak = perm_summary_shared(Xs, Yss, self.Zc, Z, np.ascontiguousarray(c),
                                                      np.ascontiguousarray(packed[:, start : start + b]))
                for which, k, bb, m in zip(*np.nonzero(weak)) if weak.any() else ():
                    # the variance lost its digits in the sums: r from the permuted values themselves
                    swap = c[m, bb] > 0
                    first, second = (Yss[k, :, m], Xs[:, m]) if which == 0 else (Xs[:, m], Yss[k, :, m])
                    r[which, k, bb, m] = batch_corr(np.where(swap, first, second), Z[:, m], "pearson")
                    means[which, k, bb] = mean_of_defined(r[which, k, bb])
                nulls["summary"][:, start : start + b] = means[0] - means[1]
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
                corr = _system_pearson(sums[:, 1:].transpose(1, 0, 2), sums[:, 0][None])  # (K + 1, b)
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


def power_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Rejection rate (power; type-I error at k = 1) per level, test and k, with its binomial SE.

    The rate is over the trials whose p-value is defined (``trials``; ``undefined`` counts the others, e.g.
    Williams' test at k = 1, where r(X, Y) = 1, or an R_k that kept no token): an undefined test is not a
    non-rejection, and a cell with no defined trial has a NaN rate rather than 0."""
    defined = trials["pvalue"].notna()
    frame = trials.assign(rejected=trials["reject"].astype(float).where(defined), defined=defined)
    t = frame.groupby(["level", "test", "k"]).agg(power=("rejected", "mean"), trials=("defined", "sum"),
                                                   undefined=("defined", "size")).reset_index()
    t["undefined"] -= t["trials"]
    t["se"] = np.sqrt(t["power"] * (1 - t["power"]) / t["trials"])
    return t
