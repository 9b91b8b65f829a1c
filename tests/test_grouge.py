"""GRouge: PPR against networkx and a dense power iteration, Weighted Overlap (hand values and ADW's own
test), the alignment measure, the paper's examples, stopwords out of the signatures, lam = 1 equals ROUGE
recall, the signature, the disk cache (validated shards) and input errors, and the compiled engine against
a plain Python implementation of the rules in :mod:`metaeval.metrics.grouge`."""


import json

import metaeval
import numpy as np
import pytest
import scipy.sparse as sp
from metaeval.metrics import grouge, wordnet
from metaeval.metrics.grouge import _engine, _overlap, _ppr
from metaeval.metrics.rouge import score as rouge_score


@pytest.fixture(scope="module")
def wn():
    return wordnet.load()


# ------------------------------------------------------------------------------------------------
# PPR


def test_ppr_equals_networkx_pagerank_after_convergence(wn):
    nx = pytest.importorskip("networkx")
    G = nx.from_scipy_sparse_array(wn.adjacency)
    rng = np.random.default_rng(7)
    isolated = int(np.flatnonzero(np.diff(wn.adjacency.indptr) == 0)[0])
    seeds = [[wn.synset("dog.n.01"), int(rng.integers(wn.n_nodes))], [isolated, wn.synset("fire.v.04")]]
    ours = grouge.ppr(seeds, iterations=100)  # 0.85^100 < 1e-7: converged
    for c, s in enumerate(seeds):
        pers = {int(n): 1.0 for n in s}
        ref = nx.pagerank(G, alpha=0.85, personalization=pers, tol=1e-12, max_iter=500, weight=None)
        theirs = np.array([ref[i] for i in range(wn.n_nodes)])
        np.testing.assert_allclose(ours[:, c], theirs, atol=1e-6, rtol=0)
        assert abs(ours[:, c].sum() - 1) < 1e-12


def _dense_power(A, seeds, alpha=0.85, iterations=30):
    A = A.toarray()
    deg = A.sum(axis=0)
    M = np.divide(A, deg, out=np.zeros_like(A), where=deg > 0)
    v0 = np.zeros(A.shape[0])
    v0[seeds] = 1 / len(seeds)
    v = v0.copy()
    for _ in range(iterations):
        lost = v[deg == 0].sum()
        v = (1 - alpha) * v0 + alpha * (M @ v + lost * v0)
    return v


def test_ppr_30_iterations_equal_a_dense_power_iteration_on_a_subgraph(wn):
    # the 2-hop neighbourhood of dog.n.01 plus two isolated synsets (their mass restarts at v0)
    start = wn.synset("dog.n.01")
    hop1 = wn.adjacency[start].indices
    nodes = np.unique(np.concatenate([[start], hop1, wn.adjacency[hop1].indices]))
    isolated = np.flatnonzero(np.diff(wn.adjacency.indptr) == 0)[:2]
    nodes = np.concatenate([nodes, isolated])
    A = wn.subgraph(nodes)
    k = len(nodes)
    seeds = [[0], [3, 7], [k - 1], [k - 2, 5]]
    ours = grouge.ppr(seeds, adjacency=A)
    for c, s in enumerate(seeds):
        np.testing.assert_allclose(ours[:, c], _dense_power(A, s), rtol=1e-13, atol=1e-16)
    assert ours[k - 1, 2] == 1.0  # an isolated seed keeps all its mass


def test_ppr_is_linear_in_the_seed_distribution(wn):
    a, b = wn.synset("dog.n.01"), wn.synset("fire.v.04")
    v = grouge.ppr([[a], [b], [a, b]])
    np.testing.assert_allclose(v[:, 2], (v[:, 0] + v[:, 1]) / 2, atol=1e-15)


def test_ppr_rejects_bad_arguments():
    path = sp.csr_matrix(np.array([[0, 1], [1, 0]]))
    with pytest.raises(ValueError, match="restart"):
        grouge.ppr([0], adjacency=path, restart=1.5)
    with pytest.raises(ValueError, match="outside"):
        grouge.ppr([5], adjacency=path)
    with pytest.raises(ValueError, match="symmetric"):
        grouge.ppr([0], adjacency=sp.csr_matrix(np.array([[0, 1], [0, 0]])))


# ------------------------------------------------------------------------------------------------
# Weighted Overlap


def test_weighted_overlap_hand_examples():
    # H = {0, 1}: ranks (1, 2) and (2, 1): (1/3 + 1/3) / (1/2 + 1/4)
    assert grouge.weighted_overlap([0.6, 0.4, 0], [0.3, 0.7, 0]) == pytest.approx((2 / 3) / 0.75)
    # only dimension 2 shared, rank 3 in a and 1 in b: (1/4) / (1/2)
    assert grouge.weighted_overlap([0.5, 0.3, 0.2], [0, 0, 1.0]) == pytest.approx(0.5)
    # reversed order of three: 3 * 1/4 over 1/2 + 1/4 + 1/6
    assert grouge.weighted_overlap([3, 2, 1], [1, 2, 3]) == pytest.approx(0.75 / (11 / 12))
    assert grouge.weighted_overlap([1, 0], [0, 1]) == 0.0


