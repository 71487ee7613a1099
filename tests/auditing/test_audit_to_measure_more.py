"""Each audit section that is not measured says the one thing to add, and adding that thing is
what measures it."""

import functools

import pandas as pd
import pytest
from markupsafe import escape

import judgekit as jk
from judgekit.viz.audit_report import summary_html as _summary_html

SIM = jk.sim.simulate_judgments(60, repeats=2, seed=4)


def _full():
    pairs, judgments = SIM.pairs.copy(), SIM.judgments.copy()
    models = pd.Series(["gpt4_turbo", "m1", "m2", "m3"] * 15)
    return pairs.assign(model_a="gpt4_turbo", model_b=models.where(models != "gpt4_turbo", "m0")), judgments


def _without(what):
    """The data with one thing taken away, as a person's file would lack it."""
    pairs, j = _full()
    if what == "consistency":      # one order only
        j = j[j["order"] == "ab"].drop(columns=["order"])
    elif what == "stability":      # one answer per request
        j = j[j["repeat"] == 0].drop(columns=["repeat"])
    elif what == "accuracy":       # no labels
        pairs = pairs.drop(columns=["label"])
    elif what == "win_rates":      # no models
        pairs = pairs.drop(columns=["model_a", "model_b"])
    elif what == "calibration":    # no probabilities
        j = j.drop(columns=["p_a"])
    return pairs, j


@pytest.mark.parametrize("section,phrase", [
    ("consistency", "a second order"), ("stability", "repeats"), ("accuracy", "human labels"),
    ("win_rates", "which model wrote each response"), ("calibration", "the judge's probabilities"),
])
def test_each_missing_thing_is_named_and_adding_it_measures_the_section(section, phrase):
    pairs, j = _without(section)
    report = jk.audit(j, pairs, n_boot=0, lc_boot=0)
    assert report.sections[section].status == "unsupported"
    fix = report.to_measure_more()
    assert list(fix) == [section]          # the only section missing, with one thing to add
    assert fix[section].startswith(phrase)
    # the page's summary lists it (the whole page would render every chart)
    assert "To measure it, add</b> " + str(escape(phrase)) in _summary_html(report)
    assert _full_audit().sections[section].ok


@functools.cache
def _full_audit():
    return jk.audit(*reversed(_full()), n_boot=0, lc_boot=0)


def test_a_baseline_is_named_when_the_models_are_there_but_no_one_is_in_every_pair():
    pairs, j = _full()
    pairs = pairs.assign(model_a=["x", "y", "z"] * 20, model_b=["y", "z", "x"] * 20)
    report = jk.audit(j, pairs, n_boot=0, lc_boot=0)
    assert report.to_measure_more()["win_rates"].startswith("a baseline: one model in every pair")


def test_the_labels_suggested_give_the_interval_they_promise():
    # 200 labels on a random subset: a 95% interval of an agreement rate of at most +-0.07
    import numpy as np

    from judgekit.auditing.remedies import LABELS_SUGGESTED

    rng = np.random.default_rng(0)
    draws = rng.binomial(LABELS_SUGGESTED, 0.5, size=20_000) / LABELS_SUGGESTED
    half = np.quantile(np.abs(draws - 0.5), 0.95)
    assert half <= 0.07 + 1 / LABELS_SUGGESTED
    report = jk.audit(*reversed(_without("accuracy")), n_boot=0, lc_boot=0)
    assert "200 labels put an agreement rate within ±0.07 (95%)" in report.to_measure_more()["accuracy"]
