"""Wei et al. splits: one pair per prompt, disjoint, stratified on human-prefers-longer, seeded."""

import pandas as pd
import pytest

import judgekit as jk


@pytest.fixture(scope="module")
def pool():
    # Simulated pairs whose true share of "human prefers the longer response" is 0.575
    # (Wei et al.'s TL;DR ratio 115:85), plus ties, missing labels and repeated prompts to drop.
    pairs = jk.sim.simulate_pairs(3000, human_prefers_longer=0.575, seed=3)
    extra = pairs.head(300).copy()
    extra["pair_id"] = extra["pair_id"] + "-dup"  # same prompts again: must be deduplicated
    ties = pairs.tail(200).copy()
    ties["pair_id"] = ties["pair_id"] + "-tie"
    ties["prompt"] = ties["prompt"] + " (tie)"
    ties["label"] = ["tie", None] * 100
    return pd.concat([pairs, extra, ties], ignore_index=True)


def test_splits_are_disjoint_deduplicated_and_stratified(pool):
    sampled, summary = jk.sample_splits(pool, n=200, splits=5, seed=7, return_summary=True)
    assert len(sampled) == 1000 and sampled["pair_id"].is_unique
    assert sampled["prompt"].is_unique  # one pair per prompt, across all splits
    assert sampled["label"].isin(["a", "b"]).all()
    assert sampled.groupby("split").size().tolist() == [200] * 5
    # human_longer is recomputed independently from the texts
    pref_len = sampled["len_a"].where(sampled["label"] == "a", sampled["len_b"])
    other_len = sampled["len_b"].where(sampled["label"] == "a", sampled["len_a"])
    assert ((pref_len > other_len) == sampled["human_longer"]).all()
    per_split = sampled.groupby("split")["human_longer"].sum()
    pool_share = summary.set_index("split").loc["pool", "share_longer"]
    assert summary.set_index("split").loc["pool", "n"] == 3000  # duplicates and ties dropped
    assert abs(pool_share - 0.575) < 0.03  # the simulation's true share
    assert (per_split == round(200 * pool_share)).all()
    assert sampled.attrs["summary"].equals(summary)


def test_seeded(pool):
    a = jk.sample_splits(pool, n=100, splits=3, seed=1)
    b = jk.sample_splits(pool, n=100, splits=3, seed=1)
    c = jk.sample_splits(pool, n=100, splits=3, seed=2)
    assert a["pair_id"].tolist() == b["pair_id"].tolist()
    assert a["pair_id"].tolist() != c["pair_id"].tolist()


def test_length_units_and_prompt_key(pool):
    def recomputed(sampled, size):  # human_longer from the texts, in the unit asked for
        a, b = sampled["response_a"].map(size), sampled["response_b"].map(size)
        return (a > b).where(sampled["label"] == "a", b > a)

    words = jk.sample_splits(pool, n=50, splits=2, seed=0, length="words")
    assert len(words) == 100
    assert (words["human_longer"] == recomputed(words, lambda t: len(t.split()))).all()
    custom = jk.sample_splits(pool, n=50, splits=2, seed=0, length=lambda t: len(t.encode()))
    assert len(custom) == 100
    assert (custom["human_longer"] == recomputed(custom, lambda t: len(t.encode()))).all()
    with pytest.raises(ValueError, match="length must be 'chars', 'words' or a callable"):
        jk.sample_splits(pool, n=50, splits=2, length="tokens")
    with pytest.raises(ValueError, match="no column 'instruction_id'"):
        jk.sample_splits(pool, n=50, splits=2, by="instruction_id")


def test_too_few_pairs_is_explained(pool):
    with pytest.raises(ValueError, match=r"need 4000 pairs .* the pool has 3000 .* 200 pairs without "
                                         r"a decisive label and 300 repeated prompts"):
        jk.sample_splits(pool, n=800, splits=5)
