"""The primer's helpers (metaeval.studies.primer) and its exercises' answers, checked by independent computation."""

import itertools
import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import metaeval
from metaeval.run.notebooks import find_notebook, read_notebook
from metaeval.studies import primer

X, Z = primer.TOY_METRIC, primer.TOY_HUMAN


def _kendall_tau_b_by_counting(x, z):
    """Kendall's tau-b by counting pairs (what the student does on paper)."""
    concordant = discordant = ties_x = ties_z = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dz = np.sign(x[i] - x[j]), np.sign(z[i] - z[j])
        if dx == 0 and dz == 0:
            continue
        if dx == 0:
            ties_x += 1
        elif dz == 0:
            ties_z += 1
        elif dx == dz:
            concordant += 1
        else:
            discordant += 1
    return (concordant - discordant) / math.sqrt((concordant + discordant + ties_x) * (concordant + discordant + ties_z))


def test_levels_by_hand_match_scipy_and_the_library():
    steps = primer.levels_by_hand(X, Z)
    assert steps["system"] == pytest.approx(stats.pearsonr(X.mean(1), Z.mean(1)).statistic, abs=1e-12)
    assert steps["summary"] == pytest.approx(np.mean([stats.pearsonr(X[:, j], Z[:, j]).statistic for j in range(3)]))
    assert steps["global"] == pytest.approx(stats.pearsonr(X.ravel(), Z.ravel()).statistic, abs=1e-12)
    for level in ("system", "summary", "global"):
        assert steps[level] == pytest.approx(metaeval.correlate(X, Z, level=level), abs=1e-12)
    # hand-checked: input 2 is the document the metric orders backwards
    assert steps["per_input"].round(3).tolist() == [0.873, -0.797, 0.949]
    with pytest.raises(ValueError, match="same shape"):
        primer.levels_by_hand(X, Z[:, :2])


def test_exercise_answers():
    answers = primer.exercise_answers()
    taus = [_kendall_tau_b_by_counting(X[:, j], Z[:, j]) for j in range(3)]
    assert answers.toy_kendall_per_input == pytest.approx(taus, abs=1e-12)
    assert answers.toy_summary_kendall == pytest.approx(np.mean(taus), abs=1e-12)
    assert taus[:2] == pytest.approx([2 / 3, -2 / 3])  # 5 of 6 pairs concordant / discordant
    swapped = Z.copy()
    swapped[0, 0], swapped[3, 0] = Z[3, 0], Z[0, 0]
    assert answers.toy_system_after_swap == pytest.approx(np.corrcoef(X.mean(1), swapped.mean(1))[0, 1], abs=1e-12)
    assert answers.toy_summary_after_swap == pytest.approx(
        np.mean([np.corrcoef(X[:, j], swapped[:, j])[0, 1] for j in range(3)]), abs=1e-12)
    assert answers.toy_global_after_swap == pytest.approx(np.corrcoef(X.ravel(), swapped.ravel())[0, 1], abs=1e-12)
    # Fisher with n = 4 systems: z +- 1.96 / sqrt(4 - 3)
    r = np.corrcoef(X.mean(1), Z.mean(1))[0, 1]
    half = stats.norm.ppf(0.975) / math.sqrt(4 - 3)
    assert answers.toy_fisher_interval == pytest.approx((math.tanh(math.atanh(r) - half),
                                                         math.tanh(math.atanh(r) + half)), abs=1e-12)
    assert answers.widest_scheme is None
    frame = pd.DataFrame({"scheme": ["Boot-Systems", "Boot-Inputs", "Boot-Both"], "r": 0.5,
                          "low": [0.2, 0.4, 0.1], "high": [0.8, 0.6, 0.85]})
    assert primer.exercise_answers(frame).widest_scheme == "Boot-Both"


def test_notebook_answers_are_folded_and_one_per_exercise():
    notebook = read_notebook(find_notebook("01"))
    exercises = sum(len(re.findall(r"\*\*Exercise \d\.\*\*", c.source)) for c in notebook.cells
                    if c.cell_type == "markdown")
    answer_cells = [c for c in notebook.cells if "answer" in c.metadata.get("tags", [])]
    printed = sum(len(re.findall(r'print\(f?"Exercise \d', c.source)) for c in answer_cells)
    assert exercises == printed == 6
    assert all("hide-input" in c.metadata["tags"] for c in answer_cells)


def test_resampling_counts_follow_each_scheme():
    counts = primer.resampling_counts(6, 9, rng=0)
    systems, inputs, both = counts["Boot-Systems"], counts["Boot-Inputs"], counts["Boot-Both"]
    assert (systems == systems[:, :1]).all() and (systems[:, 0].sum() == 6)  # whole rows, every input once
    assert (inputs == inputs[:1, :]).all() and (inputs[0].sum() == 9)  # whole columns, every system once
    # a drawn row meets a drawn column: counts are row count x column count (a rank-one table)
    assert both.sum() == 6 * 9 and np.array_equal(both * both.sum(), np.outer(both.sum(1), both.sum(0)))


