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

import warnings
from collections import defaultdict
from dataclasses import dataclass
from typing import Sequence

import numba
import numpy as np
import pandas as pd

from metaeval.metrics.text import process_tokens, split_sentences, tokenize
from metaeval.metrics.variants import Measure, RougeVariant, parse_variant, rouge155_variants

__all__ = ["score", "RougeWarning", "resolve_variants"]


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


@numba.njit(cache=True)
def _clipped_hits(a_text, b_text, offs, codes, counts):  # pragma: no cover - compiled
    """Sum over shared grams of min(count in a, count in b), for every pair (a_text[k], b_text[k])."""
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


@numba.njit(cache=True)
def _mark_lcs(model, peer, mask, weighted, weight):  # pragma: no cover - compiled
    """Mark the model positions of one LCS (weighted: ROUGE-W's WLCS, f(k) = k^weight) of model and peer,
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
    _trace(b, m, n, mask)


@numba.njit(cache=True)
def _trace(b, i, j, mask):  # pragma: no cover - compiled
    while i != 0 and j != 0:
        if b[i, j] == 1:
            i -= 1
            j -= 1
            mask[i] = 1
        elif b[i, j] == 2:
            i -= 1
        else:
            j -= 1


@numba.njit(cache=True)
def _find(sorted_ids, lo, hi, value):  # pragma: no cover - compiled
    pos = lo + np.searchsorted(sorted_ids[lo:hi], value)
    if pos < hi and sorted_ids[pos] == value:
        return pos
    return -1


@numba.njit(cache=True)
def _lcs_hits(peer_t, ref_t, tok, sent_off, text_sent, uni_off, uni_ids, uni_cnt, weighted, weight):  # pragma: no cover
    """ROUGE-L hits (int) or ROUGE-W hits (float) for every (peer, reference) pair; model = reference."""
    out = np.zeros(peer_t.shape[0], np.float64)
    for k in range(peer_t.shape[0]):
        p, r = peer_t[k], ref_t[k]
        mlo, mhi = uni_off[r], uni_off[r + 1]
        plo, phi = uni_off[p], uni_off[p + 1]
        model_budget = uni_cnt[mlo:mhi].copy()
        peer_budget = uni_cnt[plo:phi].copy()
        hit = 0.0
        for s in range(text_sent[r], text_sent[r + 1]):
            model = tok[sent_off[s] : sent_off[s + 1]]
            mask = np.zeros(model.shape[0], np.int8)
            for ps in range(text_sent[p], text_sent[p + 1]):
                peer = tok[sent_off[ps] : sent_off[ps + 1]]
                _mark_lcs(model, peer, mask, weighted, weight)
            run = 0
            L = model.shape[0]
            for j in range(L):
                if mask[j] != 1:
                    continue
                a = _find(uni_ids, mlo, mhi, model[j])
                bb = _find(uni_ids, plo, phi, model[j])
                if a < 0 or bb < 0 or model_budget[a - mlo] <= 0 or peer_budget[bb - plo] <= 0:
                    continue
                if weighted:
                    # ROUGE-1.5.5 closes a run when the next position is not an LCS hit or at the end of
                    # the sentence; a clipped hit inside a run neither adds nor closes it.
                    run += 1
                    if j + 1 < L and mask[j + 1] == 0:
                        hit += float(run) ** weight
                        run = 0
                    elif j + 1 == L:
                        hit += float(run) ** weight
                        run = 0
                else:
                    hit += 1.0
                model_budget[a - mlo] -= 1
                peer_budget[bb - plo] -= 1
        out[k] = hit
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


# ----------------------------------------------------------------------------------------------------
# Text processing shared by all variants of one setting


@dataclass
class _Processed:
    tok: np.ndarray  # all token ids, texts concatenated
    text_tok: np.ndarray  # token offsets per text (T + 1)
    sent_off: np.ndarray  # token offsets per sentence
    text_sent: np.ndarray  # sentence offsets per text (T + 1)
    vocab_size: int


def _process(texts: list[tuple[str, ...]], stem: bool, stop: bool, exceptions: str) -> _Processed:
    vocab: dict[str, int] = {}
    tok: list[int] = []
    sent_off = [0]
    text_sent = [0]
    text_tok = [0]
    for sentences in texts:
        for sentence in sentences:
            for t in process_tokens(tokenize(sentence), stem=stem, stop=stop, exceptions=exceptions):
                tok.append(vocab.setdefault(t, len(vocab)))
            sent_off.append(len(tok))
        text_sent.append(len(sent_off) - 1)
        text_tok.append(len(tok))
    return _Processed(
        np.asarray(tok, np.int64),
        np.asarray(text_tok, np.int64),
        np.asarray(sent_off, np.int64),
        np.asarray(text_sent, np.int64),
        max(len(vocab), 1),
    )


def _dense(codes: np.ndarray) -> np.ndarray:
    return np.unique(codes, return_inverse=True)[1].astype(np.int64)


def _gram_table(pr: _Processed, measure: Measure):
    """Per text: sorted distinct gram ids with counts (CSR offsets), and the total gram count per text."""
    T = pr.text_tok.shape[0] - 1
    lengths = np.diff(pr.text_tok)
    text_of = np.repeat(np.arange(T), lengths)
    end_of = pr.text_tok[1:][text_of]  # exclusive end of each token's text
    pos = np.arange(pr.tok.shape[0])
    V = pr.vocab_size
    if measure.kind == "n":
        valid = pos + measure.n - 1 < end_of
        codes = pr.tok.copy()
        for k in range(1, measure.n):
            # Exact ids for k+1-grams: rank (id of k-gram, next token) pairs; no overflow, no hashing.
            nxt = np.where(pos + k < pr.tok.shape[0], np.roll(pr.tok, -k), 0)
            codes = _dense(codes * V + nxt)
        g_text, g_code = text_of[valid], codes[valid]
    else:
        parts_text, parts_code = [], []
        max_gap = int(lengths.max(initial=0)) - 1 if measure.skip < 0 else measure.skip + 1
        for d in range(1, max(max_gap, 0) + 1):
            ok = pos + d < end_of
            if not ok.any():
                break
            i = pos[ok]
            parts_text.append(text_of[ok])
            parts_code.append(pr.tok[i] * (V + 1) + pr.tok[i + d] + 1)
        if measure.kind == "su":
            # unigrams of every token but the last of its text (ROUGE's loop bound $i < $#tokens)
            ok = pos + 1 < end_of
            parts_text.append(text_of[ok])
            parts_code.append(pr.tok[ok] * (V + 1))
        g_text = np.concatenate(parts_text) if parts_text else np.zeros(0, np.int64)
        g_code = np.concatenate(parts_code) if parts_code else np.zeros(0, np.int64)
    return _count_table(g_text, g_code, T)


def _count_table(g_text, g_code, T):
    totals = np.bincount(g_text, minlength=T).astype(np.int64)
    if g_code.size == 0:
        return np.zeros(T + 1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), totals
    order = np.lexsort((g_code, g_text))
    t, c = g_text[order], g_code[order]
    new = np.ones(t.shape[0], bool)
    new[1:] = (t[1:] != t[:-1]) | (c[1:] != c[:-1])
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, t.shape[0]))
    ut, uc = t[starts], c[starts]
    offs = np.zeros(T + 1, np.int64)
    np.add.at(offs, ut + 1, 1)
    return np.cumsum(offs), uc.astype(np.int64), counts.astype(np.int64), totals


def _round5(x: np.ndarray) -> np.ndarray:
    """Round like Perl's sprintf("%7.5f"): correctly rounded decimal conversion of the binary value."""
    flat = [float("%.5f" % v) if v == v else v for v in np.asarray(x, dtype=float).ravel().tolist()]
    return np.asarray(flat, dtype=float).reshape(np.shape(x))


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
        One row per record, one column per variant.

    Examples
    --------
    >>> score(["the cat sat on the mat"], [["the cat was on the mat"]], ["R-1|stem=0|stop=0|F", "R-L|stem=0|stop=0|R"])
       R-1|stem=0|stop=0|F  R-L|stem=0|stop=0|R
    0              0.83333              0.83333
    """
    if isinstance(summaries, (str, bytes)):
        raise TypeError("summaries must be a sequence of texts, not a single string")
    if isinstance(references, (str, bytes)):
        raise TypeError("references must be a sequence of reference lists, not a single string")
    summaries, references = list(summaries), list(references)
    if len(summaries) != len(references):
        raise ValueError(
            f"summaries and references must have the same length, got {len(summaries)} and {len(references)}"
        )
    if columns not in ("key", "signature"):
        raise ValueError(f"columns must be 'key' or 'signature', got {columns!r}")
    variant_list = resolve_variants(variants)
    n_records = len(summaries)
    index = list(ids) if ids is not None else list(range(n_records))
    if len(index) != n_records:
        raise ValueError(f"ids has {len(index)} labels for {n_records} records")

    # Distinct texts, each processed once per setting.
    text_index: dict[tuple[str, ...], int] = {}
    texts: list[tuple[str, ...]] = []

    def intern(t) -> int:
        if t not in text_index:
            text_index[t] = len(texts)
            texts.append(t)
        return text_index[t]

    peer_text = np.empty(n_records, np.int64)
    pair_rec, pair_ref = [], []
    for r, (summary, refs) in enumerate(zip(summaries, references)):
        peer_text[r] = intern(_as_sentences(summary, f"summaries[{r}]"))
        if not isinstance(refs, (list, tuple)):
            raise TypeError(f"references[{r}] must be a list of reference texts, got {type(refs).__name__}")
        for q, ref in enumerate(refs):
            pair_rec.append(r)
            pair_ref.append(intern(_as_sentences(ref, f"references[{r}][{q}]")))
    pair_rec = np.asarray(pair_rec, np.int64)  # type: ignore[assignment]
    pair_ref = np.asarray(pair_ref, np.int64)  # type: ignore[assignment]
    pair_peer = peer_text[pair_rec]
    n_refs = np.bincount(pair_rec, minlength=n_records)
    rec_start = np.concatenate([[0], np.cumsum(n_refs)[:-1]]).astype(np.int64)
    rec_end = (rec_start + n_refs).astype(np.int64)

    results: dict[RougeVariant, np.ndarray] = {}
    reasons: dict[int, set[str]] = defaultdict(set)
    by_setting: dict[tuple, list[RougeVariant]] = defaultdict(list)
    for v in variant_list:
        by_setting[v.setting].append(v)

    for (stem, stop, exceptions), vs in by_setting.items():
        pr = _process(texts, stem, stop, exceptions)
        unigram = _gram_table(pr, Measure("n", n=1))
        for measure in sorted({v.measure for v in vs}):
            stats = _pair_stats(pr, measure, unigram, pair_peer, pair_ref)
            for v in (v for v in vs if v.measure == measure):
                values, why = _aggregate(stats, v, rec_start, rec_end, n_refs, rounding)
                results[v] = values
                for rec, reason in why:
                    reasons[rec].add(reason)

    if warn:
        for rec in sorted(reasons):
            warnings.warn(f"record {index[rec]!r}: {'; '.join(sorted(reasons[rec]))}", RougeWarning, stacklevel=2)
    name = (lambda v: v.key) if columns == "key" else (lambda v: v.signature)
    frame = pd.DataFrame({name(v): results[v] for v in variant_list}, index=index)
    return frame


@dataclass
class _PairStats:
    measure: Measure
    hits: np.ndarray  # per pair (float for W)
    model_count: np.ndarray  # per pair: reference count (L: sum of sentence lengths; W: (sum len^w)^w)
    peer_count: np.ndarray  # per pair: summary count (W: count^w)
    best_key: np.ndarray  # per pair: the value -f B maximizes
    undefined: np.ndarray  # per pair: ROUGE gives no value (W with an empty reference)


def _pair_stats(pr: _Processed, measure: Measure, unigram, pair_peer, pair_ref) -> _PairStats:
    if measure.kind in ("n", "s", "su"):
        offs, codes, counts, totals = unigram if measure == Measure("n", n=1) else _gram_table(pr, measure)
        hits = _clipped_hits(pair_peer, pair_ref, offs, codes, counts).astype(float)
        model = totals[pair_ref].astype(float)
        peer = totals[pair_peer].astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            recall = np.where(model != 0, hits / np.where(model != 0, model, 1), 0.0)
        return _PairStats(measure, hits, model, peer, _round5(recall), np.zeros(hits.shape, bool))
    offs, codes, counts, totals = unigram
    weighted = measure.kind == "w"
    w = measure.weight if weighted else 1.0
    hits = _lcs_hits(pair_peer, pair_ref, pr.tok, pr.sent_off, pr.text_sent, offs, codes, counts, weighted, w)
    sent_len = np.diff(pr.sent_off).astype(float)
    if weighted:
        per_sentence = sent_len**w
        base = _segment_sums(per_sentence, pr.text_sent[:-1], pr.text_sent[1:])
        model_base = base[pair_ref]
        undefined = model_base == 0
        with np.errstate(invalid="ignore", divide="ignore"):
            best = np.where(undefined, np.nan, (hits / np.where(undefined, 1, model_base)) ** (1 / w))
        model = model_base**w
        peer = totals[pair_peer].astype(float) ** w
        return _PairStats(measure, hits, model, peer, best, undefined)
    base = np.diff(pr.text_tok).astype(float)  # sentence lengths summed = the reference's token count
    model = base[pair_ref]
    with np.errstate(invalid="ignore", divide="ignore"):
        best = np.where(model > 0, hits / np.where(model > 0, model, 1), 0.0)
    return _PairStats(measure, hits, model, totals[pair_peer].astype(float), best, np.zeros(hits.shape, bool))


def _aggregate(st: _PairStats, v: RougeVariant, rec_start, rec_end, n_refs, rounding: bool):
    n_records = rec_start.shape[0]
    reasons = []
    if v.refs == "A":
        hit = _segment_sums(st.hits, rec_start, rec_end)
        model = _segment_sums(st.model_count, rec_start, rec_end)
        peer = _segment_sums(st.peer_count, rec_start, rec_end)
    else:
        hit, model, peer = np.zeros(n_records), np.zeros(n_records), np.zeros(n_records)
        has = n_refs > 0
        # first maximum wins, as the Perl "$score > $best" with best starting at -1
        for r in np.flatnonzero(has):
            seg = st.best_key[rec_start[r] : rec_end[r]]
            k = rec_start[r] + int(np.argmax(np.where(np.isnan(seg), -np.inf, seg)))
            hit[r], model[r], peer[r] = st.hits[k], st.model_count[k], st.peer_count[k]
    undefined = _segment_sums(st.undefined.astype(float), rec_start, rec_end) > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        R = np.where(model != 0, hit / np.where(model != 0, model, 1), 0.0)
        P = np.where(peer != 0, hit / np.where(peer != 0, peer, 1), 0.0)
        if st.measure.kind == "w":
            inv = 1 / st.measure.weight
            R = np.where(model != 0, R**inv, 0.0)
            P = np.where(peer != 0, P**inv, 0.0)
    if rounding:
        R, P = _round5(R), _round5(P)
    a = v.alpha
    denom = (1 - a) * P + a * R
    with np.errstate(invalid="ignore", divide="ignore"):
        F = np.where(denom > 0, (P * R) / np.where(denom > 0, denom, 1), 0.0)
    if rounding:
        F = _round5(F)
    out = {"P": P, "R": R, "F": F}[v.stat].astype(float)
    no_refs = n_refs == 0
    out[no_refs] = np.nan
    out[undefined] = np.nan
    reasons += [(int(r), "no references: ROUGE gives no value") for r in np.flatnonzero(no_refs)]
    reasons += [
        (int(r), f"{v.measure.name}: a reference has no countable tokens (ROUGE-1.5.5 dies dividing by zero)")
        for r in np.flatnonzero(undefined & ~no_refs)
    ]
    return out, reasons
