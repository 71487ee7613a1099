"""A SQLite store of judge calls, keyed by a hash of the full request.

Every paid response is written (and committed) before the engine counts its request as done, so a
run killed at any point — even with SIGKILL — loses at most the calls in flight. The key is the
sha256 of the endpoint URL, the complete request body (model, messages, decoding parameters) and
the repeat index; the API key is never part of a request body and never stored. The database runs
in WAL mode with a busy timeout, so several processes can read and write one cache at once; the
first response stored for a key wins.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["Cache", "open_cache", "request_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    model TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    request TEXT NOT NULL,
    response TEXT,
    status TEXT NOT NULL,
    error TEXT,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    cost_usd REAL,
    latency_s REAL,
    source TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS batches (
    batch_id TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    input_file_id TEXT,
    keys TEXT NOT NULL,
    status TEXT,
    output_file_id TEXT,
    created_at REAL NOT NULL,
    collected_at REAL
);
"""
_COLUMNS = ("key", "endpoint", "model", "repeat", "request", "response", "status", "error",
            "prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "source", "created_at")


def request_key(endpoint: str, body: Mapping[str, Any], repeat: int) -> str:
    """sha256 of (endpoint, request body, repeat index), canonical JSON.

    Examples
    --------
    >>> a = request_key("http://x/v1", {"model": "m", "messages": []}, 0)
    >>> a == request_key("http://x/v1", {"messages": [], "model": "m"}, 0)
    True
    >>> a == request_key("http://x/v1", {"model": "m", "messages": []}, 1)
    False
    """
    canonical = json.dumps(
        {"endpoint": str(endpoint).rstrip("/"), "body": body, "repeat": int(repeat)},
        sort_keys=True, ensure_ascii=False, separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


class Cache:
    """The judge-call store: one SQLite file (WAL), safe across threads and processes.

    Parameters
    ----------
    path : str or Path, optional
        The database file; default ``judgekit._env.cache_dir() / "judge-cache.sqlite"``
        (``JUDGEKIT_CACHE_DIR`` overrides the directory).

    Examples
    --------
    >>> import tempfile, os
    >>> with Cache(os.path.join(tempfile.mkdtemp(), "c.sqlite")) as cache:
    ...     stored = cache.put({"key": "k1", "endpoint": "e", "model": "m", "repeat": 0, "request": "{}",
    ...                "response": "{}", "status": "ok", "source": "live"})
    ...     len(cache), cache.get_many(["k1", "k2"]).keys()
    (1, dict_keys(['k1']))
    """

    def __init__(self, path: str | Path | None = None) -> None:
        if path is None:
            from judgekit._env import cache_dir

            path = cache_dir() / "judge-cache.sqlite"
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(
            str(self.path), timeout=60.0, isolation_level=None, check_same_thread=False
        )
        with self._lock:
            self._conn.execute("PRAGMA busy_timeout=60000")
            mode = self._conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise RuntimeError(f"could not put the cache {self.path} in WAL mode (got {mode})")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)

    def __repr__(self) -> str:
        return f"Cache({str(self.path)!r})"

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (the file stays)."""
        with self._lock:
            self._conn.close()

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Stored rows for these keys (missing keys are absent)."""
        keys = list(dict.fromkeys(keys))
        out: dict[str, dict[str, Any]] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                marks = ",".join("?" * len(chunk))
                cur = self._conn.execute(
                    f"SELECT {', '.join(_COLUMNS)} FROM responses WHERE key IN ({marks})", chunk
                )
                for row in cur.fetchall():
                    out[row[0]] = dict(zip(_COLUMNS, row))
        return out

    def put(self, row: Mapping[str, Any]) -> bool:
        """Store one response durably (committed on return). False when the key was present."""
        values = {c: row.get(c) for c in _COLUMNS}
        values["created_at"] = values["created_at"] or time.time()
        missing = [c for c in ("key", "endpoint", "model", "repeat", "request", "status", "source")
                   if values[c] is None]
        if missing:
            raise ValueError(f"cache rows need {missing}")
        with self._lock:
            cur = self._conn.execute(
                f"INSERT OR IGNORE INTO responses ({', '.join(_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(_COLUMNS))})",
                [values[c] for c in _COLUMNS],
            )
            return cur.rowcount == 1

    def delete(self, keys: Iterable[str]) -> int:
        """Remove entries (e.g. paid errors to request again). Returns how many were removed."""
        keys = list(keys)
        removed = 0
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                cur = self._conn.execute(
                    f"DELETE FROM responses WHERE key IN ({','.join('?' * len(chunk))})", chunk
                )
                removed += cur.rowcount
        return removed

    # ------------------------------------------------------------------ batches
    def record_batch(self, batch_id: str, endpoint: str, input_file_id: str,
                     requests: Mapping[str, Any], status: str) -> None:
        """Remember a submitted batch (key -> {"repeat", "body"}), to collect it after a restart."""
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO batches (batch_id, endpoint, input_file_id, keys, status, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (batch_id, endpoint, input_file_id, json.dumps(dict(requests)), status, time.time()),
            )

    def update_batch(self, batch_id: str, **values: Any) -> None:
        allowed = {"status", "output_file_id", "collected_at"}
        bad = set(values) - allowed
        if bad:
            raise ValueError(f"cannot update batch fields {sorted(bad)}")
        if not values:
            return
        sets = ", ".join(f"{k} = ?" for k in values)
        with self._lock:
            self._conn.execute(f"UPDATE batches SET {sets} WHERE batch_id = ?",
                               [*values.values(), batch_id])

    def batches(self) -> pd.DataFrame:
        """Submitted batches: id, endpoint, status, number of requests, times."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT batch_id, endpoint, input_file_id, keys, status, output_file_id, "
                "created_at, collected_at FROM batches ORDER BY created_at"
            ).fetchall()
        cols = ["batch_id", "endpoint", "input_file_id", "keys", "status", "output_file_id",
                "created_at", "collected_at"]
        df = pd.DataFrame(rows, columns=cols)
        df["n_requests"] = df["keys"].map(lambda k: len(json.loads(k)))
        return df.drop(columns="keys")

    def batch_requests(self, batch_id: str) -> tuple[str, dict[str, Any]]:
        """(endpoint, {key: {"repeat", "body"}}) of a recorded batch."""
        with self._lock:
            row = self._conn.execute(
                "SELECT endpoint, keys FROM batches WHERE batch_id = ?", (batch_id,)
            ).fetchone()
        if row is None:
            raise KeyError(f"batch {batch_id!r} is not recorded in the cache {self.path}")
        return row[0], json.loads(row[1])

    # ------------------------------------------------------------------ export
    def to_frame(self, *, with_bodies: bool = False) -> pd.DataFrame:
        """All stored calls as a DataFrame (request/response JSON only with ``with_bodies``)."""
        cols = [c for c in _COLUMNS if with_bodies or c not in ("request", "response")]
        with self._lock:
            rows = self._conn.execute(f"SELECT {', '.join(cols)} FROM responses ORDER BY created_at").fetchall()
        return pd.DataFrame(rows, columns=cols)

    def export(self, path: str | Path, *, with_bodies: bool = True) -> Path:
        """Write the stored calls to ``.parquet`` or ``.csv`` (by the file's suffix)."""
        path = Path(path)
        df = self.to_frame(with_bodies=with_bodies)
        if path.suffix == ".parquet":
            df.to_parquet(path, index=False)
        elif path.suffix == ".csv":
            df.to_csv(path, index=False)
        else:
            raise ValueError(f"export to .parquet or .csv, got {path.name!r}")
        return path


@contextlib.contextmanager
def open_cache(
    cache: bool | str | os.PathLike | Cache | None, *, required: bool = False
) -> Iterator[Cache | None]:
    """The cache a run asks for, closed on exit when opened here.

    ``True``: the default file; a path: that file; a :class:`Cache`: itself (left open);
    ``False``/``None``: no cache (an error when ``required``).
    """
    if cache is None or cache is False:
        if required:
            raise ValueError("the Batch API needs a cache to fold the results into "
                             "(cache=True or a path)")
        yield None
        return
    if isinstance(cache, Cache):
        yield cache
        return
    store = Cache() if cache is True else Cache(cache)
    try:
        yield store
    finally:
        store.close()
