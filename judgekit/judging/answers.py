"""Paid answers as untrusted data: the one reader of an answer's text, for live answers, Batch
API output lines and answers read back from the cache.

An answer that was paid for is kept whatever it holds. :func:`read_answer` turns the text of an
HTTP 200 answer into what the cache stores: the text itself (cut at ``max_answer_bytes``), a
status (``ok``, or ``paid_error`` with the reason when it is unusable), the token counts and the
cost. It never raises: a body that is not JSON, JSON nested too deeply for Python's parser, an
answer without choices, usage numbers that are not believable (text that is not plain ASCII
digits, negative, fractional, larger than :data:`MAX_TOKENS`), a price that cannot be computed,
all become fields of the row (a missing count, a NaN cost, an error), so the answer is stored
before anything can fail on it and a re-run reads it instead of paying again.

:func:`checked_row` reads a stored answer back the same way, trusting nothing the file holds (a
cache may be damaged or edited): an ``ok`` row whose text no longer reads as an answer becomes
an error row with its reason, and numbers that are not believable are dropped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from judgekit.judging.pricing import cost

__all__ = ["MAX_ANSWER_BYTES", "MAX_TOKENS", "Answer", "checked_row", "parse_body",
           "read_answer", "usage_tokens"]

#: the default largest answer kept whole, in bytes (``max_answer_bytes``)
MAX_ANSWER_BYTES = 16 * 1024 * 1024
#: the largest believable token count: 2**53, which a float column holds exactly (and far below
#: SQLite's 64-bit integers)
MAX_TOKENS = 2**53


@dataclass(frozen=True)
class Answer:
    """What a paid answer is stored as.

    ``status`` is ``ok`` or ``paid_error``; ``response`` the text stored (cut at the size
    limit); ``error`` why it is unusable; ``cost`` NaN when unknown; ``payload`` the parsed
    answer of an ``ok`` answer (not stored).
    """

    status: str
    response: str | None
    error: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float = float("nan")
    payload: dict[str, Any] | None = None


def _whole(value: Any) -> int | None:
    """A token count: a whole number from 0 to :data:`MAX_TOKENS` (as a number, or as plain
    ASCII digits), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip()
        if not (value.isascii() and value.isdigit()) or len(value) > 16:
            return None
        value = int(value)
    elif isinstance(value, float):
        if not (math.isfinite(value) and value.is_integer()):
            return None
        value = int(value)
    if isinstance(value, int) and 0 <= value <= MAX_TOKENS:
        return value
    return None


def usage_tokens(usage: Any) -> tuple[int | None, int | None]:
    """(prompt, completion) tokens of an answer's ``usage``, each None unless a whole number
    from 0 to :data:`MAX_TOKENS` (numbers written as plain ASCII digits are read; anything
    else is not trusted).

    Examples
    --------
    >>> usage_tokens({"prompt_tokens": "12", "completion_tokens": 3})
    (12, 3)
    >>> usage_tokens({"prompt_tokens": -10_000_000, "completion_tokens": 0}), usage_tokens("n/a")
    ((None, 0), (None, None))
    >>> usage_tokens({"prompt_tokens": "\\u00b2", "completion_tokens": 10**30})
    (None, None)
    """
    if not isinstance(usage, Mapping):
        return None, None
    return _whole(usage.get("prompt_tokens")), _whole(usage.get("completion_tokens"))


def _utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _cut(text: str, limit: int) -> str:
    """The longest start of ``text`` whose UTF-8 form fits in ``limit`` bytes."""
    return text.encode("utf-8", "surrogatepass")[:limit].decode("utf-8", "ignore")


