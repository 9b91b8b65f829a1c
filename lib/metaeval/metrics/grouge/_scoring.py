"""GRouge scores: the lexical counts (ROUGE-1.5.5's), the semantic sums and the public :func:`score`,
:func:`score_parts`, :func:`align` and :func:`similarity`."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from metaeval.metrics._inputs import as_sentences, check_records
from metaeval.metrics.grouge._engine import _Engine, _ref_choices
from metaeval.metrics.grouge._lexicon import _Lexicon, _words
from metaeval.metrics.grouge._options import GRougeOptions, GRougeVariant, GRougeWarning, parse_variant
from metaeval.metrics.grouge._store import _store
from metaeval.metrics.text import process_tokens, stopwords, tokenize
from metaeval.metrics.variants import Measure

_SETTINGS = ("restart", "iterations", "topk", "align", "align_topk", "stem", "stop")


def _options(options: GRougeOptions | None, settings: dict) -> GRougeOptions:
    """``options`` with the keyword settings applied (a setting given both ways must agree); None leaves a
    setting at its default, except ``topk`` (None: exact vectors), whose "not given" is ``"default"``."""
    given = {k: v for k, v in settings.items() if v is not None or k == "topk"}
    if given.get("topk") == "default":
        del given["topk"]
    if options is None:
        return GRougeOptions(**given)
    if not isinstance(options, GRougeOptions):
        raise TypeError(f"options must be a GRougeOptions, got {type(options).__name__}")
    clash = [k for k, v in given.items() if getattr(options, k) != v]
    if clash:
        raise ValueError(f"{clash} given both in options and as keywords, with different values: give each once")
    return options


def _resolve(variants, lam, options: GRougeOptions) -> list[GRougeVariant]:
    if isinstance(variants, (str, GRougeVariant)):
        variants = [variants]
    out = [parse_variant(v, lam=lam, options=options) for v in variants]
    if not out:
        raise ValueError("variants must not be empty")
    return out


def _grams(ids: np.ndarray, measure: Measure) -> np.ndarray:
    """Every gram occurrence of a text, as ROUGE-1.5.5 enumerates them, as the row of its tokens' ``ids``
    (-1 padding)."""
    n_tok = ids.shape[0]
    if measure.kind == "n":
        m = max(n_tok - measure.n + 1, 0)
        pos = np.arange(m)[:, None] + np.arange(measure.n)[None, :]
    else:
        pairs = [(i, i + d) for d in range(1, measure.skip + 2) for i in range(n_tok - d)]
        uni = [(i, -1) for i in range(n_tok - 1)]  # ROUGE-SU: every token but the last
        pos = np.asarray(pairs + uni, np.int64).reshape(-1, 2)
    return np.where(pos >= 0, ids[np.clip(pos, 0, None)], -1)


def score(
    summaries: Sequence,
    references: Sequence[Sequence],
    variants=("grouge-1", "grouge-2", "grouge-su4"),
    *,
    lam: float = 0.5,
    options: GRougeOptions | None = None,
    stem: bool | None = None,
    stop: bool | None = None,
    topk: int | None | str = "default",
    restart: float | None = None,
    iterations: int | None = None,
    align: str | None = None,
    align_topk: int | None = None,
    ids: Sequence | None = None,
    columns: str = "signature",
    cache: bool = True,
    progress: bool = False,
    warn: bool = True,
) -> pd.DataFrame:
    """GRouge of many summaries against their references.

    Parameters
    ----------
    summaries, references
        As :func:`metaeval.rouge.score`: one text per record (string or list of sentences; None = empty)
        and, per record, its list of reference texts.
    variants : iterable of str or GRougeVariant
        ``grouge-N`` (any N >= 1) and ``grouge-SU<d>``; short forms ``G-2``, ``G-SU4``.
    lam : float
        Weight of the lexical match (1: ROUGE-N recall; 0: semantic only, stopword-only grams lexical).
    options : GRougeOptions, optional
        Every other setting (default: ADW's, see :class:`GRougeOptions`).
    stem, stop, topk, restart, iterations, align, align_topk
        Shortcuts for the fields of ``options`` (``topk=None``: exact vectors).
    ids : sequence, optional
        Row labels.
    columns : {"signature", "name"}
        Column labels: full signatures or short names (``grouge-2``).
    cache : bool
        Keep single-sense PPR vectors on disk (``metaeval._io.cache_dir()/grouge``).
    progress : bool
        Show tqdm progress bars.
    warn : bool
        Warn (:class:`GRougeWarning`) for records without references (NaN).

    Returns
    -------
    pandas.DataFrame
        One row per record, one column per variant.

    Examples
    --------
    >>> frame = score(["police fired three officers"], [["the officers were dismissed"]], ["grouge-1"], lam=1.0)
    >>> float(frame.iloc[0, 0])   # lam = 1: ROUGE-1 recall (officers; the, were, dismissed missed)
    0.25
    """
    opts = _options(options, dict(stem=stem, stop=stop, restart=restart, iterations=iterations, align=align,
                                  align_topk=align_topk, topk=topk))
    vs, results, _, index = _score_impl(summaries, references, variants, lam=lam, options=opts, ids=ids,
                                        columns=columns, cache=cache, progress=progress, warn=warn)
    name = (lambda v: v.signature) if columns == "signature" else (lambda v: v.slug)
    return pd.DataFrame({name(v): results[v] for v in vs}, index=index)


def score_parts(
    summaries: Sequence,
    references: Sequence[Sequence],
    variants=("grouge-1", "grouge-2", "grouge-su4"),
    *,
    options: GRougeOptions | None = None,
    ids: Sequence | None = None,
    cache: bool = True,
    progress: bool = False,
    warn: bool = True,
    **settings,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The lexical and semantic parts of GRouge in one pass: GRouge(lam) = lam L + (1 - lam) S.

    ``L`` is ROUGE-N recall (GRouge at lam = 1), ``S`` GRouge at lam = 0 (Sem of the grams with a content
    word, the lexical count of the stopword-only grams); columns are the short names (``grouge-2``). Use it
    to study lam without rescoring. Arguments as :func:`score` (``settings``: its shortcuts ``stem``,
    ``stop``, ``topk``, ``restart``, ``iterations``, ``align``, ``align_topk``).

    Examples
    --------
    >>> L, S = score_parts(["police fired three officers"], [["the officers were dismissed"]], ["grouge-1"])
    >>> float(L.iloc[0, 0]), bool(0 < S.iloc[0, 0] < 1)
    (0.25, True)
    """
    unknown = sorted(set(settings) - set(_SETTINGS))
    if unknown:
        raise TypeError(f"score_parts got unknown settings {unknown}; the settings are {list(_SETTINGS)}")
    opts = _options(options, settings)
    vs, _, parts, index = _score_impl(summaries, references, variants, lam=1.0, options=opts, ids=ids,
                                      columns="name", cache=cache, progress=progress, warn=warn, want_parts=True)
    lexical = pd.DataFrame({v.slug: parts[v][0] for v in vs}, index=index)
    semantic = pd.DataFrame({v.slug: parts[v][1] for v in vs}, index=index)
    return lexical, semantic


def _score_impl(summaries, references, variants, *, lam: float, options: GRougeOptions, ids, columns: str,
                cache: bool, progress: bool, warn: bool, want_parts: bool = False) -> tuple:
    """The work of :func:`score` and :func:`score_parts`."""
    summaries, references = check_records(summaries, references)
    if columns not in ("signature", "name"):
        raise ValueError(f"columns must be 'signature' or 'name', got {columns!r}")
    vs = _resolve(variants, lam, options)
    n_records = len(summaries)
    index = list(ids) if ids is not None else list(range(n_records))
    if len(index) != n_records:
        raise ValueError(f"ids has {len(index)} labels for {n_records} records")

    text_index: dict[tuple[str, ...], int] = {}
    texts: list[tuple[str, ...]] = []

    def intern(t) -> int:
        if t not in text_index:
            text_index[t] = len(texts)
            texts.append(t)
        return text_index[t]

    peer_text = np.empty(n_records, np.int64)
    rec_refs: list[tuple[int, ...]] = []
    for r, (summary, refs) in enumerate(zip(summaries, references)):
        peer_text[r] = intern(as_sentences(summary, f"summaries[{r}]"))
        rec_refs.append(tuple(intern(as_sentences(ref, f"references[{r}][{q}]")) for q, ref in enumerate(refs)))
    pair_rec = np.asarray([r for r, refs in enumerate(rec_refs) for _ in refs], np.int64)
    pair_ref = np.asarray([t for refs in rec_refs for t in refs], np.int64)
    pair_peer = peer_text[pair_rec]
    n_refs = np.bincount(pair_rec, minlength=n_records)

    results: dict[GRougeVariant, np.ndarray] = {}
    parts: dict[GRougeVariant, tuple[np.ndarray, np.ndarray]] = {}
    by_setting: dict[GRougeOptions, list[GRougeVariant]] = {}
    for v in vs:
        by_setting.setdefault(v.options, []).append(v)
    sw = stopwords()
    for opts, group in by_setting.items():
        raw = []  # unstemmed tokens, one to one with the ROUGE tokens
        proc = []  # ROUGE-1.5.5 tokens (stopwords removed, stemmed, as the options say)
        for t in texts:
            toks = [w for s in t for w in tokenize(s)]
            kept = [w for w in toks if w not in sw] if opts.stop else toks
            raw.append(kept)
            proc.append(process_tokens(kept, stem=opts.stem, stop=False))
        is_stop = [np.asarray([w in sw for w in toks], bool) for toks in raw]
        measures = sorted({v.measure for v in group})
        lexical = {m: _lexical_counts(proc, is_stop, m, pair_peer, pair_ref) for m in measures}
        need_sem = want_parts or any(v.lam < 1.0 for v in group)
        sem_sums = {m: np.zeros(pair_rec.shape[0]) for m in measures}
        if need_sem:
            store = _store(*opts.vector_key, cache=cache, progress=progress)
            lex = _Lexicon(store.wn)
            raw_ids = [np.asarray(lex.ids(toks), np.int64) for toks in raw]
            engine = _Engine(store, lex, align=opts.align, align_topk=opts.align_topk)
            _semantic_sums(raw_ids, lex, store, engine, measures, pair_peer, pair_ref, sem_sums, progress)
        for v in group:
            hits, model, hits_stop = lexical[v.measure]
            # the semantic part: Sem over the grams with a content word, the lexical count over the others
            sem = sem_sums[v.measure] + hits_stop
            per_pair = v.lam * hits + (1.0 - v.lam) * sem if v.lam < 1.0 else hits
            den = np.bincount(pair_rec, weights=model, minlength=n_records)
            safe = np.where(den > 0, den, 1)
            vals = []
            for x in (per_pair, hits, sem):
                val = np.where(den > 0, np.bincount(pair_rec, weights=x, minlength=n_records) / safe, 0.0)
                val[n_refs == 0] = np.nan
                vals.append(val)
            results[v] = vals[0]
            parts[v] = (vals[1], vals[2])
    if warn:
        for rec in np.flatnonzero(n_refs == 0):
            warnings.warn(f"record {index[rec]!r}: no references: GRouge gives no value", GRougeWarning, stacklevel=3)
    return vs, results, parts, index


def _lexical_counts(proc: list[list[str]], is_stop: list[np.ndarray], measure: Measure, pair_peer: np.ndarray,
                    pair_ref: np.ndarray):
    """Per (peer, reference) pair: ROUGE's clipped hits ``sum_g min(c_S(g), c_P(g))``, the reference's gram
    count, and the part of the hits that falls on the reference's stopword-only occurrences
    (``min(c_S, c_P) * c_S_stop / c_S`` per gram: exact when a stemmed gram is always or never stopword-only,
    proportional in the rare case it is both)."""
    vocab: dict[str, int] = {}
    ids = [np.asarray([vocab.setdefault(w, len(vocab)) for w in toks], np.int64) for toks in proc]
    rows = [_grams(t_ids, measure) for t_ids in ids]
    # stopword-only occurrences (the -1 padding counts as a stopword)
    stop_rows = [(_grams(stop.astype(np.int64), measure) != 0).all(axis=1) for stop in is_stop]
    lengths = np.asarray([len(r) for r in rows], np.int64)
    stacked = np.concatenate(rows) if rows else np.zeros((0, 1), np.int64)
    if stacked.shape[0]:
        _, codes = np.unique(stacked, axis=0, return_inverse=True)
        codes = codes.ravel()
    else:
        codes = np.zeros(0, np.int64)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    table = []
    for k in range(len(rows)):
        c_k = codes[bounds[k]:bounds[k + 1]]
        u, inv, c = np.unique(c_k, return_inverse=True, return_counts=True)
        c_stop = np.bincount(inv.ravel(), weights=stop_rows[k].astype(float), minlength=u.size)
        table.append((u, c, c_stop))
    hits = np.zeros(pair_peer.shape[0])
    hits_stop = np.zeros(pair_peer.shape[0])
    for k, (p, r) in enumerate(zip(pair_peer.tolist(), pair_ref.tolist())):
        up, cp, _ = table[p]
        ur, cr, cr_stop = table[r]
        _, ip, ir = np.intersect1d(up, ur, assume_unique=True, return_indices=True)
        clipped = np.minimum(cp[ip], cr[ir]).astype(float)
        hits[k] = float(clipped.sum())
        hits_stop[k] = float(np.sum(clipped * cr_stop[ir] / cr[ir]))
    return hits, lengths[pair_ref].astype(float), hits_stop


def _content_sets(grams: np.ndarray, is_stop) -> np.ndarray:
    """Each gram (row of word ids, -1 padding) as the sorted set of its content words (-1 padding first).

    Examples
    --------
    >>> _content_sets(np.array([[3, 0], [0, 3], [3, 3], [1, -1]]), [True, True, False, False]).tolist()
    [[-1, 3], [-1, 3], [-1, 3], [-1, -1]]
    """
    if grams.size == 0:
        return grams
    stop = np.asarray(is_stop, bool)
    g = np.where(grams >= 0, grams, -1)
    g = np.where((g >= 0) & ~stop[np.clip(g, 0, None)], g, -1)
    g = np.sort(g, axis=1)
    g[:, 1:][g[:, 1:] == g[:, :-1]] = -1  # a repeated word counts once
    return np.sort(g, axis=1)


def _semantic_sums(raw_ids, lex, store, engine, measures, pair_peer, pair_ref, sem_sums, progress) -> None:
    """sem_sums[m][pair] = sum of Sem(gram, peer) over the reference's gram occurrences that have a content
    word (Sem of a stopword-only gram is NaN and never used)."""
    # Group (peer, ref) pairs by peer; peers with the same reference set share one alignment table.
    by_peer: dict[int, list[int]] = {}
    for k, p in enumerate(pair_peer.tolist()):
        by_peer.setdefault(p, []).append(k)
    by_refset: dict[tuple[int, ...], list[int]] = {}
    for p, ks in by_peer.items():
        by_refset.setdefault(tuple(sorted({int(pair_ref[k]) for k in ks})), []).append(p)
    # every sense at once: full blocks of seeds, one progress bar
    store.ensure({s for p in by_peer for w in raw_ids[p].tolist() for s in lex.senses[w]}
                 | {s for t in pair_ref.tolist() for w in raw_ids[t].tolist() for s in lex.senses[w]})
    occ_cache: dict[tuple[int, Measure], np.ndarray] = {}

    def occurrences(t: int, m: Measure) -> np.ndarray:
        key = (t, m)
        if key not in occ_cache:
            occ_cache[key] = _grams(raw_ids[t], m)
        return occ_cache[key]

    from tqdm import tqdm

    bar = tqdm(total=len(by_peer), desc="GRouge peers", unit="summary", disable=not progress)
    for refset, peers in by_refset.items():
        ref_words = [int(w) for t in refset for w in raw_ids[t]]
        # the grams depend on the reference set only: one table for all its peers
        grams_all = []
        layout = []
        for m in measures:
            for t in refset:
                occ = occurrences(t, m)
                grams_all.append(occ)
                layout.append((m, t, occ.shape[0]))
        width = max((g.shape[1] for g in grams_all), default=1)
        padded = [np.pad(g, ((0, 0), (0, width - g.shape[1])), constant_values=-1) for g in grams_all]
        stacked = np.concatenate(padded) if padded else np.zeros((0, width), np.int64)
        # distinct grams only: Sem depends on the set of content words, not on positions, order, repeats or
        # stopwords (which never enter a signature), so "the police", "police" and "police ... the" are one
        stacked = _content_sets(stacked, lex.is_stop)
        if stacked.size:
            uniq, inverse = np.unique(stacked, axis=0, return_inverse=True)
        else:
            uniq, inverse = stacked, np.zeros(0, np.int64)
        uniq = np.ascontiguousarray(uniq, np.int64)
        inverse = inverse.ravel()
        sems = engine.sems(ref_words, [(raw_ids[p].tolist(), uniq) for p in peers])
        for p, s in zip(peers, sems):
            per_occ = s[inverse] if inverse.size else np.zeros(0)
            per_occ = np.where(np.isnan(per_occ), 0.0, per_occ)  # stopword-only grams: lexical count only
            start = 0
            ks_by_ref: dict[int, list[int]] = {}  # a reference given twice to a record has two pairs
            for k in by_peer[p]:
                ks_by_ref.setdefault(int(pair_ref[k]), []).append(k)
            for m, t, cnt in layout:
                total = float(np.sum(per_occ[start : start + cnt]))
                start += cnt
                for k in ks_by_ref[t]:
                    sem_sums[m][k] = total
            bar.update(1)
    bar.close()


# ----------------------------------------------------------------------------------------------------
# Public: align and similarity


def align(words_a, words_b, *, options: GRougeOptions | None = None, cache: bool = True) -> list[str | None]:
    """The sense each word of ``words_a`` takes when aligned with ``words_b`` (ADW): a sense it shares with a
    word of ``words_b`` if any, else the sense most similar (``options.align`` on the top ``align_topk``
    dimensions) to any sense of any word of ``words_b``; None for stopwords, OOV words and words whose
    senses are all unrelated (similarity 0) to ``words_b``.

    ``words_a``/``words_b``: lists of words or texts (tokenized like ROUGE).

    Examples
    --------
    >>> align(["officers", "fired"], "Several policemen terminated in corruption probe")
    ['officer.n.03', 'fire.v.04']
    """
    opts = options if options is not None else GRougeOptions()
    store = _store(*opts.vector_key, cache=cache)
    lex = _Lexicon(store.wn)
    engine = _Engine(store, lex, align=opts.align, align_topk=opts.align_topk)
    words = _words(words_a)
    a, b = lex.ids(words), lex.ids(_words(words_b))
    a_nodes = np.asarray([s for w in a for s in lex.senses[w]], np.int64)  # each word's senses in turn
    b_nodes = np.asarray(sorted({s for w in b for s in lex.senses[w]}), np.int64)
    ptr = np.cumsum([0] + [len(lex.senses[w]) for w in a])
    store.ensure(np.concatenate([a_nodes, b_nodes]))
    pair = engine.pair(store.row_of[a_nodes], store.row_of[b_nodes])
    # GRouge's own rule (ADW's alignmentBasedDisambiguation), each word of words_a against all of words_b
    choice = _ref_choices(ptr, np.isin(a_nodes, b_nodes), pair, np.arange(b_nodes.size))
    return [store.wn.senses(word)[c - start].name if c >= 0 else None for word, c, start in zip(words, choice, ptr)]


def similarity(text_a, text_b, *, options: GRougeOptions | None = None, cache: bool = True) -> float:
    """Sem of two texts as GRouge computes it for a model-gram ``text_a`` and a peer ``text_b``: Weighted
    Overlap of the mean PPR vectors of their aligned senses (OOV words on top); NaN when ``text_a`` has no
    content word (GRouge never uses Sem there).

    Examples
    --------
    >>> sim = similarity("it is raining heavily", "it is pouring")
    >>> 0 < sim <= 1
    True
    >>> similarity("it is", "it is")
    nan
    """
    opts = options if options is not None else GRougeOptions()
    store = _store(*opts.vector_key, cache=cache)
    lex = _Lexicon(store.wn)
    a, b = lex.ids(_words(text_a)), lex.ids(_words(text_b))
    gram = np.asarray([a if a else [-1]], np.int64)
    engine = _Engine(store, lex, align=opts.align, align_topk=opts.align_topk)
    return float(engine.sems(a, [(b, gram)])[0][0])


def sense_nodes(texts, *, options: GRougeOptions | None = None) -> np.ndarray:
    """The WordNet nodes whose PPR vectors GRouge needs to score ``texts`` (a list of texts, each a string or
    a list of sentences): every sense of every content word, sorted (stopwords never enter a signature).

    Examples
    --------
    >>> nodes = sense_nodes(["The police arrested the man.", "A car was seized."])
    >>> len(nodes) > 0 and bool((nodes[1:] > nodes[:-1]).all())
    True
    >>> sense_nodes(["the of and"]).size
    0
    """
    opts = options if options is not None else GRougeOptions()
    lex = _Lexicon(_store(*opts.vector_key, cache=False).wn)
    found: set[int] = set()
    for k, text in enumerate(texts):
        words = [w for s in as_sentences(text, f"texts[{k}]") for w in tokenize(s)]
        found.update(s for w in lex.ids(words) for s in lex.senses[w])
    return np.asarray(sorted(found), np.int64)

