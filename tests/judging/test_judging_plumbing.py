"""One declaration per thing in the engine: the run settings are RunConfig's fields (seen by
help(), editors and the error for a wrong keyword), one expansion makes the requests of live runs,
batches and cost estimates, and the transports are found by name in one registry."""

import inspect
import typing
from dataclasses import fields

import pytest

import judgekit as jk
from judgekit.judging import config as run_config
from judgekit.judging import transport as transports
from judgekit.judging.lean import LeanTransport
from judgekit.judging.requests import RequestPlan, build_tasks, check_swaps

PAIRS = jk.sim.simulate_pairs(6, seed=21)


def test_the_typed_settings_are_the_fields_of_runconfig():
    declared = [(f.name, str(f.type)) for f in fields(jk.RunConfig) if f.init]
    hints = run_config.RunSettings.__annotations__
    typed = [(name, getattr(t, "__forward_arg__", t)) for name, t in hints.items()]
    assert typed == declared
    assert tuple(name for name, _ in declared) == run_config.SETTINGS
    assert not typing.get_type_hints(run_config.RunSettings).keys() - set(run_config.SETTINGS)


@pytest.mark.parametrize("func", [jk.run_judges, jk.arun_judges, jk.complete, jk.acomplete])
def test_every_entry_point_lists_the_settings_with_their_defaults(func):
    sig = inspect.signature(func)
    assert not hasattr(func, "__signature__") and not hasattr(
        getattr(func, "__wrapped__", func), "__signature__")
    settings = sig.parameters["settings"]
    assert settings.kind is inspect.Parameter.VAR_KEYWORD
    assert "RunSettings" in str(settings.annotation)
    doc = " ".join(inspect.getdoc(func).split())
    for f in fields(jk.RunConfig):
        if f.init:
            assert f"``{f.name}={f.default!r}``" in doc, f.name


def test_the_async_forms_take_the_parameters_of_their_twins():
    for sync, coro in [(jk.run_judges, jk.arun_judges), (jk.complete, jk.acomplete)]:
        assert str(inspect.signature(sync)) == str(inspect.signature(coro))


def test_a_wrong_keyword_is_named_with_the_nearest_and_the_valid_ones():
    with pytest.raises(TypeError) as caught:
        jk.run_judges(PAIRS, "gpt-4o-mini", concurency=4)
    message = str(caught.value)
    assert "['concurency']" in message and "did you mean 'concurrency'" in message
    assert "pairs, judges, orders, repeats, id_swap" in message
    assert all(name in message for name in run_config.SETTINGS)
    with pytest.raises(TypeError, match=r"complete\(\) .*\['temprature'\].*'temperature'"):
        jk.complete(["hi"], "sim", temprature=0.5)
    with pytest.raises(TypeError, match=r"run_judges_batch\(\) .*'poll_interval'"):
        jk.run_judges_batch(PAIRS, "gpt-4o-mini", poll_intervall=1.0)


def test_settings_pass_through_unchanged(tmp_path):
    # run_judges_batch hands its settings on to run_judges: a wrong value is refused by name
    with pytest.raises(ValueError, match="max_retries must be an integer >= 0"):
        jk.run_judges_batch(PAIRS, "gpt-4o-mini", cache=tmp_path / "c.sqlite", max_retries=-2)
    config = jk.RunConfig(concurrency=3, rpm=5)
    assert (config.concurrency, config.limits_for("x")) == (3, (5, None))
    with pytest.raises(TypeError):
        jk.RunConfig(None)   # keywords only


def test_live_runs_batches_and_estimates_expand_the_same_requests():
    judges = [jk.Judge("sim", "mtbench_pair", base_url="http://127.0.0.1:9/v1", seed=0),
              jk.Judge("sim", "mtbench_pair", base_url="http://u:secret@127.0.0.1:9/v1",
                       seed=0),
              jk.Judge("sim", "shen_hh", base_url="http://127.0.0.1:9/v1", temperature=0.7)]
    args = (PAIRS, judges, ("ab", "ba"), 2, check_swaps((False, True)), None)
    plan, tasks = RequestPlan(*args), build_tasks(*args)
    assert plan.task_keys == [t.key for t in tasks]
    # the second judge sends the first one's bodies (credentials are not part of a key)
    assert len(plan.keys) == len(tasks) * 2 // 3
    for i, task in enumerate(tasks):
        call = plan.call(task.key)
        assert (call.body, call.endpoint, call.repeat) == (task.body, task.endpoint, task.repeat)
        assert plan.judge_of(i) is task.judge
        assert plan.orders[plan.columns["order"][i]] == task.order
        assert plan.swaps[plan.columns["swap"][i]] == task.id_swap
        assert plan.pairs.iloc[plan.columns["pos"][i]]["pair_id"] == task.pair_id


def test_the_transports_are_found_by_name_in_one_registry():
    assert set(transports.TRANSPORTS) == {"aiohttp", "openai"}
    for kind in transports.TRANSPORTS.values():
        for member in ("for_urls", "check", "chat", "close"):
            assert callable(getattr(kind, member)), (kind, member)
    with pytest.raises(ValueError, match=r"one of \['auto', 'aiohttp', 'openai'\]"):
        jk.RunConfig(transport="httpx")


class Recording(LeanTransport):
    """A transport of its own: the lean one, counting the bodies it sends."""

    sent: typing.ClassVar[list[str]] = []

    async def chat(self, body):
        Recording.sent.append(body["model"])
        return await super().chat(body)


def test_a_registered_transport_is_used_by_its_name(monkeypatch):
    monkeypatch.setitem(transports.TRANSPORTS, "recording", Recording)
    Recording.sent.clear()
    server = jk.sim.SimServer(pairs=PAIRS)
    with server as url:
        judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)
        j = jk.run_judges(PAIRS, judge, cache=False, progress=False, transport="recording")
        stats = server.stats
    assert len(j) == 12 and j["error"].isna().all()
    assert Recording.sent == ["sim"] * 12 and stats["requests"] == 12
