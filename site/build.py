"""Build the compendium's static site from the committed results (``make site``).

``python site/build.py`` assembles Sphinx sources under ``site/_build/src`` from what the default run committed
(``results/README.md`` as the front page, every executed notebook, the generated texts, figures and tables of
each results folder, the report cards) plus the pages of ``site/pages`` and the README's library tour, then runs
Sphinx into ``site/_build/html``. Nothing is executed: the notebooks are shown as the run left them, with their
code cells tagged so that plumbing disappears and interpretation and figures stay (:func:`tag_cells`).

Options: ``--results DIR`` (default ``results``), ``--only PATTERN`` (results folders matching a glob such as
``card/*``, comma-separated, to build a quick subset; the front page and the other pages are always built),
``--no-api`` (skip the API reference), ``--out DIR`` (default ``site/_build``), ``--quiet``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

SITE = Path(__file__).resolve().parent
ROOT = SITE.parent
MARK = ".metaeval-site"  # marks a folder this script wrote, the only kind it ever deletes
FIGURE_EXTS = (".png",)
TABLE_EXTS = (".csv", ".json")


def _reset(folder: Path) -> None:
    """Empty ``folder`` if this script created it (it carries :data:`MARK`); refuse any other non-empty folder."""
    if folder.exists() and any(folder.iterdir()):
        if not (folder / MARK).is_file():
            raise SystemExit(f"{folder} exists and was not written by site/build.py; give another --out")
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARK).write_text("written by site/build.py\n", encoding="utf-8")


def tag_cells(notebook: dict) -> dict:
    """Tag the code cells of an executed notebook for the site (a copy is changed, never the results).

    A cell keeps the tags its source gives it (``remove-cell``, ``remove-input``, ``hide-input``, ...). Otherwise
    a cell without visible output (after warnings and progress on stderr, which the site drops) is plumbing and
    is removed; a cell whose outputs are only prose (Markdown) or figures shows its output alone; any other cell
    shows its output with its code folded (``hide-input``), one click away.

    >>> nb = {"cells": [
    ...     {"cell_type": "code", "metadata": {}, "outputs": [], "source": "import x"},
    ...     {"cell_type": "code", "metadata": {}, "source": "nb.report(text)", "outputs": [
    ...         {"output_type": "display_data", "data": {"text/markdown": "r = 0.5", "text/plain": "<Markdown>"}}]},
    ...     {"cell_type": "code", "metadata": {}, "source": "table", "outputs": [
    ...         {"output_type": "execute_result", "data": {"text/html": "<table/>", "text/plain": "t"}}]},
    ...     {"cell_type": "code", "metadata": {}, "source": "warn()", "outputs": [
    ...         {"output_type": "stream", "name": "stderr", "text": "Warning"}]},
    ...     {"cell_type": "code", "metadata": {"tags": ["hide-input"]}, "outputs": [], "source": "x = 1"}]}
    >>> [c["metadata"].get("tags") for c in tag_cells(nb)["cells"]]
    [['remove-cell'], ['remove-input'], ['hide-input'], ['remove-cell'], ['hide-input']]
    """
    site_tags = {"remove-cell", "remove-input", "remove-output", "hide-input", "hide-output", "hide-cell"}
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if site_tags & set(tags):
            continue
        shown = [o for o in cell.get("outputs", []) if not (o["output_type"] == "stream" and o.get("name") == "stderr")]
        if not shown:
            tags.append("remove-cell")
        elif all(o["output_type"] in ("display_data", "execute_result")
                 and ({"text/markdown", "image/png", "image/svg+xml"} & set(o.get("data", {}))) for o in shown):
            tags.append("remove-input")
        else:
            tags.append("hide-input")
    return notebook


def _title(path: Path) -> str:
    """The first Markdown heading of an executed notebook, or its file name."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"])
            match = re.search(r"^#\s+(.+)$", source, flags=re.M)
            if match:
                return match.group(1).strip()
    return path.stem


def _outputs_page(folder: Path, rel: str, dest: Path, notebooks: list[str]) -> str:
    """The Markdown page of one results folder: its generated texts, its figures and its tables."""
    text_dir = dest / "_text"
    lines = [f"# Outputs of `results/{rel}/`", ""]
    if notebooks:
        lines += ["Produced by the executed notebook " + ", ".join(f"[{n}]({n}.ipynb)" for n in notebooks) + ".", ""]
    if (dest / "report.html").is_file():
        lines += ['The report card of this dataset: <a href="report.html">one-page report</a>.', ""]
    texts = sorted(p for p in folder.glob("*.md"))
    if texts:
        lines += ["## Generated texts", ""]
        text_dir.mkdir(exist_ok=True)
        for path in texts:
            shutil.copyfile(path, text_dir / path.name)
            lines += [f"### `{path.name}`", "", "```{include} _text/" + path.name, ":heading-offset: 3", "```", ""]
    figures = sorted(p for p in folder.iterdir() if p.suffix in FIGURE_EXTS)
    if figures:
        lines += ["## Figures", ""]
        for path in figures:
            shutil.copyfile(path, dest / path.name)
            svg = path.with_suffix(".svg")
            if svg.is_file():
                shutil.copyfile(svg, dest / svg.name)
            lines += [f"```{{figure}} {path.name}", f":alt: {path.stem}", ":width: 100%", "",
                      f"`{path.stem}` ({'PNG, ' + '{download}`SVG <' + svg.name + '>`' if svg.is_file() else 'PNG'})",
                      "```", ""]
    tables = sorted(p for p in folder.iterdir() if p.suffix in TABLE_EXTS)
    if tables:
        lines += ["## Tables", ""]
        for path in tables:
            shutil.copyfile(path, dest / path.name)
            lines.append(f"- {{download}}`{path.name} <{path.name}>`")
        lines.append("")
    return "\n".join(lines)


