"""Private: (summary, references) records as distinct texts and index arrays, shared by every embedding metric."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Sequence

import numpy as np

from metaeval.metrics._inputs import check_records
from metaeval.metrics.text import process_tokens, tokenize


def _as_text(text: Any, where: str) -> str:
    if text is None:
        return ""
    if isinstance(text, str):
        return text
    if isinstance(text, (list, tuple)) and all(isinstance(s, str) for s in text):
        return "\n".join(text)
    raise TypeError(f"{where} must be a string or a list of sentence strings, got {type(text).__name__}")


@dataclass
class _Records:
    texts: list[str]  # distinct texts
    peer: np.ndarray  # per record: text id of its summary
    pair_rec: np.ndarray  # per (record, reference) pair
    pair_ref: np.ndarray
    n_refs: np.ndarray


def _records(summaries: Sequence, references: Sequence) -> _Records:
    summaries, references = check_records(summaries, references)
    index: dict[str, int] = {}
    texts: list[str] = []

    def intern(t: str) -> int:
        if t not in index:
            index[t] = len(texts)
            texts.append(t)
        return index[t]

    peer = np.empty(len(summaries), np.int64)
    pair_rec, pair_ref = [], []
    for r, (s, refs) in enumerate(zip(summaries, references)):
        peer[r] = intern(_as_text(s, f"summaries[{r}]"))
        for q, ref in enumerate(refs):
            pair_rec.append(r)
            pair_ref.append(intern(_as_text(ref, f"references[{r}][{q}]")))
    rec = np.asarray(pair_rec, np.int64)
    return _Records(texts, peer, rec, np.asarray(pair_ref, np.int64), np.bincount(rec, minlength=len(summaries)))


def _token_lists(texts: Sequence[str], stem: bool, stop: bool) -> list[list[str]]:
    return [process_tokens(tokenize(t), stem=stem, stop=stop) for t in texts]


def _mean_over_refs(values: np.ndarray, rec: _Records) -> np.ndarray:
    """Mean over each record's references; NaN if a record has none or any of its values is NaN."""
    n = rec.peer.shape[0]
    total = np.bincount(rec.pair_rec, weights=values, minlength=n)
    return np.where(rec.n_refs > 0, total / np.maximum(rec.n_refs, 1), np.nan)
