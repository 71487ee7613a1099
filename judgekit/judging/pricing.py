"""Prices: the table of USD per million tokens, the cost of a call, its upper bound, and
:func:`estimate_cost` (what a run would send and cost, before sending anything)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from judgekit._stamp import stamped
from judgekit.judging.cache import Cache, open_cache
from judgekit.judging.judge import Judge, as_judges
from judgekit.judging.requests import build_tasks, check_swaps
from judgekit.schema import validate_pairs

__all__ = [
    "BATCH_DISCOUNT",
    "DEFAULT_PRICES",
    "cost",
    "estimate_cost",
    "price_of",
    "price_table",
    "resolve_prices",
    "upper_bound_tokens",
    "upper_cost",
]

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


def resolve_prices(prices: Mapping[str, Any] | None) -> dict[str, tuple[float, float]]:
    """The default table updated with ``prices`` ({model: (input, output) USD per 1M tokens}),
    each value checked."""
    if prices is not None and not isinstance(prices, Mapping):
        raise ValueError("prices must be a mapping {model: (input, output)} in USD per 1M tokens, "
                         f"got {type(prices).__name__}")
    table = dict(DEFAULT_PRICES)
    for model, value in (prices or {}).items():
        try:
            inp, out = (float(v) for v in value)
        except (TypeError, ValueError):
            raise ValueError(f"price of {model!r} must be (input, output) USD per 1M tokens") from None
        if not (inp >= 0 and out >= 0 and math.isfinite(inp) and math.isfinite(out)):
            raise ValueError(f"price of {model!r} must be finite and >= 0, got {value!r}")
        table[str(model)] = (inp, out)
    return table


def price_of(model: str, table: Mapping[str, tuple[float, float]]) -> tuple[float, float] | None:
    """The (input, output) price of ``model``; a dated snapshot (``gpt-4o-2024-08-06``) takes the
    longest listed prefix. None when the model has no price."""
    if model in table:
        return table[model]
    hits = [m for m in table if model.startswith(m + "-")]
    return table[max(hits, key=len)] if hits else None


@stamped
def price_table(prices: Mapping[str, tuple[float, float]] | None = None) -> pd.DataFrame:
    """The price table in use: model, input and output USD per million tokens.

    Parameters
    ----------
    prices : mapping, optional
        ``{model: (input, output)}`` in USD per million tokens, added to or overriding
        :data:`DEFAULT_PRICES`.

    Returns
    -------
    DataFrame
        ``model, input_usd_per_1m, output_usd_per_1m``, sorted by model.

    Examples
    --------
    >>> import judgekit as jk
    >>> t = jk.price_table({"my-model": (1.0, 2.0)})
    >>> float(t.set_index("model").loc["my-model", "output_usd_per_1m"])
    2.0
    """
    table = resolve_prices(prices)
    return pd.DataFrame(
        [(m, p[0], p[1]) for m, p in sorted(table.items())],
        columns=["model", "input_usd_per_1m", "output_usd_per_1m"],
    )


def cost(model: str, prompt_tokens: int, completion_tokens: int,
         table: Mapping[str, tuple[float, float]], factor: float = 1.0) -> float:
    """USD for these token counts (NaN when the model has no price)."""
    price = price_of(model, table)
    if price is None:
        return float("nan")
    return factor * (prompt_tokens * price[0] + completion_tokens * price[1]) / 1e6


def upper_bound_tokens(body: Mapping[str, Any]) -> tuple[int, int]:
    """(prompt, completion) tokens a request can be billed at most.

    Byte-level BPE tokenizers (OpenAI's, Llama's with byte fallback) never make more tokens than
    UTF-8 bytes; chat formatting adds a few tokens per message. The completion is bounded by
    ``max_tokens`` (512 when the request sets none).
    """
    messages = body.get("messages", [])
    prompt = sum(len(str(m.get("content", "")).encode("utf-8")) + 8 for m in messages) + 16
    return prompt, int(body.get("max_tokens") or 512)


def upper_cost(body: Mapping[str, Any], table: Mapping[str, tuple[float, float]]) -> float:
    """The most a request can cost (0 for a model without a price)."""
    value = cost(body["model"], *upper_bound_tokens(body), table)
    return 0.0 if math.isnan(value) else value


@stamped
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

    Parameters
    ----------
    pairs, judges, orders, repeats, id_swap, client
        As in :func:`judgekit.run_judges`.
    prices : mapping, optional
        ``{model: (input, output)}`` USD per 1M tokens, added to the default table.
    cache : bool, str, path or Cache, optional
        Requests already stored there are not counted as sent.
    chars_per_token : float
        Characters per prompt token.
    batch : bool
        Price at the Batch API's discount.

    Returns
    -------
    DataFrame
        Per judge: ``requests``, ``cached``, ``to_send``, ``prompt_tokens``, ``cost_usd_typical``,
        ``cost_usd_max`` (NaN for models without a price, with a warning naming them).

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(100, seed=0)
    >>> est = jk.estimate_cost(pairs, jk.Judge("gpt-4o-mini", "rafailov_tldr"), repeats=3)
    >>> int(est["requests"].iloc[0]), bool(est["cost_usd_max"].iloc[0] > est["cost_usd_typical"].iloc[0])
    (600, True)
    """
    pairs = validate_pairs(pairs)
    judge_list = as_judges(judges)
    tasks = build_tasks(pairs, judge_list, orders, repeats, check_swaps(id_swap), client)
    table = resolve_prices(prices)
    if not (isinstance(chars_per_token, (int, float)) and chars_per_token > 0):
        raise ValueError(f"chars_per_token must be a positive number, got {chars_per_token!r}")
    with open_cache(cache) as store:
        cached = store.stored_keys(t.key for t in tasks) if store is not None else set()
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
            "cost_usd_typical": cost(judge.model, pt, typical * len(send), table, factor),
            "cost_usd_max": cost(judge.model, pt, judge.tokens * len(send), table, factor),
        })
    unpriced = sorted({j.model for j in judge_list if price_of(j.model, table) is None})
    if unpriced:
        import difflib
        import warnings

        from judgekit._stack import caller_level

        near = [m for u in unpriced for m in difflib.get_close_matches(u, list(table), n=1)]
        warnings.warn(
            f"no price for {', '.join(map(repr, unpriced))}: its cost is NaN (unknown, not "
            "free); pass prices={model: (input, output)} in USD per 1M tokens"
            + (f" (priced models near it: {', '.join(near)}; jk.price_table() lists all)" if near
               else "; jk.price_table() lists the priced models"),
            UserWarning, stacklevel=caller_level())
    return pd.DataFrame(rows)
