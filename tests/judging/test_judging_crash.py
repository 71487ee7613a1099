"""A run killed with SIGKILL resumes from the cache; only calls in flight are paid twice, and
their claims are taken over at once."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import judgekit as jk

CHILD = textwrap.dedent("""
    import sys
    import judgekit as jk
    url, cache = sys.argv[1], sys.argv[2]
    pairs = jk.sim.simulate_pairs(60, seed=21)
    judge = jk.Judge("sim", "rafailov_tldr", base_url=url, seed=0)
    print("start", flush=True)
    jk.run_judges(pairs, judge, concurrency=4, cache=cache, progress=False)
    print("finished", flush=True)
""")


def _rows(path):
    try:
        with sqlite3.connect(path, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def test_sigkill_mid_run_then_resume_pays_only_in_flight_calls_twice(tmp_path):
    pairs = jk.sim.simulate_pairs(60, seed=21)
    cache = tmp_path / "cache.sqlite"
    server = jk.sim.SimServer(pairs=pairs, latency=0.04)
    with server as url:
        child = subprocess.Popen([sys.executable, "-c", CHILD, url, str(cache)],
                                 stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout.readline().strip() == "start"
            deadline = time.monotonic() + 60
            while _rows(cache) < 20 and time.monotonic() < deadline:
                time.sleep(0.02)
            os.kill(child.pid, signal.SIGKILL)
            child.wait(10)
        finally:
            if child.poll() is None:
                child.kill()
        assert child.returncode == -signal.SIGKILL
        stored = _rows(cache)
        assert 20 <= stored < 120, "the kill must land mid-run"

        resumed = jk.run_judges(pairs, jk.Judge("sim", "rafailov_tldr", base_url=url, seed=0),
                                concurrency=4, cache=cache, progress=False)
        assert len(resumed) == 120 and resumed["error"].isna().all()
        assert resumed.attrs["judgekit_run"]["cached"] == stored
        # the killed process's claims on its calls in flight were taken over at once (its
        # process is gone), not after their 30 s lease
        assert resumed.attrs["judgekit_run"]["elapsed_s"] < 15
        paid = server.paid_counts()
        assert len(paid) == 120                                   # every distinct call was made
        twice = sum(c - 1 for c in paid.values())
        assert twice <= 4                                         # at most the calls in flight
        assert server.stats["paid"] - 120 == twice

        requests = server.stats["requests"]
        again = jk.run_judges(pairs, jk.Judge("sim", "rafailov_tldr", base_url=url, seed=0),
                              cache=cache, progress=False)
        assert server.stats["requests"] == requests and again["cached"].all()
