"""The explorer notebook, opened in JupyterLab in headless Chromium: changing a dropdown redraws the chart.

Starts a real JupyterLab server on loopback (its own token, settings and workspace folders in a
temporary directory), drives Debian's chromium with Playwright (never a downloaded browser), runs
the notebook in the page, and compares the chart's rendered SVG before and after a selection.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from _browser import CHROMIUM, FLAGS, NEEDS_CHROMIUM

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "09_judge_explorer.ipynb"

pytestmark = NEEDS_CHROMIUM


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def lab(tmp_path: Path):
    """A JupyterLab server on loopback serving a copy of the explorer notebook."""
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(NOTEBOOK, root / NOTEBOOK.name)  # the server may autosave: never touch the original
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ)
    for var, sub in (("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_CONFIG_DIR", "config"),
                     ("IPYTHONDIR", "ipython")):
        env[var] = str(tmp_path / sub)
    log = (tmp_path / "lab.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
         f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
         f"--LabApp.user_settings_dir={tmp_path / 'settings'}", "--LabApp.news_url=",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited: {(tmp_path / 'lab.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("jupyter lab did not answer within 90 s")
            time.sleep(0.5)
        yield f"{base}/lab/tree/{NOTEBOOK.name}?token={token}", tmp_path / "lab.log"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # the server and the kernels it started
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        log.close()


CHART_SVG = ".jk-explorer .jk-chart svg.marks"


def test_dropdown_changes_the_chart(lab):
    from playwright.sync_api import sync_playwright

    url, log_path = lab
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            # the widget manager reports failed state updates on the console, not as page errors
            page.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None)
            page.goto(url, wait_until="domcontentloaded", timeout=90_000)
            page.wait_for_function(
                "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                " && window.jupyterapp.shell.currentWidget.sessionContext"
                " && window.jupyterapp.shell.currentWidget.sessionContext.session"
                " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel",
                timeout=90_000)
            page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.ready")
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            chart = page.locator(CHART_SVG).first
            chart.wait_for(state="visible", timeout=150_000)
            before = chart.inner_html()
            assert "LLMBar · Natural" in chart.text_content()  # drawn from the notebook's data
            assert "Position bias (PB)" not in chart.text_content()

            page.select_option(".jk-explorer .jk-metric select", label="Position bias (PB)")
            page.wait_for_function(
                """([sel, old]) => { const s = document.querySelector(sel);
                                     return s && s.innerHTML !== old; }""",
                arg=[CHART_SVG, before], timeout=60_000)
            after = page.locator(CHART_SVG).first.inner_html()
            assert after != before
            text = page.locator(CHART_SVG).first.text_content()
            assert "Position bias (PB)" in text and "LLMBar · Natural" in text
            # the pair viewer is live too: it shows a pair with its verdicts
            assert "human label" in page.locator(".jk-explorer .jk-pair-view").first.inner_text()

            # switching datasets replaces every list (judges, templates, metrics, pairs) at once:
            # the front end must apply each new selection to the new options, without errors
            for name in ("Judging the Judges · MTBench (3 repeats)", "LLMBar · Adversarial/Neighbor"):
                page.select_option(".jk-explorer .jk-dataset select", label=name)
                page.wait_for_function(
                    "([sel, name]) => { const s = document.querySelector(sel);"
                    " return s && s.textContent.includes(name); }",
                    arg=[CHART_SVG, name], timeout=120_000)
                page.wait_for_timeout(1500)  # late state messages would log their errors now
            # LLMBar asks each question once: the flip estimators cannot change it, and say so
            assert page.locator(".jk-explorer .jk-estimator select option").count() == 2
            assert "one call per pair and order" in page.locator(".jk-estimator-note").first.inner_text()
            assert not errors, errors
            if os.environ.get("JUDGEKIT_BROWSER_SHOT"):  # a picture for humans, when asked
                page.locator(".jk-explorer").first.screenshot(path=os.environ["JUDGEKIT_BROWSER_SHOT"])
        except Exception:
            shot = log_path.parent / "page.png"
            page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot: {shot}\nlab log tail:\n{log_path.read_text()[-3000:]}")
            raise
        finally:
            browser.close()
