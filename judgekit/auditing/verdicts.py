"""The audit's sentences about effects: position and length bias, the lean of the probabilities,
length-controlled win rates, calibration. Each follows from an interval or a test
(:func:`judgekit.auditing.findings.effect_finding`) and is scoped to the evidence behind it: a
finding about one model's win rate is not a finding about the judge, and a property the data
cannot show is reported as not measurable, with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgekit.auditing.findings import effect_finding

__all__ = ["MARGINS", "Finding", "margins_with"]

#: The smallest effects that count as material: "no material ..." needs an equivalence test
#: against these (settable: ``jk.audit(..., margins={"length_bias": 0.05})``).
MARGINS: dict[str, float] = {
    "position_bias": 0.10,        # de-noised position bias (difference of accuracies)
    "length_bias": 0.10,          # de-noised length bias (difference of Acc_both)
    "preference_fairness": 0.10,  # preference fairness (difference of rates over pairs)
    "lc_shift": 2.0,              # LC - raw win rate of a model, in points
    "p_first": 0.02,              # mean P(first shown wins) - 0.5
    "min_length_reach": 0.10,     # |mean tanh(dlen/sd)| below this: length control cannot act
    "argmax_share": 0.99,         # verdict = likelier answer in at least this share: argmax rule
    "ece": 0.10,                  # ECE of P(first) against human labels: calibrated below this
}


@dataclass
class Finding:
    """One line of the summary: ``level`` "good", "warn", "bad" or "open" (inconclusive, or
    not measurable from this data), about ``section``."""

    level: str
    section: str
    text: str
    metric: str = ""   # what it reads, e.g. "position_bias" (empty for threshold findings)
    kind: str = ""     # "effect", "no_material_effect", "inconclusive" or "unmeasurable"


def margins_with(given: Mapping[str, float] | None) -> dict[str, float]:
    """The default margins updated with ``given``; an unknown name is an error."""
    out = dict(MARGINS)
    for key, value in (given or {}).items():
        if key not in MARGINS:
            raise ValueError(f"margins: unknown name {key!r}; known: {sorted(MARGINS)}")
        if not float(value) > 0:
            raise ValueError(f"margins: {key!r} must be positive, got {value!r}")
        out[key] = float(value)
    return out


def _who(judge: str, many: bool) -> str:
    """A prefix naming the judge when there are several."""
    return f"{judge}: " if many else ""


def _subject(judge: str, many: bool) -> str:
    return f"{judge} " if many else "The judge "


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _line(who: str, text: str) -> str:
    """A finding's text: after the judge's name as written, else capitalised."""
    return who + text if who else _cap(text)


_LEVEL = {"effect": "warn", "no_material_effect": "good", "inconclusive": "open"}


def against(row: pd.Series, good: float, bad: float | None = None) -> tuple[str, str]:
    """The level of an estimate measured against thresholds, from its interval: "good" when the
    whole interval is at or above ``good``, "bad" when it is below ``bad``, "warn" when below
    ``good``, else "open" (the interval reaches both sides), with a clause saying so."""
    lo, hi = row.get("ci_low", np.nan), row.get("ci_high", np.nan)
    if pd.isna(lo) or pd.isna(hi):
        return "open", (f"; without an interval, whether it reaches {good:.2f} is not decided")
    if lo >= good:
        return "good", ""
    if bad is not None and hi < bad:
        return "bad", ""
    if hi < good:
        return "warn", ""
    return "open", f"; the interval reaches both sides of {good:.2f}: inconclusive"


def _read_row(row: pd.Series, margin: float, what: str, units: str = "pairs", **kw):
    n = int(row["n"]) if "n" in row and pd.notna(row["n"]) else None
    se = row.get("se")
    return effect_finding(row["estimate"], ci=(row.get("ci_low", np.nan), row.get("ci_high", np.nan)),
                          se=None if se is None or pd.isna(se) else float(se), margin=margin,
                          n=n, what=what, units=units, **kw)


def bias_findings(pb: pd.DataFrame, lb: pd.DataFrame, many: bool, margins: Mapping[str, float]
                  ) -> list[Finding]:
    """De-noised position and length bias against the human labels, three-valued."""
    out = []
    for frame, metric, pos, neg in ((pb, "position_bias", "the first position", "the second position"),
                                    (lb, "length_bias", "longer answers", "shorter answers")):
        label = metric.replace("_", " ")
        for _, row in frame[frame["metric"] == metric].iterrows():
            if pd.isna(row["estimate"]):
                continue
            if metric == "length_bias":  # the row counts one stratum; the estimate uses both
                strata = frame[(frame["judge"] == row["judge"])
                               & frame["metric"].isin(["acc_both_longer", "acc_both_shorter"])]
                row = row.copy()
                row["n"] = int(strata["n"].sum()) if len(strata) == 2 else row["n"]
            got = _read_row(row, margins[metric], f"de-noised {label}", units="labelled pairs")
            text = got.sentence
            if got.kind == "effect":
                side = pos if got.estimate > 0 else neg
                out.append(Finding("warn", "accuracy", f"{_subject(row['judge'], many)}favours {side}: {text}",
                                   metric, got.kind))
                continue
            out.append(Finding(_LEVEL[got.kind], "accuracy", _line(_who(row["judge"], many), text),
                               metric, got.kind))
    return out


def fairness_findings(pf: pd.DataFrame, many: bool, margins: Mapping[str, float]) -> list[Finding]:
    out = []
    for _, row in pf[pf["metric"] == "preference_fairness"].iterrows():
        if pd.isna(row["estimate"]):
            continue
        got = _read_row(row, margins["preference_fairness"],
                        "position preference in the changed verdicts (preference fairness)")
        text = got.sentence
        if got.kind == "effect":
            side = "second (recency)" if got.estimate > 0 else "first (primacy)"
            out.append(Finding("warn", "consistency", f"{_subject(row['judge'], many)}favours the "
                               f"{side} position when it changes its verdict: {text}"))
            continue
        out.append(Finding(_LEVEL[got.kind], "consistency", _line(_who(row["judge"], many), text)))
    return out


def lean_finding(judge: str, mean: pd.Series, many: bool, margins: Mapping[str, float]) -> Finding:
    """The lean of the mean P(first shown wins) from 0.5 (only meaningful under random order)."""
    got = effect_finding(mean["estimate"], ci=(mean["ci_low"], mean["ci_high"]), null=0.5,
                         margin=margins["p_first"],
                         what="lean of the mean P(first shown wins) away from 0.5",
                         signed=False, n=int(mean["n"]) if pd.notna(mean.get("n")) else None,
                         units="judgments")
    text = got.sentence + " (0.5 means no position preference when the order is random)"
    if got.kind == "effect":
        side = "first" if got.estimate > 0.5 else "second"
        return Finding("warn", "calibration", f"{_subject(judge, many)}leans to the {side}-shown "
                       f"response in its probabilities: {text}")
    return Finding(_LEVEL[got.kind], "calibration", _line(_who(judge, many), text))


# --------------------------------------------------------------------------- win rates and length

def length_gaps(judgments: pd.DataFrame, pairs: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Per (judge, model): how the model's answers differ in length from the baseline's over the
    judged pairs: ``gap_mean``, ``gap_sd`` (characters) and ``reach``, the mean of
    tanh(Δlen / sd(Δlen)), the length feature of the LC model. Length control moves a win rate
    in proportion to the reach: near 0, the LC and raw rates agree whatever the judge does."""
    rows = []
    judged = pairs.set_index("pair_id")
    for judge, d in judgments.groupby("judge", sort=True):
        p = judged.loc[pd.unique(d["pair_id"])]
        model_is_b = p["model_a"] == baseline
        model = np.where(model_is_b, p["model_b"], p["model_a"])
        gap = np.where(model_is_b, p["len_b"] - p["len_a"], p["len_a"] - p["len_b"]).astype(float)
        frame = pd.DataFrame({"model": model, "gap": gap})
        for name, g in frame.groupby("model", sort=True):
            if name == baseline:
                continue
            sd = float(g["gap"].std(ddof=1)) if len(g) > 1 else float("nan")
            reach = float(np.tanh(g["gap"] / sd).mean()) if sd > 0 else 0.0
            rows.append({"judge": judge, "model": name, "n": len(g), "gap_mean": float(g["gap"].mean()),
                         "gap_sd": sd, "reach": reach})
    return pd.DataFrame(rows, columns=["judge", "model", "n", "gap_mean", "gap_sd", "reach"])


