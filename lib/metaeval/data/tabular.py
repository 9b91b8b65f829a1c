"""Tables as datasets: CSV, TSV, parquet and DataFrames, in long or wide format (``metaeval import``).

A human evaluation usually lives in a spreadsheet or a DataFrame. This module maps its columns to the
dataset contract (``data/README.md``) and either hands the records to :func:`metaeval.datasets.load` /
:func:`metaeval.datasets.from_frame` or writes them as a dataset folder (``records.jsonl`` + ``dataset.yml``)
with :func:`import_table`.

Formats
-------
long
    one row per document x system: a document column, a system column, then the summary, references and
    scores of that cell.
wide
    one row per document: a document column, references, and one column per system and field named
    ``FIELD:SYSTEM`` (``summary:bart``, ``relevance:bart``, ``summary:pegasus``, ...). A DataFrame may
    give the same as two-level columns ``(FIELD, SYSTEM)``.

Column roles are inferred from common names (:data:`ROLE_NAMES`), every other column is a score, and the
options (``doc=``, ``system=``, ``summary=``, ``reference=``, ``score=``, ``human=``, ``ignore=``; on the
command line ``--doc`` ...) override the inference. References are one column or several (``reference_1``,
``reference_2``, ...), or one column of lists (a parquet list column, or JSON ``["...", "..."]`` text).
A score cell is a number, empty (missing), or a list of numbers (one per annotator: JSON ``[4, 5, 3]`` text
in a CSV).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import shlex
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import metaeval._outputs as _outputs
from metaeval.data.formats import ID_SYNONYMS, DataError, decode_utf8, parse_record, write_dataset

__all__ = ["ROLE_NAMES", "TABLE_SUFFIXES", "ColumnMap", "ColumnRoles", "ImportResult", "frame_records", "import_table",
           "infer_columns", "is_table", "names_an_id", "read_table"]

TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".parquet", ".pq", ".xlsx", ".xls", ".ods")

# Normalized column name (lower case, spaces and dashes as "_") -> role. The first match wins.
ROLE_NAMES: dict[str, tuple[str, ...]] = {
    "doc": ("instance_id", *ID_SYNONYMS["instance_id"], "id"),
    "system": ("summarizer_id", *ID_SYNONYMS["summarizer_id"]),
    "summary": ("summary", "peer", "system_summary", "output", "prediction", "hypothesis", "candidate",
                "generated", "generated_summary", "summary_text", "model_summary"),
    "reference": ("references", "reference", "refs", "ref", "reference_summary", "reference_summaries", "target",
                  "gold", "gold_summary", "highlights"),
}
# Several reference columns: reference_1, ref2, reference-A, references_0 ...
_REFERENCE_COLUMN = re.compile(r"^(references?|refs?|gold|target)[_ ]?([0-9]+|[a-z])$")
# Scores that are human judgments by name (first component, before "." or "_"), besides dataset.yml's
# prefixes (expert., human., ...): the usual protocol names.
_HUMAN_WORDS = ("expert", "human", "annotator", "litepyramid", "pyramid", "responsiveness", "crowd", "turker",
                "relevance", "coherence", "consistency", "fluency", "informativeness", "faithfulness",
                "factuality", "overall", "quality", "rating", "likert", "readability", "acu", "normalized",
                "nacu", "grammaticality", "redundancy", "adequacy", "preference", "rater")
WIDE_SEPARATOR = ":"
#: The "notebook" name of an import in the one ownership mechanism of every writer (:mod:`metaeval._outputs`): an
#: import leaves ``.metaeval-run.import.json`` (the sha256 of every file it wrote) in its folder.
IMPORT_RUN = "import"


def _norm(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", str(name).strip().lower())


def names_an_id(name: str) -> bool:
    """True for a column name that names the document or the system of a row, as the table readers take it.

    >>> names_an_id("Document ID"), names_an_id("summarizer"), names_an_id("expert relevance")
    (True, True, False)
    """
    return _norm(name) in ROLE_NAMES["doc"] + ROLE_NAMES["system"]


def is_table(path: str | os.PathLike[str]) -> bool:
    """True for a file name a table reader handles (by suffix).

    Examples
    --------
    >>> is_table("study.csv"), is_table("Study.TSV"), is_table("scores.parquet"), is_table("rouge.jsonl")
    (True, True, True, False)
    """
    return Path(path).suffix.lower() in TABLE_SUFFIXES


# ----------------------------------------------------------------------------------------------------
# Reading

#: magic numbers of the compressed or archive files a table's name can hide (read as text they are noise)
_COMPRESSED = ((b"\x1f\x8b", "gzip-compressed"), (b"PK\x03\x04", "zip (or Excel)"), (b"BZh", "bzip2-compressed"),
               (b"\xfd7zXZ\x00", "xz-compressed"), (b"\x28\xb5\x2f\xfd", "zstd-compressed"))


def _check_header(path: Path, text: str, sep: str) -> None:
    """Refuse a header naming a column twice: pandas would rename the second ``m.1``, and a score would be
    imported under a name nobody gave it (or a human score lost among the metrics)."""
    header = next(csv.reader(io.StringIO(text), delimiter=sep), [])
    seen: dict[str, int] = {}
    for k, name in enumerate(header, start=1):
        if name in seen and name.strip():
            raise DataError(f"{path}:1: column {name!r} appears twice in the header (columns {seen[name]} and "
                            f"{k}); rename one (or delete the copy)")
        seen.setdefault(name, k)


def read_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A CSV (``,``), TSV (tab) or parquet file as a DataFrame; CSV/TSV cells are kept as text (ids such as
    ``007`` stay as written) and numbers are read per score column, with errors naming row and column.

    Raises
    ------
    DataError
        Unreadable file, not UTF-8, ragged rows, an Excel file (no Excel reader is a dependency), no rows.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if not path.is_file():
        raise DataError(f"{path}: does not exist" if not path.exists() else f"{path}: is not a file")
    if suffix in (".xlsx", ".xls", ".ods"):
        raise DataError(f"{path}: spreadsheet files are not read (no spreadsheet reader is a dependency of "
                        "metaeval); save the sheet as CSV (UTF-8) or TSV and import that")
    if suffix in (".parquet", ".pq"):
        try:
            frame = pd.read_parquet(path)
        except Exception as exc:  # pyarrow's errors have many types; each means "not a parquet file we can read"
            raise DataError(f"{path}: cannot be read as parquet ({type(exc).__name__}: {exc})") from None
    else:
        raw = path.read_bytes()
        packed = next((kind for magic, kind in _COMPRESSED if raw.startswith(magic)), None)
        if packed:
            raise DataError(f"{path}: a {packed} file, not a text table; "
                            f"decompress it first and import the table it holds")
        text = decode_utf8(raw, path, "; save the file as UTF-8 (in a spreadsheet: Save As > CSV UTF-8)")
        sep = "\t" if suffix in (".tsv", ".tab") else ","
        _check_header(path, text, sep)
        try:
            frame = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, na_values=[])
        except pd.errors.EmptyDataError:
            raise DataError(f"{path}: the file is empty (no header row)") from None
        except pd.errors.ParserError as exc:
            detail = " ".join(str(exc).split())
            raise DataError(f"{path}: not a {'TSV' if sep == chr(9) else 'CSV'} table ({detail}); quote cells "
                            "that hold the separator or a line break") from None
    if frame.empty:
        raise DataError(f"{path}: the table has a header but no rows")
    return frame


# ----------------------------------------------------------------------------------------------------
# Column roles


@dataclass(frozen=True)
class ColumnMap:
    """Which column plays which role. ``wide``: columns ``FIELD:SYSTEM``, ``systems`` their systems."""

    doc: str
    system: str | None
    summary: str | None
    references: tuple[str, ...]
    scores: tuple[str, ...]
    human: tuple[str, ...]
    ignored: tuple[str, ...] = ()
    wide: bool = False
    systems: tuple[str, ...] = ()
    inferred: frozenset[str] = field(default_factory=frozenset)

    def describe(self) -> str:
        """The mapping, one role a line, as ``metaeval import`` shows it before writing anything."""
        def how(role: str) -> str:
            return "  (inferred)" if role in self.inferred else ""

        layout = "wide (one column per system: FIELD:SYSTEM)" if self.wide else "long (one row per document x system)"
        lines = [f"format:     {layout}", f"document:   {self.doc}{how('doc')}   --doc"]
        if self.wide:
            more = " ..." if len(self.systems) > 8 else ""
            lines.append(f"systems:    {len(self.systems)} ({', '.join(self.systems[:8])}{more})")
        else:
            lines.append(f"system:     {self.system}{how('system')}   --system")
        lines.append(f"summary:    {self.summary or '(none)'}{how('summary')}   --summary")
        lines.append(f"references: {', '.join(self.references) or '(none)'}{how('reference')}   --reference")
        metric = [s for s in self.scores if s not in self.human]
        lines.append(f"human:      {', '.join(self.human) or '(none)'}{how('human')}   --human")
        lines.append(f"scores:     {', '.join(metric) or '(none)'}{how('score')}   --score")
        if self.ignored:
            lines.append(f"ignored:    {', '.join(self.ignored)}   --ignore")
        return "\n".join(lines)


def _as_tuple(value: str | Iterable[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return (value,) if isinstance(value, str) else tuple(value)


def _flat_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Two-level columns (FIELD, SYSTEM) as ``FIELD:SYSTEM``; single-level ones as str."""
    if isinstance(frame.columns, pd.MultiIndex):
        if frame.columns.nlevels != 2:
            raise DataError(f"a DataFrame with {frame.columns.nlevels} column levels; give one level, or two "
                            "(FIELD, SYSTEM) for the wide format")
        def flat(top: Any, sub: Any) -> str:
            top, sub = ("" if pd.isna(x) else str(x) for x in (top, sub))
            # ("doc", "") is a plain column; ("summary", "bart") a wide one
            return f"{top}{WIDE_SEPARATOR}{sub}" if top and sub and not sub.startswith("Unnamed:") else top or sub

        frame = frame.copy()
        frame.columns = [flat(top, sub) for top, sub in frame.columns]
        return frame
    if not all(isinstance(c, str) for c in frame.columns):
        frame = frame.copy()
        frame.columns = [str(c) for c in frame.columns]
    return frame


