"""Run judges over pairs through any OpenAI-compatible endpoint, cached and resumable.

:func:`run_judges` renders every (pair, judge, order, ID arrangement, repeat) request, answers what
it can from the cache, sends the rest through ``openai.AsyncOpenAI`` with bounded concurrency,
retries (exponential backoff with full jitter, honouring ``Retry-After``) and timeouts, stores
every paid response durably before counting it done, and returns the judgments table of
:mod:`judgekit.schema` with the raw text, errors, tokens, cost and latency of each call.

The coroutines run on one background event loop owned by judgekit, so the same call works from a
script and from a Jupyter notebook (whose own loop is already running); async code can ``await``
:func:`arun_judges` instead.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import email.utils
import hashlib
import json
import logging
import math
import os
import random
import re
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgekit._aioloop import BackgroundLoop
from judgekit.judging.cache import Cache, request_key
from judgekit.judging.logprobs import option_probabilities
from judgekit.judging.templates import Template, _check_order, get_template
from judgekit.schema import validate_judgments, validate_pairs

__all__ = [
    "DEFAULT_PRICES",
    "Judge",
    "acomplete",
    "arun_judges",
    "complete",
    "estimate_cost",
    "price_table",
    "run_judges",
]

log = logging.getLogger("judgekit.engine")

#: USD per million tokens (input, output): OpenAI's list prices as of 2025. Check them before
#: relying on a budget; pass ``prices={model: (input, output)}`` to add or override models.
DEFAULT_PRICES: Mapping[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-4": (30.00, 60.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "o1": (15.00, 60.00),
    "o3-mini": (1.10, 4.40),
}
#: Batch API calls cost this fraction of the list price.
BATCH_DISCOUNT = 0.5
_RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
_DEFAULT_ENDPOINT = "https://api.openai.com/v1"


# ---------------------------------------------------------------------- judges
@dataclass(frozen=True)
class Judge:
    """One judge: a model, a template and decoding settings.

    Parameters
    ----------
    model : str
        The model name the endpoint knows.
    template : str, Template, dict or path
        The prompt template (see :func:`judgekit.list_templates`).
    temperature : float
        Sampling temperature (0 by default: the least noisy setting, Wei et al. 2024, Table 1).
    max_tokens : int, optional
        Completion budget; default 16 for templates that answer with the ID only, else 512.
    logprobs : bool
        Ask for the verdict token's logprobs (``p_a``). Turn off for endpoints without them.
    top_logprobs : int
        How many alternatives per token (10: room for four options and their case variants).
    seed : int, optional
        When set, repeat k is sent with ``seed = seed + k`` (reproducible repeats where the
        endpoint honours seeds; the simulated server uses it as the repeat index).
    base_url : str, optional
        Endpoint of this judge (else the client's, or ``OPENAI_BASE_URL``, or OpenAI's).
    extra : mapping
        Further request parameters (e.g. ``{"top_p": 0.9}``), sent in the body.
    name : str, optional
        Overrides :attr:`id`.

    Examples
    --------
    >>> import judgekit as jk
    >>> jk.Judge("gpt-4o-mini", "rafailov_tldr").id
    'gpt-4o-mini/rafailov_tldr/T0'
    >>> jk.Judge("gpt-4o-mini", "rafailov_tldr", temperature=0.7, extra={"top_p": 0.9}).id
    'gpt-4o-mini/rafailov_tldr/T0.7/...'
    """

    model: str
    template: str | Template | Mapping[str, Any] = "mtbench_pair"
    temperature: float = 0.0
    max_tokens: int | None = None
    logprobs: bool = True
    top_logprobs: int = 10
    seed: int | None = None
    base_url: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    name: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model:
            raise ValueError("Judge.model must be a non-empty string")
        object.__setattr__(self, "template", get_template(self.template))
        object.__setattr__(self, "extra", dict(self.extra))
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")
        if not 0 <= self.top_logprobs <= 20:
            raise ValueError(f"top_logprobs must be in 0..20, got {self.top_logprobs}")
        clash = {"model", "messages", "temperature", "max_tokens", "logprobs", "top_logprobs",
                 "seed", "stream", "n"} & set(self.extra)
        if clash:
            raise ValueError(f"set {sorted(clash)} through the Judge's own fields, not 'extra'")

    def __hash__(self) -> int:
        return hash(self.id)

    @property
    def tokens(self) -> int:
        """The completion budget actually requested."""
        if self.max_tokens is not None:
            return self.max_tokens
        return 512 if self.template.reasons_first else 16

    @property
    def id(self) -> str:
        """Stable id: ``model/template/T<temperature>`` plus a short hash of other settings."""
        if self.name:
            return self.name
        base = f"{self.model}/{self.template.name}/T{self.temperature:g}"
        other = {"max_tokens": self.max_tokens, "logprobs": self.logprobs,
                 "top_logprobs": self.top_logprobs, "seed": self.seed, "extra": self.extra}
        defaults = {"max_tokens": None, "logprobs": True, "top_logprobs": 10, "seed": None, "extra": {}}
        if other == defaults:
            return base
        digest = hashlib.sha256(json.dumps(other, sort_keys=True, default=str).encode()).hexdigest()
        return f"{base}/{digest[:8]}"

    def body(self, messages: list[dict[str, str]], repeat: int) -> dict[str, Any]:
        """The request body for these messages and repeat index."""
        body: dict[str, Any] = {
            "model": self.model, "messages": messages, "temperature": self.temperature,
            "max_tokens": self.tokens,
        }
        if self.logprobs:
            body["logprobs"] = True
            if self.top_logprobs:
                body["top_logprobs"] = self.top_logprobs
        if self.seed is not None:
            body["seed"] = int(self.seed) + int(repeat)
        body.update(self.extra)
        return body


def _as_judges(judges: Judge | str | Sequence[Judge | str]) -> list[Judge]:
    if isinstance(judges, (Judge, str)):
        judges = [judges]
    out = [j if isinstance(j, Judge) else Judge(str(j)) for j in judges]
    if not out:
        raise ValueError("give at least one judge")
    ids = [j.id for j in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"judges must have distinct ids; repeated: {dup} (set Judge.name)")
    return out


# ---------------------------------------------------------------------- prices
def _prices(prices: Mapping[str, tuple[float, float]] | None) -> dict[str, tuple[float, float]]:
    table = dict(DEFAULT_PRICES)
    for model, value in (prices or {}).items():
        try:
            inp, out = (float(v) for v in value)
        except (TypeError, ValueError):
            raise ValueError(f"price of {model!r} must be (input, output) USD per 1M tokens") from None
        if inp < 0 or out < 0:
            raise ValueError(f"price of {model!r} must be >= 0")
        table[model] = (inp, out)
    return table


def _price_of(model: str, table: Mapping[str, tuple[float, float]]) -> tuple[float, float] | None:
    if model in table:
        return table[model]
    # dated snapshots (gpt-4o-2024-08-06) use the longest listed prefix
    hits = [m for m in table if model.startswith(m + "-")]
    return table[max(hits, key=len)] if hits else None


def price_table(prices: Mapping[str, tuple[float, float]] | None = None) -> pd.DataFrame:
    """The price table in use: model, input and output USD per million tokens.

    Examples
    --------
    >>> import judgekit as jk
    >>> t = jk.price_table({"my-model": (1.0, 2.0)})
    >>> t.set_index("model").loc["my-model", "output_usd_per_1m"]
    np.float64(2.0)
    """
    table = _prices(prices)
    return pd.DataFrame(
        [(m, p[0], p[1]) for m, p in sorted(table.items())],
        columns=["model", "input_usd_per_1m", "output_usd_per_1m"],
    )


def _cost(model: str, prompt_tokens: int, completion_tokens: int, table, factor: float = 1.0) -> float:
    price = _price_of(model, table)
    if price is None:
        return float("nan")
    return factor * (prompt_tokens * price[0] + completion_tokens * price[1]) / 1e6


# ---------------------------------------------------------------------- building requests
@dataclass
class _Task:
    pair_id: str
    judge: Judge
    order: str
    id_swap: bool
    repeat: int
    key: str
    endpoint: str
    body: dict[str, Any]


def _endpoint(judge: Judge, client: Any) -> str:
    if judge.base_url:
        return judge.base_url.rstrip("/")
    if client is not None and getattr(client, "base_url", None):
        return str(client.base_url).rstrip("/")
    return os.environ.get("OPENAI_BASE_URL", _DEFAULT_ENDPOINT).rstrip("/")


def _swaps(id_swap: bool | Sequence[bool]) -> tuple[bool, ...]:
    if isinstance(id_swap, (bool, np.bool_)):
        return (bool(id_swap),)
    out = tuple(bool(s) for s in id_swap)
    if not out:
        raise ValueError("id_swap must be a bool or a non-empty sequence of bools")
    return out


def _build_tasks(
    pairs: pd.DataFrame, judges: list[Judge], orders: Sequence[str], repeats: int,
    swaps: tuple[bool, ...], client: Any,
) -> list[_Task]:
    orders = tuple(orders)
    if not orders:
        raise ValueError("orders must not be empty")
    for o in orders:
        _check_order(o)
    sizes = {len(o) for o in orders}
    if len(sizes) != 1:
        raise ValueError(f"all orders must show the same number of responses, got {orders}")
    n = sizes.pop()
    if n > 2 and any(swaps):
        raise ValueError("id_swap is defined for two responses only")
    for letter in "abcd"[2:n]:
        column = f"response_{letter}"
        if column not in pairs.columns:
            raise ValueError(f"orders {orders} need the pairs column {column!r}")
        bad = pairs[column].map(lambda v: not isinstance(v, str)).to_numpy(dtype=bool)
        if bad.any():
            ids = pairs.loc[bad, "pair_id"].astype(str).tolist()[:5]
            raise ValueError(f"pairs: column {column!r} has missing text (pair_id: {', '.join(ids)})")
    if not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ValueError(f"repeats must be an integer >= 1, got {repeats}")
    for j in judges:
        if j.template.max_responses < n:
            raise ValueError(f"template {j.template.name!r} of judge {j.id!r} takes at most "
                             f"{j.template.max_responses} responses; orders show {n}")
    rows = pairs.to_dict("records")
    tasks = []
    for judge in judges:
        endpoint = _endpoint(judge, client)
        for row in rows:
            for order in orders:
                for swap in swaps:
                    try:
                        messages = judge.template.render_pair(row, order=order, id_swap=swap)
                    except ValueError as exc:
                        raise ValueError(f"pair {row['pair_id']!r}, judge {judge.id!r}: {exc}") from exc
                    for k in range(int(repeats)):
                        body = judge.body(messages, k)
                        tasks.append(_Task(row["pair_id"], judge, order, swap, k,
                                           request_key(endpoint, body, k), endpoint, body))
    return tasks


# ---------------------------------------------------------------------- the async core
@dataclass
class _Progress:
    total: int = 0
    done: int = 0


@dataclass
class _Call:
    key: str
    endpoint: str
    body: dict[str, Any]
    repeat: int


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        with contextlib.suppress(ValueError):
            return max(float(ms) / 1000.0, 0.0)
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:  # an HTTP date; anything unreadable falls back to the exponential backoff
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return None if when is None else max(when.timestamp() - time.time(), 0.0)


class _Runner:
    """Executes calls: cache lookups, bounded concurrency, retries, budget, durable writes."""

    def __init__(
        self, *, clients: Mapping[str, Any], cache: Cache | None, concurrency: int,
        timeout: float, max_retries: int, backoff_base: float, backoff_max: float,
        budget_usd: float | None, prices: Mapping[str, tuple[float, float]],
        progress: _Progress, retry_errors: bool,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0, got {timeout}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if budget_usd is not None and budget_usd < 0:
            raise ValueError(f"budget_usd must be >= 0, got {budget_usd}")
        self.clients, self.cache = clients, cache
        self.concurrency, self.timeout, self.max_retries = concurrency, timeout, max_retries
        self.backoff_base, self.backoff_max = backoff_base, backoff_max
        self.budget, self.prices, self.progress = budget_usd, prices, progress
        self.retry_errors = retry_errors
        self.report: dict[str, Any] = {
            "requests": 0, "cached": 0, "called": 0, "paid": 0, "errors": 0, "retries": 0,
            "abandoned_timeouts": 0, "not_run_budget": 0, "cost_usd": 0.0, "elapsed_s": 0.0,
        }
        self._spent = 0.0      # known costs of the answers received (reported)
        self._charged = 0.0    # what counts against the budget: known costs, plus the upper
        self._reserved = 0.0   # bound of paid calls without usage and of abandoned timeouts
        self._stopped = False
        self._freed: asyncio.Event | None = None
        self._writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="judgekit-cache")

    def _upper_cost(self, call: _Call) -> float:
        # Byte-level BPE tokenizers (OpenAI's, Llama's with byte fallback) never make more tokens
        # than UTF-8 bytes; chat formatting adds a few tokens per message.
        messages = call.body.get("messages", [])
        prompt = sum(len(str(m.get("content", "")).encode("utf-8")) + 8 for m in messages) + 16
        out = call.body.get("max_tokens") or 512
        cost = _cost(call.body["model"], prompt, int(out), self.prices)
        return 0.0 if math.isnan(cost) else cost

    async def _reserve(self, upper: float) -> bool:
        """Reserve ``upper`` USD of the budget: wait while calls in flight hold the rest; False
        (and stop) when even the money not yet charged cannot cover it."""
        while True:
            if self._stopped or self._charged + upper > self.budget:
                self._stopped = True
                return False
            if self._charged + self._reserved + upper <= self.budget:
                self._reserved += upper
                return True
            if self._freed is None:
                self._freed = asyncio.Event()
            await self._freed.wait()

    def _settle(self, upper: float, charge: float) -> None:
        """Replace a call's reservation by its charge, with no await in between."""
        self._reserved -= upper
        self._charged += charge
        if self._freed is not None:
            freed, self._freed = self._freed, None
            freed.set()

    async def run(self, calls: list[_Call]) -> dict[str, dict[str, Any]]:
        start = time.perf_counter()
        unique = list({c.key: c for c in calls}.values())
        self.report["requests"] = len(unique)
        cached = self.cache.get_many([c.key for c in unique]) if self.cache is not None else {}
        if self.retry_errors:
            redo = [k for k, row in cached.items() if row["status"] != "ok"]
            if redo:
                self.cache.delete(redo)
                for k in redo:
                    cached.pop(k)
        results: dict[str, dict[str, Any]] = {k: {**row, "cached": True} for k, row in cached.items()}
        self.report["cached"] = len(cached)
        pending = [c for c in unique if c.key not in cached]
        if self.budget is not None:
            unknown = sorted({c.body["model"] for c in pending if _price_of(c.body["model"], self.prices) is None})
            if unknown:
                raise ValueError(
                    f"budget_usd needs a price for {unknown}: pass prices={{model: (input, output)}} "
                    "in USD per million tokens"
                )
        self.progress.total = len(pending)
        queue: asyncio.Queue[_Call] = asyncio.Queue()
        for c in pending:
            queue.put_nowait(c)
        workers = [asyncio.create_task(self._worker(queue, results))
                   for _ in range(min(self.concurrency, len(pending)))]
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
            if self.budget is not None:
                upper = self._upper_cost(call)
                if not await self._reserve(upper):
                    self.report["not_run_budget"] += 1
                    self.progress.done += 1
                    continue
            try:
                row = await self._call(call, upper)
            except BaseException:
                self._settle(upper, 0.0)
                raise
            paid = row["status"] in ("ok", "paid_error")
            known = paid and not math.isnan(row["cost_usd"])
            if known:
                self._spent += row["cost_usd"]
            # a paid answer without usage counts at its upper bound; settled before any await,
            # so no other call can be sent against money this one has already spent
            self._settle(upper, row["cost_usd"] if known else (upper if paid else 0.0))
            if paid:
                if self.cache is not None:
                    # durable before the call counts as done
                    await loop.run_in_executor(self._writer, self.cache.put, row)
                self.report["paid"] += 1
            if row["status"] != "ok":
                self.report["errors"] += 1
            results[call.key] = {**row, "cached": False}
            self.progress.done += 1

    async def _call(self, call: _Call, upper: float = 0.0) -> dict[str, Any]:
        import openai

        client = self.clients[call.endpoint]
        body = dict(call.body)
        model, messages = body.pop("model"), body.pop("messages")
        attempt = 0
        self.report["called"] += 1
        while True:
            t0 = time.perf_counter()
            wait: float | None = None
            try:
                raw = await client.chat.completions.with_raw_response.create(
                    model=model, messages=messages, extra_body=body or None
                )
                text = raw.http_response.text
            except openai.APITimeoutError:
                self.report["abandoned_timeouts"] += 1
                self._charged += upper  # the endpoint may have billed it
                last = f"timed out after {self.timeout:g} s"
            except openai.APIConnectionError as exc:
                last = _scrub(f"connection error: {exc}", [getattr(client, "api_key", "")])
            except openai.APIStatusError as exc:
                status = exc.status_code
                last = _scrub(f"HTTP {status}: {_message(exc)}", [getattr(client, "api_key", "")])
                if status not in _RETRY_STATUS:
                    return self._row(call, "error", error=f"api: {last}", attempts=attempt + 1)
                wait = _retry_after(exc.response.headers if exc.response is not None else None)
            except openai.OpenAIError as exc:  # any other client-side failure: recorded, not retried
                message = _scrub(f"{type(exc).__name__}: {exc}", [getattr(client, "api_key", "")])
                return self._row(call, "error", error=f"api: {message}", attempts=attempt + 1)
            else:
                latency = time.perf_counter() - t0
                return self._parse_response(call, text, latency, attempt + 1)
            attempt += 1
            if attempt > self.max_retries:
                return self._row(call, "error", attempts=attempt,
                                 error=f"api: gave up after {attempt} attempts; last: {last}")
            self.report["retries"] += 1
            if wait is not None:
                delay = wait + random.uniform(0.0, 0.1 * wait + 0.01)
            else:
                delay = random.uniform(0.0, min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1)))
            log.debug("retrying a call in %.2f s after: %s", delay, last)
            await asyncio.sleep(delay)

    def _row(self, call: _Call, status: str, *, response: str | None = None, error: str | None = None,
             prompt_tokens: int | None = None, completion_tokens: int | None = None,
             cost: float = float("nan"), latency: float | None = None, attempts: int = 1) -> dict:
        return {
            "key": call.key, "endpoint": call.endpoint, "model": call.body["model"],
            "repeat": call.repeat, "request": json.dumps(call.body, sort_keys=True),
            "response": response, "status": status, "error": error,
            "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "cost_usd": cost, "latency_s": latency, "source": "live", "created_at": time.time(),
            "attempts": attempts,
        }

    def _parse_response(self, call: _Call, text: str, latency: float, attempts: int) -> dict:
        try:
            payload = json.loads(text)
            if not isinstance(payload, dict):
                raise ValueError("not an object")
        except ValueError:
            return self._row(call, "paid_error", response=text, latency=latency, attempts=attempts,
                             error=f"api: malformed JSON response ({len(text)} bytes)")
        usage = payload.get("usage") or {}
        pt, ct = usage.get("prompt_tokens"), usage.get("completion_tokens")
        cost = _cost(call.body["model"], pt or 0, ct or 0, self.prices) if usage else float("nan")
        common = {"response": text, "prompt_tokens": pt, "completion_tokens": ct, "cost": cost,
                  "latency": latency, "attempts": attempts}
        choices = payload.get("choices")
        if not choices:
            return self._row(call, "paid_error", error="api: response has no choices", **common)
        first = choices[0] if isinstance(choices, list) else None
        if not isinstance(first, dict) or not isinstance(first.get("message"), dict):
            return self._row(call, "paid_error", error="api: response has no message in choices[0]",
                             **common)
        return self._row(call, "ok", **common)


