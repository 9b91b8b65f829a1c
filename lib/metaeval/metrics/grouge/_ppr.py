"""Personalized PageRank on the WordNet graph: the 16-column power-iteration kernel, its top-k extraction,
and :func:`ppr` (public through :mod:`metaeval.metrics.grouge`)."""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np

from metaeval.metrics import wordnet as _wordnet

# Personalized PageRank
#
# The kernel walks 16 seed columns at once: a node's 16 float32 values are one 64-byte cache line, so
# each edge costs one gather that SIMD adds consume whole. Nodes are renumbered once (reverse
# Cuthill-McKee) so that a node's neighbours, and the nodes a block of nearby seeds reaches, sit close in
# memory; seeds are processed in that order. After t steps a vector is zero outside the t-hop ball of
# its seeds, so rows outside it are skipped (exactly: their sum would be a sum of zeros). Every value is
# the same float operations in the same order as the plain iteration (scaled = v / deg, then the sum
# over the neighbours in node order, times alpha, plus the restart): the vectors are bitwise those of
# the straightforward kernel (tests/test_grouge.py checks this against a numpy float32 iteration).

_COLS = 16


@numba.njit(nogil=True, cache=True)
def _hops(indptr, indices, seeds, limit):  # pragma: no cover - compiled
    """Hop distance from the nearest seed (``limit + 1`` beyond ``limit`` hops or unreachable)."""
    n = indptr.shape[0] - 1
    dist = np.full(n, limit + 1, np.int32)
    queue = np.empty(n, np.int64)
    head = 0
    tail = 0
    for s in seeds:
        if dist[s] != 0:
            dist[s] = 0
            queue[tail] = s
            tail += 1
    while head < tail:
        j = queue[head]
        head += 1
        dj = dist[j]
        if dj >= limit:
            continue
        for p in range(indptr[j], indptr[j + 1]):
            i = indices[p]
            if dist[i] > dj + 1:
                dist[i] = dj + 1
                queue[tail] = i
                tail += 1
    return dist


@numba.njit(nogil=True, cache=True)
def _ppr16(indptr, indices, inv, dangling, seed_col, seed_node, seed_w, alpha, iterations,
           hops):  # pragma: no cover - compiled
    """``iterations`` power iterations for up to 16 seed columns (graph in walk order); (n, 16) values."""
    n = indptr.shape[0] - 1
    V = np.zeros((n, 16), inv.dtype)
    out = np.zeros((n, 16), inv.dtype)
    S = np.zeros((n, 16), inv.dtype)
    lost = np.zeros(16, inv.dtype)
    zero = lost[0]
    for e in range(seed_col.shape[0]):
        V[seed_node[e], seed_col[e]] += seed_w[e]
    for t in range(1, iterations + 1):
        for c in range(16):
            lost[c] = 0.0
        for q in range(dangling.shape[0]):
            j = dangling[q]
            for c in range(16):
                lost[c] += V[j, c]
        for i in range(n):
            if hops[i] < t:
                d = inv[i]
                for c in range(16):
                    S[i, c] = V[i, c] * d
        for i in range(n):
            if hops[i] > t:
                continue
            # sixteen scalar accumulators: LLVM's SLP vectorizer turns them into SIMD registers
            a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = zero
            a8 = a9 = a10 = a11 = a12 = a13 = a14 = a15 = zero
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                a0 += S[j, 0]
                a1 += S[j, 1]
                a2 += S[j, 2]
                a3 += S[j, 3]
                a4 += S[j, 4]
                a5 += S[j, 5]
                a6 += S[j, 6]
                a7 += S[j, 7]
                a8 += S[j, 8]
                a9 += S[j, 9]
                a10 += S[j, 10]
                a11 += S[j, 11]
                a12 += S[j, 12]
                a13 += S[j, 13]
                a14 += S[j, 14]
                a15 += S[j, 15]
            out[i, 0] = a0 * alpha
            out[i, 1] = a1 * alpha
            out[i, 2] = a2 * alpha
            out[i, 3] = a3 * alpha
            out[i, 4] = a4 * alpha
            out[i, 5] = a5 * alpha
            out[i, 6] = a6 * alpha
            out[i, 7] = a7 * alpha
            out[i, 8] = a8 * alpha
            out[i, 9] = a9 * alpha
            out[i, 10] = a10 * alpha
            out[i, 11] = a11 * alpha
            out[i, 12] = a12 * alpha
            out[i, 13] = a13 * alpha
            out[i, 14] = a14 * alpha
            out[i, 15] = a15 * alpha
        for e in range(seed_col.shape[0]):
            c = seed_col[e]
            out[seed_node[e], c] += ((1.0 - alpha) + alpha * lost[c]) * seed_w[e]
        V, out = out, V
    return V


