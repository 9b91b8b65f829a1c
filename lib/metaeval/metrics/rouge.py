"""ROUGE exactly as ROUGE-1.5.5 computes it, for every variant, in one pass.

:func:`score` takes many (summary, references) pairs and many variants and returns one row per summary and
one column per variant. Text processing is shared: every distinct text is tokenized, stopword-filtered and
stemmed once per (stem, stop) setting; n-grams and skip-bigrams get exact integer ids (no hashing) over all
texts at once; clipped counts and the LCS / weighted-LCS dynamic programs run in numba.

Faithful to ROUGE-1.5.5.pl (see ``tests/fixtures/rouge155/README.md`` for the quirks):

* ``-f A``: R = sum of hits / sum of reference counts, P = sum of hits / (number of references x peer count);
  ``-f B``: the reference with the best score (recall, rounded to 5 decimals, for N/S; unrounded LCS
  ratio for L/W) is used alone; the first one wins ties.
* P and R are rounded to 5 decimals, F is computed from the rounded P and R, then rounded
  (``rounding=False`` returns the unrounded values, with F from unrounded P and R).
* ROUGE-L: union LCS of each reference sentence against all summary sentences, hits clipped by unigram
  budgets; ROUGE-W likewise with weighted LCS (f(k) = k^w), R = (hits / (sum_s len_s^w)^w)^(1/w).
* ROUGE-SU adds unigrams for every token except the last (the Perl loop bound ``$i < $#tokens``).
* No references: NaN. ROUGE-W with a reference that has no countable tokens: NaN (the Perl script dies
  with a division by zero there). Each NaN comes with a warning that says why.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np
import pandas as pd
from numba import types
from numba.extending import intrinsic

from metaeval.metrics._inputs import check_records
from metaeval.metrics.text import (
    _stem_cached,
    split_sentences,
    stopwords,
    tokenize_batch,
)
from metaeval.metrics.variants import (
    Measure,
    RougeVariant,
    parse_variant,
    rouge155_variants,
)

__all__ = ["RougeWarning", "resolve_variants", "score"]


class RougeWarning(UserWarning):
    """A ROUGE value is undefined (NaN) for a record, as ROUGE-1.5.5 would give no value."""


# ----------------------------------------------------------------------------------------------------
# Input normalisation


def _as_sentences(text, where: str) -> tuple[str, ...]:
    if text is None:
        return ()
    if isinstance(text, str):
        return tuple(split_sentences(text))
    if isinstance(text, (list, tuple)) and all(isinstance(s, str) for s in text):
        # A list of sentences: one ROUGE "line" each (newlines inside are line breaks too).
        return tuple(line for s in text for line in split_sentences(s))
    raise TypeError(f"{where} must be a string or a list of sentence strings, got {type(text).__name__}")


def resolve_variants(variants) -> list[RougeVariant]:
    """Variants from names, signatures, keys or :class:`RougeVariant` objects (default: the 96 of ROUGE-1.5.5)."""
    if variants is None:
        return rouge155_variants()
    if isinstance(variants, (str, RougeVariant)):
        variants = [variants]
    out = []
    for v in variants:
        parsed = parse_variant(v)
        if not isinstance(parsed, RougeVariant):
            raise ValueError(f"variants: {v!r} is a system-level variant; pass its summary-level part")
        out.append(parsed)
    if not out:
        raise ValueError("variants must not be empty")
    return out


# ----------------------------------------------------------------------------------------------------
# numba kernels
#
# Sizes: T texts, P (summary, reference) pairs, L tokens of a text, S sentences, V vocabulary types.
# Every floating-point value that feeds a comparison, a tie or the 5-decimal rounding is computed with
# the operations and in the order of ROUGE-1.5.5.pl: k^w comes from the C library's ``pow`` (a table
# built with ``math.pow``, never numpy's vectorized power, whose SIMD versions differ by an ulp on some
# CPUs), sums are taken left to right, and ``c + f(k+1) - f(k)`` is evaluated as Perl does.


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
def _gram_hits(peer_t, ref_t, tok, text_tok, pos_code, span, skip, drop_last, V):  # pragma: no cover
    """Clipped hits sum_g min(count in peer, count in reference) for every (peer, reference) pair.

    Grams: ``skip < 0``: the n-gram starting at each position (``pos_code``; ``span`` = n tokens; with
    ``drop_last`` every unigram but the text's last); ``skip >= 0``: the skip-bigrams (i, j),
    i < j <= i + skip + 1, id ``tok[i] * (V + 1) + tok[j] + 1``.

    The peer's grams go into a hash table once per run of pairs with the same peer (pairs are grouped by
    record); each reference gram then consumes one remaining peer occurrence, which is exactly the sum of
    minima. Grams with a token absent from the peer are skipped before hashing. O(G_peer) per record +
    O(G_ref) per pair expected time, O(max G_peer) memory."""
    out = np.zeros(peer_t.shape[0], np.int64)
    if peer_t.shape[0] == 0:
        return out
    max_g = 1
    for k in range(peer_t.shape[0]):
        p = peer_t[k]
        L = text_tok[p + 1] - text_tok[p]
        max_g = max(max_g, L * (skip + 1) if skip >= 0 else L)
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
            end = b - 1 if drop_last else b
            for i in range(a, end):
                if skip < 0:
                    c = pos_code[i]
                    if c < 0:
                        continue
                    h = _hash_slot(keys, mask, shift, c)
                    if keys[h] == -1:
                        keys[h] = c
                        used[n_used] = h
                        n_used += 1
                    count[h] += 1
                else:
                    base = tok[i] * (V + 1) + 1
                    for j in range(i + 1, min(b, i + skip + 2)):
                        c = base + tok[j]
                        h = _hash_slot(keys, mask, shift, c)
                        if keys[h] == -1:
                            keys[h] = c
                            used[n_used] = h
                            n_used += 1
                        count[h] += 1
            for e in range(n_used):
                remaining[used[e]] = count[used[e]]
            last_peer = p
        stamp = in_peer[tok[text_tok[p]]] if text_tok[p + 1] > text_tok[p] else -1
        a, b = text_tok[r], text_tok[r + 1]
        end = b - 1 if drop_last else b
        hits = 0
        n_cons = 0
        if n_used > 0:
            for i in range(a, end):
                if in_peer[tok[i]] != stamp:
                    continue
                if skip < 0:
                    c = pos_code[i]
                    if c < 0 or in_peer[tok[i + span - 1]] != stamp:
                        continue
                    h = _hash_slot(keys, mask, shift, c)
                    if keys[h] == c and remaining[h] > 0:
                        remaining[h] -= 1
                        consumed[n_cons] = h
                        n_cons += 1
                        hits += 1
                else:
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


@numba.njit(cache=True)
def _lcs_mark_dp(model, peer, mask, weighted, weight):  # pragma: no cover - compiled
    """Reference for the tests (the plain dynamic program with a direction table): mark the model positions
    of one LCS (weighted: ROUGE-W's WLCS, f(k) = k^weight) of model and peer,
    with ROUGE-1.5.5's tie-breaking (prefer "up" when c[i-1][j] >= c[i][j-1]). Integer LCS lengths are exact
    in float64, so one table type serves both."""
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
def _lcs_mark_bits(model, peer, mask, slot, PM, Vrows, words):  # pragma: no cover - compiled
    """:func:`_lcs_mark` with the lengths in bit-parallel form (Hyyro 2004): row i of the table is a
    bit vector whose zero bits are the positions where c[i][.] increases, updated with one addition per
    64 columns: O(m n / 64) to fill; the trace recomputes c[i-1][j] by popcount, O((m + n) n / 64).
    ``slot[token]`` is the token's row in ``PM`` (its positions in ``peer``), or -1."""
    m, n = model.shape[0], peer.shape[0]
    allones = ~np.uint64(0)
    for w in range(words):
        Vrows[w] = allones
    for i in range(1, m + 1):
        sl = slot[model[i - 1]]
        prev = (i - 1) * words
        row = i * words
        if sl < 0:
            for w in range(words):
                Vrows[row + w] = Vrows[prev + w]
            continue
        pm = sl * words
        carry = np.uint64(0)
        for w in range(words):
            v = Vrows[prev + w]
            u = v & PM[pm + w]
            t = v + u
            c1 = np.uint64(1) if t < v else np.uint64(0)
            s = t + carry
            c2 = np.uint64(1) if s < t else np.uint64(0)
            carry = c1 | c2
            Vrows[row + w] = s | (v & ~u)
    # Trace with c = c[i][j] and up = c[i-1][j] kept current: a step left updates both from one bit each
    # (bit j-1 of a row is 0 where the row increases at column j); only a step up or diagonal needs a
    # popcount, so O(m) popcounts per pair instead of one per step.
    i, j = m, n
    cur = _lcs_prefix(Vrows, i, j, words)
    up = _lcs_prefix(Vrows, i - 1, j, words)
    while i != 0 and j != 0:
        if model[i - 1] == peer[j - 1]:
            i -= 1
            j -= 1
            mask[i] = 1
            cur -= 1
            if i != 0 and j != 0:
                up = _lcs_prefix(Vrows, i - 1, j, words)
        else:
            sh = np.uint64((j - 1) % 64)
            w = (j - 1) // 64
            bit = (Vrows[i * words + w] >> sh) & np.uint64(1)
            left = cur - 1 + np.int64(bit)
            if up >= left:
                i -= 1
                cur = up
                if i != 0:
                    up = _lcs_prefix(Vrows, i - 1, j, words)
            else:
                up_bit = (Vrows[(i - 1) * words + w] >> sh) & np.uint64(1)
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

    ``c + f(k+1) - f(k)`` is evaluated left to right, as the Perl expression. Below a non-decreasing row,
    a row is that row with its match cells raised: a row whose token does not occur in ``peer``
    (``slot[token] < 0``) is the same row (``rowref`` points to it, nothing is copied), and a row with matches
    is a copy of it in which each match value is carried right only while it exceeds the row above (the end
    found by bisection; ``pos_list[pos_off[s]:pos_off[s + 1]]``: the 1-based positions of slot ``s`` in
    ``peer``). A row becomes
    decreasing only where a match value is below the value left of it; then the next row is computed
    cell by cell. O(m + n) per row with few matches, O(n) per row otherwise; ``c`` holds up to
    (m + 1)(n + 1) cells (for the trace)."""
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
def _lcs_hits(peer_t, ref_t, tok, sent_off, text_sent, text_tok, V, weighted, fpow, max_len):  # pragma: no cover
    """ROUGE-L hits (integers) or ROUGE-W hits for every (peer, reference) pair; model = reference.

    Union LCS of each reference sentence against every summary sentence (marks only accumulate, so the
    summary sentences can be the outer loop), hits clipped by the unigram counts of both texts
    (as ROUGE-1.5.5; only the summary's can bind, since each mark is one of the reference's own occurrences).
    Consecutive pairs with the same summary (one record's references) share its per-sentence tables.
    ROUGE-L: O(sum over sentence pairs of m n / 64); ROUGE-W: O(sum m n) at most. Tables sized by the
    longest sentence, reused."""
    P = peer_t.shape[0]
    out = np.zeros(P, np.float64)
    peer_budget = np.zeros(V, np.int64)
    maxw = (max_len + 63) // 64
    W = max_len + 1
    cf = np.zeros(W * W if weighted else 1, np.float64)
    rowref = np.zeros(W, np.int64)
    Vrows = np.zeros(1 if weighted else (max_len + 1) * maxw, np.uint64)
    PM = np.zeros(1 if weighted else max_len * maxw, np.uint64)
    slot = np.full(V, -1, np.int64)
    pos_off = np.zeros(max_len + 2, np.int64)
    pos_fill = np.zeros(max_len + 2, np.int64)
    pos_list = np.zeros(max_len + 1, np.int64)
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
                    if not weighted:
                        for w in range(words):
                            PM[n_slots * words + w] = np.uint64(0)
                    n_slots += 1
                if not weighted:
                    PM[slot[t] * words + j // 64] |= np.uint64(1) << np.uint64(j % 64)
            if weighted:
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
                        _lcs_mark_bits(model, peer, sub, slot, PM, Vrows, words)
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


@numba.njit(cache=True)
def _segment_sums(values, starts, ends):  # pragma: no cover - compiled
    """Left-to-right sums of value segments, in the order the Perl script adds them."""
    out = np.zeros(starts.shape[0], np.float64)
    for i in range(starts.shape[0]):
        s = 0.0
        for k in range(starts[i], ends[i]):
            s += values[k]
        out[i] = s
    return out


@numba.njit(cache=True)
def _first_best(keys, starts, ends):  # pragma: no cover - compiled
    """Index of the first maximum of each segment, as Perl's ``$score > $best`` with best starting at -1
    (NaN keys never win); -1 for an empty segment or one with only NaN."""
    out = np.full(starts.shape[0], -1, np.int64)
    for i in range(starts.shape[0]):
        best = -1.0
        for k in range(starts[i], ends[i]):
            if keys[k] > best:
                best = keys[k]
                out[i] = k
    return out


# ----------------------------------------------------------------------------------------------------
# Exact arithmetic helpers


def _libc_pow(x: np.ndarray, y: float) -> np.ndarray:
    """``x ** y`` elementwise with the C library's ``pow`` (``math.pow``), as Perl's ``**`` computes it.

    numpy's vectorized power can differ from it by an ulp (its SIMD paths depend on the CPU), enough to
    break a tie or move a value across a rounding boundary."""
    flat = np.asarray(x, dtype=float).ravel()
    out = np.fromiter(map(math.pow, flat.tolist(), itertools.repeat(float(y))), float, flat.size)
    return out.reshape(np.shape(x))


def _pow_table(n: int, w: float) -> np.ndarray:
    """k^w for k = 0..n with the C library's pow."""
    return np.array([math.pow(k, w) for k in range(n + 1)], dtype=float)


_SPLIT = 134217729.0  # 2^27 + 1, Dekker's splitting constant
_ROUND_LIMIT = 1e9  # below it, x * 1e5 < 2^47 and the exact rounding below is valid


def _round5(x) -> np.ndarray:
    """Round like Perl's ``sprintf("%7.5f")`` and Python's ``float("%.5f" % x)``: the exact binary value
    rounded to 5 decimals, exact ties to even, then the nearest double.

    Vectorized: the product ``|x| * 1e5`` is split into its rounded value p and its exact error e (Dekker's
    two-product; 1e5 has 17 significant bits, so the partial products are exact); the sign of
    ``(p - floor(p) - 0.5) + e`` then decides the rounding exactly, and ``n / 1e5`` (a correctly rounded
    division of exact integers) is the double that ``float()`` of the decimal string gives. Values
    outside ``[-1e9, 1e9]`` (never a ROUGE score) take the string path.
    """
    x = np.asarray(x, dtype=float)
    a = np.abs(x)
    with np.errstate(invalid="ignore"):
        p = a * 1e5
        c = _SPLIT * a
        hi = c - (c - a)
        lo = a - hi
        e = (hi * 1e5 - p) + lo * 1e5
        k = np.floor(p)
        s = ((p - k) - 0.5) + e
        up = (s > 0) | ((s == 0) & (np.fmod(k, 2) == 1))
        out = np.copysign((k + up) / 1e5, x)
    odd = ~(a <= _ROUND_LIMIT)  # NaN, inf and huge values
    if odd.any():
        out[odd] = [v if math.isnan(v) else float(f"{v:.5f}") for v in x[odd].tolist()]
    return out


# ----------------------------------------------------------------------------------------------------
# Text processing shared by all variants of one setting


@dataclass
class _Tokens:
    """Every distinct text tokenized once, before stopword removal and stemming."""

    tok: np.ndarray  # base token ids of all sentences, concatenated
    sent_len: np.ndarray  # tokens per sentence
    text_sent: np.ndarray  # sentence offsets per text (T + 1)
    vocab: list[str]  # base id -> token


@dataclass
class _Processed:
    tok: np.ndarray  # all token ids, texts concatenated
    text_tok: np.ndarray  # token offsets per text (T + 1)
    sent_off: np.ndarray  # token offsets per sentence
    text_sent: np.ndarray  # sentence offsets per text (T + 1)
    vocab_size: int


def _tokenize_texts(texts: list[tuple[str, ...]]) -> _Tokens:
    """Tokenize every sentence of every text in one batch. O(total characters)."""
    n_sent = np.fromiter(map(len, texts), np.int64, len(texts))
    text_sent = np.zeros(len(texts) + 1, np.int64)
    np.cumsum(n_sent, out=text_sent[1:])
    tok, sent_len, vocab = tokenize_batch([s for t in texts for s in t])
    return _Tokens(tok, sent_len, text_sent, vocab)


def _process(base: _Tokens | list[tuple[str, ...]], stem: bool, stop: bool, exceptions: str) -> _Processed:
    """Stopword removal then stemming, applied to the vocabulary (each type once), then mapped onto the
    tokens. O(V) Python work (the stemmer's cache makes repeated calls cheap) + O(total tokens) numpy.
    ``base`` may also be the texts themselves (tuples of sentences), tokenized first."""
    if not isinstance(base, _Tokens):
        base = _tokenize_texts(list(base))
    vocab = base.vocab
    if stem:
        processed = [t if len(t) <= 3 else _stem_cached(t, exceptions) for t in vocab]
    else:
        processed = vocab
    ids: dict[str, int] = {}
    new_id = np.fromiter((ids.setdefault(t, len(ids)) for t in processed), np.int64, len(vocab))
    tok = new_id[base.tok] if base.tok.size else base.tok
    sent_len = base.sent_len
    if stop:
        sw = stopwords()
        keep_type = np.fromiter((t not in sw for t in vocab), bool, len(vocab))
        keep = keep_type[base.tok] if base.tok.size else np.zeros(0, bool)
        sent_of = np.repeat(np.arange(sent_len.size), sent_len)
        tok = tok[keep]
        sent_len = np.bincount(sent_of[keep], minlength=sent_len.size).astype(np.int64)
    sent_off = np.zeros(sent_len.size + 1, np.int64)
    np.cumsum(sent_len, out=sent_off[1:])
    return _Processed(
        np.ascontiguousarray(tok, np.int64), sent_off[base.text_sent], sent_off, base.text_sent, max(len(ids), 1)
    )


def _dense(codes: np.ndarray) -> np.ndarray:
    return np.unique(codes, return_inverse=True)[1].astype(np.int64).ravel()


def _position_codes(pr: _Processed, n: int) -> np.ndarray:
    """Exact n-gram id at each token position (-1 where the n-gram would cross the end of its text)."""
    V = pr.vocab_size
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
        codes = _dense(codes * V + nxt)
    return np.where(pos + n - 1 < end_of, codes, -1).astype(np.int64)


# Skip distances from which the pair-free kernel is used: listing (skip + 1) pairs per token costs more
# than counting the windows over the shared types.
_SKIP_LIST_MAX = 32


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


# ----------------------------------------------------------------------------------------------------
# Per-text gram tables: sorted distinct grams with counts (used by metaeval.metrics.grouge)


@numba.njit(cache=True)
def _skip_codes(tok, text_tok, skip, su, V):  # pragma: no cover - compiled
    """Skip-bigram ids ``a * (V + 1) + b + 1`` of the pairs (i, j), i < j <= i + skip + 1, grouped by text;
    with ``su`` also unigram ids ``a * (V + 1)`` of every token but the last (ROUGE's ``$i < $#tokens``).

    O(sum_t L_t * (skip + 1)) time and memory."""
    T = text_tok.shape[0] - 1
    off = np.zeros(T + 1, np.int64)
    for t in range(T):
        L = text_tok[t + 1] - text_tok[t]
        cnt = 0
        for i in range(L):
            cnt += min(skip + 1, L - 1 - i)
        if su and L > 0:
            cnt += L - 1
        off[t + 1] = off[t] + cnt
    codes = np.empty(off[T], np.int64)
    w = 0
    for t in range(T):
        a, b = text_tok[t], text_tok[t + 1]
        for i in range(a, b):
            base = tok[i] * (V + 1)
            for j in range(i + 1, min(b, i + skip + 2)):
                codes[w] = base + tok[j] + 1
                w += 1
            if su and i + 1 < b:
                codes[w] = base
                w += 1
    return codes, off


@numba.njit(cache=True)
def _sorted_counts(codes, off):  # pragma: no cover - compiled
    """Per text: its distinct codes, sorted, with their counts (CSR). O(sum_t G_t log G_t) for G_t codes."""
    T = off.shape[0] - 1
    out_codes = np.empty(codes.shape[0], np.int64)
    out_counts = np.empty(codes.shape[0], np.int64)
    out_off = np.zeros(T + 1, np.int64)
    w = 0
    for t in range(T):
        seg = np.sort(codes[off[t] : off[t + 1]])
        k = 0
        G = seg.shape[0]
        while k < G:
            c = seg[k]
            run = 1
            k += 1
            while k < G and seg[k] == c:
                run += 1
                k += 1
            out_codes[w] = c
            out_counts[w] = run
            w += 1
        out_off[t + 1] = w
    return out_off, out_codes[:w].copy(), out_counts[:w].copy()


@numba.njit(cache=True)
def _clipped_hits(a_text, b_text, offs, codes, counts):  # pragma: no cover - compiled
    """Sum over shared grams of min(count in a, count in b), for every pair (a_text[k], b_text[k]).

    A merge of the two sorted code lists: O(G_a + G_b) per pair."""
    out = np.zeros(a_text.shape[0], np.int64)
    for k in range(a_text.shape[0]):
        i, iend = offs[a_text[k]], offs[a_text[k] + 1]
        j, jend = offs[b_text[k]], offs[b_text[k] + 1]
        hits = 0
        while i < iend and j < jend:
            ci, cj = codes[i], codes[j]
            if ci == cj:
                hits += min(counts[i], counts[j])
                i += 1
                j += 1
            elif ci < cj:
                i += 1
            else:
                j += 1
        out[k] = hits
    return out


def _gram_table(pr: _Processed, measure: Measure):
    """Per text: sorted distinct gram ids with counts (CSR offsets ``offs``, ``codes``, ``counts``), and the
    total gram count per text; :func:`_clipped_hits` merges two texts' lists. ROUGE-N and ROUGE-S/SU only.
    O(sum_t G_t log G_t) for G_t grams of text t."""
    lengths = np.diff(pr.text_tok)
    if measure.kind == "n":
        pos = _position_codes(pr, measure.n)
        codes = pos[pos >= 0]
        off = np.zeros(lengths.size + 1, np.int64)
        np.cumsum(np.maximum(lengths - measure.n + 1, 0), out=off[1:])
    elif measure.kind in ("s", "su"):
        skip = measure.skip if measure.skip >= 0 else int(lengths.max(initial=0))
        codes, off = _skip_codes(pr.tok, pr.text_tok, skip, measure.kind == "su", pr.vocab_size)
    else:
        raise ValueError(f"_gram_table counts n-grams and skip-bigrams, not {measure.name}")
    offs, uniq, counts = _sorted_counts(codes, off)
    return offs, uniq, counts, np.diff(off)


# ----------------------------------------------------------------------------------------------------
# Public entry point


def score(
    summaries: Sequence,
    references: Sequence[Sequence],
    variants=None,
    *,
    rounding: bool = True,
    ids: Sequence | None = None,
    columns: str = "key",
    warn: bool = True,
) -> pd.DataFrame:
    """Score many summaries against their references with many ROUGE variants at once.

    Parameters
    ----------
    summaries : sequence of str or of lists of str
        One text per record: a string (sentences separated by newlines, as ROUGE's SPL format) or a list of
        sentence strings. ``None`` is an empty summary (all scores 0, as ROUGE-1.5.5 gives).
    references : sequence of sequences
        For each record, its list of reference texts (same forms). An empty list gives NaN.
    variants : iterable of str or RougeVariant, optional
        Names like ``"R-SU4|stem=1|stop=0|F"`` or signatures like
        ``"rouge-su4|stem:yes|stop:no|stat:F|refs:A"``; default: the 96 ROUGE-1.5.5 values (8 measures x
        stem x stop x P/R/F, pooled references).
    rounding : bool
        Round like ROUGE-1.5.5 (5 decimals, F from rounded P and R). ``False`` gives unrounded values.
    ids : sequence, optional
        Row labels (default 0..n-1).
    columns : {"key", "signature"}
        Name columns by golden-file key (``R-1|stem=1|stop=0|F``) or by signature.
    warn : bool
        Emit a :class:`RougeWarning` for every record that gets NaN values, saying why.

    Returns
    -------
    pandas.DataFrame
        One row per record, one column per variant (no rows for no records).

    Notes
    -----
    Cost, with P (summary, reference) pairs, L tokens per text, G grams per text and m, n the lengths of
    a reference and a summary sentence: tokenization O(total characters), once per distinct text;
    stopwords and stemming O(vocabulary), once per type; ROUGE-N O(P G) after a per-text sort
    O(G log G); ROUGE-S/SU with skip distance d <= 31 O(L d) grams per text likewise, beyond (and S*,
    SU*) O(P (L S + S^2)) without listing pairs, S the types shared by the two texts; ROUGE-L and
    ROUGE-W O(sum m n) per pair (one dynamic-programming table of (m + 1)(n + 1) cells, reused).

    Examples
    --------
    >>> score(["the cat sat on the mat"], [["the cat was on the mat"]], ["R-1|stem=0|stop=0|F", "R-L|stem=0|stop=0|R"])
       R-1|stem=0|stop=0|F  R-L|stem=0|stop=0|R
    0              0.83333              0.83333
    >>> score([], []).shape
    (0, 96)
    """
    summaries, references = check_records(summaries, references)
    if columns not in ("key", "signature"):
        raise ValueError(f"columns must be 'key' or 'signature', got {columns!r}")
    variant_list = resolve_variants(variants)
    n_records = len(summaries)
    index = list(ids) if ids is not None else list(range(n_records))
    if len(index) != n_records:
        raise ValueError(f"ids has {len(index)} labels for {n_records} records")
    name = (lambda v: v.key) if columns == "key" else (lambda v: v.signature)

    # Distinct texts, each split, tokenized and processed once per setting; the raw input is the key, so a
    # text shared by many records (a reference) is split once.
    raw_index: dict[object, int] = {}
    texts: list[tuple[str, ...]] = []

    def intern(t, r: int, q: int) -> int:
        # q < 0: the summary of record r, else its q-th reference (named only in an error message)
        key: object
        if type(t) is str:  # the common case first: a text seen before is one dict look-up
            found = raw_index.get(t)
            if found is not None:
                return found
            key = t
        else:
            key = t if t is None else (tuple(t) if isinstance(t, list) else t)
            try:
                found = raw_index.get(key)
            except TypeError:  # unhashable: _as_sentences says what is wrong with it
                found, key = None, None
            if found is not None:
                return found
        found = len(texts)
        texts.append(_as_sentences(t, f"summaries[{r}]" if q < 0 else f"references[{r}][{q}]"))
        if key is not None:
            raw_index[key] = found
        return found

    peer_text = np.empty(n_records, np.int64)
    pair_rec_list: list[int] = []
    pair_ref_list: list[int] = []
    for r, (summary, refs) in enumerate(zip(summaries, references)):
        peer_text[r] = intern(summary, r, -1)
        if not isinstance(refs, (list, tuple)):
            raise TypeError(f"references[{r}] must be a list of reference texts, got {type(refs).__name__}")
        pair_rec_list.extend([r] * len(refs))
        pair_ref_list.extend([intern(ref, r, q) for q, ref in enumerate(refs)])
    if n_records == 0:
        return pd.DataFrame({name(v): np.zeros(0) for v in variant_list}, index=pd.Index(index))
    pair_rec = np.asarray(pair_rec_list, np.int64)
    pair_ref = np.asarray(pair_ref_list, np.int64)
    pair_peer = peer_text[pair_rec]
    n_refs = np.bincount(pair_rec, minlength=n_records)
    rec_start = np.zeros(n_records, np.int64)
    np.cumsum(n_refs[:-1], out=rec_start[1:])
    rec_end = (rec_start + n_refs).astype(np.int64)

    results: dict[RougeVariant, np.ndarray] = {}
    reasons: dict[int, set[str]] = defaultdict(set)
    by_setting: dict[tuple, list[RougeVariant]] = defaultdict(list)
    for v in variant_list:
        by_setting[v.setting].append(v)

    base = _tokenize_texts(texts)
    for (stem, stop, exceptions), vs in by_setting.items():
        pr = _process(base, stem, stop, exceptions)
        # what the measures of this setting share: the n-gram orders are counted together, up to the highest
        shared: dict = {"max_n": max([v.measure.n for v in vs if v.measure.kind == "n"], default=1)}
        for measure in sorted({v.measure for v in vs}):
            need_best = any(v.refs == "B" for v in vs if v.measure == measure)
            stats = _pair_stats(pr, measure, pair_peer, pair_ref, shared, need_best)
            groups: dict[tuple, dict[str, np.ndarray]] = {}
            for v in (v for v in vs if v.measure == measure):
                # P, R and F of one reference mode and alpha come from the same sums: computed once
                group = (v.refs, v.alpha)
                if group not in groups:
                    groups[group], why = _aggregate(stats, v.refs, v.alpha, rec_start, rec_end, n_refs, rounding)
                    for rec, reason in why:
                        reasons[rec].add(reason)
                results[v] = groups[group][v.stat]

    if warn:
        for rec in sorted(reasons):
            warnings.warn(f"record {index[rec]!r}: {'; '.join(sorted(reasons[rec]))}", RougeWarning, stacklevel=2)
    return pd.DataFrame({name(v): results[v] for v in variant_list}, index=index)


@dataclass
class _PairStats:
    measure: Measure
    hits: np.ndarray  # per pair (float for W)
    model_count: np.ndarray  # per pair: reference count (L: sum of sentence lengths; W: (sum len^w)^w)
    peer_count: np.ndarray  # per pair: summary count (W: count^w)
    best_key: np.ndarray  # per pair: the value -f B maximizes
    undefined: np.ndarray  # per pair: ROUGE gives no value (W with an empty reference)


def _pair_stats(pr: _Processed, measure: Measure, pair_peer, pair_ref, cache: dict, need_best: bool) -> _PairStats:
    """Hits and counts of every (summary, reference) pair for one measure; ``cache`` holds what measures of
    one setting share (skip-bigram hits: R-SU_d = R-S_d + unigrams but the last, as their ids differ)."""
    no_undefined = np.zeros(pair_peer.shape, bool)
    lengths = np.diff(pr.text_tok)
    V = pr.vocab_size
    if measure.kind in ("n", "s", "su"):
        if measure.kind == "n":
            if ("n", measure.n) not in cache:
                _ngram_orders(pr, pair_peer, pair_ref, cache, max(measure.n, cache.get("max_n", 1)))
            hits = cache["n", measure.n]
            totals = np.maximum(lengths - measure.n + 1, 0)
        else:
            skip, su = measure.skip, measure.kind == "su"
            if skip < 0 or skip >= _SKIP_LIST_MAX:
                hits = _skip_matrix_hits(pair_peer, pair_ref, pr.tok, pr.text_tok, V, skip, su)
            else:
                if ("s", skip) not in cache:
                    cache["s", skip] = _gram_hits(pair_peer, pair_ref, pr.tok, pr.text_tok, pr.tok, 2, skip, False, V)
                hits = cache["s", skip]
                if su:
                    if "u" not in cache:
                        _ngram_orders(pr, pair_peer, pair_ref, cache, cache.get("max_n", 1))
                    hits = hits + cache["u"]
            totals = _skip_totals(lengths, skip, su)
        hits = hits.astype(float)
        model = totals[pair_ref].astype(float)
        peer = totals[pair_peer].astype(float)
        best = np.zeros(0)
        if need_best:
            with np.errstate(invalid="ignore", divide="ignore"):
                best = _round5(np.where(model != 0, hits / np.where(model != 0, model, 1), 0.0))
        return _PairStats(measure, hits, model, peer, best, no_undefined)
    weighted = measure.kind == "w"
    w = measure.weight if weighted else 1.0
    sent_len = np.diff(pr.sent_off)
    max_len = int(sent_len.max(initial=0))
    fpow = _pow_table(max(max_len, int(lengths.max(initial=0))) + 1, w) if weighted else np.zeros(1)
    _check_lcs_table(max_len, weighted)
    hits = _lcs_hits(pair_peer, pair_ref, pr.tok, pr.sent_off, pr.text_sent, pr.text_tok, V, weighted, fpow, max_len)
    if weighted:
        # the reference's base sum_s len_s^w, added sentence by sentence as the Perl script does
        text_base = _segment_sums(fpow[sent_len], pr.text_sent[:-1], pr.text_sent[1:])
        model_base = text_base[pair_ref]
        undefined = model_base == 0
        best = np.zeros(0)
        if need_best:
            with np.errstate(invalid="ignore", divide="ignore"):
                ratio = hits / np.where(undefined, 1, model_base)
            best = np.where(undefined, np.nan, _libc_pow(ratio, 1 / w))
        # (sum len^w)^w per reference text and count^w per summary text (fpow holds k^w), then per pair
        model = _libc_pow(text_base, w)[pair_ref]
        peer = fpow[lengths][pair_peer]
        return _PairStats(measure, hits, model, peer, best, undefined)
    model = lengths[pair_ref].astype(float)  # sentence lengths summed = the reference's token count
    best = np.zeros(0)
    if need_best:
        with np.errstate(invalid="ignore", divide="ignore"):
            best = np.where(model > 0, hits / np.where(model > 0, model, 1), 0.0)
    return _PairStats(measure, hits, model, lengths[pair_peer].astype(float), best, no_undefined)


def _ngram_orders(pr: _Processed, pair_peer, pair_ref, cache: dict, max_n: int) -> None:
    """Fill ``cache[("n", n)]`` for n = 1..max_n and ``cache["u"]`` (ROUGE-SU's unigrams) in one pass."""
    pos = np.stack([_position_codes(pr, n) for n in range(1, max_n + 1)]) if pr.tok.size else np.zeros(
        (max_n, 0), np.int64)
    hits = _ngram_hits(pair_peer, pair_ref, pr.tok, pr.text_tok, pos, True, pr.vocab_size)
    for n in range(1, max_n + 1):
        cache["n", n] = hits[n - 1]
    cache["u"] = hits[max_n]


# Largest dynamic-programming table of ROUGE-L/W, in bytes (a longer sentence pair is refused).
_LCS_TABLE_LIMIT = 2 * 1024**3


def _check_lcs_table(max_len: int, weighted: bool) -> None:
    """Refuse a ROUGE-W table (longest sentence + 1)^2 above ``_LCS_TABLE_LIMIT`` (ROUGE-L's bit rows are
    64 times smaller)."""
    size = (max_len + 1) ** 2 * (8 if weighted else 1 / 8)
    if size > _LCS_TABLE_LIMIT:
        raise ValueError(
            f"ROUGE-{'W' if weighted else 'L'} on a sentence of {max_len} tokens needs a {size / 1024**3:.1f} GB "
            f"table (limit {_LCS_TABLE_LIMIT / 1024**3:.0f} GB): give the texts one sentence per line, or leave "
            "R-L/R-W out of variants"
        )


def _aggregate(st: _PairStats, refs: str, alpha: float, rec_start, rec_end, n_refs, rounding: bool):
    """P, R and F per record for one reference mode and alpha, as ROUGE-1.5.5 computes them."""
    reasons = []
    if refs == "A":
        hit = _segment_sums(st.hits, rec_start, rec_end)
        model = _segment_sums(st.model_count, rec_start, rec_end)
        peer = _segment_sums(st.peer_count, rec_start, rec_end)
    else:
        best = _first_best(st.best_key, rec_start, rec_end)
        found = best >= 0
        take = np.where(found, best, 0)
        zero = np.zeros(best.shape)
        if st.hits.size:
            hit = np.where(found, st.hits[take], zero)
            model = np.where(found, st.model_count[take], zero)
            peer = np.where(found, st.peer_count[take], zero)
        else:
            hit, model, peer = zero, zero, zero
    undefined = _segment_sums(st.undefined.astype(float), rec_start, rec_end) > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        R = np.where(model != 0, hit / np.where(model != 0, model, 1), 0.0)
        P = np.where(peer != 0, hit / np.where(peer != 0, peer, 1), 0.0)
    if st.measure.kind == "w":
        inv = 1 / st.measure.weight
        R = np.where(model != 0, _libc_pow(R, inv), 0.0)
        P = np.where(peer != 0, _libc_pow(P, inv), 0.0)
    if rounding:
        R, P = _round5(R), _round5(P)
    denom = (1 - alpha) * P + alpha * R
    with np.errstate(invalid="ignore", divide="ignore"):
        F = np.where(denom > 0, (P * R) / np.where(denom > 0, denom, 1), 0.0)
    if rounding:
        F = _round5(F)
    no_refs = n_refs == 0
    out = {}
    for stat, values in (("P", P), ("R", R), ("F", F)):
        values = values.astype(float)
        values[no_refs | undefined] = np.nan
        out[stat] = values
    reasons += [(int(r), "no references: ROUGE gives no value") for r in np.flatnonzero(no_refs)]
    reasons += [
        (int(r), f"{st.measure.name}: a reference has no countable tokens (ROUGE-1.5.5 dies dividing by zero)")
        for r in np.flatnonzero(undefined & ~no_refs)
    ]
    return out, reasons
