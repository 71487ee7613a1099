"""A server asking to wait longer than ``backoff_max`` (a day, forever, a date in 2099) ends that
call as an error, said at WARNING, and the run returns everything else it received; unreadable
values fall back to the backoff. Real HTTP, the real openai SDK, the simulated server."""

import logging
import threading
import time
import warnings

import pytest

import judgekit as jk


def _run_in_thread(fn, limit):
    """Run ``fn`` in a daemon thread; (finished, result, seconds). A run that hangs (the bug)
    makes the test fail instead of hanging the session."""
    out = {}

    def go():
        t0 = time.monotonic()
        out["value"] = fn()
        out["seconds"] = time.monotonic() - t0

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    thread.join(limit)
    return not thread.is_alive(), out.get("value"), out.get("seconds")


@pytest.mark.parametrize("value", ["86400", "inf", "Wed, 21 Oct 2099 07:28:00 GMT"])
def test_a_retry_after_beyond_backoff_max_is_an_error_and_the_rest_is_returned(value, caplog):
    pairs = jk.sim.simulate_pairs(8, seed=3)
    # about half the requests get a 429 on their first attempt (a function of the body)
    server = jk.sim.SimServer(pairs=pairs, faults=jk.sim.Faults(rate_429=0.5, retry_after=value, seed=1))
    with server as url, caplog.at_level(logging.WARNING, logger="judgekit.engine"):
        judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)

        def run():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                return jk.run_judges(pairs, judge, cache=False, progress=False, timeout=5,
                                     backoff_max=2.0, max_retries=3)

        finished, j, seconds = _run_in_thread(run, 20)
        assert finished, f"run_judges still waiting on Retry-After: {value}"
        stats = server.stats
    assert seconds < 10 and len(j) == 16
    refused = j["error"].str.contains("retry after", na=False)
    # every 429 ended its call at once (no retry, no wait); the others were answered
    assert refused.sum() == stats["fault_429"] > 0
    assert j.loc[~refused, "verdict"].notna().all()
    assert j.attrs["judgekit_run"]["retry_after_too_long"] == stats["fault_429"]
    assert j.attrs["judgekit_run"]["retries"] == 0
    assert "more than backoff_max=2 s" in j.loc[refused, "error"].iloc[0]
    assert any(r.levelno == logging.WARNING and "longer than backoff_max" in r.getMessage()
               for r in caplog.records)


@pytest.mark.parametrize("value", ["-5", "nan", "soon"])
def test_unreadable_or_negative_retry_after_falls_back_and_finishes(value):
    pairs = jk.sim.simulate_pairs(4, seed=3)
    server = jk.sim.SimServer(pairs=pairs, faults=jk.sim.Faults(rate_429=0.5, retry_after=value, seed=1))
    with server as url:
        judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)
        finished, j, seconds = _run_in_thread(
            lambda: jk.run_judges(pairs, judge, cache=False, progress=False, backoff_base=0.05,
                                  backoff_max=0.5), 20)
        assert finished
        stats = server.stats
    assert j["error"].isna().all() and len(j) == 8
    assert j.attrs["judgekit_run"]["retries"] == stats["fault_429"] > 0


def test_retry_after_parsing():
    from judgekit.judging.calls import retry_after

    assert retry_after({"retry-after": "86400"}) == 86400.0
    assert retry_after({"retry-after": "inf"}) == float("inf")
    assert retry_after({"retry-after": "Wed, 21 Oct 2099 07:28:00 GMT"}) > 2e9
    assert retry_after({"retry-after": "nan"}) is None          # unreadable: back off instead
    assert retry_after({"retry-after": "-5"}) == 0.0
    assert retry_after({"retry-after-ms": "nan", "retry-after": "3"}) == 3.0
