"""Real data: LLMBar's own published statistics, and Shi et al.'s Table 2 (Judging the Judges).

LLMBar publishes, beside each ``result.json``, a ``statistics.json`` with accuracy per order
(``correct_False`` = swap False = response a shown first, ``correct_True``), both orders correct
(``correct_both``) and verdict equality across orders (``equal``), all over every pair with an
unparsed verdict counting as wrong. The counts were copied from those files in
princeton-nlp/LLMBar (Dataset/<set>/evaluators/<judge>/<strategy>/statistics.json) into
``judgekit/published/zeng2024.csv``: all 65 judge x strategy combinations of the Natural set and
19 from the other sets (notebook 04 puts them on the reproduction scoreboard).

Shi et al. (2024) Table 2 (``judgekit/published/shi2024.csv``) prints RS ± s, PC ± s and PF to two
decimals. The mirror holds an earlier release of their data; the appendix names the API version
of each judge (GPT-4-Turbo = gpt-4-1106-preview, GPT-3.5-Turbo = gpt-3.5-turbo-1106), and the
release holds seven of them. PC and PF need the full runs, which the mirror has for gpt-4-0613,
gpt-3.5-turbo-1106 and gemini-pro (both benchmarks) and claude-3-haiku (DevBench).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import judgekit as jk
from judgekit.published import published

pytestmark = pytest.mark.filterwarnings("ignore::judgekit.MetricWarning")

def _llmbar_published() -> dict[tuple[str, str], tuple[int, ...]]:
    """(set, judge/strategy) -> (correct_False, correct_True, correct_both, equal, N), from
    ``judgekit/published/zeng2024.csv`` (where the scoreboard reads them too)."""
    t = published("zeng2024", "statistics/")
    parts = t["item"].str.split("/", expand=True)
    t = t.assign(cell=list(zip(parts[1], parts[2] + "/" + parts[3])), column=parts[4])
    wide = t.pivot(index="cell", columns="column", values="value")
    columns = ["correct_False", "correct_True", "correct_both", "equal", "n"]
    return {cell: tuple(int(v) for v in row) for cell, row in wide[columns].iterrows()}


LLMBAR_PUBLISHED = _llmbar_published()

BENCHMARK = {"mtbench": "MTBench", "devbench": "DevBench"}


def _table2() -> pd.DataFrame:
    """Shi et al.'s Table 2 as (benchmark, judge, metric) -> value, tolerance."""
    t = published("shi2024", "table2/")
    parts = t["item"].str.split("/", expand=True)
    return pd.DataFrame({"benchmark": parts[1].map(BENCHMARK), "judge": parts[2], "metric": parts[3],
                         "value": t["value"], "tolerance": t["tolerance"]}).set_index(
        ["benchmark", "judge", "metric"])


TABLE2 = _table2()


@pytest.fixture(scope="module")
def llmbar():
    return jk.load_pairs("llmbar"), jk.load_judgments("llmbar")


@pytest.fixture(scope="module")
def jtj():
    return jk.load_pairs("judging_the_judges"), jk.load_judgments("judging_the_judges")