def _storable(text: str) -> str:
    """``text`` as SQLite can store it: lone surrogates (which UTF-8 cannot hold) escaped."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def parse_body(text: Any) -> tuple[dict[str, Any] | None, str | None]:
    """(the answer's JSON object, None), or (None, why it is not one). Never raises.

    Examples
    --------
    >>> parse_body('{"choices": []}')
    ({'choices': []}, None)
    >>> parse_body("[" * 100_000)[1]
    'nested too deeply to read'
    >>> parse_body(b"\\xff")[1], parse_body("[1]")[1]
    ('not UTF-8 text', 'not a JSON object')
    """
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            return None, "not UTF-8 text"
    if not isinstance(text, str):
        return None, f"not text ({type(text).__name__})"
    try:
        payload = json.loads(text)
    except RecursionError:
        return None, "nested too deeply to read"
    except ValueError as exc:   # also numbers with more digits than Python converts
        return None, f"not JSON ({str(exc)[:120]})"
    except Exception as exc:  # a paid answer never aborts a run
        return None, f"unreadable ({type(exc).__name__})"
    if not isinstance(payload, dict):
        return None, "not a JSON object"
    return payload, None


def _shape(payload: Mapping[str, Any]) -> str | None:
    """Why a parsed answer cannot be judged (None when it can)."""
    choices = payload.get("choices")
    if not choices:
        return "response has no choices"
    first = choices[0] if isinstance(choices, list) else None
    if not isinstance(first, dict) or not isinstance(first.get("message"), dict):
        return "response has no message in choices[0]"
    return None


def _cost(model: Any, pt: int | None, ct: int | None,
          prices: Mapping[str, tuple[float, float]], factor: float) -> float:
    if pt is None or ct is None or not isinstance(model, str):
        return float("nan")
    try:
        value = float(cost(model, pt, ct, prices, factor))
    except Exception:  # a price that cannot be computed is unknown, not fatal
        return float("nan")
    return value if math.isfinite(value) and value >= 0 else float("nan")


def read_answer(text: Any, *, model: Any, prices: Mapping[str, tuple[float, float]],
                factor: float = 1.0, max_bytes: int = MAX_ANSWER_BYTES) -> Answer:
    """What to store for the text of a paid (HTTP 200) answer. Never raises.

    Parameters
    ----------
    text : str or bytes
        The answer's body.
    model : str
        The model the request named (for its price).
    prices : mapping
        The price table (USD per million tokens).
    factor : float
        Price factor (the Batch API's discount).
    max_bytes : int
        The largest answer read (``max_answer_bytes``): a longer one is stored cut to that many
        bytes, as a ``paid_error`` saying so.

    Returns
    -------
    Answer

    Examples
    --------
    >>> ok = read_answer('{"choices": [{"message": {"content": "A"}}], '
    ...                  '"usage": {"prompt_tokens": 10, "completion_tokens": "\\u00b2"}}',
    ...                  model="m", prices={})
    >>> ok.status, ok.prompt_tokens, ok.completion_tokens
    ('ok', 10, None)
    >>> deep = read_answer("[" * 100_000 + "]" * 100_000, model="m", prices={})
    >>> deep.status, deep.error, len(deep.response)
    ('paid_error', 'api: malformed JSON response (200000 bytes): nested too deeply to read', 200000)
    >>> big = read_answer('{"choices": "' + "x" * 100 + '"}', model="m", prices={}, max_bytes=50)
    >>> big.status, big.error, len(big.response)
    ('paid_error', 'api: answer of 115 bytes is larger than max_answer_bytes=50 (stored cut to 50 bytes)', 50)
    """
    try:
        return _read(text, model, prices, factor, max_bytes)
    except Exception as exc:  # a paid answer is stored whatever happens in reading it
        kept = text[:max_bytes] if isinstance(text, (str, bytes)) else None
        if isinstance(kept, bytes):
            kept = kept.decode("utf-8", "replace")
        kept = _storable(kept) if kept is not None else None
        return Answer("paid_error", kept, f"api: unreadable answer ({type(exc).__name__})")


def _read(text: Any, model: Any, prices: Mapping[str, tuple[float, float]], factor: float,
          max_bytes: int) -> Answer:
    if isinstance(text, (bytes, bytearray, memoryview)):
        raw = bytes(text)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            kept = raw[:max_bytes].decode("utf-8", "replace")
            return Answer("paid_error", kept, f"api: answer is not UTF-8 text (byte {exc.start}); "
                                               "stored with the bad bytes replaced")
    if not isinstance(text, str):
        return Answer("paid_error", None, f"api: answer is not text ({type(text).__name__})")
    text = _storable(text)
    # len(text) characters take at most 4 bytes each: measure only when it could be too long
    size = _utf8_size(text) if 4 * len(text) > max_bytes else len(text)
    if size > max_bytes:
        return Answer("paid_error", _cut(text, max_bytes),
                      f"api: answer of {size} bytes is larger than max_answer_bytes={max_bytes} "
                      f"(stored cut to {max_bytes} bytes)")
    payload, reason = parse_body(text)
    if payload is None:
        return Answer("paid_error", text, f"api: malformed JSON response ({size} bytes): {reason}")
    pt, ct = usage_tokens(payload.get("usage"))
    value = _cost(model, pt, ct, prices, factor)
    problem = _shape(payload)
    if problem is not None:
        return Answer("paid_error", text, f"api: {problem}", pt, ct, value)
    return Answer("ok", text, None, pt, ct, value, payload)


def _amount(value: Any) -> float:
    """A stored cost or latency: a finite number >= 0, else NaN."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return float("nan")
    try:
        value = float(value)
    except OverflowError:
        return float("nan")
    return value if math.isfinite(value) and value >= 0 else float("nan")


def checked_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A stored answer read back (a cache row's answer columns), checked as a live answer is.
    Never raises.

    Token counts, cost and latency that are not believable are dropped (None, NaN); an ``ok``
    row gets its parsed answer as ``payload``, or becomes a ``paid_error`` row with the reason
    when its text no longer reads as an answer; a row of another status keeps its error (as
    text) and gets one when it has none.

    Examples
    --------
    >>> row = checked_row({"status": "ok", "response": "[" * 5000, "prompt_tokens": "x"})
    >>> row["status"], row["error"], row["prompt_tokens"]
    ('paid_error', 'api: unreadable response (stored answer: malformed JSON, nested too deeply to read)', None)
    """
    out = dict(row)
    out["prompt_tokens"] = _whole(row.get("prompt_tokens"))
    out["completion_tokens"] = _whole(row.get("completion_tokens"))
    out["cost_usd"] = _amount(row.get("cost_usd"))
    latency = _amount(row.get("latency_s"))
    out["latency_s"] = None if math.isnan(latency) else latency
    status, error = row.get("status"), row.get("error")
    if status != "ok":
        if not isinstance(error, str) or not error:
            shown = status if isinstance(status, str) else type(status).__name__
            error = f"api: the stored answer has status {shown[:40]!r} and no readable error"
        out.update(status="paid_error" if status != "error" else status, error=error,
                   payload=None)
        return out
    payload = row.get("payload")
    if payload is None:
        payload, reason = parse_body(row.get("response"))
        if payload is None:
            out.update(status="paid_error", payload=None,
                       error=f"api: unreadable response (stored answer: malformed JSON, {reason})")
            return out
    problem = _shape(payload)
    if problem is not None:
        out.update(status="paid_error", payload=None,
                   error=f"api: unreadable response (stored answer: {problem})")
        return out
    out.update(error=None, payload=payload)
    return out
