"""The engine over real HTTP: the openai SDK against the simulated server the tests start."""

import asyncio
import logging
import re
import threading
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import special

import judgekit as jk

KEY = ["pair_id", "order", "id_swap", "repeat"]


def _first_logit(j):
    p_first = np.where(j["order"] == "ab", j["p_a"], 1 - j["p_a"])
    return special.logit(p_first)


def test_http_judgments_equal_the_in_memory_simulation_and_recover_the_biases(tmp_path):
    pairs = jk.sim.simulate_pairs(40, median_length=400, seed=3)
    sim = jk.sim.SimJudge(accuracy=0.7, quality_scale=0.3, position_bias=0.8, token_bias=-0.5,
                      length_bias=1.0, length_scale=300, flip_q=0.15, seed=11)
    expected = jk.sim.simulate_judgments(pairs, judge=sim, repeats=2, id_swap=(False, True)).judgments
    server = jk.sim.SimServer(sim, pairs=pairs)
    with server as url:
        judge = jk.Judge("sim", "mtbench_pair[noties]", base_url=url, seed=0)
        j = jk.run_judges(pairs, judge, repeats=2, id_swap=(False, True), concurrency=32,
                          cache=tmp_path / "c.sqlite", progress=False)
        assert server.stats["paid"] == 320
    assert len(j) == 320 and j["error"].isna().all()
    jk.validate_judgments(j, pairs)
    m = j.merge(expected, on=KEY, suffixes=("", "_mem"), validate="one_to_one")
    assert len(m) == 320
    assert (m["verdict"] == m["verdict_mem"]).all()
    np.testing.assert_allclose(m["p_a"], m["p_a_mem"], rtol=0, atol=1e-9)

    # the known biases, read back from the logprobs of the HTTP answers
    first = j[j["repeat"] == 0].assign(u=_first_logit(j[j["repeat"] == 0]))
    wide = first.pivot_table(index=["pair_id", "id_swap"], columns="order", values="u")
    s = wide["ab"] + wide["ba"]  # = 2 (position_bias + token_bias * tau)
    both = s.unstack("id_swap")
    np.testing.assert_allclose((both[False] + both[True]) / 4, 0.8, atol=1e-6)   # position bias
    np.testing.assert_allclose((both[False] - both[True]) / 4, -0.5, atol=1e-6)  # token bias
    d = (wide["ab"] - wide["ba"]).xs(False, level="id_swap") / 2  # = ±delta + L tanh(dlen / l)
    lab = pairs.set_index("pair_id").loc[d.index]
    X = np.column_stack([np.where(lab["label"] == "a", 1.0, -1.0),
                         np.tanh((lab["len_a"] - lab["len_b"]) / 300)])
    coef = np.linalg.lstsq(X, d.to_numpy(), rcond=None)[0]
    assert coef[1] == pytest.approx(1.0, abs=0.3)                              # length bias
    # flips across repeats at the rate given
    wide_k = j.pivot_table(index=["pair_id", "order", "id_swap"], columns="repeat",
                           values="verdict", aggfunc="first")
    disagree = (wide_k[0] != wide_k[1]).mean()
    assert disagree == pytest.approx(2 * 0.15 * 0.85, abs=0.1)


def test_every_bundled_template_round_trips_over_http():
    pairs = jk.sim.simulate_pairs(3, median_length=200, seed=5).assign(reference="Four.")
    sim = jk.sim.SimJudge(position_bias=0.3, seed=2)
    expected = jk.sim.simulate_judgments(pairs, judge=sim, id_swap=(False, True)).judgments
    names = list(jk.list_templates()["name"])
    with jk.sim.SimServer(sim, pairs=pairs) as url:
        judges = [jk.Judge("sim", name, base_url=url, seed=0) for name in names]
        j = jk.run_judges(pairs, judges, id_swap=(False, True), cache=False, progress=False)
    assert len(j) == len(names) * 12
    assert j["error"].isna().all(), j.loc[j["error"].notna(), ["template", "error"]]
    assert j["p_note"].isna().all() and j["p_a"].between(0, 1).all()
    for name, part in j.groupby("template"):
        m = part.merge(expected, on=KEY, suffixes=("", "_mem"))
        assert (m["verdict"] == m["verdict_mem"]).all(), name
        np.testing.assert_allclose(m["p_a"], m["p_a_mem"], atol=1e-9, err_msg=name)


