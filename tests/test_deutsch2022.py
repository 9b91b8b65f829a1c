"""studies/deutsch2022.py: the tables of notebook 24 against direct computations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import metaeval
from metaeval.studies import deutsch2022 as d22


@pytest.fixture(scope="module")
def data():
    ds = metaeval.datasets.load("realsumm")
    Z = ds.matrix(ds.default_human)
    mats = {"QAEval": ds.matrix("qa-eval.f1"), "ROUGE-1": ds.matrix("rouge-1.recall"),
            "ROUGE-2": ds.matrix("rouge-2.recall")}
    return ds, Z, mats


def test_rouge_points():
    assert d22.rouge_points(np.array([[0.41, 0.5]])).tolist() == [[41.0, 50.0]]
    assert d22.rouge_points(np.array([[41.0, 50.0]])).tolist() == [[41.0, 50.0]]


def test_delta_table_rows_and_all_pairs(data):
    _, Z, mats = data
    by = d22.rouge_points(mats["ROUGE-1"])
    table = d22.delta_table(mats, Z, by=by, deltas=[(0, 1e9)], n_resamples=0)
    # one bucket holding every pair: the tau over pairs is Kendall's tau-a of the system means (no ties here)
    for name, X in mats.items():
        row = table[table["metric"] == name].iloc[0]
        assert row["n_pairs"] == 24 * 23 // 2
        assert row["statistic"] == pytest.approx(stats.kendalltau(X.mean(1), Z.mean(1)).statistic, abs=1e-12)


def test_ranking_stability_full_subset_is_one(data):
    _, Z, mats = data
    frame = d22.ranking_stability({"h": Z, **mats}, sizes=[100, 5], n_trials=20, rng=0)
    assert (frame[frame["documents"] == 100]["tau_mean"] == 1.0).all()
    assert (frame[frame["documents"] == 5]["tau_mean"] < 1.0).all()
    with pytest.raises(ValueError, match="sizes"):
        d22.ranking_stability(mats, sizes=[101])


def test_agreement_and_replicability_tables(data):
    _, Z, mats = data
    table = d22.agreement_table(mats, Z, n_resamples=200, rng=0)
    for _, row in table.iterrows():
        assert row["pairwise_accuracy"] == metaeval.pairwise_accuracy(mats[row["metric"]], Z)
    tests = metaeval.pairwise_tests(mats, Z, coefficient="pairwise-accuracy", n_resamples=100, rng=0)
    replic = d22.replicability_table({"a": tests, "b": tests})
    # the same p-value p twice: Bonferroni partial conjunction is 2p at u = 1 and p at u = 2; made monotone in u
    # (rejecting "on both" implies rejecting "on none"), the u = 2 p-value is min(1, 2p)
    np.testing.assert_allclose(replic["p_all"], np.minimum(1.0, 2 * replic["p_a"]))
    assert len(replic) == 6
    clusters = d22.accuracy_clusters(tests)
    assert sorted(clusters["metric"]) == sorted(mats)


def test_read_unjudged_and_unjudged_cis(data, tmp_path):
    ds, Z, mats = data
    rng = np.random.default_rng(0)
    rows = [{"system": s, "input": f"u{j}", "rouge-1.recall": rng.random()} for s in ds.systems for j in range(7)]
    path = tmp_path / "unjudged.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    extra = d22.read_unjudged(path, ds.systems, ["rouge-1.recall"])
    assert extra["rouge-1.recall"].shape == (24, 7)
    table = d22.unjudged_cis({"ROUGE-1": mats["ROUGE-1"]}, {"ROUGE-1": extra["rouge-1.recall"]}, Z,
                             n_resamples=50, rng=0)
    pooled = np.hstack([mats["ROUGE-1"], extra["rouge-1.recall"]]).mean(1)
    assert table.loc[0, "all_r"] == pytest.approx(stats.kendalltau(pooled, Z.mean(1)).statistic, abs=1e-12)
    pd.DataFrame(rows[:-1]).to_csv(path, index=False)
    with pytest.raises(ValueError, match="missing"):
        d22.read_unjudged(path, ds.systems, ["rouge-1.recall"])
    with pytest.raises(ValueError, match="columns"):
        d22.read_unjudged(path, ds.systems, ["bertscore"])
