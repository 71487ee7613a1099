"""Arena-Hard and FastChat readers and scores on real judgment files from public forks.

The files are read at run time from ``shared/realfiles`` beside the checkout (as conftest.py finds
the data mirror); they are never copied into the repository, and the tests skip when the folder
is absent. The expected numbers are computed here from the raw JSON by the rules of the published
code (Arena-Hard-Auto v0.1's ``show_result.py``, FastChat's single-grade averaging), not by
judgekit.
"""

from __future__ import annotations

import json
import math
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

import judgekit as jk

REAL = Path(__file__).resolve().parents[3] / "shared" / "realfiles"
ZEPP = REAL / "zeppombal__arena-hard-auto@a41ca006cc3718c6bde4025f9bee5f921c01963d" / "data" / "arena-hard-v0.1"
ZEPP_FILE = ZEPP / "model_judgment" / "gpt-3.5-turbo-0125" / "Nexusflow__Athene-V2-Chat.jsonl"
BENCH_V1 = REAL / "lmarena__arena-hard-auto@4a705dd6963f777aba2ae79259e3013934e6e012" / "data" / "arena-bench-v1"
PANDA = (REAL / "dreaming-panda__MTBench@f4bb6e404342e4be01ee8608b5943bb8952ec91f" / "fastchat"
         / "llm_judge" / "data" / "mt_bench" / "model_judgment")
STEFAN = (REAL / "Stefanstud__FastChat@01abf49761dd8c221a2c7798804b8358641f556f" / "fastchat"
          / "llm_judge" / "data" / "mt_bench" / "model_judgment")

pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason=f"the real judgment files are not at {REAL}")

# Arena-Hard v0.1's show_result.py: game 1 shows the baseline as A, game 2 swaps; these labels
# count (a significant win 3 times), any other label or none is left out.
_V01 = {"A=B": ("tie", 1), "A>B": ("A", 1), "A>>B": ("A", 3), "B>A": ("B", 1), "B>>A": ("B", 3)}


def _published_v01_score(path: Path, weight: int = 3) -> tuple[float, int]:
    """The model's score by the published rules, from the raw file; and the games left out."""
    wins = ties = losses = dropped = 0
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        for g, game in enumerate(json.loads(line)["games"]):
            if game.get("score") not in _V01:
                dropped += 1
                continue
            side, count = _V01[game["score"]]
            count = weight if count == 3 else 1
            model_is = "B" if g == 0 else "A"
            if side == "tie":
                ties += count
            elif side == model_is:
                wins += count
            else:
                losses += count
    return 100 * (wins + ties / 2) / (wins + ties + losses), dropped


def test_arena_hard_score_equals_the_published_rule_on_the_real_v01_file():
    with pytest.warns(UserWarning, match="108 of 108 pairs compared"):
        pairs, judgments = jk.read_arena_hard(ZEPP / "model_judgment", baseline="gpt-4-0314")
    expected, dropped = _published_v01_score(ZEPP_FILE)
    scores = jk.arena_hard_scores(judgments, pairs, n_boot=200, seed=1).set_index("model")
    model = scores.loc["Nexusflow__Athene-V2-Chat"]
    assert model["score"] == pytest.approx(expected, abs=1e-9)
    assert scores.loc["gpt-4-0314", "score"] == 50.0
    assert model["n_dropped"] == dropped == 2 and model["n"] == 216 - 2
    assert model["ci_low"] < model["score"] < model["ci_high"]
    # weight 1 is the plain share of verdicts
    one, _ = _published_v01_score(ZEPP_FILE, weight=1)
    got = jk.arena_hard_scores(judgments, pairs, weight=1, n_boot=0).set_index("model")
    assert got.loc["Nexusflow__Athene-V2-Chat", "score"] == pytest.approx(one, abs=1e-9)


