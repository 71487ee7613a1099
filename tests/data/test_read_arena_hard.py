"""jk.read_arena_hard on fixtures written in Arena-Hard-Auto's layouts (v0.1 and v2.0; online-only
upstream): two games per question, the swapped one included, graded verdicts kept."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

import judgekit as jk

ROOT = Path(__file__).parents[1] / "fixtures" / "formats" / "arena_hard"
BENCH = ROOT / "data" / "arena-hard-v0.1"
JUDGMENTS = BENCH / "model_judgment" / "gpt-4-1106-preview" / "my-model.jsonl"
V2 = ROOT / "v2_my-model.jsonl"


def test_v01_judgments_with_question_and_answer_files():
    pairs, j = jk.read_arena_hard(ROOT / "data")
    p = pairs.set_index("pair_id")
    assert list(p.index) == ["arena-hard/my-model/q-001", "arena-hard/my-model/q-002",
                             "arena-hard/my-model/q-003"]
    assert (p["model_a"] == "gpt-4-0314").all() and (p["model_b"] == "my-model").all()  # v0.1's baseline
    assert p.loc["arena-hard/my-model/q-003", "prompt"] == "Reverse a list in Python."
    assert p.loc["arena-hard/my-model/q-003", "response_a"] == "xs[::-1]"  # the baseline's answer
    assert p.loc["arena-hard/my-model/q-002", "response_b"] == "Leaves fall."
    assert set(p["dataset"]) == {"arena-hard-v0.1"} and set(p["task"]) == {"arena-hard-v0.1"}
    got = j.set_index(["pair_id", "order"])[["score", "margin", "verdict"]]
    rows = {k: tuple(None if pd.isna(x) else x for x in v) for k, v in
            zip(got.index, got.itertuples(index=False))}
    # game 1 (order ab): assistant A is the baseline = response a; game 2 (ba): A is the model
    assert rows == {
        ("arena-hard/my-model/q-001", "ab"): ("A>>B", 2, "a"),
        ("arena-hard/my-model/q-001", "ba"): ("B>A", 1, "a"),
        ("arena-hard/my-model/q-002", "ab"): ("A=B", 0, "tie"),
        ("arena-hard/my-model/q-002", "ba"): ("B>>A", 2, "a"),
        ("arena-hard/my-model/q-003", "ab"): ("B>A", -1, "b"),
        ("arena-hard/my-model/q-003", "ba"): (None, None, None),
    }
    missing = j[j["verdict"].isna()].iloc[0]
    assert missing["error"] == "no verdict label upstream" and missing["raw"] == "My final verdict is: unclear"
    assert set(j["judge"]) == {"gpt-4-1106-preview"}
    # swap-averaged win rates work on it: q-001 loss, q-002 (0.5 + 0)/2, q-003 the one valid game
    wr = jk.win_rates(j, pairs, n_boot=0).set_index("metric")["estimate"]
    assert wr["win_rate"] == pytest.approx(100 * (0 + 0.25 + 1) / 3)


def test_texts_from_the_judge_prompt_and_the_baseline_named(tmp_path):
    alone = tmp_path / "my-model.jsonl"
    shutil.copy(JUDGMENTS, alone)
    with pytest.raises(ValueError, match=r"my-model\.jsonl, line 1: the judgment does not name its "
                                         r"baseline .*gpt-4-0314.* no answer file .*: pass baseline="):
        jk.read_arena_hard(alone)
    pairs, j = jk.read_arena_hard(alone, baseline="gpt-4-0314")
    ref_pairs, ref_j = jk.read_arena_hard(JUDGMENTS)
    cols = ["pair_id", "prompt", "response_a", "response_b", "model_a", "model_b", "instruction_id"]
    pd.testing.assert_frame_equal(pairs[cols], ref_pairs[cols])
    pd.testing.assert_frame_equal(j, ref_j)
    pairs, _ = jk.read_arena_hard(alone, baseline="gpt-4-0314", questions=BENCH / "question.jsonl",
                                  answers=BENCH / "model_answer")
    assert pairs["task"].tolist() == ["arena-hard-v0.1"] * 3
    record = json.loads(JUDGMENTS.read_text().splitlines()[0])
    record["games"][0]["user_prompt"] = "A prompt in another template."
    alone.write_text(json.dumps(record) + "\n")
    # no answer files, and a prompt in another template: the texts are left missing, said so,
    # and the text-free analyses still run (before: the whole file was refused)
    with pytest.warns(UserWarning, match=r"texts missing for 1 of 1 pairs \(answers of gpt-4-0314, "
                                         r"my-model are neither in model_answer/ nor in a judge prompt"):
        pairs, j = jk.read_arena_hard(alone, baseline="gpt-4-0314")
    assert pairs[["prompt", "response_a", "response_b"]].isna().all(axis=None)
    assert jk.win_rates(j, pairs, n_boot=0)["n"].iloc[0] == 1
    scores = jk.arena_hard_scores(j, pairs, n_boot=0).set_index("model")["score"]
    assert scores.to_dict() == {"gpt-4-0314": 50.0, "my-model": 0.0}  # A>>B then B>A: 4 losses
    with pytest.raises(ValueError, match="column 'prompt' has missing text in 1 row.*text-free analyses"):
        jk.validate_pairs(pairs)


def test_v2_records_name_their_baseline_and_category():
    pairs, j = jk.read_arena_hard(V2)
    assert set(pairs["model_a"]) == {"o3-mini-2025-01-31"} and set(pairs["task"]) == {"hard_prompt"}
    assert pairs.loc[0, "response_a"] == "2 is prime." and pairs.loc[0, "response_b"] == "9 is prime."
    assert j["verdict"].tolist() == ["a", "a", "tie", "a"] and j["raw"].tolist()[0] == "[[A>>B]]"
    assert set(j["judge"]) == {"gpt-4.1"}


def test_not_arena_hard_files_are_named(tmp_path):
    f = tmp_path / "x.jsonl"
    f.write_text(json.dumps({"question_id": "q", "text": "hi"}) + "\n")
    with pytest.raises(ValueError, match=r"x\.jsonl, line 1: not an Arena-Hard judgment"):
        jk.read_arena_hard(f)
    (tmp_path / "x.jsonl").unlink()
    (tmp_path / "sub").mkdir()
    with pytest.raises(ValueError, match=r"no \*\.jsonl file under"):
        jk.read_arena_hard(tmp_path / "sub")
    (tmp_path / "sub" / "question.jsonl").write_text(json.dumps({"question_id": "q"}) + "\n")
    with pytest.raises(ValueError, match=r"no Arena-Hard judgment \(a JSON line with 'games'\) under"):
        jk.read_arena_hard(tmp_path / "sub")
    with pytest.raises(FileNotFoundError):
        jk.read_arena_hard(tmp_path / "nothing")
