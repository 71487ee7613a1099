"""Credentials never reach the cache, its exports or the judgments: not a key written into the
base URL, not a key an endpoint reflects inside a 200 answer."""

import logging

import pandas as pd

import judgekit as jk
from judgekit.judging.secrets import public_endpoint, scrub_known, url_secrets

PAIRS = jk.sim.simulate_pairs(4, seed=9)


def _blobs(tmp_path, cache_path, frames):
    blobs = {p.name: p.read_bytes() for p in tmp_path.glob(cache_path.name + "*")}
    with jk.Cache(cache_path) as c:
        c.export(tmp_path / "calls.csv")
        c.export(tmp_path / "calls.parquet")
    blobs["calls.csv"] = (tmp_path / "calls.csv").read_bytes()
    blobs["calls.parquet"] = (tmp_path / "calls.parquet").read_bytes()
    for name, frame in frames.items():
        blobs[name] = frame.to_csv().encode() + repr(frame.attrs).encode()
    return blobs


def test_credentials_in_the_base_url_are_used_but_never_stored(tmp_path, caplog):
    server = jk.sim.SimServer(pairs=PAIRS)
    cache = tmp_path / "c.sqlite"
    with server as url, caplog.at_level(logging.DEBUG):
        port = url.split(":")[2].split("/")[0]
        secret_url = f"http://proxyuser:URLTOKEN111@127.0.0.1:{port}/v1"
        with jk.Cache(cache) as held:    # held open: the WAL stays on disk to be searched
            j = jk.run_judges(PAIRS, jk.Judge("sim", "mtbench_pair", base_url=secret_url, seed=0),
                              cache=held, progress=False)
            blobs = _blobs(tmp_path, cache, {"judgments": j})
        # the same calls without the credentials are the same cache entries
        plain = jk.run_judges(PAIRS, jk.Judge("sim", "mtbench_pair", base_url=url, seed=0),
                              cache=cache, progress=False)
        paid = server.stats["paid"]
    assert paid == 8 and plain["cached"].all() and j["error"].isna().all()
    assert len(blobs["c.sqlite-wal"]) > 0
    for name, blob in {**blobs, "log": caplog.text.encode()}.items():
        assert b"URLTOKEN111" not in blob and b"proxyuser" not in blob, name
    assert set(pd.read_parquet(tmp_path / "calls.parquet")["endpoint"]) == {url}


def test_a_key_reflected_in_an_answer_is_scrubbed_before_it_is_stored(tmp_path):
    secret = "sk-" + "judgekit-reflect-7c6d5e4f3a2b1c0d"   # made up, split for secret scanners
    server = jk.sim.SimServer(pairs=PAIRS, faults={"rate_reflect_key": 1.0},
                          handlers=[lambda body: "rewritten"])
    cache = tmp_path / "c.sqlite"
    with server as url, jk.Cache(cache) as held:
        judge = jk.Judge("sim", "mtbench_pair", base_url=url, seed=0)
        j = jk.run_judges(PAIRS, judge, api_key=secret, cache=held, progress=False)
        out = jk.complete(["hi"], "sim", base_url=url, api_key=secret, cache=held, progress=False)
        blobs = _blobs(tmp_path, cache, {"judgments": j, "completions": out})
        reflected = server.stats["fault_reflect_key"]
    assert reflected == 9 and j["verdict"].notna().all()
    assert j["raw"].str.endswith("(debug: authorization=Bearer ***)").all()
    assert out["text"].iloc[0] == "rewritten (debug: authorization=Bearer ***)"
    for name, blob in blobs.items():
        assert secret.encode() not in blob, name


def test_what_is_recognised_as_a_credential():
    assert public_endpoint("https://u:p@h.example:8443/v1/") == "https://h.example:8443/v1"
    assert public_endpoint("https://h.example/v1?api-version=1&sig=abc") == \
        "https://h.example/v1?api-version=1&sig=%2A%2A%2A"
    assert url_secrets("https://h.example/v1?token=t0k3n&x=1") == ["t0k3n"]
    key = "3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"
    # a provider echoing a long prefix of a key without an "sk-" look
    assert scrub_known(f"bad key {key[:14]}****{key[-4:]}", [key]) == "bad key *******2f1a"
    assert scrub_known(f"x {key} y {key[:20]}", [key]) == "x *** y ***"
    assert scrub_known("a verdict: [[A]]", [key]) == "a verdict: [[A]]"