def test_ties_and_temperature_driven_flips():
    pairs = jk.sim.simulate_pairs(25, seed=6)
    sim = jk.sim.SimJudge(tie_rate=0.3, flip_q=0.0, flip_q_per_temperature=0.4, seed=1)
    with jk.sim.SimServer(sim, pairs=pairs) as url:
        cold = jk.Judge("sim", "mtbench_pair", base_url=url, temperature=0.0, seed=0)
        hot = jk.Judge("sim", "mtbench_pair", base_url=url, temperature=1.0, seed=0)
        j = jk.run_judges(pairs, [cold, hot], repeats=3, cache=False, progress=False)
    assert (j["verdict"] == "tie").mean() == pytest.approx(0.3, abs=0.1)
    spread = j.groupby(["judge", "pair_id", "order"])["verdict"].nunique().groupby("judge").mean()
    assert spread[cold.id] == 1.0 and spread[hot.id] > 1.1


def test_nway_orders_notes_and_signal_detection():
    pairs = jk.sim.simulate_pairs(20, seed=7)
    pairs["response_c"] = pairs["response_a"].str[:50] + " (third answer)"
    sim = jk.sim.SimJudge(position_bias=1.5, quality_scale=0.5, seed=3,
                      sensitivities={"bandwagon": 3.0})
    with jk.sim.SimServer(sim, pairs=pairs) as url:
        judge = jk.Judge("sim", "nway", base_url=url, seed=0)
        j = jk.run_judges(pairs, judge, orders=("abc", "bca", "cab"), cache=False, progress=False)
        assert set(j["verdict"]) <= {"a", "b", "c"} and len(j) == 60
        np.testing.assert_allclose(j[["p_a", "p_b", "p_c"]].sum(axis=1), 1.0)
        picked_first = (j["verdict"] == j["order"].str[0]).mean()
        assert picked_first > 0.5  # primacy, 1/3 without bias

    def detect(system, user, first, second):
        # the note names the ID of the response the crowd prefers: +1 if it is shown first
        named = re.search(r"believe Assistant (\w+) is better", system)
        if named is None:
            return {}
        first_id = re.search(r"The Start of Assistant (\w+)'s Answer", user).group(1)
        return {"bandwagon": 1.0 if named.group(1) == first_id else -1.0}

    noted = pairs.assign(system_note="90% of people believe Assistant {id_b} is better.")
    with jk.sim.SimServer(sim, pairs=pairs, signal_detector=detect) as url:
        judge = jk.Judge("sim", "shen_hh", base_url=url, seed=0)
        plain = jk.run_judges(pairs, judge, id_swap=(False, True), cache=False, progress=False)
        pushed = jk.run_judges(noted, judge, id_swap=(False, True), cache=False, progress=False)
    m = plain.merge(pushed, on=KEY, suffixes=("", "_note"))
    # the note follows response b through orders and ID swaps, so p_a always drops
    assert (m["p_a_note"] < m["p_a"]).all()
    assert (m["verdict_note"] == "b").mean() > (m["verdict"] == "b").mean() + 0.2


