"""AlpacaEval 2.0 loader, checked against the published leaderboard."""

import os
import warnings

import numpy as np
import pandas as pd
import pytest

import judgekit as jk

pytestmark = pytest.mark.skipif(
    not os.environ.get("JUDGEKIT_DATA_MIRROR"), reason="needs the offline data mirror"
)


@pytest.fixture(scope="module")
def alpacaeval():
    with warnings.catch_warnings():
        warnings.simplefilter("error", jk.MissingDataWarning)  # the default set is fixed now
        return jk.load_dataset("alpacaeval")


def test_default_load_is_the_documented_model_set(alpacaeval):
    from judgekit.data.alpacaeval import DEFAULT_MODELS, annotation_files

    pairs, _ = alpacaeval
    assert set(pairs["model_b"]) == set(DEFAULT_MODELS) and len(DEFAULT_MODELS) == 43
    files = annotation_files()
    assert len(files) == 58
    assert round(sum(files[m].size for m in DEFAULT_MODELS) / 1e6) == 169  # as documented


def _model(pairs: pd.DataFrame) -> pd.Series:
    return pairs["model_b"]


def test_win_rates_match_the_leaderboard_for_every_model(alpacaeval):
    pairs, judgments = alpacaeval
    lb = jk.load_table("alpacaeval_leaderboard").set_index("model")
    merged = judgments.merge(pairs[["pair_id", "model_b"]], on="pair_id")
    models = sorted(set(merged["model_b"]))
    assert len(models) >= 40
    on_board = [m for m in models if m in lb.index]
    assert len(on_board) >= len(models) - 1  # text_davinci_003 is not on this leaderboard
    g = merged.groupby("model_b")
    win_rate = 100 * (1 - g["p_a"].mean())  # P(model b preferred)
    n_wins = g["verdict"].apply(lambda v: (v == "b").sum())
    n_draws = g["verdict"].apply(lambda v: (v == "tie").sum())
    n_total = g.size()
    np.testing.assert_allclose(win_rate[on_board], lb.loc[on_board, "win_rate"], atol=1e-6)
    assert (n_wins[on_board] == lb.loc[on_board, "n_wins"]).all()
    assert (n_draws[on_board] == lb.loc[on_board, "n_draws"]).all()
    assert (n_total[on_board] == lb.loc[on_board, "n_total"]).all()


def test_pairs_put_the_baseline_in_a(alpacaeval):
    pairs, judgments = alpacaeval
    assert (pairs["model_a"] == "gpt4_1106_preview").all()
    assert set(pairs["dataset"]) == {"helpful_base", "koala", "oasst", "selfinstruct", "vicuna"}
    assert pairs["label"].isna().all()
    assert pairs.groupby("instruction_id")["prompt"].nunique().max() == 1
    assert pairs["instruction_id"].nunique() == 805
    assert set(judgments["judge"]) == {"weighted_alpaca_eval_gpt4_turbo"}
    assert len(judgments) == len(pairs)  # every order recovered


def test_shown_order_is_shared_per_instruction_and_balanced(alpacaeval):
    pairs, judgments = alpacaeval
    j = judgments.merge(pairs[["pair_id", "instruction_id"]], on="pair_id")
    assert j.groupby("instruction_id")["order"].nunique().max() == 1
    share_ab = (j.groupby("instruction_id")["order"].first() == "ab").mean()
    assert 0.45 < share_ab < 0.55  # randomised by the annotator


def test_p_a_agrees_with_the_logprobs_through_the_order(alpacaeval):
    # Recompute P(second shown) from one model's raw upstream logprobs, independently of the
    # loader: alpaca_eval's weighted_alpaca_eval_gpt4_turbo config parses the verdict token with
    # numerator "m" = "the first output is better" over {"m", "M"}. With the recovered order,
    # p_a (taken from upstream `preference`) must equal P(first) when a was shown first.
    import ast
    import hashlib
    import json
    import math

    from judgekit.data import alpacaeval as ae
    from judgekit.data.fetch import read_bytes

    pairs, judgments = alpacaeval
    rows = json.loads(read_bytes(ae.annotation_files()["alpaca-7b"]))
    j = judgments.set_index("pair_id")
    checked = 0
    for r in rows[:200]:
        raw = r["raw_completion"]
        raw = ast.literal_eval(raw) if isinstance(raw, str) else raw
        if not (raw or {}).get("logprobs"):
            continue
        top = {t["token"]: math.exp(t["logprob"])
               for t in raw["logprobs"]["content"][0]["top_logprobs"]}
        if "m" not in top and "M" not in top:
            continue
        p_second = top.get("M", 0.0) / (top.get("m", 0.0) + top.get("M", 0.0))
        iid = hashlib.sha256(r["instruction"].encode()).hexdigest()[:12]
        row = j.loc[f"alpacaeval/alpaca-7b/{iid}"]
        p_a = 1 - p_second if row["order"] == "ab" else p_second
        assert abs(p_a - row["p_a"]) < 1e-3
        checked += 1
    assert checked > 150


def test_models_filter_and_order_recovery_without_logprobs():
    # FuseChat files carry no logprobs: their orders come from another model's annotations.
    pairs, judgments = jk.load_dataset("alpacaeval", models="FuseChat-Gemma-2-9B-Instruct")
    assert set(pairs["model_b"]) == {"FuseChat-Gemma-2-9B-Instruct"} and len(pairs) == 805
    assert len(judgments) == 805 and judgments["order"].isin(["ab", "ba"]).all()
    assert judgments["raw"].isna().all()


def test_unknown_model_is_named_with_suggestions():
    with pytest.raises(ValueError, match=r"unknown AlpacaEval model 'alpaca-7B'.*did you mean 'alpaca-7b'"):
        jk.load_pairs("alpacaeval", models=["alpaca-7B"])


def test_known_but_absent_model_fails_with_url(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGEKIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("JUDGEKIT_DATA_MIRROR", os.environ["JUDGEKIT_DATA_MIRROR"])
    # jina-chat is known (UPSTREAM-ONLY.tsv) but not mirrored; no network here -> clear error.
    # On a machine with internet this downloads it instead, which is also correct.
    try:
        pairs = jk.load_pairs("alpacaeval", models=["jina-chat"])
    except jk.DataFileError as err:
        msg = str(err)
        assert "results/jina-chat/weighted_alpaca_eval_gpt4_turbo/annotations.json" in msg
        assert "https://raw.githubusercontent.com/tatsu-lab/alpaca_eval/" in msg
        assert "judgekit fetch alpacaeval" in msg
    else:
        assert len(pairs) > 800


def test_tables_load_with_named_first_column():
    lb = jk.load_table("alpacaeval_leaderboard")
    assert lb.columns[0] == "model" and len(lb) == 223
    assert {"win_rate", "length_controlled_winrate", "lc_standard_error", "avg_length"} <= set(lb.columns)
    elo = jk.load_table("arena_elo")
    assert elo.columns[0] == "model" and "Arena Elo [April 18, 2024]" in elo.columns
    w = jk.load_table("alpacaeval_glm_weights")
    assert w.columns[0] == "model" and "np.tanh(std_delta_len)" in w.columns
    ev = jk.load_table("alpacaeval_evaluators")
    assert ev.columns[0] == "evaluator" and len(ev) == 32
