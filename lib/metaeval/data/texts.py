"""The texts of any dataset the loader reads, as the flat lists ``metaeval rouge`` / ``metaeval grouge`` score.

A scorer's input may be its own JSONL form (``{"id", "peer", "refs"}``, read by the command line itself) or
anything :func:`metaeval.datasets.load` reads: a dataset folder, a JSONL file of dataset records (``summary``
and ``references``), a table. Each scored cell keeps its ``instance_id`` and ``summarizer_id``, so the scores
written merge back into the dataset on the same keys.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metaeval.data.formats import DataError

__all__ = ["ScoringInput", "is_scorer_jsonl", "read_dataset_texts"]


@dataclass(frozen=True)
class ScoringInput:
    """Parallel lists: record ids ``INSTANCE::SUMMARIZER``, summaries, reference lists, and the keys carried
    into the output (``{"instance_id", "summarizer_id"}``); ``skipped`` names cells without texts."""

    ids: list[str]
    peers: list[str]
    refs: list[list[str]]
    keys: list[dict[str, Any]]
    skipped: tuple[str, ...] = ()


def is_scorer_jsonl(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is for the scorers' own reader: a JSONL file whose first record has ``peer``/``refs``
    (or a path that reader reports on: missing, a folder without JSONL files); False for a dataset.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "in.jsonl"
    >>> _ = f.write_text('{"id": 0, "peer": "a b", "refs": ["a c"]}\\n')
    >>> is_scorer_jsonl(f)
    True
    """
    from metaeval.data.tabular import is_table

    path = Path(path)
    if not path.exists():
        return True  # the scorer's own reader names the missing file
    if path.is_dir():
        return not any(path.glob("*.jsonl"))  # a dataset folder; an empty folder is the scorer's error
    if is_table(path):
        return False
    with open(path, "rb") as fh:
        for raw in fh:
            if raw.strip():
                try:
                    record = json.loads(raw)
                except (ValueError, UnicodeDecodeError):
                    return True  # let the scorer's own reader name the line and the problem
                return not isinstance(record, dict) or "peer" in record or "refs" in record
    return True


def read_dataset_texts(source: str | os.PathLike[str], **load_options: Any) -> ScoringInput:
    """Summaries and references of every (system, input) cell of a dataset, in the dataset's order.

    Cells without a summary or without references are left out and named in ``skipped``.

    Raises
    ------
    DataError
        The dataset has no texts at all.
    """
    from metaeval.data.datasets import load

    ds = load(source, **load_options)
    if ds.texts is None:
        raise DataError(f"{source}: the dataset holds no summaries or references to score (scores: "
                        f"{', '.join(ds.score_names) or 'none'})")
    ids, peers, refs, keys, skipped = [], [], [], [], []
    for (system, instance), summary, references in zip(ds.texts.index, ds.texts["summary"], ds.texts["references"]):
        if summary is None or not isinstance(references, list):
            skipped.append(f"{instance}::{system}")
            continue
        ids.append(f"{instance}::{system}")
        peers.append(summary)
        refs.append(list(references))
        keys.append({"instance_id": instance, "summarizer_id": system})
    if not ids:
        raise DataError(f"{source}: no cell has both a summary and references")
    return ScoringInput(ids, peers, refs, keys, tuple(skipped))
