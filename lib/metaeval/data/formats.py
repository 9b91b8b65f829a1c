"""Readers of the dataset contract: JSONL records keyed by (instance_id, summarizer_id), and ``dataset.yml``.

Private to :mod:`metaeval.data.datasets`; the contract itself is documented in ``data/README.md``.

Every record is read field by field, whatever file it comes from, so that the formats of the ecosystem
are accepted as they are and may be mixed in one folder:

================================  =================================================================
SacreROUGE "Metrics" JSONL        ``{"instance_id", "summarizer_id", "summarizer_type", "metrics": {...}}``
SacreROUGE summaries / instances  ``{"instance_id", "summarizer_id", "summary": {"text"}, "references": [{"text"}]}``
SummEval joined (embedded)        ``{..., "summary", "references": [str], "expert_annotations", "turker_annotations"}``
REALSumm joined (embedded)        ``{..., "summary", "reference": str, "litepyramid_recall"}``
``metaeval rouge`` input/output   ``{"id": "INSTANCE::SUMMARIZER", "peer", "refs"}`` / ``{"id", "scores": {...}}``
================================  =================================================================

Nothing a record holds is dropped without a word: a field that is neither a key, a text, a score nor one
of the documented metadata fields is an error unless the caller lists it in ``ignore_fields``.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import metaeval._outputs as _outputs

__all__ = [
    "FORMAT_HELP",
    "METADATA_FIELDS",
    "DataError",
    "DataWarning",
    "Record",
    "parse_record",
    "read_dataset_yml",
    "read_jsonl",
    "write_dataset",
]


class DataError(ValueError):
    """A data file is missing, corrupt, malformed or does not form the expected grid."""


class DataWarning(UserWarning):
    """Data were left out on the caller's explicit request (e.g. ``incomplete='drop-inputs'``)."""


ReferenceRecords = Literal["raise", "skip", "as-systems"]

FORMAT_HELP = (
    "expected JSONL records {\"instance_id\", \"summarizer_id\", and any of \"summary\", \"references\", "
    "\"metrics\"/\"scores\"} (SacreROUGE Metrics or summaries JSONL, metaeval rouge output; see data/README.md)"
)

# Top-level fields that are read but deliberately not loaded (documented in data/README.md).
METADATA_FIELDS: dict[str, str] = {
    "n_refs": "metaeval rouge output: number of references scored (the references themselves are loaded)",
    "system_group": "REALSumm: 'abs' or 'ext'",
    "summary_raw": "REALSumm: the summary with <t> sentence tags (the tag-free 'summary' is loaded)",
    "reference_raw": "REALSumm: the reference with <t> sentence tags (the tag-free 'reference' is loaded)",
    "expert_mean": "SummEval: mean of 'expert_annotations' (checked against them; loaded where they are absent)",
    "stored_metrics": "REALSumm: the authors' own metric values, identical to deutsch2021/bhandari2020/pyramid.jsonl",
    "documents": "SacreROUGE instances: the source documents (no analysis uses them)",
}



def _format_name(record: Mapping[str, Any]) -> str:
    """The format a record looks like, for error messages."""
    if "metrics" in record:
        return "SacreROUGE Metrics JSONL"
    if "scores" in record or "peer" in record or "refs" in record or "id" in record:
        return "metaeval rouge JSONL"
    if "expert_annotations" in record or "turker_annotations" in record:
        return "SummEval joined JSONL"
    if "litepyramid_recall" in record or "reference" in record:
        return "REALSumm joined JSONL"
    if isinstance(record.get("summary"), Mapping):
        return "SacreROUGE summaries JSONL"
    return "dataset JSONL"


class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateKey(next(k for k, n in Counter(k for k, _ in pairs).items() if n > 1))
    return out


# A record is one (input, system) cell: texts and scores, a few KB (SummEval's joined lines, with 11
# references, are under 20 KB). A line far longer than that is not a record but a file that is not JSONL
# (a whole JSON array, a binary file without newlines): refusing it by length keeps memory bounded instead
# of reading gigabytes into one string and failing with a MemoryError.
MAX_LINE_BYTES = 64 * 2**20

