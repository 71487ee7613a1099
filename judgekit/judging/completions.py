"""Cached, concurrent chat completions for calls that are not judgments (e.g. LLM rewrites),
through the same engine as :func:`~judgekit.run_judges`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from judgekit._stamp import stamped
from judgekit.judging.answers import checked_row
from judgekit.judging.clients import Progress
from judgekit.judging.config import RunConfig, RunSettings, check_settings, document_settings
from judgekit.judging.requests import Call, endpoint_of
from judgekit.judging.responses import message_text
from judgekit.judging.runner import CallList, adrive, drive, run_calls, twin_docstring

if TYPE_CHECKING:   # PEP 692: editors list the run settings of **settings
    from typing_extensions import Unpack

__all__ = ["acomplete", "complete"]

_COLUMNS = ["id", "repeat", "text", "error", "finish_reason", "prompt_tokens",
            "completion_tokens", "cost_usd", "latency_s", "cached", "request_key"]


@dataclass
class CompletionJob:
    """A checked completion run: one call per prompt and repeat, and its settings."""

    index: list[tuple[str, int, str]]
    calls: list[Call]
    config: RunConfig

    @classmethod
    def prepare(cls, caller: str, prompts: Any, model: str, *, system: str | None,
                temperature: float, max_tokens: int, seed: int | None, repeats: int,
                extra: Mapping[str, Any] | None, base_url: str | None,
                settings: Mapping[str, Any]) -> CompletionJob:
        """Check every argument of :func:`complete` and build every request."""
        check_settings(caller, settings, _OWN)
        config = RunConfig(**settings)
        ids, conversations = _prompts(prompts, system)
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be a non-empty string, got {model!r}")
        if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
            raise ValueError(f"repeats must be an integer >= 1, got {repeats}")
        url = endpoint_of(base_url, config.client)
        calls, index = [], []
        for pid, messages in zip(ids, conversations):
            for k in range(int(repeats)):
                body = {"model": model, "messages": messages, "temperature": temperature,
                        "max_tokens": max_tokens, **(extra or {})}
                if seed is not None:
                    body["seed"] = int(seed) + k
                call = Call.make(url, body, k)
                calls.append(call)
                index.append((pid, k, call.key))
        return cls(index, calls, config)

    async def run(self, progress: Progress) -> pd.DataFrame:
        answers: dict[str, dict[str, Any]] = {}

        def sink(key: str, row: Mapping[str, Any]) -> None:
            answers[key] = completion(row)

        report = await run_calls(self.config, CallList(self.calls), progress, sink)
        rows = [{"id": pid, "repeat": k, **answers[key], "request_key": key}
                for pid, k, key in self.index if key in answers]
        out = pd.DataFrame(rows, columns=_COLUMNS)
        out.attrs["judgekit_run"] = report
        return out


def completion(row: Mapping[str, Any]) -> dict[str, Any]:
    """The text, error, tokens, cost and latency of one stored answer."""
    cached = bool(row.get("cached"))
    row = checked_row(row)   # an answer that cannot be read is an error, never an exception
    text, finish, error = None, None, row.get("error")
    if row["status"] == "ok":
        choice = row["payload"]["choices"][0]
        text = message_text(choice.get("message"))
        finish = choice.get("finish_reason")
        finish = finish if isinstance(finish, str) else None
        if finish == "length":
            error = "truncated (finish_reason=length)"
    return {"text": text, "error": error, "finish_reason": finish,
            "prompt_tokens": row.get("prompt_tokens"),
            "completion_tokens": row.get("completion_tokens"), "cost_usd": row.get("cost_usd"),
            "latency_s": row.get("latency_s"), "cached": cached}


def _prompts(prompts: Any, system: str | None) -> tuple[list[str], list[list[dict[str, str]]]]:
    if isinstance(prompts, pd.DataFrame):
        if "prompt" not in prompts.columns and "messages" not in prompts.columns:
            raise ValueError("a prompts table needs a 'prompt' or a 'messages' column")
        ids = prompts["id"].astype(str).tolist() if "id" in prompts.columns else [str(i) for i in prompts.index]
        items = prompts["messages"].tolist() if "messages" in prompts.columns else prompts["prompt"].tolist()
    elif isinstance(prompts, pd.Series):
        ids, items = [str(i) for i in prompts.index], prompts.tolist()
    elif isinstance(prompts, Mapping):
        ids, items = [str(k) for k in prompts], list(prompts.values())
    elif isinstance(prompts, str):
        ids, items = ["0"], [prompts]
    else:
        items = list(prompts)
        ids = [str(i) for i in range(len(items))]
    if len(set(ids)) != len(ids):
        raise ValueError("prompt ids must be unique")
    conversations = []
    for pid, item in zip(ids, items):
        if isinstance(item, str):
            messages = [{"role": "user", "content": item}]
        elif isinstance(item, Sequence) and all(isinstance(m, Mapping) and "role" in m for m in item):
            messages = [dict(m) for m in item]
        else:
            raise ValueError(f"prompt {pid!r} must be a string or a list of chat messages")
        if system is not None and not any(m["role"] == "system" for m in messages):
            messages = [{"role": "system", "content": system}, *messages]
        conversations.append(messages)
    return ids, conversations


@stamped
@document_settings
def complete(
    prompts: Any,
    model: str,
    *,
    system: str | None = None,
    temperature: float = 0.0,
    max_tokens: int = 1024,
    seed: int | None = None,
    repeats: int = 1,
    extra: Mapping[str, Any] | None = None,
    base_url: str | None = None,
    **settings: Unpack[RunSettings],
) -> pd.DataFrame:
    """Cached, concurrent chat completions for non-judging calls (e.g. LLM rewrites).

    The same engine as :func:`run_judges`: one request per prompt and repeat, keyed by
    sha256(endpoint, body, repeat) in the same cache, retried and budgeted the same way.

    Parameters
    ----------
    prompts : str, sequence, mapping, Series or DataFrame
        User messages (strings) or whole conversations (lists of ``{"role", "content"}``); a
        mapping or Series gives ids, a DataFrame has ``id`` and ``prompt`` or ``messages``.
    model : str
        The model name.
    system : str, optional
        A system prompt, added to conversations that have none.
    temperature, max_tokens, seed : float, int, int
        Decoding settings; with a ``seed``, repeat k is sent with ``seed + k``.
    repeats : int
        Requests per prompt.
    extra : mapping, optional
        Further request parameters, sent in the body.
    base_url : str, optional
        The endpoint (else the client's, or ``OPENAI_BASE_URL``, or OpenAI's).
    **settings
        The run settings of :func:`run_judges`, by keyword, with their defaults:
        {run_settings}.
        :class:`~judgekit.RunConfig` describes each.

    Returns
    -------
    DataFrame
        ``id, repeat, text, error, finish_reason, prompt_tokens, completion_tokens, cost_usd,
        latency_s, cached, request_key``; run counts in ``attrs["judgekit_run"]``.

    Examples
    --------
    >>> import judgekit as jk
    >>> def shout(body):
    ...     return body["messages"][-1]["content"].upper()
    >>> with jk.sim.SimServer(handlers=[shout]) as url:
    ...     out = jk.complete({"x": "make this longer"}, "sim", base_url=url, cache=False,
    ...                       progress=False)
    >>> out[["id", "text"]].to_dict("records")
    [{'id': 'x', 'text': 'MAKE THIS LONGER'}]
    """
    return drive(CompletionJob.prepare(
        "complete", prompts, model, system=system, temperature=temperature,
        max_tokens=max_tokens, seed=seed, repeats=repeats, extra=extra, base_url=base_url,
        settings=settings), "completing")


#: complete's own parameters (named when a keyword is not one of them nor a run setting)
_OWN = ("prompts", "model", "system", "temperature", "max_tokens", "seed", "repeats", "extra",
        "base_url")


@stamped
async def acomplete(
    prompts: Any,
    model: str,
    *,
    system: str | None = None,
    temperature: float = 0.0,
    max_tokens: int = 1024,
    seed: int | None = None,
    repeats: int = 1,
    extra: Mapping[str, Any] | None = None,
    base_url: str | None = None,
    **settings: Unpack[RunSettings],
) -> pd.DataFrame:
    """Async form of :func:`complete` (same parameters).

    Examples
    --------
    >>> import asyncio, judgekit as jk
    >>> with jk.sim.SimServer(handlers=[lambda body: "ok"]) as url:
    ...     out = asyncio.run(jk.acomplete(["hi"], "sim", base_url=url, cache=False, progress=False))
    >>> out["text"].tolist()
    ['ok']
    """
    return await adrive(CompletionJob.prepare(
        "acomplete", prompts, model, system=system, temperature=temperature,
        max_tokens=max_tokens, seed=seed, repeats=repeats, extra=extra, base_url=base_url,
        settings=settings), "completing")


acomplete.__doc__ = twin_docstring(complete, acomplete.__doc__)