def test_weighted_overlap_symmetry_identity_bounds():
    rng = np.random.default_rng(3)
    for _ in range(200):
        a = rng.random(30) * (rng.random(30) < 0.6)
        b = rng.random(30) * (rng.random(30) < 0.6)
        w = grouge.weighted_overlap(a, b)
        assert 0.0 <= w <= 1.0 + 1e-12
        assert w == pytest.approx(grouge.weighted_overlap(b, a), abs=1e-14)
        if a.any():
            assert grouge.weighted_overlap(a, a) == pytest.approx(1.0, abs=1e-14)
    with pytest.raises(ValueError, match="same length"):
        grouge.weighted_overlap([1, 2], [1])


def test_compiled_wo_equals_the_reference_on_truncated_vectors(wn):
    store = grouge.SenseVectors(topk=64, cache=False)
    nodes = [wn.synset(n) for n in ("dog.n.01", "cat.n.01", "fire.v.04", "pour.v.01", "rain.v.01")]
    store.ensure(nodes)
    rows = store.row_of[np.asarray(nodes)]
    fast = _overlap._pair_wo(rows, rows, store.idx, store.length, wn.n_nodes, _overlap._harmonic(300), 2)
    for i, a in enumerate(nodes):
        for j, b in enumerate(nodes):
            assert fast[i, j] == pytest.approx(grouge.weighted_overlap(store.dense(a), store.dense(b)), abs=1e-13)
    assert np.allclose(np.diag(fast), 1.0)
    assert fast[0, 1] > fast[0, 2]  # dog is closer to cat than to firing someone


# ------------------------------------------------------------------------------------------------
# The paper's examples


def test_alignment_picks_the_employment_sense_of_fired():
    # "Officers fired" vs "Several policemen terminated in corruption probe": fire.v.04, terminate the
    # employment of; "officers" aligns to officer.n.03 (police officer) thanks to "policemen"
    assert grouge.align(["officers", "fired"], "Several policemen terminated in corruption probe") == [
        "officer.n.03", "fire.v.04"]
    # without that context the most frequent senses win
    assert grouge.align(["fired"], ["gun", "shot", "bullet"])[0] != "fire.v.04"
    assert grouge.align(["the", "xyzzy"], "anything") == [None, None]


def test_raining_is_closer_to_pouring_than_to_an_unrelated_sentence():
    base = "it is raining heavily"
    near = grouge.similarity(base, "it is pouring")
    far = grouge.similarity(base, "it is expensive")
    assert near > far


def test_soldiers_killed_executed_murdered():
    killed_executed = grouge.similarity("soldiers were killed", "soldiers were executed")
    killed_murdered = grouge.similarity("soldiers were killed", "soldiers were murdered")
    unrelated = grouge.similarity("soldiers were killed", "soldiers were painted")
    # both paraphrases are closer than an unrelated verb; murdered (a direct hyponym of kill) is closer
    # than executed, as the paper's b-pair (same connotation) vs a-pair (different) suggests
    assert killed_murdered > killed_executed > unrelated


# ------------------------------------------------------------------------------------------------
# Scoring


def _summeval_records(summeval, n_docs, n_sys=16):
    S, R = summeval.summaries(), summeval.references()
    peers = [S[i, j] for j in range(n_docs) for i in range(n_sys)]
    refs = [list(R[i, j]) for j in range(n_docs) for i in range(n_sys)]
    return peers, refs


@pytest.mark.parametrize("stop", [False, True])
def test_lam_one_equals_rouge_recall(summeval, stop):
    peers, refs = _summeval_records(summeval, 2, 6)
    peers[0] = None  # an empty summary: 0, as ROUGE
    g = grouge.score(peers, refs, ["grouge-1", "grouge-2", "grouge-3", "grouge-su4"], lam=1.0, stop=stop,
                     columns="name")
    flag = int(stop)
    r = rouge_score(peers, refs, [f"R-{m}|stem=1|stop={flag}|R" for m in ("1", "2", "3", "SU4")], rounding=False)
    for gcol, rcol in zip(g.columns, r.columns):
        np.testing.assert_allclose(g[gcol].to_numpy(), r[rcol].to_numpy(), rtol=0, atol=1e-12)
    assert g.iloc[0].eq(0).all() and (g.iloc[1:, :2] > 0).all().all()


def test_grouge_is_linear_in_lam_and_between_lexical_and_semantic():
    peers = ["police fired three officers after a corruption probe", "the weather was sunny"]
    refs = [["several policemen were dismissed in a bribery inquiry"], ["it rained heavily all day"]]
    at = {lam: grouge.score(peers, refs, ["grouge-1", "grouge-su4"], lam=lam, columns="name").to_numpy()
          for lam in (0.0, 0.3, 1.0)}
    np.testing.assert_allclose(at[0.3], 0.3 * at[1.0] + 0.7 * at[0.0], atol=1e-12)
    assert (at[0.0] > 0).all() and (at[0.0] <= 1).all()
    # the semantic part credits the paraphrase even where no stemmed word matches
    assert at[0.0][0, 0] > 0.2


