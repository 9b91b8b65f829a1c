"""Data inputs of issue 47 (round 5): each case reduced to a test, each error one line naming the input, what is
wrong and the fix, exit status 2 on the command line.

* an unlisted file beside an embedded dataset's files is refused where the data are read (``load``), as
  ``run-all``'s fingerprint refuses it; a deleted listed file is named;
* ``$METAEVAL_DATASETS`` naming a file; a gzip-compressed JSONL file.
"""

from __future__ import annotations

import gzip
import shutil

import pytest

import metaeval
from metaeval.datasets import DataError, load
from metaeval.run.cli import main


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """The embedded SummEval (its two folders) and frank-xsum with the real SHA256SUMS, as $METAEVAL_DATA."""
    source = metaeval.datasets.data_dir()
    root = tmp_path / "data"
    for rel in ("summeval", "deutsch2021/fabbri2020", "atlas/frank-xsum"):
        shutil.copytree(source / rel, root / rel)
    shutil.copy(source / "SHA256SUMS", root / "SHA256SUMS")
    monkeypatch.setenv("METAEVAL_DATA", str(root))
    return root


def test_an_unlisted_file_beside_an_embedded_dataset_is_refused_at_load(data_copy, capsys):
    assert load("summeval").shape == (16, 100)  # the copy as it is loads
    (data_copy / "summeval" / "extra.jsonl").write_text('{"instance_id": "x", "summarizer_id": "y"}\n')
    with pytest.raises(DataError, match=r"^data file summeval/extra\.jsonl in .* is not listed in .*SHA256SUMS: .*"
                                        r"move it out of the data folder, or, .* add its line"):
        load("summeval")
    assert main(["describe", "summeval"]) == 2
    err = capsys.readouterr().err
    assert "summeval/extra.jsonl" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    (data_copy / "summeval" / "extra.jsonl").unlink()
    (data_copy / "summeval" / "NOTES.txt").write_text("a user's notes")  # not documentation by name: refused too
    with pytest.raises(DataError, match=r"summeval/NOTES\.txt .* is not listed"):
        load("summeval")


def test_a_deleted_embedded_file_is_named(data_copy):
    (data_copy / "atlas" / "frank-xsum" / "frank-xsum.jsonl").unlink()
    with pytest.raises(DataError, match=r"frank-xsum/frank-xsum\.jsonl is missing from .* restore it"):
        load("frank-xsum")


def test_metaeval_datasets_naming_a_file(tmp_path, monkeypatch, capsys):
    afile = tmp_path / "datasets"
    afile.write_text("")
    monkeypatch.setenv("METAEVAL_DATASETS", str(afile))
    with pytest.raises(DataError, match=r"^\$METAEVAL_DATASETS=.*datasets is a file, not a folder: set it to a folder"):
        load("dialsummeval")
    assert main(["download", "dialsummeval"]) == 2
    err = capsys.readouterr().err
    assert "is a file, not a folder" in err and "File exists" not in err and "Traceback" not in err


@pytest.mark.parametrize("name", ["records.jsonl.gz", "records.jsonl"])
def test_a_gzip_jsonl_is_named_as_compressed_not_a_table(tmp_path, name, capsys):
    path = tmp_path / name
    path.write_bytes(gzip.compress(b'{"instance_id": "d", "summarizer_id": "s", "metrics": {"m": 1}}\n'))
    with pytest.raises(DataError, match=r"is gzip-compressed, not JSONL text; decompress it first \(`.*gunzip"):
        load(path)
    assert main(["describe", str(path)]) == 2
    err = capsys.readouterr().err
    assert "gzip-compressed" in err and "a table" not in err
