"""``judgekit serve-sim`` in its own process, for the benchmarks (the server's work must not
share the client's CPU time or interpreter lock)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any


def start(tmp: Path, config: dict[str, Any], pairs,
          port: int = 0) -> tuple[subprocess.Popen, str]:
    """Start the server with ``config`` (plus ``pairs`` as the labels it knows) on ``port`` (0: a
    free one); its base URL."""
    pairs_file = tmp / "pairs.parquet"
    pairs.to_parquet(pairs_file)
    path = tmp / "sim.json"
    path.write_text(json.dumps({**config, "pairs": str(pairs_file)}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "judgekit.cli", "serve-sim", "--port", str(port), "--config", str(path)],
        stdout=subprocess.PIPE, text=True,
    )
    line = proc.stdout.readline()
    if "http://" not in line:
        proc.kill()
        raise RuntimeError(f"serve-sim did not start: {line!r}")
    return proc, line.split(" at ", 1)[1].split()[0]


def stop(proc: subprocess.Popen) -> dict[str, int]:
    """Stop the server (SIGTERM) and return the counts it printed."""
    proc.send_signal(signal.SIGTERM)
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return json.loads(out.strip().splitlines()[-1].split("served: ", 1)[1])
