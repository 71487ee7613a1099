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
import re
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from judgekit._jsonfile import parse_json
from judgekit._stack import caller_level
from judgekit._stamp import stamped
from judgekit.exceptions import CacheError
from judgekit.judging.answers import read_answer
from judgekit.judging.cache import Cache, new_owner, open_cache
from judgekit.judging.clients import EngineLoop, make_clients
from judgekit.judging.config import RunConfig, check_settings
from judgekit.judging.engine import run_judges
from judgekit.judging.judge import Judge, as_judges
from judgekit.judging.pricing import BATCH_DISCOUNT, resolve_prices
from judgekit.judging.requests import RequestPlan, check_swaps
from judgekit.schema import validate_pairs

__all__ = ["collect_batch", "run_judges_batch", "submit_batch"]

_DONE = {"completed", "failed", "expired", "cancelled"}
_NOTHING = {"batch_id": None, "status": "nothing to submit", "requests": 0, "stored": 0,
            "already_cached": 0, "failed": 0, "missing": 0, "unreadable": 0}


def _plan(pairs, judges, orders, repeats, id_swap, client) -> tuple[RequestPlan, str]:
    """The requests of a run (the live run's own :class:`RequestPlan`, so a batch and a live run
    share keys and answers) and the one endpoint a batch of them goes to."""
    pairs = validate_pairs(pairs)
    plan = RequestPlan(pairs, as_judges(judges), orders, repeats, check_swaps(id_swap), client)
    if len(plan.urls) != 1:
        raise ValueError("one batch goes to one endpoint; these judges use "
                         f"{sorted(set(plan.urls.values()))}")
    return plan, next(iter(plan.urls))


async def _asubmit(plan: RequestPlan, url: str, client: Any, store: Cache, api_key: str | None,
                   metadata: Mapping[str, str] | None, completion_window: str,
                   pending_batches: str) -> tuple[str | None, dict[str, str]]:
    """Submit what is neither cached, nor held by a pending batch (unless ``"send"``), nor being
    sent by a live run; (the batch id or None, {key: pending batch id} left out)."""
    if store.read_only:
        raise CacheError(f"the judge cache {store.path} is open read-only; a batch must be "
                         "recorded in a cache that can be written")
    store.check_writable()
    cached = store.get_many(plan.keys)
    todo = [k for k in plan.keys if k not in cached]
    held = store.pending_batches(todo) if pending_batches == "skip" else {}
    owner = new_owner()
    try:
        # claimed while being submitted, so a live run started meanwhile leaves them alone
        state = store.claim([k for k in todo if k not in held], owner)
        todo = [k for k in todo if state.get(k) == "mine"]
        if not todo:
            return None, held
        plan.prepare(todo)
        calls = {k: plan.call(k) for k in todo}   # the bodies, rendered for these only
        lines = [json.dumps({"custom_id": k, "method": "POST", "url": "/v1/chat/completions",
                             "body": c.body}) for k, c in calls.items()]
        data = ("\n".join(lines) + "\n").encode()
        async with _client(url, client, api_key) as api:
            uploaded = await api.files.create(file=("judgekit-batch.jsonl", data), purpose="batch")
            batch = await api.batches.create(
                input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                completion_window=completion_window, metadata=metadata,
            )
        requests = {k: {"repeat": c.repeat, "body": c.body} for k, c in calls.items()}
        store.record_batch(batch.id, next(iter(calls.values())).endpoint, uploaded.id, requests,
                           batch.status)
        return batch.id, held
    finally:
        store.release(owner)


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
    pending_batches: str = "skip",
) -> str | None:
    """Submit the requests of a :func:`~judgekit.run_judges` call that are not cached yet.

    Requests recorded in a batch that was not collected yet are left out, with a warning naming
    the batch (``pending_batches="send"`` submits them again: paid twice), and so are requests
    a live run on the same cache is sending at that moment.

    Parameters
    ----------
    pairs, judges, orders, repeats, id_swap, client, cache, api_key
        As in :func:`~judgekit.run_judges` (a cache is required).
    metadata : mapping, optional
        Metadata of the batch.
    completion_window : str
        The Batch API's completion window.
    pending_batches : {"skip", "send"}
        Leave out requests held by batches not collected yet, or submit them again.

    Returns
    -------
    str or None
        The batch id (also recorded in the cache, see ``Cache.batches()``), or None when there
        is nothing to submit.

    Examples
    --------
    >>> import judgekit as jk, tempfile, os, warnings
    >>> pairs = jk.sim.simulate_pairs(3, seed=0)
    >>> path = os.path.join(tempfile.mkdtemp(), "cache.sqlite")
    >>> with jk.sim.SimServer(pairs=pairs, batch_delay=0.05) as url:
    ...     judge = jk.Judge("sim", "shen_hh", base_url=url)
    ...     first = jk.submit_batch(pairs, judge, cache=path)
    ...     with warnings.catch_warnings(record=True) as caught:
    ...         warnings.simplefilter("always")
    ...         again = jk.submit_batch(pairs, judge, cache=path)   # still pending: not sent
    >>> first.startswith("batch_"), again, "not collected yet" in str(caught[0].message)
    (True, None, True)
    """
    RunConfig(cache=cache, api_key=api_key, client=client, pending_batches=pending_batches)
    plan, url = _plan(pairs, judges, orders, repeats, id_swap, client)
    with open_cache(cache, required=True) as store:
        batch_id, held = EngineLoop.run(_asubmit(
            plan, url, client, store, api_key, dict(metadata) if metadata else None,
            completion_window, pending_batches))
    if held:
        warnings.warn(
            f"{len(held)} requests were not submitted: they are in batches not collected yet "
            f"({', '.join(sorted(set(held.values())))}); collect them with "
            "jk.collect_batch(batch_id), or pass pending_batches='send' to pay for them again",
            RuntimeWarning, stacklevel=caller_level(),
        )
    return batch_id


