"""``jk.audit``: every analysis the data supports, one call, with a plain-language summary."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgekit._stamp import stamped
from judgekit.auditing import verdicts as _v
from judgekit.auditing._support import _progress, _quiet, prepare, report_folder
from judgekit.auditing.verdicts import Finding

__all__ = ["Audit", "Finding", "Section", "audit"]

#: The sections of an audit, in the order they are computed and shown.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("data", "What was judged"),
    ("report_card", "Report card"),
    ("consistency", "Position consistency and preference fairness"),
    ("stability", "Repetition stability"),
    ("accuracy", "Agreement with human labels, position and length bias"),
    ("win_rates", "Win rates and length-controlled win rates"),
    ("calibration", "Calibration of the judge's probabilities"),
)

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


@dataclass
class Section:
    """One analysis: its tables and charts when the data supports it, else why not."""

    key: str
    title: str
    status: str = "ok"               # "ok", "unsupported" or "failed"
    reason: str = ""                 # why unsupported or failed
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    charts: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class _Unsupported(Exception):
    """Raised by a section builder when the data cannot support it; the message says why."""


class Audit:
    """The result of :func:`audit`: the report card, the tables and charts of every section the
    data supports, the reasons for those it does not, and a summary of what to trust.

    Attributes
    ----------
    judgments, pairs : DataFrame
        The validated tables the audit ran on (``pairs`` may be None).
    sections : dict of str to Section
        By key: ``data``, ``report_card``, ``consistency``, ``stability``, ``accuracy``,
        ``win_rates``, ``calibration``.
    findings : list of Finding
        The summary, most serious first.
    source : str
        Where the data came from (a file, or "tables in memory").

    Notes
    -----
    In Jupyter the object renders as HTML: the summary first, then each section.
    :meth:`save` writes the same report as a standalone page with the charts as PNG files and
    every table as CSV; :meth:`to_html` returns the page.
    """

    def __init__(self, judgments: pd.DataFrame, pairs: pd.DataFrame | None,
                 sections: dict[str, Section], findings: list[Finding], source: str,
                 options: dict[str, Any]):
        self.judgments, self.pairs = judgments, pairs
        self.sections, self.findings = sections, findings
        self.source, self.options = source, options
        self._png: dict[tuple[str, str], bytes] = {}

    # ------------------------------------------------------------------------------ access
    @property
    def card(self) -> pd.DataFrame:
        """The report card (:func:`judgekit.report_card`), one row per judge."""
        return self.sections["report_card"].tables["report_card"]

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table, keyed ``"<section>/<name>"``."""
        return {f"{s.key}/{name}": t for s in self.sections.values() for name, t in s.tables.items()}

    @property
    def charts(self) -> dict[str, Any]:
        """Every chart (altair), keyed ``"<section>/<name>"``."""
        return {f"{s.key}/{name}": c for s in self.sections.values() for name, c in s.charts.items()}

    @property
    def judges(self) -> list[str]:
        return sorted(self.judgments["judge"].unique().tolist())

    def summary(self) -> str:
        """One line: what was audited and how many sections the data supports.

        Examples
        --------
        >>> import judgekit as jk
        >>> pairs, judgments, _ = jk.sim.simulate_judgments(200, repeats=2, seed=0)
        >>> jk.audit(judgments, pairs, n_boot=0).summary()
        '1 judge, 200 pairs, 800 judgments: 6 of 7 sections measured; 0 problems, 0 warnings, 9 inconclusive'
        """
        n_ok = sum(s.ok for s in self.sections.values())
        bad = sum(f.level == "bad" for f in self.findings)
        warn = sum(f.level == "warn" for f in self.findings)
        unsure = sum(f.level == "open" for f in self.findings)
        n_pairs = self.judgments["pair_id"].nunique()
        judges = len(self.judges)
        return (f"{judges} judge{'s' if judges != 1 else ''}, {n_pairs:,} pairs, "
                f"{len(self.judgments):,} judgments: {n_ok} of {len(self.sections)} sections "
                f"measured; {bad} problem{'s' if bad != 1 else ''}, {warn} warning"
                f"{'s' if warn != 1 else ''}" + (f", {unsure} inconclusive" if unsure else ""))

    def to_measure_more(self) -> dict[str, str]:
        """For each section the data could not support, the one thing to add to measure it.

        Examples
        --------
        >>> import judgekit as jk
        >>> pairs, judgments, _ = jk.sim.simulate_judgments(50, seed=0)
        >>> print(jk.audit(judgments, pairs, n_boot=0).to_measure_more()["stability"])
        repeats: ask the identical request (same pair, order and judge settings) at least twice, and number the answers in a 'repeat' column (0, 1, ...); jk.run_judges(..., repeats=2) does this
        """
        from judgekit.auditing.remedies import to_measure_more

        return to_measure_more(self)

    def __repr__(self) -> str:
        return f"<judgekit Audit of {self.source}: {self.summary()}>"

    # ------------------------------------------------------------------------------ output
    def png(self, section: str, name: str) -> bytes:
        """A chart as PNG bytes (rendered once, offline, by vl-convert).

        Examples
        --------
        >>> import judgekit as jk
        >>> pairs, judgments, _ = jk.sim.simulate_judgments(50, seed=0)
        >>> jk.audit(judgments, pairs, n_boot=0).png("consistency", "position_consistency")[:4]
        b'\\x89PNG'
        """
        key = (section, name)
        if key not in self._png:
            from judgekit.viz import to_png

            self._png[key] = to_png(self.sections[section].charts[name])
        return self._png[key]

    def to_html(self, *, standalone: bool = True, images: str = "inline") -> str:
        """The report as HTML.

        Parameters
        ----------
        standalone : bool
            A whole page (True) or a fragment for a notebook.
        images : {"inline", "files"}
            Charts embedded as data URIs, or linked as ``charts/<section>-<name>.png`` (as
            :meth:`save` writes them).

        Returns
        -------
        str

        Examples
        --------
        >>> import judgekit as jk
        >>> pairs, judgments, _ = jk.sim.simulate_judgments(50, seed=0)
        >>> page = jk.audit(judgments, pairs, n_boot=0).to_html()
        >>> page.startswith("<!DOCTYPE html>"), "<script" in page
        (True, False)
        """
        from judgekit.auditing.html import render

        return render(self, standalone=standalone, images=images)

    def _repr_html_(self) -> str:
        return self.to_html(standalone=False, images="inline")

    def save(self, directory: str | Path, *, progress: bool = False) -> Path:
        """Write the report: ``index.html`` (a standalone page that needs no network and runs
        no script), ``charts/*.png`` and ``tables/*.csv``.

        The CSV tables are safe to open in a spreadsheet: a text cell that starts like a formula
        (``=``, ``+``, ``-``, ``@``) is written with a leading apostrophe. Files are written
        through temporary files, so a symbolic link found at ``index.html`` is replaced, never
        written through.

        Parameters
        ----------
        directory : str or Path
            Created when needed; files of an earlier report there are replaced.
        progress : bool
            Show a progress bar while the charts render.

        Returns
        -------
        Path
            The page, ``<directory>/index.html``.

        Raises
        ------
        judgekit.exceptions.OutputPathError
            When ``charts`` or ``tables`` inside ``directory`` is a symbolic link (judgekit
            neither writes behind it nor deletes files there), before anything is written.

        Examples
        --------
        >>> import tempfile, judgekit as jk
        >>> pairs, judgments, _ = jk.sim.simulate_judgments(100, seed=0)
        >>> page = jk.audit(judgments, pairs, n_boot=0).save(tempfile.mkdtemp())
        >>> page.name, sorted(p.name for p in (page.parent / "tables").iterdir())[:2]
        ('index.html', ['accuracy-accuracy.csv', 'accuracy-length_bias.csv'])
        """
        from judgekit._spreadsheet import csv_text
        from judgekit.auditing.html import chart_file, table_file

        with report_folder(directory) as out:
            out.remove("charts", "*.png")
            out.remove("tables", "*.csv")
            charts = [(s.key, name) for s in self.sections.values() for name in s.charts]
            for key, name in _progress(charts, progress, "charts"):
                out.write(chart_file(key, name), self.png(key, name))
            for s in self.sections.values():
                for name, table in s.tables.items():
                    out.write(table_file(s.key, name), csv_text(table))
            page = out.write("index.html", self.to_html(standalone=True, images="files"))
        return page


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
        raise _Unsupported(
            "every pair was judged in one order only (" + ", ".join(f"{k}: {v:,}" for k, v in
                                                          sorted(shown.items()))
            + "); position consistency needs the same pair judged with the responses swapped")
    pc = _quiet(s, lambda: jk.position_consistency(j, p, **boot))
    pf = _quiet(s, lambda: jk.preference_fairness(j, p, **boot))
    s.tables["position_consistency"] = pc
    s.tables["preference_fairness"] = pf
    from judgekit import viz

    s.charts["position_consistency"] = viz.accuracy_bars(pc, "position_consistency",
                                                         reference=1.0, reference_label="consistent")
    s.charts["preference_fairness"] = viz.bias_bars(pf, "preference_fairness")
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
        raise _Unsupported("no request was repeated (every pair and order has one judgment); "
                           "repetition stability needs the identical request asked at least twice")
    rs = _quiet(s, lambda: jk.repetition_stability(j, p, **boot))
    s.tables["repetition_stability"] = rs
    from judgekit import viz

    star_rows = rs[rs["metric"] == "repetition_stability_star"]
    low = float(np.nanmin(star_rows[["estimate", "ci_low"]].to_numpy(dtype=float), initial=0.0))
    s.charts["repetition_stability"] = viz.accuracy_bars(
        rs, "repetition_stability_star", domain=(min(-0.1, low), 1.0), reference=0.0,
        reference_label="chance")
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
        raise _Unsupported("no pairs table, so no human labels: pass pairs= with a 'label' column")
    labelled = set(p.loc[p["label"].isin(["a", "b"]), "pair_id"])
    if not labelled:
        raise _Unsupported("no pair has a human label 'a' or 'b' (the 'label' column is missing or "
                           "empty); accuracy and de-noised bias need labels")
    if not j["pair_id"].isin(labelled).any():
        raise _Unsupported("none of the judged pairs has a human label 'a' or 'b'")
    acc = _quiet(s, lambda: jk.accuracy(j, p, **boot))
    pb = _quiet(s, lambda: jk.position_bias(j, p, **boot))
    lb = _quiet(s, lambda: jk.length_bias(j, p, **boot))
    s.tables.update(accuracy=acc, position_bias=pb, length_bias=lb)
    from judgekit import viz

    s.charts["accuracy"] = viz.accuracy_bars(acc, "acc_random")
    s.charts["position_bias"] = viz.bias_bars(pb, "position_bias")
    s.charts["length_bias"] = viz.bias_bars(lb, "length_bias")
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
        raise _Unsupported("no pairs table, so no models: pass pairs= with 'model_a' and 'model_b'")
    missing = [c for c in ("model_a", "model_b") if c not in p.columns]
    if missing:
        raise _Unsupported(f"the pairs do not say which model wrote each response (no "
                           f"{' or '.join(repr(c) for c in missing)} column)")
    judged = p[p["pair_id"].isin(j["pair_id"])]
    if judged[["model_a", "model_b"]].isna().any(axis=None):
        raise _Unsupported("some judged pairs do not name both models")
    if baseline is None:
        try:
            baseline = infer_baseline(judged)
        except ValueError:
            raise _Unsupported("no single model takes part in every pair (a head-to-head "
                               "tournament, not a leaderboard against a baseline); pass baseline= "
                               "and keep the pairs with it") from None
    wr = _quiet(s, lambda: jk.win_rates(j, judged, baseline=baseline, **boot))
    s.tables["win_rates"] = wr
    try:
        lc = _quiet(s, lambda: jk.lc_win_rates(j, judged, baseline=baseline, **lcb))
    except (ValueError, np.linalg.LinAlgError) as err:
        s.notes.append(f"Length-controlled win rates could not be fitted: {err}")
        lc = None
    from judgekit import viz

    if lc is not None:
        s.tables["lc_win_rates"] = lc
        # where γ came from, and how far LC computed that way is known to sit from a leaderboard
        s.notes.extend(d["note"] for d in lc.attrs.get("judgekit_difficulty", {}).values())
        s.charts["leaderboard"] = viz.leaderboard_slope(lc, height=max(220, 26 * lc["model"].nunique()))
        gaps = _v.length_gaps(j, judged, baseline)
        s.tables["length_gaps"] = gaps
        findings.extend(_v.length_findings(lc, gaps, baseline, many, margins))
    else:
        rates = wr[wr["metric"] == "win_rate"]
        s.charts["win_rates"] = viz.accuracy_bars(rates.assign(estimate=rates["estimate"] / 100,
                                                               ci_low=rates["ci_low"] / 100,
                                                               ci_high=rates["ci_high"] / 100),
                                                  None, by="model", title="Win rate against "
                                                  + str(baseline))


