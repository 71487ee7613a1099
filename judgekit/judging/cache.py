"""A SQLite store of judge calls, keyed by a hash of the full request, shared by processes.

Every paid response is written (and committed) before the engine counts its request as done, so a
run killed at any point — even with SIGKILL — loses at most the calls in flight. The key is the
sha256 of the endpoint URL (without credentials), the complete request body (model, messages,
decoding parameters) and the repeat index; the API key is never part of a request body and never
stored. The database runs in WAL mode with a busy timeout, so several processes can read and
write one cache at once.

Processes running the same job on one cache pay each distinct call once: before sending a call,
a run *claims* its key in the ``claims`` table (one transaction that also checks that no answer
is stored yet), renews the lease of its claims while they are in flight, and stores the answer
and drops the claim in one transaction. A key claimed by another live run is not sent: the run
waits for that answer and returns it as stored. A claim whose lease ran out (its process died)
or whose process is gone (same machine) is taken over. Requests recorded in a batch that was not
collected yet count as claimed too (see :mod:`judgekit.judging.batch`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.exceptions import CacheError
from judgekit.judging.batchrecords import BatchRecords

__all__ = ["ANSWER_COLUMNS", "Cache", "new_owner", "open_cache", "request_key"]

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
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    name TEXT PRIMARY KEY,
    value TEXT
);
"""
_COLUMNS = ("key", "endpoint", "model", "repeat", "request", "response", "status", "error",
            "prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "source", "created_at")
#: what a run reads back of a stored answer: everything but the request body
ANSWER_COLUMNS = ("key", "status", "response", "error", "prompt_tokens", "completion_tokens",
                  "cost_usd", "latency_s")
_CHUNK = 500
#: seconds a claim lives without renewal (a run renews its claims every LEASE / 4 seconds)
LEASE = 30.0


def request_key(endpoint: str, body: Mapping[str, Any], repeat: int) -> str:
    """sha256 of (endpoint, request body, repeat index), canonical JSON.

    Parameters
    ----------
    endpoint : str
        The endpoint's base URL, without credentials (a trailing slash is ignored).
    body : mapping
        The request body as sent; key order does not matter.
    repeat : int
        The repeat index, so repeated identical requests are distinct calls.

    Returns
    -------
    str
        64 hexadecimal digits.

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


def new_owner() -> str:
    """A claim owner id for one run: host, process id and a random part."""
    return f"{socket.gethostname()}|{os.getpid()}|{uuid.uuid4().hex[:12]}"


def _owner_is_gone(owner: str) -> bool:
    """True when ``owner`` is a run of a process on this machine that no longer exists."""
    host, _, rest = owner.partition("|")
    pid = rest.partition("|")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, owned by someone else
        return False
    return False


def _lenient(data: bytes) -> str | bytes:
    """A stored text that is not UTF-8 (a damaged or edited file) is read as its bytes."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return bytes(data)


def _fetch(conn: sqlite3.Connection, sql: str, args: Iterable[Any] = ()) -> list[tuple]:
    """Every row of a query; a text that is not UTF-8 comes back as bytes (for the reader of
    the answer to report) instead of failing the query, so one damaged row costs that row."""
    try:
        return conn.execute(sql, list(args)).fetchall()
    except sqlite3.OperationalError as exc:
        if "decode" not in str(exc).lower():
            raise
    conn.text_factory = _lenient
    try:
        return conn.execute(sql, list(args)).fetchall()
    finally:
        conn.text_factory = str


#: the most a SQLite INTEGER holds
_INT64 = 2**63 - 1


def _column_number(value: Any, kind: type) -> Any:
    """A number column's value as SQLite can store it; None when it is not one."""
    if value is None or isinstance(value, bool):
        return None
    if kind is int:
        return value if isinstance(value, int) and -_INT64 <= value <= _INT64 else None
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return None


def _chunks(keys: list[str]) -> Iterator[list[str]]:
    for i in range(0, len(keys), _CHUNK):
        yield keys[i : i + _CHUNK]


class Cache(BatchRecords):
    """The judge-call store: one SQLite file (WAL), safe across threads and processes.

    Parameters
    ----------
    path : str or Path, optional
        The database file; default ``judgekit._env.cache_dir() / "judge-cache.sqlite"``
        (``JUDGEKIT_CACHE_DIR`` overrides the directory).
    read_only : bool
        Open for reading only: runs answer what is stored, send the rest and return it, but store
        nothing (they warn how many answers were not stored). For a cache on read-only media or
        shared by others: in a folder this process cannot write, the file is opened as
        immutable (read as it is; changes others make while it is open are not seen).
    synchronous : {"normal", "full"}
        SQLite's ``synchronous`` setting. ``"normal"`` (default): a commit survives the process
        being killed, but a power loss or OS crash can undo the last few commits (the file stays
        consistent; a re-run pays those calls again). ``"full"``: every commit is flushed to disk
        (an fsync per stored answer).

    Raises
    ------
    CacheError
        The file cannot be created or opened, is not a judgekit cache or is damaged. The message
        names the file and the fix.

    Examples
    --------
    >>> import tempfile, os
    >>> with Cache(os.path.join(tempfile.mkdtemp(), "c.sqlite")) as cache:
    ...     stored = cache.put({"key": "k1", "endpoint": "e", "model": "m", "repeat": 0, "request": "{}",
    ...                "response": "{}", "status": "ok", "source": "live"})
    ...     len(cache), cache.get_many(["k1", "k2"]).keys()
    (1, dict_keys(['k1']))
    """

    def __init__(self, path: str | Path | None = None, *, read_only: bool = False,
                 synchronous: str = "normal") -> None:
        if path is None:
            from judgekit._env import cache_dir

            path = cache_dir() / "judge-cache.sqlite"
        self.path = Path(path).expanduser()
        self.read_only = bool(read_only)
        if synchronous not in ("normal", "full"):
            raise ValueError(f"synchronous must be 'normal' or 'full', got {synchronous!r}")
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        if self.path.is_dir():
            raise CacheError(f"the judge cache {self.path} is a directory; pass cache= the path "
                             "of a file, e.g. a judge-cache.sqlite inside it")
        if self.read_only:
            if not self.path.is_file():
                raise CacheError(f"the judge cache {self.path} does not exist (read_only=True "
                                 "opens an existing cache)")
            self._open_read_only()
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"cannot create the folder of the judge cache {self.path}: "
                             f"{exc.strerror or exc}; pass cache= a path in a writable folder") from exc
        self._connect(str(self.path), uri=False)
        for attempt in range(20):
            try:
                self._setup(synchronous)
                break
            except CacheError as exc:
                # several connections creating one file at once: a stale read snapshot is
                # refused without waiting (SQLITE_BUSY_SNAPSHOT); try again shortly
                if "locked" not in str(exc) or attempt == 19:
                    raise
                time.sleep(0.01 * (attempt + 1))

    def _open_read_only(self) -> None:
        """Open for reading; in a folder this process cannot write, open the file as immutable.

        SQLite reads a WAL-mode file through a shared-memory ``-shm`` file beside it, which it
        must create when it is missing: in a read-only folder it cannot, and the plain read-only
        opening fails. When the file holds every stored answer (no ``-wal`` file with answers
        not yet copied into it), it is opened with ``immutable=1`` instead: read as it is, with
        no locks and no ``-shm`` file (changes another process makes meanwhile are not seen).
        """
        uri = self.path.resolve().as_uri()
        self._connect(f"{uri}?mode=ro", uri=True)
        try:
            with self._sql("reading"):
                self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()
            return
        except CacheError as exc:
            cause = str(exc.__cause__ or exc).lower()
            if not any(m in cause for m in ("readonly", "read-only", "unable to open")):
                raise
            failure = exc
        self.close()
        wal = self.path.with_name(self.path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise CacheError(
                f"the judge cache {self.path} cannot be opened read-only: its folder cannot be "
                f"written and answers not yet copied into the file are in {wal.name} beside "
                "it; open it once where its folder can be written (or copy the folder), then "
                f"read it here ({failure})") from failure
        self._connect(f"{uri}?mode=ro&immutable=1", uri=True)
        with self._sql("reading"):
            self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()

    def _setup(self, synchronous: str) -> None:
        with self._sql("opening"):
            self._conn.execute("PRAGMA busy_timeout=60000")
            mode = self._conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal" and not os.access(self.path, os.W_OK):
                raise CacheError(self._explain(sqlite3.OperationalError("readonly file"), "opening"))
            if str(mode).lower() != "wal":
                raise CacheError(f"could not put the judge cache {self.path} in WAL mode (got "
                                 f"{mode}); is it on a network file system? Pass cache= a path "
                                 "on a local disk")
            self._conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
        with self._sql("creating its tables", transaction=True) as conn:
            for statement in filter(str.strip, _SCHEMA.split(";")):
                conn.execute(statement)

    def _connect(self, target: str, *, uri: bool) -> None:
        try:
            self._conn = sqlite3.connect(target, timeout=60.0, isolation_level=None,
                                         check_same_thread=False, uri=uri)
        except sqlite3.Error as exc:
            raise CacheError(self._explain(exc, "opening")) from exc

    def _explain(self, exc: BaseException, doing: str) -> str:
        text = str(exc)
        low = text.lower()
        where = f"the judge cache {self.path}"
        if "readonly" in low or "read-only" in low:
            fix = ("make the file and its folder writable, pass cache= another path, or open it "
                   "with cache=jk.Cache(path, read_only=True) to use the stored answers without "
                   "storing new ones")
            return f"{where} cannot be written ({text}); {fix}"
        if "malformed" in low or "not a database" in low or "corrupt" in low:
            return (f"{where} is damaged or is not a judgekit cache ({text}); move it away (its "
                    "stored answers cannot be read) or pass cache= another path")
        if "locked" in low or "busy" in low:
            return (f"{where} is locked by another process or thread ({text}) while {doing}; "
                    "try again when the other run has finished writing")
        if "full" in low or "disk i/o" in low:
            return f"{where} could not be written ({text}); free disk space or pass cache= another path"
        if "unable to open" in low:
            return (f"{where} cannot be opened ({text}); check that its folder exists and is "
                    "writable, or pass cache= another path")
        return f"{where}: {text} while {doing}"

    @contextlib.contextmanager
    def _sql(self, doing: str, *, transaction: bool = False) -> Iterator[sqlite3.Connection]:
        """The connection under the lock; sqlite errors become :class:`CacheError` naming the file."""
        with self._lock:
            if self._conn is None:
                raise CacheError(f"the judge cache {self.path} is closed")
            try:
                if transaction:
                    self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._conn
                except BaseException:
                    if transaction and self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
                if transaction:
                    self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if transaction and self._conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                raise CacheError(self._explain(exc, doing)) from exc

    def __repr__(self) -> str:
        return f"Cache({str(self.path)!r}{', read_only=True' if self.read_only else ''})"

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (the file stays)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __len__(self) -> int:
        with self._sql("counting") as conn:
            return int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def check_writable(self) -> None:
        """Commit a small write, so a cache that cannot store answers fails before any call.

        Raises :class:`CacheError` naming the file and the fix (a read-only cache passes: it
        stores nothing, by choice).
        """
        if self.read_only:
            return
        with self._sql("checking that it can be written", transaction=True) as conn:
            conn.execute("INSERT OR REPLACE INTO meta (name, value) VALUES ('checked_at', ?)",
                         (repr(time.time()),))

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Stored rows for these keys (missing keys are absent)."""
        keys = list(dict.fromkeys(keys))
        out: dict[str, dict[str, Any]] = {}
        with self._sql("reading") as conn:
            for chunk in _chunks(keys):
                marks = ",".join("?" * len(chunk))
                for row in _fetch(
                    conn, f"SELECT {', '.join(_COLUMNS)} FROM responses WHERE key IN ({marks})",
                    chunk,
                ):
                    out[row[0]] = dict(zip(_COLUMNS, row))
        return out

    def lookup(self, keys: Iterable[str]) -> Iterator[dict[str, Any]]:
        """The stored answers of these keys, a chunk at a time, without their request bodies
        (the columns of :data:`ANSWER_COLUMNS`); keys not stored are skipped.

        Only one chunk's rows are held at a time, so reading back a large run takes memory for
        what the caller keeps, not for the cache.

        Examples
        --------
        >>> import tempfile, os
        >>> with Cache(os.path.join(tempfile.mkdtemp(), "c.sqlite")) as cache:
        ...     _ = cache.put({"key": "k1", "endpoint": "e", "model": "m", "repeat": 0,
        ...                    "request": "{}", "response": "{}", "status": "ok", "source": "live"})
        ...     [(r["key"], r["status"]) for r in cache.lookup(["k2", "k1"])]
        [('k1', 'ok')]
        """
        keys = list(keys)
        select = f"SELECT {', '.join(ANSWER_COLUMNS)} FROM responses WHERE key IN "
        for chunk in _chunks(keys):
            with self._sql("reading") as conn:
                rows = _fetch(conn, f"{select}({','.join('?' * len(chunk))})", chunk)
            for row in rows:
                yield dict(zip(ANSWER_COLUMNS, row))

    def stored_keys(self, keys: Iterable[str]) -> set[str]:
        """The keys among these that have a stored answer."""
        found: set[str] = set()
        for chunk in _chunks(list(keys)):
            with self._sql("reading") as conn:
                found.update(k for (k,) in conn.execute(
                    f"SELECT key FROM responses WHERE key IN ({','.join('?' * len(chunk))})", chunk))
        return found

    def put(self, row: Mapping[str, Any], owner: str | None = None) -> bool:
        """Store one response durably (committed on return) and drop ``owner``'s claim on its key.
        False when an answer was stored already (the first stored wins) or the cache is
        read-only."""
        values = self._values(row)
        if self.read_only:
            return False
        with self._sql("storing an answer", transaction=True) as conn:
            return self._insert(conn, values, owner)

    @staticmethod
    def _insert(conn: sqlite3.Connection, values: Mapping[str, Any], owner: str | None) -> bool:
        cur = conn.execute(
            f"INSERT OR IGNORE INTO responses ({', '.join(_COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(_COLUMNS))})",
            [values[c] for c in _COLUMNS],
        )
        if owner is not None:
            conn.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (values["key"], owner))
        return cur.rowcount == 1

    @staticmethod
    def _values(row: Mapping[str, Any]) -> dict[str, Any]:
        values = {c: row.get(c) for c in _COLUMNS}
        values["created_at"] = values["created_at"] or time.time()
        for name, kind in (("prompt_tokens", int), ("completion_tokens", int),
                           ("cost_usd", float), ("latency_s", float)):
            values[name] = _column_number(values[name], kind)
        missing = [c for c in ("key", "endpoint", "model", "repeat", "request", "status", "source")
                   if values[c] is None]
        if missing:
            raise ValueError(f"cache rows need {missing}")
        return values

    def commit(self, owner: str, *, rows: Iterable[Mapping[str, Any]] = (),
               releases: Iterable[str] = (), claims: Iterable[str] = (),
               lease: float = LEASE) -> tuple[dict[str, dict[str, Any] | None], dict[str, str]]:
        """Store answers, drop claims and make claims for ``owner``, all in one transaction (so
        a run's calls in flight share one commit instead of one each).

        Returns ``({key: None if this row was stored, else the answer stored before it},
        {claimed key: state as in} :meth:`claim`)``. Each row is durable, and its claim dropped,
        when this returns.
        """
        values = [self._values(r) for r in rows]
        releases, claims = list(releases), list(dict.fromkeys(claims))
        if self.read_only:
            raise CacheError(f"the judge cache {self.path} is open read-only")
        stored: dict[str, dict[str, Any] | None] = {}
        with self._sql("storing answers", transaction=True) as conn:
            for v in values:
                if self._insert(conn, v, owner):
                    stored[v["key"]] = None
                else:
                    held = _fetch(conn, f"SELECT {', '.join(ANSWER_COLUMNS)} FROM responses "
                                  "WHERE key = ?", (v["key"],))
                    stored[v["key"]] = dict(zip(ANSWER_COLUMNS, held[0])) if held else None
            for chunk in _chunks(releases):
                conn.execute(f"DELETE FROM claims WHERE owner = ? AND key IN "
                             f"({','.join('?' * len(chunk))})", [owner, *chunk])
            state = self._claim(conn, claims, owner, lease)
        return stored, state

    def delete(self, keys: Iterable[str]) -> int:
        """Remove entries (e.g. paid errors to request again). Returns how many were removed."""
        removed = 0
        with self._sql("deleting answers", transaction=True) as conn:
            for chunk in _chunks(list(keys)):
                cur = conn.execute(
                    f"DELETE FROM responses WHERE key IN ({','.join('?' * len(chunk))})", chunk
                )
                removed += cur.rowcount
        return removed

    # ------------------------------------------------------------------ claims
    def claim(self, keys: Iterable[str], owner: str, lease: float = LEASE) -> dict[str, str]:
        """Claim keys for ``owner`` before sending them, in one transaction.

        Returns each key's state: ``"mine"`` (claimed: send it), ``"stored"`` (an answer is
        stored: read it) or ``"busy"`` (another live run holds it: wait for its answer). Claims
        whose lease ran out, or whose process on this machine is gone, are taken over.
        """
        keys = list(dict.fromkeys(keys))
        with self._sql("claiming requests", transaction=True) as conn:
            return self._claim(conn, keys, owner, lease)

    @staticmethod
    def _claim(conn: sqlite3.Connection, keys: list[str], owner: str,
               lease: float) -> dict[str, str]:
        now = time.time()
        state: dict[str, str] = {}
        for chunk in _chunks(keys):
            marks = ",".join("?" * len(chunk))
            for (key,) in conn.execute(f"SELECT key FROM responses WHERE key IN ({marks})", chunk):
                state[key] = "stored"
            held = conn.execute(f"SELECT key, owner, expires FROM claims WHERE key IN ({marks})",
                                chunk).fetchall()
            for key, other, expires in held:
                if key not in state and other != owner and expires > now \
                        and not _owner_is_gone(other):
                    state[key] = "busy"
            free = [(k, owner, now + lease) for k in chunk if k not in state]
            conn.executemany("INSERT OR REPLACE INTO claims (key, owner, expires) VALUES (?, ?, ?)",
                             free)
            state.update((k, "mine") for k, _, _ in free)
        return state

    def renew(self, owner: str, lease: float = LEASE) -> None:
        """Extend the lease of every claim ``owner`` holds."""
        with self._sql("renewing claims", transaction=True) as conn:
            conn.execute("UPDATE claims SET expires = ? WHERE owner = ?", (time.time() + lease, owner))

    def release(self, owner: str, keys: Iterable[str] | None = None) -> None:
        """Drop ``owner``'s claims (on these keys, or all of them)."""
        with self._sql("releasing claims", transaction=True) as conn:
            if keys is None:
                conn.execute("DELETE FROM claims WHERE owner = ?", (owner,))
                return
            for chunk in _chunks(list(keys)):
                conn.execute(f"DELETE FROM claims WHERE owner = ? AND key IN "
                             f"({','.join('?' * len(chunk))})", [owner, *chunk])

    # ------------------------------------------------------------------ export
    def to_frame(self, *, with_bodies: bool = False) -> pd.DataFrame:
        """All stored calls as a DataFrame (request/response JSON only with ``with_bodies``)."""
        cols = [c for c in _COLUMNS if with_bodies or c not in ("request", "response")]
        with self._sql("reading") as conn:
            rows = conn.execute(f"SELECT {', '.join(cols)} FROM responses ORDER BY created_at").fetchall()
        return pd.DataFrame(rows, columns=cols)

    def export(self, path: str | Path, *, with_bodies: bool = True) -> Path:
        """Write the stored calls to ``.parquet`` or ``.csv`` (by the file's suffix); the CSV is
        safe to open in a spreadsheet (a text cell that starts like a formula gets a leading
        apostrophe), and a link at ``path`` is replaced, never written through."""
        from judgekit._safewrite import write_file
        from judgekit._spreadsheet import csv_text

        path = Path(path)
        if path.suffix not in (".parquet", ".csv"):
            raise ValueError(f"export to .parquet or .csv, got {path.name!r}")
        df = self.to_frame(with_bodies=with_bodies)
        write_file(path, df.to_parquet(index=False) if path.suffix == ".parquet" else csv_text(df))
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
