"""Your own table of judgments: read judgments exported from any pipeline (CSV, TSV, JSON, JSON
lines, parquet) as judgekit's two tables, with a column mapping.

The reading of a person's column names and spellings (:func:`judgekit.data._tidy.tidy`) is its
own module: this format's second half, and the side spellings the metrics share.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from judgekit._jsonfile import parse_json, parse_jsonl
from judgekit._stamp import stamped
from judgekit.data import _tidy
from judgekit.data._common import read_file, reads
from judgekit.schema import (
    JUDGMENT_COLUMNS,
    JUDGMENT_OPTIONAL,
    JUDGMENT_REQUIRED,
    PAIR_OPTIONAL,
    PAIR_REQUIRED,
    validate_judgments,
    validate_pairs,
)

__all__ = ["read_judgments", "split_tables"]

#: File suffixes :func:`read_judgments` reads (each also gzip-compressed, with ``.gz``).
SUFFIXES: dict[str, str] = {
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "tsv", ".json": "json",
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet",
}
#: Columns read as text whatever they look like (ids such as "007" stay as written).
_TEXT_COLUMNS = ("pair_id", "judge", "order", "verdict", "label", "model_a", "model_b",
                 "instruction_id", "dataset", "task", "model", "template", "prompt",
                 "response_a", "response_b", "reference", "raw", "error")
_PAIR_SIDE = (*PAIR_REQUIRED, "label", *PAIR_OPTIONAL)
#: The ``attrs`` key of the notes on what reading a table recognised (shown by the audit).
NOTES_KEY = "judgekit_notes"


def _suffix(path: Path) -> tuple[str, bool]:
    name = path.name.lower()
    gz = name.endswith(".gz")
    stem = name[:-3] if gz else name
    return Path(stem).suffix, gz


def _records_frame(records: object, path: Path) -> pd.DataFrame:
    if isinstance(records, list):
        if records and not all(isinstance(r, dict) for r in records):
            raise ValueError(f"{path}: expected a JSON list of objects (one per row)")
        return pd.DataFrame.from_records(records)
    if isinstance(records, dict) and records and all(isinstance(v, list) for v in records.values()):
        return pd.DataFrame(records)
    raise ValueError(f"{path}: expected a JSON list of rows, or an object of equal-length columns")


def _check_shape(data: bytes, sep: str, path: Path) -> None:
    """A row wider than the header (an unquoted comma in a text) and a header naming a column
    twice are named here: pandas would shift the row's cells or rename the column."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return  # said by the reader
    try:
        lines = list(csv.reader(io.StringIO(text), delimiter=sep))
    except csv.Error:
        return  # e.g. a cell over the csv module's size limit: pandas reads it
    first = lines[0] if lines else []
    wide = [(k + 1, len(r)) for k, r in enumerate(lines[1:], start=1) if len(r) > len(first)]
    if wide:
        shown = ", ".join(f"row {k} ({n} cells)" for k, n in wide[:5])
        raise ValueError(f"{path}: {len(wide)} row{'s' if len(wide) != 1 else ''} "
                         f"{'has' if len(wide) == 1 else 'have'} more cells than the "
                         f"header's {len(first)}: {shown}; a text with a "
                         f"{'comma' if sep == ',' else 'tab'} in it needs quotes")
    twice = sorted({c for c in first if first.count(c) > 1})
    if twice:
        raise ValueError(f"{path}: the header names {', '.join(map(repr, twice))} more "
                         "than once; give each column its own name")


def _read_file(path: Path, dtype: dict[str, type]) -> pd.DataFrame:
    suffix, _ = _suffix(path)
    kind = SUFFIXES.get(suffix)
    if kind is None:
        raise ValueError(f"{path}: cannot tell the format from {suffix or 'no suffix'!r}; judgekit "
                         f"reads {', '.join(sorted(SUFFIXES))} (each optionally .gz)")
    data = read_file(path)
    if kind in ("csv", "tsv"):
        sep = "," if kind == "csv" else "\t"
        _check_shape(data, sep, path)
        try:
            header = pd.read_csv(io.BytesIO(data), sep=sep, nrows=0).columns
            texty = {*_TEXT_COLUMNS, *(a for t, names in _tidy.ALIASES.items()
                                       if t in _TEXT_COLUMNS for a in names)}
            dtype = {c: str for c in header if c in dtype or _tidy._key(c) in texty}
            return pd.read_csv(io.BytesIO(data), sep=sep, dtype=dtype, keep_default_na=False,
                               na_values=[""], skip_blank_lines=False, index_col=False)
        except pd.errors.EmptyDataError:
            raise ValueError(f"{path}: the file is empty") from None
        except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as err:
            raise ValueError(f"{path}: not a readable {kind.upper()} file ({err})") from None
    if kind == "parquet":
        try:
            return pd.read_parquet(io.BytesIO(data))
        except Exception as err:  # pyarrow raises its own error classes
            raise ValueError(f"{path}: not a readable parquet file ({err})") from None
    if kind == "json":
        return _records_frame(parse_json(data, path), path)
    return _records_frame(parse_jsonl(data, path), path)


