"""Private: word mover's distances, the six relaxed ones (Kusner et al., 2015) and the exact one (POT)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from metaeval.metrics.embeddings._records import _records, _Records, _token_lists
from metaeval.metrics.embeddings._variants import _WMD_NAMES
from metaeval.metrics.embeddings._vectors import DEFAULT_EMBEDDINGS, Embeddings, load


def _nbow(token_lists: Sequence[Sequence[str]], emb: Embeddings) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per text: embedding rows of its distinct in-vocabulary words and their normalized counts."""
    out = []
    for tokens in token_lists:
        rows = emb.rows(tokens)
        rows = rows[rows >= 0]
        if rows.size == 0:
            out.append((rows, np.zeros(0)))
            continue
        uniq, counts = np.unique(rows, return_counts=True)
        out.append((uniq, counts / counts.sum()))
    return out


def _wmd_pairs(rec: _Records, emb: Embeddings, stop: bool, names: set[str], progress: bool):
    """Per (record, reference) pair: the requested word mover's distances (positive distances)."""
    from scipy.spatial.distance import cdist
    from tqdm import tqdm

    bows = _nbow(_token_lists(rec.texts, False, stop), emb)
    n_pairs = rec.pair_rec.shape[0]
    out = {name: np.full(n_pairs, np.nan) for name in names}
    pair_peer = rec.peer[rec.pair_rec]
    need_c = any(n.endswith("-c") for n in names)
    need_exact = "wmd" in names
    if need_exact:
        import ot
    order = np.argsort(rec.pair_ref, kind="stable")
    bounds = np.flatnonzero(np.diff(rec.pair_ref[order])) + 1
    groups = np.split(order, bounds) if n_pairs else []
    vectors = emb.vectors
    for ks in tqdm(groups, desc="word mover's distances", unit="reference", disable=not progress):
        ref_rows, ref_w = bows[rec.pair_ref[ks[0]]]
        if ref_rows.size == 0:
            continue
        ks = np.array([k for k in ks if bows[pair_peer[k]][0].size > 0], dtype=np.int64)
        if ks.size == 0:
            continue
        peers = [bows[pair_peer[k]] for k in ks]
        # One distance block per reference for the union of its summaries' words (the summaries of one
        # input share their references, so this is one cdist per reference instead of one per pair).
        all_rows = np.concatenate([p[0] for p in peers])
        urows, inverse = np.unique(all_rows, return_inverse=True)
        R = vectors[ref_rows].astype(np.float64)
        U = vectors[urows].astype(np.float64)
        D_e = cdist(U, R, "euclidean")
        D_e[urows[:, None] == ref_rows[None, :]] = 0.0
        lengths = np.array([p[0].size for p in peers])
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        seg = np.repeat(np.arange(ks.size), lengths)
        w_all = np.concatenate([p[1] for p in peers])
        blocks = [("e", D_e)]
        if need_c:
            D_c = np.clip(cdist(U, R, "cosine"), 0.0, 2.0)
            D_c[urows[:, None] == ref_rows[None, :]] = 0.0
            blocks.append(("c", D_c))
        for tag, D in blocks:
            Dp = D[inverse]  # rows of every summary word, summaries concatenated
            left = np.bincount(seg, weights=w_all * Dp.min(axis=1), minlength=ks.size)
            # a row-wise sum rather than a BLAS matrix-vector product, whose summation order can depend on the
            # arrays' memory alignment (a last-bit difference between runs that reached the learned metrics)
            right = (np.minimum.reduceat(Dp, starts, axis=0) * ref_w).sum(axis=1)
            for side, values in (("l", left), ("r", right), ("m", np.maximum(left, right))):
                name = f"rwmd-{side}-{tag}"
                if name in out:
                    out[name][ks] = values
            if tag == "e" and need_exact:
                for i, k in enumerate(ks):
                    sub = Dp[starts[i] : starts[i] + lengths[i]]
                    out["wmd"][k] = float(ot.emd2(peers[i][1], ref_w, sub))
    return out, np.array([b[0].size == 0 for b in bows])


def word_movers(summaries: Sequence, references: Sequence, *,
                embeddings: str | os.PathLike[str] | Embeddings = DEFAULT_EMBEDDINGS,
                stop: bool = True) -> pd.DataFrame:
    """Word mover's distances (positive, not negated) of every (summary, reference) pair.

    One row per pair (``record``, ``reference`` = position in the record's list), columns ``rwmd-l-e`` ...
    ``rwmd-m-c`` and ``wmd``. :func:`score` reports the negated mean over each record's references.

    Examples
    --------
    >>> e = Embeddings.from_dict({"cat": [0.0, 0.0], "dog": [3.0, 4.0]}, name="toy")
    >>> word_movers(["cat"], [["cat dog"]], embeddings=e)[["rwmd-l-e", "rwmd-r-e", "wmd"]].round(3).values.tolist()
    [[0.0, 2.5, 2.5]]
    """
    rec = _records(summaries, references)
    emb = load(embeddings)
    values, _ = _wmd_pairs(rec, emb, stop, set(_WMD_NAMES), False)
    position = np.arange(rec.pair_rec.size) - np.repeat(np.cumsum(rec.n_refs) - rec.n_refs, rec.n_refs)
    frame = pd.DataFrame({"record": rec.pair_rec, "reference": position})
    for name in _WMD_NAMES:
        frame[name] = values[name]
    return frame
