"""The simulated server from a TOML/JSON config, and ``judgekit serve-sim``."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.sim.judge import SimJudge
from judgekit.sim.server import SimServer

__all__ = ["serve_forever", "server_from_config"]

#: config keys passed to SimServer as they are, with their defaults
_PLAIN = {"latency": 0.0, "latency_jitter": 0.0, "batch_delay": 0.2, "rpm": None, "tpm": None,
          "rate_window": 60.0, "rate_headers": True}


def _load_config(config: str | Path | Mapping[str, Any] | None) -> dict[str, Any]:
    if config is None:
        return {}
    if isinstance(config, Mapping):
        return dict(config)
    path = Path(config)
    text = path.read_bytes()
    if path.suffix == ".toml":
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib
        return tomllib.loads(text.decode())
    from judgekit._jsonfile import parse_json

    config = parse_json(text, path)
    if not isinstance(config, dict):
        raise ValueError(f"{path}: expected a JSON object of server settings")
    return config


def server_from_config(config: str | Path | Mapping[str, Any] | None, *, host: str = "127.0.0.1",
                       port: int = 0) -> SimServer:
    """Build a :class:`SimServer` from a JSON/TOML file or dict.

    Keys: ``judge`` (SimJudge parameters) or ``judges`` (model name -> parameters), ``faults``
    (see :class:`Faults`), ``latency``, ``latency_jitter``, ``batch_delay``, ``rpm``, ``tpm``,
    ``rate_window``, ``rate_headers``, ``pairs`` (a CSV or parquet file whose labels the judge knows).

    Parameters
    ----------
    config : str, Path, mapping or None
        The configuration: a ``.json`` or ``.toml`` file, or the same keys as a dict; None gives
        the default judge with no faults and no limits.
    host : str, default "127.0.0.1"
        The address to listen on.
    port : int, default 0
        The port; 0 lets the system pick a free one.

    Returns
    -------
    SimServer
        The server, not yet started.

    Examples
    --------
    >>> from judgekit.sim import server_from_config
    >>> server = server_from_config({"judge": {"position_bias": 1.0}, "rpm": 600, "tpm": 150_000})
    >>> server.rpm, server.tpm, server.rate_window, server.judge_for("any").position_bias
    (600, 150000, 60.0, 1.0)
    """
    cfg = _load_config(config)
    known = {"judge", "judges", "faults", "pairs", *_PLAIN}
    unknown = sorted(set(cfg) - known)
    if unknown:
        raise ValueError(f"serve-sim config: unknown keys {unknown}; known keys are {sorted(known)}")
    sim_fields = {f.name for f in fields(SimJudge)}

    def make(spec: Mapping[str, Any], where: str) -> SimJudge:
        bad = sorted(set(spec) - sim_fields)
        if bad:
            raise ValueError(f"serve-sim config: {where} has unknown SimJudge parameters {bad}")
        return SimJudge(**spec)

    if "judges" in cfg:
        judge: Any = {name: make(spec, f"judges.{name}") for name, spec in cfg["judges"].items()}
    else:
        judge = make(cfg.get("judge", {}), "judge")
    pairs = None
    if "pairs" in cfg:
        p = Path(cfg["pairs"])
        pairs = pd.read_parquet(p) if p.suffix == ".parquet" else pd.read_csv(p)
    plain = {key: cfg.get(key, default) for key, default in _PLAIN.items()}
    return SimServer(judge, pairs, faults=cfg.get("faults"), host=host, port=port, **plain)


def serve_forever(host: str = "127.0.0.1", port: int = 0, config: str | Path | None = None) -> int:
    """Run a simulated judge server until interrupted (``judgekit serve-sim``).

    SIGINT (Ctrl-C) and SIGTERM stop it.

    Parameters
    ----------
    host : str, default "127.0.0.1"
        The address to listen on.
    port : int, default 0
        The port; 0 lets the system pick a free one (the address is printed).
    config : str, Path or None
        A configuration file, as for :func:`server_from_config`.

    Returns
    -------
    int
        0, the exit status, once stopped.

    Examples
    --------
    From the shell (runs until stopped)::

        judgekit serve-sim --port 8000 --config sim.toml
    """
    import signal

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    # SIGTERM (what process managers send) stops it like Ctrl-C; SIGINT too, also when the shell
    # that started the server in the background set it to be ignored
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, stop)
    server = server_from_config(config, host=host, port=port).start()
    print(f"judgekit simulated judge server at {server.base_url}  (Ctrl-C to stop)", flush=True)
    print(f"  e.g. OpenAI(base_url={server.base_url!r}, api_key='sim')", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    print(f"served: {json.dumps(server.stats)}", flush=True)
    return 0