def test_generic_completions_are_cached_and_handlers_answer_them(tmp_path):
    def rewrite(body):
        text = body["messages"][-1]["content"]
        return None if not text.startswith("Rewrite:") else text.upper()

    server = jk.sim.SimServer(handlers=[rewrite])
    with server as url:
        prompts = pd.DataFrame({"id": ["p1", "p2"], "prompt": ["Rewrite: one", "Rewrite: two"]})
        out = jk.complete(prompts, "sim-writer", base_url=url, cache=tmp_path / "c.sqlite",
                          repeats=2, seed=0, progress=False)
        assert out["text"].tolist() == ["REWRITE: ONE"] * 2 + ["REWRITE: TWO"] * 2
        before = server.stats["requests"]
        again = jk.complete(prompts, "sim-writer", base_url=url, cache=tmp_path / "c.sqlite",
                            repeats=2, seed=0, progress=False)
        assert server.stats["requests"] == before and again["cached"].all()
        assert again.attrs["judgekit_run"]["called"] == 0
        with pytest.warns(RuntimeWarning, match="1 calls ended in an error"):
            bad = jk.complete(["Something else"], "sim-writer", base_url=url, cache=False,
                              progress=False)
        assert bad["error"].iloc[0].startswith("api: HTTP 400") and bad["text"].isna().all()


FAULTS = dict(rate_429=0.08, rate_500=0.05, rate_503=0.05, rate_drop=0.05, rate_timeout=0.03,
              rate_malformed=0.04, rate_empty_choices=0.04, rate_missing_logprobs=0.05,
              rate_truncated=0.05, retry_after=0.01, stall_s=3.0, seed=4)


