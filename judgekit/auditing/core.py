"""``jk.audit``: every analysis the data supports, one call, with a plain-language summary.

The audit computes tables and findings (:mod:`judgekit.auditing.sections`); what is drawn and
written from them (charts, the page, the report folder) is in :mod:`judgekit.viz.audit_report`,
which the output methods of :class:`Audit` call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgekit._stamp import stamped
from judgekit.auditing import sections as _s
from judgekit.auditing import verdicts as _v
from judgekit.auditing._support import _progress, prepare
from judgekit.auditing.sections import SECTIONS as SECTIONS
from judgekit.auditing.sections import THRESHOLDS as THRESHOLDS
from judgekit.auditing.verdicts import Finding

__all__ = ["Audit", "Finding", "Section", "audit"]


@dataclass
class Section:
    """One analysis: its tables when the data supports it, else why not.

    ``charts`` draws the section's charts from its tables on first use
    (:func:`judgekit.viz.audit_report.audit_charts`).
    """

    key: str
    title: str
    status: str = "ok"               # "ok", "unsupported" or "failed"
    reason: str = ""                 # why unsupported or failed
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def charts(self) -> dict[str, Any]:
        """The section's charts (altair), by name, drawn from its tables when first asked for."""
        drawn = self.__dict__.get("_charts")
        if drawn is None:
            from judgekit.viz.audit_report import audit_charts

            drawn = self.__dict__["_charts"] = audit_charts(self)
        return drawn


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
        # drawn output, kept once made (filled by judgekit.viz.audit_report)
        self._png: dict[tuple[str, str], bytes] = {}
        self._chart_titles: dict[tuple[str, str], str] = {}

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
            from judgekit.viz.audit_report import chart_png

            self._png[key] = chart_png(self.sections[section].charts[name])
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
        from judgekit.viz.audit_report import audit_page

        return audit_page(self, standalone=standalone, images=images)

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
        from judgekit.viz.audit_report import save_audit

        return save_audit(self, directory, progress=progress)


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
    on_section: Callable[[Section], None] | None = None,
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
    on_section : callable, optional
        Called with each :class:`Section` as soon as it is computed (``judgekit audit`` draws
        its charts meanwhile in a second process).
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
    boot, lcb = _s._boot(n_boot, seed), _s._boot(lc_boot, seed)
    builders: dict[str, Callable[[Section], None]] = {
        "data": lambda s: _s._data_section(judgments, pairs, s),
        "report_card": lambda s: _s._card_section(judgments, pairs, s, boot, findings, many),
        "consistency": lambda s: _s._consistency_section(judgments, pairs, s, boot, findings, many,
                                                         margins),
        "stability": lambda s: _s._stability_section(judgments, pairs, s, boot, findings, many),
        "accuracy": lambda s: _s._accuracy_section(judgments, pairs, s, boot, findings, many, margins),
        "win_rates": lambda s: _s._win_rate_section(judgments, pairs, s, boot, lcb, baseline,
                                                    findings, many, margins),
        "calibration": lambda s: _s._calibration_section(judgments, pairs, s, boot, findings, many,
                                                         margins),
    }
    for key in _progress(list(_s.COMPUTE_ORDER), progress, "sections"):
        s = sections[key]
        try:
            builders[key](s)
        except _s.Unsupported as why:
            s.status, s.reason = "unsupported", str(why)
            s.tables.clear()
        except (ValueError, np.linalg.LinAlgError, ZeroDivisionError) as err:
            s.status, s.reason = "failed", f"{type(err).__name__}: {err}"
            s.tables.clear()
        if on_section is not None:
            on_section(s)
    order = {"bad": 0, "warn": 1, "open": 2, "good": 3}
    findings.sort(key=lambda f: (order.get(f.level, 4), [k for k, _ in SECTIONS].index(f.section)))
    options = {"n_boot": n_boot, "lc_boot": lc_boot, "baseline": baseline, "seed": seed,
               "margins": margins}
    return Audit(judgments, pairs, sections, findings, source, options)
