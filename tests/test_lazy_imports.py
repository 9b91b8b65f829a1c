"""Import laziness: what ``import metaeval`` and the ROUGE path load (each check in a fresh interpreter, since
this test session has imported everything already)."""

from __future__ import annotations

import json
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
