"""Private kernels of :mod:`metaeval.stats.planning`: the batched tests its power simulations run, and the
sampling and validation helpers they share (split from it only to keep each module readable).

A chunk of simulated studies is one array operation here: :func:`_pair_pvalues` gives the p-values of the
paired system tests of every trial and pair at once (sign-flip permutation, paired bootstrap, t-test), and
:func:`_metric_pvalues` those of the two-metric tests (Perm-*, Boot-*, Williams) of every trial (:func:`_perm_null`,
:func:`_boot_deltas`: the batched forms of ``permutation_test``'s and ``bootstrap_ci``'s kernels). The sign flips,
the paired bootstrap's counts (:func:`_signflip_tail_counts`, :func:`_pair_tail_counts`) and Perm-Both's Pearson
null (:mod:`~metaeval.stats._kernels`) run as compiled passes. The draws are made chunk by chunk and several chunks
tested at once (:func:`_batch_trials`, :func:`_merge_draws`), which leaves the random stream as it was.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numba
import numpy as np
from scipy import stats

from metaeval.stats._kernels import (
    TAIL_CODES,
    _tail_hit,
    PackedCoins,
    bootstrap_indices,
    coins,
    draw_counts,
    monte_carlo_pvalue,
    perm_summary_pearson,
    perm_system_null,
    standardize,
    t_pvalue,
    tail_hits,
)
from metaeval.stats import multiplicity
from metaeval.stats.correlation import check_bool, level_corr, system_corr
from metaeval.stats.resampling import auto_batch, resampled_corr
from metaeval.stats.significance import williams_pvalue

# Memory budget (float64 elements) of the largest temporary array of one chunk of trials.
_BUDGET = 4_000_000


# ----------------------------------------------------------------------------------------------------
# Validation, sampling and counting


def check_choice(name: str, value: object, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {tuple(allowed)}, got {value!r}")


def check_alpha(alpha: float) -> None:
    multiplicity.check_alpha(alpha, allow_one=False)  # the one alpha rule; a power at level 1 is 1: nothing to plan


def check_trials(n_trials: int) -> None:
    if not isinstance(n_trials, (int, np.integer)) or isinstance(n_trials, bool) or n_trials < 1:
        raise ValueError(f"n_trials must be a positive integer, got {n_trials!r}")


def _check_replace(replace: object) -> None:
    if replace not in ("auto", True, False):
        raise ValueError(f"replace must be 'auto', True or False, got {replace!r}")


def _with_replacement(size: int, pilot: int, replace: object, what: str) -> bool:
    if replace == "auto":
        return size >= pilot
    if not replace and size > pilot:
        raise ValueError(f"cannot draw {size} {what} without replacement from a pilot of {pilot}; "
                         "use replace=True or 'auto'")
    return bool(replace)


def _sampling(with_replacement: bool) -> str:
    return "with replacement" if with_replacement else "without replacement"


def _draw(rng: np.random.Generator, n_trials: int, pilot: int, size: int, replace: bool) -> np.ndarray:
    """Indices (n_trials, size) into a pilot of ``pilot`` units, with or without replacement per trial."""
    if replace:
        return rng.integers(0, pilot, size=(n_trials, size))
    # the first ``size`` of a uniformly random order: a simple random sample without replacement
    return np.argsort(rng.random((n_trials, pilot)), axis=1)[:, :size]


def _chunks(n_trials: int, per_trial: float):
    step = max(1, int(_BUDGET // max(per_trial, 1)))
    for start in range(0, n_trials, step):
        yield start, min(n_trials, start + step)


def _progress(iterable, enabled: bool, **kwargs):
    if not check_bool(enabled, "progress"):
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, **kwargs)


def _power_columns(rejections: np.ndarray, n_valid: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(n_valid, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        power = rejections / n
        se = np.sqrt(power * (1 - power) / n)
    return power, se


def _options(cls, options, keywords: dict):
    """``options`` (an instance of ``cls``) or the keywords; both only when the keywords keep their defaults."""
    if options is None:
        return cls(**keywords)
    if not isinstance(options, cls):
        raise TypeError(f"options must be a {cls.__name__}, got {type(options).__name__}")
    defaults = cls()
    changed = [k for k, v in keywords.items() if v != getattr(defaults, k)]
    if changed:
        raise ValueError(f"pass either options or the keywords {changed}, not both")
    return options


def _rejects(pvalues: np.ndarray, alpha: float) -> np.ndarray:
    """The rejection rule of every simulated test: p < alpha (a p-value equal to alpha does not reject, as a
    permutation p-value (c + 1) / (B + 1) that can only reach alpha must not count as a rejection)."""
    return pvalues < alpha


# ----------------------------------------------------------------------------------------------------
# Separating two systems by their per-document scores


def _tail(null: np.ndarray, observed: np.ndarray, alternative: str, tol: float) -> np.ndarray:
    """Per trial and pair, how many null statistics (T, B, P) are at least as extreme as ``observed`` (T, P).

    Statistics within ``tol`` of the threshold count as reaching it: means of the same documents summed in
    different orders differ in the last bits, and discrete ratings make exact ties common.
    """
    return np.count_nonzero(tail_hits(null, observed[:, None, :], alternative, tol), axis=1)


#: permutations whose signed sums :func:`_signflip_tail_counts` forms together (larger blocks spread the per-pair
#: work of a block over more permutations; 256 was fastest from 10 to 300 documents, 64: 1.1x to 1.5x slower)
_FLIP_BLOCK = 256


@numba.njit(cache=True, nogil=True)
def _quotient_at_least(c, n):  # pragma: no cover - compiled
    """The smallest float x whose quotient x / n (n > 0, correctly rounded) is at least c: since rounding is
    monotonic, ``x / n >= c`` holds exactly when ``x >= _quotient_at_least(c, n)``, one comparison instead of a
    division per permutation. Found from the rounded c n by steps of one ulp. c infinite or NaN: itself."""
    if not np.isfinite(c):
        return c
    x = c * n
    if x / n >= c:
        while x / n >= c and x > -np.inf:
            x = np.nextafter(x, -np.inf)
        return np.nextafter(x, np.inf)
    while x / n < c:
        x = np.nextafter(x, np.inf)
    return x


@numba.njit(cache=True, nogil=True)
def _signflip_tail_counts(bits, B, S, docs, ia, ib, observed, alternative, tol):  # pragma: no cover - compiled
    """Per trial and pair, how many of B sign-flip permutations give a mean difference at least as extreme as
    the observed one (as :func:`_tail` on the unfused path's null): (T, P) counts as floats.

    ``bits`` are the random bytes :func:`~metaeval.stats._kernels.fair_bits` unpacks (high bit first), coin
    (t * B + b) * n + j flipping the sign of trial t's j-th drawn document in permutation b. Each permutation's
    signs are folded onto the trial's distinct pilot documents, every system's signed sum is taken over those
    (at most min(n, M) per system, not M), and the pair differences are compared as they are made: no
    (T, B, M) weights and no (T, B, P) null array, one pass over the coins.

    Permutations go by blocks of :data:`_FLIP_BLOCK` whose sums are formed side by side (each in document
    order), compared with the difference whose mean reaches the tail (:func:`_quotient_at_least`: no division
    per permutation); the coins are read a byte at a time through a table of signs."""
    T, n = docs.shape
    K = S.shape[0]
    P = ia.shape[0]
    out = np.zeros((T, P))
    block = min(_FLIP_BLOCK, B)
    flips = np.empty((block, n))  # per permutation of the block, its signs folded onto the documents
    weights = np.empty((n, block))  # the same, document-major: the rows the sums run along
    sums = np.empty((K, block))
    count = np.zeros(P, np.int64)
    limit = np.empty(P)
    nf = float(n)
    two_sided = alternative == 0
    sign = -1.0 if alternative == 2 else 1.0
    table = np.empty((256, 8))  # a byte's 8 coins as signs (no int-to-float conversion per coin)
    for v in range(256):
        for e in range(8):
            table[v, e] = 1.0 - 2.0 * ((v >> (7 - e)) & 1)
    for t in range(T):
        distinct = np.unique(docs[t])
        D = distinct.shape[0]
        Sd = np.empty((D, K))  # the systems' scores of the trial's documents
        for q in range(D):
            for k in range(K):
                Sd[q, k] = S[k, distinct[q]]
        slot = np.searchsorted(distinct, docs[t])
        # a permutation's pair difference d reaches the tail when d / n does (TAIL): v >= limit with v = d
        # (greater), v = |d| (two-sided; |d| / n = |d / n|), v = -d (less: d / n <= c iff -d / n >= -c)
        for p in range(P):
            o = observed[t, p]
            if alternative == 1:
                limit[p] = _quotient_at_least(o - tol, nf)
            elif alternative == 2:
                limit[p] = _quotient_at_least(-(o + tol), nf)
            else:
                limit[p] = _quotient_at_least(abs(o) - tol, nf)
        count[:] = 0
        for b0 in range(0, B, block):
            nb = min(block, B - b0)
            for j in range(nb):
                row = flips[j]
                row[:D] = 0.0
                i = (t * B + b0 + j) * n
                c = 0
                while c < n and (i & 7) != 0:  # the first coins share a byte with the previous permutation's
                    row[slot[c]] += 1.0 - 2.0 * ((bits[i >> 3] >> (7 - (i & 7))) & 1)
                    c += 1
                    i += 1
                while c + 8 <= n:
                    signs = table[bits[i >> 3]]
                    for e in range(8):
                        row[slot[c + e]] += signs[e]
                    c += 8
                    i += 8
                while c < n:
                    row[slot[c]] += 1.0 - 2.0 * ((bits[i >> 3] >> (7 - (i & 7))) & 1)
                    c += 1
                    i += 1
            for q in range(D):
                for j in range(nb):
                    weights[q, j] = flips[j, q]
            sums[:, :nb] = 0.0
            q = 0
            while q + 2 <= D:
                w0, w1 = weights[q], weights[q + 1]
                for k in range(K):
                    s0, s1 = Sd[q, k], Sd[q + 1, k]
                    acc = sums[k]
                    for j in range(nb):
                        acc[j] = (acc[j] + w0[j] * s0) + w1[j] * s1
                q += 2
            if q < D:
                w0 = weights[q]
                for k in range(K):
                    s0 = Sd[q, k]
                    acc = sums[k]
                    for j in range(nb):
                        acc[j] += w0[j] * s0
            for p in range(P):
                first = sums[ia[p]]
                second = sums[ib[p]]
                lim = limit[p]
                hits = 0
                for j in range(nb):
                    d = first[j] - second[j]
                    hits += (abs(d) if two_sided else sign * d) >= lim
                count[p] += hits
        for p in range(P):
            out[t, p] = count[p]
    return out


@numba.njit(cache=True, nogil=True)
def _bootstrap_weights(docs, positions, M):  # pragma: no cover - compiled
    """Multiplicity of each pilot document in each resample: (T * B, M) floats from the trials' drawn
    documents ``docs`` (T, n) and the resampled positions (T, B, n) into them (what the unfused path
    gathers and bincounts, without its (T, B, n) temporaries)."""
    T, B, n = positions.shape
    out = np.zeros((T * B, M))
    for t in range(T):
        for b in range(B):
            row = t * B + b
            for j in range(n):
                out[row, docs[t, positions[t, b, j]]] += 1.0
    return out


@numba.njit(cache=True, nogil=True)
def _pair_tail_counts(means, ia, ib, n, observed, alternative, tol):  # pragma: no cover - compiled
    """Per trial and pair, how many centred bootstrap differences are at least as extreme as the observed
    one (as :func:`_tail` on ``(means[ia] - means[ib]) / n - observed``): (T, P) counts as floats.

    ``means`` (T, B, K) are the resamples' per-system sums; ``alternative`` a number of
    :data:`~metaeval.stats._kernels.TAIL_CODES` (the same rule as :func:`_tail`).
    One pass over the resamples: the (T, B, P) null array of the unfused path is never formed."""
    T, B, K = means.shape
    P = ia.shape[0]
    out = np.zeros((T, P))
    count = np.zeros(P, np.int64)
    for t in range(T):
        count[:] = 0
        for b in range(B):
            row = means[t, b]
            for p in range(P):
                count[p] += _tail_hit(alternative, (row[ia[p]] - row[ib[p]]) / n - observed[t, p], observed[t, p], tol)
        for p in range(P):
            out[t, p] = count[p]
    return out


def _pair_pvalues(
    S: np.ndarray,
    docs: np.ndarray,
    ia: np.ndarray,
    ib: np.ndarray,
    test: str,
    n_resamples: int,
    alternative: str,
    tol: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """p-values (T, P) of the paired tests of pairs (ia[p], ib[p]) on a chunk of trials.

    ``S`` (K, M) holds the pilot scores of all K systems, ``docs`` (T, n) each trial's drawn pilot documents.
    Resampled means are linear in the scores, so they are computed per *system*, not per pair: each
    resample's weights are folded onto the M pilot documents (a resampled position counts for the pilot
    document it was drawn from), and one matrix product (T*B, M) @ (M, K) gives every system's mean in every
    resample of every trial; the P pair differences are taken afterwards.
    """
    T, n = docs.shape
    K, M = S.shape
    observed_means = draw_counts(docs, M) @ S.T / n  # (T, K)
    observed = observed_means[:, ia] - observed_means[:, ib]  # (T, P)
    if test == "t-test":
        d = S[ia][:, docs] - S[ib][:, docs]  # (P, T, n)
        sd = d.std(axis=-1, ddof=1).T
        with np.errstate(invalid="ignore", divide="ignore"):
            t = observed / (sd / math.sqrt(n))
        # the same difference in every document: a nonzero one is certain (t = +-inf, as a limit), a zero one
        # carries no evidence (t = 0)
        with np.errstate(invalid="ignore"):  # sign(0) * inf in the branch np.where does not take
            t = np.where(sd > tol, t, np.where(np.abs(observed) > tol, np.sign(observed) * np.inf, 0.0))
        return t_pvalue(t, n - 1, alternative)
    B = n_resamples
    if test == "paired-bootstrap":
        positions = rng.integers(0, n, size=(T, B, n), dtype=np.int32)
        weights = _bootstrap_weights(docs.astype(np.int64), positions, M)
        means = (weights @ S.T).reshape(T, B, K)
        code = TAIL_CODES[alternative]
        return _pair_tail_counts(means, ia, ib, float(n), observed, code, tol) / B
    if 2**n > n_resamples:
        # Monte-Carlo sign flips: the coins of fair_bits(rng, (T * B, n)), read from their random bytes by one
        # compiled pass; p = (c + 1) / (B + 1), valid (size <= alpha) for any number of flips
        bits = rng.integers(0, 256, size=(T * B * n + 7) // 8, dtype=np.uint8)
        counts = _signflip_tail_counts(bits, B, S, docs.astype(np.int64), ia, ib, observed,
                                       TAIL_CODES[alternative], tol)
        return monte_carlo_pvalue(counts, B)
    # all 2^n sign flips, the same for every trial: the exact permutation distribution (no draws); the identity is
    # one of them, so p = c / 2^n
    B = 2**n
    flips = (np.arange(B)[:, None] >> np.arange(n)) & 1
    signs = np.tile(1.0 - 2.0 * flips, (T, 1))
    flat = (np.broadcast_to(docs[:, None, :], (T, B, n)).reshape(T * B, n) + M * np.arange(T * B)[:, None]).ravel()
    weights = np.bincount(flat, weights=signs.ravel(), minlength=T * B * M)
    # pair differences through a contrast matrix: a second small product instead of a fancy-index gather
    contrast = np.zeros((K, len(ia)))
    contrast[ia, np.arange(len(ia))] = 1.0
    contrast[ib, np.arange(len(ia))] -= 1.0
    null = ((weights.reshape(T * B, M) @ S.T) @ contrast / n).reshape(T, B, len(ia))
    return _tail(null, observed, alternative, tol) / B


def _check_sizes_1d(sizes) -> list[int]:
    try:
        out = [int(s) for s in sizes]
    except (TypeError, ValueError):
        raise TypeError(f"sizes must be a sequence of integers, got {sizes!r}") from None
    if not out:
        raise ValueError("sizes is empty")
    if any(s < 2 or s != float(v) for s, v in zip(out, sizes)):
        raise ValueError(f"sizes must be integers >= 2, got {list(sizes)!r}")
    return out


def _within_document_null(S: np.ndarray, rng: np.random.Generator, copies: int = 8) -> np.ndarray:
    """A null pilot (K, R M): each document's K scores in random orders (all K! orders when at most 8), so
    that every system has the same distribution of scores within a document (equal means, symmetric pair
    differences): the pilot's documents, with every system difference made pure noise."""
    K, M = S.shape
    if math.factorial(K) <= copies:
        import itertools

        return np.concatenate([S[list(order)] for order in itertools.permutations(range(K))], axis=1)
    return np.concatenate([rng.permuted(S, axis=0) for _ in range(copies)], axis=1)


