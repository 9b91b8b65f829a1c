"""Silent loss of user data in the dataset readers (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

import metaeval
import numpy as np
import pytest
from metaeval.run import notebooks as nbrun

ROOT = nbrun.project_root()

def _metrics_file(tmp_path, change=None) -> Path:
    records = [{"instance_id": f"i{i}", "summarizer_id": f"s{s}", "summarizer_type": "peer",
                "metrics": {"m": i + s, "h": i * s}} for i in range(3) for s in range(3)]
    if change:
        change(records)
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize("kind", ["Peer", None, "PEER "])
def test_a_record_that_is_not_exactly_peer_is_an_error_not_skipped(kind, tmp_path):
    path = _metrics_file(tmp_path, lambda rs: rs[4].update(summarizer_type=kind))
    with pytest.raises(metaeval.datasets.DataError,
                       match=r"metrics\.jsonl:5: field 'summarizer_type' must be exactly \"peer\""):
        metaeval.datasets.load(path)


def test_flattened_name_collision_is_an_error(tmp_path):
    path = _metrics_file(tmp_path, lambda rs: rs[0].update(metrics={"x": {"y": 1}, "x.y": 2}))
    with pytest.raises(metaeval.datasets.DataError, match=r"metrics\.jsonl:1: score name 'x\.y' occurs twice"):
        metaeval.datasets.load(path)


def test_a_complete_file_loads_every_record(tmp_path):
    ds = metaeval.datasets.load(_metrics_file(tmp_path))
    np.testing.assert_array_equal(ds.matrix("m"), np.add.outer(np.arange(3), np.arange(3)).T)


def test_empty_dataset_paths_are_refused():
    with pytest.raises(metaeval.datasets.DataError, match="name_or_path is empty"):
        metaeval.datasets.load("")


