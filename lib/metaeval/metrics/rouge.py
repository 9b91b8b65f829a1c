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
    bits = 1
    while (1 << bits) < 2 * max_g:
        bits += 1
    size = 1 << bits
    mask = size - 1
    shift = np.uint64(64 - bits)
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
    i, j = m, n
    cur = _lcs_prefix(Vrows, i, j, words)
    while i != 0 and j != 0:
        if model[i - 1] == peer[j - 1]:
            i -= 1
            j -= 1
            mask[i] = 1
            cur -= 1
        else:
            up = _lcs_prefix(Vrows, i - 1, j, words)
            bit = (Vrows[i * words + (j - 1) // 64] >> np.uint64((j - 1) % 64)) & np.uint64(1)
            left = cur - 1 + np.int64(bit)
            if up >= left:
                i -= 1
                cur = up
            else:
                j -= 1
                cur = left


@numba.njit(cache=True)
def _wlcs_mark(model, peer, mask, slot, c, run, fpow):  # pragma: no cover - compiled
    """ROUGE-W's weighted LCS (f(k) = k^w from the table ``fpow``), marked as :func:`_lcs_mark_dp` does.

    ``c + f(k+1) - f(k)`` is evaluated left to right, as the Perl expression. A row whose token does not
    occur in ``peer`` (``slot[token] < 0``) below a non-decreasing row is a copy of it (each cell is
    max(up, left) = up), so only rows with matches are scanned. O(m n) time, fewer in practice; ``c`` holds
    the (m + 1)(n + 1) table (for the trace), ``run`` two rows of run lengths."""
    m, n = model.shape[0], peer.shape[0]
    W = n + 1
    for j in range(W):
        c[j] = 0.0
        run[j] = 0
    monotone = True  # row i - 1 is non-decreasing
    for i in range(1, m + 1):
        row = i * W
        prev = row - W
        rprev = ((i - 1) & 1) * W
        rcur = (i & 1) * W
        mi = model[i - 1]
        if monotone and slot[mi] < 0:
            for j in range(W):
                c[row + j] = c[prev + j]
                run[rcur + j] = 0
            continue
        running = 0.0
        c[row] = 0.0
        run[rcur] = 0
        for j in range(1, W):
            if mi == peer[j - 1]:
                k = run[rprev + j - 1]
                value = c[prev + j - 1] + fpow[k + 1] - fpow[k]
                if value < running:
                    monotone = False
                running = value
                run[rcur + j] = k + 1
            else:
                u = c[prev + j]
                running = max(u, running)
                run[rcur + j] = 0
            c[row + j] = running
        if slot[mi] < 0:
            monotone = True
        elif not monotone:
            # a decrease in this row: recheck (the flag may be stale from an earlier row)
            monotone = True
            for j in range(1, W):
                if c[row + j] < c[row + j - 1]:
                    monotone = False
                    break
    i, j = m, n
    while i != 0 and j != 0:
        if model[i - 1] == peer[j - 1]:
            i -= 1
            j -= 1
            mask[i] = 1
        elif c[(i - 1) * W + j] >= c[i * W + j - 1]:
            i -= 1
        else:
            j -= 1


@numba.njit(cache=True)
def _lcs_hits(peer_t, ref_t, tok, sent_off, text_sent, text_tok, V, weighted, fpow, max_len):  # pragma: no cover
    """ROUGE-L hits (integers) or ROUGE-W hits for every (peer, reference) pair; model = reference.

    Union LCS of each reference sentence against every summary sentence (marks only accumulate, so the
    summary sentences can be the outer loop), hits clipped by the unigram counts of both texts.
    ROUGE-L: O(sum over sentence pairs of m n / 64); ROUGE-W: O(sum m n). Tables sized by the longest
    sentence, reused."""
    out = np.zeros(peer_t.shape[0], np.float64)
    model_budget = np.zeros(V, np.int64)
    peer_budget = np.zeros(V, np.int64)
    maxw = (max_len + 63) // 64
    cells = (max_len + 1) * (max_len + 1)
    cf = np.zeros(cells if weighted else 1, np.float64)
    run = np.zeros(2 * (max_len + 1) if weighted else 1, np.int32)
    Vrows = np.zeros(1 if weighted else (max_len + 1) * maxw, np.uint64)
    PM = np.zeros(1 if weighted else max_len * maxw, np.uint64)
    slot = np.full(V, -1, np.int64)
    longest_text = 0
    for t in range(text_tok.shape[0] - 1):
        longest_text = max(longest_text, text_tok[t + 1] - text_tok[t])
    mask = np.zeros(longest_text + 1, np.int8)
    for k in range(peer_t.shape[0]):
        p, r = peer_t[k], ref_t[k]
        for e in range(text_tok[r], text_tok[r + 1]):
            model_budget[tok[e]] += 1
        for e in range(text_tok[p], text_tok[p + 1]):
            peer_budget[tok[e]] += 1
        r0 = text_tok[r]
        mask[: text_tok[r + 1] - r0] = 0
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
            for s in range(text_sent[r], text_sent[r + 1]):
                a, b = sent_off[s], sent_off[s + 1]
                if a == b:
                    continue
                model = tok[a:b]
                sub = mask[a - r0 : b - r0]
                if weighted:
                    _wlcs_mark(model, peer, sub, slot, cf, run, fpow)
                else:
                    _lcs_mark_bits(model, peer, sub, slot, PM, Vrows, words)
            for j in range(n):
                slot[peer[j]] = -1
        hit = 0.0
        for s in range(text_sent[r], text_sent[r + 1]):
            a, b = sent_off[s], sent_off[s + 1]
            L = b - a
            hit_len = 0
            for j in range(L):
                if mask[a - r0 + j] != 1:
                    continue
                t = tok[a + j]
                if model_budget[t] <= 0 or peer_budget[t] <= 0:
                    continue
                if weighted:
                    # ROUGE-1.5.5 closes a run when the next position is not an LCS hit or at the end of
                    # the sentence; a clipped hit inside a run neither adds nor closes it.
                    hit_len += 1
                    if (j + 1 < L and mask[a - r0 + j + 1] == 0) or j + 1 == L:
                        hit += fpow[hit_len]
                        hit_len = 0
                else:
                    hit += 1.0
                model_budget[t] -= 1
                peer_budget[t] -= 1
        out[k] = hit
        for e in range(text_tok[r], text_tok[r + 1]):
            model_budget[tok[e]] = 0
        for e in range(text_tok[p], text_tok[p + 1]):
            peer_budget[tok[e]] = 0
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

    def intern(t, where: str) -> int:
        key = t if isinstance(t, str) or t is None else (tuple(t) if isinstance(t, list) else t)
        try:
            found = raw_index.get(key)
        except TypeError:  # unhashable: _as_sentences says what is wrong with it
            found, key = None, None
        if found is None:
            found = len(texts)
            texts.append(_as_sentences(t, where))
            if key is not None:
                raw_index[key] = found
        return found

    peer_text = np.empty(n_records, np.int64)
    pair_rec_list: list[int] = []
    pair_ref_list: list[int] = []
    for r, (summary, refs) in enumerate(zip(summaries, references)):
        peer_text[r] = intern(summary, f"summaries[{r}]")
        if not isinstance(refs, (list, tuple)):
            raise TypeError(f"references[{r}] must be a list of reference texts, got {type(refs).__name__}")
        for q, ref in enumerate(refs):
            pair_rec_list.append(r)
            pair_ref_list.append(intern(ref, f"references[{r}][{q}]"))
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
        shared: dict = {}
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
            hits = _gram_hits(pair_peer, pair_ref, pr.tok, pr.text_tok, _position_codes(pr, measure.n), measure.n,
                              -1, False, V)
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
                        cache["u"] = _gram_hits(pair_peer, pair_ref, pr.tok, pr.text_tok, pr.tok, 1, -1, True, V)
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
