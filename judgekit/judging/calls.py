"""One call over HTTP: send, retry what was not paid, and turn the answer into a cache row.

Failures that were not paid (429, 5xx, dropped connections, timeouts) are retried with
exponential backoff and full jitter, waiting ``Retry-After`` when the server gives one. Paid but
unusable answers (malformed JSON, no choices) become ``paid_error`` rows, recorded and not
retried. Every error message is scrubbed of the API key.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import random
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any

from judgekit.judging.budget import Budget
from judgekit.judging.pricing import cost
from judgekit.judging.requests import Call

__all__ = ["Sender", "retry_after", "scrub"]

log = logging.getLogger("judgekit.engine")

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
_KEYLIKE = re.compile(r"\b(?:sk|key|api[-_]?key)[-_][A-Za-z0-9_\-*]{6,}", re.IGNORECASE)


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """Remove API keys (given, or key-like tokens such as ``sk-...``) from an error message.

    Examples
    --------
    >>> scrub("Incorrect API key provided: sk-proj-abc123********xyz9.")
    'Incorrect API key provided: sk-***.'
    """
    for secret in secrets:
        if secret and len(secret) >= 6:
            text = text.replace(secret, "***")
    return _KEYLIKE.sub(lambda m: m.group(0).split("-")[0].split("_")[0] + "-***", text)


def retry_after(headers: Any) -> float | None:
    """Seconds the server asks to wait (``retry-after-ms``, or ``Retry-After`` as seconds or an
    HTTP date); None when absent or unreadable."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        with contextlib.suppress(ValueError):
            return max(float(ms) / 1000.0, 0.0)
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:  # an HTTP date; anything unreadable falls back to the exponential backoff
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return None if when is None else max(when.timestamp() - time.time(), 0.0)


def _message(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and inner.get("message"):
            return str(inner["message"])[:300]
    return str(exc)[:300]


class Sender:
    """Sends calls through the clients (one per endpoint), with retries, and counts into
    ``report``."""

    def __init__(self, *, clients: Mapping[str, Any], timeout: float, max_retries: int,
                 backoff_base: float, backoff_max: float,
                 prices: Mapping[str, tuple[float, float]], budget: Budget,
                 report: dict[str, Any]) -> None:
        self.clients, self.timeout, self.max_retries = clients, timeout, max_retries
        self.backoff_base, self.backoff_max = backoff_base, backoff_max
        self.prices, self.budget, self.report = prices, budget, report

    async def send(self, call: Call, upper: float = 0.0) -> dict[str, Any]:
        """The row of one call: ``ok``, ``paid_error`` (paid, unusable) or ``error`` (not paid)."""
        import openai

        client = self.clients[call.endpoint]
        secrets = [getattr(client, "api_key", "")]
        body = dict(call.body)
        model, messages = body.pop("model"), body.pop("messages")
        attempt = 0
        self.report["called"] += 1
        while True:
            t0 = time.perf_counter()
            wait: float | None = None
            try:
                raw = await client.chat.completions.with_raw_response.create(
                    model=model, messages=messages, extra_body=body or None
                )
                text = raw.http_response.text
            except openai.APITimeoutError:
                self.report["abandoned_timeouts"] += 1
                self.budget.charge(upper)  # the endpoint may have billed it
                last = f"timed out after {self.timeout:g} s"
            except openai.APIConnectionError as exc:
                last = scrub(f"connection error: {exc}", secrets)
            except openai.APIStatusError as exc:
                status = exc.status_code
                last = scrub(f"HTTP {status}: {_message(exc)}", secrets)
                if status not in RETRY_STATUS:
                    return row(call, "error", error=f"api: {last}", attempts=attempt + 1)
                wait = retry_after(exc.response.headers if exc.response is not None else None)
            except openai.OpenAIError as exc:  # any other client-side failure: recorded, not retried
                message = scrub(f"{type(exc).__name__}: {exc}", secrets)
                return row(call, "error", error=f"api: {message}", attempts=attempt + 1)
            else:
                latency = time.perf_counter() - t0
                return answer_row(call, text, latency, attempt + 1, self.prices)
            attempt += 1
            if attempt > self.max_retries:
                return row(call, "error", attempts=attempt,
                           error=f"api: gave up after {attempt} attempts; last: {last}")
            self.report["retries"] += 1
            if wait is not None:
                delay = wait + random.uniform(0.0, 0.1 * wait + 0.01)
            else:
                delay = random.uniform(0.0, min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1)))
            log.debug("retrying a call in %.2f s after: %s", delay, last)
            await asyncio.sleep(delay)


def row(call: Call, status: str, *, response: str | None = None, error: str | None = None,
        prompt_tokens: int | None = None, completion_tokens: int | None = None,
        cost: float = float("nan"), latency: float | None = None, attempts: int = 1) -> dict:
    """A cache row for ``call`` (see :class:`~judgekit.judging.cache.Cache`)."""
    return {
        "key": call.key, "endpoint": call.endpoint, "model": call.body["model"],
        "repeat": call.repeat, "request": json.dumps(call.body, sort_keys=True),
        "response": response, "status": status, "error": error,
        "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
        "cost_usd": cost, "latency_s": latency, "source": "live", "created_at": time.time(),
        "attempts": attempts,
    }


def answer_row(call: Call, text: str, latency: float, attempts: int,
               prices: Mapping[str, tuple[float, float]]) -> dict:
    """The row of an HTTP 200 answer: ``ok``, or ``paid_error`` when it is unusable."""
    try:
        payload = json.loads(text)
        if not isinstance(payload, dict):
            raise ValueError("not an object")
    except ValueError:
        return row(call, "paid_error", response=text, latency=latency, attempts=attempts,
                   error=f"api: malformed JSON response ({len(text)} bytes)")
    usage = payload.get("usage") or {}
    pt, ct = usage.get("prompt_tokens"), usage.get("completion_tokens")
    value = cost(call.body["model"], pt or 0, ct or 0, prices) if usage else float("nan")
    common = {"response": text, "prompt_tokens": pt, "completion_tokens": ct, "cost": value,
              "latency": latency, "attempts": attempts}
    choices = payload.get("choices")
    if not choices:
        return row(call, "paid_error", error="api: response has no choices", **common)
    first = choices[0] if isinstance(choices, list) else None
    if not isinstance(first, dict) or not isinstance(first.get("message"), dict):
        return row(call, "paid_error", error="api: response has no message in choices[0]", **common)
    return row(call, "ok", **common)
