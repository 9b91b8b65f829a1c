"""The reproduction report: the outputs of runs against the files git has committed, at a stated precision.

A result reproduces when it says the same thing, not when its bytes are equal: a kernel that sums in another
order, or another CPU, moves a float in its last bits, and that is not a difference a reader of the results can
see. What counts as the same, by kind of file (``results/README.md`` repeats it):

* **numbers** (CSV cells, JSON values, numbers in generated text, in executed notebooks' outputs and in SVG
  coordinates): equal within ``REL_TOL`` (1e-9) of the larger, or ``ABS_TOL`` (1e-12), or, printed to the same
  digit, one unit in that digit (a value on a rounding boundary prints either way after a last-bit change:
  ``0.1235`` and ``0.1234`` at ``%.4f``). Integers (no decimal point, no exponent) exactly.
* **text** around the numbers (words, CSV headers, the order of rows and cells): exactly.
* **figures**: PNGs decoded (files, notebook outputs, images embedded in HTML) and compared pixel by pixel: the
  same size, and at most ``PIXEL_SHARE`` (0.005 %) of the pixels differing by more than ``PIXEL_TOL`` (8 of
  255) in a channel; SVGs as text after matplotlib's ids (hashes of the content) are renamed in order.
* **executed notebooks**: cell sources exactly, outputs as text and figures above, execution metadata ignored.
* **a run's manifest**: as JSON without the sha256 of each file (the files themselves are compared).

>>> same_text("r = 0.123456789012 (p = 0.04)", "r = 0.123456789013 (p = 0.04)")
True
>>> same_text("p = 0.1235", "p = 0.1234"), same_text("p = 0.1235", "p = 0.1233"), same_text("16 systems", "17 systems")
(True, False, False)
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import metaeval._resources as _resources

__all__ = ["REL_TOL", "ABS_TOL", "PIXEL_TOL", "PIXEL_SHARE", "PRECISION", "same_number", "same_text", "compare",
           "reproduction_report", "Reproduction"]

REL_TOL = 1e-9
ABS_TOL = 1e-12
PIXEL_TOL = 8
PIXEL_SHARE = 5e-5
#: The rule in one line, as the report prints it.
PRECISION = (f"numbers within {REL_TOL:g} relative, {ABS_TOL:g} absolute or their last printed digit, text exactly, "
             "figures by pixels")

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_PIECES = re.compile(f"({_NUMBER.pattern})")
_PNG_URI = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=\s]+)")
_SVG_ID = re.compile(r'\bid="([^"]+)"')


def _unit(token: str) -> float:
    """One unit in the last digit printed (0 for an integer, which compares exactly)."""
    if not any(c in token for c in ".eE"):
        return 0.0
    try:
        return float(Decimal(10) ** Decimal(token).as_tuple().exponent)  # type: ignore[operator]
    except (InvalidOperation, TypeError):
        return 0.0


def same_number(a: str, b: str) -> bool:
    """Two printed numbers are the same result (the rule of this module). The last-digit allowance holds for two
    numbers printed to the same digit (one format, a value on its rounding boundary), not for ``0.31`` against
    ``0.30000000000000004``."""
    if a == b:
        return True
    x, y = float(a), float(b)
    if not any(c in a + b for c in ".eE"):
        return x == y
    unit = _unit(a) if _unit(a) == _unit(b) else 0.0
    # the unit with a margin for the binary representation of the decimal difference (0.1235 - 0.1234 > 1e-4)
    return abs(x - y) <= max(REL_TOL * max(abs(x), abs(y)), ABS_TOL, unit * (1 + 1e-6))


def _split(text: str) -> list[str]:
    """Text and numbers alternating: ``["r = ", "0.5", " (p = ", "0.04", ")"]``."""
    return _PIECES.split(text)


def same_text(a: str, b: str) -> bool:
    """The same words in the same order, and the same numbers within the tolerance."""
    if a == b:
        return True
    pa, pb = _split(a), _split(b)
    return len(pa) == len(pb) and all(x == y if i % 2 == 0 else same_number(x, y)
                                      for i, (x, y) in enumerate(zip(pa, pb)))


def _pixels(png: bytes):
    import numpy as np
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGBA"), dtype=np.int16)


def _compare_png(a: bytes, b: bytes) -> str | None:
    if a == b:
        return None
    try:
        x, y = _pixels(a), _pixels(b)
    except Exception as exc:  # noqa: BLE001 - a file that is not a PNG is reported, not a crash of the report
        return f"figure: not a readable PNG ({type(exc).__name__})"
    if x.shape != y.shape:
        return f"figure: {x.shape[1]} x {x.shape[0]} -> {y.shape[1]} x {y.shape[0]} pixels"
    off = int((abs(x - y).max(axis=-1) > PIXEL_TOL).sum())
    total = x.shape[0] * x.shape[1]
    if off > PIXEL_SHARE * total:
        return f"figure: {off} of {total} pixels differ by more than {PIXEL_TOL}/255"
    return None


def _images_apart(text: str) -> tuple[str, list[bytes]]:
    """Text with each embedded PNG (``data:image/png;base64,...``) replaced by a mark, and the PNGs."""
    images: list[bytes] = []

    def take(match: re.Match[str]) -> str:
        images.append(base64.b64decode(match.group(1)))
        return "data:image/png;base64,<image>"

    return _PNG_URI.sub(take, text), images


def _svg_normalised(text: str) -> str:
    """matplotlib names SVG elements by a hash of their content: rename each id in the order it first appears."""
    names = {old: f"id{i}" for i, old in enumerate(dict.fromkeys(_SVG_ID.findall(text)))}
    if not names:
        return text
    pattern = re.compile("|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)))
    return pattern.sub(lambda m: names[m.group(0)], text)


def _compare_lines(a: str, b: str, what: str = "text") -> str | None:
    a, images_a = _images_apart(a)
    b, images_b = _images_apart(b)
    la, lb = a.splitlines(), b.splitlines()
    differing = [i for i in range(max(len(la), len(lb)))
                 if i >= len(la) or i >= len(lb) or not same_text(la[i], lb[i])]
    if differing:
        i = differing[0]
        shown = f": {la[i][:60]!r} -> {lb[i][:60]!r}" if i < len(la) and i < len(lb) else ""
        return (f"{what}: {len(differing)} of {max(len(la), len(lb))} lines differ, first line {i + 1}{shown}"
                + (f" ({len(la)} -> {len(lb)} lines)" if len(la) != len(lb) else ""))
    if len(images_a) != len(images_b):
        return f"{what}: {len(images_a)} -> {len(images_b)} embedded images"
    for k, (x, y) in enumerate(zip(images_a, images_b)):
        problem = _compare_png(x, y)
        if problem:
            return f"{what}: embedded image {k + 1}: {problem}"
    return None


def _compare_csv(a: str, b: str) -> str | None:
    ra, rb = list(csv.reader(io.StringIO(a))), list(csv.reader(io.StringIO(b)))
    if len(ra) != len(rb):
        return f"table: {len(ra) - 1} -> {len(rb) - 1} rows"
    if ra and ra[0] != rb[0]:
        return f"table: the header differs: {','.join(ra[0])[:80]!r} -> {','.join(rb[0])[:80]!r}"
    header = ra[0] if ra else []
    cells, differing = 0, []
    for i, (row_a, row_b) in enumerate(zip(ra[1:], rb[1:]), start=1):
        if len(row_a) != len(row_b):
            return f"table: row {i} has {len(row_a)} -> {len(row_b)} cells"
        cells += len(row_a)
        differing += [(i, j) for j, (x, y) in enumerate(zip(row_a, row_b)) if not same_text(x, y)]
    if not differing:
        return None
    i, j = differing[0]
    column = header[j] if j < len(header) else str(j + 1)
    label = f" ({ra[i][0]})" if j and ra[i][0] else ""
    return (f"table: {len(differing)} of {cells} cells differ, first row {i}{label}, column {column!r}: "
            f"{ra[i][j]} -> {rb[i][j]}")


def _compare_json(a: Any, b: Any, where: str = "") -> str | None:
    """The first place two parsed JSON values differ (numbers parsed as :class:`~decimal.Decimal`, as printed)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return f"keys of {where or 'the top level'} differ: {sorted(set(a) ^ set(b))[:5]}"
        return next((d for k in a if (d := _compare_json(a[k], b[k], f"{where}.{k}" if where else k))), None)
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} -> {len(b)} items"
        return next((d for k, (x, y) in enumerate(zip(a, b)) if (d := _compare_json(x, y, f"{where}[{k}]"))), None)
    numeric = (int, Decimal)
    if isinstance(a, numeric) and isinstance(b, numeric) and not isinstance(a, bool) and not isinstance(b, bool):
        return None if same_number(str(a), str(b)) else f"{where}: {a} -> {b}"
    if isinstance(a, str) and isinstance(b, str):
        return None if same_text(a, b) else f"{where}: {a[:60]!r} -> {b[:60]!r}"
    return None if a == b else f"{where}: {a!r} -> {b!r}"


