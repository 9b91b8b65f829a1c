"""The compiled Pearson paths of resampled_corr (bootstrap_ci, bootstrap_test, pairwise_tests' bootstrap tests) and
of pairwise_tests' permutation tests give their numpy paths' floats, and the compiled twins of numpy's reductions
they are built on give numpy's: a kernel that added in another order would change the committed results in their
last bits. Data with ties, constant and nearly constant columns (the cells pearson_from_sums refines), sizes not
multiples of the kernels' unrolling, and inputs beyond numpy's 128-entry pairwise blocks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from metaeval.stats import correlation as C
from metaeval.stats import resampling as R
from metaeval.stats import _planning_kernels as P
from metaeval.stats import significance as S
from metaeval.stats._kernels import pearson


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


@pytest.fixture
def numpy_paths(monkeypatch):
    """Make resampled_corr and pairwise_tests take their numpy paths (as on a numpy that adds in another order)."""
    def use():
        monkeypatch.setattr(R, "_KERNELS_AGREE", {"system": False, "summary": False})
        monkeypatch.setattr(S, "_PAIR_NULL_CHECKED", {"system": False, "summary": False})
    return use


# ----------------------------------------------------------------------------------------------------
# The twins of numpy's reductions


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 16, 17, 50, 127, 128, 129, 136, 257, 264, 1000, 4099])
def test_add_reduce_is_numpys_sum(n):
    rng = np.random.default_rng(n)
    a = rng.normal(size=(20, n)) * 10.0 ** rng.integers(-8, 9, size=(20, n))
    twins = [C.add_reduce(row, n) for row in a]
    np.testing.assert_array_equal(twins, np.add.reduce(a, axis=-1))
    np.testing.assert_array_equal(twins, a.sum(axis=-1))


@pytest.mark.parametrize("n", [1, 5, 8, 50, 100, 300])
def test_mean_of_defined_row_is_mean_of_defined(n):
    rng = np.random.default_rng(n)
    r = rng.uniform(-1, 1, size=(30, n))
    r[rng.random(r.shape) < 0.2] = np.nan
    r[0] = np.nan  # nothing defined: NaN
    r[1, :] = -0.0
    twins = [C.mean_of_defined_row(row, np.empty(n)) for row in r]
    np.testing.assert_array_equal(twins, C.mean_of_defined(r))
    assert np.isnan(twins[0]) and np.signbit(twins[1]) == np.signbit(C.mean_of_defined(r)[1])


@pytest.mark.parametrize("M", [1, 2, 7, 8, 9, 37, 100, 301])
def test_einsum_lanes_is_numpys_einsum(M):
    rng = np.random.default_rng(M)
    N, B = 5, 70
    D = rng.normal(size=(N, M)) * 10.0 ** rng.integers(-4, 5, size=(N, M))
    coins = rng.integers(0, 2, size=(B, N, M)).astype(bool)
    counts = R.draw_counts(rng.integers(0, M, size=(B, M)), M)
    lane0, lane1 = np.empty(B), np.empty(B)
    for operand, spec, rows in ((coins, "bnm,nm->bn", lambda n: np.ascontiguousarray(coins[:, n].T).view(np.uint8)),
                                (counts, "bm,nm->bn", lambda n: np.ascontiguousarray(counts.T))):
        expected = np.einsum(spec, operand, D)
        for n in range(N):
            for b0, L in ((0, B), (3, B - 3)):  # a block of the resamples
                C.einsum_lanes(rows(n), b0, L, D[n], lane0, lane1)
                np.testing.assert_array_equal(0.0 + (lane0[:L] + lane1[:L]), expected[b0:, n])


@pytest.mark.parametrize("n", [2, 3, 5, 8, 16, 24, 129, 200])
def test_pearson_vector_is_the_pearson_kernel(n):
    rng = np.random.default_rng(n)
    X = rng.normal(size=(200, n)) * 10.0 ** rng.integers(-5, 6, size=(200, 1))
    z = rng.normal(size=n)
    X[:5] = 0.1  # constant: NaN
    X[5:20] = np.round(X[5:20])
    X[20] = z * 3 + 1  # r = 1 up to rounding: clipped
    expected = pearson(*np.broadcast_arrays(X, z), None)
    buffers = np.empty(n), np.empty(n), np.empty(n)
    twins = [C.pearson_vector(x, z, *buffers) for x in X]
    np.testing.assert_array_equal(twins, expected)
    assert np.isnan(C.pearson_vector(X[6], np.full(n, 0.7), *buffers))


# ----------------------------------------------------------------------------------------------------
# resampled_corr's kernels against its numpy path


@pytest.mark.parametrize("level", ["system", "summary"])
@pytest.mark.parametrize("resample", ["both", "systems", "inputs"])
@pytest.mark.parametrize("N,M", [(8, 50), (5, 13), (11, 140)])
def test_resampled_pearson_kernels_equal_the_numpy_path(level, resample, N, M):
    X, Y, Z = _ties(N * M, N, M)
    rows, cols = R.draw_indices(N, M, 120, resample, np.random.default_rng(5))
    fast = R.resampled_corr([X, Y], Z, rows, cols, level, "pearson", 7)
    ref = R.resampled_corr([X, Y], Z, rows, cols, level, "pearson", 7, compiled=False)
    np.testing.assert_array_equal(fast, ref)
    assert np.isfinite(fast).any()


def test_bootstrap_system_kernel_is_the_same_whatever_the_block():
    X, Y, Z = _ties(8, 7, 19)
    rows, cols = R.draw_indices(7, 19, 300, "both", np.random.default_rng(1))
    outs = [R._boot_system_pearson(np.stack([X, Y]), Z, rows, cols, block) for block in (1, 5, 128)]
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])


def test_bootstrap_summary_kernel_recomputes_the_refined_resamples():
    # a nearly constant column whose drawn values sit far from its mean: pearson_from_sums refines those cells
    N, M = 6, 9
    X, _, Z = _ties(3, N, M)
    X[:, 4] = [1.0, 1.0 + 1e-12, 1.0 + 2e-12, 1.0 + 3e-12, 1.0 + 4e-12, 7.0]
    rows, cols = R.draw_indices(N, M, 300, "both", np.random.default_rng(2))
    Xc, Zc = X - X.mean(axis=0), Z - Z.mean(axis=0)
    _, redo = R._boot_summary_pearson(X[None], Xc[None], (Xc * Xc)[None], (Xc * Zc)[None], Z, Zc, Zc * Zc, rows, cols)
    assert redo.any()
    np.testing.assert_array_equal(R.resampled_corr([X], Z, rows, cols, "summary", "pearson", 50),
                                  R.resampled_corr([X], Z, rows, cols, "summary", "pearson", 50, compiled=False))


def test_bootstrap_ci_is_unchanged_by_the_kernels(numpy_paths):
    X, _, Z = _ties(11, 8, 40)
    calls = [dict(level=level, resample=resample) for level in ("system", "summary")
             for resample in ("both", "systems", "inputs")]
    fast = [R.bootstrap_ci(X, Z, n_resamples=300, rng=4, **kw) for kw in calls]
    numpy_paths()
    for kw, res in zip(calls, fast):
        ref = R.bootstrap_ci(X, Z, n_resamples=300, rng=4, **kw)
        assert res.confidence_interval == ref.confidence_interval and res.standard_error == ref.standard_error
        np.testing.assert_array_equal(res.bootstrap_distribution, ref.bootstrap_distribution)


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
# pairwise_tests' permutation kernels against _permutation_deltas


@pytest.mark.parametrize("level", ["system", "summary"])
@pytest.mark.parametrize("method", ["both", "rows-xor-columns"])
@pytest.mark.parametrize("N,M", [(8, 30), (5, 13), (13, 140)])
def test_pair_null_is_permutation_deltas(level, method, N, M):
    X, Y, Z = _ties(N + M, N, M)
    Xs, Ys = S._standardize(X), S._standardize(Y)
    coins = S._coins(np.random.default_rng(3), 300, (N, M), method)
    coins_t = np.ascontiguousarray(coins.view(np.uint8).transpose(1, 2, 0))
    fast = S._pair_null(Xs, Ys, Z, coins, coins_t, level)
    ref = np.concatenate([S._permutation_deltas(Xs, Ys, Z, coins[s:s + 64], level, "pearson", None)
                          for s in range(0, 300, 64)])
    np.testing.assert_array_equal(fast, ref)
    assert np.isfinite(fast).all()


def test_perm_summary_kernel_recomputes_the_refined_permutations():
    # two nearly constant columns at different levels: a permutation taking every cell from one metric leaves
    # a nearly constant column far from the centre, which pearson_from_sums refines from the values
    N, M = 3, 6
    X, Y, Z = _ties(1, N, M)
    X[:, 3] = 1.0 + 1e-9 * np.arange(N)
    Y[:, 3] = -4.0 + 1e-9 * np.arange(N)[::-1]
    Xs, Ys = S._standardize(X), S._standardize(Y)
    coins = S._coins(np.random.default_rng(0), 200, (N, M), "both")
    coins_t = np.ascontiguousarray(coins.view(np.uint8).transpose(1, 2, 0))
    centre = (Xs.mean(axis=0) + Ys.mean(axis=0)) / 2
    Xc, Yc, Zc = Xs - centre, Ys - centre, Z - Z.mean(axis=0)
    base = np.stack([Xc.sum(0), (Xc * Xc).sum(0), (Xc * Zc).sum(0), Yc.sum(0), (Yc * Yc).sum(0), (Yc * Zc).sum(0)])
    nulls = [S._perm_summary_pearson(coins_t, Xs, Ys, Yc - Xc, Yc * Yc - Xc * Xc, (Yc - Xc) * Zc, base,
                                     Zc.sum(0), (Zc * Zc).sum(0), ~C.constant(Z.T), block) for block in (1, 7, 128)]
    for null, redo in nulls[1:]:  # whatever the block
        np.testing.assert_array_equal(null, nulls[0][0])
        np.testing.assert_array_equal(redo, nulls[0][1])
    assert nulls[0][1].any()
    np.testing.assert_array_equal(S._pair_null(Xs, Ys, Z, coins, coins_t, "summary"),
                                  S._permutation_deltas(Xs, Ys, Z, coins, "summary", "pearson", None))


@pytest.mark.parametrize("level", ["system", "summary"])
def test_pairwise_tests_are_unchanged_by_the_kernels(level, numpy_paths):
    mats = list(_ties(21, 9, 24))
    mats.append(mats[0].copy())  # a metric twice: its pair's null is all zeros
    Z = mats.pop(2)
    fast = S.pairwise_tests(mats, Z, level=level, n_resamples=499, rng=6)
    numpy_paths()
    ref = S.pairwise_tests(mats, Z, level=level, n_resamples=499, rng=6, batch=37)
    np.testing.assert_array_equal(fast.pvalues, ref.pvalues)
    np.testing.assert_array_equal(fast.statistics, ref.statistics)
    assert fast.pvalues[0, 2] == fast.pvalues[2, 0] == 1.0  # identical metrics: every permutation as extreme


def test_the_kernels_are_used_here():
    # they fall back to the numpy paths where numpy adds in another order: on this platform they must not
    assert all(R._kernels_agree(kind) for kind in ("system", "summary"))
    assert all(S._pair_null_agrees(level) for level in ("system", "summary"))
    assert P._einsum_order_holds(np.getbufsize())  # the planner's system level (test_planning skips without it)