def _refuse_nested(df: pd.DataFrame, name: str, columns: Mapping[str, str] | None = None) -> None:
    """A JSON list or object where judgekit reads one value (a text, a verdict) is named, instead
    of failing later in pandas with "unhashable type"."""
    read = {*_PAIR_SIDE, *JUDGMENT_COLUMNS, *JUDGMENT_OPTIONAL, "order", *(columns or {}),
            *(a for names in _tidy.ALIASES.values() for a in names)}
    for column in [c for c in df.columns if c in read or _tidy._key(c) in read]:
        values = df[column]
        if values.dtype != object:
            continue
        nested = values.map(lambda v: isinstance(v, (list, dict)))
        if nested.any():
            row = int(nested.to_numpy().argmax())
            kind = "list" if isinstance(values.iloc[row], list) else "object"
            raise ValueError(f"{name}: column {column!r} holds a JSON {kind} in row {row + 1} "
                             f"({int(nested.sum())} rows in all); judgekit reads one value there")


def _pair_id(df: pd.DataFrame) -> pd.Series:
    joined = df["prompt"].astype(str) + "\x1f" + df["response_a"].astype(str) + "\x1f" + \
        df["response_b"].astype(str)
    return joined.map(lambda s: "pair-" + hashlib.sha256(s.encode("utf-8")).hexdigest()[:12])


@stamped
def split_tables(
    table: pd.DataFrame,
    *,
    judge: str | None = None,
    name: str = "table",
    columns: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame | None, pd.DataFrame]:
    """Split one table with a row per judgment (and, optionally, the pair's texts on each row)
    into judgekit's pairs and judgments.

    Parameters
    ----------
    table : DataFrame
        Judgment columns (``pair_id``, ``judge``, ``order``, ``verdict``, optionally ``repeat``,
        ``p_a``, ...) and, optionally, the pair columns (``prompt``, ``response_a``,
        ``response_b``, ``label``, ``model_a``, ...), repeated on every row of a pair.
    judge : str, optional
        The judge's name when the table has no ``judge`` column (default ``"judge"``).
    name : str
        What to call the table in error messages (e.g. the file).
    columns : mapping, optional
        Your column names to judgekit's, e.g. ``{"winner": "verdict", "id": "pair_id"}``.

    Returns
    -------
    pairs : DataFrame or None
        One row per ``pair_id`` when the table has the pair texts, else None.
    judgments : DataFrame
        The remaining columns; ``judge`` filled in when absent, ``order`` "ab" when absent, and
        ``repeat`` numbered 0, 1, ... in table order when absent and the same (pair, judge,
        order) occurs more than once. ``attrs["judgekit_notes"]`` says what was recognised
        (the audit shows it).

    Raises
    ------
    judgekit.exceptions.TableError
        A :class:`ValueError` listing every problem of the table at once, grouped by kind with
        the first rows of each: no verdict column, no id, an unknown verdict, label or order
        (as written), an id given to two different pairs, a mapped column that is not there.
    ValueError
        When a pair's texts differ between its rows (naming the pair and column).

    Notes
    -----
    A table made by hand is read as a person means it:

    - rows with every cell empty are skipped (and counted in a note);
    - columns are recognised under common names when judgekit's own is absent (``winner``,
      ``preference`` or ``choice`` as ``verdict``; ``id`` or ``question_id`` as ``pair_id``;
      ``question`` or ``instruction`` as ``prompt``; ``answer_a``, ``response_1`` or
      ``output_1`` as ``response_a``; ``human_label`` or ``gold`` as ``label``; any case, with
      spaces), each named in a note;
    - verdicts and labels may be spelled "a"/"A", "model_a", "Assistant A", "Response A",
      "[[A]]", "1" (and the same for b), "tie", "draw" or "[[C]]"; "tie (bothbad)" is a tie,
      kept apart in ``tie_kind`` ("bothbad");
    - without an ``order`` column every judgment was shown in one order, ``"ab"`` (a note says
      what that prevents: position consistency, and telling a first-position preference from a
      preference for response a);
    - an empty text is read as empty; an empty verdict is an answer without a usable verdict.

    Without a ``pair_id`` column, a pair is identified by its three texts (``pair-<hash>``).

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> rows = pd.DataFrame({"pair_id": ["p1", "p1"], "prompt": "2+2?", "response_a": "4",
    ...                      "response_b": "5", "order": ["ab", "ba"], "verdict": ["A", "a"]})
    >>> pairs, judgments = jk.split_tables(rows, judge="mine")
    >>> pairs[["pair_id", "prompt"]].to_dict("records")
    [{'pair_id': 'p1', 'prompt': '2+2?'}]
    >>> judgments[["pair_id", "judge", "order", "verdict"]].to_dict("records")
    [{'pair_id': 'p1', 'judge': 'mine', 'order': 'ab', 'verdict': 'a'}, {'pair_id': 'p1', 'judge': 'mine', 'order': 'ba', 'verdict': 'a'}]
    >>> by_hand = pd.DataFrame({"id": ["q1", "q2"], "winner": ["model_a", "[[B]]"]})
    >>> _, judgments = jk.split_tables(by_hand)
    >>> judgments[["pair_id", "order", "verdict"]].to_dict("records")
    [{'pair_id': 'q1', 'order': 'ab', 'verdict': 'a'}, {'pair_id': 'q2', 'order': 'ab', 'verdict': 'b'}]
    """
    return _split(table, judge=judge, name=name, columns=columns)


