"""Property: whatever an endpoint answers, a paid answer is kept and paid once (issue 21).

Hypothesis draws, for each request of a small run, the answers of its attempts: a status code, a
body (a chat completion with odd usage numbers, odd choices or an odd finish reason; JSON nested
far deeper than Python's parser follows; bytes that are not UTF-8; any JSON value; an answer
about the size of ``max_answer_bytes``) and headers (content types and charsets, rate-limit
headers that are not numbers, ``Retry-After`` values). A loopback server answers with them over
real HTTP, through judgekit's lean client or the ``openai`` SDK, into a real SQLite cache. For
every draw:

- no exception leaves :func:`judgekit.run_judges`, and every request has its row;
- each request is paid (answered 2xx) at most once across the run and its re-run, and a request
  paid in the run is not sent again by the re-run;
- every paid answer is in the cache, and only paid answers are.

Left out on purpose, as they are the transport's concern and covered by its own tests: waits
longer than ``backoff_max`` (``Retry-After`` in the future), compressed bodies, bodies trickled or
cut short, many or huge headers, and rate limits small enough to pace the run.
"""

import hashlib
import json
import tempfile
import warnings
from pathlib import Path

import pytest
from _rawserver import RawServer, chat_answer, digest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import judgekit as jk
from judgekit.judging.cache import request_key

LIMIT = 2048   # max_answer_bytes of the runs: answers about this size are drawn

numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70), st.floats(), st.none(), st.booleans(),
    st.text(max_size=6), st.lists(st.integers(), max_size=2),
    st.sampled_from(["12", "\u00b2", "\u0661\u0662", " 7 ", "1e3", "0x10", "-3", "9" * 30]),
)
usage = st.one_of(st.fixed_dictionaries({"prompt_tokens": numbers, "completion_tokens": numbers}),
                  numbers)
content = st.one_of(st.sampled_from(["[[A]]", "[[B]]", "[[C]]", "", None]), st.text(max_size=30),
                    st.lists(st.fixed_dictionaries({"type": st.just("text"),
                                                    "text": st.text(max_size=8)}), max_size=2))
odd_value = st.one_of(st.none(), st.integers(), st.text(max_size=8), st.lists(st.integers(),
                                                                              max_size=2))
json_values = st.recursive(st.none() | st.booleans() | st.floats() | st.text(max_size=10),
                           lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                           max_leaves=8)


def _answer(text, use, finish, logprobs):
    body = json.loads(chat_answer("x", use))
    choice = body["choices"][0]
    choice["message"]["content"] = text
    choice["finish_reason"] = finish
    if logprobs is not None:
        choice["logprobs"] = logprobs
    return json.dumps(body, ensure_ascii=False).encode()


def _deep(depth, opener):
    return (opener * depth).encode() + (b"]" * depth if opener == "[" else b"")


bodies = st.one_of(
    st.builds(_answer, content, usage, odd_value, st.one_of(st.none(), odd_value,
                                                            st.just({"content": [1, "x"]}))),
    st.builds(lambda choices, use: json.dumps({"choices": choices, "usage": use}).encode(),
              st.one_of(st.sampled_from([[], [1], [{"message": "x"}], "abc", None]),
                        st.lists(json_values, max_size=2)), usage),
    st.builds(_deep, st.integers(min_value=900, max_value=20_000), st.sampled_from(["[", '{"a":'])),
    st.binary(max_size=64),
    st.text(max_size=64).map(lambda t: t.encode("utf-8", "surrogatepass")),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.integers(min_value=LIMIT - 120, max_value=LIMIT + 60).map(
        lambda n: chat_answer("[[A]]" + " " * n)[: LIMIT + 200]),
)
content_types = st.sampled_from(["application/json", "text/html",
                                 "application/json; charset=latin-1",
                                 "application/json; charset=no-such-charset",
                                 "application/json; charset=utf-16"])
# rate-limit headers that are not believable (small true limits would only pace the run)
limit_values = st.sampled_from(["0", "-1", "abc", "\u00b2", "1e9", "9" * 25, "\u0661\u0662"])
retry_after = st.sampled_from(["0", "0.01", "abc", "-1", "\u00b2", "nan",
                               "Wed, 21 Oct 2015 07:28:00 GMT"])
answers = st.tuples(
    st.sampled_from([200, 200, 200, 201, 400, 404, 418, 429, 500, 503]),
    bodies,
    st.dictionaries(st.sampled_from(["Content-Type", "x-ratelimit-limit-requests",
                                     "x-ratelimit-limit-tokens", "Retry-After"]),
                    st.one_of(content_types, limit_values, retry_after), max_size=3),
)
# per request: the answers of its attempts (the last one repeats)
plans = st.lists(st.lists(answers, min_size=1, max_size=3), min_size=1, max_size=6)


@pytest.fixture(scope="module")
def server():
    srv = RawServer()
    with srv as url:
        srv.url = url
        yield srv


def _runs(server, plan, transport, folder):
    def answer(body, attempt):
        h = hashlib.sha256(digest(body).encode()).digest()[0]
        status, data, headers = plan[h % len(plan)][min(attempt, len(plan[h % len(plan)]) - 1)]
        return status, list(headers.items()), data

    server.reset(answer)
    pairs = jk.sim.simulate_pairs(3, seed=0)
    judge = jk.Judge("gpt-4o-mini", "mtbench_pair", base_url=server.url, seed=0)
    cache = Path(folder) / "c.sqlite"
    tables = []
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tables.append(jk.run_judges(pairs, judge, cache=cache, progress=False,
                                        concurrency=3, timeout=10, max_retries=1,
                                        backoff_base=0.001, backoff_max=0.05,
                                        transport=transport, max_answer_bytes=LIMIT))
        if not tables[1:]:
            paid_first = dict(server.paid)
            seen_first = dict(server.seen)
    return tables, paid_first, seen_first, cache


# derandomized and not shrunk: the same 40 draws on every run, and a failure reports its draw
# at once instead of spending minutes shrinking it
@settings(max_examples=40, deadline=None, phases=[Phase.explicit, Phase.generate],
          derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(plan=plans, transport=st.sampled_from(["aiohttp", "openai"]))
def test_whatever_the_endpoint_answers_a_paid_answer_is_kept_and_paid_once(server, plan,
                                                                           transport):
    with tempfile.TemporaryDirectory() as folder:
        (first, again), paid_first, seen_first, cache = _runs(server, plan, transport, folder)
        with jk.Cache(cache) as store:
            stored = set(store.stored_keys(first["request_key"]))
            rows = len(store)
    assert len(first) == len(again) == 6
    keys = {d: request_key(server.url, server.bodies[d], 0) for d in server.seen}
    assert set(keys.values()) == set(first["request_key"])       # the server saw every request
    paid = {d for d, n in server.paid.items() if n}
    assert all(n <= 1 for n in server.paid.values()), "a request was paid twice"
    assert not {d for d in paid_first if server.seen[d] > seen_first[d]}, \
        "the re-run sent a request that was paid in the run"
    assert {keys[d] for d in paid} == stored and rows == len(paid)
    cached = again.set_index("request_key")["cached"]
    assert cached.loc[sorted(keys[d] for d in paid_first)].all()
