"""The one-page report card (metaeval.studies.card_report) rendered from a card run's files."""

import re
from pathlib import Path

import pandas as pd
import pytest

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
