"""Study planner (metaeval.planning): hand-checked cases, agreement with the library's tests, calibration."""

from __future__ import annotations

import metaeval
import numpy as np
import pandas as pd
import pytest
from metaeval import bootstrap_test, permutation_test, planning, williams_test
from metaeval.stats import _kernels as K
from metaeval.stats import _planning_kernels as P
from metaeval.stats._kernels import bootstrap_indices, coins as draw_coins, fair_bits, tail_hits
from metaeval.stats._planning_kernels import _quotient_at_least
from scipy import stats


def binomial_interval(p: float, n: int, level: float = 0.999) -> tuple[float, float]:
    lo, hi = stats.binom.interval(level, n, p)
    return lo / n, hi / n


# ----------------------------------------------------------------------------------------------------
# One trial equals the library's own test with the same seed (catches any drift of the batched kernels)


@pytest.fixture(scope="module")
def pilot():
    ds = metaeval.datasets.load("fabbri2020")
    return ds.matrix("bertscore.f1"), ds.matrix("rouge-2.f1"), ds.matrix("expert.relevance")


@pytest.mark.parametrize("level,coefficient", [("system", "pearson"), ("system", "kendall"),
                                               ("summary", "pearson"), ("summary", "kendall"),
                                               ("global", "pearson")])
@pytest.mark.parametrize("test", ["perm-both", "perm-systems", "boot-both", "boot-inputs", "williams"])
def test_one_trial_equals_library_test(pilot, level, coefficient, test):
    X, Y, Z = pilot
    p = P._metric_pvalues(X[None], Y[None], Z[None], test, level, coefficient, 200, "greater",
                          np.random.default_rng(5))[0]
    kind, _, method = test.partition("-")
    if kind == "perm":
        ref = permutation_test(X, Y, Z, level=level, coefficient=coefficient, resample=method, n_resamples=200,
                               rng=5).pvalue
    elif kind == "boot":
        ref = bootstrap_test(X, Y, Z, level=level, coefficient=coefficient, resample=method, n_resamples=200,
                             rng=5).pvalue
    else:
        ref = williams_test(X, Y, Z, level=level, coefficient=coefficient, alternative="greater").pvalue
    assert p == pytest.approx(ref, abs=1e-12)


def test_batched_trials_equal_one_by_one():
    # Trials stacked in one batch give each trial's own null distribution (no mixing across trials).
    # ratings in thirds (as SummEval's means of 3 experts) and few systems: resamples often make an input's
    # scores constant, where the fast paths must agree exactly with the direct kernel on "undefined"
    rng = np.random.default_rng(0)
    Zb = rng.integers(3, 16, size=(3, 8, 30)) / 3
    Xb = np.round(Zb + rng.normal(size=Zb.shape), 1)
    Yb = np.round(Zb + 2 * rng.normal(size=Zb.shape), 1)
    coins = draw_coins(np.random.default_rng(2), (3, 50), 8, 30, "both")
    Xs, Ys = K.standardize(Xb), K.standardize(Yb)
    rows, cols = bootstrap_indices(np.random.default_rng(3), (3, 50), 8, 30, "both")
    for level in ("system", "summary"):
        null = P._perm_null(Xs, Ys, Zb, coins, level, "pearson")
        boot = P._boot_deltas(Xb, Yb, Zb, rows, cols, level, "pearson")
        for t in range(3):
            # the generic kernel (np.where + level_corr) on one trial is the reference for both fast paths
            sl = slice(t, t + 1)
            ref = P._perm_null(Xs[sl], Ys[sl], Zb[sl], coins[sl], level, "spearman")  # generic path at summary
            assert ref.shape == (1, 50)
            assert np.allclose(null[t], P._perm_null(Xs[sl], Ys[sl], Zb[sl], coins[sl], level, "pearson")[0])
            Xp = np.where(coins[t], Ys[t], Xs[t])
            Yp = np.where(coins[t], Xs[t], Ys[t])
            direct = (metaeval.correlation.level_corr(Xp, Zb[t], level, "pearson")
                      - metaeval.correlation.level_corr(Yp, Zb[t], level, "pearson"))
            assert np.allclose(null[t], direct)
            rr, cc = rows[t][:, :, None], cols[t][:, None, :]
            direct = (metaeval.correlation.level_corr(Xb[t][rr, cc], Zb[t][rr, cc], level, "pearson")
                      - metaeval.correlation.level_corr(Yb[t][rr, cc], Zb[t][rr, cc], level, "pearson"))
            assert np.allclose(boot[t], direct, equal_nan=True)


