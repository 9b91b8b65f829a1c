"""Deutsch et al. (2021) analyses: split logic, the R_k sampler, and the CI simulation against the fixture."""

import numpy as np
import pandas as pd
import pytest

import metaeval

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


def test_rk_subsets_stay_within_their_summary():
    """Catches a random order that mixes the tokens of different summaries (one sort over all of them)."""
    sampler = deutsch.RougeOneSubsampler(["a b c d e f", "u v w x y z"], ["a b c d e f", "a b c"], stem=False,
                                         stat="P")
    for seed in range(20):
        out = sampler.sample([0.5, 1.0], seed)
        # every token of the first summary is in its reference, none of the second's in its own
        np.testing.assert_array_equal(out, [[1.0, 0.0], [1.0, 0.0]])


def test_rk_recall_clips_by_reference_counts():
    sampler = deutsch.RougeOneSubsampler(["a1 a1 a1 b2"], ["a1 b2"], stem=False, stat="R")
    assert sampler.full()[0] == 1.0  # a1 counted once (clipped), b2 once: 2 of 2 reference tokens


def _check_table1(X, Z, reference):
    """Our Table 1 (1000 trials) within 3 binomial SE of ``reference[level][method]`` (1000 trials too)."""
    trials = deutsch.ci_coverage_simulation(X, Z, n_trials=1000, n_resamples=1000, rng=2021)
    table = deutsch.coverage_table(trials).set_index(["level", "method"])
    for level in ("system", "summary"):
        for method in deutsch.CI_METHODS:
            ref = reference[level][method]
            ours = table.loc[(level, method), "coverage"]
            se = np.sqrt(max(ref * (1 - ref), 1e-4) / 1000 + max(ours * (1 - ours), 1e-4) / 1000)
            assert abs(ours - ref) <= 3 * se, (level, method, ours, ref)
    # the paper's bold: Boot-Both at both levels (summary-level Fisher covers 100%, degenerate, not "best")
    assert table.loc[("system", "boot-both"), "best"] and table.loc[("summary", "boot-both"), "best"]
    assert not table.loc[("summary", "fisher"), "best"]


def test_ci_simulation_matches_reference_implementation(fabbri):
    """Table 1, SummEval (QAEval-F1, Pearson, 1000 trials) against the authors' code's values."""
    reference = {level: {m: SIM["results"][level][key]["contains"] for m, key in METHOD.items()}
                 for level in ("system", "summary")}
    _check_table1(fabbri.matrix("qa-eval.f1"), fabbri.matrix("expert.relevance"), reference)


def test_ci_simulation_realsumm_matches_the_paper():
    """Table 1, REALSumm (Bhandari et al.) column: the 8 cells against the paper (.85/.80/.68/.94 system,
    1.00/.72/.62/.88 summary), QAEval-F1 vs LitePyramid recall."""
    ds = metaeval.datasets.load("realsumm")
    assert ds.default_human == "litepyramid.recall"
    _check_table1(ds.matrix("qa-eval.f1"), ds.matrix(ds.default_human), deutsch.PAPER_TABLE1_BHANDARI)


def test_best_mark_excludes_degenerate_full_coverage():
    """Catches: a best rule that picks coverage 1.0 (the issue's summary-level Fisher)."""
    rows = []
    for method, covered in (("fisher", 1000), ("boot-both", 890), ("boot-inputs", 700)):
        rows += [(t, "summary", method, 0.0, 1.0 if t < covered else 0.4, 0.5) for t in range(1000)]
    trials = pd.DataFrame(rows, columns=["trial", "level", "method", "low", "high", "target"])
    trials["contains"] = (trials["low"] <= trials["target"]) & (trials["target"] <= trials["high"])
    trials["too_high"] = trials["low"] > trials["target"]
    trials["too_low"] = trials["high"] < trials["target"]
    table = deutsch.coverage_table(trials).set_index("method")
    # |1.0 - 0.95| = 0.05 < |0.89 - 0.95| = 0.06: only the exclusion of 1.0 makes Boot-Both the answer
    assert table["best"].to_dict() == {"fisher": False, "boot-both": True, "boot-inputs": False}


