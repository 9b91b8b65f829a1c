"""Reproduction you can verify (issue 32): what ran is this checkout's record, not the committed manifests; the
reproduction report names every differing file and how; the fingerprint sees every data byte and refuses unlisted
data files; executed notebooks merge their stream outputs; killed runs leave nothing behind; the log gives times.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import metaeval._resources as R
from metaeval.run import incremental, notebooks, reproduction
from metaeval.run.outputs import STAGING_MARK, clean_stale_under, manifest_name

NB23 = notebooks.find_notebook("23")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


def _notebook(streams: list[str]) -> str:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print('x')", id="cell-00")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=t) for t in streams]
    nb.cells = [cell]
    return nbformat.writes(nb)


@pytest.fixture
def committed(tmp_path):
    """A repository with one committed run folder: a table, a figure, an executed notebook and its manifest."""
    repo = tmp_path / "repo"
    folder = repo / "results" / "paper" / "summeval"
    folder.mkdir(parents=True)
    (folder / "table.csv").write_text("a,b\n1,2\n3,4\n", encoding="utf-8")
    (folder / "figure.png").write_bytes(b"\x89PNG\x00\x01\x02")
    (folder / "10_x.ipynb").write_text(_notebook(["one line\nand another\n"]), encoding="utf-8")
    files = {n: R.sha256(folder / n) for n in ("table.csv", "figure.png", "10_x.ipynb")}
    (folder / manifest_name("10_x")).write_text(json.dumps({"notebook": "10_x", "files": files}), encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "results")
    return repo, folder


def test_identical_outputs_are_reported_as_reproduced(committed):
    repo, folder = committed
    report = reproduction.reproduction_report([("10_x", folder)], root=repo)
    assert report.lines() == [f"reproduction report: 1 of 1 runs reproduced every committed file ({reproduction.PRECISION})"]


def test_each_differing_file_is_named_with_the_kind_of_difference(committed):
    repo, folder = committed
    (folder / "table.csv").write_text("a,b\n1,2\n3,5\n", encoding="utf-8")
    (folder / "figure.png").write_bytes(b"\x89PNG\x00\x01\x03\x04")
    # the flaw of issue 32: one printed output split into two stream outputs
    (folder / "10_x.ipynb").write_text(_notebook(["one line\n", "and another\n"]), encoding="utf-8")
    manifest = json.loads((folder / manifest_name("10_x")).read_text())
    manifest["files"]["new.md"] = "0" * 64
    (folder / manifest_name("10_x")).write_text(json.dumps(manifest), encoding="utf-8")
    (folder / "new.md").write_text("new\n", encoding="utf-8")
    report = reproduction.reproduction_report([("10_x", folder)], root=repo)
    assert (report.runs, report.identical) == (1, 0)
    kinds = dict(report.differences)
    prefix = "results/paper/summeval/"
    assert kinds[prefix + "table.csv"] == "table: 1 of 4 cells differ, first row 2 (3), column 'b': 4 -> 5"
    assert kinds[prefix + "figure.png"] == "figure: not a readable PNG (UnidentifiedImageError)"
    assert kinds[prefix + "10_x.ipynb"] == ("executed notebook: outputs of cell(s) 0 differ (the same printed "
                                            "text, split into another number of stream outputs)")
    assert kinds[prefix + "new.md"] == "new (not committed)"
    assert kinds[prefix + manifest_name("10_x")] == "JSON: keys of files differ: ['new.md']"
    lines = report.lines()
    assert lines[0] == (f"reproduction report: 0 of 1 runs reproduced every committed file ({reproduction.PRECISION}); "
                        "5 file(s) differ:")
    (folder / "table.csv").unlink()
    assert dict(reproduction.reproduction_report([("10_x", folder)], root=repo).differences)[prefix + "table.csv"] \
        == "missing (committed, not written by this run)"


def _committed_run(tmp_path, files: dict[str, bytes]):
    """A repository with one committed run folder holding ``files`` and its manifest."""
    repo = tmp_path / "repo"
    folder = repo / "results" / "paper" / "summeval"
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    digests = {n: R.sha256(folder / n) for n in files}
    (folder / manifest_name("10_x")).write_text(json.dumps({"notebook": "10_x", "files": digests}), encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "results")
    return repo, folder


def _rewrite(folder: Path, name: str, data: bytes) -> None:
    """Replace an output and its sha256 in the manifest, as a rerun does."""
    (folder / name).write_bytes(data)
    manifest = json.loads((folder / manifest_name("10_x")).read_text())
    manifest["files"][name] = R.sha256(folder / name)
    (folder / manifest_name("10_x")).write_text(json.dumps(manifest), encoding="utf-8")


TABLE = "metric,r,p\nrouge-1,0.123456789012,0.04\nrouge-2,0.5,1e-05\n"
TEXT = "ROUGE-1: r = 0.123 (p = 0.040); 16 systems.\n"


def test_a_number_moved_in_its_12th_digit_reproduces_and_one_moved_in_its_5th_is_named(tmp_path):
    """The rule of issue 45: numbers at the stated precision, named by file, row and column when they differ."""
    repo, folder = _committed_run(tmp_path, {"t.csv": TABLE.encode(), "c.md": TEXT.encode()})
    _rewrite(folder, "t.csv", TABLE.replace("0.123456789012", "0.123456789013").encode())
    report = reproduction.reproduction_report([("10_x", folder)], root=repo)
    assert report.identical == 1 and report.within_precision == ("results/paper/summeval/t.csv",)
    assert report.lines()[0].endswith("; 1 file(s) not byte for byte but within that precision")
    _rewrite(folder, "t.csv", TABLE.replace("0.123456789012", "0.123466789012").encode())
    report = reproduction.reproduction_report([("10_x", folder)], root=repo)
    assert report.identical == 0
    assert report.differences == (("results/paper/summeval/t.csv",
                                   "table: 1 of 6 cells differ, first row 1 (rouge-1), column 'r': 0.123456789012 -> "
                                   "0.123466789012"),)


def test_a_changed_word_is_reported_and_a_rounding_flip_of_the_last_digit_is_not(tmp_path):
    repo, folder = _committed_run(tmp_path, {"c.md": TEXT.encode()})
    _rewrite(folder, "c.md", TEXT.replace("0.123", "0.124").encode())  # a value on a rounding boundary
    assert reproduction.reproduction_report([("10_x", folder)], root=repo).identical == 1
    _rewrite(folder, "c.md", TEXT.replace("0.123", "0.125").encode())
    assert reproduction.reproduction_report([("10_x", folder)], root=repo).differences[0][1] == (
        "text: 1 of 1 lines differ, first line 1: 'ROUGE-1: r = 0.123 (p = 0.040); 16 systems.' -> "
        "'ROUGE-1: r = 0.125 (p = 0.040); 16 systems.'")
    _rewrite(folder, "c.md", TEXT.replace("16 systems", "17 systems").encode())  # integers: exactly
    assert reproduction.reproduction_report([("10_x", folder)], root=repo).identical == 0
    _rewrite(folder, "c.md", TEXT.replace("systems", "system").encode())
    assert "first line 1" in reproduction.reproduction_report([("10_x", folder)], root=repo).differences[0][1]


def _figure(folder: Path, y: float, label: str = "r") -> tuple[bytes, bytes]:
    """PNG and SVG of a small line plot as the notebooks save it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from metaeval.studies.plotting import save_figure, use_compendium_style

    use_compendium_style()
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1, 2], [0.1, y, 0.3], marker="o", label=label)
    ax.legend(loc="lower right")
    png, svg = save_figure(fig, folder, f"f-{y}-{label}")
    plt.close(fig)
    return png.read_bytes(), svg.read_bytes()


