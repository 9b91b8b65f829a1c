"""Sweeps: a 2x2 grid of the Deutsch CI-simulation notebook, rerun without recomputation, and on Dask."""

import json

import pandas as pd
import pytest

from metaeval.run.cli import main
from metaeval.sweep import SweepError, combination_dir, derive_seed, load_grid, parse_flags, run_sweep

GRID = {"coefficient": ["pearson", "kendall"], "n_trials": [3, 4], "n_resamples": [50]}


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    table = run_sweep("20", GRID, root, workers=2, progress=False)
    return root, table


def test_sweep_collects_every_combination(swept):
    root, table = swept
    assert set(table.columns[:4]) == {"run", "coefficient", "n_resamples", "n_trials"}
    assert table.groupby(["coefficient", "n_trials"]).ngroups == 4
    assert set(table["trials"]) == {3, 4}  # each combination really ran with its own n_trials
    assert len(table) == 4 * 8  # 2 levels x 4 methods per run
    on_disk = pd.read_csv(root / "sweep.csv")
    assert len(on_disk) == len(table)
    folders = sorted(p.name for p in root.iterdir() if p.is_dir())
    assert len(folders) == 4 and all("coefficient=" in f for f in folders)


def test_rerun_skips_finished_and_results_do_not_depend_on_workers(swept):
    root, table = swept
    stamps = {p: p.stat().st_mtime_ns for p in root.glob("*/table1_ci_coverage.csv")}
    again = run_sweep("20", GRID, root, workers=1, progress=False)
    assert {p: p.stat().st_mtime_ns for p in root.glob("*/table1_ci_coverage.csv")} == stamps
    pd.testing.assert_frame_equal(again, table)


def test_sweep_on_dask_local_cluster(swept, tmp_path):
    import os

    _, table = swept
    before = dict(os.environ)
    result = run_sweep("20", GRID, tmp_path / "dask", scheduler="local", progress=False)
    # the cluster's nannies set variables for their workers here; they must not outlive the sweep (later
    # kernels of this worker would inherit them)
    assert dict(os.environ) == before
    key = ["coefficient", "n_trials", "level", "method"]
    pd.testing.assert_frame_equal(
        result.drop(columns="run").sort_values(key).reset_index(drop=True),
        table.drop(columns="run").sort_values(key).reset_index(drop=True),
    )


def test_failed_combination_is_recorded_and_others_finish(tmp_path, capsys):
    # (a coefficient outside the notebook's listed choices is refused before anything runs: the failure here
    # happens inside the kernel)
    grid = {"coefficient": ["pearson"], "n_trials": [2, -1], "n_resamples": [20]}
    table = run_sweep("20", grid, tmp_path, progress=False)
    assert set(table["trials"]) == {2}
    failures = pd.read_csv(tmp_path / "failures.csv")
    assert failures.loc[0, "n_trials"] == -1 and "n_trials" in failures.loc[0, "error"]
    # one folder per combination: the failed one is the runner's kept <combination>.<notebook>.failed only
    folders = sorted(p.name for p in tmp_path.iterdir() if p.is_dir())
    assert len(folders) == 2 and sum(f.endswith(".failed") for f in folders) == 1, folders
    capsys.readouterr()
    run_sweep("20", grid, tmp_path, progress=False)  # a rerun says what it skipped
    assert "1 of 2 combinations already finished" in capsys.readouterr().err


def test_bad_input_before_anything_runs(tmp_path):
    with pytest.raises(SweepError, match="unknown notebook"):
        run_sweep("99", {"seed": [1]}, tmp_path)
    with pytest.raises(SweepError, match=r"does not declare parameter\(s\) \['coefficent'\]"):
        run_sweep("20", {"coefficent": ["kendall"]}, tmp_path)
    with pytest.raises(SweepError, match="grid is empty"):
        run_sweep("20", {}, tmp_path)
    bad = tmp_path / "grid.yml"
    bad.write_text("coefficient: [pearson\n")
    with pytest.raises(SweepError, match="not valid YAML"):
        load_grid(bad)
    bad.write_text("- just a list\n")
    with pytest.raises(SweepError, match="must map parameter names"):
        load_grid(bad)
    assert not any(p.is_dir() for p in tmp_path.iterdir())
    assert main(["sweep", "20", str(tmp_path / "x"), "-p", "coefficent", "kendall"]) == 2


