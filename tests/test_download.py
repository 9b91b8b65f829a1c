"""``metaeval download``: the download-only atlas datasets (metaeval.data.download, _converters, _atlas_download).

Every source is replaced by a small file in the source's exact format, written here by hand (a few rows), served
from a local ``file://`` mirror laid out like raw.githubusercontent.com, with its sha256 computed here; the
converted folder is loaded with ``load`` and its cells checked against the hand-made values. No network is used.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import urllib.error
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from metaeval.data import _atlas_download
from metaeval.data.atlas import atlas_datasets
from metaeval.data.download import DownloadError, download, downloaded_path, is_downloaded
from metaeval.datasets import DataError, load


@pytest.fixture(autouse=True)
def _datasets_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("METAEVAL_DATASETS", str(tmp_path / "datasets"))
    monkeypatch.delenv("METAEVAL_DOWNLOAD_BASE", raising=False)


def serve(tmp_path: Path, monkeypatch, name: str, contents: dict[str, bytes]) -> str:
    """Pin ``contents`` (path -> bytes) as dataset ``name``'s files and serve them; returns the base URL."""
    spec = _atlas_download.SPECS[name]
    files = tuple(replace(f, sha256=hashlib.sha256(contents[f.path]).hexdigest(), size=len(contents[f.path]))
                  for f in spec.files if f.path in contents)
    assert len(files) == len(spec.files), "every pinned file needs a test file"
    folders = []
    for d in spec.folders:  # pinned by the sha256 of the folder's SHA256SUMS listing
        inside = sorted(k for k in contents if k.startswith(d.path + "/"))
        listing = "".join(f"{hashlib.sha256(contents[k]).hexdigest()}  {k.rsplit('/', 1)[1]}\n" for k in inside)
        folders.append(replace(d, sha256sums=hashlib.sha256(listing.encode()).hexdigest(), count=len(inside)))
    monkeypatch.setitem(_atlas_download.SPECS, name, replace(spec, files=files, folders=tuple(folders)))
    mirror = tmp_path / "mirror"
    for path, data in contents.items():
        dest = mirror / spec.files[0].repo / spec.files[0].commit / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    return mirror.as_uri()


def jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


# ----------------------------------------------------------------------------------------------------
# DialSummEval


DIALOGUES = {"13611791": "| Elena: Happy birthday! | Dorothea: Thanks!", "13729565": "| Tom: Lunch? | Ann: Sure"}


def _dial(doc, model, summary, rel):
    dims = ("consistency", "relevance", "fluency", "coherence")
    return {"id": doc, "dialogue": DIALOGUES[doc], "summary": summary, "model_id": model,
            "annotations": [{d: (r if d == "relevance" else 4) for d in dims} for r in rel]}


# hand-chosen relevance for A (the reference), B (LONGEST_3) and F (BART); the other 11 models rate 3, 3, 3
_DIAL_REL = {("13611791", "A"): [5, 5, 4], ("13611791", "F"): [4, 5, 3], ("13611791", "B"): [1, 2, 2],
             ("13729565", "F"): [3, 3, 3], ("13729565", "A"): [5, 4, 4], ("13729565", "B"): [2, 1, 1]}
DIAL = jsonl([_dial(doc, m, f"{m} on {doc} ." if m != "A" else f"gold {doc} .", _DIAL_REL.get((doc, m), [3, 3, 3]))
              for doc in DIALOGUES for m in "ABCDEFGHIJKLMN"])
_METRICS = "reproduce/analysis/models_eval_new"
# the authors' metric files: row i = line i of dials.txt, which lists 13729565 first (not the jsonl's order)
DIAL_FILES = {"annotation_campus/human_judgment.jsonl": DIAL,
              f"{_METRICS}/dials.txt": (DIALOGUES["13729565"] + "\n" + DIALOGUES["13611791"] + "\n").encode()}
DIAL_FILES.update({f"{_METRICS}/{m}/metrics.csv": f"rouge-1,bartscore_h\n0.{i}5,-{i}.5\n0.{i}25,-2.0\n".encode()
                   for i, m in enumerate("ABCDEFGHIJKLMN")})