def test_signature_and_variant_parsing():
    f = grouge.score(["a cat"], [["a dog"]], ["G-2"], lam=1.0)
    assert list(f.columns) == ["grouge-2|lam:1|restart:0.15|iter:30|topk:5000|align:cosine@500|sw:out|wn:3.0|stem:yes|stop:no|refs:A"]
    v = grouge.parse_variant("grouge-su4|lam:0.25|restart:0.15|iter:30|topk:all|align:wo@100|sw:out|wn:3.0|stem:no|"
                             "stop:yes|refs:A")
    assert (v.measure.skip, v.lam, v.topk, v.stem, v.stop, v.align, v.align_topk) == (4, 0.25, None, False, True,
                                                                                      "wo", 100)
    assert grouge.parse_variant(v.signature) == v
    for bad, msg in [("rouge-l", "grouge-N"), ("grouge-2|lam:2", "lam"), ("grouge-2|topk:0", "topk"),
                     ("grouge-2|wn:2.1", "wn:3.0"), ("grouge-1|lam:0.2|lam:0.9", "twice"),
                     ("grouge-1|align:euclid", "align"), ("grouge-1|sw:in", "sw:out"), ("grouge-1|stem:maybe", "stem")]:
        with pytest.raises(ValueError, match=msg):
            grouge.parse_variant(bad)


def test_input_errors_and_no_references():
    with pytest.raises(TypeError, match="summaries"):
        grouge.score("a cat", [["a dog"]])
    with pytest.raises(ValueError, match="same length"):
        grouge.score(["a", "b"], [["a"]])
    with pytest.raises(ValueError, match="topk"):
        grouge.score(["a"], [["a"]], topk=-3)
    with pytest.warns(grouge.GRougeWarning, match="no references"):
        f = grouge.score(["a cat"], [[]], ["grouge-1"])
    assert np.isnan(f.iloc[0, 0])


def test_disk_cache_round_trip_and_damaged_shard(tmp_path, monkeypatch, wn):
    monkeypatch.setenv("METAEVAL_CACHE", str(tmp_path))
    nodes = [wn.synset("dog.n.01"), wn.synset("fire.v.04")]
    first = grouge.SenseVectors(topk=16, shipped=False)  # the shipped vectors would serve these nodes
    first.ensure(nodes)
    shards = list((tmp_path / "grouge").rglob("shard-*.npz"))
    assert len(shards) == 1 and wn.sha256[:16] in str(shards[0])
    again = grouge.SenseVectors(topk=16, shipped=False)
    assert (again.row_of[nodes] >= 0).all()  # read from disk, nothing recomputed
    for n in nodes:
        np.testing.assert_array_equal(again.dense(n), first.dense(n))
    shards[0].write_bytes(b"not a zip file")
    with pytest.warns(grouge.GRougeWarning, match="ignoring GRouge cache"):
        third = grouge.SenseVectors(topk=16, shipped=False)
    assert (third.row_of[nodes] < 0).all()
    # another top-K is another cache folder
    grouge.SenseVectors(topk=8, shipped=False).ensure(nodes[:1])
    assert len({p.parent for p in (tmp_path / "grouge").rglob("shard-*.npz")}) == 2


def test_public_aliases():
    assert metaeval.grouge.score is grouge.score and metaeval.wordnet.load is wordnet.load


# ------------------------------------------------------------------------------------------------
# The truncation, against the exact computation


@pytest.mark.slow
def test_topk_truncation_against_exact_weighted_overlap(wn):
    """2000 random pairs of 200 random senses: WO of top-128 vectors vs WO over every dimension.

    Measured (2026-11-21): mean |dWO| = 0.26, Spearman 0.62; the exact WO has a baseline near 0.27 for
    unrelated senses (the long tail of a PPR vector is ranked too), the truncated one near 0.01, so the
    truncation keeps the order of similarities (what alignment uses) but not their scale.
    """
    from scipy.stats import spearmanr

    rng = np.random.default_rng(0)
    nodes = rng.choice(wn.n_nodes, 200, replace=False)
    V = grouge.ppr([[int(s)] for s in nodes])
    N = wn.n_nodes
    ranks = np.zeros((len(nodes), N), np.int64)
    for c in range(len(nodes)):
        o = _overlap._ranked(V[:, c])
        ranks[c, o] = np.arange(1, o.size + 1)
    harm_full = np.cumsum(1 / (2 * np.arange(1, N + 1)))
    pairs = rng.integers(0, len(nodes), (2000, 2))

    def exact(a, b):
        h = (ranks[a] > 0) & (ranks[b] > 0)
        return float((1 / (ranks[a][h] + ranks[b][h])).sum() / harm_full[h.sum() - 1])

    ex = np.array([exact(a, b) for a, b in pairs])
    idx, _val, length = _ppr._truncate(V, 128)
    tr = _overlap._pair_wo(pairs[:, 0].copy(), np.arange(len(nodes)), idx, length, N, _overlap._harmonic(600), 2)
    tr = tr[np.arange(len(pairs)), pairs[:, 1]]
    # identical senses: both exactly 1
    same = pairs[:, 0] == pairs[:, 1]
    np.testing.assert_allclose(tr[same], 1.0)
    np.testing.assert_allclose(ex[same], 1.0)
    d = np.abs(tr - ex)[~same]
    rho = spearmanr(tr[~same], ex[~same])[0]
    print(f"top-128 vs exact WO on {(~same).sum()} pairs: mean |dWO| = {d.mean():.4f}, "
          f"Spearman = {rho:.3f}")
    assert d.mean() < 0.30 and rho > 0.5


