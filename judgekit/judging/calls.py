"""One call over HTTP: pace it, send it, retry what was not paid, and turn the answer into a
cache row.

Failures are sorted by what they may have cost:

- **not sent** (no connection could be made, the request could not be written, no free
  connection in time): retried; connection failures also count towards stopping the run when an
  endpoint cannot be reached at all (:class:`~judgekit.exceptions.JudgeConnectionError`);
- **refused** (429, 5xx and the other retryable statuses): retried after ``Retry-After`` when the
  server gives one (at most ``backoff_max`` seconds: a longer wait ends the call as an error),
  else after an exponential backoff with full jitter;
- **may have been billed** (the request reached the server and no answer came: a read timeout, a
  connection dropped while waiting): charged at its upper bound against the budget, which must
  cover the next attempt before it is made, and reported;
- **paid but unusable** (malformed JSON, no choices, larger than ``max_answer_bytes``): a
  ``paid_error`` row with its reason, stored, not retried. Reading an answer never raises
  (:mod:`judgekit.judging.answers`), so an odd answer costs its own row, not the run.
  An answer refused on this side as it came (headers beyond the client's limits, an
  encoding not asked for) is a ``paid_error`` too: the same answer would come again.
- **an error said with a 200** (``{"error": {...}}`` and no ``choices``, as some routers report
  an upstream failure): handled as the status the error names (its ``code`` when that is an
  HTTP status, else 429 for a rate-limit type, else 502), with the server's message.

Every error message and stored answer is scrubbed of the keys the call used.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from judgekit.exceptions import JudgeConnectionError
from judgekit.judging.answers import MAX_ANSWER_BYTES, parse_body, read_answer, usage_tokens
from judgekit.judging.budget import Reservation
from judgekit.judging.limits import EndpointLimits
from judgekit.judging.requests import Call
from judgekit.judging.secrets import scrub, scrub_known
from judgekit.judging.transport import CONNECT, ClientFailure, NoAnswer, Transport, Unreadable

__all__ = ["Endpoint", "Sender", "answer_row", "error_in_200", "error_info", "retry_after", "row",
           "usage_tokens"]

log = logging.getLogger("judgekit.engine")

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
#: 429 codes that waiting does not cure
_FINAL_429 = {"insufficient_quota", "request_too_large", "billing_hard_limit_reached"}


def retry_after(headers: Any) -> float | None:
    """Seconds the server asks to wait (``retry-after-ms``, or ``Retry-After`` as seconds or an
    HTTP date); None when absent or unreadable, ``inf`` for an infinite wait.

    Examples
    --------
    >>> retry_after({"retry-after": "2"}), retry_after({"retry-after": "inf"})
    (2.0, inf)
    >>> retry_after({"retry-after": "nan"}), retry_after({"retry-after": "-5"})
    (None, 0.0)
    """
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / scale
        except ValueError:
            seconds = _http_date(value) if scale == 1.0 else None
        if seconds is not None and not math.isnan(seconds):
            return max(seconds, 0.0)
    return None


def _http_date(value: str) -> float | None:
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return None if when is None else when.timestamp() - time.time()


def error_info(status: int, text: str) -> tuple[str, str | None, str | None]:
    """(message, code, type) of an error answer: OpenAI's ``{"error": {"message", "type",
    "code"}}``, else the start of the body.

    Examples
    --------
    >>> error_info(429, '{"error": {"message": "slow down", "type": "requests", "code": null}}')
    ('slow down', None, 'requests')
    >>> error_info(502, "<html>Bad Gateway</html>")
    ('Error code: 502 - <html>Bad Gateway</html>', None, None)
    """
    body, _ = parse_body(text)   # never raises (JSON nested too deeply is no JSON here)
    inner = body.get("error", body) if isinstance(body, Mapping) else None
    if isinstance(inner, Mapping):
        message = inner.get("message")
        code, kind = inner.get("code"), inner.get("type")
        # only plain values are shown: str() of a deeply nested one could overflow the stack
        code = str(code)[:100] if isinstance(code, (str, int)) and not isinstance(code, bool) \
            else None
        kind = kind if isinstance(kind, str) else None
        if message and isinstance(message, (str, int, float)):
            return str(message)[:300], code, kind
    else:
        code = kind = None
    detail = text[:400].strip()
    return (f"Error code: {status} - {detail}" if detail else f"Error code: {status}")[:300], code, kind


def error_in_200(text: str) -> int | None:
    """The status a 2xx answer stands for when it is an error object without ``choices``
    (``{"error": {"message", "code"}}``), else None.

    Examples
    --------
    >>> error_in_200('{"error": {"message": "upstream overloaded", "code": 502}}')
    502
    >>> error_in_200('{"error": {"message": "slow down", "type": "rate_limit_error"}}')
    429
    >>> error_in_200('{"choices": [], "error": null}') is None
    True
    """
    if '"error"' not in text:   # the common case costs one substring search
        return None
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(payload, Mapping) or payload.get("choices") or not payload.get("error"):
        return None
    inner = payload["error"]
    code = inner.get("code", inner.get("status")) if isinstance(inner, Mapping) else None
    try:
        status = int(str(code).strip())
    except ValueError:
        status = 0
    if 400 <= status <= 599:
        return status
    words = " ".join(str(inner.get(k, "")) for k in ("type", "code")) \
        if isinstance(inner, Mapping) else str(inner)
    words = words.lower()
    return 429 if "rate" in words or "quota" in words else 502


@dataclass
class Endpoint:
    """What a run knows about one endpoint: its transport, the keys to scrub, its pacing, and
    whether it can be reached."""

    transport: Transport
    secrets: list[str]
    limits: EndpointLimits
    calls: int = 0
    connected: bool = False
    failures_in_row: int = 0
    unreachable: set[str] = field(default_factory=set)


class Sender:
    """Sends calls (with retries) and counts into ``report``; sets :attr:`abort` when an
    endpoint cannot be reached, after which no call is sent or retried."""

    def __init__(self, *, endpoints: Mapping[str, Endpoint], timeout: float, max_retries: int,
                 backoff_base: float, backoff_max: float,
                 prices: Mapping[str, tuple[float, float]], report: dict[str, Any],
                 max_answer_bytes: int = MAX_ANSWER_BYTES) -> None:
        self.endpoints, self.timeout, self.max_retries = endpoints, timeout, max_retries
        self.max_answer_bytes = max_answer_bytes
        self.backoff_base, self.backoff_max = backoff_base, backoff_max
        self.prices, self.report = prices, report
        self.abort: JudgeConnectionError | None = None

    async def send(self, call: Call, money: Reservation) -> dict[str, Any]:
        """The row of one call: ``ok``, ``paid_error`` (paid, unusable) or ``error`` (not paid,
        or not known to be)."""
        where = self.endpoints[call.url]
        transport, secrets = where.transport, where.secrets
        attempt = 0
        self.report["called"] += 1
        where.calls += 1
        while True:
            if self.abort is not None:
                return row(call, "error", attempts=attempt,
                           error=f"api: not sent: the run stopped ({self.abort.args[0][:200]})")
            ticket = await where.limits.acquire(call.body)
            t0 = time.perf_counter()
            wait: float | None = None
            try:
                reply = await transport.chat(call.body)
            except NoAnswer as exc:
                where.limits.failed(ticket, reached=exc.reached)
                last = scrub(f"timed out after {self.timeout:g} s" if exc.kind == "ReadTimeout"
                             else f"connection error ({exc.text})", secrets)
                if exc.reached:  # the endpoint may have billed it
                    self._maybe_billed(exc.kind, money)
                    if not await money.renew():
                        return row(call, "error", attempts=attempt + 1,
                                   error=f"api: {last}; not retried: the budget cannot cover "
                                         "another attempt")
                elif exc.kind in CONNECT:
                    self._connect_failed(call, where, attempt, last)
            except ClientFailure as exc:  # any other client-side failure: recorded, not retried
                where.limits.failed(ticket, reached=False)
                return row(call, "error", error=f"api: {scrub(str(exc), secrets)}",
                           attempts=attempt + 1)
            except Unreadable as exc:   # an answer came and cannot be kept: final
                self._reached(where)
                where.limits.answered(ticket, None, exc.headers)
                last = scrub(exc.reason, secrets)
                if exc.status == 0 or 200 <= exc.status < 300:
                    # paid: stored with the first max_answer_bytes of it, when it was too large
                    kept = scrub_known(exc.kept.decode("utf-8", "replace"), secrets) \
                        if exc.kept else None
                    return row(call, "paid_error", response=kept, error=f"api: {last}",
                               attempts=attempt + 1, latency=time.perf_counter() - t0)
                last = f"HTTP {exc.status}: {last}"
                if exc.status not in RETRY_STATUS:
                    return row(call, "error", error=f"api: {last}", attempts=attempt + 1)
            else:
                self._reached(where)
                status = reply.status
                said = error_in_200(reply.text) if 200 <= status < 300 else None
                if said is not None:
                    status = said   # an error said with a 200: handled as the status it names
                if 200 <= status < 300:
                    out = answer_row(call, scrub_known(reply.text, secrets),
                                     time.perf_counter() - t0, attempt + 1, self.prices,
                                     max_bytes=self.max_answer_bytes)
                    where.limits.answered(ticket, out["prompt_tokens"], reply.headers)
                    return out
                message, code, kind = error_info(status, reply.text)
                last = scrub(f"HTTP {reply.status}: {message}", secrets)
                if status == 429:
                    self.report["rate_limited"] += 1
                    wait = retry_after(reply.headers)
                    where.limits.refused(ticket, wait, kind, reply.headers)
                else:
                    where.limits.answered(ticket, None, reply.headers)
                if status not in RETRY_STATUS or (code or kind or "") in _FINAL_429:
                    return row(call, "error", error=f"api: {last}", attempts=attempt + 1)
                if wait is not None and wait > self.backoff_max:
                    self.report["retry_after_too_long"] += 1
                    return row(call, "error", attempts=attempt + 1,
                               error=f"api: {last}; the server asks to retry after {wait:g} s, "
                                     f"more than backoff_max={self.backoff_max:g} s: not retried")
            attempt += 1
            if attempt > self.max_retries:
                self.report["gave_up"] += 1
                return row(call, "error", attempts=attempt,
                           error=f"api: gave up after {attempt} attempts; last: {last}")
            self.report["retries"] += 1
            if wait is not None:
                delay = wait + random.uniform(0.0, 0.1 * wait + 0.01)
            else:
                delay = random.uniform(0.0, min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1)))
            log.debug("retrying a call in %.2f s after: %s", delay, last)
            await asyncio.sleep(delay)

    def _maybe_billed(self, kind: str, money: Reservation) -> None:
        key = "abandoned_timeouts" if kind == "ReadTimeout" else "dropped_connections"
        self.report[key] += 1
        self.report["unconfirmed_usd"] += money.upper

    def _reached(self, where: Endpoint) -> None:
        where.connected, where.failures_in_row = True, 0

    def _connect_failed(self, call: Call, where: Endpoint, attempt: int, last: str) -> None:
        """Stop the run when an endpoint cannot be reached: the first calls to it each failed to
        connect twice, or, after it had answered, twice ``concurrency`` (at least 8) attempts in
        a row failed."""
        where.failures_in_row += 1
        if where.connected:
            if where.failures_in_row < max(8, 2 * where.limits.max_cap):
                return
            reason = f"it stopped accepting connections after answering ({where.failures_in_row} " \
                     "attempts in a row failed)"
        else:
            if attempt >= 1:
                where.unreachable.add(call.key)
            if len(where.unreachable) < min(3, where.calls):
                return
            reason = f"the first {len(where.unreachable)} calls each failed to connect twice"
        if self.abort is None:
            self.abort = JudgeConnectionError(
                f"cannot reach the judge endpoint {call.endpoint}: {reason}; last error: {last}. "
                "Check the judge's base_url (or OPENAI_BASE_URL), the network and the server; "
                "answers already received are in the cache, so a re-run resumes")


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
               prices: Mapping[str, tuple[float, float]], *,
               max_bytes: int = MAX_ANSWER_BYTES) -> dict:
    """The row of an HTTP 200 answer (:func:`~judgekit.judging.answers.read_answer`, which never
    raises): ``ok``, or ``paid_error`` with the reason when it is unusable. Its cost is NaN when
    the usage is missing or not believable (then the budget charges the upper bound). An ``ok``
    row also carries the parsed answer as ``payload`` (not stored)."""
    answer = read_answer(text, model=call.body["model"], prices=prices, max_bytes=max_bytes)
    out = row(call, answer.status, response=answer.response, error=answer.error,
              prompt_tokens=answer.prompt_tokens, completion_tokens=answer.completion_tokens,
              cost=answer.cost, latency=latency, attempts=attempts)
    if answer.payload is not None:
        out["payload"] = answer.payload  # the parsed answer, so the judgment need not parse it again
    return out
