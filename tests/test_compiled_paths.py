"""The compiled Pearson kernels of resampled_corr (bootstrap_ci, bootstrap_test, pairwise_tests' bootstrap tests) and
of the permutation tests against the general path (the resampled or permuted matrices built cell by cell, then
``level_corr``) and against :func:`~metaeval.stats._kernels.pearson`: data with ties, constant and nearly constant
columns (the cells the sums-based kernels recompute from the values), sizes not multiples of the kernels' unrolling.

Tolerances: the kernels add in their natural order, not numpy's, so they agree to rounding, not to the bit.
``DIRECT`` for kernels that centre the values (system level: rtol 1e-12); ``FROM_SUMS`` for the summary-level
kernels, which compute each r from sums over the drawn or swapped cells (``n sxx - sx^2``): that loses up to 6
digits before a cell counts as nearly constant and is recomputed from its values (variance below 1e-6 of its mean
square), so they agree with the general path to about 1e-16 / 1e-6 (atol 1e-9)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from metaeval.stats import resampling as R
from metaeval.stats import significance as S
from metaeval.stats import _kernels as K
from metaeval.stats._kernels import coins as draw_coins, pearson, pearson_vector

DIRECT = dict(rtol=1e-12, atol=1e-14)
FROM_SUMS = dict(rtol=1e-9, atol=1e-9)


def _ties(seed: int, N: int, M: int):
    """Ratings in thirds, rounded metrics, a constant column of X and of Z, a nearly constant column of Y."""
    rng = np.random.default_rng(seed)
    Z = rng.integers(3, 16, size=(N, M)) / 3
    X = np.round(Z + rng.normal(size=Z.shape), 1)
    Y = np.round(Z + 2 * rng.normal(size=Z.shape), 1)
    X[:, 0] = 0.1
    Z[:, 1] = 2.0
    Y[:, 2] = 5.0 + 1e-9 * np.arange(N)
    return X, Y, Z


def _general(mats, Z, rows, cols, level):
    return R._gathered_corr(mats, Z, rows, cols, level, "pearson", 16, None, ["mean"] * len(mats))


# ----------------------------------------------------------------------------------------------------
# The compiled vector kernels against numpy's


@pytest.mark.parametrize("n", [2, 3, 5, 8, 16, 24, 129, 200])
def test_pearson_vector_is_the_pearson_kernel(n):
    rng = np.random.default_rng(n)
    X = rng.normal(size=(200, n)) * 10.0 ** rng.integers(-5, 6, size=(200, 1))
    z = rng.normal(size=n)
    X[:5] = 0.1  # constant: NaN
    X[5:20] = np.round(X[5:20])
    X[20] = z * 3 + 1  # r = 1 up to rounding: clipped
    expected = pearson(*np.broadcast_arrays(X, z), None)
    compiled = np.array([pearson_vector(x, z) for x in X])
    np.testing.assert_allclose(compiled, expected, **DIRECT)
    assert np.isnan(compiled[:5]).all() and np.nanmax(np.abs(compiled)) <= 1.0
    assert np.isnan(pearson_vector(X[6], np.full(n, 0.7)))


# ----------------------------------------------------------------------------------------------------
# resampled_corr's kernels against the general path


@pytest.mark.parametrize("level", ["system", "summary"])
@pytest.mark.parametrize("resample", ["both", "systems", "inputs"])
@pytest.mark.parametrize("N,M", [(8, 50), (5, 13), (11, 140)])
def test_resampled_pearson_kernels_equal_the_general_path(level, resample, N, M):
    X, Y, Z = _ties(N * M, N, M)
    rows, cols = R.draw_indices(N, M, 120, resample, np.random.default_rng(5))
    fast = R.resampled_corr([X, Y], Z, rows, cols, level, "pearson", 7)
    ref = _general([X, Y], Z, rows, cols, level)
    np.testing.assert_array_equal(np.isnan(fast), np.isnan(ref))
    np.testing.assert_allclose(fast, ref, **(DIRECT if level == "system" else FROM_SUMS))
    assert np.isfinite(fast).any()


def test_bootstrap_summary_kernel_recomputes_the_refined_resamples():
    # a nearly constant column whose drawn values sit far from its mean: its cells are recomputed from the values
    N, M = 6, 9
    X, _, Z = _ties(3, N, M)
    X[:, 4] = [1.0, 1.0 + 1e-12, 1.0 + 2e-12, 1.0 + 3e-12, 1.0 + 4e-12, 7.0]
    rows, cols = R.draw_indices(N, M, 300, "both", np.random.default_rng(2))
    Xc, Zc = X - X.mean(axis=0), Z - Z.mean(axis=0)
    _, redo = R._boot_summary_pearson(X[None], Xc[None], (Xc * Xc)[None], (Xc * Zc)[None], Z, Zc, Zc * Zc, rows, cols)
    assert redo.any()
    fast = R.resampled_corr([X], Z, rows, cols, "summary", "pearson", 50)
    np.testing.assert_allclose(fast, _general([X], Z, rows, cols, "summary"), **FROM_SUMS)


def test_percentile_intervals_are_bootstrap_ci_calls_in_turn():
    # the intervals and warnings of one bootstrap_ci call per method, on one generator
    X, _, Z = _ties(12, 8, 40)
    X[:, 1:] = 0.5  # summary level: one defined input; resamples without it are dropped (a warning)
    for level in ("system", "summary"):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            intervals = R.percentile_intervals(X, Z, level=level, coefficient="pearson",
                                               resamples=["systems", "inputs", "both"], n_resamples=200,
                                               confidence_level=0.9, rng=np.random.default_rng(1))
        rng = np.random.default_rng(1)
        with warnings.catch_warnings(record=True) as expected:
            warnings.simplefilter("always")
            results = [R.bootstrap_ci(X, Z, level=level, resample=r, n_resamples=200, confidence_level=0.9, rng=rng)
                       for r in ("systems", "inputs", "both")]
        assert intervals == [res.confidence_interval for res in results]
        assert [str(w.message) for w in got] == [str(w.message) for w in expected]
        assert {w.filename for w in got} == {__file__}  # the warnings name the caller's line, as bootstrap_ci's
    assert len(expected) > 0


def test_percentile_intervals_show_each_methods_warnings_as_separate_calls_do():
    # Python shows a warning once per line unless its registry is reset; each bootstrap_ci call resets it (its
    # validation runs nanmax under catch_warnings), so separate calls show the same warning once per call, and
    # executed notebooks record them all
    X, _, Z = _ties(13, 8, 40)
    X[:] = 0.5  # every correlation undefined: the same two warnings from every method

    def shown(run):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("default")
            run()
        return [str(w.message) for w in got]

    def calls():
        rng = np.random.default_rng(1)
        for r in ("systems", "inputs", "both"):
            R.bootstrap_ci(X, Z, level="summary", resample=r, n_resamples=50, rng=rng)

    def together():
        R.percentile_intervals(X, Z, level="summary", coefficient="pearson", resamples=["systems", "inputs", "both"],
                               n_resamples=50, confidence_level=0.95, rng=np.random.default_rng(1))

    expected = shown(calls)
    assert len(expected) == 6 and len(set(expected)) == 2
    assert shown(together) == expected


# ----------------------------------------------------------------------------------------------------
# The permutation kernels against the permuted matrices


@pytest.mark.parametrize("level", ["system", "summary"])
@pytest.mark.parametrize("method", ["both", "rows-xor-columns"])
@pytest.mark.parametrize("N,M", [(8, 30), (5, 13), (13, 140)])
def test_pair_null_is_the_correlation_of_the_permuted_matrices(level, method, N, M):
    X, Y, Z = _ties(N + M, N, M)
    Xs, Ys = S._standardize(X), S._standardize(Y)
    coins = draw_coins(np.random.default_rng(3), (300,), N, M, method)
    fast = S._pair_null(Xs, Ys, Z, coins, S._transposed_coins(coins), level)
    ref = S._swapped_deltas(Xs, Ys, Z, coins, level, "pearson", None)
    np.testing.assert_allclose(fast, ref, **(DIRECT if level == "system" else FROM_SUMS))
    assert np.isfinite(fast).all()
    # permutation_test's chunks take the same kernel
    np.testing.assert_array_equal(fast[:64], S._permutation_deltas(Xs, Ys, Z, coins[:64], level, "pearson", None))
    if level == "summary":
        # the kernel's own values, not only the permutations it leaves to the general path (Y's nearly constant
        # column makes every permutation one of those): without that column it recomputes none
        Ys = S._standardize(np.where(np.arange(M) == 2, X, Y))
        null, weak = _summary_kernel(Xs, Ys, Z, coins)
        assert not weak.any()
        np.testing.assert_allclose(null, S._swapped_deltas(Xs, Ys, Z, coins, "summary", "pearson", None), **FROM_SUMS)


def _summary_kernel(Xs, Ys, Z, coins):
    """perm_summary_null's own (null, weak) for one pair, as perm_summary_pearson calls it."""
    spy = []
    kernel = K.perm_summary_null
    try:
        K.perm_summary_null = lambda *args: spy.append(kernel(*args)) or spy[-1]
        K.perm_summary_pearson(Xs[None], Ys[None], Z[None], np.packbits(coins), np.zeros(1, np.int64), len(coins))
    finally:
        K.perm_summary_null = kernel
    return spy[0][0][0], spy[0][1][0]