@pytest.mark.slow
def test_topk_truncation_effect_on_summeval_grouge(summeval):
    """200 SummEval summaries: GRouge with top-128 vectors vs top-512 (the exact computation needs every
    sense's full vector at once, 4 GB for these texts). Measured numbers are printed."""
    peers, refs = _summeval_records(summeval, 13)
    peers, refs = peers[:200], refs[:200]
    large = grouge.score(peers, refs, columns="name", topk=512)
    small = grouge.score(peers, refs, columns="name", topk=128)  # its vectors: the heads of the top-512 ones
    for col in small.columns:
        d = (small[col] - large[col]).abs()
        rho = small[col].corr(large[col], method="spearman")
        print(f"{col}: mean |d| = {d.mean():.4f}, max {d.max():.4f}, Spearman {rho:.3f}")
        assert d.mean() < 0.05 and rho > 0.9


# ------------------------------------------------------------------------------------------------
# Command line


def test_grouge_cli_writes_rouge_style_records(tmp_path):

    from metaeval.run.cli import main

    records = [
        {"id": "a", "peer": "police fired three officers", "refs": ["the officers were dismissed", "cops fired"]},
        {"id": "b", "peer": "it is pouring", "refs": ["it is raining heavily"]},
    ]
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["grouge", str(src), str(dst), "--methods", "G-1,G-SU4", "--lam", "1"]) == 0
    out = [json.loads(line) for line in dst.read_text().splitlines()]
    assert [o["id"] for o in out] == ["a", "b"] and [o["n_refs"] for o in out] == [2, 1]
    # the command line keeps its own default, --topk 128 (run/cli.py)
    sig = "grouge-1|lam:1|restart:0.15|iter:30|topk:128|align:cosine@500|sw:out|wn:3.0|stem:yes|stop:no|refs:A"
    assert set(out[0]["scores"]) == {sig, sig.replace("grouge-1", "grouge-su4")}
    expected = rouge_score([r["peer"] for r in records], [r["refs"] for r in records], ["R-1|stem=1|stop=0|R"],
                           rounding=False).iloc[:, 0]
    assert [o["scores"][sig] for o in out] == pytest.approx(expected.tolist(), abs=1e-12)
    assert main(["grouge", str(src), str(dst), "--methods", "G-1"]) == 0
    half = json.loads(dst.read_text().splitlines()[1])["scores"]
    assert list(half) == [sig.replace("lam:1", "lam:0.5")]
    assert expected[1] == 0.5 and 0.25 < next(iter(half.values())) < 1  # it, is + a share for pouring ~ raining
    with pytest.raises(SystemExit, match="grouge-N"):
        main(["grouge", str(src), str(dst), "--methods", "R-L"])


def test_a_larger_topk_cache_serves_a_smaller_one(tmp_path, monkeypatch, wn):
    monkeypatch.setenv("METAEVAL_CACHE", str(tmp_path))
    nodes = [wn.synset("dog.n.01"), wn.synset("rain.v.01")]
    big = grouge.SenseVectors(topk=32, shipped=False)
    big.ensure(nodes)
    small = grouge.SenseVectors(topk=8, shipped=False)
    assert (small.row_of[nodes] >= 0).all()  # nothing to compute
    fresh = grouge.SenseVectors(topk=8, cache=False)
    fresh.ensure(nodes)
    for n in nodes:
        np.testing.assert_array_equal(small.dense(n), fresh.dense(n))


@pytest.mark.slow
def test_exact_mode_keeps_the_raining_pouring_order():
    """topk=None (every dimension): measured 0.767 (pouring) vs 0.453 (expensive) on 2026-11-21."""
    base = "it is raining heavily"
    near = grouge.similarity(base, "it is pouring", options=grouge.GRougeOptions(topk=None), cache=False)
    far = grouge.similarity(base, "it is expensive", options=grouge.GRougeOptions(topk=None), cache=False)
    assert near > far + 0.1


# ------------------------------------------------------------------------------------------------
# The fast kernels against plain references (a faster reformulation must give the same numbers)


def _plain_float32_ppr(A, seeds, alpha=0.85, iterations=30):
    """The straightforward iteration, operation by operation in float32: scaled = v / deg, the neighbour
    sums in node order (scipy's CSR product with unit weights), times alpha, plus the restart, with the
    mass of isolated nodes restarting at v0."""
    A32 = A.astype(np.float32)
    deg = np.diff(A.indptr).astype(np.float64)
    inv = np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0).astype(np.float32)
    dangling = np.flatnonzero(deg == 0)
    a32 = np.float32(alpha)
    out = np.zeros((A.shape[0], len(seeds)), np.float32)
    for c, s in enumerate(seeds):
        s = np.unique(s)
        w = np.float32(1.0 / s.size)
        v0 = np.zeros(A.shape[0], np.float32)
        v0[s] += w
        v = v0.copy()
        for _ in range(iterations):
            lost = np.float32(0.0)
            for j in dangling:
                lost = np.float32(lost + v[j])
            new = (A32 @ (v * inv)) * a32
            restart = (1.0 - np.float64(a32)) + np.float64(np.float32(a32 * lost))
            new[s] = (new[s].astype(np.float64) + restart * np.float64(w)).astype(np.float32)
            v = new
        out[:, c] = v
    return out


