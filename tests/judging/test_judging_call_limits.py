"""Limits on every call, against a hostile loopback server (tests/_hostile.py), with the real
aiohttp transport and the real openai SDK over real HTTP: a total deadline per attempt (bodies
trickled, endless, headers that never end), answers bounded on the wire and decompressed (gzip,
deflate, raw deflate, stacked, plain, chunked, an encoding not asked for, an error body), a
Retry-After beyond backoff_max that pauses nothing, proxy credentials never kept, keys in odd
base-URL spellings refused, errors said with a 200 retried like their status, answers with many
headers read or refused once, and rate limits below one call said aloud."""

import base64
import logging
import threading
import time
import warnings

import pandas as pd
import pytest
from _hostile import HostileServer

import judgekit as jk

TRANSPORTS = ("aiohttp", "openai")
ONE = jk.sim.simulate_pairs(1, seed=1)
FOUR = jk.sim.simulate_pairs(4, seed=2)


@pytest.fixture(scope="module")
def server():
    with HostileServer() as srv:
        yield srv


def _bounded(fn, limit=20.0):
    """Run ``fn`` in a daemon thread: (finished, result or exception, seconds). A call that hangs
    (the bug) fails the test instead of hanging the session."""
    out = {}

    def go():
        t0 = time.monotonic()
        try:
            out["value"] = fn()
        except Exception as exc:
            out["value"] = exc
        out["seconds"] = time.monotonic() - t0

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    thread.join(limit)
    return not thread.is_alive(), out.get("value"), out.get("seconds")


