"""The judge explorer and the pair viewer, driven from Python by setting widget values."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import judgekit as jk

VEGA = "application/vnd.vega.v5+json"


def _judges(seed: int, n: int = 80) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two models x two templates of simulated judges with known position biases."""
    frames = []
    pairs = None
    for model, pb in (("steady", 0.0), ("eager", 1.5)):
        for template, acc in (("plain", 0.75), ("cot", 0.85)):
            pairs, judgments, _ = jk.sim.simulate_judgments(
                n, accuracy=acc, position_bias=pb, repeats=3, flip_q=0.1,
                judge_name=f"{model}/{template}", seed=seed)
            frames.append(judgments.assign(model=model, template=template))
    judgments = pd.concat(frames, ignore_index=True)
    judgments["raw"] = np.where(judgments["verdict"] == "a", "I prefer [[A]]", "Clearly [[B]]")
    pairs = pairs.copy()
    pairs.loc[0, "response_a"] = "<script>alert('x')</script> fine answer"
    return judgments, pairs


@pytest.fixture(scope="module")
def data():
    return _judges(seed=5)


@pytest.fixture()
def explorer(data):
    loads = []

    def second():
        loads.append(1)
        return _judges(seed=6, n=40)

    ex = jk.viz.JudgeExplorer({"first": data, "second": second}, n_boot=60, max_templates=1)
    ex.loads = loads
    return ex


def test_initial_state_and_metric_choice(explorer):
    c = explorer.controls
    assert c["dataset"].value == "first" and explorer.loads == []  # the second set is not loaded yet
    assert c["models"].value == ("eager", "steady") and len(c["templates"].value) == 1
    metrics = [v for _, v in c["metric"].options]
    assert {"acc_both", "position_bias", "length_bias", "q_cr", "position_consistency"} <= set(metrics)
    assert sorted(explorer.card["judge"]) == sorted(
        f"{m}/{c['templates'].value[0]}" for m in ("eager", "steady"))

    c["metric"].value = "position_bias"
    spec = explorer.charts["metric"].to_dict()
    assert spec["title"]["text"] == "Position bias (PB)"
    rows = {f"{r['model']}/{r['template']}": r["estimate"]
            for r in max(spec["datasets"].values(), key=len)}
    assert rows == pytest.approx(dict(zip(explorer.card["judge"], explorer.card["position_bias"])))
    assert rows[f"eager/{c['templates'].value[0]}"] > 0.1 > abs(rows[f"steady/{c['templates'].value[0]}"])


def test_selection_links_charts_card_and_pair_viewer(explorer):
    c = explorer.controls
    c["templates"].value = ("cot", "plain")
    c["models"].value = ("eager",)
    assert sorted(explorer.card["judge"]) == ["eager/cot", "eager/plain"]
    scatter = explorer.charts["scatter"].to_dict()
    assert {r["judge"] for r in max(scatter["datasets"].values(), key=len)} == {"eager/cot", "eager/plain"}
    bars = explorer.charts["metric"].to_dict()
    assert {r["model"] for r in max(bars["datasets"].values(), key=len)} == {"eager"}
    assert list(c["pair_judge"].options) == ["eager/cot", "eager/plain"]
    c["models"].value = ()
    assert explorer.card.empty and explorer.charts == {}
    assert "select at least one judge" in explorer._status.value


def test_estimator_recomputes_with_report_card(explorer, data):
    judgments, pairs = data
    c = explorer.controls
    c["templates"].value = ("cot",)
    consistent = explorer.card.set_index("judge")["q_cr"]
    c["estimator"].value = "bootstrap CI · paper's flip estimator (Wei et al.)"
    paper = explorer.card.set_index("judge")["q_cr"]
    direct = jk.report_card(judgments[judgments["template"] == "cot"], pairs, flip_estimator="paper",
                            n_boot=0).set_index("judge")["q_cr"]
    assert paper.to_dict() == pytest.approx(direct.to_dict())
    assert (paper > consistent).all()  # the paper's q = d overstates q (docs/spec.md#accuracy)


