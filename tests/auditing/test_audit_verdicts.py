"""The audit's sentences say no more than their evidence: scope and identifiability of the length
findings, no calibration verdict from an argmax judge's own verdicts, settable margins, and the
verdict-accuracy study's three cases (few replications; the full study is
benchmarks/study_audit_verdicts.py)."""

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import judgekit as jk
from judgekit.auditing.verdicts import MARGINS

ROOT = Path(__file__).resolve().parents[2]


def _texts(report, section):
    return [(f.level, f.text) for f in report.findings if f.section == section]


def test_one_model_as_long_as_the_baseline_cannot_clear_a_length_biased_judge(tmp_path):
    # a strongly length-biased judge (phi = 2.5), one model whose answers are as long as the
    # baseline's on average: length control cannot move its rate, so nothing may say "not swayed"
    pairs, judgments, truth, _ = jk.sim.simulate_leaderboard(1, 400, phi=2.5, length_shift=[0.0],
                                                         soft=True, seed=3)
    rows = judgments.merge(pairs, on="pair_id")
    rows.to_csv(tmp_path / "one_model.csv", index=False)
    report = jk.audit(tmp_path / "one_model.csv", n_boot=100, lc_boot=20)
    found = _texts(report, "win_rates")
    assert found, "a length finding is expected"
    assert not any(level == "good" for level, _ in found)
    assert not any("not swayed" in t or "no material" in t.lower() for _, t in found)
    assert any(level == "open" and "Length bias cannot be measured from model_0" in t
               and "gap" in t and "sd" in t for level, t in found)


def test_a_model_with_a_length_gap_shows_the_same_judge_swayed():
    pairs, judgments, _, _ = jk.sim.simulate_leaderboard(1, 400, phi=2.5, length_shift=[-1.0],
                                                     soft=True, seed=3)
    report = jk.audit(judgments, pairs, n_boot=100, lc_boot=20)
    found = _texts(report, "win_rates")
    assert any(level == "warn" and t.startswith("The judge is swayed by length") for level, t in found)


def test_argmax_verdicts_get_no_calibration_verdict_and_labels_get_one():
    pairs, judgments, _, _ = jk.sim.simulate_leaderboard(2, 300, soft=True, seed=1)
    report = jk.audit(judgments, pairs, n_boot=100, lc_boot=20)
    calib = _texts(report, "calibration")
    assert any(level == "open" and "is a step" in t and "cannot be measured without human labels" in t
               for level, t in calib)
    assert not any(level == "good" and "ECE" in t or "match its own verdicts" in t for level, t in calib)
    page = report.to_html(standalone=False)
    assert "Inconclusive or not measurable" in page and "is a step" in page
    # with human labels drawn from a miscalibrated truth the ECE is measured against the labels
    rng = np.random.default_rng(0)
    p_b = 1 - judgments.set_index("pair_id")["p_a"]
    truth = np.clip(0.5 + 0.4 * (p_b - 0.5), 0, 1)  # the judge is twice as sure as it should be
    labels = np.where(rng.random(len(truth)) < truth, "b", "a")
    labelled = pairs.assign(label=pd.Series(labels, index=p_b.index).reindex(pairs["pair_id"]).to_numpy())
    report = jk.audit(judgments, labelled, n_boot=100, lc_boot=20)
    table = report.tables["calibration/calibration_to_labels"].set_index("metric")
    assert table.loc["ece", "estimate"] > 0.1
    assert any("against the human labels" in t.lower() and level == "warn"
               for level, t in _texts(report, "calibration"))


def test_margins_are_settable_and_checked():
    pairs, judgments, _ = jk.sim.simulate_judgments(600, repeats=2, seed=4)
    wide = jk.audit(judgments, pairs, n_boot=200, margins={"position_bias": 0.5})
    assert wide.options["margins"]["position_bias"] == 0.5
    assert any(t.startswith("No material de-noised position bias") and "±0.50" in t
               for _, t in _texts(wide, "accuracy"))
    narrow = jk.audit(judgments, pairs, n_boot=200, margins={"position_bias": 0.001})
    assert any(t.startswith("De-noised position bias: inconclusive") and "would decide" in t
               for _, t in _texts(narrow, "accuracy"))
    with pytest.raises(ValueError, match="unknown name 'bias'"):
        jk.audit(judgments, pairs, n_boot=0, margins={"bias": 0.1})
    assert set(MARGINS) >= {"position_bias", "length_bias", "lc_shift", "p_first"}


