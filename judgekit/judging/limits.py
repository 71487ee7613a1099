"""Pacing calls to an endpoint's rate limits: requests and tokens per window, and the calls in
flight.

Real endpoints limit the requests and the tokens they admit per minute, counting a request at
admission as its prompt tokens plus its ``max_tokens``. :class:`EndpointLimits` keeps a log of the
calls a run sent to one endpoint and sends the next one only when, counting it, the calls in the
last ``window`` seconds stay within both limits, so a long run proceeds at the limit instead of
bouncing off it.

- **Given limits**: ``rpm`` / ``tpm`` passed to the run.
- **Learned limits**: the ``x-ratelimit-limit-requests`` / ``-tokens`` headers OpenAI sends with
  every answer; and, from an endpoint that sends no such headers, each 429 whose error ``type``
  says which limit it hit (``"requests"`` or ``"tokens"``, as OpenAI's do): the requests (or
  tokens) the run had sent in the window before the refused call are what the endpoint admits
  (none sent: nothing is learned, as a limit of one call per window would crawl).
  A limit learned from a 429 is raised by one request (or one average call's tokens) after each
  window without a 429, so it recovers when it was learned too low. A 429 that names no limit
  (an overloaded server) teaches no limit: it only pauses and halves the concurrency. The
  smaller of a given and a learned limit is in force.
- **Tokens**: estimated before the call from the characters of the messages (a quarter of a
  token each, plus 4 per message), scaled by the largest ratio of reported to estimated prompt
  tokens among the last 64 answers, and replaced in the log by the answer's ``usage``.
- **Clock**: a call's place in the log is its send time until it is answered and its answer time
  afterwards (the endpoint admitted it somewhere in between), so the log never lets a call leave
  the window before the endpoint does.
- **Adaptive concurrency**: the calls in flight to the endpoint are capped; a 429 halves the cap
  (once per round: only for a call sent after the last halving), each answer raises it by
  1 / cap, up to the run's ``concurrency``. After a 429 with ``Retry-After`` no call is sent to
  the endpoint before that time, or before ``max_pause`` seconds (the run's ``backoff_max``)
  when it asks for longer: a server asking for a day ends that call, not the run.
- **Limits that cannot work**: a limit in force smaller than one call (``tpm=1``, or a server
  advertising ``x-ratelimit-limit-tokens: 1``) would pace the run at one call per window. An
  advertised token limit smaller than the call the endpoint has just answered is not believed
  (it is ignored); a limit below one call in force (or of one request) is logged at WARNING on
  ``judgekit.engine`` as soon as a call meets it, once per endpoint and kind.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["EndpointLimits", "Ticket", "estimate_tokens"]

log = logging.getLogger("judgekit.engine")

_CHARS_PER_TOKEN = 4.0
_PER_MESSAGE = 4
_KINDS = ("requests", "tokens")


def estimate_tokens(body: Mapping[str, Any]) -> tuple[int, int]:
    """(prompt, most completion) tokens of a request, estimated before it is sent.

    Examples
    --------
    >>> estimate_tokens({"messages": [{"role": "user", "content": "x" * 400}], "max_tokens": 16})
    (104, 16)
    """
    messages = body.get("messages") or []
    chars = 0
    for m in messages:
        content = m.get("content") if isinstance(m, Mapping) else None
        if isinstance(content, list):
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
        chars += len(content) if isinstance(content, str) else 0
    prompt = math.ceil(chars / _CHARS_PER_TOKEN) + _PER_MESSAGE * len(messages)
    completion = body.get("max_tokens") or body.get("max_completion_tokens") or 0
    return prompt, completion if isinstance(completion, int) and completion > 0 else 0


@dataclass(eq=False)
class Ticket:
    """One call's entry in the log."""

    sent_at: float
    raw_prompt: int   # the unscaled estimate, to learn the scale from the usage
    prompt: int
    completion: int
    answered_at: float | None = None
    logged: bool = True

    @property
    def tokens(self) -> int:
        return self.prompt + self.completion


