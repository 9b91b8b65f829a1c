"""Private kernels of :mod:`metaeval.stats.planning`: the batched tests its power simulations run, and the
sampling and validation helpers they share.

A chunk of simulated studies is one array operation here: :func:`_pair_pvalues` gives the p-values of the
paired system tests of every trial and pair at once (sign-flip permutation, paired bootstrap, t-test), and
:func:`_metric_pvalues` those of the two-metric tests (Perm-*, Boot-*, Williams) of every trial, through the
batched forms of :mod:`metaeval.stats.significance`'s and :mod:`metaeval.stats.resampling`'s kernels
(:func:`_perm_null`, :func:`_boot_deltas`). The public functions, their options and their documentation are
in :mod:`metaeval.stats.planning`; this module is split from it only to keep each module readable.

The default tests of the planner run as compiled passes over the packed random coins: the sign flips of every
system pair (:func:`_signflip_tail_counts`) and Perm-Both's null at summary and system level
(:func:`_perm_summary_null`, :func:`_perm_system_null`). Each gives the floats of the numpy path it replaces
(the same additions in the same order, numpy's pairwise sums included, :func:`_planned_sum`), so a power
table does not depend on which path computed it; tests/test_planning.py compares them bit for bit. The draws
are made chunk by chunk and several chunks tested at once (:func:`_batch_trials`, :func:`_merge_draws`),
which leaves the random stream as it was.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numba
import numpy as np
from scipy import stats

from metaeval.stats._kernels import (
    TAIL_CODES,
    PackedCoins,
    _tail_hit,
    bootstrap_indices,
    coins,
    draw_counts,
    fair_bits,
    monte_carlo_pvalue,
    standardize,
    t_pvalue,
    tail_hits,
)
from metaeval.stats.correlation import (
    constant,
    constant_from_codes,
    dense_codes,
    level_corr,
    mean_of_defined,
    pearson_from_sums,
    system_corr,
)
from metaeval.stats.significance import williams_pvalue

# Memory budget (float64 elements) of the largest temporary array of one chunk of trials.
_BUDGET = 4_000_000


# ----------------------------------------------------------------------------------------------------
# Validation, sampling and counting


def _check_choice(name: str, value: object, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {tuple(allowed)}, got {value!r}")


def _check_alpha(alpha: float) -> None:
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")


def _check_trials(n_trials: int) -> None:
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
    if not enabled:
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
    fused: bool = True,
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
    if test == "paired-bootstrap" and fused:
        positions = rng.integers(0, n, size=(T, B, n), dtype=np.int32)
        weights = _bootstrap_weights(docs.astype(np.int64), positions, M)
        # the same product as below: the floats of every system mean are those of the unfused path
        means = (weights @ S.T).reshape(T, B, K)
        code = TAIL_CODES[alternative]
        return _pair_tail_counts(means, ia, ib, float(n), observed, code, tol) / B
    exact = test == "permutation" and 2**n <= n_resamples
    if test == "permutation" and not exact and fused:
        # the same coins as fair_bits(rng, (T * B, n)) below, read from their random bytes by one compiled pass
        bits = rng.integers(0, 256, size=(T * B * n + 7) // 8, dtype=np.uint8)
        counts = _signflip_tail_counts(bits, B, S, docs.astype(np.int64), ia, ib, observed,
                                       TAIL_CODES[alternative], tol)
        return monte_carlo_pvalue(counts, B)
    if exact:
        # all 2^n sign flips, the same for every trial: the exact permutation distribution (no draws)
        B = 2**n
    offsets = M * np.arange(T * B)[:, None]
    if test == "paired-bootstrap":
        # int32 indices: gathering with them is several times faster than with int64 ones
        positions = rng.integers(0, n, size=(T, B, n), dtype=np.int32)
        positions += (n * np.arange(T, dtype=np.int32))[:, None, None]
        drawn = docs.astype(np.int32).ravel()[positions]  # the pilot document behind each resampled position
        weights = np.bincount((drawn.reshape(T * B, n) + offsets).ravel(), minlength=T * B * M)
    else:
        # permutation of a paired design: flip the sign of each drawn document's difference
        if exact:
            flips = (np.arange(B)[:, None] >> np.arange(n)) & 1
            signs = np.tile(1.0 - 2.0 * flips, (T, 1))
        else:
            signs = 1.0 - 2.0 * fair_bits(rng, (T * B, n))
        flat = (np.broadcast_to(docs[:, None, :], (T, B, n)).reshape(T * B, n) + offsets).ravel()
        weights = np.bincount(flat, weights=signs.ravel(), minlength=T * B * M)
    # pair differences through a contrast matrix: a second small product instead of a fancy-index gather
    contrast = np.zeros((K, len(ia)))
    contrast[ia, np.arange(len(ia))] = 1.0
    contrast[ib, np.arange(len(ia))] -= 1.0
    null = ((weights.reshape(T * B, M).astype(float) @ S.T) @ contrast / n).reshape(T, B, len(ia))
    if test == "paired-bootstrap":
        # centring at the observed difference gives the null distribution (as metaeval.bootstrap_test)
        null -= observed[:, None, :]
        return _tail(null, observed, alternative, tol) / B
    if exact:
        # the identity is one of the 2^n flips: p = c / 2^n
        return _tail(null, observed, alternative, tol) / B
    # Monte-Carlo: p = (c + 1) / (B + 1), valid (size <= alpha) for any number of flips
    return monte_carlo_pvalue(_tail(null, observed, alternative, tol), B)


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

    Permutations go by blocks of :data:`_FLIP_BLOCK`: each system's sums of a block are formed side by side,
    two documents per pass (every sum still adds its products in document order, the floats of one sum at a
    time, but the block's sums are independent and vectorize where one sum waited on each addition), and
    each pair's differences are compared for the whole block in one loop, against the difference whose mean
    reaches the tail (:func:`_quotient_at_least`: the counts of :data:`~metaeval.stats._kernels.TAIL` on the
    means, without a division per permutation); the coins are read a byte at a time, through a table of
    signs. 3.5x to 6x faster than one permutation and one system at a time."""
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