# ----------------------------------------------------------------------------------------------------
# System comparisons: hand-checked cases and a direct loop with the same draws


def test_ttest_pvalues_equal_scipy():
    rng = np.random.default_rng(0)
    S = rng.normal(size=(3, 40))
    docs = rng.integers(0, 40, (5, 12))
    ia, ib = np.array([0, 0, 1]), np.array([1, 2, 2])
    p = P._pair_pvalues(S, docs, ia, ib, "t-test", 10, "two-sided", 1e-12, rng)
    for t in range(5):
        for k in range(3):
            ref = stats.ttest_rel(S[ia[k], docs[t]], S[ib[k], docs[t]]).pvalue
            assert p[t, k] == pytest.approx(ref, rel=1e-10)


def test_bootstrap_and_permutation_pvalues_equal_direct_loop():
    # The folded weights + matrix product must give exactly the p-values of the textbook loop:
    # per trial, per resample, draw positions of the trial's documents and average the differences.
    rng = np.random.default_rng(0)
    S = rng.integers(1, 6, size=(3, 30)) / 3  # discrete ratings: exact ties are frequent
    docs = rng.integers(0, 30, (4, 15))
    ia, ib = np.array([0, 1, 0]), np.array([1, 2, 2])
    B = 300
    p = P._pair_pvalues(S, docs, ia, ib, "paired-bootstrap", B, "two-sided", 1e-9, np.random.default_rng(7))
    replay = np.random.default_rng(7)
    positions = replay.integers(0, 15, size=(4, B, 15), dtype=np.int32)
    for t in range(4):
        for k in range(3):
            d = S[ia[k], docs[t]] - S[ib[k], docs[t]]
            obs = d.mean()
            count = sum(abs(d[positions[t, b]].mean() - obs) >= abs(obs) - 1e-9 for b in range(B))
            assert p[t, k] == count / B
    p = P._pair_pvalues(S, docs, ia, ib, "permutation", B, "greater", 1e-9, np.random.default_rng(8))
    signs = 1 - 2.0 * fair_bits(np.random.default_rng(8), (4 * B, 15)).reshape(4, B, 15)
    for t in range(4):
        for k in range(3):
            d = S[ia[k], docs[t]] - S[ib[k], docs[t]]
            count = sum((signs[t, b] * d).mean() >= d.mean() - 1e-9 for b in range(B))
            assert p[t, k] == (count + 1) / (B + 1)


def test_sign_flip_power_hand_checked():
    # Every document favours a by the same amount. The sign-flip test's exact p-value is 2 / 2^n
    # (all signs + or all -), two-sided: n = 5 gives 0.0625 (never < 0.05), n = 6 gives 0.031 (always).
    a = np.full(50, 4.0)
    b = np.full(50, 3.0)
    res = planning.system_comparison_power(a, b, sizes=[5, 6], test="permutation", n_trials=50, n_resamples=4000,
                                           rng=0)
    assert res.power.tolist() == [0.0, 1.0]
    # the bootstrap distribution of a constant difference is a point: p = 0, power 1 at every size
    res = planning.system_comparison_power(a, b, sizes=[2, 3], test="paired-bootstrap", n_trials=20, n_resamples=100,
                                           rng=0)
    assert res.power.tolist() == [1.0, 1.0]
    # t-test: zero variance with a nonzero mean is certain (scipy: t = inf, p = 0)
    res = planning.system_comparison_power(a, b, sizes=[3], test="t-test", n_trials=20, rng=0)
    assert res.power.tolist() == [1.0]


