"""Bad inputs and faults of the statistics layer (issues 15 and 24): wrong correlations (constancy, invariances),
silent degenerate results, labelled and masked inputs, input validation and resource guards. Each case asserts
the exact outcome, and none passes without its fix."""

from __future__ import annotations

import metaeval
import numpy as np
import pytest
from metaeval.stats.correlation import batch_corr, constant, level_corr
from metaeval.stats.resampling import draw_indices, resampled_corr
from metaeval.stats._kernels import coins as draw_coins
from metaeval.stats.significance import (
    _permutation_deltas,
    _standardize,
    permutation_test,
)
from scipy import stats

LEVELS = ("system", "summary", "global")
COEFFICIENTS = ("pearson", "spearman", "kendall")


# ----------------------------------------------------------------------------------------------------
# Wrong correlations: constancy decided exactly, shift and scale invariance on the embedded data


@pytest.fixture(scope="module")
def rouge4(fabbri):
    # rouge-4.f1 is 0.0 for every system on 7 of the 100 inputs: those inputs are undefined at summary level
    return fabbri.matrix("rouge-4.f1"), fabbri.matrix("expert.relevance")


def _scipy_summary_pearson(X, Z):
    rs = []
    for j in range(X.shape[1]):
        if np.all(X[:, j] == X[0, j]) or np.all(Z[:, j] == Z[0, j]):
            continue
        rs.append(stats.pearsonr(X[:, j], Z[:, j])[0])
    return float(np.mean(rs)), len(rs)


def test_summary_pearson_on_real_data_equals_scipy_and_skips_constant_inputs(rouge4):
    X, Z = rouge4
    ref, n_defined = _scipy_summary_pearson(X, Z)
    assert n_defined == 93
    assert metaeval.correlate(X, Z, level="summary") == pytest.approx(ref, abs=1e-12)
    assert round(ref, 4) == 0.1630


@pytest.mark.parametrize("shift", [0.1, 0.7, -0.3])
def test_summary_pearson_is_shift_invariant_on_real_data(rouge4, shift):
    """Adding 0.1 to every score moved the value from 0.1630 to 0.1516 (centring noise of 1e-17)."""
    X, Z = rouge4
    assert metaeval.correlate(X + shift, Z, level="summary") == pytest.approx(0.16300215883600883, abs=1e-12)
    assert metaeval.correlate(X + shift, Z + shift, level="summary") == pytest.approx(0.16300215883600883, abs=1e-12)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("coef", COEFFICIENTS)
@pytest.mark.parametrize("name", ["rouge-4.f1", "qa-eval.em", "BEwTE.precision"])
def test_every_level_and_coefficient_is_shift_and_scale_invariant(fabbri, level, coef, name):
    X, Z = fabbri.matrix(name), fabbri.matrix("expert.relevance")
    r = metaeval.correlate(X, Z, level=level, coefficient=coef)
    assert metaeval.correlate(X + 0.1, Z, level=level, coefficient=coef) == pytest.approx(r, abs=1e-12)
    assert metaeval.correlate(X * 0.7 + 0.1, Z * 3.0, level=level, coefficient=coef) == pytest.approx(r, abs=1e-12)


def test_bootstrap_statistic_and_interval_use_the_same_inputs(rouge4):
    X, Z = rouge4
    a = metaeval.bootstrap_ci(X, Z, level="summary", resample="both", n_resamples=300, rng=3)
    b = metaeval.bootstrap_ci(X + 0.1, Z, level="summary", resample="both", n_resamples=300, rng=3)
    assert b.statistic == pytest.approx(a.statistic, abs=1e-12)
    assert a.statistic == pytest.approx(0.16300215883600883, abs=1e-12)
    np.testing.assert_allclose(b.bootstrap_distribution, a.bootstrap_distribution, atol=1e-10)
    assert b.n_dropped == a.n_dropped


def _tricky(seed=4):
    """Columns that are constant at a value that is not representable, constant but one system, and nearly
    constant far from the column mean (variance 1e-18 of a mean square 1e6: a relative tolerance calls it
    constant, scipy does not)."""
    rng = np.random.default_rng(seed)
    Z = rng.integers(1, 6, size=(8, 10)) / 3.0
    X = Z + rng.normal(size=(8, 10))
    X[:, 0] = 0.1
    X[:, 1] = 0.7
    X[1:, 2] = 0.3
    X[:, 3] = np.r_[1000.0 + 1e-10 * np.arange(6) ** 2, 0.0, 0.0]
    Z[:, 4] = 0.7
    return X, Z


