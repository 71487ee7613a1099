"""Fault injection for the simulated server: which attempt of which request fails, and how.

The choice is a pure function of (request body digest, attempt number, seed), so a retried request
eventually succeeds, two runs of the same job see the same faults, and the rate limiter or the
timing of a run cannot change which attempt fails. The digest is of the body's content (canonical
JSON), not of its bytes, so two clients that write the same request differently (key order,
spacing, escapes) see the same faults.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["FAULT_KINDS", "Faults", "body_digest"]


def body_digest(body: Mapping[str, Any]) -> bytes:
    """The sha256 of a request body's canonical JSON (keys sorted, compact, UTF-8).

    Examples
    --------
    >>> body_digest({"model": "m", "messages": []}) == body_digest({"messages": [], "model": "m"})
    True
    """
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).digest()

#: the fault fields of :class:`Faults`, in the order their rates are stacked
FAULT_KINDS = (
    "rate_429", "rate_500", "rate_503", "rate_timeout", "rate_drop", "rate_malformed",
    "rate_empty_choices", "rate_missing_logprobs", "rate_truncated", "rate_drop_paid",
    "rate_usage_text", "rate_usage_invalid", "rate_usage_negative", "rate_reflect_key",
    "rate_content_parts", "rate_content_null",
)


@dataclass(frozen=True)
class Faults:
    """Fault rates of the simulated server (each a probability per attempt).

    Which attempt fails is a pure function of (request body, attempt number, ``seed``), so a
    retried request eventually succeeds and a run is reproducible.

    Parameters
    ----------
    rate_429 : float
        Rate limit: status 429 with a ``Retry-After`` header of ``retry_after`` seconds. Not paid.
        (The sliding-window limiter of :class:`~judgekit.sim.SimServer`'s ``rpm``/``tpm`` is
        separate: it answers 429 by the load, not by chance.)
    rate_500, rate_503 : float
        Server errors. Not paid.
    rate_timeout : float
        The answer is generated (paid), then held back for ``stall_s`` seconds: a client with a
        shorter timeout abandons a paid call.
    rate_drop : float
        The connection is closed before any answer. Not paid.
    rate_malformed : float
        Status 200 with a body that is not JSON. Paid.
    rate_empty_choices : float
        Status 200 with ``choices: []``. Paid.
    rate_missing_logprobs : float
        A normal answer without logprobs. Paid.
    rate_truncated : float
        The answer is cut before the verdict, ``finish_reason="length"``. Paid.
    rate_drop_paid : float
        The answer is generated (paid), then the connection is closed without a reply.
    rate_usage_text, rate_usage_invalid, rate_usage_negative : float
        A normal answer whose ``usage`` holds numbers written as text, is not an object
        (``"n/a"``), or holds a negative prompt count. Paid.
    rate_reflect_key : float
        A normal answer whose text ends with the request's ``Authorization`` header, as a
        debugging proxy might reflect it. Paid.
    rate_content_parts, rate_content_null : float
        A normal answer whose message content is a list of text parts, or null. Paid.
    retry_after : float or str
        ``Retry-After`` of the injected 429s: seconds, or any text (``"inf"``, an HTTP date).
    stall_s : float
        Seconds a stalled answer is held back.
    seed : int
        Seeds the choice of faulty attempts.

    Examples
    --------
    >>> import hashlib, judgekit as jk
    >>> faults = jk.sim.Faults(rate_500=0.5, seed=1)
    >>> digest = hashlib.sha256(b'{"messages": []}').digest()
    >>> [faults.pick(digest, attempt) for attempt in range(4)] == [
    ...     faults.pick(digest, attempt) for attempt in range(4)]
    True
    >>> {faults.pick(digest, a) for a in range(50)} == {"500", None}
    True
    """

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_503: float = 0.0
    rate_timeout: float = 0.0
    rate_drop: float = 0.0
    rate_malformed: float = 0.0
    rate_empty_choices: float = 0.0
    rate_missing_logprobs: float = 0.0
    rate_truncated: float = 0.0
    rate_drop_paid: float = 0.0
    rate_usage_text: float = 0.0
    rate_usage_invalid: float = 0.0
    rate_usage_negative: float = 0.0
    rate_reflect_key: float = 0.0
    rate_content_parts: float = 0.0
    rate_content_null: float = 0.0
    retry_after: float | str = 0.05
    stall_s: float = 5.0
    seed: int = 0

    def __post_init__(self) -> None:
        rates = [getattr(self, k) for k in FAULT_KINDS]
        if any(not 0.0 <= r <= 1.0 for r in rates) or sum(rates) > 1.0:
            raise ValueError(f"fault rates must be in [0, 1] and sum to at most 1, got {rates}")

    @property
    def retry_after_header(self) -> str:
        """The ``Retry-After`` header value of an injected 429."""
        value = self.retry_after
        return value if isinstance(value, str) else f"{value:g}"

    def pick(self, digest: bytes, attempt: int) -> str | None:
        """The fault of this attempt (``"429"``, ``"drop"``, ...), or None.

        Parameters
        ----------
        digest : bytes
            The request body's :func:`body_digest`.
        attempt : int
            How many earlier attempts of the same body the server has seen.
        """
        h = hashlib.blake2b(digest + f"|{attempt}|{self.seed}".encode(), digest_size=8).digest()
        u = (int.from_bytes(h, "little") >> 11) / 2.0**53
        acc = 0.0
        for kind in FAULT_KINDS:
            acc += getattr(self, kind)
            if u < acc:
                return kind[len("rate_"):]
        return None
