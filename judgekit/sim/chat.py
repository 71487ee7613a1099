"""Chat completions of the simulated judge: decode the request, decide, answer in the template's
format with the verdict token's logprobs.

For each request the rendered text of a known template is decoded back into the prompt, the
responses in their positions and the option IDs
(:func:`~judgekit.sim.decoding.decode_request`). Two-response requests that
arrive together are decided in one vectorised :meth:`SimJudge.decide
<judgekit.sim.judge.SimJudge.decide>` call, the same function
:func:`judgekit.sim.simulate_judgments` uses, so HTTP answers and in-memory simulation agree draw for
draw. Requests no template recognises go to the ``handlers``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgekit.judging.templates import Template, fill_placeholders
from judgekit.sim.decoding import decode_request
from judgekit.sim.judge import SimJudge

__all__ = ["Completer", "RequestError", "content_text", "prompt_tokens"]

_TOKEN = re.compile(r"\s*\w+|\s*[^\w\s]+|\s+")
_PLAIN_LOGPROB = -1e-3
_VARIANT_SHARE = 0.03  # share of an option's mass given to its lower-case variant token

SignalDetector = Callable[[str, str, str, str], Mapping[str, float]]
Handler = Callable[[dict], "str | None"]


class RequestError(Exception):
    """A request the simulated server cannot answer (HTTP 400)."""


def content_text(message: Mapping[str, Any]) -> str:
    """The text of a chat message (string content, or the text of its content parts)."""
    content = message.get("content")
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    return content if isinstance(content, str) else ""


def prompt_tokens(messages: Sequence[Any]) -> int:
    """The server's own prompt-token count: one token per four characters of message text, plus one.

    It is what the answers report as ``usage.prompt_tokens`` and what the rate limiter counts.
    """
    chars = sum(len(content_text(m)) for m in messages if isinstance(m, Mapping))
    return chars // 4 + 1


def completion_budget(body: Mapping[str, Any]) -> int:
    """The ``max_tokens`` (or ``max_completion_tokens``) a request asks for, 0 when unset."""
    value = body.get("max_tokens")
    if value is None:
        value = body.get("max_completion_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


@dataclass
class Decision:
    verdict_token: str
    probs: dict[str, float]  # option ID -> probability (incl. tie) at the verdict token


@dataclass
class _Pending:
    prompt: str
    first: str
    second: str
    first_is_preferred: bool | None
    first_is_t1: bool
    repeat: int
    signals: dict[str, float]


class _Batcher:
    """Collects two-response decisions for a moment and makes them in one call."""

    def __init__(self, window: float = 0.002) -> None:
        self.window = window
        self._pending: dict[tuple, list[tuple[SimJudge, _Pending, asyncio.Future]]] = {}
        self._scheduled = False

    async def submit(self, group: tuple, judge: SimJudge, item: _Pending) -> tuple[float, str]:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._pending.setdefault(group, []).append((judge, item, future))
        if not self._scheduled:
            self._scheduled = True
            loop.call_later(self.window, self._flush)
        return await future

    def _flush(self) -> None:
        self._scheduled = False
        pending, self._pending = self._pending, {}
        for (_, ties, temperature), entries in pending.items():
            judge = entries[0][0]
            items = [e[1] for e in entries]
            names = sorted({k for it in items for k in it.signals})
            signals = {k: np.array([it.signals.get(k, 0.0) for it in items]) for k in names} or None
            try:
                out = judge.decide(
                    [it.prompt for it in items], [it.first for it in items],
                    [it.second for it in items],
                    first_is_preferred=[it.first_is_preferred for it in items],
                    first_is_t1=np.array([it.first_is_t1 for it in items]),
                    repeat=np.array([it.repeat for it in items]),
                    temperature=temperature, ties=ties, signals=signals,
                )
            except Exception as exc:  # delivered to every waiting request
                for _, _, future in entries:
                    if not future.done():
                        future.set_exception(exc)
                continue
            p_first = out["p_first"].to_numpy()
            choice = out["choice"].to_numpy()
            for k, (_, _, future) in enumerate(entries):
                if not future.done():
                    future.set_result((float(p_first[k]), str(choice[k])))


def reply_text(template: Template, token: str) -> tuple[str, int]:
    """The simulated judge's answer in the template's format, and the verdict's offset."""
    reason = (
        "Both responses are about equally good."
        if token == template.tie_id and template.ties
        else f"Response {token} addresses the request more directly and completely than the other"
    )
    values = {"reason": reason, "verdict": token}
    head = template.reply.split("{verdict}")[0]
    return fill_placeholders(template.reply, values), len(fill_placeholders(head, values))


