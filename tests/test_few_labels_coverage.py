"""Prediction-powered meta-evaluation (metaeval.stats.ppi.ppi_correlation, metaeval.studies.few_labels_coverage):
invariants, the minimum-size rule and one coverage setting on an embedded dataset within binomial error."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from metaeval.data import datasets
from metaeval.stats.correlation import level_corr
from metaeval.stats.ppi import MIN_LABELLED_CORRELATION, ppi_correlation, ppi_mean, ppi_system_means
from metaeval.studies.few_labels_coverage import DESIGNS, Design, coverage_table


@pytest.fixture(scope="module")
def summeval():
    ds = datasets.load("summeval")
    return ds.matrix("rouge-2.recall"), ds.matrix("expert.relevance"), ds.matrix("bertscore.recall")


def _hide(Z, n, seed):
    lab = np.sort(np.random.default_rng(seed).choice(Z.shape[1], n, replace=False))
    hidden = np.full_like(Z, np.nan)
    hidden[:, lab] = Z[:, lab]
    return hidden, lab


def test_system_means_are_ppi_means_and_the_statistic_their_correlation(summeval):
    X, Z, J = summeval
    hidden, lab = _hide(Z, 25, 0)
    un = np.setdiff1d(np.arange(Z.shape[1]), lab)
    with pytest.warns(UserWarning, match="0.91-0.94 on HANNA"):  # PEARSON_CAVEAT: the measured shortfall
        res = ppi_correlation(X, hidden, J, coefficient="pearson", n_resamples=200, rng=0)
    means = ppi_system_means(Z[:, lab], J[:, lab], J[:, un], clip=False, rng=0)
    assert_allclose(res.system_means, means.statistic, rtol=1e-13)
    assert_allclose(res.lam, means.lam, rtol=1e-13)
    assert_allclose(res.system_means[3], ppi_mean(Z[3, lab], J[3, lab], J[3, un], clip=False).statistic, rtol=1e-13)
    assert_allclose(res.statistic, np.corrcoef(X.mean(axis=1), means.statistic)[0, 1], rtol=1e-12)
    assert (res.n_labelled, res.n_unlabelled) == (25, 75)
    # the interval validated for Pearson is the basic one; Kendall's the percentile one
    low, high = np.percentile(res.bootstrap_distribution, [2.5, 97.5])
    assert_allclose(res.confidence_interval, (2 * res.statistic - high, min(1.0, 2 * res.statistic - low)), rtol=1e-14)
    tau = ppi_correlation(X, hidden, J, coefficient="kendall", n_resamples=200, rng=0)
    assert_allclose(tau.confidence_interval, np.percentile(tau.bootstrap_distribution, [2.5, 97.5]), rtol=1e-14)


def test_lam_zero_is_the_humans_own_means(summeval):
    X, Z, J = summeval
    hidden, lab = _hide(Z, 25, 1)
    res = ppi_correlation(X, hidden, J, coefficient="kendall", lam=0.0, n_resamples=200, rng=0)
    assert_allclose(res.system_means, Z[:, lab].mean(axis=1), rtol=1e-13)


def test_same_seed_same_interval_and_both_is_wider(summeval):
    X, Z, J = summeval
    hidden, _ = _hide(Z, 25, 2)
    a = ppi_correlation(X, hidden, J, n_resamples=500, rng=5)
    b = ppi_correlation(X, hidden, J, n_resamples=500, rng=5)
    assert a.confidence_interval == b.confidence_interval
    both = ppi_correlation(X, hidden, J, n_resamples=500, rng=5, resample="both")
    assert np.diff(both.confidence_interval)[0] > np.diff(a.confidence_interval)[0]


def test_refuses_below_the_minimum_and_bad_inputs(summeval):
    X, Z, J = summeval
    hidden, _ = _hide(Z, MIN_LABELLED_CORRELATION - 1, 3)
    with pytest.raises(ValueError, match="cannot be tested"):
        ppi_correlation(X, hidden, J)
    hidden, _ = _hide(Z, 30, 3)
    partial = hidden.copy()
    partial[0, np.flatnonzero(~np.isnan(hidden[0]))[0]] = np.nan
    with pytest.raises(ValueError, match="some systems only"):
        ppi_correlation(X, partial, J)
    with pytest.raises(ValueError, match="same shape"):
        ppi_correlation(X[:, :-1], hidden, J)
    with pytest.raises(ValueError, match="J holds NaN"):
        ppi_correlation(X, hidden, np.where(np.isnan(hidden), np.nan, J))
    with pytest.raises(ValueError, match="method"):
        ppi_correlation(X, hidden, J, method="BCa")


def test_coverage_at_one_setting_within_binomial_error():
    """HANNA, half of the inputs labelled, ChatGPT as the judge: the offered intervals (basic for Pearson,
    percentile for Kendall) cover the full-data coefficient at 95 % within 3 binomial standard errors; the
    percentile interval of Pearson does not (0.855-0.88 at 200 replicates in results/few_labels/coverage.csv)."""
    design = DESIGNS["hanna"]
    design = Design(design.human, design.metric, {"LLM": design.judges["LLM (ChatGPT RE 1)"]})
    trials = 150
    table = coverage_table("hanna", design=design, shares=[0.5], coefficients=["pearson", "kendall"],
                           n_replicates=trials, n_resamples=500, rng=3)
    ppi = table[table["judge"] == "LLM"].set_index(["coefficient", "interval"])
    bound = 0.95 - 3 * np.sqrt(0.95 * 0.05 / trials)
    assert ppi.loc[("pearson", "basic"), "offered"] and ppi.loc[("kendall", "percentile"), "offered"]
    assert ppi.loc[("pearson", "basic"), "coverage"] >= bound
    assert ppi.loc[("kendall", "percentile"), "coverage"] >= bound
    assert ppi.loc[("pearson", "percentile"), "coverage"] < 0.95 - 2 * np.sqrt(0.95 * 0.05 / trials)
    truth = level_corr(datasets.load("hanna").matrix(design.metric), datasets.load("hanna").matrix(design.human),
                       "system", "pearson")
    assert_allclose(ppi.loc[("pearson", "basic"), "truth"], truth, rtol=1e-12)
