"""jk.read_mtbench on fixtures written in FastChat's llm_judge layouts (online-only upstream):
pairwise judgments (both games, turns 1 and 2), human votes, single-answer grades."""

import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

import judgekit as jk
from judgekit.data import fetch

HERE = Path(__file__).parents[1] / "fixtures"
BENCH = HERE / "formats" / "mtbench" / "data" / "mt_bench"
PAIR = BENCH / "model_judgment" / "gpt-4_pair.jsonl"
SINGLE = BENCH / "model_judgment" / "gpt-4_single.jsonl"
HUMAN = HERE / "formats" / "mtbench" / "human_judgments.json"


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_pairwise_judgments_both_games_and_turns():
    pairs, j = jk.read_mtbench(PAIR)
    p = pairs.set_index("pair_id")
    assert sorted(p.index) == ["mtbench/111/model-x/model-y/1", "mtbench/111/model-x/model-y/2",
                               "mtbench/81/model-x/model-y/1", "mtbench/81/model-x/model-y/2"]
    t2 = p.loc["mtbench/81/model-x/model-y/2"]
    assert t2["prompt"] == "[Turn 1]\nWrite a haiku about rain.\n\n[Turn 2]\nNow make it sad."
    assert t2["response_a"] == "[Turn 1]\nSoft rain on the roof\n\n[Turn 2]\nCold rain, empty room"
    assert t2["model_a"] == "model-x" and t2["task"] == "turn 2" and t2["category"] == "writing"
    v = j.set_index(["pair_id", "order"])["verdict"].to_dict()
    # g1 shows model_1 as assistant A (order ab), g2 shows model_2 as A (ba); winners name models
    assert v == {("mtbench/81/model-x/model-y/1", "ab"): "a", ("mtbench/81/model-x/model-y/1", "ba"): "a",
                 ("mtbench/81/model-x/model-y/2", "ab"): "a", ("mtbench/81/model-x/model-y/2", "ba"): "b",
                 ("mtbench/111/model-x/model-y/1", "ab"): "a", ("mtbench/111/model-x/model-y/1", "ba"): "tie",
                 ("mtbench/111/model-x/model-y/2", "ab"): "a", ("mtbench/111/model-x/model-y/2", "ba"): None}
    err = j.set_index(["pair_id", "order"]).loc[("mtbench/111/model-x/model-y/2", "ba")]
    assert err["error"] == "no verdict upstream ('error')" and err["raw"] == "Explanation. I cannot decide."
    assert set(j["judge"]) == {"gpt-4"}
    assert set(j["template"]) == {"pair-v2", "pair-v2-multi-turn", "pair-math-v1", "pair-math-v1-multi-turn"}
    # both orders on every pair: position consistency is measurable; 81/1 keeps its verdict,
    # 81/2 flips with the position, 111/1 is a mixed tie, 111/2 has an invalid game
    pc = jk.position_consistency(j, n_boot=0)
    assert pc.loc[0, "n"] == 3 and pc.loc[0, "n_invalid"] == 1
    assert pc.loc[0, "estimate"] == pytest.approx(1 / 3)


def test_texts_come_from_the_judge_prompts_without_question_and_answer_files(tmp_path):
    alone = tmp_path / "gpt-4_pair.jsonl"
    shutil.copy(PAIR, alone)
    pairs, j = jk.read_mtbench(alone)
    ref_pairs, ref_j = jk.read_mtbench(PAIR)
    # the same texts, split out of FastChat's pair-v2 / pair-math-v1 prompts (reference answers
    # included) and their multi-turn forms; only the category needs question.jsonl
    pd.testing.assert_frame_equal(pairs.drop(columns="category"), ref_pairs.drop(columns="category"))
    pd.testing.assert_frame_equal(j, ref_j)
    # explicit question and answer files work from anywhere
    pairs, _ = jk.read_mtbench(alone, questions=BENCH / "question.jsonl", answers=BENCH / "model_answer")
    pd.testing.assert_frame_equal(pairs, ref_pairs)
    # a record whose prompt is not FastChat's and no files: the error says what to pass
    records = _lines(PAIR)
    records[0]["g1_user_prompt"] = "Compare these two answers please."
    alone.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(ValueError, match=r"gpt-4_pair\.jsonl, record 0: no texts for question 81 "
                                         r"\(turn 1, model-x vs model-y\).*pass questions= and answers="):
        jk.read_mtbench(alone)


