"""Build the compendium's static site from the committed results (``make site``).

``python site/build.py`` assembles Sphinx sources under ``site/_build/src`` from what the default run committed
(``results/README.md`` as the front page, every executed notebook, the generated texts, figures and tables of
each results folder, the report cards) plus the pages of ``site/pages`` and the README's library tour, then runs
Sphinx into ``site/_build/html``. Nothing is executed: the notebooks are shown as the run left them, with their
code cells tagged so that plumbing disappears and interpretation and figures stay (:func:`tag_cells`).

What is shown: by default the canonical results only, the files git tracks under ``results/`` (a user's own
runs, failed runs and the staging folders of runs in progress are not tracked, so they never appear). ``--user-runs``
adds the user's finished runs (untracked folders with a run manifest of status ``done``) in a section of their
own; failed (``*.failed``) and partial (``.partial-*``, ``.old-*``) folders never appear. ``--results DIR`` builds
from the finished runs in another folder. Every user-derived text (dataset, score, system and folder names) reaches
the pages as text: the generated Markdown escapes names where they enter it (``metaeval._markup``), and this
script shows raw HTML in any generated Markdown as text (:func:`safe_markdown`) and escapes the names it writes.

Options: ``--results DIR`` (default: the tracked files of ``results``), ``--user-runs``, ``--only PATTERN``
(results folders matching a glob such as
``card/*``, comma-separated, to build a quick subset; the front page and the other pages are always built),
``--no-api`` (skip the API reference), ``--out DIR`` (default ``site/_build``), ``--quiet``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from metaeval._markup import html_text, md_code

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


_HIDDEN = (".partial-", ".old-")


def _is_shown_run(folder: Path, top: Path) -> bool:
    """A finished run's folder: not failed, not a staging or backup folder, and every run manifest in it done."""
    rel = folder.relative_to(top).parts if folder.is_relative_to(top) else folder.parts
    if any(part.startswith(_HIDDEN) or ".failed" in part for part in rel):
        return False
    statuses = []
    for manifest in folder.glob(".metaeval-run.*.json"):
        try:
            statuses.append(json.loads(manifest.read_text(encoding="utf-8")).get("status"))
        except (OSError, ValueError, AttributeError):
            statuses.append(None)
    return all(status == "done" for status in statuses)


def tracked_results(results: Path, view: Path) -> Path:
    """Copy the files git tracks under ``results`` into ``view`` (a folder this script owns); returns the copy of
    ``results``. Not a git checkout: the finished runs of ``results`` (see :func:`_is_shown_run`)."""
    _reset(view)
    target = view / "results"
    try:
        listing = subprocess.run(["git", "-C", str(results), "ls-files", "-z", "--full-name", "."],
                                 capture_output=True, check=True, timeout=120).stdout
        top = Path(subprocess.run(["git", "-C", str(results), "rev-parse", "--show-toplevel"], capture_output=True,
                                  check=True, text=True, timeout=60).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        shutil.copytree(results, target, ignore=lambda d, names: [
            n for n in names if n.startswith(_HIDDEN) or ".failed" in n])
        return target
    prefix = results.resolve().relative_to(top.resolve())
    for name in listing.decode("utf-8").split("\0"):
        if not name:
            continue
        source = top / name
        if source.is_file():
            copy = target / Path(name).relative_to(prefix)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy)
    return target


def user_runs(results: Path, canonical: Path) -> list[Path]:
    """The user's finished runs under ``results``: folders holding an executed notebook that are not among the
    canonical results (``canonical``, the tracked copy), failed or partial runs left out."""
    found = []
    for notebook in sorted(results.rglob("*.ipynb")):
        folder = notebook.parent
        rel = folder.relative_to(results)
        if ".ipynb_checkpoints" in rel.parts or folder in found:
            continue
        if (canonical / rel / notebook.name).is_file() or not _is_shown_run(folder, results):
            continue
        found.append(folder)
    return found


