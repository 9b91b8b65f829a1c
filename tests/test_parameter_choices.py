"""Choices listed in a parameter's comment (``pearson | spearman | kendall``) are checked before a kernel
starts (issue 25 item 3): by ``metaeval run``, ``metaeval sweep`` and the card (which runs notebook 61).

Planted bug caught: ``check_choices`` returning early (no check) -> both tests below fail.
"""

from __future__ import annotations

import time

import pytest

from metaeval.run.cli import main
from metaeval.run.notebooks import list_notebooks, parameter_docs
from metaeval.run.params import Parameter, ParameterError, check_choices, choices


def test_every_default_is_among_its_choices():
    # a closed list is only inferred when the default is one of its values; every notebook keeps that true
    found = 0
    for nb in list_notebooks():
        for p in parameter_docs(nb):
            if p.choices:
                found += 1
                assert p.default is None or p.default in p.choices, (nb.name, p.name)
    assert found >= 15  # coefficient, test, incomplete, statistic, sentences, pair_test ...


@pytest.mark.parametrize(("argv", "message"), [
    (["run", "20", "-p", "coefficient", "spearmann"],
     "metaeval run: 20_deutsch2021_ci_simulation.py: parameter 'coefficient' must be one of pearson | spearman | "
     "kendall, got 'spearmann' (did you mean 'spearman'?)"),
    (["sweep", "20", "SWEEP", "-p", "coefficient", "pearson,spearmann"],
     "metaeval sweep: grid of 20_deutsch2021_ci_simulation.py: parameter 'coefficient' must be one of pearson | "
     "spearman | kendall, got 'spearmann' (did you mean 'spearman'?)"),
])
def test_typo_in_a_choice_is_refused_before_any_kernel(tmp_path, capsys, argv, message):
    argv = [str(tmp_path / "sweep") if a == "SWEEP" else a for a in argv]
    start = time.perf_counter()
    assert main(argv) == 2
    assert time.perf_counter() - start < 10  # no kernel started (a kernel start alone takes several seconds)
    assert capsys.readouterr().err.strip() == message
    assert not (tmp_path / "sweep").exists()


def test_list_values_are_checked_item_by_item():
    p = Parameter("levels", ["system"], "system | summary | global", 1)
    check_choices([p], {"levels": ["summary", "global"]})
    with pytest.raises(ParameterError, match="got 'sumary'"):
        check_choices([p], {"levels": ["system", "sumary"]})


def test_open_parameters_have_no_choices():
    assert choices("dataset", "summeval", "summeval | realsumm") is None
