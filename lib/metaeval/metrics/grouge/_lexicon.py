"""Words for GRouge's semantic part: global word ids, their WordNet senses, OOV dimensions, stopwords."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from metaeval.metrics.text import stopwords, tokenize


class _Lexicon:
    """Global word ids for unstemmed tokens, with, per word, its senses (WordNet nodes in WordNet's sense
    order), its OOV dimension and whether it is a stopword.

    * a stopword (ROUGE's SMART list, :func:`metaeval.metrics.text.stopwords`) never enters a signature:
      no senses, no OOV dimension (ADW's ``discardStopWords=TRUE``);
    * a content word with senses is "in vocabulary";
    * a content word without senses is OOV: it gets its own dimension ``n_nodes + k`` (the paper's OOV
      rule, after Pilehvar & Navigli 2015).
    """

    def __init__(self, wn):
        self.wn = wn
        self.stop = stopwords()
        self.word_id: dict[str, int] = {}
        self.words: list[str] = []
        self.senses: list[tuple[int, ...]] = []
        self.oov_dim: list[int] = []
        self.is_stop: list[bool] = []
        self.n_oov = 0

    def ids(self, tokens: Sequence[str]) -> list[int]:
        out = []
        for t in tokens:
            k = self.word_id.get(t)
            if k is None:
                k = len(self.words)
                self.word_id[t] = k
                self.words.append(t)
                stop = t in self.stop
                nodes = () if stop else tuple(s.node for s in self.wn.senses(t))
                self.is_stop.append(stop)
                self.senses.append(nodes)
                if nodes or stop:
                    self.oov_dim.append(-1)
                else:
                    self.oov_dim.append(self.wn.n_nodes + self.n_oov)
                    self.n_oov += 1
            out.append(k)
        return out


def _oov_ranked(lex: _Lexicon, word_ids: Sequence[int]) -> np.ndarray:
    """OOV dimensions of a text in rank order: by count, then alphabetically."""
    counts = Counter(w for w in word_ids if lex.oov_dim[w] >= 0)
    order = sorted(counts, key=lambda w: (-counts[w], lex.words[w]))
    return np.asarray([lex.oov_dim[w] for w in order], np.int64)


def _words(text) -> list[str]:
    if isinstance(text, str):
        return tokenize(text)
    if isinstance(text, (list, tuple)) and all(isinstance(t, str) for t in text):
        return [w for t in text for w in tokenize(t)]
    raise TypeError(f"expected a string or a list of strings, got {type(text).__name__}")
