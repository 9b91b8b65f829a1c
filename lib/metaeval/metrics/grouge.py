r"""GRouge (ShafieiBavani et al.): ROUGE with a lexico-semantic match by personalized PageRank on WordNet.

Definitions, in the paper's notation (its equations did not survive in our copy; these follow the text):

* **PPR vector** of a set of seed senses :math:`S` on the WordNet 3.0 synset graph
  (:mod:`metaeval.metrics.wordnet`): with :math:`M` the column-normalised adjacency matrix,
  :math:`v^{(0)}` uniform over :math:`S` and

  .. math:: v^{(t)} = (1 - \alpha)\, v^{(0)} + \alpha\, M v^{(t-1)}, \qquad t = 1..30,

  restart probability :math:`1 - \alpha = 0.15` (both are parameters). The mass that would sit on an
  isolated synset (a column of zeros in :math:`M`) restarts at :math:`v^{(0)}`, as in
  ``networkx.pagerank``; otherwise it would leak. PPR is linear in :math:`v^{(0)}`, so the vector of a set
  of senses is the mean of the single-sense vectors: single-sense vectors are computed in blocks (sparse
  matrix times a dense block of seed columns, numba, both cores) and cached on disk under
  ``metaeval._io.cache_dir()/grouge``, keyed by the graph's sha256 and the parameters.
* **Weighted Overlap** (Pilehvar et al. 2013) of two vectors, with :math:`H` the dimensions non-zero in
  both and :math:`r_j(h)` the rank of :math:`h` in :math:`v_j` (1 = largest; equal values are ranked by
  dimension index):

  .. math:: WO(v_1, v_2) = \frac{\sum_{h \in H} (r_1(h) + r_2(h))^{-1}}{\sum_{i=1}^{|H|} (2i)^{-1}}
     \in [0, 1],\qquad WO(v, v) = 1,\qquad WO = 0 \text{ if } H = \emptyset .

* **Alignment** (ADW): for a model-gram :math:`g` and the peer text :math:`P`, each word of :math:`g`
  takes the sense with the highest WO to any sense of any word of :math:`P`, and each word of :math:`P`
  the sense with the highest WO to any sense of any word of :math:`g` (ties: the earlier sense in WordNet's
  frequency order; a word with nothing to align to takes its first sense). Words that are not in WordNet
  *and ROUGE's SMART stopwords* are out of vocabulary (OOV): WordNet would map stopwords to spurious senses
  ("a" = vitamin A, "it" = information technology, "was" = Washington), so we treat them as OOV. Each OOV
  word type gets its own dimension placed at the top of its text's vector (above every PPR value; several
  OOV words ordered by count, then alphabetically), so identical OOV words still match.
  :math:`Sem(g, P) = WO(\mathrm{PPR}(\text{senses of } g), \mathrm{PPR}(\text{senses of } P))`, each seed
  set being the *distinct* chosen senses.
* **GRouge-N** (any n) and **GRouge-SU4** (skip-bigrams at distance <= 4 plus unigrams, exactly the grams
  of ROUGE-SU4): for every reference :math:`S` and model-gram :math:`g` with count :math:`c_S(g)`,

  .. math:: hit(g) = \lambda \min(c_S(g), c_P(g)) + (1 - \lambda)\, c_S(g)\, Sem(g, P), \qquad
     \mathrm{GRouge} = \frac{\sum_S \sum_g hit(g)}{\sum_S \sum_g c_S(g)},

  recall pooled over references as ROUGE's ``-f A``; :math:`\lambda = 0.5` (the paper's tuned value).
  Counts use exactly ROUGE-1.5.5's tokens (:mod:`metaeval.metrics.rouge`: tokenization, stopword removal
  and stemming options), so with :math:`\lambda = 1` GRouge-N *is* ROUGE-N recall (unrounded). WordNet
  lookup uses the unstemmed token; when one stemmed gram stands for several surface forms in a reference,
  :math:`c_S(g)\,Sem(g, P)` is the sum of :math:`Sem` over the gram's occurrences (it equals the formula
  when the surface forms agree).

Differences from the paper's system (UKB + ADW):

* no gloss relations: UKB's ``wn30g`` graph adds edges from the disambiguated glosses of the Princeton
  WordNet Gloss Corpus, which are not in the WordNet database files (``data/wordnet30/PROVENANCE.md``);
* ``topk``: by default every PPR vector (single sense, and each text's aggregate) keeps its ``topk``
  largest dimensions, which makes WO a function of the head of the distribution and makes the metric fast.
  ``topk=None`` keeps every dimension (exact; slow: only for small inputs). The difference is measured in
  ``tests/test_grouge.py``: on 2000 random sense pairs, top-128 WO differs from the exact WO by 0.25 on
  average (the exact WO of unrelated senses sits near 0.27, because the whole tail of both vectors is
  ranked; truncated, near 0.01) while the two rank the pairs alike (Spearman 0.61): truncation keeps the
  order of similarities, which is what alignment uses, not their scale;
* lemma lookup by WordNet's morphology without POS tagging (all parts of speech), as ADW does for raw text.

Examples
--------
>>> import metaeval
>>> frame = metaeval.grouge.score(["police fired three officers"], [["the officers were dismissed"]],
...                               ["grouge-1"], lam=1.0)
>>> round(float(frame.iloc[0, 0]), 4)   # lam = 1: ROUGE-1 recall (officers; the, were, dismissed missed)
0.25
"""

from __future__ import annotations

import os
import re
import warnings
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np
import pandas as pd

from metaeval.metrics._inputs import check_records
from metaeval._io import atomic_write, cache_dir
from metaeval.metrics import wordnet as _wordnet
from metaeval.metrics.text import process_tokens, split_sentences
from metaeval.metrics.text import stopwords, tokenize
from metaeval.metrics.variants import Measure

__all__ = [
    "GRougeVariant",
    "GRougeWarning",
    "SenseVectors",
    "align",
    "parse_variant",
    "ppr",
    "score",
    "similarity",
    "weighted_overlap",
]

DEFAULT_TOPK = 128


class GRougeWarning(UserWarning):
    """A GRouge value is undefined (NaN) for a record."""


# ----------------------------------------------------------------------------------------------------
# Variants and signatures

_NAME = re.compile(r"^(?:g|grouge)-?(?:(?P<n>\d+)|su(?P<skip>\d+))$", re.IGNORECASE)


