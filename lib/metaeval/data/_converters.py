"""Converters of the downloaded atlas datasets' source files into the dataset contract (``data/README.md``).

Private: :mod:`metaeval.data.download` calls them with the pinned files' bytes (checked against their sha256)
and writes what they return. Each converter is a pure function ``files -> Converted``: the same bytes give the
same records in the same order (sorted by input, then system), so a download is reproducible byte for byte.

They check the shape the authors documented (annotators per item, dimensions, one record per key) and raise a
:class:`~metaeval.data.formats.DataError` naming the file and the line where the source differs, rather than
writing a dataset that silently lacks something.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import pickle
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from metaeval.data.formats import DataError

__all__ = ["Converted", "dialsummeval", "opinsummeval", "koh2022", "newsroom", "multisummeval", "ffci_coherence",
           "ffci_xsum", "multisummeval_ids", "restricted_unpickle"]


@dataclass(frozen=True)
class Converted:
    """What a converter returns: the JSONL records (in file order) and the ``dataset.yml`` mapping."""

    records: list[dict[str, Any]]
    meta: dict[str, Any]
    transformations: tuple[str, ...] = field(default=())


def _text(files: Mapping[str, bytes], path: str) -> str:
    if path not in files:
        raise DataError(f"{path}: missing from the downloaded files")
    try:
        return files[path].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _lines(files: Mapping[str, bytes], path: str) -> list[tuple[str, str]]:
    """``(path:line, line)`` of the file's non-blank lines."""
    return [(f"{path}:{k}", line) for k, line in enumerate(_text(files, path).splitlines(), 1) if line.strip()]


def _converted(records: list[dict[str, Any]], description: str, human: list[str], display: Mapping[str, str],
               steps: Iterable[str], **meta: Any) -> Converted:
    """The records in the documented order and their ``dataset.yml``: ``human`` the human scores (the first is the
    default), ``display`` their display names, ``meta`` any other key."""
    # input-level records (references only) first, then (instance, system): a stable, documented order
    records = sorted(records, key=lambda r: (r["instance_id"], "summarizer_id" in r, r.get("summarizer_id", "")))
    return Converted(records, {"description": description, "default_human": human[0], "human_scores": human,
                               "display_names": dict(display), **meta}, tuple(steps))


# ----------------------------------------------------------------------------------------------------
# DialSummEval (Gao & Wan, 2022)

#: kite99520/DialSummEval reproduce/analysis/analysis.py, ``model_type_dict`` (A is the SAMSum reference)
DIALSUMMEVAL_MODELS = {"A": "GOLD", "B": "LONGEST_3", "C": "LEAD_3", "D": "PGN", "E": "Transformer", "F": "BART",
                       "G": "PEGASUS", "H": "UniLM", "I": "CODS", "J": "ConvoSumm", "K": "MV_BART", "L": "PLM",
                       "M": "PNEP", "N": "S_BART"}
DIALSUMMEVAL_DIMS = ("coherence", "consistency", "fluency", "relevance")


