"""One pair, as the judges saw it: both responses, the human label, every order's verdict and rationale."""

from __future__ import annotations

import html
from collections.abc import Sequence

import pandas as pd

from judgekit.schema import position_of, validate_judgments, validate_pairs

__all__ = ["pair_card"]

_STYLE = """
<style>
.jk-pair{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:13px;color:#222;max-width:1100px}
.jk-pair h4{margin:.3em 0 .4em;font-size:14px}
.jk-pair .jk-prompt{background:#f6f6f6;border-radius:6px;padding:.5em .7em;white-space:pre-wrap;margin-bottom:.6em}
.jk-pair .jk-cols{display:grid;grid-template-columns:1fr 1fr;gap:.8em}
.jk-pair .jk-resp{border:1px solid #ddd;border-radius:6px;padding:.5em .7em;white-space:pre-wrap;max-height:22em;overflow:auto}
.jk-pair .jk-resp.jk-gold{border:2px solid #009E73}
.jk-pair table{border-collapse:collapse;margin-top:.7em;width:100%}
.jk-pair th,.jk-pair td{border-bottom:1px solid #e5e5e5;padding:.3em .5em;text-align:left;vertical-align:top}
.jk-pair th{background:#fafafa}
.jk-pair .ok{color:#1a7f37;font-weight:600}.jk-pair .bad{color:#b42318;font-weight:600}
.jk-pair .jk-raw{white-space:pre-wrap;max-height:9em;overflow:auto;font-size:12px;color:#333}
.jk-pair .jk-meta{color:#666;font-size:12px}
</style>
"""


def _text(value: object, limit: int) -> str:
    """Escaped text, cut at ``limit`` characters with a note saying how much was cut."""
    if value is None or (isinstance(value, float) and value != value):
        return '<span class="jk-meta">(none)</span>'
    s = str(value)
    if len(s) > limit:
        return f'{html.escape(s[:limit])}<span class="jk-meta"> … ({len(s) - limit:,} more characters)</span>'
    return html.escape(s)


def pair_card_html(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    pair_id: str,
    judges: Sequence[str] | None = None,
    *,
    max_chars: int = 4000,
) -> str:
    """The HTML of :func:`pair_card` (validated inputs; all text escaped)."""
    pairs = validate_pairs(pairs)
    judgments = validate_judgments(judgments)
    found = pairs[pairs["pair_id"] == str(pair_id)]
    if found.empty:
        raise ValueError(f"pair_card: no pair with pair_id {pair_id!r} in pairs")
    pair = found.iloc[0]
    rows = judgments[judgments["pair_id"] == str(pair_id)]
    if judges is not None:
        unknown = sorted(set(judges) - set(judgments["judge"]))
        if unknown:
            raise ValueError(f"pair_card: unknown judge(s) {unknown}; judgments have "
                             f"{sorted(judgments['judge'].unique())[:10]}")
        rows = rows[rows["judge"].isin(list(judges))]
    rows = rows.assign(position=position_of(rows["verdict"], rows["order"]))
    rows = rows.sort_values(["judge", "order", "id_swap", "repeat"], kind="stable")
    label = None if pd.isna(pair["label"]) else pair["label"]
    head = [f'<div class="jk-meta">pair <code>{html.escape(str(pair_id))}</code>']
    for col in ("dataset", "task", "model_a", "model_b"):
        if col in pairs.columns and pd.notna(pair.get(col)):
            head.append(f" · {col}: {html.escape(str(pair[col]))}")
    head.append(f" · human label: <b>{html.escape(str(label)) if label else 'none'}</b></div>")
    gold_a = ' jk-gold' if label == "a" else ""
    gold_b = ' jk-gold' if label == "b" else ""
    parts = [
        _STYLE, '<div class="jk-pair">', "".join(head),
        f'<h4>Prompt</h4><div class="jk-prompt">{_text(pair["prompt"], max_chars)}</div>',
        '<div class="jk-cols">',
        f'<div><h4>Response a ({pair["len_a"]:,} chars){" — preferred by humans" if label == "a" else ""}'
        f'</h4><div class="jk-resp{gold_a}">{_text(pair["response_a"], max_chars)}</div></div>',
        f'<div><h4>Response b ({pair["len_b"]:,} chars){" — preferred by humans" if label == "b" else ""}'
        f'</h4><div class="jk-resp{gold_b}">{_text(pair["response_b"], max_chars)}</div></div>',
        "</div>",
    ]
    if rows.empty:
        parts.append('<p class="jk-meta">No judgments of this pair by the selected judges.</p>')
    else:
        has_raw = "raw" in rows.columns
        parts.append("<table><tr><th>judge</th><th>shown first</th><th>repeat</th><th>verdict</th>"
                     "<th>picked</th><th>P(a)</th>" + ("<th>rationale</th>" if has_raw else "") + "</tr>")
        for _, r in rows.iterrows():
            verdict = r["verdict"]
            if verdict is None:
                why = r.get("error") if "error" in rows.columns else None
                shown = f'<span class="bad">invalid</span> <span class="jk-meta">{_text(why, 200)}</span>'
            elif label in ("a", "b") and verdict in ("a", "b"):
                cls = "ok" if verdict == label else "bad"
                shown = f'<span class="{cls}">{verdict}</span>'
            else:
                shown = html.escape(str(verdict))
            first = "a" if r["order"] == "ab" else "b"
            swap = " (IDs swapped)" if r["id_swap"] else ""
            p_a = "" if pd.isna(r["p_a"]) else f"{r['p_a']:.2f}"
            raw = f'<td><div class="jk-raw">{_text(r["raw"], 1500)}</div></td>' if has_raw else ""
            parts.append(
                f"<tr><td>{html.escape(str(r['judge']))}</td><td>{first}{swap}</td><td>{r['repeat']}</td>"
                f"<td>{shown}</td><td>{html.escape(str(r['position'] or '—'))}</td><td>{p_a}</td>{raw}</tr>")
        parts.append("</table>")
    parts.append("</div>")
    return "".join(parts)


def pair_card(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    pair_id: str,
    judges: Sequence[str] | None = None,
    *,
    max_chars: int = 4000,
):
    """Show one pair with both responses, the human label and every judge's verdicts per order.

    The table has one row per judgment (judge, order shown, ID swap, repeat) with the verdict in
    response terms (green when it matches the human label), the position it picked, ``p_a`` and
    the judge's rationale (``raw``). All text is HTML-escaped; long texts are cut at ``max_chars``.

    Parameters
    ----------
    judgments, pairs : DataFrame
        The two tidy tables (:mod:`judgekit.schema`).
    pair_id : str
        The pair to show.
    judges : sequence of str, optional
        Only these judges (default: all that judged the pair).
    max_chars : int
        Longest prompt or response shown.

    Returns
    -------
    IPython.display.HTML
        Displays in any notebook front end; its ``.data`` is the HTML string.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, _ = jk.sim.simulate_judgments(3, position_bias=1.0, seed=0)
    >>> card = jk.viz.pair_card(judgments, pairs, pairs["pair_id"][0])
    >>> card.data.count("<tr>")  # header + one row per order
    3
    """
    from IPython.display import HTML

    return HTML(pair_card_html(judgments, pairs, pair_id, judges, max_chars=max_chars))
