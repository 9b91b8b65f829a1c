"""Notebook 20 with few trials (issue 23, item 2): coverage compared with exact tests, and "degenerate" a
property of a method (over-coverage shown by a test), not of a sample in which every trial covered."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from scipy import stats

import metaeval
from metaeval.studies import deutsch


def _covered(coverage, trials):
    return int(round(coverage * trials))


def test_thirty_of_thirty_is_consistent_with_the_papers_098():
    # the case: 30 of 30 against the paper's .98 has probability 0.98^30 = 0.55; the floored z-test said
    # z = +4.2. Exact tests: neither the binomial test nor Fisher's exact test sees a difference.
    t = pd.DataFrame({"level": ["system"], "method": ["boot-both"], "coverage": [1.0], "trials": [30]})
    out = deutsch.compare_coverage(t, deutsch.PAPER_TABLE1_FABBRI)
    assert stats.binomtest(30, 30, 0.98).pvalue > 0.05
    assert out["pvalue"].iloc[0] == pytest.approx(1.0)
    assert "z" not in out.columns


def _trials_table(covered: dict[str, int], n: int) -> pd.DataFrame:
    """n trials per method at the system level, the first ``covered[method]`` containing the target 0.45."""
    rows = []
    for method, k in covered.items():
        rows += [(t, "system", method, *((0.3, 0.8) if t < k else (0.0, 0.4)), 0.45) for t in range(n)]
    trials = pd.DataFrame(rows, columns=["trial", "level", "method", "low", "high", "target"])
    trials["contains"] = (trials["low"] <= trials["target"]) & (trials["target"] <= trials["high"])
    trials["too_high"] = trials["low"] > trials["target"]
    trials["too_low"] = trials["high"] < trials["target"]
    return trials


def test_degenerate_is_over_coverage_shown_by_a_test_not_a_full_sample():
    small = deutsch.coverage_table(_trials_table({"fisher": 30, "boot-both": 28}, 30)).set_index("method")
    assert not small.loc["fisher", "degenerate"]  # 30 of 30: p = 0.95^30 = 0.21, no evidence of over-coverage
    assert small.loc["fisher", "over_pvalue"] == pytest.approx(0.95**30)
    large = deutsch.coverage_table(_trials_table({"fisher": 1000, "boot-both": 940}, 1000)).set_index("method")
    assert large.loc["fisher", "degenerate"] and large.loc["boot-both", "best"]
    # over-coverage below 1.0 is not degenerate (the paper's system-level Boot-Both, 0.98 of 1000, is its answer)
    paper = deutsch.coverage_table(_trials_table({"fisher": 870, "boot-both": 980, "boot-inputs": 700}, 1000))
    paper = paper.set_index("method")
    assert paper.loc["boot-both", "over_pvalue"] < 0.05 and not paper.loc["boot-both", "degenerate"]
    assert paper["best"].to_dict() == {"fisher": False, "boot-both": True, "boot-inputs": False}
    # Clopper-Pearson interval of the coverage
    ci = stats.binomtest(28, 30).proportion_ci(method="exact")
    assert (small.loc["boot-both", "ci_low"], small.loc["boot-both", "ci_high"]) == pytest.approx((ci.low, ci.high))


@pytest.fixture(scope="module")
def summeval_thirty():
    ds = metaeval.datasets.load("summeval")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", metaeval.DegenerateResultWarning)
        trials = deutsch.ci_coverage_simulation(ds.matrix("qa-eval.f1"), ds.matrix(ds.default_human), n_trials=30,
                                                n_resamples=100, rng=0)
    table = deutsch.coverage_table(trials)
    return deutsch.compare_coverage(table, deutsch.PAPER_TABLE1["summeval"])


def test_study_at_thirty_trials_reports_no_difference_the_exact_test_does_not_see(summeval_thirty):
    table = summeval_thirty
    for row in table.itertuples():
        k = _covered(row.coverage, row.trials)
        exact = stats.binomtest(k, int(row.trials), row.paper).pvalue
        if exact >= 0.05:
            assert row.pvalue >= 0.05, row
        if k == row.trials:
            assert not row.degenerate, row  # a full sample of 30 is not a degenerate method


def test_notebook_20_at_thirty_trials_reads_the_numbers_correctly(tmp_path):
    from metaeval.notebooks import run_notebook

    result = run_notebook("20", {"n_trials": 30, "n_resamples": 100, "seed": 0, "output_dir": str(tmp_path / "o")})
    out = result.output_dir
    text = (out / "table1_conclusions.md").read_text()
    table = pd.read_csv(out / "table1_ci_coverage.csv")
    significant = 0
    for row in table.itertuples():
        k = _covered(row.coverage, row.trials)
        significant += stats.binomtest(k, int(row.trials), row.paper).pvalue < 0.05 / len(table)
    if significant == 0:
        assert "no cell differs significantly from the paper's" in text
    assert "standard errors" not in text and "z = " not in text
    for row in table[table["coverage"] >= 1.0].itertuples():
        assert f"{deutsch.METHOD_NAMES[row.method]} covers all {int(row.trials)} trials; with this few trials that is " \
               "consistent with the nominal 95%" in text
        assert "hence not the answer" not in text
