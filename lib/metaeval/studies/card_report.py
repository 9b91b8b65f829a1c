r"""The report card as one printable HTML page, rendered from the files a card run writes.

:func:`render_report` reads a card folder (``summary.md``, ``correlations.csv``, ``tests.csv``,
``normality.csv``, ``planner.csv``, ``provenance.json`` and the figures ``correlations.png``, ``tests.png``)
and returns a self-contained HTML document (figures embedded, no script, no code, no parameters): a title,
the generated summary, the confidence-interval figure and table, the tests heatmap and table, the normality
check, the planner's advice, and the provenance in a footer. Tables are sized to fit an A4 page
(``table-layout: fixed``, wrapped cells); :func:`write_report` saves it as ``report.html``.

>>> import json, tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "summary.md").write_text("**M** on **demo**.\n- System level: r = 0.8.\n")
>>> _ = (folder / "provenance.json").write_text(json.dumps({"metric": "m", "dataset": "demo", "seed": 0}))
>>> page = render_report(folder)
>>> "<title>Report card: m on demo</title>" in page, "<li>System level: r = 0.8.</li>" in page, "<script" in page
(True, True, False)
"""

from __future__ import annotations

import base64
import html
import json
import os
from pathlib import Path

import pandas as pd

__all__ = ["render_report", "write_report", "REPORT_NAME"]

REPORT_NAME = "report.html"

_CSS = """
@page { size: A4; margin: 8mm; }
* { box-sizing: border-box; }
body { font: 9pt/1.3 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; margin: 0 auto;
       max-width: 190mm; padding: 4mm; }
h1 { font-size: 15pt; margin: 0 0 1mm; } h2 { font-size: 11pt; margin: 3mm 0 1mm; border-bottom: 1px solid #ccc; }
.sub { color: #555; margin: 0 0 2mm; }
.summary ul { margin: 1mm 0; padding-left: 5mm; } .summary li { margin: 0.5mm 0; }
.row { display: flex; gap: 3mm; align-items: flex-start; } .row > * { flex: 1 1 0; min-width: 0; }
.row > .narrow { flex: 0.7 1 0; } .row > .wide { flex: 1.3 1 0; }
img.strip { max-height: 58mm; object-fit: contain; }
figure { margin: 0; } figure img { width: 100%; height: auto; display: block; }
figcaption { font-size: 8pt; color: #555; }
table { width: 100%; border-collapse: collapse; table-layout: fixed; font-size: 8pt; margin: 1mm 0; }
th, td { border-bottom: 1px solid #e2e2e2; padding: 0.6mm 1mm; text-align: left; vertical-align: top;
         overflow-wrap: anywhere; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
footer { margin-top: 3mm; border-top: 1px solid #ccc; padding-top: 1mm; font-size: 7pt; color: #555;
         overflow-wrap: anywhere; }
@media print { body { padding: 0; font-size: 7pt; line-height: 1.2; } h1 { font-size: 12pt; }
               h2 { font-size: 9pt; margin-top: 1.5mm; break-after: avoid; } table { font-size: 6.5pt; }
               table, figure { break-inside: avoid; } .summary li { margin: 0; }
               img.strip { max-height: 34mm; } .narrow img { max-height: 30mm; object-fit: contain; } }
"""


def _image(path: Path, alt: str, caption: str, css: str = "") -> str:
    if not path.is_file():
        return ""
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<figure class="{css}"><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def _table(frame: pd.DataFrame, numeric: tuple[str, ...] = (), widths: tuple[int, ...] = ()) -> str:
    cols = "<colgroup>" + "".join(f'<col style="width:{w}%">' for w in widths) + "</colgroup>" if widths else ""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for _, row in frame.iterrows():
        cells = "".join(
            f'<td class="num">{html.escape(str(v))}</td>' if c in numeric else f"<td>{html.escape(str(v))}</td>"
            for c, v in row.items())
        rows.append(f"<tr>{cells}</tr>")
    return f"<table>{cols}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _p(value) -> str:
    if pd.isna(value):
        return "-"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _read(folder: Path, name: str) -> pd.DataFrame | None:
    path = folder / name
    return pd.read_csv(path) if path.is_file() else None