_KEYLIKE = re.compile(r"\b(?:sk|key|api[-_]?key)[-_][A-Za-z0-9_\-*]{6,}", re.IGNORECASE)


def _scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """Remove API keys (given, or key-like tokens such as ``sk-...``) from an error message.

    Examples
    --------
    >>> _scrub("Incorrect API key provided: sk-proj-abc123********xyz9.")
    'Incorrect API key provided: sk-***.'
    """
    for secret in secrets:
        if secret and len(secret) >= 6:
            text = text.replace(secret, "***")
    return _KEYLIKE.sub(lambda m: m.group(0).split("-")[0].split("_")[0] + "-***", text)


def _message(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and inner.get("message"):
            return str(inner["message"])[:300]
    return str(exc)[:300]


# ---------------------------------------------------------------------- clients and the loop
def _make_clients(endpoints: Iterable[str], client: Any, api_key: str | None, timeout: float):
    """One AsyncOpenAI per endpoint (retries off: the engine retries); which ones to close."""
    import openai

    clients, owned = {}, []
    for endpoint in sorted(set(endpoints)):
        if isinstance(client, openai.AsyncOpenAI):
            same = str(client.base_url).rstrip("/") == endpoint
            c = client.with_options(max_retries=0, timeout=timeout, **({} if same else {"base_url": endpoint}))
        else:
            key = api_key
            if key is None and client is not None:
                key = getattr(client, "api_key", None)
            if key is None:
                key = os.environ.get("OPENAI_API_KEY")
            if key is None:
                if _is_loopback(endpoint):
                    key = "judgekit-local"
                else:
                    raise ValueError(
                        f"no API key for {endpoint}: set OPENAI_API_KEY, pass api_key=..., or pass "
                        "client=openai.AsyncOpenAI(...)"
                    )
            kwargs = {}
            if client is not None:
                for name in ("organization", "project"):
                    if getattr(client, name, None):
                        kwargs[name] = getattr(client, name)
            c = openai.AsyncOpenAI(base_url=endpoint, api_key=key, max_retries=0, timeout=timeout, **kwargs)
            owned.append(c)
        clients[endpoint] = c
    return clients, owned


def _is_loopback(url: str) -> bool:
    from urllib.parse import urlparse

    host = urlparse(url).hostname or ""
    return host in ("localhost", "127.0.0.1", "::1") or host.startswith("127.")


class _EngineLoop:
    """One background event loop for all engine runs (started on first use)."""

    _loop = BackgroundLoop("judgekit-engine")

    @classmethod
    def run(cls, coro, progress: _Progress | None = None, show: bool = False, desc: str = ""):
        bar = None

        def refresh() -> None:
            nonlocal bar
            if show and progress is not None and progress.total:
                if bar is None:
                    from tqdm.auto import tqdm

                    bar = tqdm(total=progress.total, desc=desc, unit="call")
                bar.n = progress.done
                bar.refresh()

        try:
            return cls._loop.run(coro, poll=refresh)
        finally:
            if bar is not None:
                bar.n = progress.done
                bar.refresh()
                bar.close()


def _open_cache(cache: bool | str | os.PathLike | Cache | None) -> tuple[Cache | None, bool]:
    if cache is None or cache is False:
        return None, False
    if isinstance(cache, Cache):
        return cache, False
    if cache is True:
        return Cache(), True
    return Cache(cache), True


# ---------------------------------------------------------------------- judgments from responses
def _judgment(task: _Task, row: Mapping[str, Any] | None) -> dict[str, Any]:
    template = task.judge.template
    n = len(task.order)
    ids = template.ids_for(n, task.id_swap)
    out: dict[str, Any] = {
        "pair_id": task.pair_id, "judge": task.judge.id, "order": task.order,
        "id_swap": task.id_swap, "repeat": task.repeat, "verdict": None,
        **{f"p_{letter}": float("nan") for letter in "abcd"[:n]},
        "model": task.judge.model, "template": template.name,
        "temperature": float(task.judge.temperature), "raw": None, "error": None, "p_note": None,
        "finish_reason": None, "prompt_tokens": np.nan, "completion_tokens": np.nan,
        "cost_usd": np.nan, "latency_s": np.nan, "cached": bool(row["cached"]) if row else False,
        "request_key": task.key,
    }
    if row is None:
        return out
    for col in ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s"):
        if row.get(col) is not None:
            out[col] = row[col]
    if row["status"] != "ok":
        out["error"] = row["error"]
        return out
    try:
        choice = json.loads(row["response"])["choices"][0]
        message = choice.get("message") or {}
        text = message.get("content")
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        # a stored answer of an unexpected shape: recorded, and the run goes on
        out["error"] = f"api: unreadable response ({type(exc).__name__}: {exc})"
        return out
    out["raw"] = text
    out["finish_reason"] = choice.get("finish_reason")
    prompt_text = "\n".join(str(m.get("content", "")) for m in task.body["messages"])
    parsed = template.parse(text, prompt_text=prompt_text)
    if parsed.option is None:
        reason = parsed.error
        if choice.get("finish_reason") == "length":
            reason = f"truncated (finish_reason=length); {reason}"
        if message.get("refusal"):
            reason = f"refused: {message['refusal']}"
        out["error"] = f"parse: {reason}"
        return out
    letters = task.order
    if template.ties and parsed.option == template.tie_id:
        out["verdict"] = "tie"
    else:
        out["verdict"] = letters[ids.index(parsed.option)]
    if task.judge.logprobs:
        try:
            logprobs = (choice.get("logprobs") or {}).get("content")
            probs, note = option_probabilities(
                logprobs, text, parsed.start, list(ids),
                tie_id=template.tie_id if template.ties else None,
            )
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            probs, note = None, f"unreadable logprobs ({type(exc).__name__}: {exc})"
        out["p_note"] = note
        if probs is not None:
            for k, letter in enumerate(letters):
                out[f"p_{letter}"] = probs[ids[k]]
    return out


_FRONT = ["pair_id", "judge", "order", "id_swap", "repeat", "verdict", "p_a", "p_b", "p_c", "p_d"]


def _frame(rows: list[dict[str, Any]], n: int) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    if df.empty:
        df = pd.DataFrame(columns=[*_FRONT[:5], "verdict", *[f"p_{x}" for x in "abcd"[:n]]])
    for col in ("verdict", "raw", "error", "p_note", "finish_reason"):
        if col in df.columns:
            df[col] = df[col].astype(object).where(df[col].notna(), None)
    if n == 2 and "p_b" in df.columns:
        df = df.drop(columns="p_b")  # p_b = 1 - p_a
    front = [c for c in _FRONT if c in df.columns]
    return df[front + [c for c in df.columns if c not in front]]


# ---------------------------------------------------------------------- public API
async def arun_judges(
    pairs: pd.DataFrame,
    judges: Judge | str | Sequence[Judge | str],
    orders: Sequence[str] = ("ab", "ba"),
    repeats: int = 1,
    id_swap: bool | Sequence[bool] = False,
    client: Any = None,
    concurrency: int = 16,
    budget_usd: float | None = None,
    progress: bool = True,
    *,
    cache: bool | str | os.PathLike | Cache | None = True,
    api_key: str | None = None,
    timeout: float = 120.0,
    max_retries: int = 8,
    backoff_base: float = 0.5,
    backoff_max: float = 60.0,
    prices: Mapping[str, tuple[float, float]] | None = None,
    retry_errors: bool = False,
    _progress: _Progress | None = None,
) -> pd.DataFrame:
    """Async form of :func:`run_judges` (same parameters), for use inside a running event loop."""
    pairs = validate_pairs(pairs)
    judge_list = _as_judges(judges)
    swaps = _swaps(id_swap)
    tasks = _build_tasks(pairs, judge_list, orders, repeats, swaps, client)
    n = len(tuple(orders)[0])
    store, owned_cache = _open_cache(cache)
    clients, owned = _make_clients({t.endpoint for t in tasks}, client, api_key, timeout)
    prog = _progress or _Progress()
    runner = _Runner(
        clients=clients, cache=store, concurrency=concurrency, timeout=timeout,
        max_retries=max_retries, backoff_base=backoff_base, backoff_max=backoff_max,
        budget_usd=budget_usd, prices=_prices(prices), progress=prog, retry_errors=retry_errors,
    )
    bar = monitor = None
    if progress and _progress is None:
        from tqdm.auto import tqdm

        bar = tqdm(total=0, desc="judging", unit="call")
        monitor = asyncio.create_task(_monitor(bar, prog))
    try:
        calls = [_Call(t.key, t.endpoint, t.body, t.repeat) for t in tasks]
        results = await runner.run(calls)
    finally:
        if bar is not None:
            monitor.cancel()
            bar.n, bar.total = prog.done, prog.total
            bar.close()
        for c in owned:
            await c.close()
        if owned_cache:
            store.close()
    rows = [_judgment(t, results.get(t.key)) for t in tasks if t.key in results]
    judgments = _frame(rows, n)
    if n == 2:
        judgments = validate_judgments(judgments, pairs)
    report = runner.report
    judgments.attrs["judgekit_run"] = dict(report)
    if _progress is None:
        _announce(report)
    return judgments


async def _monitor(bar: Any, prog: _Progress) -> None:
    while True:
        bar.total = prog.total
        bar.n = prog.done
        bar.refresh()
        await asyncio.sleep(0.2)


def _announce(report: Mapping[str, Any]) -> None:
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


def run_judges(
    pairs: pd.DataFrame,
    judges: Judge | str | Sequence[Judge | str],
    orders: Sequence[str] = ("ab", "ba"),
    repeats: int = 1,
    id_swap: bool | Sequence[bool] = False,
    client: Any = None,
    concurrency: int = 16,
    budget_usd: float | None = None,
    progress: bool = True,
    **options: Any,
) -> pd.DataFrame:
    """Judge every pair with every judge, in each order, ID arrangement and repeat.

    Parameters
    ----------
    pairs : DataFrame
        The pairs table (:func:`judgekit.validate_pairs`); optional columns ``system_note``,
        ``user_note`` (with ``{id_a}``/``{id_b}``), ``response_c``/``response_d`` (n-way),
        ``reference``/``criteria`` (templates that use them).
    judges : Judge, str or sequence
        Judges (a string is a model name with the default template).
    orders : sequence of str
        Display orders: ``"ab"``/``"ba"``, or permutations of ``"abc"``/``"abcd"`` for n-way
        templates (then ``verdict`` is a letter a-d and ``p_a``.. ``p_d`` are given).
    repeats : int
        K identical requests per (pair, judge, order, ID arrangement).
    id_swap : bool or sequence of bool
        ``(False, True)`` judges both ID arrangements: with both orders, CalibraEval's X0..X3.
    client : openai.AsyncOpenAI or openai.OpenAI, optional
        The client (its base URL and key); default: one made from each judge's ``base_url`` and
        ``OPENAI_API_KEY``. Its own retries are turned off: the engine retries.
    concurrency : int
        Requests in flight at once.
    budget_usd : float, optional
        Never let the spend exceed this (at the price table's rates). Each call reserves an
        upper bound of its cost (UTF-8 bytes of the messages as prompt tokens, plus
        ``max_tokens``) while in flight, and is charged its real cost from the returned usage
        (its upper bound when the answer carries no usage or the client timed out). A call waits
        while the budget is held by calls in flight; sending stops for good once the remaining
        budget cannot cover the next call. Calls already made are kept and a warning says how
        many were not sent.
    progress : bool
        Show a progress bar (``tqdm.auto``).
    **options
        ``cache`` (True: the default file under ``JUDGEKIT_CACHE_DIR``; a path; a
        :class:`~judgekit.judging.cache.Cache`; False: none), ``api_key``, ``timeout`` (s, 120),
        ``max_retries`` (8), ``backoff_base`` (0.5 s), ``backoff_max`` (60 s), ``prices``
        ({model: (input, output) USD per 1M tokens}), ``retry_errors`` (request again the calls
        that were paid but unusable, e.g. malformed JSON).

    Returns
    -------
    DataFrame
        The judgments table: ``pair_id, judge, order, id_swap, repeat, verdict, p_a`` plus
        ``model, template, temperature, raw, error, p_note, finish_reason, prompt_tokens,
        completion_tokens, cost_usd, latency_s, cached, request_key``. ``error`` starts with
        ``api:`` (the call failed) or ``parse:`` (no verdict in the answer); ``p_note`` says why
        ``p_a`` is missing or floored. ``judgments.attrs["judgekit_run"]`` holds the run's counts
        (cached, called, paid, errors, retries, abandoned timeouts, not run, cost, time).

    Notes
    -----
    Each request is keyed by sha256(endpoint, body, repeat); paid responses are committed to the
    SQLite cache before they count, so a re-run (also after a crash) sends only what is missing.
    Failures that were not paid (429, 5xx, dropped connections, timeouts) are retried with
    exponential backoff and full jitter, waiting ``Retry-After`` when the server gives it; paid but
    unusable answers (malformed JSON, no choices) are recorded, not retried. A timed-out call may
    have been billed by the endpoint; such calls are counted in ``abandoned_timeouts``.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs = jk.simulate_pairs(20, seed=1)
    >>> with jk.SimServer(jk.SimJudge(position_bias=1.0), pairs=pairs) as url:
    ...     judge = jk.Judge("sim", "rafailov_tldr", base_url=url, seed=0)
    ...     j = jk.run_judges(pairs, judge, repeats=2, cache=False, progress=False)
    >>> j.groupby("order").size().to_dict()
    {'ab': 40, 'ba': 40}
    >>> bool(j["p_a"].between(0, 1).all()), j.attrs["judgekit_run"]["called"]
    (True, 80)
    """
    prog = _Progress()
    coro = arun_judges(pairs, judges, orders, repeats, id_swap, client, concurrency, budget_usd,
                       False, _progress=prog, **options)
    judgments = _EngineLoop.run(coro, prog, show=progress, desc="judging")
    _announce(judgments.attrs["judgekit_run"])
    return judgments


# ---------------------------------------------------------------------- generic completions
async def acomplete(
    prompts: Any,
    model: str,
    *,
    system: str | None = None,
    temperature: float = 0.0,
    max_tokens: int = 1024,
    seed: int | None = None,
    repeats: int = 1,
    extra: Mapping[str, Any] | None = None,
    client: Any = None,
    base_url: str | None = None,
    concurrency: int = 16,
    budget_usd: float | None = None,
    progress: bool = True,
    cache: bool | str | os.PathLike | Cache | None = True,
    api_key: str | None = None,
    timeout: float = 120.0,
    max_retries: int = 8,
    backoff_base: float = 0.5,
    backoff_max: float = 60.0,
    prices: Mapping[str, tuple[float, float]] | None = None,
    retry_errors: bool = False,
    _progress: _Progress | None = None,
) -> pd.DataFrame:
    """Async form of :func:`complete`."""
    ids, conversations = _prompts(prompts, system)
    if not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ValueError(f"repeats must be an integer >= 1, got {repeats}")
    probe = Judge(model, {"name": "completion", "user": "{response_1}{response_2}"}, base_url=base_url)
    endpoint = _endpoint(probe, client)
    calls, index = [], []
    for pid, messages in zip(ids, conversations):
        for k in range(int(repeats)):
            body = {"model": model, "messages": messages, "temperature": temperature,
                    "max_tokens": max_tokens, **(extra or {})}
            if seed is not None:
                body["seed"] = int(seed) + k
            key = request_key(endpoint, body, k)
            calls.append(_Call(key, endpoint, body, k))
            index.append((pid, k, key))
    store, owned_cache = _open_cache(cache)
    clients, owned = _make_clients({endpoint}, client, api_key, timeout)
    prog = _progress or _Progress()
    runner = _Runner(
        clients=clients, cache=store, concurrency=concurrency, timeout=timeout,
        max_retries=max_retries, backoff_base=backoff_base, backoff_max=backoff_max,
        budget_usd=budget_usd, prices=_prices(prices), progress=prog, retry_errors=retry_errors,
    )
    try:
        results = await runner.run(calls)
    finally:
        for c in owned:
            await c.close()
        if owned_cache:
            store.close()
    rows = []
    for pid, k, key in index:
        row = results.get(key)
        if row is None:
            continue
        text, finish, error = None, None, row.get("error")
        if row["status"] == "ok":
            choice = json.loads(row["response"])["choices"][0]
            text = (choice.get("message") or {}).get("content")
            finish = choice.get("finish_reason")
            if finish == "length":
                error = "truncated (finish_reason=length)"
        rows.append({"id": pid, "repeat": k, "text": text, "error": error, "finish_reason": finish,
                     "prompt_tokens": row.get("prompt_tokens"),
                     "completion_tokens": row.get("completion_tokens"),
                     "cost_usd": row.get("cost_usd"), "latency_s": row.get("latency_s"),
                     "cached": row["cached"], "request_key": key})
    out = pd.DataFrame(rows, columns=["id", "repeat", "text", "error", "finish_reason",
                                      "prompt_tokens", "completion_tokens", "cost_usd",
                                      "latency_s", "cached", "request_key"])
    out.attrs["judgekit_run"] = dict(runner.report)
    if _progress is None:
        _announce(runner.report)
    return out


def _prompts(prompts: Any, system: str | None) -> tuple[list[str], list[list[dict[str, str]]]]:
    if isinstance(prompts, pd.DataFrame):
        if "prompt" not in prompts.columns and "messages" not in prompts.columns:
            raise ValueError("a prompts table needs a 'prompt' or a 'messages' column")
        ids = prompts["id"].astype(str).tolist() if "id" in prompts.columns else [str(i) for i in prompts.index]
        items = prompts["messages"].tolist() if "messages" in prompts.columns else prompts["prompt"].tolist()
    elif isinstance(prompts, pd.Series):
        ids, items = [str(i) for i in prompts.index], prompts.tolist()
    elif isinstance(prompts, Mapping):
        ids, items = [str(k) for k in prompts], list(prompts.values())
    elif isinstance(prompts, str):
        ids, items = ["0"], [prompts]
    else:
        items = list(prompts)
        ids = [str(i) for i in range(len(items))]
    if len(set(ids)) != len(ids):
        raise ValueError("prompt ids must be unique")
    conversations = []
    for pid, item in zip(ids, items):
        if isinstance(item, str):
            messages = [{"role": "user", "content": item}]
        elif isinstance(item, Sequence) and all(isinstance(m, Mapping) and "role" in m for m in item):
            messages = [dict(m) for m in item]
        else:
            raise ValueError(f"prompt {pid!r} must be a string or a list of chat messages")
        if system is not None and not any(m["role"] == "system" for m in messages):
            messages = [{"role": "system", "content": system}, *messages]
        conversations.append(messages)
    return ids, conversations


def complete(prompts: Any, model: str, **options: Any) -> pd.DataFrame:
    """Cached, concurrent chat completions for non-judging calls (e.g. LLM rewrites).

    The same engine as :func:`run_judges`: one request per prompt and repeat, keyed by
    sha256(endpoint, body, repeat) in the same cache, retried and budgeted the same way.

    Parameters
    ----------
    prompts : str, sequence, mapping, Series or DataFrame
        User messages (strings) or whole conversations (lists of ``{"role", "content"}``); a
        mapping or Series gives ids, a DataFrame has ``id`` and ``prompt`` or ``messages``.
    model : str
        The model name.
    **options
        ``system`` (a system prompt added where none is given), ``temperature`` (0),
        ``max_tokens`` (1024), ``seed``, ``repeats`` (1), ``extra`` (request parameters),
        ``client``, ``base_url``, ``concurrency`` (16), ``budget_usd``, ``progress``, ``cache``,
        ``api_key``, ``timeout``, ``max_retries``, ``prices``, ``retry_errors``: as in
        :func:`run_judges`.

    Returns
    -------
    DataFrame
        ``id, repeat, text, error, finish_reason, prompt_tokens, completion_tokens, cost_usd,
        latency_s, cached, request_key``; run counts in ``attrs["judgekit_run"]``.

    Examples
    --------
    >>> import judgekit as jk
    >>> def shout(body):
    ...     return body["messages"][-1]["content"].upper()
    >>> with jk.SimServer(handlers=[shout]) as url:
    ...     out = jk.complete({"x": "make this longer"}, "sim", base_url=url, cache=False,
    ...                       progress=False)
    >>> out[["id", "text"]].to_dict("records")
    [{'id': 'x', 'text': 'MAKE THIS LONGER'}]
    """
    prog = _Progress()
    show = options.pop("progress", True)
    coro = acomplete(prompts, model, progress=False, _progress=prog, **options)
    out = _EngineLoop.run(coro, prog, show=show, desc="completing")
    _announce(out.attrs["judgekit_run"])
    return out


# ---------------------------------------------------------------------- cost estimates
def estimate_cost(
    pairs: pd.DataFrame,
    judges: Judge | str | Sequence[Judge | str],
    orders: Sequence[str] = ("ab", "ba"),
    repeats: int = 1,
    id_swap: bool | Sequence[bool] = False,
    *,
    client: Any = None,
    prices: Mapping[str, tuple[float, float]] | None = None,
    cache: bool | str | os.PathLike | Cache | None = None,
    chars_per_token: float = 4.0,
    batch: bool = False,
) -> pd.DataFrame:
    """What a :func:`run_judges` call would send and cost, before sending anything.

    Prompt tokens are estimated from characters (``chars_per_token``, about 4 for English with
    OpenAI tokenizers); completion tokens are bounded by the judge's ``max_tokens``
    (``cost_usd_max``) and put at a typical 60 (reasons first) or 2 (ID only) tokens
    (``cost_usd_typical``). Requests already in ``cache`` cost nothing.

    Returns
    -------
    DataFrame
        Per judge: ``requests``, ``cached``, ``to_send``, ``prompt_tokens``, ``cost_usd_typical``,
        ``cost_usd_max`` (NaN for models without a price).

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs = jk.simulate_pairs(100, seed=0)
    >>> est = jk.estimate_cost(pairs, jk.Judge("gpt-4o-mini", "rafailov_tldr"), repeats=3)
    >>> int(est["requests"].iloc[0]), bool(est["cost_usd_max"].iloc[0] > est["cost_usd_typical"].iloc[0])
    (600, True)
    """
    pairs = validate_pairs(pairs)
    judge_list = _as_judges(judges)
    tasks = _build_tasks(pairs, judge_list, orders, repeats, _swaps(id_swap), client)
    table = _prices(prices)
    store, owned = _open_cache(cache)
    try:
        cached = set(store.get_many([t.key for t in tasks])) if store is not None else set()
    finally:
        if owned:
            store.close()
    factor = BATCH_DISCOUNT if batch else 1.0
    rows = []
    for judge in judge_list:
        mine = [t for t in tasks if t.judge is judge]
        send = [t for t in mine if t.key not in cached]
        chars = sum(sum(len(m["content"]) for m in t.body["messages"]) for t in send)
        pt = int(round(chars / chars_per_token))
        typical = 60 if judge.template.reasons_first else 2
        rows.append({
            "judge": judge.id, "model": judge.model, "requests": len(mine),
            "cached": len(mine) - len(send), "to_send": len(send), "prompt_tokens": pt,
            "cost_usd_typical": _cost(judge.model, pt, typical * len(send), table, factor),
            "cost_usd_max": _cost(judge.model, pt, judge.tokens * len(send), table, factor),
        })
    return pd.DataFrame(rows)