def test_dialsummeval_converted_and_loaded_by_name(tmp_path, monkeypatch, capsys):
    base = serve(tmp_path, monkeypatch, "dialsummeval", DIAL_FILES)
    with pytest.raises(DataError, match=r"dataset 'dialsummeval' is not downloaded: run `metaeval download "
                                        r"dialsummeval`"):
        load("dialsummeval")
    result = download("dialsummeval", base_url=base)
    assert result.fetched and result.folder == downloaded_path("dialsummeval") and result.n_records == 30
    printed = capsys.readouterr().out
    assert ("https://raw.githubusercontent.com/kite99520/DialSummEval/667118e10ae69ef8cbc5cbddec0ce91b5c9c6187/"
            "annotation_campus/human_judgment.jsonl") in printed and "no licence file found" in printed
    ds = load("dialsummeval")
    # model A is the reference: skipped as a system by default (dataset.yml), kept as the reference
    assert ds.shape == (13, 2) and "GOLD" not in ds.systems and list(ds.inputs) == ["13611791", "13729565"]
    bart, longest = list(ds.systems).index("BART"), list(ds.systems).index("LONGEST_3")
    assert ds.default_human == "human.relevance"
    assert ds.ratings("human.relevance")[bart, 0].tolist() == [4, 5, 3]  # annotators in the source's order
    assert ds.matrix("human.relevance")[longest, 1] == pytest.approx(4 / 3)  # (2+1+1)/3
    assert list(ds.references()[0, 1]) == ["gold 13729565 ."]
    assert ds.summaries()[bart, 0] == "F on 13611791 ."
    # F is the 6th letter (i = 5): row 1 of its metrics.csv is 13729565, row 2 is 13611791
    assert ds.matrix("rouge-1")[bart].tolist() == [0.525, 0.55]
    assert ds.matrix("bartscore_h")[bart].tolist() == [-2.0, -5.5]
    assert "rouge-1" not in ds.human_scores
    both = load("dialsummeval", reference_records="as-systems")
    assert both.shape == (14, 2) and both.ratings("human.relevance")[list(both.systems).index("GOLD"), 0].tolist() \
        == [5, 5, 4]
    provenance = (result.folder / "PROVENANCE.md").read_text()
    assert "no licence file found in the repository; the data are not redistributed by this project" in provenance
    assert "Gao & Wan (2022)" in provenance and hashlib.sha256(DIAL).hexdigest() in provenance


def test_dialsummeval_refuses_a_line_without_three_annotators(tmp_path, monkeypatch):
    bad = _dial("13611791", "A", "x", [5, 5, 4])
    bad["annotations"] = bad["annotations"][:2]
    base = serve(tmp_path, monkeypatch, "dialsummeval",
                 {**DIAL_FILES, "annotation_campus/human_judgment.jsonl": jsonl([bad])})
    with pytest.raises(DataError, match=r"human_judgment.jsonl:1: expected 3 annotations"):
        download("dialsummeval", base_url=base, show=None)
    assert not downloaded_path("dialsummeval").exists()


def test_dialsummeval_metric_rows_must_match_the_dialogues(tmp_path, monkeypatch):
    files = {**DIAL_FILES, f"{_METRICS}/dials.txt": (DIALOGUES["13729565"] + "\n| Zed: unknown\n").encode()}
    base = serve(tmp_path, monkeypatch, "dialsummeval", files)
    with pytest.raises(DataError, match=r"dials.txt:2: a dialogue that human_judgment.jsonl does not have"):
        download("dialsummeval", base_url=base, show=None)


# ----------------------------------------------------------------------------------------------------
# OpinSummEval


def _opin_scores(case, values):
    row = {}
    for model, (a1, a2, r1) in values.items():
        row[model] = {"R1_F1": r1, "geval_Aspect Relevance": 3.5,
                      "annot1": {"asp_rel": a1, "self_coh": 4.0, "sent_con": 4.0, "readblty": 5.0},
                      "annot2": {"asp_rel": a2, "self_coh": 3.0, "sent_con": 4.0, "readblty": 5.0}}
    row["case"] = case
    return row