@numba.njit(cache=True, inline="always")
def _worse(va, ia, vb, ib):  # pragma: no cover - compiled
    return va < vb or (va == vb and ia > ib)


@numba.njit(nogil=True, cache=True)
def _top(V, n_cols, node_of_row, hops, limit, width, idx, val, length):  # pragma: no cover - compiled
    """The ``width`` largest non-zero values of each of the first ``n_cols`` columns of ``V`` (ties: the
    smaller node first), by decreasing value, with their nodes; one pass per column with a bounded heap."""
    n = V.shape[0]
    hv = np.empty(width, V.dtype)
    hi = np.empty(width, np.int64)
    for c in range(n_cols):
        m = 0
        for i in range(n):
            if hops[i] > limit:
                continue
            x = V[i, c]
            if x == 0:
                continue
            o = node_of_row[i]
            if m < width:
                k = m
                hv[k] = x
                hi[k] = o
                m += 1
                while k > 0:  # the heap's root is its worst entry
                    parent = (k - 1) // 2
                    if _worse(hv[k], hi[k], hv[parent], hi[parent]):
                        hv[k], hv[parent] = hv[parent], hv[k]
                        hi[k], hi[parent] = hi[parent], hi[k]
                        k = parent
                    else:
                        break
            elif x >= hv[0] and _worse(hv[0], hi[0], x, o):  # most values fall below the heap's worst
                hv[0] = x
                hi[0] = o
                k = 0
                while True:
                    a = 2 * k + 1
                    if a >= m:
                        break
                    b = a + 1
                    w = a if b >= m or _worse(hv[a], hi[a], hv[b], hi[b]) else b
                    if _worse(hv[w], hi[w], hv[k], hi[k]):
                        hv[k], hv[w] = hv[w], hv[k]
                        hi[k], hi[w] = hi[w], hi[k]
                        k = w
                    else:
                        break
        by_node = np.argsort(hi[:m], kind="mergesort")
        order = by_node[np.argsort(-hv[:m][by_node], kind="mergesort")]
        for q in range(m):
            idx[c, q] = hi[order[q]]
            val[c, q] = hv[order[q]]
        for q in range(m, idx.shape[1]):
            idx[c, q] = -1
            val[c, q] = 0.0
        length[c] = m


class _Walker:
    """A graph prepared for :func:`_ppr16`: nodes renumbered by reverse Cuthill-McKee (``order[row]`` is
    the node of a row, ``row[node]`` its row), each row's neighbours listed in node order."""

    def __init__(self, adjacency):
        import scipy.sparse as sp
        from scipy.sparse.csgraph import reverse_cuthill_mckee

        A = sp.csr_matrix(adjacency)
        n = A.shape[0]
        order = np.asarray(reverse_cuthill_mckee(A, symmetric_mode=True), np.int64)
        row = np.empty(n, np.int64)
        row[order] = np.arange(n)
        deg = np.diff(A.indptr)
        counts = deg[order]
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        # row r lists the neighbours of node order[r], in node order (A's rows are sorted), as rows
        take = np.repeat(A.indptr[order] - indptr[:-1], counts) + np.arange(indptr[-1])
        self.n = n
        self.order, self.row = order, row
        self.indptr = indptr
        self.indices = row[A.indices[take]].astype(np.int32)
        d = counts.astype(np.float64)
        self.inv64 = np.divide(1.0, d, out=np.zeros_like(d), where=d > 0)
        self.inv32 = self.inv64.astype(np.float32)
        self.dangling = row[np.flatnonzero(deg == 0)]  # in node order, as the plain iteration sums them

    def walk(self, sets: Sequence[np.ndarray], alpha: float, iterations: int, dtype) -> tuple[np.ndarray, np.ndarray]:
        """Up to 16 seed sets (node ids): their (rows x 16) vectors in row order, and the hop distances."""
        _compile_vectorized()
        dt = np.dtype(dtype)
        col = np.concatenate([np.full(s.size, c, np.int64) for c, s in enumerate(sets)])
        node = self.row[np.concatenate(sets)]
        w = np.concatenate([np.full(s.size, 1.0 / s.size, dt) for s in sets])
        hops = _hops(self.indptr, self.indices, node, int(iterations))
        inv = self.inv32 if dt == np.float32 else self.inv64
        V = _ppr16(self.indptr, self.indices, inv, self.dangling, col, node, w, dt.type(alpha), int(iterations),
                   hops)
        return V, hops