@dataclass(frozen=True)
class GRougeVariant:
    """One GRouge configuration; ``signature`` names it in results.

    Examples
    --------
    >>> GRougeVariant(Measure("n", n=2)).signature
    'grouge-2|lam:0.5|restart:0.15|iter:30|topk:128|wn:3.0|stem:yes|stop:no|refs:A'
    """

    measure: Measure
    lam: float = 0.5
    restart: float = 0.15
    iterations: int = 30
    topk: int | None = DEFAULT_TOPK
    stem: bool = True
    stop: bool = False

    def __post_init__(self):
        if self.measure.kind not in ("n", "su"):
            raise ValueError(f"GRouge supports n-grams and SU (skip-bigrams + unigrams), got {self.measure}")
        if self.measure.kind == "su" and self.measure.skip < 0:
            raise ValueError("GRouge-SU needs a finite skip distance")
        if not 0.0 <= float(self.lam) <= 1.0:
            raise ValueError(f"lam must be in [0, 1], got {self.lam!r}")
        if not 0.0 < float(self.restart) < 1.0:
            raise ValueError(f"restart must be in (0, 1), got {self.restart!r}")
        if not isinstance(self.iterations, (int, np.integer)) or self.iterations < 1:
            raise ValueError(f"iterations must be an integer >= 1, got {self.iterations!r}")
        _check_topk(self.topk)

    @property
    def slug(self) -> str:
        return f"grouge-{self.measure.n}" if self.measure.kind == "n" else f"grouge-su{self.measure.skip}"

    @property
    def signature(self) -> str:
        topk = "all" if self.topk is None else str(self.topk)
        return (
            f"{self.slug}|lam:{self.lam:g}|restart:{self.restart:g}|iter:{self.iterations}|topk:{topk}|wn:3.0|"
            f"stem:{'yes' if self.stem else 'no'}|stop:{'yes' if self.stop else 'no'}|refs:A"
        )

    def __str__(self) -> str:
        return self.signature


def _check_topk(topk) -> None:
    if topk is None:
        return
    if isinstance(topk, bool) or not isinstance(topk, (int, np.integer)) or topk < 1:
        raise ValueError(f"topk must be a positive integer or None (all dimensions), got {topk!r}")


def parse_variant(text, **settings) -> GRougeVariant:
    """A variant from a name (``grouge-2``, ``G-SU4``, ``gROUGE-1``) or a signature; ``settings`` fill the
    rest (a signature's own fields win).

    Examples
    --------
    >>> parse_variant("G-SU4", lam=0.3).signature
    'grouge-su4|lam:0.3|restart:0.15|iter:30|topk:128|wn:3.0|stem:yes|stop:no|refs:A'
    """
    if isinstance(text, GRougeVariant):
        return text
    if not isinstance(text, str):
        raise TypeError(f"variant must be a string or GRougeVariant, got {type(text).__name__}")
    head, *fields = text.strip().split("|")
    m = _NAME.match(head.strip())
    if not m:
        raise ValueError(f"variant {text!r}: expected grouge-N or grouge-SU<skip> (e.g. grouge-2, G-SU4)")
    measure = Measure("n", n=int(m["n"])) if m["n"] else Measure("su", skip=int(m["skip"]))
    kw = dict(settings)
    for f in fields:
        key, _, value = f.partition(":")
        if key == "lam":
            kw["lam"] = float(value)
        elif key == "restart":
            kw["restart"] = float(value)
        elif key == "iter":
            kw["iterations"] = int(value)
        elif key == "topk":
            kw["topk"] = None if value == "all" else int(value)
        elif key in ("stem", "stop"):
            kw[key] = value == "yes"
        elif key in ("wn", "refs"):
            if (key, value) not in (("wn", "3.0"), ("refs", "A")):
                raise ValueError(f"variant {text!r}: only wn:3.0 and refs:A are supported")
        else:
            raise ValueError(f"variant {text!r}: unknown field {key!r}")
    return GRougeVariant(measure, **kw)


# ----------------------------------------------------------------------------------------------------
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

# ----------------------------------------------------------------------------------------------------
# Weighted Overlap


def _ranked(v: np.ndarray) -> np.ndarray:
    """Non-zero dimensions of ``v`` from largest to smallest (ties by dimension index)."""
    nz = np.flatnonzero(v)
    return nz[np.lexsort((nz, -v[nz]))]


