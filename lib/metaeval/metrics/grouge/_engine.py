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
def _accumulate(rows, idx, val, length, acc, touched):  # pragma: no cover - compiled
    """``acc += `` the stored vectors ``rows`` (in that order, float64); the touched dimensions are listed in
    ``touched``; returns how many."""
    nt = 0
    for r in rows:
        for q in range(length[r]):
            d = idx[r, q]
            if acc[d] == 0.0:  # stored values are positive: 0 means not yet touched
                touched[nt] = d
                nt += 1
            acc[d] += val[r, q]
    return nt


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
    nt = _accumulate(rows, idx, val, length, acc, touched)
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
def _ref_choices(ref_ptr, ref_shared, pair, u_cols):  # pragma: no cover - compiled
    """Step 1 (ADW ``alignmentBasedDisambiguation``): the sense position each reference word takes against
    the whole peer (-1: none)."""
    n_ref = ref_ptr.shape[0] - 1
    choice = np.full(n_ref, -1, np.int64)
    for j in range(n_ref):
        for s in range(ref_ptr[j], ref_ptr[j + 1]):
            if ref_shared[s]:  # a sense the peer also has: taken (the last such, as ADW's loop leaves it)
                choice[j] = s
        if choice[j] >= 0:
            continue
        best = 0.0
        for s in range(ref_ptr[j], ref_ptr[j + 1]):
            m = 0.0
            for t in range(u_cols.shape[0]):
                m = max(m, pair[s, u_cols[t]])
            if m > best:  # strict: the earlier sense wins ties; nothing above 0: no sense (ADW's "null")
                best = m
                choice[j] = s
    return choice


@numba.njit(cache=True, nogil=True)
def _word_pair_tables(ref_ptr, ref_nodes, u_ptr, u_cols, peer_nodes, pair, n_nodes):  # pragma: no cover
    """Step 2: per (reference word j, peer word u), u's best sense against j's senses (value, position) and
    u's sense shared with j (the last such, -1: none)."""
    n_ref = ref_ptr.shape[0] - 1
    n_u = u_ptr.shape[0] - 1
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
    return best_val, best_arg, shared


@numba.njit(cache=True, nogil=True)
def _add_distinct(arr, n, x):  # pragma: no cover - compiled
    """Append ``x`` to ``arr[:n]`` unless present; the new length."""
    for q in range(n):
        if arr[q] == x:
            return n
    arr[n] = x
    return n + 1


@numba.njit(cache=True, nogil=True)
def _gram_words(grams, w_ref, w_oov, w_stop):  # pragma: no cover - compiled
    """Step 3a: per gram, its distinct reference words (local indices), its distinct OOV dimensions, and
    whether it has a content word at all."""
    G, W = grams.shape
    g_ref = np.empty((G, W), np.int64)
    g_nref = np.zeros(G, np.int64)
    g_oov = np.empty((G, W), np.int64)
    g_noov = np.zeros(G, np.int64)
    content = np.zeros(G, np.bool_)
    for gi in range(G):
        for w in grams[gi]:
            if w < 0:
                continue
            content[gi] = content[gi] or not w_stop[w]
            if w_ref[w] >= 0:
                g_nref[gi] = _add_distinct(g_ref[gi], g_nref[gi], w_ref[w])
            elif w_oov[w] >= 0:
                g_noov[gi] = _add_distinct(g_oov[gi], g_noov[gi], w_oov[w])
    return g_ref, g_nref, g_oov, g_noov, content


@numba.njit(cache=True, nogil=True)
def _choice_keys(g_ref, g_nref, content, best_val, best_arg, shared, n_u):  # pragma: no cover - compiled
    """Step 3b: a hash of the peer's sense choices given each gram (grams with equal keys share the peer's
    vector); the largest int64 for a gram without a content word (no Sem)."""
    G = g_ref.shape[0]
    none = np.iinfo(np.int64).max
    keys = np.full(G, none, np.int64)
    choice = np.empty(max(n_u, 1), np.int64)
    for gi in range(G):
        if not content[gi]:
            continue
        _peer_choice(g_ref[gi], g_nref[gi], best_val, best_arg, shared, n_u, choice)
        key = np.int64(1469598103934665603)  # FNV-1a over the choices
        for u in range(n_u):
            key = (key ^ np.int64(choice[u] + 1)) * np.int64(1099511628211)
        keys[gi] = key & np.int64(0x3FFFFFFFFFFFFFFF)
    return keys


@numba.njit(cache=True, nogil=True)
def _gram_dims(gi, g_ref, g_nref, g_oov, g_noov, ref_choice, ref_rows, ref_nodes, idx, val, length, g_acc,
               g_touched, g_choice, out):  # pragma: no cover - compiled
    """The dimensions of gram ``gi``'s text vector in rank order into ``out`` (its OOV dimensions first,
    then the mean of its words' chosen senses, step 6); returns how many."""
    no = g_noov[gi]
    oov = np.sort(g_oov[gi, :no])
    for q in range(no):
        out[q] = oov[q]
    for q in range(g_nref[gi]):
        g_choice[q] = ref_choice[g_ref[gi, q]]
    g_rows = _rows_by_node(g_choice, g_nref[gi], ref_rows, ref_nodes)
    if g_rows.shape[0] == 0:
        return no
    return no + _aggregate_sorted(g_rows, idx, val, length, g_acc, g_touched, out, no)


