"""Private: per-(summary, reference) hits and counts of one ROUGE measure, and their aggregation per record
into P, R and F as ROUGE-1.5.5 computes them (``-f A`` pooled, ``-f B`` best reference)."""

from __future__ import annotations

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
