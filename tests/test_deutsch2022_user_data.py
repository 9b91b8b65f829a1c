"""Notebook 24 (Deutsch et al. 2022) on a user's imported dataset: defaults from the dataset, the user's score
names kept, the replicability section skipped with a note when it cannot apply, and an ``incomplete`` parameter.

The dataset is the one a user reported: 8 systems x 30 documents, human score "LitePyramid", metric columns
"ROUGE-2 F1", "BERTScore" and "METEOR (%)", one empty BERTScore cell, imported with ``metaeval import``.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval.data.formats import DataError, DataWarning
from metaeval.notebooks import run_notebook
from metaeval.run.cli import main
from metaeval.run.paths import NotebookError
from metaeval.run.params import ParameterError
from metaeval.studies import deutsch2022 as d22

N_SYSTEMS, N_DOCS = 8, 30
METRICS = ["BERTScore", "METEOR (%)", "ROUGE-2 F1"]  # the dataset's order (sorted names)
EMPTY = ("sys3", "doc07")  # the empty BERTScore cell
SMALL = {"n_resamples": 100, "n_permutations": 100, "stability_trials": 20, "seed": 0}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The user's table imported into a dataset folder, as the user did."""
    rng = np.random.default_rng(7)
    quality = np.linspace(0.0, 1.0, N_SYSTEMS)
    rows = []
    for i in range(N_SYSTEMS):
        for j in range(N_DOCS):
            doc = rng.normal(0, 0.1)
            rows.append({
                "doc": f"doc{j:02d}", "system": f"sys{i}",
                "LitePyramid": 0.3 + 0.3 * quality[i] + doc + rng.normal(0, 0.1),
                "ROUGE-2 F1": 0.12 + 0.06 * quality[i] + 0.5 * doc + rng.normal(0, 0.03),
                "BERTScore": 0.2 + 0.1 * quality[i] + 0.5 * doc + rng.normal(0, 0.05),
                "METEOR (%)": 18 + 8 * quality[i] + 30 * doc + rng.normal(0, 3),
            })
    frame = pd.DataFrame(rows)
    frame.loc[(frame["system"] == EMPTY[0]) & (frame["doc"] == EMPTY[1]), "BERTScore"] = np.nan
    root = tmp_path_factory.mktemp("d22_user")
    frame.to_csv(root / "my.csv", index=False)
    assert main(["import", str(root / "my.csv"), str(root / "my_study"), "--human", "LitePyramid"]) == 0
    return root / "my_study"


@pytest.fixture(scope="module")
def ds(folder):
    return metaeval.datasets.load(folder)


def _choice(ds, metrics=None):
    return d22.choose_metrics(ds, metrics, human="LitePyramid", embedded=d22.is_embedded(str(ds.name), ds))


def _stdout(out) -> str:
    nb = json.loads(next(out.glob("*.ipynb")).read_text())
    return "".join("".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code"
                   for o in c.get("outputs", []) if o.get("name") == "stdout")


# -- the library: defaults and checks ------------------------------------------------------------------------


def test_user_names_kept_and_embedded_labels(ds):
    choice = _choice(ds)
    assert not d22.is_embedded(str(ds.name), ds)
    # every non-human score, under the user's own names (not the paper's "ROUGE-2")
    assert choice.scores == METRICS and choice.names == METRICS
    realsumm = metaeval.datasets.load("realsumm")
    paper = d22.choose_metrics(realsumm, None, human=realsumm.default_human, embedded=True)
    assert paper.labels["rouge-2.recall"] == "ROUGE-2"
    # a path to data stays user data, even named like an embedded dataset
    assert not d22.is_embedded("/somewhere/realsumm", realsumm)


def test_metrics_checked_with_the_users_names(ds):
    with pytest.raises(DataError, match=r"no score 'ROUGE-1' \(its metric scores: BERTScore, METEOR \(%\), ROUGE-2 F1\)"):
        _choice(ds, ["ROUGE-1", "ROUGE-2 F1"])
    with pytest.raises(DataError, match=r"needs at least 2, got \['ROUGE-2 F1'\]"):
        _choice(ds, ["ROUGE-2 F1"])
    with pytest.raises(DataError, match="ground truth"):
        _choice(ds, ["LitePyramid", "ROUGE-2 F1"])


