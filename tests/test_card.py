"""Report card (metaeval.card): its numbers are the library's direct calls; user files; the CLI and HTML."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval import bootstrap_ci, permutation_test, planning
from metaeval.run.card import make_card
from metaeval.studies import card as C

DATASETS = ["summeval", "realsumm"]
SMALL = {"n_resamples": 100, "planner_trials": 30, "planner_resamples": 50, "planner_inputs": (0.5, 1, 2)}


@pytest.fixture(scope="module", params=DATASETS)
def qaeval_card(request):
    return C.card_tables("qa-eval.f1", dataset=request.param, seed=3, **SMALL)


def test_card_numbers_equal_direct_library_calls(qaeval_card):
    card = qaeval_card
    ds = metaeval.datasets.load(card.dataset)
    Z = ds.matrix(card.human)
    assert card.human == ds.default_human
    for k, row in card.correlations.iterrows():
        X = ds.matrix(row.metric)
        ref = bootstrap_ci(X, Z, level=row.level, coefficient="pearson", n_resamples=100,
                           rng=np.random.default_rng([3, 1, k]))
        assert row.seed == f"default_rng([3, 1, {k}])"
        assert row.r == ref.statistic
        assert (row.low, row.high) == tuple(ref.confidence_interval)
    X = ds.matrix("qa-eval.f1")
    n_baselines = len(card.baselines)
    for k, row in card.tests.iterrows():
        kwargs = dict(level=row.level, n_resamples=100)
        greater = permutation_test(X, ds.matrix(row.baseline), Z, **kwargs, rng=np.random.default_rng([3, 2, k]))
        less = permutation_test(X, ds.matrix(row.baseline), Z, **kwargs, alternative="less",
                                rng=np.random.default_rng([3, 2, k]))
        assert (row.p_new_better, row.p_baseline_better) == (greater.pvalue, less.pvalue)
        assert row.p_new_better_bonferroni == min(1.0, greater.pvalue * n_baselines)
        two_sided = min(1.0, 2 * min(greater.pvalue, less.pvalue))
        assert row.p_two_sided == two_sided and row.p_two_sided_bonferroni == min(1.0, two_sided * n_baselines)
        # one two-sided test at alpha (not two one-sided tests at alpha each, a test at 2 alpha)
        expected = ("not significant" if row.p_two_sided_bonferroni >= 0.05 else
                    "new better" if greater.statistic > 0 else "baseline better")
        assert row.verdict == expected
    not_significant = card.tests[card.tests.verdict == "not significant"]
    assert len(card.planner) == len(not_significant)
    N, M = Z.shape
    for k, row in card.planner.reset_index(drop=True).iterrows():
        first, second = ((X, ds.matrix(row.baseline)) if row.better_here == "qa-eval.f1"
                         else (ds.matrix(row.baseline), X))
        sizes = [(N, m) for m in sorted({max(3, round(f * M)) for f in SMALL["planner_inputs"]})]
        power = planning.metric_comparison_power(first, second, Z, sizes=sizes, level=row.level,
                                                 alpha=0.05 / (2 * n_baselines), n_trials=30, n_resamples=50,
                                                 rng=np.random.default_rng([3, 3, k]))
        need = planning.required_size(power, size="n_inputs", n_trials=30).iloc[0]
        assert row.documents_needed == need.required or (np.isnan(row.documents_needed) and not need.reached)
        assert row.power_curve.endswith(f"{power.power.iloc[-1]:.2f}")


def test_card_baselines_summary_and_provenance(qaeval_card):
    card = qaeval_card
    ds = metaeval.datasets.load(card.dataset)
    stat = "recall" if ds.recall_oriented else "f1"
    assert card.baselines == tuple(f"{m}.{stat}" for m in ("rouge-1", "rouge-2", "rouge-l", "bertscore"))
    assert set(card.correlations.level) == {"system", "summary", "global"}
    assert len(card.correlations) == 3 * 5
    assert len(card.normality) == 6
    assert card.provenance["seed"] == 3 and card.provenance["dataset"] == card.dataset
    assert card.provenance["signature"].startswith("card|corr:pearson|ci:boot-both|B:100|")
    # the summary is generated from the numbers: the system-level r and every verdict appear in it
    new = card.correlations.query("level == 'system' and role == 'new'").iloc[0]
    assert f"system r = {new.r:.3f} [{new.low:.3f}, {new.high:.3f}]" in card.summary
    assert card.dataset in card.summary
    lines = {line.split(",")[0]: line for line in card.summary.splitlines()}
    for _, t in card.tests.iterrows():
        # every comparison states its test and its p-value (issue 23 item 4), in the line of its level and under
        # its verdict
        line = lines[f"- {t.level.capitalize()} level"]
        assert "two-sided Perm-Both test of equal correlations" in line and "Bonferroni over 4 baselines" in line
        cell = (f"{ds.display_name(t.baseline)} ({t.difference:+.3f}, p = {C._fmt_p(t.p_two_sided)}, adjusted "
                f"{C._fmt_p(t.p_two_sided_bonferroni)})")
        assert cell in line
        verdict = {"new better": "higher than", "baseline better": "lower than",
                   "not significant": "no significant difference from"}[t.verdict]
        others = [w for w in ("higher than", "lower than", "no significant difference from") if w != verdict]
        # the cell follows its own verdict's words, not another's
        before = line[:line.index(cell)]
        assert before.rfind(verdict) > max(before.rfind(w) for w in others)
    # ranks of point estimates are labelled as such; nothing is concluded from intervals
    assert card.summary.count("a ranking of estimates, not a test") == 1
    assert "overlap" not in card.summary and "distinguishable" not in card.summary
    assert "p = <" not in card.summary  # "p < 0.001", not "p = < 0.001"


def test_a_new_card_section_is_computed_written_and_summarised(tmp_path, monkeypatch):
    """The extension point CONTRIBUTING describes: one function and its summary, registered."""
    monkeypatch.setattr(C, "SECTIONS", dict(C.SECTIONS))

    def summarize(data, table):
        return [f"- Spread: the new metric's scores have standard deviation {table.sd.iloc[0]:.4f}."]

    @C.card_section("spread", summarize)
    def spread(data, tables):
        """Standard deviation of the new metric's scores."""
        assert "planner" in tables  # it sees the sections before it
        return pd.DataFrame({"metric": [data.metric], "sd": [float(np.std(data.X))]})

    card = C.card_tables("qa-eval.f1", dataset="realsumm", n_resamples=20, planner_trials=5, planner_resamples=10,
                         planner_inputs=(1,), test_levels=("system",))
    sd = float(np.std(metaeval.datasets.load("realsumm").matrix("qa-eval.f1")))
    # its line follows the sections registered before it (the card's notes come last)
    lines = [line for line in card.summary.splitlines() if not line.startswith("- Note:")]
    assert card.spread.sd.iloc[0] == sd and lines[-1] == f"- Spread: the new metric's scores " \
        f"have standard deviation {sd:.4f}."
    files = card.write(tmp_path)
    # tables hold floats at 10 significant digits (metaeval._io.write_table): equal at that precision
    assert pd.read_csv(files["spread"]).sd.iloc[0] == pytest.approx(sd, rel=5e-10)
    with pytest.raises(ValueError, match="not a Card field"):
        C.card_section("summary", summarize)