_COMPILED = False


def _compile_vectorized() -> None:
    """Compile the PPR kernel with LLVM's SLP vectorizer on (numba leaves it off by default; it doubles the
    kernel's speed). Only the compilation reads the setting; a cached compiled kernel is loaded as is."""
    global _COMPILED
    if _COMPILED:
        return
    from numba.core import config

    old = getattr(config, "SLP_VECTORIZE")
    setattr(config, "SLP_VECTORIZE", 1)
    try:
        for f in ("float32", "float64"):
            _ppr16.compile(f"{f}[:, ::1](int64[::1], int32[::1], {f}[::1], int64[::1], int64[::1], int64[::1], "
                           f"{f}[::1], {f}, int64, int32[::1])")
    finally:
        setattr(config, "SLP_VECTORIZE", old)
    _COMPILED = True


_WALKERS: dict[str, _Walker] = {}


def _wordnet_walker() -> _Walker:
    wn = _wordnet.load()
    if wn.sha256 not in _WALKERS:
        _WALKERS[wn.sha256] = _Walker(wn.adjacency)
    return _WALKERS[wn.sha256]


def ppr(seeds, *, restart: float = 0.15, iterations: int = 30, adjacency=None, dtype=np.float64) -> np.ndarray:
    """Personalized PageRank vectors, one column per seed set, on the WordNet graph (or ``adjacency``).

    Parameters
    ----------
    seeds : sequence of int or of sequences of int
        Graph nodes; a sequence of nodes is one seed set (``v0`` uniform over its distinct nodes).
    restart : float
        Restart probability ``1 - alpha``.
    iterations : int
        Power iterations from ``v0``.
    adjacency : scipy.sparse matrix, optional
        A symmetric 0/1 adjacency matrix to walk instead of WordNet's.
    dtype : numpy float type
        Arithmetic of the iteration: float64, or float32 (faster; values to ~1e-7 relative).

    Returns
    -------
    numpy.ndarray
        ``(n_nodes, len(seeds))``; each column sums to 1.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> path = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]]))
    >>> ppr([0], adjacency=path, iterations=1).ravel().round(4).tolist()
    [0.15, 0.85, 0.0]
    """
    if not 0.0 < restart < 1.0:
        raise ValueError(f"restart must be in (0, 1), got {restart!r}")
    if not isinstance(iterations, (int, np.integer)) or iterations < 0:
        raise ValueError(f"iterations must be a non-negative integer, got {iterations!r}")
    if adjacency is None:
        walker = _wordnet_walker()
    else:
        import scipy.sparse as sp

        A = sp.csr_matrix(adjacency, dtype=np.float64)
        if A.shape[0] != A.shape[1] or (abs(A - A.T) > 0).nnz:
            raise ValueError("adjacency must be a square symmetric matrix")
        A.data[:] = 1.0
        A.sort_indices()
        walker = _Walker(A)
    n = walker.n
    sets = [np.unique(np.atleast_1d(np.asarray(s, np.int64))) for s in seeds]
    for q, s in enumerate(sets):
        if s.size == 0:
            raise ValueError(f"seeds[{q}] is empty")
        if s.min() < 0 or s.max() >= n:
            raise ValueError(f"seeds[{q}] has a node outside 0..{n - 1}")
    dt = np.dtype(dtype)
    if dt not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise ValueError(f"dtype must be float64 or float32, got {dt}")
    out = np.empty((n, len(sets)), dt)
    for start in range(0, len(sets), _COLS):
        chunk = sets[start : start + _COLS]
        V, _ = walker.walk(chunk, 1.0 - float(restart), int(iterations), dt)
        out[:, start : start + len(chunk)] = V[walker.row, : len(chunk)]
    return out


def _truncate(dense: np.ndarray, width: int):
    k = dense.shape[1]
    idx = np.full((k, width), -1, np.int32)
    val = np.zeros((k, width), dense.dtype)
    length = np.zeros(k, np.int64)
    for c in range(k):
        col = dense[:, c]
        nz = np.flatnonzero(col)
        if nz.size > width:
            # the width largest, boundary ties broken by index like the final ordering
            part = np.lexsort((nz, -col[nz]))[:width]
            nz = nz[part]
        order = nz[np.lexsort((nz, -col[nz]))]
        idx[c, : order.size] = order
        val[c, : order.size] = col[order]
        length[c] = order.size
    return idx, val, length

