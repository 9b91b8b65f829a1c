"""Embedding metrics: GloVe loading, centroids, (relaxed) word mover's distances, ROUGE-WE."""

from __future__ import annotations

import gzip
import itertools
import json
import math
import struct
import warnings

import metaeval
import numpy as np
import pytest
from metaeval.embeddings import Embeddings, EmbeddingWarning, load, score, word_movers
from metaeval.metrics.text import process_tokens, tokenize

ROOT = metaeval._resources.project_root()


def toy(**vectors):
    return Embeddings.from_dict(vectors, name="toy")


@pytest.fixture(scope="module")
def summeval_sample():
    path = metaeval.datasets.data_dir() / "summeval" / "summeval_joined.jsonl"
    with open(path, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh][::53]
    return [r["summary"] for r in records], [r["references"][:3] for r in records]


# ----------------------------------------------------------------------------------------------------
# Loading


def test_glove_default_matches_stanford_file():
    glove = load()
    assert len(glove) == 400_000 and glove.dim == 50
    # Stanford's glove.6B.50d.txt, first line: "the 0.418 0.24968 -0.41242 0.1217 ..."
    np.testing.assert_allclose(glove["the"][:4], [0.418, 0.24968, -0.41242, 0.1217], rtol=0, atol=1e-6)
    assert glove.words[:3] == ("the", ",", ".")
    assert load("glove-6b-50d") is glove  # cached


def test_load_text_and_binary_files(tmp_path):
    words = ["cat", "dog", "emu"]
    vecs = np.array([[0.5, -1.25, 2.0], [1.0, 0.0, -0.5], [3.0, 4.0, 0.125]], dtype=np.float32)
    glove_txt = tmp_path / "vectors.txt"
    glove_txt.write_text("".join(f"{w} {' '.join(map(str, v))}\n" for w, v in zip(words, vecs)))
    w2v_txt = tmp_path / "w2v.vec"
    w2v_txt.write_text("3 3\n" + glove_txt.read_text())
    w2v_bin = tmp_path / "w2v.bin.gz"
    with gzip.open(w2v_bin, "wb") as fh:
        fh.write(b"3 3\n")
        for w, v in zip(words, vecs):
            fh.write(w.encode() + b" " + struct.pack("<3f", *v) + b"\n")
    for path, name in ((glove_txt, "vectors"), (w2v_txt, "w2v"), (w2v_bin, "w2v")):
        e = load(path)
        assert e.name == name and e.words == tuple(words)
        np.testing.assert_array_equal(e.vectors, vecs)
    frame = score(["cat dog"], [["emu"]], ["cent-c"], embeddings=glove_txt)
    assert frame.columns[0] == "cent-c|emb:vectors|dim:3|stop:yes|idf:texts|refs:mean"


def test_load_errors(tmp_path):
    with pytest.raises(ValueError, match="neither a known name"):
        load("no-such-embeddings")
    bad = tmp_path / "bad.txt"
    bad.write_text("cat 1 2\ndog 1\n")
    with pytest.raises(ValueError, match="bad.txt:2"):
        load(bad)
    with pytest.raises(ValueError, match="V = 2"):
        Embeddings("x", ("a", "b"), np.zeros((3, 2)))


def test_signatures_record_embedding():
    frame = score(["the cat sat on the mat"], [["a dog was on the rug"]])
    assert len(frame.columns) == 12
    assert all("|emb:glove-6b-50d|dim:50|" in c for c in frame.columns)
    assert frame.columns[-1] == ("rouge-we-su4|emb:glove-6b-50d|dim:50|rule:summeval|sim:cos|thr:0.8|tok:rouge155"
                                 "|stem:no|stop:no|stat:F|refs:A")


# ----------------------------------------------------------------------------------------------------
# Centroids (hand-computed)


