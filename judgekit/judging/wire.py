"""What every transport returns and raises, and reading an answer off the wire within limits.

A transport (:mod:`~judgekit.judging.transport`) answers a call with a :class:`Reply` (status,
headers, text), or raises :class:`NoAnswer` (no answer came; its ``kind`` named as httpx names
it, whichever HTTP library saw it), :class:`ClientFailure` (the request could not be made on
this side) or :class:`Unreadable` (an answer came and cannot be kept). The engine sorts calls by
these alone, so retries, the budget and the counts are the same whichever transport carried them.

Both transports read an answer's bytes as they arrive and hand them to a :class:`BoundedBody`,
which decompresses them itself (``gzip``, ``deflate``, and both stacked; the only encodings a run
asks for) a bounded piece at a time, so a few megabytes that inflate to gigabytes are refused
after ``limit`` bytes of output, not after the machine's memory is gone. An answer larger than
the limit, compressed or not, in an encoding the run did not ask for, or damaged, raises
:class:`Unreadable`: an answer came (the endpoint may have billed it) and cannot be kept, which
the engine records as final (a ``paid_error`` row for a 200, the status's own handling for an
error status) and never sends again in the same run.
"""

from __future__ import annotations

import contextvars
import json
import sys
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ACCEPT_ENCODING", "CONNECT", "DEFAULT_MAX_ANSWER_BYTES", "NOT_SENT", "SDK_LIMIT",
           "BoundedBody", "ClientFailure", "NoAnswer", "Reply", "Unreadable", "bound_http_client",
           "deadline", "declared_length", "dumps", "env_proxy", "header_refusal",
           "headers_refused", "named"]

#: the largest answer a run reads, on the wire and decompressed (``max_answer_bytes``)
DEFAULT_MAX_ANSWER_BYTES = 16 * 1024 * 1024
#: the encodings a run asks for, and decodes itself
ACCEPT_ENCODING = "gzip, deflate"
#: output produced per decompression step: the most memory one step can take
_STEP = 1 << 16
#: failures after which the request certainly did not reach the endpoint
NOT_SENT = frozenset({"ConnectError", "ConnectTimeout", "PoolTimeout", "WriteError", "WriteTimeout",
                      "UnsupportedProtocol", "LocalProtocolError", "InvalidURL"})
#: failures to open a connection (they count towards stopping the run)
CONNECT = frozenset({"ConnectError", "ConnectTimeout"})


@dataclass(frozen=True)
class Reply:
    """What the endpoint answered: status, headers (case-insensitive) and the body as text."""

    status: int
    headers: Mapping[str, str]
    text: str


class NoAnswer(Exception):
    """No answer came: ``kind`` says why (see :data:`NOT_SENT`), ``text`` is ``"Kind: detail"``."""

    def __init__(self, kind: str, text: str) -> None:
        super().__init__(text)
        self.kind, self.text = kind, text

    @property
    def reached(self) -> bool:
        """True when the request may have reached the endpoint (and may have been billed)."""
        return self.kind not in NOT_SENT


class ClientFailure(Exception):
    """The request could not be made at all on this side (recorded, not retried)."""