def _output_text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _compare_output(a: Mapping[str, Any], b: Mapping[str, Any]) -> str | None:
    if a.get("output_type") != b.get("output_type") or a.get("name") != b.get("name"):
        return "another kind of output"
    if "text" in a or "text" in b:
        return None if same_text(_output_text(a.get("text", "")), _output_text(b.get("text", ""))) else "printed text"
    da, db = a.get("data", {}), b.get("data", {})
    if set(da) != set(db):
        return f"formats {sorted(da)} -> {sorted(db)}"
    for mime in da:
        if mime == "image/png":
            problem = _compare_png(base64.b64decode(_output_text(da[mime])), base64.b64decode(_output_text(db[mime])))
            if problem:
                return problem
        elif not same_text(_output_text(da[mime]), _output_text(db[mime])):
            return f"{mime} output"
    return None


def _stream_text(cell: Mapping[str, Any]) -> list[str]:
    return ["".join(o.get("text", "")) for o in cell.get("outputs", []) if o.get("output_type") == "stream"]


def _compare_notebook(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    cells_old, cells_new = old.get("cells", []), new.get("cells", [])
    if len(cells_old) != len(cells_new):
        return f"executed notebook: {len(cells_old)} -> {len(cells_new)} cells"
    sources = [i for i, (a, b) in enumerate(zip(cells_old, cells_new)) if a.get("source") != b.get("source")]
    if sources:
        return f"executed notebook: source of cell(s) {', '.join(map(str, sources[:5]))} differs"
    problems = {}
    for i, (a, b) in enumerate(zip(cells_old, cells_new)):
        outs_a, outs_b = a.get("outputs", []), b.get("outputs", [])
        if len(outs_a) != len(outs_b):
            split = "".join(_stream_text(a)) == "".join(_stream_text(b))
            problems[i] = ("the same printed text, split into another number of stream outputs" if split
                           else f"{len(outs_a)} -> {len(outs_b)} outputs")
        else:
            problem = next((p for x, y in zip(outs_a, outs_b) if (p := _compare_output(x, y))), None)
            if problem:
                problems[i] = problem
    if not problems:
        return None
    first = next(iter(problems))
    return (f"executed notebook: outputs of cell(s) {', '.join(map(str, list(problems)[:5]))} differ "
            f"({problems[first]})")


def compare(name: str, committed: bytes, produced: bytes) -> str | None:
    """None when ``produced`` reproduces the ``committed`` file ``name`` at the stated precision, else the kind of
    difference in a few words.

    >>> compare("t.csv", b"a,b\\n1,0.25\\n", b"a,b\\n1,0.2500000000001\\n") is None
    True
    >>> compare("t.csv", b"a,b\\nx,0.25\\ny,3\\n", b"a,b\\nx,0.25\\ny,4\\n")
    "table: 1 of 4 cells differ, first row 2 (y), column 'b': 3 -> 4"
    >>> compare("f.png", b"\\x89PNG" * 2, b"\\x89PNG" * 3)
    'figure: not a readable PNG (UnidentifiedImageError)'
    """
    if committed == produced:
        return None
    suffix = Path(name).suffix.lower()
    if suffix == ".png":
        return _compare_png(committed, produced)
    try:
        a, b = committed.decode("utf-8"), produced.decode("utf-8")
    except UnicodeDecodeError:
        return f"binary ({suffix or 'no extension'}): bytes differ ({len(committed)} -> {len(produced)} bytes)"
    if suffix in (".ipynb", ".json"):
        try:
            old, new = json.loads(a, parse_float=Decimal), json.loads(b, parse_float=Decimal)
        except ValueError:
            old = new = None
        if isinstance(old, dict) and isinstance(new, dict):
            if suffix == ".ipynb":
                return _compare_notebook(old, new)
            if Path(name).name.startswith(".metaeval-run.") and isinstance(old.get("files"), dict) \
                    and isinstance(new.get("files"), dict):  # the files' own comparison decides, not their sha256
                old["files"], new["files"] = dict.fromkeys(old["files"]), dict.fromkeys(new["files"])
            problem = _compare_json(old, new)
            return None if problem is None else f"JSON: {problem}"
    if suffix == ".csv":
        return _compare_csv(a, b)
    if suffix == ".svg":
        return _compare_lines(_svg_normalised(a), _svg_normalised(b), "SVG figure")
    if a.splitlines() == b.splitlines():
        return "text: line endings or the final newline differ"
    return _compare_lines(a, b)


@dataclass(frozen=True)
class Reproduction:
    """How the outputs of the runs compare with the files git has committed (:func:`reproduction_report`).

    Attributes
    ----------
    runs : int
        Runs compared.
    identical : int
        Runs whose every committed file was reproduced at the stated precision (and that wrote no file git
        lacks).
    differences : tuple of (str, str)
        ``(file, kind of difference)`` for every file that differs, is missing or is new.
    within_precision : tuple of str
        Files whose bytes differ from the committed ones but that reproduce them at the stated precision (the
        manifests, whose sha256 then differ, not counted).
    note : str
        Why nothing could be compared (not a git checkout), else empty.
    """

    runs: int
    identical: int
    differences: tuple[tuple[str, str], ...]
    within_precision: tuple[str, ...] = ()
    note: str = ""

    def lines(self) -> list[str]:
        """The report as printed by ``run-all --report``."""
        if self.note:
            return [f"reproduction report: {self.note}"]
        if not self.runs:
            return ["reproduction report: no finished run to compare"]
        head = (f"reproduction report: {self.identical} of {self.runs} runs reproduced every committed file "
                f"({PRECISION})")
        if self.within_precision:
            head += f"; {len(self.within_precision)} file(s) not byte for byte but within that precision"
        if self.identical == self.runs:
            return [head]
        return [f"{head}; {len(self.differences)} file(s) differ:"] + [f"  {n}: {k}" for n, k in self.differences]


def _git(root: Path, *args: str) -> bytes | None:
    import subprocess

    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return None


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # noqa: S324 - git's object name


def reproduction_report(folders: Mapping[str, str | os.PathLike] | Sequence[tuple[str, str | os.PathLike]],
                        root: str | os.PathLike | None = None) -> Reproduction:
    """Compare the outputs of runs with the files committed in git (``HEAD``).

    ``folders``: ``(notebook, output folder)`` of each run. A run's files are those its manifest lists in the
    folder now or in the committed folder, and the manifest itself; each is compared with the committed file by
    :func:`compare`. A file git lacks is "new (not committed)", a committed file the run did not write "missing".
    """
    from metaeval.run.outputs import manifest_name, read_manifest

    root = Path(root) if root is not None else _resources.project_root()
    root = root.resolve()
    pairs = list(folders.items()) if isinstance(folders, Mapping) else list(folders)
    if _git(root, "rev-parse", "--verify", "-q", "HEAD") is None:
        return Reproduction(len(pairs), 0, (), note=f"{root} is not a git checkout with commits: nothing to compare")
    listing = _git(root, "ls-tree", "-r", "-z", "HEAD", "--", "results") or b""
    committed: dict[str, str] = {}
    for entry in listing.split(b"\0"):
        if entry:
            meta, _, path = entry.decode("utf-8", "replace").partition("\t")
            committed[path] = meta.split()[2]
    differences: list[tuple[str, str]] = []
    within: list[str] = []
    identical = 0
    for notebook, folder in pairs:
        folder = Path(folder).resolve()
        try:
            rel = folder.relative_to(root).as_posix()
        except ValueError:
            differences.append((str(folder), "outside the compendium: not compared"))
            continue
        names = set((read_manifest(folder, notebook) or {}).get("files", {}))
        blob = _git(root, "show", f"HEAD:{rel}/{manifest_name(notebook)}")
        if blob:
            try:
                names |= set(json.loads(blob).get("files", {}))
            except ValueError:
                pass
        names.add(manifest_name(notebook))
        same = True
        for name in sorted(names):
            path, key = folder / name, f"{rel}/{name}"
            produced = path.read_bytes() if path.is_file() else None
            if key not in committed:
                if produced is not None:
                    differences.append((key, "new (not committed)"))
                    same = False
                continue
            if produced is None:
                differences.append((key, "missing (committed, not written by this run)"))
                same = False
            elif _blob_id(produced) != committed[key]:
                problem = compare(name, _git(root, "show", f"HEAD:{key}") or b"", produced)
                if problem is None:
                    if name != manifest_name(notebook):  # its sha256 differ because a file's bytes do
                        within.append(key)
                else:
                    differences.append((key, problem))
                    same = False
        identical += same
    return Reproduction(len(pairs), identical, tuple(differences), tuple(within))
