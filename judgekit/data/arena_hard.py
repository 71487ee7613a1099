"""Arena-Hard-Auto: read its judgment files (``model_judgment/<judge>/<model>.jsonl``) as judgekit's two tables."""

from __future__ import annotations

import contextlib
import gc
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from judgekit._stack import caller_level
from judgekit._stamp import stamped
from judgekit.data._common import find_files, jsonl_file, reads
from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["read_arena_hard"]

# Assistant A's preference over B in a verdict label, signed: 2 = significantly better.
_GRADES: dict[str, int] = {
    "A>>B": 2, "A>B": 1, "A=B": 0, "A<B": -1, "A<<B": -2,
    "B<<A": 2, "B<A": 1, "B=A": 0, "B>A": -1, "B>>A": -2,
}
_PROMPT = re.compile(
    r"<\|User Prompt\|>\n(?P<q>.*?)\n\n<\|The Start of Assistant A's Answer\|>\n(?P<a>.*?)\n"
    r"<\|The End of Assistant A's Answer\|>\n\n<\|The Start of Assistant B's Answer\|>\n(?P<b>.*?)\n"
    r"<\|The End of Assistant B's Answer\|>", re.DOTALL)


def _answer_text(record: dict) -> str | None:
    """An answer record's text: v0.1 ``choices[0].turns[-1].content``, v2.0 the last message's
    ``content.answer``."""
    try:
        turn = record["choices"][0]["turns"][-1]
        return str(turn["content"] if isinstance(turn, dict) else turn)
    except (KeyError, IndexError, TypeError):
        pass
    try:
        content = record["messages"][-1]["content"]
        return str(content["answer"] if isinstance(content, dict) else content)
    except (KeyError, IndexError, TypeError):
        return None


def _count(value: object) -> float:
    """A markdown count of Arena-Hard's metadata: an int, or a dict of counts (h1..h6, ...)."""
    if isinstance(value, dict):
        return float(sum(v for v in value.values() if isinstance(v, (int, float))))
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def _answer_meta(record: dict) -> tuple[float, float, float, float]:
    """(token_len, headers, list items, bold) that Arena-Hard recorded with the answer: v0.1 keeps
    ``token_len`` in the turn and, with style control, ``conv_metadata``; v2.0 ``metadata``."""
    meta = record.get("conv_metadata") or record.get("metadata")
    if not isinstance(meta, dict):  # v0.1 without style metadata: the turn's token count only
        try:
            return (_count(record["choices"][0]["turns"][-1].get("token_len")),
                    math.nan, math.nan, math.nan)
        except (KeyError, IndexError, TypeError, AttributeError):
            return (math.nan,) * 4
    tokens = _count(meta.get("token_len"))
    if math.isnan(tokens):
        with contextlib.suppress(KeyError, IndexError, TypeError, AttributeError):
            tokens = _count(record["choices"][0]["turns"][-1].get("token_len"))
    return (tokens, _count(meta.get("header_count")), _count(meta.get("list_count")),
            _count(meta.get("bold_count")))


def _question_text(record: dict) -> str | None:
    if isinstance(record.get("prompt"), str):
        return record["prompt"]
    try:
        content = record["turns"][0]["content"]
        return str(content[0] if isinstance(content, list) else content)
    except (KeyError, IndexError, TypeError):
        return None


def _qid(record: dict) -> str | None:
    value = record.get("uid", record.get("question_id"))
    return None if value is None else str(value)


def _game_prompt(game: dict) -> str | None:
    prompt = game.get("user_prompt")
    if isinstance(prompt, list):  # an image question: [text, images]
        prompt = prompt[0] if prompt and isinstance(prompt[0], str) else None
    if isinstance(prompt, str):
        return prompt
    for message in game.get("prompt") or []:  # v2.0 records the messages
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else None
    return None


