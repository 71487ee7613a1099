"""Every argument of a run is checked before the first call: a mistake costs nothing."""

import math

import pytest

import judgekit as jk

PAIRS = jk.sim.simulate_pairs(4, seed=15)

BAD_OPTIONS = [
    ({"orders": ("ab", "ab")}, "orders repeat"),
    ({"orders": "ab"}, "got the string 'ab'"),
    ({"id_swap": (True, True)}, "id_swap repeats"),
    ({"id_swap": "yes"}, "id_swap must be"),
    ({"repeats": True}, "repeats must be an integer"),
    ({"concurrency": 0}, "concurrency must be an integer >= 1"),
    ({"concurrency": 2.5}, "concurrency must be an integer"),
    ({"budget_usd": -1}, "budget_usd must be a finite number >= 0"),
    ({"budget_usd": math.nan}, "budget_usd must be a finite number"),
    ({"timeout": 0}, "timeout must be a finite number > 0"),
    ({"max_retries": -1}, "max_retries must be an integer >= 0"),
    ({"backoff_base": -0.5}, "backoff_base must be"),
    ({"backoff_base": 2.0, "backoff_max": 1.0}, "backoff_max .* must be >= backoff_base"),
    ({"prices": {"sim": "cheap"}}, "price of 'sim' must be"),
    ({"prices": [("sim", 1, 2)]}, "prices must be a mapping"),
    ({"retry_errors": "yes"}, "retry_errors must be True or False"),
    ({"progress": "no"}, "progress must be True or False"),
    ({"cache": 123}, "cache must be True"),
    ({"api_key": 123}, "api_key must be a string"),
    ({"client": "http://localhost:8000/v1"}, "client must be an openai"),
    ({"rpm": 0}, "rpm must be an integer >= 1"),
    ({"tpm": 1.5}, "tpm must be an integer"),
    ({"rpm": {"http://elsewhere.example/v1": 10}}, "rpm names endpoints the run does not call"),
    ({"rate_window": 0}, "rate_window must be a finite number > 0"),
    ({"pending_batches": "later"}, "pending_batches must be"),
    ({"transport": "httpx"}, "transport must be one of"),
]


def test_bad_arguments_are_refused_before_anything_is_sent(tmp_path):
    server = jk.sim.SimServer(pairs=PAIRS)
    with server as url:
        judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)
        for options, message in BAD_OPTIONS:
            with pytest.raises(ValueError, match=message):
                jk.run_judges(PAIRS, judge, **{"cache": tmp_path / "c.sqlite", "progress": False,
                                               **options})
        with pytest.raises(TypeError, match="unexpected keyword"):
            jk.run_judges(PAIRS, judge, cahce=False)
        # the same checks for the other entry points
        with pytest.raises(ValueError, match="orders repeat"):
            jk.estimate_cost(PAIRS, judge, orders=("ab", "ab"))
        with pytest.raises(ValueError, match="timeout must be"):
            jk.complete(["hi"], "sim", base_url=url, timeout=-1)
        with pytest.raises(ValueError, match="repeats must be"):
            jk.complete(["hi"], "sim", base_url=url, repeats=0)
        with pytest.raises(TypeError, match=r"unknown keywords \['budget'\]"):
            jk.run_judges_batch(PAIRS, judge, cache=tmp_path / "b.sqlite", budget=1.0)
        with pytest.raises(ValueError, match="concurrency must be"):
            jk.run_judges_batch(PAIRS, judge, cache=tmp_path / "b.sqlite", concurrency=0)
        with pytest.raises(ValueError, match="poll_interval must be"):
            jk.run_judges_batch(PAIRS, judge, cache=tmp_path / "b.sqlite", poll_interval=0)
        with pytest.raises(ValueError, match="orders repeat"):
            jk.submit_batch(PAIRS, judge, orders=("ba", "ba"), cache=tmp_path / "b.sqlite")
        stats = server.stats
    assert stats.get("requests", 0) == 0 and stats.get("batch_requests", 0) == 0
    assert not (tmp_path / "c.sqlite").exists()


def test_a_judge_checks_its_own_fields():
    for fields, message in [
        ({"temperature": "0.7"}, "temperature must be a finite number"),
        ({"temperature": -1}, "temperature must be"),
        ({"max_tokens": 0}, "max_tokens must be an integer >= 1"),
        ({"top_logprobs": 21}, r"top_logprobs must be an integer in 0..20"),
        ({"seed": 1.5}, "seed must be an integer"),
        ({"logprobs": "yes"}, "logprobs must be True or False"),
        ({"base_url": "localhost:8000/v1"}, "must start with http"),
        ({"base_url": "https://h.example/v1?api-version=1&api-key=abc"},
         r"must not carry a query string.*api-key=%2A%2A%2A"),   # and the key is not shown
        ({"base_url": "https://h.example/v1#frag"}, "must not carry a query string or fragment"),
        ({"extra": ["top_p"]}, "extra must be a mapping"),
        ({"extra": {"seed": 3}}, "through the Judge's own fields"),
    ]:
        with pytest.raises(ValueError, match=message):
            jk.Judge("m", **fields)
    # what it accepts, it keeps as plain Python numbers
    import numpy as np

    judge = jk.Judge("m", seed=np.int64(3), max_tokens=np.int32(8))
    assert type(judge.seed) is int and judge.body([], 1)["seed"] == 4


def test_base_urls_that_cannot_reach_chat_completions_are_refused(monkeypatch):
    pairs = jk.sim.simulate_pairs(2, seed=0)
    with pytest.raises(ValueError, match="base_url must not carry a query string"):
        jk.complete(["hi"], "m", base_url="http://127.0.0.1:9/v1?x=1", cache=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1?api-version=2")
    with pytest.raises(ValueError, match="OPENAI_BASE_URL must not carry a query string"):
        jk.run_judges(pairs, jk.Judge("m", "shen_hh"), cache=False, progress=False)
