"""Write a small dataset in any accepted format into a folder, and say what loading it must give.

Used by the dataset tests and by the notebook tests that run every notebook on every format::

    from datasets_factory import FORMATS, write_dataset
    expected = write_dataset(tmp_path / "data", "sacrerouge", n_systems=5, n_inputs=8)
    ds = metaeval.datasets.load(expected.path)
    np.testing.assert_array_equal(ds.matrix("metric.f1"), expected.scores["metric.f1"])

Formats (``FORMATS``):

``texts``       one file of ``{instance_id, summarizer_id, summary, references}`` (no scores)
``scores``      SacreROUGE "Metrics" JSONL only (``metrics``: human ratings lists, metric values; no texts)
``both``        one file with texts and ``metrics`` in every record
``split``       summaries, input-level references, human ratings and metric values in four files
``sacrerouge``  SacreROUGE summaries JSONL (``summary: {text: [sentences]}``, ``references: [{text}]``) + Metrics
``rouge``       ``metaeval rouge`` input ``{id: "INSTANCE::SUMMARIZER", peer, refs}`` and the output of really
                running ``metaeval rouge`` on it (``{id, scores}``), + human ratings in Metrics JSONL
``rouge-fields`` the same with explicit ``instance_id``/``summarizer_id`` carried through ``metaeval rouge``
``summeval``    the embedded SummEval joined form (``references`` list, ``expert_annotations``, ``turker_annotations``)
                + a Metrics file of metric values, as the embedded ``summeval``
``realsumm``    the embedded REALSumm joined form (one ``reference`` string, ``litepyramid_recall``) + a Metrics file
``yml``         ``both`` plus a ``dataset.yml`` (default human, display names, recall_oriented)

The texts are built so that a better system (higher quality) copies more reference words and gets higher
human ratings: correlations on these data are positive and the notebooks have something to find.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FORMATS = ("texts", "scores", "both", "split", "sacrerouge", "rouge", "rouge-fields", "summeval", "realsumm", "yml")

_VOCAB = (
    "the a council city river bridge storm rain police report school budget vote mayor court judge team "
    "game season player coach fans market price bank rate company workers strike union plan road"
).split(" ")


@dataclass
class Expected:
    """What :func:`metaeval.datasets.load` must return for the written folder."""

    path: Path
    fmt: str
    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    has_texts: bool
    n_refs: int
    human: str | None  # the default human score, or None when the format has none
    summaries: dict[tuple[str, str], str] = field(default_factory=dict)  # (system, input) -> text as loaded
    references: dict[str, list[str]] = field(default_factory=dict)  # input -> texts as loaded
    scores: dict[str, np.ndarray] = field(default_factory=dict)  # name -> N x M (systems x inputs)
    ratings: dict[str, np.ndarray] = field(default_factory=dict)  # name -> N x M x annotators

    @property
    def metrics(self) -> list[str]:
        """The metric (non-human) scores, e.g. to pass as a notebook's ``metrics`` parameter."""
        human = {"human.relevance", "expert.relevance", "turker.relevance", "litepyramid.recall"}
        return sorted(n for n in self.scores if n not in human)


def _sentences(rng: np.random.Generator, n: int, source: list[str] | None = None, keep: float = 0.0) -> list[str]:
    out = []
    for _ in range(n):
        words = []
        for _ in range(int(rng.integers(5, 9))):
            if source and rng.random() < keep:
                words.append(source[int(rng.integers(len(source)))])
            else:
                words.append(_VOCAB[int(rng.integers(len(_VOCAB)))])
        out.append(" ".join(words) + " .")
    return out