def test_true_coverage_against_the_known_value():
    trials = primer.true_coverage(10, 20, system_correlation=0.7, summary_correlation=0.4, n_trials=60,
                                  n_resamples=100, levels=("system",), rng=0)
    summary = primer.coverage_summary(trials).set_index("method")
    assert set(summary.index) == set(primer.METHODS) and (summary.trials == 60).all()
    # the truth of a system-level study is the correlation of system means over its 20 inputs
    assert trials.truth.unique() == pytest.approx([(0.7 + (0.4 * 2 - 0.7) / 20) / (1 + 1 / 20)])
    # Fisher is exact for bivariate normal system means; Boot-Inputs ignores the sampling of systems
    assert summary.loc["Fisher", "pvalue_vs_nominal"] > 0.001
    assert summary.loc["Boot-Inputs", "coverage"] < 0.8 and summary.loc["Boot-Inputs", "pvalue_vs_nominal"] < 0.001
    text = primer.coverage_sentences(primer.coverage_summary(trials))
    assert "exact binomial test, p = " in text and text.count("\n") == 3


def test_sampling_distribution_centres_on_the_truth():
    frame = primer.sampling_distribution(12, 30, system_correlation=0.6, summary_correlation=0.3, n_studies=150,
                                         rng=1)
    for level, part in frame.groupby("level"):
        se = part.r.std() / math.sqrt(len(part))
        assert abs(part.r.mean() - part.truth.iloc[0]) < 4 * se + 0.03, level  # r is slightly biased to 0


def test_check_accepts_the_answer_and_refuses_a_near_miss():
    # which bug: a check that compares with the wrong answer, or accepts everything
    from metaeval.studies import primer

    a = primer.exercise_answers()
    assert primer.check(1, a.toy_summary_kendall) == "Exercise 1: correct."
    assert primer.check(1, a.toy_summary_kendall + 0.01).startswith("Exercise 1: not yet")
    assert primer.check(2, {"system": a.toy_system_after_swap}) == "Exercise 2: correct."
    assert primer.check(2, {"summary": a.toy_summary_after_swap + 0.1}).startswith("Exercise 2: not yet: summary")
    assert primer.check(2, {"levels": 1}).startswith("Exercise 2: give a dict")
    assert primer.check(3, a.toy_fisher_interval) == "Exercise 3: correct."
    assert primer.check(4, "Boot-Both").startswith("Exercise 4: pass distributions")
    assert primer.check(5, "first") == "Exercise 5: correct." and primer.check(5, "second").startswith("Exercise 5: not yet")


def test_reliability_section_numbers_and_reasons():
    # section 5: the ceilings are the expected r of 16 systems at correlation sqrt(r_kk); a score without ratings
    # gets its reason
    from metaeval.data.datasets import load
    from metaeval.stats.reliability import expected_correlation
    from metaeval.studies import primer as p

    t = p.reliability_table(load("summeval"), ["expert.relevance", "turker.relevance", "qa-eval.f1"], "qa-eval.f1",
                            n_resamples=0, rng=0)
    ok = t[t["note"] == ""]
    assert np.allclose(ok["ceiling"], expected_correlation(np.sqrt(ok["reliability"].to_numpy()), 16))
    assert np.allclose(ok["disattenuated"], ok["metric_r"] / np.sqrt(ok["reliability"]))
    assert t["note"].iloc[-1] == "no per-annotator ratings (only their aggregate)"
    # printed by this code: expert summary-level ceiling 0.827 (3 experts), crowd 0.887 (5 workers); the former
    # pooled estimator gave 0.856 and 0.906
    summary = ok[ok["level"] == "summary"].set_index("score")["ceiling"]
    assert summary["expert.relevance"] == pytest.approx(0.827, abs=2e-3)
    assert summary["turker.relevance"] == pytest.approx(0.887, abs=5e-3)
    text = p.reliability_sentences(t, "QAEval-F1")
    assert "Spearman-Brown" in text and "not evidence that the ceilings are equal" in text


def test_exercise_6_the_toy_alt_test_by_hand():
    # leave annotator 1 out: the others' means 2.5, 4.5, 2, 2; judge distances .5, 0, 1, 1; annotator 1's 1.5, .5,
    # 0, 3 -> the judge wins items 0, 1, 3, annotator 1 item 2 (no ties)
    assert primer.exercise_answers().toy_alt_advantage == (0.75, 0.25)
    assert primer.check(6, (0.75, 0.25)) == "Exercise 6: correct."
    assert primer.check(6, (0.75, 0.5)).startswith("Exercise 6: not yet: rho_human")
    assert primer.check(6, "0.75").startswith("Exercise 6: give")