def _list(names: list[str], k: int = 3) -> str:
    return ", ".join(names[:k]) + (f" and {len(names) - k} more" if len(names) > k else "")


def length_findings(lc: pd.DataFrame, gaps: pd.DataFrame, baseline: str, many: bool,
                    margins: Mapping[str, float]) -> list[Finding]:
    """What length control shows, model by model, scoped to the models that can show it.

    The shift of a model is LC − raw; its interval is the LC interval less the raw rate (the raw
    rate taken as fixed: LC and raw move together across resamples, so the shift's own spread is
    usually smaller than LC's, and both the effect and the equivalence call lean conservative)."""
    out = []
    models = lc[lc["model"] != lc["baseline"]].merge(gaps, on=["judge", "model"], how="left",
                                                     suffixes=("", "_pairs"))
    for judge, d in models.groupby("judge", sort=True):
        who = _who(judge, many)
        effects, equal, unsure, blind = [], [], [], []
        for _, row in d.iterrows():
            shift = row["lc_win_rate"] - row["win_rate"]
            if pd.notna(row.get("reach")) and abs(row["reach"]) < margins["min_length_reach"]:
                blind.append((row, shift))
                continue
            got = effect_finding(shift, ci=(row["lc_ci_low"] - row["win_rate"],
                                            row["lc_ci_high"] - row["win_rate"]),
                                 margin=margins["lc_shift"], what="a length effect (LC − raw)",
                                 unit=" points",
                                 n=int(row["n"]) if pd.notna(row["n"]) else None, digits=1)
            {"effect": effects, "no_material_effect": equal, "inconclusive": unsure}[got.kind].append((row, got))
        effects.sort(key=lambda x: -abs(x[1].estimate))
        for row, got in effects[:3]:
            out.append(Finding("warn", "win_rates", _cap(
                f"{_subject(judge, many)}is swayed by length: controlling for it moves "
                f"{row['model']}'s win rate against {baseline} from {row['win_rate']:.1f}% raw to "
                f"{row['lc_win_rate']:.1f}% ({got.sentence}; its answers are "
                f"{abs(row['gap_mean']):,.0f} characters {'longer' if row['gap_mean'] > 0 else 'shorter'}"
                " than the baseline's on average)")))
        if len(effects) > 3:
            out.append(Finding("warn", "win_rates", _line(who,
                f"length control moves the win rates of {len(effects) - 3} more models beyond "
                "their intervals (see the LC table)")))
        if equal:
            names = [r["model"] for r, _ in equal]
            out.append(Finding("good", "win_rates", _line(who,
                f"for {len(equal)} model{'s' if len(equal) != 1 else ''} ({_list(names)}), "
                f"length control changes the win rate by less than ±{margins['lc_shift']:g} points "
                "(equivalence test); this is about these models' win rates, whose answers differ "
                "in length from the baseline's, not a bound on the judge's length bias for others")))
        for row, got in unsure[:3]:
            out.append(Finding("open", "win_rates", _line(who,
                f"{row['model']}'s win rate against {baseline}: {got.sentence}")))
        if len(unsure) > 3:
            out.append(Finding("open", "win_rates", _line(who,
                f"the length effect is inconclusive for {len(unsure) - 3} more models")))
        for row, shift in blind[:3]:
            out.append(Finding("open", "win_rates", _line(who,
                f"length bias cannot be measured from {row['model']}'s win rate: its answers "
                f"average {row['avg_length']:,.0f} characters against the baseline's "
                f"{_baseline_length(lc, judge):,.0f} (gap {row['gap_mean']:+,.0f}, sd "
                f"{row['gap_sd']:,.0f} per pair; the length term averages {row['reach']:+.2f} of "
                f"its range, under {margins['min_length_reach']:g}), so comparing its "
                "length-controlled and raw win rates cannot show whether the judge favours longer "
                f"or shorter answers (here LC − raw {shift:+.1f} points); a model whose answers "
                "are clearly longer or shorter than the baseline's on average would")))
        if len(blind) > 3:
            out.append(Finding("open", "win_rates", _line(who,
                f"{len(blind) - 3} more models are too close to the baseline's length to "
                "show a length effect")))
    return out


