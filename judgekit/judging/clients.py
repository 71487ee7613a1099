"""Clients and the engine's event loop.

The API key of an endpoint; one ``openai.AsyncOpenAI`` per endpoint where the SDK is used (a
client passed in, ``transport="openai"``, the Batch API), with the SDK's own retries off (the
engine retries); and one background event loop on which every synchronous entry point runs its coroutine, so the same
call works from a script and from a notebook whose loop is already running.
"""

from __future__ import annotations

import os
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlparse

from judgekit._aioloop import BackgroundLoop
from judgekit.judging.secrets import public_endpoint, split_userinfo

__all__ = ["CONNECT_TIMEOUT", "EngineLoop", "Progress", "is_loopback", "make_clients",
           "resolve_key"]

#: seconds a connection may take to open
CONNECT_TIMEOUT = 10.0

T = TypeVar("T")


def is_loopback(url: str) -> bool:
    """True for a URL on this machine (localhost, 127.x, ::1)."""
    host = urlparse(url).hostname or ""
    return host in ("localhost", "127.0.0.1", "::1") or host.startswith("127.")


def resolve_key(endpoint: str, client: Any, api_key: str | None) -> str:
    """The API key for ``endpoint``: ``api_key``, else the passed-in client's, else
    ``OPENAI_API_KEY``; a loopback endpoint needs none. Raises ValueError when there is none."""
    key = api_key
    if key is None and client is not None:
        key = getattr(client, "api_key", None)
    if key is None:
        key = os.environ.get("OPENAI_API_KEY")
    if key is None:
        if not is_loopback(endpoint):
            raise ValueError(
                f"no API key for {public_endpoint(endpoint)}: set OPENAI_API_KEY, pass "
                "api_key=..., or pass client=openai.AsyncOpenAI(...)"
            )
        key = "judgekit-local"
    return key


def make_clients(urls: Iterable[str], client: Any, api_key: str | None,
                 timeout: float) -> tuple[dict[str, Any], list[Any]]:
    """One AsyncOpenAI per URL (retries off: the engine retries), and the ones to close.

    A passed-in ``openai.AsyncOpenAI`` is used with its own settings (pointed at each URL);
    otherwise the key is :func:`resolve_key`'s. Connecting may take at most ``CONNECT_TIMEOUT``
    seconds (or ``timeout`` when shorter), so an unreachable host is found out quickly.
    """
    import openai

    limit = openai.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT))
    clients, owned = {}, []
    for endpoint in sorted(set(urls)):
        if isinstance(client, openai.AsyncOpenAI):
            same = str(client.base_url).rstrip("/") == endpoint
            c = client.with_options(max_retries=0, timeout=limit,
                                    **({} if same else {"base_url": endpoint}))
        else:
            key = resolve_key(endpoint, client, api_key)
            kwargs = {}
            if client is not None:
                for name in ("organization", "project"):
                    if getattr(client, name, None):
                        kwargs[name] = getattr(client, name)
            bare, auth = split_userinfo(endpoint)
            if auth is not None:   # basic auth, so the URL the HTTP library logs holds no password
                kwargs["http_client"] = openai.DefaultAsyncHttpxClient(auth=auth)
            c = openai.AsyncOpenAI(base_url=bare, api_key=key, max_retries=0, timeout=limit,
                                   **kwargs)
            owned.append(c)
        clients[endpoint] = c
    return clients, owned


@dataclass
class Progress:
    """Calls to make and calls made, read by the progress bar from another thread."""

    total: int = 0
    done: int = 0
    stopped: int = 0  # calls not sent because the run stopped (shown as a failure, not as done)


def finish_bar(bar: Any, progress: Progress, desc: str, failed: bool) -> None:
    """Leave the bar at the calls answered; a run that stopped says so in red, not at 100%."""
    bar.n = progress.done
    if failed or progress.stopped:
        left = progress.total - progress.done
        bar.colour = "red"
        bar.set_description(f"{desc}: FAILED, {left} of {progress.total} calls not made",
                            refresh=False)
    bar.refresh()
    bar.close()


class EngineLoop:
    """One background event loop for all engine runs (started on first use)."""

    _loop = BackgroundLoop("judgekit-engine")

    @classmethod
    def run(cls, coro: Coroutine[Any, Any, T], progress: Progress | None = None,
            show: bool = False, desc: str = "") -> T:
        """Run ``coro`` on the engine's loop and wait for it, drawing a progress bar if ``show``."""
        bar = None

        def refresh() -> None:
            nonlocal bar
            if show and progress is not None and progress.total:
                if bar is None:
                    from tqdm.auto import tqdm

                    bar = tqdm(total=progress.total, desc=desc, unit="call")
                bar.n = progress.done
                bar.refresh()

        failed = False
        try:
            return cls._loop.run(coro, poll=refresh)
        except BaseException:
            failed = True
            raise
        finally:
            if bar is not None:
                finish_bar(bar, progress, desc, failed)
