"""Private: ROUGE-N and ROUGE-S/SU counting kernels (numba): exact gram ids, clipped hits, gram totals.

n-grams and skip-bigrams get exact integer ids (no hashing of texts: an id is the tokens' ids as digits);
clipped counts sum_g min(count in summary, count in reference) come from an open-addressing table of the
summary's grams, or, for long skip distances, from per-type window counts without listing the pairs.

Sizes: T texts, P (summary, reference) pairs, L tokens of a text, S sentences, V vocabulary types.
A kernel and the kernels it calls live in one file: numba's cache of a caller is not invalidated when a
callee in another file changes.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from metaeval.metrics.rouge._tokens import _Processed

_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: multiply, keep the top bits


@numba.njit(cache=True)
def _ngram_position_codes(tok, text_tok, n, V):  # pragma: no cover - compiled
    """Exact id of the n-gram starting at each position (its n token ids as base-V digits), -1 where it
    would run past the end of its text. O(total tokens * n); the caller checks that V**n fits 63 bits."""
    codes = np.full(tok.shape[0], -1, np.int64)
    for t in range(text_tok.shape[0] - 1):
        for i in range(text_tok[t], text_tok[t + 1] - n + 1):
            c = 0
            for k in range(n):
                c = c * V + tok[i + k]
            codes[i] = c
    return codes


@numba.njit(cache=True)
def _hash_slot(keys, mask, shift, code):  # pragma: no cover - compiled
    """Slot of ``code`` in an open-addressing table (Fibonacci hashing, linear probing): where it is, or the
    empty slot (-1) where it would go."""
    h = np.int64((np.uint64(code) * _HASH_MUL) >> shift)
    while keys[h] != -1 and keys[h] != code:
        h = (h + 1) & mask
    return h


@numba.njit(cache=True)
def _table_shape(max_g):  # pragma: no cover - compiled
    """Open-addressing table for up to ``max_g`` grams: a power-of-two size at least twice that (load <= 1/2),
    its index mask, and the shift that takes a 64-bit hash's top bits as the slot."""
    bits = 1
    while (1 << bits) < 2 * max_g:
        bits += 1
    size = 1 << bits
    return size, size - 1, np.uint64(64 - bits)


@numba.njit(cache=True)
def _gram_hits(peer_t, ref_t, tok, text_tok, skip, V):  # pragma: no cover - compiled
    """Clipped skip-bigram hits sum_g min(count in peer, count in reference) for every (peer, reference) pair:
    the pairs (i, j), i < j <= i + skip + 1, id ``tok[i] * (V + 1) + tok[j] + 1``.

    The peer's grams go into a hash table once per run of pairs with the same peer (pairs are grouped by
    record); each reference gram then consumes one remaining peer occurrence, which is exactly the sum of
    minima. Grams with a token absent from the peer are skipped before hashing. O(G_peer) per record +
    O(G_ref) per pair expected time, O(max G_peer) memory."""
    out = np.zeros(peer_t.shape[0], np.int64)
    if peer_t.shape[0] == 0:
        return out
    max_g = 1
    for k in range(peer_t.shape[0]):
        max_g = max(max_g, (text_tok[peer_t[k] + 1] - text_tok[peer_t[k]]) * (skip + 1))
    size, mask, shift = _table_shape(max_g)
    keys = np.full(size, -1, np.int64)
    remaining = np.zeros(size, np.int64)
    count = np.zeros(size, np.int64)
    used = np.empty(size, np.int64)
    n_used = 0
    consumed = np.empty(size, np.int64)
    in_peer = np.zeros(V, np.int64)
    last_peer = -1
    for k in range(peer_t.shape[0]):
        p, r = peer_t[k], ref_t[k]
        if p != last_peer:
            for e in range(n_used):
                keys[used[e]] = -1
                count[used[e]] = 0
            n_used = 0
            stamp = k + 1
            a, b = text_tok[p], text_tok[p + 1]
            for i in range(a, b):
                in_peer[tok[i]] = stamp
                base = tok[i] * (V + 1) + 1
                for j in range(i + 1, min(b, i + skip + 2)):
                    h = _hash_slot(keys, mask, shift, base + tok[j])
                    if keys[h] == -1:
                        keys[h] = base + tok[j]
                        used[n_used] = h
                        n_used += 1
                    count[h] += 1
            for e in range(n_used):
                remaining[used[e]] = count[used[e]]
            last_peer = p
        stamp = in_peer[tok[text_tok[p]]] if text_tok[p + 1] > text_tok[p] else -1
        a, b = text_tok[r], text_tok[r + 1]
        hits = 0
        n_cons = 0
        for i in range(a, b):
            if in_peer[tok[i]] != stamp:
                continue
            base = tok[i] * (V + 1) + 1
            for j in range(i + 1, min(b, i + skip + 2)):
                if in_peer[tok[j]] != stamp:
                    continue
                h = _hash_slot(keys, mask, shift, base + tok[j])
                if keys[h] == base + tok[j] and remaining[h] > 0:
                    remaining[h] -= 1
                    consumed[n_cons] = h
                    n_cons += 1
                    hits += 1
        for e in range(n_cons):
            remaining[consumed[e]] += 1
        out[k] = hits
    return out


