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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from judgekit._stamp import stamped
from judgekit.judging.clients import Progress
from judgekit.judging.config import RunConfig, RunSettings, check_settings, document_settings
from judgekit.judging.judge import Judge, as_judges
from judgekit.judging.requests import RequestPlan, check_swaps
from judgekit.judging.responses import JudgmentColumns
from judgekit.judging.runner import adrive, drive, run_calls, twin_docstring
from judgekit.schema import validate_judgments, validate_pairs

if TYPE_CHECKING:   # PEP 692: editors list the run settings of **settings
    from typing_extensions import Unpack

__all__ = ["arun_judges", "run_judges"]


@dataclass
class JudgingJob:
    """A checked run: the pairs, its requests and its settings."""

    pairs: pd.DataFrame
    plan: RequestPlan
    config: RunConfig

    @classmethod
    def prepare(cls, caller: str, pairs: pd.DataFrame, judges: Any, orders: Sequence[str],
                repeats: int, id_swap: bool | Sequence[bool],
                settings: Mapping[str, Any]) -> JudgingJob:
        """Check every argument of :func:`run_judges` and key every request."""
        check_settings(caller, settings, _OWN)
        pairs = validate_pairs(pairs)
        config = RunConfig(**settings)
        plan = RequestPlan(pairs, as_judges(judges), orders, repeats, check_swaps(id_swap),
                           config.client)
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
@document_settings
def run_judges(
    pairs: pd.DataFrame,
    judges: Judge | str | Sequence[Judge | str],
    orders: Sequence[str] = ("ab", "ba"),
    repeats: int = 1,
    id_swap: bool | Sequence[bool] = False,
    **settings: Unpack[RunSettings],
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
    **settings
        The run settings, by keyword: the client and key, the cache, concurrency, the budget,
        timeouts and retries, prices, rate limits and the transport. With their defaults:
        {run_settings}.
        They are the fields of :class:`~judgekit.RunConfig`, which describes each
        (``help(jk.RunConfig)``). Every value is checked before anything is sent; a name that
        is not a setting raises TypeError naming the valid ones.

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
    job = JudgingJob.prepare("run_judges", pairs, judges, orders, repeats, id_swap, settings)
    return drive(job, "judging")


#: run_judges' own parameters (named when a keyword is not one of them nor a run setting)
_OWN = ("pairs", "judges", "orders", "repeats", "id_swap")


@stamped
async def arun_judges(
    pairs: pd.DataFrame,
    judges: Judge | str | Sequence[Judge | str],
    orders: Sequence[str] = ("ab", "ba"),
    repeats: int = 1,
    id_swap: bool | Sequence[bool] = False,
    **settings: Unpack[RunSettings],
) -> pd.DataFrame:
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
    job = JudgingJob.prepare("arun_judges", pairs, judges, orders, repeats, id_swap, settings)
    return await adrive(job, "judging")


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
