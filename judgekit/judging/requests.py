"""Requests: every (pair, judge, order, ID arrangement, repeat) of a run as a request body with its
cache key, built and checked before anything is sent."""

from __future__ import annotations

import array
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgekit.judging.cache import request_key
from judgekit.judging.judge import Judge, check_base_url
from judgekit.judging.secrets import public_endpoint
from judgekit.judging.templates import _check_order

__all__ = ["CHUNK", "Call", "RequestPlan", "Task", "build_tasks", "check_orders", "check_swaps",
           "endpoint_of", "expand"]

DEFAULT_ENDPOINT = "https://api.openai.com/v1"


@dataclass
class Call:
    """One request to send: its cache key, endpoint, body and repeat index.

    ``endpoint`` is the URL without credentials (it keys and labels the cache); ``url`` is the one
    the client uses (with credentials, when the base URL carries them).
    """

    key: str
    endpoint: str
    body: dict[str, Any]
    repeat: int
    url: str = ""

    def __post_init__(self) -> None:
        self.url = self.url or self.endpoint

    @classmethod
    def make(cls, url: str, body: dict[str, Any], repeat: int) -> Call:
        """The call of ``body`` (repeat ``repeat``) to ``url``."""
        endpoint = public_endpoint(url)
        return cls(request_key(endpoint, body, repeat), endpoint, body, repeat, url)


@dataclass
class Task:
    """One judgment of a run: the call and what it judges."""

    pair_id: str
    judge: Judge
    order: str
    id_swap: bool
    call: Call

    @property
    def key(self) -> str:
        return self.call.key

    @property
    def repeat(self) -> int:
        return self.call.repeat

    @property
    def body(self) -> dict[str, Any]:
        return self.call.body

    @property
    def endpoint(self) -> str:
        return self.call.endpoint


def endpoint_of(base_url: str | None, client: Any) -> str:
    """The URL a request goes to: the judge's ``base_url``, else the client's, else
    ``OPENAI_BASE_URL``, else OpenAI's."""
    if base_url:
        check_base_url(base_url, "base_url")
        return base_url.rstrip("/")
    if client is not None and getattr(client, "base_url", None):
        check_base_url(str(client.base_url), "client.base_url", path_only=True)
        return str(client.base_url).rstrip("/")
    if os.environ.get("OPENAI_BASE_URL"):
        check_base_url(os.environ["OPENAI_BASE_URL"], "OPENAI_BASE_URL")
        return os.environ["OPENAI_BASE_URL"].rstrip("/")
    return DEFAULT_ENDPOINT


def check_swaps(id_swap: bool | Sequence[bool]) -> tuple[bool, ...]:
    """``id_swap`` as a tuple of distinct bools."""
    if isinstance(id_swap, (bool, np.bool_)):
        return (bool(id_swap),)
    if isinstance(id_swap, (str, bytes)) or not isinstance(id_swap, (Sequence, np.ndarray)):
        raise ValueError(f"id_swap must be a bool or a sequence of bools, got {id_swap!r}")
    if not all(isinstance(s, (bool, np.bool_)) for s in id_swap):
        raise ValueError(f"id_swap must hold True/False only, got {list(id_swap)!r}")
    out = tuple(bool(s) for s in id_swap)
    if not out:
        raise ValueError("id_swap must be a bool or a non-empty sequence of bools")
    if len(set(out)) != len(out):
        raise ValueError(f"id_swap repeats an arrangement: {out}; each is judged once per "
                         "order (use repeats= for identical requests)")
    return out


def check_orders(orders: Sequence[str]) -> tuple[str, ...]:
    """``orders`` as a tuple of permutations of the same length."""
    if isinstance(orders, str):
        raise ValueError(f"orders must be a sequence of orders such as ('ab', 'ba'), got the "
                         f"string {orders!r}")
    orders = tuple(orders)
    if not orders:
        raise ValueError("orders must not be empty")
    for o in orders:
        _check_order(o)
    sizes = {len(o) for o in orders}
    if len(sizes) != 1:
        raise ValueError(f"all orders must show the same number of responses, got {orders}")
    repeated = sorted({o for o in orders if orders.count(o) > 1})
    if repeated:
        raise ValueError(f"orders repeat {repeated}: each order is judged once (use repeats= "
                         "for identical requests)")
    return orders


def _check(pairs: pd.DataFrame, judges: list[Judge], orders: Sequence[str], repeats: int,
           swaps: tuple[bool, ...]) -> tuple[tuple[str, ...], int]:
    """Check a run's orders, columns, repeats and templates; (orders, responses shown)."""
    orders = check_orders(orders)
    n = len(orders[0])
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
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ValueError(f"repeats must be an integer >= 1, got {repeats}")
    for j in judges:
        if j.template.max_responses < n:
            raise ValueError(f"template {j.template.name!r} of judge {j.id!r} takes at most "
                             f"{j.template.max_responses} responses; orders show {n}")
    return orders, n


def _render(judge: Judge, row: Mapping[str, Any], order: str, swap: bool) -> list[dict[str, str]]:
    try:
        return judge.template.render_pair(row, order=order, id_swap=swap)
    except ValueError as exc:
        raise ValueError(f"pair {row['pair_id']!r}, judge {judge.id!r}: {exc}") from exc


#: pair rows rendered at a time while expanding a run
CHUNK = 2000


