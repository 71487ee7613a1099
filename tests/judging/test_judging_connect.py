"""An endpoint that cannot be reached stops the run with the cause, in seconds: no retry storm
for a host that does not resolve, refuses connections, or stops accepting them mid-run."""

import socket
import threading
import time

import pytest

import judgekit as jk
from judgekit.exceptions import JudgeConnectionError

PAIRS = jk.sim.simulate_pairs(10, seed=1)


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("where,cause", [
    ("http://judgekit-no-such-host.invalid/v1", "ConnectError"),
    (None, "ConnectError"),          # a loopback port nobody listens on
])
def test_an_unreachable_endpoint_raises_with_the_cause_in_seconds(where, cause, tmp_path):
    url = where or f"http://127.0.0.1:{_closed_port()}/v1"
    judge = jk.Judge("gpt-4o-mini", "mtbench_pair", base_url=url)
    t0 = time.monotonic()
    with pytest.raises(JudgeConnectionError) as info:
        jk.run_judges(PAIRS, judge, api_key="sk-test", cache=tmp_path / "c.sqlite",
                      progress=False)
    seconds = time.monotonic() - t0
    message = str(info.value)
    assert seconds < 10, seconds
    assert url.split("/v1")[0] in message and cause in message and "failed to connect" in message
    assert "sk-test" not in message
    assert len(jk.Cache(tmp_path / "c.sqlite")) == 0


def test_an_endpoint_that_dies_mid_run_stops_the_run_and_keeps_what_it_answered(tmp_path):
    pairs = jk.sim.simulate_pairs(60, seed=2)
    server = jk.sim.SimServer(pairs=pairs, latency=0.02)
    cache = tmp_path / "c.sqlite"
    with server as url:
        judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)

        def kill_after_some_answers():
            while server.stats.get("paid", 0) < 20:
                time.sleep(0.01)
            server.stop()

        killer = threading.Thread(target=kill_after_some_answers)
        killer.start()
        t0 = time.monotonic()
        with pytest.raises(JudgeConnectionError, match="stopped accepting connections"):
            jk.run_judges(pairs, judge, cache=cache, concurrency=2, progress=False)
        seconds = time.monotonic() - t0
        killer.join()
        paid = server.stats["paid"]
    assert seconds < 15, seconds
    assert len(jk.Cache(cache)) == paid >= 20    # every answer received is stored
