"""Hostile or damaged data files and careless filters (issue: reliability repros r11, r12, r16,
r18): bounded decompression, no trust without a checksum, a linear safe unpickler, and filters
that say what they select."""

import gzip
import hashlib
import http.server
import json
import os
import pickle
import threading
import time
import tracemalloc
import zlib
from pathlib import Path

import pytest

import judgekit as jk
from judgekit.data import _download, datasets, fetch
from judgekit.data._pickle import UnsafePickleError, safe_loads
from judgekit.data.fetch import DataFile


@pytest.fixture(autouse=True)
def _clean():
    datasets._CACHE.clear()
    _download.forget_unreachable()
    yield
    datasets._CACHE.clear()
    _download.forget_unreachable()


def _bomb(n_bytes: int) -> bytes:
    """A gzip stream of ``n_bytes`` zeros (about 1,000 times smaller than what it inflates to)."""
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"0" * (1 << 20)
    return b"".join(co.compress(chunk) for _ in range(n_bytes >> 20)) + co.flush()


def _peak_mib(fn) -> float:
    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak / 2**20


# ------------------------------------------------------------------------ bounded decompression

def test_gzip_bomb_in_the_mirror_stops_at_the_registered_size(tmp_path, monkeypatch):
    entry = fetch.lookup("pandalm", "data/testset-v1.json")
    mirror = tmp_path / "mirror"
    target = mirror / (entry.key + ".gz")
    target.parent.mkdir(parents=True)
    target.write_bytes(_bomb(64 << 20))  # ~65 KB inflating to 64 MiB
    monkeypatch.setenv("JUDGEKIT_DATA_MIRROR", str(mirror))
    monkeypatch.setenv("JUDGEKIT_CACHE_DIR", str(tmp_path / "cache"))

    def load():
        with pytest.raises(jk.DataFileError, match=r"inflates to more than the registered 937,899 "
                                                   r"bytes; decompression was stopped") as err:
            jk.load_pairs("pandalm")
        assert str(target) in str(err.value) and entry.url in str(err.value)

    assert _peak_mib(load) < 16  # inflating it whole would take 64 MiB


def test_gzip_bomb_behind_a_valid_record_stops_at_the_ratio_limit(tmp_path, monkeypatch):
    # An online-only file (no published size) whose cached copy matches its record: the bytes are
    # verified, then inflated at most 50 times their size (floor 32 MiB), never to 256 MiB.
    entry = fetch.lookup("hh_rlhf", "helpful-base/test.jsonl.gz")
    monkeypatch.delenv("JUDGEKIT_DATA_MIRROR", raising=False)
    monkeypatch.setenv("JUDGEKIT_CACHE_DIR", str(tmp_path / "cache"))
    cached = fetch._cache_path(entry)
    cached.parent.mkdir(parents=True)
    bomb = _bomb(256 << 20)
    cached.write_bytes(bomb)
    fetch._record_path(cached).write_text(hashlib.sha256(bomb).hexdigest() + "  x\n")

    def load():
        with pytest.raises(jk.DataFileError, match=r"inflates to more than 33,554,432 bytes"):
            jk.load_pairs("hh_rlhf", subset="helpful-base")

    assert _peak_mib(load) < 80


class _Flood(http.server.BaseHTTPRequestHandler):
    """Answers every GET with far more than asked: 64 MiB of zeros, gzip-encoded on the wire."""

    body = _bomb(64 << 20)

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