def _game_text(game: dict) -> str | None:
    judgment = game.get("judgment")
    if isinstance(judgment, dict):
        judgment = judgment.get("answer")
    return judgment if isinstance(judgment, str) else None


def _bench_of(f: Path) -> Path | None:
    """``<bench>`` of ``<bench>/model_judgment/<judge>/<model>.jsonl``."""
    if len(f.parents) > 2 and f.parents[1].name == "model_judgment":
        return f.parents[2]
    return None


_A_OPEN, _A_CLOSE = "<|The Start of Assistant A's Answer|>\n", "\n<|The End of Assistant A's Answer|>"
_B_OPEN, _B_CLOSE = "<|The Start of Assistant B's Answer|>\n", "\n<|The End of Assistant B's Answer|>"


def _load_texts(bench: Path | None, questions: str | Path | None, answers: str | Path | None
                ) -> tuple[dict[str, dict], dict[str, dict[str, tuple]]]:
    q_path = Path(questions) if questions is not None else (
        bench / "question.jsonl" if bench is not None else None)
    qs: dict[str, dict] = {}
    if q_path is not None and q_path.is_file():
        for r in jsonl_file(q_path):
            if _qid(r) is not None:
                qs[_qid(r)] = {"text": _question_text(r), "category": r.get("category")}
    elif questions is not None:
        raise FileNotFoundError(f"questions: {q_path} does not exist")
    a_dir = Path(answers) if answers is not None else (
        bench / "model_answer" if bench is not None else None)
    ans: dict[str, dict[str, tuple]] = {}
    if a_dir is not None and a_dir.is_dir():
        for f in sorted(a_dir.glob("*.jsonl")):
            for r in jsonl_file(f):
                model = str(r.get("model_id") or r.get("model") or f.stem).split("/")[-1]
                text = _answer_text(r)
                qid = _qid(r)
                if qid is not None and text is not None:
                    ans.setdefault(model, {})[qid] = (text, *_answer_meta(r))
    elif answers is not None:
        raise FileNotFoundError(f"answers: {a_dir} is not a folder")
    return qs, ans


def _matches(prompt: str | None, a: str | None, b: str | None) -> bool | None:
    """Whether both answers are the ones inside the judge's (game 1) prompt; None when there is
    nothing to compare (no prompt in Arena-Hard's template, or an answer file missing). The
    answers are compared in place (no copy of the prompt's parts)."""
    if prompt is None or a is None or b is None:
        return None
    start = prompt.find(_A_OPEN)
    if start < 0:
        return None
    start += len(_A_OPEN)
    if not (prompt.startswith(a, start) and prompt.startswith(_A_CLOSE, start + len(a))):
        return False
    start = prompt.find(_B_OPEN, start + len(a))
    if start < 0:
        return False
    start += len(_B_OPEN)
    return prompt.startswith(b, start) and prompt.startswith(_B_CLOSE, start + len(b))


def _baseline_in_prompt(record: dict, ans: dict[str, dict[str, tuple]]) -> str | None:
    """The one model whose answer file holds the text the judge saw as assistant A in game 1
    (Arena-Hard shows the baseline there), or None when no model or several models fit."""
    games = record.get("games") or []
    prompt = _game_prompt(games[0]) if games and isinstance(games[0], dict) else None
    qid = _qid(record)
    if prompt is None or _A_OPEN not in prompt:
        return None
    fits = [m for m, by_q in ans.items() if qid in by_q
            and (_A_OPEN + by_q[qid][0] + _A_CLOSE) in prompt and m != str(record.get("model"))]
    return fits[0] if len(fits) == 1 else None


_PAIR_COLUMNS = ("pair_id", "prompt", "response_a", "response_b", "model_a", "model_b", "dataset",
                 "task", "instruction_id", "tokens_a", "header_count_a", "list_count_a",
                 "bold_count_a", "tokens_b", "header_count_b", "list_count_b", "bold_count_b",
                 "texts_match_prompt")
