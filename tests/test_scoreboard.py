"""The reproduction scoreboard and the published tables it reads.

The published values are checked against the papers' own text where the papers are at hand
(development and CI machines keep plain-text copies beside the checkout); the scoreboard is
checked on notebooks built here, through nbconvert's own heading anchors.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import nbformat
import pandas as pd
import pytest

import judgekit as jk
from judgekit.published import PAPERS

PAPERS_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "papers"
TABLES = Path(__file__).resolve().parent.parent / "judgekit" / "published"
PAPER_FILES = {"wei2024": "000_", "li2024": "001_", "dubois2024": "002_", "ye2024": "004_"}


@pytest.mark.parametrize("paper", sorted(PAPER_FILES))
def test_published_tables_are_typed_as_printed(paper):
    table = jk.published(paper)
    assert len(table) > 0 and table["item"].is_unique
    raw = pd.read_csv(TABLES / f"{paper}.csv", dtype=str, keep_default_na=False)
    for value, decimals in zip(raw["value"], raw["decimals"]):
        printed = value.split(".")[1] if "." in value else ""
        assert len(printed) == int(decimals), (paper, value, decimals)  # the precision printed
    assert set(table["source"].str.len()) and (table["source"] != "").all()


@pytest.mark.skipif(not PAPERS_DIR.is_dir(), reason="the papers' text copies are not beside the checkout")
@pytest.mark.parametrize("paper", ["wei2024", "li2024", "dubois2024"])
def test_published_values_appear_in_the_paper(paper):
    """Every number of the tables of Wei, Li and Dubois et al. is in the paper's text as printed."""
    text = next(PAPERS_DIR.glob(PAPER_FILES[paper] + "*.txt")).read_text(encoding="utf-8")
    numbers = set(re.findall(r"-?\d+(?:\.\d+)?", text.replace(",", "")))
    raw = pd.read_csv(TABLES / f"{paper}.csv", dtype=str, keep_default_na=False)
    missing = [(i, v) for i, v in zip(raw["item"], raw["value"])
               if v not in numbers and v.lstrip("-") not in numbers and not i.startswith("sec6/")]
    assert not missing, missing[:10]


def test_compare_agrees_within_the_printed_precision_and_explains_the_rest():
    c = jk.scoreboard.compare(
        "dubois2024", {"win_rate": 3.7499, "lc_penalty": 13.59, "lc_no_penalty": 28.47},
        prefix="sec4.3/gpt4_gamed/", how="test",
        reason={"lc_penalty": "a different penalty"})
    t = c.table.set_index("item")
    assert t.loc["sec4.3/gpt4_gamed/win_rate", "agrees"]  # 3.7499 prints as 3.7
    assert t.loc["sec4.3/gpt4_gamed/win_rate", "tolerance"] == pytest.approx(0.05)
    assert not t.loc["sec4.3/gpt4_gamed/lc_penalty", "agrees"]
    assert t.loc["sec4.3/gpt4_gamed/lc_penalty", "difference"] == pytest.approx(13.59 - 12.2)
    assert t.loc["sec4.3/gpt4_gamed/lc_penalty", "reason"] == "a different penalty"
    assert t.loc["sec4.3/gpt4_gamed/lc_no_penalty", "reason"] == "unexplained"  # never silently fine
    data, meta = c._repr_mimebundle_()
    assert "2 agree" not in data["text/html"] and "1 agree" in data["text/html"]
    assert [r["item"] for r in meta["judgekit_scoreboard"]] == list(t.index)


def test_compare_refuses_unknown_items_unless_told_to_skip():
    with pytest.raises(ValueError, match=r"dubois2024.csv has no item\(s\) \['fig4/nobody/win_rate'\]"):
        jk.scoreboard.compare("dubois2024", {"nobody/win_rate": 1.0}, prefix="fig4/", how="t")
    c = jk.scoreboard.compare("dubois2024", {"nobody/win_rate": 1.0, "claude-2/win_rate": 17.19},
                              prefix="fig4/", how="t", missing="skip")
    assert c.skipped == ["nobody/win_rate"] and c.table["item"].tolist() == ["fig4/claude-2/win_rate"]
    with pytest.raises(ValueError, match="unknown paper"):
        jk.scoreboard.compare("nobody2024", {}, how="t")


def test_a_paper_without_a_table_yet_is_skipped_not_an_error():
    """shi2024.csv comes from another branch: until it exists, notebook 05 still runs."""
    c = jk.scoreboard.compare("shi2024", {"table2/mtbench/gpt-4-0613/pc": 0.815}, how="t", missing="skip")
    assert len(c.table) + len(c.skipped) == 1


def _executed(path: Path, heading: str) -> None:
    nb = nbformat.v4.new_notebook()
    c = jk.scoreboard.compare("dubois2024", {"win_rate": 3.74}, prefix="sec4.3/gpt4_gamed/", how="t")
    q = jk.scoreboard.quote("li2024", ["table3/chatgpt/fleiss_kappa/raw"], reason="not public")
    cells = [nbformat.v4.new_markdown_cell("# 07 · Title"), nbformat.v4.new_markdown_cell(heading)]
    for comparison in (c, q):
        data, meta = comparison._repr_mimebundle_()
        cell = nbformat.v4.new_code_cell("...")
        cell.outputs = [nbformat.v4.new_output("display_data", data=data, metadata=meta)]
        cells.append(cell)
    nb.cells = cells
    nbformat.write(nb, path)


def test_build_links_each_number_to_the_section_nbconvert_renders(tmp_path):
    from nbconvert import HTMLExporter

    path = tmp_path / "07_winrates.ipynb"
    _executed(path, "## §4.3: truncation attack & the penalty on φ")
    board = jk.scoreboard.build([path], {"07_winrates": "notebooks/07_winrates.html"})
    assert board["paper"].tolist() == ["li2024", "dubois2024"]  # in the order of PAPERS
    assert list(PAPERS).index("li2024") < list(PAPERS).index("dubois2024")
    row = board.set_index("item").loc["sec4.3/gpt4_gamed/win_rate"]
    assert row["section"] == "§4.3: truncation attack & the penalty on φ"
    page, anchor = row["link"].split("#")
    assert page == "notebooks/07_winrates.html"
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nbformat.read(path, as_version=4))
    assert f'id="{html.escape(anchor)}"' in body  # the link lands on the heading
    page_html = jk.scoreboard.render_html(board)
    assert "1 published numbers recomputed" in page_html and "not recomputed" in page_html
    out = jk.scoreboard.save(board, tmp_path / "board.csv")
    assert pd.read_csv(out)["item"].tolist() == board["item"].tolist()
