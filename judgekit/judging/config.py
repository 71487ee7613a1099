"""The settings of a run, declared once and checked once, before anything is sent.

:func:`~judgekit.run_judges`, :func:`~judgekit.arun_judges`, :func:`~judgekit.complete`,
:func:`~judgekit.acomplete` and :func:`~judgekit.run_judges_batch` all take the same run
settings (client, cache, concurrency, budget, retries, prices, ...) as keywords. They are declared
in one place, the fields of :class:`RunConfig` (name, type, default, description and check);
each entry point takes them as ``**settings`` and builds one :class:`RunConfig`, which refuses a
bad value with a message naming the keyword, so a mistake never surfaces after money was spent.

How each tool sees them:

- ``help()`` and the API reference: the entry point's ``**settings`` lists every setting with
  its default (:func:`document_settings` writes that line from the fields), and
  ``help(jk.RunConfig)`` describes each;
- editors and type checkers: ``**settings: Unpack[RunSettings]`` (PEP 692), where
  :class:`RunSettings` is a ``TypedDict`` of the same names and types (a test holds the two
  equal, so a setting added to one and not the other fails);
- an unknown keyword raises TypeError naming it, the nearest valid name and the valid ones
  (:func:`check_settings`).

A new setting: add the field to :class:`RunConfig` (with its check in ``__post_init__`` and its
entry in the docstring), and the same name and type to :class:`RunSettings`.
"""

from __future__ import annotations

import difflib
import math
import numbers
import os
import textwrap
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, TypedDict, TypeVar

from judgekit.judging.cache import Cache
from judgekit.judging.pricing import resolve_prices
from judgekit.judging.secrets import public_endpoint
from judgekit.judging.transport import check_client

__all__ = ["SETTINGS", "RunConfig", "RunSettings", "check_settings", "document_settings"]

F = TypeVar("F", bound=Callable[..., Any])


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


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """How a run sends, retries, pays for and stores its calls: the run settings of
    :func:`~judgekit.run_judges`, :func:`~judgekit.arun_judges`, :func:`~judgekit.complete`,
    :func:`~judgekit.acomplete` and :func:`~judgekit.run_judges_batch`, which take them as
    keywords and build this object (it checks every value before anything is sent).

    Parameters
    ----------
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

    Raises
    ------
    ValueError
        A setting out of range or of the wrong type, naming the keyword.

    Examples
    --------
    >>> import judgekit as jk
    >>> config = jk.RunConfig(concurrency=4, budget_usd=2.5)
    >>> config.concurrency, config.timeout
    (4, 120.0)
    >>> jk.RunConfig(concurrency=0)
    Traceback (most recent call last):
    ...
    ValueError: concurrency must be an integer >= 1, got 0
    """

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



class RunSettings(TypedDict, total=False):
    """The run settings as keywords, for editors and type checkers: ``**settings:
    Unpack[RunSettings]`` (PEP 692). The same names and types as the fields of
    :class:`RunConfig`, which gives their defaults and checks (a test holds the two equal)."""

    client: Any
    concurrency: int
    budget_usd: float | None
    progress: bool
    cache: bool | str | os.PathLike | Cache | None
    api_key: str | None
    timeout: float
    max_retries: int
    backoff_base: float
    backoff_max: float
    prices: Mapping[str, Any] | None
    retry_errors: bool
    rpm: int | Mapping[str, int] | None
    tpm: int | Mapping[str, int] | None
    rate_window: float
    pending_batches: str
    transport: str
    max_answer_bytes: int


#: the names of the run settings, in the order of :class:`RunConfig`'s fields
SETTINGS: tuple[str, ...] = tuple(f.name for f in fields(RunConfig) if f.init)


def check_settings(caller: str, settings: Iterable[str], own: Iterable[str] = ()) -> None:
    """Refuse keywords that are neither a run setting nor one of ``own`` (the caller's own
    parameters), with a TypeError naming them, the nearest valid name and the valid ones.

    Examples
    --------
    >>> check_settings("run_judges", ["cache", "concurrency"])
    >>> check_settings("run_judges", ["cahce"], ["pairs", "judges"])
    Traceback (most recent call last):
    ...
    TypeError: run_judges() got unexpected keyword arguments: unknown keywords ['cahce'] (did you mean 'cache'?); it takes pairs, judges and the run settings (jk.RunConfig): client, concurrency, budget_usd, progress, cache, api_key, timeout, max_retries, backoff_base, backoff_max, prices, retry_errors, rpm, tpm, rate_window, pending_batches, transport, max_answer_bytes
    """
    own = list(own)
    unknown = sorted(set(settings) - set(SETTINGS) - set(own))
    if not unknown:
        return
    valid = [*own, *SETTINGS]
    near = [m for u in unknown for m in difflib.get_close_matches(u, valid, n=1)]
    hint = f" (did you mean {', '.join(map(repr, near))}?)" if near else ""
    takes = f"{', '.join(own)} and the run settings" if own else "the run settings"
    raise TypeError(f"{caller}() got unexpected keyword arguments: unknown keywords {unknown}"
                    f"{hint}; it takes {takes} (jk.RunConfig): {', '.join(SETTINGS)}")


def _default(name: str) -> str:
    f = next(f for f in fields(RunConfig) if f.name == name)
    return "" if f.default is MISSING else f"={f.default!r}"


def document_settings(func: F) -> F:
    """Write the run settings with their defaults (from :class:`RunConfig`) on the line of
    ``func``'s docstring that says ``{run_settings}``, so help() lists them without a copy."""
    if func.__doc__ is None:   # python -OO strips docstrings
        return func
    listing = ", ".join(f"``{name}{_default(name)}``" for name in SETTINGS)
    lines = func.__doc__.split("\n")
    for i, line in enumerate(lines):
        if "{run_settings}" in line:
            indent = line[: len(line) - len(line.lstrip())]
            text = line.strip().replace("{run_settings}", listing)
            lines[i] = textwrap.fill(text, width=96, initial_indent=indent,
                                     subsequent_indent=indent, break_on_hyphens=False)
    func.__doc__ = "\n".join(lines)
    return func
