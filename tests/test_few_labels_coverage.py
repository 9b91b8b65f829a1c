"""Prediction-powered meta-evaluation (metaeval.stats.ppi.ppi_correlation, metaeval.studies.few_labels_coverage):
invariants, the minimum-size rule and one coverage setting on an embedded dataset within binomial error."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from metaeval.data import datasets
from metaeval.stats.ppi import MIN_LABELLED_CORRELATION, ppi_correlation, ppi_mean, ppi_system_means


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
    res = ppi_correlation(X, hidden, J, coefficient="pearson", n_resamples=200, rng=0)
    means = ppi_system_means(Z[:, lab], J[:, lab], J[:, un], clip=False, rng=0)
    assert_allclose(res.system_means, means.statistic, rtol=1e-13)
    assert_allclose(res.lam, means.lam, rtol=1e-13)
    assert_allclose(res.system_means[3], ppi_mean(Z[3, lab], J[3, lab], J[3, un], clip=False).statistic, rtol=1e-13)
    assert_allclose(res.statistic, np.corrcoef(X.mean(axis=1), means.statistic)[0, 1], rtol=1e-12)
    assert (res.n_labelled, res.n_unlabelled) == (25, 75)


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
