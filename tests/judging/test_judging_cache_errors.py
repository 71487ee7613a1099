"""A cache that cannot be used fails before any call, with an error naming the file and the fix;
a write that fails mid-run loses no paid answer; a read-only cache can be used on purpose."""

import json
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

import judgekit as jk
from judgekit.exceptions import CacheError, CacheWarning

PAIRS = jk.sim.simulate_pairs(12, seed=2)


def _filled_cache(path, url):
    jk.run_judges(PAIRS.head(4), jk.Judge("sim", "mtbench_pair", base_url=url, seed=0),
                  cache=path, progress=False)
    jk.Cache(path).close()   # the last connection checkpoints: no -wal file left


def _damaged(tmp_path, url):
    good = tmp_path / "good.sqlite"
    _filled_cache(good, url)
    data = good.read_bytes()
    half = tmp_path / "half.sqlite"
    half.write_bytes(data[: len(data) // 2])
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database\n" * 300)
    (tmp_path / "dir.sqlite").mkdir()
    (tmp_path / "a-file").write_text("x")
    return {"truncated": (half, "damaged"), "not a database": (junk, "damaged"),
            "a directory": (tmp_path / "dir.sqlite", "is a directory"),
            "under a file": (tmp_path / "a-file" / "c.sqlite", "cannot create the folder")}


def test_unusable_cache_files_are_refused_before_any_call_naming_the_file_and_the_fix(tmp_path):
    server = jk.sim.SimServer(pairs=PAIRS)
    with server as url:
        cases = _damaged(tmp_path, url)
        server.reset_stats()
        judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)
        for label, (path, says) in cases.items():
            with pytest.raises(CacheError) as info:
                jk.run_judges(PAIRS, judge, cache=path, progress=False)
            message = str(info.value)
            assert str(path) in message and says in message, (label, message)
            assert "pass cache=" in message, (label, message)       # the fix
            assert isinstance(info.value, OSError)
        assert server.stats.get("requests", 0) == 0                # nothing was sent


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file modes; the RLIMIT test below "
                                              "covers an unwritable cache for root too")
def test_a_read_only_cache_file_is_refused_before_any_call(tmp_path):
    server = jk.sim.SimServer(pairs=PAIRS)
    path = tmp_path / "c.sqlite"
    with server as url:
        _filled_cache(path, url)
        os.chmod(path, 0o444)
        server.reset_stats()
        with pytest.raises(CacheError, match="cannot be written.*read_only=True"):
            jk.run_judges(PAIRS, jk.Judge("sim", "mtbench_pair", base_url=url, seed=0),
                          cache=path, progress=False)
        assert server.stats.get("requests", 0) == 0


# A child process whose files may not grow beyond a limit (RLIMIT_FSIZE binds root too): the
# cache opens and reads, and writing fails like a full disk.
CHILD = textwrap.dedent("""
    import json, os, resource, signal, sys, warnings
    import judgekit as jk
    url, cache, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
    pairs = jk.sim.simulate_pairs(12, seed=2)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            j = jk.run_judges(pairs, judge, cache=cache, concurrency=2, progress=False)
    except Exception as exc:
        print(json.dumps({"raised": type(exc).__name__, "message": str(exc)}))
    else:
        print(json.dumps({"keys": j.loc[j["verdict"].notna(), "request_key"].tolist(),
                          "cached": int(j["cached"].sum()), "report": j.attrs["judgekit_run"],
                          "warnings": [[w.category.__name__, str(w.message)] for w in caught]}))
""")


def _child(url, path, limit):
    out = subprocess.run([sys.executable, "-c", CHILD, url, str(path), str(limit)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_cache_that_cannot_grow_fails_before_any_call(tmp_path):
    server = jk.sim.SimServer(pairs=PAIRS)
    path = tmp_path / "c.sqlite"
    with server as url:
        _filled_cache(path, url)
        server.reset_stats()
        result = _child(url, path, 1000)        # not even one page fits in the write-ahead log
        assert server.stats.get("requests", 0) == 0
    assert result["raised"] == "CacheError"
    assert str(path) in result["message"] and "could not be written" in result["message"]


def test_a_write_failing_mid_run_returns_every_paid_answer_and_stops_sending(tmp_path):
    server = jk.sim.SimServer(pairs=PAIRS, latency=0.02)
    path = tmp_path / "c.sqlite"
    with server as url:
        _filled_cache(path, url)             # 8 of the 24 calls stored
        server.reset_stats()
        result = _child(url, path, 60_000)   # room for a few commits, then writes fail
        paid = server.stats["paid"]
    report = result["report"]
    stored = len(jk.Cache(path)) - 8
    # the failure came mid-run: some answers were stored, then sending stopped
    assert 0 < stored < paid < 16 and report["not_run_stopped"] == 16 - paid
    # every answer paid for came back, stored or not
    assert len(result["keys"]) == 8 + paid and report["paid"] == paid
    assert report["not_stored"] == paid - stored and "could not be written" in report["cache_error"]
    assert any(kind == "CacheWarning" and f"{paid - stored} paid answers" in text
               for kind, text in result["warnings"])


def test_a_read_only_cache_on_purpose_answers_what_it_holds_and_stores_nothing(tmp_path):
    server = jk.sim.SimServer(pairs=PAIRS)
    path = tmp_path / "c.sqlite"
    with server as url:
        _filled_cache(path, url)
        before = path.read_bytes()
        server.reset_stats()
        judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)
        with jk.Cache(path, read_only=True) as store, pytest.warns(CacheWarning, match="16 paid"):
            j = jk.run_judges(PAIRS, judge, cache=store, progress=False)
        assert server.stats["paid"] == 16
    assert j["cached"].sum() == 8 and j["verdict"].notna().all() and len(j) == 24
    assert path.read_bytes() == before and len(jk.Cache(path)) == 8
    with pytest.raises(CacheError, match="does not exist"):
        jk.Cache(tmp_path / "missing.sqlite", read_only=True)


def test_cache_errors_name_the_file_outside_runs_too(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"\x00garbage" * 1000)
    with pytest.raises(CacheError, match=str(junk)):
        jk.Cache(junk)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(CacheError, match="is a directory"):
            jk.Cache(tmp_path)


def test_threads_creating_one_new_cache_at_once_all_open_it(tmp_path):
    """Connections creating the same new file at once used to meet SQLite's stale-snapshot
    refusal, which skips the busy wait (16 of 200 trials failed): the tables are now created
    in one write transaction, retried."""
    import threading

    failures = []
    for trial in range(60):
        path = tmp_path / f"c{trial}.sqlite"

        def open_and_write(path=path):
            try:
                with jk.Cache(path) as c:
                    c.check_writable()
            except Exception as exc:  # collected and reported below
                failures.append(exc)

        threads = [threading.Thread(target=open_and_write) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not failures, failures[0]