def _wide_fields(wide_cols: Sequence[str], source: str) -> tuple[list[str], list[str]]:
    """(fields, systems) of the wide columns ``FIELD:SYSTEM``, in column order."""
    fields: list[str] = []
    systems: list[str] = []
    for c in wide_cols:
        fld, _, sys_name = c.rpartition(WIDE_SEPARATOR)
        if not fld.strip() or not sys_name.strip():
            raise DataError(f"{source}: column {c!r} is not FIELD{WIDE_SEPARATOR}SYSTEM (wide format)")
        fields += [fld] if fld not in fields else []
        systems += [sys_name] if sys_name not in systems else []
    return fields, systems


def _score_roles(candidates: list[str], allowed: Sequence[str], score: tuple[str, ...] | None,
                 human: tuple[str, ...] | None, wide: bool, columns: Sequence[str], source: str,
                 inferred: set[str]) -> tuple[list[str], list[str]]:
    """(scores, human scores): the lists given (checked), else every candidate and the human ones by name."""
    for role, given in (("score", score), ("human", human)):
        for col in given or []:
            if col not in allowed:
                what = "a field of the wide columns FIELD:SYSTEM" if wide else "a column"
                raise DataError(f"{source}: --{role} {col!r} is not {what} (columns: {', '.join(columns)})")
    if score is not None:
        scores = list(dict.fromkeys(score + (human or ())))
        left = [c for c in candidates if c not in scores]
        if left:
            arg = shlex.quote(left[0])  # as the shell takes it: "METEOR (%)" needs quotes
            raise DataError(f"{source}: column {left[0]!r} has no role (the scores were listed with --score); "
                            f"add it with --score {arg} or --human {arg}, or leave it out with --ignore {arg}")
    else:
        scores = candidates
        inferred.add("score")
    if human is not None:
        return scores, list(human)
    inferred.add("human")
    return scores, [s for s in scores if re.split(r"[._\s]", _norm(s))[0] in _HUMAN_WORDS]