def test_bucket_default_from_the_dataset(ds):
    choice = _choice(ds)
    bucket = d22.choose_bucket(ds, None, choice, human="LitePyramid")
    # no ROUGE-1: the first metric, and the note says which and in which units
    assert (bucket.score, bucket.label, bucket.human) == ("BERTScore", "BERTScore", False)
    assert "has no ROUGE-1" in bucket.note and "BERTScore (×100, as its values are at most 1)" in bucket.note
    mine = d22.choose_metrics(ds, ["METEOR (%)", "ROUGE-2 F1"], human="LitePyramid", embedded=False)
    assert d22.choose_bucket(ds, None, mine, human="LitePyramid").score == "METEOR (%)"
    assert "METEOR (%) (as stored)" in d22.choose_bucket(ds, None, mine, human="LitePyramid").note
    assert d22.choose_bucket(ds, "human", choice, human="LitePyramid").human
    assert d22.choose_bucket(ds, "ROUGE-2 F1", choice, human="LitePyramid").note is None
    with pytest.raises(ValueError, match=r"one of the metrics \['BERTScore', 'METEOR \(%\)', 'ROUGE-2 F1'\].*"
                                         r"got 'ROUGE-1'; set it with -p bucket_score NAME"):
        d22.choose_bucket(ds, "ROUGE-1", choice, human="LitePyramid")


def test_bucket_default_is_a_users_rouge1(ds):
    frame = pd.DataFrame({"doc": list("aabbcc"), "system": list("xyxyxy"), "LitePyramid": [.5, .4, .6, .3, .5, .2],
                          "METEOR": [20., 15., 25., 12., 18, 11], "ROUGE_1_F": [.4, .3, .5, .2, .4, .1]})
    other = metaeval.datasets.from_frame(frame, name="study", human="LitePyramid")
    choice = d22.choose_metrics(other, None, human="LitePyramid", embedded=False)
    bucket = d22.choose_bucket(other, None, choice, human="LitePyramid")
    assert (bucket.score, bucket.label, bucket.note) == ("ROUGE_1_F", "ROUGE_1_F", None)
    summeval = metaeval.datasets.load("summeval")
    paper = d22.choose_metrics(summeval, ["qa-eval.f1", "rouge-2.f1"], human="expert.relevance", embedded=True)
    # the embedded data keep the paper's label even when ROUGE-1 is not among the metrics
    bucket = d22.choose_bucket(summeval, None, paper, human="expert.relevance")
    assert (bucket.score, bucket.label, bucket.note) == ("rouge-1.f1", "ROUGE-1", None)


def test_incomplete_checked_before_anything_runs(ds):
    used = ["LitePyramid", *METRICS]
    with pytest.raises(DataError, match=r"'BERTScore' \(1 cell\) missing in 1 of 240 cells \(e.g. \(sys3, doc07\)\).*"
                                        r"to drop-inputs or drop-systems \(`-p incomplete drop-inputs`.*\(drop-inputs leaves out 1 of "
                                        r"30 inputs, drop-systems 1 of 8 systems\)") as info:
        d22.check_complete(ds, used, "raise")
    assert "keep-nan" not in str(info.value)  # notebook 24 refuses it
    d22.check_complete(ds, ["LitePyramid", "METEOR (%)", "ROUGE-2 F1"], "raise")  # the others are complete
    d22.check_complete(ds, used, "drop-inputs")
    with pytest.raises(ValueError, match="incomplete must be one of"):
        d22.check_complete(ds, used, "keep-nan")
    with pytest.warns(DataWarning, match="sys3"):
        reduced = ds.require(scores=used, incomplete="drop-systems")
    note = d22.dropped_note(ds, reduced, "drop-systems", used)
    assert note.startswith("incomplete = 'drop-systems': dropped 1 of 8 systems (sys3), where BERTScore has")
    assert d22.dropped_note(ds, ds, "drop-inputs", used) is None


def test_replication_plan_skips_with_a_reason(ds, folder):
    choice = _choice(ds)
    plan = d22.replication_plan(str(folder), ds, ["summeval", "realsumm"], choice)
    assert plan.skipped and "does not include this dataset (my_study)" in plan.note
    assert d22.replication_plan(str(folder), ds, [], choice).note.startswith("replicate_on is empty")
    # the user's two metrics: only ROUGE-2 F1 is in SummEval (as its ROUGE-2); METEOR (%) is not METEOR
    mine = d22.choose_metrics(ds, ["METEOR (%)", "ROUGE-2 F1"], human="LitePyramid", embedded=False)
    plan = d22.replication_plan(str(folder), ds, [str(folder), "summeval"], mine)
    assert plan.skipped and "1 of this notebook's metrics (ROUGE-2 F1)" in plan.note
    # BERTScore and ROUGE-2 F1 match SummEval's BERTScore and ROUGE-2: the table runs, under the user's names
    plan = d22.replication_plan(str(folder), ds, [str(folder), "summeval"], choice)
    assert not plan.skipped
    assert plan.metrics == {"my_study": {"BERTScore": "BERTScore", "ROUGE-2 F1": "ROUGE-2 F1"},
                            "summeval": {"BERTScore": "bertscore.recall", "ROUGE-2 F1": "rouge-2.f1"}}
    assert plan.datasets["my_study"] is None  # this dataset's own tests


