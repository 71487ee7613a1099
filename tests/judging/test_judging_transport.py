"""The lean aiohttp transport against the real openai SDK: the same judgments, errors and counts
from both paths on the same simulated server, faults included; which transport a run uses, what it
sends (key, basic auth, organization, proxy), and what it refuses before sending."""

import asyncio
import json
import socket
import threading
import warnings

import pandas as pd
import pytest

import judgekit as jk
from judgekit.judging.transport import LeanTransport

PRICES = {"sim": (1000.0, 2000.0)}
#: every kind of fault the engine handles, with retries that succeed, a stall past the timeout
#: (paid, abandoned, retried), and attempts that give up. The timeout (2 s) leaves a healthy call
#: room on a loaded machine (at 1 s, calls that were only slow were abandoned too, and not
#: equally often on both paths); a stall (4 s) is always past it
MIXED = dict(rate_429=0.06, rate_500=0.06, rate_503=0.04, rate_drop=0.04, rate_timeout=0.02,
             rate_malformed=0.04, rate_empty_choices=0.04, rate_missing_logprobs=0.05,
             rate_truncated=0.04, rate_usage_text=0.03, rate_usage_invalid=0.03,
             rate_content_parts=0.03, rate_content_null=0.03, retry_after=0.01, stall_s=4.0,
             seed=7)
#: refusals that end a call: a Retry-After beyond backoff_max, and 400s (a model the server
#: does not know)
REFUSING = dict(rate_429=0.3, retry_after="inf", seed=2)
COUNTS = ("requests", "cached", "called", "paid", "errors", "retries", "rate_limited",
          "retry_after_too_long", "gave_up", "abandoned_timeouts", "dropped_connections",
          "usage_missing", "not_run_budget", "cost_usd", "unconfirmed_usd")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_on_fresh_server(port, faults, transport, tmp_path, judges_for):
    """One run against a new server on ``port`` (the same URL, so the same request keys); the
    server's answers are a function of (body, attempt, seed), so two fresh servers answer the
    same calls the same way."""
    pairs = jk.sim.simulate_pairs(30, seed=4)
    server = jk.sim.SimServer({"sim": jk.sim.SimJudge(seed=3, tie_rate=0.1)}, pairs=pairs, faults=faults,
                          port=port)
    with server as url, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        j = jk.run_judges(pairs, judges_for(url), repeats=2, id_swap=(False, True),
                          concurrency=16, cache=tmp_path / f"{transport}.sqlite", timeout=2.0,
                          max_retries=3, backoff_base=0.01, backoff_max=0.5, prices=PRICES,
                          progress=False, transport=transport)
        stats = server.stats
    return j, stats


@pytest.mark.parametrize("faults,models", [(MIXED, ("sim",)), (REFUSING, ("sim", "unknown"))],
                         ids=["mixed-faults", "refusals"])
def test_the_lean_transport_and_the_sdk_give_the_same_table(faults, models, tmp_path):
    port = _free_port()

    def judges_for(url):
        return [jk.Judge(m, t, base_url=url, seed=0) for m in models
                for t in ("mtbench_pair", "calibraeval_default")]

    lean, lean_stats = _run_on_fresh_server(port, faults, "aiohttp", tmp_path, judges_for)
    sdk, sdk_stats = _run_on_fresh_server(port, faults, "openai", tmp_path, judges_for)
    assert len(lean) == 480 * len(models)
    # faults of every kind were met, and ended the same way on both paths
    errors = lean["error"].dropna()
    if faults is MIXED:
        for start in ("api: malformed JSON", "api: response has no choices", "parse: truncated",
                      "api: gave up after 4 attempts; last: HTTP 5"):
            assert errors.str.startswith(start).any(), start
        assert (lean["p_note"] == "no logprobs in the response").any()
        assert lean_stats["fault_timeout"] > 0 and lean_stats["fault_drop"] > 0
    else:
        assert errors.str.contains("more than backoff_max=0.5 s: not retried").any()
        assert errors.str.startswith("api: HTTP 400: no simulated judge for model 'unknown'").any()
    assert lean["verdict"].notna().sum() > 100
    pd.testing.assert_frame_equal(lean.drop(columns="latency_s"), sdk.drop(columns="latency_s"))
    a, b = lean.attrs["judgekit_run"], sdk.attrs["judgekit_run"]
    assert {k: a[k] for k in COUNTS} == {k: b[k] for k in COUNTS}
    assert lean_stats == sdk_stats     # the server saw, answered and billed the same


