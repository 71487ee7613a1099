"""CSV files written for people open in spreadsheets: no text cell may turn into a formula.

A spreadsheet program reads a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula
(OWASP adds a leading tab or carriage return to the list), and a formula can fetch a URL or, in some
programs, start a command. Judge, model and prompt names in judgekit's tables come from other
people's files, so every CSV judgekit writes for people goes through :func:`csv_text`, which
neutralises such cells the way OWASP's "CSV Injection" page describes: the cell gets a leading
apostrophe (``'=HYPERLINK(...)``), which spreadsheets show as text. The rule covers the column
names too (a table turned wide has judge names as columns).

A text cell may also hold a line break: unquoted, a carriage return inside a cell starts a new row
in a spreadsheet, and what follows it is read as the first cell of that row. The files are
therefore written as RFC 4180 describes, with CRLF line ends, so that every cell holding a
carriage return or a line feed is quoted.

Numbers stay numbers: a numeric column is written as it is (``-0.25``), and a text cell that is
a plain decimal number (``-0.25``, ``+3``, ``-1e-05``) is left alone, since a spreadsheet reads it
as that number and it cannot run anything. Anything else after a sign (``-2+3+cmd|...``) is
neutralised.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

__all__ = ["FORMULA_START", "csv_text", "neutralise", "spreadsheet_safe", "write_csv"]

#: The first characters that make a spreadsheet read a cell as a formula (OWASP's list).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def neutralise(value: object) -> object:
    """A text that a spreadsheet would run, made text; any other value unchanged.

    Examples
    --------
    >>> neutralise('=HYPERLINK("http://x","click")'), neutralise("-0.25"), neutralise(-0.25)
    ('\\'=HYPERLINK("http://x","click")', '-0.25', -0.25)
    >>> neutralise("@SUM(A1)"), neutralise("-2+3+cmd"), neutralise("gpt-4")
    ("'@SUM(A1)", "'-2+3+cmd", 'gpt-4')
    """
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def spreadsheet_safe(table: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``table`` whose text cells and column names cannot act as formulas.

    Only text (object, string and category) columns are touched; numeric, boolean and
    datetime columns are kept as they are.

    Examples
    --------
    >>> t = pd.DataFrame({"model": ["=1+1", "m"], "win_rate": [-0.25, 0.5]})
    >>> spreadsheet_safe(t).to_dict("list")
    {'model': ["'=1+1", 'm'], 'win_rate': [-0.25, 0.5]}
    """
    out = table.copy()
    for i in range(out.shape[1]):  # by position: column names may repeat
        values = out.iloc[:, i]
        if isinstance(values.dtype, pd.CategoricalDtype):
            values = values.astype(object)
        if values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
            out.isetitem(i, values.map(neutralise, na_action="ignore"))
    out.columns = [neutralise(c) for c in out.columns]
    return out


def csv_text(table: pd.DataFrame, **options) -> str:
    """The CSV text of a table for people: formula cells neutralised, no index by default.

    Parameters
    ----------
    table : DataFrame
    **options
        Passed to :meth:`pandas.DataFrame.to_csv` (``index`` defaults to False,
        ``lineterminator`` to CRLF).

    Returns
    -------
    str

    Examples
    --------
    >>> csv_text(pd.DataFrame({"judge": ["@me", "a\\rb"], "x": [-1.5, 2.0]}))
    'judge,x\\r\\n\\'@me,-1.5\\r\\n"a\\rb",2.0\\r\\n'
    """
    options.setdefault("index", False)
    options.setdefault("lineterminator", "\r\n")
    if options["index"]:
        table = table.reset_index()
        options["index"] = False
    return spreadsheet_safe(table).to_csv(**options)


def write_csv(table: pd.DataFrame, path: str | Path, **options) -> Path:
    """Write :func:`csv_text` of ``table`` to ``path`` (replaced whole; a link there is replaced,
    its target never written)."""
    from judgekit._safewrite import write_file

    return write_file(path, csv_text(table, **options))
