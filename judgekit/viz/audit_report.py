"""The audit as people see it: the charts each section draws from its tables, the report page
(rendered from the jinja2 templates in ``judgekit/viz/templates``, which escape every value) and
the report folder (``index.html``, ``charts/*.png``, ``tables/*.csv``).

:func:`judgekit.audit` computes tables and findings only; everything drawn or written is here, so
a new figure of the audit is one entry in :func:`_figures` and a change to the page is a change
to the template.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

# An audit and its sections are judgekit.auditing's Audit and Section; viz sits below auditing
# in the layers, so they are typed Any here (nothing of auditing is imported).
Audit = Section = Any

__all__ = ["audit_charts", "audit_page", "save_audit"]

#: Rows of a table shown in the page (the CSV holds them all).
MAX_ROWS = 30
#: Findings listed per column of the summary (many judges make many findings).
MAX_FINDINGS = 15
TEMPLATES = Path(__file__).parent / "templates"


# ------------------------------------------------------------------------------------ charts
def _figures(s: Section) -> dict[str, Callable[[], Any]]:
    """The charts of a measured section, by name, in the order shown, each as a function that
    draws it from the section's tables (nothing is drawn, and altair is not imported, here)."""
    if not s.ok:
        return {}
    from judgekit import viz

    t = s.tables
    if s.key == "consistency":
        return {"position_consistency": lambda: viz.accuracy_bars(
                    t["position_consistency"], "position_consistency", reference=1.0,
                    reference_label="consistent"),
                "preference_fairness": lambda: viz.bias_bars(t["preference_fairness"],
                                                             "preference_fairness")}
    if s.key == "stability":
        return {"repetition_stability": lambda: _stability_chart(t["repetition_stability"])}
    if s.key == "accuracy":
        return {"accuracy": lambda: viz.accuracy_bars(t["accuracy"], "acc_random"),
                "position_bias": lambda: viz.bias_bars(t["position_bias"], "position_bias"),
                "length_bias": lambda: viz.bias_bars(t["length_bias"], "length_bias")}
    if s.key == "win_rates" and "lc_win_rates" in t:
        lc = t["lc_win_rates"]
        return {"leaderboard": lambda: viz.leaderboard_slope(
            lc, height=max(220, 26 * lc["model"].nunique()))}
    if s.key == "win_rates" and "win_rates" in t:
        return {"win_rates": lambda: _win_rate_chart(t["win_rates"])}
    if s.key == "calibration" and "reliability" in t:
        reliability = t["reliability"]
        return {"reliability": lambda: viz.reliability_diagram(
            reliability, predicted="mean_predicted", observed="estimate", n="n",
            color="judge" if reliability["judge"].nunique() > 1 else None,
            title="Reliability of P(first shown wins)")}
    return {}


def _stability_chart(rs: pd.DataFrame) -> Any:
    import numpy as np

    from judgekit import viz

    star_rows = rs[rs["metric"] == "repetition_stability_star"]
    low = float(np.nanmin(star_rows[["estimate", "ci_low"]].to_numpy(dtype=float), initial=0.0))
    return viz.accuracy_bars(rs, "repetition_stability_star", domain=(min(-0.1, low), 1.0),
                             reference=0.0, reference_label="chance")


def _win_rate_chart(wr: pd.DataFrame) -> Any:
    """Raw win rates (in percent) as bars of a share, when no length-controlled fit exists."""
    from judgekit import viz

    rates = wr[wr["metric"] == "win_rate"]
    baseline = rates["baseline"].iloc[0] if len(rates) else ""
    return viz.accuracy_bars(rates.assign(estimate=rates["estimate"] / 100,
                                          ci_low=rates["ci_low"] / 100,
                                          ci_high=rates["ci_high"] / 100),
                             None, by="model", title="Win rate against " + str(baseline))


#: The chart functions the sections above draw with.
_BUILDERS = ("accuracy_bars", "bias_bars", "leaderboard_slope", "reliability_diagram")


def warm_charts() -> None:
    """Import the chart functions the sections draw with (``judgekit audit``'s chart worker does
    this while it waits for the first section)."""
    from judgekit import viz

    for name in _BUILDERS:
        getattr(viz, name)


def chart_names(s: Section) -> list[str]:
    """The names of the charts a section draws, without drawing them."""
    return list(_figures(s))


def audit_charts(section: Section) -> dict[str, Any]:
    """The altair charts of one section of an audit, drawn from its tables.

    Parameters
    ----------
    section : Section
        One of ``Audit.sections`` (what ``section.charts`` returns, drawn again).

    Returns
    -------
    dict of str to altair chart
        By name, in the order the page shows them; empty for a section that was not measured.

    Examples
    --------
    >>> import judgekit as jk
    >>> from judgekit.viz.audit_report import audit_charts
    >>> pairs, judgments, _ = jk.sim.simulate_judgments(50, seed=0)
    >>> sorted(audit_charts(jk.audit(judgments, pairs, n_boot=0).sections["consistency"]))
    ['position_consistency', 'preference_fairness']
    """
    return {name: draw() for name, draw in _figures(section).items()}