def test_llmbar_every_set_judge_strategy_against_published_statistics(llmbar):
    pairs, judgments = llmbar
    card = jk.report_card(
        judgments, pairs, by=["dataset", "judge"],
        metrics=["acc_ab", "acc_ba", "acc_both", "acc_random", "position_consistency"], n_boot=0,
    ).set_index(["dataset", "judge"])
    # every set x judge x strategy is computed
    expected_cells = judgments.merge(pairs[["pair_id", "dataset"]], on="pair_id")[
        ["dataset", "judge"]].drop_duplicates()
    assert len(card) == len(expected_cells) > 400
    assert card[["acc_ab", "acc_ba", "acc_both", "acc_random"]].notna().all().all()
    # LLMBar's "equal" counts a pair unparsed in both orders as equal; judgekit's PC leaves
    # pairs with an unparsed verdict out, so add those back to compare
    verdict = judgments.pivot_table(index=["judge", "pair_id"], columns="order", values="verdict",
                                    aggfunc="first", dropna=False)
    both_invalid = (verdict["ab"].isna() & verdict["ba"].isna()).groupby(level="judge").sum()
    ds = pairs.set_index("pair_id")["dataset"]
    both_invalid_by = (
        (verdict["ab"].isna() & verdict["ba"].isna())
        .rename("both").reset_index().assign(dataset=lambda d: d["pair_id"].map(ds))
        .groupby(["dataset", "judge"])["both"].sum()
    )
    assert both_invalid.sum() >= 1  # the rule matters on this data
    pc_rows = jk.position_consistency(judgments, pairs, by=["dataset", "judge"], n_boot=0)
    pc_rows = pc_rows.set_index(["dataset", "judge"])
    for (dataset, judge), (c_false, c_true, c_both, equal, n) in LLMBAR_PUBLISHED.items():
        row = card.loc[(dataset, judge)]
        assert row["acc_ab"] * n == pytest.approx(c_false), (dataset, judge)
        assert row["acc_ba"] * n == pytest.approx(c_true), (dataset, judge)
        assert row["acc_both"] * n == pytest.approx(c_both), (dataset, judge)
        assert row["acc_random"] == pytest.approx((c_false + c_true) / (2 * n)), (dataset, judge)
        pc = pc_rows.loc[(dataset, judge)]
        consistent = pc["estimate"] * pc["n"]
        assert consistent + both_invalid_by.get((dataset, judge), 0) == pytest.approx(equal), (dataset, judge)


def test_llmbar_natural_table_has_every_judge(llmbar):
    pairs, judgments = llmbar
    natural = pairs[pairs["dataset"] == "Natural"]
    j = judgments[judgments["pair_id"].isin(natural["pair_id"])]
    acc = jk.accuracy(j, natural, n_boot=200, seed=1)
    wide = acc.pivot(index="judge", columns="metric", values="estimate")
    assert len(wide) == 65
    published = {judge: v for (s, judge), v in LLMBAR_PUBLISHED.items() if s == "Natural"}
    assert set(published) == set(wide.index)
    # the intervals are real intervals around the estimates
    assert ((acc["ci_low"] <= acc["estimate"]) & (acc["estimate"] <= acc["ci_high"])).all()


PAPER = Path(__file__).resolve().parents[3] / "shared" / "papers"


@pytest.mark.skipif(not PAPER.is_dir(), reason="the papers' text copies are not beside the checkout")
def test_table_2_is_typed_as_printed():
    """Every row of judgekit/published/shi2024.csv equals the row of Table 2 in the paper's text,
    number for number (RS, its ±, PC, its ±, PF, error on MTBench then DevBench)."""
    text = next(PAPER.glob("003_*.txt")).read_text(encoding="utf-8")
    start = text.index("Judge\tRS\tPC\tPF\tError")
    rows = text[start:text.index("Llama-3-8B", start) + 200].splitlines()
    raw = published("shi2024", "table2/")
    typed = pd.read_csv(Path(jk.__file__).parent / "published" / "shi2024.csv", dtype=str,
                        keep_default_na=False).set_index("item")["value"]
    names = {item.split("/")[2]: note.split(";")[0].removeprefix("judge printed as ").removesuffix(" (sic)")
             for item, note in zip(raw["item"], raw["note"])}
    assert len(names) == 15
    for judge, name in names.items():
        shown = name.replace("GPT-4o", "GPT-40")  # the text copy reads the o as a zero
        line = next(r for r in rows if r.startswith(shown + "\t"))
        printed = re.findall(r"-?\d+\.\d+", line[len(shown):])
        ours = [typed[f"table2/{b}/{judge}/{m}"] for b in ("mtbench", "devbench")
                for m in ("rs", "rs_sd", "pc", "pc_sd", "pf", "error")]
        assert printed == ours, judge


def _repetition(jtj) -> pd.DataFrame:
    pairs, judgments = jtj
    rep = judgments[judgments["run"] == "repetition"]
    rs = jk.repetition_stability(rep, pairs, by=["benchmark", "judge"], n_boot=0)
    return rs.pivot(index=["benchmark", "judge"], columns="metric", values="estimate")


