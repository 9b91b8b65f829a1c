"""Issue 47, the statistics layer: inputs the peers accept, scale, memory and messages (each case reduced).

* ``nan_policy="omit"`` is scipy's: a cell missing in X *or* Z is left out of both, at every level, with the
  cells left out on one side only counted in a DegenerateResultWarning;
* Krippendorff's alpha without the coincidence matrix (continuous ratings), scale-free, nominal labels;
* ``disattenuate`` checks its inputs and is vectorized; ``grouped_correlation`` checks its flag and scale;
* split-half reliability names the real reason a split is undefined; every ``rng=`` goes through check_rng.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

import metaeval
from metaeval._warnings import DegenerateResultWarning
from metaeval.stats import agreement
from metaeval.stats.correlation import LEVELS, correlate
from metaeval.stats.reliability import disattenuate, krippendorff_alpha, split_half_reliability
from metaeval.stats.significance import williams_test

nan = np.nan


@pytest.fixture(scope="module")
def gaps():
    """6 systems x 5 inputs; Z misses 3 cells, X misses 1 other cell."""
    g = np.random.default_rng(3)
    Z = g.normal(size=(6, 5))
    X = Z + g.normal(size=(6, 5))
    Z[0, 1] = Z[3, 4] = Z[5, 0] = nan
    X[2, 2] = nan
    return X, Z


# ------------------------------------------------------------------------------------------------
# nan_policy="omit": either side, every level


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateResultWarning)
        return fn(*args, **kwargs)


def test_omit_drops_a_cell_missing_on_either_side_at_every_level(gaps):
    X, Z = gaps
    both = np.isnan(X) | np.isnan(Z)
    # by hand (scipy on the cells scored in both)
    ok = ~both
    expected = {
        "system": stats.pearsonr([X[i, ok[i]].mean() for i in range(6)], [Z[i, ok[i]].mean() for i in range(6)])[0],
        "summary": np.mean([stats.pearsonr(X[ok[:, j], j], Z[ok[:, j], j])[0] for j in range(5)]),
        "per-system": np.mean([stats.pearsonr(X[i, ok[i]], Z[i, ok[i]])[0] for i in range(6)]),
        "global": stats.pearsonr(X[ok], Z[ok])[0],
    }
    assert set(expected) == set(LEVELS)
    for level in LEVELS:
        with pytest.warns(DegenerateResultWarning,
                          match=r"left out 3 cells of X \(NaN in Z\), 1 cell of Z \(NaN in X\): 26 of 30 cells used"):
            got = correlate(X, Z, level=level, nan_policy="omit")
        assert got == pytest.approx(expected[level], abs=1e-12), level
    # Kendall at global level: scipy's own nan_policy="omit"
    tau = stats.kendalltau(X.ravel(), Z.ravel(), nan_policy="omit").statistic
    assert _quiet(correlate, X, Z, level="global", coefficient="kendall", nan_policy="omit") == pytest.approx(tau,
                                                                                                         abs=1e-12)


def test_omit_in_the_agreement_statistics_and_tests_is_the_same_rule(gaps):
    X, Z = gaps
    both = np.isnan(X) | np.isnan(Z)
    Xb, Zb = np.where(both, nan, X), np.where(both, nan, Z)
    for level in LEVELS:
        for fn in (agreement.pairwise_accuracy, agreement.grouped_correlation, agreement.pairwise_difference_pearson):
            with pytest.warns(DegenerateResultWarning, match="left out 3 cells of X"):
                got = fn(X, Z, level=level, nan_policy="omit")
            assert got == _quiet(fn, Xb, Zb, level=level, nan_policy="omit"), (fn.__name__, level)
    Y = X[::-1].copy()
    with pytest.warns(DegenerateResultWarning, match="26 of 30 cells used|cells used"):
        res = williams_test(X, Y, Z, level="summary", nan_policy="omit")
    assert res.pvalue == _quiet(williams_test, np.where(both | np.isnan(Y), nan, X),
                                np.where(both | np.isnan(Y), nan, Y), np.where(both | np.isnan(Y), nan, Z),
                                level="summary", nan_policy="omit").pvalue


def test_omit_with_the_same_missing_cells_says_nothing(gaps):
    X, Z = gaps
    Xb = np.where(np.isnan(Z), nan, X)
    Zb = np.where(np.isnan(X), nan, Z)
    Xb[np.isnan(Zb)] = nan
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateResultWarning)
        correlate(Xb, Zb, level="summary", nan_policy="omit")
    with pytest.raises(ValueError, match="pass nan_policy='omit'"):
        correlate(X, Z)


# ------------------------------------------------------------------------------------------------
# Williams: scipy's default


def test_williams_default_is_two_sided():
    g = np.random.default_rng(0)
    Z = g.normal(size=(8, 3))
    X, Y = Z + g.normal(size=(8, 3)), Z + 2 * g.normal(size=(8, 3))
    greater = williams_test(X, Y, Z, alternative="greater").pvalue
    less = williams_test(X, Y, Z, alternative="less").pvalue
    assert williams_test(X, Y, Z).pvalue == pytest.approx(2 * min(greater, less), rel=1e-12)


# ------------------------------------------------------------------------------------------------
# Krippendorff's alpha


def _alpha_coincidences(units: np.ndarray, level: str) -> float:
    """The previous implementation: the coincidence matrix of the distinct values (quadratic in them),
    Krippendorff (2011) as written; the reference for the sums that replaced it."""
    units = units[(~np.isnan(units)).sum(axis=1) >= 2]
    m_u = (~np.isnan(units)).sum(axis=1)
    values = np.unique(units[~np.isnan(units)])
    codes = np.searchsorted(values, np.where(np.isnan(units), values[0], units))
    n_uc = np.zeros((units.shape[0], values.size))
    rows = np.repeat(np.arange(units.shape[0]), units.shape[1])
    np.add.at(n_uc, (rows, codes.ravel()), (~np.isnan(units)).ravel().astype(float))
    w = 1.0 / (m_u - 1)
    o = (n_uc * w[:, None]).T @ n_uc - np.diag((n_uc * w[:, None]).sum(axis=0))
    n_c = o.sum(axis=1)
    n = n_c.sum()
    c, k = values[:, None], values[None, :]
    if level == "nominal":
        d2 = (c != k).astype(float)
    elif level == "interval":
        d2 = (c - k) ** 2
    elif level == "ratio":
        with np.errstate(invalid="ignore", divide="ignore"):
            d2 = np.where(c == k, 0.0, ((c - k) / (c + k)) ** 2)
    else:
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        i, j = np.arange(values.size)[:, None], np.arange(values.size)[None, :]
        d2 = (cum[np.maximum(i, j) + 1] - cum[np.minimum(i, j)] - (n_c[i] + n_c[j]) / 2) ** 2
    return 1.0 - (n - 1) * (o * d2).sum() / (np.outer(n_c, n_c) * d2).sum()


@pytest.fixture(scope="module")
def ratings():
    g = np.random.default_rng(5)
    likert = np.clip(g.integers(1, 6, size=(40, 1)) + g.integers(-1, 2, size=(40, 5)), 1, 5).astype(float)
    likert[g.random(likert.shape) < 0.2] = nan
    continuous = g.gamma(2.0, size=(60, 4)) + g.gamma(2.0, size=(60, 1))
    continuous[g.random(continuous.shape) < 0.15] = nan
    return likert, continuous


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_equals_the_coincidence_matrix_computation(ratings, level):
    for units in ratings:
        assert krippendorff_alpha(units, level=level).alpha == pytest.approx(_alpha_coincidences(units, level),
                                                                             abs=1e-12)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_equals_the_krippendorff_package_on_continuous_ratings(ratings, level):
    krippendorff = pytest.importorskip("krippendorff")
    units = ratings[1]
    ref = krippendorff.alpha(reliability_data=units.T, level_of_measurement=level)
    assert krippendorff_alpha(units, level=level).alpha == pytest.approx(ref, abs=1e-10)


def test_alpha_is_scale_free_at_the_edges_of_float64(ratings):
    units = ratings[1]
    base = krippendorff_alpha(units).alpha
    assert base == pytest.approx(0.6013, abs=5e-5)  # krippendorff.alpha(reliability_data=units.T) prints 0.6013456033284865
    for factor in (1e200, 1e-300, 2.0**-900):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no overflow / underflow warnings, no NaN
            for level in ("interval", "ratio"):
                assert krippendorff_alpha(units * factor, level=level).alpha == pytest.approx(
                    krippendorff_alpha(units, level=level).alpha, abs=1e-12), (factor, level)
    big = units.copy()
    big[0, 0] = 1e308
    # one rating dominates both disagreements: D_o = D_e = 2 big^2 / n to first order, so alpha is ~0 (not NaN)
    res = krippendorff_alpha(big)
    assert abs(res.alpha) < 1e-3 and math.isinf(res.expected_disagreement)  # (1e308)^2 is beyond float64


def test_alpha_on_2000_units_by_10_coders_is_fast_and_small():
    import time

    g = np.random.default_rng(0)
    units = g.normal(size=(2000, 1)) + g.normal(size=(2000, 10))  # 20,000 distinct values
    start = time.perf_counter()
    for level in ("interval", "ordinal", "nominal"):
        krippendorff_alpha(units, level=level)
    assert time.perf_counter() - start < 5.0  # the coincidence matrix alone was 2.98 GiB
    # interval by hand: the share of variance between units, for 10 coders: 1 - D_o / D_e
    assert krippendorff_alpha(units).alpha == pytest.approx(0.5, abs=0.05)


def test_alpha_on_nominal_labels():
    labels = np.array([["a", "a", None], ["b", "b", "b"], ["a", "b", "c"], ["c", "c", nan]], dtype=object)
    codes = np.array([[0, 0, nan], [1, 1, 1], [0, 1, 2], [2, 2, nan]])
    assert krippendorff_alpha(labels, level="nominal").alpha == pytest.approx(
        krippendorff_alpha(codes, level="nominal").alpha, abs=1e-15)
    assert krippendorff_alpha([["yes", "yes"], ["no", "no"], ["yes", "no"]], level="nominal").alpha == pytest.approx(
        1 - 5 * 2 / (36 - 18), abs=1e-12)  # n = 6, 2 mismatched ordered pairs, counts 3 and 3
    with pytest.raises(ValueError, match="ratings are labels .* level='interval' needs numbers; use level='nominal'"):
        krippendorff_alpha(labels)


# ------------------------------------------------------------------------------------------------
# disattenuate


def test_disattenuate_checks_and_vectorizes():
    with pytest.raises(ValueError, match=r"r must be a correlation in \[-1, 1\], got 1.5"):
        disattenuate(1.5, 0.81)
    with pytest.raises(ValueError, match="reliability must be at most 1 .* got 1.44"):
        disattenuate(0.6, 1.44)
    with pytest.raises(ValueError, match="metric_reliability must be at most 1"):
        disattenuate(0.6, 0.8, metric_reliability=2.0)
    with pytest.raises(TypeError, match="r must be a number or an array of numbers"):
        disattenuate("high", 0.8)
    with pytest.raises(ValueError, match="cannot be broadcast together"):
        disattenuate([0.1, 0.2], [0.5, 0.6, 0.7])
    np.testing.assert_allclose(disattenuate([0.3, 0.6, -0.45], [0.36, 0.81, 0.81]), [0.5, 0.6 / 0.9, -0.5],
                               rtol=1e-12)
    with pytest.warns(DegenerateResultWarning, match="2 of 3 reliabilities .* not positive or are NaN"):
        out = disattenuate(0.5, [0.25, -0.1, nan])
    assert out[0] == pytest.approx(1.0) and np.isnan(out[1:]).all()
    assert isinstance(disattenuate(0.6, 0.81), float)


# ------------------------------------------------------------------------------------------------
# grouped_correlation


def test_grouped_correlation_flag_and_scale():
    g = np.random.default_rng(1)
    Z = g.normal(size=(6, 8))
    X = Z + g.normal(size=(6, 8))
    with pytest.raises(TypeError, match="replace_nans_with_zeros must be True or False, got 'no'"):
        agreement.grouped_correlation(X, Z, replace_nans_with_zeros="no")  # type: ignore[arg-type]
    X[0, 0] = 1e200
    for level in ("per-system", "summary"):
        assert agreement.grouped_correlation(X, Z, level=level) == pytest.approx(
            correlate(X, Z, level=level), abs=1e-12)
    # the other systems' correlations are those of the data without the big cell
    others = np.mean([stats.pearsonr(X[i], Z[i])[0] for i in range(1, 6)])
    first = stats.pearsonr(np.r_[1.0, np.zeros(7)], Z[0])[0]  # 1e200 dominates system 0: x ~ (1, 0, ..., 0)
    assert agreement.grouped_correlation(X, Z) == pytest.approx((5 * others + first) / 6, abs=1e-12)


# ------------------------------------------------------------------------------------------------
# split-half reliability: the real reason; scale


def test_split_half_names_disjoint_halves_and_survives_1e308():
    g = np.random.default_rng(2)
    disjoint = np.full((6, 10, 2), nan)
    disjoint[:, :5, 0] = g.normal(size=(6, 5))
    disjoint[:, 5:, 1] = g.normal(size=(6, 5))
    with pytest.warns(DegenerateResultWarning, match="no cell is rated by both halves: the two halves' annotators "
                                                     "rated disjoint cells"):
        assert math.isnan(split_half_reliability(disjoint, level="global", n_resamples=0).reliability)
    constant = g.normal(size=(6, 10, 2))
    constant[:, :, 0] = 3.0
    with pytest.warns(DegenerateResultWarning, match="the first half's scores are constant"):
        split_half_reliability(constant, level="global", n_resamples=0)
    ratings = g.normal(size=(8, 20, 1)) + 0.5 * g.normal(size=(8, 20, 4))
    base = split_half_reliability(ratings, level="summary", n_resamples=0).reliability
    for factor in (1e200, 1e-300):
        assert split_half_reliability(ratings * factor, level="summary", n_resamples=0).reliability == \
            pytest.approx(base, abs=1e-12)
    big = ratings.copy()
    big[0, 0, 0] = 1e308
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        at_308 = split_half_reliability(big, level="global", n_resamples=0).reliability
    big[0, 0, 0] = 1e300  # the same direction: the big cell dominates its half's vector either way
    assert at_308 == pytest.approx(split_half_reliability(big, level="global", n_resamples=0).reliability, abs=1e-9)


# ------------------------------------------------------------------------------------------------
# seeds and flags


def test_every_rng_and_flag_is_checked_by_name():
    X = Z = np.arange(12.0).reshape(4, 3)
    with pytest.raises(ValueError, match="rng must be None, a non-negative integer seed, a SeedSequence or a numpy "
                                         "Generator, got 'abc'"):
        agreement.tie_calibrated_accuracy(X, Z, sample_rate=0.5, rng="abc")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rng must be None"):
        agreement.soft_pairwise_accuracy(X, Z, rng="abc")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rng must be None"):
        split_half_reliability(np.random.default_rng(0).normal(size=(5, 5, 2)), rng=-3)
    with pytest.raises(TypeError, match="paired_inputs must be True or False, got 1"):
        metaeval.bootstrap_ci(X, Z, paired_inputs=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="progress must be True or False"):
        metaeval.pairwise_tests([X, X[::-1].copy()], Z, test="williams", progress="yes")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------
# Pair statistics on long vectors: counts by sorting, against every pair counted (the previous path)


def _all_pairs(x, z):
    iu, ju = np.triu_indices(x.size, k=1)
    return x[iu] - x[ju], z[iu] - z[ju]


def _by_pairs(stat: str, x: np.ndarray, z: np.ndarray, **kw) -> float:
    """The quadratic definitions, one group: every pair i < j built (as the library did before)."""
    dx, dz = _all_pairs(x, z)
    sx, sz = np.sign(dx), np.sign(dz)
    if stat == "accuracy":
        keep = sz != 0 if kw.get("human_ties") == "skip" else np.ones(dx.size, bool)
        return float(np.mean((sx == sz)[keep]))
    if stat == "kendall_like":
        counted = np.abs(dz) >= kw["threshold"]
        c = np.count_nonzero(counted & (sx * sz > 0))
        return (2 * c - counted.sum()) / counted.sum()
    if stat == "pdp":
        return float(np.sum(dx * dz) / np.sqrt(np.sum(dx * dx)) / np.sqrt(np.sum(dz * dz)))
    eps = kw["epsilon"]
    correct = ((dz == 0) & (np.abs(dx) <= eps)) | ((sx * sz > 0) & (np.abs(dx) > eps))
    return float(np.mean(correct)) if stat == "acc_eq" else 2 * float(np.mean(correct)) - 1


@pytest.fixture(scope="module")
def ties():
    """300 cells with many ties in both (Likert-like steps of 0.1: differences that round)."""
    g = np.random.default_rng(8)
    Z = np.round(g.normal(size=(20, 15)), 1)
    return np.round(Z + g.normal(size=(20, 15)), 1), Z


@pytest.mark.parametrize("stat, call", [
    ("accuracy", lambda X, Z: agreement.pairwise_accuracy(X, Z, level="global")),
    ("skip", lambda X, Z: agreement.pairwise_accuracy(X, Z, level="global", human_ties="skip")),
    ("kendall_like", lambda X, Z: agreement.kendall_like(X, Z, level="global", threshold=0.5).statistic),
    ("kendall_like_0", lambda X, Z: agreement.kendall_like(X, Z, level="global", threshold=0.0).statistic),
    ("pdp", lambda X, Z: agreement.pairwise_difference_pearson(X, Z, level="global")),
    ("acc_eq", lambda X, Z: agreement.tie_calibrated_accuracy(X, Z, level="global", epsilon=0.3).statistic),
    ("tau_23", lambda X, Z: agreement.tau_23(X, Z, level="global", epsilon=0.2)),
])
def test_sorted_counts_equal_all_pairs_counted(ties, stat, call):
    X, Z = ties
    kw = {"skip": {"human_ties": "skip"}, "kendall_like": {"threshold": 0.5}, "kendall_like_0": {"threshold": 0.0},
          "acc_eq": {"epsilon": 0.3}, "tau_23": {"epsilon": 0.2}}.get(stat, {})
    name = {"skip": "accuracy", "kendall_like_0": "kendall_like"}.get(stat, stat)
    assert call(X, Z) == pytest.approx(_by_pairs(name, X.ravel(), Z.ravel(), **kw), abs=1e-12)
    # by groups (summary level: a mean over inputs), and with missing cells
    Xm = X.copy()
    Xm[::7, ::3] = nan
    keep = ~np.isnan(Xm)
    per_input = [_by_pairs(name, Xm[keep[:, j], j], Z[keep[:, j], j], **kw) for j in range(X.shape[1])]
    summary = {"accuracy": lambda: agreement.pairwise_accuracy(Xm, Z, level="summary", nan_policy="omit"),
               "skip": lambda: agreement.pairwise_accuracy(Xm, Z, level="summary", human_ties="skip",
                                                           nan_policy="omit"),
               "acc_eq": lambda: agreement.tie_calibrated_accuracy(Xm, Z, level="summary", epsilon=0.3,
                                                                   nan_policy="omit").statistic}
    if stat in summary:
        assert _quiet(summary[stat]) == pytest.approx(np.nanmean(per_input), abs=1e-12)


def test_pairwise_accuracy_skip_by_hand():
    # input 0: the humans tie systems 0 and 1 (skipped); (2, 3) is a metric tie the humans order: 4 of 5 agree.
    # input 1: the metric reverses every pair the humans order; (2, 3) is a human tie (skipped): 0 of 5.
    X = np.array([[1.0, 4], [2, 3], [3, 2], [3, 1]])
    Z = np.array([[1.0, 1], [1, 2], [2, 3], [3, 3]])
    assert agreement.pairwise_accuracy(X, Z, level="summary", human_ties="skip") == pytest.approx(0.4, abs=1e-15)
    # every pair counted: input 0 has 4 of 6 (the human tie the metric separates disagrees), input 1 0 of 6
    assert agreement.pairwise_accuracy(X, Z, level="summary") == pytest.approx(1 / 3, abs=1e-15)
    # a vector of 20 (the sorted path): input 0's four systems, five times, each copy 10 higher in both. The 160
    # pairs across copies agree; each copy adds its 4 agreeing pairs, its human tie (skipped) and a metric tie
    long_x = np.concatenate([X[:, :1] + 10 * k for k in range(5)])
    long_z = np.concatenate([Z[:, :1] + 10 * k for k in range(5)])
    assert agreement.pairwise_accuracy(long_x, long_z, level="global", human_ties="skip") == pytest.approx(
        180 / 185, abs=1e-15)
    assert agreement.pairwise_accuracy(long_x, long_z, level="global") == pytest.approx(180 / 190, abs=1e-15)


def test_pair_statistics_on_100000_cells():
    import time

    g = np.random.default_rng(4)
    Z = g.normal(size=(100, 1000))
    X = Z + g.normal(size=(100, 1000))
    tau = stats.kendalltau(X.ravel(), Z.ravel()).statistic  # continuous: no ties, so C / P = (tau + 1) / 2
    start = time.perf_counter()
    assert agreement.pairwise_accuracy(X, Z, level="global") == pytest.approx((tau + 1) / 2, abs=1e-12)
    assert agreement.kendall_like(X, Z, level="global", threshold=0.0).statistic == pytest.approx(tau, abs=1e-12)
    assert agreement.tau_23(X, Z, level="global") == pytest.approx(tau, abs=1e-12)
    assert agreement.pairwise_difference_pearson(X, Z, level="global") == pytest.approx(
        stats.pearsonr(X.ravel(), Z.ravel())[0], abs=1e-12)
    assert 0.5 < agreement.kendall_like(X, Z, level="global", threshold=1.0).statistic < 1
    assert time.perf_counter() - start < 10  # each asked for 9.3 GiB of pairs before


def test_threshold_search_beyond_the_limit_is_refused_with_the_rate_that_fits(monkeypatch):
    g = np.random.default_rng(0)
    Z = g.normal(size=(20_000, 1))
    with pytest.raises(ValueError, match=r"searching epsilon at level 'global' tables 199,990,000 pairs \(about "
                                         r"13.0 GiB\), more than the limit of 4,000,000: pass sample_rate=0.02 or "
                                         r"less .* or a fixed epsilon"):
        agreement.tie_calibrated_accuracy(Z + g.normal(size=Z.shape), Z, level="global")
    # a fixed epsilon is counted by sorting, on every pair
    assert 0.5 < agreement.tie_calibrated_accuracy(Z + g.normal(size=Z.shape), Z, epsilon=0.01).statistic < 1
    # the sampled search keeps only the sampled pairs (a small limit makes the rule visible on small data)
    monkeypatch.setattr(agreement, "PAIR_LIMIT", 100)
    X5, Z5 = Z[:20] + g.normal(size=(20, 1)), Z[:20]  # 190 pairs
    with pytest.raises(ValueError, match="190 pairs x sample_rate 0.9"):
        agreement.tie_calibrated_accuracy(X5, Z5, sample_rate=0.9, rng=0)
    assert agreement.tie_calibrated_accuracy(X5, Z5, sample_rate=0.4, rng=0).statistic > 0.5


def test_pairwise_difference_pearson_of_constant_groups_is_nan():
    # every input's metric scores are equal (0.1, whose mean over 3 systems is 0.1 + 1.4e-17): no pair differs,
    # so the statistic is undefined, not a number made from rounding residues
    X = np.full((3, 4), 0.1)
    Z = np.arange(12.0).reshape(3, 4)
    with pytest.warns(DegenerateResultWarning, match="every pairwise difference of X is zero"):
        assert math.isnan(agreement.pairwise_difference_pearson(X, Z, level="summary"))
    # a constant input among varying ones adds its human differences only (its metric differences are 0 exactly)
    X2 = np.array([[0.7, 1.0, 2.0], [0.7, 3.0, 2.5], [0.7, 2.0, 1.0]])
    Z2 = np.array([[1.0, 1, 2], [2, 2, 1], [3, 0, 3]])
    pooled = [_all_pairs(X2[:, j], Z2[:, j]) for j in range(3)]
    dx = np.concatenate([np.zeros(3)] + [p[0] for p in pooled[1:]])
    dz = np.concatenate([p[1] for p in pooled])
    expected = dx @ dz / np.sqrt((dx @ dx) * (dz @ dz))
    assert agreement.pairwise_difference_pearson(X2, Z2, level="summary") == pytest.approx(expected, abs=1e-15)
