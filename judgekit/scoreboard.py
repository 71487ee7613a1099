"""The reproduction scoreboard: every published number the notebook series recomputes, side by side.

A notebook computes a value (a win rate from the annotations, a correlation, a count) and hands it
to :func:`compare` with the id of the published number it reproduces; the published value comes
from :mod:`judgekit.published`, never typed again. :func:`compare` returns a small table shown in
the notebook (paper, judgekit, difference, whether they agree to the printed precision, and the
reason where they do not), and tags the notebook output with the records. ``judgekit reproduce``
reads those tags from the executed notebooks (:func:`collect`), adds the notebook section each
came from, and writes the report's first page and ``scoreboard.csv`` (:func:`build`).

Numbers a notebook quotes but cannot recompute (the paper's judges or data are not public) go
through :func:`quote`, with the reason; the scoreboard lists them apart and does not count them.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.published import PAPERS, published

__all__ = ["Comparison", "build", "collect", "compare", "quote", "render_html"]

#: Output-metadata key under which a notebook output carries its scoreboard records.
METADATA_KEY = "judgekit_scoreboard"

#: Columns of a comparison and of the scoreboard (the scoreboard adds notebook, section, link).
COLUMNS = ["paper", "item", "source", "note", "published", "judgekit", "difference", "tolerance",
           "agrees", "status", "how", "reason"]


class Comparison:
    """Published numbers beside judgekit's: what :func:`compare` and :func:`quote` return.

    Attributes
    ----------
    table : DataFrame
        One row per number, columns :data:`COLUMNS`.
    skipped : list of str
        Items given that the paper's published table does not hold (``missing="skip"``).

    Displayed in a notebook it shows the table; its output carries the records for
    ``judgekit reproduce``.
    """

    def __init__(self, table: pd.DataFrame, skipped: list[str] | None = None) -> None:
        self.table = table
        self.skipped = list(skipped or [])

    def records(self) -> list[dict[str, Any]]:
        return [{k: _plain(v) for k, v in row.items()} for row in self.table.to_dict("records")]

    def _shown(self) -> pd.DataFrame:
        t = self.table
        out = pd.DataFrame({
            "paper": t["paper"], "item": t["item"], "source": t["source"],
            "published": t["published"], "judgekit": t["judgekit"],
            "difference": t["difference"], "agrees": t["agrees"].map(
                {True: "yes", False: "no"}).where(t["status"] == "recomputed", "not recomputed"),
            "reason": t["reason"],
        })
        return out

    def __repr__(self) -> str:
        text = self._shown().to_string(index=False, max_colwidth=60)
        if self.skipped:
            text += f"\n({len(self.skipped)} value(s) have no published counterpart: {self.skipped[:5]})"
        return text

    def _repr_mimebundle_(self, **_kwargs: Any) -> tuple[dict, dict]:
        shown = self._shown()
        body = shown.to_html(index=False, na_rep="", float_format=lambda v: f"{v:.4g}", escape=True)
        n = int((self.table["status"] == "recomputed").sum())
        agree = int(self.table["agrees"].eq(True).sum())
        caption = (f"<p style='font-size:12px;color:#555'>{n} published number(s) recomputed, "
                   f"{agree} agree to the printed precision"
                   + (f"; {len(self.table) - n} quoted, not recomputed" if len(self.table) > n else "")
                   + (f"; {len(self.skipped)} value(s) without a published counterpart"
                      if self.skipped else "") + "</p>")
        data = {"text/html": caption + body, "text/plain": repr(self)}
        return data, {METADATA_KEY: self.records()}


def _plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        value = value.item()
        if isinstance(value, float) and math.isnan(value):
            return None
    return value


def _lookup(paper: str, items: Iterable[str], prefix: str, missing: str) -> tuple[pd.DataFrame, list[str]]:
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; known: {sorted(PAPERS)}")
    if missing not in ("raise", "skip"):
        raise ValueError(f"missing must be 'raise' or 'skip', got {missing!r}")
    table = published(paper).set_index("item")
    wanted = [prefix + str(i) for i in items]
    unknown = [i for i in wanted if i not in table.index]
    if unknown and missing == "raise":
        raise ValueError(
            f"judgekit/published/{paper}.csv has no item(s) {unknown[:5]}"
            + (f" (and {len(unknown) - 5} more)" if len(unknown) > 5 else "")
            + f"; it has {len(table)} items, e.g. {list(table.index[:3])}")
    return table, unknown


def compare(
    paper: str,
    values: Mapping[str, float] | pd.Series,
    *,
    how: str,
    reason: str | Mapping[str, str] = "",
    prefix: str = "",
    missing: str = "raise",
) -> Comparison:
    """Set judgekit's values beside the published ones and record them for the scoreboard.

    Parameters
    ----------
    paper : str
        A key of :data:`judgekit.published.PAPERS` (``"dubois2024"``, ...).
    values : mapping or Series
        Item id (relative to ``prefix``) -> the value judgekit computed, in the unit the paper
        printed (percent where the paper printed percent).
    how : str
        One line on how judgekit computed the values (e.g. ``"jk.lc_win_rates on the
        annotations"``).
    reason : str or mapping
        Why judgekit's value differs from the paper's, for the rows that do not agree to the
        printed precision: one text for all, or item -> text. Rows that differ without a reason
        are shown as unexplained.
    prefix : str
        Prepended to every item id.
    missing : {"raise", "skip"}
        What to do with an item the published table does not hold: raise (default), or leave
        it out and list it in ``Comparison.skipped`` (for a table another branch fills in).

    Returns
    -------
    Comparison

    Examples
    --------
    >>> import judgekit as jk
    >>> c = jk.scoreboard.compare("dubois2024", {"gpt4_gamed/win_rate": 3.738},
    ...                           prefix="sec4.3/", how="jk.win_rates on the annotations")
    >>> c.table[["published", "judgekit", "agrees"]].to_dict("records")
    [{'published': 3.7, 'judgekit': 3.738, 'agrees': True}]
    """
    values = dict(values.items()) if isinstance(values, pd.Series) else dict(values)
    table, unknown = _lookup(paper, values, prefix, missing)
    rows = []
    for key, value in values.items():
        item = prefix + str(key)
        if item in unknown:
            continue
        ref = table.loc[item]
        value = float(value) if value is not None else math.nan
        published_value = float(ref["value"])
        decimals = int(ref["decimals"])
        tolerance = 0.5 * 10.0 ** (-decimals)
        difference = value - published_value
        agrees = bool(abs(difference) <= tolerance + 1e-9) if not math.isnan(value) else False
        why = reason.get(key, reason.get(item, "")) if isinstance(reason, Mapping) else reason
        rows.append({
            "paper": paper, "item": item, "source": ref["source"], "note": ref["note"],
            "published": published_value, "judgekit": value, "difference": difference,
            "tolerance": tolerance, "agrees": agrees, "status": "recomputed", "how": how,
            "reason": "" if agrees else (why or "unexplained"),
        })
    return Comparison(pd.DataFrame(rows, columns=COLUMNS), [u[len(prefix):] for u in unknown])


def quote(paper: str, items: Iterable[str], *, reason: str, prefix: str = "") -> Comparison:
    """Published numbers a notebook cites but judgekit cannot recompute, with the reason.

    Parameters
    ----------
    paper : str
        A key of :data:`judgekit.published.PAPERS`.
    items : iterable of str
        Item ids (relative to ``prefix``).
    reason : str
        Why they cannot be recomputed (e.g. the paper's judge outputs are not public).
    prefix : str
        Prepended to every item id.

    Returns
    -------
    Comparison
        Rows with ``status == "not recomputed"``; the published values are in ``published``.

    Examples
    --------
    >>> import judgekit as jk
    >>> q = jk.scoreboard.quote("wei2024", ["table10/rank1/acc_both"],
    ...                         reason="the paper's judge outputs are not public")
    >>> q.table[["published", "status"]].to_dict("records")
    [{'published': 0.667, 'status': 'not recomputed'}]
    """
    items = list(items)
    table, _ = _lookup(paper, items, prefix, "raise")
    rows = []
    for key in items:
        item = prefix + str(key)
        ref = table.loc[item]
        rows.append({
            "paper": paper, "item": item, "source": ref["source"], "note": ref["note"],
            "published": float(ref["value"]), "judgekit": math.nan, "difference": math.nan,
            "tolerance": 0.5 * 10.0 ** (-int(ref["decimals"])), "agrees": None,
            "status": "not recomputed", "how": "", "reason": reason,
        })
    return Comparison(pd.DataFrame(rows, columns=COLUMNS))


# ------------------------------------------------------------------------ the report's first page
def _heading_anchor(text: str) -> str:
    """The id nbconvert gives a markdown heading (its own renderer, so links always match)."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    rendered = markdown2html_mistune("## " + text)
    found = re.search(r'id="([^"]*)"', rendered)
    return html.unescape(found.group(1)) if found else ""


def _read_notebook(path: Path):
    """An executed notebook, or a ValueError naming the file (it may be damaged: cut off by a full
    disk, or not a notebook at all)."""
    import nbformat

    from judgekit._jsonfile import parse_json

    data = path.read_bytes()
    try:
        return nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception as err:  # nbformat raises its own classes for each way a file is wrong
        parse_json(data, path)  # the clearer message when the JSON itself is the problem
        raise ValueError(f"{path}: not a notebook ({type(err).__name__}: {err})") from None


_TEXT_FIELDS = ("paper", "item", "source", "note", "status", "how", "reason")
_NUMBER_FIELDS = ("published", "judgekit", "difference", "tolerance")


def _record(record: object, path: Path) -> dict[str, Any]:
    """One scoreboard record of a notebook, checked: texts are texts, numbers numbers."""
    if not isinstance(record, Mapping):
        raise ValueError(f"{path}: a scoreboard record is not an object ({str(record)[:80]!r})")
    row: dict[str, Any] = {}
    for key in COLUMNS:
        value = record.get(key)
        if key in _TEXT_FIELDS:
            ok, kept = value is None or isinstance(value, str), value or ""
        elif key in _NUMBER_FIELDS:
            ok = value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))
            kept = math.nan if value is None or not ok else float(value)
        else:  # agrees
            ok, kept = value is None or isinstance(value, bool), value
        if not ok:
            raise ValueError(f"{path}: scoreboard record field {key!r} is {str(value)[:80]!r}")
        row[key] = kept
    return row