@dataclass(frozen=True)
class ColumnRoles:
    """The importer's seven role keywords as the user gave them (None: inferred from the column names).

    One record for :func:`infer_columns`, :func:`import_table`, :func:`metaeval.datasets.from_frame` and the
    ``metaeval import`` options (``--doc``, ``--system`` ... ``--ignore``); the list roles hold tuples.

    Examples
    --------
    >>> roles = ColumnRoles.of(doc="id", score="rouge-2", ignore=["notes", "date"])
    >>> roles.doc, roles.system, roles.score, roles.ignore
    ('id', None, ('rouge-2',), ('notes', 'date'))
    """

    doc: str | None = None
    system: str | None = None
    summary: str | None = None
    reference: tuple[str, ...] | None = None
    score: tuple[str, ...] | None = None
    human: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None

    #: the keywords, in the order the options are listed
    NAMES = ("doc", "system", "summary", "reference", "score", "human", "ignore")

    @classmethod
    def of(cls, *, doc: str | None = None, system: str | None = None, summary: str | None = None,
           reference: str | Iterable[str] | None = None, score: str | Iterable[str] | None = None,
           human: str | Iterable[str] | None = None, ignore: str | Iterable[str] | None = None) -> ColumnRoles:
        """The record from keywords as the public functions take them (a list role may be one string)."""
        return cls(doc, system, summary, *map(_as_tuple, (reference, score, human, ignore)))

    def check(self, columns: Sequence[str], source: str) -> None:
        """Every column named for the document, system, summary, references and ignored ones exists (a wide
        table's summary is a field, and scores are checked with their role)."""
        known = set(columns)
        named = [("doc", self.doc), ("system", self.system), ("summary", self.summary)]
        named += [(role, c) for role in ("reference", "ignore") for c in getattr(self, role) or ()]
        for role, col in named:
            if col is not None and col not in known and not (role == "summary" and self.system is None):
                raise DataError(f"{source}: --{role} {col!r} is not a column (columns: {', '.join(columns)})")


