"""The alternative annotator test (metaeval.stats.alt_test; Calderon, Reichart & Dror, 2025) and its uses in
metaeval.studies.few_labels: hand-computed indicators, scipy's t-test and Benjamini-Yekutieli, the level at
the boundary of H0 by simulation, the minimum sizes, and the dataset table."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

import metaeval
from metaeval.stats.alt_test import (
    _indicators,
    alt_test,
    alt_test_calibration,
    equate,
    simulate_ratings,
)
from metaeval.studies import few_labels

# 4 items x 3 annotators and a judge, worked by hand with alignment = minus the distance to the others' mean
HUMANS = np.array([[1.0, 2.0, 3.0], [4.0, 4.0, 5.0], [2.0, 2.0, 2.0], [5.0, 1.0, 3.0]])
JUDGE = np.array([2.0, 4.5, 3.0, 3.0])
# annotator 0 left out: others' means 2.5, 4.5, 2, 2 -> judge distances .5, 0, 1, 1; annotator 0's 1.5, .5, 0, 3
# annotator 1: others' means 2, 4.5, 2, 4 -> judge 0, 0, 1, 1; annotator 1's 0, .5, 0, 3
# annotator 2: others' means 1.5, 4, 2, 3 -> judge .5, .5, 1, 0; annotator 2's 1.5, 1, 0, 0
W_F = np.array([[1, 1, 1], [1, 1, 1], [0, 0, 0], [1, 1, 1]], dtype=float)
W_H = np.array([[0, 1, 0], [0, 0, 0], [1, 1, 1], [0, 0, 1]], dtype=float)  # ties: item 0 of annotator 1, item 3 of 2


def test_indicators_by_hand():
    w_f, w_h, valid = _indicators(JUDGE, HUMANS, "mean-distance")
    assert valid.all()
    assert_allclose(w_f, W_F)
    assert_allclose(w_h, W_H)


def test_float_ties_are_ties():
    # |5/3 - 4/3| and |1 - 4/3| differ in their last bits; they are one tie
    humans = np.array([[4 / 3, 4 / 3, 4 / 3]] * 3)
    w_f, w_h, _ = _indicators(np.array([5 / 3] * 3), humans - np.array([0, 0, 1 / 3]), "mean-distance")
    assert w_f[:, 2].tolist() == [1.0] * 3 and w_h[:, 2].tolist() == [1.0] * 3


def test_pvalues_are_scipy_paired_t_test_and_by():
    rng = np.random.default_rng(3)
    humans = np.clip(np.round(rng.normal(3, 1, (120, 1)) + rng.normal(0, 1, (120, 4))), 1, 5)
    judge = np.clip(np.round(humans.mean(1) + rng.normal(0, 0.7, 120)), 1, 5)
    res = alt_test(judge, humans, epsilon=0.1)
    w_f, w_h, _ = _indicators(judge, humans, "mean-distance")
    for j in range(4):
        ref = stats.ttest_rel(w_h[:, j] - 0.1, w_f[:, j], alternative="less")
        assert_allclose([res.statistic[j], res.pvalue[j]], [ref.statistic, ref.pvalue], rtol=1e-12)
        assert_allclose(res.judge_advantage[j], w_f[:, j].mean(), rtol=0, atol=1e-15)
    assert_allclose(res.adjusted_pvalue, stats.false_discovery_control(res.pvalue, method="by"), rtol=1e-15)
    assert res.winning_rate == np.mean(res.adjusted_pvalue <= 0.05)
    assert res.advantage_probability == pytest.approx(res.judge_advantage.mean(), abs=1e-15)


def test_constant_differences_follow_scipy():
    # judge 3 against ratings 1, 3, 5 on every item: it beats annotators 0 and 2 (d = -1) and ties annotator 1
    # (d = 0) everywhere, so sd d = 0 and t = -inf, p = 0 (scipy's ttest_rel gives the same), with a warning
    humans = np.tile([1.0, 3.0, 5.0], (100, 1))
    with pytest.warns(metaeval.DegenerateResultWarning, match="same difference"):
        res = alt_test(np.full(100, 3.0), humans, epsilon=0.2)
    assert res.pvalue.tolist() == [0.0, 0.0, 0.0] and res.passed
    assert res.judge_advantage.tolist() == [1.0, 1.0, 1.0] and res.human_advantage.tolist() == [0.0, 1.0, 0.0]


def test_cannot_be_tested_below_the_minimum():
    rng = np.random.default_rng(0)
    humans = rng.integers(1, 6, (99, 3)).astype(float)
    res = alt_test(humans[:, 0], humans, epsilon=0.2)
    assert res.reason.startswith("cannot be tested") and not res.passed and np.isnan(res.winning_rate)
    two = alt_test(rng.integers(1, 6, 100).astype(float), rng.integers(1, 6, (100, 2)).astype(float))
    assert "the test needs 3" in two.reason
    ok = alt_test(rng.integers(1, 6, 100).astype(float), rng.integers(1, 6, (100, 3)).astype(float))
    assert ok.reason is None


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="judge has shape"):
        alt_test(np.ones(5), np.ones((6, 3)))
    with pytest.raises(ValueError, match="epsilon"):
        alt_test(np.ones(5), np.ones((5, 3)), epsilon=1.5)
    with pytest.raises(ValueError, match="alignment"):
        alt_test(np.ones(5), np.ones((5, 3)), alignment="kappa")


def test_binary_alignments_agree():
    rng = np.random.default_rng(1)
    humans = rng.integers(0, 2, (200, 3)).astype(float)
    judge = rng.integers(0, 2, 200).astype(float)
    ref = _indicators(judge, humans, "accuracy")
    for kind in ("mean-distance", "rmse"):
        got = _indicators(judge, humans, kind)
        assert_allclose(got[0], ref[0]) and assert_allclose(got[1], ref[1])


def test_boundary_design_is_exact():
    # E[W^h - W^f] = epsilon at the boundary: the mean difference over many simulated items
    f, h = simulate_ratings(1, 200_000, 3, lost=0.2, levels=(1, 2, 3, 4, 5), rng=5)
    w_f, w_h, _ = _indicators(f[0], h[0], "mean-distance")
    d = (w_h - w_f).mean(axis=0)
    se = (w_h - w_f).std(axis=0) / np.sqrt(200_000)
    assert (np.abs(d - 0.2) < 4 * se).all(), d


def _exact_level(n: int, epsilon: float, q: float) -> float:
    """The exact size of the t-test when no ties occur (continuous ratings): W^f ~ Bernoulli((1 - epsilon) / 2)
    independently over the items and d = 1 - 2 W^f, so the size is a binomial sum over the rejection region
    (0.0423 at n = 100, epsilon = 0.2, q = 0.05: the binomial's steps make it a little conservative there)."""
    k = np.arange(n + 1)
    mean = (n - 2 * k) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (mean - epsilon) / np.sqrt((1 - mean**2) / (n - 1))
    return float(stats.binom.pmf(k, n, (1 - epsilon) / 2)[stats.t.cdf(t, n - 1) <= q].sum())


@pytest.mark.parametrize("levels", [(1, 2, 3, 4, 5), (0, 1), None])
def test_level_at_the_boundary(levels):
    cal = alt_test_calibration(100, 3, epsilon=0.2, levels=levels, n_trials=2000, rng=11)
    level = 0.05 if levels is not None else _exact_level(100, 0.2, 0.05)
    assert abs(cal.rejection_rate - level) <= 3 * cal.rejection_se, (cal.rejection_rate, cal.rejection_se, level)
    assert cal.pass_rate <= 0.05 + 3 * cal.pass_se  # the procedure is conservative at the global boundary


def test_equate_keeps_order_and_takes_the_human_distribution():
    rng = np.random.default_rng(2)
    x = rng.random(500)
    ratings = rng.integers(1, 6, (500, 3)).astype(float)
    e = equate(x, ratings)
    assert (np.diff(e[np.argsort(x)]) >= 0).all()
    assert abs(np.mean(e) - ratings.mean()) < 0.02
    assert np.isnan(equate([np.nan, 1.0], ratings)[0])


def test_dataset_table_is_the_direct_call():
    ds = metaeval.datasets.load("hanna")
    judges = few_labels.alt_judges(ds, "human.relevance")
    assert {j.kind for j in judges} == {"llm", "metric", "control"} and sum(j.kind == "llm" for j in judges) == 16
    table = few_labels.alt_test_table(ds, judges[:1], human="human.relevance", epsilon=0.2)
    direct = alt_test(ds.matrix("Beluga-13B RE 1"), ds.ratings("human.relevance"), epsilon=0.2)
    assert table.advantage_probability.iloc[0] == direct.advantage_probability
    assert table.winning_rate.iloc[0] == direct.winning_rate
    assert_allclose(table[["p_by_h1", "p_by_h2", "p_by_h3"]].to_numpy()[0], direct.adjusted_pvalue, rtol=0)
    lines = few_labels.alt_test_sentences(table)
    assert "one-sided paired t-test" in lines[0] and "Benjamini-Yekutieli" in lines[0]


def test_no_judge_cannot_be_tested():
    ds = metaeval.datasets.load("goyal2022-cnn")
    table = few_labels.alt_test_table(ds, few_labels.alt_judges(ds, "human.preference"), human="human.preference",
                                      epsilon=0.2)
    assert table.reason.iloc[0].startswith("cannot be tested")