def test_centroids_hand_computed():
    e = toy(cat=[1.0, 0.0], dog=[0.0, 1.0], emu=[1.0, 1.0])
    # distinct texts: "cat cat dog", "dog emu", "emu"  -> T = 3; df: cat 1, dog 2, emu 2
    i3, i15 = math.log(3), math.log(1.5)
    c1 = np.array([2 * i3, i15]) / (2 * i3 + i15)  # cat cat dog
    c2 = np.array([i15, 2 * i15]) / (2 * i15)  # dog emu  -> (0.5, 1)
    c3 = np.array([1.0, 1.0])  # emu
    frame = score(["cat cat dog", "emu"], [["dog emu"], ["dog emu", "cat cat dog"]],
                  ["cent-c", "cent-e"], embeddings=e, columns="name")
    def cos(a, b):
        return a @ b / np.linalg.norm(a) / np.linalg.norm(b)

    assert frame.loc[0, "cent-c"] == pytest.approx(cos(c1, c2), abs=1e-12)
    assert frame.loc[0, "cent-e"] == pytest.approx(-np.linalg.norm(c1 - c2), abs=1e-12)
    # several references: the mean over references
    assert frame.loc[1, "cent-c"] == pytest.approx((cos(c3, c2) + cos(c3, c1)) / 2, abs=1e-12)
    assert frame.loc[1, "cent-e"] == pytest.approx(-(np.linalg.norm(c3 - c2) + np.linalg.norm(c3 - c1)) / 2, abs=1e-12)
    diff = metaeval.embeddings.centroid_difference(["cat cat dog"], [["dog emu"]], embeddings=e)
    # IDF over its own two texts: dog is in both (weight 0), so the centroids are cat and emu
    np.testing.assert_allclose(diff, [[1.0 - 1.0, 1.0 - 0.0]], atol=1e-12)


def test_centroid_stopwords_ignored_and_undefined_is_nan():
    e = toy(cat=[1.0, 0.0], the=[0.0, 5.0], dog=[0.0, 1.0])
    frame = score(["the cat", "the the"], [["dog"], ["dog"]], ["cent-c"], embeddings=e, columns="name", warn=False)
    assert frame.loc[0, "cent-c"] == pytest.approx(0.0, abs=1e-12)  # "the" is a SMART stopword: only cat counts
    assert np.isnan(frame.loc[1, "cent-c"])
    with pytest.warns(EmbeddingWarning, match="record 1: centroid undefined"):
        score(["the cat", "the the"], [["dog"], ["dog"]], ["cent-c"], embeddings=e)


# ----------------------------------------------------------------------------------------------------
# Word mover's distances


def test_rwmd_and_wmd_hand_computed():
    e = toy(cat=[1.0, 0.0], dog=[0.0, 1.0], emu=[2.0, 0.0], rat=[0.0, 3.0])
    d = word_movers(["cat dog"], [["emu emu rat"]], embeddings=e).iloc[0]
    # summary weights 1/2, 1/2; reference emu 2/3, rat 1/3; d(cat,emu)=1, d(cat,rat)=sqrt(10),
    # d(dog,emu)=sqrt(5), d(dog,rat)=2
    assert d["rwmd-l-e"] == pytest.approx(0.5 * 1 + 0.5 * 2)
    assert d["rwmd-r-e"] == pytest.approx(2 / 3 * 1 + 1 / 3 * 2)
    assert d["rwmd-m-e"] == pytest.approx(1.5)
    # optimal flow: cat -> emu 1/2, dog -> rat 1/3, dog -> emu 1/6
    assert d["wmd"] == pytest.approx(0.5 * 1 + 1 / 3 * 2 + 1 / 6 * math.sqrt(5))
    # cosine ground distance: cat/emu and dog/rat are parallel (0), the others orthogonal (1)
    assert (d["rwmd-l-c"], d["rwmd-r-c"], d["rwmd-m-c"]) == pytest.approx((0.0, 0.0, 0.0), abs=1e-12)
    frame = score(["cat dog"], [["emu emu rat", "cat"]], ["rwmd-l-e", "wmd"], embeddings=e, columns="name")
    # negated, mean over the two references (the second: cat -> cat 0 for half, dog -> cat sqrt(2) for half)
    assert frame.loc[0, "rwmd-l-e"] == pytest.approx(-(1.5 + math.sqrt(2) / 2) / 2)
    assert frame.loc[0, "wmd"] == pytest.approx(-(d["wmd"] + math.sqrt(2) / 2) / 2)


def test_wmd_equals_brute_force_assignment():
    rng = np.random.default_rng(3)
    words = [f"zq{k}" for k in range(12)]
    e = Embeddings("rand", tuple(words), rng.normal(size=(12, 4)))
    for trial in range(5):
        a, b = rng.choice(12, 5, replace=False), rng.choice(12, 5, replace=False)
        X, Y = e.vectors[a].astype(float), e.vectors[b].astype(float)
        D = np.linalg.norm(X[:, None] - Y[None], axis=2)
        brute = min(D[np.arange(5), list(p)].mean() for p in itertools.permutations(range(5)))
        got = word_movers([" ".join(words[i] for i in a)], [[" ".join(words[i] for i in b)]], embeddings=e)
        assert got["wmd"].iloc[0] == pytest.approx(brute, rel=1e-6)


