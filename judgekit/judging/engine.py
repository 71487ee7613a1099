"""Run judges over pairs through any OpenAI-compatible endpoint, cached and resumable.

:func:`run_judges` renders every (pair, judge, order, ID arrangement, repeat) request, answers what
it can from the cache, sends the rest over HTTP (judgekit's lean aiohttp transport, or the
``openai`` SDK: :mod:`~judgekit.judging.transport`) with bounded concurrency,
retries (exponential backoff with full jitter, honouring ``Retry-After``) and timeouts, stores
every paid response durably before counting it done, and returns the judgments table of
:mod:`judgekit.schema` with the raw text, errors, tokens, cost and latency of each call.

The coroutines run on one background event loop owned by judgekit, so the same call works from a
script and from a Jupyter notebook (whose own loop is already running); async code can ``await``
:func:`arun_judges` instead.

The parts live in their own modules: :mod:`~judgekit.judging.judge` (the judge),
:mod:`~judgekit.judging.requests` (request bodies and keys), :mod:`~judgekit.judging.config` (the
run settings), :mod:`~judgekit.judging.runner` (cache, concurrency, budget),
:mod:`~judgekit.judging.calls` (HTTP, retries), :mod:`~judgekit.judging.responses` (judgments
from answers), :mod:`~judgekit.judging.pricing` and :mod:`~judgekit.judging.clients`.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from judgekit._stamp import stamped
from judgekit.judging.cache import Cache
from judgekit.judging.clients import Progress
from judgekit.judging.config import RunConfig
from judgekit.judging.judge import Judge, as_judges
from judgekit.judging.requests import RequestPlan, check_swaps
from judgekit.judging.responses import JudgmentColumns
from judgekit.judging.runner import adrive, bind, drive, run_calls, twin_docstring
from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["arun_judges", "run_judges"]


@dataclass
class JudgingJob:
    """A checked run: the pairs, its requests and its settings."""

    pairs: pd.DataFrame
    plan: RequestPlan
    config: RunConfig

    @classmethod
    def prepare(cls, values: Mapping[str, Any]) -> JudgingJob:
        """Check every argument of :func:`run_judges` and key every request."""
        pairs = validate_pairs(values["pairs"])
        config = RunConfig.of(values)
        plan = RequestPlan(pairs, as_judges(values["judges"]), values["orders"],
                           values["repeats"], check_swaps(values["id_swap"]), config.client)
        return cls(pairs, plan, config)

    async def run(self, progress: Progress) -> pd.DataFrame:
        table = JudgmentColumns(self.plan)
        report = await run_calls(self.config, self.plan, progress, table.add)
        judgments = table.frame()
        if self.plan.n == 2:
            judgments = validate_judgments(judgments, self.pairs)
        judgments.attrs["judgekit_run"] = report
        return judgments


@stamped
def run_judges(
    pairs: pd.DataFrame,
    judges: Judge | str | Sequence[Judge | str],
    orders: Sequence[str] = ("ab", "ba"),
    repeats: int = 1,
    id_swap: bool | Sequence[bool] = False,
    client: Any = RunConfig.client,
    concurrency: int = RunConfig.concurrency,
    budget_usd: float | None = RunConfig.budget_usd,
    progress: bool = RunConfig.progress,
    *,
    cache: bool | str | os.PathLike | Cache | None = RunConfig.cache,
    api_key: str | None = RunConfig.api_key,
    timeout: float = RunConfig.timeout,
    max_retries: int = RunConfig.max_retries,
    backoff_base: float = RunConfig.backoff_base,
    backoff_max: float = RunConfig.backoff_max,
    prices: Mapping[str, tuple[float, float]] | None = RunConfig.prices,
    retry_errors: bool = RunConfig.retry_errors,
    rpm: int | Mapping[str, int] | None = RunConfig.rpm,
    tpm: int | Mapping[str, int] | None = RunConfig.tpm,
    rate_window: float = RunConfig.rate_window,
    pending_batches: str = RunConfig.pending_batches,
    transport: str = RunConfig.transport,
    max_answer_bytes: int = RunConfig.max_answer_bytes,
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
        The client (its base URL and key; with ``transport="auto"`` it also sends the requests);
        default: each judge's ``base_url`` and ``OPENAI_API_KEY``. Its own retries are turned
        off: the engine retries.
    concurrency : int
        Requests in flight at once (at most: the engine lowers it after 429 answers and raises
        it again as calls succeed).
    budget_usd : float, optional
        Never let the spend exceed this (at the price table's rates). Each call reserves an
        upper bound of its cost (UTF-8 bytes of the messages as prompt tokens, plus
        ``max_tokens``) while in flight, and is charged its real cost from the returned usage.
        It is charged its upper bound when it may have been billed without a usable usage: an
        answer without believable usage, a client timeout, a connection dropped after the
        request was sent; a retry then needs a fresh reservation. A call waits while the budget
        is held by calls in flight; sending stops for good once the remaining budget cannot
        cover the next call. Calls already made are kept and a warning says how many were not
        sent.
    progress : bool
        Show a progress bar (``tqdm.auto``).
    cache : bool, str, path or Cache
        Where answers are stored: True, the default file under ``JUDGEKIT_CACHE_DIR``; a path;
        a :class:`~judgekit.judging.cache.Cache` (``Cache(path, read_only=True)`` reads without
        storing); False, none. A cache that cannot be written raises
        :class:`~judgekit.exceptions.CacheError` before any call.
    api_key : str, optional
        The key (else the client's, else ``OPENAI_API_KEY``).
    timeout : float
        Seconds one attempt of a call may take in all, before it is abandoned: connecting
        (at most 10 s of it), sending, the headers and the whole body, however slowly it
        arrives. An abandoned attempt may have been billed (``abandoned_timeouts``).
    max_retries : int
        Retries per call after failures that were not paid.
    backoff_base, backoff_max : float
        Exponential backoff with full jitter: the n-th retry waits up to
        ``min(backoff_max, backoff_base * 2**(n-1))`` seconds. A ``Retry-After`` is waited
        instead, when it is at most ``backoff_max``; a server asking for longer ends the call
        as an error (logged at WARNING).
    prices : mapping, optional
        ``{model: (input, output)}`` USD per 1M tokens, added to :data:`DEFAULT_PRICES`.
    retry_errors : bool
        Request again the calls that were paid but unusable (e.g. malformed JSON).
    rpm, tpm : int or mapping, optional
        Requests and tokens per ``rate_window`` the endpoint admits (a mapping gives them per
        endpoint URL). Calls are paced to stay within them; tokens are estimated before a call
        and corrected from its usage. Without them the engine learns the limits from the
        ``x-ratelimit-limit-*`` headers or from 429 answers (see
        :mod:`judgekit.judging.limits`).
    rate_window : float
        Seconds the limits count over (60: per minute).
    pending_batches : {"skip", "send"}
        Requests recorded in a batch that was not collected yet are not sent (``"skip"``, with
        a warning naming the batches) or sent again (``"send"``: paid twice).
    transport : {"auto", "aiohttp", "openai"}
        How requests travel. ``"aiohttp"``: judgekit's lean HTTP client (plain JSON over a
        connection pool sized to ``concurrency``; several times less CPU per call than the SDK,
        which shows with fast endpoints). ``"openai"``: the ``openai`` SDK. ``"auto"``: the lean
        client, unless ``client`` is given: then that client sends, with its own
        authentication (Azure), headers, proxies and HTTP settings. Retries, budget, cache,
        rate limits and errors are the same either way, and so is the table.
    max_answer_bytes : int
        The largest answer read, in bytes (16 MiB), counted on the wire and again once
        decompressed (a few MB of gzip can inflate to gigabytes). A paid answer that is longer
        is refused as it arrives and stored cut to this size, as an error row saying so (not
        retried, not paid again by a re-run).

    Returns
    -------
    DataFrame
        The judgments table: ``pair_id, judge, order, id_swap, repeat, verdict, p_a`` plus
        ``model, template, temperature, raw, error, p_note, finish_reason, prompt_tokens,
        completion_tokens, cost_usd, latency_s, cached, request_key``. ``error`` starts with
        ``api:`` (the call failed) or ``parse:`` (no verdict in the answer); ``p_note`` says why
        ``p_a`` is missing or floored. ``judgments.attrs["judgekit_run"]`` holds the run's
        counts: ``requests, cached, cached_elsewhere`` (answered by another run sharing the
        cache), ``called, paid, errors, retries, rate_limited, retry_after_too_long, gave_up,
        abandoned_timeouts, dropped_connections, usage_missing, not_run_budget,
        not_run_pending_batch, not_run_stopped, not_stored, cost_usd`` (from the usage),
        ``unconfirmed_usd`` (upper bound of what may have been billed beyond it),
        ``pending_batches, cache_error, elapsed_s``.

    Raises
    ------
    ValueError
        A bad argument, before anything is sent.
    judgekit.exceptions.CacheError
        The cache cannot be opened or written, before anything is sent.
    judgekit.exceptions.JudgeConnectionError
        An endpoint cannot be reached: its first calls each failed to connect twice (or, after
        it answered, twice ``concurrency`` attempts in a row failed). Answers received before
        are stored.

    Notes
    -----
    Each request is keyed by sha256(endpoint without credentials, body, repeat); paid responses
    are committed to the SQLite cache before they count, so a re-run (also after a crash) sends
    only what is missing. Runs in several processes sharing a cache claim each request before
    sending it, so each distinct request is paid once. Failures that were not paid (429, 5xx,
    connection failures) are retried; paid but unusable answers (malformed JSON, no choices) are
    recorded, not retried. docs/engine.md states the guarantees.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(20, seed=1)
    >>> with jk.sim.SimServer(jk.sim.SimJudge(position_bias=1.0), pairs=pairs) as url:
    ...     judge = jk.Judge("sim", "rafailov_tldr", base_url=url, seed=0)
    ...     j = jk.run_judges(pairs, judge, repeats=2, cache=False, progress=False)
    >>> j.groupby("order").size().to_dict()
    {'ab': 40, 'ba': 40}
    >>> bool(j["p_a"].between(0, 1).all()), j.attrs["judgekit_run"]["called"]
    (True, 80)
    """
    return drive(JudgingJob.prepare(locals()), "judging")


