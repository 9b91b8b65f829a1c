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
    assert frame.columns[-1] == "rouge-we-su4|emb:glove-6b-50d|dim:50|sim:cos|thr:0.8|stem:no|stop:no|stat:F|refs:A"


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
    summaries, references = summeval_sample
    texts = summaries + [r for refs in references for r in refs]
    vocab = sorted({w for t in texts for stem in (False, True) for w in process_tokens(tokenize(t), stem=stem, stop=False)})
    onehot = Embeddings("onehot", tuple(vocab), np.eye(len(vocab), dtype=np.float32))
    for stem, stop, stat in itertools.product((0, 1), (0, 1), "PRF"):
        yn = ("no", "yes")
        we = score(summaries, references,
                   [f"rouge-we-{m}|stem:{yn[stem]}|stop:{yn[stop]}|stat:{stat}" for m in ("1", "2", "su4")],
                   embeddings=onehot)
        rouge = metaeval.rouge.score(
            summaries, references, [f"R-{m}|stem={stem}|stop={stop}|{stat}" for m in ("1", "2", "SU4")], rounding=False
        )
        np.testing.assert_allclose(we.to_numpy(), rouge.to_numpy(), rtol=0, atol=1e-12)


def test_rouge_we_soft_matches_hand_computed():
    e = toy(cat=[1.0, 0.0], dog=[0.96, 0.28], sat=[0.0, 1.0], ran=[0.28, 0.96])
    f = score(["the cat sat"], [["the dog sat", "a cat ran"]],
              ["rouge-we-1|stat:R", "rouge-we-2|stat:R", "rouge-we-1|stat:P"], embeddings=e, columns="name")
    # ref 1: the=1 (OOV, identical), cat~dog=0.96, sat=1; ref 2: cat=1, sat~ran=0.96 ("a"/"the" OOV, differ);
    # cat~ran = 0.28 is below the threshold 0.8
    hits1 = 1 + 0.96 + 1 + 1 + 0.96
    assert f.iloc[0, 0] == pytest.approx(hits1 / 6)
    assert f.iloc[0, 2] == pytest.approx(hits1 / (2 * 3))
    # bigrams: (the cat)~(the dog) = 0.96, (cat sat)~(dog sat) = 0.96, (cat sat)~(cat ran) = 0.96
    assert f.iloc[0, 1] == pytest.approx((0.96 + 0.96 + 0.96) / 4)
    high = score(["the cat sat"], [["a cat ran"]], ["rouge-we-1|stat:R|thr:0.97"], embeddings=e).iloc[0, 0]
    assert high == pytest.approx(1 / 3)


def test_rouge_we_greedy_is_one_to_one():
    e = toy(cat=[1.0, 0.0], dog=[0.96, 0.28])
    # the single reference "dog" can be matched once only, by the best summary word
    r = score(["cat dog"], [["dog"]], ["rouge-we-1|stat:R", "rouge-we-1|stat:P"], embeddings=e, columns="name")
    assert r.iloc[0].tolist() == pytest.approx([1.0, 0.5])


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
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(EmbeddingWarning, match="no references"):
            score(["a cat"], [[]], ["rouge-we-1"])