def test_names_and_seeds_are_stable(tmp_path):
    a = {"coefficient": "kendall", "n_trials": 10}
    assert combination_dir(a) == combination_dir(dict(reversed(list(a.items()))))
    assert combination_dir(a).startswith("coefficient=kendall__n_trials=10__")
    assert derive_seed(0, a) == derive_seed(0, dict(a)) != derive_seed(1, a)
    assert parse_flags([("n_trials", "10,20"), ("coefficient", "kendall")]) == {"n_trials": [10, 20], "coefficient": ["kendall"]}
    # by the notebook's declared types: a dataset folder named 2021 stays text; a number that is not one is refused
    declared = {"dataset": "summeval", "n_trials": 1000}
    assert parse_flags([("dataset", "2021,summeval"), ("n_trials", "10")], declared) == {
        "dataset": ["2021", "summeval"], "n_trials": [10]}
    with pytest.raises(SweepError, match="n_trials.*expects int"):
        parse_flags([("n_trials", "ten")], declared)
    # a JSON grid file; a scalar counts as a one-value list
    grid_file = tmp_path / "grid.json"
    grid_file.write_text(json.dumps({"n_trials": [1, 2], "coefficient": "kendall"}))
    assert load_grid(grid_file) == {"n_trials": [1, 2], "coefficient": ["kendall"]}


def test_cli_from_another_folder_names_the_sweep_folder_and_reports_failures(tmp_path, monkeypatch, capsys):
    """A relative sweep folder is relative to the compendium root: the command names it in full and finds its
    failures.csv there (run from another folder it once printed a relative path and exited 0 despite a failed
    combination)."""
    from metaeval.run.paths import project_root

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("METAEVAL_ROOT", str(tmp_path / "compendium"))
    (tmp_path / "compendium").mkdir()
    assert project_root() == tmp_path / "compendium"
    code = main(["sweep", "20", "grid", "-p", "n_trials", "2,-1", "-p", "n_resamples", "20"])
    out, err = capsys.readouterr()
    assert code == 1
    assert f"into {tmp_path / 'compendium' / 'grid' / 'sweep.csv'}" in out
    assert f"see {tmp_path / 'compendium' / 'grid' / 'failures.csv'}" in err


def test_collect_keeps_a_table_column_named_like_a_parameter(tmp_path):
    """Notebook 00's main table has a "dataset" column, as the sweep's parameter: collecting once failed with
    pandas' "cannot insert dataset, already exists" (three make-atlas sweep errors). The table's column stays, and the
    parameter's column is named apart."""
    from metaeval.run.notebooks import find_notebook, notebook_metadata
    from metaeval.run.sweep import STATUS, collect

    main_table = notebook_metadata(find_notebook("00"))["main_table"]
    for folder, dataset, column in (("a", "summeval", "summeval"), ("b", "./mine", "mine")):
        (tmp_path / folder).mkdir()
        pd.DataFrame({"dataset": [column], "systems": [16]}).to_csv(tmp_path / folder / main_table, index=False)
        (tmp_path / folder / STATUS).write_text(json.dumps({"state": "done", "folder": folder,
                                                            "params": {"dataset": dataset}}))
    table = collect(tmp_path, "00")
    assert list(table.columns) == ["run", "dataset (parameter)", "dataset", "systems"]
    assert table.loc[table.run == "b", "dataset"].item() == "mine"
    assert table.loc[table.run == "b", "dataset (parameter)"].item() == "./mine"