def _type1_upper(n_trials: int, alpha: float, confidence_level: float = 0.999) -> int:
    """The largest number of rejections out of ``n_trials`` consistent with size alpha (upper end of the
    central binomial interval)."""
    return int(stats.binom.ppf(1 - (1 - confidence_level) / 2, n_trials, alpha))


# ----------------------------------------------------------------------------------------------------
# Comparing two metrics' correlations with the human scores


def _system_null(Xs, Ys, Z, coins, coefficient) -> np.ndarray:
    """:func:`_perm_null` at system level from boolean coins (T, B, N, M): numpy's einsum and correlations."""
    M = Xs.shape[-1]
    shift = np.einsum("tbnm,tnm->tbn", coins, Ys - Xs) / M
    zs = Z.mean(axis=-1)[:, None, :]
    xs = Xs.mean(axis=-1)[:, None, :] + shift
    ys = Ys.mean(axis=-1)[:, None, :] - shift
    return system_corr(xs, zs, coefficient) - system_corr(ys, zs, coefficient)


def _perm_null(Xs, Ys, Z, coins, level, coefficient) -> np.ndarray:
    """Permuted r(X', Z) - r(Y', Z) for trials (T, N, M) and coins (T, B, N, M): array (T, B).

    The batched form of :func:`metaeval.significance.permutation_test`'s kernels. ``coins`` is a boolean array or
    :class:`PackedCoins` (Pearson at system and summary level: the compiled passes, which read them packed);
    boolean coins take the system means as one product, or the permuted matrices."""
    packed = isinstance(coins, PackedCoins)
    if packed and coefficient == "pearson" and level == "system":
        return perm_system_null(coins.bits, coins.first, coins.shape[1], np.ascontiguousarray(Ys - Xs),
                                Xs.mean(axis=-1), Ys.mean(axis=-1), Z.mean(axis=-1))
    if packed and coefficient == "pearson" and level == "summary":
        return perm_summary_pearson(Xs, Ys, Z, coins.bits, coins.first, coins.shape[1])
    if packed:
        coins = coins.unpacked()
    if level == "system":
        return _system_null(Xs, Ys, Z, coins, coefficient)
    Xp = np.where(coins, Ys[:, None], Xs[:, None])
    Yp = np.where(coins, Xs[:, None], Ys[:, None])
    return level_corr(Xp, Z[:, None], level, coefficient) - level_corr(Yp, Z[:, None], level, coefficient)