def _judge(url, **options):
    pairs = options.pop("pairs", ONE)
    orders = options.pop("orders", ("ab",))
    judge = options.pop("judges", None) or jk.Judge("m", "mtbench_pair", base_url=url,
                                                    logprobs=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return jk.run_judges(pairs, judge, orders=orders, progress=False, api_key="sk-test",
                             **{"cache": False, **options})


def _judges_per_mode(server, modes):
    """One judge per mode (each its own endpoint), so one run meets every mode at once."""
    return [jk.Judge("m", "mtbench_pair", base_url=server.url(mode), logprobs=False, name=mode)
            for mode in modes]


def _by_mode(j):
    return dict(zip(j["judge"], j["error"]))


# ---------------------------------------------------------------------- class 2: the deadline
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_attempt_has_a_total_deadline(server, transport):
    modes = ["trickle", "endless", "keepalive", "slow_headers"]
    finished, j, seconds = _bounded(lambda: _judge(None, judges=_judges_per_mode(server, modes),
                                                   transport=transport, timeout=1.0,
                                                   max_retries=0))
    assert finished, "run_judges(timeout=1) still running after 20 s"
    assert not isinstance(j, Exception), j
    assert _by_mode(j) == dict.fromkeys(
        modes, "api: gave up after 1 attempts; last: timed out after 1 s")
    # each attempt reached the endpoint: it may have been billed, and says so
    assert j.attrs["judgekit_run"]["abandoned_timeouts"] == 4


@pytest.mark.parametrize("value", ["seconds", "date"])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_retry_after_beyond_backoff_max_pauses_the_endpoint_at_most_backoff_max(
        server, transport, value):
    # one call at a time: the refused call's Retry-After would hold back every later one
    mode = f"retry_after_{value}"
    finished, j, seconds = _bounded(lambda: _judge(
        server.url(mode), transport=transport, pairs=FOUR, concurrency=1, backoff_max=0.5,
        max_retries=2))
    assert finished, f"Retry-After ({value}) held the endpoint"
    assert j["verdict"].notna().sum() == 3
    assert j["error"].str.contains("more than backoff_max=0.5 s: not retried", na=False).sum() == 1
    server.asked[mode] = 0   # the next parametrisation starts with a 429 again


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_unreadable_retry_after_falls_back_to_the_backoff(server, transport):
    finished, j, _ = _bounded(lambda: _judge(server.url("retry_after_garbage"),
                                             transport=transport, pairs=FOUR, concurrency=1,
                                             backoff_base=0.05, backoff_max=0.5))
    assert finished and j["verdict"].notna().all()
    assert j.attrs["judgekit_run"]["retries"] == 1
    server.asked["retry_after_garbage"] = 0


# ---------------------------------------------------------------------- class 3: the size
_CUT = "(stored cut to 1048576 bytes)"
_REFUSED = {"bomb_gzip": f"api: answer inflates past max_answer_bytes=1048576 (Content-Encoding: gzip) {_CUT}",
            "bomb_deflate": "api: answer inflates past max_answer_bytes=1048576 (Content-Encoding: "
                            f"deflate) {_CUT}",
            "bomb_rawdeflate": "api: answer inflates past max_answer_bytes=1048576 "
                               f"(Content-Encoding: deflate) {_CUT}",
            "bomb_double": "api: answer inflates past max_answer_bytes=1048576 (Content-Encoding: "
                           f"gzip, gzip) {_CUT}",
            "big": f"api: answer of 2097152 bytes is larger than max_answer_bytes=1048576 {_CUT}",
            "big_chunked": "api: answer of more than 1048576 bytes is larger than "
                           f"max_answer_bytes=1048576 {_CUT}",
            "brotli": "api: the answer is encoded as 'br', which judgekit did not ask for (it asks "
                      "for 'gzip, deflate')"}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_answers_are_bounded_on_the_wire_and_decompressed(server, transport, tmp_path):
    cache = tmp_path / "c.sqlite"
    before = dict(server.paid)
    judges = _judges_per_mode(server, _REFUSED)

    def run():
        return _judge(None, judges=judges, transport=transport, cache=cache, max_retries=3,
                      max_answer_bytes=1 << 20)

    j, again = run(), run()
    for mode, error in _by_mode(j).items():
        assert error == _REFUSED[mode], (mode, error)
        # paid once: the refusal is final, recorded as a paid error, and the re-run reads it
        assert server.paid[mode] - before.get(mode, 0) == 1, mode
    report = j.attrs["judgekit_run"]
    assert report["paid"] == len(_REFUSED) and report["retries"] == 0
    assert again["cached"].all() and _by_mode(again) == _by_mode(j)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_answers_within_the_limit_are_read_compressed_or_not(server, transport):
    for mode in ("gzip", "ok", "bomb_gzip"):   # the 8 MiB answer fits the default 16 MiB
        j = _judge(server.url(mode), transport=transport)
        assert j["verdict"].tolist() == ["a"], mode


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_error_body_is_bounded_too_and_its_status_handled(server, transport):
    j = _judge(server.url("big_500"), transport=transport, max_retries=1, backoff_base=0.01,
               max_answer_bytes=1 << 20)
    error = j["error"].iloc[0]
    assert error.startswith("api: gave up after 2 attempts; last: HTTP 500: answer inflates")


def test_a_bomb_of_a_gigabyte_is_refused_after_the_limit_in_bounded_memory():
    import tracemalloc
    import zlib

    from judgekit.judging.wire import BoundedBody, Unreadable

    # a deflate stream of 1 GiB of spaces: one compressed MiB repeated (each block starts
    # afresh after a full flush), about 1 MB on the wire
    co = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS)
    head = co.flush(zlib.Z_FULL_FLUSH)
    block = co.compress(b" " * (1 << 20)) + co.flush(zlib.Z_FULL_FLUSH)
    body = BoundedBody("deflate", limit=16 << 20)
    tracemalloc.start()
    with pytest.raises(Unreadable, match="inflates past max_answer_bytes=16777216") as refused:
        body.feed(head)
        for _ in range(1024):
            body.feed(block)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 40 << 20   # the 16 MiB kept, not the gigabyte
    assert refused.value.kept == b" " * (16 << 20)