def _off(value: float, benchmark: str, judge: str, metric: str) -> float:
    """How far ``value`` is outside the rounding interval of the printed number (0 inside)."""
    row = TABLE2.loc[(benchmark, judge, metric)]
    return max(0.0, abs(value - row["value"]) - row["tolerance"] - 1e-12)


def test_repetition_stability_reproduces_shi_table_2(jtj):
    """RS and its ± for the seven Table 2 judges in the release, on both benchmarks: all 28
    numbers equal the printed ones at their two decimals (RS divides by every trial)."""
    rs = _repetition(jtj)
    assert len(rs) == 18 and rs["repetition_stability"].notna().all()
    judges = sorted(set(TABLE2.index.get_level_values("judge")) & set(rs.index.get_level_values("judge")))
    assert judges == ["claude-3-haiku-20240307", "claude-3-opus-20240229", "claude-3-sonnet-20240229",
                      "gemini-pro", "gpt-3.5-turbo-1106", "gpt-4-0613", "gpt-4-1106-preview"]
    compared = 0
    for judge in judges:
        for bench in BENCHMARK.values():
            for ours, theirs in (("repetition_stability", "rs"), ("repetition_stability_sd", "rs_sd")):
                assert _off(rs.loc[(bench, judge), ours], bench, judge, theirs) == 0, (bench, judge, theirs)
                compared += 1
    assert compared == 28


@pytest.mark.parametrize("printed, mapped, wrong", [
    ("GPT-4-Turbo", "gpt-4-1106-preview", "gpt-4-0125-preview"),
    ("GPT-3.5-Turbo", "gpt-3.5-turbo-1106", "gpt-3.5-turbo-0125"),
])
def test_table_2_tells_the_two_versions_of_a_judge_apart(jtj, printed, mapped, wrong):
    """The release holds two versions of GPT-4-Turbo and of GPT-3.5-Turbo; the appendix says which
    one Table 2 shows. Compared with RS and its ± at the printed precision, the other version
    fails on both benchmarks (for GPT-4-Turbo only the ± tells them apart: RS rounds alike)."""
    rs = _repetition(jtj)
    for bench in BENCHMARK.values():
        misses = [_off(rs.loc[(bench, wrong), ours], bench, mapped, theirs)
                  for ours, theirs in (("repetition_stability", "rs"), ("repetition_stability_sd", "rs_sd"))]
        assert max(misses) > 0.001, (printed, bench, wrong, misses)
        hits = [_off(rs.loc[(bench, mapped), ours], bench, mapped, theirs)
                for ours, theirs in (("repetition_stability", "rs"), ("repetition_stability_sd", "rs_sd"))]
        assert max(hits) == 0, (printed, bench, mapped, hits)


def test_consistency_and_fairness_against_shi_table_2(jtj):
    """PC and PF of the full runs with the study's conventions (mixed ties and the PF scaling of
    their code): within one unit of the printed second decimal. The release's full runs are not
    exactly the printed table's (e.g. gemini-pro on DevBench: PC 0.655 vs 0.66 printed)."""
    pairs, judgments = jtj
    full = judgments[judgments["run"] == "full"]
    shi = jk.report_card(full, pairs, by=["benchmark", "judge"],
                         metrics=["position_consistency", "preference_fairness"],
                         mixed_ties="reference", pf_denominator="all", n_boot=0).set_index(["benchmark", "judge"])
    compared = 0
    for (bench, judge), row in shi.iterrows():
        if (bench, judge, "pc") not in TABLE2.index:
            continue  # gpt-3.5-turbo-0125: not the version Table 2 shows
        for ours, theirs in (("position_consistency", "pc"), ("preference_fairness", "pf")):
            assert _off(row[ours], bench, judge, theirs) <= 0.01 - 0.005, (bench, judge, theirs)
            compared += 1
    assert compared == 14