_SIGNATURE = inspect.signature(run_judges)


@stamped
async def arun_judges(*args: Any, **kwargs: Any) -> pd.DataFrame:
    """Async form of :func:`run_judges` (same parameters), for use inside a running event loop.

    Examples
    --------
    >>> import asyncio, judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(3, seed=1)
    >>> with jk.sim.SimServer(pairs=pairs) as url:
    ...     judge = jk.Judge("sim", "shen_hh", base_url=url, seed=0)
    ...     j = asyncio.run(jk.arun_judges(pairs, judge, cache=False, progress=False))
    >>> len(j)
    6
    """
    return await adrive(JudgingJob.prepare(bind(_SIGNATURE, args, kwargs)), "judging")


arun_judges.__signature__ = _SIGNATURE  # type: ignore[attr-defined]
arun_judges.__doc__ = twin_docstring(run_judges, arun_judges.__doc__)


# The first reliability series' scripts price what a server billed with these two private names of
# the engine before its split (cost per call, and the price table with judgekit's defaults).
def _prices(prices: Mapping[str, Any] | None = None) -> dict[str, tuple[float, float]]:
    from judgekit.judging.pricing import resolve_prices
    return resolve_prices(prices)


def _cost(model: str, prompt_tokens: int, completion_tokens: int,
          table: Mapping[str, tuple[float, float]]) -> float:
    from judgekit.judging.pricing import cost
    return cost(model, prompt_tokens, completion_tokens, table)