class _Picker:
    """Takes columns for roles, each column once, recording which roles were inferred."""

    def __init__(self, columns: Sequence[str], taken: Iterable[str]):
        self.columns = list(columns)
        self.taken = set(taken)
        self.inferred: set[str] = set()

    def pick(self, role: str, given: str | None) -> str | None:
        """The column given for ``role``, else the first free one whose normalized name is one of the role's
        names (never a wide column ``FIELD:SYSTEM``)."""
        if given is not None:
            self.taken.add(given)
            return given
        found = next((c for name in ROLE_NAMES[role] for c in self.free() if _norm(c) == name
                      and WIDE_SEPARATOR not in c), None)
        if found is not None:
            self.taken.add(found)
            self.inferred.add(role)
        return found

    def references(self, given: tuple[str, ...] | None) -> list[str]:
        """The reference columns given, else every free column named like one (``reference``, ``ref_2``)."""
        if given is not None:
            self.taken.update(given)
            return list(given)
        found = [c for c in self.columns if c not in self.taken and WIDE_SEPARATOR not in c
                 and (_norm(c) in ROLE_NAMES["reference"] or _REFERENCE_COLUMN.match(_norm(c)))]
        self.taken.update(found)
        if found:
            self.inferred.add("reference")
        return found

    def free(self) -> list[str]:
        return [c for c in self.columns if c not in self.taken]


def _wide_summary_and_fields(picker: _Picker, roles: ColumnRoles, wide_cols: list[str],
                             source: str) -> tuple[str | None, list[str], list[str]]:
    """(summary field, score field candidates, systems) of a wide table; any other column is an error."""
    field_names, systems = _wide_fields(wide_cols, source)
    picker.taken.update(wide_cols)
    given = set(roles.score or ()) | set(roles.human or ())
    rest = [c for c in picker.free() if c not in given]
    if rest:
        raise DataError(f"{source}: column {rest[0]!r} is neither the document, a reference nor "
                        f"FIELD{WIDE_SEPARATOR}SYSTEM (wide format: one column per system and field, e.g. "
                        f"summary{WIDE_SEPARATOR}{systems[0]}); rename it, or pass --ignore "
                        f"{shlex.quote(rest[0])}")
    summary_col = roles.summary if roles.summary is not None else next(
        (f for name in ROLE_NAMES["summary"] for f in field_names if _norm(f) == name), None)
    if roles.summary is None and summary_col is not None:
        picker.inferred.add("summary")
    return summary_col, [f for f in field_names if f != summary_col], systems


