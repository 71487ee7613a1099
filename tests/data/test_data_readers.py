"""Readers for a user's own runs in the LLMBar and Judging-the-Judges layouts: on fixtures written
in the upstream schemas, and on the real mirrored files, where they must equal the loaders."""

import gzip
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

import judgekit as jk

FIXTURES = Path(__file__).parents[1] / "fixtures" / "data"
MIRROR = Path(os.environ["JUDGEKIT_DATA_MIRROR"]) if os.environ.get("JUDGEKIT_DATA_MIRROR") else None
needs_mirror = pytest.mark.skipif(MIRROR is None or not MIRROR.is_dir(), reason="needs the data mirror")


def _sorted(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return df.sort_values(keys, kind="stable").reset_index(drop=True)


# ------------------------------------------------------------------------------------- LLMBar

def test_llmbar_reader_on_a_fixture_in_the_upstream_schema():
    pairs, judgments = jk.read_llmbar_results(FIXTURES / "llmbar_run")
    assert pairs["pair_id"].tolist() == ["llmbar/MySet/0", "llmbar/MySet/1", "llmbar/MySet/2"]
    assert pairs["label"].tolist() == ["a", "b", "a"] and set(pairs["dataset"]) == {"MySet"}
    assert pairs["len_b"].tolist() == [6, 2, 6]
    cot = judgments[judgments["judge"] == "toy-judge/CoT"].set_index(["pair_id", "order"])
    # winner "1"/"2" names the response whichever order it was shown in; the last round counts
    assert cot["verdict"].to_dict() == {
        ("llmbar/MySet/0", "ab"): "a", ("llmbar/MySet/0", "ba"): "a",
        ("llmbar/MySet/1", "ab"): "b", ("llmbar/MySet/1", "ba"): "a",
        ("llmbar/MySet/2", "ab"): None, ("llmbar/MySet/2", "ba"): "a"}
    assert cot.loc[("llmbar/MySet/2", "ab"), "error"] == "no verdict parsed upstream"
    assert cot.loc[("llmbar/MySet/2", "ab"), "raw"] == "Both are fine."
    assert set(judgments["template"]) == {"CoT", "Vanilla"} and set(judgments["model"]) == {"toy-judge"}
    # and the metrics take them as they are
    acc = jk.accuracy(judgments, pairs, by="judge", n_boot=0)
    assert set(acc["judge"]) == {"toy-judge/CoT", "toy-judge/Vanilla"}


def test_llmbar_reader_single_file_needs_names_outside_the_layout(tmp_path):
    src = FIXTURES / "llmbar_run" / "MySet" / "evaluators" / "toy-judge" / "CoT" / "result.json"
    loose = tmp_path / "result.json"
    shutil.copy(src, loose)
    with pytest.raises(ValueError, match=r"not in <set>/evaluators/<judge>/<strategy>/result\.json; "
                                         r"pass judge= and strategy="):
        jk.read_llmbar_results(loose)
    pairs, judgments = jk.read_llmbar_results(loose, judge="mine", strategy="CoT", set_name="toy")
    assert pairs["pair_id"].tolist() == ["llmbar/toy/0", "llmbar/toy/1", "llmbar/toy/2"]
    assert pairs["label"].tolist() == ["a", "b", "a"]  # from the result records themselves
    assert set(judgments["judge"]) == {"mine/CoT"} and len(judgments) == 6
    with pytest.raises(FileNotFoundError):
        jk.read_llmbar_results(tmp_path / "nothing-here")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no result.json file under"):
        jk.read_llmbar_results(tmp_path / "empty")


def test_llmbar_reader_reads_gzip_and_names_a_broken_file(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "llmbar_run", run)
    result = run / "MySet" / "evaluators" / "toy-judge" / "CoT" / "result.json"
    result.with_name("result.json.gz").write_bytes(gzip.compress(result.read_bytes()))
    result.unlink()
    plain_pairs, plain_j = jk.read_llmbar_results(FIXTURES / "llmbar_run")
    pairs, judgments = jk.read_llmbar_results(run)
    pd.testing.assert_frame_equal(pairs, plain_pairs)
    pd.testing.assert_frame_equal(_sorted(judgments, ["judge", "pair_id", "order"]),
                                  _sorted(plain_j, ["judge", "pair_id", "order"]))
    (run / "MySet" / "evaluators" / "toy-judge" / "Vanilla" / "result.json").write_text("[{")
    with pytest.raises(ValueError, match=r"Vanilla/result\.json: not valid JSON"):
        jk.read_llmbar_results(run)


@needs_mirror
def test_llmbar_reader_on_the_mirror_equals_the_loader():
    (dataset,) = (MIRROR / "github" / "princeton-nlp" / "LLMBar").glob("*/Dataset")
    pairs, judgments = jk.read_llmbar_results(dataset)
    ref_pairs, ref_judgments = jk.load_dataset("llmbar")
    pd.testing.assert_frame_equal(_sorted(pairs, ["pair_id"]), _sorted(ref_pairs, ["pair_id"]))
    keys = ["pair_id", "judge", "order"]
    pd.testing.assert_frame_equal(_sorted(judgments, keys), _sorted(ref_judgments, keys))


# ------------------------------------------------------------------------- Judging the Judges

def test_jtj_reader_on_fixtures_in_the_upstream_schema():
    pairs, judgments = jk.read_judging_the_judges(FIXTURES / "jtj_run")
    p = pairs.set_index("pair_id")
    assert sorted(p.index) == ["DevBench/full/uml-1;human;model-z",
                               "MTBench/repetition/81;model-x;model-y",
                               "MTBench/repetition/82;model-x;model-y"]
    mt = p.loc["MTBench/repetition/81;model-x;model-y"]
    assert mt["prompt"] == ("[Turn 1]\nWhat is the capital of France?\n\n"
                            "[Turn 2]\nHow many people live there?")
    assert mt["response_a"] == "[Turn 1]\nParis.\n\n[Turn 2]\nAbout 2.1 million."  # model-x
    assert mt["reference"] == "[Turn 1]\nParis\n\n[Turn 2]\n"
    j = judgments.set_index(["judge", "pair_id", "order"])
    assert set(judgments.loc[judgments["judge"] == "my-judge", "repeat"]) == {1}  # Repetition2
    assert j["verdict"].to_dict() == {
        # "[[A]] is better than [[B]]": the first verdict, as the study extracted it
        ("my-judge", "MTBench/repetition/81;model-x;model-y", "ab"): "a",
        # model-x shown second and chosen ([[B]])
        ("my-judge", "MTBench/repetition/81;model-x;model-y", "ba"): "a",
        ("my-judge", "MTBench/repetition/82;model-x;model-y", "ab"): "tie",
        ("my-judge", "MTBench/repetition/82;model-x;model-y", "ba"): None,
        ("dev-judge", "DevBench/full/uml-1;human;model-z", "ab"): "a",
        ("dev-judge", "DevBench/full/uml-1;human;model-z", "ba"): None,  # "**Choice:** B"
    }
    assert j.loc[("my-judge", "MTBench/repetition/82;model-x;model-y", "ba"), "error"] == \
        "no verdict found in the judge's text"


def test_jtj_reader_options_and_errors(tmp_path):
    src = FIXTURES / "jtj_run" / "toy_devbench_record0_dev-judge_2" / "record_dev-judge_2.tsv"
    one = tmp_path / "mine.tsv"
    shutil.copy(src, one)
    pairs, judgments = jk.read_judging_the_judges(one, judge="renamed")  # last column, renamed
    assert set(judgments["judge"]) == {"renamed"} and set(judgments["run"]) == {"full"}
    with pytest.raises(ValueError, match=r"not a MTBench record TSV: missing column\(s\) question_1"):
        jk.read_judging_the_judges(one, benchmark="MTBench")
    with pytest.raises(ValueError, match="unknown benchmark 'mtbench'"):
        jk.read_judging_the_judges(one, benchmark="mtbench")
    bad = tmp_path / "record_x_2.tsv"
    bad.write_text("cmp_index\tquestion\nq;a;b\tQ\n")
    with pytest.raises(ValueError, match=r"record_x_2\.tsv: neither an MT-Bench-style record TSV"):
        jk.read_judging_the_judges(bad)


@needs_mirror
@pytest.mark.parametrize("benchmark", ["MTBench", "DevBench"])
def test_jtj_reader_on_the_mirror_equals_the_loader(benchmark):
    (root,) = (MIRROR / "github" / "Slimshilin" / "Position-Bias-Analyzer").glob("*/judgment_data")
    pairs, judgments = jk.read_judging_the_judges(root / f"data_{benchmark}_repetition")
    ref_pairs, ref_judgments = jk.load_dataset("judging_the_judges", benchmark=benchmark,
                                               run="repetition")
    pd.testing.assert_frame_equal(_sorted(pairs, ["pair_id"]), _sorted(ref_pairs, ["pair_id"]))
    keys = ["judge", "repeat", "pair_id", "order"]
    pd.testing.assert_frame_equal(_sorted(judgments, keys), _sorted(ref_judgments, keys))