def dialsummeval(files: Mapping[str, bytes]) -> Converted:
    """``annotation_campus/human_judgment.jsonl`` -> one record per (dialogue, model), 3 annotators per score.

    Model A (``GOLD``) is SAMSum's reference summary: it becomes each dialogue's reference and a record with
    ``summarizer_type: reference`` (its ratings kept); ``dataset.yml`` skips those records by default, so the
    grid is the 13 systems; ``load(..., reference_records="as-systems")`` gives the authors' 14.
    """
    path = "annotation_campus/human_judgment.jsonl"
    records: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    dialogues: dict[str, str] = {}  # dialogue text -> id, to place the authors' metric rows
    for where, line in _lines(files, path):
        try:
            row = json.loads(line)
            doc, model, summary, annotations = str(row["id"]), row["model_id"], row["summary"], row["annotations"]
        except (ValueError, KeyError, TypeError) as exc:
            raise DataError(f"{where}: not a DialSummEval record ({type(exc).__name__}: {exc})") from None
        if model not in DIALSUMMEVAL_MODELS:
            raise DataError(f"{where}: unknown model_id {model!r} (expected A..N)")
        if not isinstance(annotations, list) or len(annotations) != 3 or \
                any(set(a) != set(DIALSUMMEVAL_DIMS) for a in annotations):
            raise DataError(f"{where}: expected 3 annotations with {', '.join(DIALSUMMEVAL_DIMS)}")
        system = DIALSUMMEVAL_MODELS[model]
        if (doc, system) in seen:
            raise DataError(f"{where}: a second record for dialogue {doc!r} and model {model!r}")
        seen.add((doc, system))
        human = {dim: [a[dim] for a in annotations] for dim in DIALSUMMEVAL_DIMS}
        dialogues.setdefault(str(row.get("dialogue", "")).strip(), doc)
        record: dict[str, Any] = {"instance_id": doc, "summarizer_id": system}
        if system == "GOLD":
            record["summarizer_type"] = "reference"
            records.append({"instance_id": doc, "references": [summary]})
        record.update(summary=summary, metrics={"human": human})
        records.append(record)
    docs = {d for d, _ in seen}
    missing = sorted(d for d in docs if (d, "GOLD") not in seen)
    if missing:
        raise DataError(f"{path}: dialogue(s) {', '.join(missing[:3])} have no reference summary (model A)")
    metric_names = _dialsummeval_metrics(files, records, dialogues)
    return _converted(records, "DialSummEval (Gao & Wan, 2022): SAMSum dialogues, 13 systems + the reference, "
                      "3 annotators", [f"human.{d}" for d in ("relevance", "coherence", "consistency", "fluency")],
                      {f"human.{d}": d.capitalize() for d in DIALSUMMEVAL_DIMS}, (
        "model ids A..N renamed to the systems' names (the authors' analysis.py, model_type_dict)",
        "model A (GOLD, the SAMSum reference) kept as each dialogue's reference and as a record with "
        "summarizer_type 'reference' (skipped by default; load(..., reference_records='as-systems') keeps it)",
        "annotations[i][dim] -> metrics.human.<dim> list, annotator i at position i",
        "the dialogue text is not written (the dataset contract holds summaries and references only)",
    ) + ((f"{DIALSUMMEVAL_METRICS}/<model letter>/metrics.csv: row i is the dialogue on line i of "
          f"{DIALSUMMEVAL_METRICS}/dials.txt (matched to its id by the dialogue text); its {len(metric_names)} "
          "columns kept under their own names in metrics (" + ", ".join(metric_names) + ")",) if metric_names else ()),
        reference_records="skip")


#: the authors' metric scores (reproduce/analysis/analysis.py reads <letter>/metrics.csv, row i = line i of dials.txt)
DIALSUMMEVAL_METRICS = "reproduce/analysis/models_eval_new"


def _dialsummeval_metrics(files: Mapping[str, bytes], records: list[dict[str, Any]],
                          dialogues: Mapping[str, str]) -> list[str]:
    """Add the authors' metric scores to ``records`` (in place); the metric names (none without the files)."""
    dpath = f"{DIALSUMMEVAL_METRICS}/dials.txt"
    if dpath not in files:
        return []
    order = []
    for lineno, line in enumerate(_text(files, dpath).splitlines(), 1):
        doc = dialogues.get(line.strip())
        if doc is None:
            raise DataError(f"{dpath}:{lineno}: a dialogue that human_judgment.jsonl does not have")
        order.append(doc)
    by_key = {(r["instance_id"], r["summarizer_id"]): r for r in records if "summarizer_id" in r}
    names: list[str] = []
    for letter, system in DIALSUMMEVAL_MODELS.items():
        mpath = f"{DIALSUMMEVAL_METRICS}/{letter}/metrics.csv"
        rows = _csv_rows(files, mpath)
        if len(rows) != len(order):
            raise DataError(f"{mpath}: {len(rows)} rows, but {dpath} has {len(order)} dialogues")
        for lineno, (doc, row) in enumerate(zip(order, rows), 2):
            record = by_key.get((doc, system))
            if record is None:
                raise DataError(f"{mpath}:{lineno}: scores for dialogue {doc!r} and model {letter}, which has no "
                                "human judgments")
            try:
                values = {k: (float(v) if v.strip() else None) for k, v in row.items()}
            except (ValueError, AttributeError):
                raise DataError(f"{mpath}:{lineno}: a score is not a number") from None
            if "human" in values:
                raise DataError(f"{mpath}: a column named 'human' would mix with the human judgments")
            record["metrics"].update(values)
            names = names or list(values)
    return names