def test_ttest_power_matches_noncentral_t():
    # A large normal pilot with effect 0.5 sd: the simulated power of the paired t-test at n = 20 is the
    # analytic noncentral-t power (0.5645).
    rng = np.random.default_rng(0)
    d = rng.normal(size=20000)
    d = (d - d.mean()) / d.std() + 0.5
    n, trials = 20, 4000
    res = planning.system_comparison_power(d, np.zeros_like(d), sizes=[n], test="t-test", n_trials=trials, rng=1)
    crit = stats.t.ppf(0.975, n - 1)
    nc = 0.5 * np.sqrt(n)
    exact = stats.nct.sf(crit, n - 1, nc) + stats.nct.cdf(-crit, n - 1, nc)
    assert exact == pytest.approx(0.5645, abs=1e-3)
    assert abs(res.power.iloc[0] - exact) < 3.5 * res.se.iloc[0]


@pytest.mark.parametrize("test", ["paired-bootstrap", "permutation", "t-test"])
def test_calibration_at_zero_difference(test):
    # Differences symmetric about exactly zero (pairs +u, -u): the rejection rate must stay within the
    # 99.9% binomial interval of alpha. The bootstrap is approximate, so a moderate size.
    rng = np.random.default_rng(3)
    u = rng.normal(size=200)
    a = rng.normal(size=400)
    b = a - np.concatenate([u, -u])
    n_trials = 2000
    res = planning.system_comparison_power(a, b, sizes=[40], test=test, n_trials=n_trials, n_resamples=500, rng=4)
    lo, hi = binomial_interval(0.05, n_trials)
    assert lo <= res.power.iloc[0] <= hi, res
    assert res.sampling.iloc[0] == "with replacement"


def test_without_replacement_is_conservative_by_the_finite_population_factor():
    # 40 of 400 documents without replacement: the mean's variance shrinks by 0.9 while the t-test assumes
    # independent draws, so it rejects P(|Z| > 1.96 / sqrt(0.9)) = 3.9 % instead of 5 %.
    rng = np.random.default_rng(3)
    u = rng.normal(size=200)
    a = rng.normal(size=400)
    b = a - np.concatenate([u, -u])
    res = planning.system_comparison_power(a, b, sizes=[40], test="t-test", n_trials=8000, replace="auto", rng=0)
    expected = 2 * stats.norm.sf(1.96 / np.sqrt(0.9))
    assert res.sampling.iloc[0] == "without replacement"
    assert abs(res.power.iloc[0] - expected) < 3 * res.se.iloc[0]


def test_power_rises_with_size_known_effect():
    rng = np.random.default_rng(0)
    a = rng.normal(0.4, 1, 3000)
    b = rng.normal(0.0, 1, 3000)
    res = planning.system_comparison_power(a, b, sizes=[15, 30, 60, 120], n_trials=400, n_resamples=300, rng=1)
    power = res.power.to_numpy()
    assert (np.diff(power) > 2 * res.se.to_numpy()[1:]).all(), power
    assert list(res.sampling) == ["with replacement"] * 4


def test_pairs_power_columns_orientation_and_bins():
    rng = np.random.default_rng(0)
    S = rng.normal(size=(6, 50)) + np.arange(6)[::-1, None] * 0.2
    res = planning.system_pairs_power(S, sizes=[10, 50], n_trials=50, n_resamples=100, rng=0,
                                      systems=list("abcdef"), replace="auto")
    assert list(res.columns[:3]) == ["system_a", "system_b", "difference"]
    assert {"size", "power", "se"} <= set(res.columns)
    assert len(res) == 15 * 2
    assert (res.difference >= 0).all()
    assert sorted(res.difference_bin.unique()) == [1, 2, 3, 4, 5]
    assert (res.groupby("difference_bin").difference.max().diff().dropna() > 0).all()
    assert list(res.sampling.unique()) == ["without replacement", "with replacement"]
    binned = planning.binned_power(res)
    assert binned.pairs.sum() == 30
    # the same pair, alone, gets the same power distribution (shared draws do not bias a pair)
    one = planning.system_comparison_power(S[0], S[5], sizes=[10], n_trials=50, n_resamples=100, rng=0)
    assert set(one.columns) == {"size", "power", "se", "type1", "calibrated", "sampling"}