async def _acollect(batch_id, client, cache, api_key, wait, poll_interval, timeout, prices,
                    url=None, max_answer_bytes=RunConfig.max_answer_bytes):
    table = resolve_prices(prices)
    with open_cache(cache, required=True) as store:
        endpoint, requests = store.batch_requests(batch_id)
        async with _client(url or endpoint, client, api_key) as api:
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
                       "stored": 0, "already_cached": 0, "failed": 0, "missing": 0,
                       "unreadable": 0}
            if batch.status not in _DONE:
                return summary
            seen = set()
            fold = _Folder(batch_id, endpoint, requests, store, table, max_answer_bytes)
            for file_id, is_error in ((batch.output_file_id, False), (batch.error_file_id, True)):
                if not file_id:
                    continue
                content = await api.files.content(file_id)
                name = "error" if is_error else "output"
                for number, line in _lines(content.content):
                    key, outcome = fold(line, is_error, f"batch {batch_id} {name} file, line {number}")
                    if key is not None:
                        seen.add(key)
                    summary[outcome] += 1
        summary["missing"] = len(set(requests) - seen)
        store.update_batch(batch_id, status=batch.status,
                           output_file_id=batch.output_file_id, collected_at=time.time())
        return summary


def _lines(data: bytes | str) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of a JSON-lines file's non-blank lines, split at line feeds only
    (U+2028 and the like may stand inside a JSON string)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    for number, line in enumerate(bytes(data).split(b"\n"), start=1):
        if line.strip(b" \t\r"):
            yield number, line


#: a request's cache key where an output line names it (64 hexadecimal digits)
_CUSTOM_ID = re.compile(rb'"custom_id"\s*:\s*"([0-9a-f]{64})"')


