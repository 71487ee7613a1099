"""The audit report as HTML: a summary first, then one block per section. Every string that comes
from the data is escaped; the page carries no script and forbids scripts by its content policy."""

from __future__ import annotations

import base64
import html
import re
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from judgekit.auditing.core import Audit, Section

__all__ = ["chart_file", "render", "table_file"]

#: Rows of a table shown in the page (the CSV holds them all).
MAX_ROWS = 30
#: Findings listed per column of the summary (many judges make many findings).
MAX_FINDINGS = 15

_CSS = """
.jk-audit { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d1d1f;
  line-height: 1.45; max-width: 1100px; }
.jk-audit h1 { font-size: 1.7em; margin: 0.2em 0; }
.jk-audit h2 { font-size: 1.3em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 1.6em; }
.jk-audit h3 { font-size: 1.05em; margin: 0.8em 0 0.3em; }
.jk-audit .jk-meta { color: #555; margin: 0 0 1em; }
.jk-audit .jk-cols { display: flex; gap: 2em; flex-wrap: wrap; }
.jk-audit .jk-cols > div { flex: 1 1 420px; }
.jk-audit ul { padding-left: 1.2em; margin: 0.3em 0; }
.jk-audit li { margin: 0.25em 0; }
.jk-audit li.good::marker { content: "\\2713  "; color: #009E73; }
.jk-audit li.warn::marker { content: "!  "; color: #E69F00; font-weight: bold; }
.jk-audit li.bad::marker { content: "\\2717  "; color: #D55E00; font-weight: bold; }
.jk-audit li.open::marker { content: "?  "; color: #0072B2; font-weight: bold; }
.jk-audit li.off::marker { content: "\\2013  "; color: #888; }
.jk-audit .jk-tag { font-size: 0.8em; color: #555; }
.jk-audit .jk-unsupported { background: #f4f4f4; border-left: 4px solid #999; padding: 0.5em 0.8em; }
.jk-audit .jk-failed { background: #fdf0ea; border-left: 4px solid #D55E00; padding: 0.5em 0.8em; }
.jk-audit .jk-note { color: #555; font-size: 0.92em; }
.jk-audit figure { display: inline-block; margin: 0.5em 1.5em 0.5em 0; vertical-align: top; }
.jk-audit figure img { max-width: 100%; height: auto; }
.jk-audit figcaption { font-size: 0.85em; color: #555; }
.jk-audit table { border-collapse: collapse; font-size: 0.85em; margin: 0.4em 0 1em; }
.jk-audit th, .jk-audit td { border: 1px solid #ddd; padding: 0.2em 0.5em; text-align: right; }
.jk-audit th { background: #f6f6f6; }
.jk-audit td:first-child, .jk-audit th:first-child { text-align: left; }
.jk-audit .jk-scroll { max-width: 100%; overflow-x: auto; }
.jk-audit details > summary { cursor: pointer; color: #0072B2; margin: 0.3em 0; }
.jk-audit nav a { margin-right: 1em; }
"""


def chart_file(section: str, name: str) -> str:
    return f"charts/{_slug(section)}-{_slug(name)}.png"


def table_file(section: str, name: str) -> str:
    return f"tables/{_slug(section)}-{_slug(name)}.csv"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "x"


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


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


def _table_html(table: pd.DataFrame) -> str:
    inner = _display(table).to_html(index=False, escape=True, border=0, na_rep="",
                                    classes="jk-table")
    return f'<div class="jk-scroll">{inner}</div>'



def _image(audit: Audit, section: str, name: str, images: str) -> str:
    """An <img> of a chart at its nominal size (the PNG is rendered at twice the pixels)."""
    from judgekit.viz._export import _png_size

    png = audit.png(section, name)
    width, height = _png_size(png)
    src = (_e(chart_file(section, name)) if images == "files"
           else "data:image/png;base64," + base64.b64encode(png).decode("ascii"))
    return f'src="{src}" width="{width // 2}" height="{height // 2}"'


def _chart_title(chart: object, fallback: str) -> str:
    try:
        from judgekit.viz._export import chart_spec, chart_title

        return chart_title(chart_spec(chart)) or fallback
    except Exception:  # a title is decoration: never fail the report for it
        return fallback


