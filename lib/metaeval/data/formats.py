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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "FORMAT_HELP",
    "METADATA_FIELDS",
    "DataError",
    "DataWarning",
    "Record",
    "parse_record",
    "read_dataset_yml",
    "read_jsonl",
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

_TEXT_FIELDS = ("summary", "peer", "references", "reference", "refs")
_KEY_FIELDS = ("instance_id", "summarizer_id", "summarizer_type", "id")
# Score-bearing fields and the prefix their values get.
_SCORE_DICTS = {"metrics": "", "scores": "", "expert_annotations": "expert.", "turker_annotations": "turker."}
_SCORE_SCALARS = {"litepyramid_recall": "litepyramid.recall"}


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
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


def read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield ``(line number, record)`` for every non-blank line; errors name the file and the line.

    Lines are decoded one by one so that a non-UTF-8 byte is reported with its line number.
    """
    try:
        with open(path, "rb") as fh:
            lines = fh.read().splitlines(keepends=True)
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory, expected a JSONL file") from None
    except PermissionError:
        raise DataError(f"{path}: permission denied") from None
    except FileNotFoundError:
        raise DataError(f"{path}: does not exist") from None
    for lineno, raw in enumerate(lines, 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(
                f"{path}:{lineno}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
                "save the file as UTF-8"
            ) from None
        if lineno == 1:
            line = line.removeprefix("\ufeff")  # a byte-order mark is not part of the data
        if not line.strip():
            continue
        try:
            record = json.loads(line, object_pairs_hook=_unique_keys)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{lineno}: not valid JSON ({exc.msg}); {FORMAT_HELP}") from None
        except _DuplicateKey as exc:
            raise DataError(
                f"{path}:{lineno}: key {exc.args[0]!r} appears twice in one JSON object (JSON readers would keep "
                "only the last value); remove or rename one"
            ) from None
        if not isinstance(record, dict):
            raise DataError(
                f"{path}:{lineno}: expected a JSON object, got {type(record).__name__}; {FORMAT_HELP}"
            )
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
    present = [f for f in ("references", "reference", "refs") if f in record]
    if len(present) > 1:
        raise DataError(f"{where}: fields {present} all give references; give only one of them")
    if not present:
        return None
    name = present[0]
    value = record[name]
    if value is None:
        return None
    if name == "reference":
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


def parse_record(
    record: dict,
    where: str,
    *,
    reference_records: ReferenceRecords = "raise",
    ignore_fields: frozenset[str] = frozenset(),
) -> Record | None:
    """Normalize one JSON record; ``None`` when the caller asked to skip reference-summary records."""
    fmt = _format_name(record)
    unknown = [
        k for k in record
        if k not in _KEY_FIELDS and k not in _TEXT_FIELDS and k not in _SCORE_DICTS and k not in _SCORE_SCALARS
        and k not in METADATA_FIELDS and k not in ignore_fields
    ]
    if unknown:
        raise DataError(
            f"{where}: unknown field {unknown[0]!r} ({fmt}); put scores under \"metrics\" or \"scores\", or list the "
            "field under ignore_fields in dataset.yml (or load(..., ignore_fields=[...])) to leave it out"
        )

    kind = record.get("summarizer_type", "peer")
    if kind == "reference":
        if reference_records == "raise":
            raise DataError(
                f"{where}: field 'summarizer_type' is 'reference' (a reference summary scored like a system); "
                "pass load(..., reference_records='skip') to leave such records out, or 'as-systems' to keep them "
                "as systems (or set reference_records in dataset.yml)"
            )
        if reference_records == "skip":
            return None
    elif kind != "peer":
        raise DataError(
            f"{where}: field 'summarizer_type' must be exactly \"peer\" or \"reference\", got {kind!r} ({fmt})"
        )

    # Keys: explicit fields, else the ``metaeval rouge`` id "INSTANCE::SUMMARIZER".
    if "instance_id" in record or "summarizer_id" in record or "id" not in record:
        if "instance_id" not in record:
            raise DataError(f"{where}: missing field 'instance_id'; {FORMAT_HELP}")
        instance = _id(record["instance_id"], "instance_id", where, fmt)
        summarizer = _id(record["summarizer_id"], "summarizer_id", where, fmt) if "summarizer_id" in record else None
    else:
        rid = record["id"]
        if not isinstance(rid, str) or rid.count("::") != 1 or not all(p.strip() for p in rid.split("::")):
            raise DataError(
                f"{where}: field 'id' = {rid!r} does not name (instance_id, summarizer_id); expected "
                "\"INSTANCE::SUMMARIZER\" or explicit 'instance_id' and 'summarizer_id' fields (metaeval rouge JSONL)"
            )
        instance, summarizer = rid.split("::")

    present = [f for f in ("summary", "peer") if f in record]
    if len(present) > 1:
        raise DataError(f"{where}: fields 'summary' and 'peer' both give the summary; give only one")
    # null is an absent text (metaeval rouge scores a null peer as empty): reported by has_texts / require
    summary = _text(record[present[0]], present[0], where) if present and record[present[0]] is not None else None
    references = _reference_list(record, where)

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

    if summarizer is None:
        if summary is not None or flat:
            raise DataError(
                f"{where}: missing field 'summarizer_id' (only input-level records, which give references shared "
                f"by every system, may leave it out); {FORMAT_HELP}"
            )
        if references is None:
            raise DataError(f"{where}: missing field 'summarizer_id'; {FORMAT_HELP}")
    elif summary is None and references is None and not flat:
        raise DataError(
            f"{where}: the record holds no summary, references or scores ({fmt}); {FORMAT_HELP}"
        )
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
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        lineno = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise DataError(f"{path}:{lineno}: not UTF-8 text; save the file as UTF-8") from None
    try:
        meta = yaml.safe_load(text)
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