def infer_columns(
    frame: pd.DataFrame,
    *,
    doc: str | None = None,
    system: str | None = None,
    summary: str | None = None,
    reference: str | Iterable[str] | None = None,
    score: str | Iterable[str] | None = None,
    human: str | Iterable[str] | None = None,
    ignore: str | Iterable[str] | None = None,
    source: str = "table",
    roles: ColumnRoles | None = None,
) -> ColumnMap:
    """The role of every column: the options given, the rest inferred from common names.

    The seven role keywords may come as one :class:`ColumnRoles` (``roles=``) instead. The steps: the header
    names each column once; the given columns exist; ignored columns; the document column; the layout (a
    system column, else wide ``FIELD:SYSTEM`` columns); the references; the summary (a column, or a wide field);
    the scores and which of them are human.

    Examples
    --------
    >>> df = pd.DataFrame({"doc": ["d1"], "model": ["A"], "summary": ["x"], "reference": ["y"],
    ...                    "rouge-2.f1": [0.2], "relevance": [4.0]})
    >>> m = infer_columns(df)
    >>> m.doc, m.system, m.summary, m.references, m.scores, m.human
    ('doc', 'model', 'summary', ('reference',), ('rouge-2.f1', 'relevance'), ('relevance',))
    """
    if roles is None:
        roles = ColumnRoles.of(doc=doc, system=system, summary=summary, reference=reference, score=score,
                               human=human, ignore=ignore)
    elif any(v is not None for v in (doc, system, summary, reference, score, human, ignore)):
        raise TypeError("infer_columns: give the roles either as keywords or as roles=ColumnRoles(...), not both")
    frame = _flat_columns(frame)
    columns = list(frame.columns)
    dupes = sorted({c for c in columns if columns.count(c) > 1})
    if dupes:
        raise DataError(f"{source}: column {dupes[0]!r} appears twice in the header; rename one")
    roles.check(columns, source)
    # a row index written by DataFrame.to_csv without index=False ("Unnamed: 0") is ignored, never a score
    ignored = list(roles.ignore or ())
    ignored += [c for c in columns if (c.startswith("Unnamed: ") or c == "") and c not in ignored]
    picker = _Picker(columns, ignored)
    doc_col = picker.pick("doc", roles.doc)
    if doc_col is None:
        raise DataError(f"{source}: no document column (one of {', '.join(ROLE_NAMES['doc'][:6])}, ...); name "
                        f"it with --doc COLUMN (doc=...); columns: {', '.join(columns)}")
    # a system column makes the table long, else its FIELD:SYSTEM columns make it wide
    system_col = picker.pick("system", roles.system)
    named = set(roles.reference or ()) | set(roles.score or ()) | set(roles.human or ())
    wide_cols = [] if system_col is not None else [
        c for c in picker.free() if WIDE_SEPARATOR in c and c not in named]
    if system_col is None and not wide_cols:
        raise DataError(f"{source}: no system column (one of {', '.join(ROLE_NAMES['system'][:6])}, ...) and no "
                        f"wide-format columns FIELD{WIDE_SEPARATOR}SYSTEM; name the system column with --system "
                        f"COLUMN (system=...); columns: {', '.join(columns)}")
    wide = bool(wide_cols)
    references = picker.references(roles.reference)
    systems: list[str] = []
    if wide:
        summary_col, candidates, systems = _wide_summary_and_fields(picker, roles, wide_cols, source)
        allowed = candidates + ([summary_col] if summary_col else [])
    else:
        summary_col = picker.pick("summary", roles.summary)
        candidates, allowed = picker.free(), columns
    scores, human_cols = _score_roles(candidates, allowed, roles.score, roles.human, wide, columns, source,
                                      picker.inferred)
    return ColumnMap(doc=doc_col, system=system_col, summary=summary_col, references=tuple(references),
                     scores=tuple(scores), human=tuple(human_cols), ignored=tuple(ignored), wide=wide,
                     systems=tuple(systems), inferred=frozenset(picker.inferred))