def test_perm_summary_kernel_recomputes_the_refined_permutations():
    # two nearly constant columns at different levels: a permutation taking every cell from one metric leaves
    # a nearly constant column far from the centre, whose r is recomputed from the values
    N, M = 3, 6
    X, Y, Z = _ties(1, N, M)
    X[:, 3] = 1.0 + 1e-9 * np.arange(N)
    Y[:, 3] = -4.0 + 1e-9 * np.arange(N)[::-1]
    Xs, Ys = S._standardize(X), S._standardize(Y)
    coins = draw_coins(np.random.default_rng(0), (200,), N, M, "both")
    assert _summary_kernel(Xs, Ys, Z, coins)[1].any()
    np.testing.assert_allclose(S._pair_null(Xs, Ys, Z, coins, S._transposed_coins(coins), "summary"),
                               S._swapped_deltas(Xs, Ys, Z, coins, "summary", "pearson", None), **FROM_SUMS)


@pytest.mark.parametrize("level", ["system", "summary"])
def test_pairwise_tests_p_values_are_those_of_the_permuted_matrices(level, monkeypatch):
    mats = list(_ties(21, 9, 24))
    mats.append(mats[0].copy())  # a metric twice: its pair's null is all zeros
    Z = mats.pop(2)
    fast = S.pairwise_tests(mats, Z, level=level, n_resamples=499, rng=6)
    monkeypatch.setattr(S, "_pair_null", lambda Xs, Ys, Z, coins, coins_t, level: S._swapped_deltas(
        Xs, Ys, Z, coins, level, "pearson", None))
    ref = S.pairwise_tests(mats, Z, level=level, n_resamples=499, rng=6, batch=37)
    # the same counts: null values that differ from the observed one by rounding count as ties (the tail rule's
    # tolerance), so the p-values are equal, not only close
    np.testing.assert_array_equal(fast.pvalues, ref.pvalues)
    np.testing.assert_array_equal(fast.statistics, ref.statistics)
    assert fast.pvalues[0, 2] == fast.pvalues[2, 0] == 1.0  # identical metrics: every permutation as extreme
