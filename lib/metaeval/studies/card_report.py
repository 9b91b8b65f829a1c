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

from metaeval.studies._card_format import fmt_difference, planner_case

__all__ = ["render_report", "write_report", "REPORT_NAME"]

REPORT_NAME = "report.html"

_CSS = """
@page { size: A4; margin: 8mm; }
* { box-sizing: border-box; }
body { font: 9pt/1.3 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; margin: 0 auto;
       max-width: 190mm; padding: 4mm; }
h1 { font-size: 15pt; margin: 0 0 1mm; } h2 { font-size: 10.5pt; margin: 3mm 0 1mm; border-bottom: 1px solid #ccc; }
.sub { color: #555; margin: 0 0 1mm; }
.summary ul { margin: 1mm 0; padding-left: 4mm; } .summary li { margin: 0.5mm 0; }
.row { display: flex; gap: 4mm; align-items: flex-start; } .row > * { flex: 1 1 0; min-width: 0; }
.row > .narrow { flex: 0.75 1 0; } .row > .wide { flex: 1.25 1 0; }
figure { margin: 0; } figure img { width: 100%; height: auto; display: block; object-fit: contain; }
img.strip { max-height: 62mm; } figure.narrow img { max-height: 52mm; }
figcaption { font-size: 8pt; color: #555; }
table { width: 100%; border-collapse: collapse; table-layout: fixed; font-size: 8pt; margin: 1mm 0; }
th, td { border-bottom: 1px solid #e2e2e2; padding: 0.5mm 1mm; text-align: left; vertical-align: top;
         overflow-wrap: break-word; word-break: normal; hyphens: manual; }
th { background: #f3f3f3; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
footer { margin-top: 3mm; border-top: 1px solid #ccc; padding-top: 1mm; font-size: 7pt; color: #555;
         overflow-wrap: anywhere; }
@media screen and (min-width: 900px) { body { max-width: 1240px; font-size: 10pt; } table { font-size: 9pt; }
                                       figcaption { font-size: 9pt; } img.strip { max-height: 90mm; }
                                       figure.narrow img { max-height: none; } }
@media print { body { padding: 0; max-width: none; font-size: 7pt; line-height: 1.2; } h1 { font-size: 12pt; }
               h2 { font-size: 8.5pt; margin-top: 1.5mm; break-after: avoid; } table { font-size: 6.5pt; }
               table, figure { break-inside: avoid; } .summary li { margin: 0; } figcaption { font-size: 6.5pt; }
               img.strip { max-height: 44mm; } figure.narrow img { max-height: 38mm; }
               footer { font-size: 6pt; margin-top: 1.5mm; } }
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
    num = ' class="num"'
    rows = ["<tr>" + "".join(f"<td{num if c in numeric else ''}>{html.escape(str(v))}</td>" for c, v in row.items())
            + "</tr>" for _, row in frame.iterrows()]
    return f"<table>{cols}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _p(value) -> str:
    if pd.isna(value):
        return "-"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _provenance_value(key: str, value) -> str:
    if key == "shape" and isinstance(value, list) and len(value) == 2:
        return f"{value[0]} systems x {value[1]} inputs"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return value if isinstance(value, str) else json.dumps(value)


def _read(folder: Path, name: str) -> pd.DataFrame | None:
    path = folder / name
    return pd.read_csv(path) if path.is_file() else None


def _display_names(folder: Path) -> dict[str, str]:
    """Score -> display name, from the card's tables that carry both."""
    names: dict[str, str] = {}
    for table in (_read(folder, n) for n in ("correlations.csv", "tests.csv", "normality.csv")):
        if table is not None and "display_name" in table:
            key = "metric" if "metric" in table else "baseline" if "baseline" in table else "score"
            names.update(zip(table[key].astype(str), table.display_name.astype(str)))
    return names


def _correlation_section(folder: Path) -> tuple[str, str, str | None]:
    """(heading with the correlation figure, the CI table, the new metric's display name or None)."""
    correlations = _read(folder, "correlations.csv")
    if correlations is None:
        return "", "", None
    new_rows = correlations[correlations.role == "new"] if "role" in correlations else correlations.iloc[:0]
    metric = str(new_rows.display_name.iloc[0]) if len(new_rows) else None
    cells = correlations.assign(ci=[f"{r:.3f} [{lo:.3f}, {hi:.3f}]" for r, lo, hi in
                                    zip(correlations.r, correlations.low, correlations.high)])
    wide = cells.pivot_table(index="display_name", columns="level", values="ci", aggfunc="first", sort=False)
    wide = wide[[c for c in ("system", "summary", "global") if c in wide.columns]].reset_index()
    wide.columns = ["metric", *[f"{c}: r [95% CI]" for c in wide.columns[1:]]]
    figure = ("<h2>Correlation with the human scores (Boot-Both 95% CIs)</h2>"
              + _image(folder / "correlations.png", "correlations with confidence intervals",
                       "The new metric (red) and the baselines at each level, with 95% Boot-Both CIs "
                       "(overlap is no test: see the tests).", css="strip"))
    n_levels = len(wide.columns) - 1
    table = _table(wide, numeric=tuple(wide.columns[1:]),
                   widths=(100 - 25 * n_levels, *[25] * n_levels) if n_levels else ())
    return figure, table, metric