class EndpointLimits:
    """The pacing of one endpoint (see the module docstring).

    Parameters
    ----------
    rpm, tpm : int, optional
        Requests and tokens admitted per ``window`` (None: learned, or no limit).
    window : float
        The limits' window in seconds (60: per minute).
    concurrency : int
        The most calls in flight.
    clock : callable
        Monotonic seconds (a fake clock in tests).
    max_pause : float
        The longest a ``Retry-After`` pauses the endpoint (the run's ``backoff_max``).
    name : str
        The endpoint, for warnings.

    Examples
    --------
    >>> import asyncio
    >>> now = [0.0]
    >>> limits = EndpointLimits(rpm=2, window=10.0, concurrency=4, clock=lambda: now[0])
    >>> async def two_answered():
    ...     for _ in range(2):
    ...         limits.answered(await limits.acquire({"messages": []}), None, {})
    >>> asyncio.run(two_answered())
    >>> limits.wait_time(0)   # a third call fits when the first leaves the window
    10.0
    """

    def __init__(self, rpm: int | None = None, tpm: int | None = None, window: float = 60.0,
                 concurrency: int = 16, clock: Callable[[], float] = time.monotonic,
                 max_pause: float = math.inf, name: str = "the endpoint") -> None:
        self.given: dict[str, int | None] = {"requests": rpm, "tokens": tpm}
        self.learned: dict[str, int | None] = {"requests": None, "tokens": None}
        self._from_refusal = {"requests": False, "tokens": False}
        self.window = float(window)
        self.max_cap = int(concurrency)
        self.cap = float(concurrency)
        self.clock = clock
        self.max_pause, self.name = float(max_pause), name
        self.refusals = 0
        #: warnings given about limits smaller than one call (at most one per kind)
        self.warned: dict[str, str] = {}
        self._log: collections.deque[Ticket] = collections.deque()
        self._tokens = 0
        self._in_flight = 0
        self._paused_until = -math.inf
        self._last_cut = -math.inf
        self._quiet_since = clock()
        self._ratios: collections.deque[float] = collections.deque(maxlen=64)
        self._changed: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None

    def limit(self, which: str) -> int | None:
        """The limit in force (``"requests"`` or ``"tokens"``): the smaller of the given and the
        learned one."""
        values = [v for v in (self.given[which], self.learned[which]) if v is not None]
        return min(values) if values else None

    # ------------------------------------------------------------------ the log
    def _expire(self, now: float) -> None:
        while self._log and self._log[0].answered_at is not None \
                and self._log[0].answered_at <= now - self.window:
            old = self._log.popleft()
            old.logged = False
            self._tokens -= old.tokens

    def _drop(self, ticket: Ticket) -> None:
        if ticket.logged:
            with contextlib.suppress(ValueError):
                self._log.remove(ticket)
                self._tokens -= ticket.tokens
            ticket.logged = False

    def wait_time(self, tokens: int) -> float:
        """Seconds until a call of ``tokens`` fits: 0 now, inf until an answer arrives."""
        now = self.clock()
        self._expire(now)
        if self._in_flight >= max(1, int(self.cap)):
            return math.inf
        wait = self._paused_until - now
        rpm, tpm = self.limit("requests"), self.limit("tokens")
        if rpm is not None and len(self._log) + 1 > rpm:
            wait = max(wait, self._time_to_free(len(self._log) + 1 - rpm, now, by_tokens=False))
        if tpm is not None and self._tokens + tokens > tpm:
            # a call larger than the limit on its own goes when the window is empty (and the
            # endpoint refuses it with its own message)
            excess = self._tokens + tokens - tpm if tokens <= tpm else self._tokens
            wait = max(wait, self._time_to_free(excess, now, by_tokens=True))
        return max(wait, 0.0)

    def _time_to_free(self, excess: int, now: float, *, by_tokens: bool) -> float:
        """Seconds until the oldest calls worth ``excess`` leave the window (inf while one of them
        is in flight)."""
        freed = 0
        for t in self._log:
            if t.answered_at is None:
                return math.inf
            freed += t.tokens if by_tokens else 1
            if freed >= excess:
                return t.answered_at + self.window - now
        return 0.0

    async def acquire(self, body: Mapping[str, Any]) -> Ticket:
        """Wait until the call fits, then log it as sent."""
        if self._lock is None:
            self._lock, self._changed = asyncio.Lock(), asyncio.Event()
        raw, completion = estimate_tokens(body)
        prompt = math.ceil(raw * max(self._ratios, default=1.0))
        tpm = self.limit("tokens")
        if tpm is not None and prompt + completion > tpm and "tokens" not in self.warned:
            source = "given (tpm=)" if tpm == self.given["tokens"] else "advertised by the server"
            self._warn("tokens", f"the token limit {tpm} per {self.window:g} s {source} for "
                       f"{self.name} is smaller than one request (about {prompt + completion} "
                       "tokens): each call waits for an empty window, one call per "
                       f"{self.window:g} s. Check tpm= (tokens per window, not thousands)")
        rpm = self.limit("requests")
        if rpm == 1 and "requests" not in self.warned:
            self._warn("requests", f"the request limit for {self.name} is 1 per {self.window:g} s: "
                       f"the run sends one call per {self.window:g} s")
        async with self._lock:  # first come, first served
            while (wait := self.wait_time(prompt + completion)) > 0:
                self._changed.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), None if math.isinf(wait) else wait)
            ticket = Ticket(self.clock(), raw, prompt, completion)
            self._log.append(ticket)
            self._tokens += ticket.tokens
            self._in_flight += 1
            return ticket

    def _warn(self, which: str, message: str) -> None:
        self.warned[which] = message
        log.warning("%s", message)

    def _settle(self, ticket: Ticket, headers: Mapping[str, str] | None) -> float:
        now = self.clock()
        ticket.answered_at = now
        self._in_flight -= 1
        for which in _KINDS:
            value = _header_int(headers, f"x-ratelimit-limit-{which}")
            if value is None:
                continue
            # the endpoint has just admitted this call: a token limit smaller than the call is
            # not what it enforces (it would pace the run at one call per window)
            if which == "tokens" and value < ticket.tokens:
                if "advertised tokens" not in self.warned:
                    self._warn("advertised tokens", f"{self.name} advertises a limit of {value} "
                               f"tokens per window (x-ratelimit-limit-tokens) but has just "
                               f"admitted a call of about {ticket.tokens}: the advertised limit "
                               "is ignored")
                continue
            self.learned[which], self._from_refusal[which] = value, False
        if self._changed is not None:
            self._changed.set()
        return now

    # ------------------------------------------------------------------ outcomes
    def answered(self, ticket: Ticket, prompt_tokens: int | None,
                 headers: Mapping[str, str] | None) -> None:
        """The endpoint answered (any status but 429): correct the tokens from the usage, learn
        the limits from the headers, grow the cap."""
        now = self._settle(ticket, headers)
        if prompt_tokens is not None:
            if ticket.raw_prompt > 0:
                self._ratios.append(prompt_tokens / ticket.raw_prompt)
            if ticket.logged:
                self._tokens += prompt_tokens - ticket.prompt
            ticket.prompt = prompt_tokens
        self.cap = min(float(self.max_cap), self.cap + 1.0 / max(self.cap, 1.0))
        if now - self._quiet_since > self.window:
            # probe upwards: one request, or one average call's tokens, per window without a 429
            self._quiet_since = now
            step = {"requests": 1, "tokens": max(1, self._tokens // max(len(self._log), 1))}
            for which in _KINDS:
                if self.learned[which] is not None and self._from_refusal[which]:
                    self.learned[which] += step[which]

    def refused(self, ticket: Ticket, retry_after: float | None, kind: str | None,
                headers: Mapping[str, str] | None) -> None:
        """A 429: the call was not admitted. Learn the limit it hit, pause, halve the cap."""
        now = self._settle(ticket, headers)
        self._drop(ticket)
        self.refusals += 1
        self._quiet_since = now
        if kind in _KINDS and _header_int(headers, f"x-ratelimit-limit-{kind}") is None:
            # what the run had sent in the window before this call is what the endpoint admits
            before = [t for t in self._log if ticket.sent_at - self.window < t.sent_at < ticket.sent_at]
            seen = len(before) if kind == "requests" else sum(t.tokens for t in before)
            # a refusal of the window's first call teaches nothing (others share the limit,
            # or the server is wrong): it would set a limit of one call per window
            if seen > 0:
                old = self.learned[kind]
                self.learned[kind] = seen if old is None else min(old, seen)
                self._from_refusal[kind] = True
        if retry_after is not None and math.isfinite(retry_after):
            # a longer wait ends the refused call (the engine); the others go on after max_pause
            self._paused_until = max(self._paused_until, now + min(retry_after, self.max_pause))
        if ticket.sent_at > self._last_cut:
            self.cap = max(1.0, self.cap / 2)
            self._last_cut = now

    def failed(self, ticket: Ticket, *, reached: bool) -> None:
        """No answer: a call that may have reached the endpoint (a dropped connection, a read
        timeout) stays in the log; one that never reached it (no connection) leaves it."""
        self._settle(ticket, None)
        if not reached:
            self._drop(ticket)


def _header_int(headers: Mapping[str, str] | None, name: str) -> int | None:
    if not headers:
        return None
    try:
        number = int(str(headers.get(name)).strip())
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None
