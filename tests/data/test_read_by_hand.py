"""A table made by a person (a spreadsheet saved as CSV) is read as they mean it, in one pass:
names and spellings recognised, blank rows skipped, every problem named at once, no traceback."""

import json
import subprocess
import sys

import pandas as pd
import pytest

import judgekit as jk
from judgekit.cli import main

# what a person writes: their own column names, a blank row (as a spreadsheet saves it) and an
# empty line, winners spelled three ways, no order column
BY_HAND = """id,prompt,response_a,response_b,winner
1,What is 2+2?,4,5,A
2,Capital of France?,Paris,Lyon,model_a
,,,,

3,Say hi,Hello!,Yo,B
4,Largest planet?,Jupiter,Mars,1
5,Name a colour,Blue,Seven,model_b
6,Odd one out: 1 2 3,2,3,tie
"""
# the same file with the three mistakes people make: a duplicated id, an unknown winner and a
# missing order value in a file that has an order column
WITH_MISTAKES = """id,prompt,response_a,response_b,winner,order
1,What is 2+2?,4,5,A,ab
2,Capital of France?,Paris,Lyon,model_a,ab
,,,,,

3,Say hi,Hello!,Yo,B,ab
4,Largest planet?,Jupiter,Mars,1,
3,Name a colour,Blue,Seven,model_b,ab
6,Best fruit?,Apple,Pear,C,ab
"""
VERDICTS = ["a", "a", "b", "a", "b", "tie"]


def test_a_csv_made_by_hand_is_read_by_recognition(tmp_path):
    f = tmp_path / "mine.csv"
    f.write_text(BY_HAND)
    pairs, judgments = jk.read_judgments(f)
    assert judgments["pair_id"].tolist() == ["1", "2", "3", "4", "5", "6"]
    assert judgments["verdict"].tolist() == VERDICTS
    assert set(judgments["order"]) == {"ab"} and set(judgments["judge"]) == {"mine"}
    assert pairs["prompt"].iloc[0] == "What is 2+2?"
    notes = judgments.attrs["judgekit_notes"]
    assert "Skipped 2 blank rows (every cell empty): rows 4, 5." in notes
    assert any("read 'id' as 'pair_id', 'winner' as 'verdict'" in n for n in notes)
    assert any("'model_a' as a" in n and "'1' as a" in n and "'B' as b" in n for n in notes)
    assert any(n.startswith("No 'order' column") and "Position consistency cannot be measured" in n
               for n in notes)


def test_every_problem_of_a_file_is_in_one_error(tmp_path):
    f = tmp_path / "mine.csv"
    f.write_text(WITH_MISTAKES)
    with pytest.raises(jk.TableError) as info:
        jk.read_judgments(f)
    err = info.value
    assert set(err.problems) == {"unknown verdict", "duplicate id", "missing order"}
    text = str(err)
    assert text.startswith(f"{f}: 3 problems found, so nothing was read:")
    # the unknown winner as written ('C', not 'c'), in the person's column, at its spreadsheet row
    assert "column 'winner' (read as 'verdict'): 'C' in 1 row (row 9)" in text
    assert "column 'id' (read as 'pair_id'): '3' names different pairs" in text
    assert "(rows 6, 8)" in text
    assert "column 'order' is empty in 1 row (row 7)" in text
    assert "Skipped 2 blank rows" in text  # what was read is said too