def test_replacement_policy_and_errors():
    a, b = np.arange(10.0), np.arange(10.0)[::-1]
    with pytest.raises(ValueError, match="without replacement"):
        planning.system_comparison_power(a, b, sizes=[20], replace=False, n_trials=5)
    with pytest.raises(ValueError, match="test must be one of"):
        planning.system_comparison_power(a, b, sizes=[5], test="wilcoxon")
    with pytest.raises(ValueError, match="sizes must be integers >= 2"):
        planning.system_comparison_power(a, b, sizes=[1])
    with pytest.raises(ValueError, match="equal length"):
        planning.system_comparison_power(a, b[:5], sizes=[5])
    with pytest.raises(ValueError, match="finite"):
        planning.system_comparison_power(np.r_[a[:9], np.nan], b, sizes=[5])
    res = planning.system_comparison_power(a, b, sizes=[5], replace="auto", n_trials=5, n_resamples=10, rng=0)
    assert res.sampling.iloc[0] == "without replacement"


def test_same_seed_same_result():
    rng = np.random.default_rng(0)
    S = rng.normal(size=(4, 30))
    one = planning.system_pairs_power(S, sizes=[10, 40], n_trials=30, n_resamples=50, rng=3)
    two = planning.system_pairs_power(S, sizes=[10, 40], n_trials=30, n_resamples=50, rng=3)
    pd.testing.assert_frame_equal(one, two)


# ----------------------------------------------------------------------------------------------------
# Metric comparisons


def test_planned_effect_null_is_calibrated():
    # Equal correlations: the metrics are exchangeable cell by cell, Perm-Both is exact.
    effect = planning.PlannedEffect(system_correlation=(0.8, 0.8), summary_correlation=(0.4, 0.4))
    n_trials = 1500
    res = planning.planned_comparison_power(effect, sizes=[(8, 12)], test="perm-both", level="system",
                                            n_trials=n_trials, n_resamples=100, rng=0)
    lo, hi = binomial_interval(0.05, n_trials)
    assert lo <= res.power.iloc[0] <= hi, res


def test_planned_data_has_the_planned_correlations():
    effect = planning.PlannedEffect(system_correlation=(0.9, 0.5), summary_correlation=(0.5, 0.2))
    X, Y, Z = planning.planned_metric_data(effect, 400, 30, 50, rng=0)
    a = Z.mean(axis=2)  # system means: their correlation with X's tends to the finite-M value
    rx = np.mean([np.corrcoef(X[t].mean(1), a[t])[0, 1] for t in range(400)])
    ry = np.mean([np.corrcoef(Y[t].mean(1), a[t])[0, 1] for t in range(400)])
    fx, fy = effect.system_correlation_finite(50)
    assert rx == pytest.approx(fx, abs=0.03) and ry == pytest.approx(fy, abs=0.05)
    # within-input correlation over all cells, pooled
    sx = np.corrcoef((X - X.mean(1, keepdims=True)).ravel(), (Z - Z.mean(1, keepdims=True)).ravel())[0, 1]
    assert sx == pytest.approx(0.5, abs=0.03)
    # the marginal model is metaeval.datasets.synthetic's (same population summary correlation)
    d = metaeval.datasets.synthetic(30, 50, system_correlation=0.9, summary_correlation=0.5, rng=0)
    assert d.system_correlation_finite == pytest.approx(fx)


@pytest.mark.parametrize("test", ["williams", "perm-both"])
def test_metric_power_rises_with_size_known_effect(test):
    effect = planning.PlannedEffect(system_correlation=(0.9, 0.5), summary_correlation=(0.4, 0.4))
    res = planning.planned_comparison_power(effect, sizes=[(5, 20), (10, 20), (20, 20)], test=test,
                                            n_trials=300, n_resamples=100, rng=0)
    assert (np.diff(res.power) > 2 * res.se.to_numpy()[1:]).all(), res
    assert res.r_x.iloc[0] > res.r_y.iloc[0]