def test_ppr_kernel_is_bitwise_the_plain_float32_iteration(wn):
    # random synsets, isolated ones, and seed sets: the reordered, blocked, hop-skipping kernel does the
    # same float operations in the same order as the plain iteration
    rng = np.random.default_rng(11)
    isolated = np.flatnonzero(np.diff(wn.adjacency.indptr) == 0)
    seeds = [[int(s)] for s in rng.choice(wn.n_nodes, 20, replace=False)]
    seeds += [[int(isolated[0])], [int(isolated[1]), wn.synset("dog.n.01")], [wn.synset("fire.v.04"), 5, 77]]
    ours = grouge.ppr(seeds, dtype=np.float32)
    plain = _plain_float32_ppr(wn.adjacency, seeds)
    assert np.array_equal(ours, plain)
    # and float64 against the same iteration in float64 (scipy), to rounding
    ref64 = np.column_stack([_dense_power_sparse(wn.adjacency, s) for s in seeds[:6]])
    np.testing.assert_allclose(grouge.ppr(seeds[:6]), ref64, rtol=1e-12, atol=1e-18)
    np.testing.assert_allclose(ours[:, :6], ref64, rtol=2e-5, atol=1e-9)


def _dense_power_sparse(A, seeds, alpha=0.85, iterations=30):
    deg = np.diff(A.indptr).astype(np.float64)
    inv = np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0)
    v0 = np.zeros(A.shape[0])
    v0[np.unique(seeds)] = 1 / len(np.unique(seeds))
    v = v0.copy()
    for _ in range(iterations):
        lost = v[deg == 0].sum()
        v = (1 - alpha) * v0 + alpha * (A @ (v * inv) + lost * v0)
    return v


def test_stored_vectors_are_the_top_k_of_the_full_vectors(wn):
    # the bounded-heap truncation keeps the same dimensions, in the same order (ties: smaller synset), as
    # sorting the whole vector; 100 random synsets and a few isolated ones
    rng = np.random.default_rng(5)
    nodes = np.concatenate([rng.choice(wn.n_nodes, 100, replace=False),
                            np.flatnonzero(np.diff(wn.adjacency.indptr) == 0)[:3]])
    full = grouge.ppr([[int(s)] for s in nodes], dtype=np.float32)  # the same for both sizes: computed once
    for topk in (128, 7):
        store = grouge.SenseVectors(topk=topk, cache=False)
        store.ensure(nodes)
        idx, val, length = _ppr._truncate(full, topk)
        rows = store.row_of[nodes]
        assert np.array_equal(store.idx[rows], idx)
        assert np.array_equal(store.val[rows], val)
        assert np.array_equal(store.length[rows], length)
    assert (length[-3:] == 1).all() and (length == topk).sum() > 75  # isolated synsets keep only themselves


def test_text_vector_is_the_whole_sorted_sum_of_the_stored_vectors(wn):
    # ADW averages single-sense vectors and does not truncate the mean: every dimension, by decreasing
    # value, ties by dimension
    store = grouge.SenseVectors(topk=32, cache=False)
    rng = np.random.default_rng(2)
    nodes = rng.choice(wn.n_nodes, 60, replace=False)
    store.ensure(nodes)
    n_dims = wn.n_nodes
    acc = np.zeros(n_dims)
    for size in (1, 2, 3, 9, 40):
        for _ in range(5):
            rows = np.unique(store.row_of[rng.choice(nodes, size, replace=False)])
            total = np.zeros(n_dims)
            for r in rows:  # float64 sums of the stored float32 values
                n = store.length[r]
                np.add.at(total, store.idx[r, :n], store.val[r, :n].astype(np.float64))
            nz = np.flatnonzero(total)
            want = nz[np.lexsort((nz, -total[nz]))]
            out = np.empty(size * 32 + 5, np.int64)
            m = _engine._aggregate_sorted(rows, store.idx, store.val, store.length, acc,
                                          np.empty(size * 32 + 1, np.int64), out, 3)
            assert np.array_equal(out[3 : 3 + m], want)  # not cut to 32
            assert not acc.any()  # the scratch array is left zeroed


# ------------------------------------------------------------------------------------------------
# Weighted Overlap: one kernel, hand-computed values and ADW's own unit test


def test_weighted_overlap_matches_adw_unit_test():
    # pilehvar/ADW src/test/java/it/uniroma1/lcl/adw/comparison/WeightedOverlapTest.java: map1 = {1:1, ..., 6:6},
    # map4 = {1:6, 4:5, 2:4, 5:3, 3:2, 6:1}: ADW asserts 0.725 +- 0.01, map1 vs map5 = {7:6, 8:5}: 0
    m1 = np.zeros(9)
    m1[1:7] = [1, 2, 3, 4, 5, 6]
    m4 = np.zeros(9)
    m4[[1, 4, 2, 5, 3, 6]] = [6, 5, 4, 3, 2, 1]
    m5 = np.zeros(9)
    m5[[7, 8]] = [6, 5]
    # by hand: ranks in m1 (6:1, 5:2, ..., 1:6), in m4 (1:1, 4:2, 2:3, 5:4, 3:5, 6:6);
    # sum 1/(r1 + r2) = 1/7 + 1/8 + 1/9 + 1/5 + 1/6 + 1/7, normaliser sum_{i=1..6} 1/(2i) = 1.225
    want = (1 / 7 + 1 / 8 + 1 / 9 + 1 / 5 + 1 / 6 + 1 / 7) / 1.225
    assert grouge.weighted_overlap(m1, m4) == pytest.approx(want, abs=1e-15)
    assert abs(want - 0.725) < 0.01
    assert grouge.weighted_overlap(m1, m1) == 1.0 and grouge.weighted_overlap(m1, m5) == 0.0


