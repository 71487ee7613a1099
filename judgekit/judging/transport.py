"""How a chat-completions request travels: a lean aiohttp transport, or the ``openai`` SDK.

The engine needs one thing from HTTP: POST a JSON body to ``{base_url}/chat/completions`` and get
back the status, the headers and the text of the answer, or learn why no answer came. Both
transports here do exactly that and nothing more; retries, pacing, the budget, scrubbing and the
cache are the engine's (:mod:`judgekit.judging.calls`, :mod:`judgekit.judging.runner`), so they
are the same whichever transport carries the call.

- :class:`LeanTransport` (the default): one ``aiohttp.ClientSession`` per endpoint with a
  connection pool sized to the run's concurrency; the body is serialised once with the standard
  library (compact, UTF-8, as the SDK does) and the answer is returned as text, never parsed
  into objects. This is what makes fast endpoints (a local vLLM, a caching proxy) fast: the SDK
  spends several milliseconds of CPU per call where a bare POST needs well under one.
- :class:`SdkTransport`: the ``openai`` client, for a client passed in (``client=``: its Azure
  authentication, headers, proxies and HTTP settings are then applied by the SDK, as the user
  set them up) or on request (``transport="openai"``).

Failures without an answer are :class:`NoAnswer` with a ``kind`` named as httpx names them
(``ConnectError``, ``ConnectTimeout``, ``ReadTimeout``, ``RemoteProtocolError``, ...), whichever
transport saw them, so the engine sorts them the same way: not sent (retried, and counted towards
stopping the run when an endpoint cannot be reached) or reached (may have been billed).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from judgekit.judging.clients import CONNECT_TIMEOUT, make_clients, resolve_key
from judgekit.judging.secrets import split_userinfo, url_secrets
from judgekit.judging.wire import (
    ACCEPT_ENCODING,
    DEFAULT_MAX_ANSWER_BYTES,
    SDK_LIMIT,
    BoundedBody,
    Unreadable,
    bound_http_client,
    declared_length,
    header_refusal,
)

__all__ = ["CONNECT", "MAX_HEADERS", "NOT_SENT", "TRANSPORTS", "ClientFailure", "LeanTransport",
           "NoAnswer", "Reply", "SdkTransport", "Unreadable", "check_client", "dumps", "env_proxy",
           "make_transports", "uses_sdk"]

#: the transports a run can be asked for
TRANSPORTS = ("auto", "aiohttp", "openai")
#: failures after which the request certainly did not reach the endpoint
NOT_SENT = frozenset({"ConnectError", "ConnectTimeout", "PoolTimeout", "WriteError", "WriteTimeout",
                      "UnsupportedProtocol", "LocalProtocolError", "InvalidURL"})
#: failures to open a connection (they count towards stopping the run)
CONNECT = frozenset({"ConnectError", "ConnectTimeout"})
#: response headers the lean transport reads (aiohttp's default, 128, refuses some gateways'
#: answers), and the bytes of one header line
MAX_HEADERS, MAX_HEADER_LINE = 1024, 32768


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


def _named(exc: BaseException, kind: str) -> NoAnswer:
    detail = str(exc)
    return NoAnswer(kind, f"{kind}: {detail}" if detail else kind)


def _aiohttp_failure(exc: BaseException) -> NoAnswer:
    """An aiohttp (or socket) failure as the kind httpx would give it."""
    import aiohttp

    connect_timeout = getattr(aiohttp, "ConnectionTimeoutError", ())
    socket_timeout = getattr(aiohttp, "SocketTimeoutError", ())
    if connect_timeout and isinstance(exc, connect_timeout):
        return _named(exc, "ConnectTimeout")
    if socket_timeout and isinstance(exc, socket_timeout):
        return _named(exc, "ReadTimeout")
    if isinstance(exc, aiohttp.ServerTimeoutError):   # aiohttp < 3.10 names no subclass
        return _named(exc, "ConnectTimeout" if "connect" in str(exc).lower() else "ReadTimeout")
    if isinstance(exc, aiohttp.ClientConnectorError):
        return _named(exc, "ConnectError")
    if isinstance(exc, aiohttp.InvalidURL):
        return _named(exc, "InvalidURL")
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return _named(exc, "RemoteProtocolError")
    if isinstance(exc, aiohttp.ClientResponseError):  # a reply that is not HTTP
        return _named(exc, "RemoteProtocolError")
    if isinstance(exc, asyncio.TimeoutError):
        return _named(exc, "ReadTimeout")
    # reset or broken connections, truncated bodies: the request may have been read
    return _named(exc, "ReadError")


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
    >>> import asyncio, judgekit as jk
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
        self._proxy: dict[str, Any] = {}

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
        self._session = aiohttp.ClientSession(
            connector=connector, timeout=timeout, headers=self.headers,
            cookie_jar=aiohttp.DummyCookieJar(), raise_for_status=False,
            auto_decompress=False,   # decompressed here, within max_answer_bytes
            **limits,
        )
        if self.proxy is not None:
            bare, auth = split_userinfo(self.proxy)
            self._proxy = {"proxy": bare,
                           "proxy_auth": aiohttp.BasicAuth(*auth) if auth is not None else None}
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
            async with session.post(self.url, data=data, **self._proxy) as response:
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
                raise _headers_refused(exc) from exc
            raise _aiohttp_failure(exc) from exc
        except asyncio.TimeoutError as exc:
            if isinstance(exc, aiohttp.ServerTimeoutError):   # connecting, or a silent socket
                raise _aiohttp_failure(exc) from exc
            raise _deadline(self.timeout) from exc   # the total deadline
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


def _deadline(timeout: float) -> NoAnswer:
    """The total deadline passed: the request may have reached the endpoint."""
    return NoAnswer("ReadTimeout", f"ReadTimeout: no whole answer within timeout={timeout:g} s")


def _headers_refused(exc: BaseException) -> Unreadable:
    return Unreadable(f"the answer's headers are beyond the HTTP client's limits ({exc}); "
                      "not sent again, as the answer came whole")


async def read_bounded(chunks: Any, headers: Mapping[str, str], status: int, limit: int) -> bytes:
    """The body from an async iterator of wire chunks, within ``limit`` bytes (on the wire and
    decompressed); :class:`Unreadable` beyond."""
    body = BoundedBody(headers.get("Content-Encoding"), limit, status, headers,
                       declared=declared_length(headers))
    async for chunk in chunks:
        body.feed(chunk)
    return body.finish()


class SdkTransport:
    """Chat completions through an ``openai.AsyncOpenAI`` client (its own retries off).

    Parameters
    ----------
    client : openai.AsyncOpenAI
        The client; its base URL, authentication and HTTP settings are used as they are.
    owned : bool
        Close the client with the transport (it was made for the run).
    timeout : float
        Seconds the whole call may take (the SDK's own timeouts bound each phase only).
    max_answer_bytes : int
        The largest answer read, on the wire and decompressed: a hook on the client's httpx
        client checks the body as it arrives (it acts on judgekit's calls only).
    """

    def __init__(self, client: Any, *, owned: bool, timeout: float = 600.0,
                 max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES) -> None:
        self.client, self.owned = client, owned
        self.timeout, self.max_answer_bytes = float(timeout), int(max_answer_bytes)
        self.api_key = getattr(client, "api_key", "") or ""
        base = str(getattr(client, "base_url", "") or "")
        self.secrets = [self.api_key, *url_secrets(base),
                        *url_secrets(env_proxy(base.rstrip("/") + "/chat/completions") or "")]
        self.bounded = bound_http_client(getattr(client, "_client", None))

    async def chat(self, body: Mapping[str, Any]) -> Reply:
        """POST ``body`` through the SDK; the reply, or :class:`NoAnswer` / :class:`Unreadable` /
        :class:`ClientFailure`."""
        token = SDK_LIMIT.set(self.max_answer_bytes)
        try:
            return await asyncio.wait_for(self._create(body), self.timeout)
        except asyncio.TimeoutError as exc:
            raise _deadline(self.timeout) from exc
        finally:
            SDK_LIMIT.reset(token)

    async def _create(self, body: Mapping[str, Any]) -> Reply:
        import openai

        rest = {k: v for k, v in body.items() if k not in ("model", "messages")}
        try:
            raw = await self.client.chat.completions.with_raw_response.create(
                model=body["model"], messages=body["messages"], extra_body=rest or None,
                extra_headers={"Accept-Encoding": ACCEPT_ENCODING})
        except openai.APIStatusError as exc:
            response = exc.response
            return Reply(response.status_code, response.headers, response.text)
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            cause = exc.__cause__ or exc
            if isinstance(cause, Unreadable):
                raise cause from exc
            if header_refusal(str(cause)):
                raise _headers_refused(cause) from exc
            raise _sdk_failure(exc) from exc
        except openai.OpenAIError as exc:
            raise ClientFailure(f"{type(exc).__name__}: {exc}") from exc
        response = raw.http_response
        return Reply(response.status_code, response.headers, response.text)

    async def close(self) -> None:
        """Close the client when it was made for the run."""
        if self.owned:
            await self.client.close()


def _sdk_failure(exc: BaseException) -> NoAnswer:
    """The httpx failure behind an SDK connection error, by its class name."""
    cause = exc.__cause__ or exc
    names = [c.__name__ for c in type(cause).__mro__]
    kind = next((n for n in names if n in NOT_SENT), names[0])
    text = f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
    return NoAnswer(kind, text)


def uses_sdk(transport: str, client: Any) -> bool:
    """Whether a run sends through the ``openai`` SDK: when asked (``"openai"``), or by default
    (``"auto"``) when a client is passed in, so the client's own authentication (Azure),
    headers, proxies and HTTP settings apply as the user set them up."""
    return transport == "openai" or (transport == "auto" and client is not None)


def make_transports(urls: Iterable[str], *, transport: str, client: Any, api_key: str | None,
                    timeout: float, pool: int,
                    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES) -> dict[str, Any]:
    """One transport per URL (see :func:`uses_sdk`); close each with ``await t.close()``."""
    urls = sorted(set(urls))
    if uses_sdk(transport, client):
        clients, owned = make_clients(urls, client, api_key, timeout)
        return {u: SdkTransport(clients[u], owned=any(clients[u] is c for c in owned),
                                timeout=timeout, max_answer_bytes=max_answer_bytes)
                for u in urls}
    headers = {}
    for name, header, env in (("organization", "OpenAI-Organization", "OPENAI_ORG_ID"),
                              ("project", "OpenAI-Project", "OPENAI_PROJECT_ID")):
        # the client's setting, else the environment variable the SDK reads
        value = getattr(client, name, None) if client is not None else os.environ.get(env)
        if value:
            headers[header] = str(value)
    return {u: LeanTransport(u, resolve_key(u, client, api_key), timeout=timeout, pool=pool,
                             headers=headers, max_answer_bytes=max_answer_bytes) for u in urls}


def check_client(transport: str, client: Any) -> None:
    """Refuse an unknown ``transport``, and a client whose authentication only the SDK can apply
    (Azure, or no plain API key) with ``transport="aiohttp"``: before anything is sent."""
    if transport not in TRANSPORTS:
        raise ValueError(f"transport must be one of {list(TRANSPORTS)}, got {transport!r}")
    if transport != "aiohttp" or client is None:
        return
    import openai

    azure = tuple(c for c in (getattr(openai, "AsyncAzureOpenAI", None),
                              getattr(openai, "AzureOpenAI", None)) if c is not None)
    if isinstance(client, azure) or not getattr(client, "api_key", None):
        raise ValueError(
            f"transport='aiohttp' cannot apply the authentication of this "
            f"{type(client).__name__} (Azure, or no plain API key); use transport='auto' or "
            "'openai', which send through the client itself")