OPIN = {
    "metric_evaluation/scores.jsonl": jsonl([
        _opin_scores(1, {"bart": (2.0, 3.0, 0.25), "t5": (4.0, 4.0, 0.5)}),
        _opin_scores(2, {"bart": (1.0, 5.0, 0.125), "t5": (3.0, 2.0, 0.75)}),
    ]),
    "metric_evaluation/14model_outputs.jsonl": jsonl([
        {"revs": {"rev1": "great wash"}, "summ": "ref one", "case": 1,
         "model_output": {"bart": "bart says one", "t5": "t5 says one"}},
        {"revs": {"rev1": "bad food"}, "summ": "ref two", "case": 2,
         "model_output": {"bart": "bart says two", "t5": "t5 says two"}},
    ]),
}


def test_opinsummeval_two_annotators_and_the_source_metrics(tmp_path, monkeypatch):
    base = serve(tmp_path, monkeypatch, "opinsummeval", OPIN)
    folder = tmp_path / "mine" / "opin"
    download("opinsummeval", folder, base_url=base, show=None)
    assert not is_downloaded("opinsummeval")  # not in the default folder, so load("opinsummeval") still says so
    ds = load(folder)
    assert ds.shape == (2, 2) and list(ds.systems) == ["bart", "t5"] and list(ds.inputs) == ["1", "2"]
    assert ds.default_human == "human.aspect_relevance"
    assert ds.ratings("human.aspect_relevance")[0, 1].tolist() == [1.0, 5.0]
    assert ds.matrix("human.aspect_relevance")[1, 1] == 2.5
    assert ds.matrix("R1_F1").tolist() == [[0.25, 0.125], [0.5, 0.75]]
    assert ds.matrix("geval_Aspect Relevance")[0, 0] == 3.5
    assert "R1_F1" not in ds.human_scores and "human.readability" in ds.human_scores
    assert ds.summaries()[1, 0] == "t5 says one"


# ----------------------------------------------------------------------------------------------------
# Koh et al. (2022)


def _koh(dataset, doc, model, rel, fac):
    return {f"a{i + 1}": {"relevance_score": r, "factual_score": f, "sentence_error_list": [],
                          "factual_error_type": [], "model": model, "document_id": doc, "dataset": dataset,
                          "summary": f"{model} on {doc}"} for i, (r, f) in enumerate(zip(rel, fac))}


KOH = json.dumps([
    _koh("GovReport", "ID_R45741", "BART (LEAD 1K)", [0.9, 0.4, 0.8], [0.7, 0.7, 0.8]),
    _koh("arXiv", "ID_1603.04792", "BART (LEAD 1K)", [0.5, 0.25, 0.0], [1.0, 0.5, 0.75]),
    _koh("arXiv", "ID_1603.04792", "PEGASUS (ORACLE 8K)", [1.0, 1.0, 0.5], [0.0, 0.5, 1.0]),
]).encode()


def test_koh2022_subsets_and_annotators(tmp_path, monkeypatch):
    base = serve(tmp_path, monkeypatch, "koh2022-arxiv", {"annotation_data.jsonl": KOH})
    download("koh2022-arxiv", base_url=base, show=None)
    ds = load("koh2022-arxiv")
    assert ds.shape == (2, 1) and list(ds.inputs) == ["1603.04792"]  # the 'ID_' prefix removed; GovReport left out
    assert list(ds.systems) == ["BART (LEAD 1K)", "PEGASUS (ORACLE 8K)"]
    assert ds.ratings("human.factual_consistency")[1, 0].tolist() == [0.0, 0.5, 1.0]
    assert ds.matrix("human.relevance")[0, 0] == pytest.approx(0.25)


# ----------------------------------------------------------------------------------------------------
# Newsroom (BARTScore's pickle)

NEWS = {
    "2140": {"src": "article one", "ref_summ": "ref one", "sys_summs": {
        "lede3": {"sys_summ": "lede one", "scores": {"coherence": 4.0, "fluency": 4.5, "informativeness": 3.0,
                                                     "relevance": 3.5}},
        "pointer_c": {"sys_summ": "pointer one", "scores": {"coherence": 2.0, "fluency": 2.5,
                                                            "informativeness": 1.0, "relevance": 1.5}}}},
    "7569": {"src": "article two", "ref_summ": "ref two", "sys_summs": {
        "lede3": {"sys_summ": "lede two", "scores": {"coherence": 5.0, "fluency": 5.0, "informativeness": 4.0,
                                                     "relevance": 4.25}},
        "pointer_c": {"sys_summ": "pointer two", "scores": {"coherence": 1.0, "fluency": 1.0,
                                                            "informativeness": 1.0, "relevance": 1.0}}}},
}


