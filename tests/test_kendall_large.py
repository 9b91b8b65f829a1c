"""Kendall at any size (issue 33): one kernel, two implementations of the same definition, equal to each other
and to ``scipy.stats.kendalltau`` (tau-b and tau-c) to the last bit, and global Kendall on 64 systems x 5,000
inputs (320,000 cells: 5.1e10 pairs, which the pair path would have tried to hold as a 95 GiB matrix) in
O(n log n) time and O(n) memory."""

import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import stats

from metaeval.stats import _kernels as K
from metaeval.stats import _pairs
from metaeval.stats.correlation import batch_corr, correlate
from metaeval.stats.resampling import auto_batch, bootstrap_ci, per_resample_bytes
from metaeval.stats.significance import permutation_test


def _vectors(rng, n, ties):
    scale = rng.choice([0.5, 3.0]) if ties else 1e6
    return np.round(rng.normal(size=n) * scale), np.round(rng.normal(size=n) * scale)


@pytest.mark.parametrize("variant", ["b", "c"])
@pytest.mark.parametrize("n", [2, 3, 5, 15, 16, 40, 300])
def test_both_implementations_are_scipy_to_the_last_bit(n, variant):
    rng = np.random.default_rng(n)
    for ties in (False, True):
        for _ in range(10):
            x, z = _vectors(rng, n, ties)
            w = (rng.random(n) > 0.25).astype(float)
            # the counts: every pair (the batched path) and by sorting, with and without a mask
            for mask in (None, w):
                pairs = np.array(_pairs._pair_counts(x[None], z[None], None if mask is None else mask[None]))
                assert _pairs._sorted_counts(x[None], z[None], None if mask is None else mask[None])[:3].tolist() \
                    == pairs.tolist()
            keep = w > 0
            for xv, zv, mask in ((x, z, None), (np.where(keep, x, 0.0), np.where(keep, z, 0.0), w)):
                ours = float(_pairs.kendall(xv, zv, mask, variant=variant))
                sel = slice(None) if mask is None else keep
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # scipy warns on fewer than 2 entries (its NaN is the reference)
                    ref = stats.kendalltau(xv[sel], zv[sel], variant=variant)[0]
                assert ours == ref or (np.isnan(ours) and np.isnan(ref)), (ties, ours, ref)


def test_the_threshold_does_not_change_a_number(monkeypatch):
    # a batch of short vectors through each path: the same floats (the sorted path planted to differ, e.g.
    # counting ties in both as concordant, fails this and the scipy test)
    rng = np.random.default_rng(3)
    x = np.round(rng.normal(size=(200, 20)) * 2)
    z = np.round(rng.normal(size=(200, 20)) * 2)
    w = (rng.random((200, 20)) > 0.2).astype(float)
    for variant in ("b", "c"):
        sorted_ = _pairs.kendall(x, z, w, variant=variant)
        monkeypatch.setattr(_pairs, "SORTED_FROM", 10**9)
        paired = _pairs.kendall(x, z, w, variant=variant)
        monkeypatch.undo()
        np.testing.assert_array_equal(sorted_, paired)
        assert np.isfinite(sorted_).sum() > 190


def test_nan_inside_a_long_vector_is_nan_not_a_tie():
    x = np.arange(100.0)
    z = x.copy()
    z[5] = np.nan
    assert np.isnan(_pairs.kendall(x, z))
    assert float(_pairs.kendall(x, x)) == 1.0


def test_tau_formulas_are_scipys_and_undefined_is_nan_without_numpy_warnings():
    with np.errstate(all="raise"):
        assert K.tau_b(np.array([2, 0, 0]), np.array([2, 0, 3]), np.array([2, 3, 0])).tolist()[0] == \
            2 / np.sqrt(2.0) / np.sqrt(2.0)  # 0.9999999999999999, as scipy divides
        assert K.tau_b(np.array([-9]), np.array([4]), np.array([4])).tolist() == [-1.0]  # clipped
        assert np.isnan(K.tau_b(np.array([2, 0, 0]), np.array([2, 0, 3]), np.array([2, 3, 0]))[1:]).all()
        assert np.isnan(K.tau_c(np.array([3]), np.array([3]), np.array([1])))[0]
    # S = 4, nx = 5, nz = 6 by hand: 4 / sqrt(5) / sqrt(6)
    assert float(K.tau_b(4, 5, 6)) == 4 / np.sqrt(5.0) / np.sqrt(6.0)
    # tau-c: 2 S / (n^2 (m - 1) / m) = 2 * 3 / (16 * 2 / 3)
    assert float(K.tau_c(3, 4, 3)) == 2.0 * 3 / (4.0 * 4.0 * (3 - 1) / 3)