@numba.njit(cache=True, nogil=True, inline="always")
def _before(v, d, x, h):  # pragma: no cover - compiled
    """Whether dimension d of value v ranks before dimension h of value x (larger first, ties: smaller)."""
    return v > x or (v == x and d < h)


@numba.njit(cache=True, nogil=True)
def _ranks_in_peer(g_buf, n_g, acc, p_touched, n_p, oov_rank, n_oov_p, n_nodes, q_dim, q_val, q_pos, cnt,
                   g_rank):  # pragma: no cover - compiled
    """Step 7's ranks: ``g_rank[q]`` = the rank in the peer vector P (values ``acc`` on the dimensions
    ``p_touched[:n_p]``; its OOV dimensions ranked first) of the gram's dimension ``g_buf[q]`` (0: not in P).

    The ranks of the m queried dimensions are counted in one pass over P's dimensions, each placed among the
    sorted queries by binary search: ``O(|P| log m)``, with no sort of P (its order is only needed at the
    queried dimensions). Ties rank the smaller dimension first, as everywhere."""
    m = 0
    for q in range(n_g):
        h = g_buf[q]
        if h >= n_nodes:
            g_rank[q] = oov_rank[h]
        elif acc[h] <= 0.0:
            g_rank[q] = 0
        else:
            q_dim[m] = h
            q_val[m] = -acc[h]
            q_pos[m] = q
            m += 1
    if m == 0:
        return
    # queries in rank order: by value (decreasing), ties by dimension (a stable sort of dimension-sorted keys)
    by_dim = np.argsort(q_dim[:m], kind="mergesort")
    order = by_dim[np.argsort(q_val[:m][by_dim], kind="mergesort")]
    for k in range(m + 1):
        cnt[k] = 0
    for t in range(n_p):
        d = p_touched[t]
        v = acc[d]
        lo, hi = 0, m  # the first query that (v, d) ranks before: it counts for that query and every later one
        while lo < hi:
            mid = (lo + hi) >> 1
            o = order[mid]
            if _before(v, d, -q_val[o], q_dim[o]):
                hi = mid
            else:
                lo = mid + 1
        cnt[lo] += 1
    before = 0
    for k in range(m):
        before += cnt[k]
        g_rank[q_pos[order[k]]] = n_oov_p + 1 + before


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
    n_u = u_ptr.shape[0] - 1
    ref_choice = _ref_choices(ref_ptr, ref_shared, pair, u_cols)
    best_val, best_arg, shared = _word_pair_tables(ref_ptr, ref_nodes, u_ptr, u_cols, peer_nodes, pair, n_nodes)
    g_ref, g_nref, g_oov, g_noov, content = _gram_words(grams, w_ref, w_oov, w_stop)
    keys = _choice_keys(g_ref, g_nref, content, best_val, best_arg, shared, n_u)
    G, W = grams.shape
    out = np.full(G, np.nan)
    # grams grouped by the peer's choices: one peer vector P per group, summed in node order in float64
    order = np.argsort(keys, kind="mergesort")
    none = np.iinfo(np.int64).max
    width = idx.shape[1]
    oov_rank = np.zeros(n_dims, np.int64)
    for q in range(peer_oov_dims.shape[0]):
        oov_rank[peer_oov_dims[q]] = q + 1
    acc = np.zeros(n_dims)
    p_touched = np.empty(min(max(n_u, 1) * width, n_nodes) + 1, np.int64)
    n_gmax = W + min(W * width, n_dims)
    g_buf = np.empty(n_gmax, np.int64)
    g_rank = np.empty(n_gmax, np.int64)
    q_dim = np.empty(n_gmax, np.int64)
    q_val = np.empty(n_gmax)
    q_pos = np.empty(n_gmax, np.int64)
    cnt = np.empty(n_gmax + 1, np.int64)
    g_touched = np.empty(min(W * width, n_dims) + 1, np.int64)
    g_acc = np.zeros(n_dims)
    g_choice = np.empty(W, np.int64)
    choice = np.empty(max(n_u, 1), np.int64)
    a = 0
    while a < G and keys[order[a]] != none:
        b = a
        while b < G and keys[order[b]] == keys[order[a]]:
            b += 1
        _peer_choice(g_ref[order[a]], g_nref[order[a]], best_val, best_arg, shared, n_u, choice)
        rows = _rows_by_node(choice, n_u, peer_rows, peer_nodes)
        n_p = _accumulate(rows, idx, val, length, acc, p_touched)
        for k in range(a, b):
            gi = order[k]
            n_g = _gram_dims(gi, g_ref, g_nref, g_oov, g_noov, ref_choice, ref_rows, ref_nodes, idx, val, length,
                             g_acc, g_touched, g_choice, g_buf)
            _ranks_in_peer(g_buf, n_g, acc, p_touched, n_p, oov_rank, peer_oov_dims.shape[0], n_nodes, q_dim,
                           q_val, q_pos, cnt, g_rank)
            out[gi] = _wo_of_ranks(g_rank, n_g, harm)
        for t in range(n_p):
            acc[p_touched[t]] = 0.0
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
