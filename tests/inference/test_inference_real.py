"""Prediction-powered estimates on real labelled data: hide all but n labels, 500 times per n,
and check the intervals against the rate computed from all the labels."""

from __future__ import annotations

import pytest

import judgekit as jk

SIZES = (50, 100, 200, 400)


def _check(study):
    labelled = study[study["method"].isin(["classical", "ppi", "ppi++"])]
    bad = labelled[~labelled["coverage"].between(0.92, 0.98)]
    assert bad.empty, bad[["judge", "model", "n_labels", "method", "coverage"]]
    ratio = study[study["method"] == "ppi++"]["width_vs_classical"]
    assert (ratio <= 1.02).all(), ratio
    assert (study[study["method"] != "judge_only"]["bias"].abs() < 0.01).all()


@pytest.mark.slow
def test_pandalm_three_annotator_labels():
    pairs, judgments = jk.load_pairs("pandalm"), jk.load_judgments("pandalm")
    study = jk.label_subset_study(judgments, pairs, sizes=SIZES, reps=500, seed=1)
    _check(study)
    # gpt-3.5-turbo's verdicts are informative: PPI++ narrows the interval by about a fifth
    r = study[(study["method"] == "ppi++") & (study["judge"] == "gpt-3.5-turbo")]["width_vs_classical"]
    assert r.max() < 0.9
    # per model: pandalm-7b underrates llama-7b, so its own rate misses the human one
    llama = jk.label_subset_study(judgments, pairs, sizes=(100,), reps=500, models="llama-7b",
                                  seed=2)
    _check(llama)
    j = llama[(llama["judge"] == "pandalm-7b") & (llama["method"] == "judge_only")].iloc[0]
    assert j.coverage < 0.05 and j.bias < -0.05


@pytest.mark.slow
def test_llmbar_gold_labels():
    pairs = jk.load_pairs("llmbar")
    judgments = jk.load_judgments("llmbar", judges=["GPT-4", "ChatGPT"], strategies="Metrics_Reference")
    study = jk.label_subset_study(judgments, pairs, sizes=SIZES, reps=500, target="a", seed=3)
    _check(study)
    r = study[study["method"] == "ppi++"].groupby("judge")["width_vs_classical"].max()
    assert r["GPT-4/Metrics_Reference"] < 0.8  # a strong judge: a narrower interval
    assert r["ChatGPT/Metrics_Reference"] <= 1.02  # a weak one: no worse than labels alone