def test_faults_end_as_results_or_recorded_errors_and_nothing_is_paid_twice(tmp_path):
    pairs = jk.sim.simulate_pairs(50, seed=8)
    server = jk.sim.SimServer(jk.sim.SimJudge(seed=5), pairs=pairs, faults=FAULTS)
    cache = tmp_path / "c.sqlite"
    with server as url:
        judge = jk.Judge("sim", "rafailov_hh", base_url=url, seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            j = jk.run_judges(pairs, judge, repeats=2, concurrency=16, cache=cache, timeout=1.0,
                              backoff_base=0.01, max_retries=10, progress=False)
        run, stats = j.attrs["judgekit_run"], server.stats
        # none lost: one row per distinct request, each a verdict or a recorded error
        assert len(j) == 200 and j[KEY].drop_duplicates().shape[0] == 200
        assert (j["verdict"].notna() ^ j["error"].notna()).all()
        # every injected fault was seen and handled the way it should be
        for kind in ("fault_429", "fault_500", "fault_503", "fault_drop", "fault_timeout",
                     "fault_malformed", "fault_empty_choices", "fault_truncated",
                     "fault_missing_logprobs"):
            assert stats.get(kind, 0) > 0, kind
        assert (j["error"] == "api: response has no choices").sum() == stats["fault_empty_choices"]
        assert j["error"].str.startswith("api: malformed JSON", na=False).sum() == stats["fault_malformed"]
        assert j["error"].str.contains("truncated", na=False).sum() == stats["fault_truncated"]
        assert (j["p_note"] == "no logprobs in the response").sum() == stats["fault_missing_logprobs"]
        assert run["retries"] >= stats["fault_429"] + stats["fault_500"] + stats["fault_503"]
        # paid exactly once, except answers the client abandoned on timeout (counted, reported);
        # on a loaded machine a slow ordinary answer can time out too, hence >= / <=
        assert run["abandoned_timeouts"] >= stats["fault_timeout"]
        paid = server.paid_counts()
        assert len(paid) == 200
        assert 200 + stats["fault_timeout"] <= stats["paid"] <= 200 + run["abandoned_timeouts"]
        assert sum(c - 1 for c in paid.values()) <= run["abandoned_timeouts"]
        # a re-run pays for nothing: paid errors are cached too
        requests = stats["requests"]
        again = jk.run_judges(pairs, judge, repeats=2, cache=cache, progress=False)
        assert server.stats["requests"] == requests
        assert again.attrs["judgekit_run"]["called"] == 0
        pd.testing.assert_series_equal(again["verdict"], j["verdict"])


def test_budget_is_never_exceeded_with_many_calls_in_flight(tmp_path):
    # Many short calls finishing at once: a call's cost must be charged before any other call
    # can be sent against the money it freed (each answer is written to the cache in between).
    pairs = jk.sim.simulate_pairs(60, median_length=200, seed=22)
    prices = {"sim-paid": (1000.0, 1000.0)}
    with jk.sim.SimServer(pairs=pairs, latency=0.002) as url:
        judge = jk.Judge("sim-paid", "calibraeval_default", base_url=url)
        for budget in (1.0, 2.5, 4.0):
            with pytest.warns(RuntimeWarning, match="budget reached"):
                j = jk.run_judges(pairs, judge, budget_usd=budget, concurrency=32, prices=prices,
                                  cache=tmp_path / f"c{budget}.sqlite", progress=False)
            assert 0 < len(j) < 120
            assert j["cost_usd"].sum() <= budget


def test_budget_stops_cleanly_and_resuming_pays_nothing_twice(tmp_path):
    pairs = jk.sim.simulate_pairs(30, median_length=400, seed=9)
    server = jk.sim.SimServer(pairs=pairs, latency=0.01)
    prices = {"sim-paid": (1000.0, 1000.0)}  # about $0.1-0.3 a call
    cache = tmp_path / "c.sqlite"
    with server as url:
        judge = jk.Judge("sim-paid", "calibraeval_default", base_url=url)
        est = jk.estimate_cost(pairs, judge, prices=prices)
        assert est["requests"].iloc[0] == 60 and est["cost_usd_max"].iloc[0] > 3
        with pytest.warns(RuntimeWarning, match="budget reached"):
            j = jk.run_judges(pairs, judge, budget_usd=3.0, concurrency=4, cache=cache,
                              prices=prices, progress=False)
        run = j.attrs["judgekit_run"]
        assert 0 < len(j) < 60 and run["not_run_budget"] == 60 - len(j)
        assert run["cost_usd"] <= 3.0 and j["cost_usd"].sum() == pytest.approx(run["cost_usd"])
        # it stopped only when the rest of the budget could not cover a call's upper bound:
        # (UTF-8 bytes + 8 per message + 16) prompt tokens and max_tokens, at $1000 per 1M
        msgs = [judge.template.render_pair(r, order=o) for r in pairs.to_dict("records")
                for o in ("ab", "ba")]
        bounds = [(sum(len(m["content"].encode()) + 8 for m in ms) + 16 + judge.tokens) * 1e-3
                  for ms in msgs]
        assert 3.0 - run["cost_usd"] < max(bounds)
        est = jk.estimate_cost(pairs, judge, prices=prices, cache=cache)
        assert est["to_send"].iloc[0] == 60 - len(j)
        full = jk.run_judges(pairs, judge, cache=cache, prices=prices, progress=False)
        assert len(full) == 60 and full["cached"].sum() == len(j)
        assert max(server.paid_counts().values()) == 1 and server.stats["paid"] == 60
        with pytest.raises(ValueError, match="needs a price"):
            jk.run_judges(pairs, jk.Judge("unpriced", base_url=url), budget_usd=1.0, cache=False)


def test_replay_backend_answers_from_stored_judgments():
    pairs = jk.sim.simulate_pairs(20, seed=10)
    stored = jk.sim.simulate_judgments(pairs, position_bias=1.0, repeats=2, seed=3).judgments
    with jk.sim.SimServer(pairs=pairs, replay=stored) as url:
        judge = jk.Judge("sim", "rafailov_tldr", base_url=url, seed=0)
        j = jk.run_judges(pairs, judge, repeats=2, cache=False, progress=False)
    m = j.merge(stored, on=KEY, suffixes=("", "_stored"))
    assert len(m) == 80 and (m["verdict"] == m["verdict_stored"]).all()
    np.testing.assert_allclose(m["p_a"], m["p_a_stored"], atol=1e-9)


def test_batch_api_folds_into_the_cache_and_the_run_then_sends_nothing(tmp_path):
    pairs = jk.sim.simulate_pairs(15, seed=11)
    server = jk.sim.SimServer(jk.sim.SimJudge(seed=2), pairs=pairs, batch_delay=0.05)
    cache = tmp_path / "c.sqlite"
    with server as url:
        judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)
        batch_id = jk.submit_batch(pairs.head(10), judge, cache=cache)
        assert batch_id.startswith("batch_")
        summary = jk.collect_batch(batch_id, cache=cache, poll_interval=0.05)
        assert summary == {"batch_id": batch_id, "status": "completed", "requests": 20,
                           "stored": 20, "already_cached": 0, "failed": 0, "missing": 0,
                           "unreadable": 0}
        assert server.stats["batch_requests"] == 20 and server.stats.get("requests", 0) == 0
        j = jk.run_judges_batch(pairs, judge, cache=cache, poll_interval=0.05, progress=False)
        assert j.attrs["judgekit_batch"]["stored"] == 10          # only the 5 new pairs
        assert j.attrs["judgekit_run"]["called"] == 0 and len(j) == 30
        assert server.stats.get("requests", 0) == 0
        with jk.Cache(cache) as c:
            assert set(c.batches()["status"]) == {"completed"}
            assert (c.to_frame()["source"] == "batch").all()
    direct = jk.sim.simulate_judgments(pairs, judge=jk.sim.SimJudge(seed=2)).judgments
    m = j.merge(direct, on=KEY, suffixes=("", "_mem"))
    assert (m["verdict"] == m["verdict_mem"]).all()