# ----------------------------------------------------------------------------------------------------
# OpinSummEval (Shen & Wan, 2023)

OPINSUMMEVAL_DIMS = {"asp_rel": "aspect_relevance", "self_coh": "self_coherence", "sent_con": "sentiment_consistency",
                     "readblty": "readability"}


def opinsummeval(files: Mapping[str, bytes]) -> Converted:
    """``metric_evaluation/scores.jsonl`` (2 annotators and the authors' metric scores per case and model) and
    ``metric_evaluation/14model_outputs.jsonl`` (the summaries and the human-written reference) -> the contract.
    """
    spath, opath = "metric_evaluation/scores.jsonl", "metric_evaluation/14model_outputs.jsonl"
    outputs: dict[str, tuple[str, dict[str, str]]] = {}
    for where, line in _lines(files, opath):
        try:
            row = json.loads(line)
            outputs[str(row["case"])] = (row["summ"], dict(row["model_output"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise DataError(f"{where}: not an OpinSummEval output record ({exc})") from None
    records: list[dict[str, Any]] = []
    for where, line in _lines(files, spath):
        try:
            row = json.loads(line)
            case = str(row.pop("case"))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise DataError(f"{where}: not an OpinSummEval score record ({exc})") from None
        if case not in outputs:
            raise DataError(f"{where}: case {case} has no summaries in {opath}")
        reference, texts = outputs[case]
        records.append({"instance_id": case, "references": [reference]})
        for model, scores in row.items():
            if model not in texts:
                raise DataError(f"{where}: model {model!r} of case {case} has no summary in {opath}")
            scores = dict(scores)
            try:
                annots = [scores.pop("annot1"), scores.pop("annot2")]
                human = {name: [a[key] for a in annots] for key, name in OPINSUMMEVAL_DIMS.items()}
            except (KeyError, TypeError):
                raise DataError(f"{where}: model {model!r} lacks annot1/annot2 with "
                                f"{', '.join(OPINSUMMEVAL_DIMS)}") from None
            records.append({"instance_id": case, "summarizer_id": model, "summary": texts[model],
                            "metrics": {"human": human, **scores}})
    return _converted(records, "OpinSummEval (Shen & Wan, 2023): Yelp opinion summaries, 14 systems x 100 entities, "
                      "2 annotators, the authors' metric scores", [f"human.{n}" for n in OPINSUMMEVAL_DIMS.values()],
                      {f"human.{n}": n.replace("_", " ").capitalize() for n in OPINSUMMEVAL_DIMS.values()}, (
        "case number -> instance_id; the model name -> summarizer_id",
        "annot1/annot2 -> metrics.human.<dimension> lists [annot1, annot2]; dimensions renamed "
        + ", ".join(f"{k} -> {v}" for k, v in OPINSUMMEVAL_DIMS.items()),
        "every other score of scores.jsonl kept under its own name in metrics",
        "14model_outputs.jsonl: model_output[model] -> summary; summ (the human summary) -> references; "
        "the 8 reviews are not written",
    ))


# ----------------------------------------------------------------------------------------------------
# Koh et al. (2022), long documents


def koh2022(files: Mapping[str, bytes], *, subset: str) -> Converted:
    """``annotation_data.jsonl`` (one JSON list of ``{a1, a2, a3}``) -> the ``subset`` ("arXiv" or "GovReport")
    grid: relevance and factual consistency per annotator (proportions in [0, 1])."""
    path = "annotation_data.jsonl"
    try:
        items = json.loads(_text(files, path))
        if not isinstance(items, list):
            raise TypeError("not a list")
    except (ValueError, TypeError) as exc:
        raise DataError(f"{path}: not the Koh et al. annotation list ({exc})") from None
    records: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for i, item in enumerate(items):
        where = f"{path}: item {i}"
        try:
            annots = [item[a] for a in ("a1", "a2", "a3")]
            first = annots[0]
            if first["dataset"] != subset:
                continue
            keys = {(a["dataset"], a["document_id"], a["model"], a["summary"]) for a in annots}
            human = {"relevance": [a["relevance_score"] for a in annots],
                     "factual_consistency": [a["factual_score"] for a in annots]}
        except (KeyError, TypeError) as exc:
            raise DataError(f"{where}: lacks a1/a2/a3 with dataset, document_id, model, summary, relevance_score "
                            f"and factual_score ({type(exc).__name__}: {exc})") from None
        if len(keys) != 1:
            raise DataError(f"{where}: the three annotators name different documents, models or summaries")
        doc = str(first["document_id"]).removeprefix("ID_")
        if (doc, first["model"]) in seen:
            raise DataError(f"{where}: a second item for document {doc!r} and model {first['model']!r}")
        seen.add((doc, first["model"]))
        records.append({"instance_id": doc, "summarizer_id": first["model"], "summary": first["summary"],
                        "metrics": {"human": human}})
    if not records:
        raise DataError(f"{path}: no item of dataset {subset!r}")
    return _converted(records, f"Koh et al. (2022): {subset} long-document summaries, 12 BART/PEGASUS variants, "
                      "3 annotators (proportions)", ["human.relevance", "human.factual_consistency"],
                      {"human.relevance": "Relevance", "human.factual_consistency": "Factual consistency"}, (
        f"items whose dataset is {subset!r} kept",
        "document_id without its 'ID_' prefix -> instance_id (the original dataset's id, as the authors' README "
        "says); model -> summarizer_id; summary -> summary",
        "a1..a3 relevance_score / factual_score -> metrics.human.relevance / factual_consistency lists",
        "sentence_error_list and factual_error_type are not written",
    ))


# ----------------------------------------------------------------------------------------------------
# Newsroom human evaluation (Grusky et al., 2018), as converted by BARTScore


class _NoGlobals(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:  # noqa: D102 - every global is refused
        raise DataError(f"the pickle asks for {module}.{name}; only plain data (dict, list, str, float) is read")


def restricted_unpickle(data: bytes, what: str) -> Any:
    """Read a pickle of plain data only: any class or function it names is refused, so it cannot run code.

    >>> restricted_unpickle(pickle.dumps({"a": [1.5, "x"]}), "t")
    {'a': [1.5, 'x']}
    >>> restricted_unpickle(pickle.dumps(print), "t")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    metaeval.data.formats.DataError: t: the pickle asks for builtins.print; only plain data ... is read
    """
    try:
        value = _NoGlobals(io.BytesIO(data)).load()
    except DataError as exc:
        raise DataError(f"{what}: {exc}") from None
    except (MemoryError, RecursionError) as exc:  # a declared length or nesting no plain data needs
        raise DataError(f"{what}: not a readable pickle ({type(exc).__name__}: it asks for more memory or nesting "
                        "than plain data of its size can); check the file's source") from None
    except Exception as exc:  # noqa: BLE001 - a malformed pickle raises anything (AttributeError, IndexError, ...)
        raise DataError(f"{what}: not a readable pickle ({type(exc).__name__}: {exc})") from None
    _check_plain_tree(value, what)
    return value


#: Nesting deeper than this is not a data file's (the Newsroom pickle is 5 deep).
MAX_PICKLE_DEPTH = 64


def _check_plain_tree(value: Any, what: str) -> None:
    """Refuse a container reached twice (a pickle's memo lets a few hundred bytes stand for 10**9 objects to a
    reader that walks them: the "billion laughs") or nested deeper than :data:`MAX_PICKLE_DEPTH`.

    >>> shared = [1]
    >>> restricted_unpickle(pickle.dumps([shared, shared]), "t")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    metaeval.data.formats.DataError: t: the pickle refers to the same list twice ...
    """
    seen: set[int] = set()
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, (list, tuple, dict, set, frozenset)):
            continue
        if id(item) in seen:
            raise DataError(f"{what}: the pickle refers to the same {type(item).__name__} twice (shared objects "
                            "can expand exponentially, a 'billion laughs' pickle); only plain tree data is read")
        if depth > MAX_PICKLE_DEPTH:
            raise DataError(f"{what}: the pickle nests deeper than {MAX_PICKLE_DEPTH} levels; only plain data "
                            "is read")
        seen.add(id(item))
        children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children)


NEWSROOM_DIMS = ("coherence", "fluency", "informativeness", "relevance")


def newsroom(files: Mapping[str, bytes]) -> Converted:
    """BARTScore's ``SUM/Newsroom/data.pkl`` ``{doc: {src, ref_summ, sys_summs: {sys: {sys_summ, scores}}}}``
    -> the contract (the scores are the means of 3 workers; the per-worker file is not in the source)."""
    path = "SUM/Newsroom/data.pkl"
    data = restricted_unpickle(files[path], path)
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a dict of documents, got {type(data).__name__}")
    records: list[dict[str, Any]] = []
    for doc, entry in data.items():
        try:
            records.append({"instance_id": str(doc), "references": [entry["ref_summ"]]})
            for system, out in entry["sys_summs"].items():
                scores = out["scores"]
                records.append({"instance_id": str(doc), "summarizer_id": str(system), "summary": out["sys_summ"],
                                "metrics": {"human": {d: scores[d] for d in NEWSROOM_DIMS}}})
        except (KeyError, TypeError, AttributeError) as exc:
            raise DataError(f"{path}: document {doc!r} lacks ref_summ, sys_summs, sys_summ or the scores "
                            f"{', '.join(NEWSROOM_DIMS)} ({type(exc).__name__}: {exc})") from None
    return _converted(records, "Newsroom human evaluation (Grusky et al., 2018): 7 systems x 60 articles, means of "
                      "3 workers", [f"human.{d}" for d in ("relevance", "informativeness", "coherence", "fluency")],
                      {f"human.{d}": d.capitalize() for d in NEWSROOM_DIMS}, (
        "read with an unpickler that refuses every class and function (plain data only)",
        "doc id -> instance_id, system name -> summarizer_id, sys_summ -> summary, ref_summ -> references",
        "scores.<dim> (mean of 3 workers, as BARTScore stored it) -> metrics.human.<dim>",
        "the article (src) is not written",
    ))


# ----------------------------------------------------------------------------------------------------
# Multi_SummEval (Koto, Lau & Baldwin, 2021)

#: the display names of Multi_SummEval's and FFCI's focus and coverage
_FOCUS_COVERAGE = {"human.focus": "Focus", "human.coverage": "Coverage"}


def _csv_rows(files: Mapping[str, bytes], path: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(_text(files, path))))


def multisummeval_ids(files: Mapping[str, bytes], *, lang: str) -> list[str]:
    """The document ids of a language (the names of its text files): from the per-worker keys where they exist
    (they keep leading zeros, e.g. ZH ``000561``), else from ``score.csv``."""
    records = multisummeval(files, lang=lang).records
    return sorted({r["instance_id"] for r in records})


def _sentences(files: Mapping[str, bytes], path: str) -> list[str]:
    return [line.strip() for line in _text(files, path).splitlines() if line.strip()]


def multisummeval(files: Mapping[str, bytes], *, lang: str) -> Converted:
    """``resulting_data/<LANG>/score.csv`` (focus and coverage per summary: the mean z-score) and, for the 7
    languages annotated in the repository, ``mturk/annotation_result/<LANG>/analysis_clean.csv`` (each worker's
    z-scores) -> focus and coverage with the 3 workers kept; each mean is checked against ``score.csv``."""
    code = lang.upper()
    spath = f"resulting_data/{code}/score.csv"
    apath = f"mturk/annotation_result/{code}/analysis_clean.csv"
    paper: dict[tuple[str, str], dict[str, float]] = {}
    for lineno, row in enumerate(_csv_rows(files, spath), 2):
        try:
            paper[(str(int(row["id"])), row["model"])] = {"focus": float(row["focus"]),
                                                          "coverage": float(row["coverage"])}
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"{spath}:{lineno}: expected id, model, focus, coverage ({exc})") from None
    workers: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: {"focus": [], "coverage": []})
    if apath in files:
        for lineno, row in enumerate(_csv_rows(files, apath), 2):
            try:
                # a Python dict literal: read with literal_eval, which evaluates literals only (no code)
                scores = ast.literal_eval(row["annotation_res"])
            except (KeyError, ValueError, SyntaxError) as exc:
                raise DataError(f"{apath}:{lineno}: annotation_res is not a dict literal ({exc})") from None
            for key, value in scores.items():
                parts = str(key).split("-")
                if len(parts) != 5:
                    continue  # quality-control items (TRAP-SAME, TRAP-DIFFERENT) are not summaries
                _, doc, a, b, model = parts
                dim = {("REFERENCE", "SYSTEM"): "focus", ("SYSTEM", "REFERENCE"): "coverage"}.get((a, b))
                if dim is None:
                    raise DataError(f"{apath}:{lineno}: key {key!r} is neither REFERENCE-SYSTEM nor SYSTEM-REFERENCE")
                workers[(doc, model)][dim].append(float(value))
    records: list[dict[str, Any]] = []
    if workers:
        if {(str(int(d)), m) for d, m in workers} != set(paper):
            raise DataError(f"{apath} and {spath} do not cover the same summaries")
        for (doc, model), lists in workers.items():
            for dim, values in lists.items():
                mean = sum(values) / len(values) if values else float("nan")
                if len(values) != 3 or abs(mean - paper[(str(int(doc)), model)][dim]) > 1e-9:
                    raise DataError(f"{apath}: {doc}/{model} {dim}: {len(values)} worker scores with mean {mean!r}; "
                                    f"{spath} says {paper[(str(int(doc)), model)][dim]!r} from 3")
            records.append({"instance_id": doc, "summarizer_id": model, "metrics": {"human": lists}})
    else:
        records = [{"instance_id": doc, "summarizer_id": model, "metrics": {"human": dict(means)}}
                   for (doc, model), means in paper.items()]
    texts = f"resulting_data/{code}/gold/"
    has_texts = any(k.startswith(texts) for k in files)
    if has_texts:  # the texts, one file per document and folder, sentences by line
        for record in records:
            doc, model = record["instance_id"], record["summarizer_id"]
            record["summary"] = _sentences(files, f"resulting_data/{code}/pred_{model}/{doc}")
            record["references"] = [_sentences(files, f"{texts}{doc}")]
    steps = ["model (BERT, PG) -> summarizer_id"]
    if workers:
        steps += [f"{apath}: keys LANG-ID-REFERENCE-SYSTEM-MODEL -> focus, LANG-ID-SYSTEM-REFERENCE-MODEL -> "
                  "coverage (the authors' notebook 3); TRAP items left out; each worker's z-score in HIT order "
                  "(the position in the list is not a worker identity)",
                  f"the mean of the 3 workers checked equal to {spath} (within 1e-9); the id as in the annotation "
                  "keys (= the text files' names, e.g. ZH '000561')"]
    else:
        steps += [f"{spath}: focus, coverage (means of workers; no per-worker file for this language) -> "
                  "metrics.human"]
    if has_texts:
        steps.append(f"resulting_data/{code}/pred_<model>/<id> -> summary, resulting_data/{code}/gold/<id> -> the one "
                     "reference (each a list of sentences: the files' non-empty lines, stripped)")
    return _converted(records, f"Multi_SummEval (Koto et al., 2021), {code}: 2 systems x 135 documents, focus and "
                      "coverage (direct assessment, z-scores" + (", 3 workers)" if workers else ", means of workers)"),
                      ["human.focus", "human.coverage"], _FOCUS_COVERAGE, steps)