def _standardize_batch(X: np.ndarray) -> np.ndarray:
    """One z-score per trial over its whole matrix (as Perm-Both standardizes); NaN for a constant matrix."""
    return standardize(X)


def _sum_plan(n: int) -> np.ndarray:
    """numpy's summation order for ``n`` contiguous floats (``np.sum`` and ``np.nansum`` along such an axis), as a
    program for :func:`_planned_sum`: rows (start, size) sum a block of at most 128 values, rows (0, -1) add the
    last two sums. numpy sums a longer run as the sum of its two parts split after the multiple of 8 nearest
    below its half (pairwise summation)."""
    program: list[tuple[int, int]] = []

    def run(start: int, size: int) -> None:
        if size <= 128:
            program.append((start, size))
            return
        half = size // 2 - size // 2 % 8
        run(start, half)
        run(start + half, size - half)
        program.append((0, -1))

    run(0, n)
    return np.array(program, dtype=np.int64).reshape(-1, 2)


@numba.njit(cache=True, nogil=True)
def _sum_block(a, start, size):  # pragma: no cover - compiled
    """numpy's sum of at most 128 contiguous values: one accumulator below 8, else 8 accumulators (value i into
    accumulator i mod 8) added pairwise, then the remainder in order."""
    block = a[start:start + size]
    if size < 8:
        total = -0.0
        for i in range(size):
            total += block[i]
        return total
    r0, r1, r2, r3 = block[0], block[1], block[2], block[3]
    r4, r5, r6, r7 = block[4], block[5], block[6], block[7]
    stop = size - size % 8
    for i in range(8, stop, 8):
        r0 += block[i]
        r1 += block[i + 1]
        r2 += block[i + 2]
        r3 += block[i + 3]
        r4 += block[i + 4]
        r5 += block[i + 5]
        r6 += block[i + 6]
        r7 += block[i + 7]
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(stop, size):
        total += block[i]
    return total


