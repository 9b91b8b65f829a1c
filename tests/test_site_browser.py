"""The rendered site in a real browser: every page loads without console errors, every internal link (and
anchor) resolves, every image renders.

``make browser-test`` builds the whole site (``make site``) and points ``METAEVAL_SITE_HTML`` at it; without it
(``make test``) the test builds a quick subset from the committed results (one analysis on two datasets, one report
card, no API reference: about 20 s) and crawls that. Skipped with a message when Chromium or the site's packages are absent.
"""

from __future__ import annotations

import importlib.util
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from browser import browser, console_errors, printed_pages, serve  # noqa: F401  (browser: pytest fixture)

ROOT = Path(__file__).resolve().parents[1]
# two runs of one notebook (the dataset check on two datasets): the sidebar must tell them apart
SUBSET = "dataset_check/summeval,dataset_check/realsumm,card/summeval"


def _site_build_module():
    spec = importlib.util.spec_from_file_location("metaeval_site_build", ROOT / "site" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tag_cells_hides_plumbing_and_keeps_interpretation():
    build = _site_build_module()
    cell = lambda outputs, tags=None: {"cell_type": "code", "source": "", "outputs": outputs,  # noqa: E731
                                       "metadata": {"tags": tags} if tags else {}}
    figure = {"output_type": "display_data", "data": {"image/png": "iVBOR", "text/plain": "<Figure>"}}
    prose = {"output_type": "display_data", "data": {"text/markdown": "**r = 0.5**", "text/plain": "<Markdown>"}}
    table = {"output_type": "execute_result", "data": {"text/html": "<table/>", "text/plain": "x"}}
    stderr = {"output_type": "stream", "name": "stderr", "text": "42%|####"}
    stdout = {"output_type": "stream", "name": "stdout", "text": "3 systems"}
    nb = {"cells": [cell([]), cell([figure]), cell([prose, figure]), cell([table]), cell([stderr]),
                    cell([stderr, stdout]), cell([], ["parameters"]), cell([figure], ["remove-cell"]),
                    {"cell_type": "markdown", "source": "# T", "metadata": {}}]}
    tags = [c["metadata"].get("tags") for c in build.tag_cells(nb)["cells"]]
    assert tags == [["remove-cell"], ["remove-input"], ["remove-input"], ["hide-input"], ["remove-cell"],
                    ["hide-input"], ["parameters", "remove-cell"], ["remove-cell"], None]


@pytest.fixture(scope="module")
def site_html(tmp_path_factory):
    given = os.environ.get("METAEVAL_SITE_HTML")
    if given:
        if not (Path(given) / "index.html").is_file():
            pytest.fail(f"METAEVAL_SITE_HTML={given} holds no index.html: run `make site` first")
        return Path(given)
    for package in ("sphinx", "myst_nb", "furo"):
        if importlib.util.find_spec(package) is None:
            pytest.skip(f"{package} is not installed: the site needs the `site` extra (pip install -e '.[site]')")
    if not any((ROOT / "results").glob("*/*/*.ipynb")):
        pytest.skip("no executed notebooks under results/: run `make results` first")
    out = tmp_path_factory.mktemp("site")
    return _site_build_module().build(ROOT / "results", out, only=SUBSET, api=False, quiet=True)


_PAGE_STATE = """
return {
  ready: document.readyState,
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
  ids: Array.from(document.querySelectorAll('[id]')).map(e => e.id),
  images: Array.from(document.images).map(i => ({src: i.currentSrc || i.src, complete: i.complete,
                                                  width: i.naturalWidth})),
};
"""


def _exists(url: str) -> bool:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=10) as response:
            return response.status == 200
    except urllib.error.URLError:
        return False


