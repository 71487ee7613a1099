r"""Judging the Judges (Shi et al., 2024): position bias of 9 judges on MT-Bench and DevBench.

Upstream: Slimshilin/Position-Bias-Analyzer (MIT).

- ``judgment_data/data_<B>_repetition/Repetition<k>-..._record0_<judge>_<n>/record_<judge>_<n>.tsv``:
  the three repetitions (k = 1, 2, 3) of every judge on a sample of questions, both orders,
  with the question, both answers and the judge's raw text in column ``<judge>``.
- ``judgment_data/data_<B>_position_bias/..._record0_<judge>_<n>/tmp.pkl``: the full runs of
  some judges, a pickled ``dict`` of ``"question;model_A;model_B" -> raw judge text``. Pickles
  are read with :func:`judgekit.data._pickle.safe_loads`, which refuses anything but plain
  containers and strings. Their questions and answers come from ``QA_data/full_data/<B>/*.xlsx``.

``model_A`` is the model shown first. judgekit makes one pair per (question, two models) with
the models in alphabetical order as a and b, so ``order`` is "ab" when model a was shown first.

Verdicts are extracted from the raw texts exactly as the study's own pipeline did (the
``match_answer`` rule of Shi et al.'s analysis code, whose logs record each run's extraction and
consistency rates): the **first** match of ``\[\[([ABCD])\]\]`` on MT-Bench (3 options:
``[[A]]``, ``[[B]]``, ``[[C]]`` = tie) and of ``(?:选择：|Choice: )([ABCD])`` on DevBench
(2 options: exactly ``Choice: A`` / ``Choice: B``). A text without a match is invalid (verdict
missing, ``error`` says why), and so is an option the benchmark does not offer (``D``, or ``C``
on DevBench; none occurs in the released data). With this rule all 62 consistency rates logged
by the study (54 repetition runs, 8 full runs) are reproduced exactly, counts included.

This is the studies' rule for the studies' data. judgekit's own engine parser
(:meth:`judgekit.Template.parse`) is stricter for judges judgekit runs itself: it reads only the
judge's final answer line and calls a reply that names two verdicts invalid.

:func:`read_judging_the_judges` reads the same ``record_<judge>_<n>.tsv`` layout from a folder of
your own runs of Shi et al.'s code, with the same parsing, so a table you read equals what the
loader returns for the same files. Files may be plain or gzip-compressed (``.gz``).
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd

from judgekit._stamp import stamped
from judgekit.data._common import as_list, check_names, find_files, read_file, reads
from judgekit.data._pickle import safe_loads
from judgekit.data.fetch import DataFile, read_bytes, registry_files
from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["read_judging_the_judges"]

BENCHMARKS = ("MTBench", "DevBench")
RUNS = ("repetition", "full")

_DIR = re.compile(r"record0_(?P<judge>.+)_(?P<options>\d)$")
_REP = re.compile(r"^Repetition(?P<k>\d+)-")
# Shi et al.'s extraction, character for character (first match wins).
_MT = re.compile(r"\[\[([ABCD])\]\]")
_DEV = re.compile("(?:选择：|Choice: )([ABCD])")
#: Options each benchmark's prompt offers ("C" is MT-Bench's tie).
OPTIONS = {"MTBench": "ABC", "DevBench": "AB"}


def parse_verdict(text: object, benchmark: str) -> str | None:
    """The option the judge chose, extracted as Shi et al.'s pipeline did: the first match.

    Returns "A" (the response shown first), "B" (second), "C" (tie, MT-Bench only), or None when
    the text states no verdict in the benchmark's format. An extracted option the benchmark does
    not offer (``[[D]]``) is returned as is; the loader marks it invalid.

    Examples
    --------
    >>> parse_verdict("Final verdict: [[B]]", "MTBench")
    'B'
    >>> parse_verdict("**[[A]]** is better than **[[B]]**.", "MTBench")  # the first one counts
    'A'
    >>> parse_verdict("Choice: A\\nReason: ...", "DevBench")
    'A'
    >>> parse_verdict("**Choice:** A", "DevBench") is None  # not the format the study parsed
    True
    >>> parse_verdict("I cannot decide.", "MTBench") is None
    True
    """
    if benchmark not in OPTIONS:
        raise ValueError(f"unknown benchmark {benchmark!r}; known: {', '.join(OPTIONS)}")
    if not isinstance(text, str):
        return None
    found = (_MT if benchmark == "MTBench" else _DEV).search(text)
    return found.group(1) if found else None


def _files() -> list[dict]:
    out = []
    for f in registry_files("judging_the_judges"):
        parts = f.path.split("/")
        if parts[0] != "judgment_data":
            continue
        m = _DIR.search(parts[2])
        bench = parts[1].split("_")[1]
        run = "repetition" if parts[1].endswith("_repetition") else "full"
        if run == "repetition" and not parts[-1].endswith(".tsv"):
            continue  # the repetition pickles duplicate the TSVs' raw texts
        if run == "full" and parts[-1] != "tmp.pkl":
            continue
        rep = _REP.match(parts[2])
        out.append({"entry": f, "benchmark": bench, "run": run, "judge": m["judge"],
                    "repeat": int(rep["k"]) - 1 if rep else 0})
    return out


def judges() -> pd.DataFrame:
    """The (benchmark, run, judge) combinations available upstream, with their repeats."""
    rows = [{k: v for k, v in f.items() if k != "entry"} for f in _files()]
    df = pd.DataFrame(rows)
    return (df.groupby(["benchmark", "run", "judge"])["repeat"].nunique()
            .rename("repeats").reset_index())


def _join_turns(first: object, second: object) -> str:
    return f"[Turn 1]\n{first}\n\n[Turn 2]\n{second}"


def _text(value: object) -> str:
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)


def _qa_full(benchmark: str) -> pd.DataFrame:
    """Question table of a full run: question id, prompt, reference, task, answers by model."""
    (entry,) = [f for f in registry_files("judging_the_judges")
                if f.path.startswith(f"QA_data/full_data/{benchmark}/")]
    return pd.read_excel(io.BytesIO(read_bytes(entry)), dtype={"index": str})


def _canonical(key: str) -> tuple[str, str, str, str]:
    """(question id, model a, model b, order) from a "question;model_A;model_B" key."""
    qid, first, second = key.rsplit(";", 2)
    a, b = sorted((first, second))
    return qid, a, b, "ab" if first == a else "ba"


def _verdicts(raw: list[object], orders: list[str], benchmark: str) -> tuple[list, list]:
    verdicts, errors = [], []
    for text, order in zip(raw, orders):
        pos = parse_verdict(text, benchmark)
        if pos is None:
            verdicts.append(None)
            errors.append("no verdict found in the judge's text")
        elif pos not in OPTIONS[benchmark]:
            verdicts.append(None)
            errors.append(f"verdict {pos!r} is not one of the benchmark's options "
                          f"{', '.join(OPTIONS[benchmark])}")
        elif pos == "C":
            verdicts.append("tie")
            errors.append(None)
        else:
            first_is_a = order == "ab"
            verdicts.append("a" if (pos == "A") == first_is_a else "b")
            errors.append(None)
    return verdicts, errors


def judgment_frame(keys: list[str], texts: list[object], *, benchmark: str, run: str,
                   judge: str, repeat: int) -> pd.DataFrame:
    """The judgments table of one record file: one row per "question;model_A;model_B" key."""
    canon = [_canonical(k) for k in keys]
    orders = [c[3] for c in canon]
    verdicts, errors = _verdicts(texts, orders, benchmark)
    return pd.DataFrame({
        "pair_id": [f"{benchmark}/{run}/{q};{a};{b}" for q, a, b, _ in canon],
        "judge": judge, "order": orders, "repeat": repeat, "verdict": verdicts,
        "p_a": float("nan"), "benchmark": benchmark, "run": run,
        "raw": pd.Series(texts, dtype=object), "error": errors,
    })


def _pair_rows(benchmark: str, run: str, qid: str, a: str, b: str, prompt: str, resp_a: str,
               resp_b: str, reference: str, task: str) -> dict:
    return {"pair_id": f"{benchmark}/{run}/{qid};{a};{b}", "prompt": prompt, "response_a": resp_a,
            "response_b": resp_b, "label": None, "model_a": a, "model_b": b,
            "dataset": benchmark, "task": task, "reference": reference or None,
            "benchmark": benchmark, "run": run, "question_id": qid}


#: Columns of a record TSV besides the judge's, by benchmark layout.
TSV_COLUMNS = {
    "MTBench": ("cmp_index", "question_1", "question_2", "answer1_1", "answer1_2", "answer2_1",
                "answer2_2", "reference_answer_1", "reference_answer_2", "task"),
    "DevBench": ("cmp_index", "question", "answer1", "answer2", "reference_answer", "task"),
}


def read_record_tsv(data: bytes, *, name: str, benchmark: str, judge: str | None = None,
                    run: str = "repetition") -> tuple[list[str], list[object], dict, str]:
    """Parse a record TSV: (keys, raw texts, pairs by pair_id, judge column).

    ``judge`` names the column with the judge's texts; None takes the last column, as the study's
    code does.
    """
    df = pd.read_csv(io.BytesIO(data), sep="\t", dtype=object, keep_default_na=False)
    missing = [c for c in TSV_COLUMNS[benchmark] if c not in df.columns]
    if missing:
        raise ValueError(f"{name}: not a {benchmark} record TSV: missing column(s) "
                         f"{', '.join(missing)} (has {', '.join(map(str, df.columns[:12]))})")
    if judge is None:
        judge = str(df.columns[-1])
    elif judge not in df.columns:
        raise ValueError(f"{name}: no column {judge!r} with the judge's texts")
    pairs = {}
    for row in df.to_dict("records"):
        try:
            qid, a, b, order = _canonical(row["cmp_index"])
        except ValueError:
            raise ValueError(f"{name}: cmp_index {row['cmp_index']!r} is not "
                             "'question;model_A;model_B'") from None
        first_is_a = order == "ab"
        if benchmark == "MTBench":
            prompt = _join_turns(row["question_1"], row["question_2"])
            ans1 = _join_turns(row["answer1_1"], row["answer1_2"])
            ans2 = _join_turns(row["answer2_1"], row["answer2_2"])
            ref1, ref2 = _text(row["reference_answer_1"]), _text(row["reference_answer_2"])
            reference = _join_turns(ref1, ref2) if (ref1 or ref2) else ""
        else:
            prompt, ans1, ans2 = row["question"], row["answer1"], row["answer2"]
            reference = _text(row["reference_answer"])
        resp_a, resp_b = (ans1, ans2) if first_is_a else (ans2, ans1)
        pid = f"{benchmark}/{run}/{qid};{a};{b}"
        if pid not in pairs:
            pairs[pid] = _pair_rows(benchmark, run, qid, a, b, prompt, resp_a, resp_b,
                                    reference, _text(row["task"]))
    return df["cmp_index"].tolist(), df[judge].tolist(), pairs, judge


def _from_pickle(entry: DataFile, benchmark: str, qa: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    texts = safe_loads(read_bytes(entry), source=entry.name)
    if not isinstance(texts, dict) or not all(isinstance(v, str) for v in texts.values()):
        raise ValueError(f"{entry.name}: expected a dict of 'question;model_A;model_B' -> text")
    by_q = {str(r["index"]): r for r in qa.to_dict("records")}
    pairs = {}
    for key in texts:
        qid, a, b, _ = _canonical(key)
        pid = f"{benchmark}/full/{qid};{a};{b}"
        if pid in pairs:
            continue
        if qid not in by_q:
            raise ValueError(f"{entry.name}: question {qid!r} is not in the full question table")
        q = by_q[qid]
        if benchmark == "MTBench":
            prompt = _join_turns(q["question_1"], q["question_2"])
            resp = {m: _join_turns(q[f"answer_1-{m}"], q[f"answer_2-{m}"]) for m in (a, b)}
            ref1, ref2 = _text(q["reference_answer_1"]), _text(q["reference_answer_2"])
            reference = _join_turns(ref1, ref2) if (ref1 or ref2) else ""
        else:
            prompt = _text(q["question"])
            resp = {m: _text(q[f"answer-{m}"]) for m in (a, b)}
            reference = _text(q["reference_answer"])
        pairs[pid] = _pair_rows(benchmark, "full", qid, a, b, prompt, resp[a], resp[b], reference,
                                _text(q["task"]))
    return pd.DataFrame({"_key": pd.Series(list(texts), dtype=object),
                         "_raw": pd.Series(list(texts.values()), dtype=object)}), pairs


def load(benchmark: str | list[str] | None = None, run: str | list[str] | None = None,
         judges: str | list[str] | None = None, *, progress: bool = True
         ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pairs and parsed verdicts of the Judging-the-Judges study (both benchmarks, both runs)."""
    benches = as_list(benchmark, "benchmark") or list(BENCHMARKS)
    check_names("benchmark", benches, list(BENCHMARKS))
    runs = as_list(run, "run") or list(RUNS)
    check_names("run", runs, list(RUNS))
    files = [f for f in _files() if f["benchmark"] in benches and f["run"] in runs]
    judge_list = as_list(judges, "judges")
    if judge_list is not None:
        check_names("Judging-the-Judges judge", judge_list, sorted({f["judge"] for f in _files()}))
        files = [f for f in files if f["judge"] in judge_list]

    pairs: dict[str, dict] = {}
    frames = []
    qa_cache: dict[str, pd.DataFrame] = {}
    for f in files:
        bench, run_name, judge = f["benchmark"], f["run"], f["judge"]
        if run_name == "repetition":
            entry = f["entry"]
            keys, texts, new_pairs, _ = read_record_tsv(
                read_bytes(entry, progress=progress), name=entry.name, benchmark=bench, judge=judge)
        else:
            if bench not in qa_cache:
                qa_cache[bench] = _qa_full(bench)
            raw, new_pairs = _from_pickle(f["entry"], bench, qa_cache[bench])
            keys, texts = raw["_key"].tolist(), raw["_raw"].tolist()
        for pid, row in new_pairs.items():
            pairs.setdefault(pid, row)
        frames.append(judgment_frame(keys, texts, benchmark=bench, run=run_name, judge=judge,
                                     repeat=f["repeat"]))
    if not frames:
        raise ValueError(f"no Judging-the-Judges files match benchmark={benches}, run={runs}, "
                         f"judges={judge_list}; see judgekit.data.judging_the_judges.judges()")
    return pd.DataFrame(list(pairs.values())), pd.concat(frames, ignore_index=True)