@numba.njit(cache=True, nogil=True)
def _planned_sum(a, plan, stack):  # pragma: no cover - compiled
    """``np.sum(a)`` of a contiguous vector to the last bit, by the program ``plan = _sum_plan(len(a))``; ``stack``
    holds len(plan) floats. (Not numpy's recursion itself: numba's cache does not reload recursive functions
    reliably, and a cached recursive version crashed the next process.)"""
    depth = 0
    for k in range(plan.shape[0]):
        if plan[k, 1] >= 0:
            stack[depth] = _sum_block(a, plan[k, 0], plan[k, 1])
            depth += 1
        else:
            depth -= 1
            stack[depth - 1] = stack[depth - 1] + stack[depth]
    # numpy's reduction starts from 0.0
    return 0.0 + stack[0] if depth else 0.0


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _perm_summary_null(bits, first, B, D1, D2, D3, base, Xs, Ys, z_ok, plan):  # pragma: no cover - compiled
    """Perm-Both's null at summary level (Pearson) for every trial and permutation: the mean over inputs of the
    defined r(X', Z) minus that of r(Y', Z), (T, B), and the permutations with a cell whose r the caller must
    recompute from the values (``weak``, (T, B): a variance below 1e-6 of its mean square). The floats of the
    boolean path of :func:`_perm_null` (einsum sums, ``pearson_from_sums``, ``mean_of_defined``), without its
    (T, B, M) arrays (:func:`_perm_null` at summary level 2.7x faster than through
    :func:`~metaeval.stats._kernels.perm_summary_corr` over the planner's default designs, the coins' draw
    included).

    Coin (b, n, m) of trial t is bit ``first[t] + (b N + n) M + m`` of ``bits`` (np.unpackbits order).
    D1..D3 (T, N, M) are the changes of the centred sums when a cell is swapped (Y - X, Y^2 - X^2, (Y - X) Z),
    ``base`` (8, T, M) the unpermuted sums sx, sxx, sxz, sy, syy, syz, sz, szz, ``z_ok`` (T, M) where Z's
    column is not constant, ``plan`` = ``_sum_plan(M)``.

    * Coins: a byte's 8 coins become 8 bytes of one word through a table; a permutation's coins are unpacked
      once into a (N, M) byte matrix.
    * Sums: every swapped cell's changes are added over n in order, as einsum adds them (0 or 1 times the
      change: the same floats), the three sums side by side and two systems per pass (the running sums stay
      in registers).
    * r: ``pearson_from_sums``'s formula (its floats: ``n sxx - sx^2``, ``cov / sqrt(vx vz)``, clipped), one
      vectorized loop per metric that also counts the defined inputs and flags the weak cells; the mean over
      inputs is numpy's sum (:func:`_planned_sum`) of the defined r over their number.
    * Constancy: a permuted column is constant (r undefined) only if one value is in every system's pair
      (X, Y) of that input, so only such columns are checked, permutation by permutation, on the values (as
      the integer codes of the boolean path decide it: equal values, equal codes)."""
    T, N, M = D1.shape
    null = np.empty((T, B))
    weak = np.zeros((T, B), np.bool_)
    # byte -> its 8 coins as the 8 bytes of one word (little-endian: the first coin in the lowest byte)
    table = np.zeros(256, np.uint64)
    for v in range(256):
        for j in range(8):
            table[v] |= np.uint64((v >> (7 - j)) & 1) << np.uint64(8 * j)
    words = M // 8
    C = np.zeros((N, 8 * words + 8), np.uint8)  # one permutation's coins, a row per system
    C64 = C.view(np.uint64)
    sums = np.zeros((3, M))
    r = np.empty(M)
    x_def = np.empty(M, np.bool_)
    y_def = np.empty(M, np.bool_)
    may_be_constant = np.empty(M, np.bool_)
    vz = np.empty(M)
    z_weak = np.empty(M, np.bool_)
    stack = np.empty(plan.shape[0])
    mean = np.empty(2)
    nf = float(N)
    s1, s2, s3 = sums[0], sums[1], sums[2]
    for t in range(T):
        X, Y, A1, A2, A3 = Xs[t], Ys[t], D1[t], D2[t], D3[t]
        sz, szz = base[6, t], base[7, t]
        for m in range(M):
            vz[m] = nf * szz[m] - sz[m] * sz[m]
            z_weak[m] = vz[m] <= 1e-6 * nf * szz[m]
        any_constant = False
        for m in range(M):
            may_be_constant[m] = False
            if z_ok[t, m]:
                for v in (X[0, m], Y[0, m]):
                    every = True
                    for n in range(1, N):
                        if X[n, m] != v and Y[n, m] != v:
                            every = False
                            break
                    may_be_constant[m] = may_be_constant[m] or every
            any_constant = any_constant or may_be_constant[m]
        for b in range(B):
            for n in range(N):
                row = C64[n]
                i = first[t] + (b * N + n) * M
                for g in range(words):
                    k = i >> 3
                    shift = i & 7
                    if shift:  # the word's coins straddle two bytes
                        row[g] = table[((np.int64(bits[k]) << shift) | (bits[k + 1] >> (8 - shift))) & 255]
                    else:
                        row[g] = table[bits[k]]
                    i += 8
                for m in range(8 * words, M):
                    C[n, m] = (bits[i >> 3] >> (7 - (i & 7))) & 1
                    i += 1
            sums[:] = 0.0
            n = 0
            while n + 2 <= N:
                c0, c1 = C[n], C[n + 1]
                a0, a1, e0, e1, f0, f1 = A1[n], A1[n + 1], A2[n], A2[n + 1], A3[n], A3[n + 1]
                for m in range(M):
                    x0 = np.float64(c0[m])
                    x1 = np.float64(c1[m])
                    s1[m] = (s1[m] + x0 * a0[m]) + x1 * a1[m]
                    s2[m] = (s2[m] + x0 * e0[m]) + x1 * e1[m]
                    s3[m] = (s3[m] + x0 * f0[m]) + x1 * f1[m]
                n += 2
            if n < N:
                c0 = C[n]
                a0, e0, f0 = A1[n], A2[n], A3[n]
                for m in range(M):
                    x0 = np.float64(c0[m])
                    s1[m] += x0 * a0[m]
                    s2[m] += x0 * e0[m]
                    s3[m] += x0 * f0[m]
            if any_constant:
                for m in range(M):
                    x_def[m] = y_def[m] = z_ok[t, m]
                    if may_be_constant[m]:
                        x0 = Y[0, m] if C[0, m] else X[0, m]
                        y0 = X[0, m] if C[0, m] else Y[0, m]
                        x_const = y_const = True
                        for n in range(1, N):
                            xv, yv = (Y[n, m], X[n, m]) if C[n, m] else (X[n, m], Y[n, m])
                            x_const = x_const and xv == x0
                            y_const = y_const and yv == y0
                        x_def[m] = not x_const
                        y_def[m] = not y_const
            for side in range(2):
                # X' = X + the swapped cells' changes, Y' = Y - them (x + (-s) is x - s, to the bit)
                sign = 1.0 if side == 0 else -1.0
                b0, b1, b2 = base[3 * side, t], base[3 * side + 1, t], base[3 * side + 2, t]
                defined = (x_def if side == 0 else y_def) if any_constant else z_ok[t]
                count = 0
                w = False
                # the loads are not behind short-circuits (& and |, not and / or), so that the loop vectorizes
                for m in range(M):
                    sx = b0[m] + sign * s1[m]
                    sxx = b1[m] + sign * s2[m]
                    vx = nf * sxx - sx * sx
                    rm = (nf * (b2[m] + sign * s3[m]) - sx * sz[m]) / np.sqrt(vx * vz[m])
                    rm = 1.0 if rm > 1.0 else rm
                    rm = -1.0 if rm < -1.0 else rm
                    ok = defined[m] & (vx > 0) & (vz[m] > 0) & (rm == rm)
                    r[m] = rm if ok else 0.0  # np.nansum counts an undefined r as 0
                    count += ok
                    w |= defined[m] & ((vx <= 1e-6 * nf * sxx) | z_weak[m])
                weak[t, b] |= w
                mean[side] = _planned_sum(r, plan, stack) / count if count > 0 else np.nan
            null[t, b] = mean[0] - mean[1]
    return null, weak


