"""The notebook sources: jupytext percent scripts that the runner turns into the notebooks papermill runs."""

import ast

import nbformat
import pytest

from metaeval.run.notebooks import (NotebookError, list_notebooks, materialize, notebook_metadata,
                                    notebook_parameters, read_notebook)
from metaeval.run.session import default_output_dir

SOURCES = list_notebooks()


def test_every_notebook_is_a_py_source_and_no_ipynb_copy_exists():
    assert len(SOURCES) >= 7
    assert all(p.suffix == ".py" for p in SOURCES)
    # a committed .ipynb next to a source would be a second copy that can drift
    assert not list(SOURCES[0].parent.glob("[0-9]*.ipynb"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_source_starts_with_a_literal_parameters_cell_and_declares_its_paper(path):
    text = path.read_text(encoding="utf-8")
    header_end = text.index("# ---", 5)
    first_cell = text[header_end:].split("# %%")[1]
    assert first_cell.startswith(' tags=["parameters"]'), f"{path.name}: the first cell must be the parameters cell"
    params = notebook_parameters(path)
    assert "output_dir" in params and "seed" in params and ("dataset" in params or "datasets" in params)
    meta = notebook_metadata(path)
    assert meta.get("paper") and meta.get("main_table", "").endswith(".csv")


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_materialized_notebook_is_valid_and_stable(path, tmp_path):
    a = materialize(path, tmp_path / "a")
    b = materialize(path, tmp_path / "b")
    assert a.read_bytes() == b.read_bytes()  # nothing random (cell ids, metadata) in the generated notebook
    nb = nbformat.read(str(a), as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "metaeval"
    assert nb.cells[0].metadata.tags == ["parameters"]
    assert "jupytext" not in nb.metadata
    for cell in nb.cells:
        if cell.cell_type == "code":
            ast.parse(cell.source)  # every cell is plain Python (no lost `# %%` markers or magics)


def test_parameters_cell_must_hold_literals(tmp_path):
    src = tmp_path / "99_demo.py"
    src.write_text('# %% tags=["parameters"]\ndataset = "summeval"\nn = 3\n\n# %%\nprint(n)\n')
    assert notebook_parameters(src) == {"dataset": "summeval", "n": 3}
    assert read_notebook(src).cells[1].source == "print(n)"
    src.write_text('# %% tags=["parameters"]\nimport os\nn = os.cpu_count()\n')
    with pytest.raises(NotebookError, match=r"only hold `name = literal` lines \(line 1\)"):
        notebook_parameters(src)
    src.write_text('# %% tags=["parameters"]\nn = len("abc")\n')
    with pytest.raises(NotebookError, match="parameter 'n' .* is not a literal"):
        notebook_parameters(src)
    src.write_text("# %%\nn = 1\n")
    with pytest.raises(NotebookError, match="no cell tagged 'parameters'"):
        notebook_parameters(src)


def test_default_output_dir_rule():
    assert default_output_dir("graham2015", "summeval") == "results/graham2015/summeval"
    # a user's dataset is named by its resolved path: readable name plus 8 hex digits of its sha256
    # (issue 24 cases 4 and 11: two `study/` folders never share results; `dir/..` is named after its folder)
    import hashlib

    digest = hashlib.sha256(b"/data/my-study").hexdigest()[:8]
    assert default_output_dir("lin2004", "/data/my-study/") == f"results/lin2004/my-study-{digest}"
    assert default_output_dir("lin2004", "/data/my-study/sub/..") == f"results/lin2004/my-study-{digest}"
    assert default_output_dir("lin2004", "/data/scores.jsonl").startswith("results/lin2004/scores-")


# the notebooks whose parameters are documented line by line
DOCUMENTED = [p for p in SOURCES if p.stem[:2] in ("00", "10", "20", "21", "22", "23", "30")]


@pytest.mark.parametrize("path", DOCUMENTED, ids=lambda p: p.stem)
def test_every_parameter_says_what_it_means_and_uses_the_shared_names(path):
    from metaeval.run.notebooks import parameter_docs

    meaning = {p.name: p.help for p in parameter_docs(path)}
    params = notebook_parameters(path)
    assert set(meaning) == set(params)
    assert all(meaning.values()), [name for name, text in meaning.items() if not text]
    # dataset-agnostic: defaults come from the dataset, not from SummEval
    assert {"dataset", "human", "incomplete", "seed", "output_dir"} <= set(params)
    assert params["human"] is None and params["output_dir"] is None and params["incomplete"] == "raise"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_papermill_reads_every_parameter(path, tmp_path, caplog):
    import papermill

    # papermill parses `name = value  # comment` itself (to warn about unknown parameters); an "=" in a comment
    # breaks its parser and it then silently ignores that parameter
    with caplog.at_level("WARNING"):
        inspected = papermill.inspect_notebook(str(materialize(path, tmp_path)))
    assert set(inspected) == set(notebook_parameters(path))
    assert "Unable to parse" not in caplog.text


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_source_declares_its_expected_duration_on_each_dataset(path):
    """A first run-all (fresh clone, no timings yet) starts the longest runs first from these numbers."""
    meta = notebook_metadata(path)
    expected = meta.get("expected_seconds")
    datasets = meta.get("datasets") or [notebook_parameters(path).get("dataset")]
    assert isinstance(expected, dict) and set(expected) == set(datasets), f"{path.name}: expected_seconds per dataset"
    assert all(isinstance(v, (int, float)) and v > 0 for v in expected.values())


def test_first_run_all_starts_the_longest_runs_first():
    from metaeval.run.notebooks import plan_all, run_order

    runs = plan_all()
    order = run_order(runs)
    labels = [r.label for r in order]
    assert sorted(labels) == sorted(r.label for r in runs)  # every run, once
    assert labels[0].startswith(("21_", "40_", "50_"))  # the power study, Miloulis or GRouge: the longest runs
    # longest first, except that a notebook's second run waits for one run of another notebook (so the two do not
    # compile the same kernels side by side): each run is at most one place later than in the plain order
    plain = [r.label for r in sorted(runs, key=lambda r: -r.expected)]
    assert all(labels.index(label) <= plain.index(label) + 1 for label in plain)
    assert all(a.notebook != b.notebook for a, b in zip(order, order[1:]))
    # a previous run's timings take precedence over the metadata
    shortest = labels[-1]
    assert [r.label for r in run_order(runs, {shortest: 1e6})][0] == shortest