def _split(table: pd.DataFrame, *, judge: str | None, name: str,
           columns: Mapping[str, str] | None = None, rows: _tidy._Rows | None = None
           ) -> tuple[pd.DataFrame | None, pd.DataFrame]:
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(table).__name__}")
    _refuse_nested(table, name, columns)
    earlier = list(table.attrs.get(NOTES_KEY, []))
    df, notes = _tidy.tidy(table, columns, name, rows)
    has_texts = all(c in df.columns for c in ("prompt", "response_a", "response_b"))
    if "pair_id" not in df.columns and has_texts:
        df.insert(0, "pair_id", _pair_id(df))
    if "judge" not in df.columns:
        df["judge"] = judge or "judge"
    missing = [c for c in JUDGMENT_REQUIRED if c not in df.columns]
    if missing:
        raise ValueError(
            f"{name} is missing column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(repr(c) for c in missing)}: a judgments table needs "
            f"{', '.join(JUDGMENT_REQUIRED)} (judge may be given as judge=; pair_id is made from "
            f"the texts when prompt, response_a and response_b are there). It has {list(df.columns)}")
    pairs = None
    if has_texts:
        pair_cols = [c for c in _PAIR_SIDE if c in df.columns]
        if df["pair_id"].isna().any():
            raise ValueError(f"{name}: column 'pair_id' is missing in "
                             f"{int(df['pair_id'].isna().sum())} rows")
        df["pair_id"] = df["pair_id"].astype(str)
        grouped = df.groupby("pair_id", sort=False)[pair_cols[1:]]
        varying = grouped.nunique(dropna=False)
        bad = varying.columns[(varying > 1).any()].tolist()
        if bad:
            column = bad[0]
            ids = varying.index[varying[column] > 1][:5].tolist()
            raise ValueError(
                f"{name}: column {column!r} differs between rows of the same pair "
                f"({', '.join(map(str, ids))}); a pair's texts and labels must be the same on "
                "each of its judgments")
        pairs = df.drop_duplicates("pair_id")[pair_cols].reset_index(drop=True)
        df = df.drop(columns=[c for c in pair_cols if c != "pair_id"])
    if "repeat" not in df.columns:
        key = ["pair_id", "judge", "order", *(["id_swap"] if "id_swap" in df.columns else [])]
        counts = df.groupby(key, sort=False, dropna=False).cumcount()
        if len(counts) and counts.max() > 0:
            df["repeat"] = counts.to_numpy(dtype=np.int64)
    df.attrs[NOTES_KEY] = earlier + [n for n in notes if n not in earlier]
    return pairs, df


# the fallback: what no other format claims is read as a table of judgments
@reads("csv", "jk.read_judgments: a table (CSV, TSV, JSON, JSONL, parquet) of judgments",
       rank=1000, fallback=True, takes_pairs=True)
