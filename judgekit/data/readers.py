"""Read your own runs in the LLMBar and Judging-the-Judges layouts as judgekit's two tables.

The dataset loaders read the studies' released files; these readers read the same layouts from
a folder of your own runs (LLMBar's evaluation code writes ``result.json`` files, Shi et al.'s
writes ``record_<judge>_<n>.tsv`` files), with the same parsing, so a table you read equals what
the loader returns for the same files. Files may be plain or gzip-compressed (``.gz``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from judgekit._jsonfile import parse_json, parse_jsonl
from judgekit._stamp import stamped
from judgekit.data import judging_the_judges as _jtj
from judgekit.data import llmbar as _llmbar
from judgekit.data._gzip import InflateLimitError, gunzip, limit_for
from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["read_judging_the_judges", "read_llmbar_results"]


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        try:
            data = gunzip(data, limit_for(len(data), None))
        except (InflateLimitError, EOFError, OSError, ValueError) as err:
            raise ValueError(f"{path}: not a readable gzip file ({err})") from None
    return data


def _json(path: Path) -> object:
    return parse_json(_read(path), path)


def _jsonl(path: Path) -> list:
    """The records of a JSON-lines file (blank lines skipped); a bad line is named."""
    return parse_jsonl(_read(path), path)


def _find(path: Path, names: tuple[str, ...], pattern: str) -> list[Path]:
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    if path.is_file():
        return [path]
    found = sorted({p for name in names for p in path.rglob(name) if p.is_file()})
    if not found:
        raise ValueError(f"no {pattern} file under {path}")
    return found


def _beside(folder: Path, name: str) -> Path | None:
    for candidate in (folder / name, folder / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    return None


# ------------------------------------------------------------------------------------- LLMBar

def _llmbar_set(set_dir: Path, root: Path, set_name: str | None) -> tuple[str, str | None]:
    """The set's name and group: LLMBar's own name for a folder of its release, else the
    folder's path below ``root``."""
    if set_name is not None:
        return set_name, None
    posix = set_dir.as_posix()
    for name, (sub, group) in _llmbar.SETS.items():
        if posix == sub or posix.endswith("/" + sub):
            return name, group
    try:
        rel = set_dir.relative_to(root).as_posix()
    except ValueError:
        rel = "."
    return (set_dir.name if rel == "." else rel), None