class Completer:
    """Answers chat-completion bodies as the simulated judge (no HTTP here).

    ``labels`` maps (prompt, response_a, response_b) to the human label the judge knows;
    ``replay`` (a :class:`~judgekit.sim.replay.Replay`) answers from stored judgments instead;
    ``count`` receives the names of faults that shape the answer (missing logprobs, truncation).
    """

    def __init__(
        self, judges: Mapping[str, SimJudge], templates: Sequence[Template], *,
        signal_detector: SignalDetector | None, handlers: Sequence[Handler],
        labels: Mapping[tuple[str, str, str], str | None], replay: Any,
        count: Callable[[str], None],
    ) -> None:
        self.judges = judges
        self.templates = templates
        self.signal_detector = signal_detector
        self.handlers = handlers
        self.labels = labels
        self.replay = replay
        self._count = count
        self._lock = threading.Lock()
        self._answers: Counter[bytes] = Counter()
        self._batcher = _Batcher()

    def judge_for(self, model: str) -> SimJudge:
        if model in self.judges:
            return self.judges[model]
        if "*" in self.judges:
            return self.judges["*"]
        raise KeyError(f"no simulated judge for model {model!r}; known: {sorted(self.judges)}")

    def decode(self, system: str, user: str) -> dict[str, Any] | None:
        for template in self.templates:
            decoded = decode_request(template, system, user)
            if decoded is not None:
                return decoded
        return None

    async def complete(self, body: dict, fault: str | None) -> dict:
        """The chat.completion object answering ``body`` (raises :class:`RequestError`)."""
        model = str(body.get("model", ""))
        messages = body["messages"]
        system = "\n\n".join(content_text(m) for m in messages if m.get("role") == "system")
        users = [content_text(m) for m in messages if m.get("role") == "user"]
        user = users[-1] if users else ""
        key_body = {k: v for k, v in body.items() if k != "seed"}
        same = hashlib.sha256(json.dumps(key_body, sort_keys=True).encode()).digest()
        seed = body.get("seed")
        with self._lock:
            counted = self._answers[same]
            self._answers[same] += 1
        repeat = int(seed) if isinstance(seed, int) and seed >= 0 else counted

        decoded = self.decode(system, user)
        if decoded is None:
            for handler in self.handlers:
                text = handler(body)
                if text is not None:
                    return self._wrap(model, str(text), None, body, fault, messages)
            raise RequestError(
                "the simulated server recognises no template in this request and no handler "
                "answered it"
            )
        template: Template = decoded["template"]
        temperature = body.get("temperature")
        temperature = 1.0 if temperature is None else float(temperature)
        if self.replay is not None:
            text, offset, decision = self.replay.answer(model, decoded, repeat)
        else:
            try:
                judge = self.judge_for(model)
            except KeyError as exc:
                raise RequestError(str(exc.args[0])) from None
            decision = await self._decide(judge, decoded, system, user, repeat, temperature)
            text, offset = reply_text(template, decision.verdict_token)
        return self._wrap(model, text, (offset, decision), body, fault, messages)

    async def _decide(
        self, judge: SimJudge, d: dict, system: str, user: str, repeat: int, temperature: float
    ) -> Decision:
        responses, ids, options = d["responses"], d["ids"], d["options"]
        prompt = d["prompt"]
        if len(responses) != 2:
            probs, choice = judge.decide_nway(
                prompt, responses, ids, t1=options[0], repeat=repeat, temperature=temperature
            )
            return Decision(choice, probs)
        first, second = responses
        label, first_is_a = self._lookup(prompt, first, second)
        pref = None if label not in ("a", "b") else (label == "a") == first_is_a
        signals: dict[str, float] = {}
        if self.signal_detector is not None:
            found = self.signal_detector(system, user, first, second) or {}
            signals = {str(k): float(v) for k, v in found.items()}
        item = _Pending(prompt, first, second, pref, ids[0] == options[0], repeat, signals)
        # requests arriving together are decided in one vectorised SimJudge.decide call
        out = await self._batcher.submit((id(judge), bool(d["ties"]), temperature), judge, item)
        p_first, choice = out
        ties, tie_id = bool(d["ties"]), d["tie_id"]
        pt = judge.tie_rate if ties else 0.0
        probs = {ids[0]: (1 - pt) * p_first, ids[1]: (1 - pt) * (1 - p_first)}
        if ties:
            probs[tie_id] = pt
        token = tie_id if choice == "tie" else ids[0] if choice == "first" else ids[1]
        return Decision(token, probs)

    def _lookup(self, prompt: str, first: str, second: str) -> tuple[str | None, bool]:
        if (prompt, first, second) in self.labels:
            return self.labels[(prompt, first, second)], True
        if (prompt, second, first) in self.labels:
            return self.labels[(prompt, second, first)], False
        return None, True

    def _wrap(
        self, model: str, text: str, judged: tuple[int | None, Decision] | None, body: dict,
        fault: str | None, messages: list,
    ) -> dict:
        tokens = _tokens(text)
        finish = "stop"
        verdict_index = None
        if judged is not None and judged[0] is not None:
            pos = 0
            for i, tok in enumerate(tokens):
                if pos <= judged[0] < pos + len(tok):
                    verdict_index = i
                    break
                pos += len(tok)
        max_tokens = completion_budget(body)
        if fault == "truncated":
            cut = verdict_index if verdict_index is not None else max(len(tokens) // 2, 0)
            tokens, finish = tokens[:cut], "length"
        elif 0 < max_tokens < len(tokens):
            tokens, finish = tokens[:max_tokens], "length"
        content = "".join(tokens)
        logprobs = None
        if body.get("logprobs") and fault != "missing_logprobs":
            k = int(body.get("top_logprobs") or 0)
            logprobs = {"content": [], "refusal": None}
            for i, tok in enumerate(tokens):
                if i == verdict_index and judged is not None and judged[1].probs:
                    entry = _verdict_entry(tok, judged[1], k)
                else:
                    top = [{"token": tok, "logprob": _PLAIN_LOGPROB, "bytes": list(tok.encode())}]
                    entry = {"token": tok, "logprob": _PLAIN_LOGPROB, "bytes": list(tok.encode()),
                             "top_logprobs": top[:k]}
                logprobs["content"].append(entry)
        if fault in ("missing_logprobs", "truncated"):
            self._count(f"fault_{fault}")
        n_prompt = prompt_tokens(messages)
        usage = {"prompt_tokens": n_prompt, "completion_tokens": len(tokens),
                 "total_tokens": n_prompt + len(tokens)}
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "judgekit-sim",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": logprobs,
                "finish_reason": finish,
            }],
            "usage": usage,
        }


def _verdict_entry(tok: str, decision: Decision, k: int) -> dict:
    """The logprobs entry of the verdict token: every option with its probability."""
    stripped = tok.lstrip()
    prefix = tok[: len(tok) - len(stripped)]
    alternatives: dict[str, float] = {}
    for option, p in decision.probs.items():
        if p <= 0:
            continue
        lower = option.lower()
        if lower != option and lower not in {o.lower() for o in decision.probs if o != option}:
            alternatives[prefix + option] = p * (1 - _VARIANT_SHARE)
            alternatives[prefix + lower] = p * _VARIANT_SHARE
        else:
            alternatives[prefix + option] = p
    ranked = sorted(alternatives.items(), key=lambda kv: -kv[1])
    top = [{"token": t, "logprob": math.log(p), "bytes": list(t.encode())} for t, p in ranked[:k]]
    p_tok = alternatives.get(tok)
    logprob = math.log(p_tok) if p_tok else -30.0
    return {"token": tok, "logprob": logprob, "bytes": list(tok.encode()), "top_logprobs": top}