def weighted_overlap(v1, v2) -> float:
    """Weighted Overlap of two vectors (Pilehvar et al. 2013), over the dimensions non-zero in both.

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
    if (a < 0).any() or (b < 0).any() or not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("v1 and v2 must be finite and non-negative")
    ra, rb = np.empty(a.size, np.int64), np.empty(b.size, np.int64)
    ia, ib = _ranked(a), _ranked(b)
    ra[ia] = np.arange(1, ia.size + 1)
    rb[ib] = np.arange(1, ib.size + 1)
    h = np.intersect1d(ia, ib)
    if h.size == 0:
        return 0.0
    num = float(np.sum(1.0 / (ra[h] + rb[h])))
    den = float(np.sum(1.0 / (2.0 * np.arange(1, h.size + 1))))
    return num / den


# ----------------------------------------------------------------------------------------------------
# Cached top-K single-sense vectors


class SenseVectors:
    """Single-sense PPR vectors truncated to their ``topk`` largest dimensions (all non-zero ones if
    ``topk`` is None), computed on demand in blocks and cached on disk (``cache=True``) as ``.npz`` shards
    under ``cache_dir()/grouge/<graph sha256>-r<restart>-i<iterations>-k<topk>/``.

    The iteration runs in ``dtype`` (float32 by default: 1.5 times faster than float64; the top dimensions
    and their order are what WO uses). ``idx[row]`` lists the row's dimensions by decreasing value (``-1``
    pads), ``val[row]`` their values,
    ``length[row]`` how many there are; ``row_of[node]`` is the row of a node (-1 until computed).
    """

    def __init__(self, *, restart: float = 0.15, iterations: int = 30, topk: int | None = DEFAULT_TOPK,
                 cache: bool = True, progress: bool = False, dtype=np.float32):
        _check_topk(topk)
        self.dtype = np.dtype(dtype)
        self.wn = _wordnet.load()
        self.restart, self.iterations, self.topk = float(restart), int(iterations), topk
        self.width = self.wn.n_nodes if topk is None else min(int(topk), self.wn.n_nodes)
        self.progress = progress
        self.row_of = np.full(self.wn.n_nodes, -1, np.int64)
        self.idx = np.zeros((0, self.width), np.int32)
        self.val = np.zeros((0, self.width), self.dtype)
        self.length = np.zeros(0, np.int64)
        # the full vectors are too large to be worth caching on disk
        self.folder: Path | None = None
        if cache and topk is not None:
            tag = f"{self.wn.sha256[:16]}-r{self.restart:g}-i{self.iterations}-k{self.width}-{self.dtype.name}"
            self.folder = cache_dir() / "grouge" / tag
            self._load_shards()

    def _load_shards(self) -> None:
        assert self.folder is not None
        # vectors cached with a larger top-K serve this one: their first ``width`` dimensions are the
        # top ``width`` in the same order
        head = f"{self.wn.sha256[:16]}-r{self.restart:g}-i{self.iterations}-k"
        folders = []
        for f in self.folder.parent.glob(f"{head}*-{self.dtype.name}") if self.folder.parent.is_dir() else []:
            k = f.name[len(head):-len(self.dtype.name) - 1]
            if k.isdigit() and int(k) >= self.width:
                folders.append((f != self.folder, int(k), f))
        for _, _, folder in sorted(folders):
            self._load_folder(folder)

    def _load_folder(self, folder: Path) -> None:
        for path in sorted(folder.glob("shard-*.npz")):
            try:
                with np.load(path) as z:
                    nodes, idx, val, length = z["nodes"], z["idx"], z["val"], z["length"]
            except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:  # damaged: recompute, don't trust
                warnings.warn(f"ignoring unreadable GRouge cache file {path}: {exc}", GRougeWarning, stacklevel=2)
                continue
            new = self.row_of[nodes] < 0
            w = self.width
            self._append(nodes[new], idx[new][:, :w], val[new][:, :w], np.minimum(length[new], w))

    def _append(self, nodes, idx, val, length) -> None:
        base = self.idx.shape[0]
        self.idx = np.concatenate([self.idx, idx.astype(np.int32)])
        self.val = np.concatenate([self.val, val.astype(self.dtype)])
        self.length = np.concatenate([self.length, length])
        self.row_of[nodes] = base + np.arange(len(nodes))

    def ensure(self, nodes) -> None:
        """Compute (and cache) the vectors of every node in ``nodes`` not yet known."""
        todo = np.unique(np.asarray(list(nodes), np.int64))
        todo = todo[self.row_of[todo] < 0] if todo.size else todo
        if todo.size == 0:
            return
        walker = _wordnet_walker()
        # nearby seeds walk together: their hop balls overlap, so fewer rows are active early on
        todo = todo[np.argsort(walker.row[todo], kind="stable")]
        chunks = [todo[a : a + _COLS] for a in range(0, todo.size, _COLS)]
        alpha, iterations, width = 1.0 - self.restart, self.iterations, self.width

        def job(chunk: np.ndarray):
            V, hops = walker.walk([chunk[c : c + 1] for c in range(chunk.size)], alpha, iterations, self.dtype)
            idx = np.empty((chunk.size, width), np.int32)
            val = np.empty((chunk.size, width), self.dtype)
            length = np.empty(chunk.size, np.int64)
            _top(V, chunk.size, walker.order, hops, iterations, width, idx, val, length)
            return chunk, idx, val, length

        bar = None
        if self.progress:
            from tqdm import tqdm

            bar = tqdm(total=int(todo.size), desc="PPR vectors", unit="sense")
        _compile_vectorized()
        workers = max(1, min(numba.get_num_threads(), len(chunks)))
        shard: list[tuple] = []
        from concurrent.futures import ThreadPoolExecutor

        # the kernels release the GIL: one block of 16 seeds per core
        with ThreadPoolExecutor(workers) as pool:
            for k, result in enumerate(pool.map(job, chunks)):
                self._append(*result)
                shard.append(result)
                if bar is not None:
                    bar.update(result[0].size)
                if self.folder is not None and (sum(r[0].size for r in shard) >= 1024 or k == len(chunks) - 1):
                    self._write_shard(*[np.concatenate(p) for p in zip(*shard)])
                    shard = []
        if bar is not None:
            bar.close()

    def _write_shard(self, nodes, idx, val, length) -> None:
        assert self.folder is not None
        name = f"shard-{os.getpid()}-{int(nodes[0])}-{nodes.size}-{np.random.default_rng().integers(1 << 62):x}.npz"

        def write(tmp: Path) -> None:
            with open(tmp, "wb") as fh:
                np.savez(fh, nodes=nodes, idx=idx, val=val, length=length)

        try:
            atomic_write(self.folder / name, write)
        except OSError as exc:  # a read-only cache costs time, not correctness
            warnings.warn(f"could not write the GRouge cache {self.folder}: {exc}", GRougeWarning, stacklevel=2)

    def dense(self, node: int) -> np.ndarray:
        """The (truncated) vector of one node as a dense array."""
        self.ensure([node])
        r = self.row_of[node]
        v = np.zeros(self.wn.n_nodes)
        n = self.length[r]
        v[self.idx[r, :n]] = self.val[r, :n]
        return v


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


# ----------------------------------------------------------------------------------------------------
# numba kernels: pairwise sense WO, and Sem of many grams against one peer


@numba.njit(cache=True)
def _harmonic(m):  # pragma: no cover - compiled
    h = np.zeros(m + 1)
    for i in range(1, m + 1):
        h[i] = h[i - 1] + 1.0 / (2.0 * i)
    return h


@numba.njit(parallel=True, cache=True)
def _pair_wo(rows_a, rows_b, idx, length, n_dims, harm, n_chunks):  # pragma: no cover - compiled
    """WO of every (a, b) pair of stored single-sense vectors."""
    na, nb = rows_a.shape[0], rows_b.shape[0]
    out = np.zeros((na, nb))
    per = (na + n_chunks - 1) // n_chunks
    for ch in numba.prange(n_chunks):
        pos = np.zeros(n_dims, np.int64)
        for a in range(ch * per, min(na, (ch + 1) * per)):
            ra = rows_a[a]
            for q in range(length[ra]):
                pos[idx[ra, q]] = q + 1
            for b in range(nb):
                rb = rows_b[b]
                acc = 0.0
                cnt = 0
                for q in range(length[rb]):
                    p = pos[idx[rb, q]]
                    if p > 0:
                        acc += 1.0 / (p + q + 1)
                        cnt += 1
                out[a, b] = acc / harm[cnt] if cnt > 0 else 0.0
            for q in range(length[ra]):
                pos[idx[ra, q]] = 0
    return out


@numba.njit(cache=True, nogil=True)
def _select(vals, dims, nt, width, out, start):  # pragma: no cover - compiled
    """The ``width`` best of (vals[:nt], dims[:nt]) (larger value; ties: smaller dimension), best first,
    written to out[start:]; returns how many."""
    keys = -vals[:nt]
    d = dims[:nt]
    if nt > width:
        kth = np.partition(keys, width - 1)[width - 1]
        keep = np.flatnonzero(keys <= kth)
        keys = keys[keep]
        d = d[keep]
    order = np.argsort(d, kind="mergesort")
    keys, d = keys[order], d[order]
    order = np.argsort(keys, kind="mergesort")
    m = min(width, d.shape[0])
    for q in range(m):
        out[start + q] = d[order[q]]
    return m


@numba.njit(cache=True, nogil=True)
def _aggregate_into(rows, idx, val, length, width, acc, touched, hv, hi, out, start):  # pragma: no cover
    """Dimensions of the sum of the given stored vectors, by decreasing value (ties: smaller dimension
    first), at most ``width`` of them, written to ``out[start:]``; returns how many. ``acc`` is a zeroed
    scratch array (left zeroed), ``touched``, ``hv``, ``hi`` scratch space (one slot per summed value)."""
    if rows.shape[0] == 1:  # one stored vector: already in that order
        r = rows[0]
        for q in range(length[r]):
            out[start + q] = idx[r, q]
        return length[r]
    nt = 0
    floor = 0.0
    for r in rows:
        if length[r] >= width:  # this row alone puts `width` dimensions at or above its last value
            floor = max(floor, float(val[r, width - 1]))
        for q in range(length[r]):
            d = idx[r, q]
            if acc[d] == 0.0:  # stored values are positive: 0 means not yet touched
                touched[nt] = d
                nt += 1
            acc[d] += val[r, q]
    ns = 0
    for t in range(nt):
        d = touched[t]
        x = acc[d]
        acc[d] = 0.0
        if x >= floor:  # below the floor a dimension cannot be among the `width` best
            hv[ns] = x
            hi[ns] = d
            ns += 1
    return _select(hv, hi, ns, width, out, start)


@numba.njit(cache=True, nogil=True)
def _aggregate_local(sel, n_sel, lidx, lval, llen, gdim, width, acc, touched, hv, hi, out, start):  # pragma: no cover
    """:func:`_aggregate_into` for vectors whose dimensions were renumbered densely (``lidx``; ``gdim``
    maps back): the sums then touch a small array. Rows ``sel[:n_sel]``, in increasing order."""
    if n_sel == 1:
        r = sel[0]
        for q in range(llen[r]):
            out[start + q] = gdim[lidx[r, q]]
        return llen[r]
    nt = 0
    floor = 0.0
    for k in range(n_sel):
        r = sel[k]
        if llen[r] >= width:
            floor = max(floor, float(lval[r, width - 1]))
        for q in range(llen[r]):
            d = lidx[r, q]
            if acc[d] == 0.0:
                touched[nt] = d
                nt += 1
            acc[d] += lval[r, q]
    ns = 0
    for t in range(nt):
        d = touched[t]
        x = acc[d]
        acc[d] = 0.0
        if x >= floor:
            hv[ns] = x
            hi[ns] = gdim[d]
            ns += 1
    return _select(hv, hi, ns, width, out, start)


@numba.njit(cache=True, nogil=True)
def _aggregate(rows, idx, val, length, width, acc, touched_mark):  # pragma: no cover - compiled
    """:func:`_aggregate_into` returning a new array (``touched_mark`` is unused, kept for callers)."""
    total = 0
    for r in rows:
        total += length[r]
    out = np.empty(max(total, 1), np.int64)
    touched = np.empty(max(total, 1), np.int64)
    hv = np.empty(max(total, 1))
    hi = np.empty(max(total, 1), np.int64)
    m = _aggregate_into(rows, idx, val, length, width, acc, touched, hv, hi, out, 0)
    return out[:m].copy()


@numba.njit(cache=True, nogil=True)
def _wo_ranked(dims_a, dims_b, pos, harm):  # pragma: no cover - compiled
    for q in range(dims_a.shape[0]):
        pos[dims_a[q]] = q + 1
    acc = 0.0
    cnt = 0
    for q in range(dims_b.shape[0]):
        p = pos[dims_b[q]]
        if p > 0:
            acc += 1.0 / (p + q + 1)
            cnt += 1
    for q in range(dims_a.shape[0]):
        pos[dims_a[q]] = 0
    return acc / harm[cnt] if cnt > 0 else 0.0


@numba.njit(cache=True, nogil=True)
def _peer_sems(grams, w_ref, w_oov, ref_ptr, ref_rows, u_ptr, u_cols, peer_rows, pair, peer_oov_dims,
               idx, val, length, width, n_dims, harm, salt):  # pragma: no cover - compiled
    """Sem(g, P) for every gram g (rows of ``grams``: global word ids, -1 padding) against one peer P.

    w_ref[word] = local ref-word index (or -1), w_oov[word] = OOV dimension (or -1); ref word j's senses are
    ref_rows[ref_ptr[j]:ref_ptr[j+1]] (store rows; their row in ``pair`` is the same position); the peer's
    in-vocabulary word u has senses u_cols[u_ptr[u]:u_ptr[u+1]] (columns of ``pair``), store rows
    peer_rows[...]; peer_oov_dims are the peer's OOV dimensions in rank order.
    """
    n_ref = ref_ptr.shape[0] - 1
    n_u = u_ptr.shape[0] - 1
    # best[j, u] = max WO of a sense of u to any sense of ref word j, arg = first peer sense (position)
    best_val = np.full((n_ref, n_u), -1.0)
    best_arg = np.zeros((n_ref, n_u), np.int64)
    ref_choice = np.full(n_ref, -1, np.int64)
    ref_done = np.zeros(n_ref, np.bool_)
    acc = np.zeros(n_dims)
    pos = np.zeros(n_dims + 1, np.int64)
    # the peer's sense vectors with dimensions renumbered densely: their sums (one per distinct choice of
    # the peer's senses, hundreds per peer) touch a small array instead of one over all synsets
    lrows = np.unique(peer_rows)  # ascending store rows: sums run in the same order as over store rows
    n_lr = lrows.shape[0]
    lrow_of = np.searchsorted(lrows, peer_rows)
    loc = np.full(n_dims, -1, np.int64)
    lidx = np.empty((n_lr, width), np.int64)
    lval = np.empty((n_lr, width), val.dtype)
    llen = np.empty(n_lr, np.int64)
    gdim = np.empty(n_lr * width + 1, np.int64)
    n_loc = 0
    for r in range(n_lr):
        sr = lrows[r]
        llen[r] = length[sr]
        for q in range(length[sr]):
            d = idx[sr, q]
            if loc[d] < 0:
                loc[d] = n_loc
                gdim[n_loc] = d
                n_loc += 1
            lidx[r, q] = loc[d]
            lval[r, q] = val[sr, q]
    lacc = np.zeros(n_loc + 1)
    sel_mark = np.zeros(n_lr, np.bool_)
    sel = np.empty(n_lr + 1, np.int64)
    touched = np.empty(max(n_u, grams.shape[1]) * width + 1, np.int64)
    hv = np.empty(touched.shape[0])
    hi = np.empty(touched.shape[0], np.int64)
    g_buf = np.empty(grams.shape[1] * (width + 1), np.int64)
    out = np.zeros(grams.shape[0])
    # the peer's vectors by choice key, in an open-addressing table (a numba dict would serialise the
    # threads that run this kernel side by side)
    cap = 4
    while cap < 2 * grams.shape[0] + 2:
        cap *= 2
    h_key = np.zeros(cap, np.int64)
    h_slot = np.full(cap, -1, np.int64)
    n_oov_p = peer_oov_dims.shape[0]
    p_store = np.empty((grams.shape[0] + 1, n_oov_p + width), np.int64)
    p_len = np.empty(grams.shape[0] + 1, np.int64)
    n_stored = 0
    n_peer_senses = u_cols.shape[0]
    for gi in range(grams.shape[0]):
        g = grams[gi]
        # words of g: in-vocabulary (local ref index), OOV dims
        g_ref = np.empty(g.shape[0], np.int64)
        ng = 0
        g_oov = np.empty(g.shape[0], np.int64)
        no = 0
        for w in g:
            if w < 0:
                continue
            j = w_ref[w]
            if j >= 0:
                dup = False
                for q in range(ng):
                    if g_ref[q] == j:
                        dup = True
                if not dup:
                    g_ref[ng] = j
                    ng += 1
            elif w_oov[w] >= 0:
                d = w_oov[w]
                dup = False
                for q in range(no):
                    if g_oov[q] == d:
                        dup = True
                if not dup:
                    g_oov[no] = d
                    no += 1
        # make sure the alignment tables of g's words exist
        for q in range(ng):
            j = g_ref[q]
            if not ref_done[j]:
                ref_done[j] = True
                bestj = -1.0
                for s in range(ref_ptr[j], ref_ptr[j + 1]):
                    m = 0.0
                    for t in range(n_peer_senses):
                        m = max(m, pair[s, u_cols[t]])
                    if m > bestj:
                        bestj = m
                        ref_choice[j] = s
                for u in range(n_u):
                    bv = -1.0
                    ba = u_ptr[u]
                    for t in range(u_ptr[u], u_ptr[u + 1]):
                        m = 0.0
                        for s in range(ref_ptr[j], ref_ptr[j + 1]):
                            m = max(m, pair[s, u_cols[t]])
                        if m > bv:
                            bv = m
                            ba = t
                    best_val[j, u] = bv
                    best_arg[j, u] = ba
        # g's vector: distinct chosen senses, OOV dims (sorted: count ties -> dimension order) on top
        g_oov_sorted = np.sort(g_oov[:no])
        for q in range(no):
            g_buf[q] = g_oov_sorted[q]
        g_len = no
        if ng > 0:
            g_rows = np.empty(ng, np.int64)
            for q in range(ng):
                g_rows[q] = ref_rows[ref_choice[g_ref[q]]]
            g_rows = np.unique(g_rows)
            g_len += _aggregate_into(g_rows, idx, val, length, width, acc, touched, hv, hi, g_buf, no)
        g_vec = g_buf[:g_len]
        # the peer's choices given g
        key = np.int64(0)
        choice = np.empty(n_u, np.int64)
        for u in range(n_u):
            c = u_ptr[u]  # nothing to align to: the first (most frequent) sense
            bv = -2.0
            for q in range(ng):
                j = g_ref[q]
                if best_val[j, u] > bv or (best_val[j, u] == bv and best_arg[j, u] < c):
                    bv = best_val[j, u]
                    c = best_arg[j, u]
            choice[u] = c
            key = key * np.int64(1000003) + np.int64(c + 1) * salt[u % salt.shape[0]]
        h = (key ^ (key >> 29)) & (cap - 1)
        while h_slot[h] >= 0 and h_key[h] != key:
            h = (h + 1) & (cap - 1)
        if h_slot[h] < 0:
            for u in range(n_u):
                sel_mark[lrow_of[choice[u]]] = True
            n_sel = 0
            for r in range(n_lr):
                if sel_mark[r]:
                    sel[n_sel] = r
                    n_sel += 1
                    sel_mark[r] = False
            row = p_store[n_stored]
            row[:n_oov_p] = peer_oov_dims
            m = (_aggregate_local(sel, n_sel, lidx, lval, llen, gdim, width, lacc, touched, hv, hi, row, n_oov_p)
                 if n_u > 0 else 0)
            p_len[n_stored] = n_oov_p + m
            h_key[h] = key
            h_slot[h] = n_stored
            n_stored += 1
        slot = h_slot[h]
        p_vec = p_store[slot, : p_len[slot]]
        out[gi] = _wo_ranked(g_vec, p_vec, pos, harm)
    return out


# ----------------------------------------------------------------------------------------------------
# Words, senses and OOV dimensions


class _Lexicon:
    """Global word ids for unstemmed tokens, their senses and OOV dimensions."""

    def __init__(self, store: SenseVectors):
        self.store = store
        self.wn = store.wn
        self.stop = stopwords()
        self.word_id: dict[str, int] = {}
        self.words: list[str] = []
        self.senses: list[tuple[int, ...]] = []
        self.oov_dim: list[int] = []
        self.n_oov = 0

    def ids(self, tokens: Sequence[str]) -> list[int]:
        out = []
        for t in tokens:
            k = self.word_id.get(t)
            if k is None:
                k = len(self.words)
                self.word_id[t] = k
                self.words.append(t)
                nodes = () if t in self.stop else tuple(s.node for s in self.wn.senses(t))
                self.senses.append(nodes)
                if nodes:
                    self.oov_dim.append(-1)
                else:
                    self.oov_dim.append(self.wn.n_nodes + self.n_oov)
                    self.n_oov += 1
            out.append(k)
        return out


def _oov_ranked(lex: _Lexicon, word_ids: Sequence[int]) -> np.ndarray:
    """OOV dimensions of a text in rank order: by count, then alphabetically."""
    counts: dict[int, int] = {}
    for w in word_ids:
        if lex.oov_dim[w] >= 0:
            counts[w] = counts.get(w, 0) + 1
    order = sorted(counts, key=lambda w: (-counts[w], lex.words[w]))
    return np.asarray([lex.oov_dim[w] for w in order], np.int64)


class _Engine:
    """Sem(g, P) for many grams and peers sharing one reference set."""

    def __init__(self, store: SenseVectors, lex: _Lexicon):
        self.store, self.lex = store, lex

    def sems(self, ref_word_ids: Sequence[int], peers: Sequence[tuple[list[int], np.ndarray]]) -> list[np.ndarray]:
        """``peers``: (word ids of the peer, grams array of global word ids) per peer."""
        lex, store = self.lex, self.store
        ref_words = sorted({w for w in ref_word_ids if lex.senses[w]})
        peer_words = sorted({w for p, _ in peers for w in p if lex.senses[w]})
        needed = {s for w in ref_words + peer_words for s in lex.senses[w]}
        store.ensure(needed)
        n_words = len(lex.words)
        w_ref = np.full(n_words, -1, np.int64)
        ref_ptr = [0]
        ref_nodes: list[int] = []
        for j, w in enumerate(ref_words):
            w_ref[w] = j
            ref_nodes.extend(lex.senses[w])
            ref_ptr.append(len(ref_nodes))
        col_of: dict[int, int] = {}
        for w in peer_words:
            for s in lex.senses[w]:
                col_of.setdefault(s, len(col_of))
        col_nodes = np.fromiter(col_of, np.int64, len(col_of))
        ref_rows = store.row_of[np.asarray(ref_nodes, np.int64)]
        col_rows = store.row_of[col_nodes]
        n_dims = self.lex.wn.n_nodes + max(lex.n_oov, 1)
        harm = _harmonic(2 * store.width + 2 * n_words + 8)
        pair = (
            _pair_wo(ref_rows, col_rows, store.idx, store.length, n_dims, harm, 4 * numba.get_num_threads())
            if len(ref_rows) and len(col_rows)
            else np.zeros((len(ref_rows), len(col_rows)))
        )
        w_oov = np.asarray(lex.oov_dim, np.int64)
        salt = np.random.default_rng(12345).integers(1, 1 << 61, 4099)
        ref_ptr_a = np.asarray(ref_ptr, np.int64)

        def one(job):
            peer_ids, grams = job
            u_list = sorted({w for w in peer_ids if lex.senses[w]})
            u_ptr = [0]
            u_cols: list[int] = []
            for w in u_list:
                u_cols.extend(col_of[s] for s in lex.senses[w])
                u_ptr.append(len(u_cols))
            u_cols_a = np.asarray(u_cols, np.int64)
            peer_rows = col_rows[u_cols_a] if u_cols_a.size else np.zeros(0, np.int64)
            return _peer_sems(
                grams, w_ref, w_oov, ref_ptr_a, ref_rows, np.asarray(u_ptr, np.int64),
                u_cols_a, peer_rows, pair, _oov_ranked(lex, peer_ids), store.idx, store.val, store.length,
                store.width, n_dims, harm, salt,
            )

        # the kernel releases the GIL: one thread per core over the peers
        workers = min(numba.get_num_threads(), len(peers))
        if workers <= 1:
            return [one(job) for job in peers]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(one, peers))


_STORES: dict[tuple, SenseVectors] = {}


def _store(restart: float, iterations: int, topk: int | None, cache: bool = True,
           progress: bool = False) -> SenseVectors:
    key = (float(restart), int(iterations), topk, cache)
    st = _STORES.get(key)
    if st is None:
        st = _STORES[key] = SenseVectors(restart=restart, iterations=iterations, topk=topk, cache=cache)
    st.progress = progress
    return st


# ----------------------------------------------------------------------------------------------------
# Public: align and similarity


def _words(text) -> list[str]:
    if isinstance(text, str):
        return tokenize(text)
    if isinstance(text, (list, tuple)) and all(isinstance(t, str) for t in text):
        return [w for t in text for w in tokenize(t)]
    raise TypeError(f"expected a string or a list of strings, got {type(text).__name__}")


def align(words_a, words_b, *, restart: float = 0.15, iterations: int = 30, topk: int | None = DEFAULT_TOPK,
          cache: bool = True) -> list[str | None]:
    """The sense each word of ``words_a`` takes when aligned with ``words_b`` (ADW): the sense with the
    highest Weighted Overlap to any sense of any word of ``words_b``; None for OOV words and stopwords.

    ``words_a``/``words_b``: lists of words or texts (tokenized like ROUGE).

    Examples
    --------
    >>> align(["officers", "fired"], "Several policemen terminated in corruption probe")
    ['officer.n.03', 'fire.v.04']
    """
    store = _store(restart, iterations, topk, cache)
    lex = _Lexicon(store)
    a, b = lex.ids(_words(words_a)), lex.ids(_words(words_b))
    b_nodes = sorted({s for w in b for s in lex.senses[w]})
    a_nodes = sorted({s for w in a for s in lex.senses[w]})
    store.ensure(a_nodes + b_nodes)
    out: list[str | None] = []
    if not b_nodes:
        best_to_b = {s: 0.0 for s in a_nodes}
    else:
        harm = _harmonic(2 * store.width + 8)
        pair = (_pair_wo(store.row_of[np.asarray(a_nodes)], store.row_of[np.asarray(b_nodes)], store.idx,
                         store.length, store.wn.n_nodes, harm, 4 * numba.get_num_threads())
                if a_nodes else np.zeros((0, 0)))
        best_to_b = {s: float(pair[i].max()) for i, s in enumerate(a_nodes)}
    for w, word in zip(a, _words(words_a)):
        nodes = lex.senses[w]
        if not nodes:
            out.append(None)
            continue
        k = int(np.argmax([best_to_b[s] for s in nodes]))
        out.append(store.wn.senses(word)[k].name)
    return out


def similarity(text_a, text_b, *, restart: float = 0.15, iterations: int = 30, topk: int | None = DEFAULT_TOPK,
               cache: bool = True) -> float:
    """Sem of two texts: Weighted Overlap of the PPR vectors of their aligned senses (OOV words on top).

    Examples
    --------
    >>> sim = similarity("it is raining heavily", "it is pouring")
    >>> 0 < sim <= 1
    True
    """
    store = _store(restart, iterations, topk, cache)
    lex = _Lexicon(store)
    a, b = lex.ids(_words(text_a)), lex.ids(_words(text_b))
    gram = np.asarray([a if a else [-1]], np.int64)
    return float(_Engine(store, lex).sems(a, [(b, gram)])[0][0])


# ----------------------------------------------------------------------------------------------------
# Public: score


def _resolve(variants, lam, stem, stop, topk, restart, iterations) -> list[GRougeVariant]:
    if isinstance(variants, (str, GRougeVariant)):
        variants = [variants]
    out = [parse_variant(v, lam=lam, stem=stem, stop=stop, topk=topk, restart=restart, iterations=iterations)
           for v in variants]
    if not out:
        raise ValueError("variants must not be empty")
    return out


def _occurrences(n_tok: int, measure: Measure) -> np.ndarray:
    """Token positions of every gram occurrence of a text, as ROUGE-1.5.5 enumerates them (-1 padding)."""
    if measure.kind == "n":
        m = max(n_tok - measure.n + 1, 0)
        return (np.arange(m)[:, None] + np.arange(measure.n)[None, :]).astype(np.int64)
    pairs = [(i, i + d) for d in range(1, measure.skip + 2) for i in range(n_tok - d)]
    uni = [(i, -1) for i in range(n_tok - 1)]  # ROUGE-SU: every token but the last
    arr = np.asarray(pairs + uni, np.int64).reshape(-1, 2)
    return arr


def score(
    summaries: Sequence,
    references: Sequence[Sequence],
    variants=("grouge-1", "grouge-2", "grouge-su4"),
    *,
    lam: float = 0.5,
    stem: bool = True,
    stop: bool = False,
    topk: int | None = DEFAULT_TOPK,
    restart: float = 0.15,
    iterations: int = 30,
    ids: Sequence | None = None,
    columns: str = "signature",
    cache: bool = True,
    progress: bool = False,
    warn: bool = True,
) -> pd.DataFrame:
    """GRouge of many summaries against their references.

    Parameters
    ----------
    summaries, references
        As :func:`metaeval.rouge.score`: one text per record (string or list of sentences; None = empty)
        and, per record, its list of reference texts.
    variants : iterable of str or GRougeVariant
        ``grouge-N`` (any N >= 1) and ``grouge-SU<d>``; short forms ``G-2``, ``G-SU4``.
    lam : float
        Weight of the lexical match (1: ROUGE-N recall; 0: semantic only).
    stem, stop : bool
        ROUGE's stemming and stopword removal for the lexical counts (the paper: stemming, stopwords kept).
    topk : int or None
        Dimensions kept per PPR vector (None: all, exact but slow).
    restart, iterations : float, int
        PPR restart probability and number of iterations.
    ids : sequence, optional
        Row labels.
    columns : {"signature", "name"}
        Column labels: full signatures or short names (``grouge-2``).
    cache : bool
        Keep single-sense PPR vectors on disk (``metaeval._io.cache_dir()/grouge``).
    progress : bool
        Show tqdm progress bars.
    warn : bool
        Warn (:class:`GRougeWarning`) for records without references (NaN).

    Returns
    -------
    pandas.DataFrame
        One row per record, one column per variant.
    """
    vs, results, _, index = _score_impl(
        summaries, references, variants, lam=lam, stem=stem, stop=stop, topk=topk, restart=restart,
        iterations=iterations, ids=ids, columns=columns, cache=cache, progress=progress, warn=warn)
    name = (lambda v: v.signature) if columns == "signature" else (lambda v: v.slug)
    return pd.DataFrame({name(v): results[v] for v in vs}, index=index)


def score_parts(
    summaries: Sequence,
    references: Sequence[Sequence],
    variants=("grouge-1", "grouge-2", "grouge-su4"),
    *,
    stem: bool = True,
    stop: bool = False,
    topk: int | None = DEFAULT_TOPK,
    restart: float = 0.15,
    iterations: int = 30,
    ids: Sequence | None = None,
    cache: bool = True,
    progress: bool = False,
    warn: bool = True,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The lexical and semantic parts of GRouge in one pass: GRouge(lam) = lam L + (1 - lam) S.

    ``L`` is ROUGE-N recall (GRouge at lam = 1), ``S`` GRouge at lam = 0; columns are the short names
    (``grouge-2``). Use it to study lam without rescoring. Arguments as :func:`score`.

    Examples
    --------
    >>> L, S = score_parts(["police fired three officers"], [["the officers were dismissed"]], ["grouge-1"])
    >>> float(L.iloc[0, 0]), bool(0 < S.iloc[0, 0] < 1)
    (0.25, True)
    """
    vs, _, parts, index = _score_impl(
        summaries, references, variants, lam=1.0, stem=stem, stop=stop, topk=topk, restart=restart,
        iterations=iterations, ids=ids, columns="name", cache=cache, progress=progress, warn=warn,
        want_parts=True)
    lexical = pd.DataFrame({v.slug: parts[v][0] for v in vs}, index=index)
    semantic = pd.DataFrame({v.slug: parts[v][1] for v in vs}, index=index)
    return lexical, semantic


