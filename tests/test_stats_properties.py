"""Invariants of the engine: batch independence, seeding, symmetry, exact small cases, bad input."""

import numpy as np
import pytest

import metaeval
from metaeval.correlation import batch_corr, level_corr
from metaeval.significance import permutation_test
from metaeval._warnings import DegenerateResultWarning


@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(8, 12))
    X = Z + rng.normal(size=(8, 12))
    Y = Z + 2 * rng.normal(size=(8, 12))
    return X, Y, Z


@pytest.mark.parametrize("level", ["system", "summary", "global"])
@pytest.mark.parametrize("coef", ["pearson", "spearman", "kendall"])
def test_batch_size_does_not_change_results(toy, level, coef):
    X, Y, Z = toy
    a = metaeval.bootstrap_ci(X, Z, level=level, coefficient=coef, n_resamples=300, rng=5, batch=7)
    b = metaeval.bootstrap_ci(X, Z, level=level, coefficient=coef, n_resamples=300, rng=5, batch=300)
    np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)
    p1 = permutation_test(X, Y, Z, level=level, coefficient=coef, n_resamples=200, rng=5, batch=3)
    p2 = permutation_test(X, Y, Z, level=level, coefficient=coef, n_resamples=200, rng=5)
    np.testing.assert_array_equal(p1.null_distribution, p2.null_distribution)
    assert p1.pvalue == p2.pvalue


def test_seed_reproducible_and_generator_accepted(toy):
    X, _, Z = toy
    a = metaeval.bootstrap_ci(X, Z, n_resamples=100, rng=np.random.default_rng(3))
    b = metaeval.bootstrap_ci(X, Z, n_resamples=100, rng=3)
    assert a.confidence_interval == b.confidence_interval
    c = metaeval.bootstrap_ci(X, Z, n_resamples=100, rng=4)
    assert c.confidence_interval != a.confidence_interval


def test_kendall_matches_scipy_with_ties():
    from scipy import stats

    rng = np.random.default_rng(1)
    x = rng.integers(0, 4, size=(50, 9)).astype(float)
    z = rng.integers(0, 3, size=(50, 9)).astype(float)
    ours = batch_corr(x, z, "kendall")
    ref = np.array([stats.kendalltau(a, b)[0] for a, b in zip(x, z)])
    np.testing.assert_allclose(ours, ref, atol=1e-12, equal_nan=True)
    ours_s = batch_corr(x, z, "spearman")
    ref_s = np.array([stats.spearmanr(a, b)[0] for a, b in zip(x, z)])
    np.testing.assert_allclose(ours_s, ref_s, atol=1e-12, equal_nan=True)


def test_system_means_snapped_before_ranking():
    """Means equal in exact arithmetic but summed in another order must tie (Kendall sees a tie)."""
    Z = np.array([[1 / 3, 2 / 3, 1.0], [2 / 3, 1.0, 1 / 3], [0.1, 0.2, 0.3], [0.9, 0.8, 0.7]])
    X = np.arange(12.0).reshape(4, 3)
    means = Z.mean(axis=1)
    assert means[0] == means[1] or abs(means[0] - means[1]) < 1e-15
    tau = level_corr(X, Z, "system", "kendall")
    from scipy import stats

    assert tau == pytest.approx(stats.kendalltau(X.mean(1), np.round(means, 12))[0], abs=1e-12)


def test_summary_level_skips_constant_inputs():
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(5, 4))
    X = Z + rng.normal(size=(5, 4))
    Z2 = Z.copy()
    Z2[:, 0] = 1.0  # undefined correlation in input 0
    expected = np.mean([np.corrcoef(X[:, j], Z[:, j])[0, 1] for j in range(1, 4)])
    assert metaeval.correlate(X, Z2, level="summary") == pytest.approx(expected, abs=1e-12)


def test_perm_null_is_antisymmetric_and_pvalue_convention(toy):
    X, Y, Z = toy
    a = permutation_test(X, Y, Z, n_resamples=500, rng=9)
    b = permutation_test(Y, X, Z, n_resamples=500, rng=9)
    np.testing.assert_allclose(a.null_distribution, -b.null_distribution, atol=1e-12)
    count = np.count_nonzero(a.null_distribution >= a.statistic - 1e-12)
    assert a.pvalue == pytest.approx((count + 1) / 501)


def test_identical_metrics_give_pvalue_one(toy):
    X, _, Z = toy
    res = permutation_test(X, X, Z, n_resamples=99, rng=0)
    assert res.statistic == 0 and res.pvalue == 1.0


def test_rows_xor_columns_differs_from_cellwise(toy):
    X, Y, Z = toy
    a = permutation_test(X, Y, Z, n_resamples=300, rng=1, resample="both")
    b = permutation_test(X, Y, Z, n_resamples=300, rng=1, resample="rows-xor-columns")
    assert not np.array_equal(a.null_distribution, b.null_distribution)