def test_metric_comparison_power_pilot(pilot):
    X, Y, Z = pilot
    res = planning.metric_comparison_power(Y, X, Z, sizes=[(8, 50), (16, 100), (16, 400)], test="perm-both",
                                           level="summary", n_trials=40, n_resamples=100, rng=0)
    assert list(res.columns) == ["n_systems", "n_inputs", "power", "se", "type1", "calibrated",
                                 "systems_sampling", "inputs_sampling"]
    assert res.systems_sampling.tolist() == ["without replacement", "with replacement", "with replacement"]
    assert res.inputs_sampling.tolist() == ["without replacement", "with replacement", "with replacement"]
    assert res.power.iloc[2] >= res.power.iloc[0]
    with pytest.raises(ValueError, match="test must be one of"):
        planning.metric_comparison_power(X, Y, Z, sizes=[(5, 5)], test="fisher")
    with pytest.raises(ValueError, match="at least 3 systems"):
        planning.metric_comparison_power(X, Y, Z, sizes=[(2, 5)])
    with pytest.raises(ValueError, match="without replacement"):
        planning.metric_comparison_power(X, Y, Z, sizes=[(20, 5)], replace=False)


# ----------------------------------------------------------------------------------------------------
# Required size


def test_required_size_hand_checked():
    t = pd.DataFrame({"size": [10, 20, 40, 80], "power": [0.2, 0.6, 0.79, 0.99]})
    t["se"] = np.sqrt(t.power * (1 - t.power) / 1000)
    row = planning.required_size(t, target=0.8).iloc[0]
    # 0.79 with 1000 trials: Wilson upper bound 0.814 could reach 0.8, so the CI starts at 40
    assert (row.required, row.low, row.high, row.reached) == (80.0, 40.0, 80.0, True)
    never = planning.required_size(t.assign(power=t.power / 2), target=0.8).iloc[0]
    assert np.isnan(never.required) and not never.reached and never.max_size == 80
    grouped = planning.required_size(pd.concat([t.assign(pair="x"), t.assign(pair="y", size=t["size"] * 2)]),
                                     by="pair", target=0.5)
    assert grouped.set_index("pair").required.to_dict() == {"x": 20.0, "y": 40.0}
    with pytest.raises(ValueError, match="target"):
        planning.required_size(t, target=1.5)
    with pytest.raises(ValueError, match="no column"):
        planning.required_size(t, size="n_inputs")


def test_wilson_interval_hand_checked():
    low, high = planning.wilson_interval(0, 100)
    assert low == pytest.approx(0, abs=1e-12) and high == pytest.approx(0.03699, abs=1e-4)


# ----------------------------------------------------------------------------------------------------
# Compiled kernels against the numpy formulas on the permuted matrices. Tolerances: the kernels add in their natural
# order, so they agree to rounding: DIRECT (system level, centred values) rtol 1e-12; FROM_SUMS (summary level, r
# from sums over the swapped cells, n sxx - sx^2, which loses up to 6 digits before a cell is recomputed from its
# values) atol 1e-9.

DIRECT = dict(rtol=1e-12, atol=1e-14)
FROM_SUMS = dict(rtol=1e-9, atol=1e-9)


def _tied_trials(seed, T, N, M):
    """Ratings in thirds and rounded metrics (ties, constant permuted columns), a constant column of X and of
    Z and a nearly constant column (the cells the kernels recompute from the values)."""
    rng = np.random.default_rng(seed)
    Z = rng.integers(3, 16, size=(T, N, M)) / 3
    X = np.round(Z + rng.normal(size=Z.shape), 1)
    Y = np.round(Z + 2 * rng.normal(size=Z.shape), 1)
    X[0, :, 0] = 0.1
    Z[0, :, 1] = 2.0
    Y[-1, :, 2] = 5.0 + 1e-9 * np.arange(N)
    return X, Y, Z