def test_dataset_switch_loads_lazily_once(explorer):
    c = explorer.controls
    c["dataset"].value = "second"
    c["dataset"].value = "first"
    c["dataset"].value = "second"
    assert explorer.loads == [1]
    assert explorer._dataset("second")[1].shape[0] == 40
    assert explorer.card["n_pairs"].eq(40).all()


def test_pair_viewer_filters_and_escapes(explorer, data):
    judgments, pairs = data
    c = explorer.controls
    c["templates"].value = ("plain",)
    c["pair_judge"].value = "eager/plain"
    c["pair_filter"].value = "orders disagree"
    first = judgments[(judgments["judge"] == "eager/plain") & (judgments["repeat"] == 0)]
    wide = first.pivot(index="pair_id", columns="order", values="verdict")
    expected = sorted(wide.index[wide["ab"] != wide["ba"]])
    shown = sorted(v for _, v in c["pair"].options)
    assert shown == expected and 0 < len(shown) < len(pairs)

    c["pair_filter"].value = "all pairs"
    c["pair"].value = pairs["pair_id"][0]
    page = explorer._pair_html.value
    assert "&lt;script&gt;" in page and "<script>" not in page
    assert page.count("<tr>") == 1 + 2 * 3  # header + 2 orders x 3 repeats of one judge
    assert "I prefer [[A]]" in page or "Clearly [[B]]" in page


def test_display_bundle_and_redraw(explorer):
    data, meta = explorer._repr_mimebundle_()
    assert {"application/vnd.jupyter.widget-view+json", "image/png", "text/plain"} <= set(data)
    assert meta["image/png"]["width"] > 100
    out = explorer._chart_out.outputs
    assert out and VEGA in out[0]["data"] and "image/png" not in out[0]["data"]
    before = out[0]["data"][VEGA]
    explorer.controls["metric"].value = "acc_random"
    after = explorer._chart_out.outputs[0]["data"][VEGA]
    assert after != before
    scatter_before = explorer._scatter_out.outputs
    explorer.controls["metric"].value = "acc_both"
    assert explorer._scatter_out.outputs is scatter_before  # unchanged chart is not redrawn


def test_single_table_with_dataset_column_and_errors(data):
    judgments, pairs = data
    pairs = pairs.assign(dataset=np.where(np.arange(len(pairs)) < 30, "easy", "hard"))
    ex = jk.viz.JudgeExplorer(judgments, pairs, n_boot=0)
    assert list(ex.controls["dataset"].options) == ["(all)", "easy", "hard"]
    ex.controls["dataset"].value = "easy"
    assert ex.card["n_pairs"].eq(30).all()
    with pytest.raises(ValueError, match="give the pairs table"):
        jk.viz.JudgeExplorer(judgments)
    with pytest.raises(TypeError, match="must be a judgments DataFrame"):
        jk.viz.JudgeExplorer([judgments, pairs])
    with pytest.raises(ValueError, match="not in the pairs table"):
        jk.viz.JudgeExplorer(judgments, pairs.iloc[:5])


def test_pair_card_alone(data):
    judgments, pairs = data
    card = jk.viz.pair_card(judgments, pairs, pairs["pair_id"][1], judges=["steady/cot"])
    assert card.data.count("<tr>") == 1 + 6 and "steady/cot" in card.data and "eager" not in card.data
    with pytest.raises(ValueError, match="no pair with pair_id 'nope'"):
        jk.viz.pair_card(judgments, pairs, "nope")
    with pytest.raises(ValueError, match=r"unknown judge\(s\) \['ghost'\]"):
        jk.viz.pair_card(judgments, pairs, pairs["pair_id"][1], judges=["ghost"])


