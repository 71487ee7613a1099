"""Chart builders, tested through their Vega-Lite spec (``to_dict()``) and by rendering with vl-convert."""

from __future__ import annotations

import json

import altair as alt
import numpy as np
import pandas as pd
import pytest

import judgekit as jk
from judgekit.viz import _export

JUDGES = ["gpt-4o/rafailov", "gpt-4o/chen", "mini/rafailov", "mini/chen"]


def _data_values(spec: dict) -> list[dict]:
    """The inline rows of a spec (altair stores them in top-level datasets)."""
    datasets = spec.get("datasets", {})
    assert len(datasets) >= 1
    return max(datasets.values(), key=len)


def _layers(spec: dict) -> list[dict]:
    return spec.get("layer") or spec["spec"]["layer"]


@pytest.fixture(scope="module")
def long_metrics() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for judge in JUDGES:
        model, template = judge.split("/")
        for metric in ("acc_both", "acc_random", "position_bias", "length_bias"):
            e = rng.uniform(0.5, 0.9) if metric.startswith("acc") else rng.uniform(-0.2, 0.2)
            rows.append({"judge": judge, "model": model, "template": template, "metric": metric,
                         "estimate": e, "ci_low": e - 0.05, "ci_high": e + 0.05, "n": 300})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def card() -> pd.DataFrame:
    """A real report card of two simulated judges with known opposite position biases."""
    frames = []
    for name, pb in (("first-lover", 1.2), ("second-lover", -1.2)):
        pairs, judgments, _ = jk.sim.simulate_judgments(
            300, accuracy=0.8, position_bias=pb, repeats=2, flip_q=0.05, judge_name=name, seed=3)
        frames.append(judgments)
    return jk.report_card(pd.concat(frames), pairs, n_boot=100)


def test_accuracy_bars_draws_the_numbers_it_is_given(card):
    spec = jk.viz.accuracy_bars(card, "acc_both").to_dict()
    rows = {r["judge"]: r for r in _data_values(spec)}
    for _, row in card.iterrows():
        assert rows[row["judge"]]["estimate"] == pytest.approx(row["acc_both"])
        assert rows[row["judge"]]["ci_low"] == pytest.approx(row["acc_both_ci_low"])
        assert rows[row["judge"]]["ci_high"] == pytest.approx(row["acc_both_ci_high"])
    bar, rule, text = _layers(spec)
    assert bar["encoding"]["x"]["field"] == "estimate" and bar["encoding"]["y"]["field"] == "judge"
    assert bar["encoding"]["x"]["scale"]["domain"] == [0.0, 1.0]
    assert (rule["encoding"]["x"]["field"], rule["encoding"]["x2"]["field"]) == ("ci_low", "ci_high")
    # bands ordered best first by an explicit list (a field sort misplaces grouped rules/labels)
    best_first = card.sort_values("acc_both", ascending=False)["judge"].tolist()
    for layer in (bar, rule, text):
        assert layer["encoding"]["y"]["sort"] == best_first
    tips = [t["field"] for t in spec["encoding"]["tooltip"]] if "encoding" in spec else [
        t["field"] for t in bar["encoding"]["tooltip"]]
    assert {"judge", "estimate", "ci_low", "ci_high", "n"} <= set(tips)
    assert spec["title"]["text"] == "Acc_both (both orders correct)"


def test_accuracy_bars_long_frame_grouped_and_faceted(long_metrics):
    grouped = jk.viz.accuracy_bars(long_metrics, "acc_random", by="template", color="model",
                                   reference=0.5, reference_label="chance").to_dict()
    layers = _layers(grouped)
    assert layers[0]["encoding"]["yOffset"]["field"] == "model"
    assert layers[0]["encoding"]["color"]["field"] == "model"
    assert {r["estimate"] for r in _data_values(grouped)} == set(
        long_metrics.loc[long_metrics.metric == "acc_random", "estimate"])
    assert [la["encoding"]["x"].get("datum") for la in layers[-2:]] == [0.5, 0.5]
    faceted = jk.viz.accuracy_bars(long_metrics, by="template", facet="model")
    assert isinstance(faceted, alt.FacetChart)
    assert faceted.to_dict()["facet"]["column"]["field"] == "model"