def render_report(folder: str | os.PathLike) -> str:
    """The report card of ``folder`` (a card run's output folder) as one self-contained HTML page.

    Raises
    ------
    FileNotFoundError
        When ``folder`` holds no ``summary.md`` or ``provenance.json`` (not a card folder): run
        ``metaeval card`` or notebook ``61_report_card`` first.
    """
    from markdown_it import MarkdownIt  # a dependency of jupytext, which the runner needs

    folder = Path(folder)
    missing = [n for n in ("summary.md", "provenance.json") if not (folder / n).is_file()]
    if missing:
        raise FileNotFoundError(f"folder={str(folder)!r} holds no {', '.join(missing)}: it is not a report card's "
                                "output folder (run `metaeval card` or notebook 61_report_card first)")
    provenance = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
    summary = (folder / "summary.md").read_text(encoding="utf-8")
    first, _, rest = summary.partition("\n")
    md = MarkdownIt("commonmark", {"html": False})
    metric = provenance.get("metric", "metric")
    dataset = provenance.get("dataset_name") or provenance.get("dataset", "")
    parts = [f'<div class="sub">{md.renderInline(first)}</div>', f'<div class="summary">{md.render(rest)}</div>']

    correlations = _read(folder, "correlations.csv")
    if correlations is not None:
        new_rows = correlations[correlations.role == "new"] if "role" in correlations else correlations.iloc[:0]
        if len(new_rows):
            metric = str(new_rows.display_name.iloc[0])
        cells = correlations.assign(ci=[f"{r:.3f} [{lo:.3f}, {hi:.3f}]" for r, lo, hi in
                                        zip(correlations.r, correlations.low, correlations.high)])
        wide = cells.pivot_table(index="display_name", columns="level", values="ci", aggfunc="first", sort=False)
        wide = wide[[c for c in ("system", "summary", "global") if c in wide.columns]].reset_index()
        wide.columns = ["metric", *[f"{c} level: r [95% CI]" for c in wide.columns[1:]]]
        parts.append("<h2>Correlation with the human scores (Boot-Both 95% CIs)</h2>"
                     + _image(folder / "correlations.png", "correlations with confidence intervals",
                              "Each metric's correlation with the human scores at each level, with its 95% CI.",
                              css="strip")
                     + _table(wide, numeric=tuple(wide.columns[1:]), widths=(22, 26, 26, 26)))
    tests = _read(folder, "tests.csv")
    if tests is not None:
        shown = pd.DataFrame({
            "level": tests.level, "baseline": tests.display_name,
            "r difference": [f"{d:+.3f}" for d in tests.difference],
            # the card decides with one two-sided test per baseline (studies/card.py, tests_table)
            # a card written before the two-sided test existed has no such column: shown as "-"
            "p, two-sided": [_p(p) for p in tests.get("p_two_sided_bonferroni", pd.Series(float("nan"),
                                                                                         index=tests.index))],
            "p, new better": [_p(p) for p in tests.p_new_better_bonferroni],
            "verdict": tests.verdict})
        parts.append('<h2>Tests against the baselines (Perm-Both, Bonferroni-adjusted p)</h2><div class="row">'
                     + _image(folder / "tests.png", "tests heatmap",
                              "Two-sided Bonferroni p of 'the two correlations are equal', by baseline and "
                              "level.", css="narrow")
                     + '<div class="wide">' + _table(shown, numeric=("r difference", "p, two-sided",
                                                                     "p, new better"),
                                                     widths=(15, 23, 14, 14, 14, 20))
                     + "</div></div>")
    lower = []
    normality = _read(folder, "normality.csv")
    if normality is not None:
        shown = pd.DataFrame({"score": normality.score,
                              "system: Shapiro-Wilk p": [_p(p) for p in normality.system_pvalue],
                              "summary: inputs rejected": [f"{v:.0f}% of {n}" for v, n in
                                                           zip(normality.summary_percent_rejected,
                                                               normality.inputs_tested)]})
        lower.append("<div><h2>Normality (Shapiro-Wilk at 0.05)</h2>"
                     + _table(shown, numeric=tuple(shown.columns[1:]), widths=(40, 28, 32)) + "</div>")
    planner = _read(folder, "planner.csv")
    if planner is not None and len(planner):
        shown = pd.DataFrame({
            "level": planner.level, "baseline": planner.baseline,
            "r difference": [f"{d:.3f}" for d in planner.difference],
            "documents for 80% power": [f"not reached up to {int(m)}" if not bool(r) else f"{n:.0f}"
                                        for n, r, m in zip(planner.documents_needed, planner.reached,
                                                           planner.largest_size_tried)],
            "power by documents": planner.power_curve.astype(str)})
        lower.append("<div><h2>Planner: a study large enough to decide</h2>"
                     + _table(shown, numeric=("r difference",), widths=(15, 21, 13, 21, 30)) + "</div>")
    elif planner is not None:
        lower.append("<div><h2>Planner</h2><p>Every comparison is significant: no larger study is needed.</p></div>")
    if lower:
        parts.append('<div class="row">' + "".join(lower) + "</div>")

    keep = ("dataset", "shape", "human", "metric", "baselines", "signature", "seeding", "metaeval", "numpy")
    shown_values = {k: v if isinstance(v, str) else json.dumps(v) for k, v in provenance.items() if k in keep}
    footer = "; ".join(f"<b>{html.escape(k)}</b>: {html.escape(v)}" for k, v in shown_values.items())
    title = f"Report card: {metric} on {dataset}"
    parts.insert(0, f"<h1>{html.escape(title)}</h1>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{html.escape(title)}</title>"
            f"<link rel=\"icon\" href=\"data:,\"><style>{_CSS}</style></head><body>{''.join(parts)}"
            f"<footer>Provenance: {footer}</footer></body></html>\n")


def write_report(folder: str | os.PathLike) -> Path:
    """Render :func:`render_report` into ``<folder>/report.html`` (atomically); returns its path."""
    from metaeval._io import atomic_write

    path = Path(folder) / REPORT_NAME
    text = render_report(folder)
    atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    return path
