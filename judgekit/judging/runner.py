"""The async core of a run: answer from the cache, send the rest with bounded concurrency within
the budget, and store every paid answer durably before counting it done."""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import math
import time
import warnings
from collections.abc import Mapping
from typing import Any

import pandas as pd

from judgekit.judging.budget import Budget
from judgekit.judging.cache import Cache, open_cache
from judgekit.judging.calls import Sender, log
from judgekit.judging.clients import EngineLoop, Progress, make_clients
from judgekit.judging.config import RunConfig
from judgekit.judging.pricing import price_of, upper_cost
from judgekit.judging.requests import Call

__all__ = ["Runner", "adrive", "announce", "bind", "drive", "new_report", "run_calls"]


def new_report() -> dict[str, Any]:
    """The counts of a run (``judgments.attrs["judgekit_run"]``), all zero."""
    return {
        "requests": 0, "cached": 0, "called": 0, "paid": 0, "errors": 0, "retries": 0,
        "abandoned_timeouts": 0, "not_run_budget": 0, "cost_usd": 0.0, "elapsed_s": 0.0,
    }


class Runner:
    """Executes calls: cache lookups, bounded concurrency, retries, budget, durable writes."""

    def __init__(self, config: RunConfig, *, clients: dict[str, Any], cache: Cache | None,
                 progress: Progress) -> None:
        self.config, self.cache, self.progress = config, cache, progress
        self.report = new_report()
        self.budget = Budget(config.budget_usd)
        self.sender = Sender(
            clients=clients, timeout=config.timeout, max_retries=config.max_retries,
            backoff_base=config.backoff_base, backoff_max=config.backoff_max,
            prices=config.price_table, budget=self.budget, report=self.report,
        )
        self._spent = 0.0  # known costs of the answers received (reported)
        self._writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="judgekit-cache")

    async def run(self, calls: list[Call]) -> dict[str, dict[str, Any]]:
        """Rows by key for every call answered (from the cache or live)."""
        start = time.perf_counter()
        unique = list({c.key: c for c in calls}.values())
        self.report["requests"] = len(unique)
        cached = self.cache.get_many([c.key for c in unique]) if self.cache is not None else {}
        if self.config.retry_errors:
            redo = [k for k, row in cached.items() if row["status"] != "ok"]
            if redo:
                self.cache.delete(redo)
                for k in redo:
                    cached.pop(k)
        results: dict[str, dict[str, Any]] = {k: {**row, "cached": True} for k, row in cached.items()}
        self.report["cached"] = len(cached)
        pending = [c for c in unique if c.key not in cached]
        if self.budget.active:
            table = self.config.price_table
            unknown = sorted({c.body["model"] for c in pending if price_of(c.body["model"], table) is None})
            if unknown:
                raise ValueError(
                    f"budget_usd needs a price for {unknown}: pass prices={{model: (input, output)}} "
                    "in USD per million tokens"
                )
        self.progress.total = len(pending)
        queue: asyncio.Queue[Call] = asyncio.Queue()
        for c in pending:
            queue.put_nowait(c)
        workers = [asyncio.create_task(self._worker(queue, results))
                   for _ in range(min(self.config.concurrency, len(pending)))]
        try:
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()
            self._writer.shutdown(wait=True)
        self.report["cost_usd"] = round(self._spent, 10)
        self.report["elapsed_s"] = round(time.perf_counter() - start, 3)
        return results

    async def _worker(self, queue: asyncio.Queue, results: dict) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                call = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            upper = 0.0
            if self.budget.active:
                upper = upper_cost(call.body, self.config.price_table)
                if not await self.budget.reserve(upper):
                    self.report["not_run_budget"] += 1
                    self.progress.done += 1
                    continue
            try:
                row = await self.sender.send(call, upper)
            except BaseException:
                self.budget.settle(upper, 0.0)
                raise
            paid = row["status"] in ("ok", "paid_error")
            known = paid and not math.isnan(row["cost_usd"])
            if known:
                self._spent += row["cost_usd"]
            # a paid answer without usage counts at its upper bound; settled before any await,
            # so no other call can be sent against money this one has already spent
            self.budget.settle(upper, row["cost_usd"] if known else (upper if paid else 0.0))
            if paid:
                if self.cache is not None:
                    # durable before the call counts as done
                    await loop.run_in_executor(self._writer, self.cache.put, row)
                self.report["paid"] += 1
            if row["status"] != "ok":
                self.report["errors"] += 1
            results[call.key] = {**row, "cached": False}
            self.progress.done += 1


async def run_calls(config: RunConfig, calls: list[Call],
                    progress: Progress) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Open the cache and the clients a run needs, run ``calls``, close what was opened; the rows
    by key and the run's counts."""
    with open_cache(config.cache) as store:
        clients, owned = make_clients({c.endpoint for c in calls}, config.client,
                                      config.api_key, config.timeout)
        runner = Runner(config, clients=clients, cache=store, progress=progress)
        try:
            results = await runner.run(calls)
        finally:
            for c in owned:
                await c.close()
    return results, dict(runner.report)


def announce(report: Mapping[str, Any]) -> None:
    """Log a run's counts and warn about calls not sent or ended in an error."""
    log.info("judgekit run: %s", json.dumps(report))
    if report["not_run_budget"]:
        warnings.warn(
            f"budget reached: {report['not_run_budget']} requests were not sent (spent "
            f"${report['cost_usd']:.4f}); re-run with a larger budget_usd to finish — cached calls "
            "are not paid again",
            RuntimeWarning, stacklevel=3,
        )
    if report["errors"]:
        warnings.warn(
            f"{report['errors']} calls ended in an error (see the 'error' column); "
            "unpaid failures are retried on the next run, paid ones with retry_errors=True",
            RuntimeWarning, stacklevel=3,
        )
    if report["abandoned_timeouts"]:
        log.warning("%d calls timed out on the client and were retried; the endpoint may have "
                    "billed them", report["abandoned_timeouts"])


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