def _boot_deltas(X, Y, Z, rows, cols, level, coefficient) -> np.ndarray:
    """Resampled r(X*, Z*) - r(Y*, Z*) for trials (T, N, M), rows (T, B, N), cols (T, B, M): array (T, B), by
    :func:`metaeval.stats.resampling.resampled_corr` (the kernels of ``bootstrap_ci``), trial by trial."""
    T, N, M = X.shape
    batch = auto_batch(N, M, level, coefficient)
    out = np.empty(rows.shape[:2])
    for t in range(T):
        r = resampled_corr([X[t], Y[t]], Z[t], rows[t], cols[t], level, coefficient, batch)
        out[t] = r[0] - r[1]
    return out


def _metric_draws(rng: np.random.Generator, test: str, level: str, coefficient, T: int, N: int, M: int,
                  n_resamples: int):
    """The random draws of the two-metric test on a chunk of T trials of N systems x M inputs, as
    :func:`_metric_pvalues` makes them: the permutation coins (packed where the summary-level Pearson kernel
    reads them), the bootstrap (rows, cols), or None (Williams draws nothing)."""
    if test == "williams":
        return None
    kind, _, method = test.partition("-")
    if kind == "perm":
        # packed where a compiled kernel reads them (the same random bytes either way)
        return coins(rng, (T, n_resamples), N, M, method, level in ("system", "summary") and coefficient == "pearson")
    return bootstrap_indices(rng, (T, n_resamples), N, M, method)


