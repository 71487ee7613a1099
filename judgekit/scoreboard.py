"""The reproduction scoreboard: every published number the notebook series recomputes, side by side.

A notebook computes a value (a win rate from the annotations, a correlation, a count) and hands it
to :func:`compare` with the id of the published number it reproduces; the published value comes
from :mod:`judgekit.published`, never typed again (or, for a released table's cells and a
simulation's truth, from the data themselves: ``reference=``). :func:`compare` returns a small
table shown in the notebook (paper, judgekit, difference, whether they agree to the printed
precision, and the reason where they do not), and tags the notebook output with the records.
``judgekit reproduce`` reads those tags from the executed notebooks (:func:`collect`), adds the
notebook section each came from, and writes the report's first page and ``scoreboard.csv``
(:func:`build`).

Every row says what kind of comparison it is (:data:`KINDS`), decided where the comparison is
made: recomputed from released data, holding by construction (the value agrees whatever the
data, e.g. the baseline's win rate of 50), not reproducible from public data (with why), or
checked against a simulation whose truth is known. Only the recomputed rows count as agreeing
or differing with a paper (:func:`counts`). Numbers a notebook quotes but cannot recompute (the
paper's judges or data are not public) go through :func:`quote`, with the reason.
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

__all__ = ["KINDS", "Comparison", "build", "collect", "compare", "counts", "quote", "render_html"]

#: Output-metadata key under which a notebook output carries its scoreboard records.
METADATA_KEY = "judgekit_scoreboard"

#: What a row's comparison is, in the order the scoreboard lists them. Only "recomputed" rows
#: count as agreeing (or not) with a paper.
KINDS: dict[str, str] = {
    "recomputed": "recomputed from released data",
    "simulation": "checked against a simulation whose truth is known (not a published number)",
    "by construction": "holds by construction: it agrees whatever the data, so it is not counted",
    "not reproducible": "cannot be reproduced from public data (the reason says why)",
}

#: Columns of a comparison and of the scoreboard (the scoreboard adds notebook, section, link).
COLUMNS = ["paper", "item", "source", "note", "published", "judgekit", "difference", "tolerance",
           "agrees", "kind", "how", "reason"]


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
        compared = t["kind"].isin(["recomputed", "simulation"])
        out = pd.DataFrame({
            "paper": t["paper"], "item": t["item"], "source": t["source"],
            "published": t["published"], "judgekit": t["judgekit"],
            "difference": t["difference"], "kind": t["kind"],
            "agrees": t["agrees"].map({True: "yes", False: "no"}).where(compared, "not counted"),
            "reason": t["reason"],
        })
        return out

    def _brief(self) -> tuple[pd.DataFrame, int]:
        """The rows to show: all of a short table; of a long one the first ten and every row
        that does not simply agree, and how many agreeing rows were left out."""
        shown = self._shown()
        if len(shown) <= 30:
            return shown, 0
        keep = (shown.index < 10) | (shown["agrees"] != "yes")
        return shown[keep], int((~keep).sum())

    def __repr__(self) -> str:
        shown, hidden = self._brief()
        text = shown.to_string(index=False, max_colwidth=60)
        if hidden:
            text += f"\n(and {hidden} more rows that agree; all are recorded for the scoreboard)"
        if self.skipped:
            text += f"\n({len(self.skipped)} value(s) have no published counterpart: {self.skipped[:5]})"
        return text

    def _repr_mimebundle_(self, **_kwargs: Any) -> tuple[dict, dict]:
        shown, hidden = self._brief()
        body = shown.to_html(index=False, na_rep="", float_format=lambda v: f"{v:.4g}", escape=True)
        caption = ("<p style='font-size:12px;color:#555'>" + html.escape(_count_text(self.table))
                   + (f"; {len(self.skipped)} value(s) without a published counterpart"
                      if self.skipped else "")
                   + (f"; {hidden} rows that agree are not shown (all are recorded for the "
                      "scoreboard)" if hidden else "") + "</p>")
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


def counts(board: pd.DataFrame) -> pd.DataFrame:
    """How many rows of each kind, and how many of them agree or differ.

    Parameters
    ----------
    board : DataFrame
        A scoreboard (:func:`build`) or a comparison's ``table``.

    Returns
    -------
    DataFrame
        One row per kind of :data:`KINDS` (in that order): ``kind``, ``rows``, ``agree`` and
        ``differ`` (for "recomputed" and "simulation"; the other kinds are not compared).

    Examples
    --------
    >>> import judgekit as jk
    >>> c = jk.scoreboard.compare("dubois2024", {"win_rate": 50.0, "lc_win_rate": 50.0},
    ...                           prefix="fig4/gpt4_1106_preview/", how="t",
    ...                           kind="by construction", reason="the baseline's rate is 50")
    >>> jk.scoreboard.counts(c.table)[["kind", "rows", "agree"]].to_dict("records")[::2]
    [{'kind': 'recomputed', 'rows': 0, 'agree': 0}, {'kind': 'by construction', 'rows': 2, 'agree': 0}]
    """
    kind = board["kind"] if "kind" in board.columns else pd.Series(dtype=object)
    rows = []
    for k in KINDS:
        mine = board[kind == k]
        compared = k in ("recomputed", "simulation")
        rows.append({"kind": k, "rows": len(mine),
                     "agree": int(mine["agrees"].eq(True).sum()) if compared else 0,
                     "differ": int(mine["agrees"].eq(False).sum()) if compared else 0})
    return pd.DataFrame(rows)


def _count_text(board: pd.DataFrame) -> str:
    c = counts(board).set_index("kind")
    rec, sim = c.loc["recomputed"], c.loc["simulation"]
    parts = [f"{rec['rows']} recomputed from released data: {rec['agree']} agree with the paper to "
             f"its printed precision, {rec['differ']} differ"]
    if sim["rows"]:
        parts.append(f"{sim['rows']} checked against a simulation's known truth ({sim['agree']} "
                     "within tolerance)")
    for k, text in (("by construction", "hold by construction (not counted)"),
                    ("not reproducible", "cannot be reproduced from public data")):
        if c.loc[k, "rows"]:
            parts.append(f"{c.loc[k, 'rows']} {text}")
    return "; ".join(parts)


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


def _kind_of(kind: str | Mapping[str, str], keys: list[str]) -> dict[str, str]:
    if isinstance(kind, str):
        out = dict.fromkeys(keys, kind)
    else:
        missing = [k for k in keys if k not in kind]
        if missing:
            raise ValueError(f"kind has no entry for {missing[:5]}; give one kind for all or one "
                             "per item")
        out = {k: kind[k] for k in keys}
    bad = sorted({v for v in out.values() if v not in KINDS})
    if bad:
        raise ValueError(f"kind must be one of {list(KINDS)}, got {bad}")
    return out


def compare(
    paper: str,
    values: Mapping[str, float] | pd.Series,
    *,
    how: str,
    kind: str | Mapping[str, str],
    reason: str | Mapping[str, str] = "",
    prefix: str = "",
    missing: str = "raise",
    reference: Mapping[str, float] | pd.Series | None = None,
    source: str | None = None,
    decimals: int | None = None,
    tolerance: float | None = None,
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
    kind : str or mapping
        What the comparison is (:data:`KINDS`), for all items or item -> kind:
        ``"recomputed"`` (from released data; the only kind counted as agreeing or differing),
        ``"by construction"`` (agrees whatever the data: a definition, judgekit's own choice,
        or the paper's rule applied to the paper's own table), ``"not reproducible"`` (the
        paper's number needs data that are not public; judgekit's value, on what is public, is
        shown for information) or ``"simulation"`` (against a simulation's known truth, given
        as ``reference``). The last three need a ``reason``.
    reason : str or mapping
        Why judgekit's value differs from the paper's, for the rows that do not agree to the
        printed precision, and why a row holds by construction or cannot be reproduced: one
        text for all, or item -> text. Rows that differ without a reason are shown as
        unexplained.
    prefix : str
        Prepended to every item id.
    missing : {"raise", "skip"}
        What to do with an item the published table does not hold: raise (default), or leave
        it out and list it in ``Comparison.skipped`` (for a table another branch fills in).
    reference : mapping or Series, optional
        Item -> the value to compare with, for numbers that are not typed from a paper: the
        cells of a released table read from the (checksum-verified) data, or a simulation's
        truth. Needs ``source`` (what the values are) and ``decimals`` (the precision that
        counts as agreeing) or ``tolerance`` (the largest absolute difference that does).
    source, decimals, tolerance : optional
        See ``reference``.

    Returns
    -------
    Comparison

    Examples
    --------
    >>> import judgekit as jk
    >>> c = jk.scoreboard.compare("dubois2024", {"gpt4_gamed/win_rate": 3.738}, kind="recomputed",
    ...                           prefix="sec4.3/", how="jk.win_rates on the annotations")
    >>> c.table[["published", "judgekit", "agrees", "kind"]].to_dict("records")
    [{'published': 3.7, 'judgekit': 3.738, 'agrees': True, 'kind': 'recomputed'}]
    """
    values = dict(values.items()) if isinstance(values, pd.Series) else dict(values)
    kinds = _kind_of(kind, list(values))
    if reference is not None:
        reference = dict(reference.items()) if isinstance(reference, pd.Series) else dict(reference)
        if not source or (decimals is None) == (tolerance is None):
            raise ValueError("reference= needs source= (what the reference values are) and one "
                             "of decimals= or tolerance= (what counts as agreeing)")
        absent = [k for k in values if k not in reference]
        if absent:
            raise ValueError(f"reference has no value for {absent[:5]}")
        if paper not in PAPERS:
            raise ValueError(f"unknown paper {paper!r}; known: {sorted(PAPERS)}")
        typed_items = set(published(paper)["item"])
        typed = [prefix + str(k) for k in values if prefix + str(k) in typed_items]
        table, unknown = None, []
        if typed:
            raise ValueError(f"{typed[:5]} are typed in judgekit/published/{paper}.csv; compare "
                             "them without reference=")
    else:
        if "simulation" in kinds.values():
            raise ValueError("a 'simulation' row needs the simulation's truth as reference=")
        table, unknown = _lookup(paper, values, prefix, missing)
    rows = []
    for key, value in values.items():
        item = prefix + str(key)
        if item in unknown:
            continue
        k = kinds[key]
        why = reason.get(key, reason.get(item, "")) if isinstance(reason, Mapping) else reason
        if k not in ("recomputed",) and not why:
            raise ValueError(f"{item}: a {k!r} row needs a reason (why it holds by construction, "
                             "cannot be reproduced, or what was simulated)")
        if reference is not None:
            published_value, where, note = float(reference[key]), source, ""
            tol = float(tolerance) if tolerance is not None else 0.5 * 10.0 ** (-int(decimals))
        else:
            ref = table.loc[item]
            published_value, where, note = float(ref["value"]), ref["source"], ref["note"]
            tol = 0.5 * 10.0 ** (-int(ref["decimals"]))
        value = float(value) if value is not None else math.nan
        difference = math.nan if k == "not reproducible" else value - published_value
        agrees = None  # counted for recomputed and simulated values only
        if k in ("recomputed", "simulation"):
            agrees = bool(abs(difference) <= tol + 1e-9) if not math.isnan(value) else False
        rows.append({
            "paper": paper, "item": item, "source": where, "note": note,
            "published": published_value, "judgekit": value, "difference": difference,
            "tolerance": tol, "agrees": agrees, "kind": k, "how": how,
            "reason": why if k != "recomputed" else ("" if agrees else (why or "unexplained")),
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
        Rows of kind ``"not reproducible"``; the published values are in ``published``.

    Examples
    --------
    >>> import judgekit as jk
    >>> q = jk.scoreboard.quote("wei2024", ["table10/rank1/acc_both"],
    ...                         reason="the paper's judge outputs are not public")
    >>> q.table[["published", "kind"]].to_dict("records")
    [{'published': 0.667, 'kind': 'not reproducible'}]
    """
    if not reason:
        raise ValueError("quote needs the reason the numbers cannot be recomputed")
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
            "kind": "not reproducible", "how": "", "reason": reason,
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


_TEXT_FIELDS = ("paper", "item", "source", "note", "kind", "how", "reason")
_NUMBER_FIELDS = ("published", "judgekit", "difference", "tolerance")


def _record(record: object, path: Path) -> dict[str, Any]:
    """One scoreboard record of a notebook, checked: texts are texts, numbers numbers."""
    if not isinstance(record, Mapping):
        raise ValueError(f"{path}: a scoreboard record is not an object ({str(record)[:80]!r})")
    if "kind" not in record:  # recorded before rows had a kind
        status = record.get("status")
        record = {**record, "kind": "recomputed" if status == "recomputed" else "not reproducible"}
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
        Sorted by paper (in :data:`judgekit.published.PAPERS` order), kind (in :data:`KINDS`
        order: recomputed first) and the order the notebooks produced them. When one item was recorded twice, the last
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
    kinds = {k: i for i, k in enumerate(KINDS)}
    board = board.assign(_p=board["paper"].map(order), _s=board["kind"].map(kinds))
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
    """The printed decimals a tolerance of half a unit stands for (None for another tolerance)."""
    try:
        places = -math.log10(2 * float(tolerance))
    except (TypeError, ValueError):
        return None
    return max(0, round(places)) if abs(places - round(places)) < 1e-6 else None


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
    recomputed = board[board["kind"] == "recomputed"]
    parts = [
        f"<p class='meta'>{html.escape(_count_text(board))}. Agreement is to the paper's printed "
        f"precision (half a unit in the last printed decimal) and is counted only for the "
        f"{len(recomputed)} numbers recomputed from released data ({recomputed['paper'].nunique()} "
        "papers): a row that holds by construction agrees whatever the data, and a number that "
        "needs data which are not public cannot be checked; each such row says why. Also as "
        "<a href='scoreboard.csv'>scoreboard.csv</a> (column <code>kind</code>).</p>",
        "<table class='scoreboard'><tr><th>number</th><th>paper</th><th>judgekit</th>"
        "<th>difference</th><th></th><th>why they differ / how judgekit computed it</th>"
        "<th>notebook section</th></tr>",
    ]
    marks = {"by construction": "<span class='na'>by construction</span>",
             "not reproducible": "<span class='na'>not reproducible</span>"}
    for paper, rows in board.groupby("paper", sort=False):
        info = PAPERS.get(paper, {})
        c = counts(rows).set_index("kind")
        tally = " · ".join(f"{int(c.loc[k, 'rows'])} {k}" for k in KINDS if c.loc[k, "rows"])
        parts.append(
            f"<tr class='paper'><th colspan='7'>{html.escape(info.get('citation', paper))}: "
            f"{html.escape(info.get('title', ''))} (arXiv {html.escape(info.get('arxiv', ''))}) · "
            f"{html.escape(tally)}</th></tr>")
        for r in rows.itertuples(index=False):
            compared = r.kind in ("recomputed", "simulation")
            if compared:
                word = "agrees" if r.agrees else "differs"
                mark = (f"<span class='{'ok' if r.agrees else 'differs'}'>"
                        + ("simulation: " if r.kind == "simulation" else "") + f"{word}</span>")
            else:
                mark = marks[r.kind]
            why = r.reason if (not compared or not r.agrees or r.kind == "simulation") else ""
            detail = html.escape(why) + (f"<div class='how'>{html.escape(r.how)}</div>" if r.how else "")
            label = f"{html.escape(r.source)} · <code>{html.escape(r.item)}</code>"
            if r.note:
                label += f"<div class='how'>{html.escape(r.note)}</div>"
            shown = r.kind != "not reproducible" and pd.notna(r.difference)
            diff = html.escape(f"{float(r.difference):+.3g}") if shown else ""
            parts.append(
                f"<tr class='{'row' if compared else 'row quoted'}'><td>{label}</td>"
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