def test_answer_files_are_compared_with_the_answers_the_judge_saw():
    # the fork's pipeline misaligned model_answer/ and the judge prompts: all 108 differ
    with pytest.warns(UserWarning, match=r"for 108 of 108 pairs compared, the answers in "
                                         r"model_answer/ are not the ones inside the judge's prompt"):
        pairs, _ = jk.read_arena_hard(ZEPP / "model_judgment", baseline="gpt-4-0314")
    assert pairs["texts_match_prompt"].eq(False).all()
    with pytest.warns(UserWarning, match="108 of 108"):
        seen, _ = jk.read_arena_hard(ZEPP / "model_judgment", baseline="gpt-4-0314", texts="prompt")
    first = json.loads(ZEPP_FILE.read_text(encoding="utf-8").split("\n")[0])
    prompt = first["games"][0]["user_prompt"]
    row = seen.set_index("instruction_id").loc[first["question_id"]]
    marker = "<|The Start of Assistant B's Answer|>\n"
    assert prompt.split(marker)[1].startswith(row["response_b"] + "\n<|The End of Assistant B")
    assert "tokens_a" not in seen.columns  # the recorded token counts describe the files' texts
    assert {"tokens_a", "tokens_b"} <= set(pairs.columns)


def test_the_baseline_is_never_guessed_from_a_category_tag(tmp_path):
    # v0.1 records do not name the baseline. Here the judge's assistant A of game 1 is exactly
    # gpt-4-0314's answer file (only the other model's answers are misaligned), so the data say
    # which model it is
    with pytest.warns(UserWarning, match="108 of 108"):
        pairs, _ = jk.read_arena_hard(ZEPP / "model_judgment")
    assert set(pairs["model_a"]) == {"gpt-4-0314"}
    # without the answer files nothing says which model it is: required, and the error says why
    alone = tmp_path / "Nexusflow__Athene-V2-Chat.jsonl"
    shutil.copy(ZEPP_FILE, alone)
    with pytest.raises(ValueError, match=r"does not name its baseline .*gpt-4-0314.* no answer "
                                         r"file in model_answer/ holds the answer the judge saw"):
        jk.read_arena_hard(alone)


