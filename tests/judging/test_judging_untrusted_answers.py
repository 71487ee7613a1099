"""What an endpoint answers is untrusted input: odd usage or content never aborts a run after
paying, never lowers the spend, and calls that may have been billed without an answer count
against the budget. The bill is checked against the simulated server's own count of what it
billed (its true usage of every answer it generated)."""

import warnings

import pytest

import judgekit as jk

PRICES = {"sim-paid": (1000.0, 1000.0)}   # $0.001 a token: a call costs about $0.1-0.3


def _billed(stats):
    return (stats.get("billed_prompt_tokens", 0) + stats.get("billed_completion_tokens", 0)) / 1000


@pytest.mark.parametrize("fault", ["usage_text", "usage_invalid", "usage_negative"])
def test_odd_usage_never_aborts_a_paid_run_and_the_answers_are_kept(fault, tmp_path):
    pairs = jk.sim.simulate_pairs(6, seed=4)
    server = jk.sim.SimServer(pairs=pairs, faults={f"rate_{fault}": 1.0})
    cache = tmp_path / "c.sqlite"
    with server as url:
        judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)
        j = jk.run_judges(pairs, judge, cache=cache, progress=False)
        stats = server.stats
        again = jk.run_judges(pairs, judge, cache=cache, progress=False)
        assert server.stats["requests"] == stats["requests"]      # nothing paid twice
    assert len(j) == 12 and j["verdict"].notna().all() and again["cached"].all()
    assert stats[f"fault_{fault}"] == 12 and stats["paid"] == 12
    if fault == "usage_text":   # numbers written as text are read
        assert j["prompt_tokens"].sum() == stats["billed_prompt_tokens"]
        assert j.attrs["judgekit_run"]["usage_missing"] == 0
    else:                       # not believable: no count, no cost
        assert j["prompt_tokens"].isna().all() and j["cost_usd"].isna().all()
        assert j.attrs["judgekit_run"]["usage_missing"] == 12


def test_negative_usage_does_not_lower_the_spend(tmp_path):
    pairs = jk.sim.simulate_pairs(30, seed=9)
    server = jk.sim.SimServer(pairs=pairs, latency=0.01, faults={"rate_usage_negative": 1.0})
    with server as url:
        judge = jk.Judge("sim-paid", "calibraeval_default", base_url=url)
        with pytest.warns(RuntimeWarning, match="budget reached"):
            j = jk.run_judges(pairs, judge, budget_usd=3.0, prices=PRICES, concurrency=4,
                              cache=False, progress=False)
        billed = _billed(server.stats)
    run = j.attrs["judgekit_run"]
    assert run["not_run_budget"] > 0 and run["cost_usd"] == 0.0
    assert 0 < billed <= 3.0                    # what the server billed stayed within the budget
    assert run["unconfirmed_usd"] >= billed     # and the report bounds it
    assert not (j["cost_usd"] < 0).any()


def test_answers_billed_then_dropped_count_against_the_budget_and_are_reported():
    pairs = jk.sim.simulate_pairs(40, median_length=200, seed=4)
    server = jk.sim.SimServer(pairs=pairs, latency=0.01,
                          faults={"rate_drop_paid": 0.6, "seed": 3})
    with server as url:
        judge = jk.Judge("sim-paid", "calibraeval_default", base_url=url, seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            j = jk.run_judges(pairs, judge, budget_usd=10.0, prices=PRICES, concurrency=8,
                              cache=False, progress=False, backoff_base=0.01, backoff_max=0.05)
        stats = server.stats
    run = j.attrs["judgekit_run"]
    billed = _billed(stats)
    assert stats["fault_drop_paid"] > 0 and run["dropped_connections"] == stats["fault_drop_paid"]
    assert billed <= 10.0       # the budget held, drops included (the old engine: $23 billed)
    assert run["cost_usd"] + run["unconfirmed_usd"] >= billed   # the report covers the bill
    assert run["cost_usd"] == pytest.approx(j["cost_usd"].sum())
    assert run["not_run_budget"] > 0


@pytest.mark.parametrize("fault,verdicts", [("content_parts", 12), ("content_null", 0)])
def test_content_as_parts_or_null_is_read_or_recorded_not_a_crash(fault, verdicts, tmp_path):
    pairs = jk.sim.simulate_pairs(6, seed=4)
    server = jk.sim.SimServer(pairs=pairs, faults={f"rate_{fault}": 1.0},
                          handlers=[lambda body: "hello back"])
    with server as url:
        judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            j = jk.run_judges(pairs, judge, cache=tmp_path / "c.sqlite", progress=False)
            out = jk.complete(["hello"], "sim", base_url=url, cache=False, progress=False)
    assert len(j) == 12 and j["verdict"].notna().sum() == verdicts
    if verdicts == 0:
        assert j["error"].str.startswith("parse:").all()
    assert out["text"].tolist() == ["hello back" if verdicts else None]   # completions too