def test_resampled_summary_pearson_decides_constancy_exactly():
    X, Z = _tricky()
    rng = np.random.default_rng(2)
    rows, cols = draw_indices(8, 10, 400, "systems", rng)
    fast = resampled_corr([X], Z, rows, cols, "summary", "pearson", 64)[0]
    direct = np.array([level_corr(X[rows[b]][:, cols[b]], Z[rows[b]][:, cols[b]], "summary", "pearson")
                       for b in range(400)])
    np.testing.assert_array_equal(np.isnan(fast), np.isnan(direct))
    # rtol 1e-5, not 1e-9: column 3 varies by 1e-9 around 1000, so centring it cancels 12 of its 16 digits and any
    # computation of its r keeps about 4 (the kernel recomputes such resamples from the values, in another order of
    # summation than this loop: 4.7e-10 apart in one resample's mean); a wrong constancy decision (a constant
    # column counted as defined, or the reverse) moves a mean by ~0.1
    np.testing.assert_allclose(fast, direct, rtol=1e-5, equal_nan=True)
    # resamples drawing only the nearly constant rows of column 3 exist, and are counted as defined
    assert (rows < 6).all(axis=1).sum() > 10


def test_permuted_summary_pearson_decides_constancy_exactly():
    X, Z = _tricky()
    Y = X.copy()
    Y[:, 1] = 0.2  # a permuted column 1 mixes 0.7s and 0.2s: constant only if every coin is equal
    Y[:, 5] = np.r_[np.full(4, 0.1), Z[4:, 5]]
    Y[:, 3] = 1000.0 + 1e-9 * np.arange(8)  # nearly constant: the sums lose their digits
    Xs, Ys = _standardize(X), _standardize(Y)
    coins = draw_coins(np.random.default_rng(0), (300,), *X.shape, "both")
    fast = _permutation_deltas(Xs, Ys, Z, coins, "summary", "pearson", None)
    direct = np.array([
        level_corr(np.where(coins[b], Ys, Xs), Z, "summary", "pearson")
        - level_corr(np.where(coins[b], Xs, Ys), Z, "summary", "pearson")
        for b in range(300)
    ])
    np.testing.assert_allclose(fast, direct, rtol=1e-9, atol=1e-12, equal_nan=True)


def test_permutation_statistic_is_shift_invariant_on_real_data(fabbri, rouge4):
    X, Z = rouge4
    Y = fabbri.matrix("rouge-1.f1")
    a = permutation_test(X, Y, Z, level="summary", n_resamples=200, rng=1)
    b = permutation_test(X + 0.1, Y, Z + 0.1, level="summary", n_resamples=200, rng=1)
    assert b.statistic == pytest.approx(a.statistic, abs=1e-12)
    assert b.pvalue == a.pvalue


@pytest.mark.parametrize("value", [0.1, 0.7, 1 / 3])
def test_constant_vectors_are_undefined_for_every_coefficient(value):
    x = np.full(7, value)
    z = np.arange(7.0)
    for coef in COEFFICIENTS:
        assert np.isnan(batch_corr(x, z, coef)), coef
        assert np.isnan(batch_corr(z, x, coef)), coef


def test_constancy_helpers_are_exact():
    assert constant(np.array([[0.1, 0.1, 0.1], [0.1, 0.1, 0.1 + 2**-55]])).tolist() == [True, False]
    w = np.array([1.0, 1.0, 0.0])
    assert constant(np.array([0.3, 0.3, 5.0]), w)
    assert not constant(np.array([0.3, 0.3 + 1e-16, 5.0]), w)


def test_standardizing_a_constant_matrix_of_point_one_is_refused():
    X = np.full((5, 4), 0.1)
    Z = np.arange(20.0).reshape(5, 4)
    with pytest.raises(ValueError, match="constant matrix: all its scores are equal"):
        permutation_test(X, Z, Z, n_resamples=10, rng=0)


