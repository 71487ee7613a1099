"""A sliding-window limit on requests and tokens per window, answered the way OpenAI answers.

Each admitted request is logged with its admission time and its token cost: the prompt tokens
(the server's own count) plus the ``max_tokens`` it asks for, which is how OpenAI counts a request
against its tokens-per-minute limit at admission. A request is admitted when, counting it, the
requests and the tokens admitted in the last ``window`` seconds stay within both limits. Otherwise
it is refused (HTTP 429) with the number of seconds until enough of the log has aged out of the
window for it to fit (``Retry-After``), and nothing is logged.

Every answer carries OpenAI's six ``x-ratelimit-*`` headers for the limits that are set.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Admission", "RateLimiter", "duration"]


def duration(seconds: float) -> str:
    """A wait written the way OpenAI's ``x-ratelimit-reset-*`` headers write it.

    Go's duration format, to the millisecond (rounded up, so the wait is never understated).

    Examples
    --------
    >>> from judgekit.sim.ratelimit import duration
    >>> [duration(s) for s in (0, 0.0171, 1, 1.25, 75.5, 3600)]
    ['0s', '18ms', '1s', '1.25s', '1m15.5s', '60m0s']
    """
    ms = max(math.ceil(round(seconds * 1000, 6)), 0)
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    minutes, rest = divmod(ms, 60_000)
    secs = f"{rest / 1000:.3f}".rstrip("0").rstrip(".")
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


@dataclass
class Admission:
    """The limiter's answer to one request.

    ``admitted`` whether it may run; ``retry_after`` seconds until it would fit (None when admitted,
    or when it can never fit: more tokens than ``tpm``); ``limited_by`` the limits it exceeded
    (``"requests"``, ``"tokens"``); ``headers`` the ``x-ratelimit-*`` headers of the answer.
    """

    admitted: bool
    retry_after: float | None = None
    limited_by: tuple[str, ...] = ()
    too_large: bool = False
    headers: dict[str, str] = field(default_factory=dict)


class RateLimiter:
    """Requests-per-window and tokens-per-window limits over a sliding window.

    Parameters
    ----------
    rpm : int, optional
        Requests admitted per ``window`` seconds (None: no limit).
    tpm : int, optional
        Tokens admitted per ``window`` seconds (None: no limit).
    window : float
        Length of the sliding window in seconds (60 for per-minute limits).
    clock : callable
        Monotonic time in seconds (a fake clock in tests).

    Examples
    --------
    >>> from judgekit.sim.ratelimit import RateLimiter
    >>> now = [0.0]
    >>> limiter = RateLimiter(rpm=2, tpm=100, window=10.0, clock=lambda: now[0])
    >>> [limiter.admit(30).admitted for _ in range(3)]
    [True, True, False]
    >>> now[0] = 4.0
    >>> limiter.admit(30).retry_after   # the first request leaves the window at t = 10
    6.0
    >>> limiter.admit(30).headers["x-ratelimit-remaining-tokens"]
    '40'
    """

    def __init__(self, rpm: int | None = None, tpm: int | None = None, window: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        for name, value in (("rpm", rpm), ("tpm", tpm)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
        window = float(window)
        if not (window > 0 and math.isfinite(window)):
            raise ValueError(f"rate_window must be a positive number of seconds, got {window!r}")
        self.rpm, self.tpm, self.window = rpm, tpm, window
        self._clock = clock
        self._log: deque[tuple[float, int]] = deque()  # (admitted at, tokens), oldest first
        self._tokens = 0

    @property
    def active(self) -> bool:
        return self.rpm is not None or self.tpm is not None

    def _expire(self, now: float) -> None:
        while self._log and self._log[0][0] <= now - self.window:
            self._tokens -= self._log.popleft()[1]

    def usage(self) -> tuple[int, int]:
        """(requests, tokens) admitted in the current window."""
        self._expire(self._clock())
        return len(self._log), self._tokens

    def admit(self, tokens: int) -> Admission:
        """Admit (and log) a request costing ``tokens``, or refuse it with the wait."""
        tokens = max(int(tokens), 0)
        now = self._clock()
        self._expire(now)
        waits: list[float] = []
        limited: list[str] = []
        too_large = self.tpm is not None and tokens > self.tpm
        if self.rpm is not None and len(self._log) + 1 > self.rpm:
            limited.append("requests")
            # the (n - rpm)-th oldest entry must leave the window for one more request to fit
            waits.append(self._log[len(self._log) - self.rpm][0] + self.window - now)
        if self.tpm is not None and self._tokens + tokens > self.tpm:
            limited.append("tokens")
            if not too_large:
                excess, freed = self._tokens + tokens - self.tpm, 0
                for admitted_at, cost in self._log:
                    freed += cost
                    if freed >= excess:
                        waits.append(admitted_at + self.window - now)
                        break
        if limited:
            wait = None if too_large else max(max(waits), 0.0)
            return Admission(False, wait, tuple(limited), too_large, self._headers(now))
        self._log.append((now, tokens))
        self._tokens += tokens
        return Admission(True, headers=self._headers(now))

    def _headers(self, now: float) -> dict[str, str]:
        out: dict[str, str] = {}
        reset = self._log[-1][0] + self.window - now if self._log else 0.0
        if self.rpm is not None:
            out["x-ratelimit-limit-requests"] = str(self.rpm)
            out["x-ratelimit-remaining-requests"] = str(max(self.rpm - len(self._log), 0))
            out["x-ratelimit-reset-requests"] = duration(reset)
        if self.tpm is not None:
            out["x-ratelimit-limit-tokens"] = str(self.tpm)
            out["x-ratelimit-remaining-tokens"] = str(max(self.tpm - self._tokens, 0))
            out["x-ratelimit-reset-tokens"] = duration(reset)
        return out
