"""JupyterLab as a reader uses it (issue 25 item 4): a double-click on a notebook source opens a notebook, which
runs and shows its figure and its conclusions; saving it without an edit keeps the source's bytes (its sha256),
and saving an edit keeps the source's parameters cell.

Headless Chromium from Debian driven by selenium through ``tests/browser.py`` (its ``fresh_browser`` fixture, and
``background_server`` for JupyterLab); skipped with a message when either is absent. JupyterLab runs on a free loopback port with a token, the settings that
``make setup`` installs (``jupyter/``) and throw-away user settings, on a copy of one notebook source in a
temporary folder. The notebook is ``00_dataset_check`` (its defaults are small: about 5 s of kernel time).
The JupyterLab server is started here and killed (with its kernels) in ``finally``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from browser import background_server, free_port, fresh_browser, skip_reason  # noqa: F401  (fresh_browser: fixture)

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "00_dataset_check.py"

if skip_reason():
    pytest.skip(f"JupyterLab browser test skipped: {skip_reason()}", allow_module_level=True)

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as ec  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture
def lab(tmp_path):
    """(url, token, root, log): JupyterLab serving a temporary folder that holds one notebook source."""
    root = tmp_path / "lab"
    (root / "notebooks").mkdir(parents=True)
    shutil.copy(ROOT / "notebooks" / NOTEBOOK, root / "notebooks" / NOTEBOOK)
    port, token = free_port(), "metaeval-test-token"
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "user-settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "lib"), os.environ.get("PYTHONPATH", "")) if p)}
    server_config = json.loads((ROOT / "jupyter/jupyter_server_config.d/metaeval.json").read_text())
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
           "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
           f"--LabApp.app_settings_dir={ROOT / 'jupyter/lab/settings'}", "--LabApp.expose_app_in_browser=True",
           f"--ContentsManager.pre_save_hook={server_config['ContentsManager']['pre_save_hook']}"]
    if os.geteuid() == 0:  # containers and CI runners often run as root, which jupyter refuses by default
        cmd.append("--allow-root")
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "lab.log"
    with background_server(cmd, ready_url=f"{url}/api/status?token={token}", log_path=log, env=env):
        yield url, token, root, log


def test_double_click_opens_runs_and_renders(lab, fresh_browser):  # noqa: F811
    url, token, root, log = lab
    browser = fresh_browser
    wait = WebDriverWait(browser, 240)
    original = hashlib.sha256((root / "notebooks" / NOTEBOOK).read_bytes()).hexdigest()
    browser.get(f"{url}/lab/tree/notebooks?token={token}")
    item = wait.until(ec.element_to_be_clickable(
        (By.XPATH, f"//li[contains(@class, 'jp-DirListing-item')][.//span[text()='{NOTEBOOK}']]")))
    ActionChains(browser).double_click(item).perform()
    # a notebook, not the text editor
    wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, ".jp-NotebookPanel .jp-Cell")))
    assert not browser.find_elements(By.CSS_SELECTOR, ".jp-FileEditor")
    wait.until(lambda d: d.execute_script(
        "const w = window.jupyterapp.shell.currentWidget;"
        "return w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel"
        " && w.sessionContext.session.kernel.connectionStatus === 'connected';"))
    browser.execute_script("window.jupyterapp.commands.execute('notebook:run-all-cells');")
    # a figure and the generated conclusions
    wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, ".jp-RenderedImage img")))
    wait.until(lambda d: any("systems × 100 inputs" in e.text
                             for e in d.find_elements(By.CSS_SELECTOR, ".jp-RenderedMarkdown")))
    errors = browser.find_elements(By.CSS_SELECTOR, "[data-mime-type='application/vnd.jupyter.error']")
    assert not errors, errors[0].text[:2000]

    # opened, run and saved (what autosave does) without an edit: the source keeps its bytes (issue 32 item 6)
    saved = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.jupyterapp.shell.currentWidget.context.save().then(() => done(true), e => done(String(e)));")
    assert saved is True, saved
    assert hashlib.sha256((root / "notebooks" / NOTEBOOK).read_bytes()).hexdigest() == original, \
        "JupyterLab rewrote a notebook source it did not edit"

    # an edited parameters cell, saved: the source on disk keeps its defaults, the other cells save as edited
    source = (root / "notebooks" / NOTEBOOK).read_text()
    browser.execute_script(
        "const nb = window.jupyterapp.shell.currentWidget.content;"
        "const cells = nb.model.cells;"
        "cells.get(0).sharedModel.setSource('dataset = \"realsumm\"  # changed');"
        "const last = cells.get(cells.length - 1); last.sharedModel.setSource(last.sharedModel.getSource() + '\\n');")
    browser.execute_script("window.jupyterapp.commands.execute('docmanager:save');")
    wait.until(lambda d: (root / "notebooks" / NOTEBOOK).read_text() != source)
    saved = (root / "notebooks" / NOTEBOOK).read_text()
    assert 'dataset = "summeval"' in saved and "realsumm\"  # changed" not in saved
    assert "the parameters cell was not saved" in log.read_text()
