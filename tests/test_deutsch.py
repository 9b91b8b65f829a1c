"""Deutsch et al. (2021) analyses: split logic, the R_k sampler, and the CI simulation against the fixture."""

import numpy as np
import pytest

from conftest import load_json
from metaeval import deutsch

SIM = load_json("stats", "ci_simulation_fabbri.json")
METHOD = {"fisher": "fisher", "boot-systems": "bootstrap-system", "boot-inputs": "bootstrap-input",
          "boot-both": "bootstrap-both"}


def test_split_halves_disjoint_cover_and_seeded():
    rng = np.random.default_rng(5)
    a, b, c, d = deutsch.split_halves(16, 100, rng)
    assert len(a) == len(b) == 8 and len(c) == len(d) == 50
    assert set(a).isdisjoint(b) and set(a) | set(b) == set(range(16))
    assert set(c).isdisjoint(d) and set(c) | set(d) == set(range(100))
    again = deutsch.split_halves(16, 100, np.random.default_rng(5))
    assert all(np.array_equal(x, y) for x, y in zip((a, b, c, d), again))
    a, b, _, _ = deutsch.split_halves(5, 4, rng)
    assert (len(a), len(b)) == (2, 3)
    with pytest.raises(ValueError, match="at least 2"):
        deutsch.split_halves(1, 10, rng)


def test_rk_sampler_exact_counts_and_seeding():
    # summary: 10 distinct tokens, 4 of them in the reference
    summary = "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9"
    sampler = deutsch.RougeOneSubsampler([summary], ["w0 w1 w2 w3 zz"], stem=False, stat="P")
    full = sampler.full()
    assert full[0] == pytest.approx(4 / 10)
    ks = [0.05, 0.25, 0.5, 1.0]
    out = sampler.sample(ks, 3)
    assert out.shape == (4, 1)
    # int(len * k) tokens: 0, 2, 5, 10 -> precision is hits / that count (0 tokens -> 0)
    assert out[0, 0] == 0.0
    for q, k in enumerate(ks[1:], 1):
        n = int(10 * k)
        assert out[q, 0] * n == pytest.approx(round(out[q, 0] * n))  # a whole number of hits
    np.testing.assert_array_equal(out, sampler.sample(ks, 3))
    draws = np.array([sampler.sample([0.5], s)[0, 0] for s in range(400)])
    # hypergeometric: 5 of 10 tokens with 4 hits among them -> mean precision 0.4
    assert draws.mean() == pytest.approx(0.4, abs=0.02)
    assert len(set(draws)) > 2


def test_rk_recall_clips_by_reference_counts():
    sampler = deutsch.RougeOneSubsampler(["a1 a1 a1 b2"], ["a1 b2"], stem=False, stat="R")
    assert sampler.full()[0] == 1.0  # a1 counted once (clipped), b2 once: 2 of 2 reference tokens


def test_ci_simulation_matches_reference_implementation(fabbri):
    """Table 1 (QAEval-F1, Pearson, 1000 trials) within 3 binomial SE of the authors' code's values."""
    X, Z = fabbri.matrix("qa-eval.f1"), fabbri.matrix("expert.relevance")
    trials = deutsch.ci_coverage_simulation(X, Z, n_trials=1000, n_resamples=1000, rng=2021)
    table = deutsch.coverage_table(trials).set_index(["level", "method"])
    for level in ("system", "summary"):
        for method, key in METHOD.items():
            ref = SIM["results"][level][key]["contains"]
            ours = table.loc[(level, method), "coverage"]
            se = np.sqrt(max(ref * (1 - ref), 1e-4) / 1000 + max(ours * (1 - ours), 1e-4) / 1000)
            assert abs(ours - ref) <= 3 * se, (level, method, ours, ref)
    assert table.loc[("system", "boot-both"), "best"] and table.loc[("summary", "boot-both"), "best"]


def test_corrections_and_normality(fabbri):
    p = np.array([[np.nan, 0.01, 0.04], [0.2, np.nan, 0.02], [0.001, 0.5, np.nan]])
    np.testing.assert_array_equal(deutsch.corrected(p, by="row"),
                                  [[False, True, False], [False, False, True], [True, False, False]])
    np.testing.assert_array_equal(deutsch.corrected(p, by="all"),
                                  [[False, False, False], [False, False, False], [True, False, False]])
    table = deutsch.normality({"relevance": fabbri.matrix("expert.relevance")})
    assert 0 <= table.loc[0, "summary_percent_rejected"] <= 100
    assert table.loc[0, "inputs_tested"] <= 100
