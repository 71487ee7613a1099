"""A paid answer is stored before anything can fail on it (issue 21, class 1).

Whatever a paid answer holds (usage numbers that int() or SQLite refuse, JSON nested deeper than
Python's parser follows, more bytes than ``max_answer_bytes``), whatever a Batch API output line
holds, and whatever a damaged or edited cache row holds, the run returns every row, the answer is
in the cache with the reason it is unusable, and a re-run reads it without paying. The answers
come from a loopback server over real HTTP (both transports: judgekit's lean client and the
``openai`` SDK) and the cache is a real SQLite file; what was paid is the server's own count.
"""

import hashlib
import json
import os
import sqlite3
import tempfile
import warnings

import numpy as np
import pytest
from _rawserver import RawServer, chat_answer, digest, ok

import judgekit as jk
from judgekit.judging.config import RunConfig

MODEL = "gpt-4o-mini"            # priced, so costs are computed
DEEP = b"[" * 100_000 + b"]" * 100_000


def _judge(url):
    return jk.Judge(MODEL, "mtbench_pair", base_url=url, seed=0)


def _run(pairs, url, cache, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return jk.run_judges(pairs, _judge(url), cache=cache, progress=False, concurrency=4,
                             timeout=20, **options)


def _odd(body):
    """Every third request (by its content) gets the odd answer."""
    return hashlib.sha256(digest(body).encode()).digest()[0] % 3 == 0


def _run_twice(server, url, pairs, cache, **options):
    """A run and its re-run on one cache: (first table, re-run table), checking that every
    answer was paid once, that the re-run paid nothing and sent nothing, and that the cache
    holds every answer."""
    first = _run(pairs, url, cache, **options)
    paid = dict(server.paid)
    again = _run(pairs, url, cache, **options)
    assert len(first) == len(again) == 2 * len(pairs)
    assert set(paid.values()) == {1} and len(paid) == len(first)
    assert dict(server.paid) == paid and sum(server.seen.values()) == len(first)
    assert again.attrs["judgekit_run"]["called"] == 0 and again["cached"].all()
    with jk.Cache(cache) as store:
        assert len(store) == len(first)
    return first, again


@pytest.mark.parametrize("transport", ["aiohttp", "openai"])
@pytest.mark.parametrize("usage,tokens", [
    ({"prompt_tokens": "\u00b2", "completion_tokens": 2}, (None, 2)),   # isdigit(), not int()
    ({"prompt_tokens": 2**64, "completion_tokens": 2}, (None, 2)),      # beyond SQLite's int64
    ({"prompt_tokens": 1e300, "completion_tokens": 2}, (None, 2)),      # a whole float, huge
    ({"prompt_tokens": "12", "completion_tokens": "\u0663"}, (12, None)),  # an Arabic-Indic 3
], ids=["superscript", "int64", "float", "non-ascii-digit"])
def test_usage_that_cannot_be_read_or_stored_costs_nothing_but_its_count(usage, tokens,
                                                                         transport, tmp_path):
    def answer(body, attempt):
        return ok(chat_answer("[[A]]", usage if _odd(body) else None))

    pairs = jk.sim.simulate_pairs(6, seed=5)
    server = RawServer(answer)
    with server as url:
        first, again = _run_twice(server, url, pairs, tmp_path / "c.sqlite", transport=transport)
    odd = first["request_key"].isin(_keys(server, url, _odd))
    assert 0 < odd.sum() < len(first)
    assert first["verdict"].notna().all() and again["verdict"].notna().all()
    want = [np.nan if t is None else t for t in tokens]
    for col, value in zip(("prompt_tokens", "completion_tokens"), want):
        np.testing.assert_array_equal(first.loc[odd, col].astype(float), value)
    assert first.loc[odd, "cost_usd"].isna().all() and first.loc[~odd, "cost_usd"].gt(0).all()
    assert first.attrs["judgekit_run"]["usage_missing"] == odd.sum()
    np.testing.assert_array_equal(first["prompt_tokens"].astype(float),
                                  again["prompt_tokens"].astype(float))


def _keys(server, url, which):
    """The cache keys of the requests the server answered oddly."""
    from judgekit.judging.cache import request_key

    return {request_key(url, body, 0) for body in server.bodies.values() if which(body)}


@pytest.mark.parametrize("transport", ["aiohttp", "openai"])
@pytest.mark.parametrize("body,reason", [
    (b'{"choices": ' + DEEP + b"}", "nested too deeply to read"),
    (chat_answer()[:-1] + b', "trace": ' + DEEP + b"}", "nested too deeply to read"),
    (chat_answer()[:-1] + b', "n": ' + b"9" * 5000 + b"}", "not JSON"),   # > int() digit limit
    (b"[[A]]", "not JSON"),
], ids=["deep", "deep-field", "long-number", "not-json"])
def test_an_answer_json_cannot_read_is_a_stored_error_row(body, reason, transport, tmp_path):
    def answer(request, attempt):
        return ok(body if _odd(request) else chat_answer("[[B]]"))

    pairs = jk.sim.simulate_pairs(6, seed=5)
    server = RawServer(answer)
    with server as url:
        first, again = _run_twice(server, url, pairs, tmp_path / "c.sqlite", transport=transport)
    odd = first["request_key"].isin(_keys(server, url, _odd))
    assert 0 < odd.sum() < len(first)
    for table in (first, again):
        errors = table.loc[odd, "error"]
        assert errors.str.startswith("api: malformed JSON response").all()
        assert errors.str.contains(reason, regex=False).all()
        assert table.loc[odd, "verdict"].isna().all() and table.loc[~odd, "verdict"].notna().all()
    assert first.attrs["judgekit_run"]["paid"] == len(first)


def test_complete_reads_paid_answers_the_same_way(tmp_path):
    answers = {"one": ok(b'{"choices": ' + DEEP + b"}"),
               "two": ok(chat_answer("fine", {"prompt_tokens": "\u00b2", "completion_tokens": 2}))}
    server = RawServer(lambda body, attempt: answers[body["messages"][-1]["content"]])
    cache = tmp_path / "c.sqlite"
    with server as url, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        runs = [jk.complete(["one", "two"], MODEL, base_url=url, cache=cache, progress=False)
                for _ in range(2)]
    assert sum(server.paid.values()) == 2 and runs[1]["cached"].all()
    for out in runs:
        assert out["error"].iloc[0] == ("api: malformed JSON response (200013 bytes): nested "
                                        "too deeply to read")
        assert out["text"].iloc[1] == "fine" and out["prompt_tokens"].isna().iloc[1]


def test_an_answer_larger_than_max_answer_bytes_is_stored_cut_with_the_reason(tmp_path):
    big = chat_answer("[[A]]" + " " * 10_000)

    def answer(request, attempt):
        return ok(big if _odd(request) else chat_answer("[[A]]"))

    pairs = jk.sim.simulate_pairs(6, seed=5)
    server = RawServer(answer)
    cache = tmp_path / "c.sqlite"
    with server as url:
        first, again = _run_twice(server, url, pairs, cache, max_answer_bytes=4096)
    odd = first["request_key"].isin(_keys(server, url, _odd))
    assert 0 < odd.sum() < len(first)
    want = f"api: answer of {len(big)} bytes is larger than max_answer_bytes=4096"
    assert first.loc[odd, "error"].str.startswith(want).all()
    assert again.loc[odd, "error"].str.startswith(want).all()
    assert first.loc[~odd, "verdict"].notna().all()
    with jk.Cache(cache) as store:
        stored = store.to_frame(with_bodies=True).set_index("key")["response"]
    assert stored.str.len().max() == 4096                   # kept, and bounded
    assert RunConfig().max_answer_bytes == 16 * 1024 * 1024
    with pytest.raises(ValueError, match="max_answer_bytes"):
        jk.run_judges(pairs, _judge(url), max_answer_bytes=0, cache=False, progress=False)


def _tamper(path, keys):
    """Damage five stored answers, each a different way, as another program or an edit would."""
    deep = '{"choices": ' + DEEP.decode() + "}"
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE responses SET response = ? WHERE key = ?", (deep, keys[0]))
        conn.execute("UPDATE responses SET response = CAST(x'7b22ff22' AS TEXT) WHERE key = ?",
                     (keys[1],))
        conn.execute("UPDATE responses SET prompt_tokens = '\u00b2', cost_usd = 'abc', "
                     "latency_s = x'00' WHERE key = ?", (keys[2],))
        conn.execute("UPDATE responses SET status = 'bogus', error = NULL WHERE key = ?",
                     (keys[3],))
        conn.execute("UPDATE responses SET completion_tokens = 1e300 WHERE key = ?", (keys[4],))
    conn.close()


def test_a_damaged_cache_row_is_an_error_row_on_every_rerun_and_nothing_is_paid(tmp_path):
    pairs = jk.sim.simulate_pairs(4, seed=6)
    server = RawServer()
    path = tmp_path / "c.sqlite"
    with server as url:
        first = _run(pairs, url, path)
        keys = first["request_key"].tolist()
        _tamper(path, keys)
        runs = [_run(pairs, url, path) for _ in range(2)]
        paid = sum(server.paid.values())
        retried = _run(pairs, url, path, retry_errors=True)
    assert paid == len(first) == 8        # nothing paid again
    for again in runs:
        assert again.attrs["judgekit_run"]["called"] == 0 and len(again) == 8
        row = again.set_index("request_key").loc[keys]
        error, verdict = row["error"].tolist(), row["verdict"].tolist()
        was = first["verdict"].tolist()
        assert error[0] == ("api: unreadable response (stored answer: malformed JSON, nested "
                            "too deeply to read)")
        assert error[1] == "api: unreadable response (stored answer: malformed JSON, not UTF-8 text)"
        assert verdict[2] == was[2] and np.isnan(row["prompt_tokens"].iloc[2])
        assert np.isnan(row["cost_usd"].iloc[2]) and np.isnan(row["latency_s"].iloc[2])
        assert error[3].startswith("api: the stored answer has status 'bogus'")
        assert verdict[4] == was[4] and np.isnan(row["completion_tokens"].iloc[4])
        assert verdict[5:] == was[5:] and row["error"].iloc[5:].isna().all()
    # retry_errors asks again for exactly the rows shown as errors (0, 1, 3), and pays for them
    assert sum(server.paid.values()) == paid + 3
    again = retried.set_index("request_key").loc[keys]
    assert again["cached"].tolist() == [False, False, True, False] + [True] * 4
    assert again["error"].isna().all()


def _batch_lines(lines):
    """A Batch API output file in which each answer is odd in its own way (by input line)."""
    def line(item, body):
        return {"id": "batch_req_x", "custom_id": item["custom_id"], "error": None,
                "response": {"status_code": 200, "request_id": "r", "body": body}}

    out = []
    for i, item in enumerate(lines):
        key = item["custom_id"]
        if i == 0:    # usage as text: read
            text = json.dumps(line(item, json.loads(chat_answer(
                "[[A]]", {"prompt_tokens": "12", "completion_tokens": "3"}))))
        elif i == 1:  # usage int() refuses: missing
            text = json.dumps(line(item, json.loads(chat_answer(
                "[[A]]", {"prompt_tokens": "\u00b2", "completion_tokens": 3}))))
        elif i == 2:  # U+2028 left raw in a string: one line all the same (CRLF ending)
            text = json.dumps(line(item, json.loads(chat_answer("[[A]]\u2028more"))),
                              ensure_ascii=False) + "\r"
        elif i == 3:  # nested deeper than Python's parser follows
            text = json.dumps(line(item, "@")).replace('"@"', DEEP.decode())
        elif i == 4:  # cut short
            text = json.dumps(line(item, json.loads(chat_answer())))[:120]
        else:         # a byte that is not UTF-8
            text = json.dumps(line(item, json.loads(chat_answer("[[A]] \x00"))))
        data = text.encode()
        if i >= 5:
            data = data.replace(b"\\u0000", b"\xff")
        assert key.encode() in data
        out.append(data)
    unknown = {"custom_id": "f" * 64, "response": {"status_code": 200, "body": {}}}
    out += [b"", json.dumps(unknown).encode()]
    return b"\n".join(out) + b"\n"


def test_a_batch_output_is_stored_whole_whatever_its_lines_hold(tmp_path):
    pairs = jk.sim.simulate_pairs(3, seed=7)
    server = RawServer(batch_output=_batch_lines)
    cache = tmp_path / "c.sqlite"
    with server as url:
        judge = _judge(url)
        batch_id = jk.submit_batch(pairs, judge, cache=cache)
        inputs = [json.loads(x)["custom_id"]
                  for x in next(iter(server.files.values())).split(b"\n") if x]
        summary = jk.collect_batch(batch_id, cache=cache, poll_interval=0.01)
        again = jk.collect_batch(batch_id, cache=cache, poll_interval=0.01)
        j = _run(pairs, url, cache)
    assert (summary["stored"], summary["unreadable"], summary["failed"], summary["missing"]) \
        == (6, 1, 0, 0)
    assert again["already_cached"] == 6
    assert sum(server.seen.values()) == 0 and j.attrs["judgekit_run"]["called"] == 0
    assert set(server.paid.values()) == {1} and len(server.paid) == 6
    row = j.set_index("request_key").loc[inputs]
    assert row["verdict"].iloc[:3].notna().all() and row["error"].iloc[:3].isna().all()
    assert row["prompt_tokens"].iloc[0] == 12 and row["completion_tokens"].iloc[0] == 3
    assert np.isnan(row["prompt_tokens"].iloc[1]) and row["completion_tokens"].iloc[1] == 3
    assert row["cost_usd"].iloc[0] == pytest.approx(0.5 * (12 * 0.15 + 3 * 0.60) / 1e6)
    assert row["raw"].iloc[2] == "[[A]]\u2028more"
    errors = row["error"].iloc[3:].tolist()
    assert all(e.startswith(f"api: unreadable batch output line (batch {batch_id} output file, "
                            "line ") for e in errors)
    assert "nested too deeply" in errors[0] and "not valid JSON" in errors[1]
    assert "not UTF-8 text" in errors[2]


def _open_as_nobody(path):
    """(opened, rows or error) of jk.Cache(path, read_only=True) in a child process running as
    user nobody, so that the folder's permissions bind."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: drop to nobody, open, report, leave
        os.close(read)
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            with jk.Cache(path, read_only=True) as cache:
                result = {"opened": True, "rows": len(cache),
                          "keys": sorted(r["key"] for r in cache.lookup(["k1", "k2"]))}
        except Exception as exc:  # reported to the parent
            result = {"opened": False, "error": f"{type(exc).__name__}: {exc}"}
        os.write(write, json.dumps(result).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read) as f:
        return json.loads(f.read())


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0,
                    reason="needs root to run the check as the unprivileged user nobody")
def test_a_cache_in_a_read_only_folder_opens_with_read_only_true():
    top = tempfile.mkdtemp()
    folder = os.path.join(top, "shared")
    os.makedirs(folder)
    path = os.path.join(folder, "judge-cache.sqlite")
    try:
        with jk.Cache(path) as cache:
            for key in ("k1", "k2"):
                cache.put({"key": key, "endpoint": "e", "model": "m", "repeat": 0,
                           "request": "{}", "response": "{}", "status": "ok", "source": "live"})
        assert sorted(os.listdir(folder)) == ["judge-cache.sqlite"]   # no -wal, no -shm
        os.chmod(path, 0o444)
        os.chmod(folder, 0o555)
        os.chmod(top, 0o755)
        result = _open_as_nobody(path)
        assert result == {"opened": True, "rows": 2, "keys": ["k1", "k2"]}, result
        assert sorted(os.listdir(folder)) == ["judge-cache.sqlite"]   # nothing written there
    finally:
        os.chmod(folder, 0o755)
        for name in os.listdir(folder):
            os.remove(os.path.join(folder, name))
        os.rmdir(folder)
        os.rmdir(top)
