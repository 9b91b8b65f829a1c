"""The batched power simulation (shared draws, all k at once) against the one-test-at-a-time path.

Both paths draw R_k from the same child generator, so each trial compares the same matrices; only the
resampling draws differ (Williams draws nothing and must agree exactly). Per trial, two p-values of the
same test from independent draws of B resamples differ by Monte-Carlo noise with sd sqrt(2 p (1 - p) / B);
over many trials the rejection rates must agree within their binomial error.
"""

import numpy as np
import pytest

import metaeval
from metaeval import deutsch
from metaeval.stats import shared_draws


@pytest.fixture(scope="module")
def setting():
    ds = metaeval.datasets.load("summeval")
    Z = ds.matrix("expert.relevance")
    refs = [r[0] for r in ds.texts["references"]]
    sampler = deutsch.RougeOneSubsampler(ds.texts["summary"].tolist(), refs, stem=True, stop=False, stat="F")
    return sampler.full(), sampler, Z


def _both(setting, **kw):
    full, sampler, Z = setting
    new = deutsch.power_simulation(full, sampler, Z, **kw)
    old = deutsch.power_simulation(full, sampler, Z, batched=False, **kw)
    return new.merge(old, on=["trial", "k", "level", "test"], suffixes=("_new", "_old"))


def test_batched_pvalues_agree_per_trial(setting):
    B = 400
    both = _both(setting, ks=(0.1, 0.5, 1.0), n_trials=4, n_resamples=B, rng=11)
    assert len(both) == 4 * 3 * 2 * 3
    will = both[both["test"] == "williams"]
    np.testing.assert_allclose(will["pvalue_new"], will["pvalue_old"], rtol=1e-12, atol=0, equal_nan=True)
    res = both[both["test"] != "williams"]
    p = res["pvalue_old"].to_numpy()
    # independent draws of the same resampling test: |p_new - p_old| within 5 sd of their difference
    bound = 5 * np.sqrt(2 * p * (1 - p) / B) + 3 / B
    diff = np.abs(res["pvalue_new"].to_numpy() - p)
    assert (diff <= bound).all(), res[diff > bound]
    # k = 1 (R_k = ROUGE-1): every resampled difference is 0, so both paths give p = 1 for these tests
    at1 = res[res["k"] == 1.0]
    assert (at1["pvalue_new"] == 1.0).all() and (at1["pvalue_old"] == 1.0).all()


