"""Private: ROUGE-L and ROUGE-W kernels (numba): the union LCS of each reference sentence against the
summary's sentences, as ROUGE-1.5.5 marks it, and the hits clipped by the summary's token counts.

Sizes: P (summary, reference) pairs, V vocabulary types. ROUGE-W's arithmetic is ROUGE-1.5.5.pl's
(:mod:`metaeval.metrics.rouge._exact`): k^w from a table of the C library's ``pow``, ``c + f(k+1) - f(k)``
evaluated left to right.
A kernel and the kernels it calls live in one file: numba's cache of a caller is not invalidated when a
callee in another file changes.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.extending import intrinsic


@numba.njit(cache=True)
def _lcs_mark_dp(model, peer, mask, weighted, weight):  # pragma: no cover - compiled
    """Reference for the tests (the plain dynamic program with a direction table): mark the model positions
    of one LCS (weighted: ROUGE-W's WLCS, f(k) = k^weight) of model and peer, with ROUGE-1.5.5's
    tie-breaking (prefer "up" when c[i-1][j] >= c[i][j-1])."""
    m, n = model.shape[0], peer.shape[0]
    if m == 0 or n == 0:
        return
    c = np.zeros((m + 1, n + 1), np.float64)
    run = np.zeros((m + 1, n + 1), np.int64)
    b = np.zeros((m + 1, n + 1), np.int8)
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            if model[i - 1] == peer[j - 1]:
                k = run[i - 1, j - 1]
                if weighted:
                    c[i, j] = c[i - 1, j - 1] + float(k + 1) ** weight - float(k) ** weight
                else:
                    c[i, j] = c[i - 1, j - 1] + 1.0
                b[i, j] = 1
                run[i, j] = k + 1
            elif c[i - 1, j] >= c[i, j - 1]:
                c[i, j] = c[i - 1, j]
                b[i, j] = 2
            else:
                c[i, j] = c[i, j - 1]
                b[i, j] = 3
    _trace_dp(b, m, n, mask)


@numba.njit(cache=True)
def _trace_dp(b, i, j, mask):  # pragma: no cover - compiled
    while i != 0 and j != 0:
        if b[i, j] == 1:
            i -= 1
            j -= 1
            mask[i] = 1
        elif b[i, j] == 2:
            i -= 1
        else:
            j -= 1


@intrinsic
def _popcount(typingctx, x):  # pragma: no cover - compiled
    """Number of set bits of a uint64 (LLVM's ctpop: one POPCNT instruction where the CPU has it)."""
    if x != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


@numba.njit(cache=True)
def _lcs_prefix(Vrows, i, j, words):  # pragma: no cover - compiled
    """c[i][j] from the bit rows: the zero bits of row i among the first j positions."""
    ones = np.uint64(0)
    full = j // 64
    base = i * words
    for w in range(full):
        ones += _popcount(Vrows[base + w])
    rest = j - full * 64
    if rest > 0:
        ones += _popcount(Vrows[base + full] & ((np.uint64(1) << np.uint64(rest)) - np.uint64(1)))
    return j - np.int64(ones)


@numba.njit(cache=True)
def _bit_rows(model, first, count, slot, pos_off, pos_list, rows, eq, words):  # pragma: no cover - compiled
    """Rows 1..count of the bit-parallel LCS table (Hyyro 2004) below row 0 of ``rows``, for the model tokens
    ``model[first:first + count]``: row i is a bit vector whose zero bits are the positions where c[i][.]
    increases, updated with one addition per 64 columns. A token's match mask is built in ``eq`` from its
    positions in the peer (``pos_list[pos_off[s]:pos_off[s + 1]]``, 1-based, ``s = slot[token]``; -1: absent):
    O(words + occurrences) per row, so no table of masks per type is needed."""
    for r in range(1, count + 1):
        sl = slot[model[first + r - 1]]
        prev = (r - 1) * words
        row = r * words
        if sl < 0:
            for w in range(words):
                rows[row + w] = rows[prev + w]
            continue
        for w in range(words):
            eq[w] = np.uint64(0)
        for q in range(pos_off[sl], pos_off[sl + 1]):
            j = pos_list[q] - 1
            eq[j // 64] |= np.uint64(1) << np.uint64(j % 64)
        carry = np.uint64(0)
        for w in range(words):
            v = rows[prev + w]
            u = v & eq[w]
            t = v + u
            c1 = np.uint64(1) if t < v else np.uint64(0)
            s = t + carry
            c2 = np.uint64(1) if s < t else np.uint64(0)
            carry = c1 | c2
            rows[row + w] = s | (v & ~u)


@numba.njit(cache=True)
def _load_block(model, lo, count, slot, pos_off, pos_list, rows, ckpt, eq, words):  # pragma: no cover
    """Rows lo..lo + count into ``rows``, recomputed from the checkpoint row lo (``ckpt`` holds every K-th row)."""
    b = lo // count if count > 0 else 0
    for w in range(words):
        rows[w] = ckpt[b * words + w]
    _bit_rows(model, lo, count, slot, pos_off, pos_list, rows, eq, words)


@numba.njit(cache=True)
def _lcs_mark_bits(model, peer, mask, slot, pos_off, pos_list, rows, ckpt, eq, words, K):  # pragma: no cover
    """:func:`_lcs_mark_dp`'s marks (ROUGE-1.5.5's LCS and tie-breaking) with the lengths in bit-parallel form:
    O(m n / 64) to fill; the trace recomputes c[i-1][j] by popcount, O((m + n) n / 64).

    Memory: the rows are kept in blocks of ``K``. With ``K >= m`` the whole table is held ((m + 1) words
    rows in ``rows``); otherwise only every K-th row is kept (``ckpt``, m / K + 1 rows) and each block is
    recomputed from its checkpoint when the trace reaches it: one extra pass, (K + 1 + m / K + 1) rows of
    memory (K ~ sqrt(m) makes that O(sqrt(m) n / 64) instead of O(m n / 64)). The marks are the same."""
    m, n = model.shape[0], peer.shape[0]
    if m == 0 or n == 0:
        return
    allones = ~np.uint64(0)
    for w in range(words):
        ckpt[w] = allones
    K = max(1, min(K, m))
    n_blocks = (m - 1) // K + 1
    for b in range(n_blocks):
        count = min(K, m - b * K)
        for w in range(words):
            rows[w] = ckpt[b * words + w]
        _bit_rows(model, b * K, count, slot, pos_off, pos_list, rows, eq, words)
        if b + 1 < n_blocks:
            for w in range(words):
                ckpt[(b + 1) * words + w] = rows[count * words + w]
    lo = (n_blocks - 1) * K  # rows lo..m are in ``rows`` (row r at r - lo)
    # Trace with c = c[i][j] and up = c[i-1][j] kept current: a step left updates both from one bit each
    # (bit j-1 of a row is 0 where the row increases at column j); only a step up or diagonal needs a
    # popcount, so O(m) popcounts per pair instead of one per step.
    i, j = m, n
    cur = _lcs_prefix(rows, i - lo, j, words)
    up = _lcs_prefix(rows, i - 1 - lo, j, words)
    while i != 0 and j != 0:
        if model[i - 1] == peer[j - 1]:
            i -= 1
            j -= 1
            mask[i] = 1
            cur -= 1
            if i != 0 and j != 0:
                if i - 1 < lo:
                    lo -= K
                    _load_block(model, lo, K, slot, pos_off, pos_list, rows, ckpt, eq, words)
                up = _lcs_prefix(rows, i - 1 - lo, j, words)
        else:
            sh = np.uint64((j - 1) % 64)
            w = (j - 1) // 64
            bit = (rows[(i - lo) * words + w] >> sh) & np.uint64(1)
            left = cur - 1 + np.int64(bit)
            if up >= left:
                i -= 1
                cur = up
                if i != 0:
                    if i - 1 < lo:
                        lo -= K
                        _load_block(model, lo, K, slot, pos_off, pos_list, rows, ckpt, eq, words)
                    up = _lcs_prefix(rows, i - 1 - lo, j, words)
            else:
                up_bit = (rows[(i - 1 - lo) * words + w] >> sh) & np.uint64(1)
                up = up - 1 + np.int64(up_bit)
                j -= 1
                cur = left


@numba.njit(cache=True)
def _diag_run(model, peer, i, j):  # pragma: no cover - compiled
    """Length of the run of matches on the diagonal ending at cell (i, j) (1-based): ROUGE-W's k, which the
    Perl script keeps in a table (``$c`` of the cell above-left plus one on a match, else 0)."""
    k = 0
    while i > k and j > k and model[i - 1 - k] == peer[j - 1 - k]:
        k += 1
    return k


@numba.njit(cache=True)
def _wlcs_mark(model, peer, mask, slot, pos_off, pos_list, c, rowref, fpow):  # pragma: no cover - compiled
    """ROUGE-W's weighted LCS (f(k) = k^w from the table ``fpow``), marked as :func:`_lcs_mark_dp` does.

    Below a non-decreasing row, a row is that row with its match cells raised: a row whose token is not in
    ``peer`` (``slot[token] < 0``) is the same row (``rowref`` points to it), a row with matches a copy in
    which each match value is carried right while it exceeds the row above (the end found by bisection;
    ``pos_list[pos_off[s]:pos_off[s + 1]]``: the 1-based positions of slot ``s`` in ``peer``). Below a
    decreasing row (a match value below the value left of it) the row is computed cell by cell.
    O(m + n) per row with few matches, O(n) otherwise; ``c`` holds up to (m + 1)(n + 1) cells."""
    m, n = model.shape[0], peer.shape[0]
    W = n + 1
    for j in range(W):
        c[j] = 0.0
    rowref[0] = 0
    n_rows = 1
    monotone = True  # row i - 1 is non-decreasing
    for i in range(1, m + 1):
        mi = model[i - 1]
        sl = slot[mi]
        prev = rowref[i - 1] * W
        if sl < 0 and monotone:
            rowref[i] = rowref[i - 1]
            continue
        rowref[i] = n_rows
        row = n_rows * W
        n_rows += 1
        if monotone:
            c[row : row + W] = c[prev : prev + W]
            last = pos_off[sl + 1]
            for q in range(pos_off[sl], last):
                j = pos_list[q]
                k = _diag_run(model, peer, i - 1, j - 1)
                value = c[prev + j - 1] + fpow[k + 1] - fpow[k]
                if value < c[row + j - 1]:
                    monotone = False
                c[row + j] = value
                # the value holds up to the next match, or to the first cell of the (non-decreasing) row above
                # that reaches it: found by bisection, then filled in one run
                lo = j + 1
                hi = pos_list[q + 1] if q + 1 < last else W
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if c[prev + mid] >= value:
                        hi = mid
                    else:
                        lo = mid + 1
                for t in range(row + j + 1, row + lo):
                    c[t] = value
            continue
        # below a decreasing row: the plain recurrence (non-match cells never decrease, match cells may)
        monotone = True
        running = 0.0
        c[row] = 0.0
        for j in range(1, W):
            if mi == peer[j - 1]:
                k = _diag_run(model, peer, i - 1, j - 1)
                value = c[prev + j - 1] + fpow[k + 1] - fpow[k]
                if value < running:
                    monotone = False
                running = value
            else:
                running = max(c[prev + j], running)
            c[row + j] = running
    i, j = m, n
    while i != 0 and j != 0:
        if model[i - 1] == peer[j - 1]:
            i -= 1
            j -= 1
            mask[i] = 1
        elif c[rowref[i - 1] * W + j] >= c[rowref[i] * W + j - 1]:
            i -= 1
        else:
            j -= 1


@numba.njit(cache=True)
def _lcs_hits(peer_t, ref_t, tok, sent_off, text_sent, text_tok, V, weighted, fpow, M, N, K):  # pragma: no cover
    """ROUGE-L hits (integers) or ROUGE-W hits for every (peer, reference) pair; model = reference.

    Union LCS of each reference sentence against every summary sentence (marks only accumulate, so the
    summary sentences can be the outer loop), hits clipped by the unigram counts of both texts
    (as ROUGE-1.5.5; only the summary's can bind, since each mark is one of the reference's own occurrences).
    Consecutive pairs with the same summary (one record's references) share its per-sentence positions.
    ROUGE-L: O(sum over sentence pairs of m n / 64) time, bit rows for blocks of ``K`` reference tokens
    (:func:`_lcs_mark_bits`); ROUGE-W: O(sum m n) at most, a table of (M + 1)(N + 1) cells. ``M``, ``N``: the
    longest reference and summary sentence; buffers sized by them, reused."""
    P = peer_t.shape[0]
    out = np.zeros(P, np.float64)
    peer_budget = np.zeros(V, np.int64)
    maxw = (N + 63) // 64
    K = max(1, min(K, M))
    cf = np.zeros((M + 1) * (N + 1) if weighted else 1, np.float64)
    rowref = np.zeros(M + 1, np.int64)
    rows = np.zeros(1 if weighted else (K + 1) * maxw, np.uint64)
    ckpt = np.zeros(1 if weighted else ((M - 1) // K + 1) * maxw, np.uint64)
    eq = np.zeros(max(maxw, 1), np.uint64)
    slot = np.full(V, -1, np.int64)
    pos_off = np.zeros(N + 2, np.int64)
    pos_fill = np.zeros(N + 2, np.int64)
    pos_list = np.zeros(N + 1, np.int64)
    # marks of one group of pairs (one summary's references), each pair at its offset moff
    moff = np.zeros(P + 1, np.int64)
    max_group = 0
    longest_text = 0
    k = 0
    while k < P:
        e = k
        total = 0
        while e < P and peer_t[e] == peer_t[k]:
            L = text_tok[ref_t[e] + 1] - text_tok[ref_t[e]]
            total += L
            longest_text = max(longest_text, L)
            e += 1
        max_group = max(max_group, total)
        k = e
    mask = np.zeros(max_group + 1, np.int8)
    consumed = np.zeros(longest_text + 1, np.int64)
    k = 0
    while k < P:
        p = peer_t[k]
        e = k
        total = 0
        while e < P and peer_t[e] == p:
            moff[e] = total
            total += text_tok[ref_t[e] + 1] - text_tok[ref_t[e]]
            e += 1
        mask[:total] = 0
        for ps in range(text_sent[p], text_sent[p + 1]):
            peer = tok[sent_off[ps] : sent_off[ps + 1]]
            n = peer.shape[0]
            if n == 0:
                continue
            words = (n + 63) // 64
            n_slots = 0
            for j in range(n):
                t = peer[j]
                if slot[t] < 0:
                    slot[t] = n_slots
                    n_slots += 1
            # 1-based positions of each slot in the sentence, ascending (CSR by slot)
            for q in range(n_slots + 1):
                pos_off[q] = 0
            for j in range(n):
                pos_off[slot[peer[j]] + 1] += 1
            for q in range(n_slots):
                pos_off[q + 1] += pos_off[q]
                pos_fill[q] = pos_off[q]
            for j in range(n):
                q = slot[peer[j]]
                pos_list[pos_fill[q]] = j + 1
                pos_fill[q] += 1
            for kk in range(k, e):
                r = ref_t[kk]
                base = moff[kk] - text_tok[r]
                for s in range(text_sent[r], text_sent[r + 1]):
                    a, b = sent_off[s], sent_off[s + 1]
                    if a == b:
                        continue
                    model = tok[a:b]
                    sub = mask[base + a : base + b]
                    if weighted:
                        _wlcs_mark(model, peer, sub, slot, pos_off, pos_list, cf, rowref, fpow)
                    else:
                        _lcs_mark_bits(model, peer, sub, slot, pos_off, pos_list, rows, ckpt, eq, words, K)
            for j in range(n):
                slot[peer[j]] = -1
        for q in range(text_tok[p], text_tok[p + 1]):
            peer_budget[tok[q]] += 1
        for kk in range(k, e):
            r = ref_t[kk]
            r0 = text_tok[r]
            base = moff[kk] - r0
            n_cons = 0
            hit = 0.0
            for s in range(text_sent[r], text_sent[r + 1]):
                a, b = sent_off[s], sent_off[s + 1]
                L = b - a
                hit_len = 0
                for j in range(L):
                    if mask[base + a + j] != 1:
                        continue
                    t = tok[a + j]
                    # clipped by the summary's count of the token (the reference's count cannot bind: each
                    # marked position is one of its occurrences)
                    if peer_budget[t] <= 0:
                        continue
                    if weighted:
                        # ROUGE-1.5.5 closes a run when the next position is not an LCS hit or at the end of
                        # the sentence; a clipped hit inside a run neither adds nor closes it.
                        hit_len += 1
                        if (j + 1 < L and mask[base + a + j + 1] == 0) or j + 1 == L:
                            hit += fpow[hit_len]
                            hit_len = 0
                    else:
                        hit += 1.0
                    peer_budget[t] -= 1
                    consumed[n_cons] = t
                    n_cons += 1
            out[kk] = hit
            for q in range(n_cons):
                peer_budget[consumed[q]] += 1
        for q in range(text_tok[p], text_tok[p + 1]):
            peer_budget[tok[q]] = 0
        k = e
    return out