def expand(pairs: pd.DataFrame, judges: list[Judge], orders: tuple[str, ...], repeats: int,
           swaps: tuple[bool, ...], urls: Sequence[str]
           ) -> Iterator[tuple[int, int, int, int, Mapping[str, Any], Call]]:
    """Every request of a run, rendered, in the order judge, pair, order, ID arrangement,
    repeat: ``(pair position, judge index, order index, arrangement index, pair row, call)``.

    The one expansion of a run: :class:`RequestPlan` (live runs and batches) and
    :func:`build_tasks` (cost estimates) both read it, so a request has the same body and
    cache key however it is sent. ``urls`` are the judges' URLs (:func:`endpoint_of`); pairs are
    read :data:`CHUNK` rows at a time. Raises before anything is sent when a request cannot be
    made.
    """
    for ji, judge in enumerate(judges):
        url = urls[ji]
        endpoint = public_endpoint(url)
        for start in range(0, len(pairs), CHUNK):
            records = pairs.iloc[start : start + CHUNK].to_dict("records")
            for offset, row in enumerate(records):
                for oi, order in enumerate(orders):
                    for si, swap in enumerate(swaps):
                        messages = _render(judge, row, order, swap)
                        for k in range(int(repeats)):
                            body = judge.body(messages, k)
                            call = Call(request_key(endpoint, body, k), endpoint, body, k, url)
                            yield start + offset, ji, oi, si, row, call


def build_tasks(
    pairs: pd.DataFrame, judges: list[Judge], orders: Sequence[str], repeats: int,
    swaps: tuple[bool, ...], client: Any,
) -> list[Task]:
    """Every request of a run with its body, as :func:`expand` makes it (raises before anything
    is sent when one cannot be made)."""
    orders, _ = _check(pairs, judges, orders, repeats, swaps)
    urls = [endpoint_of(j.base_url, client) for j in judges]
    return [Task(row["pair_id"], judges[ji], orders[oi], swaps[si], call)
            for _, ji, oi, si, row, call in expand(pairs, judges, orders, repeats, swaps, urls)]


class RequestPlan:
    """Every request of a judging run by key, its bodies rendered again only when sent.

    Building the plan renders every request once (so one that cannot be made raises before
    anything is sent) and keeps its key and what it judges, not its body: a run answered from
    the cache never holds the request bodies. :meth:`prepare` and :meth:`call` render the bodies
    of the requests to send. Tasks are in the order of :func:`expand`: judge, pair, order,
    ID arrangement, repeat. Live runs and batches (:mod:`~judgekit.judging.batch`) both send
    the requests of a plan, so they share keys and answers.

    It is a :class:`~judgekit.judging.runner.CallPlan`: ``keys`` (distinct, in task order) and
    ``urls`` (URL to public endpoint).
    """

    def __init__(self, pairs: pd.DataFrame, judges: list[Judge], orders: Sequence[str],
                 repeats: int, swaps: tuple[bool, ...], client: Any) -> None:
        self.orders, self.n = _check(pairs, judges, orders, repeats, swaps)
        self.pairs, self.judges, self.swaps = pairs, judges, swaps
        self.judge_urls = [endpoint_of(j.base_url, client) for j in judges]
        self.urls = {u: public_endpoint(u) for u in self.judge_urls}
        task_keys: list[str] = []
        cols = {name: array.array("q") for name in ("pos", "judge", "order", "swap", "repeat")}
        first: dict[str, int] = {}
        self._dups: dict[str, list[int]] = {}
        for pos, ji, oi, si, _, call in expand(pairs, judges, self.orders, repeats, swaps,
                                                self.judge_urls):
            key, i = call.key, len(task_keys)
            if first.setdefault(key, i) != i:
                self._dups.setdefault(key, []).append(i)
            task_keys.append(key)
            for name, value in zip(cols, (pos, ji, oi, si, call.repeat)):
                cols[name].append(value)
        self.task_keys = task_keys
        self.columns = {name: np.frombuffer(v, dtype=np.int64).copy() if len(v) else
                        np.zeros(0, dtype=np.int64) for name, v in cols.items()}
        self._first = first
        self.keys = list(first)
        self._records: dict[int, dict[str, Any]] = {}

    def __len__(self) -> int:
        return len(self.task_keys)

    def tasks_of(self, key: str) -> list[int]:
        """The tasks (indices) that this request answers (more than one when two judges send
        the same body)."""
        first = self._first[key]
        return [first, *self._dups[key]] if key in self._dups else [first]

    def judge_of(self, i: int) -> Judge:
        return self.judges[self.columns["judge"][i]]

    def model(self, key: str) -> str:
        return self.judge_of(self._first[key]).model

    def url(self, key: str) -> str:
        return self.judge_urls[self.columns["judge"][self._first[key]]]

    def prepare(self, keys: list[str]) -> None:
        """Read the pair rows of the requests to be sent (their bodies are rendered by
        :meth:`call`)."""
        positions = sorted({int(self.columns["pos"][self._first[k]]) for k in keys}
                           - set(self._records))
        if positions:
            records = self.pairs.iloc[positions].to_dict("records")
            self._records.update(zip(positions, records))

    def call(self, key: str) -> Call:
        """The call of ``key``, its body rendered now."""
        i = self._first[key]
        c = {name: int(v[i]) for name, v in self.columns.items()}
        pos = c["pos"]
        if pos not in self._records:
            self.prepare([key])
        judge = self.judges[c["judge"]]
        messages = _render(judge, self._records[pos], self.orders[c["order"]],
                           self.swaps[c["swap"]])
        url = self.judge_urls[c["judge"]]
        return Call(key, self.urls[url], judge.body(messages, c["repeat"]), c["repeat"], url)
