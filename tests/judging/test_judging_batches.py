"""Requests recorded in a batch that was not collected yet are not paid again: not by a second
submit, not by a live run, not by run_judges_batch (which collects them instead)."""

import warnings

import pytest

import judgekit as jk

PAIRS = jk.sim.simulate_pairs(20, seed=3)   # 40 requests (two orders)


def test_pending_batches_are_not_submitted_again_nor_sent_live(tmp_path):
    cache = tmp_path / "c.sqlite"
    server = jk.sim.SimServer(jk.sim.SimJudge(seed=1), pairs=PAIRS, batch_delay=0.5)
    with server as url:
        judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)
        first = jk.submit_batch(PAIRS, judge, cache=cache)
        with pytest.warns(RuntimeWarning, match=f"40 requests were not submitted.*{first}"):
            assert jk.submit_batch(PAIRS, judge, cache=cache) is None   # a re-run of the cell
        with pytest.warns(RuntimeWarning, match=f"40 requests were not sent.*{first}"):
            live = jk.run_judges(PAIRS, judge, cache=cache, progress=False)
        assert len(live) == 0 and live.attrs["judgekit_run"]["not_run_pending_batch"] == 40
        assert live.attrs["judgekit_run"]["pending_batches"] == [first]
        summary = jk.collect_batch(first, cache=cache, poll_interval=0.05)
        after = jk.run_judges(PAIRS, judge, cache=cache, progress=False)
        stats = server.stats
    assert summary["stored"] == 40 and after["cached"].all() and len(after) == 40
    assert stats["batch_requests"] == 40 and stats.get("requests", 0) == 0   # each paid once
    with jk.Cache(cache) as c:
        assert c.batches()["n_requests"].tolist() == [40]


def test_run_judges_batch_collects_an_earlier_pending_batch_instead_of_paying_again(tmp_path):
    cache = tmp_path / "c.sqlite"
    server = jk.sim.SimServer(jk.sim.SimJudge(seed=1), pairs=PAIRS, batch_delay=0.3)
    with server as url:
        judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)
        earlier = jk.submit_batch(PAIRS.head(10), judge, cache=cache)   # then the kernel died
        j = jk.run_judges_batch(PAIRS, judge, cache=cache, poll_interval=0.05, progress=False)
        stats = server.stats
    info = j.attrs["judgekit_batch"]
    assert [r["batch_id"] for r in info["resumed"]] == [earlier]
    assert info["resumed"][0]["stored"] == 20 and info["stored"] == 20   # the other 10 pairs
    assert stats["batch_requests"] == 40 and stats.get("requests", 0) == 0
    assert j.attrs["judgekit_run"]["called"] == 0 and len(j) == 40


def test_sending_pending_requests_again_is_explicit(tmp_path):
    cache = tmp_path / "c.sqlite"
    server = jk.sim.SimServer(pairs=PAIRS, batch_delay=5.0)
    with server as url:
        judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)
        jk.submit_batch(PAIRS.head(5), judge, cache=cache)
        with warnings.catch_warnings():
            warnings.simplefilter("error")       # asked for: no warning
            j = jk.run_judges(PAIRS.head(5), judge, cache=cache, progress=False,
                              pending_batches="send")
        assert len(j) == 10 and server.stats["requests"] == 10
        with pytest.raises(ValueError, match="pending_batches must be"):
            jk.run_judges(PAIRS, judge, cache=cache, pending_batches="wait")


def test_a_batch_leaves_out_requests_a_live_run_is_sending(tmp_path):
    from judgekit.judging.requests import build_tasks

    cache = tmp_path / "c.sqlite"
    with jk.sim.SimServer(pairs=PAIRS, batch_delay=0.05) as url:
        judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)
        keys = [t.key for t in build_tasks(PAIRS, [judge], ("ab", "ba"), 1, (False,), None)]
        with jk.Cache(cache) as c:    # a live run elsewhere holds 6 of them right now
            assert set(c.claim(keys[:6], "other-host|1|x", lease=60).values()) == {"mine"}
        batch_id = jk.submit_batch(PAIRS, judge, cache=cache)
        summary = jk.collect_batch(batch_id, cache=cache, poll_interval=0.05)
    assert summary["requests"] == 34
    with jk.Cache(cache) as c:
        assert c.claim(keys[:6], "me|2|y") == dict.fromkeys(keys[:6], "busy")   # still theirs