def collect(notebook: str | Path, link: str | None = None) -> pd.DataFrame:
    """The scoreboard records of one executed notebook, with the section each came from.

    Parameters
    ----------
    notebook : str or Path
        An executed ``.ipynb`` (outputs kept).
    link : str, optional
        The rendered page the section links point into (default: the notebook's ``.html`` name).

    Returns
    -------
    DataFrame
        :data:`COLUMNS` plus ``notebook``, ``section`` and ``link`` (page#anchor).

    Raises
    ------
    ValueError
        Naming the file, when it is not a readable notebook or a record in it is malformed.
    """
    path = Path(notebook)
    nb = _read_notebook(path)
    page = link if link is not None else path.with_suffix(".html").name
    section, anchor = "", ""
    rows: list[dict[str, Any]] = []
    try:
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                for line in cell.source.splitlines():
                    match = re.match(r"^(#{1,6})\s+(.*\S)\s*$", line)
                    if match:
                        section = match.group(2)
                        anchor = _heading_anchor(section)
                continue
            if cell.cell_type != "code":
                continue
            for output in cell.get("outputs", []):
                for record in output.get("metadata", {}).get(METADATA_KEY, []) or []:
                    rows.append({**_record(record, path), "notebook": path.stem, "section": section,
                                 "link": f"{page}#{anchor}" if anchor else page})
    except (AttributeError, TypeError) as err:  # valid JSON, but not laid out as a notebook
        raise ValueError(f"{path}: not laid out as a notebook ({type(err).__name__}: {err})") from None
    return pd.DataFrame(rows, columns=[*COLUMNS, "notebook", "section", "link"])