def _write(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _write_metric_file(folder: Path, keys: list, cell_metrics) -> None:
    # As the embedded summeval/realsumm: a joined texts file plus Deutsch-style metric files, merged on the keys
    _write(folder / "metrics.jsonl", [
        {"instance_id": i, "summarizer_id": s, "summarizer_type": "peer",
         "metrics": {"metric": cell_metrics(si, ii)["metric"]}}
        for si, s, ii, i in keys])


def write_dataset(
    folder: str | Path,
    fmt: str,
    *,
    n_systems: int = 5,
    n_inputs: int = 8,
    n_refs: int = 2,
    seed: int = 0,
) -> Expected:
    """Write a ``n_systems`` x ``n_inputs`` dataset in format ``fmt`` into ``folder``; return what it must load as.

    System ids are ``sys0``..., input ids ``doc00``...; the human score is ``human.relevance`` (3 ratings per
    summary, 1-5), the metric scores ``metric.f1`` and ``metric.recall`` (``rouge`` formats: the ROUGE keys).
    """
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {FORMATS}, got {fmt!r}")
    if fmt == "realsumm":
        n_refs = 1
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    systems = tuple(f"sys{k}" for k in range(n_systems))
    inputs = tuple(f"doc{k:02d}" for k in range(n_inputs))
    quality = np.linspace(0.2, 0.8, n_systems)

    ref_sents = {i: [_sentences(rng, 3) for _ in range(n_refs)] for i in inputs}
    summ_sents: dict[tuple[str, str], list[str]] = {}
    for si, s in enumerate(systems):
        for i in inputs:
            words = " ".join(ref_sents[i][0]).split()
            summ_sents[(s, i)] = _sentences(rng, 2, words, keep=float(quality[si]))
    ratings = np.clip(np.rint(1 + 4 * quality[:, None, None] + rng.normal(0, 0.8, (n_systems, n_inputs, 3))), 1, 5)
    f1 = np.round(quality[:, None] * 0.5 + rng.normal(0, 0.1, (n_systems, n_inputs)), 6)
    recall = np.round(quality[:, None] * 0.6 + rng.normal(0, 0.1, (n_systems, n_inputs)), 6)

    def joined(sents: list[str]) -> str:
        return " ".join(sents)

    exp = Expected(folder, fmt, systems, inputs, has_texts=fmt != "scores", n_refs=n_refs if fmt != "scores" else 0,
                   human="human.relevance")
    human_scores = {"human.relevance": ratings.mean(axis=2)}
    metric_scores = {"metric.f1": f1, "metric.recall": recall}

    def cell_metrics(si: int, ii: int) -> dict:
        return {"human": {"relevance": ratings[si, ii].tolist()},
                "metric": {"f1": float(f1[si, ii]), "recall": float(recall[si, ii])}}

    keys = [(si, s, ii, i) for si, s in enumerate(systems) for ii, i in enumerate(inputs)]
    # texts as load() returns them: strings as given, sentence lists joined with newlines
    sentence_lists = fmt in ("sacrerouge",)
    for _, s, _, i in keys:
        exp.summaries[(s, i)] = ("\n" if sentence_lists else " ").join(summ_sents[(s, i)])
    for i in inputs:
        exp.references[i] = [("\n" if sentence_lists else " ").join(r) for r in ref_sents[i]]

    if fmt == "texts":
        exp.human = None
        _write(folder / "texts.jsonl", [
            {"instance_id": i, "summarizer_id": s, "summary": joined(summ_sents[(s, i)]),
             "references": [joined(r) for r in ref_sents[i]]} for _, s, _, i in keys])
    elif fmt == "scores":
        exp.summaries, exp.references = {}, {}
        _write(folder / "metrics.jsonl", [
            {"instance_id": i, "summarizer_id": s, "summarizer_type": "peer", "metrics": cell_metrics(si, ii)}
            for si, s, ii, i in keys])
        exp.scores = {**human_scores, **metric_scores}
    elif fmt in ("both", "yml"):
        _write(folder / "data.jsonl", [
            {"instance_id": i, "summarizer_id": s, "summary": joined(summ_sents[(s, i)]),
             "references": [joined(r) for r in ref_sents[i]], "metrics": cell_metrics(si, ii)}
            for si, s, ii, i in keys])
        exp.scores = {**human_scores, **metric_scores}
        if fmt == "yml":
            (folder / "dataset.yml").write_text(
                "description: a small test dataset\n"
                "default_human: human.relevance\n"
                "human_scores: [human.relevance]\n"
                "display_names:\n  metric.f1: My metric\n  human.relevance: Relevance\n"
                "recall_oriented: true\n", encoding="utf-8")
    elif fmt == "split":
        _write(folder / "summaries.jsonl", [
            {"instance_id": i, "summarizer_id": s, "summary": joined(summ_sents[(s, i)])} for _, s, _, i in keys])
        _write(folder / "references.jsonl", [
            {"instance_id": i, "references": [joined(r) for r in ref_sents[i]]} for i in inputs])
        _write(folder / "human.jsonl", [
            {"instance_id": i, "summarizer_id": s, "metrics": {"human": cell_metrics(si, ii)["human"]}}
            for si, s, ii, i in keys])
        _write(folder / "metric.jsonl", [
            {"instance_id": i, "summarizer_id": s, "summarizer_type": "peer",
             "metrics": {"metric": cell_metrics(si, ii)["metric"]}} for si, s, ii, i in keys])
        exp.scores = {**human_scores, **metric_scores}
    elif fmt == "sacrerouge":
        _write(folder / "summaries.jsonl", [
            {"instance_id": i, "summarizer_id": s, "summarizer_type": "peer",
             "summary": {"summarizer_id": s, "summarizer_type": "peer", "text": summ_sents[(s, i)]},
             "references": [{"summarizer_id": chr(65 + k), "summarizer_type": "reference", "text": r}
                            for k, r in enumerate(ref_sents[i])]} for _, s, _, i in keys])
        _write(folder / "metrics.jsonl", [
            {"instance_id": i, "summarizer_id": s, "summarizer_type": "peer", "metrics": cell_metrics(si, ii)}
            for si, s, ii, i in keys])
        exp.scores = {**human_scores, **metric_scores}
    elif fmt in ("rouge", "rouge-fields"):
        from metaeval.run.cli import main

        def ident(s: str, i: str) -> dict:
            if fmt == "rouge":
                return {"id": f"{i}::{s}"}
            return {"id": f"{s}/{i}", "instance_id": i, "summarizer_id": s}

        # metaeval rouge's input is itself a texts file of the dataset: texts and scores chain in one folder
        source = folder / "texts.jsonl"
        _write(source, [
            {**ident(s, i), "peer": joined(summ_sents[(s, i)]), "refs": [joined(r) for r in ref_sents[i]]}
            for _, s, _, i in keys])
        code = main(["rouge", str(source), str(folder / "rouge.jsonl"), "--methods", "R-1,R-2",
                     "--stem", "no", "--stop", "no"])
        assert code == 0
        _write(folder / "human.jsonl", [
            {"instance_id": i, "summarizer_id": s, "metrics": {"human": cell_metrics(si, ii)["human"]}}
            for si, s, ii, i in keys])
        index = {(s, i): (si, ii) for si, s, ii, i in keys}
        for line in (folder / "rouge.jsonl").read_text().splitlines():
            rec = json.loads(line)
            s, i = (rec["id"].split("::")[::-1] if fmt == "rouge" else (rec["summarizer_id"], rec["instance_id"]))
            for name, value in rec["scores"].items():
                exp.scores.setdefault(name, np.full((n_systems, n_inputs), np.nan))[index[(s, i)]] = value
        exp.scores.update(human_scores)
    elif fmt == "summeval":
        exp.human = "expert.relevance"
        _write(folder / "joined.jsonl", [
            {"instance_id": i, "summarizer_id": s, "summary": joined(summ_sents[(s, i)]),
             "references": [joined(r) for r in ref_sents[i]],
             "expert_mean": {"relevance": float(ratings[si, ii].mean())},
             "expert_annotations": {"relevance": ratings[si, ii].tolist()},
             "turker_annotations": {"relevance": ratings[si, ii, ::-1].tolist()}} for si, s, ii, i in keys])
        exp.scores = {"expert.relevance": ratings.mean(axis=2), "turker.relevance": ratings.mean(axis=2),
                      **metric_scores}
        exp.ratings = {"expert.relevance": ratings, "turker.relevance": ratings[:, :, ::-1]}
        _write_metric_file(folder, keys, cell_metrics)
        return exp
    elif fmt == "realsumm":
        exp.human = "litepyramid.recall"
        pyr = np.round(quality[:, None] + rng.normal(0, 0.1, (n_systems, n_inputs)), 4)
        _write(folder / "joined.jsonl", [
            {"instance_id": i, "summarizer_id": s, "system_group": "ext",
             "summary_raw": " ".join(f"<t> {x} </t>" for x in summ_sents[(s, i)]),
             "summary": joined(summ_sents[(s, i)]),
             "reference_raw": " ".join(f"<t> {x} </t>" for x in ref_sents[i][0]), "reference": joined(ref_sents[i][0]),
             "litepyramid_recall": float(pyr[si, ii]), "stored_metrics": {"rouge_1_recall": float(recall[si, ii])}}
            for si, s, ii, i in keys])
        exp.scores = {"litepyramid.recall": pyr, **metric_scores}
        _write_metric_file(folder, keys, cell_metrics)
        return exp
    if exp.scores and "human.relevance" in exp.scores:
        exp.ratings = {"human.relevance": ratings}
    return exp
