"""Incremental rebuilds (metaeval.run.incremental): run-all skips a run whose inputs and outputs are unchanged."""

from pathlib import Path

import pytest

from metaeval.run import incremental
from metaeval.run.notebooks import list_notebooks, notebook_parameters

NOTEBOOKS = {p.stem[:2]: p for p in list_notebooks()}


def _fingerprints():
    return {key: incremental.fingerprint(path, notebook_parameters(path)) for key, path in NOTEBOOKS.items()}


def test_dependencies_follow_the_imports_transitively():
    deps = {key: set(incremental.library_dependencies(path)) for key, path in NOTEBOOKS.items()}
    everyone = set.intersection(*deps.values())
    # every notebook starts with metaeval.run.session, which reaches the datasets and the plotting style
    assert {"metaeval/__init__.py", "metaeval/run/session.py", "metaeval/data/datasets.py",
            "metaeval/studies/plotting.py"} <= everyone
    # a module reached only through another one (stats/significance through studies/deutsch) is found
    assert "metaeval/stats/significance.py" in deps["23"]
    # graham's corpus BLEU is also the atlas's (70): one definition of Graham's finding
    assert {k for k, d in deps.items() if "metaeval/studies/graham.py" in d} == {"10", "70"}


@pytest.mark.parametrize("module, importers", [
    # notebook 61 through studies/card, notebook 24 through studies/deutsch2022, notebook 70 through studies/atlas
    ("metaeval/studies/deutsch.py", {"20", "21", "22", "23", "24", "61", "70"}),
    ("metaeval/studies/lin.py", {"30", "70"}),
    ("metaeval/studies/miloulis.py", {"40"}),
    ("metaeval/studies/primer.py", {"01"}),
    # reached through the short alias metaeval.planning (60), studies/card (61) and the power study's shared
    # draws in studies/deutsch (20-24, 70), resolved without importing
    ("metaeval/stats/planning.py", {"20", "21", "22", "23", "24", "60", "61", "70"}),
    ("metaeval/studies/card_report.py", {"61"}),
])
def test_touching_one_module_reruns_exactly_its_importers(module, importers, monkeypatch):
    before = _fingerprints()
    real = incremental._resources.sha256
    monkeypatch.setattr(incremental._resources, "sha256",
                        lambda path: "touched" if path.as_posix().endswith(module) else real(path))
    after = _fingerprints()
    manifests = {key: {"status": "done", "inputs": fp, "files": {}} for key, fp in before.items()}
    rerun = {key for key in NOTEBOOKS if incremental.changed_inputs(manifests[key], after[key])}
    assert rerun == importers
    assert incremental.changed_inputs(manifests["30"], after["30"]) == (["library " + module] if "lin" in module
                                                                         else [])


def test_parameters_data_and_notebook_changes_are_seen(tmp_path):
    path = NOTEBOOKS["23"]
    params = notebook_parameters(path)
    fp = incremental.fingerprint(path, params)
    manifest = {"status": "done", "inputs": fp, "files": {}}
    assert incremental.changed_inputs(manifest, fp) == []
    assert incremental.changed_inputs(manifest, incremental.fingerprint(path, {**params, "alpha": 0.01})) == \
        ["parameters"]
    assert incremental.fingerprint(path, {**params, "output_dir": "elsewhere"}) == fp  # where outputs go: no input
    copy = tmp_path / path.name
    copy.write_text(path.read_text() + "\n# a comment\n")
    assert incremental.changed_inputs(manifest, incremental.fingerprint(copy, params)) == ["notebook"]
    own = tmp_path / "my-study"
    own.mkdir()
    (own / "scores.jsonl").write_text("{}\n")
    first = incremental.fingerprint(path, {**params, "dataset": str(own)})
    (own / "scores.jsonl").write_text('{"a": 1}\n')
    second = incremental.fingerprint(path, {**params, "dataset": str(own)})
    assert incremental.changed_inputs({"status": "done", "inputs": first}, second) == \
        [f"data {own / 'scores.jsonl'}"]
    assert incremental.changed_inputs(None, fp) == ["no record of the inputs of the last run"]
    assert incremental.changed_inputs({"status": "failed", "inputs": fp}, fp)


@pytest.mark.parametrize("name", ["study.jsonl", "study.csv"])
def test_a_dataset_given_as_one_file_is_fingerprinted_by_its_bytes(tmp_path, name):
    """A dataset given as a single file (JSONL or a table), not a folder (issue 47: no test covered it). A change of
    one byte is a changed input, named by the path as given; the same bytes rewritten are not."""
    path = NOTEBOOKS["23"]
    params = notebook_parameters(path)
    own = tmp_path / name
    own.write_text('{"instance_id": "d", "summarizer_id": "s", "metrics": {"m": 0.5}}\n' if name.endswith("jsonl")
                   else "doc,system,relevance\nd,s,0.5\n")
    first = incremental.fingerprint(path, {**params, "dataset": str(own)})
    assert str(own) in first["data"]
    own.write_bytes(own.read_bytes())  # rewritten, same bytes: nothing changed
    assert incremental.changed_inputs({"status": "done", "inputs": first},
                                      incremental.fingerprint(path, {**params, "dataset": str(own)})) == []
    own.write_bytes(own.read_bytes().replace(b"0.5", b"0.6"))
    second = incremental.fingerprint(path, {**params, "dataset": str(own)})
    assert incremental.changed_inputs({"status": "done", "inputs": first}, second) == [f"data {own}"]


def test_second_run_all_skips_everything_and_a_changed_output_reruns(tmp_path, monkeypatch):
    from metaeval.run import pool
    from metaeval.run.notebooks import run_all

    monkeypatch.setenv("METAEVAL_ROOT", str(tmp_path))
    first = run_all(only=["23"], jobs=2, echo=lambda line: None)
    assert {r["state"] for r in first} == {"done"}
    lines: list[str] = []
    second = run_all(only=["23"], jobs=2, echo=lines.append)
    assert [r["state"] for r in second] == ["unchanged"] * len(first)
    assert sum("unchanged since its last run" in line and "skipped (--force reruns it)" in line
               for line in lines) == len(first)
    assert lines[-1].startswith("finished 0 of 2 runs in") and "2 unchanged, skipped" in lines[-1]
    # an output somebody edited: that run reruns (and restores it), the other stays
    folder = Path(first[0]["output_dir"])
    folder = folder if folder.is_absolute() else tmp_path / folder
    table = folder / "appendix_table2_normality.csv"
    original = table.read_bytes()
    table.write_bytes(original + b"\n")
    ran: list[str] = []

    def fake_pool(function, queue, jobs, on_done, **kwargs):  # records what would run, runs nothing
        for run in queue:
            ran.append(run.label)
            on_done(run, {"state": "done", "seconds": 0.0, "output_dir": str(folder)})

    monkeypatch.setattr(pool, "run_in_pool", fake_pool)
    third = run_all(only=["23"], jobs=1, echo=lambda line: None)
    # the edited run is not skipped; the ownership rule (issue 24) then refuses to overwrite a file edited by
    # hand, so it fails with that message instead of running, and the other run stays unchanged
    assert sorted(r["state"] for r in third) == ["failed", "unchanged"]
    assert ran == []
    table.write_bytes(original)
    forced = run_all(only=["23"], jobs=1, echo=lambda line: None, force=True)
    assert [r["state"] for r in forced] == ["done", "done"]
