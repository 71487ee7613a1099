"""The README's first command on a fresh machine: no mirror, an empty cache, every dataset the
notebooks use downloaded on first use (from a loopback server of the mirror's files, reached
through ``JUDGEKIT_DATA_URL``), and ``judgekit reproduce`` exits 0.

CI runs the notebooks that need the most data the first time (00: LLMBar; 06 and 07: the 43
AlpacaEval models and the tables); ``benchmarks/bench_first_run.py`` runs the whole series the
same way (about 10 minutes).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _mirror import MirrorServer

from judgekit.data import fetch

MIRROR = Path(os.environ["JUDGEKIT_DATA_MIRROR"]) if os.environ.get("JUDGEKIT_DATA_MIRROR") else None
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
pytestmark = pytest.mark.skipif(
    MIRROR is None or not MIRROR.is_dir() or not NOTEBOOKS.is_dir(),
    reason="needs the data mirror and the notebooks of the checkout")


def _reproduce(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, MirrorServer]:
    with MirrorServer(MIRROR) as server:
        env = {k: v for k, v in os.environ.items() if k != "JUDGEKIT_DATA_MIRROR"}
        env.update(JUDGEKIT_DATA_URL=server.url, JUDGEKIT_CACHE_DIR=str(tmp_path / "cache"))
        proc = subprocess.run(
            [sys.executable, "-m", "judgekit.cli", "reproduce", "--out", str(tmp_path / "report"),
             "--smoke", *args], env=env, capture_output=True, text=True, timeout=3600)
    return proc, server


def _served(server: MirrorServer, dataset: str) -> int:
    paths = {f"/{f.repo}/{f.commit}/{f.path}" for f in fetch.registry_files(dataset)}
    return sum(1 for p in server.served if p in paths)


def test_reproduce_downloads_what_notebooks_00_06_07_need_and_exits_0(tmp_path):
    proc, server = _reproduce(tmp_path, "--only", "00", "06", "07")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (tmp_path / "report" / "index.html").is_file()
    assert _served(server, "alpacaeval") == 43  # the default model set, downloaded once
    assert _served(server, "llmbar") > 0 and _served(server, "arena_elo") == 1
    assert max(server.served.values()) == 1  # later loads read the cache

