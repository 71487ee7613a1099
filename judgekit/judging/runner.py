"""The async core of a run: answer from the cache, claim the rest, send it with bounded
concurrency within the budget and the rate limits, and store every paid answer durably before
counting it done.

Order of a call: claim its key in the cache (another run may be sending it), reserve its upper
cost, wait for room under the endpoint's rate limits, send (with retries), settle its cost, then
store the answer and drop the claim in one transaction. Money is reserved and settled with no
``await`` in between, so no call is ever sent against money another call has spent.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import logging
import math
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from judgekit.exceptions import CacheError, CacheWarning
from judgekit.judging.budget import Budget, Reservation
from judgekit.judging.cache import LEASE, Cache, new_owner, open_cache
from judgekit.judging.calls import Endpoint, Sender
from judgekit.judging.clients import EngineLoop, Progress
from judgekit.judging.config import RunConfig
from judgekit.judging.limits import EndpointLimits
from judgekit.judging.pricing import price_of, upper_cost
from judgekit.judging.requests import Call
from judgekit.judging.secrets import url_secrets
from judgekit.judging.transport import make_transports

__all__ = ["Runner", "adrive", "announce", "bind", "drive", "new_report", "run_calls"]

log = logging.getLogger("judgekit.engine")

#: seconds between looks at calls another run is sending
_POLL = (0.05, 1.0)


def new_report() -> dict[str, Any]:
    """The counts of a run (``judgments.attrs["judgekit_run"]``), all zero."""
    counts = ("requests", "cached", "cached_elsewhere", "called", "paid", "errors", "retries",
              "rate_limited", "retry_after_too_long", "gave_up", "abandoned_timeouts",
              "dropped_connections", "usage_missing", "not_run_budget", "not_run_pending_batch",
              "not_run_stopped", "not_stored")
    return {**dict.fromkeys(counts, 0), "cost_usd": 0.0, "unconfirmed_usd": 0.0,
            "pending_batches": [], "cache_error": None, "elapsed_s": 0.0}


class Runner:
    """Executes calls: cache lookups and claims, bounded concurrency, retries, budget, rate
    limits, durable writes."""

    def __init__(self, config: RunConfig, *, endpoints: dict[str, Endpoint], cache: Cache | None,
                 progress: Progress) -> None:
        self.config, self.cache, self.progress = config, cache, progress
        self.report = new_report()
        self.budget = Budget(config.budget_usd)
        self.sender = Sender(
            endpoints=endpoints, timeout=config.timeout, max_retries=config.max_retries,
            backoff_base=config.backoff_base, backoff_max=config.backoff_max,
            prices=config.price_table, report=self.report,
        )
        self.owner = new_owner()
        self._writes = cache is not None and not cache.read_only
        self._spent = 0.0  # known costs of the answers received (reported)
        self._stop: str | None = None
        self._results: dict[str, dict[str, Any]] = {}
        self._deferred: dict[str, Call] = {}
        self._writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="judgekit-cache")

    async def _db(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a cache operation on the writer thread (one at a time, off the event loop)."""
        return await asyncio.get_running_loop().run_in_executor(self._writer, fn, *args)

    def _pending(self, unique: list[Call]) -> list[Call]:
        """The calls not answered in the cache and not held by a batch not collected yet."""
        store = self.cache
        cached = store.get_many([c.key for c in unique]) if store is not None else {}
        if self.config.retry_errors:
            redo = [k for k, r in cached.items() if r["status"] != "ok"]
            if redo and self._writes:
                store.delete(redo)
            for k in redo:
                cached.pop(k)
        self._results.update({k: {**r, "cached": True} for k, r in cached.items()})
        self.report["cached"] = len(cached)
        pending = [c for c in unique if c.key not in cached]
        if store is not None and self.config.pending_batches == "skip" and pending:
            held = store.pending_batches([c.key for c in pending])
            if held:
                self.report["not_run_pending_batch"] = len(held)
                self.report["pending_batches"] = sorted(set(held.values()))
                pending = [c for c in pending if c.key not in held]
        return pending

    async def run(self, calls: list[Call]) -> dict[str, dict[str, Any]]:
        """Rows by key for every call answered (from the cache or live)."""
        try:
            return await self._run(calls)
        finally:
            self._writer.shutdown(wait=True)

    async def _run(self, calls: list[Call]) -> dict[str, dict[str, Any]]:
        start = time.perf_counter()
        unique = list({c.key: c for c in calls}.values())
        self.report["requests"] = len(unique)
        pending = self._pending(unique)
        if self.budget.active:
            table = self.config.price_table
            unknown = sorted({c.body["model"] for c in pending if price_of(c.body["model"], table) is None})
            if unknown:
                raise ValueError(
                    f"budget_usd needs a price for {unknown}: pass prices={{model: (input, output)}} "
                    "in USD per million tokens"
                )
        if pending and self._writes:
            self.cache.check_writable()  # a cache that cannot store answers fails before any call
        self.progress.total = len(pending)
        heartbeat = asyncio.create_task(self._heartbeat()) if self._writes and pending else None
        try:
            await self._work(pending)
            delay = _POLL[0]
            while self._deferred:  # calls another run is sending: wait for its answers
                await asyncio.sleep(delay)
                delay = min(delay * 2, _POLL[1])
                await self._work(await self._recheck())
        finally:
            if heartbeat is not None:
                heartbeat.cancel()
            if self._writes:
                try:
                    await self._db(self.cache.release, self.owner)
                except CacheError as exc:
                    log.warning("could not drop this run's claims: %s", exc)
        self.report["cost_usd"] = round(self._spent, 10)
        self.report["unconfirmed_usd"] = round(self.report["unconfirmed_usd"], 10)
        self.report["elapsed_s"] = round(time.perf_counter() - start, 3)
        return self._results

    async def _work(self, calls: list[Call]) -> None:
        if not calls:
            return
        queue: asyncio.Queue[Call] = asyncio.Queue()
        for c in calls:
            queue.put_nowait(c)
        workers = [asyncio.create_task(self._worker(queue))
                   for _ in range(min(self.config.concurrency, len(calls)))]
        try:
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(LEASE / 4)
            try:
                await self._db(self.cache.renew, self.owner)
            except CacheError as exc:
                self._cache_failed(exc)

    async def _recheck(self) -> list[Call]:
        """Look again at the deferred calls: read the answers stored meanwhile; return the calls
        whose claim this run now holds (their run gave up or died)."""
        keys = list(self._deferred)
        try:
            state = await self._db(self.cache.claim, keys, self.owner)
            stored = await self._db(self.cache.get_many, [k for k in keys if state[k] == "stored"])
        except CacheError as exc:
            self._cache_failed(exc)
            self.report["not_run_stopped"] += len(keys)
            self.progress.done += len(keys)
            self._deferred.clear()
            return []
        for key, found in stored.items():
            self._results[key] = {**found, "cached": True}
            self.report["cached_elsewhere"] += 1
            self.progress.done += 1
            del self._deferred[key]
        return [self._deferred.pop(k) for k in keys if state[k] == "mine"]

    def _cache_failed(self, exc: CacheError) -> None:
        if self._stop is None:
            self._stop = f"the cache cannot be written ({exc})"
            self.report["cache_error"] = str(exc)

    def _stopped(self) -> bool:
        if self.sender.abort is not None and self._stop is None:
            self._stop = str(self.sender.abort)
        return self._stop is not None

    async def _claim(self, call: Call) -> str:
        """``mine`` (send it), ``stored`` (answered meanwhile: read) or ``busy`` (deferred)."""
        if not self._writes:
            return "mine"
        try:
            state = (await self._db(self.cache.claim, [call.key], self.owner))[call.key]
        except CacheError as exc:
            self._cache_failed(exc)
            return "stop"
        if state == "stored":
            found = (await self._db(self.cache.get_many, [call.key]))[call.key]
            self._results[call.key] = {**found, "cached": True}
            self.report["cached_elsewhere"] += 1
        elif state == "busy":
            self._deferred[call.key] = call
        return state

    async def _worker(self, queue: asyncio.Queue) -> None:
        while not queue.empty():
            call = queue.get_nowait()
            if self._stopped():
                self.report["not_run_stopped"] += 1
                self.progress.done += 1
                continue
            state = await self._claim(call)
            if state == "stop":
                self.report["not_run_stopped"] += 1
            if state != "mine":
                self.progress.done += state != "busy"
                continue
            money = Reservation(self.budget, upper_cost(call.body, self.config.price_table))
            if not await money.take():
                self.report["not_run_budget"] += 1
                self.progress.done += 1
                await self._release(call)
                continue
            try:
                row = await self.sender.send(call, money)
            except BaseException:
                money.settle(0.0)
                raise
            self._settle(row, money)
            if row["status"] in ("ok", "paid_error"):
                row = await self._store(row)
                self.report["paid"] += 1
            else:
                await self._release(call)
            if row["status"] != "ok":
                self.report["errors"] += 1
            self._results[call.key] = {"cached": False, **row}
            self.progress.done += 1

    def _settle(self, row: dict[str, Any], money: Reservation) -> None:
        """Charge the call: its cost from the usage; its upper bound when it was paid and the
        usage is missing or not believable; nothing when it was not paid."""
        paid = row["status"] in ("ok", "paid_error")
        known = paid and not math.isnan(row["cost_usd"])
        if known:
            self._spent += row["cost_usd"]
        if paid and (row["prompt_tokens"] is None or row["completion_tokens"] is None):
            self.report["usage_missing"] += 1
            self.report["unconfirmed_usd"] += money.upper
        # settled before any await, so no other call is sent against money this one spent
        money.settle(row["cost_usd"] if known else (money.upper if paid else 0.0))

    async def _store(self, row: dict[str, Any]) -> dict[str, Any]:
        """Store a paid answer (durable before the call counts as done); the row the cache holds
        for its key, which is another run's when that one stored first."""
        if self.cache is None:
            return row
        if not self._writes:
            self.report["not_stored"] += 1
            return row
        try:
            if await self._db(self.cache.put, row, self.owner):
                return row
            held = (await self._db(self.cache.get_many, [row["key"]])).get(row["key"])
        except CacheError as exc:
            self._cache_failed(exc)
            self.report["not_stored"] += 1
            return row  # paid answers are always returned
        return {**held, "cached": True} if held is not None else row

    async def _release(self, call: Call) -> None:
        if self._writes:
            try:
                await self._db(self.cache.release, self.owner, [call.key])
            except CacheError as exc:
                self._cache_failed(exc)


