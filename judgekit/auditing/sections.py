"""The sections of :func:`judgekit.audit`: each runs the public metric functions on the validated
tables, keeps their tables in its :class:`~judgekit.auditing.core.Section` and adds its findings.
Nothing here draws or writes: the charts of each section are chosen in
:mod:`judgekit.viz.audit_report`, from the tables kept here."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from judgekit.auditing import verdicts as _v
from judgekit.auditing._support import _quiet
from judgekit.auditing.verdicts import Finding

if TYPE_CHECKING:
    from judgekit.auditing.core import Section

#: The sections of an audit, in the order they are shown.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("data", "What was judged"),
    ("report_card", "Report card"),
    ("consistency", "Position consistency and preference fairness"),
    ("stability", "Repetition stability"),
    ("accuracy", "Agreement with human labels, position and length bias"),
    ("win_rates", "Win rates and length-controlled win rates"),
    ("calibration", "Calibration of the judge's probabilities"),
)

#: The order the sections are computed in: those that may draw a chart first, so that the chart
#: worker of ``judgekit audit`` draws the last chart while the report card is computed rather than
#: after the analysis (findings are sorted into the shown order afterwards).
COMPUTE_ORDER: tuple[str, ...] = ("win_rates", "calibration", "consistency", "stability",
                                  "accuracy", "data", "report_card")

#: Thresholds of the summary's verdicts (judgekit's conventions, documented in docs/audit.md).
THRESHOLDS: dict[str, float] = {
    "invalid_rate": 0.05,          # more invalid answers than this: a warning
    "pc_good": 0.90,               # position consistency at least this: trustworthy
    "pc_bad": 0.75,                # below this: a problem
    "rs_star_good": 0.80,          # chance-corrected repetition stability at least this
    "rs_star_bad": 0.50,
    "accuracy": 0.75,              # agreement with the human label (Acc_random) at least this
}
# The margins of the three-valued findings (effects, their absence, inconclusive) are
# judgekit.auditing.verdicts.MARGINS, settable per call with ``audit(..., margins=...)``.


class Unsupported(Exception):
    """Raised by a section builder when the data cannot support it; the message says why."""


# ------------------------------------------------------------------------------------ helpers

def _fmt(x: float, digits: int = 2) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _ci(row: pd.Series, digits: int = 2) -> str:
    lo, hi = row.get("ci_low", np.nan), row.get("ci_high", np.nan)
    if pd.isna(lo) or pd.isna(hi):
        return ""
    return f" (95% CI {_fmt(lo, digits)} to {_fmt(hi, digits)})"


def _who(judge: str, many: bool) -> str:
    """The subject of a finding: the judge's name when there are several."""
    return f"{judge} " if many else "The judge "


def _both_orders(j: pd.DataFrame) -> int:
    """Pairs a judge saw in both orders with a valid verdict in each."""
    valid = j[j["verdict"].notna()]
    per = valid.groupby(["judge", "pair_id"])["order"].nunique()
    return int((per == 2).sum())


def _repeated(j: pd.DataFrame) -> int:
    """Requests asked more than once."""
    counts = j.groupby(["judge", "pair_id", "order", "id_swap"]).size()
    return int((counts > 1).sum())


def _boot(n_boot: int | None, seed: int = 0) -> dict[str, int]:
    """The uncertainty options passed on: the function's default resamples unless given."""
    return {"seed": seed} if n_boot is None else {"n_boot": n_boot, "seed": seed}


# ---------------------------------------------------------------------------------- sections

def _data_section(j: pd.DataFrame, p: pd.DataFrame | None, s: Section) -> None:
    rows = []
    for judge, d in j.groupby("judge", sort=True):
        orders = d.groupby("pair_id")["order"].nunique()
        rows.append({
            "judge": judge, "pairs": int(d["pair_id"].nunique()), "judgments": len(d),
            "pairs_in_both_orders": int((orders == 2).sum()),
            "repeats_per_request": int(d.groupby(["pair_id", "order", "id_swap"]).size().max()),
            "invalid_share": float(d["verdict"].isna().mean()),
            "tie_share": float((d["verdict"] == "tie").mean()),
            "with_probability": float(d["p_a"].notna().mean()),
        })
    s.tables["overview"] = pd.DataFrame(rows)
    from judgekit.auditing.reading import data_notes

    data_notes(j, p, s)
    if p is None:
        s.notes.append("No pairs table: analyses that need the texts, labels or models are skipped.")
    else:
        labelled = int(p["label"].isin(["a", "b"]).sum())
        models = sorted(set(p.get("model_a", pd.Series(dtype=object)).dropna()) |
                        set(p.get("model_b", pd.Series(dtype=object)).dropna()))
        s.notes.append(f"{len(p):,} pairs; {labelled:,} with a human label a or b; "
                       f"{len(models)} model{'s' if len(models) != 1 else ''} named.")


