"""The batches a cache records: what was submitted to the Batch API, so it can be collected
after a restart and its requests are not sent again meanwhile (see
:mod:`judgekit.judging.batch`). A part of :class:`~judgekit.judging.cache.Cache`."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit._jsonfile import parse_json
from judgekit.exceptions import CacheError

__all__ = ["BatchRecords"]


class BatchRecords:
    """The ``batches`` table of a cache (mixed into :class:`~judgekit.judging.cache.Cache`)."""

    path: Path

    def _sql(self, doing: str, *, transaction: bool = False
             ) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _requests(self, held: Any, batch_id: str) -> dict[str, Any]:
        """The recorded requests of a batch; a damaged record is an error naming the cache."""
        try:
            value = parse_json(held, f"the judge cache {self.path}, batch {batch_id!r}")
        except ValueError as exc:
            raise CacheError(f"{exc}; remove that batch's record or pass cache= another path") from None
        if not isinstance(value, dict):
            raise CacheError(f"the judge cache {self.path}, batch {batch_id!r}: its recorded "
                             "requests are not a JSON object; remove that batch's record or "
                             "pass cache= another path")
        return value

    def record_batch(self, batch_id: str, endpoint: str, input_file_id: str,
                     requests: Mapping[str, Any], status: str) -> None:
        """Remember a submitted batch (key -> {"repeat", "body"}), to collect it after a restart."""
        with self._sql("recording a batch", transaction=True) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO batches (batch_id, endpoint, input_file_id, keys, status, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (batch_id, endpoint, input_file_id, json.dumps(dict(requests)), status, time.time()),
            )

    def update_batch(self, batch_id: str, **values: Any) -> None:
        """Set a recorded batch's ``status``, ``output_file_id`` or ``collected_at``."""
        allowed = {"status", "output_file_id", "collected_at"}
        bad = set(values) - allowed
        if bad:
            raise ValueError(f"cannot update batch fields {sorted(bad)}")
        if not values:
            return
        sets = ", ".join(f"{k} = ?" for k in values)
        with self._sql("updating a batch", transaction=True) as conn:
            conn.execute(f"UPDATE batches SET {sets} WHERE batch_id = ?", [*values.values(), batch_id])

    def batches(self) -> pd.DataFrame:
        """Submitted batches: id, endpoint, status, number of requests, times."""
        with self._sql("reading batches") as conn:
            rows = conn.execute(
                "SELECT batch_id, endpoint, input_file_id, keys, status, output_file_id, "
                "created_at, collected_at FROM batches ORDER BY created_at"
            ).fetchall()
        cols = ["batch_id", "endpoint", "input_file_id", "keys", "status", "output_file_id",
                "created_at", "collected_at"]
        df = pd.DataFrame(rows, columns=cols)
        df["n_requests"] = [len(self._requests(k, b)) for k, b in zip(df["keys"], df["batch_id"])]
        return df.drop(columns="keys")

    def pending_batches(self, keys: Iterable[str]) -> dict[str, str]:
        """{key: batch id} for these keys held by a recorded batch not collected yet."""
        wanted = set(keys)
        with self._sql("reading batches") as conn:
            rows = conn.execute("SELECT batch_id, keys FROM batches WHERE collected_at IS NULL "
                                "ORDER BY created_at").fetchall()
        out: dict[str, str] = {}
        for batch_id, held in rows:
            for key in wanted.intersection(self._requests(held, batch_id)):
                out.setdefault(key, batch_id)
        return out

    def batch_requests(self, batch_id: str) -> tuple[str, dict[str, Any]]:
        """(endpoint, {key: {"repeat", "body"}}) of a recorded batch."""
        with self._sql("reading batches") as conn:
            row = conn.execute(
                "SELECT endpoint, keys FROM batches WHERE batch_id = ?", (batch_id,)
            ).fetchone()
        if row is None:
            raise KeyError(f"batch {batch_id!r} is not recorded in the cache {self.path}")
        return row[0], self._requests(row[1], batch_id)
