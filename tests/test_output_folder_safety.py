"""Output-folder safety rules: the runner, interactive runs and the card write only folders that are new or
hold their own manifest with matching hashes, refuse the compendium, home, `/`, `results/`, `data/`, `lib/` in
every mode, and never remove or overwrite a file they did not write (issues 15 and 24)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from metaeval.run import notebooks as nbrun
from metaeval.run.cli import main as cli
from metaeval.run.outputs import OutputDirError, check_target, clean_stale, manifest_name

ROOT = nbrun.project_root()

def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _top(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


@pytest.mark.parametrize("given, words", [
    (".", "root of the compendium"),
    ("results", "results/ folder, which holds every notebook's results"),
    ("data", "data/ folder"),
    ("lib/metaeval", "lib/ folder"),
    ("notebooks", "notebooks/ folder"),
    ("/", "root of the file system"),
])
def test_runner_refuses_the_compendium_and_its_folders(given, words):
    before = _top(ROOT)
    with pytest.raises(OutputDirError, match=f"refusing output_dir '{given}'.*{words}"):
        nbrun.check_run("23", {"output_dir": given})
    assert _top(ROOT) == before


def test_runner_refuses_a_parent_of_the_compendium():
    with pytest.raises(OutputDirError, match="it contains the compendium"):
        nbrun.check_run("23", {"output_dir": str(ROOT.parent)})


def test_runner_refuses_the_home_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(OutputDirError, match="it is your home folder"):
        nbrun.check_run("23", {"output_dir": str(tmp_path)})


def test_runner_refuses_a_folder_with_unrelated_files(tmp_path):
    (tmp_path / "thesis.tex").write_text("years of work")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "data.csv").write_text("1,2\n")
    with pytest.raises(OutputDirError, match=r"not empty and was not written by metaeval .*sub, thesis\.tex"):
        nbrun.run_notebook("23", {"output_dir": str(tmp_path)})
    assert (tmp_path / "thesis.tex").read_text() == "years of work"
    assert (tmp_path / "sub" / "data.csv").exists()
    assert _top(tmp_path) == {"thesis.tex", "sub"}  # no staging folder either


def test_runner_refuses_a_file_as_output_dir(tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("x")
    with pytest.raises(OutputDirError, match="it is a file, not a folder"):
        nbrun.check_run("23", {"output_dir": str(target)})


def test_runner_refuses_another_notebooks_results(tmp_path):
    (tmp_path / "table.csv").write_text("a\n1\n")
    (tmp_path / manifest_name("30_lin2004")).write_text(
        json.dumps({"notebook": "30_lin2004", "paper": "lin2004", "files": {"table.csv": "0"}}))
    with pytest.raises(OutputDirError, match="holds the results of notebook '30_lin2004' .another paper than "
                                             "'deutsch2021'., not '23_deutsch"):
        nbrun.check_run("23", {"output_dir": str(tmp_path)})


def test_runner_allows_a_new_or_empty_folder(tmp_path):
    assert nbrun.check_run("23", {"output_dir": str(tmp_path / "new")})[2] == tmp_path / "new"
    assert nbrun.check_run("23", {"output_dir": str(tmp_path)})[2] == tmp_path


def test_cli_refuses_output_dir_dot_with_one_line(capsys):
    before = _top(ROOT)
    assert cli(["run", "23", "-p", "output_dir", "."]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "refusing output_dir '.'" in err[0] and "root of the compendium" in err[0]
    assert _top(ROOT) == before


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """One real run of the normality notebook (a few seconds)."""
    out = tmp_path_factory.mktemp("run") / "normality"
    nbrun.run_notebook("23", {"output_dir": str(out)})
    return out


STEM23 = nbrun.find_notebook("23").stem


def test_a_run_leaves_a_manifest_of_what_it_wrote(finished_run):
    name = manifest_name(STEM23)
    manifest = json.loads((finished_run / name).read_text())
    assert manifest["notebook"] == STEM23 and manifest["status"] == "done" and manifest["paper"] == "deutsch2021"
    assert manifest["files"] == {k: v for k, v in _tree(finished_run).items() if k != name}


def test_a_run_may_replace_its_own_previous_run(finished_run):
    assert check_target(finished_run, STEM23) == finished_run


def test_a_previous_run_with_an_added_file_is_not_replaced(finished_run):
    extra = finished_run / "my_notes.md"
    extra.write_text("mine")
    try:
        with pytest.raises(OutputDirError, match=r"files no previous run wrote \(my_notes\.md\)"):
            nbrun.run_notebook("23", {"output_dir": str(finished_run)})
        assert extra.read_text() == "mine"
    finally:
        extra.unlink()


def test_a_previous_run_with_an_edited_file_is_not_replaced(finished_run):
    table = next(p for p in finished_run.glob("*.csv"))
    original = table.read_bytes()
    table.write_bytes(original + b"# my correction\n")
    try:
        with pytest.raises(OutputDirError, match=f"were edited since \\({table.name}\\)"):
            nbrun.check_run("23", {"output_dir": str(finished_run)})
    finally:
        table.write_bytes(original)


def test_failed_run_keeps_previous_results_and_its_own_in_failed_folder(finished_run):
    before = _tree(finished_run)
    with pytest.raises(nbrun.NotebookFailed, match=r"failed in cell \d+ .*DataError.*\.failed.*untouched"):
        # a human score the dataset lacks fails in a cell (a dataset that does not load fails before the kernel)
        nbrun.run_notebook("23", {"output_dir": str(finished_run), "human": "no-such-score"})
    assert _tree(finished_run) == before
    failed = finished_run.parent / f"{finished_run.name}.{STEM23}.failed"
    note = (failed / "FAILED.txt").read_text()
    assert "failed in cell" in note and "no-such-score" in note
    assert json.loads((failed / manifest_name(STEM23)).read_text())["status"] == "failed"
    assert any(p.suffix == ".ipynb" for p in failed.iterdir())  # the executed notebook, up to the failing cell
    assert not [p for p in finished_run.parent.iterdir() if p.name.startswith(".partial")]


def test_notebooks_of_one_paper_share_a_folder_each_replacing_only_its_files(finished_run, tmp_path):
    shared = tmp_path / "deutsch"
    nbrun.run_notebook("23", {"output_dir": str(shared)})
    mine = _tree(shared)
    nbrun.run_notebook("20", {"output_dir": str(shared), "n_trials": 2, "n_resamples": 20})
    both = _tree(shared)
    assert {k: v for k, v in both.items() if k in mine} == mine  # 23's files kept, byte for byte
    stem20 = nbrun.find_notebook("20").stem
    assert f"{stem20}.ipynb" in both and manifest_name(stem20) in both
    nbrun.run_notebook("23", {"output_dir": str(shared)})  # a rerun of 23 keeps 20's files
    again = _tree(shared)
    assert {k: v for k, v in again.items() if k in both and k not in mine} == {
        k: v for k, v in both.items() if k not in mine}
    (shared / "mine.txt").write_text("x")
    with pytest.raises(OutputDirError, match=r"files no previous run wrote \(mine\.txt\)"):
        nbrun.check_run("20", {"output_dir": str(shared)})


def test_stale_staging_of_killed_runs_is_cleaned_live_ones_kept(tmp_path):
    final = tmp_path / "out"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".partial-out-{dead.pid}"
    stale.mkdir()
    (stale / "half.csv").write_text("a,b\n1,")
    (stale / ".metaeval-staging").touch()  # what staging_dir marks its folders with
    old = tmp_path / f".old-out-{dead.pid}"
    old.mkdir()
    (old / ".metaeval-run.20_deutsch2021_ci_simulation.json").write_text("{}")  # a backup of a run folder
    live = tmp_path / f".partial-out-{os.getppid()}"
    live.mkdir()
    removed = clean_stale(final)
    assert set(removed) == {stale, old}
    assert not stale.exists() and not old.exists() and live.exists()


def test_safe_reruns_never_write_over_canonical_results():
    canonical = nbrun.resolve_output_dir("23")
    declared = nbrun.notebook_parameters("23")["output_dir"]
    if declared is None:  # results/<paper>/<dataset>, shared by the notebooks of the paper (20-23)
        dataset = nbrun.notebook_parameters("23")["dataset"]
        assert canonical == ROOT / "results" / "deutsch2021" / dataset
    else:
        assert canonical == ROOT / declared
    other = nbrun.resolve_output_dir("23", {"seed": 5})
    assert other.relative_to(ROOT).parts[:2] == ("results", "runs")
    assert other.name.startswith("seed=5__")
    assert nbrun.resolve_output_dir("23", {"seed": 5}) == other  # stable name
    assert nbrun.resolve_output_dir("23", {"seed": 6}) != other
    # the defaults given explicitly are the canonical run
    defaults = {k: v for k, v in nbrun.notebook_parameters("23").items() if k != "output_dir"}
    assert nbrun.resolve_output_dir("23", defaults) == canonical


def test_a_users_folder_named_like_an_embedded_dataset_does_not_take_its_place(tmp_path):
    own = tmp_path / "summeval"
    own.mkdir()
    target = nbrun.resolve_output_dir("23", {"dataset": str(own)})
    # named by its resolved path: readable name plus a short hash, beside the embedded dataset's folder
    assert target.parent == ROOT / "results" / "deutsch2021"
    assert target.name.startswith("summeval-") and target != nbrun.resolve_output_dir("23", {"dataset": "summeval"})


def test_stale_cleanup_leaves_a_user_folder_named_like_staging(tmp_path):
    # a folder that merely looks like a dead run's staging (no marker, no manifest) is the user's: kept
    from metaeval.run.outputs import clean_stale, staging_dir

    final = tmp_path / "out"
    theirs = tmp_path / ".partial-out-999999999"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    ours = staging_dir(final)  # marked
    dead = tmp_path / ".partial-out-999999998"
    os.replace(ours, dead)
    removed = clean_stale(final)
    assert removed == [dead] and (theirs / "notes.txt").read_text() == "mine"


def test_a_staging_mark_copied_into_a_users_folder_does_not_make_it_removable(tmp_path):
    # only a folder the runner named and marked goes whole; a user's folder holding a copied mark needs manifests
    from metaeval._outputs import STAGING_MARK, remove_run_folder

    theirs = tmp_path / "my-results"
    theirs.mkdir()
    (theirs / STAGING_MARK).touch()
    (theirs / "notes.txt").write_text("mine")
    assert remove_run_folder(theirs) is False and (theirs / "notes.txt").read_text() == "mine"


def test_card_never_replaces_a_folder_it_did_not_write(tmp_path):
    from metaeval.studies.card import make_card

    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    with pytest.raises(ValueError, match="not empty and was not written by metaeval"):
        make_card(tmp_path / "scores.jsonl", dataset="summeval", output_dir=out)
    assert (out / "thesis.tex").read_text() == "precious"


def test_a_relative_dataset_path_is_read_from_where_the_user_is(tmp_path, monkeypatch):
    # the kernel runs in the compendium root; `-p dataset my_study` means the folder beside the user
    from metaeval.run.notebooks import check_run

    (tmp_path / "my_study").mkdir()
    monkeypatch.chdir(tmp_path)
    _, params, _ = check_run("23", {"dataset": "my_study", "output_dir": str(tmp_path / "out")})
    assert params["dataset"] == str(tmp_path / "my_study")
    _, params, _ = check_run("23", {"dataset": "realsumm", "output_dir": str(tmp_path / "out2")})
    assert params["dataset"] == "realsumm"



# ----------------------------------------------------------------------------------------------------
# Issue 24: the card follows the runner's rules (one mechanism), hand reruns never write over a run's folder,
# user datasets are keyed by their resolved path

CARD_SMALL = ["--n-resamples", "20", "--planner-trials", "5"]


def _card(args, out) -> int:
    return cli(["card", "qa-eval.f1", "--dataset", "realsumm", "--output", str(out), *CARD_SMALL, *args])


@pytest.mark.parametrize("mode", [[], ["--no-html"]])
def test_card_refuses_a_users_folder_even_with_a_card_html_in_it(tmp_path, capsys, mode):
    """Case 1 (HTML mode: notes.txt was deleted, exit 0) and case 2 (--no-html: summary.md overwritten)."""
    out = tmp_path / "d"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "card.html").write_text("<p>my own page</p>")
    (out / "summary.md").write_text("my summary")
    before = _tree(out)
    assert _card(mode, out) == 2
    err = capsys.readouterr().err
    assert "not written by metaeval" in err and "Traceback" not in err
    assert _tree(out) == before
    assert _top(tmp_path) == {"d"}  # no staging left behind


@pytest.mark.parametrize("where", ["root", "home", "results", "data", "lib", "slash"])
@pytest.mark.parametrize("mode", [[], ["--no-html"]])
def test_card_refuses_protected_folders_in_every_mode(tmp_path, monkeypatch, capsys, where, mode):
    """Case 2: `--no-html --output .` in the checkout root or `--output $HOME` wrote 6 files there."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    target = {"root": ROOT, "home": home, "results": ROOT / "results", "data": ROOT / "data",
              "lib": ROOT / "lib", "slash": Path("/")}[where]
    before = _top(target) if where != "slash" else None
    monkeypatch.chdir(target if where in ("root", "home") else tmp_path)
    given = "." if where in ("root", "home") else str(target)
    assert cli(["card", "qa-eval.f1", "--dataset", "realsumm", "--output", given, *CARD_SMALL, *mode]) == 2
    assert "refusing" in capsys.readouterr().err
    if before is not None:
        assert _top(target) == before