def _card_section(j, p, s, boot, findings, many):
    import judgekit as jk

    card = _quiet(s, lambda: jk.report_card(j, p, **boot))
    s.tables["report_card"] = card
    limit = THRESHOLDS["invalid_rate"]
    for _, row in card.iterrows():
        rate = row["invalid_rate"]
        if pd.notna(rate):
            level = "warn" if rate > limit else "good"
            text = (f"gave a usable verdict in every one of {int(row['n_judgments']):,} answers"
                    if rate == 0 else f"gave no usable verdict in {rate:.1%} of its answers"
                    + (f" (more than {limit:.0%})" if rate > limit else ""))
            findings.append(Finding(level, "report_card", _who(row["judge"], many) + text))


def _consistency_section(j, p, s, boot, findings, many, margins):
    import judgekit as jk

    n = _both_orders(j)
    if n == 0:
        shown = j["order"].value_counts().to_dict()
        raise Unsupported(
            "every pair was judged in one order only (" + ", ".join(f"{k}: {v:,}" for k, v in
                                                          sorted(shown.items()))
            + "); position consistency needs the same pair judged with the responses swapped")
    pc = _quiet(s, lambda: jk.position_consistency(j, p, **boot))
    pf = _quiet(s, lambda: jk.preference_fairness(j, p, **boot))
    s.tables["position_consistency"] = pc
    s.tables["preference_fairness"] = pf
    for _, row in pc.iterrows():
        est = row["estimate"]
        if pd.isna(est):
            continue
        level, why = _v.against(row, THRESHOLDS["pc_good"], THRESHOLDS["pc_bad"])
        findings.append(Finding(level, "consistency",
                                f"{_who(row['judge'], many)}keeps its verdict when the two responses swap "
                                f"places in {est:.0%} of {int(row['n']):,} swapped comparisons{_ci(row)}"
                                + why))
    findings.extend(_v.fairness_findings(pf, many, margins))


def _stability_section(j, p, s, boot, findings, many):
    import judgekit as jk

    if _repeated(j) == 0:
        raise Unsupported("no request was repeated (every pair and order has one judgment); "
                           "repetition stability needs the identical request asked at least twice")
    rs = _quiet(s, lambda: jk.repetition_stability(j, p, **boot))
    s.tables["repetition_stability"] = rs
    star = rs[rs["metric"] == "repetition_stability_star"].set_index("judge")
    raw = rs[rs["metric"] == "repetition_stability"].set_index("judge")
    for judge, row in star.iterrows():
        est = row["estimate"]
        if pd.isna(est):
            continue
        level, why = _v.against(row, THRESHOLDS["rs_star_good"], THRESHOLDS["rs_star_bad"])
        findings.append(Finding(level, "stability",
                                f"{_who(judge, many)}gives its most common answer to an identical "
                                f"request {raw.loc[judge, 'estimate']:.0%} of the time; chance-corrected "
                                f"repetition stability RS* {est:.2f}{_ci(row)}" + why))


def _accuracy_section(j, p, s, boot, findings, many, margins):
    import judgekit as jk

    if p is None:
        raise Unsupported("no pairs table, so no human labels: pass pairs= with a 'label' column")
    labelled = set(p.loc[p["label"].isin(["a", "b"]), "pair_id"])
    if not labelled:
        raise Unsupported("no pair has a human label 'a' or 'b' (the 'label' column is missing or "
                           "empty); accuracy and de-noised bias need labels")
    if not j["pair_id"].isin(labelled).any():
        raise Unsupported("none of the judged pairs has a human label 'a' or 'b'")
    acc = _quiet(s, lambda: jk.accuracy(j, p, **boot))
    pb = _quiet(s, lambda: jk.position_bias(j, p, **boot))
    lb = _quiet(s, lambda: jk.length_bias(j, p, **boot))
    s.tables.update(accuracy=acc, position_bias=pb, length_bias=lb)
    # acc_random needs both orders; a judge that saw one order is measured in that order
    measured = acc.loc[acc["estimate"].notna(), "metric"]
    metric = "acc_random" if (measured == "acc_random").any() else \
        next((m for m in ("acc_ab", "acc_ba") if (measured == m).any()), "acc_random")
    for _, row in acc[acc["metric"] == metric].iterrows():
        if pd.notna(row["estimate"]):
            level, why = _v.against(row, THRESHOLDS["accuracy"])
            findings.append(Finding(level, "accuracy",
                                    f"{_who(row['judge'], many)}agrees with the human label in "
                                    f"{row['estimate']:.0%} of {int(row['n']):,} labelled pairs, averaged over the "
                                    f"orders shown{_ci(row)}" + why))
    findings.extend(_v.bias_findings(pb, lb, many, margins))


