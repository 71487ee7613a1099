"""jk.audit: the numbers are the public functions' (with their defaults), the summary follows a
simulated judge's known biases, unsupported sections say why, the report escapes the data."""

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from markupsafe import escape

import judgekit as jk

FORMATS = Path(__file__).parents[1] / "fixtures" / "formats"
MIRROR = Path(os.environ["JUDGEKIT_DATA_MIRROR"]) if os.environ.get("JUDGEKIT_DATA_MIRROR") else None
needs_mirror = pytest.mark.skipif(MIRROR is None or not MIRROR.is_dir(), reason="needs the data mirror")


def test_the_minimal_csv_explains_every_unsupported_section():
    """Done-when of issue 13: pair_id, prompt, response_a, response_b, order, verdict only."""
    rows = pd.read_csv(FORMATS / "my_pipeline.csv", keep_default_na=False, na_values=[""])
    assert list(rows.columns) == ["pair_id", "prompt", "response_a", "response_b", "order", "verdict"]
    report = jk.audit(rows, n_boot=0)
    status = {k: s.status for k, s in report.sections.items()}
    assert status == {"data": "ok", "report_card": "ok", "consistency": "ok",
                      "stability": "unsupported", "accuracy": "unsupported",
                      "win_rates": "unsupported", "calibration": "unsupported"}
    reasons = {k: s.reason for k, s in report.sections.items() if not s.ok}
    assert "no request was repeated" in reasons["stability"]
    assert "no pair has a human label 'a' or 'b'" in reasons["accuracy"]
    assert "which model wrote each response (no 'model_a' or 'model_b' column)" in reasons["win_rates"]
    assert "p_a is missing everywhere" in reasons["calibration"]
    # the numbers it does give are the public functions'
    pc = report.tables["consistency/position_consistency"]
    assert pc.loc[0, "estimate"] == pytest.approx(1 / 3) and pc.loc[0, "n"] == 3
    assert report.card.loc[0, "invalid_rate"] == pytest.approx(1 / 8)
    html_text = report.to_html()
    for reason in reasons.values():  # escaped as the page's template escapes (markupsafe)
        assert str(escape(reason)) in html_text
    # the same file read from disk gives the same report
    from_file = jk.audit(FORMATS / "my_pipeline.csv", n_boot=0)
    assert from_file.summary() == report.summary().replace("judgments", "judgments")
    assert set(from_file.judgments["judge"]) == {"my_pipeline"} and set(report.judgments["judge"]) == {"judge"}


def test_numbers_equal_the_public_functions_with_their_defaults():
    pairs, j, _ = jk.sim.simulate_judgments(400, repeats=3, position_bias=0.8, length_bias=0.6,
                                        flip_q=0.05, seed=3)
    report = jk.audit(j, pairs, n_boot=200, seed=1)
    t = report.tables
    pd.testing.assert_frame_equal(t["report_card/report_card"], jk.report_card(j, pairs, n_boot=200, seed=1))
    pd.testing.assert_frame_equal(t["consistency/position_consistency"],
                                  jk.position_consistency(j, pairs, n_boot=200, seed=1))
    pd.testing.assert_frame_equal(t["consistency/preference_fairness"],
                                  jk.preference_fairness(j, pairs, n_boot=200, seed=1))
    pd.testing.assert_frame_equal(t["stability/repetition_stability"],
                                  jk.repetition_stability(j, pairs, n_boot=200, seed=1))
    pd.testing.assert_frame_equal(t["accuracy/accuracy"], jk.accuracy(j, pairs, n_boot=200, seed=1))
    pd.testing.assert_frame_equal(t["accuracy/position_bias"], jk.position_bias(j, pairs, n_boot=200, seed=1))
    pd.testing.assert_frame_equal(t["accuracy/length_bias"], jk.length_bias(j, pairs, n_boot=200, seed=1))
    pd.testing.assert_frame_equal(t["calibration/first_position_summary"],
                                  jk.first_position_summary(j, n_boot=200, seed=1))
    assert set(report.charts) == {"consistency/position_consistency", "consistency/preference_fairness",
                                  "stability/repetition_stability", "accuracy/accuracy",
                                  "accuracy/position_bias", "accuracy/length_bias",
                                  "calibration/reliability"}