def test_bias_bars_colour_by_meaning_and_symmetric_axis(card):
    spec = jk.viz.bias_bars(card, "position_bias").to_dict()
    bar = _layers(spec)[0]
    assert bar["encoding"]["color"]["scale"]["domain"] == [
        "prefers the first position", "prefers the second position"]
    lo, hi = bar["encoding"]["x"]["scale"]["domain"]
    assert lo == -hi and hi >= card["position_bias_ci_high"].abs().max()
    assert {r["reading"] for r in _data_values(spec)} == {
        "prefers the first position", "prefers the second position"}
    # the simulated judges were built with opposite biases: the chart shows opposite signs
    signs = {r["judge"]: np.sign(r["estimate"]) for r in _data_values(spec)}
    assert signs == {"first-lover": 1.0, "second-lover": -1.0}
    lb = jk.viz.bias_bars(pd.DataFrame({"judge": ["x"], "metric": "length_bias", "estimate": [0.2],
                                        "ci_low": [0.1], "ci_high": [0.3]}), "length_bias").to_dict()
    assert _layers(lb)[0]["encoding"]["color"]["scale"]["domain"] == [
        "prefers longer responses than humans do"]


def test_bias_bars_colour_follows_the_interval_not_the_sign():
    # notebook 00's careful judge: +0.04 with CI [-0.05, 0.13] was coloured "prefers the first
    # position"; an interval that includes 0 decides nothing
    pb = pd.DataFrame({"judge": ["hasty", "careful", "fair", "mirror", "lone"],
                       "metric": "position_bias",
                       "estimate": [0.28, 0.04, 0.01, -0.2, 0.3],
                       "ci_low": [0.18, -0.05, -0.02, -0.3, np.nan],
                       "ci_high": [0.39, 0.13, 0.03, -0.1, np.nan]})
    spec = jk.viz.bias_bars(pb).to_dict()
    reading = {r["judge"]: r["reading"] for r in _data_values(spec)}
    assert reading == {"hasty": "prefers the first position",
                       "careful": "inconclusive (CI includes 0)",
                       "fair": "no material effect (CI within ±0.05)",
                       "mirror": "prefers the second position",
                       "lone": "inconclusive (no interval)"}
    scale = _layers(spec)[0]["encoding"]["color"]["scale"]
    colour = dict(zip(scale["domain"], scale["range"]))
    assert colour["inconclusive (CI includes 0)"] == colour["inconclusive (no interval)"]
    assert len({colour["prefers the first position"], colour["prefers the second position"],
                colour["no material effect (CI within ±0.05)"],
                colour["inconclusive (CI includes 0)"]}) == 4
    # a metric without a known margin: nothing can read as "no material effect"
    loose = jk.viz.bias_bars(pb.assign(metric="my_effect"), "my_effect", sign_labels=("up", "down"))
    assert {r["judge"]: r["reading"] for r in _data_values(loose.to_dict())}["fair"] == \
        "inconclusive (CI includes 0)"
    # grouped bars keep their colour column and fade the undecided ones
    grouped = jk.viz.bias_bars(pb.assign(model="m"), color="model").to_dict()
    opacity = _layers(grouped)[0]["encoding"]["opacity"]["scale"]
    faded = dict(zip(opacity["domain"], opacity["range"]))
    assert faded["prefers the first position"] == faded["prefers the second position"] == 1.0
    assert 1 > faded["no material effect (CI within ±0.05)"] > faded["inconclusive (CI includes 0)"]
    assert opacity["type"] == "ordinal"  # a point scale would use only the first two values
    with pytest.raises(ValueError, match="margin"):
        jk.viz.bias_bars(pb, margin=0)


def test_scatter_heatmap_temperature_and_generic_scatter(long_metrics):
    sc = jk.viz.bias_accuracy_scatter(long_metrics, color="model", label="template").to_dict()
    assert _layers(sc)[1]["encoding"]["x"]["field"] == "abs_bias"
    assert len(_data_values(sc)) == len(JUDGES)
    hm = jk.viz.metric_heatmap(long_metrics, "position_bias", x="template", y="model").to_dict()
    assert hm["layer"][0]["encoding"]["color"]["scale"]["domainMid"] == 0
    temps = pd.DataFrame({"judge": np.repeat(["x", "y"], 3), "temperature": [0, 0.5, 1] * 2,
                          "scr_cr": [1, 0.9, 0.8] * 2, "scr_rc": [1, 0.95, 0.9] * 2,
                          "acc_both": [0.7, 0.68, 0.6] * 2, "best": [True, False, False] * 2})
    tc = jk.viz.temperature_curves(temps, recommended="best").to_dict()
    assert sorted({r["metric"] for r in tc["data"]["values"]} if "data" in tc and "values" in tc["data"]
                  else {r["metric"] for r in _data_values(tc)}) == ["acc_both", "scr_cr", "scr_rc"]
    ms = jk.viz.metric_scatter(temps, "scr_cr", "acc_both", color="judge", fit="quadratic",
                               facet="judge").to_dict()
    assert ms["spec"]["layer"][1]["transform"][0] == {
        "regression": "acc_both", "on": "scr_cr", "method": "poly", "order": 2}


