"""Every reader parses JSON and JSON lines the same way: a hostile file is an error naming the file
(and line), never a bare RecursionError (issue 21, n17); JSON lines split at line feeds only, so
U+2028, U+2029 and U+0085 inside a string keep a record whole (issue 22, item 1)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

import judgekit as jk
from judgekit.cli import main
from judgekit.sim.config import server_from_config

DEEP = "[" * 100_000 + "]" * 100_000
#: Real judgment files, beside the checkout like the data mirror (see conftest.py); read in place.
REALFILES = Path(__file__).resolve().parents[3] / "shared" / "realfiles"
ARENA_HARD = REALFILES / "zeppombal__arena-hard-auto@a41ca006cc3718c6bde4025f9bee5f921c01963d" / \
    "data" / "arena-hard-v0.1"
#: Characters str.splitlines() breaks at that JSON allows unescaped inside a string.
SEPARATORS = "\u2028\u2029\u0085\x0b\x0c\x1c\x1d\x1e"


def _row(i: int, text: str = "ok") -> dict:
    return {"pair_id": f"p{i}", "judge": "j", "order": "ab", "verdict": "a", "prompt": text,
            "response_a": "x", "response_b": "y"}


def _arena_line(qid: str, deep: bool = False) -> str:
    games = [{"user_prompt": "<|User Prompt|>\nq", "judgment": "[[A>B]]", "score": "A>B"}] * 2
    if deep:
        return json.dumps({"question_id": qid, "model": "m", "judge": "j", "games": []})[:-3] + DEEP + "}"
    return json.dumps({"question_id": qid, "model": "m", "judge": "j", "games": games})


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    return path


# name -> (file to write, its content, the call, the line an error must name)
CASES = {
    "read_any json": ("mine.json", DEEP, jk.read_any, None),
    "read_any jsonl": ("mine.jsonl", json.dumps(_row(1)) + "\n\n" + DEEP + "\n", jk.read_any, 3),
    "read_judgments json.gz": ("mine.json.gz", DEEP, jk.read_judgments, None),
    "read_judgments jsonl": ("mine.jsonl", json.dumps(_row(1)) + "\n" + DEEP, jk.read_judgments, 2),
    "read_arena_hard": ("judge.jsonl", _arena_line("q1") + "\n" + _arena_line("q2", deep=True),
                        lambda p: jk.read_arena_hard(p, baseline="b"), 2),
    "read_mtbench": ("gpt-4_pair.jsonl", DEEP + "\n", jk.read_mtbench, 1),
    "read_mtbench list": ("votes.json", DEEP, jk.read_mtbench, None),
    "read_alpacaeval": ("annotations.json", DEEP, jk.read_alpacaeval, None),
    "read_llmbar_results": ("MySet/evaluators/j/Vanilla/result.json", DEEP, jk.read_llmbar_results,
                            None),
    "load_calibrator": ("cal.json", DEEP, jk.load_calibrator, None),
    "simulated server config": ("server.json", DEEP, server_from_config, None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_deeply_nested_json_is_an_error_naming_the_file(tmp_path, case):
    name, text, call, line = CASES[case]
    path = _write(tmp_path / "from-colleague" / name, text)
    where = f"{path}, line {line}" if line else str(path)
    with pytest.raises(ValueError, match="nested too deeply") as caught:
        call(path)
    assert str(caught.value).startswith(where + ":")


def test_detect_format_and_the_audit_command_name_the_deep_file(tmp_path, capsys):
    path = _write(tmp_path / "judgments-from-colleague.json", DEEP)
    assert jk.detect_format(path)[0] == "csv"  # undecided here; the reader names the problem
    code = main(["audit", str(path), "--out", str(tmp_path / "report"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "RecursionError" not in err
    assert f"{path}: JSON nested too deeply" in err


def test_files_that_are_not_text_name_the_file_and_line(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(json.dumps(_row(1)).encode() + b"\n" + json.dumps(_row(2, "caf\xe9"),
                     ensure_ascii=False).encode("latin-1") + b"\n")
    with pytest.raises(ValueError, match=rf"{path.name}, line 2: not UTF-8 text"):
        jk.read_judgments(path)
    bom = tmp_path / "bom.json"  # a byte order mark (Windows editors) is fine
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps([_row(1)]).encode())
    assert jk.read_judgments(bom)[1]["pair_id"].tolist() == ["p1"]


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_jsonl_breaks_lines_at_line_feeds_only(tmp_path, suffix):
    rows = [_row(i, f"before{sep}after") for i, sep in enumerate(SEPARATORS)]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\r\n" for r in rows)
    assert len(text.splitlines()) > len(rows)  # what used to cut these records apart
    path = _write(tmp_path / f"judgments{suffix}", text)
    pairs, judgments = jk.read_judgments(path)
    assert pairs.set_index("pair_id")["prompt"].to_dict() == {r["pair_id"]: r["prompt"] for r in rows}
    assert len(judgments) == len(rows)
    bad = _write(tmp_path / f"bad{suffix}", text + '{"pair_id": "p99",\n')
    with pytest.raises(ValueError, match=rf"bad{suffix.replace('.', '[.]')}, line {len(rows) + 1}: "
                                         "not valid JSON"):
        jk.read_judgments(bad)


@pytest.mark.skipif(not ARENA_HARD.is_dir(), reason=f"the real Arena-Hard files are not at {ARENA_HARD}")
def test_a_real_arena_hard_answer_file_written_with_raw_separators(tmp_path):
    """The real Arena-Hard v0.1 files hold no raw U+2028/U+2029/U+0085 (checked: none of the
    files in the real-files folder does, escaped or raw); a pipeline writing with
    ensure_ascii=False leaves them raw. So the answer file is rewritten that way, with the three
    characters put into one answer the judgment file uses, and read beside the untouched copy."""
    bench = tmp_path / "arena-hard-v0.1"
    shutil.copytree(ARENA_HARD, bench)
    judged = next((bench / "model_judgment").rglob("*.jsonl"))
    before = jk.read_arena_hard(judged)

    answers = bench / "model_answer" / "Nexusflow__Athene-V2-Chat.jsonl"
    records = [json.loads(line) for line in answers.read_text(encoding="utf-8").split("\n") if line]
    qid = json.loads(judged.read_text(encoding="utf-8").split("\n", 1)[0])["question_id"]
    record = next(r for r in records if r["question_id"] == qid)
    turn = record["choices"][0]["turns"][0]
    turn["content"] = "One\u2028two\u2029three\u0085four. " + turn["content"]
    answers.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                       encoding="utf-8")
    assert len(answers.read_text(encoding="utf-8").splitlines()) == len(records) + 3

    pairs, judgments = jk.read_arena_hard(judged)
    assert len(pairs) == len(before[0]) and len(judgments) == len(before[1])
    texts = pd.concat([pairs["response_a"], pairs["response_b"]])
    assert texts.eq(turn["content"]).any()
    pd.testing.assert_frame_equal(judgments, before[1])


def test_a_json_list_where_one_value_belongs_is_named(tmp_path):
    """Nesting that the parser follows still reaches a column that holds one value per row: the
    column and row are named (it was "TypeError: unhashable type: 'list'")."""
    rows = [_row(1), {**_row(2), "verdict": {"a": json.loads("[" * 500 + "]" * 500)}}]
    path = _write(tmp_path / "mine.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ValueError, match=rf"{path.name}: column 'verdict' holds a JSON object in "
                                         "row 2"):
        jk.read_any(path)
    with pytest.raises(ValueError, match="column 'prompt' holds a JSON list in row 1"):
        jk.split_tables(pd.DataFrame([{**_row(1), "prompt": ["a"]}]), name="the table")


def test_the_simulated_batch_endpoint_reads_one_request_per_line(tmp_path):
    """jk.sim.SimServer's Batch API took a batch input file apart with str.splitlines() too."""
    import time

    from openai import OpenAI

    with jk.sim.SimServer(pairs=jk.sim.simulate_pairs(4, seed=3), batch_delay=0.05) as url:
        client = OpenAI(base_url=url, api_key="sk-test")
        body = {"model": "sim", "messages": [{"role": "user", "content": "one\u2028two\u2029three"}]}
        lines = [json.dumps({"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions",
                             "body": body}, ensure_ascii=False) for i in range(3)]
        upload = client.files.create(file=("in.jsonl", "\n".join(lines).encode()), purpose="batch")
        batch = client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                      completion_window="24h")
        for _ in range(400):
            batch = client.batches.retrieve(batch.id)
            if batch.status in ("completed", "failed"):
                break
            time.sleep(0.05)
        ids = [json.loads(line)["custom_id"]
               for fid in (batch.output_file_id, batch.error_file_id) if fid
               for line in client.files.content(fid).text.split("\n") if line]
    assert batch.request_counts.total == 3 and sorted(ids) == ["r0", "r1", "r2"]