def test_the_command_line_reads_it_in_one_run(tmp_path, capsys):
    bad = tmp_path / "mine.csv"
    bad.write_text(WITH_MISTAKES)
    assert main(["audit", str(bad), "--out", str(tmp_path / "r"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "'C' in 1 row (row 9)" in err and "names different pairs" in err and "row 7" in err
    good = tmp_path / "fixed.csv"
    good.write_text(BY_HAND)
    assert main(["audit", str(good), "--out", str(tmp_path / "r"), "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert captured.out.count("\n") == 1 and "6 pairs, 6 judgments" in captured.out
    assert "note: Skipped 2 blank rows" in captured.err
    page = (tmp_path / "r" / "index.html").read_text()
    assert "No &#39;order&#39; column" in page and "Skipped 2 blank rows" in page


def test_columns_maps_names_nobody_could_guess(tmp_path, capsys):
    f = tmp_path / "odd.csv"
    f.write_text(BY_HAND.replace("id,", "item,").replace(",winner", ",Better answer"))
    with pytest.raises(jk.TableError, match="no 'verdict' column"):
        jk.read_judgments(f)
    mapping = {"Better answer": "verdict", "item": "pair_id"}
    _, judgments = jk.read_any(f, columns=mapping)
    assert judgments["verdict"].tolist() == VERDICTS
    assert judgments["pair_id"].tolist()[:2] == ["1", "2"]
    report = jk.audit(f, n_boot=0, columns=mapping)
    assert len(report.judgments) == 6
    frame = pd.read_csv(f)
    assert jk.audit(frame, n_boot=0, columns=mapping).judgments["verdict"].tolist() == VERDICTS
    code = main(["audit", str(f), "--out", str(tmp_path / "r"), "--no-progress",
                 "--columns", "Better answer=verdict,item=pair_id"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert main(["audit", str(f), "--out", str(tmp_path / "r"), "--no-progress",
                 "--columns", "Better answer"]) == 2
    assert "is not YOURS=JUDGEKITS" in capsys.readouterr().err


@pytest.mark.parametrize("spelling,side", [
    ("A", "a"), ("a", "a"), (" model_a ", "a"), ("Model A", "a"), ("Assistant A", "a"),
    ("[[A]]", "a"), ("1", "a"), (1, "a"), (1.0, "a"), ("Response B", "b"), ("model_b", "b"),
    ("[[B]]", "b"), ("2", "b"), ("output (b)", "b"), ("Tie", "tie"), ("[[C]]", "tie"),
    ("draw", "tie"), ("tie (bothbad)", "tie"), (1.5, "tie"), ("1.5", "tie"),
])
def test_verdict_spellings(spelling, side):
    rows = pd.DataFrame({"pair_id": ["p"], "verdict": pd.Series([spelling], dtype=object)})
    _, judgments = jk.split_tables(rows)
    assert judgments["verdict"].tolist() == [side]
    if spelling == "tie (bothbad)":
        assert judgments["tie_kind"].tolist() == ["bothbad"]


@pytest.mark.parametrize("spelling", ["C", "3", "left", "A or B", "0"])
def test_unknown_spellings_are_named_as_written(spelling):
    rows = pd.DataFrame({"pair_id": ["p"], "verdict": [spelling]})
    with pytest.raises(jk.TableError, match=f"column 'verdict': '{spelling}' in 1 row"):
        jk.split_tables(rows)


def _malformed(tmp_path):
    files = {
        "empty.csv": "",
        "header_only.csv": "id,winner\n",
        "blank_only.csv": "id,winner\n,\n,\n",
        "no_verdict.csv": "id,prompt\n1,x\n",
        "numbers.csv": "id,winner\n1,3\n2,0.5\n",
        "not_utf8.csv": b"id,winner\n1,\xff\xfe\n",
        "ragged.csv": "id,winner\n1,a,extra,cells\n2\n",
        "same_column_twice.csv": "id,winner,winner\n1,a,b\n",
        "nested.json": json.dumps([{"id": 1, "winner": ["a"]}]),
        "scalars.jsonl": "1\n2\n",
        "booleans.json": json.dumps([{"id": 1, "winner": True}]),
        "null_ids.json": json.dumps([{"id": None, "winner": "a"}, {"id": 2, "winner": "b"}]),
    }
    for name, text in files.items():
        path = tmp_path / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return [tmp_path / name for name in files]


def test_no_malformed_table_gets_a_traceback(tmp_path, capsys):
    for path in _malformed(tmp_path):
        code = main(["audit", str(path), "--out", str(tmp_path / "r"), "--no-progress"])
        captured = capsys.readouterr()
        assert code == 2, (path.name, captured.err)
        assert "Traceback" not in captured.err and captured.out == ""
        assert str(path) in captured.err, captured.err


def test_the_console_script_reads_a_blank_row_without_a_traceback(tmp_path):
    f = tmp_path / "mine.csv"
    f.write_text(WITH_MISTAKES)
    run = subprocess.run([sys.executable, "-m", "judgekit.cli", "audit", str(f), "--out",
                          str(tmp_path / "r"), "--no-progress"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "3 problems found" in run.stderr
