"""`judgekit audit` on a mirrored AlpacaEval annotations.json, end to end: under a minute, raw and
LC win rates equal jk.lc_win_rates on the same data, and the page opens in headless Chromium with
no console error, every chart loaded and a screenshot that shows them.

Drives Debian's chromium with Playwright (never a downloaded browser), as
tests/viz/test_browser_explorer.py does.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from _browser import CHROMIUM, FLAGS, NEEDS_CHROMIUM

import judgekit as jk

MIRROR = Path(os.environ["JUDGEKIT_DATA_MIRROR"]) if os.environ.get("JUDGEKIT_DATA_MIRROR") else None

pytestmark = [
    *NEEDS_CHROMIUM,
    pytest.mark.skipif(MIRROR is None or not MIRROR.is_dir(), reason="needs the data mirror"),
]


def test_the_alpacaeval_report_opens_cleanly_in_chromium(tmp_path):
    (annotations,) = (MIRROR / "github" / "tatsu-lab" / "alpaca_eval").glob(
        "*/results/vicuna-7b/weighted_alpaca_eval_gpt4_turbo/annotations.json*")
    out = tmp_path / "report"
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "judgekit.cli", "audit", str(annotations), "--out",
                          str(out)], capture_output=True, text=True, timeout=300)
    elapsed = time.perf_counter() - start
    assert run.returncode == 0, run.stderr
    assert elapsed < 60, f"judgekit audit took {elapsed:.0f} s"
    assert run.stdout.count("\n") == 1 and "(alpacaeval): 1 judge, 805 pairs" in run.stdout
    assert "as alpacaeval (the file is named annotations.json)" in run.stderr

    # the report's win rates are jk.lc_win_rates on the same data (defaults, seed 0)
    pairs, judgments = jk.read_alpacaeval(annotations)
    want = jk.lc_win_rates(judgments, pairs).set_index("model")
    got = pd.read_csv(out / "tables" / "win_rates-lc_win_rates.csv").set_index("model")
    for column in ("win_rate", "lc_win_rate", "lc_ci_low", "lc_ci_high"):
        pd.testing.assert_series_equal(got[column], want.loc[got.index, column], check_names=False,
                                       rtol=1e-9)
    assert got.loc["vicuna-7b", "lc_win_rate"] != pytest.approx(got.loc["vicuna-7b", "win_rate"])

    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            problems: list[str] = []
            page.on("console", lambda m: problems.append(f"{m.type}: {m.text}")
                    if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
            page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
            page.goto((out / "index.html").as_uri(), wait_until="load", timeout=60_000)
            images = page.evaluate(
                "() => Array.from(document.images).map(i => [i.getAttribute('src'), i.complete, i.naturalWidth])")
            assert len(images) == len(list((out / "charts").glob("*.png"))) >= 2
            assert all(done and width > 100 for _, done, width in images), images
            assert page.evaluate("() => document.scripts.length") == 0
            text = page.inner_text("body")
            assert "Summary" in text and "Not measured" in text and "vicuna-7b" in text
            assert "Position consistency and preference fairness" in text
            shot = page.screenshot(full_page=True)
            if os.environ.get("JUDGEKIT_BROWSER_SHOT"):  # a picture for humans, when asked
                Path(os.environ["JUDGEKIT_BROWSER_SHOT"]).write_bytes(shot)
        finally:
            browser.close()
    assert not problems, problems

    Image = pytest.importorskip("PIL.Image")
    picture = Image.open(io.BytesIO(shot)).convert("RGB")
    width, height = picture.size
    assert width == 1200 and height > 1500  # the whole report, not an empty page
    # the charts are drawn: the blue bars / lines of the judgekit palette are on the page
    colours = picture.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50
    blue = sum(n for n, (r, g, b) in colours if b > 150 and r < 60 and 90 < g < 140)
    assert blue > 500, f"only {blue} pixels of the chart blue"
