"""Parameter presets (metaeval.run.presets): strict reading, the class preset, `metaeval run --preset`."""

import json
import os
from pathlib import Path

import pytest

from metaeval.run import presets
from metaeval.run.notebooks import list_notebooks, notebook_parameters


def test_a_duplicated_key_is_an_error_naming_its_line():
    # the bug this catches: class_parameters.yml once had `cpu_seconds` twice per row; yaml.safe_load kept the last
    with pytest.raises(presets.PresetError, match=r"line 2: key 'cpu_seconds' is given twice .*first on line 2"):
        presets.strict_yaml("a: 1\nb: {seconds: 3, cpu_seconds: 4, cpu_seconds: 5}\n")
    with pytest.raises(presets.PresetError, match="line 3: key 'x'"):
        presets.strict_yaml("x: 1\ny: 2\nx: 3\n")


@pytest.mark.parametrize("preset", ["class", "ci"])
def test_every_preset_entry_names_a_notebook_and_only_its_parameters(preset):
    table = presets.read_preset(preset)
    stems = {p.stem: p for p in list_notebooks()}
    for name in table:
        assert name in stems, f"{preset}: {name} is not a notebook"
        params = presets.preset_parameters(name, preset)
        unknown = set(params) - set(notebook_parameters(stems[name])) - {"output_dir"}
        assert not unknown, (name, unknown)


def test_class_preset_rows_carry_measured_times_and_a_scratch_folder():
    table = presets.read_preset("class")
    assert "01_primer" in table and "20_deutsch2021_ci_simulation" in table
    for name, entry in table.items():
        assert set(entry) <= {"parameters", "default_seconds"}, name  # measured times: times.json
    assert presets.preset_parameters("20", "class") == {"n_trials": 200, "n_resamples": 200,
                                                         "output_dir": "results/runs/class/20"}


def test_unknown_preset_or_notebook_is_refused():
    with pytest.raises(presets.PresetError, match="preset must be one of"):
        presets.read_preset("lecture")
    with pytest.raises(presets.PresetError, match="has no entry in class_parameters.yml"):
        presets.preset_parameters("99", "class")


def test_cli_run_preset_values_sit_under_the_users_overrides(monkeypatch, capsys):
    import metaeval.run.notebooks as nb
    from metaeval.run.cli import main

    seen = {}

    def fake_run(notebook, params, **kw):
        seen.update(params)
        raise SystemExit(0)

    monkeypatch.setattr(nb, "run_notebook", fake_run)
    with pytest.raises(SystemExit):
        main(["run", "20", "--preset", "class", "-p", "n_trials", "7"])
    assert seen["n_trials"] == 7 and seen["n_resamples"] == 200
    assert seen["output_dir"].endswith("results/runs/class/20")



def test_class_times_are_recorded_by_the_run_and_shown_on_the_teaching_page(tmp_path, monkeypatch):
    """The Teaching page shows what the last `make class` measured (times.json), never hand-typed seconds; a
    second, partial run keeps the other notebooks' last times."""
    import importlib.util

    out = tmp_path / "results" / "runs" / "class"
    first = [presets.Timing("01_primer", 42.04, 30.96, out / "01"), presets.Timing("20_deutsch2021_ci_simulation",
                                                                                   20.0, 19.0, out / "20")]
    presets.record_times(first)
    presets.record_times([presets.Timing("01_primer", 40.0, 31.0, out / "01")])
    runs = json.loads((out / presets.TIMES).read_text())["runs"]
    assert runs["01_primer"]["wall_seconds"] == 40.0 and runs["20_deutsch2021_ci_simulation"]["cpu_seconds"] == 19.0
    assert runs["01_primer"]["cores"] == os.cpu_count() and "UTC" in runs["01_primer"]["measured"]
    spec = importlib.util.spec_from_file_location("metaeval_site_build_presets",
                                                  Path(__file__).resolve().parents[1] / "site" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    monkeypatch.setattr(build, "ROOT", tmp_path)
    page = build._teaching_page()
    assert "| `01_primer` | `metaeval run 01 --preset class` | the defaults | 40 (31) | 12 |" in page
    assert "all 2 measured runs took 60 s wall" in page
    assert "| `00_dataset_check` |" in page and "| not measured |" in page
    monkeypatch.setattr(build, "ROOT", tmp_path / "elsewhere")
    assert "No `make class` has run on the machine that built this site" in build._teaching_page()