@pytest.mark.parametrize("shape", [(3, 40, 8, 30), (2, 17, 5, 13), (1, 25, 11, 64)])
def test_packed_perm_null_equals_boolean_path(shape):
    # the summary-level kernel reads the packed coins; the boolean coins take the general path (permuted matrices)
    T, B, N, M = shape
    X, Y, Z = _tied_trials(sum(shape), T, N, M)
    Xs, Ys = K.standardize(X), K.standardize(Y)
    packed = draw_coins(np.random.default_rng(7), (T, B), N, M, "both", packed=True)
    coins = draw_coins(np.random.default_rng(7), (T, B), N, M, "both")
    assert np.array_equal(packed.unpacked(), coins)  # the same random stream
    assert np.array_equal(coins, fair_bits(np.random.default_rng(7), (T, B, N, M)).astype(bool))
    spy = []
    kernel = K.perm_summary_null
    try:
        K.perm_summary_null = lambda *args: spy.append(kernel(*args)) or spy[-1]
        fast = P._perm_null(Xs, Ys, Z, packed, "summary", "pearson")
    finally:
        K.perm_summary_null = kernel
    # the kernel's own values: it leaves permutations to the general path only in the trial with a nearly constant
    # column (the last), so the others test its sums, not the recomputation
    assert not spy[0][1][:-1].any()
    ref = P._perm_null(Xs, Ys, Z, coins, "summary", "pearson")
    assert np.isnan(ref).sum() == np.isnan(fast).sum()
    np.testing.assert_allclose(fast, ref, **FROM_SUMS)
    # the system level: the compiled pass from packed coins, the system means' product from boolean ones
    np.testing.assert_allclose(P._perm_null(Xs, Ys, Z, packed, "system", "pearson"),
                               P._perm_null(Xs, Ys, Z, coins, "system", "pearson"), **DIRECT)


@pytest.mark.parametrize("shape", [(4, 21, 3, 3), (3, 7, 4, 9), (2, 30, 6, 131)])
def test_summary_null_kernel_flags_the_cells_to_refine(shape):
    # a nearly constant column (Y's last trial, input 2) makes weak cells, whose permutations the kernel leaves to
    # the general path; a constant column of X (trial 0, input 0) makes constant permuted columns, which the
    # kernel decides on the values
    T, B, N, M = shape
    X, Y, Z = _tied_trials(T * B + N, T, N, M)
    Xs, Ys = K.standardize(X), K.standardize(Y)
    packed = draw_coins(np.random.default_rng(11), (T, B), N, M, "both", packed=True)
    spy = []
    kernel = K.perm_summary_null
    try:
        K.perm_summary_null = lambda *args: spy.append(kernel(*args)) or spy[-1]
        fast = P._perm_null(Xs, Ys, Z, packed, "summary", "pearson")
    finally:
        K.perm_summary_null = kernel
    assert spy[0][1].any()
    ref = P._perm_null(Xs, Ys, Z, packed.unpacked(), "summary", "pearson")
    np.testing.assert_array_equal(np.isnan(fast), np.isnan(ref))
    np.testing.assert_allclose(fast, ref, **FROM_SUMS)


@pytest.mark.parametrize("shape", [(3, 9, 3, 3), (3, 11, 7, 17), (3, 6, 9, 64), (3, 5, 130, 9), (3, 4, 12, 1030),
                                   (3, 3, 2, 9000), (3, 37, 5, 20), (3, 300, 7, 9)])
def test_system_null_kernel_equals_einsum_path(shape):
    # ties, a constant trial (NaN), constant system means, more than 128 systems, many inputs; 37 and 300
    # permutations: the coins are unpacked 16 permutations at a time into blocks of 128 (a part-filled tile, and
    # two full blocks and a part-filled one)
    T, B, N, M = shape
    X, Y, Z = _tied_trials(T + N + M, T, N, M)
    X[1] = 0.5  # a constant trial: NaN
    Z[0, :, :] = Z[0, :1, :]  # equal human system means: NaN
    Xs, Ys = K.standardize(X), K.standardize(Y)
    packed = draw_coins(np.random.default_rng(12), (T, B), N, M, "both", packed=True)
    fast = P._perm_null(Xs, Ys, Z, packed, "system", "pearson")
    ref = P._system_null(Xs, Ys, Z, packed.unpacked(), "pearson")
    np.testing.assert_array_equal(np.isnan(fast), np.isnan(ref))
    np.testing.assert_allclose(fast, ref, **DIRECT)
    assert np.isnan(fast).any() and not np.isnan(fast).all()