def test_every_page_loads_links_resolve_and_figures_render(browser, site_html):  # noqa: F811
    from selenium.webdriver.support.ui import WebDriverWait

    problems: list[str] = []
    pages_seen = images_seen = reports = 0
    with serve(site_html) as base:
        queue = [base + "/index.html"]
        visited: dict[str, set[str]] = {}  # page -> its element ids
        anchors: list[tuple[str, str, str]] = []  # (from page, target page, fragment)
        checked_files: set[str] = set()
        console_errors(browser)  # drop what an earlier test left
        while queue:
            url = queue.pop()
            if url in visited:
                continue
            browser.get(url)
            WebDriverWait(browser, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")
            state = browser.execute_script(_PAGE_STATE)
            if "404" in browser.title or not state["ids"] and "Error" in browser.title:
                problems.append(f"{url}: not found")
            visited[url] = set(state["ids"])
            pages_seen += 1
            if url.endswith("/report.html"):
                reports += 1
                pages = printed_pages(browser)
                if pages != 1:  # issue 26: the card is one A4 page
                    problems.append(f"{url}: the report card prints on {pages} A4 pages, not one")
            for message in console_errors(browser):
                problems.append(f"{url}: console error: {message}")
            for image in state["images"]:
                images_seen += 1
                if not image["complete"] or image["width"] == 0:
                    problems.append(f"{url}: image does not render: {image['src']}")
            for link in state["links"]:
                parts = urllib.parse.urlsplit(link)
                if not link.startswith(base):
                    continue  # external links (the papers, GitHub) are not fetched: the site must work offline
                target = urllib.parse.urlunsplit(parts._replace(fragment=""))
                if parts.fragment:
                    anchors.append((url, target, urllib.parse.unquote(parts.fragment)))
                if target.endswith(".html") or target.endswith("/"):
                    if target.endswith("/"):
                        target += "index.html"
                    if target not in visited:
                        queue.append(target)
                elif target not in checked_files:
                    checked_files.add(target)
                    if not _exists(target):
                        problems.append(f"{url}: broken link to {target}")
        for page, target, fragment in anchors:
            if target.endswith("/"):
                target += "index.html"
            if target in visited and fragment not in visited[target]:
                problems.append(f"{page}: anchor #{fragment} missing in {target}")
    assert pages_seen >= 5 and images_seen >= 2 and reports >= 1, (pages_seen, images_seen, reports)
    assert not problems, f"{len(problems)} problem(s) over {pages_seen} pages:\n" + "\n".join(problems[:40])
    print(json.dumps({"pages": pages_seen, "images": images_seen, "reports": reports, "files": len(checked_files)}))


_LAYOUT = """
const view = document.documentElement.clientWidth;
const tables = Array.from(document.querySelectorAll('article table')).map(t => {
  const heads = Array.from(t.querySelectorAll('th')).map(h => h.textContent.trim());
  const cells = Array.from(t.querySelectorAll('th'));
  return {heads: heads, right: Math.max(...cells.map(c => c.getBoundingClientRect().right), 0),
          words: Array.from(t.querySelectorAll('th, td')).filter(c => !c.querySelector('code'))
                      .map(c => c.scrollWidth - c.clientWidth)};
});
return {view: view, tables: tables};
"""


def test_front_page_tables_show_the_paper_and_ours_columns_at_1280px(browser, site_html):  # noqa: F811
    """Issue 38: 4 of 5 results-index tables ran past the 742 px content column, hiding "paper" and "ours"."""
    from selenium.webdriver.support.ui import WebDriverWait

    browser.set_window_size(1280, 900)
    with serve(site_html) as base:
        browser.get(base + "/index.html")
        WebDriverWait(browser, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")
        state = browser.execute_script(_LAYOUT)
    wide = [t for t in state["tables"] if any(h.startswith("ours") for h in t["heads"])]
    assert wide, "no results table with an 'ours' column on the front page"
    for table in wide:
        assert table["right"] <= state["view"], (table["heads"], table["right"], state["view"])
        # no cell of plain words overflows its column (a word is broken only where it cannot fit)
        assert max(table["words"], default=0) <= 1, table["heads"]


_SIDEBAR = "return Array.from(document.querySelectorAll('.sidebar-tree a')).map(a => a.textContent.trim());"


def test_sidebar_names_every_page_differently(browser, site_html):  # noqa: F811
    """Issue 48: 30 of the sidebar's 399 links read "00 · Dataset check ..." without the dataset of the run."""
    from collections import Counter

    from selenium.webdriver.support.ui import WebDriverWait

    with serve(site_html) as base:
        browser.get(base + "/index.html")
        WebDriverWait(browser, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")
        titles = browser.execute_script(_SIDEBAR)
    assert len(titles) >= 5, titles
    repeated = {title: n for title, n in Counter(titles).items() if n > 1}
    assert not repeated, f"{len(repeated)} sidebar title(s) name several pages: {repeated}"


_SMALLEST_FIGURE_TEXT = """
const img = document.querySelector('figure.narrow img');
if (!img) { return null; }
return {shown: img.getBoundingClientRect().width, natural: img.naturalWidth};
"""


def test_report_card_heatmap_text_is_readable_at_1280px(browser, site_html):  # noqa: F811
    """Issue 38: the tests heatmap's cell text showed at about 5 px. Its smallest text is 9 pt at the figure's
    150 dpi (18.75 px of the PNG); shown at ``shown / natural`` of its size it must stay at least 9 px."""
    from selenium.webdriver.support.ui import WebDriverWait

    reports = sorted(site_html.rglob("report.html"))
    assert reports, "the site has no report card"
    browser.set_window_size(1280, 900)
    with serve(site_html) as base:
        browser.get(base + "/" + reports[0].relative_to(site_html).as_posix())
        WebDriverWait(browser, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")
        size = browser.execute_script(_SMALLEST_FIGURE_TEXT)
    assert size is not None, "the report card shows no tests heatmap"
    smallest_pt, dpi = 9, 150
    shown_px = smallest_pt / 72 * dpi * size["shown"] / size["natural"]
    assert shown_px >= 9, f"the heatmap's smallest text shows at {shown_px:.1f} px"