def test_newsroom_pickle_read_without_globals(tmp_path, monkeypatch):
    base = serve(tmp_path, monkeypatch, "newsroom", {"SUM/Newsroom/data.pkl": pickle.dumps(NEWS)})
    download("newsroom", base_url=base, show=None)
    ds = load("newsroom")
    assert ds.shape == (2, 2) and list(ds.systems) == ["lede3", "pointer_c"] and list(ds.inputs) == ["2140", "7569"]
    assert ds.matrix("human.relevance").tolist() == [[3.5, 4.25], [1.5, 1.0]]
    assert ds.summaries()[1, 1] == "pointer two"


def test_newsroom_pickle_that_would_run_code_is_refused(tmp_path, monkeypatch):
    planted = b"cos\nsystem\n(S'touch " + str(tmp_path / "pwned").encode() + b"'\ntR."
    base = serve(tmp_path, monkeypatch, "newsroom", {"SUM/Newsroom/data.pkl": planted})
    with pytest.raises(DataError, match=r"data.pkl: the pickle asks for os.system"):
        download("newsroom", base_url=base, show=None)
    assert not (tmp_path / "pwned").exists() and not downloaded_path("newsroom").exists()


def test_newsroom_pickle_bombs_and_malformed_pickles_are_one_clear_error():
    """The converter is public: a 'billion laughs' pickle (280 bytes here, 10**9 leaves for any reader that walks
    it) and malformed pickles raise one DataError, never a MemoryError or AttributeError."""
    from metaeval.data._converters import newsroom, restricted_unpickle

    laughs = ["lol"]
    for _ in range(9):
        laughs = [laughs] * 10
    bomb = pickle.dumps({"2140": {"ref_summ": "r", "sys_summs": laughs}}, protocol=2)
    assert len(bomb) < 484
    with pytest.raises(DataError, match=r"data.pkl: the pickle refers to the same list twice .*billion laughs"):
        newsroom({"SUM/Newsroom/data.pkl": bomb})
    with pytest.raises(DataError, match=r"^t: not a readable pickle \(AttributeError: "):
        restricted_unpickle(b"]q\x00}b.", "t")  # BUILD on a list: AttributeError from the unpickler
    deep = []
    for _ in range(100):
        deep = [deep]
    with pytest.raises(DataError, match=r"nests deeper than 64 levels"):
        restricted_unpickle(pickle.dumps(deep), "t")
    assert restricted_unpickle(pickle.dumps(NEWS), "t") == NEWS  # plain tree data still reads


def _pinned_path(tmp_path, name):
    spec = _atlas_download.SPECS[name]
    return tmp_path / "mirror" / spec.files[0].repo / spec.files[0].commit / spec.files[0].path


def test_a_pinned_file_that_never_ends_or_blocks_is_refused(tmp_path, monkeypatch):
    """A mirror whose pinned file is a link to /dev/zero is read up to the pinned size + 1 byte, then refused; a
    FIFO there is refused before it is opened (a read would block forever: file:// has no timeout)."""
    import os
    import signal

    base = serve(tmp_path, monkeypatch, "newsroom", {"SUM/Newsroom/data.pkl": pickle.dumps(NEWS)})
    pinned = _pinned_path(tmp_path, "newsroom")
    size = _atlas_download.SPECS["newsroom"].files[0].size
    pinned.unlink()
    pinned.symlink_to("/dev/zero")
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("the read did not stop"))
    signal.alarm(20)
    try:
        with pytest.raises(DownloadError, match=r"data.pkl: /.* is a device, not a regular file"):
            download("newsroom", base_url=base, show=None)
        pinned.unlink()
        os.mkfifo(pinned)
        with pytest.raises(DownloadError, match=r"data.pkl: /.* is a FIFO, not a regular file"):
            download("newsroom", base_url=base, show=None)
        pinned.unlink()
        pinned.write_bytes(pickle.dumps(NEWS) + b"\0" * 10**6)  # longer than pinned: read stops at size + 1
        with pytest.raises(DownloadError, match=rf"holds more than the {size} bytes expected"):
            download("newsroom", base_url=base, show=None)
    finally:
        signal.alarm(0)
    assert not downloaded_path("newsroom").exists()

    class Endless:  # a server that never stops sending: only a bounded read() returns
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self, n=-1):
            assert n is not None and n >= 0, "an unbounded read of an endless response"
            return b"\0" * n

    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout: Endless())
    with pytest.raises(DownloadError, match=rf"https://.*data.pkl: it holds more than the {size} bytes expected"):
        download("newsroom", show=None)


