"""One test per kernel of :mod:`metaeval.stats._kernels` (the single copy shared by resampling, significance,
the planner and the Deutsch study), plus the bugs a reviewer planted in them (see each test's comment)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from metaeval.stats import _kernels as K
from metaeval.stats import planning
from metaeval.stats.correlation import level_corr
from metaeval.stats.resampling import bootstrap_ci


# ----------------------------------------------------------------------------------------------------
# Tail rule and p-values


def test_tail_closures_match_the_written_rule_and_the_compiled_copy():
    # the rule as scipy's permutation_test writes it: >= observed - gamma, <= observed + gamma; two-sided on |.|
    null = np.array([-0.5, -0.2, -0.2 + 1e-17, 0.0, 0.1999999999999999, 0.2, 0.3])
    for alternative, expected in (
        ("greater", null >= 0.2 - 1e-9),
        ("less", null <= 0.2 + 1e-9),
        ("two-sided", np.abs(null) >= 0.2 - 1e-9),
    ):
        hits = K.TAIL[alternative](null, 0.2, 1e-9)
        np.testing.assert_array_equal(hits, expected)
        code = K.TAIL_CODES[alternative]
        compiled = [K._tail_hit(code, float(v), 0.2, 1e-9) for v in null]
        np.testing.assert_array_equal(compiled, expected)
    # default tolerance: 100 ulps of the observed value, so a sum taken in another order still counts
    assert K.tail_count(np.array([0.1 + 0.2]), 0.3, "less") == 1
    assert K.tail_count(np.array([0.3]), 0.1 + 0.2, "greater") == 1
    assert K.tail_count(np.array([0.30001]), 0.3, "less") == 0


def test_permutation_and_bootstrap_pvalues_by_hand():
    null = np.array([0.4, -0.1, 0.25, 0.3, -0.3])
    # greater: 0.4, 0.3 reach 0.3 -> (2 + 1) / (5 + 1)
    assert K.permutation_pvalue(null, 0.3, "greater", 0, 5) == 0.5
    # two-sided: |v| >= 0.3: 0.4, 0.3, -0.3 -> (3 + 1) / 6
    assert K.permutation_pvalue(null, 0.3, "two-sided", 0, 5) == pytest.approx(4 / 6)
    with pytest.warns(RuntimeWarning, match="NaN"):
        assert np.isnan(K.permutation_pvalue(null, np.nan, "greater", 0, 5))
    with pytest.warns(RuntimeWarning, match="5 of 5"):
        assert np.isnan(K.permutation_pvalue(np.array([]), 0.1, "greater", 5, 5))
    # bootstrap: centred at the observed 0.2, greater counts deltas - 0.2 >= 0.2
    deltas = np.array([0.1, 0.3, 0.4, 0.45, 0.6])
    assert K.bootstrap_pvalue(deltas, 0.2, "greater") == 3 / 5
    assert K.bootstrap_pvalue(deltas, 0.2, "less") == 3 / 5   # -0.1, 0.1, 0.2 <= 0.2
    assert np.isnan(K.bootstrap_pvalue(np.array([]), 0.2, "greater"))


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_t_pvalue_is_scipys_paired_t_test(alternative):
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=12), rng.normal(0.4, 1, size=12)
    ref = stats.ttest_rel(a, b, alternative=alternative)
    assert K.t_pvalue(ref.statistic, 11, alternative) == pytest.approx(ref.pvalue, rel=1e-12)


# ----------------------------------------------------------------------------------------------------
# Draws


def test_bootstrap_indices_follow_the_documented_draw_order():
    # Catches: indices from range(n - 1), columns drawn before rows, the rows' draw reused for the columns,
    # a non-resampled dimension that is not the identity. The documented order: all rows, then all columns,
    # each rng.integers(0, n) of the resample shape.
    for resample in ("both", "systems", "inputs"):
        rows, cols = K.bootstrap_indices(np.random.default_rng(5), (4, 50), 6, 6, resample)
        ref = np.random.default_rng(5)
        exp_rows = ref.integers(0, 6, size=(4, 50, 6)) if resample != "inputs" else np.broadcast_to(np.arange(6),
                                                                                                  (4, 50, 6))
        exp_cols = ref.integers(0, 6, size=(4, 50, 6)) if resample != "systems" else np.broadcast_to(np.arange(6),
                                                                                                   (4, 50, 6))
        np.testing.assert_array_equal(rows, exp_rows)
        np.testing.assert_array_equal(cols, exp_cols)


@pytest.mark.parametrize("N, M", [(4, 11), (11, 4)])
def test_bootstrap_indices_draw_each_dimension_from_its_own_range(N, M):
    # N != M: a draw from the other dimension's range (columns from range(N), rows from range(M)), or of the
    # other's length, passes every square-shape test; here it fails on shape, range or the documented stream.
    # Planted once (cols from range(N) in bootstrap_indices): this test failed, the square ones above passed.
    for resample in ("both", "systems", "inputs"):
        rows, cols = K.bootstrap_indices(np.random.default_rng(3), (500,), N, M, resample)
        assert rows.shape == (500, N) and cols.shape == (500, M)
        if resample != "inputs":
            # every system index drawn, none outside range(N), over 500 x N draws
            assert np.array_equal(np.unique(rows), np.arange(N))
        if resample != "systems":
            assert np.array_equal(np.unique(cols), np.arange(M))
        ref = np.random.default_rng(3)
        exp_rows = ref.integers(0, N, size=(500, N)) if resample != "inputs" else np.broadcast_to(np.arange(N),
                                                                                                  (500, N))
        exp_cols = ref.integers(0, M, size=(500, M)) if resample != "systems" else np.broadcast_to(np.arange(M),
                                                                                                   (500, M))
        np.testing.assert_array_equal(rows, exp_rows)
        np.testing.assert_array_equal(cols, exp_cols)
    # the public function on a non-square matrix: every resample is X[rows[b]][:, cols[b]]
    rng = np.random.default_rng(6)
    Z = rng.normal(size=(N, M))
    X = Z + rng.normal(size=(N, M))
    res = bootstrap_ci(X, Z, level="global", n_resamples=30, rng=8)
    rows, cols = K.bootstrap_indices(np.random.default_rng(8), (30,), N, M, "both")
    expected = np.array([level_corr(X[r][:, c], Z[r][:, c], "global", "pearson") for r, c in zip(rows, cols)])
    np.testing.assert_allclose(res.bootstrap_distribution, expected[~np.isnan(expected)], rtol=0, atol=1e-12)


def test_bootstrap_indices_are_uniform_and_independent():
    # A distributional check that needs no knowledge of the draw order: every index equally likely (chi-square
    # on 20,000 draws), and rows independent of columns (contingency chi-square; a reused draw makes them equal).
    # Fixed seed: the test is deterministic. Each p-value < 1e-4 under a correct draw happens with prob. 1e-4.
    N = M = 7
    rows, cols = K.bootstrap_indices(np.random.default_rng(11), (3000,), N, M, "both")
    for idx, n in ((rows, N), (cols, M)):
        freq = np.bincount(idx.ravel(), minlength=n + 1)
        assert freq[n] == 0
        assert stats.chisquare(freq[:n]).pvalue > 1e-4
    table = np.zeros((N, M))
    np.add.at(table, (rows[:, 0], cols[:, 0]), 1)
    assert stats.chi2_contingency(table).pvalue > 1e-4


def test_bootstrap_ci_uses_the_drawn_rows_and_columns_of_each_resample():
    # the public function end to end: each resampled correlation is the one of X[rows[b]][:, cols[b]]
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(6, 9))
    X = Z + rng.normal(size=(6, 9))
    for level in ("system", "summary", "global"):
        res = bootstrap_ci(X, Z, level=level, n_resamples=40, rng=4)
        rows, cols = K.bootstrap_indices(np.random.default_rng(4), (40,), 6, 9, "both")
        expected = np.array([level_corr(X[r][:, c], Z[r][:, c], level, "pearson") for r, c in zip(rows, cols)])
        np.testing.assert_allclose(res.bootstrap_distribution, expected[~np.isnan(expected)], rtol=0, atol=1e-12)


def test_draw_counts_are_multiplicities():
    idx = np.random.default_rng(0).integers(0, 5, size=(2, 3, 8))
    counts = K.draw_counts(idx, 5)
    assert counts.shape == (2, 3, 5) and counts.dtype == float
    for i in range(2):
        for j in range(3):
            np.testing.assert_array_equal(counts[i, j], np.bincount(idx[i, j], minlength=5))


def test_fair_bits_are_the_bits_of_the_random_bytes_and_fair():
    bits = K.fair_bits(np.random.default_rng(3), (5, 4001))
    ref = np.unpackbits(np.random.default_rng(3).integers(0, 256, size=(5 * 4001 + 7) // 8, dtype=np.uint8))
    np.testing.assert_array_equal(bits.ravel(), ref[: 5 * 4001])
    assert stats.binomtest(int(bits.sum()), bits.size).pvalue > 1e-4


def test_coins_have_each_methods_structure_and_packed_equals_unpacked():
    lead, N, M = (3, 20), 9, 11
    systems = K.coins(np.random.default_rng(0), lead, N, M, "systems")
    assert (systems == systems[..., :1]).all() and systems.shape == lead + (N, M)
    inputs = K.coins(np.random.default_rng(0), lead, N, M, "inputs")
    assert (inputs == inputs[..., :1, :]).all()
    xor = K.coins(np.random.default_rng(0), lead, N, M, "rows-xor-columns")
    ref = np.random.default_rng(0)
    row = K.fair_bits(ref, lead + (N, 1)).astype(bool)
    np.testing.assert_array_equal(xor, row ^ K.fair_bits(ref, lead + (1, M)).astype(bool))
    both = K.coins(np.random.default_rng(1), lead, N, M, "both")
    packed = K.coins(np.random.default_rng(1), lead, N, M, "both", packed=True)
    np.testing.assert_array_equal(packed.unpacked(), both)


# ----------------------------------------------------------------------------------------------------
# Constancy, standardization, Pearson


def test_constant_is_exact_and_respects_the_mask():
    x = np.array([[0.1, 0.1, 0.1], [0.7, 0.7, 0.7 + 1e-16], [3.0, 1.0, 3.0]])
    np.testing.assert_array_equal(K.constant(x), [True, False, False])
    w = np.array([[1, 1, 0], [1, 1, 0], [1, 0, 1]])
    np.testing.assert_array_equal(K.constant(x, w), [True, True, True])
    assert K.constant(np.empty((2, 0))).all()


def test_standardize_is_scipys_zscore_over_the_matrix():
    rng = np.random.default_rng(0)
    X = rng.normal(3, 2, size=(2, 5, 7))
    for t in range(2):
        np.testing.assert_allclose(K.standardize(X)[t], stats.zscore(X[t], axis=None), rtol=1e-14)
    Xn = X[0].copy()
    Xn[1, 2] = np.nan
    np.testing.assert_allclose(K.standardize(Xn), stats.zscore(Xn, axis=None, nan_policy="omit"), rtol=1e-14)
    assert np.isnan(K.standardize(np.full((3, 3), 0.1))).all()


def test_snap_ties_equal_sums_only():
    a = np.array([0.1 + 0.2, 0.3, 0.3 + 1e-9])
    s = K.snap(a)
    assert s[0] == s[1] and s[2] != s[1]


def test_pearson_is_scipys_pearsonr_with_and_without_mask():
    rng = np.random.default_rng(1)
    x, z = rng.normal(size=(4, 10)), rng.normal(size=(4, 10))
    for i in range(4):
        assert K.pearson(x, z, None)[i] == pytest.approx(stats.pearsonr(x[i], z[i]).statistic, rel=1e-13)
    w = (rng.random((4, 10)) > 0.3).astype(float)
    for i in range(4):
        keep = w[i] > 0
        ref = stats.pearsonr(x[i, keep], z[i, keep]).statistic
        assert K.pearson(np.where(keep, x[i], 0.0), np.where(keep, z[i], 0.0), w[i]) == pytest.approx(ref, rel=1e-12)
    assert np.isnan(K.pearson(np.full(5, 0.1), np.arange(5.0), None))


def test_pearson_row_is_pearson_from_its_sums():
    rng = np.random.default_rng(4)
    N, M = 6, 12
    X, Z = rng.normal(size=(N, M)), rng.normal(size=(N, M))
    X[:, 3] = 0.7  # constant: undefined
    X[:, 5] = 1e9 + 1e-3 * rng.normal(size=N)  # variance lost in the sums: weak
    Xc, Zc = X, Z - Z.mean(0)  # X not centred: column 5's variance is lost in its sums
    sums = (Xc.sum(0), Zc.sum(0), (Xc * Xc).sum(0), (Zc * Zc).sum(0), (Xc * Zc).sum(0))
    defined = ~K.constant(X.T) & ~K.constant(Z.T)
    r, weak = np.empty(M), np.zeros(M, bool)
    weights = np.arange(1.0, M + 1)
    mean = K.pearson_row(N, *sums, defined, weights, r, weak)
    sx, sz, sxx, szz, sxz = sums
    with np.errstate(invalid="ignore"):  # the formula, vectorized: n sxz - sx sz over sqrt((n sxx - sx^2)(n szz - sz^2))
        expected = np.clip((N * sxz - sx * sz) / np.sqrt((N * sxx - sx * sx) * (N * szz - sz * sz)), -1, 1)
    np.testing.assert_allclose(r, np.where(defined, expected, np.nan), rtol=1e-14)
    ok = ~np.isnan(r)
    assert mean == pytest.approx((weights[ok] * r[ok]).sum() / weights[ok].sum(), rel=1e-14)
    assert weak[5] and not weak[0] and np.isnan(r[3])
    ref = [stats.pearsonr(X[:, m], Z[:, m]).statistic for m in range(M) if m not in (3, 5)]
    np.testing.assert_allclose(r[[m for m in range(M) if m not in (3, 5)]], ref, rtol=1e-10)


def _swapped_summary(Xs, Ys, Z, swap):
    """The reference: per-input Pearson of the swapped columns, computed from the values."""
    Xp, Yp = np.where(swap, Ys, Xs), np.where(swap, Xs, Ys)
    return K.pearson(Xp.T, Z.T, None), K.pearson(Yp.T, Z.T, None)


def test_perm_summary_null_is_the_pearson_of_the_swapped_columns_for_every_metric():
    # the one summary-level Perm-Both kernel (permutation_test, the planner, the power study's shared draws), here
    # as the shared draws call it: every metric pair reads the same packed coins
    rng = np.random.default_rng(7)
    Kn, B, N, M = 3, 12, 10, 6
    Z = rng.normal(size=(N, M))
    Xs = K.standardize(Z + rng.normal(size=(N, M)))
    Yss = np.stack([K.standardize(Z + (k + 1) * rng.normal(size=(N, M))) for k in range(Kn)])
    coins = rng.integers(0, 2, size=(B, N, M)).astype(bool)
    null = K.perm_summary_pearson(np.broadcast_to(Xs, Yss.shape), Yss, np.broadcast_to(Z, Yss.shape),
                                  np.packbits(coins), np.zeros(Kn, np.int64), B)
    for k in range(Kn):
        for b in range(B):
            ex, ey = _swapped_summary(Xs, Yss[k], Z, coins[b])
            assert null[k, b] == pytest.approx(np.nanmean(ex) - np.nanmean(ey), abs=1e-12)


# ----------------------------------------------------------------------------------------------------
# The planner's rejection rule


def test_planner_rejects_only_below_alpha_not_at_it():
    # With 19 sign flips / permutations the smallest p-value is (0 + 1) / (19 + 1) = 0.05 exactly: at
    # alpha = 0.05 no test may reject, whatever the effect. Catches `p <= alpha` in the rejection rule
    # (planted: every trial then "rejects" and the power is 1.0).
    rng = np.random.default_rng(0)
    a = rng.normal(3.0, 0.1, size=40)
    b = a - 2.0
    res = planning.system_comparison_power(a, b, sizes=[20], test="permutation", n_resamples=19, n_trials=50,
                                           alternative="greater", rng=1, alpha=0.05)
    assert res.power.tolist() == [0.0]
    res = planning.system_comparison_power(a, b, sizes=[20], test="permutation", n_resamples=19, n_trials=50,
                                           alternative="greater", rng=1, alpha=0.0500001)
    assert res.power.tolist() == [1.0]
    Z = rng.normal(size=(8, 12))
    X, Y = Z + 0.01 * rng.normal(size=Z.shape), rng.normal(size=Z.shape)
    res = planning.metric_comparison_power(X, Y, Z, sizes=[(8, 12)], test="perm-both", level="global",
                                           n_resamples=19, n_trials=20, rng=2)
    assert res.power.tolist() == [0.0]


def test_options_record_and_keywords_give_the_same_table():
    a = np.random.default_rng(0).normal(size=30)
    b = a + np.random.default_rng(1).normal(0.3, 1, size=30)
    opts = planning.SystemTestOptions(test="t-test", n_trials=50)
    one = planning.system_comparison_power(a, b, sizes=[5, 10], options=opts, rng=0)
    two = planning.system_comparison_power(a, b, sizes=[5, 10], test="t-test", n_trials=50, rng=0)
    assert one.equals(two)
    with pytest.raises(ValueError, match="either options or the keywords"):
        planning.system_comparison_power(a, b, sizes=[5], options=opts, n_trials=10)
    with pytest.raises(ValueError, match="test must be one of"):
        planning.MetricTestOptions(test="perm-all")
    with pytest.raises(Exception):
        opts.alpha = 0.1  # frozen