def _score_impl(
    summaries: Sequence,
    references: Sequence[Sequence],
    variants=("grouge-1", "grouge-2", "grouge-su4"),
    *,
    lam: float = 0.5,
    stem: bool = True,
    stop: bool = False,
    topk: int | None = DEFAULT_TOPK,
    restart: float = 0.15,
    iterations: int = 30,
    ids: Sequence | None = None,
    columns: str = "signature",
    cache: bool = True,
    progress: bool = False,
    warn: bool = True,
    want_parts: bool = False,
) -> tuple:
    """The work of :func:`score` and :func:`score_parts`."""
    summaries, references = check_records(summaries, references)
    if columns not in ("signature", "name"):
        raise ValueError(f"columns must be 'signature' or 'name', got {columns!r}")
    vs = _resolve(variants, lam, stem, stop, topk, restart, iterations)
    n_records = len(summaries)
    index = list(ids) if ids is not None else list(range(n_records))
    if len(index) != n_records:
        raise ValueError(f"ids has {len(index)} labels for {n_records} records")

    text_index: dict[tuple[str, ...], int] = {}
    texts: list[tuple[str, ...]] = []

    def intern(t) -> int:
        if t not in text_index:
            text_index[t] = len(texts)
            texts.append(t)
        return text_index[t]

    peer_text = np.empty(n_records, np.int64)
    rec_refs: list[tuple[int, ...]] = []
    for r, (summary, refs) in enumerate(zip(summaries, references)):
        peer_text[r] = intern(_as_sentences(summary, f"summaries[{r}]"))
        if not isinstance(refs, (list, tuple)):
            raise TypeError(f"references[{r}] must be a list of reference texts, got {type(refs).__name__}")
        rec_refs.append(tuple(intern(_as_sentences(ref, f"references[{r}][{q}]")) for q, ref in enumerate(refs)))
    pair_rec = np.asarray([r for r, refs in enumerate(rec_refs) for _ in refs], np.int64)
    pair_ref = np.asarray([t for refs in rec_refs for t in refs], np.int64)
    pair_peer = peer_text[pair_rec]
    n_refs = np.bincount(pair_rec, minlength=n_records).astype(np.int64)
    rec_start = np.concatenate([[0], np.cumsum(n_refs)[:-1]]).astype(np.int64)
    rec_end = (rec_start + n_refs).astype(np.int64)

    results: dict[GRougeVariant, np.ndarray] = {}
    parts: dict[GRougeVariant, tuple[np.ndarray, np.ndarray]] = {}
    by_setting: dict[tuple, list[GRougeVariant]] = {}
    for v in vs:
        by_setting.setdefault((v.stem, v.stop, v.topk, v.restart, v.iterations), []).append(v)
    for (stem_, stop_, topk_, restart_, iter_), group in by_setting.items():
        sw = stopwords()
        raw = []  # unstemmed tokens, one to one with the ROUGE tokens
        proc = []  # ROUGE-1.5.5 tokens (stopwords removed, stemmed, as the options say)
        for t in texts:
            toks = [w for s in t for w in tokenize(s)]
            kept = [w for w in toks if w not in sw] if stop_ else toks
            raw.append(kept)
            proc.append(process_tokens(kept, stem=stem_, stop=False))
        store = _store(restart_, iter_, topk_, cache, progress)
        lex = _Lexicon(store)
        raw_ids = [np.asarray(lex.ids(toks), np.int64) for toks in raw]
        measures = sorted({v.measure for v in group})
        lexical = {m: _lexical_counts(proc, m, pair_peer, pair_ref) for m in measures}
        need_sem = want_parts or any(v.lam < 1.0 for v in group)
        sem_sums = {m: np.zeros(pair_rec.shape[0]) for m in measures}
        if need_sem:
            _semantic_sums(texts, raw_ids, lex, store, measures, pair_peer, pair_ref, sem_sums, progress)
        for v in group:
            hits, model = lexical[v.measure]
            if v.lam < 1.0:
                per_pair = v.lam * hits + (1.0 - v.lam) * sem_sums[v.measure]
            else:
                per_pair = hits
            num = _segment_sums(per_pair, rec_start, rec_end)
            num_lex = _segment_sums(hits, rec_start, rec_end)
            den = _segment_sums(model, rec_start, rec_end)
            with np.errstate(invalid="ignore", divide="ignore"):
                val = np.where(den > 0, num / np.where(den > 0, den, 1), 0.0)
            val[n_refs == 0] = np.nan
            results[v] = val
            with np.errstate(invalid="ignore", divide="ignore"):
                lex_v = np.where(den > 0, num_lex / np.where(den > 0, den, 1), 0.0)
                sem_v = np.where(den > 0, _segment_sums(sem_sums[v.measure], rec_start, rec_end)
                                 / np.where(den > 0, den, 1), 0.0)
            lex_v[n_refs == 0] = np.nan
            sem_v[n_refs == 0] = np.nan
            parts[v] = (lex_v, sem_v)
    if warn:
        for rec in np.flatnonzero(n_refs == 0):
            warnings.warn(f"record {index[rec]!r}: no references: GRouge gives no value", GRougeWarning, stacklevel=2)
    return vs, results, parts, index