def test_rwmd_lower_bounds_wmd(summeval_sample):
    summaries, references = summeval_sample
    d = word_movers(summaries, references)
    assert len(d) == 3 * len(summaries) and d.notna().all().all()
    assert (d["rwmd-m-e"] == np.maximum(d["rwmd-l-e"], d["rwmd-r-e"])).all()
    assert (d["rwmd-m-e"] <= d["wmd"] + 1e-6).all()
    assert (d["rwmd-m-e"] < d["wmd"] - 1e-3).mean() > 0.5  # a real bound, not an equality
    assert (d[["rwmd-l-c", "rwmd-r-c"]] >= 0).all().all() and (d[["rwmd-l-c", "rwmd-r-c"]] <= 2).all().all()
    # identical texts: every distance 0
    same = word_movers(summaries[:2], [[s] for s in summaries[:2]])
    np.testing.assert_allclose(same.iloc[:, 2:].to_numpy(), 0.0, atol=1e-9)


# ----------------------------------------------------------------------------------------------------
# ROUGE-WE


def test_rouge_we_with_one_hot_vectors_is_rouge(summeval_sample):
    """With one-hot vectors no two distinct words are similar: ROUGE-WE-1 (SummEval's rule) and every
    positional-rule variant are ROUGE's clipped counts. (ROUGE-WE-2/SU4 by SummEval's rule are not: a gram
    with the same words in another order has the same summed vector, see the hand-checked test.)"""
    summaries, references = summeval_sample
    texts = summaries + [r for refs in references for r in refs]
    vocab = sorted({w for t in texts for stem in (False, True) for w in process_tokens(tokenize(t), stem=stem, stop=False)})
    onehot = Embeddings("onehot", tuple(vocab), np.eye(len(vocab), dtype=np.float32))
    for stem, stop, stat in itertools.product((0, 1), (0, 1), "PRF"):
        yn = ("no", "yes")
        opts = f"|stem:{yn[stem]}|stop:{yn[stop]}|stat:{stat}"
        we = score(summaries, references, [f"rouge-we-1{opts}"] + [f"rouge-wepos-{m}{opts}" for m in ("1", "2", "su4")],
                   embeddings=onehot)
        rouge = metaeval.rouge.score(
            summaries, references, [f"R-{m}|stem={stem}|stop={stop}|{stat}" for m in ("1", "2", "SU4")], rounding=False)
        np.testing.assert_allclose(we.to_numpy(), rouge.to_numpy()[:, [0, 0, 1, 2]], rtol=0, atol=1e-12)


# An independent implementation of SummEval's rule: a literal transcription of summ_eval/s3_utils.py
# (rouge_n_we, _soft_overlap, _find_closest, _safe_f1 with alpha = 0.5; Yale-LILY/SummEval, file read at
# github.com/Yale-LILY/SummEval/blob/master/evaluation/summ_eval/s3_utils.py), with dict embeddings and scipy's
# cosine as there. Only the tokens are given (so that SummEval's and ROUGE-1.5.5's tokenizations can both be
# fed), and several references are tokenized as whole texts (SummEval's code splits a reference given as a
# string into characters when there are several). SU: the same soft overlap on skip-bigram and unigram counters.


def _summeval_counters(words, n, skip):
    from collections import Counter

    if n > 0:
        return [Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))]
    pairs = Counter((words[i], words[i + d]) for i in range(len(words)) for d in range(1, skip + 2) if i + d < len(words))
    return [pairs, Counter((w,) for w in words[:-1])]


_GRAM_VECTORS: dict = {}  # cleared by summeval_rouge_we (one embedding dict per call)


def _summeval_find_closest(ngram, counter, embs):
    from scipy import spatial

    def _get_embedding(gram):  # as s3_utils._get_embedding, memoised (the tests' run time)
        if gram not in _GRAM_VECTORS:
            _GRAM_VECTORS[gram] = np.sum(np.array([embs[w] for w in gram]), 0)
        return _GRAM_VECTORS[gram]

    if len(counter) == 0:
        return "", 0, 0
    if not all(w in embs for w in ngram):
        if ngram in counter:
            return ngram, counter[ngram], 1
        return "", 0, 0
    ranking_list = []
    ngram_emb = _get_embedding(ngram)
    for k, v in counter.items():
        if k == ngram:
            ranking_list.append((k, v, 1.0))
            continue
        if not all(w in embs for w in k):
            ranking_list.append((k, v, 0.0))
            continue
        k_emb = _get_embedding(k)
        ranking_list.append((k, v, 1 - spatial.distance.cosine(k_emb, ngram_emb)))
    return sorted(ranking_list, key=lambda tup: tup[2], reverse=True)[0]