def build(notebooks: Iterable[str | Path], links: Mapping[str, str] | None = None, *,
          unreadable: dict[str, str] | None = None) -> pd.DataFrame:
    """The scoreboard of a set of executed notebooks: one row per published number, by paper.

    Parameters
    ----------
    notebooks : iterable of str or Path
        Executed notebooks.
    links : mapping, optional
        Notebook stem -> the page its section links point into.
    unreadable : dict, optional
        When given, a notebook that cannot be read is left out and recorded here (its path ->
        why) instead of raising.

    Returns
    -------
    DataFrame
        Sorted by paper (in :data:`judgekit.published.PAPERS` order), status (recomputed first)
        and the order the notebooks produced them. When one item was recorded twice, the last
        recording is kept.
    """
    links = dict(links or {})
    frames = []
    for p in notebooks:
        try:
            frames.append(collect(p, links.get(Path(p).stem)))
        except (OSError, ValueError) as err:
            if unreadable is None:
                raise
            unreadable[str(p)] = str(err)
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=[*COLUMNS, "notebook", "section", "link"])
    board = pd.concat(frames, ignore_index=True)
    board = board.drop_duplicates(["paper", "item"], keep="last")
    order = {p: i for i, p in enumerate(PAPERS)}
    board = board.assign(_p=board["paper"].map(order), _s=(board["status"] != "recomputed"))
    return board.sort_values(["_p", "_s"], kind="stable").drop(columns=["_p", "_s"]).reset_index(drop=True)


