"""How a chat-completions request travels: the :class:`Transport` interface and its registry.

The engine needs one thing from HTTP: POST a JSON body to ``{base_url}/chat/completions`` and get
back the status, the headers and the text of the answer, or learn why no answer came. A
transport does exactly that and nothing more; retries, pacing, the budget, scrubbing and the
cache are the engine's (:mod:`judgekit.judging.calls`, :mod:`judgekit.judging.runner`), so they
are the same whichever transport carries the call.

Two transports implement it, registered by the name ``transport=`` takes:

- ``"aiohttp"``: :class:`~judgekit.judging.lean.LeanTransport` (the default), plain JSON over
  one ``aiohttp`` session per endpoint, several times less CPU per call than the SDK;
- ``"openai"``: :class:`~judgekit.judging.sdk.SdkTransport`, the ``openai`` client, for a client
  passed in (its Azure authentication, headers, proxies and HTTP settings then apply) or on
  request.

``"auto"`` is the SDK when a ``client`` is passed in, else the lean transport (:func:`choose`).

What they return and raise is in :mod:`~judgekit.judging.wire`: a :class:`Reply`, or
:class:`NoAnswer` with a ``kind`` named as httpx names it (``ConnectError``, ``ReadTimeout``,
...), whichever library saw it, so the engine sorts failures the same way: not sent (retried,
and counted towards stopping the run when an endpoint cannot be reached) or reached (may have
been billed).

A new transport: copy ``judging/sdk.py`` (the smaller of the two) to a module of its own,
implement the four members of :class:`Transport`, and add it to :data:`TRANSPORTS` here; the
``transport=`` setting then accepts its name. ``tests/judging/test_judging_transport.py`` shows what it
must pass (the same table, counts and server bill as the others, with and without faults).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from judgekit.judging.lean import MAX_HEADER_LINE, MAX_HEADERS, LeanTransport, read_bounded
from judgekit.judging.sdk import SdkTransport
from judgekit.judging.wire import (
    CONNECT,
    DEFAULT_MAX_ANSWER_BYTES,
    NOT_SENT,
    ClientFailure,
    NoAnswer,
    Reply,
    Unreadable,
    dumps,
    env_proxy,
)

__all__ = ["AUTO", "CONNECT", "MAX_HEADERS", "MAX_HEADER_LINE", "NOT_SENT", "TRANSPORTS",
           "ClientFailure", "LeanTransport", "NoAnswer", "Reply", "SdkTransport", "Transport",
           "Unreadable", "check_client", "choose", "dumps", "env_proxy", "make_transports",
           "read_bounded", "uses_sdk"]


class Transport(Protocol):
    """One endpoint's way of sending chat-completions requests.

    A transport class makes its instances for a run's URLs (:meth:`for_urls`) and refuses a
    client it cannot use (:meth:`check`, before anything is sent); an instance sends one body at
    a time (:meth:`chat`, called concurrently, up to the run's concurrency) and is closed once
    at the end of the run (:meth:`close`).
    """

    #: the texts to scrub from everything the run keeps: the key, the URL's and the proxy's
    #: credentials
    secrets: list[str]

    @classmethod
    def for_urls(cls, urls: Sequence[str], *, client: Any, api_key: str | None, timeout: float,
                 pool: int, max_answer_bytes: int) -> Mapping[str, Transport]:
        """One transport per URL (with credentials, as the judges give them)."""
        ...

    @classmethod
    def check(cls, client: Any) -> None:
        """Raise ValueError when ``client`` (or None) cannot be used with this transport."""
        ...

    async def chat(self, body: Mapping[str, Any]) -> Reply:
        """POST ``body``; the reply, or raise :class:`NoAnswer`, :class:`Unreadable` or
        :class:`ClientFailure`."""
        ...

    async def close(self) -> None:
        """Close what the transport opened."""
        ...


#: the transports a run can be asked for, by the name ``transport=`` takes
TRANSPORTS: dict[str, type[Transport]] = {"aiohttp": LeanTransport, "openai": SdkTransport}
#: the name that picks one from the client (:func:`choose`)
AUTO = "auto"


def choose(transport: str, client: Any) -> str:
    """The registered transport a run uses: the one named, or for ``"auto"`` the SDK when a
    client is passed in (so its own authentication (Azure), headers, proxies and HTTP settings
    apply as the user set them up), else the lean transport.

    Examples
    --------
    >>> choose("auto", None), choose("openai", None)
    ('aiohttp', 'openai')
    """
    if transport == AUTO:
        return "openai" if client is not None else "aiohttp"
    return transport


def uses_sdk(transport: str, client: Any) -> bool:
    """Whether a run sends through the ``openai`` SDK (see :func:`choose`)."""
    return choose(transport, client) == "openai"


def make_transports(urls: Iterable[str], *, transport: str, client: Any, api_key: str | None,
                    timeout: float, pool: int,
                    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES) -> dict[str, Transport]:
    """One transport per URL (see :func:`choose`); close each with ``await t.close()``."""
    kind = TRANSPORTS[choose(transport, client)]
    return dict(kind.for_urls(sorted(set(urls)), client=client, api_key=api_key, timeout=timeout,
                              pool=pool, max_answer_bytes=max_answer_bytes))


def check_client(transport: str, client: Any) -> None:
    """Refuse an unknown ``transport``, and a client the chosen transport cannot use (e.g. an
    Azure client with ``transport="aiohttp"``): before anything is sent."""
    names = [AUTO, *TRANSPORTS]
    if transport not in names:
        raise ValueError(f"transport must be one of {names}, got {transport!r}")
    TRANSPORTS[choose(transport, client)].check(client)