@pytest.mark.parametrize("level", ["system", "summary"])
def test_chunks_tested_together_equal_chunk_by_chunk(level):
    # the planner draws chunk by chunk and tests several chunks at once: each trial's p-value and null are those
    # of its chunk alone, also when a chunk's packed coins end within a byte (B N M odd)
    B, N, M = 13, 5, 7
    sizes = [1, 3, 2]
    X, Y, Z = _tied_trials(3, sum(sizes), N, M)
    rng = np.random.default_rng(4)
    draws = [P._metric_draws(rng, "perm-both", level, "pearson", T, N, M, B) for T in sizes]
    edges = np.cumsum([0] + sizes)
    chunks = [slice(a, b) for a, b in zip(edges[:-1], edges[1:])]
    together = P._metric_pvalues(X, Y, Z, "perm-both", level, "pearson", B, "greater", draws=P._merge_draws(draws))
    alone = np.concatenate([P._metric_pvalues(X[c], Y[c], Z[c], "perm-both", level, "pearson", B, "greater",
                                              draws=d) for c, d in zip(chunks, draws)])
    np.testing.assert_array_equal(together, alone)
    Xs, Ys = K.standardize(X), K.standardize(Y)
    null = P._perm_null(Xs, Ys, Z, P._merge_draws(draws), level, "pearson")
    for c, d in zip(chunks, draws):
        np.testing.assert_array_equal(null[c], P._perm_null(Xs[c], Ys[c], Z[c], d, level, "pearson"))
    # the merged coins are the chunks' coins, and the compiled paths agree with the numpy formulas
    coins = P._merge_draws(draws).unpacked()
    assert np.array_equal(coins, np.concatenate([d.unpacked() for d in draws]))
    np.testing.assert_allclose(null, P._perm_null(Xs, Ys, Z, coins, level, "pearson"),
                               **(DIRECT if level == "system" else FROM_SUMS))


@pytest.mark.parametrize("level", ["system", "summary"])
def test_power_does_not_depend_on_batching(level, monkeypatch):
    # small chunks (a few trials each), tested together or one by one: the same table
    from metaeval.stats import planning as planning_module

    monkeypatch.setattr(P, "_BUDGET", 30_000)
    e = planning.PlannedEffect(system_correlation=(0.9, 0.6), summary_correlation=(0.5, 0.3))
    kwargs = dict(sizes=[(5, 10), (6, 13)], level=level, n_trials=40, n_resamples=51, rng=2)
    batched = planning.planned_comparison_power(e, **kwargs)
    monkeypatch.setattr(planning_module, "_batch_trials", lambda *args: args[-1])
    pd.testing.assert_frame_equal(batched, planning.planned_comparison_power(e, **kwargs))


def _reference_pair_pvalues(S, docs, ia, ib, test, B, alternative, tol, rng):
    """The planner's Monte-Carlo paired tests written out in numpy from the same draws: each resample's documents
    (bootstrap: positions drawn into the trial's documents; sign flips: the coins of fair_bits), every pair's mean
    difference, the tail counted with the same rule and tolerance."""
    T, n = docs.shape
    means = S[:, docs].mean(axis=-1)  # (K, T)
    observed = (means[ia] - means[ib]).T  # (T, P)
    if test == "paired-bootstrap":
        positions = rng.integers(0, n, size=(T, B, n), dtype=np.int32)
        drawn = np.take_along_axis(np.broadcast_to(docs[:, None, :], (T, B, n)), positions, axis=2)
        resampled = S[:, drawn].mean(axis=-1)  # (K, T, B)
        null = (resampled[ia] - resampled[ib]).transpose(1, 2, 0) - observed[:, None, :]
        return np.count_nonzero(tail_hits(null, observed[:, None, :], alternative, tol), axis=1) / B
    signs = 1.0 - 2.0 * fair_bits(rng, (T * B, n)).reshape(T, B, n)
    d = S[ia][:, docs] - S[ib][:, docs]  # (P, T, n)
    null = (signs[None] * d[:, :, None, :]).mean(axis=-1).transpose(1, 2, 0)  # (T, B, P)
    return (np.count_nonzero(tail_hits(null, observed[:, None, :], alternative, tol), axis=1) + 1) / (B + 1)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("n", [7, 40])
def test_compiled_pair_pvalues_equal_reference(alternative, n):
    # discrete ratings: many resampled differences tie with the observed one, where a wrong tail rule or a lost
    # multiplicity of the compiled path would change the counts
    rng = np.random.default_rng(n)
    S = rng.integers(1, 6, size=(6, 30)) / 3
    ia, ib = np.triu_indices(6, 1)
    docs = rng.integers(0, 30, size=(4, n))
    tol = 1e-9 * float(np.abs(S).max())
    fast = P._pair_pvalues(S, docs, ia, ib, "paired-bootstrap", 300, alternative, tol, np.random.default_rng(1))
    ref = _reference_pair_pvalues(S, docs, ia, ib, "paired-bootstrap", 300, alternative, tol,
                                  np.random.default_rng(1))
    np.testing.assert_array_equal(fast, ref)
    assert 0 < fast.mean() < 1