class _Folder:
    """Stores the output lines of one batch in the cache, each answer read by
    :func:`~judgekit.judging.answers.read_answer` as live answers are (never raising): an answer
    that cannot be read is stored as a ``paid_error`` with its reason."""

    def __init__(self, batch_id: str, endpoint: str, requests: Mapping[str, Any], store: Cache,
                 table: Mapping[str, tuple[float, float]], max_bytes: int) -> None:
        self.batch_id, self.endpoint, self.requests = batch_id, endpoint, requests
        self.store, self.table, self.max_bytes = store, table, max_bytes

    def __call__(self, line: bytes, is_error: bool, source: str) -> tuple[str | None, str]:
        """Store one line; (its key or None, the summary count it adds to)."""
        try:
            item = parse_json(line, source)
            problem = None if isinstance(item, dict) else f"{source}: not a JSON object"
        except ValueError as exc:   # not text, not JSON, nested too deeply: names the line
            item, problem = None, str(exc)
        if problem is not None:
            found = _CUSTOM_ID.search(line[:4096] if len(line) > 4096 else line)
            key = found.group(1).decode() if found else None
            if key not in self.requests:
                return None, "unreadable"
            if is_error:   # the request failed: not billed, sent live by run_judges
                return key, "failed"
            text = line.decode("utf-8", "replace")
            answer = read_answer(text, model=None, prices=self.table, max_bytes=self.max_bytes)
            error = f"api: unreadable batch output line ({problem})"[:1000]
            return key, self._store(key, answer.response, "paid_error", error, None, None,
                                    float("nan"))
        key = item.get("custom_id")
        if not isinstance(key, str) or key not in self.requests:
            return None, "unreadable"
        response = item.get("response")
        response = response if isinstance(response, dict) else {}
        if is_error or item.get("error") or response.get("status_code") != 200:
            return key, "failed"
        body = response.get("body")
        try:   # the body as text again, read the one way every paid answer is read
            text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
        except (ValueError, TypeError, RecursionError) as exc:
            text = f"<unwritable body: {type(exc).__name__}>"
        model = self.requests[key].get("body", {}).get("model") \
            if isinstance(self.requests[key], dict) else None
        answer = read_answer(text, model=model, prices=self.table, factor=BATCH_DISCOUNT,
                             max_bytes=self.max_bytes)
        return key, self._store(key, answer.response, answer.status, answer.error,
                                answer.prompt_tokens, answer.completion_tokens, answer.cost)

    def _store(self, key: str, response: str | None, status: str, error: str | None,
               pt: int | None, ct: int | None, value: float) -> str:
        request = self.requests[key]
        body = request.get("body", {}) if isinstance(request, dict) else {}
        stored = self.store.put({
            "key": key, "endpoint": self.endpoint, "model": str(body.get("model", "")),
            "repeat": request.get("repeat", 0) if isinstance(request, dict) else 0,
            "request": json.dumps(body, sort_keys=True), "response": response,
            "status": status, "error": error, "prompt_tokens": pt, "completion_tokens": ct,
            "cost_usd": value, "latency_s": None, "source": "batch",
        })
        return "stored" if stored else "already_cached"


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
    max_answer_bytes: int = RunConfig.max_answer_bytes,
) -> dict[str, Any]:
    """Wait for a batch (unless ``wait=False``) and store its answers in the cache.

    Every answer of the batch is stored, read as :func:`~judgekit.run_judges` reads a live
    answer: one that cannot be read (not JSON, nested too deeply, no choices, odd usage) is
    stored as an error row with its reason, so it is never paid for again by a live run.

    Parameters
    ----------
    batch_id : str or None
        A batch recorded in the cache (``Cache.batches()``); None (what :func:`submit_batch`
        returns when there is nothing to submit) gives a summary with nothing to collect.
    client, cache, api_key
        As in :func:`~judgekit.run_judges`. The endpoint is the one recorded with the batch,
        without credentials: pass ``client=`` when its URL needs them.
    wait : bool
        Wait until the batch ends (else look once).
    poll_interval, timeout : float
        Seconds between looks, and the most to wait (None: no limit).
    prices : mapping, optional
        As in :func:`~judgekit.run_judges`: the USD prices the stored answers' costs use.
    max_answer_bytes : int
        As in :func:`~judgekit.run_judges`: a longer answer is stored cut, as an error row.

    Returns
    -------
    dict
        ``batch_id, status, requests, stored, already_cached, failed, missing, unreadable``.
        Failed and missing requests are not cached; :func:`~judgekit.run_judges` sends them
        live. ``unreadable`` counts lines of the batch's files that name no request of the
        batch (not JSON and no request key found in them, or an unknown ``custom_id``).

    Examples
    --------
    >>> import judgekit as jk, tempfile, os
    >>> pairs = jk.sim.simulate_pairs(2, seed=0)
    >>> path = os.path.join(tempfile.mkdtemp(), "cache.sqlite")
    >>> with jk.sim.SimServer(pairs=pairs, batch_delay=0.05) as url:
    ...     batch_id = jk.submit_batch(pairs, jk.Judge("sim", "shen_hh", base_url=url), cache=path)
    ...     summary = jk.collect_batch(batch_id, cache=path, poll_interval=0.05)
    >>> summary["status"], summary["stored"]
    ('completed', 4)
    """
    if batch_id is None:   # what submit_batch returns when there was nothing to submit
        return dict(_NOTHING)
    if not isinstance(batch_id, str):
        raise ValueError(f"batch_id must be a batch id (a string), got {batch_id!r}")
    RunConfig(max_answer_bytes=max_answer_bytes)
    coro = _acollect(batch_id, client, cache, api_key, wait, poll_interval, timeout, prices,
                     max_answer_bytes=max_answer_bytes)
    return EngineLoop.run(coro)