def dumps(body: Mapping[str, Any]) -> bytes:
    """The JSON bytes of a request body, as the ``openai`` SDK writes them: compact, UTF-8,
    ``model`` and ``messages`` first.

    Examples
    --------
    >>> dumps({"temperature": 0, "messages": [{"role": "user", "content": "é"}], "model": "m"})
    b'{"model":"m","messages":[{"role":"user","content":"\\xc3\\xa9"}],"temperature":0}'
    """
    ordered = {"model": body["model"], "messages": body["messages"], **body}
    return json.dumps(ordered, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def env_proxy(url: str) -> str | None:
    """The proxy for ``url`` from the environment (``HTTP_PROXY``, ``HTTPS_PROXY``,
    ``ALL_PROXY``, ``NO_PROXY``, upper or lower case), as httpx (and so the SDK) reads them; None
    for none. Read once per endpoint: reading the environment for every request would cost more
    than the request.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"HTTPS_PROXY": "http://proxy.example:3128",
    ...                                   "NO_PROXY": "localhost"}, clear=True):
    ...     env_proxy("https://api.example/v1"), env_proxy("http://localhost:8000/v1")
    ('http://proxy.example:3128', None)
    """
    from urllib.parse import urlsplit
    from urllib.request import getproxies, proxy_bypass

    parts = urlsplit(url)
    proxies = getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or (parts.hostname and proxy_bypass(parts.hostname)):
        return None
    return proxy


def named(exc: BaseException, kind: str) -> NoAnswer:
    detail = str(exc)
    return NoAnswer(kind, f"{kind}: {detail}" if detail else kind)


def deadline(timeout: float) -> NoAnswer:
    """The total deadline passed: the request may have reached the endpoint."""
    return NoAnswer("ReadTimeout", f"ReadTimeout: no whole answer within timeout={timeout:g} s")


def headers_refused(exc: BaseException) -> Unreadable:
    return Unreadable(f"the answer's headers are beyond the HTTP client's limits ({exc}); "
                      "not sent again, as the answer came whole")


class Unreadable(Exception):
    """An answer came and cannot be read within the limits: ``status`` and ``headers`` are the
    server's, ``reason`` says why (final: the same answer would be refused again), ``kept`` the
    first ``max_answer_bytes`` of it, decoded, when it was too large (stored cut)."""

    def __init__(self, reason: str, status: int = 0, headers: Mapping[str, str] | None = None,
                 kept: bytes = b""):
        super().__init__(reason)
        self.reason, self.status, self.headers = reason, int(status), headers or {}
        self.kept = kept


class _Inflate:
    """One layer of gzip or deflate (zlib-wrapped, or raw as some servers send it)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.raw_tried = False
        wbits = 16 + zlib.MAX_WBITS if name == "gzip" else zlib.MAX_WBITS
        self.d = zlib.decompressobj(wbits)
        self.pending = b""

    def feed(self, data: bytes, room: int) -> bytes:
        """Decompress ``data``; at most ``room + 1`` bytes of output (one more shows it overflows)."""
        out = []
        made = 0
        data = self.pending + data
        self.pending = b""
        while data and made <= room:
            try:
                piece = self.d.decompress(data, min(_STEP, room + 1 - made))
            except zlib.error:
                if self.name == "deflate" and not self.raw_tried and made == 0:
                    # "deflate" without its zlib wrapper: start again as raw deflate
                    self.raw_tried, self.d = True, zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise
            out.append(piece)
            made += len(piece)
            data = self.d.unconsumed_tail
            if self.d.eof:
                if self.d.unused_data.strip(b"\0"):
                    raise zlib.error("data after the end of the compressed stream")
                break
        self.pending = data   # input held back while the output is full (the caller stops anyway)
        return b"".join(out)


class BoundedBody:
    """An answer's body read chunk by chunk, refused once it passes ``limit`` bytes on the wire
    or once decompressed.

    Parameters
    ----------
    encoding : str
        The ``Content-Encoding`` header (``""``: none).
    limit : int
        The most bytes kept, and the most read off the wire.
    status : int
        The status, for :class:`Unreadable`.

    Examples
    --------
    >>> import gzip
    >>> body = BoundedBody("gzip", limit=100)
    >>> body.feed(gzip.compress(b"x" * 50)); body.finish()
    b'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'
    >>> body = BoundedBody("gzip", limit=1000)
    >>> body.feed(gzip.compress(b" " * 200_000))   # about 230 bytes on the wire
    Traceback (most recent call last):
    ...
    judgekit.judging.wire.Unreadable: answer inflates past max_answer_bytes=1000 (Content-Encoding: gzip) (stored cut to 1000 bytes)
    """

    def __init__(self, encoding: str | None, limit: int, status: int = 200,
                 headers: Mapping[str, str] | None = None, keep: bool = True,
                 declared: int | None = None) -> None:
        self.limit, self.status, self.headers, self.keep = int(limit), status, headers, keep
        self.declared = declared
        self.encoding = (encoding or "").strip()
        names = [e.strip().lower() for e in self.encoding.split(",") if e.strip()]
        names = [n for n in names if n != "identity"]
        unknown = [n for n in names if n not in ("gzip", "x-gzip", "deflate")]
        if unknown:
            raise self._refuse(f"the answer is encoded as {self.encoding!r}, which judgekit did "
                               f"not ask for (it asks for {ACCEPT_ENCODING!r})")
        # the last encoding applied is undone first
        self.layers = [_Inflate("gzip" if n == "x-gzip" else n) for n in reversed(names)]
        self.wire = 0
        self.parts: list[bytes] = []
        self.size = 0

    def _refuse(self, reason: str) -> Unreadable:
        return Unreadable(reason, self.status, self.headers)

    def _too_large(self, tail: bytes, why: str) -> Unreadable:
        room = self.limit - sum(map(len, self.parts))
        kept = b"".join([*self.parts, tail[:room]])   # one copy: the parts and the whole
        self.parts = []
        return Unreadable(f"answer {why} (stored cut to {len(kept)} bytes)", self.status,
                          self.headers, kept)

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes off the wire."""
        self.wire += len(chunk)
        if self.wire > self.limit:
            room = len(chunk) - (self.wire - self.limit)
            tail = b"" if self.layers else chunk[:room]
            size = f"of {self.declared} bytes" if self.declared else \
                f"of more than {self.limit} bytes"
            raise self._too_large(tail, f"{size} is larger than max_answer_bytes={self.limit}"
                                  + (" on the wire" if self.layers else ""))
        self._add(chunk)

    def _add(self, data: bytes) -> None:
        try:
            for layer in self.layers:
                data = layer.feed(data, self.limit - self.size)
        except zlib.error as exc:
            raise self._refuse(f"the answer's {self.encoding} encoding is damaged ({exc})") from exc
        self.size += len(data)
        if self.size > self.limit:
            raise self._too_large(data if self.keep else b"",
                                  f"inflates past max_answer_bytes={self.limit} "
                                  f"(Content-Encoding: {self.encoding})")
        if data and self.keep:
            self.parts.append(data)

    def finish(self) -> bytes:
        """The whole body, decoded; refused when a compressed stream ended early."""
        if self.layers and not all(layer.d.eof for layer in self.layers) and self.wire:
            raise self._refuse(f"the answer's {self.encoding} encoding ends early "
                               f"({self.wire} bytes on the wire)")
        return b"".join(self.parts)


#: words of the errors HTTP clients raise for response headers beyond their limits
_HEADER_WORDS = ("too many headers", "header value is too long", "header name is too long",
                 "line is too long", "got more than", "buffer too long", "header field too",
                 "headers too")


def declared_length(headers: Mapping[str, str]) -> int | None:
    """The ``Content-Length`` an answer states, or None."""
    value = (headers.get("Content-Length") or "").strip()
    return int(value) if value.isdecimal() else None


def header_refusal(message: str) -> bool:
    """Whether an HTTP client's protocol error refuses the response's headers (too many, too
    long): the answer came whole, so sending again would pay for it again.

    Examples
    --------
    >>> header_refusal("400, message='Too many headers received'")
    True
    >>> header_refusal("Server disconnected")
    False
    """
    low = message.lower()
    return any(word in low for word in _HEADER_WORDS)


#: the answer size limit of the SDK call running in this task (None: not a judgekit call)
SDK_LIMIT: contextvars.ContextVar[int | None] = contextvars.ContextVar("judgekit_max_answer_bytes",
                                                                     default=None)
_STREAMS: dict[str, type] = {}


def _bounded_stream_class(response: Any) -> type:
    """A byte stream of the response's own httpx package (httpx, or the SDK's fork) that passes
    the raw bytes through while a :class:`BoundedBody` checks them."""
    package = type(response).__module__.split(".")[0]
    if package not in _STREAMS:
        base = sys.modules[package].AsyncByteStream

        class Bounded(base):  # type: ignore[misc, valid-type]
            def __init__(self, inner: Any, body: BoundedBody) -> None:
                self.inner, self.body = inner, body

            async def __aiter__(self) -> Any:
                async for chunk in self.inner:
                    self.body.feed(chunk)
                    yield chunk
                self.body.finish()

            async def aclose(self) -> None:
                await self.inner.aclose()

        _STREAMS[package] = Bounded
    return _STREAMS[package]


async def _bound_response(response: Any) -> None:
    """httpx response hook: bound the body of a judgekit call (a no-op for any other request
    made with the same client)."""
    limit = SDK_LIMIT.get()
    if limit is None:
        return
    headers, status = response.headers, response.status_code
    body = BoundedBody(headers.get("Content-Encoding"), limit, status, headers,
                       declared=declared_length(headers))
    response.stream = _bounded_stream_class(response)(response.stream, body)


def bound_http_client(http_client: Any) -> bool:
    """Add the hook that bounds judgkit's answers to an httpx client (once); False when the client
    takes no hooks (then its answers are not bounded)."""
    try:
        hooks = http_client.event_hooks
        if _bound_response not in hooks["response"]:
            hooks["response"] = [*hooks["response"], _bound_response]
            http_client.event_hooks = hooks
    except (AttributeError, KeyError, TypeError):
        return False
    return True