def _metric_pvalues(X, Y, Z, test, level, coefficient, n_resamples, alternative, rng=None, *,
                    draws=None) -> np.ndarray:
    """One-sided/two-sided p-values (T,) of the two-metric test on a chunk of trials (T, N, M).

    The test's random draws are ``draws`` (of :func:`_metric_draws`, or of several chunks merged by
    :func:`_merge_draws`), or made from ``rng``."""
    T, N, M = Z.shape
    if test == "williams":
        r12 = level_corr(X, Z, level, coefficient)
        r13 = level_corr(Y, Z, level, coefficient)
        r23 = level_corr(X, Y, level, coefficient)
        n = N * M if level == "global" else N
        return np.asarray(williams_pvalue(r12, r13, r23, n, alternative)[1], dtype=float)
    if draws is None:
        draws = _metric_draws(rng, test, level, coefficient, T, N, M, n_resamples)
    if test.startswith("perm-"):
        Xs, Ys = standardize(X), standardize(Y)
        observed = level_corr(Xs, Z, level, coefficient) - level_corr(Ys, Z, level, coefficient)
        null = _perm_null(Xs, Ys, Z, draws, level, coefficient)
        valid = ~np.isnan(null)
        hit = tail_hits(null, observed[:, None], alternative)
        count = np.count_nonzero(hit & valid, axis=1)
        with np.errstate(invalid="ignore"):
            return np.where(np.isnan(observed), np.nan, monte_carlo_pvalue(count, valid.sum(axis=1)))
    observed = level_corr(X, Z, level, coefficient) - level_corr(Y, Z, level, coefficient)
    rows, cols = draws
    shifted = _boot_deltas(X, Y, Z, rows, cols, level, coefficient) - observed[:, None]
    valid = ~np.isnan(shifted)
    hit = tail_hits(shifted, observed[:, None], alternative)
    n_valid = valid.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.count_nonzero(hit & valid, axis=1) / n_valid
    return np.where(np.isnan(observed) | (n_valid == 0), np.nan, p)


