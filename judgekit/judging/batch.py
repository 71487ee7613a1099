"""OpenAI Batch API: submit a judging run as one JSONL file, collect it into the same cache.

Batch calls cost half the list price and run on the provider's side, so they survive the notebook
closing. :func:`submit_batch` writes one line per request that is not cached yet (``custom_id`` is
the request's cache key), uploads it and creates the batch, and records the batch in the cache.
:func:`collect_batch` polls until the batch ends, downloads the output and stores every answer in
the cache under its key. A later :func:`judgekit.run_judges` with the same arguments then reads
everything from the cache and sends nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from judgekit.judging.cache import Cache, open_cache
from judgekit.judging.clients import EngineLoop, make_clients
from judgekit.judging.engine import run_judges
from judgekit.judging.judge import Judge, as_judges
from judgekit.judging.pricing import BATCH_DISCOUNT, cost, resolve_prices
from judgekit.judging.requests import build_tasks, check_swaps
from judgekit.schema import validate_pairs

__all__ = ["collect_batch", "run_judges_batch", "submit_batch"]

_DONE = {"completed", "failed", "expired", "cancelled"}


async def _asubmit(pairs, judges, orders, repeats, id_swap, client, cache, api_key, metadata,
                   completion_window) -> str | None:
    pairs = validate_pairs(pairs)
    tasks = build_tasks(pairs, as_judges(judges), orders, repeats, check_swaps(id_swap), client)
    endpoints = {t.endpoint for t in tasks}
    if len(endpoints) != 1:
        raise ValueError(f"one batch goes to one endpoint; these judges use {sorted(endpoints)}")
    endpoint = endpoints.pop()
    with open_cache(cache, required=True) as store:
        cached = store.get_many([t.key for t in tasks])
        todo = {t.key: {"repeat": t.repeat, "body": t.body} for t in tasks if t.key not in cached}
        if not todo:
            return None
        lines = [json.dumps({"custom_id": k, "method": "POST", "url": "/v1/chat/completions",
                             "body": v["body"]}) for k, v in todo.items()]
        data = ("\n".join(lines) + "\n").encode()
        async with _client(endpoint, client, api_key) as api:
            uploaded = await api.files.create(file=("judgekit-batch.jsonl", data), purpose="batch")
            batch = await api.batches.create(
                input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                completion_window=completion_window, metadata=metadata,
            )
        store.record_batch(batch.id, endpoint, uploaded.id, todo, batch.status)
        return batch.id


@contextlib.asynccontextmanager
async def _client(endpoint: str, client: Any, api_key: str | None):
    clients, owned = make_clients([endpoint], client, api_key, 600.0)
    try:
        yield clients[endpoint]
    finally:
        for c in owned:
            await c.close()


def submit_batch(
    pairs: pd.DataFrame,
    judges: Judge | str | Sequence[Judge | str],
    orders: Sequence[str] = ("ab", "ba"),
    repeats: int = 1,
    id_swap: bool | Sequence[bool] = False,
    client: Any = None,
    *,
    cache: bool | str | os.PathLike | Cache = True,
    api_key: str | None = None,
    metadata: Mapping[str, str] | None = None,
    completion_window: str = "24h",
) -> str | None:
    """Submit the requests of a :func:`~judgekit.run_judges` call that are not cached yet.

    Returns
    -------
    str or None
        The batch id (also recorded in the cache, see ``Cache.batches()``), or None when every
        request is already cached.
    """
    coro = _asubmit(pairs, judges, orders, repeats, id_swap, client, cache, api_key,
                    dict(metadata) if metadata else None, completion_window)
    return EngineLoop.run(coro)


async def _acollect(batch_id, client, cache, api_key, wait, poll_interval, timeout, prices):
    table = resolve_prices(prices)
    with open_cache(cache, required=True) as store:
        endpoint, requests = store.batch_requests(batch_id)
        async with _client(endpoint, client, api_key) as api:
            start = time.monotonic()
            while True:
                batch = await api.batches.retrieve(batch_id)
                store.update_batch(batch_id, status=batch.status)
                if batch.status in _DONE or not wait:
                    break
                if timeout is not None and time.monotonic() - start > timeout:
                    raise TimeoutError(f"batch {batch_id} still {batch.status} after {timeout} s; "
                                       "collect it later with collect_batch(batch_id)")
                await asyncio.sleep(poll_interval)
            summary = {"batch_id": batch_id, "status": batch.status, "requests": len(requests),
                       "stored": 0, "already_cached": 0, "failed": 0, "missing": 0}
            if batch.status not in _DONE:
                return summary
            seen = set()
            for file_id, is_error in ((batch.output_file_id, False), (batch.error_file_id, True)):
                if not file_id:
                    continue
                content = await api.files.content(file_id)
                for line in content.text.splitlines():
                    if line.strip():
                        outcome = _fold(line, is_error, batch_id, endpoint, requests, store, table)
                        seen.add(outcome[0])
                        summary[outcome[1]] += 1
        summary["missing"] = len(set(requests) - seen)
        store.update_batch(batch_id, status=batch.status,
                           output_file_id=batch.output_file_id, collected_at=time.time())
        return summary


def _fold(line: str, is_error: bool, batch_id: str, endpoint: str, requests: Mapping[str, Any],
          store: Cache, table: Mapping[str, tuple[float, float]]) -> tuple[str, str]:
    """Store one output line of a batch; (its key, the summary count it adds to)."""
    item = json.loads(line)
    key = item.get("custom_id")
    if key not in requests:
        raise ValueError(f"batch {batch_id} returned an unknown custom_id {key!r}")
    response = item.get("response") or {}
    if is_error or item.get("error") or response.get("status_code") != 200:
        return key, "failed"
    body = response.get("body") or {}
    usage = body.get("usage") or {}
    request = requests[key]
    model = request["body"]["model"]
    pt, ct = usage.get("prompt_tokens"), usage.get("completion_tokens")
    ok = bool(body.get("choices"))
    stored = store.put({
        "key": key, "endpoint": endpoint, "model": model,
        "repeat": request["repeat"], "request": json.dumps(request["body"], sort_keys=True),
        "response": json.dumps(body), "status": "ok" if ok else "paid_error",
        "error": None if ok else "api: response has no choices",
        "prompt_tokens": pt, "completion_tokens": ct,
        "cost_usd": cost(model, pt or 0, ct or 0, table, BATCH_DISCOUNT),
        "latency_s": None, "source": "batch",
    })
    return key, "stored" if stored else "already_cached"


def collect_batch(
    batch_id: str,
    client: Any = None,
    *,
    cache: bool | str | os.PathLike | Cache = True,
    api_key: str | None = None,
    wait: bool = True,
    poll_interval: float = 30.0,
    timeout: float | None = None,
    prices: Mapping[str, tuple[float, float]] | None = None,
) -> dict[str, Any]:
    """Wait for a batch (unless ``wait=False``) and store its answers in the cache.

    Returns
    -------
    dict
        ``batch_id, status, requests, stored, already_cached, failed, missing``. Failed and
        missing requests are not cached; :func:`~judgekit.run_judges` sends them live.
    """
    coro = _acollect(batch_id, client, cache, api_key, wait, poll_interval, timeout, prices)
    return EngineLoop.run(coro)


def run_judges_batch(
    pairs: pd.DataFrame,
    judges: Judge | str | Sequence[Judge | str],
    orders: Sequence[str] = ("ab", "ba"),
    repeats: int = 1,
    id_swap: bool | Sequence[bool] = False,
    client: Any = None,
    *,
    cache: bool | str | os.PathLike | Cache = True,
    poll_interval: float = 30.0,
    timeout: float | None = None,
    **options: Any,
) -> pd.DataFrame:
    """:func:`~judgekit.run_judges` through the Batch API: submit, wait, collect, read.

    Requests that the batch did not answer are sent live by the final ``run_judges`` call;
    ``judgments.attrs["judgekit_batch"]`` holds the batch summary.

    Examples
    --------
    >>> import judgekit as jk, tempfile, os
    >>> pairs = jk.simulate_pairs(5, seed=0)
    >>> path = os.path.join(tempfile.mkdtemp(), "cache.sqlite")
    >>> with jk.SimServer(pairs=pairs, batch_delay=0.05) as url:
    ...     j = jk.run_judges_batch(pairs, jk.Judge("sim", "shen_hh", base_url=url), cache=path,
    ...                             poll_interval=0.05, progress=False)
    >>> j.attrs["judgekit_batch"]["stored"], j.attrs["judgekit_run"]["called"]
    (10, 0)
    """
    api_key = options.get("api_key")
    batch_id = submit_batch(pairs, judges, orders, repeats, id_swap, client, cache=cache,
                            api_key=api_key)
    summary = {"batch_id": None, "status": "nothing to submit", "stored": 0}
    if batch_id is not None:
        summary = collect_batch(batch_id, client, cache=cache, api_key=api_key,
                                poll_interval=poll_interval, timeout=timeout,
                                prices=options.get("prices"))
    if summary["status"] not in ("completed", "nothing to submit") or summary.get("failed") \
            or summary.get("missing"):
        unanswered = summary.get("failed", 0) + summary.get("missing", 0)
        warnings.warn(
            f"batch {summary['batch_id']} ended '{summary['status']}' with {unanswered} requests "
            "unanswered; run_judges now sends what is not cached live, at the full price",
            RuntimeWarning, stacklevel=2,
        )
    judgments = run_judges(pairs, judges, orders, repeats, id_swap, client, cache=cache, **options)
    judgments.attrs["judgekit_batch"] = summary
    return judgments