def _calibration_section(j, p, s, boot, findings, many, margins):
    import judgekit as jk

    with_p = j[j["p_a"].notna()]
    if with_p.empty:
        raise _Unsupported("no judgment has a probability (p_a is missing everywhere: the judge's "
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
    from judgekit import viz

    s.charts["reliability"] = viz.reliability_diagram(
        reliability, predicted="mean_predicted", observed="estimate", n="n",
        color="judge" if with_p["judge"].nunique() > 1 else None,
        title="Reliability of P(first shown wins)")
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


# ------------------------------------------------------------------------------------- entry

@stamped
def audit(
    judgments: pd.DataFrame | str | Path,
    pairs: pd.DataFrame | str | Path | None = None,
    *,
    judge: str | None = None,
    baseline: str | None = None,
    n_boot: int | None = None,
    lc_boot: int | None = None,
    seed: int = 0,
    progress: bool = False,
    source: str | None = None,
    format: str = "auto",
    margins: dict[str, float] | None = None,
    **read_options: Any,
) -> Audit:
    """Audit a judge: every analysis its judgments support, in one call.

    Parameters
    ----------
    judgments : DataFrame, str or Path
        A judgments table (:func:`judgekit.validate_judgments`), optionally with the pairs'
        columns on every row (``prompt``, ``response_a``, ``response_b``, ``label``, ...; see
        :func:`judgekit.split_tables`), or a file in any format :func:`judgekit.read_any` reads.
    pairs : DataFrame, str or Path, optional
        The pairs table (or a file with it). Without it, the analyses that need texts, labels
        or models say so.
    judge : str, optional
        The judge's name when the judgments have no ``judge`` column.
    baseline : str, optional
        The reference model of the win rates (inferred when one model is in every pair).
    n_boot : int, optional
        Bootstrap resamples of the metrics' intervals (default: each function's own default;
        0 skips the intervals).
    lc_boot : int, optional
        Bootstrap resamples of the length-controlled win rates (default: that of
        :func:`judgekit.lc_win_rates`).
    seed : int
        Seeds every bootstrap (each function's default is 0).
    progress : bool
        Show a progress bar over the sections.
    source : str, optional
        What to call the data in the report (default: the file, or "tables in memory").
    format : str, default "auto"
        For a file: its format (:func:`judgekit.read_any`).
    margins : dict, optional
        The smallest effects that count as material, by name (defaults in
        :data:`judgekit.auditing.verdicts.MARGINS`): a finding says "no material ..." only when
        an equivalence test puts the effect within its margin; otherwise "evidence of ..." (the
        interval excludes 0) or "inconclusive", with the pairs that would decide.
    **read_options
        For a file: passed to its reader (e.g. ``single_as_pairs=True`` for MT-Bench grades,
        ``columns={...}`` for a table).

    Returns
    -------
    Audit
        The report card, each section's tables and charts (or why the data cannot support it)
        and the summary; renders as HTML in Jupyter; :meth:`Audit.save` writes the report.

    Notes
    -----
    Sections and what each needs: ``consistency`` (position consistency and preference
    fairness: pairs judged in both orders), ``stability`` (repetition stability: repeated
    requests), ``accuracy`` (accuracy, de-noised position and length bias: human labels),
    ``win_rates`` (raw and length-controlled win rates: ``model_a``/``model_b`` with one
    baseline in every pair), ``calibration`` (reliability of the judge's probability of the
    first-shown response: ``p_a``). The report card (:func:`judgekit.report_card`) is always
    computed; metrics the data cannot support are NaN in it. Every number comes from the public
    functions with their defaults; the summary's thresholds are in :data:`THRESHOLDS`.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> rows = pd.DataFrame({"pair_id": ["p1", "p1", "p2", "p2"], "prompt": ["2+2?"] * 2 + ["Hi"] * 2,
    ...                      "response_a": ["4"] * 2 + ["Hello"] * 2, "response_b": ["5"] * 2 + ["Yo"] * 2,
    ...                      "order": ["ab", "ba"] * 2, "verdict": ["a", "a", "a", "b"]})
    >>> report = jk.audit(rows, n_boot=0)
    >>> report.summary()
    '1 judge, 2 pairs, 4 judgments: 3 of 7 sections measured; 0 problems, 0 warnings, 2 inconclusive'
    >>> print(report.sections["stability"].reason)
    no request was repeated (every pair and order has one judgment); repetition stability needs the identical request asked at least twice
    """
    judgments, pairs, where = prepare(judgments, pairs, judge, format, read_options)
    source = source or where
    many = judgments["judge"].nunique() > 1
    margins = _v.margins_with(margins)
    sections = {key: Section(key, title) for key, title in SECTIONS}
    findings: list[Finding] = []
    boot, lcb = _boot(n_boot, seed), _boot(lc_boot, seed)
    builders: dict[str, Callable[[Section], None]] = {
        "data": lambda s: _data_section(judgments, pairs, s),
        "report_card": lambda s: _card_section(judgments, pairs, s, boot, findings, many),
        "consistency": lambda s: _consistency_section(judgments, pairs, s, boot, findings, many, margins),
        "stability": lambda s: _stability_section(judgments, pairs, s, boot, findings, many),
        "accuracy": lambda s: _accuracy_section(judgments, pairs, s, boot, findings, many, margins),
        "win_rates": lambda s: _win_rate_section(judgments, pairs, s, boot, lcb, baseline,
                                                 findings, many, margins),
        "calibration": lambda s: _calibration_section(judgments, pairs, s, boot, findings, many,
                                                      margins),
    }
    for key in _progress(list(builders), progress, "sections"):
        s = sections[key]
        try:
            builders[key](s)
        except _Unsupported as why:
            s.status, s.reason = "unsupported", str(why)
            s.tables.clear()
            s.charts.clear()
        except (ValueError, np.linalg.LinAlgError, ZeroDivisionError) as err:
            s.status, s.reason = "failed", f"{type(err).__name__}: {err}"
            s.tables.clear()
            s.charts.clear()
    order = {"bad": 0, "warn": 1, "open": 2, "good": 3}
    findings.sort(key=lambda f: (order.get(f.level, 4), [k for k, _ in SECTIONS].index(f.section)))
    options = {"n_boot": n_boot, "lc_boot": lc_boot, "baseline": baseline, "seed": seed,
               "margins": margins}
    return Audit(judgments, pairs, sections, findings, source, options)
