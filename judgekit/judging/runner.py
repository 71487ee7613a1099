"""The async core of a run: answer from the cache, claim the rest, send it with bounded
concurrency within the budget and the rate limits, and store every paid answer durably before
counting it done.

Order of a call: claim its key in the cache (another run may be sending it), reserve its upper
cost, wait for room under the endpoint's rate limits, send (with retries), settle its cost, then
store the answer and drop the claim in one transaction. Money is reserved and settled with no
``await`` in between, so no call is ever sent against money another call has spent. Claims and
answers of the calls in flight are committed in groups (:mod:`judgekit.judging.writer`).

A run reads answers, it does not collect them: each answer, stored or live, is handed to the job's
``sink`` as soon as it is known, and the stored ones are read a chunk at a time without their
request bodies, so a cached re-run holds what the job keeps of each answer, not the cache.
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
from dataclasses import dataclass
from typing import Any, Protocol

import pandas as pd

from judgekit._stack import caller_level
from judgekit.exceptions import CacheError, CacheWarning, JudgeConnectionError
from judgekit.judging.answers import checked_row
from judgekit.judging.budget import Budget, Reservation
from judgekit.judging.cache import LEASE, Cache, new_owner, open_cache
from judgekit.judging.calls import Endpoint, Sender
from judgekit.judging.clients import EngineLoop, Progress, finish_bar
from judgekit.judging.config import RunConfig
from judgekit.judging.limits import EndpointLimits
from judgekit.judging.pricing import price_of, upper_cost
from judgekit.judging.requests import Call
from judgekit.judging.secrets import url_secrets
from judgekit.judging.transport import make_transports
from judgekit.judging.writer import Writer

__all__ = ["CallList", "CallPlan", "Runner", "Sink", "adrive", "announce", "drive",
           "new_report", "run_calls"]

log = logging.getLogger("judgekit.engine")

#: seconds between looks at calls another run is sending
_POLL = (0.05, 1.0)

#: ``sink(key, row)``: an answer (a cache row without its request body, plus ``cached``)
Sink = Callable[[str, Mapping[str, Any]], None]


class CallPlan(Protocol):
    """The calls of a run, by key: what the runner needs to look them up and to send them.

    ``keys`` are distinct, in the order the calls are sent; ``urls`` maps every URL the calls go
    to (with credentials) to its public endpoint. Bodies are made on demand (:meth:`call`), after
    :meth:`prepare` was told which keys will be sent.
    """

    keys: list[str]
    urls: dict[str, str]

    def model(self, key: str) -> str: ...

    def url(self, key: str) -> str: ...

    def prepare(self, keys: list[str]) -> None: ...

    def call(self, key: str) -> Call: ...


@dataclass
class CallList:
    """A :class:`CallPlan` of calls whose bodies are made already."""

    calls: list[Call]

    def __post_init__(self) -> None:
        self._by_key = {c.key: c for c in self.calls}
        self.keys = list(self._by_key)
        self.urls = {c.url: c.endpoint for c in self.calls}

    def model(self, key: str) -> str:
        return self._by_key[key].body["model"]

    def url(self, key: str) -> str:
        return self._by_key[key].url

    def prepare(self, keys: list[str]) -> None:
        pass

    def call(self, key: str) -> Call:
        return self._by_key[key]


def new_report() -> dict[str, Any]:
    """The counts of a run (``judgments.attrs["judgekit_run"]``), all zero."""
    counts = ("requests", "cached", "cached_elsewhere", "called", "paid", "errors", "retries",
              "rate_limited", "retry_after_too_long", "gave_up", "abandoned_timeouts",
              "dropped_connections", "usage_missing", "not_run_budget", "not_run_pending_batch",
              "not_run_stopped", "not_stored")
    return {**dict.fromkeys(counts, 0), "cost_usd": 0.0, "unconfirmed_usd": 0.0,
            "pending_batches": [], "cache_error": None, "elapsed_s": 0.0}


class Runner:
    """Executes a plan's calls: cache lookups and claims, bounded concurrency, retries, budget,
    rate limits, durable writes; every answer goes to ``sink``."""

    def __init__(self, config: RunConfig, *, plan: CallPlan, cache: Cache | None,
                 progress: Progress, sink: Sink) -> None:
        self.config, self.plan, self.cache, self.progress, self.sink = \
            config, plan, cache, progress, sink
        self.report = new_report()
        self.budget = Budget(config.budget_usd)
        self.sender: Sender | None = None
        self.endpoints: dict[str, Endpoint] = {}
        self.owner = new_owner()
        self._writes = cache is not None and not cache.read_only
        self._spent = 0.0  # known costs of the answers received (reported)
        self._stop: str | None = None
        self._deferred: dict[str, None] = {}
        self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="judgekit-cache")
        self._writer = Writer(cache, self.owner, self._executor) if self._writes else None

    @property
    def abort(self) -> JudgeConnectionError | None:
        """Why the run stopped sending, when an endpoint could not be reached."""
        return self.sender.abort if self.sender is not None else None

    async def _db(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a cache operation on the cache's thread (one at a time, off the event loop)."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    def _answer(self, key: str, row: Mapping[str, Any], cached: bool) -> None:
        self.sink(key, {**row, "cached": cached})

    def _lookup(self) -> list[str]:
        """Hand every stored answer to the sink; the keys not answered in the cache and not
        held by a batch not collected yet."""
        keys, store = self.plan.keys, self.cache
        if store is None:
            return list(keys)
        found: set[str] = set()
        redo: list[str] = []
        for row in store.lookup(keys):
            if self.config.retry_errors:
                # what the judgment would show: a stored "ok" that no longer reads is an error
                row = checked_row(row)
                if row["status"] != "ok":
                    redo.append(row["key"])
                    continue
            found.add(row["key"])
            row["cached"] = True
            self.sink(row["key"], row)
        if redo and self._writes:
            store.delete(redo)
        self.report["cached"] = len(found)
        pending = [k for k in keys if k not in found]
        if self.config.pending_batches == "skip" and pending:
            held = store.pending_batches(pending)
            if held:
                self.report["not_run_pending_batch"] = len(held)
                self.report["pending_batches"] = sorted(set(held.values()))
                pending = [k for k in pending if k not in held]
        return pending

    def _connect(self, pending: list[str]) -> None:
        """The transport, secrets and pacing of every URL the pending calls go to."""
        config = self.config
        urls = {self.plan.url(k) for k in pending}
        transports = make_transports(urls, transport=config.transport, client=config.client,
                                     api_key=config.api_key, timeout=config.timeout,
                                     pool=config.concurrency,
                                     max_answer_bytes=config.max_answer_bytes)
        for url, transport in transports.items():
            rpm, tpm = config.limits_for(self.plan.urls[url])
            limits = EndpointLimits(rpm, tpm, config.rate_window, config.concurrency,
                                    max_pause=config.backoff_max, name=self.plan.urls[url])
            # the key, the URL's and the proxy's credentials (the transport knows its proxy)
            self.endpoints[url] = Endpoint(transport, [*transport.secrets, *url_secrets(url)],
                                           limits)
        self.sender = Sender(
            endpoints=self.endpoints, timeout=config.timeout, max_retries=config.max_retries,
            backoff_base=config.backoff_base, backoff_max=config.backoff_max,
            prices=config.price_table, report=self.report,
            max_answer_bytes=config.max_answer_bytes,
        )

    async def run(self) -> dict[str, Any]:
        """Answer every key of the plan (from the cache or live); the run's counts."""
        try:
            return await self._run()
        finally:
            for where in self.endpoints.values():
                await where.transport.close()
            self._executor.shutdown(wait=True)

    async def _run(self) -> dict[str, Any]:
        start = time.perf_counter()
        self.report["requests"] = len(self.plan.keys)
        pending = self._lookup()
        if self.budget.active:
            table = self.config.price_table
            unknown = sorted({m for m in map(self.plan.model, pending) if price_of(m, table) is None})
            if unknown:
                raise ValueError(
                    f"budget_usd needs a price for {unknown}: pass prices={{model: (input, output)}} "
                    "in USD per million tokens"
                )
        if pending and self._writes:
            self.cache.check_writable()  # a cache that cannot store answers fails before any call
        if pending:
            self._connect(pending)
            self.plan.prepare(pending)
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
        return self.report

    async def _work(self, keys: list[str]) -> None:
        if not keys:
            return
        queue: asyncio.Queue[str] = asyncio.Queue()
        for k in keys:
            queue.put_nowait(k)
        workers = [asyncio.create_task(self._worker(queue))
                   for _ in range(min(self.config.concurrency, len(keys)))]
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

    async def _read(self, keys: list[str]) -> list[dict[str, Any]]:
        return await self._db(lambda: list(self.cache.lookup(keys)))

    async def _recheck(self) -> list[str]:
        """Look again at the deferred calls: read the answers stored meanwhile; return the keys
        whose claim this run now holds (their run gave up or died)."""
        keys = list(self._deferred)
        try:
            state = await self._db(self.cache.claim, keys, self.owner)
            stored = await self._read([k for k in keys if state[k] == "stored"])
        except CacheError as exc:
            self._cache_failed(exc)
            self.report["not_run_stopped"] += len(keys)
            self.progress.stopped += len(keys)
            self._deferred.clear()
            return []
        for found in stored:
            self._answer(found["key"], found, True)
            self.report["cached_elsewhere"] += 1
            self.progress.done += 1
            del self._deferred[found["key"]]
        mine = [k for k in keys if state[k] == "mine"]
        for k in mine:
            del self._deferred[k]
        return mine

    def _cache_failed(self, exc: CacheError) -> None:
        if self._stop is None:
            self._stop = f"the cache cannot be written ({exc})"
            self.report["cache_error"] = str(exc)

    def _stopped(self) -> bool:
        if self.abort is not None and self._stop is None:
            self._stop = str(self.abort)
        return self._stop is not None

    async def _claim(self, key: str) -> str:
        """``mine`` (send it), ``stored`` (answered meanwhile: read) or ``busy`` (deferred)."""
        if not self._writes:
            return "mine"
        try:
            state = await self._writer.claim(key)
            if state == "stored":
                for found in await self._read([key]):
                    self._answer(key, found, True)
                    self.report["cached_elsewhere"] += 1
        except CacheError as exc:
            self._cache_failed(exc)
            return "stop"
        if state == "busy":
            self._deferred[key] = None
        return state

    async def _worker(self, queue: asyncio.Queue) -> None:
        while not queue.empty():
            key = queue.get_nowait()
            if self._stopped():
                self.report["not_run_stopped"] += 1
                self.progress.stopped += 1
                continue
            state = await self._claim(key)
            if state == "stop":
                self.report["not_run_stopped"] += 1
                self.progress.stopped += 1
                continue
            if state != "mine":
                self.progress.done += state != "busy"
                continue
            call = self.plan.call(key)
            money = Reservation(self.budget, upper_cost(call.body, self.config.price_table))
            if not await money.take():
                self.report["not_run_budget"] += 1
                self.progress.done += 1
                await self._release(key)
                continue
            try:
                row = await self.sender.send(call, money)
            except BaseException:
                money.settle(0.0)
                raise
            self._settle(row, money)
            cached = False
            if row["status"] in ("ok", "paid_error"):
                row, cached = await self._store(row)
                self.report["paid"] += 1
            else:
                await self._release(key)
            if row["status"] != "ok":
                self.report["errors"] += 1
            self._answer(key, row, cached)
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

    async def _store(self, row: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Store a paid answer (durable before the call counts as done); the row the cache holds
        for its key, which is another run's when that one stored first (then ``cached``)."""
        if self.cache is None:
            return row, False
        if not self._writes:
            self.report["not_stored"] += 1
            return row, False
        try:
            held = await self._writer.put(row)
        except CacheError as exc:
            self._cache_failed(exc)
            self.report["not_stored"] += 1
            return row, False  # paid answers are always returned
        return (row, False) if held is None else (held, True)

    async def _release(self, key: str) -> None:
        if self._writes:
            try:
                await self._writer.release(key)
            except CacheError as exc:
                self._cache_failed(exc)


async def run_calls(config: RunConfig, plan: CallPlan, progress: Progress,
                    sink: Sink) -> dict[str, Any]:
    """Open the cache a run needs, answer every call of ``plan`` (each answer to ``sink``),
    close what was opened; the run's counts. Raises
    :class:`~judgekit.exceptions.JudgeConnectionError` when an endpoint cannot be reached (what
    was received is stored and handed to the sink first)."""
    config.check_endpoints(set(plan.urls.values()))
    with open_cache(config.cache) as store:
        runner = Runner(config, plan=plan, cache=store, progress=progress, sink=sink)
        report = await runner.run()
    if runner.abort is not None:
        raise runner.abort
    return dict(report)


def announce(report: Mapping[str, Any]) -> None:
    """Log a run's counts and warn about calls not sent, not stored or ended in an error."""
    log.info("judgekit run: %s", json.dumps(report))
    if report["not_run_budget"]:
        warnings.warn(
            f"budget reached: {report['not_run_budget']} requests were not sent (spent "
            f"${report['cost_usd']:.4f}); re-run with a larger budget_usd to finish — cached calls "
            "are not paid again",
            RuntimeWarning, stacklevel=caller_level(),
        )
    if report["not_run_pending_batch"]:
        ids = ", ".join(report["pending_batches"])
        warnings.warn(
            f"{report['not_run_pending_batch']} requests were not sent: they are in batches not "
            f"collected yet ({ids}); collect them with jk.collect_batch(batch_id), or pass "
            "pending_batches='send' to pay for them again",
            RuntimeWarning, stacklevel=caller_level(),
        )
    if report["not_stored"] or report["cache_error"]:
        reason = report["cache_error"] or "the cache is read-only"
        warnings.warn(
            f"{report['not_stored']} paid answers are in the returned table but not in the cache "
            f"({reason}); {report['not_run_stopped']} requests were not sent",
            CacheWarning, stacklevel=caller_level(),
        )
    if report["errors"]:
        warnings.warn(
            f"{report['errors']} calls ended in an error (see the 'error' column); "
            "unpaid failures are retried on the next run, paid ones with retry_errors=True",
            RuntimeWarning, stacklevel=caller_level(),
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
    failed = False
    try:
        out = await job.run(prog)
    except BaseException:
        failed = True
        raise
    finally:
        if bar is not None:
            monitor.cancel()
            bar.total = prog.total
            finish_bar(bar, prog, desc, failed)
    announce(out.attrs["judgekit_run"])
    return out


async def _monitor(bar: Any, prog: Progress) -> None:
    while True:
        bar.total = prog.total
        bar.n = prog.done
        bar.refresh()
        await asyncio.sleep(0.2)


def twin_docstring(sync: Any, doc: str | None) -> str | None:
    """``doc`` (an async form's summary and examples) with the Parameters and Returns sections of
    its synchronous twin ``sync`` inserted before its Examples, so help() and the API reference
    show the parameters once, where they are defined."""
    if doc is None or sync.__doc__ is None:   # python -OO strips docstrings
        return doc
    own, theirs = inspect.cleandoc(doc), inspect.cleandoc(sync.__doc__)
    start, end = theirs.find("Parameters\n----------"), theirs.find("Examples\n--------")
    if start < 0 or end < start:
        raise ValueError(f"{sync.__name__}'s docstring has no Parameters ... Examples sections")
    head, sep, examples = own.partition("Examples\n--------")
    return f"{head.rstrip()}\n\n{theirs[start:end]}{sep}{examples}"
