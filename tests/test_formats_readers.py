"""The record readers of ``metaeval.data.formats`` (issue 21 item 4-5, issue 24 item 9, issue 25 item 1).

Planted bugs these tests catch (each planted once by hand, seen failing, then removed):
- nested score names losing their parent prefix (``_flatten`` recursing with ``prefix`` instead of
  ``name + "."``): ``test_nested_score_names_keep_every_parent``;
- a line read without a length bound (``fh.readline()``): ``test_one_huge_line_is_a_clear_error`` (its peak
  memory check fails: 2 GiB read into one bytes object).
"""

from __future__ import annotations

import json
import tracemalloc

import pytest

from metaeval.data import formats
from metaeval.data.formats import DataError, parse_record, read_jsonl


def test_nested_score_names_keep_every_parent():
    rec = parse_record(
        {"instance_id": "d1", "summarizer_id": "A",
         "metrics": {"rouge-2": {"f1": 0.2, "recall": 0.3}, "qa-eval": {"f1": 0.4},
                     "a": {"b": {"c": 1, "d": {"e": 2}}}, "METEOR": 0.1},
         "expert_annotations": {"relevance": [1, 2, 3]}},
        "x.jsonl:1",
    )
    assert rec is not None
    assert rec.scores == {"rouge-2.f1": 0.2, "rouge-2.recall": 0.3, "qa-eval.f1": 0.4, "a.b.c": 1.0,
                          "a.b.d.e": 2.0, "METEOR": 0.1, "expert.relevance": 2.0}
    assert rec.ratings == {"expert.relevance": [1.0, 2.0, 3.0]}


def test_flattened_collision_is_still_an_error():
    with pytest.raises(DataError, match=r"score name 'x\.y' occurs twice"):
        parse_record({"instance_id": "d", "summarizer_id": "A", "metrics": {"x": {"y": 1}, "x.y": 2}}, "f:1")


@pytest.mark.parametrize(("record", "words"), [
    ({"doc": "d1", "summarizer_id": "A", "metrics": {"m": 1}},
     "unknown field 'doc' (SacreROUGE Metrics JSONL); name it 'instance_id', or convert the table with "
     "`metaeval import SOURCE DEST --doc doc`"),
    ({"instance_id": "d1", "model": "A", "metrics": {"m": 1}},
     "unknown field 'model' (SacreROUGE Metrics JSONL); name it 'summarizer_id', or convert the table with "
     "`metaeval import SOURCE DEST --system model`"),
])
def test_id_synonyms_name_the_fix(record, words):
    with pytest.raises(DataError) as info:
        parse_record(record, "f:1")
    assert str(info.value) == f"f:1: {words}"


def test_missing_key_names_the_synonym_when_ignored():
    # the synonym is ignored on purpose: the missing key message still says what to do
    with pytest.raises(DataError) as info:
        parse_record({"doc": "d1", "summarizer_id": "A", "metrics": {"m": 1}}, "f:1", ignore_fields=frozenset({"doc"}))
    assert str(info.value) == ("f:1: missing field 'instance_id'; the record has 'doc': name it 'instance_id', "
                               "or convert the table with `metaeval import SOURCE DEST --doc doc`")


def test_csv_given_as_jsonl_points_to_import(tmp_path):
    path = tmp_path / "study.csv"
    path.write_text("doc,system,summary\nd1,A,the cat\n")
    with pytest.raises(DataError) as info:
        list(read_jsonl(path))
    message = str(info.value)
    assert message.startswith(f"{path}:1: not valid JSON")
    assert f"`metaeval import {path} DEST" in message


def test_parquet_given_as_jsonl_points_to_import(tmp_path):
    path = tmp_path / "study.jsonl"
    path.write_bytes(b"PAR1\x15\x04\xe0\x00\x00")
    with pytest.raises(DataError, match="metaeval import"):
        list(read_jsonl(path))


def test_one_huge_line_is_a_clear_error(tmp_path):
    # issue 24 item 9: a 2 GiB file on one line gave a MemoryError traceback. A sparse file costs no disk; the
    # reader must stop after MAX_LINE_BYTES (64 MiB) with a message, never read the 2 GiB.
    path = tmp_path / "huge.jsonl"
    with open(path, "wb") as fh:
        fh.truncate(2 * 2**30)
    tracemalloc.start()
    try:
        with pytest.raises(DataError) as info:
            list(read_jsonl(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * formats.MAX_LINE_BYTES  # readline buffers a copy; never the whole file
    assert str(info.value) == (f"{path}:1: line longer than 64 MiB; a JSONL dataset holds one record (one input x "
                               f"system) per line; {formats.FORMAT_HELP}")


def test_long_line_after_good_lines_names_its_line(tmp_path, monkeypatch):
    monkeypatch.setattr(formats, "MAX_LINE_BYTES", 2**20)  # 1 MiB here, so the test writes 1 MiB, not 64
    path = tmp_path / "big.jsonl"
    good = json.dumps({"instance_id": "d", "summarizer_id": "A", "metrics": {"m": 1}})
    path.write_text(good + "\n" + '{"instance_id": "' + "x" * 2**20 + "\n")
    records = read_jsonl(path)
    assert next(records)[0] == 1
    with pytest.raises(DataError, match=r"big\.jsonl:2: line longer than 1 MiB; a JSONL dataset holds one record"):
        next(records)
