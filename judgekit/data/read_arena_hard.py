"""Read Arena-Hard-Auto judgment files as judgekit's two tables."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from judgekit._stamp import stamped
from judgekit.data.readers import _find, _jsonl
from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["read_arena_hard"]

#: Arena-Hard's baseline by benchmark or question category (the judgment files of
#: arena-hard-v0.1 do not name it; those of v2.0 do).
BASELINES: dict[str, str] = {
    "arena-hard-v0.1": "gpt-4-0314",
    "hard_prompt": "o3-mini-2025-01-31",
    "coding": "o3-mini-2025-01-31",
    "math": "o3-mini-2025-01-31",
    "creative_writing": "gemini-2.0-flash-001",
}

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
        return str(record["choices"][0]["turns"][-1]["content"])
    except (KeyError, IndexError, TypeError):
        pass
    try:
        content = record["messages"][-1]["content"]
        return str(content["answer"] if isinstance(content, dict) else content)
    except (KeyError, IndexError, TypeError):
        return None


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


def _load_texts(bench: Path | None, questions: str | Path | None, answers: str | Path | None
                ) -> tuple[dict[str, dict], dict[str, dict[str, str]]]:
    q_path = Path(questions) if questions is not None else (
        bench / "question.jsonl" if bench is not None else None)
    qs: dict[str, dict] = {}
    if q_path is not None and q_path.is_file():
        for r in _jsonl(q_path):
            if _qid(r) is not None:
                qs[_qid(r)] = {"text": _question_text(r), "category": r.get("category")}
    elif questions is not None:
        raise FileNotFoundError(f"questions: {q_path} does not exist")
    a_dir = Path(answers) if answers is not None else (
        bench / "model_answer" if bench is not None else None)
    ans: dict[str, dict[str, str]] = {}
    if a_dir is not None and a_dir.is_dir():
        for f in sorted(a_dir.glob("*.jsonl")):
            for r in _jsonl(f):
                model = str(r.get("model_id") or r.get("model") or f.stem)
                text = _answer_text(r)
                if _qid(r) is not None and text is not None:
                    ans.setdefault(model, {})[_qid(r)] = text
    elif answers is not None:
        raise FileNotFoundError(f"answers: {a_dir} is not a folder")
    return qs, ans


@stamped
def read_arena_hard(
    path: str | Path,
    *,
    baseline: str | None = None,
    questions: str | Path | None = None,
    answers: str | Path | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read Arena-Hard-Auto judgments (``model_judgment/<judge>/<model>.jsonl``) as pairs and
    judgments, both games of each question.

    Parameters
    ----------
    path : str or Path
        A judgment JSONL file, or a folder searched recursively for ``*.jsonl`` files with
        ``games`` (e.g. ``data/arena-hard-v0.1/model_judgment/``).
    baseline : str, optional
        The baseline model. Default: the records' ``baseline`` (Arena-Hard v2.0 writes it), else
        Arena-Hard's baseline of the question's category or benchmark (:data:`BASELINES`, e.g.
        gpt-4-0314 for ``arena-hard-v0.1``).
    questions, answers : str or Path, optional
        ``question.jsonl`` and the ``model_answer`` folder (default: those of the benchmark
        folder above ``model_judgment``). Without them the texts are taken from the judge prompt
        recorded in the first game.

    Returns
    -------
    pairs, judgments : DataFrame
        Validated tables. Pairs: one per (model, question), ``pair_id``
        ``arena-hard/<model>/<question id>``, the baseline's answer as response a
        (``model_a``), the model's as b; ``instruction_id`` the question id, ``task`` its
        category. Judgments: game 1 (the baseline shown as assistant A) has ``order`` "ab",
        game 2 (swapped) "ba"; ``verdict`` in response terms; the graded verdict is kept as
        ``score`` (the label as the judge wrote it, e.g. "A>>B") and ``margin`` (the preference
        for response a: +2 significantly better, +1 slightly, 0 tie, -1, -2); ``judge`` the
        judge model; ``raw`` the judgment text; ``error`` where Arena-Hard found no label.

    Raises
    ------
    ValueError
        For a file that is not in this format, or a record whose baseline or texts cannot be
        found, naming the file and line.

    Notes
    -----
    One line of an Arena-Hard v0.1 judgment file::

        {"question_id": "328c149ed45a41c0", "model": "my-model", "judge": "gpt-4-1106-preview",
         "games": [{"user_prompt": "<|User Prompt|>\\n...", "judgment": "... [[B>A]]", "score": "B>A"},
                   {"user_prompt": "...", "judgment": "... [[A>>B]]", "score": "A>>B"}]}

    v2.0 adds ``uid`` (for ``question_id``), ``category`` and ``baseline``, and records each
    game's ``prompt`` messages and ``judgment`` as ``{"answer": ...}``. Arena-Hard's own score
    counts a significant win as three wins; judgekit's win rates count verdicts.

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
    root = Path(path)
    files = _find(root, ("*.jsonl", "*.jsonl.gz"), "*.jsonl") if root.is_dir() else [root]
    if not root.exists():
        raise FileNotFoundError(f"{root} does not exist")
    texts: dict[Path | None, tuple[dict, dict]] = {}
    pairs: dict[str, dict] = {}
    rec: dict[str, list] = {c: [] for c in ("pair_id", "judge", "order", "verdict", "score",
                                            "margin", "raw", "error")}
    found = False
    for f in files:
        records = _jsonl(f)
        if root.is_dir() and records and not (isinstance(records[0], dict) and "games" in records[0]):
            continue  # question / answer files beside the judgments
        bench = _bench_of(f)
        if bench not in texts:
            texts[bench] = _load_texts(bench, questions, answers)
        qs, ans = texts[bench]
        for i, r in enumerate(records, start=1):
            where = f"{f}, line {i}"
            if not isinstance(r, dict) or "games" not in r or _qid(r) is None or "model" not in r:
                raise ValueError(f"{where}: not an Arena-Hard judgment (needs question_id or uid, "
                                 "model and games)")
            found = True
            qid, model = _qid(r), str(r["model"]).split("/")[-1]
            category = r.get("category") or qs.get(qid, {}).get("category")
            base = baseline or r.get("baseline") or BASELINES.get(category or "") or (
                BASELINES.get(bench.name) if bench is not None else None)
            if base is None:
                raise ValueError(f"{where}: the judgment does not name its baseline; pass "
                                 "baseline= (Arena-Hard v0.1's is gpt-4-0314)")
            games = list(r["games"] or [])
            pid = f"arena-hard/{model}/{qid}"
            if pid not in pairs:
                q = qs.get(qid, {}).get("text")
                a, b = ans.get(base, {}).get(qid), ans.get(model, {}).get(qid)
                if q is None or a is None or b is None:
                    first = games[0] if games and isinstance(games[0], dict) else {}
                    m = _PROMPT.search(_game_prompt(first) or "")
                    if m is None:
                        raise ValueError(
                            f"{where}: no texts for question {qid}: Arena-Hard keeps them in "
                            "question.jsonl and model_answer/ beside model_judgment/; pass "
                            "questions= and answers=")
                    q, a, b = q or m["q"], a or m["a"], b or m["b"]  # game 1: A is the baseline
                pairs[pid] = {"pair_id": pid, "prompt": q, "response_a": a, "response_b": b,
                              "model_a": base, "model_b": model, "dataset": bench.name if bench
                              else "arena-hard", "task": category, "instruction_id": qid}
            for g, order in zip(games, ("ab", "ba")):
                g = g if isinstance(g, dict) else {}
                score = g.get("score")
                label = str(score).strip() if score is not None else None
                grade = _GRADES.get(label) if label is not None else None
                # in game 1 assistant A is the baseline (response a), in game 2 the model
                margin = None if grade is None else (grade if order == "ab" else -grade)
                rec["pair_id"].append(pid)
                rec["judge"].append(str(r.get("judge", "judge")))
                rec["order"].append(order)
                rec["verdict"].append(None if margin is None else
                                      "a" if margin > 0 else "b" if margin < 0 else "tie")
                rec["score"].append(label)
                rec["margin"].append(margin)
                rec["raw"].append(_game_text(g))
                rec["error"].append(None if margin is not None else
                                    "no verdict label upstream" if label is None
                                    else f"unknown verdict label {label!r}")
    if not found:
        raise ValueError(f"no Arena-Hard judgment (a JSON line with 'games') under {root}")
    pairs_df = validate_pairs(pd.DataFrame(list(pairs.values())),
                              name=f"Arena-Hard pairs from {root}")
    judgments = pd.DataFrame(rec)
    judgments.insert(3, "repeat", judgments.groupby(["pair_id", "judge", "order"]).cumcount())
    judgments.insert(5, "p_a", math.nan)
    judgments["margin"] = judgments["margin"].astype("Int64")
    judgments["raw"] = judgments["raw"].astype(object)
    judgments = validate_judgments(judgments, pairs_df, name=f"Arena-Hard judgments from {root}")
    return pairs_df, judgments
