"""Read a table made by a person as judgekit's columns: names and spellings recognised, blank rows
skipped, and every problem of the table found in one pass.

:func:`tidy` is the first step of :func:`judgekit.split_tables` (and so of
:func:`judgekit.read_judgments`, :func:`judgekit.read_any` and :func:`judgekit.audit`). It returns
the table with judgekit's column names and values and the notes that say what it recognised; when
something cannot be read it raises one :class:`~judgekit.exceptions.TableError` listing every
problem, grouped by kind, with the first rows of each.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judgekit.exceptions import TableError

#: Column names recognised for each of judgekit's columns, first match wins (compared in lower
#: case, with spaces and hyphens read as underscores).
ALIASES: dict[str, tuple[str, ...]] = {
    "pair_id": ("id", "pair", "pairid", "example_id", "item_id", "sample_id", "question_id", "uid"),
    "prompt": ("question", "instruction", "input", "query", "user_prompt", "prompt_text"),
    "response_a": ("answer_a", "response_1", "answer_1", "output_a", "output_1", "completion_a",
                   "completion_1", "generation_a", "text_a"),
    "response_b": ("answer_b", "response_2", "answer_2", "output_b", "output_2", "completion_b",
                   "completion_2", "generation_b", "text_b"),
    "verdict": ("winner", "preference", "choice", "judgment", "judge_verdict", "decision",
                "preferred", "prediction", "pred"),
    "label": ("human_label", "gold_label", "gold", "human_preference", "human_winner",
              "ground_truth"),
    "judge": ("judge_model", "evaluator", "annotator_model"),
    "model_a": ("model_1", "generator_a", "system_a"),
    "model_b": ("model_2", "generator_b", "system_b"),
}
#: Columns whose values are a preference (a, b or tie).
_SIDES = ("verdict", "label")
#: How many rows an error or note names for each kind of problem.
_FIRST = 5
_TEXTS = ("prompt", "response_a", "response_b")

_SIDE = re.compile(
    r"^\[*\s*(?:(?:model|assistant|response|output|answer|option)[\s_-]*)?\(?\s*(?P<s>[ab12])\s*\)?\s*\]*$")
_TIE = {"tie": "tie", "draw": "tie", "equal": "tie", "[[c]]": "tie", "tie (bothbad)": "bothbad",
        "tie(bothbad)": "bothbad", "tie_bothbad": "bothbad", "bothbad": "bothbad",
        "both bad": "bothbad", "both_bad": "bothbad"}
_ORDER = {"ab": "ab", "ba": "ba", "a-b": "ab", "b-a": "ba", "a,b": "ab", "b,a": "ba"}
#: What each spelling of a side means, and what it is called in a note.
SPELLINGS = ("a/b/tie in any case, 'model_a'/'model_b', 'Assistant A', 'Response A', '[[A]]', "
             "'1'/'2', 'draw', '[[C]]' and '1.5' (ties) and 'tie (bothbad)' (a tie, kept in "
             "tie_kind)")


def side_of(value: object) -> tuple[str | None, str | None]:
    """``(side, tie_kind)`` of one spelling of a preference: side "a", "b", "tie" or None (not a
    preference), tie_kind "bothbad" for "tie (bothbad)"."""
    if isinstance(value, (bool, np.bool_)):
        return None, None
    if isinstance(value, (int, float, np.integer, np.floating)):
        return {1.0: ("a", None), 2.0: ("b", None), 1.5: ("tie", None)}.get(float(value),
                                                                          (None, None))
    text = str(value).strip().lower()
    if text == "1.5":  # AlpacaEval's draw
        return "tie", None
    if text in _TIE:
        kind = _TIE[text]
        return "tie", (kind if kind == "bothbad" else None)
    m = _SIDE.match(text)
    if m:
        return {"a": "a", "1": "a", "b": "b", "2": "b"}[m["s"]], None
    return None, None


def _upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def _key(name: object) -> str:
    return re.sub(r"[\s-]+", "_", str(name).strip().lower())


@dataclass
class _Rows:
    """How to name the rows of a table in a message: spreadsheet rows of a CSV (the header is
    row 1), records of a JSON file, or the index of a table in memory."""

    word: str
    numbers: np.ndarray

    def name(self, mask: np.ndarray) -> str:
        picked = self.numbers[np.asarray(mask, dtype=bool)]
        shown = ", ".join(str(x) for x in picked[:_FIRST])
        more = f" and {len(picked) - _FIRST} more" if len(picked) > _FIRST else ""
        word = self.word + ("s" if len(picked) != 1 and self.word != "index" else "")
        return f"{len(picked)} {'row' if len(picked) == 1 else 'rows'} ({word} {shown}{more})"


@dataclass
class Reading:
    """What :func:`tidy` found: notes to show the reader and problems that stop the reading."""

    notes: list[str] = field(default_factory=list)
    problems: dict[str, list[str]] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)

    def column(self, name: str) -> str:
        """A column as the person knows it: ``'winner' (read as 'verdict')``."""
        old = self.origin.get(name)
        return f"column {old!r} (read as {name!r})" if old is not None else f"column {name!r}"

    def problem(self, kind: str, text: str) -> None:
        self.problems.setdefault(kind, []).append(text)


def rows_of(frame: pd.DataFrame, kind: str) -> _Rows:
    """Row names for a table read from a file of this kind ("csv", "tsv", "json", "jsonl",
    "parquet") or None for a table in memory."""
    n = len(frame)
    if kind in ("csv", "tsv"):
        return _Rows("row", np.arange(2, n + 2))
    if kind in ("json", "jsonl"):
        return _Rows("record", np.arange(1, n + 1))
    if kind == "parquet":
        return _Rows("row", np.arange(1, n + 1))
    return _Rows("index", np.asarray(frame.index, dtype=object))


def _rename(df: pd.DataFrame, columns: Mapping[str, str], reading: Reading) -> pd.DataFrame:
    """Apply the person's mapping, then recognise judgekit's columns under other names."""
    from judgekit.schema import JUDGMENT_COLUMNS, JUDGMENT_OPTIONAL, PAIR_COLUMNS, PAIR_OPTIONAL

    known = {*PAIR_COLUMNS, *PAIR_OPTIONAL, *JUDGMENT_COLUMNS, *JUDGMENT_OPTIONAL, "order"}
    if columns:
        df = df.rename(columns=dict(columns))
        reading.origin.update({str(v): str(k) for k, v in columns.items() if k != v})
    taken = set(df.columns)
    # the canonical name in another case or with spaces ("Response A", "Verdict")
    by_key: dict[str, list[str]] = {}
    for c in df.columns:
        by_key.setdefault(_key(c), []).append(c)
    renames: dict[str, str] = {}
    for target in sorted(known):
        if target in taken:
            continue
        cands = [c for c in by_key.get(target, []) if c not in (columns or {}).values()]
        if len(cands) == 1:
            renames[cands[0]] = target
    for target, names in ALIASES.items():
        if target in taken or target in renames.values():
            continue
        found = [c for name in names for c in by_key.get(name, [])
                 if c not in renames and c not in known and c not in (columns or {}).values()]
        if found:
            renames[found[0]] = target
    if renames:
        df = df.rename(columns=renames)
        reading.origin.update({new: str(old) for old, new in renames.items()})
        said = ", ".join(f"{old!r} as {new!r}" for old, new in renames.items())
        reading.notes.append(f"Recognised columns: read {said} (pass columns= or --columns "
                             "yours=judgekit's to choose others).")
    return df


def _values(df: pd.DataFrame, column: str, reading: Reading, rows: _Rows) -> None:
    """Read a preference column's spellings as a, b or tie; unknown ones are problems, named as
    written."""
    values = df[column]
    codes, uniques = pd.factorize(values)  # each distinct spelling read once; -1 is empty
    meaning = {u: side_of(u) for u in uniques}
    unknown = [u for u, (side, _) in meaning.items() if side is None]
    if unknown:
        bad_codes = np.array([meaning[u][0] is None for u in uniques] + [False])
        bad = bad_codes[codes]
        shown = ", ".join(repr(u if isinstance(u, str) else str(u)) for u in unknown[:_FIRST])
        more = f" and {len(unknown) - _FIRST} more" if len(unknown) > _FIRST else ""
        reading.problem(f"unknown {column}", f"{reading.column(column)}: {shown}{more} in "
                        f"{rows.name(bad)} is not a preference judgekit knows (it reads "
                        f"{SPELLINGS}); fix those cells or leave them empty")
        return
    side = pd.Series(np.array([meaning[u][0] for u in uniques] + [None], dtype=object)[codes],
                     index=values.index, dtype=object)
    kinds = pd.Series(np.array([meaning[u][1] for u in uniques] + [None], dtype=object)[codes],
                      index=values.index, dtype=object)
    plain = {u for u in uniques if isinstance(u, str) and u in ("a", "b", "tie")}
    respelled = [u for u in uniques if u not in plain]
    if respelled:
        shown = ", ".join(f"{u!r} as {meaning[u][0]}" for u in respelled[:8])
        more = f" and {len(respelled) - 8} more" if len(respelled) > 8 else ""
        reading.notes.append(f"{_upper(reading.column(column))}: read {shown}{more}.")
    df[column] = side
    if kinds.notna().any():
        where = "tie_kind" if column == "verdict" else f"{column}_tie_kind"
        df[where] = kinds.where(kinds.notna(), None).astype(object)
        reading.notes.append(f"{_upper(reading.column(column))}: "
                             f"{int(kinds.notna().sum()):,} 'tie (bothbad)' "
                             f"counted as ties and kept apart in {where!r}.")


def _order(df: pd.DataFrame, reading: Reading, rows: _Rows) -> None:
    if "order" not in df.columns:
        df["order"] = "ab"
        reading.notes.append(
            "No 'order' column: every judgment is read as shown in one order, response a first "
            "('ab'). Position consistency cannot be measured, and a preference for the first "
            "position cannot be told from a preference for response a; judge each pair again "
            "with the responses swapped and give each judgment's order ('ab' or 'ba').")
        return
    values = df["order"]
    codes, uniques = pd.factorize(values)
    present = codes >= 0
    read = [_ORDER.get(str(u).strip().lower()) for u in uniques]
    mapped = pd.Series(np.array([*read, None], dtype=object)[codes], index=values.index,
                       dtype=object)
    bad = present & mapped.isna().to_numpy()
    if bad.any():
        shown = ", ".join(repr(str(u)) for u, r in zip(uniques, read) if r is None)
        reading.problem("unknown order", f"{reading.column('order')}: {shown} in {rows.name(bad)} is not "
                        "an order; judgekit reads 'ab' (response a shown first) or 'ba'")
    if (~present).any():
        reading.problem("missing order", f"{reading.column('order')} is empty in "
                        f"{rows.name(~present)}")
    df["order"] = mapped


def _duplicates(df: pd.DataFrame, reading: Reading, rows: _Rows) -> None:
    """An id given to two different pairs is a problem; the same judgment twice is a note."""
    if "pair_id" not in df.columns or df["pair_id"].isna().all():
        return
    texts = [c for c in (*_TEXTS, "label", "model_a", "model_b") if c in df.columns]
    ids = df["pair_id"]
    dup = ids.duplicated(keep=False).to_numpy() & ids.notna().to_numpy()
    if not dup.any():
        return
    sub = df.loc[dup, ["pair_id", *texts]]
    differ: pd.Index = pd.Index([])
    if texts:
        varying = sub.groupby("pair_id", sort=False)[texts].nunique(dropna=False)
        differ = varying.index[(varying > 1).any(axis=1)]
        if len(differ):
            bad = ids.isin(differ).to_numpy()
            cols = [c for c in texts if (varying.loc[differ, c] > 1).any()]
            shown = ", ".join(repr(str(x)) for x in differ[:_FIRST])
            reading.problem("duplicate id", f"{reading.column('pair_id')}: {shown} "
                            f"{'names' if len(differ) == 1 else 'name'} different pairs "
                            f"({', '.join(map(repr, cols))} "
                            f"{'differs' if len(cols) == 1 else 'differ'}) in {rows.name(bad)}; give "
                            "each pair its own id")
    if "repeat" not in df.columns:
        key = [c for c in ("pair_id", "judge", "order") if c in df.columns]
        again = df.duplicated(key, keep=False).to_numpy() & dup & ~ids.isin(differ).to_numpy()
        if again.any():
            reading.notes.append(f"The same pair and order is judged more than once in "
                                 f"{rows.name(again)}: read as repeats of one request "
                                 "(numbered in 'repeat').")


def tidy(table: pd.DataFrame, columns: Mapping[str, str] | None, name: str,
         rows: _Rows | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The table with judgekit's column names and values, and the notes on what was read.

    Raises
    ------
    TableError
        Listing every problem found, grouped by kind, each with the first rows.
    """
    reading = Reading()
    df = table.reset_index(drop=True) if rows is None or rows.word != "index" else table.copy()
    if rows is None:
        rows = rows_of(df, "")
    blank = np.ones(len(df), bool) if len(df.columns) else np.zeros(len(df), bool)
    for column in df.columns:  # a column without an empty cell ends the search at once
        blank &= df[column].isna().to_numpy()
        if not blank.any():
            break
    if blank.any():
        n = int(blank.sum())
        reading.notes.append(f"Skipped {n} blank row{'s' if n != 1 else ''} (every cell empty): "
                             f"{rows.name(blank).split('(', 1)[1].rstrip(')')}.")
        df = df.loc[~blank]
        rows = _Rows(rows.word, rows.numbers[~blank])
    mapping = dict(columns or {})
    absent = [c for c in mapping if c not in df.columns]
    if absent:
        reading.problem("mapping", f"columns= names {', '.join(map(repr, absent))}, which "
                        f"{'is' if len(absent) == 1 else 'are'} not in the table; it has "
                        f"{[str(c) for c in df.columns]}")
        mapping = {k: v for k, v in mapping.items() if k in df.columns}
    df = _rename(df, mapping, reading)
    has_texts = all(c in df.columns for c in _TEXTS)
    if "verdict" not in df.columns:
        reading.problem("missing column", "no 'verdict' column (the judge's preference): name "
                        "yours with columns={'yours': 'verdict'} (--columns yours=verdict); "
                        f"columns found: {[str(c) for c in df.columns]}")
    if "pair_id" not in df.columns and not has_texts:
        reading.problem("missing column", "no 'pair_id' column and no texts to identify the "
                        "pairs by (prompt, response_a, response_b): name your id column with "
                        "columns={'yours': 'pair_id'}")
    for column in _SIDES:
        if column in df.columns and not (column == "label" and df[column].isna().all()):
            _values(df, column, reading, rows)
    _order(df, reading, rows)
    if "pair_id" in df.columns:
        empty = df["pair_id"].isna().to_numpy()
        if empty.any():
            reading.problem("missing id", f"{reading.column('pair_id')} is empty in "
                            f"{rows.name(empty)}")
    if has_texts:
        for c in _TEXTS:
            empty = df[c].isna().to_numpy()
            if empty.any():
                df[c] = df[c].where(~empty, "")
                reading.notes.append(f"{_upper(reading.column(c))} is empty in "
                                     f"{rows.name(empty)}: read as "
                                     "empty text.")
    if "verdict" in df.columns:
        none = df["verdict"].isna().to_numpy()
        if none.any():
            reading.notes.append(f"No verdict in {rows.name(none)}: counted as answers the judge "
                                 "gave no usable verdict in.")
    _duplicates(df, reading, rows)
    if reading.problems:
        raise TableError(name, reading.problems, reading.notes)
    return df.reset_index(drop=True), reading.notes