def chart_png(chart: Any) -> bytes:
    """A chart as PNG bytes (offline, by vl-convert)."""
    from judgekit.viz._export import to_png

    return to_png(chart)


def chart_file(section: str, name: str) -> str:
    return f"charts/{_slug(section)}-{_slug(name)}.png"


def table_file(section: str, name: str) -> str:
    return f"tables/{_slug(section)}-{_slug(name)}.csv"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "x"


# ------------------------------------------------------------------------------------ tables
def _display(table: pd.DataFrame) -> pd.DataFrame:
    """A table as shown: long text cut, floats rounded, at most MAX_ROWS rows."""
    shown = table.head(MAX_ROWS).copy()
    for column in shown.columns:
        values = shown[column]
        if pd.api.types.is_float_dtype(values.dtype):
            shown[column] = values.map(lambda x: "" if pd.isna(x) else f"{x:.3g}" if abs(x) < 1e-3 and x
                                       else f"{x:.3f}")
        elif values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
            shown[column] = values.map(lambda x: x if not isinstance(x, str) or len(x) <= 80
                                       else x[:77] + "...")
    return shown


_COUNT_LABELS = {"primacy": "Primacy-preferred pairs (pcn, a count)",
                 "recency": "Recency-preferred pairs (rcn, a count)"}


def _card_view(card: pd.DataFrame) -> pd.DataFrame:
    """The report card turned for reading: one row per metric, one column per judge,
    "estimate [low, high]"."""
    from judgekit.metrics.report import REPORT_CARD_METRICS
    from judgekit.viz._theme import metric_label

    rows = {}
    for metric in [m for m in REPORT_CARD_METRICS if m in card.columns]:
        cells = []
        for _, row in card.iterrows():
            est, lo, hi = row[metric], row.get(f"{metric}_ci_low"), row.get(f"{metric}_ci_high")
            whole = metric in ("primacy", "recency")  # counts
            f = (lambda x: f"{x:.0f}") if whole else (lambda x: f"{x:.3f}")
            if pd.isna(est):
                cells.append("")
            elif pd.notna(lo) and pd.notna(hi):
                cells.append(f"{f(est)} [{f(lo)}, {f(hi)}]")
            else:
                cells.append(f(est))
        if any(cells):
            rows[_COUNT_LABELS.get(metric, metric_label(metric))] = cells
    view = pd.DataFrame.from_dict(rows, orient="index", columns=card["judge"].astype(str).tolist())
    view.index.name = "metric"
    return view.reset_index()


#: Columns shown in the page for wide tables (the CSV has them all).
_SHOWN: dict[tuple[str, str], list[str]] = {
    ("win_rates", "lc_win_rates"): ["judge", "model", "baseline", "n", "avg_length", "win_rate",
                                    "lc_win_rate", "lc_ci_low", "lc_ci_high", "ln_win_rate",
                                    "lb_win_rate", "converged"],
}


def _table_view(s: Section, name: str, table: pd.DataFrame, images: str) -> dict[str, Any]:
    from markupsafe import Markup

    shown = _card_view(table) if (s.key, name) == ("report_card", "report_card") else table
    if (s.key, name) in _SHOWN:
        shown = shown[[c for c in _SHOWN[(s.key, name)] if c in shown.columns]]
    # pandas escapes every cell and header (escape=True); the template takes the result as is
    inner = _display(shown).to_html(index=False, escape=True, border=0, na_rep="", classes="jk-table")
    return {"name": name.replace("_", " "), "rows": f"{len(table):,}", "cut": len(shown) > MAX_ROWS,
            "csv": table_file(s.key, name) if images == "files" else "",
            "open": s.key in ("data", "report_card") or len(shown) <= 12, "html": Markup(inner)}


# -------------------------------------------------------------------------------------- page
@cache
def _environment():
    import jinja2

    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


def warm_templates() -> None:
    """Import jinja2 and compile the page's templates now (``judgekit audit`` does this while
    its chart worker draws the last chart, so that the page is written at once after)."""
    for name in ("audit.html.j2", "audit_summary.html.j2", "audit.css"):
        _environment().get_template(name)


def _chart_title(chart: object, fallback: str) -> str:
    try:
        from judgekit.viz._export import chart_spec, chart_title

        return chart_title(chart_spec(chart)) or fallback
    except Exception:  # a title is decoration: never fail the report for it
        return fallback