def test_the_command_line_sets_margins_and_refuses_bad_ones(tmp_path, capsys):
    from judgekit.cli import main

    pairs, judgments, _ = jk.sim.simulate_judgments(150, seed=4)
    judgments.merge(pairs, on="pair_id").to_csv(tmp_path / "j.csv", index=False)
    assert main(["audit", str(tmp_path / "j.csv"), "--margin", "bias=0.1", "--no-progress",
                 "--out", str(tmp_path / "r")]) == 2
    assert "unknown name 'bias'" in capsys.readouterr().err
    assert main(["audit", str(tmp_path / "j.csv"), "--margin", "length_bias=x", "--no-progress",
                 "--out", str(tmp_path / "r")]) == 2
    assert "expected NAME=VALUE" in capsys.readouterr().err
    assert main(["audit", str(tmp_path / "j.csv"), "--margin", "position_bias=0.5", "--n-boot", "50",
                 "--no-progress", "--out", str(tmp_path / "r")]) == 0
    page = (tmp_path / "r" / "index.html").read_text()
    assert "±0.50" in page


@pytest.mark.parametrize("case,bias,n,allowed", [
    ("biased", 0.8, 400, {"effect"}),
    ("unbiased", 0.0, 400, {"no_material_effect"}),
    ("too_few", 0.0, 40, {"inconclusive"}),
    ("small_40", 0.2, 40, {"inconclusive"}),
])
def test_verdict_study_cases_point_the_right_way(case, bias, n, allowed, tmp_path):
    study = _study()
    assert study.CASES[case] == (bias, n)
    kinds, truths, estimates = study.run_case(bias, n, reps=3, seed=10, n_boot=60, folder=tmp_path)
    assert sum(k in allowed for k in kinds) >= 2, (case, kinds)
    assert not any(study.wrong(k, e, t) for k, e, t in zip(kinds, estimates, truths)), case
    if case == "biased":
        assert min(truths) > 2 * MARGINS["position_bias"] * 0.75
        assert "no_material_effect" not in kinds
    if case in ("unbiased", "too_few"):
        assert max(abs(t) for t in truths) < 1e-9 and "effect" not in kinds
    if case == "small_40":
        assert min(truths) > 0 and max(truths) < MARGINS["position_bias"]


def test_the_study_calls_a_finding_wrong_only_against_the_truth():
    wrong = _study().wrong
    assert wrong("effect", 0.03, 0.0) and wrong("effect", -0.03, 0.05)
    assert not wrong("effect", 0.03, 0.05) and not wrong("effect", -0.2, -0.19)
    assert wrong("no_material_effect", 0.0, 0.19) and wrong("no_material_effect", 0.0, -0.11)
    assert not wrong("no_material_effect", 0.0, 0.05) and not wrong("no_material_effect", 0.1, 0.0)
    assert not wrong("inconclusive", 0.3, 0.0) and not wrong("inconclusive", 0.0, 0.5)


def _study():
    spec = importlib.util.spec_from_file_location("study", ROOT / "benchmarks" / "study_audit_verdicts.py")
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    return study


def test_verdict_study_direct_mode_gives_the_audits_own_findings(tmp_path):
    # the study's --direct mode (no file, jk.position_bias read by the audit's bias_findings) is
    # what jk.audit(path) finds for the same simulated judges
    study = _study()
    for bias, n in ((0.2, 40), (0.0, 400)):
        files = study.run_case(bias, n, reps=2, seed=20, n_boot=60, folder=tmp_path)
        direct = study.run_case(bias, n, reps=2, seed=20, n_boot=60, direct=True)
        assert files == direct
