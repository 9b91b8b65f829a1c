"""Names a user gave reach every page as text (issue 33, security; issue 32, item 4).

A score column named ``<script>alert(1)</script>`` imported into a folder named ``x<img src=x onerror=alert(2)>``:
the card's ``summary.md`` and notebook 61's Markdown carry them escaped (``metaeval._markup``, the one rule, used
where names enter generated Markdown), and the site built from such a card shows them as text, never as markup.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval._markup import html_text, md_code, md_text
from metaeval.run.cli import main
from metaeval.studies import card as C

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "<script>alert(1)</script>"
FOLDER = "x<img src=x onerror=alert(2)>"
SYSTEM = "<b>sys0</b>"  # a system name that is markup too
SMALL_KW = {"n_resamples": 50, "planner_trials": 5, "planner_resamples": 20, "planner_inputs": (1,)}


def _site_build():
    spec = importlib.util.spec_from_file_location("metaeval_site_build_escaping", ROOT / "site" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name, markdown", [
    (SCRIPT, "&lt;script&gt;alert(1)&lt;/script&gt;"),
    (FOLDER, "x&lt;img src=x onerror=alert(2)&gt;"),
    ("R&D **bold** `code` _a_b_ \\ x", "R&amp;D \\*\\*bold\\*\\* \\`code\\` \\_a_b\\_ \\\\ x"),
    ("bart_out ROUGE-S* F", "bart_out ROUGE-S\\* F"),  # an intraword _ is never emphasis: kept as written
    ("ROUGE-2 F1 (expert.relevance), 'x' [y]", "ROUGE-2 F1 (expert.relevance), 'x' [y]"),  # ordinary names as-is
])
def test_md_text_escapes_html_and_inline_markup(name, markdown):
    assert md_text(name) == markdown


def test_md_code_and_html_text():
    assert md_code("a``b") == "```a``b```" and md_code("`x") == "`` `x ``" and md_code("y") == "`y`"
    # entities are not decoded inside a code span: a name with <, > or & is written as escaped text instead
    assert md_code(SCRIPT) == md_text(SCRIPT) and md_code("a&b") == "a&amp;b"
    assert html_text(FOLDER) == "x&lt;img src=x onerror=alert(2)&gt;"
    assert html_text('"q"') == "&quot;q&quot;"


def _rendered_inline(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).render(markdown)


def test_escaped_names_render_as_the_same_text_with_raw_html_enabled():
    for name in (SCRIPT, FOLDER, "a*b*c", "x_y_z", "_x_ y", "bart_out"):
        html = _rendered_inline(f"**{md_text(name)}** and {md_code(name)}")
        assert "<script" not in html and "<img" not in html
        assert html.count(html_text(name)) == 2  # the name, as text, in the bold and in the code span


@pytest.fixture(scope="module")
def hostile_study(tmp_path_factory):
    """A user's table with a score column named like a script, imported into a folder named like an image tag."""
    root = tmp_path_factory.mktemp("hostile")
    rng = np.random.default_rng(3)
    quality = rng.normal(0, 1, 6)
    rows = []
    for d in range(20):
        for s in range(6):
            h = quality[s] + rng.normal(0, 1)
            rows.append({"doc": f"d{d:02d}", "system": SYSTEM if s == 0 else f"sys{s}", "LitePyramid": 0.5 + 0.1 * h,
                         SCRIPT: 0.2 + 0.03 * h + rng.normal(0, 0.03),
                         "BERTScore": 0.85 + 0.02 * h + rng.normal(0, 0.02)})
    pd.DataFrame(rows).to_csv(root / "study.csv", index=False)
    folder = root / FOLDER
    assert main(["import", str(root / "study.csv"), str(folder), "--human", "LitePyramid"]) == 0
    return folder


def test_card_summary_and_notes_carry_the_names_escaped(hostile_study, tmp_path):
    card = C.card_tables(SCRIPT, dataset=str(hostile_study), **SMALL_KW)
    summary = card.summary
    assert "<script" not in summary and "<img" not in summary, summary
    assert md_text(SCRIPT) in summary  # the metric, by its name, as text
    assert summary.startswith(f"**{md_text(SCRIPT)}** on **")
    # the tables and the provenance keep the names as they are (data, not Markdown)
    assert SCRIPT in set(card.correlations.metric)
    files = card.write(tmp_path / "card")
    assert "<script" not in files["summary"].read_text(encoding="utf-8")
    assert json.loads(files["provenance"].read_text(encoding="utf-8"))["metric"] == SCRIPT


