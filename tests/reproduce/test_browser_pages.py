"""Pages judgekit writes, opened in headless Chromium: exported charts and the reproduction report.

Debian's chromium is driven through Playwright (never a downloaded browser). Each page is loaded
from a file URL with the network cut off; console errors, page errors and dialogs are collected
and must be absent, and the page must show what it promises.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from _browser import CHROMIUM, FLAGS, NEEDS_CHROMIUM

import judgekit as jk

pytestmark = NEEDS_CHROMIUM

#: Names a shared table could carry: each tries to leave the script block or the markup and run code.
HOSTILE = [
    "</script><img src=x onerror=\"window.__pwned=1;document.title='PWNED'\">",
    "<!--<script>window.__pwned=2</script>",
    "</SCRIPT ><svg onload=window.__pwned=3>",
    "judge & co \"quoted\" 'single'",
]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()


def open_page(browser, path: Path):
    """Open a local file with no network; return the page and the problems it reported."""
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    context.route("http*://**", lambda route: route.abort())  # offline: the page must not need it
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.goto(path.resolve().as_uri(), wait_until="load")
    return page, problems


def test_exported_html_chart_shows_hostile_names_and_runs_none(browser, tmp_path):
    card = pd.DataFrame({"judge": HOSTILE, "acc_both": [0.8, 0.7, 0.6, 0.5],
                         "acc_both_ci_low": [0.75, 0.65, 0.55, 0.45],
                         "acc_both_ci_high": [0.85, 0.75, 0.65, 0.55]})
    out = jk.viz.save_chart(jk.viz.accuracy_bars(card, "acc_both", title="</title><b>t</b>"),
                            tmp_path / "chart.html")
    text = out.read_text(encoding="utf-8")
    assert text.lower().count("</script") == 2  # the library's and the chart's, nothing injected
    page, problems = open_page(browser, out)
    page.locator("#vega-chart svg").wait_for(state="visible", timeout=30_000)
    drawn = page.locator("#vega-chart svg").text_content()
    for name in HOSTILE:  # every name is drawn as text ...
        assert name[:12] in drawn
    assert page.evaluate("() => window.__pwned") is None  # ... and none of them ran
    assert page.title() == "</title><b>t</b>"
    assert page.locator("img, svg[onload]").count() == 0
    assert not problems, problems


def test_report_first_page_is_the_scoreboard_and_opens_cleanly(browser, tmp_path):
    """A report from a one-notebook series: scoreboard first, links into the notebook's sections."""
    import nbformat

    from judgekit.reproduce import reproduce

    series = tmp_path / "series"
    series.mkdir()
    nb = nbformat.v4.new_notebook(
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [
        nbformat.v4.new_markdown_cell("# 07 · Win rates"),
        nbformat.v4.new_markdown_cell("## §4.3: truncation & the “penalty”"),
        nbformat.v4.new_code_cell(
            "import judgekit as jk\njk.viz.setup()\n"
            "jk.scoreboard.compare('dubois2024', {'win_rate': 3.74, 'lc_penalty': 13.59},\n"
            "    prefix='sec4.3/gpt4_gamed/', how='</script><b>how</b>', reason='<i>why</i>',\n"
            "    kind='recomputed')"),
        nbformat.v4.new_code_cell(
            "import pandas as pd\njk.viz.accuracy_bars(pd.DataFrame({'judge': ['x'], 'acc_both': [0.7]}))"),
    ]
    nbformat.write(nb, series / "07_winrates.ipynb")
    out = tmp_path / "report"
    assert reproduce(out=out, smoke=True, notebooks=series, timeout=300) == 0

    page, problems = open_page(browser, out / "index.html")
    first_table = page.locator("table").first
    assert "scoreboard" in (first_table.get_attribute("class") or "")
    text = first_table.inner_text()
    assert "Dubois, Galambosi, Liang, Hashimoto (2024)" in text and "</script><b>how</b>" in text
    assert "<i>why</i>" in text and page.locator("table.scoreboard i, table.scoreboard b").count() == 0
    rows = page.locator("table.scoreboard tr.row")
    assert rows.count() == 2 and "agrees" in rows.nth(0).inner_text() and "differs" in rows.nth(1).inner_text()
    link = rows.nth(0).locator("a").get_attribute("href")
    page.goto((out / link.split("#")[0]).resolve().as_uri() + "#" + link.split("#")[1])
    assert page.locator(f"[id='{link.split('#')[1]}']").count() == 1  # the section exists
    assert not problems, problems

    gallery, problems = open_page(browser, out / "figures.html")
    assert gallery.locator("figure img").count() == 1
    assert gallery.evaluate("() => [...document.images].every(i => i.complete && i.naturalWidth > 0)")
    assert not problems, problems