# ----------------------------------------------------------------------------------------------------
# FFCI (Koto, Baldwin & Lau): inter-sentential coherence on CNN/DM, focus and coverage on XSum

FFCI_IC = "Data/Intersentential Coherence/published_data_ic_{}.csv"
FFCI_FC = "Data/Focus and Coverage/xsum/human_{}_final.csv"


def _ffci_rows(files: Mapping[str, bytes], path: str,
               columns: tuple[str, ...]) -> dict[tuple[str, str], dict[str, str]]:
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for lineno, row in enumerate(_csv_rows(files, path), 2):
        if any(row.get(c) is None for c in columns):
            raise DataError(f"{path}:{lineno}: expected the columns {', '.join(columns)}")
        key = (row["id"], row["model"])
        if key in rows:
            raise DataError(f"{path}:{lineno}: a second row for document {key[0]!r} and model {key[1]!r}")
        rows[key] = row
    return rows


def _number(value: str, where: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise DataError(f"{where}: {value!r} is not a number") from None


def ffci_coherence(files: Mapping[str, bytes]) -> Converted:
    """``published_data_ic_raw.csv`` and ``published_data_ic_z.csv`` (``id, data, model, score, text``: the mean
    raw 0-100 rating and the mean z-score per summary, with its text) -> one record per summary."""
    raw_path, z_path = FFCI_IC.format("raw"), FFCI_IC.format("z")
    cols = ("id", "data", "model", "score", "text")
    raw, z = _ffci_rows(files, raw_path, cols), _ffci_rows(files, z_path, cols)
    if set(raw) != set(z):
        raise DataError(f"{raw_path} and {z_path} do not cover the same summaries")
    records = []
    for key, row in raw.items():
        if z[key]["text"] != row["text"]:
            raise DataError(f"{raw_path} and {z_path} give different texts for document {key[0]} and {key[1]}")
        records.append({"instance_id": key[0], "summarizer_id": key[1], "summary": row["text"], "metrics": {
            "human": {"coherence_z": _number(z[key]["score"], f"{z_path} ({key[0]}, {key[1]})"),
                      "coherence": _number(row["score"], f"{raw_path} ({key[0]}, {key[1]})")}}})
    return _converted(records, "FFCI inter-sentential coherence (Koto et al.): CNN/DM, 4 systems x 135 documents, "
                      "means of workers (z-scores and raw 0-100)", ["human.coherence_z", "human.coherence"],
                      {"human.coherence_z": "Coherence (z)", "human.coherence": "Coherence (0-100)"}, (
        "id -> instance_id, model -> summarizer_id, text -> summary (sentences separated by newlines, as given)",
        "score of published_data_ic_z.csv -> metrics.human.coherence_z; of published_data_ic_raw.csv -> "
        "metrics.human.coherence (the texts of both files checked equal)",
    ))


def ffci_xsum(files: Mapping[str, bytes]) -> Converted:
    """``Data/Focus and Coverage/xsum/human_{focus,coverage}_final.csv`` (``id, data, model, score``: mean z-score
    per summary) -> focus and coverage per summary (no texts)."""
    fpath, cpath = FFCI_FC.format("focus"), FFCI_FC.format("coverage")
    cols = ("id", "model", "score")
    focus, coverage = _ffci_rows(files, fpath, cols), _ffci_rows(files, cpath, cols)
    if set(focus) != set(coverage):
        raise DataError(f"{fpath} and {cpath} do not cover the same summaries")
    records = [{"instance_id": key[0], "summarizer_id": key[1], "metrics": {"human": {
        "focus": _number(row["score"], f"{fpath} ({key[0]}, {key[1]})"),
        "coverage": _number(coverage[key]["score"], f"{cpath} ({key[0]}, {key[1]})")}}} for key, row in focus.items()]
    return _converted(records, "FFCI focus and coverage (Koto et al.): XSum, 2 systems x 135 documents, mean z-scores",
                      ["human.focus", "human.coverage"], _FOCUS_COVERAGE, (
        "id -> instance_id, model -> summarizer_id; score of human_focus_final.csv / human_coverage_final.csv -> "
        "metrics.human.focus / coverage (mean z-scores of the workers)",
    ))