def test_pair_kernels_equal_the_formulas_on_truncated_vectors(wn):
    store = grouge.SenseVectors(topk=64, cache=False)
    nodes = [wn.synset(n) for n in ("dog.n.01", "cat.n.01", "fire.v.04", "pour.v.01", "rain.v.01")]
    store.ensure(nodes)
    rows = store.row_of[np.asarray(nodes)]
    for top in (64, 10):
        length = np.minimum(store.length, top)
        cos = _overlap._pair_cosine(rows, rows, store.idx, store.val, length, wn.n_nodes, 2)
        for i, a in enumerate(nodes):
            for j, b in enumerate(nodes):
                va, vb = store.dense(a), store.dense(b)
                va[_overlap._ranked(va)[top:]] = 0
                vb[_overlap._ranked(vb)[top:]] = 0
                # 3e-8 seen on the diagonal: a float32 step in the compiled kernel, not yet found
                assert cos[i, j] == pytest.approx(grouge.cosine(va, vb), abs=1e-7)
        assert np.allclose(np.diag(cos), 1.0)
        if top == 64:  # dog is nearer cat than a verb sense of fire (at top 10 they share no dimension: both 0)
            assert cos[0, 1] > cos[0, 2]


# ------------------------------------------------------------------------------------------------
# Stopwords never enter a signature


PEER = "the police said that the man was arrested in a car on the road and the car was seized"


def test_stopword_only_grams_have_no_sem_and_content_words_do():
    from metaeval.metrics.text import stopwords

    for w in ("the", "was", "a", "in", "and", "that"):
        assert w in stopwords() and np.isnan(grouge.similarity(w, PEER))
    car, police, banana = (grouge.similarity(w, PEER) for w in ("car", "police", "banana"))
    # present content words are credited, an unrelated one far less
    assert min(car, police) > 0.3 and banana < 0.1 < min(car, police) - banana
    # a stopword in a gram with a content word changes nothing: its signature is the content word's
    assert grouge.similarity("the car", PEER) == grouge.similarity("car", PEER)


def test_a_stopword_only_gram_contributes_its_lexical_count_only():
    # reference "the of cat": the (in the peer, hit 1), of (absent, hit 0) and cat (Sem); planted bug: if
    # the stopwords had a Sem, S would not be (1 + 0 + Sem(cat)) / 3
    peer, ref = "the cat sat on a mat", "the of cat"
    L, S = grouge.score_parts([peer], [[ref]], ["grouge-1"])
    sem_cat = grouge.similarity("cat", peer)
    assert L.iloc[0, 0] == pytest.approx(2 / 3)
    assert S.iloc[0, 0] == pytest.approx((1 + 0 + sem_cat) / 3, abs=1e-12)
    # bigrams: "the of" is stopword-only and absent (0), "of cat" has Sem(of cat) = Sem(cat)
    L2, S2 = grouge.score_parts([peer], [[ref]], ["grouge-2"])
    assert L2.iloc[0, 0] == 0 and S2.iloc[0, 0] == pytest.approx(sem_cat / 2, abs=1e-12)
    # lam = 0 is the semantic part
    f = grouge.score([peer], [[ref]], ["grouge-1"], lam=0.0)
    assert f.iloc[0, 0] == pytest.approx(S.iloc[0, 0], abs=1e-15)


# ------------------------------------------------------------------------------------------------
# The compiled engine against a plain Python statement of the rules


def _plain_sem(gram, peer, store, align_topk):
    """Sem(gram, peer) by the rules of the module docstring, dense vectors, no shortcuts (the gram has at
    most one OOV word, so the OOV order needs no tie rule)."""
    from metaeval.metrics.text import stopwords, tokenize

    sw, wn = stopwords(), store.wn
    g = [w for w in dict.fromkeys(tokenize(gram)) if w not in sw]
    if not g:
        return float("nan")
    p_tokens = [w for w in tokenize(peer) if w not in sw]
    p = list(dict.fromkeys(p_tokens))
    senses = {w: [s.node for s in wn.senses(w)] for w in g + p}
    store.ensure({s for w in senses for s in senses[w]})

    heads: dict = {}

    def head(node):  # memoised: the plain rule re-ranks a whole dense vector per call (minutes without it)
        if node not in heads:
            v = store.dense(node)
            v[_overlap._ranked(v)[align_topk:]] = 0
            heads[node] = v
        return heads[node]

    def sim(a, b):
        return grouge.cosine(head(a), head(b))

    def choose(word, other_senses):
        shared = [s for s in senses[word] if s in other_senses]
        if shared:
            return shared[-1]
        best, pick = 0.0, None
        for s in senses[word]:
            m = max((sim(s, t) for t in other_senses), default=0.0)
            if m > best:
                best, pick = m, s
        return pick

    p_senses = {s for w in p for s in senses[w]}
    g_senses = {s for w in g for s in senses[w]}
    n = wn.n_nodes
    oov = sorted({w for w in g + p if not senses[w]})
    dim = {w: n + k for k, w in enumerate(oov)}

    def vector(words, chosen, counts):
        v = np.zeros(n + len(oov))
        for s in sorted({c for c in chosen if c is not None}):
            v += np.pad(store.dense(s), (0, len(oov)))
        top = sorted([w for w in words if not senses[w]], key=lambda w: (-counts.get(w, 1), w))
        for k, w in enumerate(top):
            v[dim[w]] = 10.0 + len(top) - k
        return v

    gv = vector(g, [choose(w, p_senses) for w in g if senses[w]], {})
    counts = {w: p_tokens.count(w) for w in p}
    pv = vector(p, [choose(w, g_senses) for w in p if senses[w]], counts)
    return grouge.weighted_overlap(gv, pv)


