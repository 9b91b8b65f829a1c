"""ROUGE-WE (SummEval's rule) ties a gram and its word-order permutations exactly, as SummEval does.

SummEval (Yale-LILY/SummEval, commit 81b59ad53d63cb6009764240853c91235a44e238, MIT licence;
``evaluation/summ_eval/s3_utils.py``: ``_get_embedding``, ``_find_closest``, ``_soft_overlap``) sums a gram's
word vectors, so "he is" and "is he" have one vector and the same cosine to any summary gram; its stable sort then
picks the first of the two in the reference's counter order. The reference below re-states that procedure on
token ids for comparison.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy import spatial

from metaeval.metrics.rouge_we import soft_hits

HE, IS, SHE, WAS, DOT = range(5)
# reference bigrams in counter order: (is, he) x1, (he, .), (., he), (he, is) x2, (is, .)
REFERENCE = [IS, HE, DOT, HE, IS, DOT, HE, IS]
# summary bigrams: (she, was) x2, (was, she) x1; she ~ he and was ~ is
SUMMARY = [SHE, WAS, SHE, WAS]


def _vectors(seed):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(2, 300))
    return np.vstack([base[0], base[1], base[0] + 0.3 * rng.normal(size=300), base[1] + 0.3 * rng.normal(size=300),
                      rng.normal(size=300)])


def _summeval_hits(peer, ref, vec, n=2, threshold=0.8):
    def grams(tokens):
        return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))

    peer_counter, model_counter = grams(peer), grams(ref)
    result = 0
    for gram, v in peer_counter.items():
        if not model_counter:
            continue
        emb = vec[list(gram)].sum(axis=0)
        ranking = [(k, c, 1.0 if k == gram else 1 - spatial.distance.cosine(vec[list(k)].sum(axis=0), emb))
                   for k, c in model_counter.items()]
        closest, count, sim = sorted(ranking, key=lambda t: t[2], reverse=True)[0]
        if sim < threshold:
            continue
        if count <= v:
            del model_counter[closest]
            result += count
        else:
            model_counter[closest] -= v
            result += v
    return result


def _ours(vec):
    return soft_hits([SUMMARY, REFERENCE], np.zeros(len(vec), bool), vec, np.array([0]), np.array([1]), [(2, 0)],
                     [0.8])[0, 0]


@pytest.mark.parametrize("seed", [1, 6, 15, 17, 19])  # seeds where summing in gram order picked "he is"
def test_he_is_and_is_he_tie_and_the_first_in_counter_order_wins(seed):
    vec = _vectors(seed)
    # (she, was) x2 goes to (is, he), the first of the tied pair (count 1: 1 hit, deleted); (was, she) then to
    # (he, is) (count 2 > 1: 1 hit). Had (he, is) won first: 2 + 1 = 3 hits.
    assert _summeval_hits(SUMMARY, REFERENCE, vec) == 2
    assert _ours(vec) == 2.0


def test_agrees_with_summevals_procedure_on_many_vectors():
    assert all(_ours(_vectors(seed)) == _summeval_hits(SUMMARY, REFERENCE, _vectors(seed)) for seed in range(60))


def test_permuted_grams_have_bit_identical_similarity():
    # trigram permutations too (SummEval's own float sums of three vectors may differ there; ours never do)
    vec = _vectors(3)
    for ref in ([HE, IS, WAS, DOT, WAS, IS, HE], [WAS, HE, IS, DOT, IS, WAS, HE]):
        hits = soft_hits([[SHE, IS, WAS], ref], np.zeros(5, bool), vec, np.array([0]), np.array([1]), [(3, 0)], [0.5])
        assert hits[0, 0] == 1.0