def test_figures_compare_by_pixels_and_svg_ids_do_not_matter(tmp_path):
    png, svg = _figure(tmp_path, 0.2)
    assert reproduction.compare("f.png", png, _figure(tmp_path, 0.2 + 1e-15)[0]) is None
    moved = reproduction.compare("f.png", png, _figure(tmp_path, 0.25)[0])
    assert moved is not None and moved.startswith("figure: ") and moved.endswith("pixels differ by more than 8/255")
    assert reproduction.compare("f.png", png, _figure(tmp_path, 0.2, label="R")[0]) is not None  # another legend
    renamed = svg.decode()
    for name in re.findall(r'id="([^"]+)"', renamed):  # other hashes, the same drawing
        renamed = renamed.replace(name, f"z{name[::-1]}")
    assert renamed != svg.decode() and reproduction.compare("f.svg", svg, renamed.encode()) is None
    assert reproduction.compare("f.svg", svg, _figure(tmp_path, 0.25)[1]) is not None


def test_an_executed_notebook_compares_outputs_at_the_precision_and_ignores_execution_metadata():
    import nbformat

    def executed(value: str, version: str = "3.11.7") -> bytes:
        nb = nbformat.v4.new_notebook(metadata={"language_info": {"name": "python", "version": version}})
        cell = nbformat.v4.new_code_cell("print(r)", id="cell-00", execution_count=3)
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"r = {value}\n"),
                        nbformat.v4.new_output("display_data", data={"text/plain": f"<{value}>",
                                                                     "text/html": f"<td>{value}</td>"})]
        nb.cells = [cell]
        return nbformat.writes(nb).encode()

    committed = executed("0.30000000000000004")
    assert reproduction.compare("n.ipynb", committed, executed("0.3", version="3.11.9")) is None
    assert reproduction.compare("n.ipynb", committed, executed("0.31")) == (
        "executed notebook: outputs of cell(s) 0 differ (printed text)")


