"""The simulated server's sliding-window rate limiter, checked against a brute-force count and,
over real HTTP with the real openai SDK, against the client's own clock."""

import asyncio
import json
import random
import re
import time
import urllib.error
import urllib.request

import openai
import pytest

import judgekit as jk
from judgekit.sim import RateLimiter, server_from_config
from judgekit.sim.faults import body_digest
from judgekit.sim.ratelimit import duration

WINDOW = 2.0
MSGS = jk.get_template("mtbench_pair").render("What is 2+2?", ["4", "5"])


def _fits(log, now, window, rpm, tpm, cost):
    """Brute force: would a request of ``cost`` fit at ``now`` given the admitted ``log``?"""
    inside = [c for t, c in log if now - t < window]
    return (rpm is None or len(inside) + 1 <= rpm) and (tpm is None or sum(inside) + cost <= tpm)


@pytest.mark.parametrize("rpm,tpm", [(5, None), (None, 1000), (4, 900)])
def test_limiter_admits_exactly_what_fits_and_retry_after_is_the_exact_wait(rpm, tpm):
    rng = random.Random(7)
    now = [0.0]
    limiter = RateLimiter(rpm, tpm, window=WINDOW, clock=lambda: now[0])
    log, refused = [], 0
    for _ in range(3000):
        now[0] += rng.choice([0.0, 0.125, 0.25, 0.5])   # exact binary times hit window edges
        cost = rng.choice([50, 200, 350])
        adm = limiter.admit(cost)
        assert adm.admitted == _fits(log, now[0], WINDOW, rpm, tpm, cost)
        if adm.admitted:
            log.append((now[0], cost))
            continue
        refused += 1
        wait = adm.retry_after
        # at now + wait it fits (if nothing else is admitted meanwhile); a moment earlier it does not
        assert _fits(log, now[0] + wait, WINDOW, rpm, tpm, cost)
        assert not _fits(log, now[0] + wait - 1e-9, WINDOW, rpm, tpm, cost)
        expected = {"requests"} if rpm and len([t for t, _ in log if now[0] - t < WINDOW]) >= rpm else set()
        if tpm and sum(c for t, c in log if now[0] - t < WINDOW) + cost > tpm:
            expected.add("tokens")
        assert set(adm.limited_by) == expected
    assert 300 < refused < 2700   # the limits were really exercised both ways


def test_limiter_headers_and_bad_arguments():
    now = [10.0]
    limiter = RateLimiter(3, 100, window=WINDOW, clock=lambda: now[0])
    h = limiter.admit(40).headers
    assert h == {"x-ratelimit-limit-requests": "3", "x-ratelimit-remaining-requests": "2",
                 "x-ratelimit-reset-requests": "2s", "x-ratelimit-limit-tokens": "100",
                 "x-ratelimit-remaining-tokens": "60", "x-ratelimit-reset-tokens": "2s"}
    now[0] = 10.5
    h = limiter.admit(70).headers                       # refused: 40 + 70 > 100
    assert h["x-ratelimit-remaining-tokens"] == "60" and h["x-ratelimit-reset-tokens"] == "1.5s"
    big = limiter.admit(101)
    assert not big.admitted and big.too_large and big.retry_after is None
    assert set(RateLimiter(rpm=2).admit(1).headers) == {
        "x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"}
    assert RateLimiter().admit(1).headers == {} and not RateLimiter().active
    for bad in ({"rpm": 0}, {"tpm": 1.5}, {"rpm": True}, {"window": 0}, {"window": float("inf")}):
        with pytest.raises(ValueError, match="rpm|tpm|rate_window"):
            RateLimiter(**bad)
    assert duration(0.0004) == "1ms" and duration(360) == "6m0s"


def _seconds(text):
    """Parse an x-ratelimit-reset value such as '1m15.5s' or '250ms'."""
    m = re.fullmatch(r"(?:(\d+)m)?(?:([\d.]+)s)?|(\d+)ms", text)
    assert m, text
    if m.group(3):
        return int(m.group(3)) / 1000
    return int(m.group(1) or 0) * 60 + float(m.group(2) or 0)