# ---------------------------------------------------------------------- class 5: secrets
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_proxy_credentials_never_reach_errors_logs_or_the_cache(server, transport, tmp_path,
                                                                monkeypatch, caplog):
    user, written = "proxyacct", "Pr0xy%21Secret99"          # the password is 'Pr0xy!Secret99'
    token = base64.b64encode(b"proxyacct:Pr0xy!Secret99").decode()
    for name in ("HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://{user}:{written}@127.0.0.1:{server.port}")
    cache = tmp_path / "c.sqlite"
    with caplog.at_level(logging.DEBUG), jk.Cache(cache) as held:   # held: the WAL stays
        # the proxy answers 502 quoting the header, or a 200 whose answer quotes it
        failed = _judge("http://judge.invalid/v1", transport=transport, max_retries=1,
                        backoff_base=0.01)
        echoed = _judge("http://judge.invalid/echo200/v1", transport=transport, cache=held)
        blobs = b"".join(p.read_bytes() for p in tmp_path.glob("c.sqlite*"))
    assert failed["error"].iloc[0].endswith("(request carried Proxy-Authorization: Basic ***)")
    assert echoed["verdict"].tolist() == ["a"] and "Basic ***" in echoed["raw"].iloc[0]
    kept = " ".join([*failed["error"], *echoed["raw"], caplog.text]).encode() + blobs
    for secret in (token, token.rstrip("="), "Pr0xy!Secret99", written):
        assert secret.encode() not in kept, secret


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("credentials", ["", "proxyacct:Pr0xy%21Secret99@"])
def test_the_key_never_reaches_the_proxy_of_an_https_endpoint(server, transport, credentials,
                                                              monkeypatch):
    """Through a proxy, an https endpoint is reached through a CONNECT tunnel: the proxy sees
    that request's headers only, which carry no API key (aiohttp copies a session's default
    headers into the CONNECT, an Authorization among them as Proxy-Authorization: the lean
    transport sends its headers with each request instead), and the proxy's own credentials
    when the proxy's URL has them."""
    for name in ("HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", f"http://{credentials}127.0.0.1:{server.port}")
    before = len(server.tunnels)
    j = _judge("https://judge.invalid/v1", transport=transport, max_retries=0)
    assert j["verdict"].isna().all() and j["error"].notna().all()   # the tunnel was refused
    tunnels = server.tunnels[before:]
    assert tunnels, "no CONNECT reached the proxy"
    for headers in tunnels:
        assert not any("sk-test" in value for value in headers.values()), headers
        assert "authorization" not in headers
        if credentials:
            token = base64.b64encode(b"proxyacct:Pr0xy!Secret99").decode()
            assert headers.get("proxy-authorization") == f"Basic {token}"
        else:
            assert "proxy-authorization" not in headers


@pytest.mark.parametrize("base", [
    "{root}/v1%3Fapi-key=SECRETKEY123", "{root}/v1%3fapi-key=SECRETKEY123",
    "{root}/v1;api-key=SECRETKEY123", "{root}/v1%3Bkey=SECRETKEY123",
    "{root}/v1%23SECRETKEY123", "{root}/v1/key=SECRETKEY123", "{root}/v1%26key=SECRETKEY123"])
def test_keys_in_odd_url_spellings_are_refused_before_anything_is_sent(server, base,
                                                                       monkeypatch):
    import openai

    url = base.format(root=f"http://127.0.0.1:{server.port}")
    asked = sum(server.asked.values())
    with pytest.raises(ValueError, match="in its path") as refused:
        jk.Judge("m", "mtbench_pair", base_url=url)
    assert "SECRETKEY123" not in str(refused.value)
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    with pytest.raises(ValueError, match="OPENAI_BASE_URL has"):
        jk.run_judges(ONE, "m", cache=False, progress=False)
    client = openai.AsyncOpenAI(base_url=url, api_key="sk-test")
    with pytest.raises(ValueError, match="client.base_url has"):
        jk.run_judges(ONE, "m", client=client, cache=False, progress=False)
    assert sum(server.asked.values()) == asked


