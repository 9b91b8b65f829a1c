"""Private: pair-counting kernels shared by :mod:`~metaeval.stats.correlation` and
:mod:`~metaeval.stats.agreement` (Kendall tau-b and tau-c, pairwise accuracy along the last axis).

Kendall has one entry, :func:`kendall`, and one formula per variant (:func:`~metaeval.stats._kernels.tau_b`,
:func:`~metaeval.stats._kernels.tau_c`), which the compiled summary-level resampling kernels share. Its counts
come from one of two implementations of the same definition: all pairs of a batch of short vectors at once
(vectorized; a batch of resamples is one array operation), or scipy's O(n log n) sort-and-merge per long
vector (:func:`~metaeval.stats._kernels.kendall_counts`; global level, 64 x 5,000 cells, in O(n) memory).
Both give the same integers, so the choice never changes a number (``tests/test_kendall_large.py``).

The pair statistics of :mod:`~metaeval.stats.agreement` that count pairs by a threshold on one variable and
the order of the other (pairwise accuracy, WMT's Kendall-like tau, acc_eq at a fixed epsilon) get their counts
from :func:`beyond_counts_rows`, a sort and a Fenwick tree per vector (O(n log n) time, O(n) memory: 10^5
cells take 10^5 entries, not the 5 x 10^9 pairs); the same integers as counting the pairs.

Both take ``x, z`` of shape ``(..., n)`` and an optional 0/1 validity mask ``w`` of the same shape, like the
kernels of :func:`metaeval.stats.correlation.batch_corr`, and return shape ``(...)``.
"""

from __future__ import annotations

import numba
import numpy as np

from metaeval.stats._kernels import kendall_counts_rows, snap, tau_b, tau_c

#: vectors at least this long get their Kendall counts by sorting (O(n log n) time, O(n) memory) rather than
#: from all n (n - 1) / 2 pairs of the batch at once: the two cost the same near n = 12 (benchmarks/bench_stats.py)
SORTED_FROM = 16


def pair_signs(x: np.ndarray, z: np.ndarray, w: np.ndarray | None):
    """sign(x_i - x_j), sign(z_i - z_j) (int8) and pair validity for the pairs i < j (``np.triu_indices``
    order), the pair axis last. ``np.take`` along the last axis is several times faster than gathering the
    moved axis."""
    n = x.shape[-1]
    iu, ju = np.triu_indices(n, k=1)
    dx = np.take(x, iu, axis=-1) - np.take(x, ju, axis=-1)
    dz = np.take(z, iu, axis=-1) - np.take(z, ju, axis=-1)
    sx = (dx > 0).view(np.int8) - (dx < 0).view(np.int8)
    sz = (dz > 0).view(np.int8) - (dz < 0).view(np.int8)
    if w is None:
        valid = None
    else:
        wb = np.asarray(w) > 0
        valid = np.take(wb, iu, axis=-1) & np.take(wb, ju, axis=-1)
    return sx, sz, valid


