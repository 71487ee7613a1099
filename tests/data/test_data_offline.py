"""No mirror and no network: fail in seconds with a few readable lines, not minutes of retries.

"No network" is simulated two ways, so the tests behave the same on machines with internet:
``JUDGEKIT_DATA_URL`` at a host that cannot resolve (``.invalid`` is reserved for that), and at
a loopback port where nothing listens (connection refused).
"""

import os
import socket
import subprocess
import sys
import time

import pytest

import judgekit as jk
from judgekit.cli import main
from judgekit.data import _download, datasets, fetch


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


UNREACHABLE = {
    "unresolvable": lambda: "http://judgekit-test.invalid/",
    "refused": lambda: f"http://127.0.0.1:{_closed_port()}/",
}


@pytest.fixture(params=sorted(UNREACHABLE))
def offline(request, tmp_path, monkeypatch):
    """No mirror, an empty cache, and a download host that cannot be reached."""
    url = UNREACHABLE[request.param]()
    monkeypatch.delenv("JUDGEKIT_DATA_MIRROR", raising=False)
    monkeypatch.setenv("JUDGEKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("JUDGEKIT_DATA_URL", url)
    datasets._CACHE.clear()
    _download.forget_unreachable()
    yield request.param, url
    _download.forget_unreachable()


def test_cli_fetch_fails_fast_with_a_short_message(offline):
    kind, url = offline
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "judgekit.cli", "fetch", "llmbar"], env=env,
                          capture_output=True, text=True, timeout=120)
    seconds = time.perf_counter() - start
    assert proc.returncode == 1
    assert seconds < 10, f"took {seconds:.1f} s"
    err = proc.stderr
    assert "Traceback" not in err and proc.stdout == ""
    lines = err.strip().splitlines()
    assert len(lines) <= 5 and len(err) < 2000, err
    first = fetch.registry_files("llmbar")[0]
    assert first.path in err and f"{url}princeton-nlp/LLMBar/{first.commit}/{first.path}" in err
    assert "To fix:" in err and "judgekit fetch llmbar" in err
    assert ("does not resolve" if kind == "unresolvable" else "refused") in err
    assert "511 more need" in err and "not tried" in err
    assert "mirror" not in err.lower()  # no mirror is set, so none is mentioned
    assert "Downloading" not in err  # pooch's per-file log lines stay quiet


def test_loader_fails_fast_naming_file_url_and_fix(offline):
    kind, url = offline
    start = time.perf_counter()
    with pytest.raises(jk.DataFileError) as err:
        jk.load_pairs("llmbar")
    assert time.perf_counter() - start < 5
    msg = str(err.value)
    assert url in msg and "To fix: connect to the internet and run `judgekit fetch llmbar`" in msg
    assert "mirror" not in msg.lower() and len(msg.splitlines()) <= 3
    # The host is remembered: the next dataset fails at once without a connection attempt.
    start = time.perf_counter()
    with pytest.raises(jk.DataFileError, match="could not be reached a moment ago"):
        jk.load_pairs("pandalm")
    assert time.perf_counter() - start < 1


def test_fetch_api_tries_every_file_but_each_host_once(offline, monkeypatch):
    calls = []
    real = _download._Downloader.__call__

    def counting(self, url, output_file, pooch, check_only=False):
        calls.append(url)
        return real(self, url, output_file, pooch, check_only)

    monkeypatch.setattr(_download._Downloader, "__call__", counting)
    with pytest.raises(jk.DataFileError, match=r"512 of 512 files of 'llmbar' could not be fetched"):
        jk.fetch_dataset("llmbar", progress=False)
    assert len(calls) == 1


def test_cli_reports_each_name_and_exits_1(offline, capsys):
    assert main(["fetch", "nope", "pandalm"]) == 1
    err = capsys.readouterr().err
    assert "judgekit fetch nope: unknown dataset or table 'nope'" in err
    assert "judgekit fetch pandalm: 3 of 3 files of 'pandalm' could not be fetched" in err


def test_alpacaeval_message_does_not_claim_a_mirror(offline):
    with pytest.raises(jk.DataFileError) as err:
        jk.load_judgments("alpacaeval")
    msg = str(err.value)
    assert "results/FuseChat-Gemma-2-9B-Instruct/weighted_alpaca_eval_gpt4_turbo" in msg
    assert "mirror" not in msg.lower()
    assert "or download the URL yourself to " in msg  # where the file would go in the cache
