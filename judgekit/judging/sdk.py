"""The SDK transport: chat completions through an ``openai.AsyncOpenAI`` client.

Used for a client passed in (``client=`` with ``transport="auto"``: its Azure authentication,
headers, proxies and HTTP settings then apply, as the user set them up) or on request
(``transport="openai"``). The SDK's own retries are off (the engine retries); its errors are
turned into the transports' common vocabulary (:mod:`~judgekit.judging.wire`), and a hook on
its httpx client bounds each answer to ``max_answer_bytes`` as it arrives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from judgekit.judging.clients import make_clients
from judgekit.judging.secrets import url_secrets
from judgekit.judging.wire import (
    ACCEPT_ENCODING,
    DEFAULT_MAX_ANSWER_BYTES,
    NOT_SENT,
    SDK_LIMIT,
    ClientFailure,
    NoAnswer,
    Reply,
    Unreadable,
    bound_http_client,
    deadline,
    env_proxy,
    header_refusal,
    headers_refused,
)

__all__ = ["SdkTransport"]


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

    @classmethod
    def for_urls(cls, urls: Sequence[str], *, client: Any, api_key: str | None, timeout: float,
                 pool: int, max_answer_bytes: int) -> dict[str, SdkTransport]:
        """One SDK transport per URL: the client passed in, pointed at each URL, else a client
        made for the run (:func:`~judgekit.judging.clients.make_clients`). ``pool`` is the SDK's
        own."""
        clients, owned = make_clients(urls, client, api_key, timeout)
        return {u: cls(clients[u], owned=any(clients[u] is c for c in owned), timeout=timeout,
                       max_answer_bytes=max_answer_bytes) for u in urls}

    @classmethod
    def check(cls, client: Any) -> None:
        """Any client will do: the SDK applies its authentication itself."""

    async def chat(self, body: Mapping[str, Any]) -> Reply:
        """POST ``body`` through the SDK; the reply, or :class:`NoAnswer` / :class:`Unreadable` /
        :class:`ClientFailure`."""
        token = SDK_LIMIT.set(self.max_answer_bytes)
        try:
            return await asyncio.wait_for(self._create(body), self.timeout)
        except asyncio.TimeoutError as exc:
            raise deadline(self.timeout) from exc
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
                raise headers_refused(cause) from exc
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