def _batch_trials(test: str, level: str, coefficient, N: int, M: int, n_resamples: int, chunk: int) -> int:
    """How many trials one call of :func:`_metric_pvalues` may test together, given chunks of ``chunk`` trials
    (the draws are made chunk by chunk, so that the random stream does not depend on this).

    The chunks were sized for (T, B, N, M) float temporaries; Perm-Both's compiled Pearson passes hold less (the
    packed coins), so several small chunks are tested at once, saving dozens of numpy calls per chunk."""
    if test != "perm-both" or coefficient != "pearson" or level not in ("system", "summary"):
        return chunk
    per_trial = n_resamples * N * M / 8 + 200 * N * M if level == "summary" else 3 * n_resamples * N * M
    return max(chunk, int(8 * _BUDGET // per_trial))


def _merge_draws(parts: list):
    """The draws (:func:`_metric_draws`) of consecutive chunks as those of one batch of all their trials."""
    if len(parts) == 1 or parts[0] is None:
        return parts[0]
    if isinstance(parts[0], PackedCoins):
        return PackedCoins.merge(parts)
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(arrays) for arrays in zip(*parts))
    return np.concatenate(parts)


def _check_sizes_2d(sizes) -> list[tuple[int, int]]:
    try:
        out = [(int(n), int(m)) for n, m in sizes]
    except (TypeError, ValueError):
        raise TypeError(f"sizes must be a sequence of (n_systems, n_inputs) pairs, got {sizes!r}") from None
    if not out:
        raise ValueError("sizes is empty")
    bad = [s for s in out if s[0] < 3 or s[1] < 3]
    if bad:
        raise ValueError(f"sizes need at least 3 systems and 3 inputs, got {bad}")
    return out