def _section_html(audit: Audit, s: Section, images: str) -> str:
    out = [f'<section id="jk-{_e(s.key)}"><h2>{_e(s.title)}</h2>']
    if s.status == "unsupported":
        out.append(f'<p class="jk-unsupported"><b>Not measured:</b> {_e(s.reason)}.</p>')
        fix = audit.to_measure_more().get(s.key)
        if fix:
            out.append(f'<p class="jk-unsupported"><b>To measure it, add</b> {_e(fix)}.</p>')
    elif s.status == "failed":
        out.append(f'<p class="jk-failed"><b>Could not be computed:</b> {_e(s.reason)}</p>')
    for note in s.notes:
        out.append(f'<p class="jk-note">{_e(note)}</p>')
    for name, chart in s.charts.items():
        title = _chart_title(chart, name.replace("_", " "))
        out.append(f'<figure><img {_image(audit, s.key, name, images)} alt="{_e(title)}"></figure>')
    for name, table in s.tables.items():
        shown = _card_view(table) if (s.key, name) == ("report_card", "report_card") else table
        if (s.key, name) in _SHOWN:
            shown = shown[[c for c in _SHOWN[(s.key, name)] if c in shown.columns]]
        more = (f", first {MAX_ROWS} shown" if len(shown) > MAX_ROWS else "")
        link = (f' &middot; <a href="{_e(table_file(s.key, name))}">CSV</a>' if images == "files" else "")
        opened = " open" if s.key in ("data", "report_card") or len(shown) <= 12 else ""
        out.append(f"<details{opened}><summary>{_e(name.replace('_', ' '))} ({len(table):,} rows"
                   f"{more}){link}</summary>{_table_html(shown)}</details>")
    out.append("</section>")
    return "\n".join(out)


def _summary_html(audit: Audit) -> str:
    section_title = {key: s.title for key, s in audit.sections.items()}
    good = [f for f in audit.findings if f.level == "good"]
    concerns = [f for f in audit.findings if f.level in ("bad", "warn")]
    unsure = [f for f in audit.findings if f.level == "open"]

    def items(findings) -> str:
        if not findings:
            return '<li class="off">nothing to report</li>'
        shown = "\n".join(f'<li class="{_e(f.level)}">{_e(f.text)} '
                           f'<span class="jk-tag">({_e(section_title.get(f.section, f.section))})</span></li>'
                           for f in findings[:MAX_FINDINGS])
        more = len(findings) - MAX_FINDINGS
        return shown + (f'\n<li class="off">{more} more: see the sections below</li>' if more > 0 else "")

    missing = [s for s in audit.sections.values() if not s.ok]
    fixes = audit.to_measure_more()
    off = "\n".join(f'<li class="off"><b>{_e(s.title)}</b>: {_e(s.reason)}'
                    + (f". <b>To measure it, add</b> {_e(fixes[s.key])}." if s.key in fixes else "")
                    + "</li>" for s in missing)
    return (
        '<section id="jk-summary"><h2>Summary</h2><div class="jk-cols">'
        f"<div><h3>Watch out</h3><ul>{items(concerns)}</ul></div>"
        + (f"<div><h3>Inconclusive or not measurable</h3><ul>{items(unsure)}</ul></div>"
           if unsure else "")
        +
        f"<div><h3>Trustworthy</h3><ul>{items(good)}</ul></div></div>"
        + (f"<h3>Not measured</h3><ul>{off}</ul>" if missing else "")
        + "</section>"
    )


def render(audit: Audit, *, standalone: bool, images: str) -> str:
    """The report; ``images`` "inline" (data URIs) or "files" (``charts/*.png``)."""
    if images not in ("inline", "files"):
        raise ValueError(f"images must be 'inline' or 'files', got {images!r}")
    from judgekit import __version__

    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    nav = " ".join(f'<a href="#jk-{_e(s.key)}">{_e(s.title)}</a>' for s in audit.sections.values())
    body = "\n".join([
        '<div class="jk-audit">',
        "<header><h1>Judge audit</h1>",
        f'<p class="jk-meta">{_e(audit.source)} &middot; {_e(audit.summary())} &middot; '
        f"judgekit {_e(__version__)} &middot; {_e(when)}</p></header>",
        _summary_html(audit),
        f"<nav>{nav}</nav>" if standalone else "",
        *(_section_html(audit, s, images) for s in audit.sections.values()),
        "</div>",
    ])
    if not standalone:
        return f"<style>{_CSS}</style>\n{body}"
    title = _e(f"Judge audit: {audit.source}")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'none'; object-src 'none'\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{title}</title><style>body {{ margin: 1.5em auto; padding: 0 1em; max-width: 1100px; }}"
        f"{_CSS}</style></head>\n<body>\n{body}\n</body></html>\n"
    )