# ----------------------------------------------------------------------------------------------------
# Silent degenerate results: a metaeval warning that says why, dropped resamples counted


def _small(seed=0, shape=(6, 8)):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=shape)
    return Z + rng.normal(size=shape), rng.normal(size=shape), Z


def test_undefined_correlation_warns_with_the_reason():
    X, _, Z = _small()
    with pytest.warns(metaeval.DegenerateResultWarning, match="system-level pearson correlation is NaN.*constant"):
        r = metaeval.correlate(np.full_like(X, 0.1), Z)
    assert np.isnan(r)


def test_bootstrap_counts_and_warns_dropped_resamples():
    X, _, Z = _small(shape=(4, 6))
    X[:, :] = X[:1, :]  # every system scores the same on each input, so resamples of the 4 systems ...
    X[0] += 1.0  # ... are constant exactly when system 0 is not drawn: (3/4)^4 = 32 % of them
    with pytest.warns(metaeval.DegenerateResultWarning, match=r"(\d+) of 500 resamples were dropped") as rec:
        res = metaeval.bootstrap_ci(X, Z, resample="systems", n_resamples=500, rng=0)
    n = int(str(rec[0].message).split()[0])
    assert res.n_dropped == n == 500 - res.bootstrap_distribution.size
    assert 0.25 * 500 < n < 0.40 * 500


def test_permutation_test_with_undefined_observed_is_nan_not_one():
    """An empty null distribution gave p = (0 + 1) / (0 + 1) = 1.0, which looks like a real result."""
    X, Y, Z = _small()
    Z[:] = 3.0
    with pytest.warns(metaeval.DegenerateResultWarning, match="observed difference of correlations is NaN"):
        res = permutation_test(X, Y, Z, n_resamples=50, rng=0)
    assert np.isnan(res.pvalue)


def test_bootstrap_test_with_undefined_observed_is_nan():
    X, Y, Z = _small()
    Z[:] = 0.7
    with pytest.warns(metaeval.DegenerateResultWarning, match="p-value is NaN"):
        res = metaeval.bootstrap_test(X, Y, Z, n_resamples=50, rng=0)
    assert np.isnan(res.pvalue)


def test_permutation_result_counts_dropped_permutations():
    X, Y, Z = _small(shape=(4, 6))
    X[:, 0] = 0.1  # column 0 constant in X and in Y: every permuted column 0 is constant
    Y[:, 0] = 0.1
    res = permutation_test(X, Y, Z, level="summary", n_resamples=100, rng=0)
    assert res.n_dropped == 0  # a constant input is skipped, not the permutation
    assert res.null_distribution.size == 100


def test_fisher_and_williams_warn_when_undefined():
    X, Y, Z = _small()
    with pytest.warns(metaeval.DegenerateResultWarning, match="Williams' test is NaN"):
        res = metaeval.williams_test(X, Y, np.full_like(Z, 0.1))
    assert np.isnan(res.pvalue)
    with pytest.warns(metaeval.DegenerateResultWarning, match="correlation is NaN"):
        metaeval.fisher_ci(np.full_like(X, 0.7), Z)


# ----------------------------------------------------------------------------------------------------
# Inputs that carry meaning: pandas labels aligned or refused, masked arrays respected


def test_dataframes_are_aligned_by_labels():
    import pandas as pd

    X, _, Z = _small()
    systems, inputs = [f"s{i}" for i in range(6)], [f"d{j}" for j in range(8)]
    Xf = pd.DataFrame(X, index=systems, columns=inputs)
    Zf = pd.DataFrame(Z, index=systems, columns=inputs)
    shuffled = Zf.iloc[::-1, ::-1]
    for level in LEVELS:
        assert metaeval.correlate(Xf, shuffled, level=level) == pytest.approx(metaeval.correlate(X, Z, level=level))


def test_dataframes_with_different_labels_are_refused():
    import pandas as pd

    X, _, Z = _small()
    Xf = pd.DataFrame(X, index=[f"s{i}" for i in range(6)])
    Zf = pd.DataFrame(Z, index=[f"t{i}" for i in range(6)])
    with pytest.raises(ValueError, match=r"Z and X are DataFrames with different systems \(index\) labels"):
        metaeval.correlate(Xf, Zf)