def test_engine_equals_a_plain_implementation_of_the_rules(summeval):
    opts = grouge.GRougeOptions(topk=48, align_topk=16)
    store = grouge.SenseVectors(topk=48, cache=False)
    S, R = summeval.summaries(), summeval.references()
    peers = [S[0, 0], "police fired three officers", "zyxwv and the car", ""]
    grams = ["officers", "the fired officers", "car", "zyxwv car", "terminated", "of the", "bank", "police said"]
    grams += [" ".join(R[0, 0][0].split()[i : i + 2]) for i in range(0, 12, 3)]
    for peer in peers:
        for gram in grams:
            got = grouge.similarity(gram, peer, options=opts, cache=False)
            want = _plain_sem(gram, peer, store, 16)
            if np.isnan(want):
                assert np.isnan(got), (gram, peer)
            else:
                assert got == pytest.approx(want, abs=1e-12), (gram, peer)


# ------------------------------------------------------------------------------------------------
# Vector sizes: ADW's 5000, the power method's own top 5000


def test_default_vectors_are_the_power_methods_top_5000(wn):
    # the stored vectors are the 30-step power iteration's (float32, bitwise, see above) top 5000, ties by
    # node: the error against the power method is 0 by construction
    assert grouge.DEFAULT_TOPK == 5000 and grouge.GRougeOptions().topk == 5000
    nodes = np.asarray([wn.synset("dog.n.01"), wn.synset("fire.v.04"), wn.synset("rain.v.01")])
    store = grouge.SenseVectors(cache=False)
    store.ensure(nodes)
    full = grouge.ppr([[int(s)] for s in nodes], dtype=np.float32)
    idx, val, length = _ppr._truncate(full, 5000)
    rows = store.row_of[nodes]
    assert np.array_equal(store.idx[rows], idx) and np.array_equal(store.val[rows], val)
    assert (length == 5000).all()


# ------------------------------------------------------------------------------------------------
# The disk cache: validated shards, no pickle


def _one_shard(tmp_path):
    shards = sorted((tmp_path / "grouge").rglob("shard-*.npz"))
    assert len(shards) == 1
    with np.load(shards[0]) as z:
        return shards[0], {k: z[k].copy() for k in z.files}


def _rewrite(path, arrays, *, fix_checksum=True):
    from metaeval.metrics.grouge._store import _digest

    if fix_checksum:  # a hostile or buggy writer that also writes a matching checksum
        arrays["sha256"] = _digest(arrays["nodes"], arrays["idx"], arrays["val"], arrays["length"])
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


@pytest.mark.parametrize("damage, message", [
    ("nan", "not finite"),
    ("huge_dimension", "dimension indices"),
    ("shifted_nodes", "node ids"),
    ("checksum", "checksum"),
    ("order", "decreasing"),
    ("pickle", "ignoring GRouge cache"),
])
def test_damaged_cache_shards_are_recomputed_with_a_warning(tmp_path, monkeypatch, damage, message):
    from metaeval.metrics.grouge import _store as store_mod

    monkeypatch.setenv("METAEVAL_CACHE", str(tmp_path))
    monkeypatch.setattr(store_mod, "_STORES", {})
    peers, refs = ["police fired three officers"], [["the officers were dismissed by the police"]]
    clean = grouge.score(peers, refs, topk=16)
    path, arrays = _one_shard(tmp_path)
    if damage == "nan":
        arrays["val"][0, 0] = np.nan
    elif damage == "huge_dimension":
        arrays["idx"][0, 0] = 2**30  # was a segmentation fault
    elif damage == "shifted_nodes":
        arrays["nodes"] = arrays["nodes"] + 10**9  # was an IndexError
    elif damage == "order":
        arrays["val"][0, :2] = arrays["val"][0, 1::-1]
    if damage == "pickle":
        import pickle

        marker = tmp_path / "executed"

        class Payload:
            def __reduce__(self):
                return (open, (str(marker), "w"))

        path.write_bytes(pickle.dumps({"nodes": Payload()}))
    else:
        _rewrite(path, arrays, fix_checksum=damage != "checksum")
        if damage == "checksum":
            arrays["val"][0, 1] *= 1.0001
            _rewrite(path, arrays, fix_checksum=False)
    monkeypatch.setattr(store_mod, "_STORES", {})
    with pytest.warns(grouge.GRougeWarning, match=message):
        again = grouge.score(peers, refs, topk=16)
    assert np.array_equal(again.to_numpy(), clean.to_numpy())  # never a changed score
    if damage == "pickle":
        assert not (tmp_path / "executed").exists()