def _summeval_soft_overlap(peer_counter, model_counter, embs, threshold):
    result = 0
    for k, v in peer_counter.items():
        closest, count, sim = _summeval_find_closest(k, model_counter, embs)
        if sim < threshold:
            continue
        if count <= v:
            del model_counter[closest]
            result += count
        else:
            model_counter[closest] -= v
            result += v
    return result


def summeval_rouge_we(peer, models, embs, n, skip=0, threshold=0.8):
    """(P, R, F) of SummEval's rouge_n_we for token lists ``peer`` and ``models``."""
    _GRAM_VECTORS.clear()
    matches = recall_total = 0
    for model in models:
        for pc, mc in zip(_summeval_counters(peer, n, skip), _summeval_counters(model, n, skip)):
            matches += _summeval_soft_overlap(pc, mc, embs, threshold)
        recall_total += sum(sum(c.values()) for c in _summeval_counters(model, n, skip))
    precision_total = len(models) * sum(sum(c.values()) for c in _summeval_counters(peer, n, skip))
    recall = matches / recall_total if recall_total > 0 else 0
    precision = matches / precision_total if precision_total > 0 else 0
    denom = 0.5 * precision + 0.5 * recall
    return (precision, recall, precision * recall / denom) if denom > 0 else (precision, recall, 0.0)


@pytest.fixture(scope="module")
def summeval_pairs():
    """100 SummEval (summary, reference) pairs: every 16th record (one per document), its first reference."""
    path = metaeval.datasets.data_dir() / "summeval" / "summeval_joined.jsonl"
    with open(path, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh][::16]
    assert len(records) == 100
    return [r["summary"] for r in records], [r["references"] for r in records]


@pytest.mark.parametrize("tok", ["tok:summeval", "tok:rouge155|stem:no", "tok:rouge155|stem:yes"])
def test_rouge_we_equals_summeval_rule(summeval_pairs, tok):
    """ROUGE-WE-1/2 P, R, F on 100 SummEval pairs (GloVe 6B 50d) equal the independent transcription to 1e-12."""
    import re

    summaries, references = summeval_pairs
    refs = [r[:1] for r in references]
    glove = load()
    names = [f"rouge-we-{n}|{tok}|stat:{s}" for n in (1, 2) for s in "PRF"]
    ours = score(summaries, refs, names, embeddings=glove, columns="name")

    def tokens(text):
        if tok == "tok:summeval":
            return [w.lower() for w in re.findall(r"\w+", text)]
        return process_tokens(tokenize(text), stem=tok.endswith("yes"), stop=False)

    vocab = {w for t in summaries + [r[0] for r in refs] for w in tokens(t)}
    embs = {w: glove[w].astype(np.float64) for w in vocab if w in glove}
    expected = np.array([[v for n in (1, 2) for v in summeval_rouge_we(tokens(s), [tokens(r[0])], embs, n)]
                         for s, r in zip(summaries, refs)])
    np.testing.assert_allclose(ours.to_numpy(), expected, rtol=0, atol=1e-12)
    # the soft matches matter here: ROUGE-WE-2 recall is far from exact ROUGE-2's on these pairs
    assert (ours.iloc[:, 4] > 0).all()


def test_rouge_we_several_references_and_su4_equal_summeval_rule(summeval_sample):
    """Several references (hits summed, P over references x summary grams) and the SU4 extension."""
    summaries, references = summeval_sample
    summaries, references = summaries[:8], [r[:2] for r in references[:8]]  # the transcription is slow on SU4
    glove = load()
    names = [f"rouge-we-{m}|stat:{s}" for m in ("1", "2", "su4") for s in "PRF"]
    ours = score(summaries, references, names, embeddings=glove, columns="name")
    toks = {t: process_tokens(tokenize(t), stem=False, stop=False) for t in summaries + sum(references, [])}
    embs = {w: glove[w].astype(np.float64) for ts in toks.values() for w in ts if w in glove}
    expected = np.array([
        [v for n, skip in ((1, 0), (2, 0), (0, 4))
         for v in summeval_rouge_we(toks[s], [toks[r] for r in refs], embs, n, skip)]
        for s, refs in zip(summaries, references)])
    np.testing.assert_allclose(ours.to_numpy(), expected, rtol=0, atol=1e-12)