def _win_rate_section(j, p, s, boot, lcb, baseline, findings, many, margins):
    import judgekit as jk
    from judgekit.winrate._data import infer_baseline

    if p is None:
        raise Unsupported("no pairs table, so no models: pass pairs= with 'model_a' and 'model_b'")
    missing = [c for c in ("model_a", "model_b") if c not in p.columns]
    if missing:
        raise Unsupported(f"the pairs do not say which model wrote each response (no "
                           f"{' or '.join(repr(c) for c in missing)} column)")
    judged = p[p["pair_id"].isin(j["pair_id"])]
    if judged[["model_a", "model_b"]].isna().any(axis=None):
        raise Unsupported("some judged pairs do not name both models")
    if baseline is None:
        try:
            baseline = infer_baseline(judged)
        except ValueError:
            raise Unsupported("no single model takes part in every pair (a head-to-head "
                               "tournament, not a leaderboard against a baseline); pass baseline= "
                               "and keep the pairs with it") from None
    wr = _quiet(s, lambda: jk.win_rates(j, judged, baseline=baseline, **boot))
    s.tables["win_rates"] = wr
    try:
        lc = _quiet(s, lambda: jk.lc_win_rates(j, judged, baseline=baseline, **lcb))
    except (ValueError, np.linalg.LinAlgError) as err:
        s.notes.append(f"Length-controlled win rates could not be fitted: {err}")
        lc = None
    if lc is not None:
        s.tables["lc_win_rates"] = lc
        # where γ came from, and how far LC computed that way is known to sit from a leaderboard
        s.notes.extend(d["note"] for d in lc.attrs.get("judgekit_difficulty", {}).values())
        gaps = _v.length_gaps(j, judged, baseline)
        s.tables["length_gaps"] = gaps
        findings.extend(_v.length_findings(lc, gaps, baseline, many, margins))


def _calibration_section(j, p, s, boot, findings, many, margins):
    import judgekit as jk

    with_p = j[j["p_a"].notna()]
    if with_p.empty:
        raise Unsupported("no judgment has a probability (p_a is missing everywhere: the judge's "
                           "verdict-token logprobs were not recorded)")
    cluster = None
    if p is not None and "instruction_id" in p.columns and p["instruction_id"].notna().all():
        # every model shares an instruction's shown order (as in AlpacaEval): resample instructions
        ids = p.set_index("pair_id")["instruction_id"]
        with_p = with_p.assign(instruction_id=with_p["pair_id"].map(ids).to_numpy())
        cluster = "instruction_id"
        s.notes.append("Intervals resample instructions (all pairs of an instruction together).")
    summary = _quiet(s, lambda: jk.first_position_summary(with_p, cluster=cluster, **boot))
    reliability = _quiet(s, lambda: jk.first_position_reliability(with_p))
    s.tables["first_position_summary"] = summary
    s.tables["reliability"] = reliability
    if len(with_p) < len(j):
        s.notes.append(f"{len(j) - len(with_p):,} of {len(j):,} judgments have no probability and "
                       "are left out here.")
    to_labels = _labels_summary(with_p, p, cluster, boot, s)
    for judge, d in summary.groupby("judge"):
        findings.append(_v.lean_finding(judge, d.set_index("metric").loc["mean_p_first"], many, margins))
        share = _v.argmax_share(with_p[with_p["judge"] == judge])
        mine = None if to_labels is None else to_labels[to_labels["judge"] == judge]
        findings.extend(_v.calibration_findings(judge, d, share, mine, many, margins))


def _labels_summary(with_p, p, cluster, boot, s):
    """P(first shown wins) against the human labels (the label as the verdict), where any."""
    import judgekit as jk

    if p is None or "label" not in p.columns:
        return None
    labels = p.set_index("pair_id")["label"]
    lab = with_p.assign(verdict=with_p["pair_id"].map(labels).to_numpy())
    lab = lab[lab["verdict"].isin(["a", "b"])]
    if lab.empty:
        return None
    table = _quiet(s, lambda: jk.first_position_summary(lab, cluster=cluster, **boot))
    s.tables["calibration_to_labels"] = table
    return table
