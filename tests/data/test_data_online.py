"""The online path, without the internet: every loader downloads on first use from a loopback
HTTP server that serves the mirror's files (decompressed) in GitHub's raw layout, with no mirror
set, an empty cache and ``JUDGEKIT_DATA_URL`` pointing at the server."""

import gzip
import json
import os
import warnings
from pathlib import Path

import pandas as pd
import pytest
from _mirror import MirrorServer

import judgekit as jk
from judgekit.cli import main
from judgekit.data import _download, datasets, fetch

FIXTURES = Path(__file__).parents[1] / "fixtures" / "data"
MIRROR = Path(os.environ["JUDGEKIT_DATA_MIRROR"]) if os.environ.get("JUDGEKIT_DATA_MIRROR") else None
pytestmark = pytest.mark.skipif(MIRROR is None or not MIRROR.is_dir(), reason="needs the data mirror")

# (dataset, filters): one load per kind of upstream file (JSON, JSON lines, gzip JSON lines,
# TSV, restricted pickle + xlsx, CSV), small enough for CI.
LOADS = [
    ("pandalm", {}),
    ("autoj_pairwise", {}),
    ("hh_rlhf", {}),
    ("calm", {"sets": ["verbosity", "fact_related"]}),
    ("llmbar", {"sets": "Natural", "judges": "GPT-4"}),
    ("judging_the_judges", {"benchmark": "DevBench", "judges": ["gpt-4-0613", "gemini-pro"]}),
    # FuseChat's files carry no logprobs: its shown order comes from alpaca-7b's annotations
    ("alpacaeval", {"models": ["alpaca-7b", "FuseChat-Gemma-2-9B-Instruct"]}),
]


@pytest.fixture(scope="module")
def server():
    with MirrorServer(MIRROR) as srv:
        yield srv