def test_a_downloaded_folder_edited_after_download_is_refused_at_load(tmp_path, monkeypatch):
    """As the embedded data/: a record appended, a score changed, an extra .jsonl (another system) are refused by
    name, by load(name) and load(folder); the restored file loads again (the verification is never stale)."""
    base = serve(tmp_path, monkeypatch, "newsroom", {"SUM/Newsroom/data.pkl": pickle.dumps(NEWS)})
    folder = download("newsroom", base_url=base, show=None).folder
    records = folder / "records.jsonl"
    original = records.read_bytes()
    assert load("newsroom").shape == (2, 2)
    lines = original.decode().splitlines(keepends=True)
    last = json.loads(lines[-1])
    edits = {
        "appended": original + lines[-1].replace(last["summarizer_id"], "extra_system").encode(),
        "score +5": original.replace(b'"relevance": 1.5', b'"relevance": 6.5', 1),
    }
    assert edits["score +5"] != original
    for what, data in edits.items():
        records.write_bytes(data)
        for target in ("newsroom", folder):
            with pytest.raises(DataError, match=r"records\.jsonl: changed since metaeval download wrote it .*"
                                                r"`metaeval download newsroom --force`"):
                load(target)
        records.write_bytes(original)
        assert load("newsroom").shape == (2, 2), what  # restored: loads again
    (folder / "extra.jsonl").write_text(json.dumps({"instance_id": "2140", "summarizer_id": "mine",
                                                    "metrics": {"human": {"relevance": 5}}}) + "\n")
    with pytest.raises(DataError, match=r"extra\.jsonl: not written by metaeval download"):
        load("newsroom")
    (folder / "extra.jsonl").unlink()
    (folder / "dataset.yml").unlink()
    with pytest.raises(DataError, match=r"dataset\.yml: written by metaeval download and now missing"):
        load("newsroom")


# ----------------------------------------------------------------------------------------------------
# Multi_SummEval

# worker z-scores per (doc, model): focus (REFERENCE-SYSTEM) and coverage (SYSTEM-REFERENCE), 3 workers each
MULTI_Z = {("0561", "BERT"): ([1.0, 0.0, 2.0], [0.5, 0.5, 2.0]), ("0561", "PG"): ([-1.0, -1.0, -1.0], [0.0, 3.0, 0.0]),
           ("77", "BERT"): ([0.25, 0.25, 1.0], [-2.0, 1.0, 1.0]), ("77", "PG"): ([2.0, 2.0, -1.0], [1.5, 0.0, 0.0])}


def _multi_files(score_shift=0.0):
    workers = [{} for _ in range(3)]
    for (doc, model), (focus, coverage) in MULTI_Z.items():
        for w in range(3):
            workers[w][f"DE-{doc}-REFERENCE-SYSTEM-{model}"] = focus[w]
            workers[w][f"DE-{doc}-SYSTEM-REFERENCE-{model}"] = coverage[w]
    workers[0]["DE-999-TRAP-SAME"] = 9.0
    lines = ["task_id,hit_id,worker_id,assignment_id,status,quality_score,working_time(min),annotation_res"]
    lines += [f'{i},H{i},W{i},A{i},Approved,10,5.0,"{w!r}"' for i, w in enumerate(workers)]
    score = ["id,model,focus,coverage"] + [
        f"{int(doc)},{model},{sum(f) / 3 + score_shift!r},{sum(c) / 3!r}" for (doc, model), (f, c) in MULTI_Z.items()]
    texts = {f"resulting_data/DE/{kind}/{doc}": f"{kind} {doc} satz eins .\n\n  satz zwei\n".encode()
             for kind in ("gold", "pred_BERT", "pred_PG") for doc in ("0561", "77")}
    return {"resulting_data/DE/score.csv": ("\n".join(score) + "\n").encode(),
            "mturk/annotation_result/DE/analysis_clean.csv": ("\n".join(lines) + "\n").encode(), **texts}


