"""WordNet 3.0 parser: graph size and shape, sense names and order, morphology."""

import gzip

import numpy as np
import pytest
from metaeval import _resources
from metaeval.metrics import wordnet


@pytest.fixture(scope="module")
def wn():
    return wordnet.load()


def test_graph_has_one_node_per_synset_and_symmetric_01_edges(wn):
    # PROVENANCE.md: 117,659 synsets = 82,115 n + 13,767 v + 18,156 a/s + 3,621 r
    assert wn.n_nodes == 117659
    types, counts = np.unique(wn.node_pos, return_counts=True)
    by = dict(zip(types.tolist(), counts.tolist()))
    assert by["n"] == 82115 and by["v"] == 13767 and by["a"] + by["s"] == 18156 and by["r"] == 3621
    A = wn.adjacency
    assert (abs(A - A.T) > 0).nnz == 0
    assert set(np.unique(A.data).tolist()) == {1.0}
    assert A.diagonal().sum() == 0
    # 377,592 pointers, 19 of which join a synset to itself (lexical pointers inside one synset)
    assert wn.n_pointers == 377592 - 19
    # every pointer is an edge; most come in inverse pairs (hypernym/hyponym), so edges < pointers
    assert 150_000 < A.nnz // 2 < wn.n_pointers


def test_sense_names_follow_index_order_like_nltk(wn):
    # fire.v.04 is the 4th verb synset of "fire" in index.verb: offset 02402843, "terminate the employment"
    node = wn.synset("fire.v.04")
    assert wn.node_offset[node] == 2402843 and wn.node_pos[node] == "v"
    with gzip.open(_resources.data_root() / "wordnet30" / "data.verb.gz", "rt", encoding="latin-1") as fh:
        line = next(ln for ln in fh if ln.startswith("02402843 "))
    assert "terminate the employment" in line
    names = [s.name for s in wn.senses("fire", "v")]
    assert names[:4] == ["fire.v.01", "fire.v.02", "fire.v.03", "fire.v.04"] and len(names) == 9
    # satellite adjectives carry their own type, as NLTK names them
    assert "heavy.s.02" in [s.name for s in wn.senses("heavy")] or any(
        s.name.startswith("heavy.s.") for s in wn.senses("heavy"))
    # all parts of speech in the order n, v, a, r
    pos = [s.name.split(".")[1] for s in wn.senses("fast")]
    order = {"n": 0, "v": 1, "a": 2, "s": 2, "r": 3}
    assert [order[p] for p in pos] == sorted(order[p] for p in pos) and {"n", "v", "r"} <= set(pos)


def test_morphy_exceptions_then_rules(wn):
    assert wn.morphy("geese", "n") == ["goose"]  # noun.exc
    assert wn.morphy("went", "v") == ["go"]  # verb.exc (the rules would give nothing)
    assert wn.morphy("officers", "n") == ["officer"]  # rule s -> ""
    assert wn.morphy("pouring", "v") == ["pour"]  # rule ing -> ""
    assert wn.morphy("fired", "v") == ["fire"]  # ed -> e gives fire; ed -> "" gives "fir" (not a verb)
    assert wn.morphy("dog", "n") == ["dog"]
    assert wn.morphy("xyzzy", "n") == [] and wn.senses("xyzzy") == ()
    # a word that is its own lemma keeps it first; exceptions follow
    assert wn.morphy("better", "a")[0] == "better" and "good" in wn.morphy("better", "a")


def test_bad_names_are_errors(wn):
    with pytest.raises(ValueError, match="pos"):
        wn.senses("dog", pos="x")
    with pytest.raises(KeyError):
        wn.synset("dog.n.99")
    with pytest.raises(ValueError, match="lemma.pos.NN"):
        wn.synset("dog")


def test_parsed_tables_cached_on_disk_round_trip_and_damaged_file(tmp_path, monkeypatch):
    monkeypatch.setenv("METAEVAL_CACHE", str(tmp_path))
    parsed = wordnet.WordNet(use_cache=False)
    first = wordnet.WordNet()  # parses and writes the cache
    files = sorted((tmp_path / "wordnet").glob("parsed-*"))
    assert [f.suffix for f in files] == [".json", ".npz"] and parsed.sha256[:32] in files[0].name
    again = wordnet.WordNet()  # read back
    for wn in (first, again):
        assert wn.sha256 == parsed.sha256 and wn.n_nodes == parsed.n_nodes
        assert (wn.adjacency != parsed.adjacency).nnz == 0
        assert [s.name for s in wn.senses("fired")] == [s.name for s in parsed.senses("fired")]
        assert wn.morphy("geese", "n") == ["goose"]
    files[1].write_bytes(b"damaged")
    with pytest.warns(UserWarning, match="parse cache"):
        third = wordnet.WordNet()  # a damaged cache is parsed again (with a warning), and rewritten
    assert (third.adjacency != parsed.adjacency).nnz == 0 and third.synset("fire.v.04") == parsed.synset("fire.v.04")
    assert files[1].read_bytes() != b"damaged"
