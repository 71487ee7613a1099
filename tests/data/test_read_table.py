"""jk.read_judgments (a pipeline's own CSV / TSV / JSON / JSONL / parquet, with a column mapping),
jk.split_tables, and the format detection behind `judgekit audit --format auto`."""

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _formats import alpacaeval_tree

import judgekit as jk

FORMATS = Path(__file__).parents[1] / "fixtures" / "formats"
CSV = FORMATS / "my_pipeline.csv"
DATA = Path(__file__).parents[1] / "fixtures" / "data"


def test_the_minimal_csv():
    pairs, j = jk.read_judgments(CSV)
    assert pairs["pair_id"].tolist() == ["p1", "p2", "p3", "p4"]
    assert pairs["label"].isna().all() and pairs["len_b"].tolist() == [1, 4, 33, 20]
    assert set(j["judge"]) == {"my_pipeline"}  # the file's name
    assert j["verdict"].tolist() == ["a", "a", "a", "b", "b", "a", "tie", None]  # "A" read as "a"
    assert j["repeat"].tolist() == [0] * 8 and j["p_a"].isna().all()
    assert jk.read_judgments(CSV, judge="mine")[1]["judge"].unique().tolist() == ["mine"]


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".json", ".jsonl", ".parquet", ".csv.gz", ".jsonl.gz"])
def test_every_format_round_trips(tmp_path, suffix):
    """Write the two tables as one file in each format and read them back equal."""
    pairs, j, _ = jk.sim.simulate_judgments(30, repeats=2, seed=4, position_bias=0.5)
    pairs = pairs[["pair_id", "prompt", "response_a", "response_b", "label", "dataset"]]
    flat = j[["pair_id", "judge", "order", "repeat", "verdict", "p_a"]].merge(pairs, on="pair_id")
    f = tmp_path / f"run{suffix}"
    plain = suffix.removesuffix(".gz")
    if plain == ".csv":
        data = flat.to_csv(index=False).encode()
    elif plain == ".tsv":
        data = flat.to_csv(index=False, sep="\t").encode()
    elif plain == ".json":
        data = flat.to_json(orient="records").encode()
    elif plain == ".jsonl":
        data = flat.to_json(orient="records", lines=True).encode()
    else:
        flat.to_parquet(f)
        data = None
    if data is not None:
        f.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    got_pairs, got_j = jk.read_judgments(f)
    want_pairs = jk.validate_pairs(pairs)
    want_j = jk.validate_judgments(j[["pair_id", "judge", "order", "repeat", "verdict", "p_a"]])
    pd.testing.assert_frame_equal(got_pairs, want_pairs, check_dtype=False)
    key = ["pair_id", "order", "repeat"]
    pd.testing.assert_frame_equal(got_j.sort_values(key).reset_index(drop=True)[want_j.columns],
                                  want_j.sort_values(key).reset_index(drop=True), check_dtype=False,
                                  check_exact=False, rtol=1e-12)


def test_a_column_mapping_and_a_separate_pairs_file(tmp_path):
    j = pd.DataFrame({"qid": ["007", "007", "008"], "who": "judge-1", "shown": ["AB", "BA", "ab"],
                      "winner": ["A", "b", "Tie"], "prob_a": [0.8, 0.4, 0.5]})
    p = pd.DataFrame({"qid": ["007", "008"], "question": ["q1", "q2"], "answer_1": ["x", "y"],
                      "answer_2": ["xx", "yy"], "gold": ["a", None]})
    j.to_csv(tmp_path / "judgments.csv", index=False)
    p.to_json(tmp_path / "pairs.jsonl", orient="records", lines=True)
    columns = {"qid": "pair_id", "who": "judge", "shown": "order", "winner": "verdict",
               "prob_a": "p_a", "question": "prompt", "answer_1": "response_a",
               "answer_2": "response_b", "gold": "label"}
    pairs, judgments = jk.read_judgments(tmp_path / "judgments.csv", columns=columns,
                                         pairs=tmp_path / "pairs.jsonl")
    assert judgments["pair_id"].tolist() == ["007", "007", "008"]  # ids stay text
    assert judgments["order"].tolist() == ["ab", "ba", "ab"] and judgments["verdict"].tolist() == ["a", "b", "tie"]
    assert judgments["p_a"].tolist() == [0.8, 0.4, 0.5]
    assert pairs["label"].tolist() == ["a", None]
    with pytest.raises(ValueError, match=r"judgments\.csv and .*pairs\.jsonl: columns=\{\.\.\.\} "
                                         r"names 'score', which is not in the file; it has \['answer_1'"):
        jk.read_judgments(tmp_path / "judgments.csv", columns={**columns, "score": "p_a"},
                          pairs=tmp_path / "pairs.jsonl")