# ---------------------------------------------------------------------- class 6: what was said
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_error_said_with_a_200_keeps_its_message_and_is_retried_like_its_status(
        server, transport):
    for mode in ("error200", "error200_rate", "error200_quota"):
        server.asked[mode] = 0
    once = _judge(server.url("error200"), transport=transport, max_retries=0)
    assert once["error"].iloc[0] == ("api: gave up after 1 attempts; last: HTTP 200: Upstream "
                                     "provider overloaded, try again")
    assert once.attrs["judgekit_run"]["paid"] == 0        # not kept as an answer: asked again
    retried = _judge(server.url("error200"), transport=transport, max_retries=2,
                     backoff_base=0.01)
    assert retried["verdict"].tolist() == ["a"] and retried.attrs["judgekit_run"]["retries"] == 1
    rate = _judge(server.url("error200_rate"), transport=transport, backoff_base=0.01)
    assert rate["verdict"].tolist() == ["a"]
    assert rate.attrs["judgekit_run"]["rate_limited"] == 1
    quota = _judge(server.url("error200_quota"), transport=transport, max_retries=3)
    assert quota["error"].iloc[0] == "api: HTTP 200: You exceeded your current quota"
    assert server.asked["error200_quota"] == 1            # waiting cannot cure it: not retried


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_answers_with_many_headers_are_read_or_refused_once(server, transport):
    before = dict(server.paid)
    many = _judge(server.url("headers200"), transport=transport, max_retries=2)
    huge = _judge(server.url("huge_headers"), transport=transport, max_retries=2,
                  backoff_base=0.01)
    assert many["verdict"].tolist() == ["a"]
    # past what the HTTP client reads (a limit that differs between aiohttp versions): either the
    # answer is read, or it is refused as final - never retried and paid again
    if pd.isna(huge["error"].iloc[0]):
        assert huge["verdict"].tolist() == ["a"]
    else:
        assert huge["error"].iloc[0].startswith(
            "api: the answer's headers are beyond the HTTP client")
    assert huge.attrs["judgekit_run"]["paid"] == 1
    for mode in ("headers200", "huge_headers"):
        assert server.paid[mode] - before.get(mode, 0) == 1, mode


def test_a_token_limit_below_one_request_is_said_at_once(server, caplog):
    with caplog.at_level(logging.WARNING, logger="judgekit.engine"):
        # a short window, so the crawl it warns about stays short here
        j = _judge(server.url("ok"), pairs=FOUR, tpm=1, rate_window=0.05)
    assert j["verdict"].notna().all()
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("token limit 1 per 0.05 s given (tpm=)" in m and "smaller than one request" in m
               for m in said), said


def test_an_advertised_limit_below_what_the_endpoint_admitted_is_ignored(server, caplog):
    with caplog.at_level(logging.WARNING, logger="judgekit.engine"):
        finished, j, seconds = _bounded(lambda: _judge(server.url("tokens_1"), pairs=FOUR,
                                                       concurrency=1))
    assert finished, "a server advertising 1 token per minute paced the run to a crawl"
    assert j["verdict"].notna().all()
    assert any("advertises a limit of 1 tokens" in r.getMessage() for r in caplog.records)


def test_a_passed_in_client_is_bounded_for_judgekit_calls_only(server):
    import asyncio

    import openai

    client = openai.AsyncOpenAI(base_url=server.url("big"), api_key="sk-test")
    j = _judge(None, client=client, max_answer_bytes=1 << 20)
    assert "larger than max_answer_bytes" in j["error"].iloc[0]

    async def own_call():   # the user's own request through the same client: no limit
        return await client.chat.completions.create(model="m", messages=[
            {"role": "user", "content": "hi"}])

    assert asyncio.run(own_call()).choices[0].message.content.startswith("Both are fine")