# Files whose first bytes say they are tabular or binary, for pointing to ``metaeval import``.
_TABULAR_SUFFIXES = (".csv", ".tsv", ".tab", ".txt", ".parquet", ".pq", ".xlsx", ".xls")
_IMPORT_HINT = ("a table (CSV, TSV, parquet, DataFrame) is read by metaeval.datasets.load(path, columns=...) "
                "or converted with `metaeval import {path} DEST [--doc COL --system COL ...]`")


def _tabular_hint(path: Path, first: bytes) -> str:
    """A hint pointing to ``metaeval import`` when a file looks like a table rather than JSONL, else ''."""
    if path.suffix.lower() in _TABULAR_SUFFIXES or first.startswith(b"PAR1") or first.startswith(b"PK\x03\x04"):
        return "; " + _IMPORT_HINT.format(path=path)
    head = first.lstrip(b"\xef\xbb\xbf \t")
    if head and not head.startswith((b"{", b"[")) and (b"," in head or b"\t" in head):
        return "; it looks like a table: " + _IMPORT_HINT.format(path=path)
    return ""


_GZIP_MAGIC = b"\x1f\x8b"


def decode_utf8(raw: bytes, path: Path | str, fix: str = "; save the file as UTF-8", first_line: int = 1) -> str:
    """``raw`` (the file ``path`` from line ``first_line`` on) as text, without the byte-order mark a file may
    begin with; a byte that is not UTF-8 is a :class:`DataError` naming the line, the byte and its column, then
    ``fix``."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + raw[: exc.start].count(b"\n")
        column, byte = exc.start - raw.rfind(b"\n", 0, exc.start), raw[exc.start]
        raise DataError(f"{path}:{line}: not UTF-8 text (byte 0x{byte:02x} at column {column}){fix}") from None
    return text.removeprefix("\ufeff") if first_line == 1 else text


def read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield ``(line number, record)`` for every non-blank line; errors name the file and the line.

    The file is streamed line by line (a line longer than :data:`MAX_LINE_BYTES` is an error, not a
    ``MemoryError``) and each line decoded alone, so that a non-UTF-8 byte is reported with its line number.
    """
    try:
        fh = open(path, "rb")
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory, expected a JSONL file") from None
    except PermissionError:
        raise DataError(f"{path}: permission denied") from None
    except FileNotFoundError:
        raise DataError(f"{path}: does not exist") from None
    with fh:
        for lineno, raw in enumerate(iter(lambda: fh.readline(MAX_LINE_BYTES + 1), b""), 1):
            hint = _tabular_hint(path, raw[:4096]) if lineno == 1 else ""
            if lineno == 1 and raw.startswith(_GZIP_MAGIC):
                # compressed bytes are neither UTF-8 nor a table: say what the file is and how to read it
                how = (f"`gunzip -k {path}`, which writes {path.name.removesuffix('.gz')}" if path.suffix == ".gz"
                       else f"`mv {path} {path}.gz && gunzip {path}.gz`")
                raise DataError(f"{path}: is gzip-compressed, not JSONL text; decompress it first ({how}) and load "
                                "the decompressed file")
            if len(raw) > MAX_LINE_BYTES:
                raise DataError(f"{path}:{lineno}: line longer than {MAX_LINE_BYTES // 2**20} MiB; a JSONL dataset "
                                "holds one record (one input x system) per line"
                                f"{_tabular_hint(path, raw[:4096]) or '; ' + FORMAT_HELP}")
            line = decode_utf8(raw, path, hint or "; save the file as UTF-8", first_line=lineno)
            if not line.strip():
                continue
            try:
                record = json.loads(line, object_pairs_hook=_unique_keys)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{lineno}: not valid JSON ({exc.msg}){hint or '; ' + FORMAT_HELP}") from None
            except _DuplicateKey as exc:
                raise DataError(f"{path}:{lineno}: key {exc.args[0]!r} appears twice in one JSON object (JSON "
                                "readers would keep only the last value); remove or rename one") from None
            if not isinstance(record, dict):
                raise DataError(f"{path}:{lineno}: expected a JSON object, got {type(record).__name__}; {FORMAT_HELP}")
            yield lineno, record


