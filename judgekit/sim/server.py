"""The simulated OpenAI-compatible judge server: configuration, lifecycle and the chat route.

:class:`SimServer` speaks the parts of the OpenAI HTTP API that judgekit uses (chat completions
with ``logprobs`` / ``top_logprobs``, files and batches), so the real ``openai`` SDK, vLLM-style
clients and curl can talk to it. The chat route applies, in order: the sliding-window rate limit
(:mod:`judgekit.sim.ratelimit`), the injected faults (:mod:`judgekit.sim.faults`), then the
simulated judge (:mod:`judgekit.sim.chat`). Every call is counted, so tests can check that no
request is lost and none is paid twice.

The aiohttp server runs on a :class:`~judgekit._aioloop.BackgroundLoop` (an event loop in a daemon
thread), so it works the same from scripts, tests and Jupyter notebooks.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgekit._aioloop import BackgroundLoop
from judgekit.judging.templates import bundled_template_names, get_template
from judgekit.sim.batches import BatchStore
from judgekit.sim.chat import Completer, Handler, RequestError, SignalDetector, completion_budget
from judgekit.sim.chat import prompt_tokens as count_prompt_tokens
from judgekit.sim.errors import error_response
from judgekit.sim.faults import Faults, body_digest
from judgekit.sim.judge import SimJudge
from judgekit.sim.ratelimit import RateLimiter
from judgekit.sim.replay import Replay
from judgekit.sim.stats import Counters

__all__ = ["SimServer"]


class SimServer:
    """A simulated OpenAI-compatible judge on ``http://127.0.0.1:<free port>/v1``.

    Parameters
    ----------
    judge : SimJudge or mapping of str to SimJudge, optional
        The simulated judge; a mapping gives each model name its own judge (a ``"*"`` key is the
        default). Default: ``SimJudge()``.
    pairs : DataFrame, optional
        Pairs whose human labels the judge knows (the latent quality gap follows the label, as in
        :func:`judgekit.sim.simulate_judgments`); unknown pairs are judged as unlabelled.
    latency : float
        Seconds every completion takes; ``latency_jitter`` adds a uniform extra in [0, jitter].
    faults : Faults or mapping, optional
        Fault injection (see :class:`Faults`).
    templates : iterable of Template, name, dict or path
        Extra templates to recognise besides the bundled ones.
    signal_detector : callable, optional
        ``(system_text, user_text, first, second) -> {bias: +1 | -1}``: perturbation signals
        (+1 favours the first position), passed to ``SimJudge.decide``.
    handlers : sequence of callables
        ``handler(body) -> str | None`` for requests that no template recognises (the request
        body as a dict); the first non-None text is the answer.
    replay : DataFrame, optional
        Answer from stored judgments instead of simulating: the row with the request's pair,
        order, ID swap and repeat (and judge/model when several) gives the text (``raw``, or one
        written in the template's format from ``verdict``) and the logprobs (from ``p_a``).
    batch_delay : float
        Seconds a batch stays "in_progress" before it completes.
    rpm, tpm : int, optional
        Sliding-window rate limits: requests, and tokens, admitted per ``rate_window`` seconds
        (None: unlimited). A request costs its prompt tokens (the count its ``usage`` reports)
        plus its ``max_tokens``. One over either limit gets 429 with ``Retry-After`` (and
        ``retry-after-ms``): the seconds until enough of the window frees for it to fit.
    rate_window : float
        Length of the rate-limit window in seconds (60: per minute; shorter in tests).
    rate_headers : bool
        Send the ``x-ratelimit-*`` headers (False: a server that only answers 429, to test
        clients that must learn the limits from the refusals).
    host, port : str, int
        Where to listen; port 0 picks a free port.

    Notes
    -----
    The repeat index of a request is its ``seed`` parameter when given (judgekit sends
    ``seed = judge.seed + repeat`` when a judge has a seed), else the number of answers already
    given to the identical request. Flip noise grows with the request's temperature by
    ``SimJudge.flip_q_per_temperature``. Requests with three or four responses are decided by a
    multinomial-logit extension of the judge (per-response latent quality, primacy bias
    ``position_bias`` on the first position, ``token_bias`` on option t1, ``length_bias`` on
    relative length) with flips to a uniformly chosen other option.

    With ``rpm`` or ``tpm`` set, every chat answer carries OpenAI's headers
    ``x-ratelimit-limit-requests``, ``x-ratelimit-remaining-requests``,
    ``x-ratelimit-reset-requests`` and their ``-tokens`` counterparts (for the limits set): the
    limit, what is left of it in the current window after this request, and the time until the
    window is empty again (e.g. ``"1.25s"``, ``"6m0s"``). A request larger than ``tpm`` on its own
    can never run: it gets 429 with ``code="request_too_large"`` and no ``Retry-After``. Requests
    refused by the limiter are not counted as attempts, so they do not shift the injected faults.
    Batch requests are not rate limited.

    Examples
    --------
    >>> import judgekit as jk, openai
    >>> pairs = jk.sim.simulate_pairs(2, seed=0)
    >>> with jk.sim.SimServer(jk.sim.SimJudge(position_bias=1.0), pairs=pairs) as url:
    ...     client = openai.OpenAI(base_url=url, api_key="sk-test")
    ...     t = jk.get_template("mtbench_pair")
    ...     row = pairs.iloc[0].to_dict()
    ...     reply = client.chat.completions.create(model="sim", messages=t.render_pair(row))
    >>> t.parse(reply.choices[0].message.content).option in {"A", "B", "C"}
    True

    A server limited to 2 requests per second refuses the third within the second:

    >>> server = jk.sim.SimServer(rpm=2, rate_window=1.0)
    >>> with server as url:
    ...     client = openai.OpenAI(base_url=url, api_key="sk-test", max_retries=0)
    ...     t = jk.get_template("mtbench_pair")
    ...     msgs = t.render("q", ["x", "y"])
    ...     for _ in range(3):
    ...         try:
    ...             _ = client.chat.completions.create(model="sim", messages=msgs)
    ...         except openai.RateLimitError as exc:
    ...             wait = float(exc.response.headers["retry-after"])
    >>> server.stats["rate_limited"], 0 < wait <= 1.0
    (1, True)
    """

    def __init__(
        self,
        judge: SimJudge | Mapping[str, SimJudge] | None = None,
        pairs: pd.DataFrame | None = None,
        *,
        latency: float = 0.0,
        latency_jitter: float = 0.0,
        faults: Faults | Mapping[str, float] | None = None,
        templates: Iterable[Any] = (),
        signal_detector: SignalDetector | None = None,
        handlers: Sequence[Handler] = (),
        replay: pd.DataFrame | None = None,
        batch_delay: float = 0.2,
        rpm: int | None = None,
        tpm: int | None = None,
        rate_window: float = 60.0,
        rate_headers: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        if judge is None:
            judge = SimJudge()
        self._judges = dict(judge) if isinstance(judge, Mapping) else {"*": judge}
        for name, j in self._judges.items():
            if not isinstance(j, SimJudge):
                raise TypeError(f"judge for model {name!r} must be a SimJudge, got {type(j).__name__}")
        self.latency = float(latency)
        self.latency_jitter = float(latency_jitter)
        if latency < 0 or latency_jitter < 0:
            raise ValueError("latency and latency_jitter must be >= 0")
        self.faults = faults if isinstance(faults, Faults) else Faults(**dict(faults or {}))
        self.limiter = RateLimiter(rpm, tpm, rate_window)
        self.rate_headers = bool(rate_headers)
        extra = [get_template(t) for t in templates]
        self.handlers = list(handlers)
        self.host, self._port = host, int(port)
        self._labels: dict[tuple[str, str, str], str | None] = {}
        self._pair_ids: dict[tuple[str, str, str], str] = {}
        if pairs is not None:
            self.register_pairs(pairs)
        self._counters = Counters()
        self._completer = Completer(
            self._judges, [get_template(n) for n in sorted(bundled_template_names())] + extra,
            signal_detector=signal_detector, handlers=self.handlers, labels=self._labels,
            replay=None if replay is None else Replay(replay, self._pair_ids),
            count=self._counters.count,
        )
        self._attempts: Counter[bytes] = Counter()
        self._batches = BatchStore(lambda body: self._completer.complete(body, None),
                                   self._counters.count, batch_delay)
        self._loop: BackgroundLoop | None = None
        self._runner = None

    # ------------------------------------------------------------------ configuration
    @property
    def rpm(self) -> int | None:
        return self.limiter.rpm

    @property
    def tpm(self) -> int | None:
        return self.limiter.tpm

    @property
    def rate_window(self) -> float:
        return self.limiter.window

    @property
    def batch_delay(self) -> float:
        return self._batches.delay

    @property
    def signal_detector(self) -> SignalDetector | None:
        return self._completer.signal_detector

    @signal_detector.setter
    def signal_detector(self, detector: SignalDetector | None) -> None:
        self._completer.signal_detector = detector

    def register_pairs(self, pairs: pd.DataFrame) -> None:
        """Tell the judge the human labels (and ids) of these pairs."""
        from judgekit.schema import validate_pairs

        pairs = validate_pairs(pairs)
        for row in pairs.itertuples(index=False):
            key = (row.prompt, row.response_a, row.response_b)
            self._labels[key] = row.label
            self._pair_ids[key] = row.pair_id

    def reset_stats(self) -> None:
        """Zero the counters in :attr:`stats`, :meth:`paid_counts` and :meth:`credential_digests`."""
        self._counters.reset()

    @property
    def stats(self) -> dict[str, int]:
        """Counts (keys appear once non-zero).

        ``requests``: chat completion requests received (rate-limited ones included);
        ``paid``: answers generated, whether or not the client read them; ``rate_limited``: 429s
        from the ``rpm``/``tpm`` limiter, of which ``rate_limited_requests`` and
        ``rate_limited_tokens`` exceeded each limit (a request can exceed both) and
        ``rate_limited_too_large`` can never fit; ``fault_<kind>`` per injected fault (``fault_429``
        ...); ``rejected``: requests answered 400; ``batch_requests``: batch lines answered;
        ``billed_prompt_tokens`` / ``billed_completion_tokens``: the true usage of the paid chat
        answers (whatever the answer then says or whether it arrives), to price what was billed.
        """
        return self._counters.events()

    def paid_counts(self) -> Counter[str]:
        """How many paid answers each distinct request body (its canonical sha256) received."""
        return self._counters.paid_counts()

    def credential_digests(self) -> Counter[str]:
        """How many chat requests carried each bearer token, by the token's sha256 (the server
        keeps no key, only this digest, so tests can check which key a client really sent)."""
        return self._counters.credentials()

    def rate_usage(self) -> dict[str, int]:
        """Requests and tokens admitted in the current rate-limit window."""
        if self._loop is not None and not self._loop.in_loop_thread():
            return self._loop.run(self._usage())
        requests, tokens = self.limiter.usage()
        return {"requests": requests, "tokens": tokens}

    async def _usage(self) -> dict[str, int]:
        requests, tokens = self.limiter.usage()
        return {"requests": requests, "tokens": tokens}

    def judge_for(self, model: str) -> SimJudge:
        """The SimJudge answering ``model``."""
        return self._completer.judge_for(model)

    # ------------------------------------------------------------------ lifecycle
    @property
    def base_url(self) -> str:
        """``http://host:port/v1`` (after :meth:`start`)."""
        if self._loop is None:
            raise RuntimeError("the server is not running; call start() or use it as a context manager")
        return f"http://{self.host}:{self._port}/v1"

    @property
    def port(self) -> int:
        return self._port

    def start(self) -> SimServer:
        """Start serving on a background event loop; returns self."""
        if self._loop is not None:
            return self
        loop = BackgroundLoop("judgekit-simserver")
        try:
            loop.submit(self._startup()).result(30)
        except Exception as exc:
            loop.stop()
            raise RuntimeError(f"the simulated server could not start: {exc}") from exc
        self._loop = loop
        return self

    def stop(self) -> None:
        """Stop serving: close the listener and the connections, cancel what still runs (stalled
        answers, batches) and join the loop's thread."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        if self._runner is not None:
            try:
                loop.submit(self._runner.cleanup()).result(30)
            finally:
                self._runner = None
                loop.stop()
        else:
            loop.stop()

    def __enter__(self) -> str:
        self.start()
        return self.base_url

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _startup(self) -> None:
        from aiohttp import web

        app = web.Application(client_max_size=512 * 1024**2)
        app.add_routes([
            web.post("/v1/chat/completions", self._chat),
            web.get("/v1/models", self._models),
            *self._batches.routes(),
        ])
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self._port, backlog=1024, reuse_address=True)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self._port = runner.addresses[0][1]

    # ------------------------------------------------------------------ HTTP handlers
    async def _models(self, request):
        from aiohttp import web

        names = sorted(self._judges)
        return web.json_response({"object": "list", "data": [
            {"id": n, "object": "model", "created": 0, "owned_by": "judgekit-sim"} for n in names
        ]})

    async def _chat(self, request):
        from aiohttp import web

        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            return error_response(400, "request body is not JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return error_response(400, "'messages' must be a list")
        digest = body_digest(body)
        auth = request.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else auth
        count = self._counters.count
        count("requests")
        self._counters.credential(hashlib.sha256(token.encode()).hexdigest())
        headers: dict[str, str] = {}
        if self.limiter.active:
            cost = count_prompt_tokens(body["messages"]) + completion_budget(body)
            admission = self.limiter.admit(cost)
            headers = admission.headers if self.rate_headers else {}
            if not admission.admitted:
                return self._rate_limited(admission, cost)
        attempt = self._attempts[digest]
        self._attempts[digest] += 1
        fault = self.faults.pick(digest, attempt)
        if fault == "429":
            count("fault_429")
            return error_response(429, "simulated rate limit", "rate_limit_error",
                                  headers={**headers, "Retry-After": self.faults.retry_after_header})
        if fault in ("500", "503"):
            count(f"fault_{fault}")
            return error_response(int(fault), "simulated server error", "server_error", headers)
        if fault == "drop":
            count("fault_drop")
            request.transport.close()
            return web.Response(status=204)
        delay = self.latency + (self.latency_jitter * float(np.random.default_rng().random())
                                if self.latency_jitter else 0.0)
        try:
            payload = await self._completer.complete(body, fault)
        except RequestError as exc:
            count("rejected")
            return error_response(400, str(exc), headers=headers)
        if delay:
            await asyncio.sleep(delay)
        self._counters.paid(digest.hex(), payload["usage"])
        if fault == "drop_paid":
            count("fault_drop_paid")
            request.transport.close()
            return web.Response(status=204)
        if fault is not None and fault.startswith(("usage_", "reflect_", "content_")):
            count(f"fault_{fault}")
            _distort(payload, fault, auth)
        if fault == "timeout":
            count("fault_timeout")
            await asyncio.sleep(self.faults.stall_s)
        if fault == "malformed":
            count("fault_malformed")
            text = json.dumps(payload)[:40]
            return web.Response(status=200, text=text, content_type="application/json",
                                headers=headers)
        if fault == "empty_choices":
            count("fault_empty_choices")
            payload["choices"] = []
        return web.json_response(payload, headers=headers)

    def _rate_limited(self, admission, cost: int):
        count = self._counters.count
        count("rate_limited")
        for which in admission.limited_by:
            count(f"rate_limited_{which}")
        headers = dict(admission.headers) if self.rate_headers else {}
        if admission.too_large:
            count("rate_limited_too_large")
            return error_response(
                429, f"Request too large: it needs {cost} tokens (prompt plus max_tokens) and the "
                f"limit is {self.limiter.tpm} tokens per {self.limiter.window:g} s; reduce the "
                "prompt or max_tokens", "tokens", headers, code="request_too_large")
        wait_ms = int(np.ceil(round(admission.retry_after * 1000, 6)))
        headers["Retry-After"] = f"{wait_ms / 1000:.3f}"
        headers["retry-after-ms"] = str(wait_ms)
        limits = []
        if "requests" in admission.limited_by:
            limits.append(f"requests per {self.limiter.window:g} s: limit {self.limiter.rpm}")
        if "tokens" in admission.limited_by:
            limits.append(f"tokens per {self.limiter.window:g} s: limit {self.limiter.tpm}, "
                          f"requested {cost}")
        kind = "requests" if admission.limited_by == ("requests",) else "tokens"
        return error_response(
            429, f"Rate limit reached ({'; '.join(limits)}). Please try again in {wait_ms / 1000:.3f}s.",
            kind, headers, code="rate_limit_exceeded")


def _distort(payload: dict, fault: str, auth: str) -> None:
    """Give a paid answer the odd shape of fault ``fault`` (see :class:`Faults`)."""
    message = payload["choices"][0]["message"]
    usage = payload["usage"]
    if fault == "usage_text":
        payload["usage"] = {k: str(v) for k, v in usage.items()}
    elif fault == "usage_invalid":
        payload["usage"] = "n/a"
    elif fault == "usage_negative":
        payload["usage"] = {**usage, "prompt_tokens": -10_000_000, "total_tokens": -10_000_000}
    elif fault == "reflect_key":
        message["content"] += f" (debug: authorization={auth})"
    elif fault == "content_parts":
        message["content"] = [{"type": "text", "text": message["content"]}]
    elif fault == "content_null":
        message["content"] = None
