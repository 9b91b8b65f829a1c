r"""The two signature comparisons GRouge uses: Weighted Overlap (one kernel) and cosine.

Weighted Overlap (Pilehvar, Jurgens & Navigli 2013; ADW's ``comparison/WeightedOverlap.java``) of two
vectors, with :math:`H` the dimensions non-zero in both and :math:`r_j(h)` the rank of :math:`h` among the
non-zero dimensions of :math:`v_j` (1 = largest; equal values ranked by dimension index):

.. math:: WO(v_1, v_2) = \frac{\sum_{h \in H} (r_1(h) + r_2(h))^{-1}}{\sum_{i=1}^{|H|} (2i)^{-1}},
   \qquad WO = 0 \text{ if } H = \emptyset .

Every Weighted Overlap in the package goes through :func:`_wo_of_ranks` (one place for the formula): for
each dimension of the second vector, in rank order, its rank in the first vector (0 = absent).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["weighted_overlap"]


@numba.njit(cache=True)
def _harmonic(m):  # pragma: no cover - compiled
    """``h[i] = sum_{k=1..i} 1 / (2k)``: WO's normaliser for ``|H| = i``."""
    h = np.zeros(m + 1)
    for i in range(1, m + 1):
        h[i] = h[i - 1] + 1.0 / (2.0 * i)
    return h


@numba.njit(cache=True, nogil=True, inline="always")
def _wo_of_ranks(ranks, n, harm):  # pragma: no cover - compiled
    """THE Weighted Overlap formula: ``ranks[q]`` is the rank in the first vector (0 = absent) of the
    dimension of rank ``q + 1`` in the second, for ``q < n``."""
    acc = 0.0
    cnt = 0
    for q in range(n):
        p = ranks[q]
        if p > 0:
            acc += 1.0 / (p + q + 1)
            cnt += 1
    return acc / harm[cnt] if cnt > 0 else 0.0


@numba.njit(cache=True, nogil=True, inline="always")
def _wo_marked(pos, dims_b, n_b, harm, buf):  # pragma: no cover - compiled
    """WO of a vector whose ranks are marked in ``pos`` (``pos[d]`` = rank of ``d``, 0 = absent) and the
    vector whose dimensions are ``dims_b[:n_b]`` in rank order (``buf``: scratch of length >= n_b)."""
    for q in range(n_b):
        buf[q] = pos[dims_b[q]]
    return _wo_of_ranks(buf, n_b, harm)


@numba.njit(cache=True, nogil=True)
def _wo_ranked(dims_a, dims_b, pos, harm):  # pragma: no cover - compiled
    """WO of two vectors given as their non-zero dimensions in rank order (``pos`` zeroed scratch, left
    zeroed)."""
    for q in range(dims_a.shape[0]):
        pos[dims_a[q]] = q + 1
    out = _wo_marked(pos, dims_b, dims_b.shape[0], harm, np.empty(dims_b.shape[0], np.int64))
    for q in range(dims_a.shape[0]):
        pos[dims_a[q]] = 0
    return out


def _ranked(v: np.ndarray) -> np.ndarray:
    """Non-zero dimensions of ``v`` from largest to smallest (ties by dimension index)."""
    nz = np.flatnonzero(v)
    return nz[np.lexsort((nz, -v[nz]))]


def weighted_overlap(v1, v2) -> float:
    """Weighted Overlap of two non-negative vectors (Pilehvar et al. 2013), over the dimensions non-zero in
    both.

    Examples
    --------
    >>> weighted_overlap([0.5, 0.3, 0.2], [0.5, 0.3, 0.2])
    1.0
    >>> round(weighted_overlap([0.5, 0.3, 0.2], [0.2, 0.3, 0.5]), 6)   # (1/4 + 1/4 + 1/4) / (1/2 + 1/4 + 1/6)
    0.818182
    >>> weighted_overlap([1, 0], [0, 1])
    0.0
    """
    a, b = np.asarray(v1, dtype=float), np.asarray(v2, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"v1 and v2 must be 1-D of the same length, got shapes {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()) or (a < 0).any() or (b < 0).any():
        raise ValueError("v1 and v2 must be finite and non-negative")
    ia, ib = _ranked(a), _ranked(b)
    pos = np.zeros(a.size, np.int64)
    harm = _harmonic(max(min(ia.size, ib.size), 1))
    return float(_wo_ranked(ia.astype(np.int64), ib.astype(np.int64), pos, harm))


@numba.njit(parallel=True, cache=True)
def _pair_wo(rows_a, rows_b, idx, length, n_dims, harm, n_chunks):  # pragma: no cover - compiled
    """WO of every (a, b) pair of stored single-sense vectors (their first ``length[row]`` dimensions)."""
    na, nb = rows_a.shape[0], rows_b.shape[0]
    out = np.zeros((na, nb))
    per = (na + n_chunks - 1) // n_chunks
    for ch in numba.prange(n_chunks):
        pos = np.zeros(n_dims, np.int64)
        buf = np.empty(idx.shape[1], np.int64)
        for a in range(ch * per, min(na, (ch + 1) * per)):
            ra = rows_a[a]
            for q in range(length[ra]):
                pos[idx[ra, q]] = q + 1
            for b in range(nb):
                rb = rows_b[b]
                out[a, b] = _wo_marked(pos, idx[rb], length[rb], harm, buf)
            for q in range(length[ra]):
                pos[idx[ra, q]] = 0
    return out


@numba.njit(parallel=True, cache=True)
def _pair_cosine(rows_a, rows_b, idx, val, length, n_dims, n_chunks):  # pragma: no cover - compiled
    """Cosine of every (a, b) pair of stored single-sense vectors (their first ``length[row]`` dimensions).

    ADW's alignment measure (``alignmentSimMeasure=Cosine`` on vectors truncated to ``alignmentVecSize``);
    ADW renormalises a truncated vector to sum 1, which leaves a cosine unchanged."""
    na, nb = rows_a.shape[0], rows_b.shape[0]
    out = np.zeros((na, nb))
    norm_b = np.zeros(nb)
    for b in range(nb):
        rb = rows_b[b]
        s = 0.0
        for q in range(length[rb]):
            x = np.float64(val[rb, q])
            s += x * x
        norm_b[b] = np.sqrt(s)
    per = (na + n_chunks - 1) // n_chunks
    for ch in numba.prange(n_chunks):
        dense = np.zeros(n_dims)
        for a in range(ch * per, min(na, (ch + 1) * per)):
            ra = rows_a[a]
            s = 0.0
            for q in range(length[ra]):
                x = np.float64(val[ra, q])
                dense[idx[ra, q]] = x
                s += x * x
            norm_a = np.sqrt(s)
            for b in range(nb):
                rb = rows_b[b]
                dot = 0.0
                for q in range(length[rb]):
                    dot += dense[idx[rb, q]] * np.float64(val[rb, q])
                out[a, b] = dot / (norm_a * norm_b[b]) if norm_a > 0 and norm_b[b] > 0 else 0.0
            for q in range(length[ra]):
                dense[idx[ra, q]] = 0.0
    return out


def cosine(v1, v2) -> float:
    """Cosine of two vectors (0 if either is zero): the alignment measure's formula, for tests.

    Examples
    --------
    >>> round(cosine([1.0, 1.0, 0.0], [1.0, 0.0, 0.0]), 6)
    0.707107
    """
    a, b = np.asarray(v1, dtype=float), np.asarray(v2, dtype=float)
    na, nb = float(np.sqrt(a @ a)), float(np.sqrt(b @ b))
    return float(a @ b / (na * nb)) if na > 0 and nb > 0 else 0.0
