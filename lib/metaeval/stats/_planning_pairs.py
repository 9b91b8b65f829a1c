"""Private: the planner's compiled sign-flip permutation test of every system pair (:func:`_signflip_tail_counts`,
which :mod:`metaeval.stats._planning_kernels` calls), counting the flips at least as extreme as the observed
difference with the one tail rule of :data:`metaeval.stats._kernels.TAIL`.
"""

from __future__ import annotations

import numba
import numpy as np



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