def test_missing_texts_are_reported_and_text_free_analyses_run(tmp_path):
    bench = tmp_path / "arena-hard-v0.1"
    (bench / "model_judgment" / "judge").mkdir(parents=True)
    (bench / "model_answer").mkdir()
    shutil.copy(ZEPP / "question.jsonl", bench)
    records = [json.loads(x) for x in ZEPP_FILE.read_text(encoding="utf-8").split("\n") if x.strip()]
    for r in records:  # as in judgment files that keep no judge prompt
        for g in r["games"]:
            g.pop("user_prompt", None)
    (bench / "model_judgment" / "judge" / "m.jsonl").write_text(
        "\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    shutil.copy(ZEPP / "model_answer" / "gpt-4-0314.jsonl", bench / "model_answer")
    with pytest.warns(UserWarning, match=r"texts missing for 108 of 108 pairs \(answers of "
                                         r"Nexusflow__Athene-V2-Chat are neither"):
        pairs, judgments = jk.read_arena_hard(bench / "model_judgment", baseline="gpt-4-0314")
    assert pairs["response_b"].isna().all() and pairs["response_a"].notna().all()
    expected, _ = _published_v01_score(ZEPP_FILE)
    got = jk.arena_hard_scores(judgments, pairs, n_boot=0).set_index("model")["score"]
    assert got["Nexusflow__Athene-V2-Chat"] == pytest.approx(expected)
    assert len(jk.win_rates(judgments, pairs, n_boot=0)) == 2
    with pytest.raises(ValueError, match="answer lengths of 1 model"):
        jk.lc_win_rates(judgments, pairs, n_boot=0)


def test_the_baseline_is_never_judged_against_itself(tmp_path):
    folder = tmp_path / "model_judgment" / "judge"
    folder.mkdir(parents=True)
    shutil.copy(ZEPP_FILE, folder)
    own = [json.loads(x) for x in ZEPP_FILE.read_text(encoding="utf-8").split("\n") if x.strip()][:5]
    for r in own:
        r["model"] = "gpt-4-0314"
    (folder / "gpt-4-0314.jsonl").write_text("\n".join(json.dumps(r) for r in own), encoding="utf-8")
    with pytest.warns(UserWarning, match="10 games judge the baseline gpt-4-0314 against itself; left out"):
        pairs, judgments = jk.read_arena_hard(tmp_path / "model_judgment", baseline="gpt-4-0314")
    assert not (pairs["model_a"] == pairs["model_b"]).any() and len(pairs) == 108
    wr = jk.win_rates(judgments, pairs, n_boot=0)
    assert set(wr["model"]) == {"Nexusflow__Athene-V2-Chat"}  # no baseline row at 50.65, NaN interval


def test_single_grades_of_one_model_make_no_pair_and_files_combine():
    with pytest.raises(ValueError, match=r"single-answer grades of one model only \(phi-3-dpo\).*"
                                         r"several models together"):
        jk.read_mtbench(STEFAN / "gpt-4_single.jsonl", single_as_pairs=True)
    with pytest.warns(UserWarning, match="graded more than once"):
        pairs, judgments = jk.read_mtbench([PANDA / "gpt-4_single-origin.jsonl",
                                            PANDA / "gpt-4_single.jsonl"], single_as_pairs=True)
    assert set(pairs["model_a"]) | set(pairs["model_b"]) == {
        "Meta-Llama-3-8B-Instruct-Griffin", "Meta-Llama-3-8B-Instruct-Normal"}


def test_repeated_grades_are_averaged_as_fastchat_does():
    grades: dict[tuple, list[float]] = {}
    for line in (PANDA / "gpt-4_single-origin.jsonl").read_text(encoding="utf-8").split("\n"):
        if line.strip():
            r = json.loads(line)
            key = (str(r["question_id"]), r["model"], int(r.get("turn", 1)))
            grades.setdefault(key, []).append(r["score"])
    repeated = {k: v for k, v in grades.items() if len(v) > 1}
    assert len(repeated) == 10
    with pytest.warns(UserWarning, match=r"10 \(model, question, turn\) graded more than once"):
        pairs, judgments = jk.read_mtbench(PANDA / "gpt-4_single-origin.jsonl", single_as_pairs=True)
    table = judgments.merge(pairs, on="pair_id")
    checked = 0
    for (qid, model, turn), values in repeated.items():
        valid = [v for v in values if v is not None and v >= 0]
        row = table[(table["instruction_id"] == qid) & (table["turn"] == turn)].iloc[0]
        side = "a" if row["model_a"] == model else "b"
        want = sum(valid) / len(valid) if valid else math.nan
        got = row[f"score_{side}"]
        assert (math.isnan(want) and math.isnan(got)) or got == pytest.approx(want)
        checked += 1
    assert checked == 10


def test_arena_bench_folder_of_single_grades_is_detected_and_read():
    name, reason = jk.detect_format(BENCH_V1)
    assert name == "mtbench" and "single-answer grades" in reason
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        pairs, judgments = jk.read_any(BENCH_V1, single_as_pairs=True, baseline="gpt-4-0314")
    graded = {json.loads(f.read_text(encoding="utf-8").split("\n")[0])["model"]
              for f in (BENCH_V1 / "model_judgment").glob("*.jsonl")}
    assert len(graded) == 15 and set(pairs["model_b"]) == graded - {"gpt-4-0314"}
    assert len(pairs) == 14 * 300
    # a grade FastChat could not parse (no score) leaves that comparison without a verdict
    assert judgments["verdict"].isna().any() and pairs["response_a"].notna().all()
    assert np.all(judgments["order"] == "ab")