async def _hammer(url, seconds, workers, max_tokens_choices, seed):
    """Workers send requests back to back for ``seconds``; returns (ok records, 429 count)."""
    client = openai.AsyncOpenAI(base_url=url, api_key="sk-test", max_retries=0)
    ok, limited = [], []
    rng = random.Random(seed)
    end = time.monotonic() + seconds

    async def worker():
        while time.monotonic() < end:
            max_tokens = rng.choice(max_tokens_choices)
            sent = time.monotonic()
            try:
                raw = await client.chat.completions.with_raw_response.create(
                    model="sim", messages=MSGS, max_tokens=max_tokens)
            except openai.RateLimitError as exc:
                limited.append(float(exc.response.headers["retry-after"]))
                await asyncio.sleep(rng.uniform(0.0, 0.05))
                continue
            reply = raw.parse()
            ok.append((sent, time.monotonic(), reply.usage.prompt_tokens + max_tokens))

    await asyncio.gather(*(worker() for _ in range(workers)))
    await client.close()
    return ok, limited


def test_admitted_requests_never_exceed_either_limit_in_any_window():
    rpm, tpm = 6, 3000
    server = jk.sim.SimServer(rpm=rpm, tpm=tpm, rate_window=WINDOW)
    with server as url:
        ok, limited = asyncio.run(_hammer(url, 3 * WINDOW, 8, (10, 300, 700), seed=1))
        stats = server.stats
    # each admission happened between its request's send and the answer's arrival (client clock):
    # a run of answers whose send..receive span is shorter than the window was admitted within one
    # window, so it may hold at most rpm requests and tpm tokens
    ok.sort()
    tightest_requests = tightest_tokens = 0
    for i in range(len(ok)):
        last = ok[i][1]
        for j in range(i, len(ok)):
            last = max(last, ok[j][1])
            if last - ok[i][0] >= WINDOW:
                break
            group = ok[i : j + 1]
            tightest_requests = max(tightest_requests, len(group))
            tightest_tokens = max(tightest_tokens, sum(c for _, _, c in group))
    assert tightest_requests <= rpm and tightest_tokens <= tpm
    # the load was over the limit (many 429s), yet the limiter did not refuse what fit: three
    # windows of back-to-back traffic admit close to three windows' worth of budget
    assert len(limited) > 3 * len(ok)
    budget = sum(c for _, _, c in ok)
    assert len(ok) >= 2 * rpm or budget >= 2 * tpm
    assert all(0 < w <= WINDOW for w in limited)
    assert stats["rate_limited"] == len(limited) and stats["requests"] == len(ok) + len(limited)
    assert stats["paid"] == len(ok)
    assert stats["rate_limited_requests"] + stats["rate_limited_tokens"] >= len(limited)
    assert stats.get("rate_limited_requests", 0) > 0 and stats.get("rate_limited_tokens", 0) > 0