def test_single_answer_grades_only_as_pairs_when_asked():
    with pytest.raises(ValueError, match=r"gpt-4_single\.jsonl: single-answer grades .* "
                                         r"pass single_as_pairs=True"):
        jk.read_mtbench(SINGLE)
    pairs, j = jk.read_mtbench(SINGLE, single_as_pairs=True)
    got = j.set_index("pair_id")[["verdict", "score_a", "score_b", "order"]]
    assert got.loc["mtbench/81/model-x/model-y/1"].tolist() == ["a", 9.0, 3.0, "ab"]
    assert got.loc["mtbench/81/model-x/model-y/2", "verdict"] == "tie"  # 8 vs 8
    assert got.loc["mtbench/111/model-x/model-y/1", "verdict"] is None  # FastChat's -1: no grade
    assert got.loc["mtbench/111/model-x/model-y/2", "verdict"] == "a"
    pd.testing.assert_frame_equal(pairs.drop(columns="category"),
                                  jk.read_mtbench(PAIR)[0].drop(columns="category"))
    # texts from the single-answer prompts when the files are not beside the judgments
    alone_pairs, _ = jk.read_mtbench(SINGLE, single_as_pairs=True, questions=None,
                                     answers=[])
    assert alone_pairs.set_index("pair_id").loc["mtbench/111/model-x/model-y/2", "response_b"] == \
        "[Turn 1]\n20\n\n[Turn 2]\n25"
    # a baseline keeps only the pairs with it; a wide tie margin makes 9 vs 3 no tie still
    base, jb = jk.read_mtbench(SINGLE, single_as_pairs=True, baseline="model-y", tie_delta=5.9)
    assert set(base["model_a"]) == {"model-y"} and jb.set_index("pair_id").loc[
        "mtbench/81/model-y/model-x/1", "verdict"] == "b"


def test_human_votes_equal_the_loader(tmp_path, monkeypatch):
    """The published human-judgment layout: the reader gives what jk.load_dataset("mtbench_human")
    gives for the same votes (the loader reads them as parquet splits)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = json.loads((HERE / "data" / "mtbench_human.json").read_text())
    mirror = tmp_path / "mirror"
    monkeypatch.setenv("JUDGEKIT_DATA_MIRROR", str(mirror))
    monkeypatch.setenv("JUDGEKIT_CACHE_DIR", str(tmp_path / "cache"))
    for split in ("human", "gpt4_pair"):
        target = mirror / fetch.lookup("mtbench_human", f"lmsys/mt_bench_human_judgments/{split}.parquet").key
        target.parent.mkdir(parents=True, exist_ok=True)
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(data[split]), buf)
        target.write_bytes(buf.getvalue())
    with pytest.warns(jk.UnverifiedDataWarning):
        ref_pairs, ref_j = jk.load_dataset("mtbench_human")
    votes = tmp_path / "human_judgments.json"
    votes.write_text(json.dumps(data["human"] + data["gpt4_pair"]))
    pairs, j = jk.read_mtbench(votes)
    pd.testing.assert_frame_equal(pairs, ref_pairs)
    pd.testing.assert_frame_equal(j, ref_j)
    # JSON lines of the same votes read the same
    lines = tmp_path / "human_judgments.jsonl"
    lines.write_text("".join(json.dumps(v) + "\n" for v in data["human"] + data["gpt4_pair"]))
    pd.testing.assert_frame_equal(jk.read_mtbench(lines)[1], ref_j)


def test_fastchat_judge_lists_and_human_labels():
    pairs, j = jk.read_mtbench(HUMAN)
    p = pairs.set_index("pair_id")
    assert p.loc["mtbench/81/model-x/model-y/1", "label"] == "a"  # 2 of 3 humans
    assert p.loc["mtbench/81/model-x/model-y/2", "label"] == "tie"
    assert pd.isna(p.loc["mtbench/111/model-x/model-y/1", "label"])  # a 1-1 split
    # a judge recorded as [model, template] is a model's vote, not a human's
    gpt = j[j["judge"] == "gpt-4"]
    assert len(gpt) == 1 and set(gpt["judge_type"]) == {"gpt-4"}
    assert set(j.loc[j["judge"] != "gpt-4", "judge_type"]) == {"human"}
    # the same expert voting twice on a pair gets repeats 0 and 1
    twice = j[(j["pair_id"] == "mtbench/111/model-x/model-y/1") & (j["judge"] == "expert_1")]
    assert twice["repeat"].tolist() == [0, 1]


def test_not_mtbench_files_are_named(tmp_path):
    f = tmp_path / "other.jsonl"
    f.write_text(json.dumps({"id": 1, "text": "hello"}) + "\n")
    with pytest.raises(ValueError, match=r"other\.jsonl: not an MT-Bench judgment file.*"
                                         r"the first record has \['id', 'text'\]"):
        jk.read_mtbench(f)
    f.write_text("")
    with pytest.raises(ValueError, match=r"other\.jsonl: no records"):
        jk.read_mtbench(f)
    f.write_text('{"question_id": 1,\n')
    with pytest.raises(ValueError, match=r"other\.jsonl, line 1: not valid JSON"):
        jk.read_mtbench(f)
    with pytest.raises(FileNotFoundError):
        jk.read_mtbench(tmp_path / "missing.jsonl")