def test_multisummeval_per_worker_z_scores(tmp_path, monkeypatch):
    base = serve(tmp_path, monkeypatch, "multisummeval-de", _multi_files())
    download("multisummeval-de", base_url=base, show=None)
    ds = load("multisummeval-de")
    assert ds.shape == (2, 2) and list(ds.systems) == ["BERT", "PG"] and list(ds.inputs) == ["0561", "77"]  # ids as written
    assert ds.ratings("human.focus")[0, 0].tolist() == [1.0, 0.0, 2.0]
    assert ds.ratings("human.coverage")[1, 0].tolist() == [0.0, 3.0, 0.0]
    assert ds.matrix("human.focus")[1, 1] == pytest.approx(1.0)
    assert ds.matrix("human.coverage")[0, 1] == pytest.approx(0.0)
    # texts: one file per document and folder, sentences = the non-empty lines, stripped
    assert ds.summaries()[1, 0] == "pred_PG 0561 satz eins .\nsatz zwei"
    assert list(ds.references()[0, 1]) == ["gold 77 satz eins .\nsatz zwei"]


def test_multisummeval_texts_are_checked_against_the_pinned_listing(tmp_path, monkeypatch):
    files = _multi_files()
    base = serve(tmp_path, monkeypatch, "multisummeval-de", files)
    spec = _atlas_download.SPECS["multisummeval-de"]
    served = tmp_path / "mirror" / spec.files[0].repo / spec.files[0].commit / "resulting_data/DE/pred_PG/77"
    served.write_bytes(b"changed\n")
    with pytest.raises(DownloadError, match=r"resulting_data/DE/pred_PG/ \(2 files under .*\): sha256 of its "
                                            rf"SHA256SUMS listing mismatch: expected {spec.folders[2].sha256sums}"):
        download("multisummeval-de", base_url=base, show=None)
    assert not downloaded_path("multisummeval-de").exists()


def test_multisummeval_worker_means_must_match_the_published_scores(tmp_path, monkeypatch):
    base = serve(tmp_path, monkeypatch, "multisummeval-de", _multi_files(score_shift=0.01))
    with pytest.raises(DataError, match=r"analysis_clean.csv: 0561/BERT focus: 3 worker scores with mean 1.0"):
        download("multisummeval-de", base_url=base, show=None)


def test_multisummeval_en_has_means_only(tmp_path, monkeypatch):
    score = b"id,model,focus,coverage\n0,BERT,0.75,-0.5\n0,PG,0.25,0.5\n"
    texts = {f"resulting_data/EN/{kind}/0": kind.encode() for kind in ("gold", "pred_BERT", "pred_PG")}
    base = serve(tmp_path, monkeypatch, "multisummeval-en", {"resulting_data/EN/score.csv": score, **texts})
    download("multisummeval-en", base_url=base, show=None)
    ds = load("multisummeval-en")
    assert ds.matrix("human.focus").tolist() == [[0.75], [0.25]]
    with pytest.raises(KeyError):
        ds.ratings("human.focus")


# ----------------------------------------------------------------------------------------------------
# FFCI


def test_ffci_coherence_raw_and_z_with_texts(tmp_path, monkeypatch):
    head = "id,data,model,score,text\n"
    raw = head + '92,CNNDM,BERT,87.5,"first sentence\nsecond sentence"\n92,CNNDM,PG,40.25,pg text\n' \
                 "7,CNNDM,BERT,60.0,b7\n7,CNNDM,PG,55.5,p7\n"
    z = head + '92,CNNDM,BERT,0.75,"first sentence\nsecond sentence"\n92,CNNDM,PG,-1.5,pg text\n' \
               "7,CNNDM,BERT,0.25,b7\n7,CNNDM,PG,0.5,p7\n"
    base = serve(tmp_path, monkeypatch, "ffci-coherence", {
        "Data/Intersentential Coherence/published_data_ic_raw.csv": raw.encode(),
        "Data/Intersentential Coherence/published_data_ic_z.csv": z.encode()})
    download("ffci-coherence", base_url=base, show=None)
    ds = load("ffci-coherence")
    assert list(ds.systems) == ["BERT", "PG"] and list(ds.inputs) == ["7", "92"]
    assert ds.default_human == "human.coherence_z"
    assert ds.matrix("human.coherence_z").tolist() == [[0.25, 0.75], [0.5, -1.5]]
    assert ds.matrix("human.coherence").tolist() == [[60.0, 87.5], [55.5, 40.25]]
    assert ds.summaries()[0, 1] == "first sentence\nsecond sentence"


