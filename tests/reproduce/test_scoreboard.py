"""The reproduction scoreboard and the published tables it reads.

The published values are checked against the papers' own text where the papers are at hand
(development and CI machines keep plain-text copies beside the checkout); the scoreboard is
checked on notebooks built here, through nbconvert's own heading anchors.
"""

from __future__ import annotations

import ast
import html
import re
from pathlib import Path

import nbformat
import pandas as pd
import pytest

import judgekit as jk
from judgekit.published import PAPERS

PAPERS_DIR = Path(__file__).resolve().parents[3] / "shared" / "papers"
TABLES = Path(__file__).resolve().parents[2] / "judgekit" / "published"
PAPER_FILES = {"wei2024": "000_", "li2024": "001_", "dubois2024": "002_", "ye2024": "004_"}
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.parametrize("paper", sorted([*PAPER_FILES, "zeng2024"]))
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
        prefix="sec4.3/gpt4_gamed/", how="test", kind="recomputed",
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
    assert t["kind"].eq("recomputed").all()
    assert [r["item"] for r in meta["judgekit_scoreboard"]] == list(t.index)


def test_compare_refuses_unknown_items_unless_told_to_skip():
    with pytest.raises(ValueError, match=r"dubois2024.csv has no item\(s\) \['fig4/nobody/win_rate'\]"):
        jk.scoreboard.compare("dubois2024", {"nobody/win_rate": 1.0}, prefix="fig4/", how="t",
                              kind="recomputed")
    c = jk.scoreboard.compare("dubois2024", {"nobody/win_rate": 1.0, "claude-2/win_rate": 17.19},
                              prefix="fig4/", how="t", missing="skip", kind="recomputed")
    assert c.skipped == ["nobody/win_rate"] and c.table["item"].tolist() == ["fig4/claude-2/win_rate"]
    with pytest.raises(ValueError, match="unknown paper"):
        jk.scoreboard.compare("nobody2024", {}, how="t", kind="recomputed")


def test_a_paper_without_a_table_yet_is_skipped_not_an_error():
    """shi2024.csv comes from another branch: until it exists, notebook 05 still runs."""
    c = jk.scoreboard.compare("shi2024", {"table2/mtbench/gpt-4-0613/pc": 0.815}, how="t",
                              missing="skip", kind="recomputed")
    assert len(c.table) + len(c.skipped) == 1


def _executed(path: Path, heading: str) -> None:
    nb = nbformat.v4.new_notebook()
    c = jk.scoreboard.compare("dubois2024", {"win_rate": 3.74}, prefix="sec4.3/gpt4_gamed/", how="t",
                              kind="recomputed")
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
    assert "1 recomputed from released data: 1 agree" in page_html
    assert "1 cannot be reproduced from public data" in page_html and "not reproducible" in page_html
    out = jk.scoreboard.save(board, tmp_path / "board.csv")
    assert pd.read_csv(out)["item"].tolist() == board["item"].tolist()


# ------------------------------------------------------------------ kinds: what a row can show
def _mixed_board(tmp_path: Path) -> pd.DataFrame:
    """A notebook with rows of every kind, as reproduce builds the scoreboard from it."""
    nb = nbformat.v4.new_notebook()
    comparisons = [
        jk.scoreboard.compare("dubois2024", {"claude-2/win_rate": 17.19, "claude-2/lc_win_rate": 29.2},
                              prefix="fig4/", how="t", kind="recomputed", reason="a reason"),
        jk.scoreboard.compare("dubois2024", {"win_rate": 50.0, "lc_win_rate": 50.0},
                              prefix="fig4/gpt4_1106_preview/", how="t", kind="by construction",
                              reason="the baseline's win rate is 50 by definition"),
        jk.scoreboard.compare("dubois2024", {"lb_win_rate/gameability": 41.7},
                              prefix="fig6/", how="t", kind="not reproducible",
                              reason="needs the variants' annotations"),
        jk.scoreboard.compare("wei2024", {"sim/q0.2/acc": 0.85}, how="t", kind="simulation",
                              reference={"sim/q0.2/acc": 0.846}, source="simulated judge",
                              tolerance=0.02, reason="true accuracy of the simulated judge"),
        jk.scoreboard.quote("li2024", ["table3/chatgpt/fleiss_kappa/raw"], reason="not public"),
    ]
    cells = [nbformat.v4.new_markdown_cell("# 07 · Title")]
    for c in comparisons:
        data, meta = c._repr_mimebundle_()
        cell = nbformat.v4.new_code_cell("...")
        cell.outputs = [nbformat.v4.new_output("display_data", data=data, metadata=meta)]
        cells.append(cell)
    nb.cells = cells
    nbformat.write(nb, tmp_path / "07_x.ipynb")
    return jk.scoreboard.build([tmp_path / "07_x.ipynb"])


