"""The library side of the dataset-agnostic notebooks: the shared setup, Graham's human combinations and
Table 4 inputs, Lin's visible marks and paper values, and the full ROUGE scoring signature."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import metaeval
from metaeval import graham, lin
from metaeval.data.scoring import scoring_signature
from metaeval.run.session import start


@pytest.fixture(scope="module")
def realsumm():
    return metaeval.datasets.load("realsumm")


def test_start_resolves_the_default_human_score_and_checks_texts(tmp_path):
    nb = start("demo", "summeval", output_dir=tmp_path / "a", human=None, texts=True, seed=3)
    assert nb.human == "expert.relevance" and nb.out == tmp_path / "a" and nb.out.is_dir()
    assert nb.rng.integers(1 << 30) == np.random.default_rng(3).integers(1 << 30)
    assert nb.name("expert.relevance") == "Relevance (expert)"
    assert start("demo", "realsumm", output_dir=tmp_path / "b", human=None).human == "litepyramid.recall"
    # an explicit human score wins; without `human` the session has none
    assert start("demo", "summeval", output_dir=tmp_path / "c", human="turker.fluency").human == "turker.fluency"
    assert start("demo", "summeval", output_dir=tmp_path / "d").human is None
    with pytest.raises(metaeval.datasets.DataError, match="fabbri2020.*has no texts; the demo needs summaries"):
        start("demo", "fabbri2020", output_dir=tmp_path / "e", texts=True, purpose="the demo")
    with pytest.raises(metaeval.datasets.DataError, match="no score 'expert.nonsense'"):
        start("demo", "summeval", output_dir=tmp_path / "f", human="expert.nonsense")


def test_session_saves_tables_and_generated_text(tmp_path):
    nb = start("demo", "fabbri2020", output_dir=tmp_path)
    nb.save_table(pd.DataFrame({"a": [1.5]}), "t.csv", index=False)
    nb.report("* r = 0.5", "s.md")
    assert (tmp_path / "t.csv").read_text() == "a\n1.5\n"
    assert (tmp_path / "s.md").read_text() == "* r = 0.5\n"
    assert nb.saved == [tmp_path / "t.csv", tmp_path / "s.md"]


def test_quality_scores_follow_the_annotator_group(summeval, realsumm):
    assert graham.quality_scores(summeval, "expert.relevance") == [
        "expert.coherence", "expert.consistency", "expert.fluency"]
    assert graham.quality_scores(summeval, "turker.coherence") == [
        "turker.consistency", "turker.fluency", "turker.relevance"]
    assert graham.quality_scores(realsumm, "litepyramid.recall") == []  # Table 4 is skipped on REALSumm
    assert graham.missing_inputs(summeval, ["expert.fluency"]) is None
    assert "no score 'x.y'" in graham.missing_inputs(summeval, ["x.y"])


def test_combined_human_scores_by_hand(summeval):
    cov = summeval.matrix("expert.relevance")
    qual = (summeval.matrix("expert.coherence") + summeval.matrix("expert.fluency")) / 2
    kw = dict(coverage="expert.relevance", quality=["expert.coherence", "expert.fluency"])
    i, j = 3, 7  # one cell checked by hand against the formulas
    c, q = cov[i, j], qual[i, j]
    assert graham.combined_human(summeval, "arithmetic", **kw)[i, j] == pytest.approx((c + q) / 2)
    assert graham.combined_human(summeval, "geometric", **kw)[i, j] == pytest.approx(np.sqrt(c * q))
    assert graham.combined_human(summeval, "harmonic", **kw)[i, j] == pytest.approx(2 * c * q / (c + q))
    np.testing.assert_array_equal(graham.combined_human(summeval, "coverage", **kw), cov)
    np.testing.assert_allclose(graham.combined_human(summeval, "quality", **kw), qual)
    # the means are ordered (AM >= GM >= HM) and differ somewhere: a swapped formula breaks one of these
    am, gm, hm = (graham.combined_human(summeval, w, **kw) for w in ("arithmetic", "geometric", "harmonic"))
    assert (am >= gm - 1e-12).all() and (gm >= hm - 1e-12).all() and (am > hm).any()
    with pytest.raises(ValueError, match="which must be one of"):
        graham.combined_human(summeval, "median", **kw)
    with pytest.raises(ValueError, match="quality must name at least one score"):
        graham.combined_human(summeval, "arithmetic", coverage="expert.relevance", quality=[])


def test_paper_values_are_consistent():
    best, conventional = zip(*graham.PAPER_TABLE3.values())
    assert graham.paper_ranking_tau() == pytest.approx(stats.kendalltau(best, conventional).statistic)
    # Table 2: every option's percentages add up to 100 (up to the paper's rounding) and are multiples of 1/80
    table2 = pd.Series(graham.PAPER_TABLE2)
    for option, block in table2.groupby(level=0):
        assert block.sum() == pytest.approx(100, abs=0.3), option
        counts = block.to_numpy() * graham.PAPER["n_optimal_rouge"] / 100
        np.testing.assert_allclose(counts, np.round(counts), atol=0.05)
    # Lin's Table 1 holds 17 measures x 3 settings x (1, 3) references; the critical r he quotes is ours
    assert len(lin.PAPER_TABLE1_DUC2001) == 17 * 3 * 2
    assert lin.PAPER_TABLE1_DUC2001[(1, "STOP", "R-1")] == 0.84
    assert lin.critical_r(lin.PAPER_N_SYSTEMS) == pytest.approx(0.576, abs=5e-4)


def test_lin_marks_are_visible_and_follow_the_test():
    table = pd.DataFrame({"r": [0.9, 0.85, 0.5], "best": [True, False, False],
                          "indistinguishable": [True, True, False]})
    marks = [lin.mark(row) for _, row in table.iterrows()]
    assert marks == ["0.900 ▲", "0.850 =", "0.500"]
    assert all(m == m.strip() for m in marks)  # no invisible trailing marks
    assert lin.default_ref_counts(11) == [1, 2, 3] and lin.default_ref_counts(2) == [1, 2]
    with pytest.raises(ValueError, match="at least one reference"):
        lin.default_ref_counts(0)


def test_lin_indistinguishable_flag_matches_the_pvalues():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(10, 40))
    mats = {("CASE", "good"): Z + rng.normal(scale=0.5, size=Z.shape),
            ("CASE", "close"): Z + rng.normal(scale=0.6, size=Z.shape),
            ("CASE", "noise"): rng.normal(size=Z.shape)}
    t = lin.measure_table(mats, Z, n_resamples=300, rng=1).set_index("measure")
    assert t.loc["noise", "indistinguishable"] == bool(t.loc["noise", "p_best_beats"] >= 0.05)
    assert not t.loc["noise", "indistinguishable"]  # pure noise is significantly worse than the best
    best = t.index[t["best"]][0]
    assert t.loc[best, "indistinguishable"] and np.isnan(t.loc[best, "p_best_beats"])


def test_scoring_signature_separates_configurations():
    sig = "rouge-l|stem:yes|stop:no|stat:F|refs:A"
    a = scoring_signature(sig, n_refs=11, sentences="ptb")
    assert a.startswith(sig + "|nrefs:11|sent:ptb|version:")
    assert len({a, scoring_signature(sig, n_refs=1, sentences="ptb"),
                scoring_signature(sig, n_refs=11, sentences="lines")}) == 3
    with pytest.raises(ValueError, match="sentences must be"):
        scoring_signature(sig, n_refs=1, sentences="nltk")
    with pytest.raises(ValueError, match="n_refs must be at least 1"):
        scoring_signature(sig, n_refs=0, sentences="ptb")


def test_interactive_run_never_writes_into_the_canonical_results(tmp_path, monkeypatch):
    # output_dir None outside the runner (JupyterLab): beside results/<paper>/<dataset>, never in it, because
    # the runner refuses canonical folders it did not write (a hand run there would block `make results`).
    from metaeval.run.session import start

    monkeypatch.setenv("METAEVAL_ROOT", str(tmp_path))
    nb = start("graham2015", "summeval", output_dir=None)
    assert nb.out == tmp_path / "results" / "runs" / "graham2015" / "summeval" / "interactive"
    assert not (tmp_path / "results" / "graham2015").exists()
