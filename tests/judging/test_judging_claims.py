"""Several processes running the same job on one cache pay each distinct call once, and every
process returns exactly what the cache holds. Real processes, real SQLite, real HTTP."""

import json
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pandas as pd

import judgekit as jk
from judgekit.judging.cache import Cache

# A judge sampled at T=1 with no seed: the simulated server answers the k-th identical request
# with its k-th draw, so a call paid twice would (often) come back with another verdict.
SIM = jk.sim.SimJudge(flip_q=0.4, seed=9)
CHILD = textwrap.dedent("""
    import sys, warnings
    import judgekit as jk
    url, cache, out = sys.argv[1:4]
    warnings.simplefilter("ignore")
    pairs = jk.sim.simulate_pairs(60, seed=5)
    judge = jk.Judge("sim", "mtbench_pair", base_url=url, temperature=1.0)
    print("ready", flush=True)
    sys.stdin.readline()                       # start together
    j = jk.run_judges(pairs, judge, cache=cache, concurrency=4, progress=False)
    j.to_parquet(out)
    print(j.attrs["judgekit_run"]["called"], j.attrs["judgekit_run"]["cached_elsewhere"], flush=True)
""")
COLUMNS = ["request_key", "verdict", "p_a", "raw"]


def test_three_processes_on_one_cache_pay_each_call_once_and_return_what_it_holds(tmp_path):
    pairs = jk.sim.simulate_pairs(60, seed=5)
    cache = tmp_path / "shared.sqlite"
    server = jk.sim.SimServer(SIM, pairs=pairs, latency=0.03)
    with server as url:
        procs = [subprocess.Popen([sys.executable, "-c", CHILD, url, str(cache),
                                   str(tmp_path / f"p{i}.parquet")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                 for i in range(3)]
        try:
            for p in procs:
                assert p.stdout.readline().strip() == "ready"
            for p in procs:
                p.stdin.write("go\n")
                p.stdin.flush()
            counts = [tuple(map(int, p.stdout.readline().split())) for p in procs]
            for p in procs:
                assert p.wait(120) == 0
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
        paid = server.paid_counts()
        requests = server.stats["requests"]
        rerun = jk.run_judges(pairs, jk.Judge("sim", "mtbench_pair", base_url=url, temperature=1.0),
                              cache=cache, progress=False)
        assert server.stats["requests"] == requests and rerun["cached"].all()
    # each distinct call was paid once, by one of the processes
    assert len(paid) == 120 and set(paid.values()) == {1}
    assert sum(called for called, _ in counts) == 120
    # they really ran at the same time: some answers came from another process's calls
    assert sum(elsewhere for _, elsewhere in counts) > 0
    expected = rerun[COLUMNS].sort_values("request_key").reset_index(drop=True)
    for i in range(3):
        got = pd.read_parquet(tmp_path / f"p{i}.parquet")[COLUMNS]
        pd.testing.assert_frame_equal(got.sort_values("request_key").reset_index(drop=True),
                                      expected, check_dtype=False)


def _claim(cache_path, keys, owner, expires):
    with Cache(cache_path) as c, c._sql("test", transaction=True) as conn:
        conn.executemany("INSERT OR REPLACE INTO claims (key, owner, expires) VALUES (?, ?, ?)",
                         [(k, owner, expires) for k in keys])


def test_a_claim_held_elsewhere_is_waited_for_and_a_dead_claim_is_taken_over(tmp_path):
    pairs = jk.sim.simulate_pairs(3, seed=6)
    cache = tmp_path / "c.sqlite"
    server = jk.sim.SimServer(SIM, pairs=pairs)
    with server as url:
        judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)
        tasks_keys = _keys(pairs, judge)
        # another live run (on another machine) holds the first two calls; a process on this
        # machine that no longer exists holds the third
        _claim(cache, tasks_keys[:2], "other-host|1234|abc", time.time() + 300)
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True).stdout.strip()
        _claim(cache, tasks_keys[2:3], f"{socket.gethostname()}|{dead}|xyz", time.time() + 300)

        # the other run stores its answers a moment later (its own row, with its own text)
        def other_run_answers():
            time.sleep(1.0)
            with Cache(cache) as c:
                for k in tasks_keys[:2]:
                    c.put({"key": k, "endpoint": url, "model": "sim", "repeat": 0, "request": "{}",
                           "response": json.dumps({"choices": [{"message": {
                               "content": "Stored by the other run. [[A]]"}}]}),
                           "status": "ok", "source": "live"}, owner="other-host|1234|abc")

        writer = threading.Thread(target=other_run_answers)
        writer.start()
        j = jk.run_judges(pairs, judge, cache=cache, progress=False)
        writer.join()
    run = j.attrs["judgekit_run"]
    assert run["called"] == 4 and run["cached_elsewhere"] == 2   # the dead claim was taken over
    assert server.stats["paid"] == 4
    mine = j.set_index("request_key").loc[tasks_keys[:2]]
    assert (mine["raw"] == "Stored by the other run. [[A]]").all() and mine["cached"].all()
    with Cache(cache) as c, c._sql("test") as conn:
        assert conn.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0   # all released


def test_an_expired_lease_is_taken_over_and_claims_are_renewed_while_in_flight(tmp_path):
    from judgekit.judging.cache import new_owner

    path = tmp_path / "c.sqlite"
    with Cache(path) as c:
        me, other = new_owner(), "other-host|1|x"
        assert c.claim(["a", "b"], other, lease=0.2) == {"a": "mine", "b": "mine"}
        assert c.claim(["a", "b", "c"], me) == {"a": "busy", "b": "busy", "c": "mine"}
        time.sleep(0.3)                                   # the other run's lease runs out
        assert c.claim(["a"], me) == {"a": "mine"}
        c.renew(other, lease=60)                          # still alive: it renews what it holds
        assert c.claim(["b"], me) == {"b": "busy"}
        assert c.put({"key": "b", "endpoint": "e", "model": "m", "repeat": 0, "request": "{}",
                      "status": "ok", "source": "live"}, owner=other)
        assert c.claim(["b"], me) == {"b": "stored"}
        c.release(me)
        with c._sql("test") as conn:
            assert conn.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0


def _keys(pairs, judge):
    from judgekit.judging.requests import build_tasks

    return [t.key for t in build_tasks(pairs, [judge], ("ab", "ba"), 1, (False,), None)]