_CODE = re.compile(r"(`+)(.+?)\1", re.S)
_TAG = re.compile(r"<(?=[A-Za-z/!?])")


def safe_markdown(text: str) -> str:
    """Generated Markdown with any raw HTML shown as text: a ``<`` that could open a tag becomes ``&lt;``
    outside code spans and fenced code (where it is literal already). The generated texts escape names at
    their source (``metaeval._markup``); this is the site's guarantee for any Markdown it renders.

    >>> safe_markdown("**<script>alert(1)</script>** p < 0.05, `a<b>`")
    '**&lt;script>alert(1)&lt;/script>** p < 0.05, `a<b>`'
    """
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            out.append(line)
            continue
        if fenced:
            out.append(line)
            continue
        pieces, last = [], 0
        for match in _CODE.finditer(line):
            pieces.append(_TAG.sub("&lt;", line[last:match.start()]))
            pieces.append(match.group(0))
            last = match.end()
        pieces.append(_TAG.sub("&lt;", line[last:]))
        out.append("".join(pieces))
    return "\n".join(out)


def _safe_notebook(notebook: dict) -> dict:
    """The notebook's Markdown (cells and ``text/markdown`` outputs) through :func:`safe_markdown`; ``text/html``
    outputs (pandas tables, which escape their cells) are kept."""
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            source = cell["source"]
            cell["source"] = safe_markdown("".join(source) if isinstance(source, list) else source)
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "text/markdown" in data:
                value = data["text/markdown"]
                data["text/markdown"] = safe_markdown("".join(value) if isinstance(value, list) else value)
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
    lines = [f"# Outputs of {md_code(f'results/{rel}/')}", ""]
    if notebooks:
        lines += ["Produced by the executed notebook " + ", ".join(f"[{n}]({n}.ipynb)" for n in notebooks) + ".", ""]
    if (dest / "report.html").is_file():
        lines += ['The report card of this dataset: <a href="report.html">one-page report</a>.', ""]
    texts = sorted(p for p in folder.glob("*.md"))
    if texts:
        lines += ["## Generated texts", ""]
        text_dir.mkdir(exist_ok=True)
        for path in texts:
            (text_dir / path.name).write_text(safe_markdown(path.read_text(encoding="utf-8")), encoding="utf-8")
            lines += [f"### {md_code(path.name)}", "", "```{include} _text/" + path.name, ":heading-offset: 3",
                      "```", ""]
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


