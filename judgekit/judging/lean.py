"""The lean transport: chat completions as plain JSON over one ``aiohttp`` session per endpoint.

The default transport (``transport="auto"`` without a ``client``, or ``"aiohttp"``). It does what
a run needs from HTTP and nothing more: the body is serialised once with the standard library
(compact, UTF-8, as the SDK writes it), sent over a connection pool sized to the run's
concurrency, and the answer comes back as text, read within ``max_answer_bytes``, never parsed
into objects. That is what makes fast endpoints (a local vLLM, a caching proxy) fast: the SDK
spends several milliseconds of CPU per call where a bare POST needs well under one. aiohttp's
failures are named as httpx names them (:class:`~judgekit.judging.wire.NoAnswer`), so the engine
handles them as it handles the SDK's.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from typing import Any

from judgekit.judging.clients import CONNECT_TIMEOUT, resolve_key
from judgekit.judging.secrets import basic_auth, split_userinfo, url_secrets
from judgekit.judging.wire import (
    ACCEPT_ENCODING,
    DEFAULT_MAX_ANSWER_BYTES,
    BoundedBody,
    ClientFailure,
    NoAnswer,
    Reply,
    Unreadable,
    deadline,
    declared_length,
    dumps,
    env_proxy,
    header_refusal,
    headers_refused,
    named,
)

__all__ = ["MAX_HEADERS", "MAX_HEADER_LINE", "LeanTransport", "read_bounded"]

#: response headers the lean transport reads (aiohttp's default, 128, refuses some gateways'
#: answers), and the bytes of one header line
MAX_HEADERS, MAX_HEADER_LINE = 1024, 32768


def _aiohttp_failure(exc: BaseException) -> NoAnswer:
    """An aiohttp (or socket) failure as the kind httpx would give it."""
    import aiohttp

    connect_timeout = getattr(aiohttp, "ConnectionTimeoutError", ())
    socket_timeout = getattr(aiohttp, "SocketTimeoutError", ())
    if connect_timeout and isinstance(exc, connect_timeout):
        return named(exc, "ConnectTimeout")
    if socket_timeout and isinstance(exc, socket_timeout):
        return named(exc, "ReadTimeout")
    if isinstance(exc, aiohttp.ServerTimeoutError):   # aiohttp < 3.10 names no subclass
        return named(exc, "ConnectTimeout" if "connect" in str(exc).lower() else "ReadTimeout")
    if isinstance(exc, aiohttp.ClientConnectorError):
        return named(exc, "ConnectError")
    if isinstance(exc, aiohttp.InvalidURL):
        return named(exc, "InvalidURL")
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return named(exc, "RemoteProtocolError")
    if isinstance(exc, aiohttp.ClientResponseError):  # a reply that is not HTTP
        return named(exc, "RemoteProtocolError")
    if isinstance(exc, asyncio.TimeoutError):
        return named(exc, "ReadTimeout")
    # reset or broken connections, truncated bodies: the request may have been read
    return named(exc, "ReadError")


class LeanTransport:
    """Chat completions over one ``aiohttp.ClientSession`` (made on first use, inside the
    running event loop).

    Parameters
    ----------
    url : str
        The base URL (``.../v1``); credentials in it (``user:token@``) are sent as HTTP basic
        auth, as the SDK path sends them, and are not part of the URL the request goes to.
    api_key : str
        Sent as ``Authorization: Bearer <key>`` (unless the URL carries basic-auth credentials).
    timeout : float
        Seconds the whole call may take: connecting, sending, the headers and the whole body
        (connecting alone takes at most ``min(timeout, CONNECT_TIMEOUT)``).
    pool : int
        The most connections kept open to the endpoint: the run's concurrency.
    headers : mapping, optional
        Further headers (``OpenAI-Organization``, ``OpenAI-Project``).
    max_answer_bytes : int
        The largest answer read, on the wire and decompressed (:class:`Unreadable` beyond).

    Examples
    --------
    >>> import asyncio, json, judgekit as jk
    >>> async def ask(url):
    ...     lean = LeanTransport(url, "sk-test", timeout=10.0, pool=4)
    ...     try:
    ...         return await lean.chat({"model": "sim", "messages": [
    ...             {"role": "user", "content": "hi"}]})
    ...     finally:
    ...         await lean.close()
    >>> with jk.sim.SimServer(handlers=[lambda body: "hello"]) as url:
    ...     reply = asyncio.run(ask(url))
    >>> reply.status, json.loads(reply.text)["choices"][0]["message"]["content"]
    (200, 'hello')
    """

    def __init__(self, url: str, api_key: str, *, timeout: float, pool: int,
                 headers: Mapping[str, str] | None = None,
                 max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES) -> None:
        bare, auth = split_userinfo(url)
        self.url = bare.rstrip("/") + "/chat/completions"
        self.api_key = api_key
        self.timeout, self.pool = float(timeout), int(pool)
        self.max_answer_bytes = int(max_answer_bytes)
        if auth is not None:
            import base64

            token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
            authorization = f"Basic {token}"
        else:
            authorization = f"Bearer {api_key}"
        from judgekit._version import __version__

        self.headers = {"Authorization": authorization, "Content-Type": "application/json",
                        "Accept": "application/json", "Accept-Encoding": ACCEPT_ENCODING,
                        "User-Agent": f"judgekit/{__version__}", **dict(headers or {})}
        self.proxy = env_proxy(self.url)
        #: what to scrub from every text the run keeps: the key, the URL's and the proxy's
        #: credentials
        self.secrets = [api_key, *url_secrets(url), *url_secrets(self.proxy or "")]
        self._session: Any = None
        self._send: dict[str, Any] = {}   # headers and proxy of every request (see _open)

    @classmethod
    def for_urls(cls, urls: Sequence[str], *, client: Any, api_key: str | None, timeout: float,
                 pool: int, max_answer_bytes: int) -> dict[str, LeanTransport]:
        """One lean transport per URL, with the key of :func:`~judgekit.judging.clients.resolve_key`
        and the organization and project of ``client`` (else of the environment, as the SDK
        reads them)."""
        headers = {}
        for name, header, env in (("organization", "OpenAI-Organization", "OPENAI_ORG_ID"),
                                  ("project", "OpenAI-Project", "OPENAI_PROJECT_ID")):
            # the client's setting, else the environment variable the SDK reads
            value = getattr(client, name, None) if client is not None else os.environ.get(env)
            if value:
                headers[header] = str(value)
        return {u: cls(u, resolve_key(u, client, api_key), timeout=timeout, pool=pool,
                       headers=headers, max_answer_bytes=max_answer_bytes) for u in urls}

    @classmethod
    def check(cls, client: Any) -> None:
        """Refuse a client whose authentication only the SDK can apply (Azure, or no plain API
        key): this transport sends its key as a bearer token and nothing else."""
        if client is None:
            return
        import openai

        azure = tuple(c for c in (getattr(openai, "AsyncAzureOpenAI", None),
                                  getattr(openai, "AzureOpenAI", None)) if c is not None)
        if isinstance(client, azure) or not getattr(client, "api_key", None):
            raise ValueError(
                f"transport='aiohttp' cannot apply the authentication of this "
                f"{type(client).__name__} (Azure, or no plain API key); use transport='auto' or "
                "'openai', which send through the client itself")

    def _open(self) -> Any:
        import aiohttp

        connector = aiohttp.TCPConnector(limit=self.pool, limit_per_host=0, ttl_dns_cache=300)
        # total: the whole call, body included (aiohttp's read timeouts only bound the gaps)
        timeout = aiohttp.ClientTimeout(total=self.timeout, connect=self.timeout,
                                        sock_connect=min(self.timeout, CONNECT_TIMEOUT),
                                        sock_read=self.timeout)
        limits: dict[str, Any] = {"max_line_size": MAX_HEADER_LINE,
                                  "max_field_size": MAX_HEADER_LINE}
        import inspect

        if "max_headers" in inspect.signature(aiohttp.ClientSession).parameters:
            limits["max_headers"] = MAX_HEADERS
        # the headers go with each request, not as the session's defaults: aiohttp copies its
        # default headers into the CONNECT it sends an https URL's proxy (an Authorization among
        # them as Proxy-Authorization), which would hand the key to the proxy
        self._session = aiohttp.ClientSession(
            connector=connector, timeout=timeout, cookie_jar=aiohttp.DummyCookieJar(),
            raise_for_status=False,
            auto_decompress=False,   # decompressed here, within max_answer_bytes
            **limits,
        )
        self._send = {"headers": dict(self.headers)}
        if self.proxy is not None:
            bare, auth = split_userinfo(self.proxy)
            self._send["proxy"] = bare
            if auth is not None:  # as a header (aiohttp 3.14 deprecates its BasicAuth): to an
                # https endpoint on the CONNECT only, never to the endpoint itself; to an http
                # one on the request, which the proxy reads and forwards
                header = {"Proxy-Authorization": basic_auth(*auth)}
                if self.url.lower().startswith("https:"):
                    self._send["proxy_headers"] = header
                else:
                    self._send["headers"].update(header)
        return self._session

    async def chat(self, body: Mapping[str, Any]) -> Reply:
        """POST ``body``; the reply, or :class:`NoAnswer` / :class:`Unreadable` /
        :class:`ClientFailure`."""
        try:
            data = dumps(body)
        except (TypeError, ValueError) as exc:
            raise ClientFailure(f"the request cannot be written as JSON ({exc})") from exc
        import aiohttp

        session = self._session or self._open()
        limit = self.max_answer_bytes
        try:
            # the session's total timeout bounds all of it, the body included
            async with session.post(self.url, data=data, **self._send) as response:
                status, headers = response.status, response.headers
                length = response.content_length
                if length is not None and length <= limit and not headers.get("Content-Encoding"):
                    raw = await response.read()   # plain, and no longer than its stated length
                else:
                    raw = await read_bounded(response.content.iter_any(), headers, status, limit)
                charset = response.charset or "utf-8"
        except Unreadable:
            raise
        except aiohttp.ClientResponseError as exc:
            if header_refusal(str(exc)):
                raise headers_refused(exc) from exc
            raise _aiohttp_failure(exc) from exc
        except asyncio.TimeoutError as exc:
            if isinstance(exc, aiohttp.ServerTimeoutError):   # connecting, or a silent socket
                raise _aiohttp_failure(exc) from exc
            raise deadline(self.timeout) from exc   # the total deadline
        except (aiohttp.ClientError, OSError) as exc:
            raise _aiohttp_failure(exc) from exc
        except ValueError as exc:   # e.g. a proxy URL aiohttp cannot use
            raise ClientFailure(f"{type(exc).__name__}: {exc}") from exc
        return Reply(status, headers, _text(raw, charset))

    async def close(self) -> None:
        """Close the session and its connections."""
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()


def _text(raw: bytes, charset: str | None) -> str:
    try:
        return raw.decode(charset or "utf-8", errors="replace")
    except LookupError:   # an unknown charset: httpx falls back to UTF-8 too
        return raw.decode("utf-8", errors="replace")


async def read_bounded(chunks: Any, headers: Mapping[str, str], status: int, limit: int) -> bytes:
    """The body from an async iterator of wire chunks, within ``limit`` bytes (on the wire and
    decompressed); :class:`Unreadable` beyond."""
    body = BoundedBody(headers.get("Content-Encoding"), limit, status, headers,
                       declared=declared_length(headers))
    async for chunk in chunks:
        body.feed(chunk)
    return body.finish()
