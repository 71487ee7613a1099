"""`judgekit reproduce` reads back what an earlier run left in the report folder (runs.json and the
executed notebooks it lists); that folder may be damaged, or prepared by someone else (issue 21,
n11, n13). What it reads is escaped, a damaged entry is named on the page instead of stopping it,
the pages forbid scripts, and no file is written through a link."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pandas as pd
import pytest

import judgekit as jk
from judgekit.exceptions import OutputPathError
from judgekit.reproduce import _write_report, reproduce

STATUS = 'ok" onmouseover="alert(document.domain)'
CSP = "<meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'none'; object-src 'none'\">"


def _entry(name: str, **fields) -> dict:
    stem = name.removesuffix(".ipynb")
    return {"notebook": name, "title": stem, "status": "ok", "seconds": 1.5, "error": "",
            "html": f"notebooks/{stem}.html", "ipynb": f"notebooks/{stem}.ipynb", "smoke": True,
            "figures": [], **fields}


def _executed(path: Path, title: str = "# 05 · Scoreboard") -> None:
    """An executed notebook that recorded one published number (as the series' notebooks do)."""
    nb = nbformat.v4.new_notebook()
    c = jk.scoreboard.compare("dubois2024", {"win_rate": 3.74}, prefix="sec4.3/gpt4_gamed/", how="t",
                                  kind="recomputed")
    data, meta = c._repr_mimebundle_()
    cell = nbformat.v4.new_code_cell("...")
    cell.outputs = [nbformat.v4.new_output("display_data", data=data, metadata=meta)]
    nb.cells = [nbformat.v4.new_markdown_cell(title), cell]
    nbformat.write(nb, path)


def _folder(tmp_path: Path, entries: list | str, notebooks: dict[str, str | None]) -> Path:
    """A report folder as an earlier run (or someone else) left it."""
    out = tmp_path / "report"
    (out / "notebooks").mkdir(parents=True)
    for name, text in notebooks.items():
        if text is None:
            _executed(out / "notebooks" / name)
        else:
            (out / "notebooks" / name).write_text(text, encoding="utf-8")
    (out / "runs.json").write_text(entries if isinstance(entries, str) else json.dumps(entries),
                                   encoding="utf-8")
    return out


def test_what_runs_json_says_is_escaped_and_the_pages_forbid_scripts(tmp_path):
    """n11: a status from runs.json was written raw into a class attribute of index.html."""
    figure = {"index": 1, "title": "<img src=x onerror=alert(2)>", "png": "figures/01_other/fig-01-x.png"}
    out = _folder(tmp_path, [_entry("01_other.ipynb", status=STATUS, title="<script>alert(1)</script>",
                                    error="</div><img src=x onerror=alert(3)>", figures=[figure])],
                  {"01_other.ipynb": None})
    (out / "figures" / "01_other").mkdir(parents=True)
    (out / "figures" / "01_other" / "fig-01-x.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    index = _write_report(out, [], seconds=0).read_text(encoding="utf-8")
    figures = (out / "figures.html").read_text(encoding="utf-8")
    for page in (index, figures):
        assert page.count(CSP) == 1
        assert "<script" not in page and "<img src=x" not in page and 'onmouseover="' not in page
    assert "ok&quot; onmouseover=&quot;alert(document.domain)" in index
    assert '<span class="na">' in index                            # an unknown status: no style
    assert "&lt;img src=x onerror=alert(2)&gt;" in figures
    assert "sec4.3/gpt4_gamed/win_rate" in index                   # the notebook is still read


@pytest.mark.parametrize(("text", "why"), [
    (None, ""),                                                    # a good one beside them
    ('{\n "cells": [\n  {\n   "cell_type": "mark', "not valid JSON"),
    ("not json at all", "not valid JSON"),
    ("[" * 100_000, "JSON nested too deeply"),
    ('{"cells": 5, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}', ""),
    ('{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code", '
     '"id": "a", "metadata": {}, "source": "", "execution_count": 1, "outputs": [{"output_type": '
     '"display_data", "data": {}, "metadata": {"judgekit_scoreboard": ["not a record"]}}]}]}', ""),
])
def test_a_damaged_notebook_is_named_and_the_index_still_written(tmp_path, text, why):
    """n13: a truncated notebook listed in runs.json stopped reproduce before index.html."""
    names = {"05_good.ipynb": None}
    if text is not None:
        names["06_damaged.ipynb"] = text
    out = _folder(tmp_path, [_entry(n) for n in names], names)
    index = _write_report(out, [], seconds=0).read_text(encoding="utf-8")
    assert "05_good.ipynb" in index and "sec4.3/gpt4_gamed/win_rate" in index
    assert pd.read_csv(out / "scoreboard.csv")["item"].tolist() == ["sec4.3/gpt4_gamed/win_rate"]
    if text is not None:
        assert "notebooks/06_damaged.ipynb could not be read for the scoreboard" in index
        assert why in index


@pytest.mark.parametrize(("entries", "said"), [
    ('[{"notebook": "05_good.ipynb", "title": "cut off', "runs.json could not be read"),
    ("[" * 100_000, "runs.json could not be read"),
    ('{"notebook": "05_good.ipynb"}', "runs.json could not be read: expected a list"),
    ([_entry("05_good.ipynb"), "not an entry"], "entry 2 of runs.json could not be read"),
    ([_entry("05_good.ipynb"), _entry("../../../etc/passwd")], "entry 2 of runs.json could not be read"),
    ([_entry("05_good.ipynb"), _entry("06_x.ipynb", seconds="soon")], "entry 2 of runs.json"),
    ([_entry("05_good.ipynb"), _entry("06_x.ipynb", figures=[{"index": "<b>1</b>", "title": "t",
                                                             "png": "figures/06_x/fig-01-t.png"}])],
     "entry 2 of runs.json"),
])
def test_a_damaged_runs_json_is_named_and_the_index_still_written(tmp_path, entries, said):
    out = _folder(tmp_path, entries, {"05_good.ipynb": None, "06_x.ipynb": None})
    index = _write_report(out, [], seconds=0).read_text(encoding="utf-8")
    assert said in index and "<b>1</b>" not in index
    assert 'href="../' not in index and 'href="/' not in index
    listed = json.loads((out / "runs.json").read_text())         # rewritten with what was read
    assert all(e["notebook"] in ("05_good.ipynb", "06_x.ipynb") for e in listed)


def test_paths_in_runs_json_are_not_followed(tmp_path):
    """Links in an entry are recomputed from the notebook's name, never taken from the file."""
    out = _folder(tmp_path, [_entry("05_good.ipynb", html="/etc/passwd", ipynb="../../secret.ipynb")],
                  {"05_good.ipynb": None})
    index = _write_report(out, [], seconds=0).read_text(encoding="utf-8")
    assert 'href="notebooks/05_good.html"' in index and "passwd" not in index and "secret" not in index


def test_the_index_replaces_a_link_and_refuses_a_linked_folder(tmp_path):
    out = _folder(tmp_path, [_entry("05_good.ipynb")], {"05_good.ipynb": None})
    mine = tmp_path / "mine.html"
    mine.write_text("the user's page")
    (out / "index.html").symlink_to(mine)
    page = _write_report(out, [], seconds=0)
    assert mine.read_text() == "the user's page" and not page.is_symlink()
    photos = tmp_path / "photos"
    photos.mkdir()
    (photos / "fig-01-x.png").write_bytes(b"mine")
    (out / "figures").rmdir()
    (out / "figures").symlink_to(photos, target_is_directory=True)
    with pytest.raises(OutputPathError, match="figures is a symbolic link"):
        _write_report(out, [], seconds=0)
    assert (photos / "fig-01-x.png").read_bytes() == b"mine"


def test_reproduce_refuses_a_linked_folder_before_running_anything(tmp_path, capsys):
    series = tmp_path / "series"
    series.mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 / 0")]),
                   series / "00_x.ipynb")
    out = tmp_path / "report"
    out.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (out / "logs").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert reproduce(out=out, notebooks=series) == 2
    assert f"{out / 'logs'} is a symbolic link" in capsys.readouterr().err
    assert not list((tmp_path / "elsewhere").iterdir()) and not (out / "index.html").exists()


def test_end_to_end_over_a_hostile_report_folder(tmp_path, capfd):
    """One real run (a kernel executes one small notebook) into a folder holding a hostile entry
    and a truncated notebook: exit 0, the index written, escaped, naming the damaged file."""
    series = tmp_path / "series"
    series.mkdir()
    nb = nbformat.v4.new_notebook(
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [nbformat.v4.new_markdown_cell("# 00 · Tiny"), nbformat.v4.new_code_cell("1 + 1")]
    nbformat.write(nb, series / "00_tiny.ipynb")
    out = _folder(tmp_path, [_entry("01_other.ipynb", status=STATUS)],
                  {"01_other.ipynb": '{\n "cells": [\n  {\n   "cell_type": "mark'})
    assert reproduce(out=out, notebooks=series, timeout=120) == 0
    printed = capfd.readouterr()
    assert "Traceback" not in printed.err
    index = (out / "index.html").read_text(encoding="utf-8")
    assert STATUS not in index and "ok&quot; onmouseover=" in index and CSP in index
    assert "notebooks/01_other.ipynb could not be read for the scoreboard" in index
    assert "00_tiny.ipynb" in index and (out / "notebooks" / "00_tiny.html").is_file()


def test_the_report_pages_carry_the_audit_pages_policy():
    pairs, judgments, _ = jk.sim.simulate_judgments(30, seed=2)
    audit_page = jk.audit(judgments, pairs, n_boot=0, lc_boot=0).to_html(standalone=True)
    assert CSP in audit_page  # the same policy, written the same way, on both kinds of page