def test_download_stops_when_the_body_outgrows_the_registered_size(tmp_path, monkeypatch):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Flood)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("JUDGEKIT_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setenv("JUDGEKIT_DATA_MIRROR", str(tmp_path / "empty"))
        url = f"http://127.0.0.1:{httpd.server_address[1]}/flood.json"
        entry = DataFile("testset", "", "", "x/flood.json", "0" * 64, 1000, "MIT", url)
        with pytest.raises(jk.DataFileError, match=r"sent more than the expected 1,000 bytes"):
            fetch.read_bytes(entry, progress=False)
        assert not any(p.is_file() for p in (tmp_path / "cache").rglob("*"))  # nothing kept
    finally:
        httpd.shutdown()
        httpd.server_close()


# --------------------------------------------------------------- no trust without a checksum

def test_cached_online_only_file_without_record_is_refused_offline(tmp_path, monkeypatch):
    # r12: a planted (or half-written) copy of a file without a published checksum used to be
    # read on every load with only a warning, and never recorded.
    entry = fetch.lookup("hh_rlhf", "helpful-base/test.jsonl.gz")
    monkeypatch.delenv("JUDGEKIT_DATA_MIRROR", raising=False)
    monkeypatch.setenv("JUDGEKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("JUDGEKIT_DATA_URL", "http://judgekit-test.invalid/")
    cached = fetch._cache_path(entry)
    cached.parent.mkdir(parents=True)
    forged = {"chosen": "\n\nHuman: 2+2?\n\nAssistant: 5", "rejected": "\n\nHuman: 2+2?\n\nAssistant: 4"}
    cached.write_bytes(gzip.compress(json.dumps(forged).encode()))
    planted = cached.read_bytes()
    for _ in range(2):
        with pytest.raises(jk.DataFileError, match=r"has no checksum record .* cannot be verified") as err:
            jk.load_pairs("hh_rlhf", subset="helpful-base")
        assert str(cached) in str(err.value) and "does not resolve" in str(err.value)
        assert not fetch._record_path(cached).exists()  # never trusted, never recorded
        assert cached.read_bytes() == planted  # the user's file is kept
        datasets._CACHE.clear()


# ------------------------------------------------------------------------ linear safe unpickler

def _doubling(depth: int) -> bytes:
    x = "leaf"
    for _ in range(depth):
        x = [x, x]
    return pickle.dumps(x)


def _best_time(blob: bytes, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        safe_loads(blob)
        best = min(best, time.perf_counter() - start)
    return best


def test_safe_unpickler_is_linear_in_shared_references():
    # r16: x = [x, x] nested d times is a ~6d-byte pickle with 2**d paths to its leaf. A walk of
    # every path grows 4x per two levels (4,096x from depth 12 to 24); a walk of each object
    # once grows with the pickle's size (~2x here). Ratio of best-of-5 times in one run.
    small, large = _best_time(_doubling(12)), _best_time(_doubling(24))
    assert large / small < 16, f"depth 24 took {large / small:.0f}x depth 12"
    node = safe_loads(_doubling(40))  # 2**40 paths: unthinkable before, instant now
    for _ in range(40):
        assert node[0] is node[1]  # the shared references come back shared
        node = node[0]
    assert node == "leaf"


def test_safe_unpickler_still_refuses_cycles_deep_nesting_and_globals():
    loop: list = []
    loop.append(loop)
    with pytest.raises(UnsafePickleError, match="contains itself"):
        safe_loads(pickle.dumps(loop), source="loop.pkl")
    deep: object = "leaf"
    for _ in range(51):
        deep = [deep]
    with pytest.raises(UnsafePickleError, match="deeper than 50 levels"):
        safe_loads(pickle.dumps(deep))
    shared = {"k": "v"}
    assert safe_loads(pickle.dumps([shared, shared, (shared, 1.5, None)])) == [shared, shared,
                                                                                (shared, 1.5, None)]
    with pytest.raises(UnsafePickleError, match="refused to load the global"):
        safe_loads(pickle.dumps([shared, os.getcwd]))


# ----------------------------------------------------------------------------------- filters

@pytest.mark.parametrize(("name", "filters"), [
    ("llmbar", {"sets": []}), ("llmbar", {"judges": []}), ("llmbar", {"strategies": ()}),
    ("calm", {"sets": []}), ("judging_the_judges", {"judges": []}),
    ("judging_the_judges", {"benchmark": []}), ("alpacaeval", {"models": []}),
    ("tldr", {"batches": []}),
])
def test_an_empty_filter_raises_instead_of_selecting_everything(name, filters):
    (key,) = filters
    with pytest.raises(ValueError, match=rf"{key}=\[\] selects nothing: pass None \(the default\)"):
        jk.load_pairs(name, **filters)


def test_a_mapping_or_a_non_name_is_not_a_filter():
    with pytest.raises(TypeError, match=r"sets= takes a name or a list of names, not a dict"):
        jk.load_pairs("llmbar", sets={"Natural": False})
    with pytest.raises(TypeError, match=r"judges= takes names \(strings\); got 3"):
        jk.load_pairs("judging_the_judges", judges=["gpt-4-0613", 3])
    with pytest.raises(TypeError, match=r"subset= takes one name"):
        jk.load_pairs("hh_rlhf", subset=["helpful-base"])
    with pytest.raises(TypeError, match=r"models= takes a name or a list of names, not 5"):
        jk.load_pairs("alpacaeval", models=5)


def test_filters_still_take_one_name_or_several(monkeypatch):
    if not os.environ.get("JUDGEKIT_DATA_MIRROR") or not Path(os.environ["JUDGEKIT_DATA_MIRROR"]).is_dir():
        pytest.skip("needs the data mirror")
    assert len(jk.load_pairs("llmbar", sets="Natural")) == 100
    assert len(jk.load_pairs("llmbar", sets=("Natural", "Manual"))) == 146
    assert len(jk.load_pairs("calm", sets={"verbosity"})) == len(jk.load_pairs("calm", sets="verbosity"))
