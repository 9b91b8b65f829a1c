"""Calibration of the planner's system tests: under equal means every rejection is a type-I error, so the
rejection rate must stay within the 99.9 % binomial interval of alpha (or of the exact test's attainable
size), at 5, 10, 20 and 50 documents, on real pilot data and on synthetic data (issue 23, item 1).

The null pilot is the sign-flip null: every document's two scores in random order (``a0 = [a, b]``,
``b0 = [b, a]``, documents drawn with replacement), equal means and symmetric differences.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metaeval.stats import planning

SIZES = [5, 10, 20, 50]
ALPHA = 0.05
TRIALS = 1000


def _pilots():
    from metaeval.data import datasets

    out = {}
    for name in ("summeval", "realsumm"):
        ds = datasets.load(name)
        S = ds.matrix(ds.default_human)
        order = np.argsort(S.mean(1))
        out[name] = (S[order[-1]], S[order[-2]])  # the two best systems: a close pair, discrete ratings
    rng = np.random.default_rng(0)
    out["normal"] = (rng.normal(size=300), rng.normal(size=300))
    out["skewed"] = (rng.exponential(size=300), rng.exponential(size=300))
    return out


PILOTS = _pilots()


def _interval(p: float, n: int = TRIALS) -> tuple[float, float]:
    low, high = stats.binom.interval(0.999, n, p)
    return low / n, high / n


def _exact_signflip_size(n: int, n_resamples: int) -> float:
    """Two-sided sign-flip test with continuous differences: p = 2k / 2^n for the rank k of |mean| among the
    2^(n-1) values; it rejects for k < alpha 2^(n-1). Monte-Carlo (2^n > n_resamples): at most alpha."""
    if 2**n > n_resamples:
        return ALPHA
    half = 2 ** (n - 1)
    return (math.ceil(ALPHA * half) - 1) / half


def _null_rates(a, b, test, rng):
    a0, b0 = np.concatenate([a, b]), np.concatenate([b, a])
    return planning.system_comparison_power(a0, b0, sizes=SIZES, test=test, n_trials=TRIALS, n_resamples=200,
                                            alpha=ALPHA, rng=rng)


@pytest.mark.parametrize("pilot", list(PILOTS))
def test_default_permutation_test_is_calibrated_at_every_size(pilot):
    table = _null_rates(*PILOTS[pilot], "permutation", 1)
    for row in table.itertuples():
        _, high = _interval(ALPHA)
        assert row.power <= high, (pilot, row.size, row.power)
        if pilot in ("normal", "skewed"):  # continuous: no ties, the attainable size is known exactly
            low, high = _interval(_exact_signflip_size(row.size, 200))
            assert low <= row.power <= high, (pilot, row.size, row.power)
    assert table.calibrated.all()


@pytest.mark.parametrize(("pilot", "test"), [
    pytest.param(p, t, marks=[] if (p, t) in {("summeval", "paired-bootstrap"), ("normal", "t-test")}
                 else [pytest.mark.slow])
    for p in PILOTS for t in ("paired-bootstrap", "t-test")])
def test_other_tests_report_their_measured_size(pilot, test):
    # the planner's own type1 column (measured on the pilot made null within documents) agrees with an
    # independent measurement under the sign-flip null, and sizes whose rate is above alpha's interval are
    # flagged as not calibrated
    a, b = PILOTS[pilot]
    null = _null_rates(a, b, test, 2)
    reported = planning.system_comparison_power(a, b, sizes=SIZES, test=test, n_trials=TRIALS, n_resamples=200,
                                                alpha=ALPHA, rng=3)
    _, high = _interval(ALPHA)
    for measured, row in zip(null.power, reported.itertuples()):
        # two independent binomial estimates of the same rate: within 4 standard errors of their difference
        se = math.sqrt(2 * max(measured, ALPHA) * (1 - max(measured, ALPHA)) / TRIALS)
        assert abs(row.type1 - measured) <= 4 * se, (pilot, test, row.size, row.type1, measured)
        assert row.calibrated == (row.type1 * TRIALS <= stats.binom.ppf(0.9995, TRIALS, ALPHA))
    if test == "paired-bootstrap":
        # the finding, reproduced: the bootstrap rejects too often with 5 documents
        assert null.power.iloc[0] > high and not reported.calibrated.iloc[0]


def test_required_size_skips_uncalibrated_sizes():
    t = pd.DataFrame({"size": [5, 10, 20], "power": [0.9, 0.85, 0.95], "se": [0.01, 0.01, 0.01],
                      "calibrated": [False, True, True]})
    assert planning.required_size(t, target=0.8).required.iloc[0] == 10
    t["calibrated"] = [False, False, False]
    assert np.isnan(planning.required_size(t, target=0.8).required.iloc[0])


def test_sizes_too_large_fail_fast_naming_sizes():
    a = np.random.default_rng(0).normal(size=50)
    for size in (10**7, 10**9):
        with pytest.raises(ValueError, match="sizes: .* documents need about"):
            planning.system_comparison_power(a, a[::-1].copy(), sizes=[size])
    with pytest.raises(ValueError, match="sizes: "):
        planning.system_pairs_power(np.vstack([a, a[::-1]]), sizes=[10, 10**8])


# ----------------------------------------------------------------------------------------------------
# The metric-comparison tests (issue 23, item 1): every test the planner offers for "r(X, Z) > r(Y, Z)" has its
# type-I error measured at the designs it reports. Two nulls: the planned effect with equal correlations (the
# synthetic model, both metrics exchangeable cell by cell) and a real pilot made null (SummEval's QAEval-F1 and
# ROUGE-2 exchanged in a random half of the cells).

METRIC_DESIGNS = [(5, 5), (5, 10), (10, 20), (16, 50)]  # (systems, documents); the first also on the pilot
METRIC_TRIALS = 400


def _metric_pilot():
    from metaeval.data import datasets

    ds = datasets.load("summeval")
    return ds.matrix("qa-eval.f1"), ds.matrix("rouge-2.f1"), ds.matrix(ds.default_human)


def _metric_null_rate(X, Y, Z, test, level, n_systems, n_inputs, rng):
    """The rejection rate of the library's public test (not the planner's compiled kernels) on null studies drawn
    as the planner draws them: an independent measurement of the planner's ``type1`` column."""
    import metaeval

    rng = np.random.default_rng(rng)
    rejections = 0
    for _ in range(METRIC_TRIALS):
        r = rng.choice(X.shape[0], n_systems, replace=False)[:, None]
        c = rng.choice(X.shape[1], n_inputs, replace=False)[None, :]
        swap = rng.random((n_systems, n_inputs)) < 0.5
        x, y, z = X[r, c], Y[r, c], Z[r, c]
        x, y = np.where(swap, y, x), np.where(swap, x, y)
        if test == "williams":
            p = metaeval.williams_test(x, y, z, level=level, alternative="greater", nan_policy="omit").pvalue
        else:
            kind, resample = test.split("-")
            fn = metaeval.permutation_test if kind == "perm" else metaeval.bootstrap_test
            p = fn(x, y, z, level=level, resample=resample, n_resamples=100, rng=rng, nan_policy="omit").pvalue
        rejections += bool(p < ALPHA)
    return rejections / METRIC_TRIALS