def test_card_replaces_only_its_own_unchanged_card(tmp_path):
    from metaeval.studies.card import make_card

    out = tmp_path / "card"
    small = {"n_resamples": 20, "planner_trials": 5, "planner_resamples": 10, "planner_inputs": [1]}
    make_card("qa-eval.f1", dataset="realsumm", output_dir=out, render=False, **small)
    manifest = json.loads((out / manifest_name("card")).read_text())
    assert set(manifest["files"]) == {"correlations.csv", "tests.csv", "agreement.csv", "normality.csv", "planner.csv",
                                      "summary.md", "provenance.json"}
    make_card("qa-eval.f1", dataset="realsumm", output_dir=out, render=False, **{**small, "seed": 1})  # its own: ok
    (out / "summary.md").write_text("edited by hand")
    with pytest.raises(OutputDirError, match="edited since"):
        make_card("qa-eval.f1", dataset="realsumm", output_dir=out, render=False, **small)
    assert (out / "summary.md").read_text() == "edited by hand"


def test_an_executed_notebook_injects_no_output_dir(finished_run):
    """Case 3: the injected cell said output_dir = "results/deutsch2021/summeval", so a hand rerun in
    JupyterLab rewrote the canonical tables."""
    nb = json.loads((finished_run / f"{STEM23}.ipynb").read_text())
    injected = ["".join(c["source"]) for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert len(injected) == 1 and "output_dir = None" in injected[0]
    assert str(finished_run) not in injected[0] and ".partial-" not in json.dumps(nb)
    assert nb["metadata"]["papermill"]["parameters"]["output_dir"] is None


def test_a_hand_run_naming_a_runs_folder_writes_beside_it(tmp_path, monkeypatch, capsys):
    """Case 3: an output_dir copied from an executed notebook, or typed by hand, that names a run's folder."""
    from metaeval.run.session import start

    monkeypatch.setenv("METAEVAL_ROOT", str(tmp_path))
    canonical = tmp_path / "results" / "deutsch2021" / "summeval"
    canonical.mkdir(parents=True)
    (canonical / manifest_name(STEM23)).write_text(json.dumps({"notebook": STEM23, "files": {}}))
    nb = start("deutsch2021", "summeval", output_dir="results/deutsch2021/summeval")
    assert nb.out == tmp_path / "results" / "runs" / "deutsch2021" / "summeval" / "interactive"
    assert "only the runner replaces" in capsys.readouterr().out
    assert _top(canonical) == {manifest_name(STEM23)}


def test_editor_artefacts_do_not_block_a_run_and_are_kept(tmp_path):
    """Case 3: opening an executed notebook in JupyterLab creates .ipynb_checkpoints/, after which
    `metaeval run 23` refused the canonical folder ("holds files no previous run wrote")."""
    out = tmp_path / "normality"
    nbrun.run_notebook("23", {"output_dir": str(out)})
    checkpoints = out / ".ipynb_checkpoints"
    checkpoints.mkdir()
    (checkpoints / f"{STEM23}-checkpoint.ipynb").write_text("{}")
    (out / "__pycache__").mkdir()
    (out / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert check_target(out, STEM23) == out
    nbrun.run_notebook("23", {"output_dir": str(out)})
    assert (checkpoints / f"{STEM23}-checkpoint.ipynb").read_text() == "{}"  # carried over, not deleted
    manifest = json.loads((out / manifest_name(STEM23)).read_text())
    assert not [f for f in manifest["files"] if "checkpoint" in f or "__pycache__" in f]


def test_every_editor_artefact_is_git_ignored():
    from metaeval.run.outputs import EDITOR_ARTEFACTS

    ignored = (ROOT / ".gitignore").read_text().split()
    assert [a for a in EDITOR_ARTEFACTS if a not in ignored] == []


def test_two_user_datasets_of_the_same_name_get_different_folders(tmp_path):
    """Case 4: `study/` in two places shared results/<paper>/study/; the second run replaced the first."""
    a, b = tmp_path / "lab-a" / "study", tmp_path / "lab-b" / "study"
    for folder in (a, b):
        folder.mkdir(parents=True)
    out_a = nbrun.resolve_output_dir("23", {"dataset": str(a)})
    out_b = nbrun.resolve_output_dir("23", {"dataset": str(b)})
    assert out_a != out_b and out_a.parent == out_b.parent == ROOT / "results" / "deutsch2021"
    assert out_a.name.startswith("study-") and out_b.name.startswith("study-")
    assert nbrun.resolve_output_dir("23", {"dataset": str(a)}) == out_a  # stable
    assert str(tmp_path) not in str(out_a)  # a readable name and a hash, not the machine's path


def test_a_dataset_path_with_dotdot_is_named_after_the_folder_it_means(tmp_path, monkeypatch):
    """Case 11: `-p dataset some/dir/..` named its run folder `..`."""
    from metaeval.run.notebooks import check_run

    (tmp_path / "some" / "dir").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    for given in ("some/dir/..", str(tmp_path / "some" / "dir" / "..")):
        _, params, final = check_run("23", {"dataset": given})
        assert params["dataset"] == str(tmp_path / "some")
        assert final.name.startswith("some-") and ".." not in final.parts


def test_run_of_a_file_that_is_not_a_notebook_is_one_line(tmp_path, capsys):
    """Case 9 (second half): `metaeval run garbage.ipynb` printed an nbformat NotJSONError traceback."""
    bad = tmp_path / "garbage.ipynb"
    bad.write_bytes(b"\x00\x01 not json at all")
    assert cli(["run", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not a Jupyter notebook" in err[0] and "Traceback" not in err[0]
    (tmp_path / "list.ipynb").write_text("[1, 2]")
    assert cli(["run", str(tmp_path / "list.ipynb")]) == 2
    assert "not a valid Jupyter notebook" in capsys.readouterr().err


def test_cli_output_dir_is_relative_to_where_the_user_is(tmp_path, monkeypatch, capsys):
    # a new user in their own folder typed `-p output_dir mine` and found it inside the compendium
    before = _top(ROOT)
    monkeypatch.chdir(tmp_path)
    assert cli(["run", "23", "-p", "output_dir", "mine"]) == 0
    assert (tmp_path / "mine" / "23_deutsch2021_normality.ipynb").exists()
    assert _top(ROOT) == before
    assert str(tmp_path / "mine") in capsys.readouterr().out


def test_a_run_folder_with_a_file_the_user_added_or_edited_is_not_removed(tmp_path):
    """A folder the runner knows by its manifest only (a results folder, its backup, a ``.failed`` folder) is
    removed only if every file in it is one the manifest lists with the content it recorded: notes a user added
    there, or a table they edited, keep the whole folder (an older failed run is then kept beside the new one)."""
    from metaeval._outputs import keep_failed, remove_run_folder, staging_dir, write_manifest

    def failed_run(folder):
        folder.mkdir()
        (folder / "table.csv").write_text("a,b\n1,2\n")
        (folder / "FAILED.txt").write_text("cell 3 failed\n")
        write_manifest(folder, "20_x", {"n": 1}, status="failed")
        (folder / ".ipynb_checkpoints").mkdir()
        (folder / ".ipynb_checkpoints" / "20_x-checkpoint.ipynb").write_text("{}")  # an editor's: not a user's
        return folder

    clean = failed_run(tmp_path / "clean")
    assert remove_run_folder(clean) and not clean.exists()
    added = failed_run(tmp_path / "added")
    (added / "my-notes.txt").write_text("why did it fail?")
    assert not remove_run_folder(added) and (added / "my-notes.txt").exists() and (added / "table.csv").exists()
    edited = failed_run(tmp_path / "edited")
    (edited / "table.csv").write_text("a,b\n1,3\n")
    assert not remove_run_folder(edited) and (edited / "table.csv").read_text() == "a,b\n1,3\n"

    # a new failure of the same run: the older failed folder holds the user's notes, so it stays as it is
    final = tmp_path / "results" / "run"
    final.parent.mkdir()
    old = failed_run(final.parent / "run.20_x.failed")
    (old / "my-notes.txt").write_text("keep me")
    staging = staging_dir(final)
    (staging / "table.csv").write_text("new\n")
    kept = keep_failed(staging, final, "20_x", {"n": 2}, "cell 4 failed")
    assert kept != old and kept.exists() and (old / "my-notes.txt").read_text() == "keep me"
