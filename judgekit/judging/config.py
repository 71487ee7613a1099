"""The settings of a run, checked once, before anything is sent.

:func:`~judgekit.run_judges`, :func:`~judgekit.arun_judges`, :func:`~judgekit.complete` and
:func:`~judgekit.run_judges_batch` all take the same run settings (client, cache, concurrency,
budget, retries, prices, ...). Each builds one :class:`RunConfig` from its keywords, which
refuses a bad value with a message naming the keyword, so a mistake never surfaces after money
was spent.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from judgekit.judging.cache import Cache
from judgekit.judging.pricing import resolve_prices
from judgekit.judging.secrets import public_endpoint
from judgekit.judging.transport import check_client

__all__ = ["RunConfig"]


def _number(name: str, value: Any, *, minimum: float = 0.0, strict: bool = False,
            allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < minimum or (strict and value == minimum):
        bound = f"> {minimum:g}" if strict else f">= {minimum:g}"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")


def _integer(name: str, value: Any, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


def _flag(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")


@dataclass(frozen=True)
class RunConfig:
    """How a run sends, retries, pays for and stores its calls (see :func:`judgekit.run_judges`
    for each setting)."""

    client: Any = None
    concurrency: int = 16
    budget_usd: float | None = None
    progress: bool = True
    cache: bool | str | os.PathLike | Cache | None = True
    api_key: str | None = None
    timeout: float = 120.0
    max_retries: int = 8
    backoff_base: float = 0.5
    backoff_max: float = 60.0
    prices: Mapping[str, Any] | None = None
    retry_errors: bool = False
    rpm: int | Mapping[str, int] | None = None
    tpm: int | Mapping[str, int] | None = None
    rate_window: float = 60.0
    pending_batches: str = "skip"
    transport: str = "auto"
    max_answer_bytes: int = 16 * 1024 * 1024
    price_table: dict[str, tuple[float, float]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _integer("concurrency", self.concurrency, minimum=1)
        _number("budget_usd", self.budget_usd, allow_none=True)
        _flag("progress", self.progress)
        _number("timeout", self.timeout, strict=True)
        _integer("max_retries", self.max_retries, minimum=0)
        _number("backoff_base", self.backoff_base)
        _number("backoff_max", self.backoff_max)
        _flag("retry_errors", self.retry_errors)
        if self.backoff_max < self.backoff_base:
            raise ValueError(f"backoff_max ({self.backoff_max!r}) must be >= backoff_base "
                             f"({self.backoff_base!r})")
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if isinstance(value, Mapping):
                value = {public_endpoint(str(k)): v for k, v in value.items()}
                object.__setattr__(self, name, value)
            for limit in (value.values() if isinstance(value, Mapping) else [value]):
                if limit is not None:
                    _integer(name, limit, minimum=1)
        _number("rate_window", self.rate_window, strict=True)
        _integer("max_answer_bytes", self.max_answer_bytes, minimum=1)
        if self.pending_batches not in ("skip", "send"):
            raise ValueError("pending_batches must be 'skip' (leave requests held by a batch not "
                             f"collected yet) or 'send', got {self.pending_batches!r}")
        if self.api_key is not None and not isinstance(self.api_key, str):
            raise ValueError(f"api_key must be a string, got {type(self.api_key).__name__}")
        if not (self.cache is None or isinstance(self.cache, (bool, str, os.PathLike, Cache))):
            raise ValueError("cache must be True (the default file), a path, a jk.Cache or "
                             f"False, got {type(self.cache).__name__}")
        if self.client is not None:
            import openai

            if not isinstance(self.client, (openai.AsyncOpenAI, openai.OpenAI)):
                raise ValueError("client must be an openai.AsyncOpenAI or openai.OpenAI, got "
                                 f"{type(self.client).__name__}")
        check_client(self.transport, self.client)
        object.__setattr__(self, "price_table", resolve_prices(self.prices))

    def limits_for(self, endpoint: str) -> tuple[int | None, int | None]:
        """(rpm, tpm) given for ``endpoint``."""
        return tuple(  # type: ignore[return-value]
            value.get(endpoint) if isinstance(value, Mapping) else value
            for value in (self.rpm, self.tpm)
        )

    def check_endpoints(self, endpoints: set[str]) -> None:
        """Refuse per-endpoint limits for endpoints the run does not call."""
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if isinstance(value, Mapping):
                unknown = sorted(set(value) - endpoints)
                if unknown:
                    raise ValueError(f"{name} names endpoints the run does not call: {unknown}; "
                                     f"it calls {sorted(endpoints)}")

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> RunConfig:
        """The config from a function's keywords (other names are ignored)."""
        names = {f.name for f in fields(cls) if f.init}
        return cls(**{k: v for k, v in values.items() if k in names})
