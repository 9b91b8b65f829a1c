"""Import laziness: what ``import metaeval`` and the ROUGE path load (each check in a fresh interpreter, since
this test session has imported everything already)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True,
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("heavy", ["scipy", "pandas", "numba", "metaeval.stats.correlation", "metaeval.data.datasets"])
def test_import_metaeval_loads_no_heavy_module(heavy):
    assert heavy not in _modules_after("import metaeval")


def test_rouge_path_does_not_import_scipy_stats():
    # ROUGE needs numpy, numba and pandas; scipy.stats (0.35 s CPU) is the statistics' business. (numba itself
    # loads scipy.linalg.cython_blas when its CPU target starts: not ours to avoid.)
    loaded = _modules_after(
        "from metaeval.rouge import score\nscore(['the cat sat'], [['the cat was']], ['R-1|stem=1|stop=0|F'])"
    )
    assert "metaeval.metrics.rouge" in loaded
    assert not {m for m in loaded if m == "scipy.stats" or m.startswith("scipy.stats.")}
    assert "metaeval.stats.correlation" not in loaded


def test_lazy_public_names_resolve_to_the_layered_objects():
    import metaeval
    from metaeval.stats import correlation, significance

    assert metaeval.correlate is correlation.correlate
    assert metaeval.permutation_test is significance.permutation_test
    from metaeval import bootstrap_ci, williams_test  # noqa: F401 - the from-import form works too

    assert set(metaeval.__all__) <= set(dir(metaeval))
    assert isinstance(metaeval.__version__, str) and metaeval.__version__
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        metaeval.nonexistent  # noqa: B018


def test_runner_does_not_build_the_rfc3987_grammar():
    # jsonschema (under nbformat/papermill) would spend 0.9 s of CPU building an IRI grammar at import
    loaded = _modules_after(
        "import metaeval.run.notebooks as n\nimport nbformat, papermill\n"
        "nbformat.validate(n.read_notebook('00'))"
    )
    assert "nbformat" in loaded and "jsonschema" in loaded
    assert not {m for m in loaded if m.startswith(("rfc3987_syntax.", "lark"))}


def test_notebook_read_cache_sees_a_rewritten_file(tmp_path):
    from metaeval.run import notebooks

    source = notebooks.find_notebook("00").read_text(encoding="utf-8")
    path = tmp_path / "00_copy.py"
    path.write_text(source, encoding="utf-8")
    assert notebooks.notebook_parameters(path)["seed"] == 0
    first = notebooks.read_notebook(path)
    first.metadata["edited"] = True  # a caller's edit does not reach the cache
    assert "edited" not in notebooks.read_notebook(path).metadata
    st = path.stat()
    path.write_text(source.replace("seed = 0 ", "seed = 7 ", 1), encoding="utf-8")  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert notebooks.notebook_parameters(path)["seed"] == 7
