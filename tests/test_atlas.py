"""The atlas across datasets (metaeval.studies.atlas, metaeval.run.atlas): skip reasons, the correlation table,
the partial conjunction table with FDR over pairs, the finding matrix, and the make-atlas plan and index; small
hand-checked data."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from metaeval.data import datasets
from metaeval.data.atlas import atlas_datasets
from metaeval.stats.significance import PairwiseResult
from metaeval.studies import atlas

SUMMEVAL = atlas_datasets()["summeval"]
REALSUMM = atlas_datasets()["realsumm"]


def _fake(shape=(6, 10), texts=True, ratings=()):
    return SimpleNamespace(shape=shape, has_texts=texts, ratings_table={r: None for r in ratings})


# ----------------------------------------------------------------------------------------------------
# Skip reasons


def test_support_names_each_reason():
    sup = atlas.support(REALSUMM)
    assert sup["noise ceiling"].startswith("the source publishes only aggregated human scores")
    assert sup["correlations"] is None and sup["text metrics"] is None
    sup = atlas.support(SUMMEVAL, _fake(shape=(2, 10), texts=False, ratings=["expert.relevance"]))
    assert sup["system level"] == ("cannot be tested: 2 systems (at least 5 needed for a system-level correlation "
                                   "and its Boot-Both interval)")
    assert sup["text metrics"].startswith("the dataset has no summaries and references")
    assert sup["noise ceiling"] == "cannot be tested: 2 systems (at least 5 needed)"
    # systems and inputs are both required (the former check asked for 3 systems *or* 3 inputs)
    assert atlas.support(SUMMEVAL, _fake(shape=(16, 4), ratings=["expert.relevance"]))["noise ceiling"] == (
        "cannot be tested: 4 inputs (at least 5 needed)")
    assert atlas.support(SUMMEVAL, _fake(shape=(5, 5), ratings=["expert.relevance"]))["noise ceiling"] is None
    one = dataclasses.replace(SUMMEVAL, annotators=1)
    assert atlas.support(one, _fake(ratings=["expert.relevance"]))["noise ceiling"].startswith("one rating per item")


def test_load_datasets_reports_what_does_not_load():
    loaded, skipped = atlas.load_datasets(["summeval", "no-such-atlas-dataset"])
    assert list(loaded) == ["summeval"]
    assert skipped["no-such-atlas-dataset"].startswith("not an atlas dataset")


def test_make_atlas_needs():
    from metaeval.run.atlas import check_needs

    en, de = SimpleNamespace(language="en"), SimpleNamespace(language="de")
    ds = SimpleNamespace(has_texts=False, shape=(3, 10))
    assert check_needs(["texts"], en, ds) == "no summaries and references (texts) in this dataset"
    assert check_needs(["systems>=4"], en, ds) == "only 3 systems (needs at least 4)"
    assert check_needs(["systems>=3"], en, ds) is None
    assert check_needs(["language=en"], de, ds) == "texts in 'de'; this notebook handles 'en' only"


def test_make_atlas_needs_on_the_datasets_that_failed_by_design():
    """XSum's Gold (the reference annotated as a system) has no metric score, so a notebook of the stored metrics
    sees 4 systems; FacEval stores no metric score, so notebook 24 (stored scores only) and the card do not
    apply: the index said "failed" for both."""
    from metaeval.run.atlas import check_needs, load_parameters

    entries = atlas_datasets()
    xsum, faceval = (datasets.load(n) for n in ("xsum-hallucinations", "faceval"))
    assert check_needs(["metrics", "systems>=5"], entries["xsum-hallucinations"], xsum) == (
        "only 4 systems with metric scores (needs at least 5)")
    assert check_needs(["texts", "systems>=5"], entries["xsum-hallucinations"], xsum) is None  # ROUGE of all 5
    assert check_needs(["metrics", "metric_scores>=2"], entries["faceval"], faceval) == (
        "0 stored metric score(s): this notebook compares stored scores (it scores no texts) and needs at least 2")
    assert check_needs(["metrics", "metric_scores>=2"], entries["xsum-hallucinations"], xsum) is None
    params = load_parameters()
    for stem, dataset in (("24", faceval), ("61", faceval), ("24", xsum), ("60", xsum)):
        spec = next(v for k, v in params.items() if k.startswith(stem))
        assert check_needs(spec["needs"], entries[dataset.name], dataset) is not None, (stem, dataset.name)


def test_make_atlas_plan_lists_every_notebook_and_reason():
    from metaeval.run.atlas import load_parameters, plan

    params = load_parameters()
    assert "01_primer" in params and "skip" in params["01_primer"]
    fake = {"00_dataset_check": {}, "10_graham2015": {"needs": ["systems>=30"]}, "01_primer": {"skip": "why"}}
    runs, missing, (loaded, not_loaded) = plan(["summeval", "nope"], parameters=fake)
    assert runs == {"00_dataset_check": (["summeval"], {})}
    # the index says which combinations do not apply (a reason of the data) and which were not run (the plan's)
    assert missing[("10_graham2015", "summeval")] == "not applicable: only 16 systems (needs at least 30)"
    assert missing[("01_primer", "summeval")] == "not run: why"
    assert missing[("00_dataset_check", "nope")].startswith("not run: not an atlas dataset")


def test_make_atlas_index_refuses_a_foreign_readme(tmp_path):
    from metaeval.run.atlas import INDEX_MARK, write_index

    path = write_index(tmp_path, {("00_x", "d"): "not run: no texts"}, ["d"], ["00_x"], None, 60.0)
    text = path.read_text()
    assert text.startswith(INDEX_MARK) and "| 00_x | not run: no texts |" in text and "1.0 min" in text
    path.write_text("my own notes\n")
    with pytest.raises(FileExistsError):
        write_index(tmp_path, {}, ["d"], ["00_x"], None, 1.0)


# ----------------------------------------------------------------------------------------------------
# The correlation table


def test_correlation_table_values_by_hand():
    # 4 systems x 3 inputs; the metric orders the system means as the humans except the last pair
    Z = np.array([[1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6.0]])
    X = np.array([[1, 1, 1], [2, 2, 2], [4, 4, 4], [3, 3, 3.0]])
    ceil = atlas.Ceilings((atlas.Ceiling("system", "pearson", 0.9, (0.8, 0.95), 0.64),
                           atlas.Ceiling("system", "kendall", 0.7, (0.6, 0.8), 0.7)), 0.4, 3)
    t = atlas.correlation_table({"m": X}, Z, levels=["system"], coefficients=["pearson", "kendall"],
                                ceiling=ceil, n_resamples=20, n_resamples_accuracy=10).set_index("statistic")
    # system means: X (1, 2, 4, 3), Z (2, 3, 4, 5): Pearson 0.8 by hand, Kendall (5 - 1) / 6
    assert t.loc["pearson", "value"] == pytest.approx(0.8)
    assert t.loc["kendall", "value"] == pytest.approx(4 / 6)
    assert t.loc["pairwise accuracy", "value"] == pytest.approx(5 / 6)
    # each coefficient's own ceiling; Spearman's correction r / sqrt(r_kk) on the Pearson row only
    assert t.loc["pearson", "noise_ceiling"] == 0.9 and t.loc["kendall", "noise_ceiling"] == 0.7
    assert t.loc["pearson", "disattenuated"] == pytest.approx(0.8 / 0.8)
    assert np.isnan(t.loc["kendall", "disattenuated"])
    assert np.isnan(t.loc["pairwise accuracy", "noise_ceiling"])
    assert (t["ci_low"] <= t["value"] + 1e-12).all() and (t["value"] <= t["ci_high"] + 1e-12).all()


# ----------------------------------------------------------------------------------------------------
# Partial conjunction across datasets


def _pairwise(names, P):
    P = np.array(P, dtype=float)
    return PairwiseResult(tuple(names), np.zeros(len(names)), np.zeros_like(P), P)


def test_partial_conjunction_table_by_hand():
    nan = np.nan
    # a beats b with p 0.001, 0.002, 0.2 on three datasets; b beats a with p 0.9 everywhere
    d = {k: _pairwise(["a", "b"], [[nan, p], [0.9, nan]]) for k, p in (("d1", 0.001), ("d2", 0.002), ("d3", 0.2))}
    t = atlas.partial_conjunction_table(d).set_index(["metric_a", "metric_b"])
    ab = t.loc[("a", "b")]
    # Bonferroni partial conjunction: u=1: 3 * 0.001, u=2: 2 * 0.002, u=3: 0.2 (running max)
    assert [ab["p_u1"], ab["p_u2"], ab["p_u3"]] == pytest.approx([0.003, 0.004, 0.2])
    # BH over the two ordered pairs at each u: u=1 p (0.003, 0.9*... ) -> q = 0.006 for (a, b)
    assert ab["q_u1"] == pytest.approx(0.006)
    assert ab["u_fdr"] == 2 and t.loc[("b", "a"), "u_fdr"] == 0


def test_partial_conjunction_skips_pairs_on_one_dataset():
    nan = np.nan
    t = atlas.partial_conjunction_table({"d1": _pairwise(["a", "b"], [[nan, 0.01], [0.99, nan]]),
                                         "d2": _pairwise(["a", "c"], [[nan, 0.01], [0.99, nan]])})
    assert t.empty and t.attrs["left_out"] == 4


# ----------------------------------------------------------------------------------------------------
# Findings and text


def test_findings_on_a_dataset_without_texts_say_why():
    g = np.random.default_rng(0)
    Z = g.normal(size=(6, 20))
    ds = SimpleNamespace(shape=(6, 20), has_texts=False, ratings_table={})
    entry = dataclasses.replace(REALSUMM, texts=False, references=False)
    cells = atlas.findings("x", ds, entry, {"m1": Z + g.normal(size=Z.shape), "m2": g.normal(size=Z.shape)}, Z,
                           options=atlas.FindingOptions(n_resamples=50, n_permutations=50))
    by = {c["finding"]: c for c in cells}
    assert set(by) == set(atlas.RULES)
    for f in ("graham_bleu", "lin_documents", "deutsch2021_width"):
        assert by[f]["status"] == atlas.UNTESTABLE and "no summaries and references" in by[f]["reason"]
    assert by["deutsch2022_close"]["reason"] == "cannot be tested: 6 systems (at least 8 needed)"
    assert by["deutsch2021_over_rouge"]["reason"] == "no ROUGE variant among the metrics"
    m = atlas.finding_matrix(cells)
    assert m.loc["x", "graham_bleu"] == atlas.UNTESTABLE and m.loc["x", "inputs"] == 20
    lines = atlas.finding_sentences(cells)
    assert "  * Cannot be tested here on 1: x (6 x 20)." in lines


def test_generated_sentences_name_the_test_and_never_equality():
    table = pd.DataFrame([{"dataset": "d", "metric": "m", "level": "system", "statistic": "pearson", "value": 0.5,
                           "ci_low": 0.1, "ci_high": 0.95, "noise_ceiling": 0.9, "disattenuated": 0.5 / 0.9}])
    text = " ".join(atlas.correlation_sentences(table))
    assert "Boot-Both" in text and "disattenuated" in text and "0.556" in text
    # the interval against the ceiling's point estimate is no test: no sentence claims a gap or its absence
    assert "no test of the gap" in text and "reaches" not in text and "measurably" not in text
    pc = pd.DataFrame([{"metric_a": "a", "metric_b": "b", "k": 2, "p_u1": 0.01, "p_u2": 0.3, "q_u1": 0.01,
                        "q_u2": 0.3, "u_fdr": 1}])
    text = " ".join(atlas.replication_sentences(pc))
    assert "Benjamini & Heller" in text and "Benjamini-Hochberg" in text and "does not mean the metrics are equal" in text


def test_summeval_ceilings_and_metrics():
    from metaeval import datasets

    ds = datasets.load("summeval")
    c = atlas.ceilings(ds.ratings("expert.relevance"), n_resamples=0)
    # printed by this code (tests/test_reliability.py has the estimator's golden values at rng=0; this split
    # sample differs): system Pearson 0.979, summary Pearson 0.827 (the former pooled estimator 0.856),
    # summary Kendall 0.682
    assert c.at("system").value == pytest.approx(0.979, abs=2e-3)
    assert c.at("summary").value == pytest.approx(0.827, abs=2e-3)
    assert c.at("summary", "kendall").value == pytest.approx(0.682, abs=2e-3)
    assert c.alpha_interval == pytest.approx(0.452634, abs=1e-6)


def test_two_and_three_system_datasets_have_no_ceiling():
    # goyal2022-keyword: 2 systems, whose system-level "reliability" was the correlation of 2 points, always 1
    # (committed as 1.000 [1.00, 1.00]); squality: 3 systems
    from metaeval import datasets

    for name, n in (("goyal2022-keyword", 2), ("squality", 3)):
        entry = atlas_datasets()[name]
        ds = datasets.load(name)
        c = atlas.ceilings(ds.ratings(entry.default_human), n_resamples=20)
        for cell in c.cells:
            assert np.isnan(cell.value) and np.isnan(cell.reliability) and np.isnan(cell.ci[0])
            assert cell.reason == f"cannot be tested: {n} systems (at least 5 needed)"
        assert atlas.support(entry, ds)["noise ceiling"] == f"cannot be tested: {n} systems (at least 5 needed)"
        text = " ".join(atlas.ceiling_sentences({name: c}, {}))
        assert "1.000" not in text and f"cannot be tested: {n} systems" in text


def test_ceiling_sentences_name_each_coefficient_and_level():
    g = np.random.default_rng(0)
    c = atlas.ceilings(g.normal(size=(8, 40, 1)) + 0.5 * g.normal(size=(8, 40, 3)), n_resamples=20)
    text = atlas.ceiling_sentences({"d": c}, {})[0]
    for cell in c.cells:  # every number stated is the cell's own, next to its coefficient and level
        assert f"{cell.value:.3f} [{cell.ci[0]:.2f}, {cell.ci[1]:.2f}]" in text
    assert "Kendall" in text and "at summary level (averaged over inputs" in text
    assert "would be expected to reach, against the mean of the 3 annotators" in text


def test_run_all_leaves_the_atlas_to_make_atlas():
    # notebook 70 (default_run: false) would break make results' budget; asked for by name it still plans
    from metaeval.run.notebooks import plan_all

    assert not [r for r in plan_all() if "70_atlas" in r.notebook]
    assert [r.label for r in plan_all(["70"])] == ["70_atlas"]


def test_needs_name_what_a_dataset_lacks():
    from types import SimpleNamespace as S

    from metaeval.run.atlas import check_needs

    human_only = S(has_texts=False, score_names=["mqm"], human_scores=["mqm"], shape=(10, 50))
    assert "nothing to compare" in check_needs(["metrics"], S(language="en"), human_only)
    many = S(has_texts=False, score_names=["h", *[f"m{i}" for i in range(72)]], human_scores=["h"], shape=(11, 96))
    assert "72 metric scores" in check_needs(["metric_scores<=40"], S(language="en"), many)
    assert check_needs(["metrics", "metric_scores<=72"], S(language="en"), many) is None


def test_binary_ratings_ceilings_are_flagged_approximate():
    # 0/1 judgments (xsum-hallucinations) are far from the continuous scores the ceiling's map assumes
    g = np.random.default_rng(2)
    ratings = (g.normal(size=(6, 40, 1)) + g.normal(size=(6, 40, 3)) > 0).astype(float)
    c = atlas.ceilings(ratings, n_resamples=0)
    assert "only two values" in c.note and "approximate" in atlas.ceiling_sentences({"d": c}, {})[0]
    assert atlas.ceilings(ratings + g.normal(size=ratings.shape), n_resamples=0).note == ""