def test_pairwise_matches_single_tests(toy):
    X, Y, Z = toy
    for test, single in [("williams", None), ("boot-both", metaeval.bootstrap_test)]:
        res = metaeval.pairwise_tests({"X": X, "Y": Y}, Z, test=test, n_resamples=400, rng=2)
        if single is None:
            assert res.pvalues[0, 1] == pytest.approx(metaeval.williams_test(X, Y, Z, alternative="greater").pvalue, abs=1e-12)
        else:
            ref = single(X, Y, Z, n_resamples=400, rng=2)
            assert res.pvalues[0, 1] == pytest.approx(ref.pvalue, abs=1e-12)
    perm = metaeval.pairwise_tests({"X": X, "Y": Y}, Z, test="perm-both", n_resamples=300, rng=4)
    single = permutation_test(X, Y, Z, n_resamples=300, rng=4)
    assert perm.pvalues[0, 1] == pytest.approx(single.pvalue)
    assert perm.not_outperformed(0.05).dtype == bool


def test_nan_policy_omit_matches_manual():
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(6, 5))
    X = Z + rng.normal(size=(6, 5))
    X[0, 0] = Z[0, 0] = np.nan
    r = metaeval.correlate(X, Z, level="system", nan_policy="omit")
    assert r == pytest.approx(np.corrcoef(np.nanmean(X, 1), np.nanmean(Z, 1))[0, 1], abs=1e-12)
    s = metaeval.correlate(X, Z, level="summary", nan_policy="omit")
    per = [np.corrcoef(X[1:, 0], Z[1:, 0])[0, 1]] + [np.corrcoef(X[:, j], Z[:, j])[0, 1] for j in range(1, 5)]
    assert s == pytest.approx(np.mean(per), abs=1e-12)
    assert metaeval.fisher_ci(X, Z, level="summary", nan_policy="omit").n == 6


def test_corrections():
    p = np.array([[np.nan, 0.01], [0.04, np.nan]])
    np.testing.assert_allclose(metaeval.bonferroni(p), [[np.nan, 0.02], [0.08, np.nan]])
    np.testing.assert_allclose(metaeval.holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"level": "document"}, "level"),
        ({"coefficient": "tau"}, "coefficient"),
        ({"resample": "rows"}, "resample"),
        ({"n_resamples": 0}, "n_resamples"),
        ({"confidence_level": 1.5}, "confidence_level"),
        ({"batch": 0}, "batch"),
    ],
)
def test_bad_options(toy, kwargs, message):
    X, _, Z = toy
    with pytest.raises(ValueError, match=message):
        metaeval.bootstrap_ci(X, Z, **kwargs)


def test_bad_matrices(toy):
    X, Y, Z = toy
    with pytest.raises(ValueError, match="Z has shape"):
        metaeval.correlate(X, Z[:, :5])
    with pytest.raises(ValueError, match="at least 1 system"):
        metaeval.correlate(X[:0], Z[:0])
    with pytest.raises(ValueError, match="at least 3 systems"):  # resampling needs 3 (a coefficient does not)
        metaeval.bootstrap_ci(X[:2], Z[:2])
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        metaeval.correlate(bad, Z)
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        metaeval.correlate(bad, Z)
    # nan_policy="omit" is scipy's: the cell NaN in X only is left out of Z too, and counted in a warning
    with pytest.warns(DegenerateResultWarning, match=r"left out 1 cell of Z \(NaN in X\)"):
        omitted = metaeval.correlate(bad, Z, nan_policy="omit", level="summary")
    both = Z.copy()
    both[0, 0] = np.nan
    assert omitted == metaeval.correlate(bad, both, nan_policy="omit", level="summary")
    with pytest.raises(ValueError, match="2-D"):
        metaeval.correlate(X.ravel(), Z.ravel())
    with pytest.raises(ValueError, match="alternative"):
        permutation_test(X, Y, Z, alternative="bigger")
    with pytest.raises(ValueError, match="resample"):
        permutation_test(X, Y, Z, resample="cells")


@pytest.mark.parametrize("coef", ["pearson", "kendall"])
@pytest.mark.parametrize("level", ["system", "summary"])
def test_fast_paths_equal_direct_computation(level, coef):
    """The algebraic shortcuts (column counts, permuted sums) equal recomputing every resample directly."""
    from metaeval.resampling import draw_indices, resampled_corr
    from metaeval.significance import _permutation_deltas, _standardize
    from metaeval.stats._kernels import coins as draw_coins

    rng = np.random.default_rng(11)
    Z = rng.integers(1, 6, size=(9, 14)) / 3.0  # ties, as in human ratings
    X = Z + rng.normal(size=(9, 14))
    Y = rng.normal(size=(9, 14))
    rows, cols = draw_indices(9, 14, 40, "both", rng)
    fast = resampled_corr([X], Z, rows, cols, level, coef, 40)[0]
    direct = np.array([level_corr(X[rows[b]][:, cols[b]], Z[rows[b]][:, cols[b]], level, coef) for b in range(40)])
    np.testing.assert_allclose(fast, direct, atol=1e-12, equal_nan=True)
    coins = draw_coins(rng, (40,), 9, 14, "both")
    Xs, Ys = _standardize(X), _standardize(Y)
    fast = _permutation_deltas(Xs, Ys, Z, coins, level, coef, None)
    direct = np.array([
        level_corr(np.where(coins[b], Ys, Xs), Z, level, coef) - level_corr(np.where(coins[b], Xs, Ys), Z, level, coef)
        for b in range(40)
    ])
    np.testing.assert_allclose(fast, direct, atol=1e-12, equal_nan=True)
