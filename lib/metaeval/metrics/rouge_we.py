"""ROUGE-WE: ROUGE whose exact gram matches are replaced by soft matches of word embeddings.

The counting kernels behind :func:`metaeval.embeddings.score`'s ``rouge-we-*`` and ``rouge-wepos-*`` variants
(options and signatures are documented there). Two rules:

``summeval`` (``rouge-we-N``, ``rouge-we-suK``): SummEval's ``rouge_n_we`` (Fabbri et al., 2021;
``summ_eval/s3_utils.py``, taken from UKPLab's ``emnlp-ws-2017-s3``, Peyrard et al. 2017), the definition
behind the ROUGE-WE numbers most papers quote:

* a gram's vector is the **sum** of its words' vectors; the similarity of two grams is the cosine of their
  vectors (``1 - scipy.spatial.distance.cosine``), 1 for identical grams; a gram and its word-order
  permutations have the same vector, so their similarities to any gram tie exactly (summed here in a fixed
  word order, so that the tie does not depend on the last bits); a gram with a word that has no
  vector matches only an identical gram (and a reference gram with such a word matches only an identical
  summary gram);
* for each reference, the summary's distinct grams are visited in order of first occurrence; each is matched
  to its **closest** reference gram among those with a count left (the first in order of first occurrence
  on ties); if that similarity is >= the threshold (0.8 in SummEval), the credit is the clipped count
  ``min(count in summary, count left in reference)`` and the reference gram's count is reduced by it;
* hits are summed over references; ``R = hits / reference grams``, ``P = hits / (references x summary
  grams)``, ``F = P R / (0.5 P + 0.5 R)`` (0 when a denominator is 0), SummEval's ``_safe_f1``.

SummEval has no skip-bigram variant; ``rouge-we-suK`` applies the same rule to ROUGE-SU's grams (skip-bigrams
with up to K words in between, plus the unigrams of ROUGE-1.5.5's SU count), a skip-bigram only ever matched
to a skip-bigram and a unigram to a unigram (as in exact ROUGE-SU, where they never coincide). With
one-hot vectors (no two distinct words similar) every rule reduces to ROUGE's clipped counts.

``positional`` (``rouge-wepos-N``, ``rouge-wepos-suK``): the design metaeval shipped before as
"ROUGE-WE": the similarity of two grams is the product of the clipped cosine similarities of their words at
the same positions, occurrences are matched one-to-one greedily by decreasing similarity, and the credit of
a match is its similarity (not a count). It is neither Ng & Abrecht's (2015) nor SummEval's definition; on
100 SummEval pairs it gives about half SummEval's ROUGE-WE-2 recall. Kept, under its own name, for
comparison with earlier outputs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np

from metaeval.metrics.rouge._counts import _skip_totals

__all__ = ["RULES", "gram_totals", "positional_hits", "soft_hits"]

RULES = ("summeval", "positional")


# ----------------------------------------------------------------------------------------------------
# SummEval's rule


def _grams(ids: Sequence[int], n: int, skip: int) -> list[list[tuple[int, ...]]]:
    """The gram families of one text: [n-grams] for n > 0; [skip-bigrams, SU unigrams] for SU."""
    L = len(ids)
    if n > 0:
        return [[tuple(ids[i : i + n]) for i in range(L - n + 1)]]
    gap = skip + 1
    pairs: list[tuple[int, ...]] = [(ids[i], ids[i + d]) for i in range(L) for d in range(1, gap + 1) if i + d < L]
    # ROUGE-1.5.5 counts SU's unigrams over every token but the last of the text
    unigrams: list[tuple[int, ...]] = [(ids[i],) for i in range(L - 1)] if L > 1 else []
    return [pairs, unigrams]


class _Family:
    """The distinct grams of every text for one gram family: words, counts, identities, squared norms."""

    def __init__(self, per_text: list[list[tuple[int, ...]]], width: int, oov: np.ndarray, vec: np.ndarray):
        ids: dict[tuple[int, ...], int] = {}
        glob, counts, gid, off = [], [], [], [0]
        for grams in per_text:
            seen: dict[tuple[int, ...], int] = {}
            for g in grams:
                seen[g] = seen.get(g, 0) + 1  # dict order = order of first occurrence, as collections.Counter
            for g, c in seen.items():
                glob.append(g)
                counts.append(c)
                gid.append(ids.setdefault(g, len(ids)))
            off.append(len(glob))
        self.off = np.asarray(off, np.int64)
        self.count = np.asarray(counts, np.int64)
        self.id = np.asarray(gid, np.int64)
        # rows of vec, each gram's words in increasing order: the sums below (the gram's vector, its dot
        # products) then add the same numbers in the same order for a gram and its permutations ("he is" /
        # "is he"), so their similarities tie exactly as SummEval's summed vectors do and the first in counter
        # order wins; in gram order the two cosines differed in the last bits and the other one won
        self.words = np.sort(np.asarray(glob, np.int64).reshape(len(glob), width), axis=1)
        self.oov = np.asarray(oov[self.words].any(axis=1) if len(glob) else np.zeros(0, bool), dtype=bool)
        summed = vec[self.words].sum(axis=1) if len(glob) else np.zeros((0, vec.shape[1]))
        self.norm2 = np.einsum("ij,ij->i", summed, summed)


@numba.njit(cache=True)
def _closest_greedy(D, p_words, m_words, starts, p_count, p_id, p_oov, p_norm2, m_count, m_id, m_oov, m_norm2,
                    thr):  # pragma: no cover - compiled
    """SummEval's ``_soft_overlap`` for each summary (gram rows starts[k]:starts[k+1]) against one reference.

    ``D`` holds the dot products of the summaries' words (rows) with the reference's words (columns); the
    dot product of two grams' summed vectors is the sum of their words' entries (width^2 look-ups instead of
    a d-dimensional product per gram pair: skip-bigrams are many)."""
    width = p_words.shape[1]
    n = starts.shape[0] - 1
    out = np.zeros(n)
    for k in range(n):
        left = m_count.copy()
        hits = 0
        for i in range(starts[k], starts[k + 1]):
            best = -1
            best_sim = -np.inf
            for j in range(m_count.shape[0]):
                if left[j] <= 0:
                    continue  # SummEval deletes a reference gram whose count is used up
                if p_id[i] == m_id[j]:
                    sim = 1.0
                elif p_oov[i] or m_oov[j]:
                    sim = 0.0  # a gram with a word without a vector matches only an identical gram
                else:
                    uv = 0.0
                    for a in range(width):
                        for b in range(width):
                            uv += D[p_words[i, a], m_words[j, b]]
                    den = np.sqrt(p_norm2[i] * m_norm2[j])
                    # 1 - scipy's cosine distance (clipped to [0, 2]); a zero vector has no direction: 0
                    sim = 1.0 - min(max(1.0 - uv / den, 0.0), 2.0) if den > 0.0 else 0.0
                if sim > best_sim:  # strict: the first of equal similarities wins, as SummEval's stable sort
                    best_sim = sim
                    best = j
            if best < 0 or best_sim < thr:
                continue
            v = p_count[i]
            c = left[best]
            if c <= v:
                left[best] = 0
                hits += c
            else:
                left[best] = c - v
                hits += v
        out[k] = hits
    return out


def soft_hits(token_ids: list[list[int]], oov: np.ndarray, vec: np.ndarray, pair_peer: np.ndarray,
              pair_ref: np.ndarray, grams: Sequence[tuple[int, int]], thresholds: Sequence[float]) -> np.ndarray:
    """Soft hits of every (summary, reference) pair under SummEval's rule, one column per gram kind.

    Parameters
    ----------
    token_ids : list of lists of int
        Each text's tokens as rows of ``vec``.
    oov : bool array (W,)
        Rows without a vector (their rows of ``vec`` are ignored).
    vec : float64 array (W, d)
        Word vectors.
    pair_peer, pair_ref : int arrays
        Text index of the summary and of the reference of each pair.
    grams : sequence of (n, skip)
        (n, 0) for ROUGE-N grams, (0, K) for ROUGE-SUK.
    thresholds : sequence of float
        The similarity threshold of each gram kind.

    Examples
    --------
    >>> vec = np.array([[1.0, 0.0], [0.96, 0.28], [0.0, 1.0]])  # cat, dog (cos 0.96), sat
    >>> soft_hits([[0, 2], [1, 2]], np.zeros(3, bool), vec, np.array([0]), np.array([1]), [(1, 0), (2, 0)],
    ...           [0.8, 0.8]).tolist()
    [[2.0, 1.0]]
    """
    vec = np.asarray(vec, dtype=np.float64)
    pair_peer = np.asarray(pair_peer, np.int64)
    pair_ref = np.asarray(pair_ref, np.int64)
    out = np.zeros((len(pair_peer), len(grams)))
    order = np.argsort(pair_ref, kind="stable")
    groups = np.split(order, np.flatnonzero(np.diff(pair_ref[order])) + 1) if len(order) else []
    for m, ((n, skip), thr) in enumerate(zip(grams, thresholds)):
        per_text = [_grams(ids, n, skip) for ids in token_ids]
        for f in range(len(per_text[0]) if per_text else 0):
            fam = _Family([fams[f] for fams in per_text], n if n > 0 else 2 - f, oov, vec)
            for ks in groups:
                ref = int(pair_ref[ks[0]])
                cols = slice(fam.off[ref], fam.off[ref + 1])
                if cols.stop == cols.start:
                    continue
                peers = pair_peer[ks]
                rows = np.concatenate([np.arange(fam.off[p], fam.off[p + 1]) for p in peers])
                starts = np.concatenate([[0], np.cumsum(fam.off[peers + 1] - fam.off[peers])])
                # one product of word vectors per reference for all its summaries (they share it)
                p_vocab, p_words = np.unique(fam.words[rows], return_inverse=True)
                m_vocab, m_words = np.unique(fam.words[cols], return_inverse=True)
                D = vec[p_vocab] @ vec[m_vocab].T
                w = fam.words.shape[1]
                out[ks, m] += _closest_greedy(D, p_words.reshape(-1, w), m_words.reshape(-1, w), starts,
                                              fam.count[rows], fam.id[rows], fam.oov[rows], fam.norm2[rows],
                                              fam.count[cols], fam.id[cols], fam.oov[cols], fam.norm2[cols], float(thr))
    return out


def gram_totals(lengths: np.ndarray, n: int, skip: int) -> np.ndarray:
    """ROUGE-1.5.5's gram count of a text of each length: n-grams, or SU's skip-bigrams plus unigrams.

    Examples
    --------
    >>> gram_totals(np.array([0, 1, 4]), 2, 0).tolist(), gram_totals(np.array([0, 1, 4]), 0, 4).tolist()
    ([0.0, 0.0, 3.0], [0.0, 0.0, 9.0])
    """
    if n > 0:
        return np.maximum(lengths - n + 1, 0).astype(float)
    return _skip_totals(np.asarray(lengths), skip, True).astype(float)


# ----------------------------------------------------------------------------------------------------
# The positional-product rule (metaeval's earlier design)


@numba.njit(cache=True)
def _greedy(ei, ej, es, n_i, n_j):  # pragma: no cover - compiled
    """One-to-one matching of occurrences, greedily by decreasing similarity (stable: text order)."""
    if es.shape[0] == 0:
        return 0.0
    order = np.argsort(-es, kind="mergesort")
    used_i = np.zeros(n_i, np.bool_)
    used_j = np.zeros(n_j, np.bool_)
    hit = 0.0
    for o in order:
        a, b = ei[o], ej[o]
        if not used_i[a] and not used_j[b]:
            used_i[a] = True
            used_j[b] = True
            hit += es[o]
    return hit


@numba.njit(cache=True)
def _soft_hits(S, offs, thr):  # pragma: no cover - compiled
    """Soft hits of one text pair under the positional-product rule, for one gram kind given by ``offs``: a
    gram starting at token i in its kind's variant v is the tokens ``i + offs[v, t]`` (n-grams: one variant,
    offsets 0..n-1; skip-bigrams at distance d <= gap: variant d - 1, offsets (0, d)). An occurrence pair's
    similarity is the product of its tokens' similarities ``S`` (stopping below ``thr``); pairs at or above
    ``thr`` are matched one to one by :func:`_greedy`, enumerated by (peer start, reference start, peer
    variant, reference variant), the order that breaks its ties. Occurrence id: start * variants + variant."""
    Lp, Lm = S.shape
    V, n = offs.shape
    last = offs[:, n - 1]
    count = 0
    for phase in range(2):  # count, then fill arrays of the right size
        if phase == 1:
            ei = np.empty(count, np.int64)
            ej = np.empty(count, np.int64)
            es = np.empty(count, np.float64)
            count = 0
        for i in range(Lp):
            for j in range(Lm):
                s0 = S[i, j]
                if s0 < thr:
                    continue
                for v in range(V):
                    if i + last[v] >= Lp:
                        break
                    for w in range(V):
                        if j + last[w] >= Lm:
                            break
                        s = s0
                        for t in range(1, n):
                            s *= S[i + offs[v, t], j + offs[w, t]]
                            if s < thr:
                                break
                        if s >= thr:
                            if phase == 1:
                                ei[count] = i * V + v
                                ej[count] = j * V + w
                                es[count] = s
                            count += 1
    return _greedy(ei, ej, es, max(Lp, 1) * V, max(Lm, 1) * V)


@numba.njit(cache=True)
def _ngram_offsets(n):  # pragma: no cover - compiled
    offs = np.empty((1, n), np.int64)
    for t in range(n):
        offs[0, t] = t
    return offs


@numba.njit(cache=True)
def _skip_offsets(gap):  # pragma: no cover - compiled
    offs = np.zeros((gap, 2), np.int64)
    for d in range(1, gap + 1):
        offs[d - 1, 1] = d
    return offs


@numba.njit(cache=True)
def _positional_pairs(pair_peer, pair_ref, tok, off, unit, ns, gaps, thr):  # pragma: no cover - compiled
    """Soft hits of every (summary, reference) pair for every gram kind (ns[m] > 0: n-grams; else SU-gap)."""
    n_pairs = pair_peer.shape[0]
    n_meas = ns.shape[0]
    dim = unit.shape[1]
    out = np.zeros((n_pairs, n_meas))
    for k in range(n_pairs):
        p0, p1 = off[pair_peer[k]], off[pair_peer[k] + 1]
        m0, m1 = off[pair_ref[k]], off[pair_ref[k] + 1]
        Lp, Lm = p1 - p0, m1 - m0
        S = np.zeros((Lp, Lm))
        for i in range(Lp):
            a = tok[p0 + i]
            for j in range(Lm):
                b = tok[m0 + j]
                if a == b:
                    S[i, j] = 1.0
                else:
                    s = 0.0
                    for t in range(dim):
                        s += unit[a, t] * unit[b, t]
                    S[i, j] = min(max(s, 0.0), 1.0)
        for m in range(n_meas):
            if ns[m] > 0:
                out[k, m] = _soft_hits(S, _ngram_offsets(ns[m]), thr[m])
            else:
                hits = _soft_hits(S, _skip_offsets(gaps[m]), thr[m])
                if Lp > 1 and Lm > 1:
                    # SU's unigrams: every token but the last of its text (ROUGE-1.5.5's loop bound)
                    hits += _soft_hits(S[: Lp - 1, : Lm - 1], _ngram_offsets(1), thr[m])
                out[k, m] = hits
    return out


def positional_hits(token_ids: list[list[int]], oov: np.ndarray, vec: np.ndarray, pair_peer: np.ndarray,
                    pair_ref: np.ndarray, grams: Sequence[tuple[int, int]],
                    thresholds: Sequence[float]) -> np.ndarray:
    """Soft hits under the positional-product rule (arguments as :func:`soft_hits`).

    Examples
    --------
    >>> vec = np.array([[1.0, 0.0], [0.96, 0.28], [0.0, 1.0]])  # cat, dog (cos 0.96), sat
    >>> positional_hits([[0, 2], [1, 2]], np.zeros(3, bool), vec, np.array([0]), np.array([1]),
    ...                 [(1, 0), (2, 0)], [0.8, 0.8]).round(2).tolist()
    [[1.96, 0.96]]
    """
    lengths = np.array([len(t) for t in token_ids], dtype=np.int64)
    off = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    tok = np.array([w for ids in token_ids for w in ids], dtype=np.int64)
    norms = np.linalg.norm(vec, axis=1)
    ok = ~oov & (norms > 0)
    unit = np.zeros_like(vec, dtype=np.float64)
    unit[ok] = vec[ok] / norms[ok, None]
    ns = np.array([g[0] for g in grams], dtype=np.int64)
    gaps = np.array([g[1] + 1 for g in grams], dtype=np.int64)
    return _positional_pairs(pair_peer, pair_ref, tok, off, unit, ns, gaps, np.asarray(thresholds, dtype=np.float64))