def test_not_a_git_checkout_says_so(tmp_path):
    report = reproduction.reproduction_report([("10_x", tmp_path)], root=tmp_path)
    assert report.lines() == [f"reproduction report: {tmp_path.resolve()} is not a git checkout with commits: "
                              "nothing to compare"]


def test_retarget_merges_a_split_print_into_one_stream_output(tmp_path):
    executed = tmp_path / "x.ipynb"
    nb = nbformat.reads(_notebook(["one line", "\n", "and another\n"]), as_version=4)
    nb.cells[0].outputs.insert(1, nbformat.v4.new_output("stream", name="stderr", text="Warning: w\n"))
    nbformat.write(nb, str(executed))
    notebooks._retarget(executed, tmp_path / "staging", tmp_path / "final")
    outputs = nbformat.read(str(executed), as_version=4).cells[0].outputs
    assert [(o.name, o.text) for o in outputs] == [("stdout", "one line\nand another\n"), ("stderr", "Warning: w\n")]


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """A copy of a small part of the embedded data with its own SHA256SUMS, as $METAEVAL_DATA."""
    data = tmp_path / "data"
    rel = ["rouge155/smart_common_words.txt", "rouge155/WordNet-2.0-Exceptions/adj.exc"]
    for name in rel:
        (data / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(R.data_root() / name, data / name)
    (data / "rouge155" / "PROVENANCE.md").write_text("documentation, not data\n")
    (data / "SHA256SUMS").write_text("".join(f"{R.sha256(data / n)}  {n}\n" for n in rel))
    monkeypatch.setenv("METAEVAL_DATA", str(data))
    R._read_checksums.cache_clear()
    yield data
    R._read_checksums.cache_clear()


def test_an_edited_data_byte_changes_the_fingerprint_though_sha256sums_does_not(data_copy):
    params = notebooks.notebook_parameters(NB23)
    before = incremental.fingerprint(NB23, params)
    assert set(before["data"]) == {"data/rouge155/smart_common_words.txt", "data/rouge155/WordNet-2.0-Exceptions/adj.exc"}
    record = {"status": "done", "inputs": before, "files": {}}
    path = data_copy / "rouge155" / "smart_common_words.txt"
    text = path.read_bytes()
    path.write_bytes(text[:-2] + bytes([text[-2] ^ 1]) + text[-1:])  # one byte; SHA256SUMS unchanged
    after = incremental.fingerprint(NB23, params)
    assert incremental.changed_inputs(record, after) == ["data data/rouge155/smart_common_words.txt"]


def test_an_unlisted_data_file_is_refused_by_name(data_copy):
    extra = data_copy / "rouge155" / "v2-extra.npz"
    extra.write_bytes(b"not listed")
    with pytest.raises(R.ChecksumError, match=r"data file rouge155/v2-extra.npz .* is not listed in .*SHA256SUMS"):
        incremental.fingerprint(NB23, notebooks.notebook_parameters(NB23))
    with pytest.raises(R.ChecksumError, match="rouge155/v2-extra.npz"):
        R.verify_checksums([extra])
    R.verify_checksums([data_copy / "rouge155" / "PROVENANCE.md"])  # documentation is not data: passes
    extra.unlink()
    incremental.fingerprint(NB23, notebooks.notebook_parameters(NB23))


def test_record_lives_in_the_state_folder_and_decides_the_skip(tmp_path, monkeypatch):
    """No record (a fresh clone): not unchanged, whatever the committed manifest says; a record: unchanged."""
    from metaeval.run.outputs import write_manifest

    monkeypatch.setenv("METAEVAL_STATE", str(tmp_path / "state"))
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "t.csv").write_text("1\n")
    params = notebooks.notebook_parameters(NB23)
    write_manifest(folder, NB23.stem, params)
    assert not incremental.unchanged(NB23, params, folder, NB23.stem)
    files = json.loads((folder / manifest_name(NB23.stem)).read_text())["files"]
    assert "inputs" not in json.loads((folder / manifest_name(NB23.stem)).read_text())  # nothing of the machine
    incremental.record_run(folder, NB23.stem, incremental.fingerprint(NB23, params), files)
    assert incremental.unchanged(NB23, params, folder, NB23.stem)
    (folder / "t.csv").write_text("2\n")
    assert not incremental.unchanged(NB23, params, folder, NB23.stem)


