"""The on-disk cache of parsed embedded datasets and the in-process checksum cache: used when valid, never
trusted over a changed file."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from metaeval.data import _loading, datasets
from metaeval.data.datasets import DataError, load


@pytest.fixture()
def fresh(tmp_path, monkeypatch):
    """An empty cache folder and an empty in-process load cache."""
    monkeypatch.setenv("METAEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(_loading, "_LOADED", {})
    return tmp_path


def _same(a, b):
    assert a.name == b.name and a.systems == b.systems and a.inputs == b.inputs
    assert a.score_names == b.score_names and a.info == b.info
    for s in a.score_names:
        np.testing.assert_array_equal(a.matrix(s, allow_nan=True), b.matrix(s, allow_nan=True))


def test_parsed_dataset_is_served_from_disk(fresh, monkeypatch):
    parsed = load("fabbri2020")
    files = list((fresh / "cache" / "datasets").glob("fabbri2020-*.json"))
    assert len(files) == 1
    monkeypatch.setattr(_loading, "_LOADED", {})

    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed again although the disk cache holds the dataset")

    monkeypatch.setattr(_loading, "parse_record", no_parsing)
    _same(load("fabbri2020"), parsed)


def test_unreadable_cache_entry_is_parsed_again(fresh, monkeypatch):
    parsed = load("fabbri2020")
    (entry,) = (fresh / "cache" / "datasets").glob("fabbri2020-*.json")
    entry.write_bytes(b"not an entry")
    monkeypatch.setattr(_loading, "_LOADED", {})
    from metaeval._io import CacheWarning

    with pytest.warns(CacheWarning, match="recomputing"):
        _same(load("fabbri2020"), parsed)
    assert entry.read_bytes() != b"not an entry"  # rewritten


def test_changed_file_is_detected_despite_both_caches(fresh, monkeypatch):
    root = fresh / "data"
    shutil.copytree(datasets.data_dir() / "deutsch2021", root / "deutsch2021")
    shutil.copy(datasets.data_dir() / "SHA256SUMS", root / "SHA256SUMS")
    monkeypatch.setenv("METAEVAL_DATA", str(root))
    load("fabbri2020")  # verified (in-process checksum cache) and written to the disk cache
    target = root / "deutsch2021" / "fabbri2020" / "s3.jsonl"
    st = target.stat()
    text = target.read_text()
    i = next(k for k, ch in enumerate(text) if ch.isdigit() and ch != "7")
    # same size, and the modification time set back: only the content (and ctime) differ
    target.write_text(text[:i] + "7" + text[i + 1:])
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert target.stat().st_size == st.st_size and target.stat().st_mtime_ns == st.st_mtime_ns
    monkeypatch.setattr(_loading, "_LOADED", {})
    with pytest.raises(DataError, match=r"s3\.jsonl has sha256 .* expected"):
        load("fabbri2020")


def test_cache_key_follows_the_parser_source(fresh, monkeypatch, tmp_path):
    files = tuple(_loading._resolve("fabbri2020")[1])
    args = ("fabbri2020", files, "raise", frozenset(), "d", "m")
    before = _loading._disk_cache_path(*args)
    fake = tmp_path / "formats.py"
    fake.write_text("# another parser\n")
    monkeypatch.setattr(_loading, "_CODE", (*_loading._CODE[:1], fake, *_loading._CODE[2:]))
    assert _loading._disk_cache_path(*args) != before
    assert before is not None and before.parent == fresh / "cache" / "datasets"
    monkeypatch.setattr(_loading, "_CODE", (tmp_path / "missing.py",))
    assert _loading._disk_cache_path(*args) is None  # sources unavailable: no cache rather than a crash


def test_cache_key_covers_every_module_of_the_parser():
    # the parser was split over several modules (issue 21): a change to any of them must miss the cache
    parser = {"datasets.py", "_dataset.py", "_loading.py", "formats.py", "synthetic.py"}
    assert parser <= {p.name for p in _loading._CODE}
    assert all(p.is_file() for p in _loading._CODE)


def test_user_files_are_not_cached(fresh, tmp_path):
    src = datasets.data_dir() / "deutsch2021" / "fabbri2020"
    folder = tmp_path / "mine"
    shutil.copytree(src, folder)
    load(folder)
    assert not (fresh / "cache" / "datasets").exists()
