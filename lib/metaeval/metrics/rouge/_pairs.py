"""Private: per-(summary, reference) hits and counts of one ROUGE measure, and their aggregation per record
into P, R and F as ROUGE-1.5.5 computes them (``-f A`` pooled, ``-f B`` best reference)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from metaeval.metrics.rouge._counts import (
    _gram_hits,
    _ngram_hits,
    _position_codes,
    _skip_matrix_hits,
    _skip_totals,
)
from metaeval.metrics.rouge._exact import _first_best, _libc_pow, _pow_table, _round5, _segment_sums
from metaeval.metrics.rouge._lcs import _lcs_hits
from metaeval.metrics.rouge._tokens import _Processed
from metaeval.metrics.variants import Measure

# Skip distances from which the pair-free kernel is used: listing (skip + 1) pairs per token costs more
# than counting the windows over the shared types.
_SKIP_LIST_MAX = 32


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
            if cache.get("n_done", 0) < measure.n:
                _ngram_orders(pr, pair_peer, pair_ref, cache, max(measure.n, cache.get("max_n", 1)))
            # an order longer than every text has no grams: no hits, no counts (and nothing to compute)
            hits = cache.get(("n", measure.n), np.zeros(pair_peer.shape, np.int64))
            totals = np.maximum(lengths - min(measure.n, int(lengths.max(initial=0)) + 1) + 1, 0)
        else:
            skip, su = measure.skip, measure.kind == "su"
            if skip < 0 or skip >= _SKIP_LIST_MAX:
                hits = _skip_matrix_hits(pair_peer, pair_ref, pr.tok, pr.text_tok, V, skip, su)
            else:
                if ("s", skip) not in cache:
                    cache["s", skip] = _gram_hits(pair_peer, pair_ref, pr.tok, pr.text_tok, skip, V)
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
            best = _round5(np.where(model != 0, hits / np.where(model != 0, model, 1), 0.0))
        return _PairStats(measure, hits, model, peer, best, no_undefined)
    weighted = measure.kind == "w"
    w = measure.weight if weighted else 1.0
    sent_len = np.diff(pr.sent_off)
    longest = np.zeros(lengths.size, np.int64)  # longest sentence of each text
    np.maximum.at(longest, np.repeat(np.arange(lengths.size), np.diff(pr.text_sent)), sent_len)
    M = int(longest[pair_ref].max(initial=0))  # longest reference sentence (rows of the LCS table)
    N = int(longest[pair_peer].max(initial=0))  # longest summary sentence (columns)
    fpow = _pow_table(max(M, N, int(lengths.max(initial=0))) + 1, w) if weighted else np.zeros(1)
    hits = _lcs_hits(pair_peer, pair_ref, pr.tok, pr.sent_off, pr.text_sent, pr.text_tok, V, weighted, fpow, M, N,
                     _lcs_block_rows(M, N, weighted))
    if weighted:
        # the reference's base sum_s len_s^w, added sentence by sentence as the Perl script does
        text_base = _segment_sums(fpow[sent_len], pr.text_sent[:-1], pr.text_sent[1:])
        model_base = text_base[pair_ref]
        undefined = model_base == 0
        best = np.zeros(0)
        if need_best:
            ratio = hits / np.where(undefined, 1, model_base)
            best = np.where(undefined, np.nan, _libc_pow(ratio, 1 / w))
        # (sum len^w)^w per reference text and count^w per summary text (fpow holds k^w), then per pair
        model = _libc_pow(text_base, w)[pair_ref]
        peer = fpow[lengths][pair_peer]
        return _PairStats(measure, hits, model, peer, best, undefined)
    model = lengths[pair_ref].astype(float)  # sentence lengths summed = the reference's token count
    best = np.zeros(0)
    if need_best:
        best = np.where(model > 0, hits / np.where(model > 0, model, 1), 0.0)
    return _PairStats(measure, hits, model, lengths[pair_peer].astype(float), best, no_undefined)


def _ngram_orders(pr: _Processed, pair_peer, pair_ref, cache: dict, max_n: int) -> None:
    """Fill ``cache[("n", n)]`` for n = 1..max_n and ``cache["u"]`` (ROUGE-SU's unigrams) in one pass; orders
    longer than the longest text are left out (they have no grams: R-100000 costs what R-L_max costs)."""
    top = max(1, min(max_n, int(np.diff(pr.text_tok).max(initial=0))))
    pos = np.stack([_position_codes(pr, n) for n in range(1, top + 1)]) if pr.tok.size else np.zeros(
        (top, 0), np.int64)
    hits = _ngram_hits(pair_peer, pair_ref, pr.tok, pr.text_tok, pos, True, pr.vocab_size)
    for n in range(1, top + 1):
        cache["n", n] = hits[n - 1]
    cache["u"] = hits[top]
    cache["n_done"] = max_n


# Memory of ROUGE-L's bit rows, in bytes, above which only every K-th row is kept (K ~ sqrt(rows)) and the
# trace recomputes blocks: one more pass, so that memory no longer grows with the product of the lengths.
_BIT_ROWS_LIMIT = 64 * 1024**2
# Largest ROUGE-W table, in bytes (a longer pair of sentences is refused with an error).
_WLCS_TABLE_LIMIT = 2 * 1024**3


def _lcs_block_rows(M: int, N: int, weighted: bool) -> int:
    """Rows per block of ROUGE-L's bit table for reference sentences of up to ``M`` tokens and summary sentences
    of up to ``N``: all of them while the table fits ``_BIT_ROWS_LIMIT``, else about sqrt(M). ROUGE-W keeps
    its whole (M + 1)(N + 1) table (its trace compares values, not bits): refused above ``_WLCS_TABLE_LIMIT``."""
    if weighted:
        size = (M + 1) * (N + 1) * 8
        if size > _WLCS_TABLE_LIMIT:
            raise ValueError(
                f"variants: ROUGE-W on a reference sentence of {M} tokens against a summary sentence of {N} tokens "
                f"needs a {size / 1024**3:.1f} GB table (limit {_WLCS_TABLE_LIMIT / 1024**3:.0f} GB): give the "
                "summaries and references one sentence per line, or leave R-W out of variants"
            )
        return max(M, 1)
    if (M + 1) * ((N + 63) // 64) * 8 <= _BIT_ROWS_LIMIT:
        return max(M, 1)
    return math.isqrt(M) + 1


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
    R = np.where(model != 0, hit / np.where(model != 0, model, 1), 0.0)
    P = np.where(peer != 0, hit / np.where(peer != 0, peer, 1), 0.0)
    if st.measure.kind == "w":
        inv = 1 / st.measure.weight
        R = np.where(model != 0, _libc_pow(R, inv), 0.0)
        P = np.where(peer != 0, _libc_pow(P, inv), 0.0)
    if rounding:
        R, P = _round5(R), _round5(P)
    denom = (1 - alpha) * P + alpha * R
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
