"""`judgekit reproduce` executes notebooks headless, renders HTML, collects PNGs, and reports failures."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from judgekit.cli import main
from judgekit.reproduce import find_notebooks, reproduce

PNG = b"\x89PNG\r\n\x1a\n"


def _notebook(path: Path, *cells: tuple[str, str]) -> None:
    nb = nbformat.v4.new_notebook(
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src)
                for kind, src in cells]
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def series(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("series")
    _notebook(
        folder / "00_charts.ipynb",
        ("md", "# 00 · Two charts\nText."),
        ("code", "import os, pandas as pd, judgekit as jk\njk.viz.setup()\n"
                 "print('smoke', os.environ.get('JUDGEKIT_SMOKE'))"),
        ("code", "card = pd.DataFrame({'judge': ['x', 'y'], 'acc_both': [0.7, 0.6]})\n"
                 "jk.viz.accuracy_bars(card, title='Accuracy of <x> & y')"),
        ("code", "jk.viz.bias_bars(card.rename(columns={'acc_both': 'position_bias'}))"),
        ("md", "## §4.3: the truncation attack"),
        ("code", "from tqdm.auto import tqdm\nfor _ in tqdm(range(40), desc='judging', unit='call'):\n    pass"),
        # a widget: the static page shows what it drew for its default settings
        ("code", "import ipywidgets as widgets\nfrom IPython.display import display\n"
                 "def show(n=2, who='x'):\n"
                 "    display(jk.viz.accuracy_bars(card.head(n), title=f'{n} judges, widget'))\n"
                 "    display(card.head(n).assign(shown_for=who))\n"
                 "widgets.interact(show, n=widgets.IntSlider(value=2, min=1, max=2),\n"
                 "                 who=widgets.Dropdown(options=['x', 'yy'], value='yy'));"),
        # a warning in a loop (notebook 05), and one from the cell itself
        ("code", "import numpy as np, warnings\n"
                 "d = pd.DataFrame({'x': np.arange(30.0), 'z': np.arange(30.0) ** 2})\n"
                 "d = d.assign(both=d.x + d.z, y=d.x + np.sin(d.z))\n"
                 "for _ in range(4):\n    jk.stepwise_ols(d, 'y', ['x', 'z', 'both'])\n"
                 "warnings.warn('from the cell itself')"),
        ("code", "jk.scoreboard.compare('dubois2024', {'win_rate': 3.738, 'lc_penalty': 13.6},\n"
                 "                      prefix='sec4.3/gpt4_gamed/', how='typed in a test', kind='recomputed',\n"
                 "                      reason={'lc_penalty': 'a <different> penalty'})"),
    )
    _notebook(
        folder / "01_broken.ipynb",
        ("md", "# 01 · Fails on purpose"),
        ("code", "1 / 0"),
        ("code", "print('never runs')"),
    )
    (folder / "notes.ipynb").write_text("{}")  # not numbered: ignored
    return folder


def test_find_notebooks_filters_and_explains(series: Path):
    assert [p.name for p in find_notebooks(series)] == ["00_charts.ipynb", "01_broken.ipynb"]
    assert [p.name for p in find_notebooks(series, only=["1"])] == ["01_broken.ipynb"]
    with pytest.raises(ValueError, match="no notebook numbered 07.*available: 00, 01"):
        find_notebooks(series, only=["07"])
    with pytest.raises(FileNotFoundError, match="source checkout"):
        find_notebooks(series / "missing")


def test_report_with_a_failing_notebook(series: Path, tmp_path: Path, capfd):
    out = tmp_path / "report"
    code = reproduce(out=out, smoke=True, notebooks=series, timeout=300)
    assert code == 1  # one notebook failed
    captured = capfd.readouterr()  # file-descriptor level: what kernels write lands here too
    printed = captured.out + captured.err
    assert "01_broken.ipynb ... failed" in printed and "ZeroDivisionError" in printed

    index = (out / "index.html").read_text()
    assert "ZeroDivisionError" in index and "Two charts" in index
    assert 'href="notebooks/00_charts.html"' in index and 'href="notebooks/01_broken.html"' in index
    gallery = (out / "figures.html").read_text()
    assert "Accuracy of &lt;x&gt; &amp; y" in gallery  # titles are escaped

    manifest = json.loads((out / "figures.json").read_text())
    assert [f["title"] for f in manifest] == ["Accuracy of <x> & y", "Position bias (PB)", "2 judges, widget"]
    for fig in manifest:
        png = (out / fig["png"]).read_bytes()
        assert png.startswith(PNG) and len(png) > 5_000
        assert f'src="{fig["png"]}"' in gallery

    # the first page is the scoreboard: published value from judgekit.published, judgekit's
    # from the executed notebook, linked to the notebook section that computed it
    board = pd.read_csv(out / "scoreboard.csv")
    assert board[["item", "published", "judgekit", "agrees"]].values.tolist() == [
        ["sec4.3/gpt4_gamed/win_rate", 3.7, 3.738, True],
        ["sec4.3/gpt4_gamed/lc_penalty", 12.2, 13.6, False]]
    assert board["reason"].fillna("").tolist() == ["", "a <different> penalty"]
    link = board["link"].iloc[0]
    page, anchor = link.split("#")
    assert page == "notebooks/00_charts.html" and f'id="{anchor}"' in (out / page).read_text()
    assert index.index("scoreboard") < index.index("<h2>Notebooks</h2>")
    assert "a &lt;different&gt; penalty" in index and "a <different>" not in index
    assert "Dubois, Galambosi, Liang, Hashimoto (2024)" in index

    html = (out / "notebooks" / "00_charts.html").read_text()
    assert html.count('src="data:image/png;base64') == 3  # every chart, static, in the page
    assert "smoke 1" in html  # the kernel ran in smoke mode
    # no progress bar in a static page (notebook 00's judging bar, the download bars)
    assert "judging:" not in html and "40/40" not in html and "\u2588" not in html
    # the widget is its default chart and table, under a line naming the settings
    assert "interactive(children" not in html
    assert "shown here as drawn for n = 2, who = yy." in html and "<td>yy</td>" in html
    # a warning repeated in a loop is shown once, and names the cell's line, not a /tmp file
    assert html.count("are exact linear combinations") == 1 and "ipykernel_" not in html
    assert "line 6 of this cell: UserWarning: from the cell itself" in html
    # the kernels' own log lines stay out of the terminal
    assert "WARNING" not in printed and "Kernel is running" not in printed
    assert (out / "logs" / "00_charts.log").is_file()
    executed = nbformat.read(out / "notebooks" / "01_broken.ipynb", as_version=4)
    assert executed.cells[1].outputs[0]["ename"] == "ZeroDivisionError"
    assert not executed.cells[2].get("outputs")  # execution stopped at the error


def test_only_some_notebooks_keeps_the_others_in_the_index(series: Path, tmp_path: Path):
    out = tmp_path / "report"
    assert reproduce(out=out, smoke=True, notebooks=series, timeout=300) == 1
    first = (out / "index.html").read_text()
    assert reproduce(out=out, smoke=True, notebooks=series, only=["01"], timeout=300) == 1
    index = (out / "index.html").read_text()
    assert "00_charts.ipynb" in index and "01_broken.ipynb" in index  # 00 kept its entry
    assert "2 notebooks" in index and first.count("<tr>") == index.count("<tr>")
    assert len(pd.read_csv(out / "scoreboard.csv")) == 2  # 00's numbers are still on the board
    assert len(json.loads((out / "figures.json").read_text())) == 3


def test_cli_reports_unknown_notebook_numbers(capsys):
    assert main(["reproduce", "--only", "98", "--out", "unused"]) == 2
    assert "no notebook numbered 98" in capsys.readouterr().err