def test_ffci_xsum_focus_and_coverage(tmp_path, monkeypatch):
    base = serve(tmp_path, monkeypatch, "ffci-xsum", {
        "Data/Focus and Coverage/xsum/human_focus_final.csv": b"id,data,model,score\n72,XSUM,PG,-0.75\n"
                                                              b"72,XSUM,BERT,1.25\n",
        "Data/Focus and Coverage/xsum/human_coverage_final.csv": b"id,data,model,score\n72,XSUM,BERT,0.5\n"
                                                                 b"72,XSUM,PG,-2.0\n"})
    download("ffci-xsum", base_url=base, show=None)
    ds = load("ffci-xsum")
    assert list(ds.systems) == ["BERT", "PG"]
    assert ds.matrix("human.focus").tolist() == [[1.25], [-0.75]]
    assert ds.matrix("human.coverage").tolist() == [[0.5], [-2.0]]


# ----------------------------------------------------------------------------------------------------
# The download step: sha256, no network, ownership, determinism


def test_sha256_mismatch_is_refused_naming_file_expected_and_got(tmp_path, monkeypatch):
    base = serve(tmp_path, monkeypatch, "dialsummeval", DIAL_FILES)
    pinned = _atlas_download.SPECS["dialsummeval"].files[0]
    served = tmp_path / "mirror" / pinned.repo / pinned.commit / pinned.path
    served.write_bytes(DIAL.replace(b"F on 13611791", b"F ON 13611791"))
    assert served.read_bytes() != DIAL
    got = hashlib.sha256(served.read_bytes()).hexdigest()
    with pytest.raises(DownloadError) as info:
        download("dialsummeval", base_url=base, show=None)
    message = str(info.value)
    assert "annotation_campus/human_judgment.jsonl" in message and "sha256 mismatch" in message
    assert f"expected {pinned.sha256}, got {got}" in message
    assert not downloaded_path("dialsummeval").exists()


def test_the_real_pins_refuse_a_file_that_differs(tmp_path, monkeypatch):
    # the shipped pin (not a test override): the hand-made file is not the authors' file
    pinned = _atlas_download.SPECS["newsroom"].files[0]
    dest = tmp_path / "mirror" / pinned.repo / pinned.commit / pinned.path
    dest.parent.mkdir(parents=True)
    dest.write_bytes(pickle.dumps(NEWS))
    with pytest.raises(DownloadError, match=f"expected {pinned.sha256}"):
        download("newsroom", base_url=(tmp_path / "mirror").as_uri(), show=None)