_JUDGMENT_COLUMNS = ("pair_id", "judge", "order", "verdict", "score", "margin", "raw", "error")


@contextlib.contextmanager
def _no_cyclic_gc():
    """Pause Python's cyclic garbage collector while the records and rows are built: it would
    rescan the growing heap of small, acyclic objects again and again (about an eighth of the
    time of reading 36,000 pairs). Its previous state is restored after, also on an error."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _columns(names: tuple[str, ...], rows: list[tuple]) -> dict[str, list]:
    """Rows of tuples turned into named columns (lists)."""
    if not rows:
        return {name: [] for name in names}
    return {name: list(column) for name, column in zip(names, zip(*rows))}


def _graded(score: object, order: str) -> tuple[str | None, str | None, int | None, str | None]:
    """A game's (label, verdict, margin, error) from its recorded ``score``; in game 1 ("ab")
    assistant A is the baseline (response a), in game 2 the model."""
    label = str(score).strip() if score is not None else None
    grade = _GRADES.get(label) if label is not None else None
    margin = None if grade is None else (grade if order == "ab" else -grade)
    verdict = None if margin is None else "a" if margin > 0 else "b" if margin < 0 else "tie"
    error = (None if margin is not None else "no verdict label upstream" if label is None
             else f"unknown verdict label {label!r}")
    return label, verdict, margin, error


def _short(names: list[str], k: int = 5) -> str:
    return ", ".join(sorted(names)[:k]) + (f" and {len(names) - k} more" if len(names) > k else "")


@reads("arena-hard", "jk.read_arena_hard: Arena-Hard-Auto judgment JSONL with games", rank=10,
       layout="Arena-Hard judgment JSONL",
       by_record=lambda record: "its records have Arena-Hard's 'games'" if "games" in record else None,
       folder_of_records=lambda reason: "the folder holds judgment files with Arena-Hard's 'games'")
@stamped
def read_arena_hard(
    path: str | Path,
    *,
    baseline: str | None = None,
    questions: str | Path | None = None,
    answers: str | Path | None = None,
    texts: str = "files",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read Arena-Hard-Auto judgments (``model_judgment/<judge>/<model>.jsonl``) as pairs and
    judgments, both games of each question.

    Parameters
    ----------
    path : str or Path
        A judgment JSONL file, or a folder searched recursively for ``*.jsonl`` files with
        ``games`` (e.g. ``data/arena-hard-v0.1/model_judgment/``).
    baseline : str, optional
        The baseline model. Default: the records' ``baseline`` (Arena-Hard v2.0 writes it);
        v0.1 files do not name it (the original benchmark used gpt-4-0314, forks use others),
        so it is the model whose answer file holds the text the judge saw as assistant A in the
        first game (the first of a file's first 50 records where exactly one model's answer
        does), and must be given when no answer file does.
    questions, answers : str or Path, optional
        ``question.jsonl`` and the ``model_answer`` folder (default: those of the benchmark
        folder above ``model_judgment``). Where an answer is not there, its text is taken from
        the judge prompt recorded in the first game; where neither holds it, the text is left
        missing (with a warning naming the models): win rates, Arena-Hard scores and
        Bradley-Terry ratings need no texts, the text-based analyses refuse those pairs.
    texts : {"files", "prompt"}
        Where the answers come from when both exist: the answer files (as Arena-Hard's own
        scripts take them) or the judge prompt (what the judge actually saw). They are compared
        either way, and pairs whose files differ from the prompt are reported.

    Returns
    -------
    pairs, judgments : DataFrame
        Validated tables. Pairs: one per (model, question), ``pair_id``
        ``arena-hard/<model>/<question id>``, the baseline's answer as response a
        (``model_a``), the model's as b; ``instruction_id`` the question id, ``task`` its
        category; ``tokens_a``/``tokens_b`` (the token counts Arena-Hard recorded with the
        answers) and ``header_count_a`` ... ``bold_count_b`` (its ``conv_metadata``) where every
        answer has them, for :func:`judgekit.style_features`; ``texts_match_prompt``: whether
        both answer files equal the answers inside the judge's prompt (missing when there is no
        prompt or file to compare). Judgments: game 1 (the baseline shown as assistant A) has ``order`` "ab",
        game 2 (swapped) "ba"; ``verdict`` in response terms; the graded verdict is kept as
        ``score`` (the label as the judge wrote it, e.g. "A>>B") and ``margin`` (the preference
        for response a: +2 significantly better, +1 slightly, 0 tie, -1, -2); ``judge`` the
        judge model; ``raw`` the judgment text; ``error`` where Arena-Hard found no label.

    Raises
    ------
    ValueError
        For a file that is not in this format, or a record whose baseline is neither recorded
        nor given, naming the file and line.

    Warns
    -----
    UserWarning
        When texts are missing (naming the models), when answer files differ from the answers
        the judge saw (naming the models and counting the pairs), and when records judge the
        baseline against itself (left out: the baseline is 50 by definition).

    Notes
    -----
    One line of an Arena-Hard v0.1 judgment file::

        {"question_id": "328c149ed45a41c0", "model": "my-model", "judge": "gpt-4-1106-preview",
         "games": [{"user_prompt": "<|User Prompt|>\\n...", "judgment": "... [[B>A]]", "score": "B>A"},
                   {"user_prompt": "...", "judgment": "... [[A>>B]]", "score": "A>>B"}]}

    v2.0 adds ``uid`` (for ``question_id``), ``category`` and ``baseline``, and records each
    game's ``prompt`` messages and ``judgment`` as ``{"answer": ...}``. Arena-Hard's own score
    (:func:`judgekit.arena_hard_scores`) counts a significant win as three wins; judgekit's win
    rates count verdicts.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> import judgekit as jk
    >>> def prompt(a, b):
    ...     return (f"<|User Prompt|>\\nName a prime.\\n\\n<|The Start of Assistant A's Answer|>\\n{a}\\n"
    ...             f"<|The End of Assistant A's Answer|>\\n\\n<|The Start of Assistant B's Answer|>\\n{b}\\n"
    ...             "<|The End of Assistant B's Answer|>")
    >>> line = {"question_id": "q1", "model": "mine", "judge": "gpt-4-1106-preview",
    ...         "games": [{"user_prompt": prompt("2", "9"), "judgment": "[[A>>B]]", "score": "A>>B"},
    ...                   {"user_prompt": prompt("9", "2"), "judgment": "[[B>A]]", "score": "B>A"}]}
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "mine.jsonl"
    >>> _ = f.write_text(json.dumps(line) + "\\n")
    >>> pairs, judgments = jk.read_arena_hard(f, baseline="gpt-4-0314")
    >>> judgments[["order", "score", "verdict", "margin"]].to_dict("records")
    [{'order': 'ab', 'score': 'A>>B', 'verdict': 'a', 'margin': 2}, {'order': 'ba', 'score': 'B>A', 'verdict': 'a', 'margin': 1}]
    """
    if texts not in ("files", "prompt"):
        raise ValueError(f"texts must be 'files' or 'prompt', got {texts!r}")
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(f"{root} does not exist")
    files = find_files(root, ("*.jsonl", "*.jsonl.gz"), "*.jsonl") if root.is_dir() else [root]
    loaded: dict[Path | None, tuple[dict, dict]] = {}
    pair_index: dict[str, int] = {}
    pair_rows: list[tuple] = []       # one tuple per pair, in the order of _PAIR_COLUMNS
    judgment_rows: list[tuple] = []   # one per game, in the order of _JUDGMENT_COLUMNS
    grades: dict[tuple, tuple] = {}
    nan4 = (math.nan,) * 4
    found = False
    self_games: dict[str, int] = {}
    seen: dict[Path, str | None] = {}  # the baseline found in each file's first judge prompt
    with _no_cyclic_gc():  # ~70,000 records, and as many rows, none of them cyclic
        for f in files:
            records = jsonl_file(f)
            if root.is_dir() and records and not (isinstance(records[0], dict) and "games" in records[0]):
                continue  # question / answer files beside the judgments
            bench = _bench_of(f)
            if bench not in loaded:
                loaded[bench] = _load_texts(bench, questions, answers)
            qs, ans = loaded[bench]
            dataset = bench.name if bench is not None else "arena-hard"
            for i, r in enumerate(records, start=1):
                qid = _qid(r) if isinstance(r, dict) else None
                if qid is None or "games" not in r or "model" not in r:
                    raise ValueError(f"{f}, line {i}: not an Arena-Hard judgment (needs question_id "
                                     "or uid, model and games)")
                found = True
                model = str(r["model"]).split("/")[-1]
                base = baseline or r.get("baseline") or seen.get(f)
                if base is None and f not in seen:  # v0.1 does not record it: the model whose
                    # answers the judge saw as assistant A (the first record that tells one model)
                    seen[f] = next((b for b in (_baseline_in_prompt(x, ans) for x in records[:50]
                                                if isinstance(x, dict)) if b is not None), None)
                    base = seen[f]
                if base is None:
                    raise ValueError(
                        f"{f}, line {i}: the judgment does not name its baseline (Arena-Hard v0.1 "
                        "files do not; the original benchmark used gpt-4-0314, forks and later "
                        "versions use others) and no answer file in model_answer/ holds the answer "
                        "the judge saw as assistant A in game 1: pass baseline=")
                base = str(base).split("/")[-1]
                games = list(r["games"] or [])
                if model == base:
                    self_games[base] = self_games.get(base, 0) + len(games)
                    continue
                pid = f"arena-hard/{model}/{qid}"
                if pid not in pair_index:
                    pair_index[pid] = len(pair_rows)
                    question = qs.get(qid, {})
                    a_rec, b_rec = ans.get(base, {}).get(qid), ans.get(model, {}).get(qid)
                    first = games[0] if games and isinstance(games[0], dict) else {}
                    judged = _game_prompt(first)
                    a = a_rec[0] if a_rec else None
                    b = b_rec[0] if b_rec else None
                    q = question.get("text")
                    same = _matches(judged, a, b)
                    meta_a, meta_b = (a_rec[1:] if a_rec else nan4), (b_rec[1:] if b_rec else nan4)
                    if (texts == "prompt" and same is False) or a is None or b is None or q is None:
                        m = _PROMPT.search(judged or "")
                        if m is not None:  # game 1 shows the baseline as assistant A
                            if texts == "prompt" and same is False:
                                a, b, meta_a, meta_b = m["a"], m["b"], nan4, nan4
                            if a is None:
                                a, meta_a = m["a"], nan4
                            if b is None:
                                b, meta_b = m["b"], nan4
                            q = q if q is not None else m["q"]
                    pair_rows.append((pid, q, a, b, base, model, dataset,
                                      r.get("category") or question.get("category"), qid, *meta_a,
                                      *meta_b, same))
                judge = str(r.get("judge", "judge"))
                for g, order in zip(games, ("ab", "ba")):
                    g = g if isinstance(g, dict) else {}
                    score = g.get("score")
                    try:  # a label reads the same every time: (label, verdict, margin, error)
                        graded = grades[(type(score), score, order)]
                    except KeyError:
                        graded = grades[(type(score), score, order)] = _graded(score, order)
                    except TypeError:  # an unhashable score (a list, ...)
                        graded = _graded(score, order)
                    label, verdict, margin, error = graded
                    judgment_rows.append((pid, judge, order, verdict, label, margin, _game_text(g),
                                          error))
    if not found:
        raise ValueError(f"no Arena-Hard judgment (a JSON line with 'games') under {root}")
    if not pair_rows:
        raise ValueError(f"{root}: every judgment compares the baseline with itself")
    if self_games:
        warnings.warn(f"{root}: {sum(self_games.values())} games judge the baseline "
                      f"{_short(list(self_games))} against itself; left out (Arena-Hard scores the "
                      "baseline 50 by definition)", stacklevel=caller_level())
    pairs_df = _pairs_frame(_columns(_PAIR_COLUMNS, pair_rows), root)
    rec = _columns(_JUDGMENT_COLUMNS, judgment_rows)
    raw = rec.pop("raw")
    judgments = pd.DataFrame(rec)
    judgments["raw"] = pd.Series(raw, dtype=object)  # the judge's texts stay Python strings
    judgments.insert(3, "repeat", judgments.groupby(["pair_id", "judge", "order"]).cumcount())
    judgments.insert(5, "p_a", math.nan)
    judgments["margin"] = judgments["margin"].astype("Int64")
    judgments = judgments[["pair_id", "judge", "order", "repeat", "verdict", "p_a", "score",
                           "margin", "raw", "error"]]
    judgments = validate_judgments(judgments, pairs_df, name=f"Arena-Hard judgments from {root}")
    return pairs_df, judgments


