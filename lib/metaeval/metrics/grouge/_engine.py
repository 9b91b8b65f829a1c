"""Sem(g, P) of many model-grams g against one peer P: ADW's alignment, the text signatures and their Weighted
Overlap (the rules are stated in :mod:`metaeval.metrics.grouge`)."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from metaeval.metrics.grouge._lexicon import _Lexicon, _oov_ranked
from metaeval.metrics.grouge._overlap import _harmonic, _pair_cosine, _pair_wo, _wo_of_ranks
from metaeval.metrics.grouge._store import SenseVectors


@numba.njit(cache=True, nogil=True)
def _aggregate_sorted(rows, idx, val, length, acc, touched, out, start):  # pragma: no cover - compiled
    """Dimensions of the sum of the stored vectors ``rows`` (summed in the given order, float64), by
    decreasing value (ties: smaller dimension first), written to ``out[start:]``; returns how many.
    ``acc`` is a zeroed scratch array over all dimensions (left zeroed), ``touched`` scratch space."""
    if rows.shape[0] == 1:  # one stored vector: already in that order
        r = rows[0]
        for q in range(length[r]):
            out[start + q] = idx[r, q]
        return length[r]
    nt = 0
    for r in rows:
        for q in range(length[r]):
            d = idx[r, q]
            if acc[d] == 0.0:  # stored values are positive: 0 means not yet touched
                touched[nt] = d
                nt += 1
            acc[d] += val[r, q]
    dims = np.sort(touched[:nt])
    keys = np.empty(nt)
    for t in range(nt):
        keys[t] = -acc[dims[t]]
        acc[dims[t]] = 0.0
    order = np.argsort(keys, kind="mergesort")  # stable: equal values stay in dimension order
    for t in range(nt):
        out[start + t] = dims[order[t]]
    return nt


@numba.njit(cache=True, nogil=True)
def _accumulate(rows, idx, val, length, acc, touched):  # pragma: no cover - compiled
    """``acc += `` the stored vectors ``rows`` (in that order, float64); the touched dimensions are listed in
    ``touched``; returns how many."""
    nt = 0
    for r in rows:
        for q in range(length[r]):
            d = idx[r, q]
            if acc[d] == 0.0:
                touched[nt] = d
                nt += 1
            acc[d] += val[r, q]
    return nt


@numba.njit(cache=True, nogil=True)
def _mark_dims(r, idx, length, mark, out, n):  # pragma: no cover - compiled
    for q in range(length[r]):
        d = idx[r, q]
        if not mark[d]:
            mark[d] = True
            out[n] = d
            n += 1
    return n


@numba.njit(cache=True, nogil=True)
def _sorted_pairs(dims, n, values):  # pragma: no cover - compiled
    """The dimensions ``dims[:n]`` with ``values[d] > 0``, by decreasing value (ties: smaller dimension),
    and their values."""
    d = np.sort(dims[:n])
    m = 0
    for t in range(n):
        if values[d[t]] > 0.0:
            d[m] = d[t]
            m += 1
    d = d[:m]
    v = np.empty(m)
    for t in range(m):
        v[t] = -values[d[t]]
    o = np.argsort(v, kind="mergesort")
    return d[o].copy(), -v[o]


@numba.njit(cache=True, nogil=True, inline="always")
def _n_before(dims, vals, x, h):  # pragma: no cover - compiled
    """How many entries of a list sorted by (decreasing value, increasing dimension) come before (x, h)."""
    lo = 0
    hi = dims.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        v = vals[mid]
        if v > x or (v == x and dims[mid] < h):
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=True, nogil=True)
def _rows_by_node(chosen, n, rows_of, nodes_of):  # pragma: no cover - compiled
    """Distinct store rows of the chosen sense positions ``chosen[:n]`` (-1 = none), ordered by node id (the
    summation order of a text vector, so that it does not depend on the order senses were computed in)."""
    nodes = np.empty(n, np.int64)
    rows = np.empty(n, np.int64)
    m = 0
    for k in range(n):
        c = chosen[k]
        if c >= 0:
            nodes[m] = nodes_of[c]
            rows[m] = rows_of[c]
            m += 1
    order = np.argsort(nodes[:m], kind="mergesort")
    out = np.empty(m, np.int64)
    k = 0
    for q in range(m):
        r = rows[order[q]]
        if k == 0 or nodes[order[q]] != nodes[order[q - 1]]:
            out[k] = r
            k += 1
    return out[:k]


@numba.njit(cache=True, nogil=True)
def _peer_sems(grams, w_ref, w_oov, w_stop, ref_ptr, ref_rows, ref_nodes, ref_shared, u_ptr, u_cols, peer_rows,
               peer_nodes, pair, peer_oov_dims, idx, val, length, n_dims, n_nodes, harm):  # pragma: no cover
    """Sem(g, P) for every gram g (rows of ``grams``: global word ids, -1 padding) against one peer P; NaN
    for a gram without a content word (its Sem is never used).

    ``w_ref[word]``: local index of an in-vocabulary reference word (-1 otherwise), ``w_oov[word]`` its OOV
    dimension (-1), ``w_stop[word]`` whether it is a stopword. Reference word j's senses are positions
    ``ref_ptr[j]:ref_ptr[j+1]`` (store rows ``ref_rows``, nodes ``ref_nodes``, ``ref_shared[s]``: the sense is
    also a sense of a peer word); peer word u's senses are positions ``u_ptr[u]:u_ptr[u+1]`` with columns
    ``u_cols`` of ``pair`` (alignment similarity, reference sense x peer sense column), rows ``peer_rows``,
    nodes ``peer_nodes``. ``peer_oov_dims``: the peer's OOV dimensions in rank order.
    """
    n_ref = ref_ptr.shape[0] - 1
    n_u = u_ptr.shape[0] - 1
    n_pt = u_cols.shape[0]
    # 1. each reference word's sense against the whole peer (ADW: alignmentBasedDisambiguation)
    ref_choice = np.full(n_ref, -1, np.int64)
    for j in range(n_ref):
        done = False
        for s in range(ref_ptr[j], ref_ptr[j + 1]):
            if ref_shared[s]:  # a sense the peer also has: taken (the last such, as ADW's loop leaves it)
                ref_choice[j] = s
                done = True
        if done:
            continue
        best = 0.0
        for s in range(ref_ptr[j], ref_ptr[j + 1]):
            m = 0.0
            for t in range(n_pt):
                m = max(m, pair[s, u_cols[t]])
            if m > best:  # strict: the earlier sense wins ties; nothing above 0: no sense (ADW's "null")
                best = m
                ref_choice[j] = s
    # 2. per (reference word j, peer word u): u's best sense against j's senses, and u's sense shared with j
    best_val = np.zeros((max(n_ref, 1), max(n_u, 1)))
    best_arg = np.full((max(n_ref, 1), max(n_u, 1)), -1, np.int64)
    shared = np.full((max(n_ref, 1), max(n_u, 1)), -1, np.int64)
    mark = np.zeros(n_nodes, np.bool_)
    for j in range(n_ref):
        for s in range(ref_ptr[j], ref_ptr[j + 1]):
            mark[ref_nodes[s]] = True
        for u in range(n_u):
            bv = 0.0
            for t in range(u_ptr[u], u_ptr[u + 1]):
                if mark[peer_nodes[t]]:
                    shared[j, u] = t
                m = 0.0
                for s in range(ref_ptr[j], ref_ptr[j + 1]):
                    m = max(m, pair[s, u_cols[t]])
                if m > bv:
                    bv = m
                    best_arg[j, u] = t
            best_val[j, u] = bv
        for s in range(ref_ptr[j], ref_ptr[j + 1]):
            mark[ref_nodes[s]] = False
    # 3. per gram: its words, and the key of the peer's choices given the gram
    G = grams.shape[0]
    W = grams.shape[1]
    out = np.full(G, np.nan)
    keys = np.full(G, np.iinfo(np.int64).max, np.int64)
    g_ref = np.empty((G, W), np.int64)
    g_nref = np.zeros(G, np.int64)
    g_oov = np.empty((G, W), np.int64)
    g_noov = np.zeros(G, np.int64)
    choice = np.empty(max(n_u, 1), np.int64)
    for gi in range(G):
        content = False
        for w in grams[gi]:
            if w < 0:
                continue
            if not w_stop[w]:
                content = True
            j = w_ref[w]
            if j >= 0:
                dup = False
                for q in range(g_nref[gi]):
                    dup = dup or g_ref[gi, q] == j
                if not dup:
                    g_ref[gi, g_nref[gi]] = j
                    g_nref[gi] += 1
            elif w_oov[w] >= 0:
                d = w_oov[w]
                dup = False
                for q in range(g_noov[gi]):
                    dup = dup or g_oov[gi, q] == d
                if not dup:
                    g_oov[gi, g_noov[gi]] = d
                    g_noov[gi] += 1
        if not content:
            continue
        _peer_choice(g_ref[gi], g_nref[gi], best_val, best_arg, shared, n_u, choice)
        key = np.int64(1469598103934665603)
        for u in range(n_u):
            key = (key ^ np.int64(choice[u] + 1)) * np.int64(1099511628211)
        keys[gi] = key & np.int64(0x3FFFFFFFFFFFFFFF)
    # 4. grams grouped by the peer's choices. The peer's vector P depends on the gram; it is summed
    # exactly (node order, float64) per group, but not re-sorted: ranks come from the sorted vector P0 of
    # the first group's choices, corrected on the dimensions C of the senses that differ from P0's
    # (outside C, P and P0 are the same sums in the same order, hence equal).
    order = np.argsort(keys, kind="mergesort")
    if G == 0 or keys[order[0]] == np.iinfo(np.int64).max:
        return out
    width = idx.shape[1]
    n_oov_p = peer_oov_dims.shape[0]
    oov_rank = np.zeros(n_dims, np.int64)
    for q in range(n_oov_p):
        oov_rank[peer_oov_dims[q]] = q + 1
    p0 = np.zeros(n_dims)
    acc = np.zeros(n_dims)
    cap = min(max(n_u, 1) * width, n_nodes) + 1
    touched = np.empty(cap, np.int64)
    _peer_choice(g_ref[order[0]], g_nref[order[0]], best_val, best_arg, shared, n_u, choice)
    base_rows = _rows_by_node(choice, n_u, peer_rows, peer_nodes)
    n0 = _accumulate(base_rows, idx, val, length, p0, touched)
    b_dims, b_vals = _sorted_pairs(touched, n0, p0)
    in_base = np.zeros(idx.shape[0] + 1, np.bool_)
    for r in base_rows:
        in_base[r] = True
    in_key = np.zeros(idx.shape[0] + 1, np.bool_)
    c_mark = np.zeros(n_dims, np.bool_)
    c_list = np.empty(min(2 * max(n_u, 1) * width, n_nodes) + 1, np.int64)
    a_touched = np.empty(cap, np.int64)
    g_buf = np.empty(W + min(W * width, n_dims), np.int64)
    g_rank = np.empty(g_buf.shape[0], np.int64)
    g_touched = np.empty(min(W * width, n_dims) + 1, np.int64)
    g_acc = np.zeros(n_dims)
    g_choice = np.empty(W, np.int64)
    a = 0
    while a < G and keys[order[a]] != np.iinfo(np.int64).max:
        b = a
        while b < G and keys[order[b]] == keys[order[a]]:
            b += 1
        _peer_choice(g_ref[order[a]], g_nref[order[a]], best_val, best_arg, shared, n_u, choice)
        rows = _rows_by_node(choice, n_u, peer_rows, peer_nodes)
        n_acc = _accumulate(rows, idx, val, length, acc, a_touched)
        # C: the dimensions of the senses in one of P, P0 but not both
        for r in rows:
            in_key[r] = True
        n_c = 0
        for r in rows:
            if not in_base[r]:
                n_c = _mark_dims(r, idx, length, c_mark, c_list, n_c)
        for r in base_rows:
            if not in_key[r]:
                n_c = _mark_dims(r, idx, length, c_mark, c_list, n_c)
        for r in rows:
            in_key[r] = False
        c_new_d, c_new_v = _sorted_pairs(c_list, n_c, acc)
        c_old_d, c_old_v = _sorted_pairs(c_list, n_c, p0)
        for k in range(a, b):
            gi = order[k]
            no = g_noov[gi]
            oov = np.sort(g_oov[gi, :no])
            for q in range(no):
                g_buf[q] = oov[q]
            n_g = no
            for q in range(g_nref[gi]):
                g_choice[q] = ref_choice[g_ref[gi, q]]
            g_rows = _rows_by_node(g_choice, g_nref[gi], ref_rows, ref_nodes)
            if g_rows.shape[0] > 0:
                n_g += _aggregate_sorted(g_rows, idx, val, length, g_acc, g_touched, g_buf, no)
            for q in range(n_g):  # the rank in P of each dimension of g, in g's rank order (0: not in P)
                h = g_buf[q]
                if h >= n_nodes:
                    g_rank[q] = oov_rank[h]
                elif acc[h] <= 0.0:
                    g_rank[q] = 0
                else:
                    x = acc[h]
                    g_rank[q] = (n_oov_p + 1 + _n_before(b_dims, b_vals, x, h) - _n_before(c_old_d, c_old_v, x, h)
                                 + _n_before(c_new_d, c_new_v, x, h))
            out[gi] = _wo_of_ranks(g_rank, n_g, harm)
        for t in range(n_acc):
            acc[a_touched[t]] = 0.0
        for t in range(n_c):
            c_mark[c_list[t]] = False
        a = b
    return out


@numba.njit(cache=True, nogil=True)
def _peer_choice(g_ref, n_ref_g, best_val, best_arg, shared, n_u, choice):  # pragma: no cover - compiled
    """The sense position each peer word takes against a gram's reference words (-1: none)."""
    for u in range(n_u):
        c = -1
        for q in range(n_ref_g):  # a sense the gram also has: the last such in the word's sense order
            c = max(c, shared[g_ref[q], u])
        if c < 0:
            bv = 0.0
            for q in range(n_ref_g):
                j = g_ref[q]
                v = best_val[j, u]
                if v > bv or (v == bv and v > 0 and best_arg[j, u] < c):
                    bv = v
                    c = best_arg[j, u]
        choice[u] = c


