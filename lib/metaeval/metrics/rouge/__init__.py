"""ROUGE exactly as ROUGE-1.5.5 computes it, for every variant, in one pass.

:func:`score` takes many (summary, references) pairs and many variants and returns one row per summary and
one column per variant. Text processing is shared: every distinct text is tokenized, stopword-filtered and
stemmed once per (stem, stop) setting; n-grams and skip-bigrams get exact integer ids (no hashing) over all
texts at once; clipped counts and the LCS / weighted-LCS dynamic programs run in numba.

The package's private modules, by seam: ``_tokens`` (texts to token-id arrays per setting), ``_counts``
(ROUGE-N and ROUGE-S/SU kernels), ``_lcs`` (ROUGE-L and ROUGE-W kernels), ``_exact`` (ROUGE-1.5.5's
arithmetic: C ``pow``, left-to-right sums, 5-decimal rounding) and ``_pairs`` (per-pair statistics of one
measure and their aggregation into P, R, F); this module is the public entry point.

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
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from metaeval.metrics._inputs import as_sentences, check_records
from metaeval.metrics.text import TURKIC
from metaeval.metrics.rouge._pairs import _aggregate, _pair_stats
from metaeval.metrics.rouge._tokens import _process, _tokenize_texts, _Tokens
from metaeval.metrics.variants import RougeVariant, parse_variant, rouge155_variants

__all__ = ["RougeWarning", "resolve_variants", "score"]


class RougeWarning(UserWarning):
    """A ROUGE value is undefined (NaN) for a record, as ROUGE-1.5.5 would give no value."""


def resolve_variants(variants) -> list[RougeVariant]:
    """Variants from names, signatures, keys or :class:`RougeVariant` objects (default: the 96 of ROUGE-1.5.5)."""
    if variants is None:
        return rouge155_variants()
    if isinstance(variants, (str, RougeVariant)):
        variants = [variants]
    if not isinstance(variants, Iterable):
        raise TypeError(f"variants must be a variant name such as 'R-1' or a list of them, got {variants!r}")
    out = []
    for v in variants:
        parsed = parse_variant(v)
        if not isinstance(parsed, RougeVariant):
            raise ValueError(f"variants: {v!r} is a system-level variant; pass its summary-level part")
        out.append(parsed)
    if not out:
        raise ValueError("variants must not be empty")
    return out


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
        For each record, its list of reference texts (same forms). An empty list gives NaN; ``None`` in a
        list is refused (a missing reference is not an empty one: ``''`` is).
    variants : iterable of str or RougeVariant, optional
        Names like ``"R-SU4|stem=1|stop=0|F"`` or signatures like
        ``"rouge-su4|stem:yes|stop:no|stat:F|refs:A"``; default: the 96 ROUGE-1.5.5 values (8 measures x
        stem x stop x P/R/F, pooled references). Text that is not English: ``|tok:unicode`` (opt-in, not
        ROUGE-1.5.5: Unicode words, one token per character of scripts without spaces, no stemming unless
        ``|stem:yes|lang:el`` asks for that language's Snowball stemmer; :func:`metaeval.text.unicode_tokenize`).
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
    SU*) O(P (L S + S^2)) without listing pairs, S the types shared by the two texts; ROUGE-L O(sum m n / 64)
    per pair (bit-parallel rows), ROUGE-W O(sum m n) at most (a table of (m + 1)(n + 1) cells, reused).

    Examples
    --------
    >>> score(["the cat sat on the mat"], [["the cat was on the mat"]], ["R-1|stem=0|stop=0|F", "R-L|stem=0|stop=0|R"])
       R-1|stem=0|stop=0|F  R-L|stem=0|stop=0|R
    0              0.83333              0.83333
    >>> score([], []).shape
    (0, 96)
    >>> score(["Η γάτα κάθεται"], [["η γάτα κοιμάται"]], ["R-1|stem=0|stop=0|F|tok=unicode"])
       R-1|stem=0|stop=0|F|tok=unicode
    0                          0.66667
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
            except TypeError:  # unhashable: as_sentences says what is wrong with it
                found, key = None, None
            if found is not None:
                return found
        found = len(texts)
        texts.append(as_sentences(t, f"summaries[{r}]" if q < 0 else f"references[{r}][{q}]"))
        if key is not None:
            raw_index[key] = found
        return found

    peer_text = np.empty(n_records, np.int64)
    pair_rec_list: list[int] = []
    pair_ref_list: list[int] = []
    for r, (summary, refs) in enumerate(zip(summaries, references)):
        peer_text[r] = intern(summary, r, -1)
        for q, ref in enumerate(refs):
            if ref is None:
                # a missing reference is not an empty one: scored as empty it would halve P silently
                raise ValueError(
                    f"references[{r}][{q}] (record {index[r]!r}) is None: remove the missing reference from the "
                    "record's list, or pass '' for an empty reference"
                )
        pair_rec_list.extend([r] * len(refs))
        pair_ref_list.extend([intern(ref, r, q) for q, ref in enumerate(refs)])
    if n_records == 0:
        return pd.DataFrame({name(v): np.zeros(0) for v in variant_list}, index=pd.Index(index))
    pair_rec = np.asarray(pair_rec_list, np.int64)
    pair_ref = np.asarray(pair_ref_list, np.int64)
    pair_peer = peer_text[pair_rec]
    n_refs = np.bincount(pair_rec, minlength=n_records)
    rec_end = np.cumsum(n_refs)
    rec_start = rec_end - n_refs

    results: dict[RougeVariant, np.ndarray] = {}
    reasons: dict[int, set[str]] = defaultdict(set)
    by_setting: dict[tuple, list[RougeVariant]] = defaultdict(list)
    for v in variant_list:
        by_setting[v.setting].append(v)

    bases: dict[tuple[str, str | None], _Tokens] = {}  # per tokenizer (and case folding), each text tokenized once
    for (stem, stop, exceptions, tok, lang), vs in by_setting.items():
        folding = (tok, lang if lang in TURKIC else None)
        if folding not in bases:
            bases[folding] = _tokenize_texts(texts, tok, folding[1])
        pr = _process(bases[folding], stem, stop, exceptions, lang)
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
