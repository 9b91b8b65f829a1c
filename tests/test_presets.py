"""Parameter presets (metaeval.run.presets): strict reading, the class preset, `metaeval run --preset`."""

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
        assert set(entry) <= {"parameters", "seconds", "cpu_seconds", "default_seconds"}, name
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

