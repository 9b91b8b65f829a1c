"""No silent wrong number at the extremes (issue 23, item 3): each case printed a number (or NaN) without a
warning before; each test below failed on that code."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

import metaeval
from metaeval import DegenerateResultWarning
from metaeval.stats import resampling, significance


def _matrices(seed=0, shape=(8, 12)):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=shape)
    return Z + rng.normal(size=shape), Z


def test_huge_cell_gives_scipys_correlation_on_rescaled_data():
    # one cell of 1e308: squares overflow; before, system and global Pearson were -0.0 and 0.0
    X, Z = _matrices()
    X[2, 5] = 1e308
    scaled = X / 1e300
    system = stats.pearsonr(scaled.mean(axis=1), Z.mean(axis=1)).statistic
    glob = stats.pearsonr(scaled.ravel(), Z.ravel()).statistic
    assert metaeval.correlate(X, Z, level="system") == pytest.approx(system, rel=1e-6)
    assert metaeval.correlate(X, Z, level="global") == pytest.approx(glob, rel=1e-6)
    assert abs(system) > 0.1  # the -0.150 of the catalogue, not 0


@pytest.mark.parametrize("level", ["system", "summary", "global"])
@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_correlation_is_scale_invariant_at_any_finite_scale(level, scale):
    X, Z = _matrices(1)
    expected = metaeval.correlate(X, Z, level=level)
    assert metaeval.correlate(X * scale, Z, level=level) == pytest.approx(expected, rel=1e-12)
    assert metaeval.correlate(X, Z * scale, level=level) == pytest.approx(expected, rel=1e-12)
    # power-of-2 rescaling is exact: the tests see the same data
    res = metaeval.permutation_test(X * scale, X + Z, Z, level=level, n_resamples=50, rng=0)
    ref = metaeval.permutation_test(X, X + Z, Z, level=level, n_resamples=50, rng=0)
    assert res.pvalue == ref.pvalue


def test_moderate_data_are_not_rescaled_bit_for_bit():
    X, Z = _matrices(2)
    from metaeval.stats.correlation import check_matrices

    out, _ = check_matrices("raise", X=X, Z=Z)
    assert np.array_equal(out, X)


def test_too_few_resamples_for_the_level_warn_with_the_number_needed():
    X, Z = _matrices(3)
    with pytest.warns(DegenerateResultWarning, match=r"n_resamples=1 is too few .* at least 40"):
        metaeval.bootstrap_ci(X, Z, n_resamples=1, rng=0)
    with pytest.warns(DegenerateResultWarning, match=r"at least 200"):
        metaeval.bootstrap_ci(X, Z, n_resamples=100, confidence_level=0.99, rng=0)
    assert resampling.min_resamples(0.9) == 20


def test_shapiro_of_non_finite_constant_or_short_data_is_nan_and_says_why():
    with pytest.warns(DegenerateResultWarning, match="non-finite"):
        res = significance.shapiro([1, 2, np.inf, 4])
    assert np.isnan(res.pvalue) and np.isnan(res.statistic)  # scipy: p = 1.0
    with pytest.warns(DegenerateResultWarning, match="constant"):
        assert np.isnan(significance.shapiro([0.1, 0.1, 0.1, 0.1]).pvalue)
    with pytest.warns(DegenerateResultWarning, match="at least 3"):
        assert np.isnan(significance.shapiro([1.0, 2.0]).pvalue)


def test_williams_of_identical_metrics_is_nan_and_says_so():
    X, Z = _matrices(4)
    with pytest.warns(DegenerateResultWarning, match="same metric"):
        res = metaeval.williams_test(X, X.copy(), Z)
    assert np.isnan(res.pvalue) and np.isnan(res.statistic)
    with pytest.warns(DegenerateResultWarning, match=r"constant scores in Z \(human\)"):
        assert np.isnan(metaeval.williams_test(X, X + Z, np.full_like(Z, 3.0)).pvalue)


@pytest.mark.parametrize("level", ["system", "summary", "global"])
@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall"])
def test_undefined_correlations_are_nan_with_a_warning(level, coefficient):
    X, _ = _matrices(5)
    with pytest.warns(DegenerateResultWarning, match="undefined"):
        r = metaeval.correlate(X, np.full_like(X, 0.7), level=level, coefficient=coefficient)
    assert np.isnan(r)


def _mean_product(x, z):
    """A user coefficient (a callable f(x, z) -> float): the mean product of the centred scores."""
    return float(np.mean((x - x.mean()) * (z - z.mean())))


@pytest.mark.parametrize(("level", "coefficient"), list(itertools.product(
    ["system", "summary", "global", "per-system"],
    ["pearson", "spearman", "kendall", "kendall-c", "pairwise-accuracy", _mean_product])))
def test_results_are_bit_identical_for_every_batch_including_nan_cells(level, coefficient):
    # before: global-level Pearson permutation_test with NaN cells differed by 2.2e-16 between batch=1 and others
    import warnings

    rng = np.random.default_rng(0)
    Z = rng.integers(1, 6, size=(7, 9)).astype(float)
    X, Y = Z + rng.normal(size=Z.shape), Z + 2 * rng.normal(size=Z.shape)
    rng_fixed = rng.normal(size=Z.shape)
    for A in (X, Y, Z):
        A[1, 2] = A[5, 0] = A[3, 8] = np.nan
    calls = {
        "permutation_test": lambda b, m: metaeval.permutation_test(
            X, Y, Z, level=level, coefficient=coefficient, resample=m, n_resamples=23, rng=1, batch=b,
            nan_policy="omit").null_distribution,
        "bootstrap_test": lambda b, m: metaeval.bootstrap_test(
            X, Y, Z, level=level, coefficient=coefficient, resample=m, n_resamples=23, rng=1, batch=b,
            nan_policy="omit").bootstrap_distribution,
        "bootstrap_ci": lambda b, m: metaeval.bootstrap_ci(
            X, Z, level=level, coefficient=coefficient, resample=m, n_resamples=23, rng=1, batch=b,
            nan_policy="omit").bootstrap_distribution,
        # the many-metric form (no NaN policy: complete copies), both of its tests
        "pairwise_tests": lambda b, m: metaeval.pairwise_tests(
            [np.nan_to_num(A, nan=3.0) for A in (X, Y, Z + rng_fixed)], np.nan_to_num(Z, nan=3.0),
            test=("perm-" if m != "inputs" else "boot-") + m, level=level, coefficient=coefficient,
            n_resamples=23, rng=1, batch=b).pvalues,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateResultWarning)
        for name, call in calls.items():
            for method in ("both", "systems", "inputs"):
                reference = call(1, method)
                for batch in (2, 7, None):
                    assert np.array_equal(call(batch, method), reference, equal_nan=True), (name, method, batch)