def test_estimators_that_cannot_change_the_view_are_not_offered():
    """One call per pair and order: the flip estimators and "first repeat" give the same card."""
    pairs, judgments, _ = jk.sim.simulate_judgments(60, position_bias=0.8, repeats=1, seed=3)
    ex = jk.viz.JudgeExplorer(judgments, pairs, n_boot=40)
    offered = list(ex.controls["estimator"].options)
    assert offered == [next(iter(jk.viz.ESTIMATORS)), "mean over 5 random splits, no CI (Wei et al.)"]
    assert not ex.controls["estimator"].disabled
    note = ex._estimator_note.value
    assert "one call per pair and order" in note and "paper&#x27;s flip estimator" in note
    # what is hidden really gives the same numbers, and what is offered really differs
    direct = {name: jk.report_card(judgments, pairs, n_boot=40, seed=0, **kw)
              for name, kw in jk.viz.ESTIMATORS.items()}
    first, *rest = direct
    numeric = direct[first].select_dtypes("number").columns
    for name in rest:
        same = np.allclose(direct[name][numeric].to_numpy(float), direct[first][numeric].to_numpy(float),
                           equal_nan=True)
        assert same == (name not in offered), name
    # a single-choice estimator list disables the dropdown and says why
    ex1 = jk.viz.JudgeExplorer(judgments, pairs, n_boot=40,
                               estimators={k: v for k, v in list(jk.viz.ESTIMATORS.items())[:3]})
    assert ex1.controls["estimator"].disabled and "only this choice" in ex1._estimator_note.value


def test_repeats_with_labels_keep_every_estimator(explorer):
    assert list(explorer.controls["estimator"].options) == list(jk.viz.ESTIMATORS)
    assert explorer._estimator_note.value == ""


def test_counts_are_drawn_on_a_count_axis(explorer):
    explorer.controls["metric"].value = "primacy"
    spec = explorer.charts["metric"].to_dict()
    bar = spec["layer"][0]["encoding"]["x"]
    assert "domain" not in bar["scale"] and bar["title"] == "Primacy-preferred judgment pairs (count)"
    rows = max(spec["datasets"].values(), key=len)
    assert max(r["estimate"] for r in rows) > 1  # counts, which a 0-1 axis would have clipped
    explorer.controls["metric"].value = "position_consistency"
    assert explorer.charts["metric"].to_dict()["layer"][0]["encoding"]["x"]["scale"]["domain"] == [0.0, 1.0]


def test_a_users_own_tables_without_labels_models_or_repeats():
    """Issue 13: the explorer takes any two tables, e.g. one order per pair and no human labels."""
    pairs = pd.DataFrame({"pair_id": [f"q{i}" for i in range(30)], "prompt": "Summarise.",
                          "response_a": "short", "response_b": "a longer answer", "label": None})
    rng = np.random.default_rng(0)
    judgments = pd.DataFrame({
        "pair_id": np.repeat(pairs["pair_id"], 2), "judge": ["mine", "theirs"] * 30,
        "order": "ab", "repeat": 0, "verdict": rng.choice(["a", "b", "tie"], 60), "p_a": np.nan})
    ex = jk.viz.JudgeExplorer(judgments, pairs, n_boot=30)
    c = ex.controls
    assert list(c["models"].options) == ["mine", "theirs"] and c["templates"].disabled
    metrics = [v for _, v in c["metric"].options]
    assert "acc_both" not in metrics and "invalid_rate" in metrics  # what the data supports
    assert sorted(ex.card["judge"]) == ["mine", "theirs"] and "scatter" not in ex.charts
    assert "(human: none)" in c["pair"].options[0][0]
    assert "human label: <b>none</b>" in ex._pair_html.value
    c["pair_filter"].value = "orders disagree"
    assert c["pair"].options == () and "No pair matches" in ex._pair_html.value
    data, _ = ex._repr_mimebundle_()
    assert "image/png" in data


def test_the_static_picture_does_not_ask_to_hover(explorer, monkeypatch):
    # notebook 09's PNG (the report's figure) said "hover for names": a picture cannot be hovered
    from judgekit.viz import explorer as module

    drawn = []
    real = module.mimebundle

    def spy(spec, **kwargs):
        drawn.append(json.dumps(module.chart_spec(spec)))
        return real(spec, **kwargs)

    monkeypatch.setattr(module, "mimebundle", spy)
    explorer._repr_mimebundle_()
    static = [s for s in drawn if "(static view)" in s]
    assert len(static) == 1 and "hover" not in static[0]
    assert "one point per judge (coloured by model" in static[0]
    live = json.dumps(module.chart_spec(explorer.charts["scatter"]))
    assert "hover for names" in live  # the live chart keeps its tooltips and says so