def test_quotient_threshold_is_exact():
    # the sign-flip kernel compares a pair's summed difference d with a threshold instead of d / n with the tail's
    # bound: x / n >= c must hold exactly from the threshold on, for floats around it and for any n
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = float(rng.integers(1, 400))
        c = float(rng.normal() * 10.0 ** rng.integers(-12, 3))
        x = _quotient_at_least(c, n)
        assert x / n >= c and np.nextafter(x, -np.inf) / n < c
        near = x + np.arange(-20, 21) * np.spacing(x) + rng.normal(size=41) * abs(x) * 1e-12
        assert np.array_equal(near / n >= c, near >= x)
    assert np.isnan(_quotient_at_least(np.nan, 3.0)) and _quotient_at_least(-np.inf, 3.0) == -np.inf


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("n", [12, 45])
def test_compiled_signflip_pvalues_equal_reference(alternative, n):
    # the compiled sign-flip pass (the planner's default pair test) against the numpy reference: the same coins and
    # the same counts, also with discrete ratings whose flipped means tie with the observed one, and with more
    # drawn documents (45) than pilot documents (30: repeated documents fold together)
    rng = np.random.default_rng(n)
    S = rng.integers(1, 6, size=(6, 30)) / 3
    ia, ib = np.triu_indices(6, 1)
    docs = rng.integers(0, 30, size=(4, n))
    tol = 1e-9 * float(np.abs(S).max())
    fast = P._pair_pvalues(S, docs, ia, ib, "permutation", 301, alternative, tol, np.random.default_rng(1))
    ref = _reference_pair_pvalues(S, docs, ia, ib, "permutation", 301, alternative, tol, np.random.default_rng(1))
    np.testing.assert_array_equal(fast, ref)
    assert 1 / 302 <= fast.min() and fast.max() <= 1 and 0 < fast.mean() < 1


@pytest.mark.parametrize("N,M,B", [(8, 30, 40), (5, 13, 17)])
def test_compiled_permutation_deltas_equal_the_permuted_matrices(N, M, B):
    # metaeval.permutation_test's summary-level Pearson kernel against the permuted matrices' correlations
    from metaeval.stats._kernels import coins as draw_coins
    from metaeval.stats.significance import _permutation_deltas, _standardize, _swapped_deltas

    X, Y, Z = (a[0] for a in _tied_trials(N + M, 1, N, M))
    Xs, Ys = _standardize(X), _standardize(Y)
    coins = draw_coins(np.random.default_rng(3), (B,), N, M, "both")
    fast = _permutation_deltas(Xs, Ys, Z, coins, "summary", "pearson", None)
    ref = _swapped_deltas(Xs, Ys, Z, coins, "summary", "pearson", None)
    np.testing.assert_allclose(fast, ref, **FROM_SUMS)
    assert np.isfinite(fast).all()


@pytest.mark.parametrize("N,M,B", [(8, 30, 60), (5, 13, 40)])
def test_compiled_bootstrap_summary_pearson_equals_the_resampled_matrices(N, M, B):
    # bootstrap_ci's summary-level Pearson kernel against the resampled matrices' correlations: ties, constant
    # and nearly constant columns (refined cells), resampled systems making columns constant
    from metaeval.stats.resampling import _gathered_corr, resampled_corr

    X, Y, Z = (a[0] for a in _tied_trials(N * M, 1, N, M))
    rng = np.random.default_rng(4)
    rows, cols = rng.integers(0, N, size=(B, N)), rng.integers(0, M, size=(B, M))
    fast = resampled_corr([X, Y], Z, rows, cols, "summary", "pearson", 16)
    ref = _gathered_corr([X, Y], Z, rows, cols, "summary", "pearson", 16, None, ["mean", "mean"])
    np.testing.assert_allclose(fast, ref, **FROM_SUMS)
    assert np.isfinite(fast).all()
