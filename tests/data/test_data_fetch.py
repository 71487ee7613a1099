"""Finding, downloading and verifying data files: mirror, cache, pooch download, clear errors.

Downloads are tested against a real HTTP server on a loopback port; the bad-mirror tests build
a temporary mirror holding corrupted copies of real registered files.
"""

import gzip
import hashlib
import http.server
import os
import threading
import warnings
from pathlib import Path

import pytest

import judgekit as jk
from judgekit.data import _download, fetch
from judgekit.data.fetch import DataFile

MIRROR = Path(os.environ.get("JUDGEKIT_DATA_MIRROR", "")) if os.environ.get("JUDGEKIT_DATA_MIRROR") else None
needs_mirror = pytest.mark.skipif(MIRROR is None or not MIRROR.is_dir(), reason="no data mirror")


@pytest.fixture(autouse=True)
def _fresh_hosts():
    """Each test starts with no host remembered as unreachable (ports are reused)."""
    _download.forget_unreachable()
    yield
    _download.forget_unreachable()


@pytest.fixture
def env(tmp_path, monkeypatch):
    """An empty mirror and an empty cache under tmp_path."""
    mirror, cache = tmp_path / "mirror", tmp_path / "cache"
    mirror.mkdir()
    cache.mkdir()
    monkeypatch.setenv("JUDGEKIT_DATA_MIRROR", str(mirror))
    monkeypatch.setenv("JUDGEKIT_CACHE_DIR", str(cache))
    return mirror, cache


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A real HTTP server on a free loopback port serving a temporary directory."""
    root = tmp_path_factory.mktemp("www")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _entry(url: str, data: bytes | None, *, known: bool = True, path: str = "x/file.json") -> DataFile:
    return DataFile(
        dataset="testset", repo="", commit="", path=path,
        sha256=hashlib.sha256(data).hexdigest() if (known and data is not None) else "",
        size=len(data) if (known and data is not None) else None, license="MIT", url_override=url,
    )


def test_registry_covers_the_manifest():
    files = fetch.registry_files()
    assert len({(f.repo, f.path) for f in files}) == len(files)
    names = {f.dataset for f in files}
    assert {"alpacaeval", "llmbar", "judging_the_judges", "pandalm", "autoj_pairwise", "hh_rlhf",
            "calm", "tldr", "mtbench_human", "rewardbench", "alpacaeval_leaderboard",
            "arena_elo", "alpacaeval_glm_weights", "alpacaeval_evaluators"} <= names
    if MIRROR is not None and (MIRROR / "MANIFEST.tsv").is_file():
        import csv

        with open(MIRROR / "MANIFEST.tsv", encoding="utf-8") as fh:
            manifest = {(r["repo"], r["path"]): r["sha256"] for r in csv.DictReader(fh, delimiter="\t")}
        ours = {(f.repo, f.path): f.sha256 for f in files if f.sha256}
        assert all(ours.get(k) == v for k, v in manifest.items())


def test_download_is_hashed_cached_and_atomic(env, server):
    root, base = server
    data = b'{"hello": "world"}' * 100
    (root / "ok.json").write_bytes(data)
    entry = _entry(f"{base}/ok.json", data)
    assert not fetch.is_available(entry)
    assert fetch.read_bytes(entry, progress=False) == data
    cached = env[1] / "data" / entry.key
    assert cached.read_bytes() == data
    assert fetch.is_available(entry)
    assert not list(cached.parent.glob("*.tmp*"))  # nothing half-written left behind
    (root / "ok.json").unlink()  # now served from the cache only
    assert fetch.read_bytes(entry, progress=False) == data


def test_download_with_wrong_hash_is_refused(env, server):
    root, base = server
    (root / "changed.json").write_bytes(b"upstream changed")
    entry = DataFile("testset", "", "", "y/changed.json", "0" * 64, None, "MIT", f"{base}/changed.json")
    with pytest.raises(jk.DataFileError, match=r"does not match the registered sha256") as err:
        fetch.read_bytes(entry, progress=False)
    assert f"{base}/changed.json" in str(err.value)
    assert not (env[1] / "data" / entry.key).exists()


def test_trust_on_first_use_records_and_then_verifies(env, server):
    root, base = server
    data = b"online-only data without a published checksum"
    (root / "tofu.json").write_bytes(data)
    entry = _entry(f"{base}/tofu.json", data, known=False, path="z/tofu.json")
    with pytest.warns(jk.UnverifiedDataWarning, match="trusting this first download"):
        assert fetch.read_bytes(entry, progress=False) == data
    cached = env[1] / "data" / entry.key
    record = cached.with_name(cached.name + ".sha256")
    assert record.read_text().split()[0] == hashlib.sha256(data).hexdigest()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # verified against the record now: no warning
        assert fetch.read_bytes(entry, progress=False) == data
    # A cached copy that no longer matches its record is replaced by a fresh download.
    cached.write_bytes(b"tampered")
    with pytest.warns(UserWarning, match="corrupted; downloading again"):
        assert fetch.read_bytes(entry, progress=False) == data


def test_the_first_use_record_is_not_written_through_a_link(env, server, tmp_path):
    root, base = server
    data = b"another file without a published checksum"
    (root / "tofu2.json").write_bytes(data)
    entry = _entry(f"{base}/tofu2.json", data, known=False, path="z/tofu2.json")
    cached = env[1] / "data" / entry.key
    cached.parent.mkdir(parents=True)
    mine = tmp_path / "mine.txt"
    mine.write_text("the user's file")
    (cached.parent / (cached.name + ".sha256.tmp")).symlink_to(mine)  # the old fixed temp name
    with pytest.warns(jk.UnverifiedDataWarning, match="trusting this first download"):
        assert fetch.read_bytes(entry, progress=False) == data
    assert mine.read_text() == "the user's file"
    record = cached.with_name(cached.name + ".sha256")
    assert not record.is_symlink() and record.read_text().split()[0] == hashlib.sha256(data).hexdigest()


def test_no_network_error_names_file_url_and_fix(env):
    data = b"never served"
    url = f"http://127.0.0.1:{_closed_port()}/missing.json"
    entry = _entry(url, data, path="w/missing.json")
    with pytest.raises(jk.DataFileError) as err:
        fetch.read_bytes(entry, progress=False)
    msg = str(err.value)
    assert "w/missing.json" in msg and url in msg
    assert "could not download" in msg and "judgekit fetch testset" in msg
    assert str(env[0] / entry.key) in msg  # where to put it in the mirror


@needs_mirror
def test_mirror_hash_mismatch_is_refused(env):
    entry = fetch.registry_files("arena_elo")[0]
    original = (MIRROR / entry.key).read_bytes()
    bad = bytearray(original)
    bad[100] = ord("X") if bad[100] != ord("X") else ord("Y")
    target = env[0] / entry.key
    target.parent.mkdir(parents=True)
    target.write_bytes(bytes(bad))
    with pytest.raises(jk.DataFileError, match="sha256 mismatch") as err:
        jk.load_table("arena_elo")
    msg = str(err.value)
    assert str(target) in msg and entry.url in msg and "Replace or delete it" in msg


@needs_mirror
def test_mirror_wrong_size_is_refused(env):
    entry = fetch.registry_files("arena_elo")[0]
    target = env[0] / entry.key
    target.parent.mkdir(parents=True)
    target.write_bytes((MIRROR / entry.key).read_bytes()[:-10])
    with pytest.raises(jk.DataFileError, match=r"holds 6,354 bytes, expected 6,364"):
        jk.load_table("arena_elo")


@needs_mirror
def test_truncated_gzip_in_mirror_is_refused(env):
    entry = fetch.registry_files("alpacaeval_leaderboard")[0]
    src = MIRROR / entry.key
    data = src.read_bytes() if src.is_file() else gzip.decompress(src.with_name(src.name + ".gz").read_bytes())
    target = env[0] / (entry.key + ".gz")
    target.parent.mkdir(parents=True)
    target.write_bytes(gzip.compress(data)[:-200])
    with pytest.raises(jk.DataFileError, match="not a complete gzip file") as err:
        jk.load_table("alpacaeval_leaderboard")
    assert str(target) in str(err.value) and entry.url in str(err.value)


@needs_mirror
def test_gz_mirror_copy_is_read_and_verified(env):
    entry = fetch.registry_files("arena_elo")[0]
    target = env[0] / (entry.key + ".gz")
    target.parent.mkdir(parents=True)
    target.write_bytes(gzip.compress((MIRROR / entry.key).read_bytes()))
    table = jk.load_table("arena_elo")
    assert "Arena Elo [Feb 2, 2024]" in table.columns
    assert not list((env[1]).rglob("*.csv"))  # the mirror is not copied into the cache


def test_missing_everywhere_names_the_file_the_url_and_where_to_put_it(env, monkeypatch):
    # Nothing in the (empty) mirror or cache: the default AlpacaEval load downloads; with the
    # download host unresolvable, the error names the first file, its URL and the mirror path.
    monkeypatch.setenv("JUDGEKIT_DATA_URL", "http://judgekit-test.invalid/")
    with pytest.raises(jk.DataFileError) as err:
        jk.load_pairs("alpacaeval")
    msg = str(err.value)
    first = fetch.lookup("alpacaeval", "results/FuseChat-Gemma-2-9B-Instruct/"
                         "weighted_alpaca_eval_gpt4_turbo/annotations.json")
    assert first.path in msg and "http://judgekit-test.invalid/tatsu-lab/alpaca_eval/" in msg
    assert "does not resolve" in msg and str(env[0] / first.key) in msg


def test_unknown_names_give_clear_errors():
    with pytest.raises(ValueError, match=r"unknown dataset 'llm_bar'.*known: alpacaeval"):
        jk.load_pairs("llm_bar")
    with pytest.raises(ValueError, match=r"that is a table: use jk.load_table"):
        jk.load_pairs("arena_elo")
    with pytest.raises(ValueError, match=r"unknown table 'arena'"):
        jk.load_table("arena")
    with pytest.raises(ValueError, match=r"unknown dataset or table 'nope'"):
        jk.fetch_dataset("nope")
    with pytest.raises(TypeError, match="has no filter 'modelz'; its filters are models="):
        jk.load_pairs("alpacaeval", modelz=["x"])


@needs_mirror
def test_fetch_dataset_verifies_mirror_files():
    out = jk.fetch_dataset("pandalm", progress=False)
    assert out["source"].eq("mirror").all() and len(out) == 3
    files = jk.data_files("pandalm")
    assert files["available"].all()
    assert (out["sha256"].to_numpy() == files["sha256"].to_numpy()).all()


@needs_mirror
def test_fetch_dataset_tries_every_file_then_reports(env):
    files = fetch.registry_files("pandalm")
    for i, entry in enumerate(files):
        src = MIRROR / entry.key
        data = src.read_bytes() if src.is_file() else gzip.decompress(src.with_name(src.name + ".gz").read_bytes())
        target = env[0] / entry.key
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data if i else data[:-1] + b" ")  # the first copy is corrupted
    with pytest.raises(jk.DataFileError, match=r"1 of 3 files of 'pandalm' could not be fetched or "
                                               r"verified \(2 are fine\)\. The first:\n.*sha256 mismatch"):
        jk.fetch_dataset("pandalm", progress=False)
