"""The compiled summary-level Kendall kernels (bootstrap and permutation) against the numpy path they
replace: the same draws must give bit-identical resampled statistics, with ties (tau-b), duplicated
systems in a resample, and constant inputs (undefined, skipped)."""

import numpy as np
import pytest

from metaeval.stats.correlation import level_corr
from metaeval.stats.resampling import bootstrap_ci, draw_indices
from metaeval.stats._kernels import coins as draw_coins
from metaeval.stats.significance import _standardize, pairwise_tests, permutation_test


def _data(kind):
    rng = np.random.default_rng(7)
    Z = rng.normal(size=(12, 40))
    X = Z + rng.normal(size=Z.shape)
    Y = rng.normal(size=Z.shape)
    if kind == "ties":
        # few distinct values: many tied pairs; a constant input in Z and one in X
        X, Y, Z = np.round(X), np.round(Y), np.round(Z * 0.7)
        Z[:, 3] = 0.1
        X[:, 5] = 0.7
    return X, Y, Z


def _generic_boot(X, Z, rows, cols):
    r, c = rows[:, :, None], cols[:, None, :]
    return level_corr(X[r, c], Z[r, c], "summary", "kendall")


@pytest.mark.parametrize("kind", ["continuous", "ties"])
@pytest.mark.parametrize("resample", ["both", "systems"])
def test_bootstrap_kendall_identical_to_numpy_path(kind, resample):
    X, _, Z = _data(kind)
    res = bootstrap_ci(X, Z, level="summary", coefficient="kendall", resample=resample, n_resamples=300, rng=5)
    rows, cols = draw_indices(*X.shape, 300, resample, np.random.default_rng(5))
    expected = _generic_boot(X, Z, rows, cols)
    np.testing.assert_array_equal(res.bootstrap_distribution, expected[~np.isnan(expected)])
    assert res.n_dropped == np.isnan(expected).sum()


@pytest.mark.parametrize("kind", ["continuous", "ties"])
@pytest.mark.parametrize("method", ["both", "systems", "inputs", "rows-xor-columns"])
def test_permutation_kendall_identical_to_numpy_path(kind, method):
    X, Y, Z = _data(kind)
    res = permutation_test(X, Y, Z, level="summary", coefficient="kendall", resample=method, n_resamples=300,
                           rng=9)
    coins = draw_coins(np.random.default_rng(9), (300,), *X.shape, method)
    Xs, Ys = _standardize(X), _standardize(Y)
    Xp, Yp = np.where(coins, Ys, Xs), np.where(coins, Xs, Ys)
    null = level_corr(Xp, Z, "summary", "kendall") - level_corr(Yp, Z, "summary", "kendall")
    np.testing.assert_array_equal(res.null_distribution, null[~np.isnan(null)])


def test_duplicated_systems_count_as_ties():
    # a resample drawing one system twice and another once: the pair of copies ties in both variables and
    # does not count; the 2 pairs between the two systems are concordant: tau-b = 2 / sqrt(2) / sqrt(2)
    X = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 3.0], [3.0, 3.0, 1.0]])
    Z = X.copy()
    rows = np.array([[0, 0, 0]])  # one system only: constant everywhere -> undefined
    cols = np.array([[0, 1, 2]])
    assert np.isnan(_generic_boot(X, Z, rows, cols)).all()
    from metaeval.stats.resampling import _kendall_summary_boot

    assert np.isnan(_kendall_summary_boot(X, Z, rows, cols)).all()
    rows = np.array([[0, 0, 1]])
    out = _kendall_summary_boot(X, Z, rows, np.array([[0, 0, 2]]))
    tau = 2 / np.sqrt(2.0) / np.sqrt(2.0)
    np.testing.assert_array_equal(out, [[tau, tau, np.nan]])  # input 2: systems 0 and 1 tie in X
    from metaeval.stats.correlation import mean_of_defined as _mean_over_inputs

    np.testing.assert_array_equal(_mean_over_inputs(out), _generic_boot(X, Z, rows, np.array([[0, 0, 2]])))


def test_pairwise_kendall_uses_the_same_kernel():
    X, Y, Z = _data("ties")
    res = pairwise_tests({"x": X, "y": Y}, Z, test="perm-both", level="summary", coefficient="kendall",
                         n_resamples=200, rng=3)
    single = permutation_test(X, Y, Z, level="summary", coefficient="kendall", n_resamples=200,
                              rng=np.random.default_rng(3))
    assert res.pvalues[0, 1] == single.pvalue
