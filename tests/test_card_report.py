"""The one-page report card (metaeval.studies.card_report) rendered from a card run's files; printed in headless
Chromium (tests/browser.py; skipped with a message without it) it is one A4 page."""

import re
from pathlib import Path

import pandas as pd
import pytest

from browser import browser, cell_layout_problems, emulated, printed_pages  # noqa: F401  (browser: pytest fixture)
from metaeval.studies.card_report import render_report, write_report

CARD = Path(__file__).resolve().parents[1] / "results" / "card" / "summeval"


@pytest.mark.skipif(not (CARD / "provenance.json").is_file(), reason="no committed default card")
def test_report_holds_every_section_and_no_code(tmp_path):
    page = render_report(CARD)
    assert "<title>Report card: QAEval-F1 on summeval</title>" in page
    for heading in ("Correlation with the human scores", "Tests against the baselines", "Normality", "Planner"):
        assert heading in page, heading
    assert page.count('src="data:image/png;base64,') == 2  # the CIs figure and the tests heatmap, embedded
    # every baseline of the card and every level's interval appear, as the CSV says
    correlations = pd.read_csv(CARD / "correlations.csv")
    for row in correlations.itertuples():
        assert f"{row.r:.3f} [{row.low:.3f}, {row.high:.3f}]" in page, row.display_name
    assert "<footer>Provenance:" in page and "default_rng([seed, s, k])" in page
    # a report, not a notebook: no script, no code, no parameters, no machine path
    for forbidden in ("<script", "import ", "output_dir", "/tmp/", "/work/", "In&nbsp;["):
        assert forbidden not in page, forbidden
    # tables fit the page: fixed layout with column widths summing to 100%
    for group in re.findall(r"<colgroup>(.*?)</colgroup>", page):
        assert sum(int(w) for w in re.findall(r"width:(\d+)%", group)) == 100


def test_a_folder_that_is_no_card_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"holds no summary\.md, provenance\.json: it is not a report card"):
        render_report(tmp_path)
    (tmp_path / "summary.md").write_text("**m** on **d**.\n")
    (tmp_path / "provenance.json").write_text('{"metric": "m", "dataset": "d"}')
    path = write_report(tmp_path)
    assert path == tmp_path / "report.html" and "<h1>Report card: m on d</h1>" in path.read_text()


@pytest.fixture(scope="module")
def user_card(tmp_path_factory):
    """The card of a small user dataset (5 systems x 6 inputs, one baseline), run through notebook 61."""
    from datasets_factory import write_dataset

    from metaeval.run.notebooks import run_notebook

    root = tmp_path_factory.mktemp("user_card")
    exp = write_dataset(root / "study", "yml", n_systems=5, n_inputs=6, n_refs=2, seed=5)
    out = root / "card"
    run_notebook("61", {"dataset": str(exp.path), "scores": exp.metrics[0], "n_resamples": 50, "planner_trials": 5,
                        "planner_resamples": 20, "planner_inputs": [0.5, 1], "output_dir": str(out)})
    return out


@pytest.mark.parametrize("which", ["summeval", "realsumm", "user"])
def test_report_prints_on_one_a4_page(which, browser, request, tmp_path):  # noqa: F811
    folder = request.getfixturevalue("user_card") if which == "user" else CARD.parent / which
    if not (folder / "provenance.json").is_file():
        pytest.skip(f"no committed card {which}")
    page = render_report(folder)
    # a report shared as it is: the dataset by its name, never the path it was read from
    assert "/tmp/" not in page and str(folder.parent) not in page
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    browser.get(path.as_uri())
    assert printed_pages(browser) == 1
    # issue 48: two cells of a user's card printed text over text; at a laptop's width and at A4 print size (794
    # CSS px, print media) no cell's text leaves its cell or covers another's
    for width, media in ((1280, "screen"), (794, "print")):
        with emulated(browser, width, media):
            problems = cell_layout_problems(browser)
        assert not problems, f"{which} at {width} px ({media}): " + "; ".join(problems[:10])


def test_planner_rows_say_what_the_summary_says(tmp_path):
    """One rule (``_card_format.planner_case``) for the report's planner rows and the card's summary: a difference
    that rounds to zero plans no study in both (the report once said "not reached up to 792" beside a summary
    saying "no study size is planned"); the narrow cells hold the short bound, not the sentence."""
    from metaeval.studies.card import PLANNER_COLUMNS

    (tmp_path / "summary.md").write_text("**m** on **d**.\n")
    (tmp_path / "provenance.json").write_text('{"metric": "mine", "dataset": "d"}')
    rows = [["system", "rouge-2", "rouge-2", 0.0003, 12, float("nan"), float("nan"), float("nan"), False, 792,
             "396: 0.05; 792: 0.06", "s"],
            ["system", "rouge-1", "mine", 0.04, 12, 300.0, 250.0, 350.0, True, 792, "396: 0.5; 792: 0.9", "s"],
            ["summary", "rouge-1", "rouge-1", 0.02, 12, float("nan"), float("nan"), float("nan"), False, 792,
             "396: 0.2; 792: 0.4", "s"]]
    pd.DataFrame(rows, columns=PLANNER_COLUMNS).to_csv(tmp_path / "planner.csv", index=False)
    page = render_report(tmp_path)
    cells = [re.sub(r"<[^>]+>", "|", row) for row in re.findall(r"<tr>(.*?)</tr>", page.split("Planner")[-1], re.S)]
    assert any("rouge-2 vs mine" in c and "none planned" in c and "&lt; 0.0005" in c for c in cells), cells
    assert not any("rouge-2" in c and "not reached" in c for c in cells)
    assert any("mine beats rouge-1" in c and "|300|" in c for c in cells)
    assert any("rouge-1 beats mine" in c and "not reached up to 792" in c for c in cells)
    assert "no difference at this precision" not in page.split("Planner")[-1]