@dataclass
class Record:
    """One record, normalized: its key and whatever it holds."""

    where: str
    instance_id: str
    summarizer_id: str | None  # None: an input-level record (references shared by every system)
    summary: str | None = None
    references: list[str] | None = None
    scores: dict[str, float] = field(default_factory=dict)
    ratings: dict[str, list[float]] = field(default_factory=dict)


def _id(value: Any, name: str, where: str, fmt: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise DataError(
            f"{where}: field {name!r} must be a string (or an integer), got {type(value).__name__} ({fmt})"
        )
    text = str(value)
    if not text.strip():
        raise DataError(f"{where}: field {name!r} is empty ({fmt})")
    return text


def _text(value: Any, name: str, where: str) -> str:
    """A text given as a string, a list of sentence strings, or a SacreROUGE ``{"text": ...}`` object."""
    if isinstance(value, Mapping):
        if "text" not in value:
            raise DataError(f"{where}: field {name!r} is an object without 'text' (SacreROUGE form: {{\"text\": ...}})")
        return _text(value["text"], f"{name}.text", where)
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        # Sentences stay one per line: ROUGE-L/W with sentences="lines" sees the author's sentence split.
        return "\n".join(value)
    raise DataError(
        f"{where}: field {name!r} must be a string, a list of sentence strings or {{\"text\": ...}}, "
        f"got {type(value).__name__}"
    )


def _reference_list(record: Mapping[str, Any], where: str) -> list[str] | None:
    present = [f for f in _REFERENCE_FIELDS if f in record]
    if len(present) > 1:
        raise DataError(f"{where}: fields {present} all give references; give only one of them")
    if not present:
        return None
    name = present[0]
    value = record[name]
    if value is None:
        return None
    if _REFERENCE_FIELDS[name] == "one":
        return [_text(value, name, where)]
    if not isinstance(value, list):
        raise DataError(
            f"{where}: field {name!r} must be a list of references (strings, sentence lists or {{\"text\": ...}}), "
            f"got {type(value).__name__}"
        )
    if not value:
        raise DataError(f"{where}: field {name!r} is an empty list; give at least one reference or leave the field out")
    return [_text(v, f"{name}[{k}]", where) for k, v in enumerate(value)]


def _number(value: Any, name: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataError(
            f"{where}: score {name!r} is {value!r}, expected a number, a list of numbers (one per annotator) or null"
        )
    if math.isinf(value):
        raise DataError(f"{where}: score {name!r} is {value!r}; scores must be finite numbers (or null when missing)")
    return float(value)


def _flatten(
    value: Mapping[str, Any],
    prefix: str,
    source: str,
    out: dict[str, Any],
    origin: dict[str, str],
    where: str,
) -> None:
    """Flatten nested dicts into ``a.b.c`` names, refusing two paths that give the same name."""
    for key, item in value.items():
        if not key:
            raise DataError(f"{where}: field {source!r} holds an empty score name")
        name = f"{prefix}{key}"
        path = f"{source}[{key!r}]"
        if isinstance(item, Mapping):
            _flatten(item, name + ".", path, out, origin, where)
            continue
        if name in out:
            raise DataError(
                f"{where}: score name {name!r} occurs twice in one record after joining nested names with '.' "
                f"({origin[name]} and {path}); rename one of them"
            )
        out[name] = item
        origin[name] = path


def _check_expert_mean(means: Any, flat: dict[str, Any], origin: dict[str, str], where: str) -> None:
    """SummEval's ``expert_mean`` must agree with the annotations; a mean without annotations is loaded."""
    if not isinstance(means, Mapping):
        raise DataError(f"{where}: field 'expert_mean' must be an object of numbers, got {type(means).__name__}")
    for dim, mean in means.items():
        name = f"expert.{dim}"
        value = flat.get(name)
        if value is None:
            flat[name] = mean
            origin[name] = f"expert_mean[{dim!r}]"
            continue
        if isinstance(value, list) and value and all(isinstance(v, (int, float)) for v in value):
            expected = math.fsum(value) / len(value)
            if not isinstance(mean, (int, float)) or not math.isclose(mean, expected, rel_tol=1e-9, abs_tol=1e-12):
                raise DataError(
                    f"{where}: field 'expert_mean' gives {dim!r} = {mean!r} but the mean of "
                    f"expert_annotations[{dim!r}] is {expected!r}"
                )


# ----------------------------------------------------------------------------------------------------
# Field tables: every top-level field a record may hold, and what reads it. ``parse_record`` only runs the
# readers in order; adding a format of the ecosystem means adding its fields to these tables (data/README.md,
# "Add a data format").

# Key fields. ``id`` is the ``metaeval rouge`` form "INSTANCE::SUMMARIZER".
_KEY_FIELDS = ("instance_id", "summarizer_id", "summarizer_type", "id")
# Summary fields (at most one per record) and reference fields (at most one): name -> "one" or "list".
_SUMMARY_FIELDS = ("summary", "peer")
_REFERENCE_FIELDS = {"references": "list", "reference": "one", "refs": "list"}
_TEXT_FIELDS = _SUMMARY_FIELDS + tuple(_REFERENCE_FIELDS)
# Score-bearing objects and the prefix their (flattened) names get.
_SCORE_DICTS = {"metrics": "", "scores": "", "expert_annotations": "expert.", "turker_annotations": "turker."}
# Score-bearing scalars and the score name they give.
_SCORE_SCALARS = {"litepyramid_recall": "litepyramid.recall"}

# Common column names of tables and other tools, and the field (and ``metaeval import`` option) they mean:
# an unknown field or a missing key with one of these names gets a message naming the fix.
ID_SYNONYMS: dict[str, tuple[str, ...]] = {
    "instance_id": ("doc", "document", "doc_id", "docid", "document_id", "input", "input_id", "article_id",
                    "source_id", "example_id", "item_id", "topic", "topic_id"),
    "summarizer_id": ("system", "system_id", "sys", "sys_id", "model", "model_id", "model_name", "summarizer",
                      "system_name"),
}
_IMPORT_OPTION = {"instance_id": "--doc", "summarizer_id": "--system"}


def _import_fix(wanted: str, found: str) -> str:
    return (f"name it {wanted!r}, or convert the table with "
            f"`metaeval import SOURCE DEST {_IMPORT_OPTION[wanted]} {found}`")


def _synonym_fix(record: Mapping[str, Any], wanted: str) -> str:
    """'; the record has X: name it ...' when the record has a synonym of the missing key ``wanted``."""
    found = next((k for k in record if k.lower() in ID_SYNONYMS[wanted]), None)
    return "" if found is None else f"; the record has {found!r}: {_import_fix(wanted, found)}"


def _read_fields(record: Mapping[str, Any], where: str, fmt: str, ignore_fields: frozenset[str]) -> None:
    """Refuse a field that no table lists, naming the fix."""
    for k in record:
        if (k in _KEY_FIELDS or k in _TEXT_FIELDS or k in _SCORE_DICTS or k in _SCORE_SCALARS
                or k in METADATA_FIELDS or k in ignore_fields):
            continue
        for wanted, synonyms in ID_SYNONYMS.items():
            if k.lower() in synonyms:
                raise DataError(f"{where}: unknown field {k!r} ({fmt}); {_import_fix(wanted, k)}")
        raise DataError(
            f"{where}: unknown field {k!r} ({fmt}); put scores under \"metrics\" or \"scores\", or list the "
            "field under ignore_fields in dataset.yml (or load(..., ignore_fields=[...])) to leave it out"
        )


def _read_kind(record: Mapping[str, Any], where: str, fmt: str, reference_records: ReferenceRecords) -> bool:
    """``summarizer_type``: True when the record is to be skipped."""
    kind = record.get("summarizer_type", "peer")
    if kind == "reference":
        if reference_records == "raise":
            raise DataError(
                f"{where}: field 'summarizer_type' is 'reference' (a reference summary scored like a system); "
                "pass load(..., reference_records='skip') to leave such records out, or 'as-systems' to keep them "
                "as systems (or set reference_records in dataset.yml)"
            )
        return reference_records == "skip"
    if kind != "peer":
        raise DataError(
            f"{where}: field 'summarizer_type' must be exactly \"peer\" or \"reference\", got {kind!r} ({fmt})"
        )
    return False


def _read_keys(record: Mapping[str, Any], where: str, fmt: str) -> tuple[str, str | None]:
    """(instance, summarizer or None): explicit fields, else the ``metaeval rouge`` id "INSTANCE::SUMMARIZER"."""
    if "instance_id" in record or "summarizer_id" in record or "id" not in record:
        if "instance_id" not in record:
            raise DataError(
                f"{where}: missing field 'instance_id'{_synonym_fix(record, 'instance_id') or '; ' + FORMAT_HELP}"
            )
        instance = _id(record["instance_id"], "instance_id", where, fmt)
        summarizer = _id(record["summarizer_id"], "summarizer_id", where, fmt) if "summarizer_id" in record else None
        return instance, summarizer
    rid = record["id"]
    if not isinstance(rid, str) or rid.count("::") != 1 or not all(p.strip() for p in rid.split("::")):
        raise DataError(
            f"{where}: field 'id' = {rid!r} does not name (instance_id, summarizer_id); expected "
            "\"INSTANCE::SUMMARIZER\" or explicit 'instance_id' and 'summarizer_id' fields (metaeval rouge JSONL)"
        )
    instance, summarizer = rid.split("::")
    return instance, summarizer


def _read_summary(record: Mapping[str, Any], where: str) -> str | None:
    present = [f for f in _SUMMARY_FIELDS if f in record]
    if len(present) > 1:
        raise DataError(f"{where}: fields 'summary' and 'peer' both give the summary; give only one")
    # null is an absent text (metaeval rouge scores a null peer as empty): reported by has_texts / require
    if not present or record[present[0]] is None:
        return None
    return _text(record[present[0]], present[0], where)


def _read_scores(record: Mapping[str, Any], where: str, fmt: str) -> dict[str, Any]:
    """Every score-bearing field, flattened to ``name -> raw value`` (number, list, or None)."""
    flat: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for source, prefix in _SCORE_DICTS.items():
        if source in record:
            value = record[source]
            if not isinstance(value, Mapping):
                raise DataError(
                    f"{where}: field {source!r} must be an object of scores, got {type(value).__name__} ({fmt})"
                )
            _flatten(value, prefix, source, flat, origin, where)
    for source, name in _SCORE_SCALARS.items():
        if source in record:
            if name in flat:
                raise DataError(
                    f"{where}: score name {name!r} occurs twice in one record ({origin[name]} and {source}); "
                    "rename one of them"
                )
            flat[name] = record[source]
            origin[name] = source
    if "expert_mean" in record:
        _check_expert_mean(record["expert_mean"], flat, origin, where)
    return flat


def _score_values(flat: Mapping[str, Any], where: str) -> tuple[dict[str, float], dict[str, list[float]]]:
    """(scores, ratings): a list is one rating per annotator (the score is their mean); null is NaN."""
    scores: dict[str, float] = {}
    ratings: dict[str, list[float]] = {}
    for name, value in flat.items():
        if value is None:
            scores[name] = math.nan  # an explicit null is a missing value, reported when the score is used
        elif isinstance(value, list):
            if not value:
                raise DataError(f"{where}: score {name!r} is an empty list; expected one number per annotator")
            values = [_number(v, name, where) for v in value]
            ratings[name] = values
            scores[name] = math.fsum(values) / len(values)
        else:
            scores[name] = _number(value, name, where)
    return scores, ratings


def parse_record(
    record: dict,
    where: str,
    *,
    reference_records: ReferenceRecords = "raise",
    ignore_fields: frozenset[str] = frozenset(),
) -> Record | None:
    """Normalize one JSON record; ``None`` when the caller asked to skip reference-summary records.

    The readers run in order: fields (refuse unknown ones), ``summarizer_type``, keys, summary, references,
    scores; then a record must hold something.

    Examples
    --------
    >>> rec = parse_record({"instance_id": "d1", "summarizer_id": "A",
    ...                     "metrics": {"rouge-2": {"f1": 0.25}, "human": {"relevance": [4, 5]}}}, "x.jsonl:1")
    >>> rec.scores, rec.ratings
    ({'rouge-2.f1': 0.25, 'human.relevance': 4.5}, {'human.relevance': [4.0, 5.0]})
    """
    fmt = _format_name(record)
    _read_fields(record, where, fmt, ignore_fields)
    if _read_kind(record, where, fmt, reference_records):
        return None
    instance, summarizer = _read_keys(record, where, fmt)
    summary = _read_summary(record, where)
    references = _reference_list(record, where)
    flat = _read_scores(record, where, fmt)
    scores, ratings = _score_values(flat, where)

    if summarizer is None and (summary is not None or flat or references is None):
        only = (" (only input-level records, which give references shared by every system, may leave it out)"
                if summary is not None or flat else "")
        fix = _synonym_fix(record, "summarizer_id") or "; " + FORMAT_HELP
        raise DataError(f"{where}: missing field 'summarizer_id'{only}{fix}")
    if summarizer is not None and summary is None and references is None and not flat:
        raise DataError(f"{where}: the record holds no summary, references or scores ({fmt}); {FORMAT_HELP}")
    return Record(where, instance, summarizer, summary, references, scores, ratings)


# ----------------------------------------------------------------------------------------------------
# dataset.yml

_YML_KEYS = {
    "description": str,
    "default_human": str,
    "human_scores": list,
    "display_names": dict,
    "recall_oriented": bool,
    "reference_records": str,
    "ignore_fields": list,
}


def read_dataset_yml(path: Path) -> dict[str, Any]:
    """Read and validate a folder's ``dataset.yml``; every error names the file and the key."""
    import yaml

    try:
        meta = yaml.safe_load(decode_utf8(path.read_bytes(), path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise DataError(f"{path}{line}: invalid YAML ({getattr(exc, 'problem', None) or exc})") from None
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise DataError(f"{path}: expected a mapping of keys ({', '.join(_YML_KEYS)}), got {type(meta).__name__}")
    for key, value in meta.items():
        if key not in _YML_KEYS:
            raise DataError(f"{path}: unknown key {key!r}; known keys: {', '.join(_YML_KEYS)}")
        kind = _YML_KEYS[key]
        if not isinstance(value, kind):
            raise DataError(f"{path}: key {key!r} must be a {kind.__name__}, got {type(value).__name__}")
    for key in ("human_scores", "ignore_fields"):
        if key in meta and not all(isinstance(v, str) for v in meta[key]):
            raise DataError(f"{path}: key {key!r} must be a list of strings")
    if "display_names" in meta and not all(
        isinstance(k, str) and isinstance(v, str) for k, v in meta["display_names"].items()
    ):
        raise DataError(f"{path}: key 'display_names' must map score names to strings")
    if meta.get("reference_records", "raise") not in ("raise", "skip", "as-systems"):
        raise DataError(
            f"{path}: key 'reference_records' must be 'raise', 'skip' or 'as-systems', "
            f"got {meta['reference_records']!r}"
        )
    return meta


def write_dataset(target: Path, run: str, records: list[dict[str, Any]], meta: Mapping[str, Any],
                  parameters: Mapping[str, Any], extra: Mapping[str, str] | None = None) -> None:
    """Write ``records.jsonl``, ``dataset.yml`` and the ``extra`` files as the folder of a ``run``
    (``metaeval import``, ``metaeval download``): staged beside ``target``, then renamed into place
    (:mod:`metaeval._outputs`); the caller has checked that ``run`` may write ``target``."""
    import yaml

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = _outputs.staging_dir(target)  # marked as ours: the cleanup below can only remove what it created
    try:
        with open(staging / "records.jsonl", "w", encoding="utf-8", newline="\n") as out:
            for record in records:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        (staging / "dataset.yml").write_text(yaml.safe_dump(dict(meta), sort_keys=False, allow_unicode=True),
                                             encoding="utf-8")
        for name, text in (extra or {}).items():
            (staging / name).write_text(text, encoding="utf-8")
        _outputs.write_manifest(staging, run, parameters, paper=run)
        _outputs.swap_into_place(staging, target, run, paper=run)
    except BaseException:
        _outputs.remove_run_folder(staging)
        raise