def n_distinct(x: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Number of distinct valid values along the last axis."""
    v = np.sort(x if w is None else np.where(w > 0, x, np.nan), axis=-1)  # NaN (invalid) sorts last
    valid = ~np.isnan(v)
    new = np.ones(v.shape, dtype=bool)
    new[..., 1:] = v[..., 1:] != v[..., :-1]
    return np.count_nonzero(new & valid, axis=-1)


def _signs_first(v: np.ndarray, iu: np.ndarray, ju: np.ndarray) -> np.ndarray:
    """sign(v[i] - v[j]) for the pairs i < j, as int8, with the pair axis first (``v`` has the vector axis
    first; gathering along the first axis is ~10x faster than along the last)."""
    d = v[iu] - v[ju]
    return (d > 0).view(np.int8) - (d < 0).view(np.int8)


def _pair_counts(x: np.ndarray, z: np.ndarray, w: np.ndarray | None):
    """S, nx, nz (int64, shape (...)) of every vector of a batch from all its pairs: O(batch n^2) memory."""
    n = x.shape[-1]
    iu, ju = np.triu_indices(n, k=1)
    sx = _signs_first(np.ascontiguousarray(np.moveaxis(x, -1, 0)), iu, ju)
    sz = _signs_first(np.ascontiguousarray(np.moveaxis(z, -1, 0)), iu, ju)
    if w is not None:
        wt = np.moveaxis(w, -1, 0)
        pair = (wt[iu] * wt[ju]).astype(np.int8)
        sx = sx * pair
        sz = sz * pair
    s = np.einsum("k...,k...->...", sx, sz, dtype=np.int64)
    return s, np.count_nonzero(sx, axis=0).astype(np.int64), np.count_nonzero(sz, axis=0).astype(np.int64)


def _sorted_counts(x: np.ndarray, z: np.ndarray, w: np.ndarray | None):
    """S, nx, nz, n, distinct values (the smaller of x's and z's), each int64 (...), one vector at a time by
    sorting (:func:`~metaeval.stats._kernels.kendall_counts_rows`). A valid entry that is NaN makes its
    vector's counts zero (tau NaN, as scipy's default ``nan_policy``; the pair path ties NaN with everything)."""
    lead, n = x.shape[:-1], x.shape[-1]
    valid = np.ones((int(np.prod(lead)), n), bool) if w is None else (np.asarray(w) > 0).reshape(-1, n)
    counts = kendall_counts_rows(np.ascontiguousarray(x.reshape(-1, n)), np.ascontiguousarray(z.reshape(-1, n)),
                                 np.ascontiguousarray(valid))
    return counts.reshape((5,) + lead)


def kendall(x: np.ndarray, z: np.ndarray, w: np.ndarray | None = None, *, variant: str = "b") -> np.ndarray:
    """Kendall's tau along the last axis (any batch shape) as ``scipy.stats.kendalltau(variant=...)``:
    tau-b ``S / sqrt(nx) / sqrt(nz)`` or Stuart's tau-c ``2 S / (n^2 (m - 1) / m)`` (``m`` the smaller number
    of distinct values); NaN where either vector is constant or has fewer than 2 valid entries. ``w`` is a 0/1
    validity mask (pairs with an invalid entry do not count).

    Vectors shorter than :data:`SORTED_FROM` are counted over all pairs of the whole batch at once, longer ones
    by sorting (O(n log n)); both give the same integers.

    Examples
    --------
    >>> kendall(np.array([[1., 2, 3, 4], [4, 3, 2, 1]]), np.array([1., 2, 2, 3])).round(4).tolist()
    [0.9129, -0.9129]
    >>> kendall(np.array([1., 2, 3, 4]), np.array([1., 2, 2, 3]), variant="c").round(4).tolist()
    0.9375
    """
    if variant not in ("b", "c"):
        raise ValueError(f"variant must be 'b' or 'c', got {variant!r}")
    x, z = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(z, dtype=float))
    if w is not None:
        w = np.broadcast_to(w, x.shape)
    n = x.shape[-1]
    if n >= SORTED_FROM:
        s, nx, nz, nv, m = _sorted_counts(x, z, w)
        return tau_b(s, nx, nz) if variant == "b" else tau_c(s, nv, m)
    s, nx, nz = _pair_counts(x, z, w)
    if variant == "b":
        return tau_b(s, nx, nz)
    nv = np.full(x.shape[:-1], n, np.int64) if w is None else np.count_nonzero(np.asarray(w) > 0, axis=-1)
    m = np.minimum(n_distinct(x, w), n_distinct(z, w)).astype(np.int64)
    return tau_c(s, nv.astype(np.int64), m)


def kendall_c(x: np.ndarray, z: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """Stuart's tau-c as ``scipy.stats.kendalltau(variant="c")``: :func:`kendall` with ``variant="c"``."""
    return kendall(x, z, w, variant="c")


