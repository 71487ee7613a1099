"""Outputs never obey their data: CSV tables for people hold no live spreadsheet formula, and no
writer follows a symbolic link inside an output folder (issue 21, class 4)."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import pandas as pd
import pytest

import judgekit as jk
from judgekit._safewrite import OutputFolder, write_file
from judgekit._spreadsheet import csv_text
from judgekit.cli import main
from judgekit.exceptions import OutputPathError

FORMULA = '=HYPERLINK("http://127.0.0.1/x","click")'
#: Cells OWASP's CSV-injection page lists as dangerous, and what judgekit must write for each.
HOSTILE = {
    FORMULA: "'" + FORMULA,
    "+SUM(1,2)": "'+SUM(1,2)",
    "-2+3+cmd|' /C calc'!A0": "'-2+3+cmd|' /C calc'!A0",
    "@SUM(A1:A2)": "'@SUM(A1:A2)",
    "\t=1+1": "'\t=1+1",
    "\r=1+1": "'\r=1+1",
    "a\r=1+1": "a\r=1+1",  # quoted, so a spreadsheet does not start a new row at the \r
    "-0.25": "-0.25",      # a number written as text: a spreadsheet reads the number
    "+3": "+3",
    "gpt-4-0314": "gpt-4-0314",
    "": "",
}


def _formula_like(cell: str) -> bool:
    """What a spreadsheet would run: a formula character first, and not a plain number."""
    if not cell or cell[0] not in "=+-@\t\r":
        return False
    try:
        float(cell)
    except ValueError:
        return True
    return False


def _cells(path: Path) -> list[str]:
    with open(path, encoding="utf-8", newline="") as fh:
        return [c for row in csv.reader(fh) for c in row]


# ---------------------------------------------------------------------------------- the CSVs
def test_csv_text_neutralises_formula_cells_and_keeps_numbers():
    table = pd.DataFrame({"name": list(HOSTILE), "value": [-0.25] * len(HOSTILE),
                          FORMULA: range(len(HOSTILE))})
    text = csv_text(table)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["name", "value", "'" + FORMULA]             # column names too
    assert [r[0] for r in rows[1:]] == list(HOSTILE.values())
    assert {r[1] for r in rows[1:]} == {"-0.25"}                   # numbers stay numbers
    back = pd.read_csv(io.StringIO(text), keep_default_na=False)
    assert back["value"].dtype == float and back["value"].eq(-0.25).all()
    assert table["name"].tolist() == list(HOSTILE)                 # the caller's table unchanged


def test_audit_tables_hold_no_live_formula(tmp_path):
    """n09: a model named like a formula reached tables/*.csv as a formula."""
    lb = jk.sim.simulate_leaderboard(4, 60, seed=0)
    pairs = lb.pairs.replace({"model_a": {"baseline": FORMULA}, "model_b": {"baseline": FORMULA}})
    report = jk.audit(lb.judgments, pairs, n_boot=0, lc_boot=0)
    report.save(tmp_path / "report")
    tables = sorted((tmp_path / "report" / "tables").glob("*.csv"))
    found = [(p.name, c) for p in tables for c in _cells(p) if _formula_like(c)]
    assert not found
    shown = [p.name for p in tables if "'" + FORMULA in _cells(p)]
    assert "win_rates-win_rates.csv" in shown                      # the name is kept, as text
    rates = pd.read_csv(tmp_path / "report" / "tables" / "win_rates-win_rates.csv")
    assert pd.api.types.is_float_dtype(rates["estimate"])          # numbers are still numbers


def test_scoreboard_and_cache_exports_hold_no_live_formula(tmp_path):
    board = jk.scoreboard.quote("wei2024", ["table10/rank1/acc_both"], reason="@SUM(A1:A9)")
    board = board.table.assign(how="-2+3+cmd|' /C calc'!A0")
    jk.scoreboard.save(board, tmp_path / "board.csv")
    cells = _cells(tmp_path / "board.csv")
    assert "'@SUM(A1:A9)" in cells and not [c for c in cells if _formula_like(c)]

    with jk.Cache(tmp_path / "calls.sqlite") as cache:
        cache.put({"key": "k1", "endpoint": "http://127.0.0.1:9/v1", "model": FORMULA, "repeat": 0,
                   "request": "{}", "response": None, "status": "error",
                   "error": "=cmd|' /C calc'!A0", "source": "live"})
        cache.export(tmp_path / "calls.csv")
    cells = _cells(tmp_path / "calls.csv")
    assert "'" + FORMULA in cells and "'=cmd|' /C calc'!A0" in cells
    assert not [c for c in cells if _formula_like(c)]


# ------------------------------------------------------------------------------------ links
@pytest.fixture(scope="module")
def small_audit():
    pairs, judgments, _ = jk.sim.simulate_judgments(60, repeats=2, seed=0)
    return jk.audit(judgments, pairs, n_boot=0, lc_boot=0)


def _photos(tmp_path: Path) -> Path:
    """A folder of the user's own files, with one file named like a chart of the audit."""
    photos = tmp_path / "my-photos"
    photos.mkdir()
    for name in ("holiday.png", "diagram.png", "accuracy-accuracy.csv"):
        (photos / name).write_bytes(b"the user's own file")
    return photos


@pytest.mark.parametrize("folder", ["charts", "tables"])
def test_audit_save_refuses_a_linked_folder_and_keeps_what_is_behind_it(tmp_path, small_audit, folder):
    """n10: save() deleted the PNGs behind a charts link and wrote its charts there."""
    photos = _photos(tmp_path)
    before = {p.name: p.read_bytes() for p in photos.iterdir()}
    out = tmp_path / "report"
    out.mkdir()
    (out / folder).symlink_to(photos, target_is_directory=True)
    with pytest.raises(OutputPathError, match=f"{folder} is a symbolic link .*my-photos"):
        small_audit.save(out)
    assert {p.name: p.read_bytes() for p in photos.iterdir()} == before
    assert not (out / "index.html").exists()                       # refused before writing


def test_audit_save_replaces_a_linked_page_not_its_target(tmp_path, small_audit):
    target = tmp_path / "elsewhere.html"
    target.write_text("the user's page")
    out = tmp_path / "report"
    out.mkdir()
    (out / "index.html").symlink_to(target)
    stale = out / "charts"
    stale.mkdir()
    (stale / "old.png").symlink_to(_photos(tmp_path) / "holiday.png")  # a link among stale files
    page = small_audit.save(out)
    assert target.read_text() == "the user's page"
    assert not page.is_symlink() and "Judge audit" in page.read_text()
    assert not (stale / "old.png").is_symlink()                    # the link went, as a link
    assert (tmp_path / "my-photos" / "holiday.png").read_bytes() == b"the user's own file"


def test_cli_audit_names_the_linked_folder(tmp_path, capsys):
    pairs, judgments, _ = jk.sim.simulate_judgments(40, seed=1)
    src = tmp_path / "judgments.csv"
    judgments.merge(pairs, on="pair_id").to_csv(src, index=False)
    photos = _photos(tmp_path)
    out = tmp_path / "report"
    out.mkdir()
    (out / "charts").symlink_to(photos, target_is_directory=True)
    code = main(["audit", str(src), "--out", str(out), "--n-boot", "0", "--lc-boot", "0",
                 "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and f"{out / 'charts'} is a symbolic link" in err and "Traceback" not in err
    assert sorted(p.name for p in photos.iterdir()) == ["accuracy-accuracy.csv", "diagram.png",
                                                        "holiday.png"]


def test_chart_export_replaces_a_link_not_its_target(tmp_path):
    card = pd.DataFrame({"judge": ["x", "y"], "estimate": [0.7, 0.8],
                         "ci_low": [0.65, 0.75], "ci_high": [0.75, 0.85]})
    target = tmp_path / "notes.json"
    target.write_text("the user's notes")
    link = tmp_path / "chart.json"
    link.symlink_to(target)
    jk.viz.save_chart(jk.viz.accuracy_bars(card), link)
    assert target.read_text() == "the user's notes"
    assert not link.is_symlink() and '"$schema"' in link.read_text()


def test_calibrator_save_replaces_a_link_not_its_target(tmp_path):
    _, j, _ = jk.sim.simulate_judgments(100, token_bias=1.0, id_swap=(False, True), seed=0)
    cal = jk.calibrate(j, "pride").calibrator
    target = tmp_path / "keep.txt"
    target.write_text("mine")
    (tmp_path / "cal.json.tmp").symlink_to(target)                  # the old fixed temporary name
    (tmp_path / "cal.json").symlink_to(target)
    cal.save(tmp_path / "cal.json")
    assert target.read_text() == "mine"
    assert jk.load_calibrator(tmp_path / "cal.json").maps == cal.maps


# ----------------------------------------------------------------------- the writing module
@pytest.mark.parametrize("use_fds", [True, False], ids=["descriptors", "paths"])
def test_output_folder_never_writes_behind_a_link(tmp_path, use_fds):
    photos = _photos(tmp_path)
    root = tmp_path / "out"
    root.mkdir()
    (root / "charts").symlink_to(photos, target_is_directory=True)
    (root / "real").mkdir()
    (root / "real" / "deep").symlink_to(photos, target_is_directory=True)
    (root / "real" / "page.png").symlink_to(photos / "holiday.png")
    with OutputFolder(root, use_fds=use_fds) as out:
        for attempt in (lambda: out.write("charts/x.png", b"x"), lambda: out.makedirs("charts"),
                        lambda: out.remove("charts", "*.png"), lambda: out.write("real/deep/x", b"x"),
                        lambda: out.open_text("charts/log.txt")):
            with pytest.raises(OutputPathError, match="is a symbolic link"):
                attempt()
        assert out.remove("real", "*.png") == 1                      # the link, not its target
        assert out.write("real/page.png", b"new").read_bytes() == b"new"
        with out.open_text("real/deep.log") as log:
            log.write("ok")
        assert out.remove("missing", "*.png") == 0
        with pytest.raises(ValueError, match="not a path inside"):
            out.write("../escape.txt", b"x")
        (root / "real" / "folder.png").mkdir()
        with pytest.raises(OutputPathError, match="it is a folder"):
            out.write("real/folder.png", b"x")
    assert sorted(p.name for p in photos.iterdir()) == ["accuracy-accuracy.csv", "diagram.png",
                                                        "holiday.png"]
    assert all(p.read_bytes() == b"the user's own file" for p in photos.iterdir())
    assert (root / "real" / "deep.log").read_text() == "ok"
    assert not [p for p in root.rglob(".*.tmp")]                   # no temporary file left


def test_output_folder_writes_files_readable_like_any_other(tmp_path):
    """Temporary files are made private by default; the written file must not stay that way."""
    path = write_file(tmp_path / "a" / "b.txt", "x")
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask
