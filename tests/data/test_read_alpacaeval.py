"""jk.read_alpacaeval: a user's own AlpacaEval runs (any annotator) on fixtures written in the
upstream schema, and the real mirrored annotations, where it must equal the loader."""

import json
import math
import os
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest
from _formats import alpacaeval_tree

import judgekit as jk
from judgekit.data.alpacaeval import seeded_order

FIXTURE = alpacaeval_tree()
MODEL_DIR = FIXTURE / "results" / "toy-model"
MIRROR = Path(os.environ["JUDGEKIT_DATA_MIRROR"]) if os.environ.get("JUDGEKIT_DATA_MIRROR") else None
needs_mirror = pytest.mark.skipif(MIRROR is None or not MIRROR.is_dir(), reason="needs the data mirror")


def _sorted(df, keys):
    return df.sort_values(keys, kind="stable").reset_index(drop=True)


def test_weighted_annotations_become_probabilities_and_orders():
    pairs, j = jk.read_alpacaeval(MODEL_DIR / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json")
    raw = json.loads((MODEL_DIR / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json").read_text())
    assert pairs["prompt"].tolist() == [r["instruction"] for r in raw]
    assert (pairs["model_a"] == "gpt4_1106_preview").all() and (pairs["model_b"] == "toy-model").all()
    assert pairs["response_b"].tolist() == [r["output_2"] for r in raw]
    assert set(j["judge"]) == {"weighted_alpaca_eval_gpt4_turbo"}
    # p_a = 2 - preference: the baseline (response a) wins with P = 2 - preference
    assert j["p_a"].round(6).tolist() == [0.9, 0.2, 0.5, 1.0]
    assert j["verdict"].tolist() == ["a", "b", "tie", "a"]
    # the first two orders come from the m/M logprobs; the P = 1/2 and no-logprob rows from the
    # seeded rule, which agrees with them
    assert j["order"].tolist() == ["ab", "ba", "ba", "ba"]
    assert j["order"].tolist() == [seeded_order(r["instruction"]) for r in raw]
    assert j["raw"].iloc[0] == "m" and j["raw"].iloc[3] is None


def test_a_results_folder_with_two_annotators_and_model_outputs():
    pairs, j = jk.read_alpacaeval(FIXTURE)
    assert len(pairs) == 4 and pairs["pair_id"].str.startswith("alpacaeval/toy-model/").all()
    hard = j[j["judge"] == "alpaca_eval_gpt4"].set_index("pair_id")
    assert len(hard) == 4
    # a hard annotator's preferences are verdicts, not probabilities; 0 is AlpacaEval's old draw
    assert hard["p_a"].isna().all()
    assert hard["verdict"].tolist() == ["a", "b", "tie", "b"]
    # its annotations omit output_2: it comes from model_outputs.json beside the annotator folder
    outputs = json.loads((MODEL_DIR / "model_outputs.json").read_text())
    assert pairs.set_index("prompt").loc[[o["instruction"] for o in outputs], "response_b"].tolist() == \
        [o["output"] for o in outputs]
    # and the metrics take the tables as they are
    wr = jk.win_rates(j, pairs, n_boot=0)
    assert set(wr["judge"]) == {"alpaca_eval_gpt4", "weighted_alpaca_eval_gpt4_turbo"}


def test_a_file_outside_the_layout_names_model_from_generator(tmp_path):
    rows = json.loads((MODEL_DIR / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json").read_text())
    f = tmp_path / "my_run.json"
    f.write_text(json.dumps(rows))
    pairs, j = jk.read_alpacaeval(f)
    assert set(pairs["model_b"]) == {"toy-model"}  # generator_2
    pairs, j = jk.read_alpacaeval(f, model="renamed", annotator="judge-x")
    assert set(pairs["model_b"]) == {"renamed"} and set(j["judge"]) == {"judge-x"}
    for r in rows:
        r["generator_2"] = r["instruction"][:4]  # no single generator: the model must be named
    f.write_text(json.dumps(rows))
    with pytest.raises(ValueError, match=r"my_run\.json: cannot tell which model was compared.*pass model="):
        jk.read_alpacaeval(f)


def test_missing_outputs_and_bad_files_are_named(tmp_path):
    hard = json.loads((MODEL_DIR / "alpaca_eval_gpt4" / "annotations.json").read_text())
    f = tmp_path / "annotations.json"
    f.write_text(json.dumps(hard))  # no output_2 and no model_outputs.json beside it
    with pytest.raises(ValueError, match=r"annotations\.json, annotation 0: no 'output_2'.*model_outputs="):
        jk.read_alpacaeval(f)
    pairs, _ = jk.read_alpacaeval(f, model_outputs=MODEL_DIR / "model_outputs.json")
    assert pairs["response_b"].iloc[0] == "9 is prime."
    f.write_text("{not json")
    with pytest.raises(ValueError, match=r"annotations\.json: not valid JSON"):
        jk.read_alpacaeval(f)
    f.write_text(json.dumps({"instruction": "x"}))
    with pytest.raises(ValueError, match=r"annotations\.json: expected a JSON list of annotations"):
        jk.read_alpacaeval(f)
    f.write_text(json.dumps([{"instruction": "x", "output_1": "a", "output_2": "b", "generator_2": "m",
                              "preference": "high"}]))
    with pytest.raises(ValueError, match=r"annotation 0: cannot parse"):
        jk.read_alpacaeval(f)


def test_orders_that_contradict_the_seeded_rule_are_not_guessed(tmp_path):
    """An annotator run with another seed: the rule is refused, rows without logprobs dropped."""
    folder = tmp_path / "results" / "toy-model" / "weighted_alpaca_eval_gpt4_turbo"
    shutil.copytree(MODEL_DIR / "weighted_alpaca_eval_gpt4_turbo", folder)
    f = folder / "annotations.json"
    rows = json.loads(f.read_text())
    rows[0]["preference"] = 2 - 0.1  # the same logprobs now only fit the other order
    f.write_text(json.dumps(rows))
    with pytest.warns(jk.MissingDataWarning) as caught:
        pairs, j = jk.read_alpacaeval(f)
    messages = [str(w.message) for w in caught]
    assert any("1 of 2 orders" in m and "seeded order (seed 0)" in m for m in messages)
    assert any("cannot be recovered" in m for m in messages)
    assert len(pairs) == 4 and len(j) == 2  # the P = 1/2 and no-logprob rows are left out
    with pytest.warns(jk.MissingDataWarning, match="cannot be recovered"):
        _, none = jk.read_alpacaeval(MODEL_DIR / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json",
                                     order_seed=None)
    assert none["order"].tolist() == ["ab", "ba"]


@needs_mirror
def test_a_model_without_logprobs_equals_the_loader():
    """FuseChat-Gemma-2-9B-Instruct's file has no logprobs at all: the loader recovers its orders
    from the other models' files, the reader from AlpacaEval's seeded rule. Equal tables."""
    (results,) = (MIRROR / "github" / "tatsu-lab" / "alpaca_eval").glob("*/results")
    model = "FuseChat-Gemma-2-9B-Instruct"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pairs, j = jk.read_alpacaeval(results / model)
    ref_pairs, ref_j = jk.load_dataset("alpacaeval", models=model)
    assert len(j) == 805 and j["order"].notna().all()
    pd.testing.assert_frame_equal(_sorted(pairs, ["pair_id"]), _sorted(ref_pairs, ["pair_id"]))
    pd.testing.assert_frame_equal(_sorted(j, ["pair_id"]), _sorted(ref_j, ["pair_id"]))


@needs_mirror
def test_the_whole_mirror_equals_the_loader():
    """All 43 mirrored models: every order the logprobs tell agrees with the seeded rule (the
    reader would warn otherwise), and the tables equal the loader's."""
    (results,) = (MIRROR / "github" / "tatsu-lab" / "alpaca_eval").glob("*/results")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pairs, j = jk.read_alpacaeval(results)
    ref_pairs, ref_j = jk.load_dataset("alpacaeval")
    assert len(j) == len(ref_j) == 34608 and j["p_a"].notna().all()
    pd.testing.assert_frame_equal(_sorted(pairs, ["pair_id"]), _sorted(ref_pairs, ["pair_id"]))
    pd.testing.assert_frame_equal(_sorted(j, ["pair_id"]), _sorted(ref_j, ["pair_id"]))
    assert not math.isnan(j["preference"].mean())