@numba.njit(cache=True, nogil=True)
def _einsum_rows(C, A, n, M):  # pragma: no cover - compiled
    """``np.einsum("m,m->", C[k], A[k])`` for the two rows k = n, n + 1, to the last bit: numpy's loop for two
    contiguous float64 operands summed into one output (``sum_of_products_contig_contig_outstride0_two``, built
    with 128-bit SIMD: two lanes, even and odd positions) adds, per block of 8 values, the products of positions
    6-7, 4-5, 2-3 then 0-1 to its two lane sums, the last pairs (and a last odd value) one by one, and returns
    the sum of the two lanes. The coins C are 0 or 1, so every product is exact and fused or separate
    multiply-adds give the same floats. The two rows' four sums are independent, which hides the latency of
    each addition (four rows were no faster). :func:`_einsum_order_holds` checks this order against np.einsum
    before it is relied on."""
    a0 = b0 = a1 = b1 = 0.0
    i = 0
    while i + 8 <= M:
        a0 += C[n + 0, i + 6] * A[n + 0, i + 6]
        b0 += C[n + 0, i + 7] * A[n + 0, i + 7]
        a1 += C[n + 1, i + 6] * A[n + 1, i + 6]
        b1 += C[n + 1, i + 7] * A[n + 1, i + 7]
        a0 += C[n + 0, i + 4] * A[n + 0, i + 4]
        b0 += C[n + 0, i + 5] * A[n + 0, i + 5]
        a1 += C[n + 1, i + 4] * A[n + 1, i + 4]
        b1 += C[n + 1, i + 5] * A[n + 1, i + 5]
        a0 += C[n + 0, i + 2] * A[n + 0, i + 2]
        b0 += C[n + 0, i + 3] * A[n + 0, i + 3]
        a1 += C[n + 1, i + 2] * A[n + 1, i + 2]
        b1 += C[n + 1, i + 3] * A[n + 1, i + 3]
        a0 += C[n + 0, i + 0] * A[n + 0, i + 0]
        b0 += C[n + 0, i + 1] * A[n + 0, i + 1]
        a1 += C[n + 1, i + 0] * A[n + 1, i + 0]
        b1 += C[n + 1, i + 1] * A[n + 1, i + 1]
        i += 8
    while i + 2 <= M:
        a0 += C[n, i] * A[n, i]
        b0 += C[n, i + 1] * A[n, i + 1]
        a1 += C[n + 1, i] * A[n + 1, i]
        b1 += C[n + 1, i + 1] * A[n + 1, i + 1]
        i += 2
    if i < M:
        a0 += C[n, i] * A[n, i]
        a1 += C[n + 1, i] * A[n + 1, i]
    return 0.0 + (a0 + b0), 0.0 + (a1 + b1)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _system_pearson(x, zc, szz, z_constant, xc, products, plan, stack):  # pragma: no cover - compiled
    """:func:`~metaeval.stats._kernels.pearson` of one vector x with z (given centred, ``zc``, with ``szz`` and
    whether z is constant), to the last bit: numpy's sums (pairwise, :func:`_planned_sum`) of x, of xc zc and
    of xc^2, r = sxz / sqrt(sxx szz) clipped, NaN where x or z is constant or a variance is not positive.
    ``xc`` and ``products`` are scratch vectors of x's length."""
    N = x.shape[0]
    if N <= 128:
        mean = (0.0 + _sum_block(x, 0, N)) / N
    else:
        mean = _planned_sum(x, plan, stack) / N
    varies = False
    for n in range(N):
        xc[n] = x[n] - mean
        varies |= x[n] != x[0]
    for n in range(N):
        products[n] = xc[n] * zc[n]
    sxz = 0.0 + _sum_block(products, 0, N) if N <= 128 else _planned_sum(products, plan, stack)
    for n in range(N):
        products[n] = xc[n] * xc[n]
    sxx = 0.0 + _sum_block(products, 0, N) if N <= 128 else _planned_sum(products, plan, stack)
    r = sxz / np.sqrt(sxx * szz)
    if not varies or z_constant or not sxx > 0 or not szz > 0:
        return np.nan
    return 1.0 if r > 1.0 else (-1.0 if r < -1.0 else r)  # np.clip keeps a NaN


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _perm_system_null(bits, first, B, D, xm, ym, zm, plan):  # pragma: no cover - compiled
    """Perm-Both's null at system level (Pearson) for every trial and permutation, (T, B): the floats of the
    numpy path of :func:`_perm_null` (einsum of the coins with D = Y - X over the inputs, / M, added to X's and
    subtracted from Y's system means, Pearson r of each with Z's) from the packed coins, without its (T, B, N, M)
    boolean coins and the cast einsum makes of them (:func:`_perm_null` at system level 1.6x faster over the
    planner's default designs, 5 to 24 systems x 25 to 400 inputs, the coins' draw included).

    Coin (b, n, m) of trial t is bit ``first[t] + (b N + n) M + m`` of ``bits`` (np.unpackbits order), unpacked
    a byte at a time through a table, as in :func:`_perm_summary_null`. ``xm``, ``ym``, ``zm`` (T, N) are
    numpy's means over the inputs, ``plan`` = ``_sum_plan(N)``. Valid only where :func:`_einsum_order_holds`."""
    T, N, M = D.shape
    null = np.empty((T, B))
    table = np.zeros(256, np.uint64)
    for v in range(256):
        for j in range(8):
            table[v] |= np.uint64((v >> (7 - j)) & 1) << np.uint64(8 * j)
    words = M // 8
    C = np.zeros((N, 8 * words + 8), np.uint8)  # one permutation's coins, a row per system
    C64 = C.view(np.uint64)
    stack = np.empty(plan.shape[0])
    zc = np.empty(N)
    xc = np.empty(N)
    products = np.empty(N)
    x = np.empty(N)
    y = np.empty(N)
    for t in range(T):
        A = D[t]
        z = zm[t]
        z_mean = (0.0 + _sum_block(z, 0, N) if N <= 128 else _planned_sum(z, plan, stack)) / N
        z_constant = True
        for n in range(N):
            zc[n] = z[n] - z_mean
            z_constant = z_constant and z[n] == z[0]
        for n in range(N):
            products[n] = zc[n] * zc[n]
        szz = 0.0 + _sum_block(products, 0, N) if N <= 128 else _planned_sum(products, plan, stack)
        for b in range(B):
            for n in range(N):
                i = first[t] + (b * N + n) * M
                for g in range(words):
                    k = i >> 3
                    shift = i & 7
                    if shift:  # the word's coins straddle two bytes
                        C64[n, g] = table[((np.int64(bits[k]) << shift) | (bits[k + 1] >> (8 - shift))) & 255]
                    else:
                        C64[n, g] = table[bits[k]]
                    i += 8
                for m in range(8 * words, M):
                    C[n, m] = (bits[i >> 3] >> (7 - (i & 7))) & 1
                    i += 1
            for n in range(0, N, 2):
                n = min(n, N - 2)  # an odd number of systems: the last pair overlaps the one before
                s0, s1 = _einsum_rows(C, A, n, M)
                x[n], x[n + 1] = s0 / M, s1 / M
            for n in range(N):
                shift_n = x[n]
                x[n] = xm[t, n] + shift_n
                y[n] = ym[t, n] - shift_n
            null[t, b] = (_system_pearson(x, zc, szz, z_constant, xc, products, plan, stack)
                          - _system_pearson(y, zc, szz, z_constant, xc, products, plan, stack))
    return null