def test_grouped_bars_order_bands_by_mean_estimate_in_every_layer(long_metrics):
    spec = jk.viz.accuracy_bars(long_metrics, "acc_random", by="template", color="model").to_dict()
    rows = long_metrics[long_metrics["metric"] == "acc_random"]
    expected = rows.groupby("template")["estimate"].mean().sort_values(ascending=False).index.tolist()
    assert [la["encoding"]["y"]["sort"] for la in _layers(spec)[:3]] == [expected] * 3
    # grouped bars fill their offset band (the gap is the scale's padding), so the interval and
    # label layers, drawn at the band's centre, sit on their bar
    bar = _layers(spec)[0]
    assert "height" not in bar["mark"] and bar["encoding"]["yOffset"]["scale"]["paddingInner"] > 0
    diverging = jk.viz.bias_bars(long_metrics, by="template", color="model").to_dict()
    pb = long_metrics[long_metrics["metric"] == "position_bias"]
    expected = pb.groupby("template")["estimate"].mean().sort_values(ascending=False).index.tolist()
    assert _layers(diverging)[0]["encoding"]["y"]["sort"] == expected


def _marks(chart) -> dict[str, list[tuple[float, float]]]:
    """Absolute (x, y) of every rect, horizontal rule and text item of the layers, from Vega's
    scenegraph (vl-convert renders the chart headless); rects give their vertical centre.
    Vertical rules (zero and reference lines) are left out."""
    import vl_convert

    scene = vl_convert.vegalite_to_scenegraph(json.dumps(jk.viz.chart_spec(chart)))["scenegraph"]
    out: dict[str, list[tuple[float, float]]] = {"rect": [], "rule": [], "text": []}

    def walk(node, ox, oy):
        kind, name = node.get("marktype"), node.get("name") or ""
        for item in node.get("items", []):
            x, y = ox + item.get("x", 0.0), oy + item.get("y", 0.0)
            vertical = kind == "rule" and item.get("y2", item.get("y", 0.0)) != item.get("y", 0.0)
            if kind in out and "layer_" in name and not vertical:
                out[kind].append((x, y + item.get("height", 0.0) / 2 if kind == "rect" else y))
            for child in item.get("items", []):
                walk(child, x, y)

    walk(scene, 0.0, 0.0)
    return out


@pytest.mark.parametrize("build", [
    lambda d: jk.viz.accuracy_bars(d, "acc_both", by="model", color="template", facet="group"),
    lambda d: jk.viz.bias_bars(d, "position_bias", by="model", color="template"),
    lambda d: jk.viz.calibration_bars(d.rename(columns={"template": "method"}), ["acc_both"],
                                      method="method", by="model"),
], ids=["accuracy_bars", "bias_bars", "calibration_bars"])
def test_grouped_bars_draw_intervals_and_labels_on_their_own_bar(build):
    """Rendered, not just specified: every interval (and value label) sits at the vertical centre
    of a bar. (A bar shrunk inside its band once put them on the neighbour's edge.)"""
    rng = np.random.default_rng(5)
    rows = []
    for model in ("m1", "m2", "m3"):
        for template in "abcdefgh":
            for metric, e in (("acc_both", rng.uniform(0.2, 0.8)), ("position_bias", rng.uniform(-0.4, 0.4))):
                rows.append({"model": model, "template": template, "group": "G", "metric": metric,
                             "estimate": e, "ci_low": e - 0.05, "ci_high": e + 0.05, "n": 50})
    marks = _marks(build(pd.DataFrame(rows)))
    centres = sorted(round(y, 3) for _, y in marks["rect"])
    assert len(centres) == 24
    for kind in ("rule", "text"):
        ys = sorted(round(y, 3) for _, y in marks[kind])
        if kind == "text" and not ys:
            continue  # calibration and bias bars write no labels
        assert ys == centres, kind