def test_works_inside_a_running_event_loop_like_jupyter():
    pairs = jk.sim.simulate_pairs(5, seed=12)
    with jk.sim.SimServer(pairs=pairs) as url:
        judge = jk.Judge("sim", "wang_tldr", base_url=url, seed=0)

        async def notebook_cell():
            sync = jk.run_judges(pairs, judge, cache=False, progress=False)   # loop is running
            awaited = await jk.arun_judges(pairs, judge, cache=False, progress=False)
            return sync, awaited

        sync, awaited = asyncio.run(notebook_cell())
    pd.testing.assert_frame_equal(sync.drop(columns="latency_s"), awaited.drop(columns="latency_s"))


def test_concurrent_writers_share_one_cache(tmp_path):
    pairs = jk.sim.simulate_pairs(40, seed=13)
    server = jk.sim.SimServer(pairs=pairs, latency=0.005)
    path = tmp_path / "shared.sqlite"
    with server as url:
        judge = jk.Judge("sim", "shen_hh", base_url=url, seed=0)
        outs, errors = [], []

        def worker(part):
            try:
                with jk.Cache(path) as c:  # its own connection
                    outs.append(jk.run_judges(part, judge, cache=c, progress=False))
            except Exception as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(pairs.iloc[s],))
                   for s in (slice(0, 30), slice(10, 40), slice(0, 40))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors
    with jk.Cache(path) as c:
        assert len(c) == 80
        out = tmp_path / "calls.parquet"
        c.export(out)
        assert len(pd.read_parquet(out)) == 80
        c.export(tmp_path / "calls.csv", with_bodies=False)
        with pytest.raises(ValueError, match="parquet or .csv"):
            c.export(tmp_path / "calls.xlsx")