def _baseline_length(lc: pd.DataFrame, judge: str) -> float:
    base = lc[(lc["judge"] == judge) & (lc["model"] == lc["baseline"])]["avg_length"]
    return float(base.iloc[0]) if len(base) else float("nan")


# ------------------------------------------------------------------------------------ calibration

def argmax_share(with_p: pd.DataFrame) -> float:
    """Share of judgments whose verdict is the likelier response under the judge's own p_a
    (judgments at p_a = 0.5, ties and invalid verdicts left out); NaN when none is left."""
    v = with_p["verdict"]
    ok = v.isin(["a", "b"]) & (with_p["p_a"] != 0.5)
    if not ok.any():
        return float("nan")
    return float(((with_p.loc[ok, "p_a"] > 0.5) == (v[ok] == "a")).mean())


def calibration_findings(judge: str, summary: pd.DataFrame, share: float,
                         to_labels: pd.DataFrame | None, many: bool,
                         margins: Mapping[str, float]) -> list[Finding]:
    """Calibration sentences: none from the self-consistency of an argmax verdict; the ECE
    against human labels where there are labels."""
    out = []
    who = _who(judge, many)
    d = summary.set_index("metric")
    ece = d.loc["ece", "estimate"] if "ece" in d.index else np.nan
    if pd.notna(share) and share >= margins["argmax_share"]:
        out.append(Finding("open", "calibration", _line(who,
            f"the verdict is the likelier response under the judge's own probability in "
            f"{share:.1%} of its judgments, so the reliability table against its verdicts is a "
            f"step (0 below 0.5, 1 above) and its ECE ({ece:.3f}) only measures how close the "
            "probabilities sit to 0 and 1: whether they are calibrated cannot be measured "
            "without human labels")))
    elif pd.notna(ece):
        out.append(Finding("open", "calibration", _line(who,
            f"its probabilities agree with its own verdicts to {ece:.3f} (expected calibration "
            "error against the verdicts: self-consistency, not calibration to the truth, which "
            "needs human labels)")))
    if to_labels is not None and not to_labels.empty:
        h = to_labels.set_index("metric")
        row = h.loc["ece"]
        n = int(row["n"])
        cut = margins["ece"]
        level = "good" if pd.notna(row["ci_high"]) and row["ci_high"] <= cut else \
            "warn" if pd.notna(row["ci_low"]) and row["ci_low"] > cut else "open"
        ci = (f" (95% CI {row['ci_low']:.3f} to {row['ci_high']:.3f})"
              if pd.notna(row["ci_low"]) else "")
        out.append(Finding(level, "calibration", _line(who,
            f"against the human labels of {n:,} judgments its P(first shown wins) has an "
            f"expected calibration error of {row['estimate']:.3f}{ci}"
            + ("" if level != "open" else f"; whether it is under {cut:.2f} is not decided"))))
    return out
