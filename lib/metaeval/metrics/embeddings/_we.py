"""Private: ROUGE-WE on records (tokens, gram vectors, hits to P / R / F); kernels: :mod:`metaeval.metrics.rouge_we`."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from metaeval.metrics.embeddings._records import _Records, _token_lists
from metaeval.metrics.embeddings._variants import EmbeddingVariant
from metaeval.metrics.embeddings._vectors import Embeddings
from metaeval.metrics.rouge_we import gram_totals, positional_hits, soft_hits


_SUMMEVAL_TOKEN = re.compile(r"\w+")


def _we_token_lists(texts: Sequence[str], tok: str, stem: bool, stop: bool) -> list[list[str]]:
    if tok == "summeval":
        # SummEval's tokenization: nltk's RegexpTokenizer(r"\w+") (Unicode word characters), lower-cased
        return [[w.lower() for w in _SUMMEVAL_TOKEN.findall(t)] for t in texts]
    return _token_lists(texts, stem, stop)


def _rouge_we(rec: _Records, emb: Embeddings, variants: list[EmbeddingVariant], tok: str, stem: bool, stop: bool,
              rule: str):
    token_lists = _we_token_lists(rec.texts, tok, stem, stop)
    vocab: dict[str, int] = {}
    token_ids = [[vocab.setdefault(w, len(vocab)) for w in tokens] for tokens in token_lists]
    lengths = np.array([len(t) for t in token_lists], dtype=np.int64)
    rows = emb.rows(list(vocab))
    oov = rows < 0
    vec = np.zeros((max(len(vocab), 1), emb.dim))
    vec[np.flatnonzero(~oov)] = emb.vectors[rows[~oov]].astype(np.float64)
    oov = np.concatenate([oov, np.zeros(vec.shape[0] - oov.size, bool)])
    grams = sorted({(v.gram, v.threshold) for v in variants})
    kernel = soft_hits if rule == "summeval" else positional_hits
    hits = kernel(token_ids, oov, vec, rec.peer[rec.pair_rec], rec.pair_ref, [g[0] for g in grams],
                  [g[1] for g in grams])
    n_rec = rec.peer.shape[0]
    out = {}
    for v in variants:
        m = grams.index((v.gram, v.threshold))
        totals = gram_totals(lengths, *v.gram)
        hit = np.bincount(rec.pair_rec, weights=hits[:, m], minlength=n_rec)
        model = np.bincount(rec.pair_rec, weights=totals[rec.pair_ref], minlength=n_rec)
        peer = rec.n_refs * totals[rec.peer]
        R = np.where(model > 0, hit / np.where(model > 0, model, 1), 0.0)
        P = np.where(peer > 0, hit / np.where(peer > 0, peer, 1), 0.0)
        # SummEval's _safe_f1 with alpha = 0.5: P R / (0.5 P + 0.5 R), 0 when both are 0
        F = np.where(P + R > 0, P * R / np.where(P + R > 0, 0.5 * P + 0.5 * R, 1), 0.0)
        values = {"P": P, "R": R, "F": F}[v.stat]
        out[v] = np.where(rec.n_refs > 0, values, np.nan)
    return out