# ----------------------------------------------------------------------------------------------------
# Cells


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (
        isinstance(value, str) and not value.strip())


def _score_cell(value: Any, where: str, column: str) -> float | list[float] | None:
    """A number, a list of numbers (annotators) or None; anything else is an error naming the fix."""
    def bad() -> DataError:
        return DataError(f"{where}, column {column!r}: {value!r} is not a number; give a number, a list of "
                         "numbers (one per annotator, e.g. [4, 5, 3]) or an empty cell (missing); if the column "
                         f"is not a score, name its role (--summary/--reference {shlex.quote(column)}) or pass "
                         f"--ignore {shlex.quote(column)}")

    if _missing(value):
        return None
    if isinstance(value, (bool, np.bool_)):
        raise bad()
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
        if math.isinf(number):
            raise DataError(f"{where}, column {column!r}: {value!r}; scores must be finite (an empty cell is missing)")
        return number
    if isinstance(value, (list, tuple, np.ndarray)):
        items = [_score_cell(v, where, column) for v in value]
        if not items or any(not isinstance(v, float) for v in items):
            raise bad()
        return [v for v in items if isinstance(v, float)]
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError:
                raise bad() from None
            return _score_cell(parsed, where, column) if isinstance(parsed, list) else None
        try:
            return _score_cell(float(text), where, column)
        except ValueError:
            raise bad() from None
    raise bad()


def _text_cell(value: Any, where: str, column: str) -> str | None:
    if _missing(value):
        return None
    if isinstance(value, str):
        return value
    raise DataError(f"{where}, column {column!r}: expected text, got {type(value).__name__} {value!r}")


def _reference_cells(row: Mapping[str, Any], columns: Sequence[str], where: str) -> list[str] | None:
    refs: list[str] = []
    for c in columns:
        value = row[c]
        if isinstance(value, str) and value.strip().startswith("[") and len(columns) == 1:
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                pass  # a reference that starts with "[" is text
        if isinstance(value, (list, tuple, np.ndarray)):
            refs.extend(t for t in (_text_cell(v, where, c) for v in value) if t is not None)
        else:
            text = _text_cell(value, where, c)
            if text is not None:
                refs.append(text)
    return refs or None


# ----------------------------------------------------------------------------------------------------
# Records


def _ids(value: Any, where: str, column: str, option: str) -> str:
    if _missing(value):
        raise DataError(f"{where}, column {column!r}: empty id; every row needs one (or name another column with "
                        f"{option})")
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)  # parquet/DataFrame ids 3.0 -> "3", as JSON integers are read
    return str(value).strip()


