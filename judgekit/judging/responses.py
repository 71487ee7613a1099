"""Tables from stored answers: a judgment per request (verdict, ``p_a``, error, tokens, cost)
and the judgments frame in the column order of :mod:`judgekit.schema`, built column by column."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from judgekit.judging.answers import checked_row
from judgekit.judging.judge import Judge
from judgekit.judging.logprobs import option_probabilities
from judgekit.judging.requests import RequestPlan

__all__ = ["JudgmentColumns", "judgment", "message_text"]


def message_text(message: Any) -> str | None:
    """The text of an answer's message: its ``content`` string, or the text of its content
    parts; None when it holds no text.

    Examples
    --------
    >>> message_text({"content": [{"type": "text", "text": "[[A]]"}]})
    '[[A]]'
    >>> message_text({"content": None}) is None, message_text("odd") is None
    (True, True)
    """
    if not isinstance(message, Mapping):
        return None
    content = message.get("content")
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        content = "".join(p for p in parts if isinstance(p, str)) if parts else None
    return content if isinstance(content, str) else None


def judgment(judge: Judge, order: str, id_swap: bool,
             row: Mapping[str, Any]) -> dict[str, Any]:
    """The columns of one judgment that its answer decides: verdict, ``p_a``.., raw text, error,
    ``p_note``, finish reason, tokens, cost, latency and ``cached``.

    ``row`` is a stored answer (:data:`~judgekit.judging.cache.ANSWER_COLUMNS` plus ``cached``),
    checked by :func:`~judgekit.judging.answers.checked_row` before it is read: an answer that
    cannot be read is an error row with its reason, never an exception.
    """
    n = len(order)
    out: dict[str, Any] = {
        "verdict": None, **{f"p_{letter}": float("nan") for letter in "abcd"[:n]},
        "raw": None, "error": None, "p_note": None, "finish_reason": None,
        "prompt_tokens": np.nan, "completion_tokens": np.nan, "cost_usd": np.nan,
        "latency_s": np.nan, "cached": bool(row.get("cached")),
    }
    row = checked_row(row)
    for col in ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s"):
        if row.get(col) is not None:
            out[col] = row[col]
    if row["status"] != "ok":
        out["error"] = row["error"]
        return out
    try:
        _read(judge, order, id_swap, row["payload"], out)
    except Exception as exc:  # an answer of an unexpected shape: recorded
        for key in ("verdict", "raw", "p_note", "finish_reason"):
            out[key] = None
        out.update({f"p_{letter}": float("nan") for letter in "abcd"[:n]})
        out["error"] = f"api: unreadable response ({type(exc).__name__}: {str(exc)[:200]})"
    return out


def _read(judge: Judge, order: str, id_swap: bool, payload: Mapping[str, Any],
          out: dict[str, Any]) -> None:
    """Fill ``out`` with the verdict, probabilities and text of a parsed answer."""
    template = judge.template
    ids = template.ids_for(len(order), id_swap)
    choice = payload["choices"][0]
    message = choice.get("message") or {}
    text = message_text(message)
    finish = choice.get("finish_reason")
    out["raw"] = text
    out["finish_reason"] = finish if isinstance(finish, str) else None
    parsed = template.parse(text)
    if parsed.option is None:
        reason = parsed.error
        if finish == "length":
            reason = f"truncated (finish_reason=length); {reason}"
        refusal = message.get("refusal") if isinstance(message, Mapping) else None
        if refusal:
            reason = f"refused: {str(refusal)[:500]}"
        out["error"] = f"parse: {reason}"
        return
    letters = order
    if template.ties and parsed.option == template.tie_id:
        out["verdict"] = "tie"
    else:
        out["verdict"] = letters[ids.index(parsed.option)]
    if judge.logprobs:
        try:
            logprobs = (choice.get("logprobs") or {}).get("content")
            probs, note = option_probabilities(
                logprobs, text, parsed.start, list(ids),
                tie_id=template.tie_id if template.ties else None,
            )
        except Exception as exc:  # logprobs of an odd shape: noted, verdict kept
            probs, note = None, f"unreadable logprobs ({type(exc).__name__}: {str(exc)[:200]})"
        out["p_note"] = note
        if probs is not None:
            for k, letter in enumerate(letters):
                out[f"p_{letter}"] = probs[ids[k]]


_TEXT = ("verdict", "raw", "error", "p_note", "finish_reason")


#: columns held as float arrays (NaN when missing); the token counts become int64 when every
#: answer gives them, as pandas infers from Python ints
_NUMBERS = ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s")
_INTEGERS = ("prompt_tokens", "completion_tokens")


class JudgmentColumns:
    """The judgments table of a run, built column by column as answers arrive (in any order):
    one slot per task of the plan, filled by :meth:`add` (a runner's sink), and a frame of the
    answered tasks in task order.

    Only what the table shows is kept of each answer (numbers in arrays, texts as references),
    so building the table of a large cached run takes memory for the table, not for the stored
    answers.
    """

    def __init__(self, plan: RequestPlan) -> None:
        self.plan = plan
        size = len(plan)
        # two-response runs keep p_a only (p_b = 1 - p_a)
        self._probs = [f"p_{x}" for x in ("a" if plan.n == 2 else "abcd"[: plan.n])]
        self.texts: dict[str, list[Any]] = {name: [None] * size for name in _TEXT}
        self.numbers = {name: np.full(size, np.nan) for name in (*self._probs, *_NUMBERS)}
        self.cached = np.zeros(size, dtype=bool)
        self.answered = np.zeros(size, dtype=bool)
        self._interned: dict[str, str] = {}

    def add(self, key: str, row: Mapping[str, Any]) -> None:
        """Fill the tasks that ``row`` (the answer of ``key``) answers."""
        plan, texts, numbers = self.plan, self.texts, self.numbers
        c = plan.columns
        for i in plan.tasks_of(key):
            values = judgment(plan.judge_of(i), plan.orders[c["order"][i]],
                              plan.swaps[c["swap"][i]], row)
            for name in _TEXT:
                value = values[name]
                if name == "finish_reason" and isinstance(value, str):
                    value = self._interned.setdefault(value, value)  # one object per reason
                texts[name][i] = value
            for name, array in numbers.items():
                array[i] = values[name]
            self.cached[i] = values["cached"]
            self.answered[i] = True

    def frame(self) -> pd.DataFrame:
        """The judgments of the answered tasks, in the column order of :mod:`judgekit.schema`
        (two-response runs leave out ``p_b`` = 1 - ``p_a``)."""
        plan = self.plan
        idx = np.flatnonzero(self.answered)
        c = {name: v[idx] for name, v in plan.columns.items()}
        pair_ids = plan.pairs["pair_id"].tolist()
        judges = plan.judges

        def per_judge(values: list[Any]) -> list[Any]:
            return [values[j] for j in c["judge"].tolist()]

        numbers = {name: array[idx] for name, array in self.numbers.items()}
        for name in _INTEGERS:
            if len(idx) and not np.isnan(numbers[name]).any():
                numbers[name] = numbers[name].astype(np.int64)
        data: dict[str, Any] = {
            "pair_id": [pair_ids[p] for p in c["pos"].tolist()],
            "judge": per_judge([j.id for j in judges]),
            "order": [plan.orders[o] for o in c["order"].tolist()],
            "id_swap": np.asarray(plan.swaps, dtype=bool)[c["swap"]],
            "repeat": c["repeat"],
            "verdict": _take(self.texts["verdict"], idx),
            **{name: numbers[name] for name in self._probs},
            "model": per_judge([j.model for j in judges]),
            "template": per_judge([j.template.name for j in judges]),
            "temperature": np.asarray([float(j.temperature) for j in judges])[c["judge"]],
            **{name: _take(self.texts[name], idx) for name in _TEXT if name != "verdict"},
            **{name: numbers[name] for name in _NUMBERS},
            "cached": self.cached[idx],
            "request_key": _take(plan.task_keys, idx),
        }
        df = pd.DataFrame(data)
        for col in _TEXT:
            df[col] = df[col].astype(object).where(df[col].notna(), None)
        return df


def _take(values: list[Any], idx: np.ndarray) -> list[Any]:
    return values if len(idx) == len(values) else [values[i] for i in idx.tolist()]