def _endpoints(config: RunConfig, calls: list[Call]) -> dict[str, Endpoint]:
    """The transport, secrets and pacing of every URL the calls go to."""
    urls = {c.url: c.endpoint for c in calls}
    transports = make_transports(urls, transport=config.transport, client=config.client,
                                 api_key=config.api_key, timeout=config.timeout,
                                 pool=config.concurrency)
    out = {}
    for url, public in urls.items():
        rpm, tpm = config.limits_for(public)
        limits = EndpointLimits(rpm, tpm, config.rate_window, config.concurrency)
        transport = transports[url]
        out[url] = Endpoint(transport, [transport.api_key, *url_secrets(url)], limits)
    return out


async def run_calls(config: RunConfig, calls: list[Call],
                    progress: Progress) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Open the cache and the transports a run needs, run ``calls``, close what was opened; the
    rows by key and the run's counts. Raises
    :class:`~judgekit.exceptions.JudgeConnectionError` when an endpoint cannot be reached (what
    was received is stored first)."""
    config.check_endpoints({c.endpoint for c in calls})
    with open_cache(config.cache) as store:
        endpoints = _endpoints(config, calls)
        runner = Runner(config, endpoints=endpoints, cache=store, progress=progress)
        try:
            results = await runner.run(calls)
        finally:
            for where in endpoints.values():
                await where.transport.close()
    if runner.sender.abort is not None:
        raise runner.sender.abort
    return results, dict(runner.report)


def announce(report: Mapping[str, Any]) -> None:
    """Log a run's counts and warn about calls not sent, not stored or ended in an error."""
    log.info("judgekit run: %s", json.dumps(report))
    if report["not_run_budget"]:
        warnings.warn(
            f"budget reached: {report['not_run_budget']} requests were not sent (spent "
            f"${report['cost_usd']:.4f}); re-run with a larger budget_usd to finish — cached calls "
            "are not paid again",
            RuntimeWarning, stacklevel=3,
        )
    if report["not_run_pending_batch"]:
        ids = ", ".join(report["pending_batches"])
        warnings.warn(
            f"{report['not_run_pending_batch']} requests were not sent: they are in batches not "
            f"collected yet ({ids}); collect them with jk.collect_batch(batch_id), or pass "
            "pending_batches='send' to pay for them again",
            RuntimeWarning, stacklevel=3,
        )
    if report["not_stored"] or report["cache_error"]:
        reason = report["cache_error"] or "the cache is read-only"
        warnings.warn(
            f"{report['not_stored']} paid answers are in the returned table but not in the cache "
            f"({reason}); {report['not_run_stopped']} requests were not sent",
            CacheWarning, stacklevel=3,
        )
    if report["errors"]:
        warnings.warn(
            f"{report['errors']} calls ended in an error (see the 'error' column); "
            "unpaid failures are retried on the next run, paid ones with retry_errors=True",
            RuntimeWarning, stacklevel=3,
        )
    if report["retry_after_too_long"]:
        log.warning("%d calls were not retried: the server asked to wait longer than backoff_max",
                    report["retry_after_too_long"])
    if report["gave_up"]:
        log.warning("%d calls failed after every retry (max_retries)", report["gave_up"])
    unanswered = report["abandoned_timeouts"] + report["dropped_connections"]
    if unanswered or report["usage_missing"]:
        log.warning("%d calls reached the endpoint and got no answer (timeouts, dropped "
                    "connections) and %d answers had no usable usage: up to $%.4f may have been "
                    "billed beyond the reported cost", unanswered, report["usage_missing"],
                    report["unconfirmed_usd"])


def drive(job: Any, desc: str) -> pd.DataFrame:
    """Run a prepared job (``job.run(progress)``, ``job.config``) on the engine's loop, with a
    progress bar when asked; warn about its outcome."""
    prog = Progress()
    out = EngineLoop.run(job.run(prog), prog, show=job.config.progress, desc=desc)
    announce(out.attrs["judgekit_run"])
    return out


async def adrive(job: Any, desc: str) -> pd.DataFrame:
    """:func:`drive` from inside a running event loop."""
    prog = Progress()
    bar = monitor = None
    if job.config.progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=0, desc=desc, unit="call")
        monitor = asyncio.create_task(_monitor(bar, prog))
    try:
        out = await job.run(prog)
    finally:
        if bar is not None:
            monitor.cancel()
            bar.n, bar.total = prog.done, prog.total
            bar.close()
    announce(out.attrs["judgekit_run"])
    return out


async def _monitor(bar: Any, prog: Progress) -> None:
    while True:
        bar.total = prog.total
        bar.n = prog.done
        bar.refresh()
        await asyncio.sleep(0.2)


def bind(signature: inspect.Signature, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The arguments of a call by name, defaults included (the async forms take the signature
    of their synchronous twin)."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.arguments