@stamped
def read_llmbar_results(path: str | Path, *, judge: str | None = None,
                        strategy: str | None = None, set_name: str | None = None
                        ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read LLMBar-style evaluation results (your own runs of its code) as pairs and judgments.

    Parameters
    ----------
    path : str or Path
        A ``result.json`` file, or a folder searched recursively for them. The layout of
        LLMBar's release is understood: ``<set>/evaluators/<judge>/<strategy>/result.json`` with
        the set's ``<set>/dataset.json`` (its pairs and gold labels) two levels above
        ``evaluators``. Without a ``dataset.json`` the pairs come from the result records.
    judge, strategy : str, optional
        Names for a ``result.json`` outside that layout (required then); they override the
        folder names otherwise.
    set_name : str, optional
        The set's name in ``pair_id`` and ``dataset`` (default: LLMBar's name for a folder of its
        release, e.g. ``Natural``, else the set folder's path below ``path``).

    Returns
    -------
    pairs, judgments : DataFrame
        Validated tables with the columns of ``jk.load_dataset("llmbar")``: pairs ``pair_id``
        (``llmbar/<set>/<index>``), ``dataset``, ``group``, labels "a"/"b" from ``label`` 1/2;
        judgments in both orders (``order`` "ab" is ``swap = False``) with ``judge`` =
        ``<judge>/<strategy>``, ``model``, ``template``, ``raw``, ``error``.

    Raises
    ------
    ValueError
        For a file that is not in this format, names the file and what is missing.

    Notes
    -----
    Each record of ``result.json`` is a pair (``input``, ``output_1``, ``output_2``, ``label``)
    with ``results``, a list of rounds; the last round holds the verdict of both orders::

        [{"input": "Write a haiku.", "output_1": "...", "output_2": "...", "label": 1,
          "results": [{"swap = False": {"winner": "1", "completion": "Output (a)"},
                       "swap = True": {"winner": "1", "completion": "Output (b)"}}]}]

    ``winner`` is "1" or "2" in response terms (whichever order was shown), or null when
    LLMBar's parser found no verdict (kept as an invalid verdict with ``error``).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> import judgekit as jk
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "MySet" / "evaluators" / "my-judge" / "Vanilla"
    >>> folder.mkdir(parents=True)
    >>> rounds = [{"swap = False": {"winner": "1"}, "swap = True": {"winner": "1"}}]
    >>> record = {"input": "2+2?", "output_1": "4", "output_2": "5", "label": 1, "results": rounds}
    >>> _ = (folder / "result.json").write_text(json.dumps([record]))
    >>> pairs, judgments = jk.read_llmbar_results(folder.parents[2])
    >>> judgments[["pair_id", "judge", "order", "verdict"]].to_dict("records")
    [{'pair_id': 'llmbar/MySet/0', 'judge': 'my-judge/Vanilla', 'order': 'ab', 'verdict': 'a'}, {'pair_id': 'llmbar/MySet/0', 'judge': 'my-judge/Vanilla', 'order': 'ba', 'verdict': 'a'}]
    """
    root = Path(path)
    files = _find(root, ("result.json", "result.json.gz"), "result.json")
    base = root if root.is_dir() else root.parent
    by_set: dict[Path, list[tuple[Path, str, str]]] = {}
    for f in files:
        in_layout = len(f.parents) > 3 and f.parents[2].name == "evaluators"
        j = judge or (f.parents[1].name if in_layout else None)
        s = strategy or (f.parent.name if in_layout else None)
        if j is None or s is None:
            raise ValueError(f"{f}: not in <set>/evaluators/<judge>/<strategy>/result.json; pass "
                             "judge= and strategy= to name the judge and prompting strategy")
        set_dir = f.parents[3] if in_layout else f.parent
        by_set.setdefault(set_dir, []).append((f, j, s))
    pair_frames, rec = [], None
    for set_dir, results in by_set.items():
        name, group = _llmbar_set(set_dir, base, set_name)
        dataset = _beside(set_dir, "dataset.json")
        if dataset is not None:
            records, source = _json(dataset), str(dataset)
        else:  # the result records carry the pairs themselves
            records, source = _json(results[0][0]), str(results[0][0])
        pair_frames.append(_llmbar.pairs_frame(records, name, group, source))
        for f, j, s in sorted(results, key=lambda t: (t[1], t[2])):
            rows = _llmbar.judgment_rows(_json(f), records, name, j, s, str(f))
            rec = rows if rec is None else {k: rec[k] + v for k, v in rows.items()}
    pairs = pd.concat(pair_frames, ignore_index=True)
    if pairs["pair_id"].duplicated().any():
        dup = pairs.loc[pairs["pair_id"].duplicated(), "pair_id"].iloc[0]
        raise ValueError(f"two sets under {root} share the name of {dup!r}; pass set_name= or "
                         "read them separately")
    pairs = validate_pairs(pairs, name=f"LLMBar pairs from {root}")
    judgments = validate_judgments(_llmbar.judgments_frame(rec), pairs,
                                   name=f"LLMBar judgments from {root}")
    return pairs, judgments


# --------------------------------------------------------------------------- Judging the Judges

_RECORD = re.compile(r"^record_(?P<judge>.+)_(?P<options>\d+)\.tsv(?:\.gz)?$")
_REPETITION = re.compile(r"^Repetition(?P<k>\d+)-")


def _benchmark_of(data: bytes, source: Path) -> str:
    header = data.split(b"\n", 1)[0].decode("utf-8", "replace")
    columns = {c.strip().strip('"') for c in header.split("\t")}
    if set(_jtj.TSV_COLUMNS["MTBench"]) <= columns:
        return "MTBench"
    if set(_jtj.TSV_COLUMNS["DevBench"]) <= columns:
        return "DevBench"
    raise ValueError(f"{source}: neither an MT-Bench-style record TSV (columns "
                     f"{', '.join(_jtj.TSV_COLUMNS['MTBench'])}) nor a DevBench-style one "
                     f"({', '.join(_jtj.TSV_COLUMNS['DevBench'])})")


@stamped
def read_judging_the_judges(path: str | Path, *, benchmark: str | None = None,
                            judge: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read Judging-the-Judges-style record TSVs (your own runs of Shi et al.'s code).

    Parameters
    ----------
    path : str or Path
        A ``record_<judge>_<n>.tsv`` file, or a folder searched recursively for them. A file in a
        folder named ``Repetition<k>-...`` is repetition ``k`` (``run`` "repetition",
        ``repeat`` k - 1), as in the study's release; any other is a single run (``run``
        "full", ``repeat`` 0).
    benchmark : {"MTBench", "DevBench"}, optional
        The verdict format: MT-Bench-style files have two turns (``question_1``,
        ``answer1_1``, ...) and verdicts ``[[A]]`` / ``[[B]]`` / ``[[C]]`` (tie); DevBench-style
        files have one question and verdicts ``Choice: A`` / ``Choice: B``. Inferred from the
        columns when omitted.
    judge : str, optional
        The judge's name (default: from the file name; its column is the one of that name, else
        the last column, as the study's code takes it).

    Returns
    -------
    pairs, judgments : DataFrame
        Validated tables with the columns of ``jk.load_dataset("judging_the_judges")``: one pair
        per (question, two models) with the models in alphabetical order as a and b,
        ``pair_id`` ``<benchmark>/<run>/<question>;<model a>;<model b>``; the verdict is the
        first one stated (the study's extraction, see :func:`parse_verdict`), invalid with
        ``error`` when none is.

    Raises
    ------
    ValueError
        For a file that is not in this format, naming it and the missing columns.

    Notes
    -----
    A record TSV has one row per comparison, ``cmp_index`` = ``question;model_A;model_B`` with
    ``model_A`` shown first, the texts, and the judge's reply in the judge's column::

        cmp_index         question  answer1  answer2  reference_answer  task  my-judge
        q1;model-x;model-y  Design..  ...      ...                        uml   Choice: A\\nReason: ...
        q1;model-y;model-x  Design..  ...      ...                        uml   Choice: B\\nReason: ...

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import pandas as pd
    >>> import judgekit as jk
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> rows = pd.DataFrame({"cmp_index": ["q1;x;y", "q1;y;x"], "question": "Design it.",
    ...                      "answer1": ["X's design", "Y's design"], "answer2": ["Y's design", "X's design"],
    ...                      "reference_answer": "", "task": "uml", "my-judge": ["Choice: A", "Choice: B"]})
    >>> rows.to_csv(folder / "record_my-judge_2.tsv", sep="\\t", index=False)
    >>> pairs, judgments = jk.read_judging_the_judges(folder)
    >>> judgments[["pair_id", "order", "verdict"]].to_dict("records")
    [{'pair_id': 'DevBench/full/q1;x;y', 'order': 'ab', 'verdict': 'a'}, {'pair_id': 'DevBench/full/q1;x;y', 'order': 'ba', 'verdict': 'a'}]
    """
    if benchmark is not None and benchmark not in _jtj.OPTIONS:
        raise ValueError(f"unknown benchmark {benchmark!r}; known: {', '.join(_jtj.OPTIONS)}")
    root = Path(path)
    files = _find(root, ("record_*.tsv", "record_*.tsv.gz"), "record_<judge>_<n>.tsv")
    pairs: dict[str, dict] = {}
    frames = []
    for f in files:
        named = _RECORD.match(f.name)
        named_judge = named["judge"] if named else None
        data = _read(f)
        bench = benchmark or _benchmark_of(data, f)
        rep = _REPETITION.match(f.parent.name)
        run, repeat = ("repetition", int(rep["k"]) - 1) if rep else ("full", 0)
        header = _header(data)
        column = next((c for c in (judge, named_judge) if c is not None and c in header), None)
        keys, texts, new_pairs, column = _jtj.read_record_tsv(
            data, name=str(f), benchmark=bench, judge=column, run=run)
        for pid, row in new_pairs.items():
            pairs.setdefault(pid, row)
        frames.append(_jtj.judgment_frame(keys, texts, benchmark=bench, run=run,
                                          judge=judge or named_judge or column, repeat=repeat))
    pairs_df = validate_pairs(pd.DataFrame(list(pairs.values())),
                              name=f"Judging-the-Judges pairs from {root}")
    judgments = validate_judgments(pd.concat(frames, ignore_index=True), pairs_df,
                                   name=f"Judging-the-Judges judgments from {root}")
    return pairs_df, judgments


def _header(data: bytes) -> set[str]:
    line = data.split(b"\n", 1)[0].decode("utf-8", "replace")
    return {c.strip().strip('"') for c in line.split("\t")}
