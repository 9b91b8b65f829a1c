"""`metaeval run` on the user's own dataset from outside the compendium writes next to the user (issue 38)."""

import pytest

import metaeval.run.notebooks as nb
from metaeval.run.cli import main
from metaeval.run.paths import project_root


def _capture(monkeypatch):
    seen = {}

    def fake_run(notebook, params, **kw):
        seen.update(params)
        raise SystemExit(0)

    monkeypatch.setattr(nb, "run_notebook", fake_run)
    return seen


def test_a_user_dataset_run_from_elsewhere_writes_under_the_current_folder(tmp_path, monkeypatch, capsys):
    study = tmp_path / "my_study"
    study.mkdir()
    (study / "r.jsonl").write_text('{"instance_id": "d1", "summarizer_id": "A", "metrics": {"human": 1}}\n')
    monkeypatch.chdir(tmp_path)
    seen = _capture(monkeypatch)
    with pytest.raises(SystemExit):
        main(["run", "10", "-p", "dataset", "my_study"])
    out = seen["output_dir"]
    assert out.startswith(str(tmp_path / "results" / "graham2015" / "my_study-")), out
    assert "outputs go to" in capsys.readouterr().err


@pytest.mark.parametrize("dataset", ["summeval", None])
def test_embedded_data_or_a_run_inside_the_compendium_keep_the_compendium_folders(dataset, tmp_path, monkeypatch):
    seen = _capture(monkeypatch)
    args = ["run", "10"] + (["-p", "dataset", dataset] if dataset else [])
    monkeypatch.chdir(tmp_path if dataset else project_root())
    with pytest.raises(SystemExit):
        main(args)
    assert seen.get("output_dir") is None  # the runner's own rule: results/<paper>/<dataset> in the compendium