def test_rouge_we_soft_matches_hand_computed():
    e = toy(cat=[1.0, 0.0], dog=[0.96, 0.28], sat=[0.0, 1.0], ran=[0.28, 0.96])
    f = score(["the cat sat"], [["the dog sat", "a cat ran"]],
              ["rouge-we-1|stat:R", "rouge-we-2|stat:R", "rouge-we-1|stat:P", "rouge-wepos-1|stat:R"],
              embeddings=e, columns="name")
    # ref 1: "the" (no vector) matches only "the": 1; cat -> closest dog (cos 0.96 >= 0.8): 1; sat: 1.
    # ref 2: "the" is not there: 0; cat = cat: 1 (then used up); sat -> closest left is ran (0.96): 1.
    # SummEval's credit is the count, not the similarity: 5 hits of 6 reference unigrams and of 2 x 3 summary ones
    assert f.iloc[0, 0] == pytest.approx(5 / 6) and f.iloc[0, 2] == pytest.approx(5 / 6)
    # bigrams: (the cat) has a word without a vector and no identical bigram: 0; (cat sat) = (1, 1) vs
    # (dog sat) = (0.96, 1.28) and vs (cat ran) = (1.28, 0.96): cos 2.24 / (1.6 sqrt 2) = 0.990: 1 each -> 2 / 4
    assert f.iloc[0, 1] == pytest.approx(2 / 4)
    # the positional rule credits similarities: 1 + 0.96 + 1 and 1 + 0.96 of 6
    assert f.iloc[0, 3] == pytest.approx((1 + 0.96 + 1 + 1 + 0.96) / 6)
    high = score(["the cat sat"], [["a cat ran"]], ["rouge-we-1|stat:R|thr:0.97"], embeddings=e).iloc[0, 0]
    assert high == pytest.approx(1 / 3)  # sat ~ ran = 0.96 < 0.97


def test_rouge_we_clipped_counts_and_order():
    e = toy(cat=[1.0, 0.0], dog=[0.96, 0.28], sat=[0.0, 1.0])
    # clipped count: "cat" x 3 against "dog" x 2 credits 2
    r = score(["cat cat cat"], [["dog dog"]], ["rouge-we-1|stat:R", "rouge-we-1|stat:P"], embeddings=e, columns="name")
    assert r.iloc[0].tolist() == pytest.approx([1.0, 2 / 3])
    # summary grams in order of first occurrence: "cat" takes the single "dog" before "dog" itself can
    r = score(["cat dog"], [["dog"]], ["rouge-we-1|stat:R", "rouge-we-1|stat:P"], embeddings=e, columns="name")
    assert r.iloc[0].tolist() == pytest.approx([1.0, 0.5])
    # summed vectors ignore word order: (cat sat) matches (sat cat) fully, where ROUGE-2 finds nothing
    r = score(["cat sat"], [["sat cat"]], ["rouge-we-2|stat:R", "rouge-wepos-2|stat:R"], embeddings=e, columns="name")
    assert r.iloc[0].tolist() == pytest.approx([1.0, 0.0])


# ----------------------------------------------------------------------------------------------------
# Input checks


def test_bad_input():
    with pytest.raises(ValueError, match="unknown embedding metric"):
        score(["a"], [["b"]], ["cent-x"])
    with pytest.raises(ValueError, match="same length"):
        score(["a", "b"], [["b"]])
    with pytest.raises(TypeError, match="references\\[0\\]"):
        score(["a"], ["b"])
    with pytest.raises(ValueError, match="threshold"):
        score(["a"], [["b"]], ["rouge-we-1|thr:0"])
    with pytest.raises(ValueError, match="unknown option"):
        score(["a"], [["b"]], ["wmd|stat:F"])
    with pytest.raises(ValueError, match="tok:summeval is SummEval's tokenization"):
        score(["a"], [["b"]], ["rouge-we-1|tok:summeval|stem:yes"])
    with pytest.raises(ValueError, match="tok must be one of"):
        score(["a"], [["b"]], ["rouge-we-1|tok:nltk"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(EmbeddingWarning, match="no references"):
            score(["a cat"], [[]], ["rouge-we-1"])
