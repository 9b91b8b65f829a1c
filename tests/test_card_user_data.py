"""The report card on a user's own spreadsheet, as a new user ran it: 8 systems x 30 documents, human score
"LitePyramid", metric columns "ROUGE-2 F1", "BERTScore", "METEOR (%)" with one empty BERTScore cell, imported with
`metaeval import`, then `metaeval card BERTScore --dataset my_study`.

What it checks: a missing cell stops the card with the setting that fixes it in the form usable where the card
runs (`--incomplete drop-inputs` on the command line, `-p incomplete drop-inputs` for notebook 61), and what the
chosen policy dropped is stated in the card; a plain `BERTScore` column is a default baseline, and the card's
notes name the default baselines it did not find and the columns it does not analyse; the normality line says
"for 20% of inputs" when the range is one number.
"""

from __future__ import annotations

import json
import types

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval.data.formats import DataError
from metaeval.run.cli import main
from metaeval.studies import card as C

SMALL = ["--n-resamples", "50", "--planner-trials", "5"]
SMALL_KW = {"n_resamples": 50, "planner_trials": 5, "planner_resamples": 20, "planner_inputs": (1,)}
N_SYSTEMS, N_DOCS = 8, 30
HOLE = (17, "BERTScore")  # row of the long table left empty: document d02, system sys1


