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
