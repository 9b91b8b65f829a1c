"""Caches that cannot run code and do not serve corrupt entries (issue 24, case 5 and "What to build").

A cache folder can be shared (a lab's cluster scratch, a CI cache): anyone who can write to it must not be
able to run code in later metaeval processes, and a damaged entry must be recomputed with a warning, never
served. Every cache entry here is parquet + npz (``allow_pickle=False``) + JSON with the sha256 of its parts
(:func:`metaeval._io.save_cached` / :func:`load_cached`).
"""

from __future__ import annotations

import hashlib
import json
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval._io import CacheWarning, load_cached, save_cached
from metaeval.data import _loading, datasets


class _Planted:
    """Unpickling this creates the marker file: the proof that a cache read executed code."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def _payload(marker: Path) -> bytes:
    return pickle.dumps(_Planted(marker))


def _plant_everywhere(folder: Path, marker: Path) -> list[Path]:
    """Replace every file of a cache folder by the pickle; the JSON records get matching sha256 values, so
    only the file formats stand between the pickle and its execution (an attacker can compute a sha256)."""
    payload = _payload(marker)
    planted = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix != ".json":
            path.write_bytes(payload)
            planted.append(path)
    for path in sorted(folder.rglob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if isinstance(record, dict) and "parts" in record:
            record["parts"] = {name: hashlib.sha256(payload).hexdigest() for name in record["parts"]}
            path.write_text(json.dumps(record), encoding="utf-8")
    # and at the name an older version read with pickle.load
    for path in sorted(folder.rglob("*.json")):
        path.with_suffix(".pkl").write_bytes(payload)
        planted.append(path.with_suffix(".pkl"))
    return planted


@pytest.fixture()
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("METAEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(_loading, "_LOADED", {})
    return tmp_path


def test_the_planted_pickle_would_run(tmp_path):
    # the check of the check: unpickling the payload does create the marker
    marker = tmp_path / "ran"
    pickle.loads(_payload(marker))
    assert marker.exists()


def test_a_pickle_planted_in_the_dataset_cache_never_runs(fresh, monkeypatch):
    """Fails on the code before issue 24: the dataset cache was read with pickle.load and the marker appeared."""
    parsed = datasets.load("fabbri2020")
    cache = fresh / "cache" / "datasets"
    assert list(cache.iterdir())
    marker = fresh / "code-ran"
    _plant_everywhere(cache, marker)
    monkeypatch.setattr(_loading, "_LOADED", {})
    with pytest.warns(CacheWarning, match="cached dataset .* recomputing"):
        again = datasets.load("fabbri2020")
    assert not marker.exists()
    for name in parsed.score_names:
        np.testing.assert_array_equal(again.matrix(name, allow_nan=True), parsed.matrix(name, allow_nan=True))
    # and the entry was rewritten: the next load uses it without a warning
    monkeypatch.setattr(_loading, "_LOADED", {})
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        datasets.load("fabbri2020")


def test_a_pickle_planted_in_the_rouge_cache_never_runs(fresh):
    """Fails on the code before issue 24 (pd.read_pickle of the ROUGE table)."""
    from metaeval.data.scoring import rouge_table

    ds = datasets.load("summeval").subset(datasets.load("summeval").systems[:2], datasets.load("summeval").inputs[:3])
    variants = ["R-1|stem=1|stop=0|F", "R-2|stem=1|stop=0|R"]
    first = rouge_table(ds, variants, n_refs=1)
    marker = fresh / "code-ran"
    _plant_everywhere(fresh / "cache" / "rouge", marker)
    with pytest.warns(CacheWarning, match="recomputing"):
        again = rouge_table(ds, variants, n_refs=1)
    assert not marker.exists()
    pd.testing.assert_frame_equal(again, first)


@pytest.mark.parametrize("damage", ["nan", "out_of_range", "shifted_rows", "truncated", "flipped_byte"])
def test_a_corrupt_rouge_cache_entry_is_recomputed_with_a_warning(fresh, damage):
    from metaeval.data.scoring import rouge_table

    full = datasets.load("summeval")
    ds = full.subset(full.systems[:2], full.inputs[:3])
    variants = ["R-1|stem=1|stop=0|F"]
    first = rouge_table(ds, variants, n_refs=1)
    (entry,) = (fresh / "cache" / "rouge").glob("*.json")
    part = entry.with_name(entry.stem + ".scores.parquet")
    frame = pd.read_parquet(part)
    if damage in ("nan", "out_of_range", "shifted_rows"):
        if damage == "nan":
            frame.iloc[0, 0] = np.nan
        elif damage == "out_of_range":
            frame.iloc[0, 0] = 7.0
        else:
            frame.index = pd.MultiIndex.from_tuples([(s + "x", i) for s, i in frame.index], names=frame.index.names)
        frame.to_parquet(part)
        # a consistent entry (its checksum rewritten): only the validation of the values can catch it
        record = json.loads(entry.read_text())
        record["parts"][part.name] = hashlib.sha256(part.read_bytes()).hexdigest()
        entry.write_text(json.dumps(record))
    elif damage == "truncated":
        part.write_bytes(part.read_bytes()[:50])
    else:
        data = bytearray(part.read_bytes())
        data[len(data) // 2] ^= 0xFF
        part.write_bytes(bytes(data))
    with pytest.warns(CacheWarning, match="cached ROUGE table"):
        again = rouge_table(ds, variants, n_refs=1)
    pd.testing.assert_frame_equal(again, first)


def test_object_arrays_are_refused_when_written_and_when_read(tmp_path):
    with pytest.raises(TypeError, match="no objects"):
        save_cached(tmp_path / "e.json", arrays={"x": np.array([{"a": 1}], dtype=object)})
    # a hand-made npz holding a pickled object array, with a matching checksum: refused on load
    marker = tmp_path / "ran"
    npz = tmp_path / "e.arrays.npz"
    with open(npz, "wb") as fh:
        np.savez(fh, x=np.array([_Planted(marker)], dtype=object))
    (tmp_path / "e.json").write_text(json.dumps({
        "format": 1, "frames": [], "arrays": ["x"], "meta": {},
        "parts": {npz.name: hashlib.sha256(npz.read_bytes()).hexdigest()}}))
    with pytest.warns(CacheWarning, match="Object arrays cannot be loaded|allow_pickle"):
        assert load_cached(tmp_path / "e.json") is None
    assert not marker.exists()


def test_an_entry_naming_a_part_outside_its_folder_is_refused(tmp_path):
    (tmp_path / "e.json").write_text(json.dumps({"format": 1, "frames": [], "arrays": [], "meta": {},
                                                 "parts": {"../../etc/passwd": "0" * 64}}))
    with pytest.warns(CacheWarning, match="not beside the entry"):
        assert load_cached(tmp_path / "e.json") is None


def test_a_missing_entry_is_a_silent_miss(tmp_path):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_cached(tmp_path / "absent.json") is None


def test_no_pickle_in_the_library():
    """No module reads or writes a pickle."""
    import re

    lib = Path(__file__).resolve().parents[1] / "lib" / "metaeval"
    # the one exception: `metaeval download newsroom` converts the source's data.pkl once, with an Unpickler
    # whose find_class refuses every class and function (plain data only; a planted os.system pickle is refused
    # in tests/test_download.py); no cache or dataset the library reads at run time is a pickle
    allowed: set[str] = {"data/_converters.py"}
    found = sorted(p.relative_to(lib).as_posix() for p in lib.rglob("*.py")
                   if re.search(r"\bpickle\.(loads?|dumps?)\b|read_pickle|to_pickle|allow_pickle=True",
                                p.read_text(encoding="utf-8")))
    assert set(found) <= allowed, f"pickle used in {sorted(set(found) - allowed)}"