def test_shi_charts():
    rng = np.random.default_rng(1)
    d = pd.DataFrame({"judge": rng.choice(["a", "b"], 40), "overall_win_rate": rng.uniform(0, 1, 40),
                      "preference_fairness": rng.normal(0, 0.1, 40)})
    pf = jk.viz.consistency_vs_winrate(d, "preference_fairness").to_dict()
    assert [la["encoding"].get("x", {}).get("datum") for la in pf["layer"][2:]] == [0.5, None]
    assert pf["layer"][3]["encoding"]["y"]["datum"] == 0.0  # zero line for a signed metric
    # axes span what the quantities can take; the parabola is clipped to them
    assert pf["layer"][0]["encoding"]["x"]["scale"]["domain"] == [0.0, 1.0]
    assert pf["layer"][0]["encoding"]["y"]["scale"]["domain"] == [-1.0, 1.0]
    assert pf["layer"][1]["mark"]["clip"] is True
    pc = jk.viz.consistency_vs_winrate(d.assign(position_consistency=0.7), facet="judge").to_dict()
    assert pc["spec"]["layer"][0]["encoding"]["y"]["scale"]["domain"] == [0.0, 1.0]
    ag = pd.DataFrame([(a, b, 1.0 if a == b else 0.7) for a in "xyz" for b in "xyz"],
                      columns=["judge_1", "judge_2", "agreement"])
    heat = jk.viz.agreement_heatmap(ag, value="agreement", order=["z", "y", "x"]).to_dict()
    assert heat["layer"][0]["encoding"]["x"]["sort"] == ["z", "y", "x"]
    hist = jk.viz.disagreement_histogram(pd.DataFrame({"disagreement": [0, 0, 1, 3]})).to_dict()
    transforms = hist["layer"][0]["transform"]
    assert transforms[0]["aggregate"][0]["op"] == "count"
    assert transforms[1]["window"][0]["op"] == "sum" and transforms[1]["frame"] == [None, 0]
    two = jk.viz.disagreement_histogram(
        pd.DataFrame({"disagreement": [0, 1, 1, 2], "benchmark": ["M", "M", "D", "D"]}),
        facet="benchmark")
    assert isinstance(two, alt.HConcatChart) and len(two.hconcat) == 2


def test_calibration_winrate_and_suite_charts():
    cal = pd.DataFrame({"judge": np.repeat(["x", "y"], 2), "method": ["raw", "noa"] * 2,
                        "fleiss_kappa": [0.3, 0.6, 0.4, 0.7], "icc2k": [0.5, 0.8, 0.6, 0.85]})
    cb = jk.viz.calibration_bars(cal, ["fleiss_kappa", "icc2k"], method_order=["raw", "noa"]).to_dict()
    assert cb["spec"]["layer"][0]["encoding"]["color"]["sort"] == ["raw", "noa"]
    rel = jk.viz.reliability_diagram(pd.DataFrame({
        "predicted": [0.2, 0.8], "observed": [0.3, 0.7], "n": [10, 20],
        "observed_ci_low": [0.1, 0.5], "observed_ci_high": [0.5, 0.9]})).to_dict()
    assert [la["mark"]["type"] for la in rel["layer"]] == ["line", "line", "rule", "point"]
    lb = pd.DataFrame({"model": ["a", "b", "c"], "win_rate": [30.0, 20.0, 10.0],
                       "lc_win_rate": [25.0, 28.0, 10.5], "arena_elo": [1200, 1150, 1000]})
    slope = jk.viz.leaderboard_slope(lb, labels=["a"]).to_dict()
    assert [r["_label"] for r in _data_values(slope)] == [True, False, False]
    # notebook 07's Fig. 4 asked for 18 names and drew 9 (the others were crowded out): every
    # name asked for is written now, moved apart where the points crowd, and joined to its point
    crowd = pd.DataFrame({"model": [f"m{i}" for i in range(40)], "win_rate": np.linspace(2, 30, 40),
                          "lc_win_rate": np.r_[np.linspace(3, 12, 38), 60.0, 70.0]})
    asked = [f"m{i}" for i in range(0, 40, 2)]
    drawn = [r for r in _data_values(jk.viz.leaderboard_slope(crowd, labels=asked, height=500).to_dict())
             if r["_label"]]
    assert sorted(r["model"] for r in drawn) == sorted(asked)
    spots = sorted(r["_label_y"] for r in drawn)
    assert min(np.diff(spots)) >= 11 * 70 / 500 - 1e-9 and spots[0] >= 0 and spots[-1] <= 70
    arena = jk.viz.arena_scatter(lb, correlations={"win_rate": 0.5}).to_dict()
    assert {r["panel"] for r in _data_values(arena)} == {
        "Win rate (%) (rho = 0.5)", "Length-controlled win rate (%)"}
    # win rates are never negative: the axis starts at 0 and the trend line is clipped
    assert arena["spec"]["layer"][0]["encoding"]["y"]["scale"]["domainMin"] == 0
    # ... and ends on a round value above the top point (Fig. 2 of notebook 07 cut it in half),
    # and the subtitle says what the dashed line is
    assert arena["spec"]["layer"][0]["encoding"]["y"]["scale"]["nice"] is True
    assert "dashed line: least-squares fit" in str(arena["title"]["subtitle"])
    assert arena["spec"]["layer"][1]["mark"]["clip"] is True
    # the baseline (50 before and after) is neither higher nor lower after length control
    assert _layers(slope)[0]["encoding"]["color"]["scale"]["domain"] == [
        "higher after length control", "lower after length control", "unchanged"]
    mat = pd.DataFrame([(a, b, 50.0 + 10 * (ord(a) - ord(b))) for a in "abc" for b in "abc"],
                       columns=["model", "baseline", "win_rate"])
    assert jk.viz.winrate_matrix(mat).to_dict()["layer"][0]["encoding"]["color"]["scale"]["domain"] == [0, 100]
    suite = pd.DataFrame({"bias": ["authority", "bandwagon"] * 2, "metric": np.repeat(
        ["robustness", "consistency"], 2), "estimate": [0.7, 0.9, 0.95, 0.94],
        "ci_low": [0.65, 0.85, 0.93, 0.92], "ci_high": [0.75, 0.95, 0.97, 0.96]})
    rb = jk.viz.robustness_bars(suite).to_dict()
    rows = {r["bias"]: r for r in _data_values(rb)}
    assert rows["authority"]["robustness"] == 0.7 and rows["authority"]["consistency"] == 0.95
    assert [la["mark"]["type"] for la in rb["layer"]] == ["bar", "rule", "tick"]


