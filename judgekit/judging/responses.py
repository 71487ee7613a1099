"""Tables from stored answers: a judgment per request (verdict, ``p_a``, error, tokens, cost)
and the judgments frame in the column order of :mod:`judgekit.schema`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from judgekit.judging.logprobs import option_probabilities
from judgekit.judging.requests import Task

__all__ = ["frame", "judgment", "message_text"]


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


def judgment(task: Task, row: Mapping[str, Any] | None) -> dict[str, Any]:
    """One row of the judgments table from a stored answer (None: not answered)."""
    template = task.judge.template
    n = len(task.order)
    ids = template.ids_for(n, task.id_swap)
    out: dict[str, Any] = {
        "pair_id": task.pair_id, "judge": task.judge.id, "order": task.order,
        "id_swap": task.id_swap, "repeat": task.repeat, "verdict": None,
        **{f"p_{letter}": float("nan") for letter in "abcd"[:n]},
        "model": task.judge.model, "template": template.name,
        "temperature": float(task.judge.temperature), "raw": None, "error": None, "p_note": None,
        "finish_reason": None, "prompt_tokens": np.nan, "completion_tokens": np.nan,
        "cost_usd": np.nan, "latency_s": np.nan, "cached": bool(row["cached"]) if row else False,
        "request_key": task.key,
    }
    if row is None:
        return out
    for col in ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s"):
        if row.get(col) is not None:
            out[col] = row[col]
    if row["status"] != "ok":
        out["error"] = row["error"]
        return out
    try:
        choice = json.loads(row["response"])["choices"][0]
        message = choice.get("message") or {}
        text = message_text(message)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        # a stored answer of an unexpected shape: recorded, and the run goes on
        out["error"] = f"api: unreadable response ({type(exc).__name__}: {exc})"
        return out
    out["raw"] = text
    out["finish_reason"] = choice.get("finish_reason")
    parsed = template.parse(text)
    if parsed.option is None:
        reason = parsed.error
        if choice.get("finish_reason") == "length":
            reason = f"truncated (finish_reason=length); {reason}"
        refusal = message.get("refusal") if isinstance(message, Mapping) else None
        if refusal:
            reason = f"refused: {refusal}"
        out["error"] = f"parse: {reason}"
        return out
    letters = task.order
    if template.ties and parsed.option == template.tie_id:
        out["verdict"] = "tie"
    else:
        out["verdict"] = letters[ids.index(parsed.option)]
    if task.judge.logprobs:
        try:
            logprobs = (choice.get("logprobs") or {}).get("content")
            probs, note = option_probabilities(
                logprobs, text, parsed.start, list(ids),
                tie_id=template.tie_id if template.ties else None,
            )
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            probs, note = None, f"unreadable logprobs ({type(exc).__name__}: {exc})"
        out["p_note"] = note
        if probs is not None:
            for k, letter in enumerate(letters):
                out[f"p_{letter}"] = probs[ids[k]]
    return out


_FRONT = ["pair_id", "judge", "order", "id_swap", "repeat", "verdict", "p_a", "p_b", "p_c", "p_d"]


def frame(rows: list[dict[str, Any]], n: int) -> pd.DataFrame:
    """The judgments frame of these rows, in the column order of :mod:`judgekit.schema`."""
    df = pd.DataFrame(rows)
    if df.empty:
        df = pd.DataFrame(columns=[*_FRONT[:5], "verdict", *[f"p_{x}" for x in "abcd"[:n]]])
    for col in ("verdict", "raw", "error", "p_note", "finish_reason"):
        if col in df.columns:
            df[col] = df[col].astype(object).where(df[col].notna(), None)
    if n == 2 and "p_b" in df.columns:
        df = df.drop(columns="p_b")  # p_b = 1 - p_a
    front = [c for c in _FRONT if c in df.columns]
    return df[front + [c for c in df.columns if c not in front]]