def _library_tour() -> str:
    """The README's "library in five minutes" section, as its own page."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^## The library in five minutes\n(.*?)(?=^## )", readme, flags=re.M | re.S)
    body = match.group(1) if match else "See the README."
    return "# The library in five minutes\n" + body.replace("\n### ", "\n## ")


def _teaching_page() -> str:
    """The "class" preset (notebooks/class_parameters.yml) as a table of commands and measured run times."""
    from metaeval.run.presets import read_preset

    preset = read_preset("class")
    lines = ["# Teaching with the compendium", "",
             "A first class (\"how sure are we about a metric's correlation?\") starts with the primer, notebook "
             "`01_primer`: the three correlation levels by hand, the sampling distribution of r, the true coverage "
             "of four interval methods on synthetic data with a known correlation, the bootstrap schemes drawn, and "
             "exercises with folded answers. The words it uses are in the [glossary](glossary.md).", "",
             "The **class preset** (`notebooks/class_parameters.yml`) runs every notebook with parameters small "
             "enough for a live session; outputs go to a scratch folder, never over the committed results. "
             "Seconds: wall time of `metaeval run` on the 2-core machine that builds the compendium while some 20 "
             "other jobs shared it (a loose upper bound), and in brackets the CPU time of the run and its kernel "
             "(close to the wall time on an idle core), next to the default run's expected time.", "",
             "| notebook | command | class preset: wall s (CPU s) | default run (s) |", "|---|---|---|---|"]
    for name, entry in preset.items():
        args = " ".join(f"-p {k} {shlex.quote(json.dumps(v) if not isinstance(v, str) else v)}"
                        for k, v in (entry.get("parameters") or {}).items())
        command = f"metaeval run {name[:2]} {args} -p output_dir results/runs/class/{name[:2]}".replace("  ", " ")
        seconds, cpu = entry.get("seconds"), entry.get("cpu_seconds")
        measured = f"{seconds} ({cpu})" if seconds is not None else "not measured"
        lines.append(f"| `{name}` | `{command}` | {measured} | "
                     f"{entry.get('default_seconds', '')} |")
    return "\n".join(lines) + "\n"


def _front_page(results: Path, pages: dict[str, list[str]], titles: dict[str, str]) -> str:
    """``results/README.md`` with each notebook name linked to its executed runs, then the site's contents."""
    text = (results / "README.md").read_text(encoding="utf-8")

    def link(match: re.Match) -> str:
        name = match.group(1)
        runs = pages.get(name)
        if not runs:
            return match.group(0)
        return f"[`{name}`]({runs[0]}.ipynb)"

    text = re.sub(r"`(\d\d_[a-z0-9_]+)`", link, text)
    analyses = [doc for name in sorted(pages) for doc in pages[name]]
    outputs = sorted({doc.rsplit("/", 1)[0] + "/outputs" for doc in analyses})
    # one notebook runs on several datasets: the contents name the dataset of each run
    analyses = [f"{titles.get(doc, doc)} ({doc.split('/')[2]}) <{doc}>" for doc in analyses]
    outputs = [f"results/{doc.split('/')[1]}/{doc.split('/')[2]} <{doc}>" for doc in outputs]
    toc = ["", "```{toctree}", ":caption: Reading", ":maxdepth: 1", "", "tour", "teaching", "glossary", "cards",
           "figures", "api", "```", "", "```{toctree}", ":caption: Analyses (executed notebooks)", ":maxdepth: 1", "",
           *analyses, "```", "", "```{toctree}", ":caption: Outputs by results folder", ":maxdepth: 1", "", *outputs,
           "```", ""]
    if (results / "atlas" / "README.md").is_file():  # the atlas index (make atlas) among the reading pages
        toc.insert(toc.index("api"), "atlas")
    return text + "\n".join(toc)


def _selected(rel: str, only: str | None) -> bool:
    return only is None or any(fnmatch.fnmatch(rel, pattern.strip()) for pattern in only.split(","))


