"""CALM, PandaLM, Auto-J, HH-RLHF on the real mirror; TL;DR, MT-Bench human, RewardBench and
HH-RLHF helpful-base on small fixtures written in their upstream schemas."""

import gzip
import json
import os
import warnings
from pathlib import Path

import pandas as pd
import pytest

import judgekit as jk
from judgekit.data import fetch

FIXTURES = Path(__file__).parents[1] / "fixtures" / "data"
needs_mirror = pytest.mark.skipif(
    not os.environ.get("JUDGEKIT_DATA_MIRROR"), reason="needs the offline data mirror"
)


# ------------------------------------------------------------------------- offline, real data

@needs_mirror
def test_calm_keeps_original_and_perturbed_texts():
    pairs = jk.load_pairs("calm")
    assert set(pairs["dataset"]) == {"alignment", "fact_related", "refinement_aware", "verbosity",
                                     "fallacy_oversight", "sentiment", "authority", "refinement"}
    originals = pairs[pairs["perturbation"].isna()]
    perturbed = pairs[pairs["perturbation"].notna() & pairs["original_pair_id"].notna()]
    assert len(perturbed) > 3000
    m = perturbed.merge(originals[["pair_id", "response_a", "response_b"]],
                        left_on="original_pair_id", right_on="pair_id", suffixes=("", "_orig"))
    assert len(m) == len(perturbed)
    assert (m["original_response_a"] == m["response_a_orig"]).all()
    assert (m["original_response_b"] == m["response_b_orig"]).all()
    side_a = m["perturbed"] == "a"
    # the other response is untouched; the perturbed one differs unless flagged unchanged
    assert (m.loc[side_a, "response_b"] == m.loc[side_a, "response_b_orig"]).all()
    assert (m.loc[~side_a, "response_a"] == m.loc[~side_a, "response_a_orig"]).all()
    differs = m["response_a"].where(side_a, m["response_b"]) != m["response_a_orig"].where(
        side_a, m["response_b_orig"])
    assert (differs == m["changed"]).all() and m["changed"].mean() > 0.95
    verb = pairs[pairs["perturbation"] == "answer2_longer"]
    assert len(verb) == 500 and (verb["perturbed"] == "b").all() and (verb["label"] == "a").all()
    assert (verb["len_b"] > verb["original_response_b"].str.len()).mean() > 0.95  # lengthened
    fallacy = pairs[pairs["perturbation"] == "answer1_fallacy_oversight"]
    assert (fallacy["label"] == "b").all()
    assert pairs.loc[pairs["dataset"] == "refinement", "label"].isna().all()
    sentiment = pairs[pairs["dataset"] == "sentiment"]["perturbation"].dropna()
    assert {p.split("_")[1] for p in sentiment} == {"cheerful", "sad", "angry", "fear"}
    with pytest.raises(ValueError, match="unknown CALM set 'verbose'"):
        jk.load_pairs("calm", sets="verbose")
    with pytest.raises(ValueError, match="has human labels but no published judge outputs"):
        jk.load_judgments("calm")


@needs_mirror
def test_pandalm_majority_labels_and_judges():
    pairs, judgments = jk.load_dataset("pandalm")
    assert len(pairs) == 999
    votes = pairs[["human_1", "human_2", "human_3"]]
    agree = votes.eq(pairs["label"], axis=0).sum(axis=1)
    assert (agree >= 2).all()  # every pair here has a majority
    # labels against the upstream annotator codes (1 / 2 better, 0 tie), read here directly
    raw = json.loads(fetch.read_bytes(fetch.lookup("pandalm", "data/testset-v1.json")))
    code = {0: "tie", 1: "a", 2: "b"}
    expected = {}
    for r in raw:
        counts = pd.Series([r["annotator1"], r["annotator2"], r["annotator3"]]).value_counts()
        expected[f"pandalm/{r['idx']}"] = code[counts.index[0]] if counts.iloc[0] >= 2 else None
    assert pairs.set_index("pair_id")["label"].to_dict() == expected
    assert set(judgments["judge"]) == {"gpt-3.5-turbo", "pandalm-7b"}
    gpt = judgments[judgments["judge"] == "gpt-3.5-turbo"]
    assert gpt["verdict"].isna().sum() == 25  # the "garbage" results, kept as invalid
    assert (gpt.loc[gpt["verdict"].isna(), "error"].str.contains("garbage")).all()
    # each judge's verdicts are the upstream result codes, read here directly
    pl = json.loads(fetch.read_bytes(fetch.lookup("pandalm", "data/pandalm-7b-testset-v1.json")))
    got = judgments[judgments["judge"] == "pandalm-7b"].set_index("pair_id")["verdict"].to_dict()
    assert got == {f"pandalm/{r['idx']}": code[int(r["pandalm_result"])] for r in pl}