def _figure_view(audit: Audit, s: Section, name: str, images: str) -> dict[str, Any]:
    """An <img> of a chart at its nominal size (the PNG is rendered at twice the pixels)."""
    from judgekit.viz._export import _png_size

    png = audit.png(s.key, name)
    width, height = _png_size(png)
    src = (chart_file(s.key, name) if images == "files"
           else "data:image/png;base64," + base64.b64encode(png).decode("ascii"))
    titles = audit._chart_titles
    if (s.key, name) not in titles:
        titles[(s.key, name)] = _chart_title(s.charts[name], name.replace("_", " "))
    return {"src": src, "width": width // 2, "height": height // 2, "title": titles[(s.key, name)]}


def _summary_context(audit: Audit) -> dict[str, Any]:
    titles = {key: s.title for key, s in audit.sections.items()}
    fixes = audit.to_measure_more()

    def view(level: tuple[str, ...]) -> list[dict[str, str]]:
        return [{"level": f.level, "text": f.text, "section_title": titles.get(f.section, f.section)}
                for f in audit.findings if f.level in level]

    return {"concerns": view(("bad", "warn")), "unsure": view(("open",)), "good": view(("good",)),
            "missing": [{"title": s.title, "reason": s.reason, "fix": fixes.get(s.key, "")}
                        for s in audit.sections.values() if not s.ok],
            "max_findings": MAX_FINDINGS}


def summary_html(audit: Audit) -> str:
    """The summary block of the page alone (no chart is drawn)."""
    return _environment().get_template("audit_summary.html.j2").render(_summary_context(audit))


def audit_page(audit: Audit, *, standalone: bool = True, images: str = "inline") -> str:
    """The audit report as HTML (what :meth:`judgekit.Audit.to_html` returns).

    Parameters
    ----------
    audit : Audit
        From :func:`judgekit.audit`.
    standalone : bool
        A whole page (True) or a fragment for a notebook.
    images : {"inline", "files"}
        Charts as data URIs, or linked as ``charts/<section>-<name>.png``.

    Returns
    -------
    str

    Examples
    --------
    >>> import judgekit as jk
    >>> from judgekit.viz.audit_report import audit_page
    >>> pairs, judgments, _ = jk.sim.simulate_judgments(50, seed=0)
    >>> audit_page(jk.audit(judgments, pairs, n_boot=0)).startswith("<!DOCTYPE html>")
    True
    """
    if images not in ("inline", "files"):
        raise ValueError(f"images must be 'inline' or 'files', got {images!r}")
    from judgekit import __version__

    fixes = audit.to_measure_more()
    sections = [{"key": s.key, "title": s.title, "status": s.status, "reason": s.reason,
                 "fix": fixes.get(s.key, "") if s.status == "unsupported" else "",
                 "notes": s.notes,
                 "figures": [_figure_view(audit, s, name, images) for name in chart_names(s)],
                 "tables": [_table_view(s, name, t, images) for name, t in s.tables.items()]}
                for s in audit.sections.values()]
    context = {**_summary_context(audit), "standalone": standalone, "source": audit.source,
               "summary": audit.summary(), "version": __version__, "max_rows": MAX_ROWS,
               "when": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               "sections": sections}
    return _environment().get_template("audit.html.j2").render(context)


# ------------------------------------------------------------------------------------ folder
def report_folder(directory: str | Path):
    """The folder a report is saved into, with its ``charts`` and ``tables`` folders made; a
    link in their place is refused here, before anything is written (the command line checks
    this before it computes the audit)."""
    from judgekit._safewrite import OutputFolder

    out = OutputFolder(directory)
    try:
        out.makedirs("charts")
        out.makedirs("tables")
    except BaseException:
        out.close()
        raise
    return out


def save_audit(audit: Audit, directory: str | Path, *, progress: bool = False) -> Path:
    """Write the report folder of an audit: ``index.html``, ``charts/*.png``, ``tables/*.csv``.

    What :meth:`judgekit.Audit.save` does (see there for the safety of the files written).

    Parameters
    ----------
    audit : Audit
        From :func:`judgekit.audit`.
    directory : str or Path
        Created when needed; files of an earlier report there are replaced.
    progress : bool
        Show a progress bar while the charts render.

    Returns
    -------
    Path
        The page, ``<directory>/index.html``.

    Examples
    --------
    >>> import tempfile, judgekit as jk
    >>> from judgekit.viz.audit_report import save_audit
    >>> pairs, judgments, _ = jk.sim.simulate_judgments(100, seed=0)
    >>> save_audit(jk.audit(judgments, pairs, n_boot=0), tempfile.mkdtemp()).name
    'index.html'
    """
    from judgekit._spreadsheet import csv_text

    with report_folder(directory) as out:
        out.remove("charts", "*.png")
        out.remove("tables", "*.csv")
        charts = [(s.key, name) for s in audit.sections.values() for name in chart_names(s)]
        if progress:
            from tqdm.auto import tqdm

            charts = tqdm(charts, desc="audit: charts", unit="chart", leave=False)
        for key, name in charts:
            out.write(chart_file(key, name), audit.png(key, name))
        for s in audit.sections.values():
            for name, table in s.tables.items():
                out.write(table_file(s.key, name), csv_text(table))
        page = out.write("index.html", audit_page(audit, standalone=True, images="files"))
    return page