@numba.njit(cache=True)
def _ngram_hits(peer_t, ref_t, tok, text_tok, pos_codes, want_u, V):  # pragma: no cover - compiled
    """Clipped n-gram hits for n = 1..N at once (row n - 1; ``pos_codes[n - 1]`` holds the n-gram id at each
    position, -1 past the end of the text) and, with ``want_u``, ROUGE-SU's unigram hits, which leave out
    the last token of each text (row N).

    One hash table per order holds the summary's grams, built once per run of pairs with the same summary.
    At each reference position the orders are tried upwards and the search stops at the first n-gram the
    summary lacks: no longer gram starting there can then occur in it. Each hit consumes one remaining
    occurrence (the sum of minima); consumed occurrences are given back after the pair.
    O(N G_peer) per record + O(N G_ref) per pair worst case, expected much less."""
    N = pos_codes.shape[0]
    P = peer_t.shape[0]
    out = np.zeros((N + 1, P), np.int64)
    if P == 0:
        return out
    max_g = 1
    longest_ref = 1
    for k in range(P):
        max_g = max(max_g, text_tok[peer_t[k] + 1] - text_tok[peer_t[k]])
        longest_ref = max(longest_ref, text_tok[ref_t[k] + 1] - text_tok[ref_t[k]])
    size, mask, shift = _table_shape(max_g)
    keys = np.full((N, size), -1, np.int64)
    count = np.zeros((N, size), np.int64)
    remaining = np.zeros((N, size), np.int64)
    remaining_u = np.zeros(size, np.int64)
    used = np.empty((N, size), np.int64)
    n_used = np.zeros(N, np.int64)
    cons_order = np.empty((N + 1) * longest_ref, np.int64)
    cons_slot = np.empty((N + 1) * longest_ref, np.int64)
    in_peer = np.zeros(V, np.int64)
    k = 0
    while k < P:
        p = peer_t[k]
        stamp = k + 1
        a, b = text_tok[p], text_tok[p + 1]
        for i in range(a, b):
            in_peer[tok[i]] = stamp
        for n in range(N):
            for e in range(n_used[n]):
                keys[n, used[n, e]] = -1
                count[n, used[n, e]] = 0
            n_used[n] = 0
            key_n = keys[n]
            for i in range(a, b):
                c = pos_codes[n, i]
                if c < 0:
                    continue
                h = _hash_slot(key_n, mask, shift, c)
                if key_n[h] == -1:
                    key_n[h] = c
                    used[n, n_used[n]] = h
                    n_used[n] += 1
                count[n, h] += 1
            for e in range(n_used[n]):
                remaining[n, used[n, e]] = count[n, used[n, e]]
        if want_u:
            for e in range(n_used[0]):
                remaining_u[used[0, e]] = count[0, used[0, e]]
            if b > a:
                remaining_u[_hash_slot(keys[0], mask, shift, pos_codes[0, b - 1])] -= 1
        while k < P and peer_t[k] == p:
            r = ref_t[k]
            ra, rb = text_tok[r], text_tok[r + 1]
            n_cons = 0
            if b > a:
                for i in range(ra, rb):
                    if in_peer[tok[i]] != stamp:
                        continue
                    for n in range(N):
                        c = pos_codes[n, i]
                        if c < 0:
                            break
                        h = _hash_slot(keys[n], mask, shift, c)
                        if keys[n, h] != c:
                            break
                        if remaining[n, h] > 0:
                            remaining[n, h] -= 1
                            out[n, k] += 1
                            cons_order[n_cons] = n
                            cons_slot[n_cons] = h
                            n_cons += 1
                        if n == 0 and want_u and i + 1 < rb and remaining_u[h] > 0:
                            remaining_u[h] -= 1
                            out[N, k] += 1
                            cons_order[n_cons] = N
                            cons_slot[n_cons] = h
                            n_cons += 1
            for e in range(n_cons):
                if cons_order[e] == N:
                    remaining_u[cons_slot[e]] += 1
                else:
                    remaining[cons_order[e], cons_slot[e]] += 1
            k += 1
    return out


