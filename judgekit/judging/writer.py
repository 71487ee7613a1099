"""Group commits: the cache work of the calls in flight, done together, off the event loop.

Each live call touches the cache twice: it claims its key before it is sent, and stores its
answer (dropping the claim) before it counts as done. Done one transaction and one thread hop at a
time, that bookkeeping costs more CPU than the HTTP call itself on a fast endpoint. The
:class:`Writer` queues these operations and hands everything queued to the cache's thread in one
:meth:`~judgekit.judging.cache.Cache.commit` whenever that thread is free: while one transaction
runs, the next gathers. An idle run still commits each operation at once (no waiting for company),
and a busy one shares a commit between the calls that finished together.

The guarantees do not change: an answer's operation resolves only after its transaction has
committed (durable before counted), and a claim is made in the same kind of transaction as
:meth:`~judgekit.judging.cache.Cache.claim`, so processes sharing the cache still pay each
distinct call once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Mapping
from typing import Any

from judgekit.judging.cache import Cache

__all__ = ["Writer"]


class Writer:
    """Queue claims, answers and releases for one owner and commit them in groups.

    Parameters
    ----------
    cache : Cache
        A writable cache.
    owner : str
        The run's claim owner.
    executor : concurrent.futures.Executor
        The one thread the run's cache work runs on.

    Examples
    --------
    >>> import asyncio, concurrent.futures, os, tempfile
    >>> from judgekit.judging.cache import Cache, new_owner
    >>> async def store_three(cache):
    ...     writer = Writer(cache, new_owner(), concurrent.futures.ThreadPoolExecutor(1))
    ...     states = await asyncio.gather(*(writer.claim(k) for k in "abc"))
    ...     rows = [{"key": k, "endpoint": "e", "model": "m", "repeat": 0, "request": "{}",
    ...              "response": "{}", "status": "ok", "source": "live"} for k in "abc"]
    ...     held = await asyncio.gather(*(writer.put(r) for r in rows))
    ...     return states, held, writer.commits
    >>> with Cache(os.path.join(tempfile.mkdtemp(), "c.sqlite")) as cache:
    ...     states, held, commits = asyncio.run(store_three(cache))
    ...     stored = len(cache)
    >>> states, held, stored, commits <= 4
    (['mine', 'mine', 'mine'], [None, None, None], 3, True)
    """

    def __init__(self, cache: Cache, owner: str, executor: concurrent.futures.Executor) -> None:
        self.cache, self.owner, self.executor = cache, owner, executor
        self.commits = 0
        self._queue: list[tuple[str, Any, asyncio.Future]] = []
        self._busy = False

    async def claim(self, key: str) -> str:
        """Claim ``key``: ``"mine"``, ``"stored"`` or ``"busy"`` (see :meth:`Cache.claim`)."""
        return await self._enqueue("claim", key)

    async def put(self, row: Mapping[str, Any]) -> dict[str, Any] | None:
        """Store an answer and drop its claim (durable on return): None when this row was
        stored, else the answer another run stored first."""
        return await self._enqueue("put", row)

    async def release(self, key: str) -> None:
        """Drop the claim on ``key`` (the call was not paid)."""
        await self._enqueue("release", key)

    def _enqueue(self, kind: str, payload: Any) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        self._queue.append((kind, payload, future))
        if not self._busy:
            self._flush()
        return future

    def _flush(self) -> None:
        ops, self._queue = self._queue, []
        self._busy = True
        loop = asyncio.get_running_loop()
        done = loop.run_in_executor(self.executor, self._apply, ops)
        done.add_done_callback(lambda f: self._deliver(ops, f))

    def _apply(self, ops: list[tuple[str, Any, asyncio.Future]]) -> tuple[dict, dict]:
        rows = [p for kind, p, _ in ops if kind == "put"]
        releases = [p for kind, p, _ in ops if kind == "release"]
        claims = [p for kind, p, _ in ops if kind == "claim"]
        return self.cache.commit(self.owner, rows=rows, releases=releases, claims=claims)

    def _deliver(self, ops: list[tuple[str, Any, asyncio.Future]],
                 done: asyncio.Future) -> None:
        self.commits += 1
        cancelled = done.cancelled()
        error = None if cancelled else done.exception()
        stored, state = ({}, {}) if cancelled or error is not None else done.result()
        for kind, payload, future in ops:
            if future.done():
                continue
            if cancelled:
                future.cancel()
            elif error is not None:
                future.set_exception(error)
            elif kind == "put":
                future.set_result(stored.get(payload["key"]))
            elif kind == "claim":
                future.set_result(state[payload])
            else:
                future.set_result(None)
        self._busy = False
        if self._queue:
            self._flush()