def test_batched_does_not_depend_on_chunks(setting, monkeypatch):
    full, sampler, Z = setting
    kw = dict(ks=(0.2, 0.6), n_trials=2, n_resamples=150, rng=3)
    ref = deutsch.power_simulation(full, sampler, Z, **kw)
    original = shared_draws.SharedDrawTests.__init__

    def small_chunks(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.chunk = 37

    monkeypatch.setattr(shared_draws.SharedDrawTests, "__init__", small_chunks)
    chunked = deutsch.power_simulation(full, sampler, Z, **kw)
    np.testing.assert_allclose(chunked["pvalue"], ref["pvalue"], rtol=0, atol=1e-12, equal_nan=True)


@pytest.mark.slow
def test_batched_rejection_table_agrees_with_single_tests(setting):
    """The rejection table of 150 trials at the paper's settings (all k, 1000 resamples) from both paths:
    each rate within 4 standard errors of the difference of two independent binomial proportions (the
    trials share R_k, so this is conservative)."""
    both = _both(setting, n_trials=150, n_resamples=1000, rng=2021)
    table = both.groupby(["level", "test", "k"])[["reject_new", "reject_old"]].mean()
    n = both.groupby(["level", "test", "k"]).size()
    pooled = (table["reject_new"] + table["reject_old"]) / 2
    se = np.sqrt(2 * pooled * (1 - pooled) / n)
    gap = (table["reject_new"] - table["reject_old"]).abs()
    assert (gap <= 4 * se + 1 / n).all(), table[gap > 4 * se + 1 / n]


def test_bootstrap_summary_sums_against_direct_correlations():
    """The batched Boot-Both summary level (draw counts x stacked values, then r per input from the sums)
    against r computed on each resample's drawn values: catches a wrong block of the stacked sums (X_j^2
    taken for X_j Z, Z's sums for X's), lost multiplicities of drawn systems or inputs, and a constant
    column (one drawn system, or equal values) that is not skipped."""
    from metaeval.stats.correlation import batch_corr, mean_of_defined
    from metaeval.stats.resampling import draw_indices

    rng = np.random.default_rng(5)
    N, M, B = 6, 9, 40
    X = rng.normal(size=(N, M))
    Ys = rng.normal(size=(3, N, M))
    Ys[1, :, 2] = 0.5  # a constant column of one matrix
    X[:, 4] = np.round(X[:, 4])  # ties: constancy depends on which systems were drawn
    Z = rng.normal(size=(N, M)) + X
    rows, cols = draw_indices(N, M, B, "both", rng)
    rows[0] = 3  # a resample that drew a single system: nothing is defined
    trial = shared_draws.SharedDrawTests(X, Z, levels=("summary",), n_resamples=B)
    raw = np.concatenate([X[None], Ys])
    expected = np.empty((4, B))
    for j in range(4):
        for b in range(B):
            per_input = np.array([batch_corr(raw[j, rows[b], m], Z[rows[b], m], "pearson") for m in range(M)])
            expected[j, b] = mean_of_defined(per_input[cols[b]]) if np.isfinite(per_input[cols[b]]).any() else np.nan
    seen = []
    original = shared_draws.bootstrap_pvalue

    def keep(valid, obs, alternative):
        seen.append(valid)
        return original(valid, obs, alternative)

    from metaeval._warnings import DegenerateResultWarning

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(shared_draws, "bootstrap_pvalue", keep)
        with pytest.warns(DegenerateResultWarning, match="1 of 40 resamples"):
            trial._bootstrap(Ys, rows, cols)
    assert np.isnan(expected[:, 0]).all()
    deltas = expected[0] - expected[1:]
    assert len(seen) == 3
    for q in range(3):
        np.testing.assert_allclose(seen[q], deltas[q][~np.isnan(deltas[q])], rtol=0, atol=1e-12)


def test_a_constant_r_k_gives_nan_pvalues_with_a_warning_not_a_crash():
    """Short summaries keep no token at k = 5% (int(15 * 0.05) = 0): R_k is all zeros. The permutation test
    used to stop the whole simulation ("cannot standardize a constant matrix")."""
    from metaeval._warnings import DegenerateResultWarning

    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(list("abcdefghij"), 15)) for _ in range(5 * 8)]
    refs = [" ".join(rng.choice(list("abcdefghij"), 20)) for _ in range(5 * 8)]
    sampler = deutsch.RougeOneSubsampler(texts, refs)
    Z = rng.normal(size=(5, 8)) + sampler.full().reshape(5, 8)
    with pytest.warns(DegenerateResultWarning, match="R_k is constant in 1 of 3 values of k"):
        trials = deutsch.power_simulation(sampler.full(), sampler, Z, ks=(0.05, 0.5, 1.0), n_trials=2,
                                          n_resamples=50, rng=1)
    at5 = trials[(trials["k"] == 0.05) & (trials["test"] != "williams")]
    assert at5["pvalue"].isna().all() and not at5["reject"].any()
    assert trials[(trials["k"] == 0.5) & (trials["test"] != "williams")]["pvalue"].notna().all()


@pytest.mark.parametrize("option, value, message", [
    ("n_resamples", 0, "n_resamples must be a positive integer"),
    ("n_resamples", 99.5, "n_resamples must be a positive integer"),
    ("alpha", 1.5, "alpha must be in"),
    ("alpha", True, "alpha must be in"),
    ("n_trials", -1, "n_trials must be a positive integer"),
    ("ks", (0.0, 0.5), "ks must be a non-empty list"),
    ("ks", (), "ks must be a non-empty list"),
    ("tests", ("perm-sideways",), "test must be one of"),
    ("tests", "perm-both", "tests must be a non-empty list"),
    ("levels", ("corpus",), "level must be one of"),
    ("coefficient", "kendall-c", "coefficient must be one of"),  # with Williams, which needs Fisher constants
    ("coefficient", "kendal", "coefficient must be one of"),
])
def test_options_are_validated_once_before_any_trial(option, value, message):
    # issue 37: n_resamples and alpha reached the kernels unchecked; each bad option is now named, by the
    # validators the single tests and the planner use, before a single R_k is drawn
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(list("abcdefghij"), 15)) for _ in range(4 * 6)]
    sampler = deutsch.RougeOneSubsampler(texts, texts[::-1])
    Z = rng.normal(size=(4, 6))
    base = {"ks": (0.5, 1.0), "n_trials": 1, "n_resamples": 20, "rng": 1}
    if option == "coefficient" and value == "kendall-c":
        base["tests"] = ("perm-both", "williams")
    with pytest.raises(ValueError, match=message):
        deutsch.power_simulation(sampler.full(), sampler, Z, **{**base, option: value})
    # the same call without the bad option runs: 2 values of k x 2 levels x the tests
    trials = deutsch.power_simulation(sampler.full(), sampler, Z, **base)
    assert len(trials) == 2 * 2 * len(base.get("tests", ("boot-both", "perm-both", "williams")))
