"""Tell which of the formats judgekit reads a judgment file or folder is in, and read it."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit._jsonfile import parse_json
from judgekit._stamp import stamped
from judgekit.data.read_arena_battles import ARENA_MARKS, is_arena_record, read_arena_battles
from judgekit.data.readers import _read, read_judging_the_judges, read_llmbar_results

__all__ = ["FORMATS", "detect_format", "read_any"]

#: The formats :func:`read_any` reads, by name, with the reader each uses.
FORMATS: dict[str, str] = {
    "alpacaeval": "jk.read_alpacaeval: AlpacaEval annotations.json (a file or results folder)",
    "mtbench": "jk.read_mtbench: FastChat MT-Bench pairwise, human or single-answer judgments",
    "arena-hard": "jk.read_arena_hard: Arena-Hard-Auto judgment JSONL with games",
    "arena-battles": "jk.read_arena_battles: Chatbot Arena battles (crowd votes), as the crowd's "
                     "judgments",
    "llmbar": "jk.read_llmbar_results: LLMBar-style result.json files",
    "jtj": "jk.read_judging_the_judges: Judging-the-Judges-style record TSVs",
    "csv": "jk.read_judgments: a table (CSV, TSV, JSON, JSONL, parquet) of judgments",
}


def _first_record(path: Path) -> Any:
    """The first JSON record of a JSON or JSON-lines file (None when it is neither)."""
    try:
        data = _read(path)
        if data.lstrip()[:1] == b"[":
            records = parse_json(data, path)
            return records[0] if isinstance(records, list) and records else None
        return parse_json(data.lstrip().split(b"\n", 1)[0], path)
    except (OSError, ValueError):
        return None  # not decided here: the reader chosen says what is wrong with the file


def _parquet_columns(path: Path) -> list[str]:
    try:
        import pyarrow.parquet as pq

        return list(pq.read_schema(io.BytesIO(_read(path))).names)
    except Exception:  # not decided here: the reader chosen says what is wrong with the file
        return []


def _format_of_record(record: Any) -> tuple[str, str] | None:
    if not isinstance(record, dict):
        return None
    keys = set(record)
    if "games" in keys:
        return "arena-hard", "its records have Arena-Hard's 'games'"
    if {"g1_winner", "g2_winner"} <= keys:
        return "mtbench", "its records are FastChat pairwise judgments (g1_winner, g2_winner)"
    if is_arena_record(record):
        return "arena-battles", ("its records are Chatbot Arena battles (model_a, model_b, "
                                 "winner, " + ", ".join(k for k in ARENA_MARKS if k in keys)[:60]
                                 + ")")
    if {"winner", "conversation_a", "conversation_b"} <= keys:
        return "mtbench", "its records are MT-Bench human votes (winner, conversation_a/b)"
    if {"score", "model", "question_id", "judgment"} <= keys:
        return "mtbench", "its records are FastChat single-answer grades (score)"
    if {"instruction", "output_1", "output_2"} <= keys and "preference" in keys:
        return "alpacaeval", "its records are AlpacaEval annotations (instruction, output_1/2, preference)"
    if {"input", "output_1", "output_2", "results"} <= keys:
        return "llmbar", "its records are LLMBar results (input, output_1/2, results)"
    return None


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
        if next(path.rglob("annotations.json*"), None) is not None:
            return "alpacaeval", "the folder holds annotations.json files"
        if next(path.rglob("record_*.tsv*"), None) is not None:
            return "jtj", "the folder holds record_<judge>_<n>.tsv files"
        if any(p.parents[2].name == "evaluators" for p in path.rglob("result.json*")
               if len(p.parents) > 2):
            return "llmbar", "the folder holds <set>/evaluators/<judge>/<strategy>/result.json files"
        kinds = {}
        for f in sorted(path.rglob("*.jsonl*")):
            found = _format_of_record(_first_record(f))
            if found:
                kinds.setdefault(found[0], found[1])
        if "arena-hard" in kinds:
            return "arena-hard", "the folder holds judgment files with Arena-Hard's 'games'"
        if "mtbench" in kinds:  # FastChat's layout, also arena-bench's folder of single grades
            return "mtbench", ("the folder holds FastChat judgment files ("
                               + kinds["mtbench"].removeprefix("its records are ") + ")")
        raise ValueError(
            f"{path}: a folder in none of the layouts judgekit knows (AlpacaEval annotations.json, "
            "LLMBar result.json, Judging-the-Judges record_*.tsv, Arena-Hard judgment JSONL, "
            "FastChat judgment JSONL); "
            "pass the judgment file itself")
    name = path.name.lower()
    if name in ("annotations.json", "annotations.json.gz"):
        return "alpacaeval", "the file is named annotations.json"
    if name.startswith("record_") and ".tsv" in name:
        return "jtj", "the file is named record_<judge>_<n>.tsv"
    if ".json" in name:
        found = _format_of_record(_first_record(path))
        if found:
            return found
        return "csv", "its records match no benchmark's layout: read as a table of judgments"
    if ".parquet" in name or name.endswith((".pq", ".pq.gz")):
        columns = _parquet_columns(path)
        if is_arena_record(dict.fromkeys(columns, "")):
            return "arena-battles", "its columns are Chatbot Arena battles' (model_a, model_b, winner)"
    if ".csv" in name:
        header = _read(path).split(b"\n", 1)[0].decode("utf-8", "replace")
        if is_arena_record(dict.fromkeys((c.strip().strip('"') for c in header.split(",")), "")):
            return "arena-battles", ("its columns are Chatbot Arena battles' (model_a, model_b, "
                                     "winner_model_a, winner_model_b, winner_tie)")
    if ".tsv" in name:
        header = _read(path).split(b"\n", 1)[0].decode("utf-8", "replace")
        if "cmp_index" in header.split("\t"):
            return "jtj", "its header has Judging-the-Judges' cmp_index"
    return "csv", "read as a table of judgments (by its suffix)"


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
    from judgekit.data.read_alpacaeval import read_alpacaeval
    from judgekit.data.read_arena_hard import read_arena_hard
    from judgekit.data.read_mtbench import read_mtbench
    from judgekit.data.read_table import read_judgments

    if format == "auto":
        format, _ = detect_format(path)
    readers = {"alpacaeval": read_alpacaeval, "mtbench": read_mtbench,
               "arena-hard": read_arena_hard, "llmbar": read_llmbar_results,
               "jtj": read_judging_the_judges, "arena-battles": read_arena_battles}
    if format == "arena-battles":
        # read as the crowd's judgments: a label from the same votes would make the crowd agree
        # with itself (pass the file as pairs= of a judge's verdicts to audit against the crowd)
        options.setdefault("labels", False)
    if format == "csv":
        return read_judgments(path, pairs=pairs, **options)
    if format not in readers:
        raise ValueError(f"unknown format {format!r}; known: auto, {', '.join(FORMATS)}")
    if pairs is not None:
        raise ValueError(f"pairs= is for tables of judgments; the {format} format carries its pairs")
    return readers[format](path, **options)
