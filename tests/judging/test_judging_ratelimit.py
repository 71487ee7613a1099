"""Runs proceed at an endpoint's rate limits instead of bouncing off them: with rpm/tpm given, with
limits learned from OpenAI's headers, and learned from 429 answers alone. Over real HTTP against
the simulated server's sliding-window limiter (a 2 s window standing in for a minute), and
unit-checked with a fake clock."""

import asyncio
import time
import warnings

import pytest

import judgekit as jk
from judgekit.judging.limits import EndpointLimits, estimate_tokens
from judgekit.sim.chat import completion_budget, prompt_tokens

WINDOW = 2.0
RPM, TPM = 30, 7000
PAIRS = jk.sim.simulate_pairs(60, median_length=300, seed=0)    # 120 calls of about 260 tokens


def _implied(judge):
    bodies = [judge.body(judge.template.render_pair(r, order=o), 0)
              for r in PAIRS.to_dict("records") for o in ("ab", "ba")]
    tokens = sum(prompt_tokens(b["messages"]) + completion_budget(b) for b in bodies)
    return max(len(bodies) / RPM, tokens / TPM) * WINDOW, len(bodies)


@pytest.mark.parametrize("variant", ["given", "adaptive", "adaptive-no-headers"])
def test_a_run_proceeds_at_the_limit_with_few_429s(variant):
    server = jk.sim.SimServer(pairs=PAIRS, rpm=RPM, tpm=TPM, rate_window=WINDOW, latency=0.02,
                          rate_headers=variant != "adaptive-no-headers")
    with server as url:
        judge = jk.Judge("sim", "calibraeval_default", base_url=url, seed=0)
        implied, n = _implied(judge)
        limits = {"rpm": RPM, "tpm": TPM} if variant == "given" else {}
        t0 = time.monotonic()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            j = jk.run_judges(PAIRS, judge, concurrency=16, cache=False, progress=False,
                              rate_window=WINDOW, **limits)
        elapsed = time.monotonic() - t0
        stats = server.stats
    assert j["error"].isna().all() and len(j) == n
    refused = stats.get("rate_limited", 0)
    # fewer than 2 % of the requests answered 429 (an engine that ignores the limits
    # gets most of its requests refused at concurrency 16).
    # Without headers the limits are learned from 429s; how many it takes depends on how the
    # server's window and the client's clock line up on a loaded machine (8 to 13 seen in CI),
    # so that variant is held to a bound a blind engine cannot meet, not to a count.
    bound = 0.02 * stats["requests"] if variant != "adaptive-no-headers" else 0.2 * stats["requests"]
    assert refused < bound
    # as fast as the limits allow (the window lets the first window's worth go at once), and
    # no faster than they allow
    assert implied - WINDOW - 0.5 < elapsed < (1.15 if variant == "given" else 1.3) * implied + 1.0


def _answer(limits, body, prompt_tokens=None, headers=None):
    ticket = asyncio.run(limits.acquire(body))
    limits.answered(ticket, prompt_tokens, headers or {})
    return ticket


BODY = {"messages": [{"role": "user", "content": "x" * 400}], "max_tokens": 16}


def test_tokens_are_estimated_then_corrected_from_the_usage():
    now = [0.0]
    limits = EndpointLimits(tpm=1000, window=10.0, clock=lambda: now[0])
    assert estimate_tokens(BODY) == (104, 16)
    first = _answer(limits, BODY, prompt_tokens=52)      # the endpoint counts half our estimate
    assert first.tokens == 52 + 16
    second = asyncio.run(limits.acquire(BODY))           # later estimates are scaled by it
    assert second.prompt == 52
    assert limits.wait_time(1000 - 68 - 68 + 1) > 0 and limits.wait_time(1000 - 68 - 68) == 0


def test_limits_are_learned_from_headers_and_from_typed_429s_only():
    now = [0.0]
    limits = EndpointLimits(window=10.0, concurrency=8, clock=lambda: now[0])
    _answer(limits, BODY, headers={"x-ratelimit-limit-requests": "5"})
    assert limits.limit("requests") == 5 and limits.limit("tokens") is None
    # without headers: a 429 saying "requests" teaches what was sent in the window before it
    blind = EndpointLimits(window=10.0, concurrency=8, clock=lambda: now[0])
    for _ in range(3):
        now[0] += 1
        _answer(blind, BODY)
    now[0] += 1
    blind.refused(asyncio.run(blind.acquire(BODY)), 4.0, "requests", {})
    assert blind.learned == {"requests": 3, "tokens": None}
    assert blind.cap == 4                         # concurrency halved
    # the next call waits for the first of the three to leave the window (t = 1 + 10), which
    # is later than the Retry-After (t = 4 + 4)
    assert blind.wait_time(0) == pytest.approx(7.0)
    # a 429 that names no limit (an overloaded server) teaches no limit
    other = EndpointLimits(window=10.0, concurrency=8, clock=lambda: now[0])
    _answer(other, BODY)
    now[0] += 1
    other.refused(asyncio.run(other.acquire(BODY)), None, "rate_limit_error", {})
    assert other.learned == {"requests": None, "tokens": None} and other.cap == 4


def test_a_learned_limit_recovers_after_a_quiet_window_and_concurrency_grows_back():
    now = [0.0]
    limits = EndpointLimits(window=1.0, concurrency=8, clock=lambda: now[0])
    for t in (0.1, 0.2, 0.3, 0.4):
        now[0] = t
        _answer(limits, BODY)
    now[0] = 0.5
    limits.refused(asyncio.run(limits.acquire(BODY)), None, "requests", {})
    assert limits.limit("requests") == 4 and limits.cap == 4
    now[0] = 2.0
    _answer(limits, BODY)
    assert limits.limit("requests") == 5          # one more after a window without a 429
    now[0] = 2.5
    _answer(limits, BODY)
    assert limits.limit("requests") == 5          # not yet another window
    for _ in range(25):
        now[0] += 1.01
        _answer(limits, BODY)
    assert limits.cap == 8                        # back to the run's concurrency
    # a given limit is never exceeded by a learned one
    given = EndpointLimits(rpm=3, window=10.0, clock=lambda: now[0])
    given.learned["requests"] = 10
    assert given.limit("requests") == 3