class _Engine:
    """Sem(g, P) for many grams and peers sharing one reference set."""

    def __init__(self, store: SenseVectors, lex: _Lexicon, *, align: str = "cosine", align_topk: int = 500):
        self.store, self.lex = store, lex
        self.align, self.align_topk = align, int(align_topk)

    def pair(self, rows_a: np.ndarray, rows_b: np.ndarray) -> np.ndarray:
        """Alignment similarity of every (a, b) pair of stored vectors, on their top ``align_topk``."""
        store = self.store
        if not (len(rows_a) and len(rows_b)):
            return np.zeros((len(rows_a), len(rows_b)))
        length = np.minimum(store.length, self.align_topk)
        chunks = 4 * numba.get_num_threads()
        if self.align == "cosine":
            return _pair_cosine(rows_a, rows_b, store.idx, store.val, length, store.wn.n_nodes, chunks)
        harm = _harmonic(self.align_topk + 1)
        return _pair_wo(rows_a, rows_b, store.idx, length, store.wn.n_nodes, harm, chunks)

    def sems(self, ref_word_ids: Sequence[int], peers: Sequence[tuple[list[int], np.ndarray]]) -> list[np.ndarray]:
        """``peers``: (word ids of the peer, grams array of global word ids) per peer."""
        lex, store = self.lex, self.store
        ref_words = sorted({w for w in ref_word_ids if lex.senses[w]})
        peer_words = sorted({w for p, _ in peers for w in p if lex.senses[w]})
        store.ensure({s for w in ref_words + peer_words for s in lex.senses[w]})
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
        ref_nodes_a = np.asarray(ref_nodes, np.int64)
        ref_rows = store.row_of[ref_nodes_a]
        col_rows = store.row_of[col_nodes]
        n_nodes = store.wn.n_nodes
        n_dims = n_nodes + max(lex.n_oov, 1)
        harm = _harmonic(n_dims + 1)
        pair = self.pair(ref_rows, col_rows)
        w_oov = np.asarray(lex.oov_dim, np.int64)
        w_stop = np.asarray(lex.is_stop, np.bool_)
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
            peer_nodes = col_nodes[u_cols_a] if u_cols_a.size else np.zeros(0, np.int64)
            ref_shared = np.isin(ref_nodes_a, peer_nodes)
            return _peer_sems(
                grams, w_ref, w_oov, w_stop, ref_ptr_a, ref_rows, ref_nodes_a, ref_shared,
                np.asarray(u_ptr, np.int64), u_cols_a, peer_rows, peer_nodes, pair, _oov_ranked(lex, peer_ids),
                store.idx, store.val, store.length, n_dims, n_nodes, harm,
            )

        # the kernel releases the GIL: one thread per core over the peers
        workers = min(numba.get_num_threads(), len(peers))
        if workers <= 1:
            return [one(job) for job in peers]
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(one, peers))