def test_the_summary_follows_the_simulated_truth():
    biased_pairs, biased, truth = jk.sim.simulate_judgments(1500, repeats=2, position_bias=1.0, seed=0)
    assert truth["position_bias"] > 0.1
    fair_pairs, fair, fair_truth = jk.sim.simulate_judgments(1500, repeats=2, position_bias=0.0, seed=0)
    assert abs(fair_truth["position_bias"]) < 1e-9

    def texts(report, section):
        return [f.text for f in report.findings if f.section == section]

    biased_report = jk.audit(biased, biased_pairs, n_boot=300)
    fair_report = jk.audit(fair, fair_pairs, n_boot=300)
    assert any("favours the first position: evidence of de-noised position bias: +" in t
               for t in texts(biased_report, "accuracy"))
    # absence only from the equivalence test against the stated margin, never from an estimate
    assert any(t.startswith("No material de-noised position bias") and "within ±0.10" in t
               for t in texts(fair_report, "accuracy"))
    assert not any("favours" in t for t in texts(fair_report, "accuracy"))
    pb = biased_report.tables["accuracy/position_bias"].set_index("metric").loc["position_bias"]
    assert pb["ci_low"] < truth["position_bias"] < pb["ci_high"]
    # the biased judge's probabilities lean to the first position; the fair one's do not
    assert any("leans to the first-shown response" in t for t in texts(biased_report, "calibration"))
    assert not any("leans to" in t for t in texts(fair_report, "calibration"))
    # the problems come first in the summary
    levels = [f.level for f in biased_report.findings]
    assert levels == sorted(levels, key={"bad": 0, "warn": 1, "open": 2, "good": 3}.get)


def test_judgments_without_pairs_and_a_tournament_without_baseline():
    pairs, j, _ = jk.sim.simulate_judgments(200, repeats=2, seed=1)
    alone = jk.audit(j, n_boot=0)
    assert alone.sections["accuracy"].reason.startswith("no pairs table, so no human labels")
    assert alone.sections["win_rates"].reason.startswith("no pairs table, so no models")
    assert alone.sections["consistency"].ok and alone.sections["stability"].ok
    _, mt = jk.read_mtbench(FORMATS / "mtbench" / "data" / "mt_bench" / "model_judgment" / "gpt-4_pair.jsonl")
    mt_pairs = jk.read_mtbench(FORMATS / "mtbench" / "data" / "mt_bench" / "model_judgment" /
                               "gpt-4_pair.jsonl")[0]
    three = pd.concat([mt_pairs, mt_pairs.assign(pair_id=mt_pairs["pair_id"] + "-z", model_a="model-z",
                                                  model_b="model-w")])
    mt_all = pd.concat([mt, mt.assign(pair_id=mt["pair_id"] + "-z")])
    report = jk.audit(mt_all, three, n_boot=0)
    assert "no single model takes part in every pair" in report.sections["win_rates"].reason


@needs_mirror
def test_an_alpacaeval_file_gives_the_lc_win_rates_of_jk_lc_win_rates():
    (f,) = (MIRROR / "github" / "tatsu-lab" / "alpaca_eval").glob(
        "*/results/alpaca-7b/weighted_alpaca_eval_gpt4_turbo/annotations.json*")
    report = jk.audit(f, lc_boot=20)
    pairs, j = jk.read_alpacaeval(f)
    want = jk.lc_win_rates(j, pairs, n_boot=20)
    got = report.tables["win_rates/lc_win_rates"]
    pd.testing.assert_frame_equal(got, want)
    row = got.set_index("model").loc["alpaca-7b"]
    # raw win rate: the mean of the judge's P(alpaca-7b wins) over the 805 annotations
    assert row["win_rate"] == pytest.approx(100 * (1 - j["p_a"]).mean())
    assert report.sections["consistency"].status == "unsupported"  # AlpacaEval shows one order
    assert report.sections["calibration"].ok


def test_a_failing_fit_is_a_note_not_an_exception(monkeypatch):
    sim = jk.sim.simulate_leaderboard(3, 60, seed=2)

    def broken(*args, **kwargs):
        raise ValueError("the GLM did not converge")

    monkeypatch.setattr(jk, "lc_win_rates", broken)
    report = jk.audit(sim.judgments, sim.pairs, n_boot=0)
    s = report.sections["win_rates"]
    assert s.ok and "win_rates" in s.tables and "lc_win_rates" not in s.tables
    assert "Length-controlled win rates could not be fitted: the GLM did not converge" in s.notes
    assert "win_rates" in s.charts  # raw win rates are still drawn