@pytest.fixture
def online(server, tmp_path, monkeypatch):
    """No mirror, an empty cache, downloads from the loopback server."""
    monkeypatch.delenv("JUDGEKIT_DATA_MIRROR", raising=False)
    monkeypatch.setenv("JUDGEKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("JUDGEKIT_DATA_URL", server.url)
    datasets._CACHE.clear()
    _download.forget_unreachable()
    yield server
    datasets._CACHE.clear()


def _from_mirror(monkeypatch, name, filters):
    monkeypatch.setenv("JUDGEKIT_DATA_MIRROR", str(MIRROR))
    datasets._CACHE.clear()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", jk.MissingDataWarning)
            return jk.load_dataset(name, **filters)
    finally:
        monkeypatch.delenv("JUDGEKIT_DATA_MIRROR")
        datasets._CACHE.clear()


@pytest.mark.parametrize(("name", "filters"), LOADS, ids=[n for n, _ in LOADS])
def test_loader_downloads_on_first_use_then_reads_the_cache(online, monkeypatch, name, filters):
    before = sum(online.served.values())
    pairs, judgments = jk.load_dataset(name, **filters)
    downloaded = sum(online.served.values()) - before
    assert downloaded > 0
    cache = Path(os.environ["JUDGEKIT_CACHE_DIR"]) / "data" / "github"
    assert sum(1 for p in cache.rglob("*") if p.is_file()) == downloaded
    # The same tables as from the mirror, byte for byte.
    mirror_pairs, mirror_judgments = _from_mirror(monkeypatch, name, filters)
    pd.testing.assert_frame_equal(pairs, mirror_pairs)
    if judgments is None:
        assert mirror_judgments is None
    else:
        pd.testing.assert_frame_equal(judgments, mirror_judgments)
    # A second load (new process: empty in-process cache) reads the verified cache only.
    datasets._CACHE.clear()
    again, _ = jk.load_dataset(name, **filters)
    assert sum(online.served.values()) - before == downloaded
    pd.testing.assert_frame_equal(again, pairs)


def test_tables_download_too(online, monkeypatch):
    before = sum(online.served.values())
    elo = jk.load_table("arena_elo")
    lb = jk.load_table("alpacaeval_leaderboard")
    assert "Arena Elo [Feb 2, 2024]" in elo.columns and len(lb) == 223
    assert sum(online.served.values()) - before == 2


def test_one_progress_bar_per_dataset(online, capsys):
    jk.load_pairs("pandalm")
    err = capsys.readouterr().err
    assert "downloading pandalm" in err and "3 files" in err
    assert "Downloading data from" not in err  # pooch's own log lines stay quiet


def test_no_download_bar_when_bars_are_off(online, capsys, monkeypatch):
    # `judgekit reproduce` runs the notebooks with TQDM_DISABLE=1: its pages are static, and
    # tqdm's notebook bars ignore that variable, so judgekit checks it
    monkeypatch.setenv("TQDM_DISABLE", "1")
    assert _download._progressbar(None, True) is None  # no bar is made (tqdm's text bars would
    # obey the variable by themselves, its notebook bars not)
    before = sum(online.served.values())
    jk.load_pairs("pandalm")
    assert sum(online.served.values()) - before == 3  # downloaded, quietly
    assert "downloading" not in capsys.readouterr().err


def test_fetch_downloads_then_verifies_the_cache(online, capsys):
    out = jk.fetch_dataset("pandalm", progress=False)
    assert out["source"].tolist() == ["download"] * 3
    assert (out["sha256"] == jk.data_files("pandalm")["sha256"]).all()
    assert jk.data_files("pandalm")["available"].all()
    assert jk.data_files("pandalm")["url"].str.startswith(online.url).all()
    assert main(["fetch", "pandalm"]) == 0
    assert capsys.readouterr().out.strip() == "pandalm: 3 files verified (3 from the cache)"


def test_online_only_file_is_recorded_on_first_use_and_verified_after(tmp_path, monkeypatch):
    # HH-RLHF helpful-base is a Git LFS file without a published checksum (not in the mirror):
    # serve the upstream-schema fixture where GitHub would have it.
    entry = fetch.lookup("hh_rlhf", "helpful-base/test.jsonl.gz")
    upstream = gzip.compress((FIXTURES / "hh_rlhf_helpful.jsonl").read_bytes())
    site = tmp_path / "site"
    (site / entry.key).parent.mkdir(parents=True)
    (site / entry.key).write_bytes(upstream)
    monkeypatch.delenv("JUDGEKIT_DATA_MIRROR", raising=False)
    monkeypatch.setenv("JUDGEKIT_CACHE_DIR", str(tmp_path / "cache"))
    datasets._CACHE.clear()
    with MirrorServer(site) as srv:
        monkeypatch.setenv("JUDGEKIT_DATA_URL", srv.url)
        with pytest.warns(jk.UnverifiedDataWarning, match="trusting this first download"):
            pairs = jk.load_pairs("hh_rlhf", subset="helpful-base")
        cached = fetch._cache_path(entry)
        assert fetch._record_path(cached).read_text().split()[0] == fetch._sha256(upstream)
        datasets._CACHE.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # verified against the record: silent
            pd.testing.assert_frame_equal(jk.load_pairs("hh_rlhf", subset="helpful-base"), pairs)
        # A copy planted without its record is never trusted: it is downloaded again.
        forged = {"chosen": "\n\nHuman: 2+2?\n\nAssistant: 5", "rejected": "\n\nHuman: 2+2?\n\nAssistant: 4"}
        cached.write_bytes(gzip.compress(json.dumps(forged).encode()))
        fetch._record_path(cached).unlink()
        datasets._CACHE.clear()
        with pytest.warns(jk.UnverifiedDataWarning) as record:
            again = jk.load_pairs("hh_rlhf", subset="helpful-base")
        messages = " | ".join(str(w.message) for w in record)
        assert "trusting this first download" in messages  # recorded anew
        assert "differed from a fresh download" in messages  # and the planted copy is gone
        pd.testing.assert_frame_equal(again, pairs)
        assert cached.read_bytes() == upstream and fetch._record_path(cached).is_file()
        assert srv.served[f"/{entry.repo}/{entry.commit}/{entry.path}"] == 2
    datasets._CACHE.clear()


def test_data_url_must_be_http(monkeypatch):
    monkeypatch.setenv("JUDGEKIT_DATA_URL", "ftp://example.org/raw")
    with pytest.raises(ValueError, match="JUDGEKIT_DATA_URL='ftp://example.org/raw' is not an http"):
        _ = fetch.registry_files("pandalm")[0].url
    monkeypatch.setenv("JUDGEKIT_DATA_URL", "https://example.org/raw")  # slash added
    entry = fetch.registry_files("pandalm")[0]
    assert entry.url == f"https://example.org/raw/{entry.repo}/{entry.commit}/{entry.path}"
    # Files outside GitHub keep their own host.
    assert fetch.registry_files("rewardbench")[0].url.startswith("https://huggingface.co/")


def test_a_file_the_server_lacks_is_a_clear_404(online):
    # jina-chat is a known AlpacaEval model that the mirror (so the server) does not hold.
    entry = jk.data_files("alpacaeval").set_index("path").loc[
        "results/jina-chat/weighted_alpaca_eval_gpt4_turbo/annotations.json"]
    with pytest.raises(jk.DataFileError) as err:
        jk.load_pairs("alpacaeval", models=["jina-chat"])
    msg = str(err.value)
    assert entry["url"] in msg and "the server answered HTTP 404" in msg
    assert "JUDGEKIT_DATA_URL" in msg  # the fix points at the setting in use
    assert _download.unreachable(entry["url"]) is None  # a 404 is not a dead host
