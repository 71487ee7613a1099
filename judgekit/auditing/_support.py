"""The audit's plumbing: its inputs read and validated, the progress bar, and metric warnings
turned into notes. (The folder a report is saved into is :mod:`judgekit.viz.audit_report`'s.)"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["prepare"]


def prepare(judgments: Any, pairs: Any, judge: str | None, fmt: str, read_options: dict
             ) -> tuple[pd.DataFrame, pd.DataFrame | None, str]:
    from judgekit.data.formats import read_any
    from judgekit.data.table import split_tables

    source = "tables in memory"
    columns = None if isinstance(judgments, (str, Path)) else read_options.pop("columns", None)
    if read_options and not isinstance(judgments, (str, Path)):
        raise TypeError(f"reader options {sorted(read_options)} apply to a file, not to a table")
    if isinstance(judgments, (str, Path)):
        source = str(judgments)
        found_pairs, judgments = read_any(judgments, fmt, **read_options)
        if pairs is None:
            pairs = found_pairs
    if not isinstance(judgments, pd.DataFrame):
        raise TypeError(f"judgments must be a DataFrame or a file path, got {type(judgments).__name__}")
    if isinstance(pairs, (str, Path)):
        pairs = _read_pairs(pairs)
    found_pairs, judgments = split_tables(judgments, judge=judge, name="judgments", columns=columns)
    if pairs is None:
        pairs = found_pairs
    if pairs is not None:
        pairs = validate_pairs(pairs)
    judgments = validate_judgments(judgments, pairs)
    if judgments.empty:
        raise ValueError(f"{source}: the judgments table is empty (0 rows), so there is nothing "
                         "to audit" + (f"; the pairs table has {len(pairs):,} pairs, which need "
                                       "judgments of them" if pairs is not None else ""))
    return judgments, pairs, source


def _read_pairs(path: str | Path) -> pd.DataFrame:
    from judgekit.data.table import read_pairs

    return read_pairs(path)


def _progress(items: list, enabled: bool, what: str):
    if not enabled:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=f"audit: {what}", unit=what.rstrip("s"), leave=False)


def _quiet(s: Any, fn: Callable[[], Any]) -> Any:
    """Run a metric; its MetricWarnings (an estimate that broke down for some group) become
    notes of the section, shown in the report; other warnings pass through."""
    from judgekit.exceptions import MetricWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MetricWarning)
        out = fn()
    for w in caught:
        if issubclass(w.category, MetricWarning):
            if str(w.message) not in s.notes:
                s.notes.append(str(w.message))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return out