@numba.njit(cache=True)
def _fenwick_prefix(tree, r):  # pragma: no cover - compiled
    total = 0
    while r > 0:
        total += tree[r]
        r &= r - 1
    return total


@numba.njit(cache=True)
def _beyond_counts(a, b, t, inclusive):  # pragma: no cover - compiled
    """(greater, equal, tied_b) for two vectors without NaN: the ordered pairs (i, j) with ``a_j - a_i > t``
    (``>= t`` if ``inclusive``, for t > 0) and ``b_j > b_i`` / ``b_j == b_i``, and the pairs tied in b.

    Sorted by a, the j that pass the threshold for an i form a suffix, which only grows as a_i decreases
    (the float difference a_j - a_i is monotone in both: rounding is); walking i down, the entries entering
    the suffix go into a Fenwick tree over b's dense ranks, which counts those above and equal to b_i."""
    n = a.shape[0]
    order = np.argsort(a, kind="mergesort")
    a_s = a[order]
    b_s = b[order]
    ob = np.argsort(b_s, kind="mergesort")
    rank = np.empty(n, np.int64)
    top = 0
    tied_b = 0
    run = 0
    for idx in range(n):
        if idx == 0 or b_s[ob[idx]] != b_s[ob[idx - 1]]:
            top += 1
            tied_b += run * (run - 1) // 2
            run = 0
        run += 1
        rank[ob[idx]] = top
    tied_b += run * (run - 1) // 2
    tree = np.zeros(top + 1, np.int64)
    inserted = 0
    greater = 0
    equal = 0
    p = n
    for i in range(n - 1, -1, -1):
        while p > 0:
            d = a_s[p - 1] - a_s[i]
            if not ((d >= t) if inclusive else (d > t)):
                break
            p -= 1
            j = rank[p]
            while j <= top:
                tree[j] += 1
                j += j & -j
            inserted += 1
        r = rank[i]
        upto = _fenwick_prefix(tree, r)
        greater += inserted - upto
        equal += upto - _fenwick_prefix(tree, r - 1)
    return greater, equal, tied_b


@numba.njit(cache=True)
def _beyond_rows(a, b, valid, t, inclusive):  # pragma: no cover - compiled
    R, n = a.shape
    out = np.zeros((4, R), np.int64)
    av = np.empty(n)
    bv = np.empty(n)
    for r in range(R):
        k = 0
        for i in range(n):
            if valid[r, i]:
                av[k] = a[r, i]
                bv[k] = b[r, i]
                k += 1
        g, e, tb = _beyond_counts(av[:k], bv[:k], t, inclusive)
        out[0, r] = g
        out[1, r] = e
        out[2, r] = tb
        out[3, r] = k * (k - 1) // 2
    return out


def beyond_counts_rows(a: np.ndarray, b: np.ndarray, w: np.ndarray | None, t: float = 0.0,
                       inclusive: bool = False) -> np.ndarray:
    """Pair counts of every vector (last axis) of ``a``, ``b`` over its valid entries (``w > 0``; all if None):
    int64 ``(4, ...)`` of the pairs with a difference in ``a`` beyond ``t`` (``|a_i - a_j| > t``, or ``>= t``
    with ``inclusive`` and t > 0) that ``b`` orders the same way, those ``b`` ties, the pairs ``b`` ties,
    and all pairs. O(n log n) per vector (:func:`_beyond_counts`); the entries must not be NaN.

    By hand: of the 6 pairs, those 1 -> 2 and 1 -> 3 rise in both; 2 -> 3 rises by 1 > 0.5 in a, tied in b:

    >>> beyond_counts_rows(np.array([1.0, 2, 3, 5]), np.array([1.0, 2, 2, 0]), None, t=0.5).tolist()
    [2, 1, 1, 6]
    """
    if inclusive and not t > 0:
        raise ValueError("inclusive thresholds need t > 0 (a_j - a_i >= 0 holds for every tie and for i = j)")
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    lead, n = a.shape[:-1], a.shape[-1]
    valid = np.ones(a.shape, bool) if w is None else np.broadcast_to(np.asarray(w) > 0, a.shape)
    rows = int(np.prod(lead))
    out = _beyond_rows(np.ascontiguousarray(a.reshape(rows, n)), np.ascontiguousarray(b.reshape(rows, n)),
                       np.ascontiguousarray(valid.reshape(rows, n)), float(t), bool(inclusive))
    return out.reshape((4,) + lead)