def test_replication_plan_checks_the_other_datasets_cells(ds, folder, tmp_path):
    # the user's dataset as the *other* one, from summeval's point of view: its BERTScore misses a cell
    summeval = metaeval.datasets.load("summeval")
    choice = d22.choose_metrics(summeval, ["rouge-2.f1", "bertscore.recall"], human="expert.relevance",
                                embedded=True)
    with pytest.raises(DataError, match="'BERTScore' \\(1 cell\\) missing in 1 of 240 cells"):
        d22.replication_plan("summeval", summeval, ["summeval", str(folder)], choice)
    plan = d22.replication_plan("summeval", summeval, ["summeval", str(folder)], choice, incomplete="drop-inputs")
    assert plan.metrics["my_study"] == {"ROUGE-2": "ROUGE-2 F1", "BERTScore": "BERTScore"}


# -- the notebook on the user's dataset (each run about 6 s) -------------------------------------------------


def test_notebook_defaults_stop_before_the_kernel_on_a_missing_cell(folder, tmp_path):
    # the preflight (metaeval.run.preflight) finds the missing cell of a score the run derives from the data
    # before any kernel starts: nothing is written, not even a failed folder
    out = tmp_path / "out"
    with pytest.raises(NotebookError, match=r"dataset 'my_study': 'BERTScore' \(1 cell\) missing in 1 of 240 cells.*"
                                            r"-p incomplete drop-inputs"):
        run_notebook("24", {"dataset": str(folder), "output_dir": str(out), **SMALL})
    assert not out.exists() and not list(tmp_path.glob("out*.failed"))


def test_notebook_defaults_with_drop_inputs(folder, ds, tmp_path):
    out = run_notebook("24", {"dataset": str(folder), "output_dir": str(tmp_path / "out"), "incomplete": "drop-inputs",
                              **SMALL}).output_dir
    delta = pd.read_csv(out / "delta_correlations.csv")
    table = pd.read_csv(out / "agreement_table.csv").set_index("metric")
    assert list(delta["metric"].unique()) == METRICS  # the user's names, not "ROUGE-2"
    assert sorted(table.index) == METRICS
    reduced = ds.subset(inputs=[d for d in ds.inputs if d != EMPTY[1]])
    Z = reduced.matrix("LitePyramid")
    for name in METRICS:
        assert table.loc[name, "pairwise_accuracy"] == pytest.approx(
            metaeval.pairwise_accuracy(reduced.matrix(name), Z), abs=1e-4)
    text = (out / "delta_conclusions.md").read_text()
    assert "dropped 1 of 30 inputs (doc07), where BERTScore has missing cells" in text
    # the paper's buckets by default: each metric's own differences, no bucket score to choose
    assert "has no ROUGE-1" not in text and "10 % of pairs closest by its own score (3 pairs" in text
    assert delta["percent"].tolist()[:10] == list(range(10, 101, 10))
    assert not (out / "replicability.csv").exists()
    assert "Replicability skipped: replicate_on = ['summeval', 'realsumm'] does not include this dataset" in _stdout(out)


def test_notebook_users_two_metrics_complete_without_replicability(folder, tmp_path):
    # the reported run: it computed everything, then failed in the replicability cell
    params = {"dataset": str(folder), "output_dir": str(tmp_path / "out"), "metrics": ["METEOR (%)", "ROUGE-2 F1"],
              "replicate_on": [str(folder), "summeval"], **SMALL}
    out = run_notebook("24", params).output_dir
    assert sorted(pd.read_csv(out / "agreement_table.csv")["metric"]) == ["METEOR (%)", "ROUGE-2 F1"]
    assert not (out / "replicability.csv").exists()
    assert "Replicability skipped: 1 of this notebook's metrics (ROUGE-2 F1) is in every dataset" in _stdout(out)


def test_notebook_refuses_keep_nan_before_running(folder, tmp_path):
    # every statistic here needs full cells: the runner refuses keep-nan before a kernel starts
    with pytest.raises(ParameterError, match=re.escape("'incomplete' must be one of raise | drop-inputs | drop-")):
        run_notebook("24", {"dataset": str(folder), "output_dir": str(tmp_path / "out"), "incomplete": "keep-nan"})
    assert not list(tmp_path.iterdir())


def test_notebook_fixed_bands_with_an_empty_bucket(folder, tmp_path):
    # issue 38: an empty band read "tau = nan [1.00, 1.00] over the 0 pairs", with an interval in the CSV
    params = {"dataset": str(folder), "output_dir": str(tmp_path / "out"), "incomplete": "drop-inputs",
              "deltas": [[0, 0.001], [0.001, 1000]], "replicate_on": [], **SMALL}
    out = run_notebook("24", params).output_dir
    delta = pd.read_csv(out / "delta_correlations.csv")
    first = delta[delta["low"] == 0]
    assert (first["n_pairs"] == 0).all()
    assert first[["statistic", "ci_low", "ci_high"]].isna().all().all()
    text = (out / "delta_conclusions.md").read_text()
    assert "has no ROUGE-1: the delta buckets are differences in its first metric, BERTScore" in text
    assert "no pairs 0–0.001 points apart" in text and "nan" not in text and "0 pairs" not in text