def _packed_system_null(Xs, Ys, Z, coins) -> np.ndarray:
    """:func:`_perm_null` at system level (Pearson) from packed coins, by :func:`_perm_system_null`."""
    bits, first = _packed_bits(coins)
    return _perm_system_null(bits, first, coins.shape[1], np.ascontiguousarray(Ys - Xs), Xs.mean(axis=-1),
                             Ys.mean(axis=-1), Z.mean(axis=-1), _sum_plan(Xs.shape[-2]))


def _system_null(Xs, Ys, Z, coins, coefficient) -> np.ndarray:
    """:func:`_perm_null` at system level from boolean coins (T, B, N, M): numpy's einsum and correlations."""
    M = Xs.shape[-1]
    shift = np.einsum("tbnm,tnm->tbn", coins, Ys - Xs) / M
    zs = Z.mean(axis=-1)[:, None, :]
    xs = Xs.mean(axis=-1)[:, None, :] + shift
    ys = Ys.mean(axis=-1)[:, None, :] - shift
    return system_corr(xs, zs, coefficient) - system_corr(ys, zs, coefficient)


#: the most inputs whose sums einsum makes in one pass: it casts the boolean coins through a buffer of 8192
#: elements (numpy's default; np.setbufsize does not change it in numpy 2) and adds a longer row's parts
#: separately, an order :func:`_perm_system_null` does not follow
_EINSUM_ROW = 8192