def test_the_api_key_never_reaches_cache_logs_or_judgments(tmp_path):
    import hashlib

    secret = "sk-" + "judgekit-test-9f8e7d6c5b4a"  # a made-up key, split so secret scanners stay quiet
    pairs = jk.sim.simulate_pairs(12, seed=14)
    log_file = tmp_path / "debug.log"
    handler = logging.FileHandler(log_file)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    faults = {"rate_429": 0.2, "rate_500": 0.1, "retry_after": 0.01}
    path = tmp_path / "c.sqlite"
    blobs = {}
    try:
        server = jk.sim.SimServer(pairs=pairs, faults=faults)
        with server as url, jk.Cache(path) as cache:   # held open: the WAL file stays on disk
            judge = jk.Judge("sim", "mtbench_pair", base_url=url)
            j = jk.run_judges(pairs, judge, repeats=2, api_key=secret, cache=cache,
                              backoff_base=0.01, progress=False)
            with pytest.warns(RuntimeWarning, match="ended in an error"):
                out = jk.complete(["hello"], "sim", base_url=url, api_key=secret, cache=cache,
                                  progress=False)  # an error answer (no handler)
            blobs.update({p.name: p.read_bytes() for p in tmp_path.glob("c.sqlite*")})
            cache.export(tmp_path / "export.csv")
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        handler.close()
    # the key really was in use: every request carried it
    digests = server.credential_digests()
    assert digests == {hashlib.sha256(secret.encode()).hexdigest(): server.stats["requests"]}
    assert j["error"].isna().all() and out["error"].notna().all()
    assert {"c.sqlite", "c.sqlite-wal"} <= set(blobs) and len(blobs["c.sqlite-wal"]) > 0
    assert log_file.stat().st_size > 0
    blobs["export.csv"] = (tmp_path / "export.csv").read_bytes()
    blobs["debug.log"] = log_file.read_bytes()
    blobs["judgments"] = j.to_csv().encode() + repr(j.attrs).encode()
    blobs["completions"] = out.to_csv().encode() + repr(out.attrs).encode()
    for name, blob in blobs.items():
        assert secret.encode() not in blob, name
    # the search itself finds a key that a cache row does hold (stored text is not encoded away)
    with jk.Cache(tmp_path / "planted.sqlite") as planted:
        planted.put({"key": "k", "endpoint": "e", "model": "m", "repeat": 0, "request": "{}",
                     "status": "error", "source": "live", "error": f"bad key {secret}"})
    assert secret.encode() in (tmp_path / "planted.sqlite").read_bytes()


def test_bad_input_is_refused_with_clear_errors():
    pairs = jk.sim.simulate_pairs(3, seed=15)
    judge = jk.Judge("sim", "nway", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match="response_c"):
        jk.run_judges(pairs, judge, orders=("abc",), cache=False)
    with pytest.raises(ValueError, match="same number of responses"):
        jk.run_judges(pairs, judge, orders=("ab", "abc"), cache=False)
    with pytest.raises(ValueError, match="at most 2 responses"):
        jk.run_judges(pairs.assign(response_c="x"), jk.Judge("m", "shen_hh"), orders=("abc",),
                      cache=False)
    with pytest.raises(ValueError, match="distinct ids"):
        jk.run_judges(pairs, [judge, judge], cache=False)
    with pytest.raises(ValueError, match="repeats"):
        jk.run_judges(pairs, judge, repeats=0, cache=False)
    with pytest.raises(ValueError, match="needs the pairs column 'reference'"):
        jk.run_judges(pairs, jk.Judge("m", "mtbench_math", base_url="http://127.0.0.1:9/v1"),
                      cache=False)
    with pytest.raises(ValueError, match="through the Judge's own fields"):
        jk.Judge("m", extra={"temperature": 1})
    assert jk.Judge("m", "calibraeval_default").tokens == 16
    assert jk.Judge("gpt-4o-2024-08-06").id == "gpt-4o-2024-08-06/mtbench_pair/T0"


