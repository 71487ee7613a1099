"""Chatbot Arena battles are read as what they are: crowd votes between two models, both kinds of
tie kept, usable as the human labels a judge's verdicts are audited against.

No Arena battle file is in the data mirror, so the records are written here in the published
schema of lmsys/chatbot_arena_conversations (question_id, model_a, model_b, winner, judge,
conversation_a/b, turn, anony, language, tstamp, openai_moderation, toxic_chat_tag)."""

import itertools
import json

import numpy as np
import pandas as pd
import pytest

import judgekit as jk
from judgekit.cli import main

WINNERS = ["model_a", "model_b", "tie", "tie (bothbad)"]


def _conversation(prompt, answer, follow_up=None, answer_2=None):
    turns = [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]
    if follow_up is not None:
        turns += [{"role": "user", "content": follow_up}, {"role": "assistant", "content": answer_2}]
    return turns


def _battle(qid, model_a, model_b, winner, voter, k, turns=1):
    prompt, follow = f"Question {k}: explain item {k}.", (f"And item {k + 1}?" if turns == 2 else None)
    return {
        "question_id": qid, "model_a": model_a, "model_b": model_b, "winner": winner,
        "judge": voter,
        "conversation_a": _conversation(prompt, f"{model_a} answers {k}.", follow,
                                        f"{model_a} again {k}." if follow else None),
        "conversation_b": _conversation(prompt, f"{model_b} answers {k} at length.", follow,
                                        f"{model_b} again {k}." if follow else None),
        "turn": turns, "anony": True, "language": "English", "tstamp": 1682351591.13 + k,
        "openai_moderation": {"flagged": False}, "toxic_chat_tag": {"roberta-large": {"flagged": False}},
    }


def _battles(n_pairs=40, seed=0):
    """Battles with 1 to 4 voters each; the votes of voters on the same battle as recorded."""
    rng = np.random.default_rng(seed)
    models = ["vicuna-13b", "koala-13b", "alpaca-13b", "chatglm-6b", "gpt-4"]
    records = []
    for k in range(n_pairs):
        qid = f"{rng.integers(16 ** 12):012x}{k:04d}"
        a, b = rng.choice(models, size=2, replace=False)
        for _ in range(int(rng.integers(1, 5))):
            winner = WINNERS[int(rng.choice(4, p=[0.45, 0.3, 0.15, 0.1]))]
            records.append(_battle(qid, str(a), str(b), winner, f"arena_user_{rng.integers(10_000)}",
                                   k, turns=1 + (k % 5 == 0)))
    return records


def _write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_an_arena_file_is_named_as_such(tmp_path):
    records = _battles()
    f = _write_jsonl(tmp_path / "arena_battles.jsonl", records)
    fmt, why = jk.detect_format(f)
    assert fmt == "arena-battles" and "Chatbot Arena battles" in why
    pairs, votes = jk.read_any(f)
    qids = sorted({r["question_id"] for r in records})
    assert sorted(pairs["pair_id"]) == qids          # the file's ids, not mtbench/...
    assert set(pairs["dataset"]) == {"arena_battles"}  # from the file's name
    assert set(votes["judge"]) == {"crowd"} and votes["voter"].str.startswith("arena_user_").all()
    assert len(votes) == len(records)
    # read as the crowd's own judgments: no label made of the very votes it would judge
    assert pairs["label"].isna().all()
    # both kinds of tie: counted as ties, kept apart
    raw = pd.Series([r["winner"] for r in records])
    assert (votes["verdict"] == "tie").sum() == raw.isin(["tie", "tie (bothbad)"]).sum()
    assert (votes["tie_kind"] == "bothbad").sum() == (raw == "tie (bothbad)").sum() > 0
    assert votes["raw"].tolist() == raw.tolist()
    two_turns = pairs[pairs["turn"] == 2].iloc[0]
    assert two_turns["prompt"].startswith("[Turn 1]\nQuestion") and "[Turn 2]\nAnd item" in two_turns["prompt"]


