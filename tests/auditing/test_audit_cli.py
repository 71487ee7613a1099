"""`judgekit audit FILE --out DIR`: one summary line on stdout, the format it chose on stderr, a
report on disk; bad input is a short message naming the file, exit code 2, no traceback."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from _formats import alpacaeval_tree

from judgekit.cli import main

FORMATS = Path(__file__).parents[1] / "fixtures" / "formats"
DATA = Path(__file__).parents[1] / "fixtures" / "data"


@pytest.mark.parametrize(("path", "fmt", "extra"), [
    (FORMATS / "my_pipeline.csv", "csv", []),
    (alpacaeval_tree(), "alpacaeval", []),
    (FORMATS / "mtbench" / "data" / "mt_bench" / "model_judgment" / "gpt-4_pair.jsonl", "mtbench", []),
    (FORMATS / "mtbench" / "data" / "mt_bench" / "model_judgment" / "gpt-4_single.jsonl", "mtbench",
     ["--single-as-pairs"]),
    (FORMATS / "arena_hard" / "data", "arena-hard", []),
    (DATA / "llmbar_run", "llmbar", []),
    (DATA / "jtj_run", "jtj", []),
])
def test_every_format_gives_a_report(tmp_path, capsys, path, fmt, extra):
    out = tmp_path / "report"
    code = main(["audit", str(path), "--out", str(out), "--n-boot", "0", "--lc-boot", "0",
                 "--no-progress", *extra])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    lines = captured.out.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path} ({fmt}): ")
    assert f"report: {out / 'index.html'}" in lines[0]
    assert f"reading {path} as {fmt} (" in captured.err  # what auto-detection chose, and why
    assert (out / "index.html").is_file() and list((out / "tables").glob("*.csv"))


def test_an_explicit_format_and_a_pairs_file(tmp_path, capsys):
    j = pd.DataFrame({"pair_id": ["p1", "p1", "p2", "p2"], "judge": "mine", "order": ["ab", "ba"] * 2,
                      "verdict": ["a", "a", "b", "a"]})
    p = pd.DataFrame({"pair_id": ["p1", "p2"], "prompt": "q", "response_a": ["x", "y"],
                      "response_b": ["xx", "yy"], "label": ["a", "b"]})
    j.to_csv(tmp_path / "j.csv", index=False)
    p.to_csv(tmp_path / "p.csv", index=False)
    code = main(["audit", str(tmp_path / "j.csv"), "--pairs", str(tmp_path / "p.csv"), "--format", "csv",
                 "--out", str(tmp_path / "r"), "--n-boot", "0", "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0 and "reading" not in captured.err  # nothing detected: the format was given
    assert "2 pairs, 4 judgments" in captured.out
    assert (tmp_path / "r" / "tables" / "accuracy-accuracy.csv").is_file()  # labels came from --pairs


def test_bad_input_is_a_short_message_and_exit_code_2(tmp_path, capsys):
    cases = {}
    missing = tmp_path / "nothing.csv"
    cases[str(missing)] = f"{missing} does not exist"
    bad_json = tmp_path / "broken.json"
    bad_json.write_text("[{")
    cases[str(bad_json)] = f"{bad_json}: not valid JSON"
    bad_verdict = tmp_path / "verdicts.csv"
    bad_verdict.write_text("pair_id,judge,order,verdict\np1,j,ab,left\n")
    cases[str(bad_verdict)] = "column 'verdict': 'left' in 1 row (row 2) is not a preference"
    no_verdict = tmp_path / "no_verdict.csv"
    no_verdict.write_text("pair_id,judge,order\np1,j,ab\n")
    cases[str(no_verdict)] = "no 'verdict' column (the judge's preference)"
    for path, message in cases.items():
        code = main(["audit", path, "--out", str(tmp_path / "r"), "--no-progress"])
        captured = capsys.readouterr()
        assert code == 2, (path, captured.err)
        assert captured.out == ""
        err = captured.err.strip().split("judgekit audit: ")[-1]  # the last message, all its lines
        assert message in err and path in err, err
        assert "Traceback" not in captured.err


def test_the_console_script_prints_no_traceback(tmp_path):
    bad = tmp_path / "annotations.json"
    bad.write_text('[{"instruction": "x"}]')
    run = subprocess.run([sys.executable, "-m", "judgekit.cli", "audit", str(bad), "--out",
                          str(tmp_path / "r"), "--no-progress"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 2 and run.stdout == ""
    assert "Traceback" not in run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(f"judgekit audit: {bad}, annotation 0: no 'output_2'"), last