# ------------------------------------------------------------- reading your own runs

_RECORD = re.compile(r"^record_(?P<judge>.+)_(?P<options>\d+)\.tsv(?:\.gz)?$")
_REPETITION = re.compile(r"^Repetition(?P<k>\d+)-")


def _benchmark_of(data: bytes, source: Path) -> str:
    header = data.split(b"\n", 1)[0].decode("utf-8", "replace")
    columns = {c.strip().strip('"') for c in header.split("\t")}
    if set(TSV_COLUMNS["MTBench"]) <= columns:
        return "MTBench"
    if set(TSV_COLUMNS["DevBench"]) <= columns:
        return "DevBench"
    raise ValueError(f"{source}: neither an MT-Bench-style record TSV (columns "
                     f"{', '.join(TSV_COLUMNS['MTBench'])}) nor a DevBench-style one "
                     f"({', '.join(TSV_COLUMNS['DevBench'])})")


def _by_header(path: Path, name: str) -> str | None:
    if ".tsv" in name and "cmp_index" in read_file(path).split(b"\n", 1)[0].decode(
            "utf-8", "replace").split("\t"):
        return "its header has Judging-the-Judges' cmp_index"
    return None


@reads("jtj", "jk.read_judging_the_judges: Judging-the-Judges-style record TSVs", rank=45,
       by_header=_by_header, layout="Judging-the-Judges record_*.tsv",
       by_name=lambda name: ("the file is named record_<judge>_<n>.tsv"
                             if name.startswith("record_") and ".tsv" in name else None),
       by_folder=lambda path: ("the folder holds record_<judge>_<n>.tsv files"
                               if next(path.rglob("record_*.tsv*"), None) is not None else None))
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
    if benchmark is not None and benchmark not in OPTIONS:
        raise ValueError(f"unknown benchmark {benchmark!r}; known: {', '.join(OPTIONS)}")
    root = Path(path)
    files = find_files(root, ("record_*.tsv", "record_*.tsv.gz"), "record_<judge>_<n>.tsv")
    pairs: dict[str, dict] = {}
    frames = []
    for f in files:
        named = _RECORD.match(f.name)
        named_judge = named["judge"] if named else None
        data = read_file(f)
        bench = benchmark or _benchmark_of(data, f)
        rep = _REPETITION.match(f.parent.name)
        run, repeat = ("repetition", int(rep["k"]) - 1) if rep else ("full", 0)
        header = _header(data)
        column = next((c for c in (judge, named_judge) if c is not None and c in header), None)
        keys, texts, new_pairs, column = read_record_tsv(
            data, name=str(f), benchmark=bench, judge=column, run=run)
        for pid, row in new_pairs.items():
            pairs.setdefault(pid, row)
        frames.append(judgment_frame(keys, texts, benchmark=bench, run=run,
                                          judge=judge or named_judge or column, repeat=repeat))
    pairs_df = validate_pairs(pd.DataFrame(list(pairs.values())),
                              name=f"Judging-the-Judges pairs from {root}")
    judgments = validate_judgments(pd.concat(frames, ignore_index=True), pairs_df,
                                   name=f"Judging-the-Judges judgments from {root}")
    return pairs_df, judgments


def _header(data: bytes) -> set[str]:
    line = data.split(b"\n", 1)[0].decode("utf-8", "replace")
    return {c.strip().strip('"') for c in line.split("\t")}
