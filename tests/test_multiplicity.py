"""metaeval.stats.multiplicity: every docstring example as an asserted test, Holm and Bonferroni with NaN entries
and p-values out of order (hand-checked), monotone partial-conjunction p-values on inputs whose raw values are
not monotone, p = 0 and p = 1, and the alpha rule (issue 47)."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from metaeval.stats.multiplicity import (
    STOUFFER_BOUND,
    adjust,
    bonferroni,
    check_alpha,
    fdr,
    holm,
    partial_conjunction_test,
    significance_clusters,
)

nan = np.nan


def _tests(p, statistics=(0.9, 0.8, 0.7), names=("a", "b", "c")):
    return SimpleNamespace(names=names, correlations=np.array(statistics), pvalues=np.array(p))


# ------------------------------------------------------------------------------------------------
# The docstring examples, asserted


def test_docstring_fdr():
    # BH by hand: sorted 0.01, 0.03, 0.04 -> 0.01*3/1, 0.03*3/2, 0.04*3/3 = 0.03, 0.045, 0.04, then the running
    # minimum from the largest: 0.03, 0.04, 0.04; NaN is not a test
    np.testing.assert_allclose(fdr([0.01, 0.04, 0.03, nan]), [0.03, 0.04, 0.04, nan], rtol=1e-12)


def test_docstring_adjust_holm():
    # by hand: 3 * 0.01, max(0.03, 2 * 0.03), max(0.06, 1 * 0.04)
    np.testing.assert_allclose(adjust([0.01, 0.04, 0.03], correction="holm"), [0.03, 0.06, 0.06], rtol=1e-12)


def test_docstring_significance_clusters():
    p = [[nan, 0.30, 0.01], [0.7, nan, 0.20], [0.99, 0.8, nan]]
    assert significance_clusters(_tests(p), alpha=0.05).ranks.tolist() == [1, 1, 2]


def test_docstring_partial_conjunction():
    res = partial_conjunction_test([0.01, 0.02, 0.30], u=2, method="bonferroni")
    # by hand: (3 - u + 1) p_(u): 3 * 0.01, 2 * 0.02, 1 * 0.30
    assert (float(res.pvalue), res.pvalues.tolist(), res.n_replicated) == (0.04, [0.03, 0.04, 0.3], 2)


def test_docstring_check_alpha():
    assert check_alpha(np.float32(0.05)) == pytest.approx(0.05, abs=1e-8)
    assert check_alpha(1.0) == 1.0
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\] \(a number such as 0.05\), got '0.05'"):
        check_alpha("0.05")


# ------------------------------------------------------------------------------------------------
# Holm and Bonferroni: NaN entries are not tests, p-values not in order, results in the input's places


def test_holm_with_nan_and_unordered_pvalues_by_hand():
    # 4 tests (NaN is none): sorted 0.011 (index 1), 0.012 (4), 0.02 (0), 0.5 (3):
    # 4 * 0.011 = 0.044; max(0.044, 3 * 0.012 = 0.036) = 0.044; max(0.044, 2 * 0.02 = 0.04) = 0.044; 0.5
    np.testing.assert_allclose(holm([0.02, 0.011, nan, 0.5, 0.012]), [0.044, 0.044, nan, 0.5, 0.044], rtol=1e-12)
    np.testing.assert_allclose(holm([0.04, nan, 0.01, 0.03]), [0.06, nan, 0.03, 0.06], rtol=1e-12)
    # a pairwise matrix: the diagonal is NaN, 2 tests
    np.testing.assert_allclose(holm([[nan, 0.01], [0.04, nan]]), [[nan, 0.02], [0.04, nan]], rtol=1e-12)
    np.testing.assert_allclose(adjust([0.04, nan, 0.01, 0.03], correction="holm"), [0.06, nan, 0.03, 0.06],
                               rtol=1e-12)


def test_bonferroni_with_nan_and_unordered_pvalues_by_hand():
    np.testing.assert_allclose(bonferroni([0.3, nan, 0.01, 0.6]), [0.9, nan, 0.03, 1.0], rtol=1e-12)
    np.testing.assert_allclose(bonferroni([0.3, nan, 0.01, 0.6], n_tests=5), [1.0, nan, 0.05, 1.0], rtol=1e-12)
    np.testing.assert_allclose(adjust([0.3, nan, 0.01], correction="bonferroni"), [0.6, nan, 0.02], rtol=1e-12)
    with pytest.raises(ValueError, match="n_tests=2 is smaller than the 3 p-values"):
        bonferroni([0.3, 0.2, 0.01], n_tests=2)


def test_fdr_with_nan_and_unordered_pvalues():
    p = np.array([0.04, nan, 0.001, 0.03, 0.2])
    valid = ~np.isnan(p)
    for method in ("bh", "by"):
        expected = np.full(p.shape, nan)
        expected[valid] = stats.false_discovery_control(p[valid], method=method)
        np.testing.assert_allclose(fdr(p, method=method), expected, rtol=1e-12)


# ------------------------------------------------------------------------------------------------
# Partial conjunction


def test_partial_conjunction_pvalues_are_monotone_in_u():
    # raw Bonferroni p-values 3 * 0.01, 2 * 0.01, 0.5 decrease from u = 1 to u = 2: the reported ones are their
    # running maximum (testing u = 1, 2, ... in turn), so "replicated on 2" is never claimed where "on 1" is not
    res = partial_conjunction_test([0.5, 0.01, 0.01], u=2, method="bonferroni")
    np.testing.assert_allclose(res.pvalues, [0.03, 0.03, 0.5], rtol=1e-12)
    assert res.pvalue == pytest.approx(0.03, rel=1e-12)
    assert res.n_replicated == 2
    for method in ("bonferroni", "fisher", "stouffer"):
        p = partial_conjunction_test([0.2, 0.01, 0.01, 0.3, 0.02], u=1, method=method).pvalues
        assert np.all(np.diff(p) >= 0), (method, p)


def test_partial_conjunction_zero_and_one_are_legal_pvalues():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy divide / invalid warning, no NaN
        res = partial_conjunction_test([0.0, 1.0], u=1, method="stouffer")
        # clipped to [2^-52, 1 - 2^-52], symmetric about 1/2: a 0 and a 1 cancel
        assert res.pvalue == pytest.approx(0.5, abs=1e-12) and res.n_replicated == 0
        res = partial_conjunction_test([0.0, 0.5, 0.5], u=1, method="stouffer")
        z = stats.norm.isf(STOUFFER_BOUND) / np.sqrt(3)
        assert res.pvalue == pytest.approx(stats.norm.sf(z), rel=1e-9)
        res = partial_conjunction_test([0.0, 0.5, 1.0], u=1, method="fisher")
        assert res.pvalue == 0.0 and res.n_replicated == 1  # -2 log 0 = inf, exactly
        assert partial_conjunction_test([0.0, 1.0], u=2, method="bonferroni").pvalues.tolist() == [0.0, 1.0]


# ------------------------------------------------------------------------------------------------
# alpha: (0, 1], numpy reals accepted


def test_clusters_with_alpha_one_rank_every_metric_apart():
    # mt-metrics-eval's AssignRanks(pval=1.0): every p-value <= 1 counts, ranks 1..K
    p = [[nan, 0.30, 0.01], [0.7, nan, 0.20], [0.99, 0.8, nan]]
    assert significance_clusters(_tests(p), alpha=1.0).ranks.tolist() == [1, 2, 3]
    assert significance_clusters(_tests(p), alpha=np.float32(0.25)).ranks.tolist() == [1, 1, 2]


def test_alpha_as_numpy_scalars_and_bad_alphas():
    assert partial_conjunction_test([0.01, 0.02], u=2, alpha=np.float32(0.05)).n_replicated == 2
    assert partial_conjunction_test([0.005, 0.02], u=2, alpha=np.float64(0.015)).n_replicated == 1  # 0.01, 0.02
    for bad in (0, 1.5, -0.1, True, "0.05", None, nan):
        with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\]"):
            significance_clusters(_tests(np.full((3, 3), 0.5)), alpha=bad)
        with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\]"):
            partial_conjunction_test([0.01, 0.02], u=1, alpha=bad)
