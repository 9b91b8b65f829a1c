"""metaeval.metrics.bleu extracts each reference set's n-grams once: scores equal sacrebleu's public API."""

from __future__ import annotations

import numpy as np
from metaeval.metrics import bleu as B
from sacrebleu.metrics import BLEU


def test_cached_reference_ngrams_give_sacrebleus_scores():
    refs_a = ["the cat sat on the mat .", "a cat was sitting on the mat"]
    refs_b = ["Stocks fell sharply on Monday", "markets dropped on monday ."]
    hyps = ["the cat sat on a mat", "stocks fell on monday", "the mat .", "Markets fell sharply"]
    refs = [refs_a, refs_b, refs_a, refs_b]
    sentence = BLEU(tokenize="none", lowercase=True, effective_order=True, force=True)
    expected = [sentence.sentence_score(h, r).score for h, r in zip(hyps, refs)]
    np.testing.assert_array_equal(B.sentence_bleu(hyps, refs), expected)
    np.testing.assert_array_equal(B.sentence_bleu(hyps, refs), expected)  # second call: from the cache
    corpus = BLEU(tokenize="none", lowercase=True, effective_order=False, force=True)
    streams = [list(s) for s in zip(*refs)]
    assert B.system_bleu(hyps, refs) == corpus.corpus_score(hyps, streams).score
    # a different reference set under the same hypotheses changes the score (the cache is keyed by references)
    assert B.sentence_bleu(hyps[:1], [refs_b])[0] != expected[0]
    assert 0 < expected[0] < 100