def test_wordnet_parse_cache_never_unpickles(tmp_path, monkeypatch):
    import pickle

    monkeypatch.setenv("METAEVAL_CACHE", str(tmp_path))
    marker = tmp_path / "executed"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    first = wordnet.WordNet()  # parses, writes npz + json
    base = wordnet._cache_path(first.sha256)
    npz, meta = base.with_suffix(".npz"), base.with_suffix(".json")
    assert npz.exists() and meta.exists()
    old = tmp_path / "wordnet" / f"parsed-{first.sha256[:32]}.pkl"  # where the previous version looked
    for path in (npz, meta, old):
        path.write_bytes(pickle.dumps(Payload()))
    with pytest.warns(UserWarning, match="WordNet parse cache"):
        again = wordnet.WordNet()
    assert not marker.exists()
    assert again.n_nodes == first.n_nodes and (again.adjacency != first.adjacency).nnz == 0
    assert [s.name for s in again.senses("dogs")] == [s.name for s in first.senses("dogs")]


# ------------------------------------------------------------------------------------------------
# The engine's steps (issue 21: _peer_sems split into steps) and the rank counting of step 7


def _brute_ranks(p: np.ndarray, queries: np.ndarray) -> list[int]:
    """Rank (1 = first) of each queried dimension among the non-zero dimensions of p: larger value first,
    equal values by dimension; 0 if the dimension is zero in p."""
    nz = np.flatnonzero(p)
    order = nz[np.lexsort((nz, -p[nz]))]
    pos = {int(d): k + 1 for k, d in enumerate(order)}
    return [pos.get(int(h), 0) for h in queries]


def test_ranks_in_peer_count_ties_by_dimension_as_a_full_sort_does():
    # values drawn from a few levels, so that most queried dimensions tie with others (WordNet's symmetric
    # leaves give exactly equal PPR values); OOV dimensions (>= n_nodes) take the peer's OOV ranks
    rng = np.random.default_rng(3)
    n_nodes, n_dims = 60, 63
    for _ in range(200):
        acc = np.zeros(n_dims)
        support = rng.choice(n_nodes, size=rng.integers(1, 40), replace=False)
        acc[support] = rng.choice([0.5, 0.25, 0.125, 0.0625], size=support.size)
        touched = rng.permutation(support).astype(np.int64)
        queries = rng.choice(n_dims, size=rng.integers(1, 30), replace=False).astype(np.int64)
        oov_rank = np.zeros(n_dims, np.int64)
        oov_rank[n_nodes:] = [2, 0, 1]  # the peer's two OOV words rank first
        n_oov_p = 2
        m = queries.size
        g_rank = np.full(m, -7, np.int64)
        _engine._ranks_in_peer(queries, m, acc, touched, touched.size, oov_rank, n_oov_p, n_nodes,
                               np.empty(m, np.int64), np.empty(m), np.empty(m, np.int64),
                               np.empty(m + 1, np.int64), g_rank)
        inside = _brute_ranks(acc[:n_nodes], np.minimum(queries, n_nodes - 1))
        want = [int(oov_rank[h]) if h >= n_nodes else (n_oov_p + r if r else 0) for h, r in zip(queries, inside)]
        assert g_rank.tolist() == want


def test_content_sets_make_grams_with_the_same_content_words_one():
    # "the police", "police", "police the" and "police police" have one Sem (stopwords never enter a
    # signature, order and repeats do not matter); a stopword-only gram keeps no word (its Sem is NaN)
    from metaeval.metrics.grouge._scoring import _content_sets

    is_stop = [True, False, False]  # 0: "the", 1: "police", 2: "car"
    grams = np.array([[0, 1], [1, -1], [1, 0], [1, 1], [2, 1], [1, 2], [0, 0]])
    got = _content_sets(grams, is_stop).tolist()
    assert got == [[-1, 1]] * 4 + [[1, 2]] * 2 + [[-1, -1]]
    store = grouge.SenseVectors(topk=32, cache=False)
    opts = grouge.GRougeOptions(topk=32, align_topk=16)
    peer = "the officers arrested a man near the car"
    sems = [grouge.similarity(g, peer, options=opts, cache=False) for g in ("the police", "police", "police the")]
    assert sems[0] == sems[1] == sems[2] and 0 < sems[0] < 1
    assert sems[0] == pytest.approx(_plain_sem("police", peer, store, 16), abs=1e-12)


def test_score_parts_takes_scores_settings_and_refuses_others():
    with pytest.raises(TypeError, match="unknown settings \\['topK'\\]"):
        grouge.score_parts(["a car"], [["a car"]], ["grouge-1"], topK=5)
    with pytest.raises(ValueError, match="given both in options and as keywords"):
        grouge.score_parts(["a car"], [["a car"]], ["grouge-1"], options=grouge.GRougeOptions(topk=64), topk=32)