def _write_metrics_jsonl(path, ds, name, values, systems, inputs):
    with open(path, "w") as fh:
        for i, s in enumerate(systems):
            for j, inp in enumerate(inputs):
                fh.write(json.dumps({"instance_id": inp, "summarizer_id": s,
                                     "metrics": {"my-metric": {"score": float(values[i, j])}}}) + "\n")


def test_card_from_a_user_file_reports_what_it_left_out(tmp_path):
    ds = metaeval.datasets.load("summeval")
    X = ds.matrix("qa-eval.f1")
    systems, inputs = list(ds.systems), list(ds.inputs)
    # the user's file lacks one system and has an extra, unknown one
    path = tmp_path / "mine.jsonl"
    _write_metrics_jsonl(path, ds, "my-metric", np.vstack([X[1:], X[:1]]), systems[1:] + ["ghost"], inputs)
    card = C.card_tables(path, dataset="summeval", n_resamples=50, planner_trials=10, planner_resamples=20,
                         planner_inputs=(1,))
    assert card.metric == "my-metric.score"
    assert card.shape == (15, 100)
    assert any("1 systems and 0 inputs of the scores are not in dataset" in n for n in card.provenance["notes"])
    assert any("cover 15 of 16 systems" in n for n in card.provenance["notes"])
    assert "Note:" in card.summary
    sub = ds.subset(systems[1:], inputs)
    direct = bootstrap_ci(sub.matrix("qa-eval.f1"), sub.matrix("expert.relevance"), n_resamples=50,
                          rng=np.random.default_rng([0, 1, 0]))
    # the scores went through a JSON file: equal up to the last bits of the sums
    assert card.correlations.r.iloc[0] == pytest.approx(direct.statistic, rel=1e-12)
    assert card.correlations.low.iloc[0] == pytest.approx(direct.confidence_interval.low, rel=1e-12)