def test_preference_fairness_reproduces_the_reference_code(jtj):
    """Shi et al.'s consistency_preference_calculation.py, written out here in pandas: per
    (candidate, task) unit, PF = (rcn * irr - pcn * ipr) / (pairs per candidate in that task,
    valid or not), averaged over the units; (A,C), (C,A) count as primacy, (B,C), (C,B) as
    recency. judgekit's mixed_ties="reference", pf_denominator="all" must give their number."""
    pairs, judgments = jtj
    full = judgments[judgments["run"] == "full"]
    pos = jk.position_of(full["verdict"], full["order"]).map({"first": "A", "second": "B", "tie": "C"})
    wide = full.assign(pos=pos.fillna("N")).pivot_table(
        index=["benchmark", "judge", "pair_id"], columns="order", values="pos", aggfunc="first")
    wide = wide.reset_index().merge(pairs[["pair_id", "model_a", "model_b", "task"]], on="pair_id")
    baseline = wide["benchmark"].map({"MTBench": "vicuna-13b-v1.3", "DevBench": "human"})
    wide["candidate"] = np.where(wide["model_a"].str.lower() == baseline, wide["model_b"], wide["model_a"])
    choice = wide["ab"] + wide["ba"]
    wide["p"] = choice.isin(["AA", "AC", "CA"])
    wide["r"] = choice.isin(["BB", "BC", "CB"])
    expected = {}
    for (bench, judge), g in wide.groupby(["benchmark", "judge"]):
        per_task = g.groupby("task").size() / g["candidate"].nunique()
        units = g.groupby(["candidate", "task"])[["p", "r"]].sum().reset_index()
        p, r = units["p"], units["r"]
        ipr = np.where(p + r > 0, p / (p + r).where(p + r > 0, 1), 0)
        irr = np.where(p + r > 0, r / (p + r).where(p + r > 0, 1), 0)
        raw = r * irr - p * ipr
        expected[(bench, judge)] = float(np.mean(raw / units["task"].map(per_task)))
    ours = jk.preference_fairness(full, pairs, by=["benchmark", "judge"], mixed_ties="reference",
                                  pf_denominator="all", n_boot=0)
    ours = ours[ours["metric"] == "preference_fairness"].set_index(["benchmark", "judge"])["estimate"]
    assert len(expected) == 8
    for key, value in expected.items():
        assert ours[key] == pytest.approx(value, abs=1e-12), key


def test_judging_the_judges_all_metrics_for_every_judge(jtj):
    pairs, judgments = jtj
    card = jk.report_card(judgments, pairs, by=["benchmark", "run", "judge"], n_boot=100,
                          metrics=["repetition_stability", "repetition_stability_star",
                                   "position_consistency", "preference_fairness", "invalid_rate"])
    rep = card[card["run"] == "repetition"]
    assert len(rep) == 18
    assert rep[["repetition_stability", "position_consistency", "preference_fairness"]].notna().all().all()
    # RS* puts the 3-option MT-Bench and 2-option DevBench on one scale: a judge that
    # answered at random would score 0 on both
    assert (rep["repetition_stability_star"] > 0.3).all()
    full = card[card["run"] == "full"]
    assert full["repetition_stability"].isna().all()  # one repeat per request: not estimable
    assert np.isfinite(full["position_consistency_ci_low"]).all()


def test_factor_analysis_on_judging_the_judges(jtj):
    pairs, judgments = jtj
    full = judgments[judgments["run"] == "full"]
    cells = jk.position_bias_factors(full, pairs, baseline=["vicuna-13b-v1.3", "human"],
                                     by="benchmark", mixed_ties="reference")
    assert set(cells.groupby("benchmark")["judge"].nunique()) == {3, 5}
    mt = cells[cells["benchmark"] == "MTBench"]
    with pytest.warns(UserWarning, match="input_length"):
        res = jk.stepwise_ols(
            mt, "position_consistency",
            ["judge", "task", "quality_gap", "input_length", "output_length"],
            categorical=["judge", "task"],
        )
    kept = set(res.table["term"].dropna())
    # Shi et al.'s finding: judge, task and the quality gap drive consistency (their Table 5)
    assert {"judge", "task", "quality_gap"} <= kept
    assert res.model.aic == pytest.approx(res.table.loc[res.table["term"].isna(), "aic"].item())
    # a larger quality gap means more consistent judgments
    gap_coef = [v for k, v in res.model.params.items() if "quality_gap" in k]
    assert gap_coef and gap_coef[0] > 0
    assert pd.api.types.is_float_dtype(cells["quality_gap"])