@pytest.mark.parametrize("limit", ["requests", "tokens"])
def test_retry_after_is_the_wait_until_the_budget_frees(limit):
    # 3 requests fill the window, by count (rpm=3) or by tokens (each costs about 1/3 of tpm)
    max_tokens = 400
    with jk.sim.SimServer(rate_window=1.0) as url:              # measure one request's cost
        client = openai.OpenAI(base_url=url, api_key="sk-test", max_retries=0)
        cost = client.chat.completions.create(model="sim", messages=MSGS,
                                              max_tokens=max_tokens).usage.prompt_tokens + max_tokens
    kwargs = {"rpm": 3} if limit == "requests" else {"tpm": 3 * cost + cost // 2}
    server = jk.sim.SimServer(rate_window=WINDOW, **kwargs)
    with server as url:
        client = openai.OpenAI(base_url=url, api_key="sk-test", max_retries=0)

        def call():
            sent = time.monotonic()
            try:
                raw = client.chat.completions.with_raw_response.create(
                    model="sim", messages=MSGS, max_tokens=max_tokens)
                return sent, time.monotonic(), 200, raw.headers
            except openai.RateLimitError as exc:
                return sent, time.monotonic(), 429, exc.response.headers

        admitted = [call() for _ in range(3)]
        assert [a[2] for a in admitted] == [200, 200, 200]
        key = f"x-ratelimit-remaining-{limit}"
        left = [int(a[3][key]) for a in admitted]
        step = 1 if limit == "requests" else cost
        assert left == [kwargs.get("rpm", kwargs.get("tpm")) - step * k for k in (1, 2, 3)]
        s1, e1 = admitted[0][:2]
        s4, e4, status, headers = call()
        assert status == 429
        wait = float(headers["retry-after"])
        assert int(headers["retry-after-ms"]) == round(wait * 1000)
        # the first admission (somewhere in [s1, e1]) leaves the window WINDOW s after it; the 429
        # was computed somewhere in [s4, e4]
        assert s1 + WINDOW - e4 - 0.001 <= wait <= e1 + WINDOW - s4 + 0.001
        reset = _seconds(headers[f"x-ratelimit-reset-{limit}"])
        assert wait <= reset <= WINDOW + 0.001
        # asking 0.3 s too early is refused again; asking when told is admitted
        time.sleep(max(wait - 0.3, 0.0))
        early = call()
        assert early[2] == 429
        time.sleep(float(early[3]["retry-after"]) + 0.02)
        assert call()[2] == 200
        assert server.stats["rate_limited"] == 2


def test_a_request_larger_than_tpm_is_refused_for_good_without_retry_after():
    server = jk.sim.SimServer(tpm=200, rate_window=WINDOW)
    with server as url:
        client = openai.OpenAI(base_url=url, api_key="sk-test", max_retries=0)
        with pytest.raises(openai.RateLimitError) as info:
            client.chat.completions.create(model="sim", messages=MSGS, max_tokens=10)
        assert "retry-after" not in info.value.response.headers
        assert info.value.code == "request_too_large" and "Request too large" in str(info.value)
        small = [{"role": "user", "content": "hi"}]
        with pytest.raises(openai.BadRequestError):         # admitted, then no template matches
            client.chat.completions.create(model="sim", messages=small, max_tokens=10)
    assert server.stats["rate_limited_too_large"] == 1 and server.stats["rejected"] == 1


def test_refused_requests_do_not_shift_the_injected_faults():
    faults = jk.sim.Faults(rate_500=0.5, seed=3)
    raw = json.dumps({"model": "sim", "messages": MSGS}).encode()
    digest = body_digest({"model": "sim", "messages": MSGS})
    with jk.sim.SimServer(faults=faults, rpm=2, rate_window=0.4) as url:
        statuses = []
        for _ in range(30):
            req = urllib.request.Request(f"{url}/chat/completions", data=raw,
                                         headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req) as resp:
                    statuses.append(resp.status)
            except urllib.error.HTTPError as exc:
                statuses.append(exc.code)
            time.sleep(0.05)
    assert 429 in statuses
    admitted = [s for s in statuses if s != 429]
    expected = [500 if faults.pick(digest, k) == "500" else 200 for k in range(len(admitted))]
    assert admitted == expected and 500 in admitted and 200 in admitted


def test_serve_sim_config_sets_the_limits(tmp_path):
    path = tmp_path / "sim.toml"
    path.write_text("rpm = 600\ntpm = 150000\nrate_window = 30.0\nlatency = 0.01\n")
    server = server_from_config(path)
    assert (server.rpm, server.tpm, server.rate_window, server.latency) == (600, 150000, 30.0, 0.01)
    assert server_from_config({}).rpm is None
    with pytest.raises(ValueError, match="rpm must be a positive integer"):
        server_from_config({"rpm": -1})
    with server as url:
        client = openai.OpenAI(base_url=url, api_key="sk-test")
        raw = client.chat.completions.with_raw_response.create(model="sim", messages=MSGS, max_tokens=5)
        assert raw.headers["x-ratelimit-remaining-requests"] == "599"
        assert server.rate_usage()["requests"] == 1
