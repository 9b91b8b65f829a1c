"""Miloulis et al. (2019) study functions: targets, ranking tables with Williams bullets, comparisons."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metaeval.significance import williams_test
from metaeval.studies import miloulis


def synthetic(K=4, N=12, M=9, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(N, M)) + rng.normal(size=(N, 1))
    metrics = {f"m{k}": Z + (0.5 + k) * rng.normal(size=(N, M)) for k in range(K)}
    return metrics, Z


@pytest.mark.parametrize("level", ["global", "summary", "system"])
@pytest.mark.parametrize("coefficient", ["pearson", "spearman"])
def test_williams_pvalues_equal_williams_test(level, coefficient):
    metrics, Z = synthetic()
    p = miloulis.williams_pvalues(metrics, Z, level=level, coefficient=coefficient)
    names = list(metrics)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i != j:
                ref = williams_test(metrics[a], metrics[b], Z, level=level, coefficient=coefficient,
                                   alternative="greater").pvalue
                assert p[i, j] == pytest.approx(ref, rel=1e-9, abs=1e-12)
    assert np.isnan(np.diag(p)).all()


def test_ranking_table_sorted_with_bullets():
    metrics, Z = synthetic(K=5, N=20, M=30, seed=1)
    metrics["rouge-2|stem:yes|stop:no|stat:R|refs:A"] = metrics.pop("m4")
    table = miloulis.ranking_table(metrics, Z, level="global")
    assert table["spearman"].is_monotonic_decreasing
    assert table.loc[0, "optimal"]  # the best is never significantly beaten
    # m0 (least noise) beats m3 (most noise) clearly with 600 cells: m3 has no bullet
    assert not table.set_index("metric").loc["m3", "optimal"]
    row = table[table["metric"] == "R-2"].iloc[0]
    assert (row["ST"], row["RSW"], row["stat"]) == ("Y", "N", "R")
    from scipy.stats import kendalltau

    assert table.set_index("metric").loc["m1", "kendall"] == pytest.approx(
        kendalltau(metrics["m1"].ravel(), Z.ravel()).statistic)


def test_human_targets(summeval):
    targets = miloulis.human_targets(summeval)
    assert list(targets) == ["expert.coherence", "expert.consistency", "expert.fluency", "expert.relevance", "mean"]
    np.testing.assert_allclose(targets["mean"], np.mean([targets[k] for k in list(targets)[:4]], axis=0))
    assert list(miloulis.human_targets(summeval, "turker.fluency")) == ["turker.fluency"]


def test_compare_detects_a_better_metric():
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(15, 20))
    X, Y = Z + 0.5 * rng.normal(size=Z.shape), rng.normal(size=Z.shape)
    res = miloulis.compare(X, Y, Z, n_resamples=200, rng=0, coefficient="pearson")
    assert list(res["level"]) == ["system", "summary"]
    assert (res["perm_both_p"] < 0.05).all() and (res["boot_both_p"] < 0.05).all()
    assert (res["ci_low"] > 0).all() and (res["delta"] > 0).all()
    same = miloulis.compare(X, Y, Z, n_resamples=200, rng=0, coefficient="pearson")
    pd.testing.assert_frame_equal(res, same)


def test_learned_metrics_shapes_and_names():
    rng = np.random.default_rng(3)
    N, M = 6, 12
    frame = pd.DataFrame(rng.normal(size=(N * M, 5)), columns=[f"f{k}" for k in range(5)])
    feats = miloulis.Features(frame, rng.normal(size=(N * M, 3)), np.tile(np.arange(M), N), "bleu-sig", (N, M))
    targets = {"a": frame["f0"].to_numpy().reshape(N, M), "b": frame["f1"].to_numpy().reshape(N, M)}
    targets["mean"] = (targets["a"] + targets["b"]) / 2
    one = ({"depth": 1, "width": 8, "alpha": 1e-2, "max_iter": 50},)
    out, params = miloulis.learned_metrics(feats, targets, folds=3, rng=0, grid=one)
    assert set(out["a"]) == {"S-ROUGE", "M-ROUGE", "S-CENT", "M-CENT", "ridge", "best-single"}
    assert set(out["mean"]) == {"MEAN-ROUGE", "MEAN-CENT", "ridge", "best-single"}
    assert all(m.shape == (N, M) for d in out.values() for m in d.values())
    assert set(params.loc[params["model"] == "best-single", "feature"]) <= {"f0", "f1"}


def test_features_of_a_small_grid(summeval):
    ds = summeval.subset(systems=summeval.systems[:3], inputs=summeval.inputs[:4])
    feats = miloulis.features(ds, cache=False)
    assert feats.frame.shape == (12, 96 + 1 + 9) and feats.shape == (3, 4)
    assert feats.centroid_difference.shape == (12, 50)
    assert feats.groups.tolist() == [0, 1, 2, 3] * 3
    assert feats.bleu_signature.startswith("nrefs:11|case:lc")
    # the ROUGE columns are metaeval.rouge's values, the embedding columns metaeval.embeddings'
    import metaeval

    summaries = ds.texts["summary"].tolist()
    refs = [list(r) for r in ds.texts["references"]]
    wmd = metaeval.embeddings.score(summaries, refs, ["wmd"]).iloc[:, 0].to_numpy()
    np.testing.assert_allclose(feats.frame.filter(like="wmd|").iloc[:, 0].to_numpy(), wmd)
    mats = feats.matrices()
    assert mats["bleu"].shape == (3, 4) and mats["bleu"][1, 2] == feats.frame["bleu"].iloc[1 * 4 + 2]


def test_a_dataset_without_human_scores_is_a_data_error_naming_its_scores():
    from types import SimpleNamespace

    from metaeval.data.datasets import DataError

    ds = SimpleNamespace(name="mine", human_scores=[], score_names=["rouge.1"])
    with pytest.raises(DataError, match=r"dataset 'mine' has no human scores \(scores: rouge.1\)"):
        miloulis.default_humans(ds)