@needs_mirror
def test_autoj_and_hh_rlhf_offline():
    autoj = jk.load_pairs("autoj_pairwise")
    assert len(autoj) == 1392  # Li et al. (2024), Auto-J: 1,392 pairwise test samples
    raw = fetch.read_bytes(fetch.lookup("autoj_pairwise", "eval/benchmark/data/autoj_pairwise.json"))
    records = [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
    assert autoj["label"].tolist() == [{0: "a", 1: "b", 2: "tie"}[r["label"]] for r in records]
    assert autoj["response_b"].tolist() == [r["response 2"] for r in records]
    assert autoj["task"].nunique() > 40
    hh = jk.load_pairs("hh_rlhf")
    assert len(hh) == 2312 and set(hh["label"]) == {"a", "b"}
    assert 0.45 < (hh["label"] == "a").mean() < 0.55
    assert not hh["prompt"].str.contains(r"\n\nAssistant:\s*$").any()
    assert hh["prompt"].str.startswith("Human:").all()
    with pytest.raises(ValueError, match="unknown HH-RLHF subset 'helpful'"):
        jk.load_pairs("hh_rlhf", subset="helpful")


@needs_mirror
def test_list_datasets_reports_offline_availability():
    table = jk.list_datasets().set_index("name")
    assert set(table.index) == {"alpacaeval", "llmbar", "judging_the_judges", "pandalm",
                                "autoj_pairwise", "hh_rlhf", "calm", "tldr", "mtbench_human",
                                "rewardbench"}
    offline = table["offline"]
    assert offline[["alpacaeval", "llmbar", "judging_the_judges", "pandalm", "autoj_pairwise",
                    "hh_rlhf", "calm"]].all()
    assert not offline[["tldr", "mtbench_human", "rewardbench"]].any()
    assert table.loc["llmbar", "has_judgments"] and not table.loc["calm", "has_judgments"]
    assert table["license"].str.len().gt(0).all()


# ------------------------------------------------------------------ online-only, on fixtures

@pytest.fixture
def fixture_mirror(tmp_path, monkeypatch):
    """A temporary mirror holding the fixtures where the registry expects the upstream files."""
    mirror = tmp_path / "mirror"
    monkeypatch.setenv("JUDGEKIT_DATA_MIRROR", str(mirror))
    monkeypatch.setenv("JUDGEKIT_CACHE_DIR", str(tmp_path / "cache"))

    def put(dataset: str, path: str, data: bytes) -> None:
        target = mirror / fetch.lookup(dataset, path).key
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    return put


def _parquet(records: list[dict]) -> bytes:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(records), buf)
    return buf.getvalue()


def _load_unverified(name, **filters):
    with pytest.warns(jk.UnverifiedDataWarning, match="no published sha256"):
        return jk.load_dataset(name, **filters)


def test_tldr_parser(fixture_mirror):
    fixture_mirror("tldr", "summarize-from-feedback/dataset/comparisons/batch3.json",
                   (FIXTURES / "tldr_comparisons.jsonl").read_bytes())
    pairs, judgments = _load_unverified("tldr", batches="batch3")
    assert judgments is None
    assert pairs["label"].tolist() == ["a", "b", "a"]
    assert pairs["task"].tolist() == ["valid1", "valid2", "train"]
    assert pairs["model_b"].tolist() == ["ref", "rm3_kl9", "sup2"]
    assert pairs.loc[0, "prompt"].startswith("SUBREDDIT: r/cats\nTITLE: How do I stop my cat")
    assert pairs.loc[2, "prompt"].startswith("The city council approved")
    assert pairs.loc[1, "instruction_id"] == "t3_bbb222"
    valid = _load_unverified("tldr", batches=["batch3"], split="valid2")[0]
    assert valid["pair_id"].tolist() == ["tldr/batch3/1"]
    with pytest.raises(ValueError, match="unknown TL;DR split 'test'"):
        jk.load_pairs("tldr", split="test")