def _metric_params():
    fast = {("perm-both", "system"), ("boot-both", "system"), ("williams", "summary")}
    return [pytest.param(t, lvl, marks=[] if (t, lvl) in fast else [pytest.mark.slow])
            for t in planning.METRIC_TESTS for lvl in ("system", "summary")]


@pytest.mark.parametrize(("test", "level"), _metric_params())
def test_metric_tests_have_their_size_measured_at_every_design(test, level):
    _, high = _interval(ALPHA, METRIC_TRIALS)
    upper = stats.binom.ppf(0.9995, METRIC_TRIALS, ALPHA) / METRIC_TRIALS
    # 1. synthetic null: on a planned effect with equal correlations the power column IS a type-I error
    effect = planning.PlannedEffect(system_correlation=(0.8, 0.8), summary_correlation=(0.4, 0.4))
    planned = planning.planned_comparison_power(effect, sizes=METRIC_DESIGNS, test=test, level=level,
                                                n_trials=METRIC_TRIALS, n_resamples=100, rng=11)
    if test in planning.EXACT_METRIC_TESTS:
        # exact by construction: never above alpha's interval, and reported as such (type1 NaN, calibrated)
        assert (planned.power <= high).all(), (test, level, planned.power.tolist())
        assert planned.type1.isna().all() and planned.calibrated.all()
    else:
        # the reported size is a second, independent estimate of the same rate as the null power column
        rate = np.maximum(planned.power, ALPHA)
        se = np.sqrt(2 * rate * (1 - rate) / METRIC_TRIALS)
        assert (np.abs(planned.type1 - planned.power) <= 4 * se).all(), (test, level, planned[["power", "type1"]])
        assert (planned.calibrated == (planned.type1 <= upper)).all()
    # 2. a real pilot made null (X and Y exchanged in a random half of the cells of every simulated study): the
    # library's public test measured directly, against the planner's compiled kernels' report
    X, Y, Z = _metric_pilot()
    pilot = planning.metric_comparison_power(X, Y, Z, sizes=METRIC_DESIGNS[:1], test=test, level=level,
                                             n_trials=METRIC_TRIALS, n_resamples=100, rng=12)
    direct = _metric_null_rate(X, Y, Z, test, level, *METRIC_DESIGNS[0], 13)
    if test in planning.EXACT_METRIC_TESTS:
        assert direct <= high, (test, level, direct)
        assert pilot.type1.isna().all() and pilot.calibrated.all()
    else:
        se = np.sqrt(2 * max(direct, ALPHA) * (1 - max(direct, ALPHA)) / METRIC_TRIALS)
        assert abs(pilot.type1.iloc[0] - direct) <= 4 * se, (test, level, pilot.type1.iloc[0], direct)


def test_metric_power_is_unchanged_by_measuring_the_size():
    # the null studies draw from their own spawned generator: the power column does not depend on whether the
    # size is measured (boot-both measures it; its power equals a run whose null stream is never touched)
    effect = planning.PlannedEffect(system_correlation=(0.9, 0.5), summary_correlation=(0.4, 0.3))
    a = planning.planned_comparison_power(effect, sizes=[(5, 10)], test="boot-both", n_trials=50, n_resamples=50,
                                          rng=3)
    rng = np.random.default_rng(3)
    child = rng.spawn(1)[0]
    X, Y, Z = planning.planned_metric_data(effect, 50, 5, 10, child)
    p = np.array([metaeval_p for metaeval_p in _boot_both_pvalues(X, Y, Z, child)])
    assert a.power.iloc[0] == pytest.approx(np.mean(p < ALPHA), abs=1e-12)
    assert not np.isnan(a.type1.iloc[0])


def _boot_both_pvalues(X, Y, Z, child):
    from metaeval.stats._planning_kernels import _metric_pvalues

    return _metric_pvalues(X, Y, Z, "boot-both", "system", "pearson", 50, "greater", child)