def test_offline_fails_with_one_line_naming_the_url(tmp_path, monkeypatch, capsys):
    from metaeval.run.cli import main

    with pytest.raises(DownloadError, match=r"^cannot download http://127\.0\.0\.1:9/kite99520/DialSummEval/"
                                            r"667118e10ae69ef8cbc5cbddec0ce91b5c9c6187/annotation_campus/"
                                            r"human_judgment\.jsonl: "):
        download("dialsummeval", base_url="http://127.0.0.1:9", show=None)
    monkeypatch.setenv("METAEVAL_DOWNLOAD_BASE", (tmp_path / "nowhere").as_uri())
    assert main(["download", "opinsummeval"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("metaeval download: cannot download file://")
    assert "nowhere/A-Chicharito-S/OpinSummEval/01fc980f416766965ca9b04b4bdad4a6f926999c/metric_evaluation/" in err


def test_a_folder_metaeval_did_not_write_is_never_overwritten(tmp_path, monkeypatch):
    base = serve(tmp_path, monkeypatch, "dialsummeval", DIAL_FILES)
    mine = tmp_path / "my_data"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    for force in (False, True):
        with pytest.raises(DownloadError, match="was not written by metaeval download"):
            download("dialsummeval", mine, base_url=base, force=force, show=None)
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"] and (mine / "notes.txt").read_text() == "mine"


def test_existing_download_kept_replaced_with_force_and_not_mixed_up(tmp_path, monkeypatch):
    base = serve(tmp_path, monkeypatch, "dialsummeval", DIAL_FILES)
    first = download("dialsummeval", base_url=base, show=None)
    again = download("dialsummeval", base_url=base, show=None)
    assert again.fetched is False and again.n_records == first.n_records == 30
    forced = download("dialsummeval", base_url=base, force=True, show=None)
    assert forced.fetched is True
    serve(tmp_path, monkeypatch, "newsroom", {"SUM/Newsroom/data.pkl": pickle.dumps(NEWS)})
    with pytest.raises(DownloadError, match="holds the download of 'dialsummeval', not 'newsroom'"):
        download("newsroom", first.folder, base_url=base, force=True, show=None)
    (first.folder / "records.jsonl").write_text("edited\n")
    with pytest.raises(DownloadError, match="changed"):
        download("dialsummeval", base_url=base, force=True, show=None)


def test_download_is_deterministic(tmp_path, monkeypatch):
    base = serve(tmp_path, monkeypatch, "opinsummeval", OPIN)
    a = download("opinsummeval", tmp_path / "a", base_url=base, show=None).folder
    b = download("opinsummeval", tmp_path / "b", base_url=base, show=None).folder
    for name in ("records.jsonl", "dataset.yml", "PROVENANCE.md"):
        assert (a / name).read_bytes() == (b / name).read_bytes()


def test_every_download_dataset_is_in_the_atlas_with_pinned_files():
    entries = atlas_datasets("download")
    assert set(entries) == set(_atlas_download.SPECS) and len(entries) >= 5
    for name, spec in _atlas_download.SPECS.items():
        assert entries[name].distribution == "download"
        for f in spec.files:
            assert len(f.commit) == 40 and len(f.sha256) == 64 and 0 < f.size < 4 << 20
            assert f.url().startswith(f"https://raw.githubusercontent.com/{f.repo}/{f.commit}/")
        for d in spec.folders:
            assert len(d.commit) == 40 and len(d.sha256sums) == 64 and d.count == entries[name].inputs


def test_unknown_name_is_an_error_naming_the_choices():
    with pytest.raises(DataError, match=r"name must be a dataset to download \(dialsummeval, opinsummeval"):
        download("summeval")


def test_a_plain_folder_is_a_mirror_and_the_offline_error_says_how_to_use_one(tmp_path, monkeypatch, capsys):
    """Offline, the error names the URL and the command that takes a folder; a folder holding the files by
    their own names (or at their repository paths, as a clone) is then a mirror, given as a plain path."""
    from metaeval.run.cli import main

    serve(tmp_path, monkeypatch, "dialsummeval", DIAL_FILES)  # the test's pins for these hand-made files
    monkeypatch.delenv("METAEVAL_DOWNLOAD_BASE", raising=False)
    real = urllib.request.urlopen
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout=None: (
        real(url, timeout=timeout) if url.startswith("file:") else _no_network(url)))
    assert main(["download", "dialsummeval"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot download https://raw.githubusercontent.com/kite99520/DialSummEval/" in err
    assert "put it in a folder (as human_judgment.jsonl) and run: metaeval download dialsummeval --base-url FOLDER" \
        in err
    folder = tmp_path / "saved"
    for path, data in DIAL_FILES.items():  # metrics.csv stands in 14 folders: those go at their repository path
        dest = folder / (path if path.endswith("metrics.csv") else path.rsplit("/", 1)[-1])
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    monkeypatch.chdir(tmp_path)
    assert main(["download", "dialsummeval", "--base-url", "saved"]) == 0
    assert load("dialsummeval").shape[:2] == (13, 2)  # 14 models less the reference, 2 dialogues
    assert main(["download", "opinsummeval", "--base-url", "missing-folder"]) == 2
    assert "--base-url missing-folder: neither a URL nor a folder" in capsys.readouterr().err


def _no_network(url):
    raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")