def assemble(results: Path, src: Path, only: str | None = None, api: bool = True) -> dict[str, list[str]]:
    """Write the Sphinx sources into ``src``; returns {notebook name: [page of each run]}."""
    _reset(src)
    for page in (SITE / "pages").iterdir():
        if page.is_file():
            shutil.copyfile(page, src / page.name)
    if not api:  # a quick build (the browser test's subset): the API reference imports the whole library
        (src / "api.rst").write_text("API reference\n=============\n\nNot built in this quick build "
                                     "(``site/build.py --no-api``); ``make site`` builds it.\n", encoding="utf-8")
    (src / "tour.md").write_text(_library_tour(), encoding="utf-8")
    (src / "teaching.md").write_text(_teaching_page(), encoding="utf-8")
    pages: dict[str, list[str]] = {}
    figures: list[str] = ["# Every figure of the default run", ""]
    cards: list[str] = ["# Report cards", "",
                        "One page per dataset: the card of a metric (here the default run's) with its confidence "
                        "intervals, tests, normality checks, the planner's advice and the run's provenance.", ""]
    folders = sorted({p.parent for p in results.glob("*/*/*.ipynb")})
    # the atlas (make atlas): every notebook's run per dataset one level deeper, and its index as a page
    folders += sorted({p.parent for p in results.glob("atlas/*/*/*.ipynb")})
    if (results / "atlas" / "README.md").is_file():
        index = (results / "atlas" / "README.md").read_text(encoding="utf-8")
        index = re.sub(r"\]\(([^)]+?)/\)", lambda m: f"](results/atlas/{m.group(1)}/outputs.md)", index)
        (src / "atlas.md").write_text(index, encoding="utf-8")
    for folder in folders:
        rel = folder.relative_to(results).as_posix()
        if not _selected(rel, only):
            continue
        dest = src / "results" / rel
        dest.mkdir(parents=True, exist_ok=True)
        names = []
        for path in sorted(folder.glob("*.ipynb")):
            notebook = tag_cells(json.loads(path.read_text(encoding="utf-8")))
            (dest / path.name).write_text(json.dumps(notebook, indent=1, ensure_ascii=False), encoding="utf-8")
            pages.setdefault(path.stem, []).append(f"results/{rel}/{path.stem}")
            names.append(path.stem)
        if (folder / "provenance.json").is_file() and (folder / "summary.md").is_file():
            # a report card: its one-page report as the card run wrote it, or rendered now from its files
            if (folder / "report.html").is_file():
                shutil.copyfile(folder / "report.html", dest / "report.html")
            else:
                from metaeval.studies.card_report import render_report

                (dest / "report.html").write_text(render_report(folder), encoding="utf-8")
            cards.append(f'- `{rel}`: <a href="results/{rel}/report.html">the one-page report</a>, '

                         f"[the executed notebook](results/{rel}/{names[0]}.ipynb), "
                         f"[its files](results/{rel}/outputs.md)")
        (dest / "outputs.md").write_text(_outputs_page(folder, rel, dest, names), encoding="utf-8")
        pngs = sorted(p.name for p in folder.iterdir() if p.suffix in FIGURE_EXTS)
        if pngs:
            figures += [f"## `results/{rel}/`", ""]
            figures += [f"```{{figure}} results/{rel}/{name}\n:alt: {rel}/{name}\n:width: 100%\n\n"
                        f"`{rel}/{name}` ([outputs](results/{rel}/outputs.md))\n```\n" for name in pngs]
    (src / "figures.md").write_text("\n".join(figures) + "\n", encoding="utf-8")
    (src / "cards.md").write_text("\n".join(cards) + "\n", encoding="utf-8")
    titles = {doc: _title(src / f"{doc}.ipynb") for docs in pages.values() for doc in docs}
    (src / "index.md").write_text(_front_page(results, pages, titles), encoding="utf-8")
    return pages


def build(results: Path, out: Path, *, only: str | None = None, api: bool = True, quiet: bool = False) -> Path:
    """Assemble the sources and run Sphinx; returns the folder of the HTML site."""
    out.mkdir(parents=True, exist_ok=True)
    src, html = out / "src", out / "html"
    assemble(results, src, only=only, api=api)
    _reset(html)
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-c", str(SITE), "-j", "1", "-E",
               "-d", str(out / "doctrees"), str(src), str(html)]
    if quiet:
        command.insert(3, "-q")
    subprocess.run(command, check=True)
    # The report cards are standalone pages (not Sphinx documents), placed next to their outputs page.
    for report in src.glob("results/*/*/report.html"):
        target = html / report.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(report, target)  # self-contained: its figures are embedded
    return html


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--out", type=Path, default=SITE / "_build")
    parser.add_argument("--only", default=None, help="results folders to include, a glob such as 'card/*'")
    parser.add_argument("--no-api", dest="api", action="store_false", help="skip the API reference (quick build)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    html = build(args.results, args.out, only=args.only, api=args.api, quiet=args.quiet)
    print(f"site built in {time.perf_counter() - started:.0f} s: {html / 'index.html'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