def test_mtbench_human_votes_are_still_mtbench(tmp_path):
    record = {k: v for k, v in _battle(81, "gpt-4", "vicuna-13b", "model_a", "expert_3", 0).items()
              if k not in ("anony", "language", "tstamp", "openai_moderation", "toxic_chat_tag")}
    f = _write_jsonl(tmp_path / "human.jsonl", [record])
    assert jk.detect_format(f)[0] == "mtbench"


def test_the_crowd_label_is_the_majority_with_its_shares():
    records = _battles(60, seed=3)
    pairs, votes = jk.read_arena_battles(records)
    by_q = pd.DataFrame([{"q": r["question_id"], "w": r["winner"]} for r in records])
    for _, p in pairs.iterrows():
        w = by_q.loc[by_q["q"] == p["pair_id"], "w"]
        counts = {"a": (w == "model_a").sum(), "b": (w == "model_b").sum(),
                  "tie": w.isin(["tie", "tie (bothbad)"]).sum()}
        top = max(counts.values())
        leaders = [k for k, c in counts.items() if c == top]
        assert p["label"] == (leaders[0] if len(leaders) == 1 else None)
        assert p["n_votes"] == len(w) and p["share_a"] == pytest.approx(counts["a"] / len(w))
        assert p["votes_bothbad"] == (w == "tie (bothbad)").sum()
        if p["label"] == "tie":
            bothbad = (w == "tie (bothbad)").sum() > (w == "tie").sum()
            assert p["crowd_winner"] == ("tie (bothbad)" if bothbad else "tie")


def test_crowd_agreement_counts_agreeing_voter_pairs():
    pairs, _ = jk.read_arena_battles(_battles(50, seed=5))
    got = jk.crowd_agreement(pairs, n_boot=0).iloc[0]
    per_pair = []
    for _, p in pairs[pairs["n_votes"] >= 2].iterrows():  # brute force over pairs of voters
        votes = ["a"] * p["votes_a"] + ["b"] * p["votes_b"] + ["t"] * (p["votes_tie"] + p["votes_bothbad"])
        per_pair.append(np.mean([x == y for x, y in itertools.combinations(votes, 2)]))
    assert got["estimate"] == pytest.approx(np.mean(per_pair))
    assert got["n"] == len(per_pair)


def test_crowd_agreement_recovers_a_known_agreement():
    # voters who each pick a with probability q agree with chance q^2 + (1 - q)^2
    rng = np.random.default_rng(11)
    q, n_pairs = 0.8, 400
    n = rng.integers(2, 6, size=n_pairs)
    votes_a = rng.binomial(n, q)
    pairs = pd.DataFrame({"votes_a": votes_a, "votes_b": n - votes_a, "votes_tie": 0})
    got = jk.crowd_agreement(pairs, n_boot=400, seed=1).iloc[0]
    truth = q ** 2 + (1 - q) ** 2
    assert got["ci_low"] <= truth <= got["ci_high"]
    assert abs(got["estimate"] - truth) < 0.05


def _judge_verdicts(pairs, accuracy, seed):
    """A judge that agrees with the crowd's label with probability ``accuracy``, in both orders,
    written as a person would: question_id and winner as model_a / model_b."""
    rng = np.random.default_rng(seed)
    rows = []
    for _, p in pairs[pairs["label"].isin(["a", "b"])].iterrows():
        for order in ("ab", "ba"):
            right = rng.random() < accuracy
            side = p["label"] if right else {"a": "b", "b": "a"}[p["label"]]
            rows.append({"question_id": p["pair_id"], "order": order, "winner": f"model_{side}"})
    return pd.DataFrame(rows)