def test_masked_cells_are_missing_cells():
    X, _, Z = _small()
    mask = np.zeros(X.shape, dtype=bool)
    mask[2, 3] = True
    Xm = np.ma.masked_array(X, mask=mask)
    with pytest.raises(ValueError, match=r"X contain NaN \(or masked cells\)"):
        metaeval.correlate(Xm, Z)
    Xn, Zn = X.copy(), Z.copy()
    Xn[2, 3] = Zn[2, 3] = np.nan
    expected = metaeval.correlate(Xn, Zn, level="summary", nan_policy="omit")
    got = metaeval.correlate(Xm, np.ma.masked_array(Z, mask=mask), level="summary", nan_policy="omit")
    assert got == pytest.approx(expected)
    assert got != pytest.approx(metaeval.correlate(X, Z, level="summary"))


# ----------------------------------------------------------------------------------------------------
# Utilities validate their inputs


@pytest.mark.parametrize("pvalues", [[0.2, 1.5], [-0.01, 0.3], [[0.1, 2.0]]])
def test_multiple_comparison_corrections_refuse_out_of_range_pvalues(pvalues):
    with pytest.raises(ValueError, match=r"pvalues must be in \[0, 1\]"):
        metaeval.bonferroni(pvalues)
    with pytest.raises(ValueError, match=r"pvalues must be in \[0, 1\]"):
        metaeval.holm(pvalues)


@pytest.mark.parametrize("n_tests", [0, -3, 2.5, True])
def test_bonferroni_refuses_bad_n_tests(n_tests):
    with pytest.raises(ValueError, match="n_tests must be an integer >= 1"):
        metaeval.bonferroni([0.01, 0.02], n_tests=n_tests)


def test_bonferroni_refuses_fewer_tests_than_pvalues():
    with pytest.raises(ValueError, match="n_tests=2 is smaller than the 3 p-values"):
        metaeval.bonferroni([0.01, 0.02, 0.03], n_tests=2)
    np.testing.assert_allclose(metaeval.bonferroni([0.01, np.nan], n_tests=5), [0.05, np.nan])


# ----------------------------------------------------------------------------------------------------
# Resource guards: refuse before allocating, naming the parameter and the estimate


@pytest.mark.parametrize("call", ["bootstrap_ci", "bootstrap_test", "permutation_test", "pairwise_tests"])
def test_too_many_resamples_are_refused_before_allocating(call, monkeypatch):
    monkeypatch.setenv("METAEVAL_MAX_MEMORY", "64M")
    X, Y, Z = _small()
    fn = getattr(metaeval, call)
    args = (X, Z) if call == "bootstrap_ci" else ([X, Y], Z) if call == "pairwise_tests" else (X, Y, Z)
    with pytest.raises(ValueError, match=r"n_resamples=10000000 needs about \d+\.\d [GM]iB .* limit of 64\.0 MiB"):
        fn(*args, n_resamples=10_000_000, rng=0)


def test_huge_batch_is_refused(monkeypatch):
    monkeypatch.setenv("METAEVAL_MAX_MEMORY", "1M")
    X, _, Z = _small()
    with pytest.raises(ValueError, match=r"batch=100000 needs about \d+\.\d [GM]iB per chunk"):
        metaeval.bootstrap_ci(X, Z, n_resamples=100, batch=100_000, rng=0)
    monkeypatch.setenv("METAEVAL_MAX_MEMORY", "lots")
    with pytest.raises(ValueError, match="METAEVAL_MAX_MEMORY must be a number of bytes"):
        metaeval.bootstrap_ci(X, Z, n_resamples=100, rng=0)


def test_one_resample_too_large_is_refused(monkeypatch):
    monkeypatch.setenv("METAEVAL_MAX_MEMORY", "1M")
    rng = np.random.default_rng(0)
    # global Kendall counts pairs by sorting (O(n) memory since issue 33), so the case needs a larger grid
    Z = rng.normal(size=(200, 1000))
    with pytest.raises(ValueError, match="one resample needs about .* MiB of temporaries.*limit of 1.0 MiB"):
        metaeval.bootstrap_ci(Z + 1, Z, level="global", coefficient="kendall", n_resamples=10, rng=0)


