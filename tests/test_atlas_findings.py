"""The atlas's finding rules (metaeval.studies.atlas_findings): for every rule a small dataset where it must hold
and one where it must not, with the value asserted; the minimum sizes; the datasets listed apart; the human
scores (a rank column) that must never be a metric."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.data.atlas import atlas_datasets
from metaeval.stats.resampling import bootstrap_ci
from metaeval.stats.significance import PairwiseResult, williams_test
from metaeval.studies import atlas
from metaeval.studies import atlas_findings as af

OPTS = af.FindingOptions(n_resamples=200, n_permutations=200, power_trials=4000)


def _run(name, data, options=OPTS, seed=0):
    return af.evaluate(af.RULES[name], data, options, seed)


def _data(metrics, Z, **kw):
    return af.FindingData("d", metrics, np.asarray(Z, dtype=float), **kw)


def test_every_rule_quotes_its_claim_and_states_its_rule():
    assert list(af.RULES) == ["graham_bleu", "lin_documents", "deutsch2021_width", "deutsch2021_over_rouge",
                              "deutsch2022_close"]
    for rule in af.RULES.values():
        assert rule.claim and rule.where and rule.rule and rule.min_systems >= af.MIN_SYSTEMS
    table = af.rule_table()
    assert list(table["finding"]) == list(af.RULES) and table["claim"].str.len().min() > 40


# ----------------------------------------------------------------------------------------------------
# Graham (2015): BLEU on par with ROUGE


def _graham_data(rouge_sys, bleu_sys, human_sys, M=10):
    h = np.repeat(np.asarray(human_sys, float)[:, None], M, axis=1)
    r = np.repeat(np.asarray(rouge_sys, float)[:, None], M, axis=1)
    return _data({"ROUGE-1 R": r, "BLEU": r}, h, corpus_bleu=np.asarray(bleu_sys, float))


def test_graham_does_not_hold_when_rouge_beats_corpus_bleu_and_gives_williams_p():
    g = np.random.default_rng(1)
    truth = g.normal(size=12)
    rouge, bleu = truth + 0.1 * g.normal(size=12), g.normal(size=12)
    cell = _run("graham_bleu", _graham_data(rouge, bleu, truth))
    # the one-sided p, ROUGE better (Graham's test; williams_test's default is two-sided)
    expected = williams_test(rouge[:, None], bleu[:, None], truth[:, None], alternative="greater").pvalue
    assert cell["status"] == af.NOT_HOLDS and cell["value"] == pytest.approx(expected, rel=1e-12)
    assert expected < 1e-3 and "ROUGE-1 R is significantly better" in cell["reason"]
    # and in the other direction: corpus BLEU significantly better is not "on par" either
    cell = _run("graham_bleu", _graham_data(bleu, rouge, truth))
    assert cell["status"] == af.NOT_HOLDS and "corpus BLEU is significantly better" in cell["reason"]


def test_graham_not_refuted_gives_the_power_calibrated_at_equal_correlations():
    # rouge and bleu with exactly equal correlations with the humans: the two one-sided Williams tests reject with
    # probability 2 * alpha = 0.10 (their size; Williams' t is approximate, hence the tolerance)
    n = 12
    g = np.random.default_rng(3)
    basis = np.linalg.qr(np.column_stack([np.ones(n), g.normal(size=(n, 3))]))[0][:, 1:]
    h, u, v = basis.T
    cell = _run("graham_bleu", _graham_data(h + 0.8 * u, h + 0.8 * v, h))
    assert cell["status"] == af.NOT_REFUTED and cell["measure"] == "power at the observed correlations"
    assert cell["value"] == pytest.approx(0.10, abs=0.025)
    assert "not refuted (power 0.1" in cell["reason"] and "not evidence of equal performance" in cell["reason"]


# ----------------------------------------------------------------------------------------------------
# Lin (2004): documents needed vs available


def test_lin_holds_with_the_documents_needed():
    g = np.random.default_rng(0)
    Z = g.normal(size=(8, 1)) + 0.5 * g.normal(size=(8, 60))
    # single-reference ROUGE-1 (the claim's) equals the humans: r = 1 from the first size tried (lin_step = 5
    # documents) on; the all-references ROUGE-1 R (noise here) is not the one tested
    data = _data({"ROUGE-1 R": g.normal(size=(8, 60))}, Z, rouge1_single_ref=Z.copy())
    cell = _run("lin_documents", data)
    assert cell["status"] == af.HOLDS and cell["value"] == 5.0
    assert cell["reason"].startswith("5 documents needed, 60 available") and "with 1 reference" in cell["reason"]


def test_lin_not_shown_when_all_documents_are_too_few():
    g = np.random.default_rng(0)
    Z = g.normal(size=(8, 1)) + 0.5 * g.normal(size=(8, 60))
    cell = _run("lin_documents", _data({"ROUGE-1 R": g.normal(size=(8, 60))}, Z))
    assert cell["status"] == af.NOT_SHOWN and np.isnan(cell["value"])
    assert cell["reason"].startswith("more than the 60 available documents are needed")
    assert "all its references" in cell["reason"]


# ----------------------------------------------------------------------------------------------------
# Deutsch et al. (2021): wide intervals; few metrics improve over ROUGE


def test_deutsch2021_width_does_not_hold_on_a_perfect_metric_and_holds_on_noise():
    g = np.random.default_rng(0)
    Z = g.normal(size=(8, 1)) + g.normal(size=(8, 20))
    cell = _run("deutsch2021_width", _data({"ROUGE-2 F": Z.copy()}, Z))  # tau = 1 in every resample
    assert cell["status"] == af.NOT_HOLDS and cell["value"] == 0.0
    X = g.normal(size=(8, 20))
    cell = _run("deutsch2021_width", _data({"ROUGE-2 F": X}, Z), seed=5)
    lo, hi = bootstrap_ci(X, Z, level="system", coefficient="kendall", resample="both", n_resamples=200,
                          rng=np.random.default_rng(5)).confidence_interval
    assert cell["status"] == af.HOLDS and cell["value"] == pytest.approx(hi - lo) and cell["value"] > 1.0


def _tests(names, P):
    return PairwiseResult(tuple(names), np.zeros(len(names)), np.zeros((len(names),) * 2), np.asarray(P, float))


def test_deutsch2021_counts_only_improvements_over_every_rouge_variant_with_bonferroni_per_metric():
    names = ["ROUGE-1 R", "ROUGE-2 R", "X", "Y", "W"]
    Z = np.zeros((6, 10))
    mets = {n: Z for n in names}
    nan = np.nan
    # rows beat columns. X beats both ROUGE variants at 0.02 (Bonferroni x2: 0.04 <= 0.05): improves; Y at 0.03
    # and 0.001 (0.06): does not; W beats one only. The ROUGE variants separate each other (p = 1e-4): not counted
    P = [[nan, 1e-4, .9, .9, .9],
         [1e-4, nan, .9, .9, .9],
         [.02, .02, nan, .5, .5],
         [.03, .001, .5, nan, .5],
         [.001, .9, .5, .5, nan]]
    cell = _run("deutsch2021_over_rouge", _data(mets, Z, pair_tests=_tests(names, P)))
    assert cell["status"] == af.HOLDS and cell["value"] == pytest.approx(1 / 3)
    assert "1 of 3 metrics (33%)" in cell["reason"] and ": X (" in cell["reason"]
    P[3][0] = 0.02  # now Y improves too (0.04, 0.002): 2 of 3, a majority
    cell = _run("deutsch2021_over_rouge", _data(mets, Z, pair_tests=_tests(names, P)))
    assert cell["status"] == af.NOT_HOLDS and cell["value"] == pytest.approx(2 / 3)


def test_deutsch2021_over_rouge_runs_perm_both_itself_on_data():
    g = np.random.default_rng(2)
    truth = g.normal(size=(12, 1))
    Z = truth + 0.3 * g.normal(size=(12, 30))
    mets = {"ROUGE-1 R": g.normal(size=(12, 30)), "good": truth + 0.05 * g.normal(size=(12, 30)),
            "bad": g.normal(size=(12, 30)), "bad2": g.normal(size=(12, 30))}
    cell = _run("deutsch2021_over_rouge", _data(mets, Z))
    assert cell["status"] == af.HOLDS and cell["value"] == pytest.approx(1 / 3) and ": good (" in cell["reason"]
    cell = _run("deutsch2021_over_rouge", _data({**mets, "bad": mets["good"] + 0.01}, Z))
    assert cell["status"] == af.NOT_HOLDS and cell["value"] == pytest.approx(2 / 3)
    assert "1 metric besides ROUGE" in _run("deutsch2021_over_rouge", _data(
        {"ROUGE-1 R": Z, "BLEU": Z}, Z))["reason"]


# ----------------------------------------------------------------------------------------------------
# Deutsch et al. (2022): close pairs, notebook 24's buckets


def test_deutsch2022_holds_when_close_pairs_are_noise_and_is_not_shown_on_a_perfect_metric():
    g = np.random.default_rng(0)
    N, M = 20, 40
    truth = np.arange(N, dtype=float)[:, None]
    Z = truth + 0.2 * g.normal(size=(N, M))
    # the metric's system scores are the truth plus noise of 3: pairs close by the metric are ordered at chance
    X = truth + 3 * g.normal(size=(N, 1)) + 0.2 * g.normal(size=(N, M))
    cell = _run("deutsch2022_close", _data({"ROUGE-2 F": X}, Z))
    # tau -1/19 on the 19 closest of 190 pairs (9 concordant, 10 discordant) vs 0.821 on all: difference -0.874
    assert cell["status"] == af.HOLDS and cell["value"] == pytest.approx(-1 / 19 - 156 / 190, abs=1e-12)
    assert "significantly lower on close pairs" in cell["reason"]
    # the same metric against noisy humans: tau 3/19 vs 128/190, an interval that includes 0: not shown
    cell = _run("deutsch2022_close", _data({"ROUGE-2 F": X}, truth + 20 * g.normal(size=(N, M))))
    assert cell["status"] == af.NOT_SHOWN and cell["value"] == pytest.approx(3 / 19 - 128 / 190, abs=1e-12)
    cell = _run("deutsch2022_close", _data({"ROUGE-2 F": Z.copy()}, Z))
    assert cell["status"] == af.NOT_SHOWN and cell["value"] == 0.0 and "includes 0" in cell["reason"]


# ----------------------------------------------------------------------------------------------------
# Minimum sizes, datasets apart, roles of scores


def test_a_three_system_dataset_cannot_be_tested_by_any_rule():
    from metaeval import datasets

    entry = atlas_datasets()["squality"]
    ds = datasets.load("squality")
    mats, _ = atlas.dataset_metrics(ds, entry)
    cells = atlas.findings("squality", ds, entry, mats, ds.matrix(entry.default_human), options=OPTS)
    assert [c["finding"] for c in cells] == list(af.RULES)
    for c in cells:
        assert c["status"] == af.UNTESTABLE and c["reason"].startswith("cannot be tested: 3 systems"), c
        assert (c["systems"], c["inputs"]) == (3, 100)


def test_a_rank_column_is_a_human_score_never_a_metric():
    from metaeval import datasets

    entry = atlas_datasets()["squality"]
    ds = datasets.load("squality")
    assert {"rank.overall", "rank.correctness", "rank.selection"} <= set(ds.human_scores)
    mats, _ = atlas.dataset_metrics(ds, entry, cache=True)
    assert not [m for m in mats if m.startswith("rank.")]
    # no atlas dataset names one of its human scores as a metric
    for name, e in atlas_datasets().items():
        assert not set(e.source_metrics) & set(e.human_scores), name


def test_datasets_without_metrics_are_listed_apart():
    assert atlas.untestable({}) is not None and atlas.untestable({"m": np.zeros((5, 5))}) is None
    assert atlas.findings("wmt", None, None, {}, np.zeros((10, 20))) == []
    cells = [_run("deutsch2021_width", _data({"ROUGE-2 F": np.zeros((3, 20))}, np.zeros((3, 20))))]
    lines = atlas.finding_sentences(cells, {"wmt<x>": "no metric to test"})
    assert "Cannot be tested here on 1: d (3 x 20)" in " ".join(lines)
    assert lines[-1] == "* Datasets that can test no finding (not in the matrix): wmt&lt;x&gt;: no metric to test."
    m = atlas.finding_matrix(cells)
    assert m.loc["d", "systems"] == 3 and m.loc["d", "deutsch2021_width"] == af.UNTESTABLE
