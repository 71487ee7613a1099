"""Tell which of the formats judgekit reads a judgment file or folder is in, and read it.

The formats are declared by their reader modules (:func:`judgekit.data._common.reads` on the
reader function), each with how it is recognised; this module asks them in turn and knows none
by name.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit._jsonfile import parse_json
from judgekit._stamp import stamped
from judgekit.data._common import Format, formats, read_file

__all__ = ["FORMATS", "detect_format", "read_any"]


class _Formats(Mapping):
    """The registered formats by name, each with the reader it uses (in detection order)."""

    def __getitem__(self, name: str) -> str:
        return {f.name: f.about for f in formats()}[name]

    def __iter__(self) -> Iterator[str]:
        return iter([f.name for f in formats()])

    def __len__(self) -> int:
        return len(formats())

    def __repr__(self) -> str:
        return repr(dict(self))


#: The formats :func:`read_any` reads, by name, with the reader each uses.
FORMATS: Mapping[str, str] = _Formats()


def _first_record(path: Path) -> Any:
    """The first JSON record of a JSON or JSON-lines file (None when it is neither)."""
    try:
        data = read_file(path)
        if data.lstrip()[:1] == b"[":
            records = parse_json(data, path)
            return records[0] if isinstance(records, list) and records else None
        return parse_json(data.lstrip().split(b"\n", 1)[0], path)
    except (OSError, ValueError):
        return None  # not decided here: the reader chosen says what is wrong with the file


def _first(test: str, *args: Any) -> tuple[str, str] | None:
    """The first format whose ``test`` claims ``args``, with its reason."""
    for f in formats():
        claim = getattr(f, test)
        reason = claim(*args) if claim else None
        if reason:
            return f.name, reason
    return None


def _format_of_record(record: Any) -> tuple[str, str] | None:
    return _first("by_record", record) if isinstance(record, dict) else None


def _fallback() -> Format:
    return next(f for f in formats() if f.fallback)


def detect_format(path: str | Path) -> tuple[str, str]:
    """Which format a judgment file or folder is in, and why.

    Parameters
    ----------
    path : str or Path
        A file, or a folder of results (AlpacaEval ``annotations.json``, LLMBar ``result.json``,
        Judging-the-Judges ``record_*.tsv`` or Arena-Hard judgment files).

    Returns
    -------
    name, reason : str
        ``name`` is a key of :data:`FORMATS`; ``reason`` says what decided it.

    Raises
    ------
    FileNotFoundError
        When the path does not exist.
    ValueError
        For a folder holding none of the known layouts.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> import judgekit as jk
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "judge.jsonl"
    >>> _ = f.write_text(json.dumps({"question_id": 1, "model": "m", "games": []}) + "\\n")
    >>> jk.detect_format(f)
    ('arena-hard', "its records have Arena-Hard's 'games'")
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    if path.is_dir():
        found = _first("by_folder", path)
        if found:
            return found
        kinds: dict[str, str] = {}
        for f in sorted(path.rglob("*.jsonl*")):
            record_format = _format_of_record(_first_record(f))
            if record_format:
                kinds.setdefault(*record_format)
        for f in formats():
            if f.folder_of_records and f.name in kinds:
                return f.name, f.folder_of_records(kinds[f.name])
        layouts = ", ".join(f.layout for f in formats() if f.layout)
        raise ValueError(
            f"{path}: a folder in none of the layouts judgekit knows ({layouts}); "
            "pass the judgment file itself")
    name = path.name.lower()
    found = _first("by_name", name)
    if found:
        return found
    if ".json" in name:
        found = _format_of_record(_first_record(path))
        if found:
            return found
        return _fallback().name, ("its records match no benchmark's layout: read as a table of "
                                  "judgments")
    found = _first("by_header", path, name)
    if found:
        return found
    return _fallback().name, "read as a table of judgments (by its suffix)"


@stamped
def read_any(
    path: str | Path,
    format: str = "auto",
    *,
    pairs: str | Path | pd.DataFrame | None = None,
    **options: Any,
) -> tuple[pd.DataFrame | None, pd.DataFrame]:
    """Read a judgment file or folder in any format judgekit knows.

    Parameters
    ----------
    path : str or Path
        The file or folder.
    format : str, default "auto"
        ``"auto"`` (:func:`detect_format`) or a key of :data:`FORMATS`.
    pairs : str, Path or DataFrame, optional
        A separate pairs table, for the ``"csv"`` format.
    **options
        Passed to the format's reader (e.g. ``columns=`` for ``"csv"``, ``baseline=`` for
        ``"arena-hard"``, ``single_as_pairs=True`` for ``"mtbench"``). Chatbot Arena battles
        (``"arena-battles"``) are read as the crowd's judgments without labels (``labels=False``:
        a label made of the same votes would agree with them); to audit a judge against the
        crowd, pass the battles file as the judge's ``pairs``.

    Returns
    -------
    pairs, judgments : DataFrame
        As the format's reader returns them (``pairs`` is None for a table without texts).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import judgekit as jk
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "mine.csv"
    >>> _ = f.write_text("pair_id,judge,order,verdict\\np1,j,ab,a\\np1,j,ba,b\\n")
    >>> pairs, judgments = jk.read_any(f)
    >>> pairs is None, len(judgments)
    (True, 2)
    """
    if format == "auto":
        format, _ = detect_format(path)
    known = {f.name: f for f in formats()}
    if format not in known:
        raise ValueError(f"unknown format {format!r}; known: auto, {', '.join(FORMATS)}")
    chosen = known[format]
    if chosen.takes_pairs:
        return chosen.reader(path, pairs=pairs, **options)
    if pairs is not None:
        raise ValueError(f"pairs= is for tables of judgments; the {format} format carries its pairs")
    return chosen.reader(path, **{**chosen.defaults, **options})
