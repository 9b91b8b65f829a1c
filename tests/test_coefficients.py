"""The coefficient registry (metaeval.stats.coefficients) is the one list of built-in coefficients: the Literal, the
public tuples, the CLI's choices, the notebooks' closed choices and labels, and batch_corr's dispatch follow it."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from metaeval.stats import coefficients as C
from metaeval.stats import correlation

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def test_the_literal_lists_the_registry():
    assert typing.get_args(correlation.Coefficient) == C.COEFFICIENTS == correlation.COEFFICIENTS
    assert correlation.FISHER_COEFFICIENTS == ("pearson", "spearman", "kendall")  # Bonett & Wright's constants


def test_every_record_has_a_kernel_and_a_label():
    rng = np.random.default_rng(0)
    x, z = rng.normal(size=(2, 3, 20))
    for name, info in C.REGISTRY.items():
        assert info.name == name and info.label and info.memory in ("cells", "pairs", "short-pairs")
        r = correlation.batch_corr(x, z, name)
        assert r.shape == (3,) and np.isfinite(r).all()
        np.testing.assert_array_equal(r, info.function(x, z, None))
    # the kernels named by the records against scipy (rtol 1e-12: the same formulas, numpy's sums)
    for name, ref in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
        np.testing.assert_allclose(correlation.batch_corr(x, z, name), [ref(a, b)[0] for a, b in zip(x, z)],
                                   rtol=1e-12)


def test_labels():
    assert C.coefficient_label("spearman") == "Spearman's ρ"
    assert C.coefficient_label(np.corrcoef) == "corrcoef"
    with pytest.raises(ValueError, match="coefficient must be one of"):
        C.coefficient_label("kendal")


def test_cli_choices_are_the_fisher_coefficients(capsys):
    from metaeval.run import cli

    with pytest.raises(SystemExit):
        cli.main(["card", "scores.csv", "--dataset", "summeval", "--coefficient", "kendall-c"])
    assert "invalid choice: 'kendall-c' (choose from 'pearson', 'spearman', 'kendall')" in capsys.readouterr().err


def test_notebook_coefficient_choices_are_registered():
    # a parameter comment "pearson | spearman | kendall" is a closed list run/params.py enforces: each name must be
    # a registered coefficient (a renamed or removed one fails here, not after a whole run)
    from metaeval.run.params import choices

    found = 0
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py")):
        for name, default, comment in re.findall(r'^(\w*coefficient\w*) = "([\w-]+)"\s*#(.*)$', path.read_text(),
                                                 re.M):
            allowed = choices(name, default, comment)
            assert default in C.COEFFICIENTS, (path.name, name, default)
            if allowed:
                found += 1
                assert set(allowed) <= set(C.COEFFICIENTS), (path.name, name, allowed)
    assert found >= 3