def test_repeats_are_numbered_and_texts_must_agree():
    rows = pd.DataFrame({"prompt": "q", "response_a": "x", "response_b": "y",
                         "order": ["ab", "ab", "ab", "ba"], "verdict": ["a", "b", "a", "a"]})
    pairs, j = jk.split_tables(rows)
    assert len(pairs) == 1 and pairs.loc[0, "pair_id"].startswith("pair-")  # made from the texts
    assert j["repeat"].tolist() == [0, 1, 2, 0] and set(j["judge"]) == {"judge"}
    bad = rows.assign(pair_id="p1", response_b=["y", "y", "z", "y"])
    with pytest.raises(jk.TableError, match=r"column 'pair_id': 'p1' names different pairs "
                                            r"\('response_b' differs\) in 4 rows \(index 0, 1, 2, 3\)"):
        jk.split_tables(bad)
    with pytest.raises(jk.TableError, match=r"the table: 1 problem found, so nothing was read:\n"
                                            r"  - missing column: no 'verdict' column"):
        jk.split_tables(rows.drop(columns="verdict"), name="the table")


def test_bad_files_are_named(tmp_path):
    f = tmp_path / "run.xlsx"
    f.write_bytes(b"PK")
    with pytest.raises(ValueError, match=r"run\.xlsx: cannot tell the format from '\.xlsx'"):
        jk.read_judgments(f)
    f = tmp_path / "run.json"
    f.write_text('{"a": 1}')
    with pytest.raises(ValueError, match=r"run\.json: expected a JSON list of rows"):
        jk.read_judgments(f)
    f.write_text("[1, 2")
    with pytest.raises(ValueError, match=r"run\.json: not valid JSON"):
        jk.read_judgments(f)
    f = tmp_path / "run.csv"
    f.write_text("pair_id,judge,order,verdict\np1,j,ab,left\n")
    with pytest.raises(ValueError, match=rf"{f}: 1 problem found, so nothing was read:\n  - "
                                         r"unknown verdict: column 'verdict': 'left' in 1 row "
                                         r"\(row 2\) is not a preference judgekit knows"):
        jk.read_judgments(f)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        jk.read_judgments(tmp_path / "absent.csv")
    with pytest.raises(FileNotFoundError, match="is a folder"):
        jk.read_judgments(tmp_path)


def test_detect_format_on_every_layout(tmp_path):
    cases = {
        alpacaeval_tree(): "alpacaeval",
        alpacaeval_tree() / "results" / "toy-model" / "alpaca_eval_gpt4" / "annotations.json": "alpacaeval",
        FORMATS / "mtbench" / "data" / "mt_bench" / "model_judgment" / "gpt-4_pair.jsonl": "mtbench",
        FORMATS / "mtbench" / "data" / "mt_bench" / "model_judgment" / "gpt-4_single.jsonl": "mtbench",
        FORMATS / "mtbench" / "human_judgments.json": "mtbench",
        FORMATS / "arena_hard" / "data": "arena-hard",
        FORMATS / "arena_hard" / "v2_my-model.jsonl": "arena-hard",
        FORMATS / "my_pipeline.csv": "csv",
        DATA / "llmbar_run": "llmbar",
        DATA / "jtj_run": "jtj",
        DATA / "jtj_run" / "toy_devbench_record0_dev-judge_2" / "record_dev-judge_2.tsv": "jtj",
    }
    for path, want in cases.items():
        name, reason = jk.detect_format(path)
        assert name == want, (path, name, reason)
        assert reason
    # an AlpacaEval file under another name is recognised by its records
    renamed = tmp_path / "my_annotations.json"
    shutil.copy(alpacaeval_tree() / "results" / "toy-model" / "weighted_alpaca_eval_gpt4_turbo"
                / "annotations.json", renamed)
    assert jk.detect_format(renamed)[0] == "alpacaeval"
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="a folder in none of the layouts"):
        jk.detect_format(tmp_path / "empty")
    with pytest.raises(FileNotFoundError):
        jk.detect_format(tmp_path / "nope.csv")


def test_read_any_uses_the_reader_of_the_format():
    for path, reader in [(FORMATS / "arena_hard" / "data", jk.read_arena_hard),
                         (alpacaeval_tree(), jk.read_alpacaeval),
                         (DATA / "llmbar_run", jk.read_llmbar_results)]:
        got = jk.read_any(path)
        want = reader(path)
        for a, b in zip(got, want):
            pd.testing.assert_frame_equal(a, b)
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        jk.read_any(CSV, format="xml")
    with pytest.raises(ValueError, match="pairs= is for tables of judgments"):
        jk.read_any(FORMATS / "arena_hard" / "data", pairs=CSV)
    pairs, j = jk.read_any(FORMATS / "mtbench" / "data" / "mt_bench" / "model_judgment" /
                           "gpt-4_single.jsonl", single_as_pairs=True)
    assert len(j) == 4 and np.all(j["order"] == "ab")


def test_json_records_with_nested_values_stay_readable(tmp_path):
    f = tmp_path / "run.jsonl"
    f.write_text("".join(json.dumps({"pair_id": f"p{i}", "judge": "j", "order": "ab", "verdict": "a",
                                     "meta": {"k": i}}) + "\n" for i in range(3)))
    pairs, j = jk.read_judgments(f)
    assert pairs is None and j["meta"].tolist() == [{"k": 0}, {"k": 1}, {"k": 2}]
