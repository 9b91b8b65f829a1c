"""The atlas on the user's own data (issue 48): notebook 70 takes a dataset folder or an imported name beside
the registered ones, a name that cannot be analysed stops the run before the kernel (it was skipped with exit
0), a skipped dataset heads the conclusions, and a run from the user's folder writes there."""

from __future__ import annotations

import json

import pytest

import metaeval.run.notebooks as nb
from datasets_factory import write_dataset
from metaeval.run.cli import main
from metaeval.studies import atlas


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("atlas_user")
    exp = write_dataset(root / "my_study", "yml", n_systems=6, n_inputs=8, n_refs=2, seed=3)
    return exp


def test_a_dataset_folder_is_an_atlas_dataset_described_from_its_files(study):
    loaded, skipped = atlas.load_datasets(["summeval", str(study.path)])
    assert skipped == {} and list(loaded) == ["summeval", "my_study"]
    entry, ds = loaded["my_study"]
    assert entry.distribution == "user" and entry.default_human == "human.relevance"
    assert (entry.systems, entry.inputs, entry.annotators) == (6, 8, 3) and ds.shape == (6, 8)
    assert set(entry.source_metrics) == set(study.metrics) and "taken as English" in entry.notes


def test_a_name_that_cannot_be_analysed_is_an_error_before_the_kernel(study, monkeypatch, capsys):
    def no_kernel(*args, **kw):
        raise AssertionError("the kernel must not start")

    monkeypatch.setattr(nb, "run_notebook", no_kernel)
    assert atlas.check_names(["summeval", str(study.path)]) == {}
    assert main(["run", "70", "-p", "datasets", json.dumps(["summeval", "my_stdy"])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("metaeval run: -p datasets: my_stdy: neither an atlas dataset")


def test_a_folder_named_relative_to_the_user_reaches_the_kernel(study, monkeypatch):
    """The README's `-p datasets '[summeval, ./my_study]'`, typed in the folder holding my_study: the kernel runs
    in the compendium root, where ./my_study is not (issue 48: "neither an atlas dataset nor a dataset folder")."""
    monkeypatch.chdir(study.path.parent)
    _, params, _ = nb.check_run("70", {"datasets": ["summeval", "./my_study"],
                                       "output_dir": str(study.path.parent / "out")})
    assert params["datasets"] == ["summeval", str(study.path.resolve())]


def test_notebook_70_on_a_users_folder_writes_beside_the_user(study, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    small = ["-p", "max_own", "1", "-p", "levels", '["system"]', "-p", "n_resamples", "50", "-p",
             "n_resamples_accuracy", "10", "-p", "n_permutations", "50", "-p", "ceiling_resamples", "20", "-p",
             "finding_resamples", "50", "-p", "power_trials", "50"]
    lone = write_dataset(tmp_path / "one_system", "yml", n_systems=1, n_inputs=4, seed=1)
    assert main(["run", "70", "-p", "datasets", json.dumps([str(study.path), str(lone.path)]), *small]) == 0
    assert "outputs go to" in capsys.readouterr().err
    out = next((tmp_path / "results").rglob("conclusions.md"))
    table = (out.parent / "datasets.csv").read_text()
    assert "my_study" in table and "analysed" in table
    # a dataset that loads but cannot be analysed heads the conclusions, with why
    assert out.read_text().startswith("**Not analysed:** ") and "only 1 system" in out.read_text().splitlines()[0]


def test_the_index_lists_only_the_runs_of_this_plan(tmp_path):
    """A failure left by an older plan (other parameters, other code) is not listed as current: the committed
    index once showed 22 failures, two of which succeeded by then."""
    from metaeval.run.atlas import write_index
    from metaeval.run.sweep import STATUS

    for folder, state in (("dataset=a__1", "done"), ("dataset=a__0ld", "failed")):
        (tmp_path / "00_dataset_check" / folder).mkdir(parents=True)
        (tmp_path / "00_dataset_check" / folder / STATUS).write_text(json.dumps(
            {"state": state, "params": {"dataset": "a"}, "seconds": 1, "error": "NotebookFailed: old\nValueError: x"}))
    index = write_index(tmp_path, {}, ["a"], ["00_dataset_check"], None, 60.0,
                        current={"00_dataset_check/dataset=a__1"}).read_text()
    assert "failed" not in index and "[00_dataset_check/dataset=a__1](00_dataset_check/dataset=a__1/)" in index


def test_the_finding_matrix_picture_is_in_words_with_a_key():
    """Each cell in words (no "no" / "n/a" codes), each column by its paper, and a key beside the matrix."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    statuses = [atlas.HOLDS, atlas.NOT_HOLDS, atlas.NOT_SHOWN, atlas.NOT_REFUTED, atlas.UNTESTABLE]
    rules = list(atlas.RULES)
    matrix = pd.DataFrame([[statuses[(i + j) % 5] for j in range(len(rules))] for i in range(2)],
                          index=["a", "b"], columns=rules)
    fig, ax = plt.subplots()
    atlas.finding_heatmap(matrix, ax=ax)
    cells = {t.get_text() for t in ax.texts}
    assert cells == {"holds", "does not\nhold", "not\nshown", "not\nrefuted", "cannot\nbe tested"}
    assert [t.get_text().split("\n")[0] for t in ax.get_xticklabels()][0] == atlas.RULES[rules[0]].paper.split(" (")[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()][0] == "holds"
    plt.close(fig)