def test_card_bad_input(tmp_path):
    with pytest.raises(ValueError, match="not scores of dataset"):
        C.card_tables("qa-eval.f1", dataset="summeval", baselines=["nope"], **SMALL)
    with pytest.raises(ValueError, match="also listed as a baseline"):
        C.card_tables("qa-eval.f1", dataset="summeval", baselines=["qa-eval.f1"], **SMALL)
    with pytest.raises(ValueError, match="seed"):
        C.card_tables("qa-eval.f1", dataset="summeval", seed=-1, **SMALL)
    path = tmp_path / "two.jsonl"
    path.write_text(json.dumps({"instance_id": "a", "summarizer_id": "b", "metrics": {"m1": 1, "m2": 2}}) + "\n")
    with pytest.raises(ValueError, match="choose one with metric="):
        C.card_tables(path, dataset="summeval", **SMALL)


def test_make_card_renders_html_and_cli(tmp_path, capfd):
    from metaeval.run.cli import main

    out = tmp_path / "card"
    code = main(["card", "qa-eval.f1", "--dataset", "realsumm", "--output", str(out), "--n-resamples", "50",
                 "--planner-trials", "10"])
    assert code == 0
    for name in ("correlations.csv", "tests.csv", "normality.csv", "planner.csv", "summary.md", "provenance.json",
                 "report.html", "card.ipynb"):
        assert (out / name).exists(), name
    assert not (out / "card.html").exists()  # one page: the report
    # the kernel's own diagnostics (its TCP notice) stay out of the terminal (issue 25 item 5)
    assert "TCP" not in capfd.readouterr().err
    html = (out / "report.html").read_text()
    summary = (out / "summary.md").read_text().strip()
    assert "realsumm" in html and summary.splitlines()[0].replace("**", "") in html.replace("<strong>", "").replace(
        "</strong>", "")
    # the rendered card's numbers are the Python API's
    direct = C.card_tables("qa-eval.f1", dataset="realsumm", n_resamples=50, planner_trials=10)
    pd.testing.assert_frame_equal(pd.read_csv(out / "correlations.csv"), direct.correlations, check_dtype=False)
    assert not list(tmp_path.glob(".partial-*"))
    assert main(["card", "qa-eval.f1", "--dataset", "realsumm", "--baselines", "nope", "--no-html",
                 "--output", str(tmp_path / "bad")]) == 2


def test_make_card_from_a_relative_user_path(tmp_path, monkeypatch):
    # the notebook runs in the compendium root: a path relative to the caller's folder must still be found
    ds = metaeval.datasets.load("realsumm")
    _write_metrics_jsonl(tmp_path / "mine.jsonl", ds, "my-metric", ds.matrix("js-2"), ds.systems, ds.inputs)
    monkeypatch.chdir(tmp_path)
    card = make_card("mine.jsonl", dataset="realsumm", output_dir="out", n_resamples=30, planner_trials=5,
                     planner_resamples=10, planner_inputs=[1])
    assert (tmp_path / "out" / "report.html").exists()
    assert card.provenance["scores"] == str(tmp_path / "mine.jsonl")
    assert card.metric == "my-metric.score"
    with pytest.raises(TypeError, match="render=False"):
        make_card(ds, dataset="realsumm", output_dir="x")
    # the library layer does not execute notebooks: it says who does
    with pytest.raises(ValueError, match=r"metaeval\.run\.card\.make_card"):
        C.make_card("mine.jsonl", dataset="realsumm", output_dir="out2")


def test_card_agreement_section_equals_direct_library_calls(qaeval_card):
    card = qaeval_card
    ds = metaeval.datasets.load(card.dataset)
    Z = ds.matrix(card.human)
    X = ds.matrix("qa-eval.f1")
    table = card.agreement
    assert list(table.metric)[0] == "qa-eval.f1" or "qa-eval.f1" in set(table.metric)
    n = len(card.baselines)
    for k, row in table.iterrows():
        V = ds.matrix(row.metric)
        assert row.pairwise_accuracy == metaeval.pairwise_accuracy(V, Z)
        tie = metaeval.tie_calibrated_accuracy(V, Z, level="system")
        assert (row.acc_eq, row.epsilon) == (tie.statistic, tie.epsilon)
        if row.metric == "qa-eval.f1":
            assert np.isnan(row.p_new_better)
            continue
        greater = permutation_test(X, V, Z, coefficient="pairwise-accuracy", n_resamples=100,
                                   rng=np.random.default_rng([3, 5, k]))
        assert row.seed == f"default_rng([3, 5, {k}])"
        assert row.p_new_better == greater.pvalue
        assert row.p_new_better_bonferroni == min(1.0, greater.pvalue * n)
    assert "Pairwise accuracy" in card.summary and "Bonferroni over" in card.summary
