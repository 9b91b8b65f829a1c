"""The dataset layer: embedded data, user data in Metrics JSONL form, and every bad input."""

import json
import shutil

import metaeval
import numpy as np
import pytest
from metaeval.datasets import DataError, DataWarning, known_datasets, load, synthetic


def test_summeval_grid_texts_and_ratings(summeval):
    assert summeval.shape == (16, 100)
    assert summeval.systems[:3] == ("M0", "M1", "M10")  # sorted as strings, like the reference code
    refs = summeval.references()
    assert refs.shape == (16, 100) and all(len(r) == 11 for r in refs.ravel())
    assert summeval.ratings("expert.relevance").shape == (16, 100, 3)
    assert summeval.ratings("turker.relevance").shape == (16, 100, 5)
    np.testing.assert_allclose(summeval.ratings("expert.relevance").mean(-1), summeval.matrix("expert.relevance"))


def test_summeval_published_system_means(summeval):
    means = summeval.system_scores("expert.relevance")
    published = {"M23": 4.26, "M22": 4.25, "M17": 4.23, "M0": 4.137, "M11": 3.147}
    for system, value in published.items():
        assert means[system] == pytest.approx(value, abs=0.0005)


def test_fabbri_same_grid_all_metrics(fabbri, summeval):
    assert fabbri.shape == (16, 100)
    assert fabbri.systems == summeval.systems and fabbri.inputs == summeval.inputs
    for name in ["qa-eval.f1", "bertscore.recall", "rouge-2.f1", "s3.resp", "METEOR", "MoverScore", "BEwTE.f1",
                 "AutoSummENG"]:
        assert name in fabbri.score_names
    np.testing.assert_array_equal(fabbri.matrix("expert.relevance"), summeval.matrix("expert.relevance"))
    assert load("data/deutsch2021/fabbri2020").shape == (16, 100)
    assert load("deutsch2021").score_names == fabbri.score_names


def test_unknown_dataset_lists_known():
    with pytest.raises(DataError, match="summeval"):
        load("tac2008")
    from metaeval.data.atlas import atlas_datasets

    # SummEval, REALSumm, Deutsch et al.'s two folders, and every embedded atlas dataset (issue 34)
    assert set(known_datasets()) == {"fabbri2020", "bhandari2020"} | set(atlas_datasets("embedded"))


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _rec(inp, sys, **metrics):
    return {"instance_id": inp, "summarizer_id": sys, "summarizer_type": "peer", "metrics": metrics}


def test_user_metrics_directory_merge_and_flatten(tmp_path):
    a = [_rec(i, s, m={"f1": float(k)}) for k, (i, s) in enumerate([(i, s) for i in "ab" for s in "xyz"])]
    b = [_rec(i, s, human={"rel": [1, 2, 4]}) for i in "ab" for s in "xyz"]
    b.append({"instance_id": "a", "summarizer_id": "ref", "summarizer_type": "reference", "metrics": {}})
    _write(tmp_path / "a.jsonl", a)
    _write(tmp_path / "b.jsonl", b)
    with pytest.raises(DataError, match=r"b\.jsonl:7: field 'summarizer_type' is 'reference'"):
        load(tmp_path)
    ds = load(tmp_path, reference_records="skip")
    assert ds.systems == ("x", "y", "z") and ds.inputs == ("a", "b")
    assert ds.score_names == ["human.rel", "m.f1"]
    assert ds.matrix("human.rel")[0, 0] == pytest.approx(7 / 3)
    assert ds.ratings("human.rel").shape == (3, 2, 3)


def test_malformed_line_reports_file_and_line(tmp_path):
    (tmp_path / "m.jsonl").write_text(json.dumps(_rec("a", "x", s=1.0)) + "\n{not json\n")
    with pytest.raises(DataError, match=r"m\.jsonl:2: not valid JSON"):
        load(tmp_path)


def test_missing_field_and_bad_value(tmp_path):
    _write(tmp_path / "m.jsonl", [{"instance_id": "a", "metrics": {}}])
    with pytest.raises(DataError, match="missing field 'summarizer_id'"):
        load(tmp_path)
    _write(tmp_path / "m.jsonl", [_rec("a", "x", s="high")])
    with pytest.raises(DataError, match=r"m\.jsonl:1: score 's' is 'high', expected a number"):
        load(tmp_path)


def test_duplicate_keys(tmp_path):
    _write(tmp_path / "m.jsonl", [_rec("a", "x", s=1.0), _rec("a", "x", s=2.0)])
    with pytest.raises(DataError, match=r"m\.jsonl:2: duplicate score 's'.*first seen at .*m\.jsonl:1"):
        load(tmp_path)


def test_incomplete_grid_choices(tmp_path):
    recs = [_rec(i, s, s=float(ord(i) + ord(s))) for i in "abc" for s in "xyz" if (i, s) != ("b", "y")]
    _write(tmp_path / "m.jsonl", recs)
    ds = load(tmp_path)  # loading never fails because of an incomplete score; using it does
    with pytest.raises(DataError, match=r"score 's' of dataset .* is missing in 1 of 9 cells, e.g. \(y, b\)"):
        ds.matrix("s")
    assert np.isnan(ds.matrix("s", allow_nan=True)).sum() == 1
    assert np.isnan(load(tmp_path, incomplete="keep-nan").matrix("s")).sum() == 1
    with pytest.warns(DataWarning, match=r"dropped 1 of 3 inputs .*: b$"):
        assert load(tmp_path, incomplete="drop-inputs").inputs == ("a", "c")
    with pytest.warns(DataWarning, match=r"dropped 1 of 3 systems .*: y$"):
        assert load(tmp_path, incomplete="drop-systems").systems == ("x", "z")
    with pytest.raises(ValueError, match="incomplete must be"):
        load(tmp_path, incomplete="drop")


def test_checksum_mismatch_and_missing_file(tmp_path, monkeypatch):
    root = tmp_path / "data"
    shutil.copytree(metaeval.datasets.data_dir() / "deutsch2021", root / "deutsch2021")
    shutil.copy(metaeval.datasets.data_dir() / "SHA256SUMS", root / "SHA256SUMS")
    monkeypatch.setenv("METAEVAL_DATA", str(root))
    target = root / "deutsch2021" / "fabbri2020" / "s3.jsonl"
    target.write_text(target.read_text().replace("0.4", "0.5", 1))
    with pytest.raises(DataError, match=r"s3\.jsonl has sha256 .* expected"):
        load("fabbri2020")
    monkeypatch.setenv("METAEVAL_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(DataError, match="does not exist"):
        load("summeval")


def test_unknown_score_name(fabbri):
    with pytest.raises(KeyError, match="qa-eval.f1"):
        fabbri.matrix("qaeval")


def test_synthetic_is_seeded_and_validated():
    a = synthetic(5, 6, system_correlation=0.5, summary_correlation=0.2, n_metrics=2, rng=1)
    b = synthetic(5, 6, system_correlation=0.5, summary_correlation=0.2, n_metrics=2, rng=1)
    np.testing.assert_array_equal(a.metrics, b.metrics)
    assert a.metrics.shape == (2, 5, 6) and a.human.shape == (5, 6)
    with pytest.raises(ValueError, match="n_systems"):
        synthetic(0, 6, system_correlation=0.5, summary_correlation=0.2)
    with pytest.raises(ValueError, match="summary_correlation"):
        synthetic(5, 6, system_correlation=0.5, summary_correlation=1.2)