def test_global_kendall_64_by_5000_is_scipys():
    rng = np.random.default_rng(0)
    Z = np.round(rng.normal(size=(64, 5000)) * 20)  # ties, as human scores have
    X = Z + rng.normal(size=Z.shape)
    assert correlate(X, Z, level="global", coefficient="kendall") == stats.kendalltau(X.ravel(), Z.ravel())[0]
    assert correlate(X, Z, level="global", coefficient="kendall-c") == \
        stats.kendalltau(X.ravel(), Z.ravel(), variant="c")[0]
    # with a missing cell: the pairs of the other 319,999 cells
    Xn, Zn = X.copy(), Z.copy()
    Xn[3, 7] = Zn[3, 7] = np.nan
    keep = ~np.isnan(Xn.ravel())
    assert correlate(Xn, Zn, level="global", coefficient="kendall", nan_policy="omit") == \
        stats.kendalltau(X.ravel()[keep], Z.ravel()[keep])[0]
    # the chunk planner no longer counts n^2 pairs for a sorted Kendall
    assert per_resample_bytes(64, 5000, "global", "kendall") == 32.0 * 64 * 5000
    assert auto_batch(64, 5000, "global", "kendall") >= 1


def test_global_kendall_64_by_5000_takes_linear_memory():
    # numpy's allocations at their peak (tracemalloc sees them; the pair path asked for 95 GiB here): a few
    # copies of the 320,000 cells, not their 5.1e10 pairs. Measured outside tests: 0.14 s and 270 MB peak RSS
    # for the whole process (python, numpy, scipy, numba included; benchmarks/bench_stats.py).
    rng = np.random.default_rng(0)
    Z = np.round(rng.normal(size=(64, 5000)) * 20)
    X = Z + rng.normal(size=Z.shape)
    tracemalloc.start()
    try:
        tau = correlate(X, Z, level="global", coefficient="kendall")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert 0.5 < tau < 1.0
    assert peak < 40 * X.nbytes, f"peak {peak / 2**20:.0f} MiB"


def test_resampling_beyond_the_pair_tables_uses_the_same_kernel(monkeypatch):
    # with the per-pair tables over budget, summary-level bootstrap and permutation go through the batched
    # path (sorted Kendall for long vectors): the same draws give the same statistics, bit for bit
    rng = np.random.default_rng(5)
    Z = np.round(rng.normal(size=(20, 6)) * 2)
    X = Z + np.round(rng.normal(size=Z.shape))
    Y = np.round(rng.normal(size=Z.shape) * 2)
    boot = bootstrap_ci(X, Z, level="summary", coefficient="kendall", n_resamples=200, rng=1)
    perm = permutation_test(X, Y, Z, level="summary", coefficient="kendall", n_resamples=200, rng=2)
    monkeypatch.setattr(K, "PAIR_TABLE_BUDGET", 0)
    assert not K.pair_tables_fit(20, 6)
    boot2 = bootstrap_ci(X, Z, level="summary", coefficient="kendall", n_resamples=200, rng=1)
    perm2 = permutation_test(X, Y, Z, level="summary", coefficient="kendall", n_resamples=200, rng=2)
    np.testing.assert_array_equal(boot.bootstrap_distribution, boot2.bootstrap_distribution)
    np.testing.assert_array_equal(perm.null_distribution, perm2.null_distribution)
    assert boot.n_dropped == boot2.n_dropped


def test_batch_corr_kendall_is_the_one_kernel():
    rng = np.random.default_rng(8)
    x, z = rng.normal(size=(3, 50)), rng.normal(size=50)
    np.testing.assert_array_equal(batch_corr(x, z, "kendall"), _pairs.kendall(x, z))
    np.testing.assert_array_equal(batch_corr(x, z, "kendall-c"), _pairs.kendall(x, z, variant="c"))