def test_the_agreement_count_excludes_every_row_that_is_not_recomputed(tmp_path):
    """A value that holds by construction (the baseline's 50) agrees whatever the data: it is
    listed apart and never counted as agreeing; so are simulated checks and quoted numbers."""
    board = _mixed_board(tmp_path)
    # by paper (wei, li, dubois), then kind: recomputed, simulation, by construction, not reproducible
    assert board["kind"].tolist() == ["simulation", "not reproducible", "recomputed", "recomputed",
                                      "by construction", "by construction", "not reproducible"]
    by_kind = board.groupby("kind", sort=False)["item"].count().to_dict()
    assert by_kind == {"recomputed": 2, "by construction": 2, "not reproducible": 2, "simulation": 1}
    assert board.loc[board["kind"] != "recomputed", "agrees"].isna().sum() == 4  # not compared
    counts = jk.scoreboard.counts(board).set_index("kind")
    assert counts.loc["recomputed", ["rows", "agree", "differ"]].tolist() == [2, 1, 1]
    assert counts.loc["by construction", ["rows", "agree"]].tolist() == [2, 0]
    assert counts.loc["simulation", ["rows", "agree"]].tolist() == [1, 1]
    page = jk.scoreboard.render_html(board)
    assert "2 recomputed from released data: 1 agree with the paper to its printed precision, 1 differ" in page
    assert "2 hold by construction (not counted)" in page and "2 cannot be reproduced" in page
    assert page.count("<span class='na'>by construction</span>") == 2
    assert page.count("<span class='ok'>agrees</span>") == 1  # the baseline's 50s are not among them
    out = jk.scoreboard.save(board, tmp_path / "board.csv")
    csv = pd.read_csv(out)
    assert int(csv.loc[csv["agrees"].eq(True) & csv["kind"].ne("recomputed")
                       & csv["kind"].ne("simulation")].shape[0]) == 0


def test_each_kind_states_why():
    with pytest.raises(ValueError, match="needs a reason"):
        jk.scoreboard.compare("dubois2024", {"win_rate": 50.0}, prefix="fig4/gpt4_1106_preview/",
                              how="t", kind="by construction")
    with pytest.raises(ValueError, match="kind must be one of"):
        jk.scoreboard.compare("dubois2024", {"win_rate": 3.7}, prefix="sec4.3/gpt4_gamed/",
                              how="t", kind="agrees")
    with pytest.raises(ValueError, match="kind has no entry"):
        jk.scoreboard.compare("dubois2024", {"win_rate": 3.7, "lc_penalty": 13.6},
                              prefix="sec4.3/gpt4_gamed/", how="t", kind={"win_rate": "recomputed"})
    with pytest.raises(TypeError):  # no default: every comparison says what it is
        jk.scoreboard.compare("dubois2024", {"win_rate": 3.7}, prefix="sec4.3/gpt4_gamed/", how="t")
    with pytest.raises(ValueError, match="needs the simulation's truth"):
        jk.scoreboard.compare("wei2024", {"x": 1.0}, how="t", kind="simulation", reason="r")
    with pytest.raises(ValueError, match="typed in judgekit/published"):
        jk.scoreboard.compare("dubois2024", {"win_rate": 3.7}, prefix="sec4.3/gpt4_gamed/", how="t",
                              kind="recomputed", reference={"win_rate": 3.7}, source="s", decimals=1)
    c = jk.scoreboard.compare("dubois2024", {"leaderboard/win_rate/claude-2": 17.1882},
                              how="t", kind="recomputed", reference={"leaderboard/win_rate/claude-2": 17.18824},
                              source="the leaderboard CSV", decimals=2)
    assert c.table.loc[0, "agrees"] and c.table.loc[0, "tolerance"] == pytest.approx(0.005)


def _compare_calls(path: Path) -> list:
    """Every jk.scoreboard.compare / quote call in a notebook's code cells."""
    nb = nbformat.read(path, as_version=4)
    calls = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join(line for line in cell.source.splitlines() if not line.startswith(("%", "!")))
        for node in ast.walk(ast.parse(source)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("compare", "quote")
                    and ast.unparse(node.func.value).endswith("scoreboard")):
                calls.append((cell.source, node))
    return calls


def test_every_comparison_in_the_notebooks_says_what_kind_it_is():
    calls = {p.name: _compare_calls(p) for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))}
    assert sum(map(len, calls.values())) >= 10
    for name, found in calls.items():
        for _, node in found:
            if node.func.attr == "compare":
                keywords = {k.arg for k in node.keywords}
                assert "kind" in keywords, f"{name}: {ast.unparse(node)[:120]}"


def test_every_readme_headline_comparison_is_on_the_scoreboard():
    """The README's headline comparisons name their scoreboard rows (paper:prefix), and a notebook
    records rows under each (a compare call of that paper whose cell names the prefix)."""
    text = README.read_text(encoding="utf-8")
    start = text.index("Headline\ncomparisons") if "Headline\ncomparisons" in text else text.index("Headline")
    table = [line for line in text[start:].split("\n\n")[1].splitlines() if line.startswith("|")][2:]
    assert len(table) >= 7
    cells = [(p.name, src) for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
             for src, _ in _compare_calls(p)]
    for row in table:
        ids = re.findall(r"`([a-z]+\d{4}):([^`]+)`", row.split("|")[-2])
        assert ids, f"README headline row names no scoreboard rows: {row[:80]}"
        for paper, prefix in ids:
            assert paper in PAPERS
            found = [name for name, src in cells if f'"{paper}"' in src and prefix in src]
            assert found, f"no notebook records {paper}:{prefix} on the scoreboard"
