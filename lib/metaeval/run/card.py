"""The report card with its notebook: :mod:`metaeval.studies.card` computes, stages and writes a card by the
output-folder rules of :mod:`metaeval._outputs`; executing the card notebook (``notebooks/61_report_card``) is
this layer's job, done here as the runner does it (the notebook's source materialized into a scratch folder,
the compendium's kernel, the kernel's own diagnostics such as its TCP notice kept out of the terminal).

``metaeval card`` calls :func:`make_card`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import metaeval.studies.card as _card
from metaeval.run.notebooks import execute
from metaeval.run.paths import find_notebook

__all__ = ["make_card", "execute_card_notebook"]


def execute_card_notebook(parameters: Mapping[str, Any], executed: str | os.PathLike) -> None:
    """Execute notebook ``61_report_card`` with ``parameters`` and save it at ``executed``, as the runner does.

    Raises
    ------
    RuntimeError
        A cell failed: the message names the cell and the error.
    """
    from papermill.exceptions import PapermillExecutionError

    with tempfile.TemporaryDirectory(prefix="metaeval-card-") as scratch:
        try:
            execute(find_notebook(_card.CARD_NOTEBOOK), Path(executed), parameters,
                     kernel_log=Path(scratch) / "kernel.log", progress_bar=False)
        except PapermillExecutionError as exc:
            raise RuntimeError(
                f"the card notebook failed in cell {exc.cell_index}: {exc.ename}: {exc.evalue}") from None


def make_card(scores, *, dataset: str, output_dir: str | os.PathLike, render: bool = True,
              **options) -> _card.Card:
    """:func:`metaeval.studies.card.make_card`, with the card notebook executed by :func:`execute_card_notebook`
    when ``render`` (the default): the same arguments, the same folder rules, the same result."""
    return _card.make_card(scores, dataset=dataset, output_dir=output_dir, render=render,
                           execute=execute_card_notebook if render else None, **options)