def _tests_section(folder: Path) -> str:
    tests = _read(folder, "tests.csv")
    if tests is None:
        return ""
    # the card decides with one two-sided test per baseline (studies/card.py, tests_table); a card written
    # before the two-sided test existed has no such column: shown as "-"
    absent = pd.Series(float("nan"), index=tests.index)
    shown = pd.DataFrame({
        "level": tests.level, "baseline": tests.display_name,
        "\u0394r": [fmt_difference(d, short=True) for d in tests.difference],
        "p, two-sided": [_p(p) for p in tests.get("p_two_sided", absent)],
        "adjusted p": [_p(p) for p in tests.get("p_two_sided_bonferroni", absent)],
        "verdict": tests.verdict})
    return ("<h2>Tests against the baselines</h2>"
            '<p class="sub">Perm-Both, H0: equal correlations; \u0394r: new minus baseline; adjusted '
            "p: Bonferroni over the baselines.</p>"
            + _table(shown, numeric=("\u0394r", "p, two-sided", "adjusted p"), widths=(14, 24, 14, 14, 14, 20)))


def _normality_section(folder: Path, names: dict[str, str]) -> str:
    normality = _read(folder, "normality.csv")
    if normality is None:
        return ""
    shown = pd.DataFrame({"score": [names.get(str(s), str(s)) for s in normality.score],
                          "system: Shapiro-Wilk p": [_p(p) for p in normality.system_pvalue],
                          "summary: inputs rejected": [f"{v:.0f}% of {n}" for v, n in
                                                       zip(normality.summary_percent_rejected,
                                                           normality.inputs_tested)]})
    return ("<h2>Normality (Shapiro-Wilk at 0.05)</h2>"
            + _table(shown, numeric=tuple(shown.columns[1:]), widths=(40, 28, 32)))


def _planner_section(folder: Path, names: dict[str, str], new_metric: str) -> str:
    planner = _read(folder, "planner.csv")
    if planner is None:
        return ""
    if not len(planner):
        return "<h2>Planner</h2><p>Every comparison is significant: no larger study is needed.</p>"
    cases = [planner_case(d, bool(r)) for d, r in zip(planner.difference, planner.reached)]
    # better_here is the metric that correlated better here: the new one or the baseline; with no difference at
    # the printed precision there is no winner, and no study size (the summary's rule: planner_case)
    pairs = [(names.get(str(w), w), names.get(str(b if w != b else new_metric), b if w != b else new_metric))
             for w, b in zip(planner.better_here, planner.baseline)]
    documents = {"no difference": lambda n, m: "none planned", "reached": lambda n, m: f"{n:.0f}",
                 "not reached": lambda n, m: f"not reached up to {int(m)}"}
    shown = pd.DataFrame({
        "level": planner.level,
        "to show": [f"{w} vs {o}" if c == "no difference" else f"{w} beats {o}"
                    for c, (w, o) in zip(cases, pairs)],
        "|\u0394r|": [fmt_difference(d, signed=False, short=True) for d in planner.difference],
        "documents for 80% power": [documents[c](n, m) for c, n, m in zip(cases, planner.documents_needed,
                                                                          planner.largest_size_tried)],
        "power by documents": [p if c != "no difference" else "" for c, p in zip(cases,
                                                                               planner.power_curve.astype(str))]})
    return ("<h2>Planner: documents for a study that decides</h2>"
            + _table(shown, numeric=("|\u0394r|",), widths=(14, 28, 11, 19, 28)))


def _footer(provenance: dict) -> str:
    keep = ("dataset", "shape", "human", "metric", "baselines", "signature", "seeding", "metaeval", "numpy")
    # the dataset by its name: a user's dataset is given as a path, which is no part of a shareable report
    named = {**provenance, "dataset": provenance.get("dataset_name") or provenance.get("dataset", "")}
    shown_values = {k: _provenance_value(k, v) for k, v in named.items() if k in keep}
    return "; ".join(f"<b>{html.escape(k)}</b>: {html.escape(v)}" for k, v in shown_values.items())


def render_report(folder: str | os.PathLike) -> str:
    """The report card of ``folder`` (a card run's output folder) as one self-contained HTML page: the title,
    the summary, then one section per table the card wrote (correlations with their figure and the tests
    heatmap, the tests, normality, the planner), then the provenance footer.

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
    first, _, rest = (folder / "summary.md").read_text(encoding="utf-8").partition("\n")
    md = MarkdownIt("commonmark", {"html": False})
    dataset = provenance.get("dataset_name") or provenance.get("dataset", "")
    parts = [f'<div class="sub">{md.renderInline(first)}</div>', f'<div class="summary">{md.render(rest)}</div>']
    names = _display_names(folder)
    figure, ci_table, shown_metric = _correlation_section(folder)
    metric = shown_metric or provenance.get("metric", "metric")
    if figure:
        parts.append(figure)
    heatmap = _image(folder / "tests.png", "tests heatmap",
                     "Two-sided Perm-Both p of 'equal correlations', Bonferroni over the baselines.", css="narrow")
    if ci_table or heatmap:
        parts.append('<div class="row"><div class="wide">' + ci_table + "</div>" + heatmap + "</div>")
    lower_left = _tests_section(folder)
    lower_right = (_normality_section(folder, names)
                   + _planner_section(folder, names, provenance.get("metric", "the new metric")))
    if lower_left or lower_right:
        parts.append(f'<div class="row"><div>{lower_left}</div><div>{lower_right}</div></div>')
    title = f"Report card: {metric} on {dataset}"
    parts.insert(0, f"<h1>{html.escape(title)}</h1>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{html.escape(title)}</title>"
            f"<link rel=\"icon\" href=\"data:,\"><style>{_CSS}</style></head><body>{''.join(parts)}"
            f"<footer>Provenance: {_footer(provenance)}</footer></body></html>\n")


def write_report(folder: str | os.PathLike) -> Path:
    """Render :func:`render_report` into ``<folder>/report.html`` (atomically); returns its path."""
    from metaeval._io import atomic_write

    path = Path(folder) / REPORT_NAME
    text = render_report(folder)
    atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    return path
