"""The PPR vectors shipped in ``data/wordnet30/ppr/`` (what notebook 50's default run needs, as ADW ships
signatures): bit-identical to what the store computes, read instead of computed, covering the default run,
checked against ``data/SHA256SUMS``, never overwritten by :meth:`SenseVectors.save`."""

import numpy as np
import pytest
from metaeval import datasets
from metaeval.metrics import grouge, wordnet
from metaeval.run.paths import notebook_parameters

SHIPPED_K = 128


@pytest.fixture(scope="module")
def shipped():
    wn = wordnet.load()
    store = grouge.SenseVectors(topk=SHIPPED_K, cache=False)
    path = wn.folder / "ppr" / f"{store.tag}.npz"
    assert path.exists(), f"{path} is missing: see data/wordnet30/PROVENANCE.md"
    with np.load(path, allow_pickle=False) as z:
        arrays = grouge.validate_shard(z, n_nodes=wn.n_nodes, width=SHIPPED_K, dtype=np.float32)
    return path, arrays


def test_shipped_rows_are_bit_identical_to_computed_ones(shipped):
    _, (nodes, idx, val, length) = shipped
    rows = np.random.default_rng(3).choice(nodes.size, 48, replace=False)
    fresh = grouge.SenseVectors(topk=SHIPPED_K, cache=False)
    fresh.ensure(nodes[rows])
    r = fresh.row_of[nodes[rows]]
    np.testing.assert_array_equal(fresh.length[r], length[rows])
    np.testing.assert_array_equal(fresh.idx[r], idx[rows])
    np.testing.assert_array_equal(fresh.val[r], val[rows])


def test_the_store_reads_them_for_a_smaller_topk_and_not_for_a_larger_one(shipped, tmp_path, monkeypatch):
    monkeypatch.setenv("METAEVAL_CACHE", str(tmp_path))
    _, (nodes, idx, val, length) = shipped
    small = grouge.SenseVectors(topk=32)
    assert (small.row_of[nodes] >= 0).all()  # nothing to compute
    k = int(np.flatnonzero(length >= 32)[0])
    np.testing.assert_array_equal(small.idx[small.row_of[nodes[k]]], idx[k, :32])
    small.ensure(nodes)
    assert not (tmp_path / "grouge").exists() or not list((tmp_path / "grouge").rglob("shard-*.npz"))
    for off in (grouge.SenseVectors(topk=SHIPPED_K + 1), grouge.SenseVectors(topk=32, shipped=False),
                grouge.SenseVectors(topk=32, cache=False)):
        assert (off.row_of[nodes] < 0).all()


def test_they_cover_notebook_50s_default_run(shipped):
    _, (nodes, *_) = shipped
    defaults = notebook_parameters("50")
    n_inputs = defaults["n_inputs"]
    assert defaults["topk"] <= SHIPPED_K  # the default run reads them
    texts = []
    for name in ("summeval", "realsumm"):
        ds = datasets.load(name)
        ds = ds.subset(inputs=list(ds.inputs)[:n_inputs])
        texts += list(ds.summaries().ravel()) + [r for refs in ds.references().ravel() for r in refs]
    needed = grouge.sense_nodes(texts)
    missing = np.setdiff1d(needed, nodes)
    assert missing.size == 0, f"{missing.size} senses of the default run are not shipped: rerun the command in " \
                              "data/wordnet30/PROVENANCE.md"
    assert nodes.size == needed.size  # and nothing else (the file holds exactly the default run's senses)


def test_a_modified_shipped_file_is_an_error(shipped, tmp_path, monkeypatch):
    path, _ = shipped
    from metaeval import _resources

    monkeypatch.setattr(_resources, "has_sha256", lambda *a: False)
    with pytest.raises(_resources.ChecksumError, match="ppr"):
        grouge.SenseVectors(topk=SHIPPED_K)


def test_save_never_overwrites(tmp_path, shipped):
    _, (nodes, *_) = shipped
    store = grouge.SenseVectors(topk=8, cache=False)
    out = store.save(tmp_path / "v.npz", nodes[:3])
    with np.load(out, allow_pickle=False) as z:
        got = grouge.validate_shard(z, n_nodes=store.wn.n_nodes, width=8, dtype=np.float32)
    np.testing.assert_array_equal(got[0], nodes[:3])
    before = out.read_bytes()
    with pytest.raises(FileExistsError, match="remove it first"):
        store.save(out, nodes[:1])
    assert out.read_bytes() == before


def test_the_command_that_wrote_them(tmp_path, monkeypatch, capsys):
    from metaeval.run.cli import main

    monkeypatch.setenv("METAEVAL_CACHE", str(tmp_path / "cache"))
    args = ["grouge-vectors", "--dataset", "realsumm", "--n-inputs", "1", "--topk", "8", "--out-dir", str(tmp_path)]
    assert main(args) == 0
    written = list(tmp_path.glob("v2-*-k8-float32.npz"))
    assert len(written) == 1
    ds = datasets.load("realsumm")
    ds = ds.subset(inputs=list(ds.inputs)[:1])
    texts = list(ds.summaries().ravel()) + [r for refs in ds.references().ravel() for r in refs]
    with np.load(written[0], allow_pickle=False) as z:
        np.testing.assert_array_equal(z["nodes"], grouge.sense_nodes(texts))
    before = written[0].read_bytes()
    with pytest.raises(SystemExit, match="remove it first"):
        main(args)
    assert written[0].read_bytes() == before
    with pytest.raises(SystemExit, match="--n-inputs must be at least 1"):
        main(args[:3] + ["--n-inputs", "0"])
    with pytest.raises(SystemExit, match="--topk must be at least 1"):
        main(["grouge-vectors", "--topk", "0"])