def _pairs_frame(P: dict[str, list], root: Path) -> pd.DataFrame:
    """The pairs table, with the texts kept as Python strings (no copy into another string
    type) and the reports on missing and mismatched texts."""
    cols = {k: pd.Series(v, dtype=object) for k, v in P.items()
            if not k.startswith(("tokens_", "header_", "list_", "bold_"))}
    df = pd.DataFrame(cols)
    for side in ("a", "b"):  # recorded style metadata, only where every answer has it
        known = df[f"response_{side}"].notna().to_numpy()
        for key in (f"tokens_{side}", f"header_count_{side}", f"list_count_{side}",
                    f"bold_count_{side}"):
            values = np.asarray(P[key], dtype=float)
            if known.any() and not np.isnan(values[known]).any():
                df[key] = values
    df = df.drop(columns=[c for c in ("tokens_a", "tokens_b") if c in df.columns]
                 if not {"tokens_a", "tokens_b"} <= set(df.columns) else [])
    df["texts_match_prompt"] = df["texts_match_prompt"].astype("boolean")
    missing = df[["prompt", "response_a", "response_b"]].isna().any(axis=1).to_numpy()
    if missing.any():
        gone_a = df.loc[df["response_a"].isna(), "model_a"].unique().tolist()
        gone_b = df.loc[df["response_b"].isna(), "model_b"].unique().tolist()
        warnings.warn(
            f"{root}: texts missing for {int(missing.sum())} of {len(df)} pairs (answers of "
            f"{_short(sorted(set(gone_a) | set(gone_b)) or ['no model'])} are neither in "
            "model_answer/ nor in a judge prompt; questions missing for "
            f"{int(df['prompt'].isna().sum())}); they are left missing: win rates, Arena-Hard "
            "scores and Bradley-Terry ratings need no texts, the text-based analyses refuse "
            "those pairs", stacklevel=caller_level())
    differ = df["texts_match_prompt"].eq(False).fillna(False).to_numpy(dtype=bool)
    if differ.any():
        who = df.loc[differ, "model_b"].unique().tolist()
        compared = int(df["texts_match_prompt"].notna().sum())
        warnings.warn(
            f"{root}: for {int(differ.sum())} of {compared} pairs compared, the answers in "
            f"model_answer/ are not the ones inside the judge's prompt (models: {_short(who)}); "
            "the judge saw the prompt's answers. The column texts_match_prompt marks them; "
            "texts='prompt' takes the texts from the prompt", stacklevel=caller_level())
    return validate_pairs(df, name=f"Arena-Hard pairs from {root}", require_text=False)