def frame_records(frame: pd.DataFrame, columns: ColumnMap, source: str, *,
                  header_lines: int = 1) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(where, record)`` of the dataset contract for every cell of the table, and one input-level record
    with the references of each document. ``where`` names the row (and the file line for CSV/TSV, with
    ``header_lines`` lines before the first row).
    """
    frame = _flat_columns(frame)
    first_refs: dict[str, tuple[list[str] | None, str]] = {}
    records: list[tuple[str, dict[str, Any]]] = []
    for k, row in enumerate(frame.to_dict("records")):
        where = f"{source}:{k + 1 + header_lines} (row {k + 1})" if header_lines else f"{source}, row {k + 1}"
        instance = _ids(row[columns.doc], where, columns.doc, "--doc")
        if columns.references:
            refs = _reference_cells(row, columns.references, where)
            seen = first_refs.get(instance, (None, where))
            if refs is not None and seen[0] is not None and refs != seen[0]:
                raise DataError(f"{where}, column {', '.join(columns.references)}: the references of document "
                                f"{instance!r} differ from those at {seen[1]}; give each document one set of "
                                "references")
            if seen[0] is None:
                first_refs[instance] = (refs, where)
        cells = ([(columns.system and _ids(row[columns.system], where, columns.system, "--system"), "")]
                 if not columns.wide else [(s, f"{WIDE_SEPARATOR}{s}") for s in columns.systems])
        for system, suffix in cells:
            record: dict[str, Any] = {"instance_id": instance, "summarizer_id": system}
            if columns.summary is not None and (columns.summary + suffix) in row:
                text = _text_cell(row[columns.summary + suffix], where, columns.summary + suffix)
                if text is not None:
                    record["summary"] = text
            metrics: dict[str, Any] = {}
            for name in columns.scores:
                col = name + suffix
                if col in row:
                    value = _score_cell(row[col], where, col)
                    if value is not None:
                        metrics[name] = value
            if metrics:
                record["metrics"] = metrics
            if columns.wide and len(record) == 2:
                continue  # this system has no cell in this row
            records.append((where, record))
    _check_repeated_cells(records)
    for instance, (refs, where) in first_refs.items():
        if refs is not None:
            yield where, {"instance_id": instance, "references": refs}
    yield from records


def _check_repeated_cells(records: list[tuple[str, dict[str, Any]]]) -> None:
    """Refuse two rows of one (document, system) that give one score different values, naming both rows of
    the table (the dataset reader would name lines of the generated ``records.jsonl`` only later)."""
    first: dict[tuple[str, Any, str], tuple[Any, str]] = {}
    for where, record in records:
        for score, value in record.get("metrics", {}).items():
            key = (record["instance_id"], record["summarizer_id"], score)
            seen = first.setdefault(key, (value, where))
            if seen[0] != value:
                raise DataError(
                    f"{where}, column {score!r}: document {key[0]!r}, system {key[1]!r} has {value!r} here and "
                    f"{seen[0]!r} at {seen[1]}; give each (document, system) one row, or one value per score")


def dataset_meta(columns: ColumnMap, source: str) -> dict[str, Any]:
    """The ``dataset.yml`` of an imported table: human scores marked, the first one the default."""
    meta: dict[str, Any] = {"description": f"imported from {Path(source).name} by metaeval import"}
    if columns.human:
        meta["human_scores"] = list(columns.human)
        meta["default_human"] = columns.human[0]
    return meta


# ----------------------------------------------------------------------------------------------------
# metaeval import


@dataclass(frozen=True)
class ImportResult:
    """What :func:`import_table` wrote (or would write with ``dry_run``)."""

    dest: Path
    columns: ColumnMap
    n_records: int
    files: tuple[str, ...]
    #: rows of the table read, and how many of the records are input-level (a document's references, written
    #: once for every system of the document)
    n_rows: int = 0
    n_input_records: int = 0

    def describe(self) -> str:
        """E.g. ``1300 records from 1200 rows (100 of them input-level records holding each document's
        references)``: the count a user can check against the table."""
        text = f"{self.n_records} records from {self.n_rows} rows"
        if self.n_input_records:
            text += (f" ({self.n_input_records} of them input-level records holding each document's "
                     "references)")
        return text


_TRUE, _FALSE = ("1", "1.0", "true", "yes", "y"), ("0", "0.0", "false", "no", "n")


def _blank_unlabelled(frame: pd.DataFrame, labelled: str, human: Sequence[str], name: str,
                      header: int) -> pd.DataFrame:
    """The frame with the human scores of the rows ``labelled`` marks as unlabelled set missing."""
    if labelled not in frame.columns:
        raise DataError(f"{name}: --labelled column {labelled!r} is not in the table (its columns: "
                        f"{', '.join(map(str, frame.columns))})")
    text = frame[labelled].map(lambda v: str(v).strip().lower())
    bad = ~text.isin(_TRUE + _FALSE)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(f"{name}, row {row + 1 + header}: column {labelled!r} holds {frame[labelled].iloc[row]!r}; "
                        "it must say whether humans labelled the row: 1/0, true/false or yes/no")
    if not human:
        raise DataError(f"{name}: --labelled {labelled!r} needs a human score to blank; name it with --human")
    out = frame.copy()
    unlabelled = text.isin(_FALSE).to_numpy()
    cols = [c for c in out.columns if c in human or str(c).split(WIDE_SEPARATOR)[0] in human]
    out[cols] = out[cols].astype(object)
    out.loc[unlabelled, cols] = np.nan
    return out


def import_table(
    source: str | os.PathLike[str] | pd.DataFrame,
    dest: str | os.PathLike[str],
    *,
    doc: str | None = None,
    system: str | None = None,
    summary: str | None = None,
    reference: str | Iterable[str] | None = None,
    score: str | Iterable[str] | None = None,
    human: str | Iterable[str] | None = None,
    ignore: str | Iterable[str] | None = None,
    labelled: str | None = None,
    dry_run: bool = False,
    show: Callable[[str], object] | None = None,
) -> ImportResult:
    """Convert a table into a dataset folder: ``records.jsonl`` and ``dataset.yml`` (human scores marked).

    The column mapping is passed to ``show`` before anything is written; every record is checked by the
    dataset reader before the folder appears. The folder is written by the rules every metaeval writer follows
    (:mod:`metaeval._outputs`): staged beside ``dest`` and renamed into place; an existing ``dest`` is replaced
    only if it is empty or an earlier import wrote it and nobody changed its files since (its manifest
    ``.metaeval-run.import.json``), never a folder of the user nor a protected one (the compendium root, its
    ``data/``, ``lib/``, ``results/``, the home folder, ``/``).

    ``labelled`` names a column saying which rows humans labelled (1/0, true/false, yes/no): the human scores of
    the other rows are left out (missing), whatever their cells hold, and the column itself is not a score. A
    judge scored on every row is one more score column; ``metaeval card METRIC --dataset DEST --judge JUDGE``
    then gives the card with prediction-powered intervals.

    Raises
    ------
    DataError
        A row or column the dataset reader rejects, or a ``dest`` this import may not replace (before anything
        is written).
    """
    if isinstance(source, pd.DataFrame):
        frame, name, header = source, "DataFrame", 0
    else:
        frame, name = read_table(source), str(source)
        header = 0 if Path(source).suffix.lower() in (".parquet", ".pq") else 1
    if labelled is not None:
        ignore = [*(_as_tuple(ignore) or ()), labelled]
    roles = ColumnRoles.of(doc=doc, system=system, summary=summary, reference=reference, score=score, human=human,
                           ignore=ignore)
    columns = infer_columns(frame, roles=roles, source=name)
    if labelled is not None:
        frame = _blank_unlabelled(frame, labelled, columns.human, name, header)
    if show is not None:
        show(columns.describe())
        if not columns.human and columns.scores:
            # every later analysis needs a human score: say so now, not at the first notebook's error
            cols = " ".join(shlex.quote(c) for c in columns.scores[:3])
            show(f"note: no column is a human score by its name ({', '.join(_HUMAN_WORDS[:6])}, ...), so every "
                 f"score above was taken as a metric; name the human ones with --human (e.g. --human {cols})")
    records = list(frame_records(frame, columns, name, header_lines=header))
    for where, record in records:  # the reader's own checks, before anything is written
        parse_record(record, where)
    dest = Path(dest)
    files = ("records.jsonl", "dataset.yml")
    result = ImportResult(dest, columns, len(records), files, n_rows=len(frame),
                          n_input_records=sum("summarizer_id" not in record for _, record in records))
    if dry_run:
        return result
    try:
        target = _outputs.check_target(dest, IMPORT_RUN, given=dest, paper=IMPORT_RUN)
    except _outputs.OutputDirError as exc:
        if not dest.exists():  # a protected place (the compendium's data/, results/ ...), not an existing folder
            raise DataError(f"{dest}: metaeval import may not write there ({exc})") from None
        raise DataError(f"{dest}: exists and was not written by metaeval import (or was changed since); choose a "
                        f"new folder, or remove it yourself ({exc})") from None
    blocking = next((p for p in reversed(target.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise DataError(f"{dest}: cannot be created, {blocking} is a file, not a folder; choose a dest outside it")
    write_dataset(target, IMPORT_RUN, [record for _, record in records], dataset_meta(columns, name), {"source": name})
    return result