def test_serve_sim_config_builds_the_server(tmp_path):
    from judgekit.sim import server_from_config

    pairs = jk.sim.simulate_pairs(4, seed=16)
    pairs.to_parquet(tmp_path / "pairs.parquet")
    config = tmp_path / "sim.toml"
    config.write_text(
        f'pairs = "{tmp_path / "pairs.parquet"}"\nlatency = 0.0\n'
        '[judges.strict]\naccuracy = 0.9\nseed = 1\n[judges.biased]\nposition_bias = 3.0\n'
        '[faults]\nrate_429 = 0.2\nretry_after = 0.01\n'
    )
    server = server_from_config(config)
    assert server.faults.rate_429 == 0.2 and server.judge_for("biased").position_bias == 3.0
    with server as url:
        judges = [jk.Judge(m, "shen_hh", base_url=url, seed=0) for m in ("strict", "biased")]
        j = jk.run_judges(pairs, judges, cache=False, progress=False, backoff_base=0.01)
    first = j.assign(first=lambda d: d["verdict"] == d["order"].str[0]).groupby("model")["first"].mean()
    assert first["biased"] >= first["strict"] and j["error"].isna().all()
    with pytest.raises(ValueError, match="unknown SimJudge parameters \\['bias'\\]"):
        server_from_config({"judge": {"bias": 1}})
    with pytest.raises(ValueError, match="unknown keys"):
        server_from_config({"judgez": {}})


def test_clients_passed_in_are_used_with_their_base_url_and_key():
    import openai

    pairs = jk.sim.simulate_pairs(4, seed=17)
    server = jk.sim.SimServer(pairs=pairs)
    with server as url:
        judge = jk.Judge("sim", "calibraeval_v1", seed=0)       # no base_url: the client's
        a = jk.run_judges(pairs, judge, client=openai.AsyncOpenAI(base_url=url, api_key="k1"),
                          cache=False, progress=False)
        b = jk.run_judges(pairs, judge, client=openai.OpenAI(base_url=url, api_key="k2"),
                          cache=False, progress=False)
    assert server.stats["paid"] == 16
    pd.testing.assert_frame_equal(a.drop(columns="latency_s"), b.drop(columns="latency_s"))
    assert a["request_key"].nunique() == 8


def test_key_like_strings_are_scrubbed_from_error_messages_and_empty_runs_are_tables():
    from judgekit.judging.calls import scrub as _scrub

    msg = "Incorrect API key provided: sk-proj-abcdef****wxyz. You can find your API key at ..."
    assert "abcdef" not in _scrub(msg) and "sk-***" in _scrub(msg)
    assert _scrub("token my-secret-value failed", ["my-secret-value"]) == "token *** failed"
    pairs = jk.sim.simulate_pairs(3, seed=18)
    with jk.sim.SimServer(pairs=pairs) as url:
        judge = jk.Judge("priced", "shen_hh", base_url=url)
        with pytest.warns(RuntimeWarning, match="budget reached"):
            j = jk.run_judges(pairs, judge, budget_usd=0.0, prices={"priced": (1, 1)},
                              cache=False, progress=False)
    assert len(j) == 0 and set(jk.schema.JUDGMENT_COLUMNS) <= set(j.columns)
    assert j.attrs["judgekit_run"]["not_run_budget"] == 6