@functools.cache
def _einsum_order_holds(bufsize: int = 8192) -> bool:
    """Whether :func:`_perm_system_null` gives the numpy path's floats with this numpy and this buffer size
    (``np.getbufsize()``, which the check runs under), checked once per process on random trials (values of
    mixed magnitudes; numbers of inputs around the block sizes, and :data:`_EINSUM_ROW`). numpy's einsum sums
    in an order set by its build's SIMD width (two lanes in the x86-64 and arm64 wheels, whose baselines are
    128-bit); with another build or version the planner keeps the numpy path."""
    rng = np.random.default_rng(20240611)
    for N, M in ((3, 3), (5, 8), (6, 13), (9, 31), (4, 130), (2, _EINSUM_ROW)):
        T, B = 2, 6
        Xs, Ys, Z = rng.normal(size=(3, T, N, M)) * 10.0 ** rng.integers(-3, 4, size=(3, T, N, M))
        packed = PackedCoins(rng, (T, B, N, M))
        if not np.array_equal(_packed_system_null(Xs, Ys, Z, packed),
                              _system_null(Xs, Ys, Z, packed.unpacked(), "pearson"), equal_nan=True):
            return False
    return True


def _perm_null(Xs, Ys, Z, coins, level, coefficient) -> np.ndarray:
    """Permuted r(X', Z) - r(Y', Z) for trials (T, N, M) and coins (T, B, N, M): array (T, B).

    The batched form of :func:`metaeval.significance.permutation_test`'s kernels (same fast paths).
    ``coins`` is a boolean array or (summary level, Pearson) :class:`PackedCoins` or :class:`_PackedBatch`."""
    packed = isinstance(coins, (PackedCoins, _PackedBatch))
    if level == "system":
        if (packed and coefficient == "pearson" and Xs.shape[-1] <= _EINSUM_ROW
                and _einsum_order_holds(np.getbufsize())):
            return _packed_system_null(Xs, Ys, Z, coins)
        return _system_null(Xs, Ys, Z, coins.unpacked() if packed else coins, coefficient)
    if packed and not (level == "summary" and coefficient == "pearson"):
        coins = coins.unpacked()
    if level == "summary" and coefficient == "pearson":
        N = Xs.shape[-2]
        centre = (Xs.mean(axis=-2, keepdims=True) + Ys.mean(axis=-2, keepdims=True)) / 2
        Xc, Yc = Xs - centre, Ys - centre
        Zc = Z - Z.mean(axis=-2, keepdims=True)
        sz, szz = Zc.sum(axis=-2)[:, None], (Zc * Zc).sum(axis=-2)[:, None]
        sx, sxx, sxz = Xc.sum(-2)[:, None], (Xc * Xc).sum(-2)[:, None], (Xc * Zc).sum(-2)[:, None]
        sy, syy, syz = Yc.sum(-2)[:, None], (Yc * Yc).sum(-2)[:, None], (Yc * Zc).sum(-2)[:, None]
        z_ok = ~constant(np.swapaxes(Z, -1, -2))[:, None, :]

        def exact(first, second):
            def vectors(t, b, m):
                swap = coins[t, b, :, m]
                return np.where(swap, second[t, :, m], first[t, :, m]), Z[t, :, m]
            return vectors

        if isinstance(coins, (PackedCoins, _PackedBatch)):
            # one compiled pass from the packed coins to the null (the floats of the boolean path below)
            bits, first = _packed_bits(coins)
            null, weak = _perm_summary_null(
                bits, first, coins.shape[1], np.ascontiguousarray(Yc - Xc), np.ascontiguousarray(Yc * Yc - Xc * Xc),
                np.ascontiguousarray((Yc - Xc) * Zc),
                np.stack([sx[:, 0], sxx[:, 0], sxz[:, 0], sy[:, 0], syy[:, 0], syz[:, 0], sz[:, 0], szz[:, 0]]),
                np.ascontiguousarray(Xs), np.ascontiguousarray(Ys), np.ascontiguousarray(z_ok[:, 0]),
                _sum_plan(Xs.shape[-1]))
            # permutations with a nearly constant column, whose r pearson_from_sums recomputes from the values:
            # rare, and taken by the boolean path (per trial, its floats do not depend on the batch)
            for t in np.unique(np.nonzero(weak)[0]):
                b = np.flatnonzero(weak[t])
                null[t, b] = _perm_null(Xs[t:t + 1], Ys[t:t + 1], Z[t:t + 1], _unpack_rows(coins, t, b),
                                        level, coefficient)[0]
            return null
        # the reference path (boolean coins): the einsum sums, then pearson_from_sums; exact constancy of each
        # permuted column from integer codes of X's and Y's values together
        codes = dense_codes(np.concatenate([Xs, Ys], axis=-2), axis=-2)
        cx, cy = codes[:, :N], codes[:, N:]
        shift = np.einsum("tbnm,tnm->tbm", coins, Yc - Xc)
        shift2 = np.einsum("tbnm,tnm->tbm", coins, Yc * Yc - Xc * Xc)
        shiftz = np.einsum("tbnm,tnm->tbm", coins, (Yc - Xc) * Zc)
        c1 = np.einsum("tbnm,tnm->tbm", coins, cy - cx)
        c2 = np.einsum("tbnm,tnm->tbm", coins, cy * cy - cx * cx)
        x_const = constant_from_codes(N, cx.sum(-2)[:, None] + c1, (cx * cx).sum(-2)[:, None] + c2)
        y_const = constant_from_codes(N, cy.sum(-2)[:, None] - c1, (cy * cy).sum(-2)[:, None] - c2)
        rx = pearson_from_sums(N, sx + shift, sz, sxx + shift2, szz, sxz + shiftz, defined=~x_const & z_ok,
                               refine=exact(Xs, Ys))
        ry = pearson_from_sums(N, sy - shift, sz, syy - shift2, szz, syz - shiftz, defined=~y_const & z_ok,
                               refine=exact(Ys, Xs))
        return mean_of_defined(rx) - mean_of_defined(ry)
    Xp = np.where(coins, Ys[:, None], Xs[:, None])
    Yp = np.where(coins, Xs[:, None], Ys[:, None])
    return level_corr(Xp, Z[:, None], level, coefficient) - level_corr(Yp, Z[:, None], level, coefficient)


