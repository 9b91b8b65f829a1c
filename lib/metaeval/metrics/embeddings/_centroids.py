"""Private: TF-IDF centroids (the paper's Eq. 3), CENT-C / CENT-E and the centroid differences of S-/M-CENT."""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np

from metaeval.metrics.embeddings._records import _as_text, _mean_over_refs, _records, _Records, _token_lists
from metaeval.metrics.embeddings._vectors import DEFAULT_EMBEDDINGS, Embeddings, load


def idf_weights(token_lists: Sequence[Sequence[str]]) -> dict[str, float]:
    """``IDF(w) = log(T / df(w))`` over T texts (Manning et al., 2008), ``df`` = texts containing w.

    Examples
    --------
    >>> w = idf_weights([["a", "b"], ["a", "c"], ["a", "b", "b"]])
    >>> round(w["a"], 4), round(w["b"], 4), round(w["c"], 4)
    (0.0, 0.4055, 1.0986)
    """
    df: dict[str, int] = defaultdict(int)
    for tokens in token_lists:
        for w in set(tokens):
            df[w] += 1
    T = len(token_lists)
    return {w: math.log(T / d) for w, d in df.items()}


def _centroid_matrix(token_lists: Sequence[Sequence[str]], emb: Embeddings, idf: Mapping[str, float]) -> np.ndarray:
    """(T, d) float64 centroids; NaN rows where no word has a vector and a positive TF-IDF weight."""
    from scipy import sparse

    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    for t, tokens in enumerate(token_lists):
        for w in tokens:
            j = vocab.setdefault(w, len(vocab))
            rows.append(t)
            cols.append(j)
            vals.append(1.0)
    words = list(vocab)
    emb_rows = emb.rows(words)
    weight = np.array([idf.get(w, 0.0) for w in words], dtype=float) * (emb_rows >= 0)
    tf = sparse.csr_matrix((vals, (rows, cols)), shape=(len(token_lists), len(words)))  # duplicates summed
    W = tf.multiply(weight[None, :]).tocsr()
    V = np.zeros((len(words), emb.dim))
    ok = emb_rows >= 0
    V[ok] = emb.vectors[emb_rows[ok]]
    num = np.asarray(W @ V)
    den = np.asarray(W.sum(axis=1)).ravel()
    return np.where(den[:, None] > 0, num / np.where(den > 0, den, 1.0)[:, None], np.nan)


def centroids(texts: Sequence, *, embeddings: str | os.PathLike[str] | Embeddings = DEFAULT_EMBEDDINGS,
              stop: bool = True, idf: Mapping[str, float] | None = None) -> np.ndarray:
    """TF-IDF-weighted centroid of each text's word vectors (the paper's Eq. 3), an array (T, d).

    ``idf`` defaults to :func:`idf_weights` over the distinct texts given. A text none of whose words has a
    vector and a positive weight gets a NaN row.

    Examples
    --------
    >>> e = Embeddings.from_dict({"cat": [1.0, 0.0], "dog": [0.0, 1.0]}, name="toy")
    >>> centroids(["cat cat dog", "dog"], embeddings=e, idf={"cat": 2.0, "dog": 1.0}).tolist()
    [[0.8, 0.2], [0.0, 1.0]]
    """
    emb = load(embeddings)
    texts = [_as_text(t, f"texts[{i}]") for i, t in enumerate(texts)]
    tokens = _token_lists(texts, False, stop)
    if idf is None:
        distinct = list(dict.fromkeys(texts))
        idf = idf_weights(_token_lists(distinct, False, stop))
    return _centroid_matrix(tokens, emb, idf)


def centroid_difference(summaries: Sequence, references: Sequence, *,
                        embeddings: str | os.PathLike[str] | Embeddings = DEFAULT_EMBEDDINGS,
                        stop: bool = True) -> np.ndarray:
    """Reference centroid minus summary centroid per record (mean over references), array (n, d).

    The input of the paper's S-CENT / M-CENT networks. IDF as in :func:`score` (over the distinct texts).
    """
    rec = _records(summaries, references)
    emb = load(embeddings)
    tokens = _token_lists(rec.texts, False, stop)
    C = _centroid_matrix(tokens, emb, idf_weights(tokens))
    diff = C[rec.pair_ref] - C[rec.peer[rec.pair_rec]]
    return np.stack([_mean_over_refs(diff[:, k], rec) for k in range(emb.dim)], axis=1)


def _cent_scores(rec: _Records, emb: Embeddings, stop: bool) -> tuple[dict[str, np.ndarray], np.ndarray]:
    tokens = _token_lists(rec.texts, False, stop)
    C = _centroid_matrix(tokens, emb, idf_weights(tokens))
    a, b = C[rec.peer[rec.pair_rec]], C[rec.pair_ref]
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    euc = -np.linalg.norm(a - b, axis=1)
    undefined = np.isnan(C).any(axis=1)
    return {"cent-c": _mean_over_refs(cos, rec), "cent-e": _mean_over_refs(euc, rec)}, undefined