@pytest.mark.parametrize("call, message", [
    (lambda: jk.viz.accuracy_bars([1, 2]), "must be a pandas DataFrame"),
    (lambda: jk.viz.accuracy_bars(pd.DataFrame()), "data is empty"),
    (lambda: jk.viz.accuracy_bars(pd.DataFrame({"judge": ["x"], "acc": [1]})), "no column 'acc_both'"),
    (lambda: jk.viz.accuracy_bars(pd.DataFrame({"judge": ["x"], "metric": ["pc"], "estimate": [1.0]})),
     r"no rows with metric == 'acc_both'; the data has metrics \['pc'\]"),
    (lambda: jk.viz.metric_scatter(pd.DataFrame({"a": [1]}), "a", "b"), "no column 'b'"),
    (lambda: jk.viz.metric_scatter(pd.DataFrame({"a": [1], "b": [2]}), "a", "b", fit="cubic"),
     "fit must be"),
    (lambda: jk.viz.save_chart(alt.Chart(), "x.gif"), "suffix must be one of"),
])
def test_clear_errors(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_every_builder_renders(long_metrics, card, tmp_path, capfd):
    """Vega compiles and draws each chart without a runtime error (vl-convert reports those on
    stderr and still returns an image, so stderr is checked too)."""
    lb = pd.DataFrame({"model": list("abcd"), "win_rate": [30.0, 20, 10, 5],
                       "lc_win_rate": [25.0, 28, 10.5, 9], "arena_elo": [1200, 1150, 1000, 990],
                       "variant": ["concise", "standard", "verbose", "standard"]})
    # published tables have column names Vega-Lite would read as nested fields
    odd = lb.rename(columns={"arena_elo": "Arena Elo [Feb 2, 2024]", "lc_win_rate": "LC v2.0"})
    charts = [
        jk.viz.accuracy_bars(card), jk.viz.accuracy_bars(long_metrics, by="template", facet="model"),
        jk.viz.bias_bars(long_metrics, color="model", by="template"),
        jk.viz.bias_bars(long_metrics, facet="model", by="template"),
        jk.viz.bias_accuracy_scatter(card), jk.viz.metric_heatmap(long_metrics, "acc_both", x="template", y="model"),
        jk.viz.agreement_heatmap(pd.DataFrame({"judge_1": list("xxyy"), "judge_2": list("xyxy"),
                                               "estimate": [1, 0.6, 0.6, 1], "b": ["M", "M", "D", "D"]}),
                                 facet="b"),
        jk.viz.disagreement_histogram(pd.DataFrame({"disagreement": [0, 1, 1], "b": ["M", "D", "D"]}), facet="b"),
        jk.viz.reliability_diagram(pd.DataFrame({"predicted": [0.2, 0.8], "observed": [0.3, 0.7],
                                                 "n": [3, 4], "m": ["r", "c"]}), facet="m"),
        jk.viz.calibration_curve(pd.DataFrame({"score": [0, 0.5, 1], "calibrated": [0, 0.3, 1]})),
        jk.viz.leaderboard_slope(lb), jk.viz.arena_scatter(lb, labels=True),
        jk.viz.gameability_bars(lb.assign(model="m")),
        jk.viz.arena_scatter(odd, x="Arena Elo [Feb 2, 2024]", y=["win_rate", "LC v2.0"]),
        jk.viz.metric_scatter(odd, "Arena Elo [Feb 2, 2024]", "LC v2.0", fit="linear", label="model"),
        jk.viz.leaderboard_slope(odd, after="LC v2.0"),
        jk.viz.gameability_bars(odd.assign(model="m"), value=["LC v2.0"]),
        jk.viz.winrate_matrix(pd.DataFrame({"model": list("aabb"), "baseline": list("abab"),
                                            "win_rate": [50, 60, 40, 50]})),
    ]
    capfd.readouterr()
    for i, chart in enumerate(charts):
        svg = jk.viz.to_svg(chart)
        assert svg.lstrip().startswith("<svg") and svg.count("<path") + svg.count("<text") > 5, i
        err = capfd.readouterr().err
        assert "Error" not in err, f"chart {i} failed in Vega: {err[:500]}"
    path = jk.viz.save_chart(charts[0], tmp_path / "card.png", scale=1)
    width, height = _export._png_size(path.read_bytes())
    assert 300 < width < 1200 and 60 < height < 600


def test_save_formats_are_offline_and_themed(card, tmp_path):
    chart = jk.viz.accuracy_bars(card, title="A title")
    svg = jk.viz.save_chart(chart, tmp_path / "a" / "c.svg").read_text()
    assert "A title" in svg
    assert jk.viz.save_chart(chart, tmp_path / "c.pdf").read_bytes().startswith(b"%PDF")
    page = jk.viz.save_chart(chart, tmp_path / "c.html").read_text()
    assert "vega" in page and 'src="http' not in page  # libraries inline: opens offline
    spec = json.loads(jk.viz.save_chart(chart, tmp_path / "c.json").read_text())
    assert spec["config"]["axis"]["labelFontSize"] == jk.viz.theme()["config"]["axis"]["labelFontSize"]


def test_theme_yields_to_a_user_theme():
    chart = alt.Chart(pd.DataFrame({"x": [1]})).mark_point().encode(x="x:Q")
    assert jk.viz.chart_spec(chart)["config"]["range"]["category"][0] == jk.viz.PALETTE[0]
    if "jk_test_theme" not in alt.theme.names():
        alt.theme.register("jk_test_theme", enable=False)(
            lambda: {"config": {"background": "#123456"}})
    with alt.theme.enable("jk_test_theme"):
        assert jk.viz.chart_spec(chart)["config"] == {"background": "#123456"}


def test_mimebundle_live_vega_plus_png_fallback(card):
    data, meta = jk.viz.mimebundle(jk.viz.accuracy_bars(card, title="T"))
    vega = data["application/vnd.vega.v5+json"]
    assert vega["$schema"].endswith("/vega/v5.json") and vega["marks"]
    assert meta["application/vnd.vega.v5+json"]["embed_options"]["renderer"] == "svg"
    import base64

    png = base64.b64decode(data["image/png"])
    width, height = _export._png_size(png)
    assert meta["image/png"] == {"width": round(width / 2), "height": round(height / 2)}
    assert meta["judgekit_figure"]["title"] == "T" and data["text/plain"] == "<judgekit chart: T>"


def test_setup_enables_theme_and_renderer():
    before = alt.theme.active, alt.renderers.active
    try:
        jk.viz.setup()
        chart = alt.Chart(pd.DataFrame({"x": [1]})).mark_point().encode(x="x:Q")
        bundle, meta = chart._repr_mimebundle_()
        assert {"application/vnd.vega.v5+json", "image/png"} <= set(bundle)
        assert "judgekit_figure" in meta
    finally:
        alt.theme.enable(before[0])
        alt.renderers.enable(before[1])


def test_viz_is_lazy_and_complete():
    missing = [name for name in jk.viz.__all__ if not hasattr(jk.viz, name)]
    assert not missing
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        jk.viz.nope  # noqa: B018