def _killed_staging(parent: Path) -> Path:
    """A staging folder made by a process that was then killed with SIGKILL."""
    code = ("import os, sys, time, pathlib; p = pathlib.Path(sys.argv[1]) / f'.partial-summeval-{os.getpid()}'; "
            f"p.mkdir(parents=True); (p / '{STAGING_MARK}').touch(); (p / 'half.csv').write_text('1'); "
            "print(p, flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(parent)], stdout=subprocess.PIPE, text=True)
    path = Path(proc.stdout.readline().strip())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return path


def test_a_later_run_all_removes_the_staging_folder_of_a_killed_run_and_says_so(tmp_path, monkeypatch):

    monkeypatch.setenv("METAEVAL_ROOT", str(tmp_path))
    stale = _killed_staging(tmp_path / "results" / "deutsch2021")
    alive = tmp_path / "results" / "deutsch2021" / f".partial-realsumm-{os.getppid()}"  # a live process's run
    alive.mkdir()
    (alive / STAGING_MARK).touch()
    assert stale.is_dir()
    monkeypatch.setattr(notebooks, "run_in_pool", lambda function, queue, jobs, on_done, **kw: None)  # runs nothing
    lines: list[str] = []
    notebooks.run_all(only=["23"], echo=lines.append, force=True)
    assert not stale.exists() and alive.is_dir()
    assert f"removed results/deutsch2021/{stale.name}/: the staging folder of a run that was killed (its process " \
           "is gone)" in lines
    assert lines[-2].startswith("time: ") and " s wall, " in lines[-2] and lines[-2].endswith("forced)")
    assert lines[-2].split(" s wall, ")[1].split()[1:3] == ["s", "CPU"] and lines[-1].startswith("finished 0 of 2")
    assert clean_stale_under(tmp_path / "results") == []  # the live one stays


def test_report_at_the_end_of_run_all(tmp_path, monkeypatch):
    """``run-all --report`` prints the report after the time and the closing line (nothing ran here)."""

    monkeypatch.setenv("METAEVAL_ROOT", str(tmp_path))
    monkeypatch.setattr(notebooks, "run_in_pool", lambda function, queue, jobs, on_done, **kw: None)  # runs nothing
    lines: list[str] = []
    notebooks.run_all(only=["23"], echo=lines.append, force=True, report=True)
    assert lines[-3].startswith("time: ") and lines[-2].startswith("finished 0 of 2") and \
        lines[-1].startswith("reproduction report: ")


@pytest.mark.parametrize("source", sorted(p.name for p in notebooks.list_notebooks()))
def test_a_jupyterlab_save_without_an_edit_keeps_every_source_byte(source):
    """What JupyterLab saves for an opened, run, unedited source (jupytext writes its YAML header in its own style
    and records the kernel): the pre-save hook gives back the bytes on disk."""
    import jupytext

    class Contents:
        root_dir = str(notebooks.notebooks_dir())

    disk = (notebooks.notebooks_dir() / source).read_text(encoding="utf-8")
    nb = jupytext.reads(disk, fmt="py:percent")
    nb.metadata["jupytext"]["text_representation"]["jupytext_version"] = jupytext.__version__
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python", "version": "3.11.2"}
    model = {"type": "file", "format": "text", "content": jupytext.writes(nb, fmt="py:percent")}
    notebooks.save_source_hook(model, source, Contents())
    assert model["content"] == disk
    edited = {"type": "file", "format": "text", "content": model["content"].replace("# ---\n", "# ---\n# x: 1\n", 1)}
    notebooks.save_source_hook(edited, source, Contents())
    assert edited["content"] != disk  # an edited header is saved as edited
