"""Headless Chromium for the browser tests, shared by every test that opens a page.

Debian's ``chromium`` and ``chromedriver`` packages (``make browser-test`` installs them when run as root) are
driven through Selenium, pointed at ``/usr/bin/chromedriver`` explicitly so that Selenium Manager never tries to
download a driver. Without them, or without selenium, the tests that use the ``browser`` fixture are skipped
with a message that says what to install.

Use::

    from browser import browser, serve  # noqa: F401  (pytest fixtures)

    def test_page(browser, tmp_path):
        with serve(tmp_path) as url:
            browser.get(url + "/index.html")
            assert not console_errors(browser)
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
CHROMEDRIVER_CANDIDATES = ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver")
INSTALL_HINT = ("install Debian's chromium and chromium-driver (`make browser-test` does, as root: "
                "apt-get install chromium chromium-driver) and selenium (the `test` extra)")


def find_browser() -> tuple[str, str] | None:
    """(chromium, chromedriver) paths, from ``METAEVAL_CHROMIUM`` / ``METAEVAL_CHROMEDRIVER`` or the usual places."""
    chromium = os.environ.get("METAEVAL_CHROMIUM") or next(
        (p for p in CHROMIUM_CANDIDATES if Path(p).is_file()), None) or shutil.which("chromium")
    driver = os.environ.get("METAEVAL_CHROMEDRIVER") or next(
        (p for p in CHROMEDRIVER_CANDIDATES if Path(p).is_file()), None) or shutil.which("chromedriver")
    if chromium and driver and Path(chromium).is_file() and Path(driver).is_file():
        return chromium, driver
    return None


def skip_reason() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed: " + INSTALL_HINT
    if find_browser() is None:
        return "chromium / chromedriver not found: " + INSTALL_HINT
    return None


def make_driver(width: int = 1280, height: int = 900):
    """A headless Chromium WebDriver that records the browser console."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    found = find_browser()
    if found is None:
        raise RuntimeError(INSTALL_HINT)
    chromium, driver = found
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--window-size={width},{height}", "--disable-extensions", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit driver path: Selenium Manager (which would download a driver) is never consulted.
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)


@pytest.fixture(scope="session")
def browser():
    """A session-wide headless Chromium (skips the test with a message when it is not installed)."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    driver = make_driver()
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def fresh_browser():
    """A headless Chromium of the test's own (no state left by another test), 1400 x 1000; skips like ``browser``."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    driver = make_driver(1400, 1000)
    try:
        yield driver
    finally:
        driver.quit()


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def background_server(cmd: list[str], *, ready_url: str, log_path: str | os.PathLike, env: dict | None = None,
                      timeout: float = 120):
    """Start ``cmd`` (a server) in a session of its own, logging to ``log_path``; yield its process once
    ``ready_url`` answers; kill the process group (the server and its children, e.g. kernels) on exit.

    Fails the test with the log's tail when the server exits or does not answer within ``timeout`` seconds.
    """
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    urllib.request.urlopen(ready_url, timeout=5).read()
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        log.flush()
                        pytest.fail(f"{cmd[:3]} did not start: {Path(log_path).read_text()[-2000:]}")
                    time.sleep(0.5)
            yield proc
        finally:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def console_errors(driver) -> list[str]:
    """The browser console's errors (level SEVERE) since the last call."""
    return [entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


def printed_pages(driver) -> int:
    """How many A4 pages the current page prints on (Chromium's print to PDF; the page's own ``@page`` wins)."""
    import base64
    import re

    from selenium.webdriver.common.print_page_options import PrintOptions

    options = PrintOptions()
    options.page_width, options.page_height = 21.0, 29.7
    pdf = base64.b64decode(driver.print_page(options))
    return len(re.findall(rb"/Type\s*/Page[^s]", pdf))


_CELL_BOXES = """
return Array.from(document.querySelectorAll('td, th')).filter(c => c.textContent.trim()).map(cell => {
  const range = document.createRange();
  range.selectNodeContents(cell);
  const t = range.getBoundingClientRect(), c = cell.getBoundingClientRect();
  return {text: cell.textContent.trim().slice(0, 70), text_box: [t.left, t.top, t.right, t.bottom],
          cell_box: [c.left, c.top, c.right, c.bottom]};
});
"""


def cell_layout_problems(driver, tolerance: float = 1.0) -> list[str]:
    """Table cells of the current page whose text runs out of the cell, and pairs of cells whose text boxes
    overlap (text printed over text), in the layout the page has now (its width, screen or print media)."""
    boxes = driver.execute_script(_CELL_BOXES)
    problems = []
    for b in boxes:
        (left, top, right, bottom), (c_left, c_top, c_right, c_bottom) = b["text_box"], b["cell_box"]
        out = max(c_left - left, right - c_right, c_top - top, bottom - c_bottom)
        if out > tolerance:
            problems.append(f"text runs out of its cell by {out:.0f} px: {b['text']!r}")
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            width = min(a["text_box"][2], b["text_box"][2]) - max(a["text_box"][0], b["text_box"][0])
            height = min(a["text_box"][3], b["text_box"][3]) - max(a["text_box"][1], b["text_box"][1])
            if width > tolerance and height > tolerance:
                problems.append(f"text over text: {a['text']!r} and {b['text']!r}")
    return problems


@contextlib.contextmanager
def emulated(driver, width: int, media: str = "screen", height: int = 1123):
    """The page laid out at ``width`` CSS px for ``media`` (``"print"``: A4's 794 px at 96 dpi) while in the block."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": media})
    try:
        yield driver
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


@contextlib.contextmanager
def serve(folder: str | os.PathLike):
    """Serve ``folder`` over HTTP on a free localhost port for the duration of the block; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