def _boot_deltas(X, Y, Z, rows, cols, level, coefficient) -> np.ndarray:
    """Resampled r(X*, Z*) - r(Y*, Z*) for trials (T, N, M), rows (T, B, N), cols (T, B, M): array (T, B).

    The batched form of :func:`metaeval.resampling.bootstrap_ci`'s kernels (same fast paths)."""
    T, N, M = X.shape
    if level == "system":
        counts = draw_counts(cols, M)  # (T, B, M)
        zs = np.take_along_axis(np.einsum("tbm,tnm->tbn", counts, Z), rows, axis=-1) / M
        out = []
        for V in (X, Y):
            vs = np.take_along_axis(np.einsum("tbm,tnm->tbn", counts, V), rows, axis=-1) / M
            out.append(system_corr(vs, zs, coefficient))
        return out[0] - out[1]
    if level == "summary" and coefficient == "pearson":
        counts = draw_counts(rows, N)  # (T, B, N)
        icounts = counts.astype(np.int64)
        Zc = Z - Z.mean(axis=-2, keepdims=True)
        sz = np.einsum("tbn,tnm->tbm", counts, Zc)
        szz = np.einsum("tbn,tnm->tbm", counts, Zc * Zc)
        # constancy of a resampled column is decided exactly on integer codes of the values
        cz = dense_codes(Z, axis=-2)
        z_const = constant_from_codes(N, np.einsum("tbn,tnm->tbm", icounts, cz),
                                      np.einsum("tbn,tnm->tbm", icounts, cz * cz))
        out = []
        for V in (X, Y):
            Vc = V - V.mean(axis=-2, keepdims=True)
            cv = dense_codes(V, axis=-2)
            v_const = constant_from_codes(N, np.einsum("tbn,tnm->tbm", icounts, cv),
                                          np.einsum("tbn,tnm->tbm", icounts, cv * cv))

            def exact(t, b, m, V=V):
                r = rows[t, b]  # (k, N)
                return V[t[:, None], r, m[:, None]], Z[t[:, None], r, m[:, None]]

            r = pearson_from_sums(N, np.einsum("tbn,tnm->tbm", counts, Vc), sz,
                                  np.einsum("tbn,tnm->tbm", counts, Vc * Vc), szz,
                                  np.einsum("tbn,tnm->tbm", counts, Vc * Zc), defined=~v_const & ~z_const,
                                  refine=exact)
            out.append(mean_of_defined(np.take_along_axis(r, cols, axis=-1)))
        return out[0] - out[1]
    t = np.arange(T)[:, None, None, None]
    r, c = rows[:, :, :, None], cols[:, :, None, :]
    return level_corr(X[t, r, c], Z[t, r, c], level, coefficient) - level_corr(Y[t, r, c], Z[t, r, c], level,
                                                                                coefficient)


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
    kind, _, method = test.partition("-")
    if kind == "perm":
        Xs, Ys = _standardize_batch(X), _standardize_batch(Y)
        observed = level_corr(Xs, Z, level, coefficient) - level_corr(Ys, Z, level, coefficient)
        if draws is None:
            draws = _metric_draws(rng, test, level, coefficient, T, N, M, n_resamples)
        null = _perm_null(Xs, Ys, Z, draws, level, coefficient)
        valid = ~np.isnan(null)
        hit = tail_hits(null, observed[:, None], alternative)
        count = np.count_nonzero(hit & valid, axis=1)
        with np.errstate(invalid="ignore"):
            return np.where(np.isnan(observed), np.nan, monte_carlo_pvalue(count, valid.sum(axis=1)))
    observed = level_corr(X, Z, level, coefficient) - level_corr(Y, Z, level, coefficient)
    rows, cols = draws if draws is not None else _metric_draws(rng, test, level, coefficient, T, N, M, n_resamples)
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

    The chunks were sized for (T, B, N, M) float temporaries; the Perm-Both paths hold less: the summary-level
    Pearson kernel reads the packed coins (B N M / 8 bytes a trial, and (N, M) arrays), the system level
    B N M boolean coins and einsum's buffer. Testing several small chunks at once saves the per-call work of
    dozens of numpy calls (a chunk is one trial from 24 systems x 100 inputs on). Other tests: one chunk."""
    if test != "perm-both" or coefficient != "pearson" or level not in ("system", "summary"):
        return chunk
    per_trial = n_resamples * N * M / 8 + 200 * N * M if level == "summary" else 3 * n_resamples * N * M
    return max(chunk, int(8 * _BUDGET // per_trial))


class _PackedBatch:
    """The packed coins of consecutive chunks (:class:`PackedCoins`), tested together: their random bytes one
    after the other, trial t's first coin at bit ``first[t]`` (a chunk's coins end within a byte when T B N M is
    not a multiple of 8)."""

    def __init__(self, parts: list[PackedCoins]):
        T = sum(p.shape[0] for p in parts)
        self.shape = (T,) + parts[0].shape[1:]
        self.bits = np.concatenate([p.bits for p in parts])
        starts = np.cumsum([0] + [8 * p.bits.size for p in parts[:-1]])
        self.first = np.concatenate([s + _packed_bits(p)[1] for s, p in zip(starts, parts)])

    def unpacked(self) -> np.ndarray:
        return np.concatenate([_unpack_rows(self, t, np.arange(self.shape[1])) for t in range(self.shape[0])])


def _packed_bits(packed: PackedCoins | _PackedBatch) -> tuple[np.ndarray, np.ndarray]:
    """The random bytes of packed coins and the bit (int64) of each trial's first coin."""
    if isinstance(packed, _PackedBatch):
        return packed.bits, packed.first
    T, B, N, M = packed.shape
    return packed.bits, np.arange(T, dtype=np.int64) * (B * N * M)


def _unpack_rows(packed: PackedCoins | _PackedBatch, t: int, b: np.ndarray) -> np.ndarray:
    """Trial t's coins of permutations ``b`` as booleans (1, len(b), N, M)."""
    bits, first = _packed_bits(packed)
    _, _, N, M = packed.shape
    i = first[t] + (np.asarray(b)[:, None, None] * N + np.arange(N)[:, None]) * M + np.arange(M)
    return ((bits[i >> 3] >> (7 - (i & 7))) & 1).astype(bool)[None]


def _merge_draws(parts: list):
    """The draws (:func:`_metric_draws`) of consecutive chunks as those of one batch of all their trials."""
    if len(parts) == 1 or parts[0] is None:
        return parts[0]
    if isinstance(parts[0], PackedCoins):
        return _PackedBatch(parts)
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