class _Capture:
    """A tiny OpenAI-compatible endpoint that records each request's headers and answers
    ``[[A]]``; also reachable as an HTTP proxy (requests in absolute form)."""

    def __init__(self):
        self.seen = []

    async def _chat(self, request):
        from aiohttp import web

        body = json.loads(await request.read())
        # the URL from Host and path: request.url fails on aiohttp 3.9 with newer yarl
        url = f"http://{request.headers.get('Host')}{request.path}"
        self.seen.append({"headers": dict(request.headers), "url": url,
                          "model": body["model"]})
        return web.json_response({
            "id": "x", "object": "chat.completion", "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "[[A]]"}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})

    def __enter__(self):
        from aiohttp import web

        from judgekit._aioloop import BackgroundLoop

        async def start():
            app = web.Application()
            app.add_routes([web.post("/v1/chat/completions", self._chat)])
            self._runner = web.AppRunner(app, access_log=None)
            await self._runner.setup()
            await web.TCPSite(self._runner, "127.0.0.1", 0).start()
            return self._runner.addresses[0][1]

        self._loop = BackgroundLoop("capture")
        self.port = self._loop.run(start())
        return self

    def __exit__(self, *exc):
        self._loop.run(self._runner.cleanup())
        self._loop.stop()


PAIRS = jk.sim.simulate_pairs(2, seed=1)


def _one_run(url, **options):
    judge = jk.Judge("m", "mtbench_pair", base_url=url, logprobs=False)
    return jk.run_judges(PAIRS, judge, orders=("ab",), cache=False, progress=False, **options)


def test_which_transport_sends_and_what_it_sends():
    import openai

    with _Capture() as cap:
        url = f"http://127.0.0.1:{cap.port}/v1"
        plain = _one_run(url, api_key="sk-lean-1")
        sdk_client = openai.AsyncOpenAI(base_url=url, api_key="sk-sdk-2", organization="org-9")
        via_client = _one_run(None, client=sdk_client)
        forced_sdk = _one_run(url, api_key="sk-sdk-3", transport="openai")
        forced_lean = _one_run(None, client=sdk_client, transport="aiohttp")
        creds = _one_run(f"http://bob:s3cret@127.0.0.1:{cap.port}/v1", api_key="sk-x",
                         transport="aiohttp")
        creds_sdk = _one_run(f"http://bob:s3cret@127.0.0.1:{cap.port}/v1", api_key="sk-x",
                             transport="openai")
    agents = [s["headers"]["User-Agent"].split("/")[0] for s in cap.seen]
    auth = [s["headers"]["Authorization"] for s in cap.seen]
    assert agents == ["judgekit"] * 2 + ["AsyncOpenAI"] * 4 + ["judgekit"] * 4 + ["AsyncOpenAI"] * 2
    assert auth[:6] == ["Bearer sk-lean-1"] * 2 + ["Bearer sk-sdk-2"] * 2 + ["Bearer sk-sdk-3"] * 2
    assert auth[6:8] == ["Bearer sk-sdk-2"] * 2                  # the client's key, lean path
    assert cap.seen[6]["headers"]["OpenAI-Organization"] == "org-9"
    assert auth[8:] == ["Basic Ym9iOnMzY3JldA=="] * 4            # user:token@ as basic auth
    for j in (plain, via_client, forced_sdk, forced_lean, creds, creds_sdk):
        assert j["verdict"].tolist() == ["a", "a"] and j["prompt_tokens"].tolist() == [10, 10]


def test_organization_and_project_from_the_environment_are_sent_by_both_paths(monkeypatch):
    monkeypatch.setenv("OPENAI_ORG_ID", "org-env")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-env")
    with _Capture() as cap:
        url = f"http://127.0.0.1:{cap.port}/v1"
        _one_run(url, api_key="sk-1")
        _one_run(url, api_key="sk-1", transport="openai")
    lower = [{k.lower(): v for k, v in s["headers"].items()} for s in cap.seen]
    sent = [(h.get("openai-organization"), h.get("openai-project")) for h in lower]
    assert sent == [("org-env", "proj-env")] * 4


def test_a_proxy_from_the_environment_is_used_by_both_paths(monkeypatch):
    with _Capture() as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        # a host that does not resolve: only the proxy can answer for it
        for transport in ("aiohttp", "openai"):
            j = _one_run("http://judge.invalid/v1", api_key="sk-p", transport=transport)
            assert j["verdict"].tolist() == ["a", "a"]
    assert [s["url"] for s in proxy.seen] == ["http://judge.invalid/v1/chat/completions"] * 4


def test_transports_that_cannot_work_are_refused_before_anything_is_sent(tmp_path):
    import openai

    azure = openai.AsyncAzureOpenAI(api_key="k", api_version="2024-06-01",
                                    azure_endpoint="https://x.openai.azure.com")
    with _Capture() as cap:
        url = f"http://127.0.0.1:{cap.port}/v1"
        with pytest.raises(ValueError, match="transport must be one of"):
            _one_run(url, transport="httpx")
        with pytest.raises(ValueError, match="cannot apply the authentication"):
            _one_run(url, client=azure, transport="aiohttp")
    assert cap.seen == []


def test_the_lean_transport_reports_failures_by_kind():
    from judgekit.judging.transport import NoAnswer

    async def ask(url, timeout=5.0):
        lean = LeanTransport(url, "k", timeout=timeout, pool=2)
        try:
            return await lean.chat({"model": "sim", "messages": [
                {"role": "user", "content": "hi"}]})
        finally:
            await lean.close()

    with pytest.raises(NoAnswer) as refused:
        asyncio.run(ask(f"http://127.0.0.1:{_free_port()}/v1"))
    assert refused.value.kind == "ConnectError" and not refused.value.reached
    stall = jk.sim.SimServer(handlers=[lambda body: "late"],
                         faults={"rate_timeout": 1.0, "stall_s": 2.0})
    drop = jk.sim.SimServer(handlers=[lambda body: "never"], faults={"rate_drop": 1.0})
    with stall as slow_url, drop as drop_url:
        with pytest.raises(NoAnswer) as slow:
            asyncio.run(ask(slow_url, timeout=0.5))
        with pytest.raises(NoAnswer) as dropped:
            asyncio.run(ask(drop_url))
    assert slow.value.kind == "ReadTimeout" and slow.value.reached        # may have been billed
    assert dropped.value.kind == "RemoteProtocolError" and dropped.value.reached


def test_requests_in_flight_share_commits_and_each_answer_is_durable(tmp_path):
    import concurrent.futures

    from judgekit.exceptions import CacheError
    from judgekit.judging.cache import Cache, new_owner
    from judgekit.judging.writer import Writer

    rows = [{"key": f"k{i}", "endpoint": "e", "model": "m", "repeat": 0, "request": "{}",
             "response": "{}", "status": "ok", "source": "live"} for i in range(200)]

    async def many(cache):
        writer = Writer(cache, new_owner(), concurrent.futures.ThreadPoolExecutor(1))
        states = await asyncio.gather(*(writer.claim(r["key"]) for r in rows))
        held = await asyncio.gather(*(writer.put(r) for r in rows))
        return writer.commits, states, held

    path = tmp_path / "c.sqlite"
    with Cache(path) as cache:
        commits, states, held = asyncio.run(many(cache))
        # a second owner finds every answer stored
        assert set(cache.claim([r["key"] for r in rows], new_owner()).values()) == {"stored"}
    assert set(states) == {"mine"} and held == [None] * 200
    assert commits < 50                     # 400 operations, shared commits
    with Cache(path) as cache, cache._sql("test") as conn:
        assert conn.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 200
    # a failing commit fails every operation in it, with the cache's error
    closed = Cache(tmp_path / "d.sqlite")
    closed.close()
    with pytest.raises(CacheError, match="is closed"):
        asyncio.run(many(closed))


def test_the_lean_transport_is_shared_by_threads_running_the_engine(tmp_path):
    # one background event loop serves every run; sessions belong to their run
    pairs = jk.sim.simulate_pairs(10, seed=3)
    with jk.sim.SimServer(pairs=pairs) as url:
        judge = jk.Judge("sim", "shen_hh", base_url=url, seed=0)
        outs = []
        threads = [threading.Thread(target=lambda: outs.append(jk.run_judges(
            pairs, judge, cache=False, progress=False))) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(outs) == 3
    for other in outs[1:]:
        pd.testing.assert_frame_equal(outs[0].drop(columns="latency_s"),
                                      other.drop(columns="latency_s"))
