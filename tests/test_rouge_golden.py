"""ROUGE against ROUGE-1.5.5's own output: every value of tests/fixtures/rouge155 within 1e-5.

The fixtures' README says texts were given to ROUGE one line per text. That holds for the 1-reference
SummEval files and the demo files. The 11-reference SummEval file was made with one *sentence* per line
(sentences split after stand-alone ".", "!", "?" tokens): its ROUGE-L/W values match that input 100 %
and one-line input in only ~75 % of cells; ROUGE-N/S/SU are unaffected by line breaks. Each file is
therefore scored from the input form it was generated from.
"""

import gzip
import json
import warnings

import numpy as np
import pytest

from conftest import FIXTURES
from metaeval.rouge import RougeWarning, score
from metaeval.text import split_ptb_sentences
from metaeval.variants import rouge155_variants

ROUGE = FIXTURES / "rouge155"
TOL = 1e-5 + 1e-12


def _read(name):
    opener = gzip.open if name.endswith(".gz") else open
    with opener(ROUGE / name, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _compare(golden, frame, variants):
    gold = np.array([[g["scores"][v.key] if g["scores"][v.key] is not None else np.nan for v in variants]
                     for g in golden])
    ours = frame[[v.key for v in variants]].to_numpy()
    assert gold.shape == ours.shape
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(gold))
    diff = np.abs(np.nan_to_num(ours) - np.nan_to_num(gold))
    bad = np.argwhere(diff > TOL)
    assert bad.size == 0, [(golden[i]["id"], variants[j].key, gold[i, j], ours[i, j]) for i, j in bad[:10]]
    return gold.size


@pytest.fixture(scope="module")
def summeval_records():
    records = {}
    with open(FIXTURES.parents[1] / "data" / "summeval" / "summeval_joined.jsonl", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            records[f"{r['instance_id']}|{r['summarizer_id']}"] = r
    return records


@pytest.mark.parametrize(
    "golden_file,n_refs,exceptions,split",
    [
        ("summeval_1ref_golden.jsonl.gz", 1, "full", False),
        ("summeval_1ref_golden_emptydb.jsonl.gz", 1, "empty", False),
        ("summeval_11refs_golden.jsonl.gz", 11, "full", True),
    ],
)
def test_summeval_golden(summeval_records, golden_file, n_refs, exceptions, split):
    golden = _read(golden_file)
    ids = [g["id"] for g in golden]
    form = split_ptb_sentences if split else (lambda t: t)
    peers = [form(summeval_records[i]["summary"]) for i in ids]
    refs = [[form(r) for r in summeval_records[i]["references"][:n_refs]] for i in ids]
    variants = rouge155_variants(exceptions=exceptions)
    frame = score(peers, refs, variants, ids=ids)
    assert _compare(golden, frame, variants) == 1600 * 96


@pytest.mark.parametrize("golden_file,exceptions",
                         [("demo_golden.jsonl", "full"), ("demo_golden_emptydb.jsonl", "empty")])
def test_demo_golden_including_best_reference(golden_file, exceptions):
    records = _read("demo_input.jsonl")
    golden = _read(golden_file)
    variants = rouge155_variants(exceptions=exceptions) + rouge155_variants(refs="B", exceptions=exceptions)
    frame = score([r["peer"] for r in records], [r["refs"] for r in records], variants)
    assert _compare(golden, frame, variants) == 36 * 192


def test_malformed_golden_with_reasons():
    records = _read("malformed_input.jsonl")
    golden = _read("malformed_golden.jsonl")
    variants = rouge155_variants() + rouge155_variants(refs="B")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = score([r["peer"] for r in records], [r["refs"] for r in records], variants)
    assert _compare(golden, frame, variants) == 6 * 192
    messages = [str(w.message) for w in caught if issubclass(w.category, RougeWarning)]
    assert any("no references" in m for m in messages)
    assert any("no countable tokens" in m for m in messages)