def _as_sentences(text, where: str) -> tuple[str, ...]:
    if text is None:
        return ()
    if isinstance(text, str):
        return tuple(split_sentences(text))
    if isinstance(text, (list, tuple)) and all(isinstance(s, str) for s in text):
        return tuple(line for s in text for line in split_sentences(s))
    raise TypeError(f"{where} must be a string or a list of sentence strings, got {type(text).__name__}")


def _segment_sums(values: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    return np.asarray([float(np.sum(values[a:b])) for a, b in zip(starts.tolist(), ends.tolist())], dtype=float)


def _lexical_counts(proc: list[list[str]], measure: Measure, pair_peer: np.ndarray, pair_ref: np.ndarray):
    """ROUGE's clipped hits sum_g min(c_ref(g), c_peer(g)) and the reference's gram count, per pair."""
    vocab: dict[str, int] = {}
    ids = [np.asarray([vocab.setdefault(w, len(vocab)) for w in toks], np.int64) for toks in proc]
    rows: list[np.ndarray] = []
    for t_ids in ids:
        pos = _occurrences(t_ids.shape[0], measure)
        rows.append(np.where(pos >= 0, t_ids[np.clip(pos, 0, None)] if t_ids.size else pos, -1).reshape(pos.shape))
    lengths = np.asarray([len(r) for r in rows], np.int64)
    stacked = np.concatenate(rows) if rows else np.zeros((0, 1), np.int64)
    if stacked.shape[0]:
        _, codes = np.unique(stacked, axis=0, return_inverse=True)
        codes = codes.ravel()
    else:
        codes = np.zeros(0, np.int64)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    table = []
    for k in range(len(rows)):
        u, c = np.unique(codes[bounds[k]:bounds[k + 1]], return_counts=True)
        table.append((u, c))
    hits = np.zeros(pair_peer.shape[0])
    for k, (p, r) in enumerate(zip(pair_peer.tolist(), pair_ref.tolist())):
        up, cp = table[p]
        ur, cr = table[r]
        _, ip, ir = np.intersect1d(up, ur, assume_unique=True, return_indices=True)
        hits[k] = float(np.minimum(cp[ip], cr[ir]).sum())
    return hits, lengths[pair_ref].astype(float)


def _semantic_sums(texts, raw_ids, lex, store, measures, pair_peer, pair_ref, sem_sums, progress) -> None:
    """sem_sums[m][pair] = sum over the reference's gram occurrences of Sem(gram, peer)."""
    # Group (peer, ref) pairs by peer; peers with the same reference set share one alignment table.
    by_peer: dict[int, list[int]] = {}
    for k, p in enumerate(pair_peer.tolist()):
        by_peer.setdefault(p, []).append(k)
    by_refset: dict[tuple[int, ...], list[int]] = {}
    for p, ks in by_peer.items():
        by_refset.setdefault(tuple(sorted({int(pair_ref[k]) for k in ks})), []).append(p)
    # every sense at once: full blocks of seeds, one progress bar
    store.ensure({s for p in by_peer for w in raw_ids[p].tolist() for s in lex.senses[w]}
                 | {s for t in pair_ref.tolist() for w in raw_ids[t].tolist() for s in lex.senses[w]})
    engine = _Engine(store, lex)
    occ_cache: dict[tuple[int, Measure], np.ndarray] = {}

    def occurrences(t: int, m: Measure) -> np.ndarray:
        key = (t, m)
        if key not in occ_cache:
            ids = raw_ids[t]
            pos = _occurrences(ids.shape[0], m)
            words = np.where(pos >= 0, ids[np.clip(pos, 0, None)] if ids.size else pos, -1)
            occ_cache[key] = words.reshape(pos.shape)
        return occ_cache[key]

    groups = list(by_refset.items())
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(by_peer), desc="GRouge peers", unit="summary")
    for refset, peers in groups:
        ref_words = [int(w) for t in refset for w in raw_ids[t]]
        # the grams depend on the reference set only: one table for all its peers
        grams_all = []
        layout = []
        for m in measures:
            for t in refset:
                occ = occurrences(t, m)
                grams_all.append(occ)
                layout.append((m, t, occ.shape[0]))
        width = max((g.shape[1] for g in grams_all), default=1)
        padded = [np.pad(g, ((0, 0), (0, width - g.shape[1])), constant_values=-1) for g in grams_all]
        stacked = np.concatenate(padded) if padded else np.zeros((0, width), np.int64)
        # distinct grams only: Sem depends on the words, not the position
        if stacked.size:
            uniq, inverse = np.unique(stacked, axis=0, return_inverse=True)
        else:
            uniq, inverse = stacked, np.zeros(0, np.int64)
        uniq = np.ascontiguousarray(uniq, np.int64)
        jobs = [(raw_ids[p].tolist(), uniq) for p in peers]
        layouts = [(layout, inverse.ravel())] * len(peers)
        sems = engine.sems(ref_words, jobs)
        for p, s, (layout, inverse) in zip(peers, sems, layouts):
            per_occ = s[inverse] if inverse.size else np.zeros(0)
            start = 0
            pair_of_ref = {int(pair_ref[k]): k for k in by_peer[p]}
            ks_by_ref: dict[int, list[int]] = {}
            for k in by_peer[p]:
                ks_by_ref.setdefault(int(pair_ref[k]), []).append(k)
            for m, t, cnt in layout:
                total = float(np.sum(per_occ[start : start + cnt]))
                start += cnt
                for k in ks_by_ref.get(t, [pair_of_ref[t]]):
                    sem_sums[m][k] = total
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