@numba.njit(cache=True)
def _skip_matrix_hits(peer_t, ref_t, tok, text_tok, V, skip, su):  # pragma: no cover - compiled
    """Skip-bigram hits (plus unigram hits with ``su``) for every pair without listing the pairs of tokens.

    Only the S types present in both texts can match. For each text, C[b, a] counts the positions
    i < j <= i + skip + 1 (any j > i when ``skip < 0``) with tokens a, b: a running count of the tokens in
    the window before j is added to row b = tok[j]. Hits are sum min(C_peer, C_ref).
    O(L_peer * S + L_ref * S + S^2) time and O(V + S^2) memory per pair, whatever the skip distance."""
    out = np.zeros(peer_t.shape[0], np.int64)
    local = np.full(V, -1, np.int64)
    in_peer = np.zeros(V, np.int64)  # stamp k + 1 when the type occurs in pair k's peer
    for k in range(peer_t.shape[0]):
        p, r = peer_t[k], ref_t[k]
        stamp = k + 1
        for i in range(text_tok[p], text_tok[p + 1]):
            in_peer[tok[i]] = stamp
        S = 0
        for i in range(text_tok[r], text_tok[r + 1]):
            t = tok[i]
            if in_peer[t] == stamp and local[t] < 0:
                local[t] = S
                S += 1
        if S > 0:
            cp = np.zeros(S * S, np.int64)
            cr = np.zeros(S * S, np.int64)
            up = np.zeros(S, np.int64)
            ur = np.zeros(S, np.int64)
            _window_counts(tok, text_tok[p], text_tok[p + 1], local, skip, S, cp, up)
            _window_counts(tok, text_tok[r], text_tok[r + 1], local, skip, S, cr, ur)
            hits = 0
            for e in range(S * S):
                hits += min(cp[e], cr[e])
            if su:
                for e in range(S):
                    hits += min(up[e], ur[e])
            out[k] = hits
            for i in range(text_tok[r], text_tok[r + 1]):
                local[tok[i]] = -1
    return out


@numba.njit(cache=True)
def _window_counts(tok, a, b, local, skip, S, C, uni):  # pragma: no cover - compiled
    """C[b * S + a] += number of tokens a in the skip window before each token b (shared types only);
    ``uni`` counts the shared tokens of every position but the last."""
    window = np.zeros(S, np.int64)
    for j in range(a, b):
        lj = local[tok[j]]
        if skip >= 0:
            drop = j - skip - 2
            if drop >= a:
                ld = local[tok[drop]]
                if ld >= 0:
                    window[ld] -= 1
        if lj >= 0:
            row = lj * S
            for e in range(S):
                C[row + e] += window[e]
            window[lj] += 1
            if j + 1 < b:
                uni[lj] += 1


def _position_codes(pr: _Processed, n: int) -> np.ndarray:
    """Exact n-gram id at each token position (-1 where the n-gram would cross the end of its text)."""
    V = pr.vocab_size
    if n > int(np.diff(pr.text_tok).max(initial=0)):  # longer than every text: no n-gram anywhere
        return np.full(pr.tok.shape[0], -1, np.int64)
    if n * math.log2(V + 1) < 62:
        return _ngram_position_codes(pr.tok, pr.text_tok, n, V)
    # Ids would overflow 64 bits: rank (id of the k-gram, next token) pairs instead, one order at a time.
    T = pr.text_tok.shape[0] - 1
    text_of = np.repeat(np.arange(T), np.diff(pr.text_tok))
    end_of = pr.text_tok[1:][text_of]
    pos = np.arange(pr.tok.shape[0])
    codes = pr.tok.copy()
    for k in range(1, n):
        nxt = np.where(pos + k < pr.tok.shape[0], np.roll(pr.tok, -k), 0)
        codes = np.unique(codes * V + nxt, return_inverse=True)[1].astype(np.int64).ravel()
    return np.where(pos + n - 1 < end_of, codes, -1).astype(np.int64)


def _skip_totals(lengths: np.ndarray, skip: int, su: bool) -> np.ndarray:
    """Number of skip-bigrams (+ unigrams but the last) of texts of the given lengths, in closed form."""
    L = lengths.astype(np.int64)
    if skip < 0 or skip + 1 >= L.max(initial=0):
        pairs = L * (L - 1) // 2
    else:
        d = skip + 1
        # sum_i min(d, L - 1 - i): d per position for the first L - d positions, then d - 1, ..., 0
        long_ = L > d
        pairs = np.where(long_, (L - d) * d + d * (d - 1) // 2, L * (L - 1) // 2)
    if su:
        pairs = pairs + np.maximum(L - 1, 0)
    return pairs