def test_site_shows_hostile_names_as_text(hostile_study, tmp_path):
    """A results folder with a card of the hostile study and a notebook whose Markdown outputs hold the names raw
    (as a notebook that did not escape them would): the built site carries neither a script nor an image tag."""
    build = _site_build()
    card = C.card_tables(SCRIPT, dataset=str(hostile_study), **SMALL_KW)
    results = tmp_path / "results"
    folder = results / "card" / "hostile"
    card.write(folder)
    shutil.copyfile(ROOT / "results" / "README.md", results / "README.md")
    md = [{"output_type": "display_data", "metadata": {}, "data": {"text/markdown": text, "text/plain": "<md>"}}
          for text in (card.summary, f"raw: **{SCRIPT}** on {FOLDER}")]
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "python3",
                "display_name": "Python 3", "language": "python"}}, "cells": [
        {"cell_type": "markdown", "id": "c0", "metadata": {}, "source": "# The report card"},
        {"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": 1, "source": "nb.report(x)",
         "outputs": md}]}
    (folder / "61_report_card.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    (folder / "conclusions.md").write_text(f"Metric {SCRIPT} on `{FOLDER}`: raw, as written.\n", encoding="utf-8")
    html = build.build(results, tmp_path / "site", only="card/*", api=False, quiet=True, tracked=False)
    pages = {p.relative_to(html).as_posix(): p.read_text(encoding="utf-8") for p in html.rglob("*.html")}
    assert "results/card/hostile/61_report_card.html" in pages and "results/card/hostile/outputs.html" in pages
    for name in ("results/card/hostile/61_report_card.html", "results/card/hostile/outputs.html",
                 "results/card/hostile/report.html"):
        page = pages[name]
        assert not re.search(r"<script>alert|<img src=x onerror", page), name
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page, name


def test_site_shows_only_tracked_results_unless_asked(tmp_path):
    """Default: the files git tracks; --user-runs: the user's finished runs in their own section; failed and
    partial runs never."""
    import subprocess

    build = _site_build()
    repo = tmp_path / "repo"
    canonical = repo / "results" / "paper" / "summeval"
    canonical.mkdir(parents=True)
    run = {"notebook": "10_x", "paper": "paper", "status": "done", "parameters": {}, "files": {}}
    (canonical / "10_x.ipynb").write_text("{}", encoding="utf-8")
    (canonical / ".metaeval-run.10_x.json").write_text(json.dumps(run), encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    mine = repo / "results" / "runs" / "paper" / "summeval" / "10_x" / "seed=3__abc"
    failed = repo / "results" / "paper" / "summeval.10_x.failed"
    partial = repo / "results" / "paper" / ".partial-summeval-4242"
    for folder, status in ((mine, "done"), (failed, "failed"), (partial, "done")):
        folder.mkdir(parents=True)
        (folder / "10_x.ipynb").write_text("{}", encoding="utf-8")
        (folder / ".metaeval-run.10_x.json").write_text(json.dumps({**run, "status": status}), encoding="utf-8")
    view = build.tracked_results(repo / "results", tmp_path / "view")
    assert sorted(p.relative_to(view).as_posix() for p in view.rglob("*") if p.is_file()) == [
        "paper/summeval/.metaeval-run.10_x.json", "paper/summeval/10_x.ipynb"]
    assert build.user_runs(repo / "results", view) == [mine]
    assert build.safe_markdown(f"p < 0.05 and {SCRIPT} `{SCRIPT}`") == \
        f"p < 0.05 and &lt;script>alert(1)&lt;/script> `{SCRIPT}`"


# --- every generated Markdown/HTML output of the notebooks and the card (issue 47) ---------------------------------
# The names enter generated Markdown at their source: the library's sentence functions (tested directly below) and
# the notebooks' own f-strings (nb.md / nb.md_name / nb.md_code), whose outputs only an executed notebook shows. The
# notebooks run here are the fewest that cover every way a name reaches an output: 00 (the dataset's name, systems and
# scores in nb.report), 24 (tables through show_table, a Styler, and a library sentence function) and 61 (the card:
# its summary and the code spans of its provenance). Plain-text outputs (print, a DataFrame's text/plain) are not
# markup and keep the names as they are; so do the CSV files (data: a cell holds the name itself).

RAW = re.compile(r"<script|<img|<b>sys0")
MARKUP_TYPES = ("text/markdown", "text/html", "image/svg+xml", "text/latex")


def _markup_outputs(executed: Path):
    notebook = json.loads(executed.read_text(encoding="utf-8"))
    for k, cell in enumerate(notebook["cells"]):
        for output in cell.get("outputs", []):
            for mime, value in output.get("data", {}).items():
                if mime in MARKUP_TYPES:
                    yield k, mime, value if isinstance(value, str) else "".join(value)


@pytest.fixture(scope="module")
def hostile_runs(hostile_study, tmp_path_factory):
    from metaeval.notebooks import run_notebook

    root = tmp_path_factory.mktemp("hostile_runs")
    small = {"00": {}, "24": {"n_resamples": 50, "n_permutations": 50, "stability_trials": 5, "replicate_on": []},
             "61": {"scores": SCRIPT, "baselines": ["BERTScore"], "n_resamples": 50, "planner_trials": 5,
                    "planner_resamples": 20, "planner_inputs": [1]}}
    return {nb: run_notebook(nb, {"dataset": str(hostile_study), **params, "seed": 0,
                                  "output_dir": str(root / nb)}) for nb, params in small.items()}


@pytest.mark.parametrize("nb", ["00", "24", "61"])
def test_executed_notebooks_hold_hostile_names_escaped_in_every_markup_output(hostile_runs, nb):
    result = hostile_runs[nb]
    outputs = list(_markup_outputs(result.executed))
    raw = [(k, mime, value[max(0, m.start() - 40):m.end() + 20]) for k, mime, value in outputs
           for m in RAW.finditer(value)]
    assert not raw, raw
    text = "\n".join(value for _, _, value in outputs)
    shown = {"00": (FOLDER, SYSTEM), "24": (SCRIPT,), "61": (SCRIPT, FOLDER)}[nb]
    for name in shown:  # the names are there, as text
        assert md_text(name) in text or html_text(name) in text, name
    for saved in sorted(result.output_dir.glob("*.md")):  # the generated conclusions files
        body = saved.read_text(encoding="utf-8")
        assert not RAW.search(body), (saved.name, body)


def test_sentence_functions_and_tables_escape_the_names_they_quote():
    from metaeval.studies import atlas, deutsch2022
    from metaeval.studies.plotting import html_cells, show_table

    ceil = atlas.ceiling_sentences({}, {FOLDER: "no annotators"})
    table = pd.DataFrame([{"dataset": FOLDER, "level": "system", "statistic": "pearson", "metric": SCRIPT,
                           "value": 0.5, "ci_low": 0.1, "ci_high": 0.9, "noise_ceiling": np.nan,
                           "disattenuated": np.nan}])
    corr = atlas.correlation_sentences(table)
    pc = pd.DataFrame([{"metric_a": SCRIPT, "metric_b": SYSTEM, "u_fdr": 1, "k": 2, "q_u1": 0.01}])
    rep = atlas.replication_sentences(pc)
    first = next(iter(atlas.RULES))
    found = atlas.finding_sentences([{"dataset": FOLDER, "finding": first, "status": atlas.HOLDS, "systems": 5,
                                      "inputs": 9, "measure": "r", "value": 0.5}], apart={SYSTEM: "no texts"})
    delta = pd.DataFrame([{"metric": SCRIPT, "low": 0.0, "high": 1.0, "n_pairs": 3, "statistic": 0.5,
                           "ci_low": 0.1, "ci_high": 0.9}])
    from metaeval.studies import primer

    noted = primer.reliability_sentences(pd.DataFrame([{"score": SYSTEM, "level": "system", "note": "one rater"}]),
                                         SCRIPT)
    assert noted.startswith(f"* **{md_text(SYSTEM)}**: one rater")
    lines = [noted, *ceil, *corr, *rep, *found, *deutsch2022.delta_sentences(delta, {SCRIPT: 0.5})]
    text = "\n".join(lines)
    assert not RAW.search(text), text
    assert md_text(FOLDER) in ceil[0] and md_text(SCRIPT) in corr[0] and md_text(FOLDER) in found[1] and md_text(SYSTEM) in found[-1]
    assert f"{md_text(SCRIPT)} beats {md_text(SYSTEM)}" in rep[1] and f"**{md_text(SCRIPT)}**" in lines[-2]
    # a Styler writes cells and headers as they are: show_table and html_cells escape them, numbers unchanged
    frame = pd.DataFrame({SCRIPT: [SYSTEM, 0.5]}, index=pd.Index([FOLDER, "b"], name="dataset"))
    html = show_table(frame).to_html()
    assert not RAW.search(html) and html_text(SCRIPT) in html and html_text(FOLDER) in html
    assert html_cells(frame).iloc[1, 0] == 0.5 and frame.iloc[0, 0] == SYSTEM  # a copy: the data keep the names


def test_session_quotes_names_as_text():
    from metaeval.run.session import start

    nb = start("demo", "fabbri2020", output_dir=None, seed=0, resolve=False)
    assert nb.md(FOLDER) == md_text(FOLDER) and nb.md_code(SCRIPT) == md_text(SCRIPT)
    assert nb.md_name("expert.relevance") == md_text(nb.name("expert.relevance"))


def test_few_label_sentences_escape_the_system_they_name():
    from metaeval.studies.few_labels import few_label_sentences

    intervals = pd.DataFrame({"n_labelled": [10], "n_unlabelled": [90], "ppi_width": [1.0], "humans_width": [2.0],
                              "ppi_covers": [True], "humans_covers": [True]})
    budget = pd.DataFrame({"target": ["a system's mean"], "width": [0.1], "hardest": [SYSTEM], "sd": [1.0],
                           "rho": [0.5], "humans_only": [10], "ppi": [8], "n_unlabelled": [90]})
    text = "\n".join(few_label_sentences(intervals, budget, pd.DataFrame({"n_replicates": []}),
                                         pd.DataFrame({"n_annotators": []}), judge=md_text(SCRIPT)))
    assert not RAW.search(text) and f"the hardest: {md_text(SYSTEM)}" in text
