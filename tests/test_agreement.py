"""Pair statistics (stats/agreement.py, stats/_pairs.py) and multiplicity (stats/multiplicity.py).

Golden values: tests/fixtures/agreement/ (printed by mt-metrics-eval's own code; see its README). Toy values
are checked by hand in the comments.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import metaeval
from metaeval.stats import agreement as ag
from metaeval.stats import multiplicity as mu
from metaeval.stats._pairs import kendall_c, level_groups
from metaeval.stats.correlation import batch_corr

FIX = Path(__file__).parent / "fixtures" / "agreement"
GOLDEN = json.loads((FIX / "mtme_golden.json").read_text())
GOLDEN_SPA = json.loads((FIX / "mtme_golden_spa.json").read_text())
CASES = [(name, m) for name, d in GOLDEN["datasets"].items() for m in d["metrics"]]


def _mats(name, metric):
    ds = metaeval.datasets.load(name)
    return ds.matrix(metric), ds.matrix(GOLDEN["datasets"][name]["human"])


# ---------------------------------------------------------------------------------------------- golden


@pytest.mark.parametrize("name,metric", CASES)
def test_golden_pairwise_accuracy_and_tau_variants(name, metric):
    X, Z = _mats(name, metric)
    ref = GOLDEN["datasets"][name]["metrics"][metric]
    for level in ("system", "summary", "per-system"):
        assert ag.pairwise_accuracy(X, Z, level=level) == pytest.approx(ref[f"pairwise_accuracy_{level}"], abs=1e-12)
    for level in ("system", "summary", "per-system", "global"):
        x, z, w = level_groups(X, Z, level)
        assert np.nanmean(kendall_c(x, z, w)) == pytest.approx(ref[f"kendall_c_{level}"], abs=1e-12)
        assert np.nanmean(batch_corr(x, z, "kendall", w)) == pytest.approx(ref[f"kendall_b_{level}"], abs=1e-12)


@pytest.mark.parametrize("name,metric", CASES)
def test_golden_tie_calibrated_accuracy(name, metric):
    X, Z = _mats(name, metric)
    ref = GOLDEN["datasets"][name]["metrics"][metric]
    for level in ("system", "summary", "per-system", "global"):
        if f"acc_eq_{level}" not in ref:
            continue  # global level printed for fabbri2020 only (mt-metrics-eval's search takes minutes)
        res = ag.tie_calibrated_accuracy(X, Z, level=level)
        assert res.statistic == pytest.approx(ref[f"acc_eq_{level}"], abs=1e-12)
        # Where several thresholds reach the maximum, ours (exact counts) is the smallest; mt-metrics-eval's
        # running float sum can prefer another by 1e-16 of rounding. Its threshold must then be as good.
        if res.epsilon != ref[f"epsilon_{level}"]:
            assert res.epsilon < ref[f"epsilon_{level}"]
            at_theirs = ag.tie_calibrated_accuracy(X, Z, level=level, epsilon=ref[f"epsilon_{level}"]).statistic
            assert at_theirs == pytest.approx(res.statistic, abs=1e-12)


@pytest.mark.parametrize("name", list(GOLDEN_SPA)[1:])
def test_golden_soft_pairwise_accuracy(name):
    d = GOLDEN_SPA[name]
    human = GOLDEN["datasets"][name]["human"]
    ds = metaeval.datasets.load(name)
    Z = ds.matrix(human)
    ours = ag.pairwise_pvalues(Z, ag._signs(np.random.default_rng(4), 1000, Z.shape[1]))
    ref = np.array(d["human_pairwise_pvalues_seed4_1000"], dtype=float)
    # exact where mt-metrics-eval's float32 sums are exact (SummEval's thirds scaled to integers)
    assert np.nanmax(np.abs(ours - ref)) <= (0 if d["human_scale"] else 1e-3 + 1e-12)
    for metric, value in d["soft_pairwise_accuracy_seed4_1000"].items():
        res = ag.soft_pairwise_accuracy(ds.matrix(metric), Z, n_resamples=1000, rng=4)
        # float32 rounding of near-equal sums flips at most a couple of the 1000 x pairs comparisons
        assert res.statistic == pytest.approx(value, abs=1e-5)


# ---------------------------------------------------------------------------------------------- toys


def test_pairwise_accuracy_ties_hand_checked():
    # system means x = (3, 1, 3, 2), z = (3, 1, 2, 2); pairs:
    # (0,1) ++ agree; (0,2) x tie, z + -> disagree; (0,3) ++ agree; (1,2) -- agree; (1,3) -- agree;
    # (2,3) x +, z tie -> disagree.  4 / 6
    X = np.repeat([[3.0], [1.0], [3.0], [2.0]], 3, axis=1)
    Z = np.repeat([[3.0], [1.0], [2.0], [2.0]], 3, axis=1)
    assert ag.pairwise_accuracy(X, Z) == pytest.approx(4 / 6)
    # a pair tied in both agrees (mt-metrics-eval Agreement): make x_3 = x_2 = 3 -> (2,3) tie/tie agrees,
    # (0,3) tie vs + disagrees, (1,3) -- agrees: 4/6 again, but with a different pair set
    X2 = X.copy()
    X2[3] = 3.0
    assert ag.pairwise_accuracy(X2, Z) == pytest.approx(4 / 6)
    assert ag.pairwise_accuracy(X, X) == 1.0
    assert ag.pairwise_accuracy(-X[[0, 1, 3]], Z[[0, 1, 3]]) == 0.0


def test_pairwise_accuracy_levels_are_means_over_groups():
    rng = np.random.default_rng(3)
    X, Z = rng.integers(0, 4, size=(2, 5, 6)).astype(float)
    per_input = [ag.pairwise_accuracy(X[:, [j] * 3], Z[:, [j] * 3], level="global") * 0 + np.mean(
        [np.sign(X[a, j] - X[b, j]) == np.sign(Z[a, j] - Z[b, j]) for a in range(5) for b in range(a + 1, 5)])
        for j in range(6)]
    assert ag.pairwise_accuracy(X, Z, level="summary") == pytest.approx(np.mean(per_input))
    per_system = [np.mean([np.sign(X[i, a] - X[i, b]) == np.sign(Z[i, a] - Z[i, b])
                           for a in range(6) for b in range(a + 1, 6)]) for i in range(5)]
    assert ag.pairwise_accuracy(X, Z, level="per-system") == pytest.approx(np.mean(per_system))


def test_kendall_c_matches_scipy_with_ties():
    rng = np.random.default_rng(0)
    for _ in range(20):
        x, z = rng.integers(0, 4, size=(2, 9)).astype(float)
        ref = stats.kendalltau(x, z, variant="c").statistic
        assert float(kendall_c(x, z)) == pytest.approx(ref, nan_ok=True, abs=1e-12)
    assert np.isnan(kendall_c(np.ones(4), np.arange(4.0)))


def test_tie_calibration_hand_checked():
    # pairs of (x, z): s0=(0,1), s1=(0.1,1), s2=(2,3). Pair (0,1): humans tie, metric differs by 0.1;
    # (0,2), (1,2): concordant, metric differences 2 and 1.9.
    X, Z = [[0.0], [0.1], [2.0]], [[1.0], [1.0], [3.0]]
    res = ag.tie_calibrated_accuracy(X, Z, level="global")
    # eps = 0: 2 / 3 correct; eps = 0.1: the human tie is now a metric tie too: 3 / 3; eps = 1.9: (1,2)
    # becomes a metric tie on a human-ordered pair: 2 / 3; eps = 2: 1 / 3
    assert res.thresholds.tolist() == pytest.approx([0.0, 0.1, 1.9, 2.0])
    assert res.accuracies.tolist() == pytest.approx([2 / 3, 1.0, 2 / 3, 1 / 3])
    assert (res.statistic, res.epsilon) == (1.0, pytest.approx(0.1))
    assert ag.tie_calibrated_accuracy(X, Z, level="global", epsilon=1.95).statistic == pytest.approx(2 / 3)
    # a metric that ties exactly what humans tie needs no threshold
    assert ag.tie_calibrated_accuracy([[0.0], [0.0], [2.0]], Z, level="global").epsilon == 0.0


def test_tie_calibration_unequal_groups_and_nan():
    rng = np.random.default_rng(1)
    X, Z = rng.integers(0, 3, size=(2, 6, 5)).astype(float)
    X[0, 0] = Z[0, 0] = np.nan
    res = ag.tie_calibrated_accuracy(X, Z, level="summary", nan_policy="omit")
    # brute force: every candidate threshold, mean over inputs of per-input acc_eq
    best = -1.0
    cands = sorted({0.0} | {abs(X[a, j] - X[b, j]) for j in range(5) for a in range(6) for b in range(a + 1, 6)
                            if not np.isnan(X[a, j] + X[b, j])})
    for eps in cands:
        accs = []
        for j in range(5):
            ok = ~np.isnan(X[:, j])
            x, z = X[ok, j], Z[ok, j]
            good = [(z[a] == z[b] and abs(x[a] - x[b]) <= eps)
                    or (z[a] != z[b] and abs(x[a] - x[b]) > eps and np.sign(x[a] - x[b]) == np.sign(z[a] - z[b]))
                    for a in range(len(x)) for b in range(a + 1, len(x))]
            accs.append(np.mean(good))
        best = max(best, np.mean(accs))
    assert res.statistic == pytest.approx(best)


def test_soft_pairwise_accuracy_toy():
    # identical scores give identical p-values; reversed scores give p and 1 - p (up to ties) -> far below 1
    Z = np.arange(20.0).reshape(4, 5) + np.random.default_rng(0).normal(size=(4, 5))
    assert ag.soft_pairwise_accuracy(Z, Z, n_resamples=500, rng=1).statistic == 1.0
    assert ag.soft_pairwise_accuracy(-Z, Z, n_resamples=500, rng=1).statistic < 0.2
    res = ag.soft_pairwise_accuracy(Z, Z, n_resamples=500, rng=1)
    assert np.isnan(res.metric_pvalues[np.tril_indices(4)]).all()
    # batch-independence is trivial here (one draw); same seed, same answer
    assert ag.soft_pairwise_accuracy(Z + 1, Z, rng=2).statistic == ag.soft_pairwise_accuracy(Z + 1, Z, rng=2).statistic


def test_delta_correlations_hand_checked_and_bootstrap():
    Z = np.repeat([[0.0], [1.0], [2.0], [3.0]], 3, axis=1)
    X = np.repeat([[0.0], [1.0], [3.0], [2.9]], 3, axis=1)
    res = ag.delta_correlations(X, Z, deltas=[(0, 1.5), (1.5, 4)], by="human", n_resamples=0)
    # human differences: 1 for (0,1), (1,2), (2,3) -> bucket 0 with signs +, +, - -> 1/3; the rest +1
    assert res.n_pairs.tolist() == [3, 3]
    assert res.statistic.tolist() == pytest.approx([1 / 3, 1.0])
    acc = ag.delta_correlations(X, Z, deltas=[(0, 1.5)], by="human", coefficient="pairwise-accuracy", n_resamples=0)
    assert acc.statistic.tolist() == pytest.approx([2 / 3])
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(10, 30)) + np.arange(10)[:, None] * 0.3
    X = Z + rng.normal(size=(10, 30))
    res = ag.delta_correlations(X, Z, deltas=[(0, 0.5), (0.5, np.inf)], n_resamples=300, rng=5)
    again = ag.delta_correlations(X, Z, deltas=[(0, 0.5), (0.5, np.inf)], n_resamples=300, rng=5)
    assert np.array_equal(res.confidence_interval.low, again.confidence_interval.low)
    assert (res.confidence_interval.low <= res.confidence_interval.high).all()
    assert res.n_pairs.sum() == 45
    frame = res.to_frame()
    assert list(frame.columns)[:4] == ["low", "high", "n_pairs", "statistic"]


def test_delta_correlations_bad_input():
    X = np.ones((4, 3))
    with pytest.raises(ValueError, match="deltas"):
        ag.delta_correlations(X, X, deltas=[(1, 0)])
    with pytest.raises(ValueError, match="by must be"):
        ag.delta_correlations(X, X, by="rouge")
    with pytest.raises(ValueError, match="coefficient"):
        ag.delta_correlations(X, X, coefficient="pearson")


# ---------------------------------------------------------------------------------------------- multiplicity


def test_fdr_matches_scipy_and_keeps_nan():
    p = np.array([[np.nan, 0.01, 0.2], [0.03, np.nan, 0.04], [0.5, 0.001, np.nan]])
    valid = ~np.isnan(p)
    for method in ("bh", "by"):
        out = mu.fdr(p, method=method)
        assert np.isnan(out[~valid]).all()
        assert out[valid] == pytest.approx(stats.false_discovery_control(p[valid], method=method))
    for correction in ("fdr_bh", "fdr_by"):
        assert mu.adjust(p, correction=correction)[valid] == pytest.approx(
            stats.false_discovery_control(p[valid], method=correction[4:]))
    # BH by hand for [0.01, 0.04, 0.03]: sorted 0.01, 0.03, 0.04 -> 0.03, 0.045 -> min with later 0.04, 0.04
    assert mu.adjust([0.01, 0.04, 0.03], correction="fdr_bh") == pytest.approx([0.03, 0.04, 0.04])
    with pytest.raises(ValueError, match="correction"):
        mu.adjust([0.1], correction="fdr")


def test_significance_clusters_follow_assign_ranks():
    from types import SimpleNamespace

    # sorted statistics a > b > c > d; b and c are not beaten by a; d is beaten by b (p = 0.01):
    # a 1, b 1, c 1, d 2. Then e beaten by nothing in d's cluster -> 2.
    K = 5
    p = np.full((K, K), 0.5)
    np.fill_diagonal(p, np.nan)
    p[1, 3] = 0.01
    t = SimpleNamespace(names=("a", "b", "c", "d", "e"), correlations=np.array([.9, .8, .7, .6, .5]), pvalues=p)
    assert mu.significance_clusters(t, alpha=0.05).ranks.tolist() == [1, 1, 1, 2, 2]
    # the boundary is p <= alpha (mt-metrics-eval)
    p[1, 3] = 0.05
    assert mu.significance_clusters(t, alpha=0.05).ranks.tolist() == [1, 1, 1, 2, 2]
    p[1, 3] = 0.0501
    assert mu.significance_clusters(t, alpha=0.05).ranks.tolist() == [1, 1, 1, 1, 1]
    # order by statistic, not by position
    t2 = SimpleNamespace(names=("d", "a"), correlations=np.array([0.1, 0.9]),
                         pvalues=np.array([[np.nan, 0.9], [0.01, np.nan]]))
    res = mu.significance_clusters(t2, alpha=0.05)
    assert res.names == ("a", "d") and res.ranks.tolist() == [1, 2]


def test_partial_conjunction_hand_checked():
    p = [0.01, 0.02, 0.30]
    bon = mu.partial_conjunction_test(p, u=2, method="bonferroni")
    assert bon.pvalues.tolist() == pytest.approx([0.03, 0.04, 0.30]) and bon.n_replicated == 2
    fis = mu.partial_conjunction_test(p, u=2, method="fisher")
    # u = 2: Fisher of (0.02, 0.30): -2 (ln .02 + ln .3) = 10.232 on 4 df
    assert fis.pvalues[1] == pytest.approx(stats.chi2.sf(-2 * (np.log(0.02) + np.log(0.3)), 4))
    assert fis.pvalues[2] == pytest.approx(0.30)
    # monotone: a smaller u never needs stronger evidence
    assert (np.diff(mu.partial_conjunction_test([0.2, 0.001, 0.001], u=1, method="fisher").pvalues) >= 0).all()
    with pytest.raises(ValueError, match="u must"):
        mu.partial_conjunction_test(p, u=4)


def test_partial_conjunction_calibration():
    # Under H0^{u/n} with u-1 real effects (p ~ 0) and n-u+1 null uniform p-values, the rejection rate is <= alpha
    rng = np.random.default_rng(11)
    n, u, reps = 3, 2, 4000
    rej = {"bonferroni": 0, "fisher": 0}
    for _ in range(reps):
        p = np.r_[np.full(u - 1, 1e-6), rng.uniform(size=n - u + 1)]
        for method in rej:
            rej[method] += mu.partial_conjunction_test(p, u=u, method=method).pvalue <= 0.05
    for method, count in rej.items():
        assert stats.binomtest(count, reps, 0.05, alternative="greater").pvalue > 0.001, (method, count)


def test_delta_percentile_buckets_include_every_pair_tied_with_the_threshold():
    # system means 1, 0, 2, ..., 7: seven pairs are 1 apart; snapped means (0.9999999999999999, 1.9999999999999998,
    # ...) differ in their last bits, so unsnapped differences split the tie and the first bucket held 3 pairs
    from metaeval.stats.agreement import delta_correlations

    Z = np.repeat(np.arange(8.0)[:, None], 3, axis=1)
    X = Z.copy()
    X[[0, 1]] = X[[1, 0]]
    res = delta_correlations(X, Z, n_resamples=0)
    assert res.n_pairs[0] == 7 and res.statistic[0] == pytest.approx(5 / 7)
