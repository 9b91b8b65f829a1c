"""Issue 27's hooks in the engine: per-system level, kendall-c / pairwise-accuracy / callable coefficients in
correlate, CIs and tests; bootstrap_ci(paired_inputs=False, unjudged=..., method="BCa"); pairwise_tests(correction=);
permutation_test(early_stopping=). Golden values: tests/fixtures/agreement/ (see its README)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import metaeval
from metaeval import deutsch
from metaeval.stats.multiplicity import adjust
from metaeval.stats.significance import EarlyStopping

FIX = Path(__file__).parent / "fixtures" / "agreement"
GOLDEN = json.loads((FIX / "mtme_golden.json").read_text())


@pytest.fixture(scope="module")
def fabbri():
    ds = metaeval.datasets.load("fabbri2020")
    return ds, ds.matrix("qa-eval.f1"), ds.matrix("rouge-2.f1"), ds.matrix("expert.relevance")


@pytest.mark.parametrize("name", list(GOLDEN["datasets"]))
def test_correlate_levels_and_coefficients_against_mt_metrics_eval(name):
    d = GOLDEN["datasets"][name]
    ds = metaeval.datasets.load(name)
    Z = ds.matrix(d["human"])
    for metric, ref in d["metrics"].items():
        X = ds.matrix(metric)
        for level in ("system", "summary", "per-system", "global"):
            for coef, key in (("kendall", "kendall_b"), ("kendall-c", "kendall_c")):
                assert metaeval.correlate(X, Z, level=level, coefficient=coef) == pytest.approx(
                    ref[f"{key}_{level}"], abs=1e-12), (metric, level, coef)
            if level != "global":
                assert metaeval.correlate(X, Z, level=level, coefficient="pairwise-accuracy") == pytest.approx(
                    ref[f"pairwise_accuracy_{level}"], abs=1e-12)


def test_callable_coefficient_is_applied_per_group(fabbri):
    _, X, _, Z = fabbri
    tau_b = lambda x, z: stats.kendalltau(x, z).statistic  # noqa: E731
    for level in ("system", "summary", "per-system", "global"):
        assert metaeval.correlate(X, Z, level=level, coefficient=tau_b) == pytest.approx(
            metaeval.correlate(X, Z, level=level, coefficient="kendall"), abs=1e-12)
    # the slow path of the resampling engine: the same draws, the same values
    small_X, small_Z = X[:8, :20], Z[:8, :20]
    ours = metaeval.bootstrap_ci(small_X, small_Z, coefficient=tau_b, n_resamples=60, rng=3)
    builtin = metaeval.bootstrap_ci(small_X, small_Z, coefficient="kendall", n_resamples=60, rng=3)
    np.testing.assert_allclose(ours.bootstrap_distribution, builtin.bootstrap_distribution, atol=1e-12)
    with pytest.raises(ValueError, match="coefficient"):
        metaeval.correlate(X, Z, coefficient="kendall-b")


def test_new_coefficients_bit_identical_for_any_batch(fabbri):
    _, X, Y, Z = fabbri
    for level, coef in (("system", "pairwise-accuracy"), ("summary", "kendall-c"), ("per-system", "pearson"),
                        ("per-system", "pairwise-accuracy")):
        a = metaeval.bootstrap_ci(X, Z, level=level, coefficient=coef, n_resamples=50, rng=1)
        b = metaeval.bootstrap_ci(X, Z, level=level, coefficient=coef, n_resamples=50, rng=1, batch=7)
        assert np.array_equal(a.bootstrap_distribution, b.bootstrap_distribution)
        p = metaeval.permutation_test(X, Y, Z, level=level, coefficient=coef, n_resamples=40, rng=2)
        q = metaeval.permutation_test(X, Y, Z, level=level, coefficient=coef, n_resamples=40, rng=2, batch=3)
        assert p.pvalue == q.pvalue and np.array_equal(p.null_distribution, q.null_distribution)


def test_fisher_and_williams_refuse_coefficients_without_formulas(fabbri):
    _, X, Y, Z = fabbri
    with pytest.raises(ValueError, match="coefficient"):
        metaeval.fisher_ci(X, Z, coefficient="pairwise-accuracy")
    with pytest.raises(ValueError, match="coefficient"):
        metaeval.williams_test(X, Y, Z, coefficient="kendall-c")


def test_per_system_level_by_hand(fabbri):
    _, X, _, Z = fabbri
    rows = [stats.pearsonr(X[i], Z[i]).statistic for i in range(X.shape[0])]
    assert metaeval.correlate(X, Z, level="per-system") == pytest.approx(np.mean(rows), abs=1e-12)
    assert metaeval.correlate(X, Z, level="per-system", coefficient="kendall-c") == pytest.approx(
        np.mean([stats.kendalltau(X[i], Z[i], variant="c").statistic for i in range(X.shape[0])]), abs=1e-12)


# ------------------------------------------------------------------------------------- unpaired inputs, BCa


def test_unpaired_bootstrap_against_nlpstats(fabbri):
    _, X, _, Z = fabbri
    golden = json.loads((FIX / "nlpstats_golden_unpaired.json").read_text())
    for case in golden["cases"]:
        res = metaeval.bootstrap_ci(X[:, :50], Z[:, :50], coefficient=case["coefficient"], paired_inputs=False,
                                    unjudged=X[:, 50:], n_resamples=case["n_resamples"], rng=case["seed"])
        assert res.bootstrap_distribution.size == case["n_samples"]
        # Kendall: nlpstats ranks unsnapped means, so two systems whose resampled human means are equal in exact
        # arithmetic (thirds) can be ordered by rounding there; metaeval ties them (README "Ties in Kendall").
        tol = 1e-3 if case["coefficient"] == "kendall" else 1e-12
        assert res.confidence_interval.low == pytest.approx(case["low"], abs=tol)
        assert res.confidence_interval.high == pytest.approx(case["high"], abs=tol)
    assert res.statistic == pytest.approx(stats.spearmanr(X.mean(1), Z[:, :50].mean(1)).statistic, abs=1e-12)


def test_unpaired_bootstrap_rules(fabbri):
    _, X, _, Z = fabbri
    a = metaeval.bootstrap_ci(X, Z, paired_inputs=False, n_resamples=40, rng=0)
    b = metaeval.bootstrap_ci(X, Z, paired_inputs=False, n_resamples=40, rng=0, batch=6)
    assert np.array_equal(a.bootstrap_distribution, b.bootstrap_distribution)
    # independent draws: wider than (or as wide as) nothing in common with the paired interval's draws
    paired = metaeval.bootstrap_ci(X, Z, n_resamples=40, rng=0)
    assert not np.array_equal(a.bootstrap_distribution, paired.bootstrap_distribution)
    with pytest.raises(ValueError, match="paired_inputs=False"):
        metaeval.bootstrap_ci(X, Z, unjudged=X)
    with pytest.raises(ValueError, match="system"):
        metaeval.bootstrap_ci(X, Z, level="summary", paired_inputs=False)
    with pytest.raises(ValueError, match="unjudged"):
        metaeval.bootstrap_ci(X, Z, paired_inputs=False, unjudged=X[:5])


@pytest.mark.parametrize("resample", ["systems", "inputs"])
def test_bca_against_scipy(fabbri, resample):
    _, X, _, Z = fabbri
    ours = metaeval.bootstrap_ci(X, Z, level="system", coefficient="pearson", resample=resample, method="BCa",
                                 n_resamples=999, rng=7)

    if resample == "systems":
        def statistic(i):
            return stats.pearsonr(X[i].mean(1), Z[i].mean(1)).statistic
        n = X.shape[0]
    else:
        def statistic(j):
            return stats.pearsonr(X[:, j].mean(1), Z[:, j].mean(1)).statistic
        n = X.shape[1]
    ref = stats.bootstrap((np.arange(n),), statistic, vectorized=False, n_resamples=999, method="BCa",
                          rng=np.random.default_rng(7))
    assert ours.confidence_interval.low == pytest.approx(ref.confidence_interval.low, abs=1e-9)
    assert ours.confidence_interval.high == pytest.approx(ref.confidence_interval.high, abs=1e-9)
    with pytest.raises(ValueError, match="BCa"):
        metaeval.bootstrap_ci(X, Z, resample="both", method="BCa")


# ------------------------------------------------------------------------------------- corrections, early stop


def test_pairwise_tests_correction(fabbri):
    ds, X, Y, Z = fabbri
    mats = {"qa": X, "r2": Y, "bs": ds.matrix("bertscore.recall")}
    raw = metaeval.pairwise_tests(mats, Z, n_resamples=200, rng=0)
    for correction in ("bonferroni", "holm", "fdr_bh", "fdr_by"):
        adj = metaeval.pairwise_tests(mats, Z, n_resamples=200, rng=0, correction=correction)
        np.testing.assert_array_equal(adj.pvalues, adjust(raw.pvalues, correction=correction))
        np.testing.assert_array_equal(adj.correlations, raw.correlations)
    with pytest.raises(ValueError, match="correction"):
        metaeval.pairwise_tests(mats, Z, n_resamples=10, correction="BH")


def test_early_stopping_decisions_equal_full_test_on_figure5_pairs():
    """Deutsch et al. 2021's Figure 5: Perm-Both (Pearson, system and summary level) for every ordered pair of
    the paper's metrics on SummEval. With early stopping every decision at alpha equals the full test's."""
    ds = metaeval.datasets.load("fabbri2020")
    names = list(deutsch.paper_metrics(ds.score_names, recall_oriented=False).values())
    Z = ds.matrix(ds.default_human)
    stop = EarlyStopping(alpha=0.05, block=100)
    saved = total = 0
    for level in ("system", "summary"):
        for a in names:
            for b in names:
                if a == b:
                    continue
                full = metaeval.permutation_test(ds.matrix(a), ds.matrix(b), Z, level=level, n_resamples=999, rng=5)
                fast = metaeval.permutation_test(ds.matrix(a), ds.matrix(b), Z, level=level, n_resamples=999, rng=5,
                                                 early_stopping=stop)
                assert (full.pvalue <= 0.05) == (fast.pvalue <= 0.05), (level, a, b, full.pvalue, fast.pvalue)
                assert fast.n_resamples_used <= 999
                # the permutations it did are the full test's first ones
                np.testing.assert_array_equal(fast.null_distribution, full.null_distribution[: fast.null_distribution.size])
                saved += 999 - fast.n_resamples_used
                total += 999
    assert saved > total / 4  # most pairs are far from the boundary: the point of stopping early


def test_early_stopping_type_one_error_calibration():
    """Under H0 (X and Y exchangeable) the curtailed test rejects at most alpha, within the Monte-Carlo interval,
    and makes the full test's decision in every trial."""
    rng = np.random.default_rng(2027)
    trials, rejections, agree = 300, 0, 0
    for _ in range(trials):
        Z = rng.normal(size=(8, 12))
        X, Y = Z + rng.normal(size=(2, 8, 12)) * 1.5
        seed = int(rng.integers(2**32))
        fast = metaeval.permutation_test(X, Y, Z, n_resamples=199, rng=seed,
                                         early_stopping=EarlyStopping(alpha=0.05, block=20))
        full = metaeval.permutation_test(X, Y, Z, n_resamples=199, rng=seed)
        rejections += fast.pvalue <= 0.05
        agree += (fast.pvalue <= 0.05) == (full.pvalue <= 0.05)
    assert agree == trials
    # one-sided binomial test of "rejection rate > alpha"
    assert stats.binomtest(int(rejections), trials, 0.05, alternative="greater").pvalue > 0.01


def test_early_stopping_bound_and_bad_input():
    stop = EarlyStopping(alpha=0.05, block=10)
    # P = 99: reject needs c_P + 1 <= 5. After 90 permutations with 0 extreme, at most 9 more: (0 + 9 + 1) / 100
    # = 0.10 > 0.05, undecided; after 96 with 0: (0 + 3 + 1) / 100 = 0.04: must reject.
    assert not stop.decided(0, 90, 0, 99) and stop.decided(0, 96, 0, 99)
    # 5 extreme already: (5 + 1) / 100 > 0.05: cannot reject
    assert stop.decided(5, 10, 0, 99)
    with pytest.raises(ValueError, match="alpha"):
        EarlyStopping(alpha=1.5)
    X = np.random.default_rng(0).normal(size=(5, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="early_stopping"):
            metaeval.permutation_test(X, X + 1, X, n_resamples=10, early_stopping="yes")