@stamped
def read_judgments(
    path: str | Path | pd.DataFrame,
    columns: Mapping[str, str] | None = None,
    *,
    judge: str | None = None,
    pairs: str | Path | pd.DataFrame | None = None,
) -> tuple[pd.DataFrame | None, pd.DataFrame]:
    """Read judgments exported from your own pipeline: CSV, TSV, JSON, JSON lines or parquet.

    Parameters
    ----------
    path : str, Path or DataFrame
        The file (``.csv``, ``.tsv``, ``.json`` (a list of rows, or an object of columns),
        ``.jsonl``, ``.parquet``; each optionally ``.gz``), or a table already in memory.
    columns : mapping, optional
        Your column names to judgekit's, e.g. ``{"question": "prompt", "answer_1":
        "response_a", "answer_2": "response_b", "winner": "verdict"}``. Columns not named keep
        their names.
    judge : str, optional
        The judge's name when there is no ``judge`` column (default: the file's name without
        its suffix, or "judge" for a table).
    pairs : str, Path or DataFrame, optional
        A separate pairs table (file or frame, read with the same ``columns``) when the
        judgments do not carry the texts; or a file of Chatbot Arena battles, whose crowd
        majority is then each pair's label (:func:`judgekit.read_arena_battles`).

    Returns
    -------
    pairs : DataFrame or None
        Validated pairs (from ``pairs``, or from the texts on the judgment rows; see
        :func:`split_tables`); None when neither has them.
    judgments : DataFrame
        Validated judgments (:func:`judgekit.validate_judgments` fills ``repeat``, ``p_a`` and
        ``id_swap`` when absent).

    Raises
    ------
    ValueError
        Naming the file: an unknown suffix, a file that cannot be parsed, a mapped column that
        is not in the file, a missing required column, or a value the validators refuse.
    FileNotFoundError
        When the file does not exist.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import judgekit as jk
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "my_judge.csv"
    >>> _ = f.write_text("id,question,answer_1,answer_2,order,winner\\n"
    ...                  "1,2+2?,4,5,ab,A\\n1,2+2?,4,5,ba,B\\n")
    >>> pairs, judgments = jk.read_judgments(f, columns={"id": "pair_id", "question": "prompt",
    ...     "answer_1": "response_a", "answer_2": "response_b", "winner": "verdict"})
    >>> judgments[["pair_id", "judge", "order", "verdict"]].to_dict("records")
    [{'pair_id': '1', 'judge': 'my_judge', 'order': 'ab', 'verdict': 'a'}, {'pair_id': '1', 'judge': 'my_judge', 'order': 'ba', 'verdict': 'b'}]
    """
    columns = dict(columns or {})
    frame, name = _load(path, columns)
    if _is_battles(pairs):  # the crowd's votes as the labels of a judge's verdicts
        from judgekit.data.arena_battles import read_arena_battles

        pair_frame, pair_name = read_arena_battles(pairs)[0], str(pairs)
    else:
        pair_frame, pair_name = _load(pairs, columns) if pairs is not None else (None, "")
    seen = set(frame.columns) | (set(pair_frame.columns) if pair_frame is not None else set())
    absent = [c for c in columns if c not in seen]
    if absent and pair_frame is not None:
        files = name + (f" and {pair_name}" if pair_frame is not None else "")
        raise ValueError(f"{files}: columns={{...}} names {', '.join(map(repr, absent))}, which "
                         f"{'is' if len(absent) == 1 else 'are'} not in the file; it has "
                         f"{sorted(seen, key=str)}")
    default_judge = judge
    if default_judge is None and not isinstance(path, pd.DataFrame):
        name_gz = Path(str(path)).name
        default_judge = Path(name_gz[:-3] if name_gz.lower().endswith(".gz") else name_gz).stem
    rows = None if isinstance(path, pd.DataFrame) else \
        _tidy.rows_of(frame, SUFFIXES.get(_suffix(Path(path))[0], ""))
    mine = {k: v for k, v in columns.items() if k in frame.columns or pair_frame is None}
    found_pairs, judgments = _split(frame, judge=default_judge, name=name, columns=mine, rows=rows)
    notes = judgments.attrs.get(NOTES_KEY, [])
    if pair_frame is not None:
        found_pairs = validate_pairs(pair_frame.rename(columns=columns), name=pair_name)
    elif found_pairs is not None:
        found_pairs = validate_pairs(found_pairs, name=f"pairs in {name}")
    judgments = validate_judgments(judgments, found_pairs, name=name)
    judgments.attrs[NOTES_KEY] = notes
    return found_pairs, judgments


def read_pairs(path: str | Path) -> pd.DataFrame:
    """A pairs table from a file: Chatbot Arena battles (labelled by the crowd's majority) or a
    table (CSV, TSV, JSON, JSONL, parquet), validated against the pairs schema."""
    if _is_battles(path):
        from judgekit.data.arena_battles import read_arena_battles

        return read_arena_battles(path)[0]
    frame, name = _load(path, {})
    return validate_pairs(frame, name=name)


def _is_battles(source: object) -> bool:
    """Whether a pairs file is Chatbot Arena battles (read with their crowd labels)."""
    if not isinstance(source, (str, Path)) or not Path(source).is_file():
        return False
    from judgekit.data.formats import detect_format

    return detect_format(source)[0] == "arena-battles"


def _load(source: str | Path | pd.DataFrame, columns: dict[str, str]) -> tuple[pd.DataFrame, str]:
    if isinstance(source, pd.DataFrame):
        frame, name = source, "the table"
    else:
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"{path} does not exist" if not path.exists()
                                    else f"{path} is a folder, not a table file")
        inverse = {v: k for k, v in columns.items()}
        dtype = {inverse.get(c, c): str for c in _TEXT_COLUMNS}
        frame, name = _read_file(path, dtype), str(path)
    return frame, name