def test_hh_rlhf_helpful_base_parser(fixture_mirror):
    raw = (FIXTURES / "hh_rlhf_helpful.jsonl").read_bytes()
    fixture_mirror("hh_rlhf", "helpful-base/test.jsonl.gz", gzip.compress(raw))
    pairs, _ = _load_unverified("hh_rlhf", subset="helpful-base", split="test")
    records = [json.loads(line) for line in raw.decode().splitlines()]
    assert len(pairs) == 4
    for row, rec in zip(pairs.itertuples(), records):
        chosen = rec["chosen"].rsplit("\n\nAssistant:", 1)[1].strip()
        rejected = rec["rejected"].rsplit("\n\nAssistant:", 1)[1].strip()
        winner = row.response_a if row.label == "a" else row.response_b
        loser = row.response_b if row.label == "a" else row.response_a
        assert (winner, loser) == (chosen, rejected)
    assert pairs.loc[1, "prompt"] == ("Human: How long should I boil an egg?\n\nAssistant: Soft or "
                                      "hard?\n\nHuman: Hard.")
    assert pairs["same_context"].all()


def test_mtbench_human_parser(fixture_mirror):
    data = json.loads((FIXTURES / "mtbench_human.json").read_text())
    for split in ("human", "gpt4_pair"):
        fixture_mirror("mtbench_human", f"lmsys/mt_bench_human_judgments/{split}.parquet",
                       _parquet(data[split]))
    pairs, judgments = _load_unverified("mtbench_human")
    p = pairs.set_index("pair_id")
    t1 = "mtbench/81/gpt-4/llama-13b/1"
    assert p.loc[t1, "label"] == "a" and p.loc[t1, "n_human"] == 3  # 2 of 3 experts
    assert p.loc[t1, "prompt"] == "Write a haiku about rain."
    assert p.loc[t1, "response_b"] == "rain rain rain"
    t2 = "mtbench/81/gpt-4/llama-13b/2"
    assert p.loc[t2, "label"] == "tie"  # "tie (bothbad)"
    assert p.loc[t2, "prompt"] == "[Turn 1]\nWrite a haiku about rain.\n\n[Turn 2]\nNow make it sad."
    assert p.loc[t2, "response_a"].endswith("[Turn 2]\nCold rain, empty room")
    assert pd.isna(p.loc["mtbench/82/claude-v1/gpt-3.5-turbo/1", "label"])  # 1-1 split
    assert pd.isna(p.loc["mtbench/83/alpaca-13b/vicuna-13b-v1.2/2", "label"])  # no human vote
    assert len(judgments) == 8 and set(judgments["judge_type"]) == {"human", "gpt-4"}
    rep = judgments[judgments["pair_id"] == "mtbench/82/claude-v1/gpt-3.5-turbo/1"]
    assert rep["repeat"].tolist() == [0, 1] and rep["verdict"].tolist() == ["b", "a"]


def test_rewardbench_parser(fixture_mirror):
    records = json.loads((FIXTURES / "rewardbench.json").read_text())
    fixture_mirror("rewardbench", "allenai/reward-bench/filtered.parquet", _parquet(records))
    pairs, judgments = _load_unverified("rewardbench")
    assert judgments is None and len(pairs) == 4
    for row, rec in zip(pairs.itertuples(), records):
        assert row.pair_id == f"rewardbench/{rec['id']}" and row.task == rec["subset"]
        winner = row.response_a if row.label == "a" else row.response_b
        model = row.model_a if row.label == "a" else row.model_b
        assert (winner, model) == (rec["chosen"], rec["chosen_model"])


def test_online_set_without_mirror_or_network_names_url(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGEKIT_DATA_MIRROR", str(tmp_path / "empty"))
    monkeypatch.setenv("JUDGEKIT_CACHE_DIR", str(tmp_path / "cache"))
    # No network on the test machines: the download fails with a clear error. (With network
    # it would download and trust on first use, warning; both outcomes are checked.)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jk.UnverifiedDataWarning)
        try:
            jk.load_pairs("rewardbench")
        except jk.DataFileError as err:
            msg = str(err)
            assert "huggingface.co/datasets/allenai/reward-bench" in msg
            assert "judgekit fetch rewardbench" in msg
        else:  # a machine with internet downloads it instead
            assert len(jk.load_pairs("rewardbench")) > 1000