def _study_table(seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    quality = rng.normal(0, 1, N_SYSTEMS)
    rows = []
    for d in range(N_DOCS):
        difficulty = rng.normal(0, 0.5)
        for s in range(N_SYSTEMS):
            h = quality[s] + difficulty + rng.normal(0, 1)
            rows.append({"doc": f"d{d:02d}", "system": f"sys{s}", "LitePyramid": 0.5 + 0.1 * h,
                         "ROUGE-2 F1": 0.15 + 0.03 * h + rng.normal(0, 0.03),
                         "BERTScore": 0.85 + 0.02 * h + rng.normal(0, 0.02),
                         "METEOR (%)": 20 + 3 * h + rng.normal(0, 3)})
    table = pd.DataFrame(rows)
    table.loc[HOLE[0], HOLE[1]] = np.nan
    return table


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """The user's study imported by `metaeval import`, as they did it."""
    root = tmp_path_factory.mktemp("user_card")
    _study_table().to_csv(root / "study.csv", index=False)
    assert main(["import", str(root / "study.csv"), str(root / "my_study")]) == 0
    return root / "my_study"


def _hole(folder):
    ds = metaeval.datasets.load(folder)
    values = ds.matrix("BERTScore", allow_nan=True)
    (i,), (j,) = np.nonzero(np.isnan(values))
    return ds, ds.systems[i], ds.inputs[j]


def test_missing_cell_names_the_cli_option_and_drop_inputs_states_what_it_dropped(study, tmp_path, capsys):
    ds, system, doc = _hole(study)
    out = tmp_path / "card"
    assert main(["card", "BERTScore", "--dataset", str(study), "--no-html", *SMALL, "--output", str(out)]) == 2
    err = capsys.readouterr().err
    # the fix in the form the user can type here, with what each choice leaves out; no Python to write
    assert f"--incomplete drop-inputs (leaves out 1 of {N_DOCS} inputs: {doc})" in err
    assert f"--incomplete drop-systems (leaves out 1 of {N_SYSTEMS} systems: {system})" in err
    assert "ds.require" not in err and "incomplete=" not in err
    assert not out.exists()

    assert main(["card", "BERTScore", "--dataset", str(study), "--no-html", *SMALL, "--output", str(out),
                 "--incomplete", "drop-inputs"]) == 0
    capsys.readouterr()
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["shape"] == [N_SYSTEMS, N_DOCS - 1]
    assert prov["incomplete"] == "drop-inputs" and prov["dropped"] == {"systems": [], "inputs": [doc]}
    assert prov["signature"].endswith("|incomplete:drop-inputs")
    note = f"incomplete = drop-inputs: 1 of {N_DOCS} inputs left out because BERTScore misses a cell there: {doc}"
    assert note in prov["notes"]
    assert f"- Note: {note}." in (out / "summary.md").read_text()
    # the numbers are those of the study without that document
    sub = ds.subset(inputs=[i for i in ds.inputs if i != doc])
    table = pd.read_csv(out / "correlations.csv")
    for _, row in table[table.level.isin(["system", "summary"])].iterrows():
        direct = metaeval.correlate(sub.matrix(row.metric), sub.matrix("LitePyramid"), level=row.level)
        # correlations.csv holds 10 significant digits (metaeval._io.write_table): equal at that precision
        assert row.r == pytest.approx(direct, rel=5e-10, abs=1e-12), (row.metric, row.level)


def test_drop_systems_leaves_out_the_system_and_says_so(study):
    ds, system, _ = _hole(study)
    card = C.card_tables("BERTScore", dataset=str(study), incomplete="drop-systems", **SMALL_KW)
    assert card.shape == (N_SYSTEMS - 1, N_DOCS)
    assert card.provenance["dropped"] == {"systems": [system], "inputs": []}
    assert any(n.startswith("incomplete = drop-systems: 1 of 8 systems left out") and n.endswith(system)
               for n in card.provenance["notes"])
    sub = ds.subset(systems=[s for s in ds.systems if s != system])
    r = card.correlations.query("level == 'system' and metric == 'BERTScore'").r.iloc[0]
    assert r == pytest.approx(metaeval.correlate(sub.matrix("BERTScore"), sub.matrix("LitePyramid")), abs=1e-12)


def test_the_error_names_the_setting_where_the_card_runs(study):
    # Python: the keyword; the rendered card (notebook): -p; a bad policy is refused by name
    with pytest.raises(DataError, match=r"rerun with incomplete='drop-inputs' \(leaves out"):
        C.card_tables("BERTScore", dataset=str(study), **SMALL_KW)
    with pytest.raises(DataError, match=r"rerun with -p incomplete drop-inputs \(leaves out .*or -p incomplete "
                                        r"drop-systems"):
        C.card_tables("BERTScore", dataset=str(study), called_from="notebook", **SMALL_KW)
    with pytest.raises(ValueError, match="incomplete must be one of raise, drop-inputs, drop-systems, got 'keep'"):
        C.card_tables("BERTScore", dataset=str(study), incomplete="keep", **SMALL_KW)
    # an incomplete default baseline: dropping its missing cells, or choosing other baselines, are the fixes
    with pytest.raises(DataError, match=r"or choose baselines without BERTScore with --baselines NAME,NAME"):
        C.card_tables("METEOR (%)", dataset=str(study), called_from="cli", **SMALL_KW)


def test_notebook_61_takes_incomplete_and_names_it_as_a_parameter(study, tmp_path, monkeypatch):
    from metaeval.notebooks import NotebookError, run_notebook

    params = {"scores": "BERTScore", "dataset": str(study), "n_resamples": 50, "planner_trials": 5,
              "planner_resamples": 20, "planner_inputs": [1], "output_dir": str(tmp_path / "bad")}
    with pytest.raises(NotebookError, match=r"-p incomplete drop-inputs"):
        run_notebook("61", params)
    # the rendered card as `metaeval card` runs it: the figures pass the strict layout check
    monkeypatch.setenv("METAEVAL_FIGURE_CHECK", "raise")
    result = run_notebook("61", {**params, "incomplete": "drop-inputs", "output_dir": str(tmp_path / "ok")})
    prov = json.loads((result.output_dir / "provenance.json").read_text())
    assert prov["shape"] == [N_SYSTEMS, N_DOCS - 1] and len(prov["dropped"]["inputs"]) == 1
    assert (result.output_dir / "tests.png").is_file()


def test_metaeval_card_renders_with_incomplete_and_its_error_names_the_flag(study, tmp_path, capsys):
    """The user's exact command, rendered (the card notebook runs): the error still names the flag."""
    assert main(["card", "BERTScore", "--dataset", str(study), *SMALL, "--output", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert "--incomplete drop-inputs" in err and "-p incomplete" not in err


def test_make_card_from_python_names_the_keyword(study, tmp_path):
    from metaeval.run.card import make_card

    with pytest.raises(RuntimeError, match=r"rerun with incomplete='drop-inputs'"):
        make_card("BERTScore", dataset=str(study), output_dir=tmp_path / "c", **SMALL_KW)


def test_plain_bertscore_is_a_default_baseline_and_the_notes_name_what_is_not_analysed(study):
    card = C.card_tables("METEOR (%)", dataset=str(study), incomplete="drop-inputs", **SMALL_KW)
    assert card.baselines == ("ROUGE-2 F1", "BERTScore")
    notes = card.provenance["notes"]
    assert any(n.startswith("no ROUGE-1 or ROUGE-L (F1, under any spelling) in dataset 'my_study', so they are not "
                            "among the default baselines") for n in notes), notes
    # the BERTScore card: BERTScore is the new metric, not a missing baseline; METEOR is named as not analysed
    card = C.card_tables("BERTScore", dataset=str(study), incomplete="drop-inputs", **SMALL_KW)
    assert card.baselines == ("ROUGE-2 F1",)
    notes = card.provenance["notes"]
    assert not any("BERTScore (F1" in n or "or BERTScore" in n for n in notes), notes
    assert "1 metric score of dataset 'my_study' not analysed: METEOR (%) (compare with any of them with " \
           "baselines=[...])" in notes
    assert card.provenance["not_analysed"] == ["METEOR (%)"]
    # the summary is Markdown: the user's names are escaped there (metaeval._markup.md_text; an intraword _ stays,
    # CommonMark never reads it as emphasis), plain in provenance
    assert "- Note: 1 metric score of dataset 'my_study' not analysed: METEOR (%)" in card.summary


@pytest.mark.parametrize("spelling", ["BERTScore", "bertscore", "BERTScore-F", "bert_score f1", "BERTScore F1",
                                      "bert-score"])
def test_bertscore_under_any_spelling(spelling):
    frame = pd.DataFrame({"doc": np.repeat(["a", "b", "c"], 3), "model": ["A", "B", "C"] * 3,
                          "relevance": np.arange(9.0), spelling: np.arange(9.0) ** 2, "ROUGE-L": np.ones(9),
                          "BERTScore-P": np.zeros(9)})
    ds = metaeval.datasets.from_frame(frame, human="relevance")
    assert C.default_baselines(ds) == ["ROUGE-L", spelling]


def test_a_plain_name_is_f1_so_not_a_recall_baseline():
    realsumm = metaeval.datasets.load("realsumm")  # recall-oriented: a name without a statistic is F1, not recall
    assert C._family("BERTScore", "R") is None and C._family("bertscore.recall", "R") == ("bertscore", 0)
    assert C.default_baselines(realsumm) == ["rouge-1.recall", "rouge-2.recall", "rouge-l.recall", "bertscore.recall"]


def test_normality_wording_when_the_range_is_one_number():
    data = types.SimpleNamespace(options=C.CardOptions(), name=str)
    norm = pd.DataFrame({"score": ["h", "m"], "system_pvalue": [0.5, 0.6], "summary_percent_rejected": [20.0, 20.0]})
    line = C._summarize_normality(data, norm)[0]
    assert "per input, for 20% of inputs." in line and "20% to 20%" not in line
    norm["summary_percent_rejected"] = [3.3, 6.7]
    assert "per input, for 3% to 7% of inputs." in C._summarize_normality(data, norm)[0]


def test_a_table_without_standard_metrics_is_carded_against_its_other_metrics(tmp_path):
    """Issue 48: two metrics and a human column, no ROUGE and no texts: the card stopped on "no standard
    baseline"; it compares the metric with the dataset's other metrics and says the standard ones are absent."""
    from metaeval.data.tabular import import_table

    g = np.random.default_rng(4)
    frame = pd.DataFrame([{"story_id": f"s{d}", "model": f"m{k}", "bleu_like": g.random(), "nli_faith": g.random(),
                           "rater_quality": float(k + g.random())} for d in range(6) for k in range(5)])
    import_table(frame, tmp_path / "study", doc="story_id")
    data = C.card_data("nli_faith", dataset=str(tmp_path / "study"))
    assert data.baselines == ("bleu_like",) and data.human == "rater_quality"
    assert any(n.startswith("no ROUGE-1, ROUGE-2, ROUGE-L or BERTScore") for n in data.notes)