@pytest.mark.parametrize("name", ["summeval", "realsumm"])
def test_normality_matches_appendix_table2(name):
    """Appendix Table 2, Fabbri and Bhandari columns (recall variants on REALSumm): every percentage exactly,
    every system-level p-value to the paper's 2 decimals."""
    ds = metaeval.datasets.load(name)
    names = deutsch.paper_metrics(ds.score_names, recall_oriented=ds.recall_oriented)
    names["human"] = ds.default_human
    table = deutsch.normality({paper: ds.matrix(score) for paper, score in names.items()}).set_index("score")
    paper = deutsch.PAPER_TABLE2[deutsch.paper_column(name)]
    for row, (percent, pvalue) in paper.items():
        if row not in table.index:
            assert name == "realsumm" and row == "ROUGE-SU4"  # not in the REALSumm files
            continue
        assert table.loc[row, "summary_percent_rejected"] == pytest.approx(percent), row
        assert abs(table.loc[row, "system_pvalue"] - pvalue) <= 0.005 + 1e-9, row


def test_paper_helpers():
    assert deutsch.paper_column("bhandari2020") == "realsumm" and deutsch.paper_column("x") is None
    ds = metaeval.datasets.load("realsumm")
    names = deutsch.paper_metrics(ds.score_names, recall_oriented=ds.recall_oriented)
    assert names["ROUGE-2"] == "rouge-2.recall" and names["BEwTE"] == "BEwTE.recall" and "ROUGE-SU4" not in names
    assert len(names) == 12
    summeval = deutsch.paper_metrics(metaeval.datasets.load("summeval").score_names, recall_oriented=False)
    assert summeval["ROUGE-SU4"] == "rouge-su4.f1" and len(summeval) == 13
    # 1 / (P + 1) against Bonferroni over 15 x 14 ordered pairs: 1000 permutations cannot, 9999 can
    assert deutsch.min_pvalue(1000) == 1 / 1001 > 0.05 / 210 > deutsch.min_pvalue(9999)


def test_corrections_and_normality(fabbri):
    p = np.array([[np.nan, 0.01, 0.04], [0.2, np.nan, 0.02], [0.001, 0.5, np.nan]])
    np.testing.assert_array_equal(deutsch.corrected(p, by="row"),
                                  [[False, True, False], [False, False, True], [True, False, False]])
    np.testing.assert_array_equal(deutsch.corrected(p, by="all"),
                                  [[False, False, False], [False, False, False], [True, False, False]])
    table = deutsch.normality({"relevance": fabbri.matrix("expert.relevance")})
    assert 0 <= table.loc[0, "summary_percent_rejected"] <= 100
    assert table.loc[0, "inputs_tested"] <= 100


def test_coverage_of_undefined_intervals_is_nan_with_a_warning_not_zero():
    """With 6 systems each half has 3: Fisher's interval needs n > 3, so it is NaN in every trial. Counting
    those trials as misses reported a coverage of 0.000, which reads as a real (terrible) result."""
    import warnings

    from metaeval._warnings import DegenerateResultWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 12))
    Z = X + rng.normal(size=(6, 12))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateResultWarning)  # resamples with a constant system dropped
        trials = deutsch.ci_coverage_simulation(X, Z, n_trials=8, n_resamples=40, methods=("fisher", "boot-both"),
                                                rng=1)
    assert not trials.loc[trials["method"] == "fisher", "defined"].any()
    assert trials.loc[trials["method"] == "boot-both", "defined"].all()
    with pytest.warns(DegenerateResultWarning, match="fisher at system level: .* undefined in 8 of 8 trials"):
        table = deutsch.coverage_table(trials).set_index(["level", "method"])
    assert np.isnan(table.loc[("system", "fisher"), "coverage"]) and table.loc[("system", "fisher"), "trials"] == 0
    assert table.loc[("system", "boot-both"), "trials"] == 8 and table.loc[("system", "boot-both"), "undefined"] == 0
    assert not table.loc[(slice(None), "fisher"), "best"].any()