def test_retry_after_is_honoured_instead_of_the_backoff(caplog):
    import email.utils
    import time

    from judgekit.judging.calls import retry_after as _retry_after

    assert _retry_after({"retry-after": "2"}) == 2.0
    assert _retry_after({"retry-after-ms": "150", "retry-after": "9"}) == 0.15
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < _retry_after({"retry-after": later}) <= 30
    assert _retry_after({}) is None
    assert _retry_after({"retry-after": "soon"}) is None  # unreadable: back off instead
    assert _retry_after({"retry-after-ms": "x"}) is None

    # eight requests, so that (with 429 at 70 % of attempts) some are refused whatever the seed:
    # the chance that none is refused is 0.3 ** 8 < 1e-4
    pairs = jk.sim.simulate_pairs(8, seed=19)
    server = jk.sim.SimServer(pairs=pairs, faults={"rate_429": 0.7, "retry_after": 0.2, "seed": 4})
    with server as url, caplog.at_level(logging.DEBUG, logger="judgekit.engine"):
        j = jk.run_judges(pairs, jk.Judge("sim", "shen_hh", base_url=url), orders=("ab",),
                          cache=False, progress=False, backoff_base=3.0)
    n429 = server.stats.get("fault_429", 0)
    assert n429 >= 1 and j["error"].isna().all() and j.attrs["judgekit_run"]["retries"] == n429
    # each wait is the server's Retry-After (0.2 s) plus at most 10 % + 10 ms of jitter, not a
    # full-jitter draw from the 3 s backoff: one wait per 429 the client received (once, with
    # aiohttp 3.9.0 at both ends, a 429 the server sent never arrived; the client waited out its
    # timeout and retried, which is not a Retry-After wait)
    delays = [float(m) for m in re.findall(r"retrying a call in ([0-9.]+) s after: HTTP 429",
                                           caplog.text)]
    received = j.attrs["judgekit_run"]["rate_limited"]
    assert received >= 1 and len(delays) == received
    assert all(0.2 <= d <= 0.2 + 0.02 + 0.01 + 0.005 for d in delays), delays


def test_failed_batch_requests_are_reported_and_not_cached(tmp_path):
    pairs = jk.sim.simulate_pairs(2, seed=20)
    server = jk.sim.SimServer({"known": jk.sim.SimJudge()}, pairs=pairs, batch_delay=0.01)
    with server as url:
        judge = jk.Judge("unknown", "shen_hh", base_url=url)
        with pytest.warns(RuntimeWarning) as record:
            j = jk.run_judges_batch(pairs, judge, cache=tmp_path / "c.sqlite", poll_interval=0.02,
                                    progress=False)
    messages = " ".join(str(w.message) for w in record)
    assert "4 requests unanswered" in messages and "ended in an error" in messages
    assert j.attrs["judgekit_batch"]["failed"] == 4
    assert j["error"].str.contains("no simulated judge for model 'unknown'").all()
    with jk.Cache(tmp_path / "c.sqlite") as c:
        assert len(c) == 0


def test_a_stored_answer_of_odd_shape_is_a_recorded_error_not_a_crash(tmp_path):
    import sqlite3

    pairs = jk.sim.simulate_pairs(3, seed=23)
    path = tmp_path / "c.sqlite"
    with jk.sim.SimServer(pairs=pairs) as url:
        judge = jk.Judge("sim", "shen_hh", base_url=url, seed=0)
        first = jk.run_judges(pairs, judge, cache=path, progress=False)
        keys = first["request_key"].tolist()
        odd = ['{"choices": ["not an object"]}',
               '{"choices": [{"message": {"content": "[[A]]"}, "logprobs": ["x"]}]}']
        with sqlite3.connect(path) as conn:
            for key, body in zip(keys, odd):
                conn.execute("UPDATE responses SET response = ? WHERE key = ?", (body, key))
        again = jk.run_judges(pairs, judge, cache=path, progress=False)
    assert again.attrs["judgekit_run"]["called"] == 0 and len(again) == 6
    row0, row1 = again.set_index("request_key").loc[keys[:2]].to_dict("records")
    assert row0["verdict"] is None and row0["error"].startswith("api: unreadable response")
    assert row1["verdict"] is not None and row1["p_note"].startswith("unreadable logprobs")


def test_serve_sim_process_answers_and_stops_on_sigterm():
    import json
    import signal
    import subprocess
    import sys

    import openai

    proc = subprocess.Popen([sys.executable, "-m", "judgekit.cli", "serve-sim", "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        url = line.split(" at ", 1)[1].split()[0]
        models = openai.OpenAI(base_url=url, api_key="sim").models.list()
        assert [m.id for m in models.data] == ["*"]
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert json.loads(out.strip().splitlines()[-1].split("served: ", 1)[1]) == {}