def test_data_strings_are_escaped_in_the_report(tmp_path):
    pairs, j, _ = jk.sim.simulate_judgments(80, repeats=2, seed=5)
    evil_judge = "<script>alert('judge')</script>"
    evil_model = '"><img src=x onerror="alert(1)">'
    pairs = pairs.assign(model_a="base", model_b=evil_model)
    report = jk.audit(j.assign(judge=evil_judge), pairs, n_boot=0, source="<b>my file</b>")
    for standalone in (True, False):
        page = report.to_html(standalone=standalone)
        assert "<script" not in page.lower() and "<img src=x" not in page and "<b>my file" not in page
        assert "&lt;script&gt;alert(" in page
    page = report.save(tmp_path / "report").read_text()
    assert "<script" not in page.lower() and "<img src=x" not in page
    assert "&lt;img src=x onerror=" in page  # shown as text, in the win-rate table
    assert "Content-Security-Policy" in page and "script-src 'none'" in page


def test_save_writes_every_chart_and_table(tmp_path):
    pairs, j, _ = jk.sim.simulate_judgments(120, repeats=2, seed=6)
    report = jk.audit(j, pairs, n_boot=0)
    page = report.save(tmp_path / "out")
    assert page == tmp_path / "out" / "index.html"
    pngs = sorted((tmp_path / "out" / "charts").glob("*.png"))
    assert len(pngs) == len(report.charts) and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    text = page.read_text()
    for p in pngs:
        assert f'src="charts/{p.name}"' in text
    for key, table in report.tables.items():
        section, name = key.split("/")
        csv = tmp_path / "out" / "tables" / f"{section}-{name}.csv"
        back = pd.read_csv(csv)
        assert back.shape == table.shape, key
        assert f'href="tables/{section}-{name}.csv"' in text
    # saving again replaces the files of the first report
    (tmp_path / "out" / "charts" / "stale-chart.png").write_bytes(b"old")
    report.save(tmp_path / "out")
    assert not (tmp_path / "out" / "charts" / "stale-chart.png").exists()


def test_notebook_rendering_inlines_the_charts():
    pairs, j, _ = jk.sim.simulate_judgments(60, seed=7)
    fragment = jk.audit(j, pairs, n_boot=0)._repr_html_()
    assert fragment.startswith("<style>") and "<html" not in fragment
    assert fragment.count('src="data:image/png;base64,') == 6
    assert fragment.index("Summary") < fragment.index("What was judged")


def test_several_judges_are_named_in_the_findings():
    pairs, a, _ = jk.sim.simulate_judgments(300, repeats=2, position_bias=1.5, judge_name="first-lover", seed=1)
    _, b, _ = jk.sim.simulate_judgments(pairs, repeats=2, judge_name="steady", seed=2)
    report = jk.audit(pd.concat([a, b], ignore_index=True), pairs, n_boot=100)
    assert report.judges == ["first-lover", "steady"]
    assert any(f.text.startswith("first-lover favours the first position") for f in report.findings)
    assert report.summary().startswith("2 judges, 300 pairs, 2,400 judgments")
    assert np.isfinite(report.card["position_bias"]).all()


def test_a_file_with_reader_options():
    single = FORMATS / "mtbench" / "data" / "mt_bench" / "model_judgment" / "gpt-4_single.jsonl"
    with pytest.raises(ValueError, match="pass single_as_pairs=True"):
        jk.audit(single, n_boot=0)
    report = jk.audit(single, n_boot=0, single_as_pairs=True)
    assert report.source == str(single) and len(report.judgments) == 4
    assert "one order only (ab: 4)" in report.sections["consistency"].reason
    with pytest.raises(TypeError, match=r"reader options \['single_as_pairs'\] apply to a file"):
        jk.audit(report.judgments, single_as_pairs=True)
    with pytest.raises(jk.TableError, match=r"columns= names 'x', which is not in the table"):
        jk.audit(report.judgments, columns={"x": "y"})  # a table takes a mapping too


def test_many_judges_keep_the_summary_short():
    pairs = jk.sim.simulate_pairs(60, seed=9)
    runs = [jk.sim.simulate_judgments(pairs, judge_name=f"judge-{k:02d}", seed=k).judgments for k in range(12)]
    report = jk.audit(pd.concat(runs, ignore_index=True), pairs, n_boot=0)
    # without intervals nothing is decided: every judge's findings are inconclusive
    good = [f for f in report.findings if f.level == "open"]
    assert len(good) > 15 and not any(f.level in ("good", "warn", "bad") and f.section != "report_card"
                                      for f in report.findings)
    page = report.to_html()
    assert f"{len(good) - 15} more: see the sections below" in page