def _class_times() -> dict[str, dict]:
    """The last ``make class`` run's times (``metaeval.run.presets.record_times``), or {} where none ran."""
    from metaeval.run.presets import TIMES

    path = ROOT / "results" / "runs" / "class" / TIMES
    try:
        return dict(json.loads(path.read_text(encoding="utf-8"))["runs"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _teaching_page() -> str:
    """The "class" preset (notebooks/class_parameters.yml) as a table of commands and the run times the last
    ``make class`` measured."""
    from metaeval.run.presets import read_preset

    preset = read_preset("class")
    lines = ["# Teaching with the compendium", "",
             "A first class (\"how sure are we about a metric's correlation?\") starts with the primer, notebook "
             "`01_primer`: the three correlation levels by hand, the sampling distribution of r, the true coverage "
             "of four interval methods on synthetic data with a known correlation, the bootstrap schemes drawn, and "
             "exercises with folded answers. The words it uses are in the [glossary](glossary.md).", "",
             "The **class preset** (`notebooks/class_parameters.yml`) runs every notebook with parameters small "
             "enough for a live session: `make class` runs them all, `metaeval run NN --preset class` one of them "
             "(`-p NAME VALUE` after it changes a value); outputs go to `results/runs/class/`, never over the "
             "committed results."]
    times = _class_times()
    if times:
        dates = sorted({t["measured"] for t in times.values()})
        loads = sorted({t["load_average"] for t in times.values()})
        lines += ["", f"Seconds as measured by the last `make class` on the machine that built this site "
                  f"({dates[0]}{' to ' + dates[-1] if len(dates) > 1 else ''}, {next(iter(times.values()))['cores']} "
                  f"cores, load average {loads[0]:g}{'-' + format(loads[-1], 'g') if len(loads) > 1 else ''}): "
                  "wall time, and in brackets the CPU time of the run and its kernel (the figure to compare across "
                  f"machines); all {len(times)} measured runs took "
                  f"{sum(t['wall_seconds'] for t in times.values()):.0f} s wall in all. Beside them, the default "
                  "run's expected time."]
    else:
        lines += ["", "No `make class` has run on the machine that built this site: run it, and this page shows "
                  "each run's measured wall and CPU seconds."]
    lines += ["", "| notebook | command | parameters | class preset: wall s (CPU s) | default run (s) |",
              "|---|---|---|---|---|"]
    for name, entry in preset.items():
        params = ", ".join(f"{k} = {json.dumps(v)}" for k, v in (entry.get("parameters") or {}).items())
        t = times.get(name)
        measured = f"{t['wall_seconds']:g} ({t['cpu_seconds']:g})" if t else "not measured"
        lines.append(f"| `{name}` | `metaeval run {name[:2]} --preset class` | {params or 'the defaults'} | "
                     f"{measured} | {entry.get('default_seconds', '')} |")
    return "\n".join(lines) + "\n"


def run_label(doc: str) -> str:
    """The dataset (and what else tells a run apart) of a run's page ``results/FOLDER/RUN/...``: the run folder
    itself (``summeval``), or for a sweep's run (``results/atlas/NN_name/dataset=faceval__06dd5221/...``) the
    results folder and the value of its ``dataset`` parameter, so that no two entries of the contents read alike
    (notebook 00 on SummEval is in ``results/dataset_check`` and in the atlas).

    Examples
    --------
    >>> run_label("results/graham2015/summeval/10_graham2015")
    'summeval'
    >>> run_label("results/atlas/00_dataset_check/dataset=frank-cnndm__3a32a78b/00_dataset_check")
    'atlas: frank-cnndm'
    >>> run_label("results/atlas/30_lin2004/dataset=faceval__measures=-R-1-R-2-__size_step=50__160a6328/outputs")
    'atlas: faceval, measures=-R-1-R-2-, size_step=50'
    """
    parts = doc.split("/")
    if len(parts) < 5 or "=" not in parts[3]:
        return parts[2]
    fields = parts[3].split("__")[:-1]  # the last field is the parameters' hash
    values = dict(f.split("=", 1) for f in fields if "=" in f)
    rest = [f for f in fields if not f.startswith("dataset=")]
    return f"{parts[1]}: " + (", ".join([values["dataset"]] * ("dataset" in values) + rest) or parts[3])


def contents_labels(docs: list[str]) -> dict[str, str]:
    """Each run page's label in the contents (:func:`run_label`), with its results folder before it where two
    runs of one notebook would read alike (``results/miloulis`` and ``results/miloulis-paper`` on SummEval).

    Examples
    --------
    >>> contents_labels(["results/miloulis/summeval/40_m", "results/miloulis-paper/summeval/40_m",
    ...                  "results/lin2004/summeval/30_l"])
    {'results/miloulis/summeval/40_m': 'miloulis: summeval', 'results/miloulis-paper/summeval/40_m': \
'miloulis-paper: summeval', 'results/lin2004/summeval/30_l': 'summeval'}
    """
    plain = {doc: run_label(doc) for doc in docs}
    seen = Counter((doc.rsplit("/", 1)[-1], label) for doc, label in plain.items())
    return {doc: label if seen[(doc.rsplit("/", 1)[-1], label)] == 1 or label.startswith(doc.split("/")[1] + ":")
            else f"{doc.split('/')[1]}: {label}" for doc, label in plain.items()}


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
    labels = contents_labels(analyses)
    analyses = [f"{titles.get(doc, doc)} ({labels[doc]}) <{doc}>" for doc in analyses]
    outputs = [f"results/{doc.split('/')[1]}/{doc.split('/')[2]}"
               + (f" ({run_label(doc)})" if run_label(doc) != doc.split('/')[2] else "") + f" <{doc}>"
               for doc in outputs]
    toc = ["", "```{toctree}", ":caption: Reading", ":maxdepth: 1", "", "tour", "teaching", "glossary", "cards",
           "figures", "api", "```", "", "```{toctree}", ":caption: Analyses (executed notebooks)", ":maxdepth: 1", "",
           *analyses, "```", "", "```{toctree}", ":caption: Outputs by results folder", ":maxdepth: 1", "", *outputs,
           "```", ""]
    if (results / "atlas" / "README.md").is_file():  # the atlas index (make atlas) among the reading pages
        toc.insert(toc.index("api"), "atlas")
    return text + "\n".join(toc)


def _selected(rel: str, only: str | None) -> bool:
    return only is None or any(fnmatch.fnmatch(rel, pattern.strip()) for pattern in only.split(","))


def _folder_pages(folder: Path, rel: str, src: Path, doc_prefix: str, pages: dict[str, list[str]],
                  figures: list[str], cards: list[str]) -> None:
    """The pages of one results folder (its executed notebooks, its outputs page) under ``src/<doc_prefix>``."""
    dest = src / doc_prefix / rel
    dest.mkdir(parents=True, exist_ok=True)
    names = []
    for path in sorted(folder.glob("*.ipynb")):
        notebook = _safe_notebook(tag_cells(json.loads(path.read_text(encoding="utf-8"))))
        (dest / path.name).write_text(json.dumps(notebook, indent=1, ensure_ascii=False), encoding="utf-8")
        pages.setdefault(path.stem, []).append(f"{doc_prefix}/{rel}/{path.stem}")
        names.append(path.stem)
    if (folder / "provenance.json").is_file() and (folder / "summary.md").is_file():
        # a report card: its one-page report as the card run wrote it, or rendered now from its files
        if (folder / "report.html").is_file():
            shutil.copyfile(folder / "report.html", dest / "report.html")
        else:
            from metaeval.studies.card_report import render_report

            (dest / "report.html").write_text(render_report(folder), encoding="utf-8")
        cards.append(f'- {md_code(rel)}: <a href="{html_text(f"{doc_prefix}/{rel}/report.html")}">the one-page '
                     f"report</a>, [the executed notebook]({doc_prefix}/{rel}/{names[0]}.ipynb), "
                     f"[its files]({doc_prefix}/{rel}/outputs.md)")
    (dest / "outputs.md").write_text(_outputs_page(folder, rel, dest, names), encoding="utf-8")
    pngs = sorted(p.name for p in folder.iterdir() if p.suffix in FIGURE_EXTS)
    if pngs:
        figures += [f"## {md_code(f'{doc_prefix}/{rel}/')}", ""]
        figures += [f"```{{figure}} {doc_prefix}/{rel}/{name}\n:alt: {rel}/{name}\n:width: 100%\n\n"
                    f"{md_code(f'{rel}/{name}')} ([outputs]({doc_prefix}/{rel}/outputs.md))\n```\n"
                    for name in pngs]


def assemble(results: Path, src: Path, only: str | None = None, api: bool = True,
             user: list[Path] | None = None, user_root: Path | None = None) -> dict[str, list[str]]:
    """Write the Sphinx sources into ``src``; returns {notebook name: [page of each run]}.

    ``results``: the canonical results (the tracked copy, :func:`tracked_results`); ``user``: folders of the
    user's own runs under ``user_root``, shown in a section of their own (:func:`user_runs`)."""
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
        built = {f.relative_to(results).as_posix() for f in folders
                 if _selected(f.relative_to(results).as_posix(), only) and _is_shown_run(f, results)}

        def link(m: re.Match) -> str:
            # a run folder with a page here is linked; one not built (a partial build, a failed run) stays text
            rel = f"atlas/{m.group(2)}"
            return f"[{m.group(1)}](results/{rel}/outputs.md)" if rel in built else m.group(1)

        index = re.sub(r"\[([^\]]*)\]\(([^)]+?)/\)", link, index)
        (src / "atlas.md").write_text(index, encoding="utf-8")
    for folder in folders:
        rel = folder.relative_to(results).as_posix()
        if _selected(rel, only) and _is_shown_run(folder, results):
            _folder_pages(folder, rel, src, "results", pages, figures, cards)
    mine: dict[str, list[str]] = {}
    for folder in user or []:
        rel = folder.relative_to(user_root).as_posix() if user_root else folder.name
        _folder_pages(folder, rel, src, "user-runs", mine, figures, cards)
    (src / "figures.md").write_text("\n".join(figures) + "\n", encoding="utf-8")
    (src / "cards.md").write_text("\n".join(cards) + "\n", encoding="utf-8")
    titles = {doc: _title(src / f"{doc}.ipynb") for docs in [*pages.values(), *mine.values()] for doc in docs}
    index = _front_page(results, pages, titles)
    if mine:
        docs = sorted(doc for docs in mine.values() for doc in docs)
        index += "\n".join(["", "## Your own runs", "",
                            "Runs of this machine that are not among the committed results (`--user-runs`): "
                            "parameters, datasets or code of your own. The analyses above are the canonical "
                            "results.", "", "```{toctree}", ":caption: Your own runs (not the canonical results)",
                            ":maxdepth: 1", "", *[f"{titles.get(d, d)} <{d}>" for d in docs],
                            *sorted({d.rsplit('/', 1)[0] + "/outputs" for d in docs}), "```", ""])
    (src / "index.md").write_text(index, encoding="utf-8")
    return {**pages, **{f"user-runs:{k}": v for k, v in mine.items()}}


def build(results: Path, out: Path, *, only: str | None = None, api: bool = True, quiet: bool = False,
          tracked: bool = True, user: bool = False) -> Path:
    """Assemble the sources and run Sphinx; returns the folder of the HTML site.

    ``tracked``: the canonical results are the files git tracks under ``results`` (a copy in ``out/view``), else
    the finished runs found there; ``user``: add the user's own finished runs in their own section."""
    out.mkdir(parents=True, exist_ok=True)
    src, html = out / "src", out / "html"
    canonical = tracked_results(results, out / "view") if tracked else results
    mine = user_runs(results, canonical) if user else []
    assemble(canonical, src, only=only, api=api, user=mine, user_root=results)
    _reset(html)
    # -W --keep-going: a docutils error in a docstring (an undefined |substitution|) fails the build, after all of them
    # are listed
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-c", str(SITE), "-j", "1", "-E",
               "-d", str(out / "doctrees"), str(src), str(html)]
    if quiet:
        command.insert(3, "-q")
    subprocess.run(command, check=True)
    # The report cards are standalone pages (not Sphinx documents), placed next to their outputs page.
    for report in [*src.glob("results/*/*/report.html"), *src.glob("user-runs/**/report.html")]:
        target = html / report.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(report, target)  # self-contained: its figures are embedded
    return html


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=None,
                        help="build from the finished runs in this folder (default: the files git tracks in results/)")
    parser.add_argument("--user-runs", action="store_true",
                        help="also show your own finished runs (untracked), in a section of their own")
    parser.add_argument("--out", type=Path, default=SITE / "_build")
    parser.add_argument("--only", default=None, help="results folders to include, a glob such as 'card/*'")
    parser.add_argument("--no-api", dest="api", action="store_false", help="skip the API reference (quick build)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    results = args.results if args.results is not None else ROOT / "results"
    html = build(results, args.out, only=args.only, api=args.api, quiet=args.quiet, tracked=args.results is None,
                 user=args.user_runs)
    print(f"site built in {time.perf_counter() - started:.0f} s: {html / 'index.html'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