def test_a_judge_is_audited_against_the_crowd(tmp_path, capsys):
    records = _battles(80, seed=7)
    battles = _write_jsonl(tmp_path / "arena_battles.jsonl", records)
    pairs, _ = jk.read_arena_battles(battles)
    verdicts = _judge_verdicts(pairs, accuracy=0.9, seed=2)
    f = tmp_path / "my_judge.csv"
    verdicts.to_csv(f, index=False)
    # the judge's agreement with the crowd, counted here from the table itself
    merged = verdicts.merge(pairs[["pair_id", "label"]], left_on="question_id", right_on="pair_id")
    expected = (merged["winner"] == "model_" + merged["label"]).mean()

    report = jk.audit(f, battles, n_boot=0)
    assert report.sections["accuracy"].ok
    acc = report.sections["accuracy"].tables["accuracy"].set_index("metric")
    assert acc.loc["acc_random", "estimate"] == pytest.approx(expected)
    crowd = report.sections["data"].tables["crowd_agreement"].iloc[0]
    judged = pairs[pairs["pair_id"].isin(verdicts["question_id"])]
    assert crowd["n"] == (judged["n_votes"] >= 2).sum() > 0  # the crowd on the pairs judged
    assert any("Two voters on the same pair agree" in n for n in report.sections["data"].notes)

    code = main(["audit", str(f), "--pairs", str(battles), "--out", str(tmp_path / "r"),
                 "--no-progress", "--n-boot", "0"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    page = (tmp_path / "r" / "index.html").read_text()
    assert "the crowd&#39;s votes" in page and "Two voters on the same pair agree" in page
    assert f"agrees with the human label in {expected:.0%}" in page


def test_the_crowd_itself_can_be_audited(tmp_path, capsys):
    battles = _write_jsonl(tmp_path / "arena_battles.jsonl", _battles(30, seed=1))
    code = main(["audit", str(battles), "--out", str(tmp_path / "r"), "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "as arena-battles (its records are Chatbot Arena battles" in captured.err
    page = (tmp_path / "r" / "index.html").read_text()
    assert "&#39;tie (bothbad)&#39; (both answers bad)" in page


def test_parquet_battles_are_detected(tmp_path):
    pytest.importorskip("pyarrow")
    records = _battles(10, seed=2)
    frame = pd.DataFrame(records).drop(columns=["openai_moderation", "toxic_chat_tag"])
    f = tmp_path / "train.parquet"
    frame.to_parquet(f)
    assert jk.detect_format(f)[0] == "arena-battles"
    pairs, votes = jk.read_any(f)
    assert len(votes) == len(records) and set(pairs["dataset"]) == {"train"}


def test_a_bad_battle_is_named():
    record = _battle("q", "x", "y", "model_c", "arena_user_1", 0)
    with pytest.raises(ValueError, match=r"record 1: winner 'model_c' is none of 'model_a'"):
        jk.read_arena_battles([record])


def test_the_kaggle_release_is_read_too(tmp_path):
    # lmsys/lmsys-arena-human-preference-55k: a CSV, the winner one-hot, texts as JSON lists
    rows = pd.DataFrame({
        "id": [30192, 53567, 65089],
        "model_a": ["gpt-4-1106-preview", "koala-13b", "gpt-3.5-turbo-0613"],
        "model_b": ["gpt-4-0613", "gpt-4-0613", "mistral-medium"],
        "prompt": ['["Is it morally right to try to have a certain percentage of females?"]',
                   '["What is the difference between marriage license and certificate?", "And?"]',
                   '["explain function calling"]'],
        "response_a": ['["The question of whether..."]', '["A marriage license is...", "Also..."]',
                       '[null]'],
        "response_b": ['["As an AI, I don\'t have..."]', '["A marriage license...", "Then..."]',
                       '["Function calling is..."]'],
        "winner_model_a": [1, 0, 0], "winner_model_b": [0, 1, 0], "winner_tie": [0, 0, 1],
    })
    f = tmp_path / "train.csv"
    rows.to_csv(f, index=False)
    assert jk.detect_format(f)[0] == "arena-battles"
    pairs, votes = jk.read_any(f)
    assert pairs["pair_id"].tolist() == ["30192", "53567", "65089"]
    assert votes["verdict"].tolist() == ["a", "b", "tie"]
    assert pairs.loc[1, "prompt"] == ("[Turn 1]\nWhat is the difference between marriage license "
                                      "and certificate?\n\n[Turn 2]\nAnd?")
    assert pairs.loc[2, "response_a"] == "" and pairs.loc[0, "response_b"] == "As an AI, I don't have..."