@stamped
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

    Batches of an earlier call that were not collected (the notebook was closed while they ran)
    are collected first, so their requests are not paid again. Requests that no batch answered
    are sent live by the final ``run_judges`` call; ``judgments.attrs["judgekit_batch"]`` holds
    the batch summary (``resumed``: the summaries of the earlier batches collected).

    Parameters
    ----------
    pairs, judges, orders, repeats, id_swap, client, cache
        As in :func:`~judgekit.run_judges` (a cache is required).
    poll_interval : float
        Seconds between looks at a running batch.
    timeout : float, optional
        Seconds to wait for a batch before giving up (it can be collected later).
    **options
        The other run settings of :func:`~judgekit.run_judges` (``api_key``, ``prices``,
        ``budget_usd``, ...; :class:`~judgekit.RunConfig` describes each), checked before
        anything is submitted.

    Returns
    -------
    DataFrame
        The judgments table of :func:`~judgekit.run_judges` (answers from the batch are read
        from the cache), with the batch summary in ``attrs["judgekit_batch"]``.

    Examples
    --------
    >>> import judgekit as jk, tempfile, os
    >>> pairs = jk.sim.simulate_pairs(5, seed=0)
    >>> path = os.path.join(tempfile.mkdtemp(), "cache.sqlite")
    >>> with jk.sim.SimServer(pairs=pairs, batch_delay=0.05) as url:
    ...     j = jk.run_judges_batch(pairs, jk.Judge("sim", "shen_hh", base_url=url), cache=path,
    ...                             poll_interval=0.05, progress=False)
    >>> j.attrs["judgekit_batch"]["stored"], j.attrs["judgekit_run"]["called"]
    (10, 0)
    """
    check_settings("run_judges_batch", options, _OWN)
    config = RunConfig(**{**options, "client": client, "cache": cache})
    if not (isinstance(poll_interval, (int, float)) and poll_interval > 0):
        raise ValueError(f"poll_interval must be a positive number of seconds, got {poll_interval!r}")
    if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ValueError(f"timeout must be None or a positive number of seconds, got {timeout!r}")
    plan, url = _plan(pairs, judges, orders, repeats, id_swap, client)
    wait = {"poll_interval": poll_interval, "timeout": timeout, "prices": config.prices,
            "url": url, "max_answer_bytes": config.max_answer_bytes}
    with open_cache(cache, required=True) as store:
        earlier = sorted(set(store.pending_batches(plan.keys).values()))
        resumed = [EngineLoop.run(_acollect(b, client, store, config.api_key, True, **wait))
                   for b in earlier]
        batch_id, _ = EngineLoop.run(_asubmit(plan, url, client, store, config.api_key, None,
                                              "24h", config.pending_batches))
        summary = dict(_NOTHING)
        if batch_id is not None:
            summary = EngineLoop.run(_acollect(batch_id, client, store, config.api_key, True,
                                               **wait))
        for done in [*resumed, summary]:
            unanswered = done.get("failed", 0) + done.get("missing", 0)
            if done["status"] not in ("completed", "nothing to submit") or unanswered:
                warnings.warn(
                    f"batch {done['batch_id']} ended '{done['status']}' with {unanswered} "
                    "requests unanswered; run_judges now sends what is not cached live, at the "
                    "full price", RuntimeWarning, stacklevel=caller_level(),
                )
        judgments = run_judges(pairs, judges, orders, repeats, id_swap, client=client,
                               cache=store, **options)
    judgments.attrs["judgekit_batch"] = {**summary, "resumed": resumed}
    return judgments


#: run_judges_batch's own parameters (named when a keyword is not one of them nor a setting)
_OWN = ("pairs", "judges", "orders", "repeats", "id_swap", "client", "cache", "poll_interval",
        "timeout")