def pairwise_agreement(
    x: np.ndarray, z: np.ndarray, w: np.ndarray | None = None, skip_human_ties: bool = False
) -> np.ndarray:
    """Share of pairs i < j with ``sign(x_i - x_j) == sign(z_i - z_j)`` (mt-metrics-eval's ``Agreement``:
    a pair tied in both counts as agreement, a tie in one only as disagreement); NaN with fewer than 2
    valid entries. ``skip_human_ties`` leaves out the pairs ``z`` ties (the WMT convention); NaN where no
    pair is left.

    Vectors of at least :data:`SORTED_FROM` entries are counted by sorting (:func:`beyond_counts_rows`:
    concordant C, pairs z ties that x orders, pairs z ties; agreeing = C + tied in both), shorter ones over
    all pairs of the batch at once; both give the same integers."""
    if x.shape[-1] >= SORTED_FROM or z.shape[-1] >= SORTED_FROM:
        concordant, z_tie_x_not, z_ties, pairs = beyond_counts_rows(x, z, w)
        if skip_human_ties:
            agree, pairs = concordant, pairs - z_ties
        else:
            agree = concordant + z_ties - z_tie_x_not
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(pairs > 0, agree / np.maximum(pairs, 1), np.nan)
    sx, sz, valid = pair_signs(x, z, w)
    same = sx == sz
    if skip_human_ties:
        untied = sz != 0
        valid = untied if valid is None else valid & untied
    if valid is None:
        agree, pairs = np.count_nonzero(same, axis=-1), np.full(same.shape[:-1], same.shape[-1])
    else:
        agree, pairs = np.count_nonzero(same & valid, axis=-1), np.count_nonzero(valid, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pairs > 0, agree / np.maximum(pairs, 1), np.nan)


GROUPINGS = ("system", "summary", "global", "per-system")


def level_groups(X: np.ndarray, Z: np.ndarray, level: str):
    """The vectors a coefficient is computed on at a level, as ``(x, z, w)`` of shape ``(G, n)``.

    * ``"system"``: one group, the per-system means over the scored inputs (snapped, so equal means tie);
    * ``"summary"``: one group per input, over systems (mt-metrics-eval ``average_by="item"``);
    * ``"per-system"``: one group per system, over inputs (mt-metrics-eval ``average_by="sys"``);
    * ``"global"``: one group of all N*M cells (mt-metrics-eval ``average_by="none"``).

    ``w`` is the 0/1 mask of scored entries, or None if every entry is scored.
    """
    nan = np.isnan(X) | np.isnan(Z)
    if level == "system":
        valid = ~nan
        with np.errstate(invalid="ignore", divide="ignore"):
            xs = np.where(valid, X, 0.0).sum(axis=1) / valid.sum(axis=1)
            zs = np.where(valid, Z, 0.0).sum(axis=1) / valid.sum(axis=1)
        scored = valid.any(axis=1)
        w = None if scored.all() else scored[None, :].astype(float)
        return snap(np.where(scored, xs, 0.0))[None, :], snap(np.where(scored, zs, 0.0))[None, :], w
    if level == "summary":
        x, z, m = X.T, Z.T, nan.T
    elif level == "per-system":
        x, z, m = X, Z, nan
    elif level == "global":
        x, z, m = X.reshape(1, -1), Z.reshape(1, -1), nan.reshape(1, -1)
    else:
        raise ValueError(f"level must be one of {GROUPINGS}, got {level!r}")
    w = None if not m.any() else (~m).astype(float)
    return np.where(m, 0.0, x), np.where(m, 0.0, z), w