def _fmt(value: Any, decimals: int | None = None) -> str:
    """A value as the paper printed it (``decimals`` given), or judgekit's with 4 significant digits."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    value = float(value)
    if decimals is not None:
        return f"{value:.{decimals}f}"
    if value == int(value) and abs(value) >= 1:
        return f"{value:.0f}"
    return f"{value:.4g}"


def _decimals(tolerance: Any) -> int | None:
    try:
        return max(0, round(-math.log10(2 * float(tolerance))))
    except (TypeError, ValueError):
        return None


def render_html(board: pd.DataFrame) -> str:
    """The scoreboard as an HTML table grouped by paper (every text escaped).

    Parameters
    ----------
    board : DataFrame
        As :func:`build` returns it.

    Returns
    -------
    str
    """
    if board.empty:
        return "<p>No notebook recorded a published number.</p>"
    recomputed = board[board["status"] == "recomputed"]
    agree = int(recomputed["agrees"].eq(True).sum())
    parts = [
        f"<p class='meta'>{len(recomputed)} published numbers recomputed from "
        f"{recomputed['paper'].nunique()} papers; {agree} agree with the paper to its printed precision "
        f"(half a unit in the last printed decimal), {len(recomputed) - agree} differ, each with the "
        f"reason. {len(board) - len(recomputed)} further numbers the notebooks cite cannot be "
        "recomputed from public data and are listed below each paper. Also as "
        "<a href='scoreboard.csv'>scoreboard.csv</a>.</p>",
        "<table class='scoreboard'><tr><th>number</th><th>paper</th><th>judgekit</th>"
        "<th>difference</th><th></th><th>why they differ / how judgekit computed it</th>"
        "<th>notebook section</th></tr>",
    ]
    for paper, rows in board.groupby("paper", sort=False):
        info = PAPERS.get(paper, {})
        n = int((rows["status"] == "recomputed").sum())
        parts.append(
            f"<tr class='paper'><th colspan='7'>{html.escape(info.get('citation', paper))}: "
            f"{html.escape(info.get('title', ''))} (arXiv {html.escape(info.get('arxiv', ''))}) · "
            f"{n} recomputed</th></tr>")
        for r in rows.itertuples(index=False):
            status = r.status == "recomputed"
            mark = ("<span class='ok'>agrees</span>" if r.agrees else "<span class='differs'>differs</span>"
                    ) if status else "<span class='na'>not recomputed</span>"
            why = r.reason if (not status or not r.agrees) else ""
            detail = html.escape(why) + (f"<div class='how'>{html.escape(r.how)}</div>" if r.how else "")
            label = f"{html.escape(r.source)} · <code>{html.escape(r.item)}</code>"
            if r.note:
                label += f"<div class='how'>{html.escape(r.note)}</div>"
            diff = "" if not status else html.escape(f"{float(r.difference):+.3g}")
            parts.append(
                f"<tr class='{'row' if status else 'row quoted'}'><td>{label}</td>"
                f"<td>{html.escape(_fmt(r.published, _decimals(r.tolerance)))}</td>"
                f"<td>{html.escape(_fmt(r.judgekit))}</td>"
                f"<td>{diff}</td><td>{mark}</td><td>{detail}</td>"
                f"<td><a href='{html.escape(r.link, quote=True)}'>{html.escape(r.notebook)}</a>"
                f"<div class='how'>{html.escape(r.section)}</div></td></tr>")
    parts.append("</table>")
    return "".join(parts)


def save(board: pd.DataFrame, path: str | Path) -> Path:
    """Write the scoreboard as CSV (the columns of :func:`build`), safe to open in a spreadsheet
    (a text cell that starts like a formula gets a leading apostrophe)."""
    from judgekit._spreadsheet import write_csv

    return write_csv(board, path)


def to_json(board: pd.DataFrame) -> str:
    return json.dumps([{k: _plain(v) for k, v in r.items()} for r in board.to_dict("records")])
