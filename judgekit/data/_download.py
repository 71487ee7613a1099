"""Download one registered file into the cache: pooch, configured to fail fast, once, and quietly.

- One attempt per file (``pooch.retrieve`` does not retry), a 5 s connect timeout and a 60 s read
  timeout, and pooch's own "Downloading ..." log lines silenced. pooch writes to a temporary file,
  checks the sha256 and renames; the transfer itself is judgekit's small downloader, which stops
  a response that grows past the registered size (or :data:`MAX_UNKNOWN_BYTES` for files without
  one), so a server cannot fill the disk, not even with a compressed transfer encoding.
- A host that does not resolve, refuses connections or does not answer is remembered as
  unreachable for :data:`REMEMBER_S` seconds: every later download from it fails at once with the
  same reason, so fetching a 512-file dataset offline fails in milliseconds, not minutes.
- Progress: one ``tqdm.auto`` bar per dataset inside :func:`progress_group` (a widget in Jupyter,
  a text bar in a terminal), else one bar per file; none with ``TQDM_DISABLE=1`` (set by
  ``judgekit reproduce``, whose pages are static).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from urllib.parse import urlsplit

from judgekit.exceptions import DataFileError

__all__ = ["REMEMBER_S", "download", "forget_unreachable", "progress_group", "unreachable"]

CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 60.0
#: How long a host that could not be reached is not tried again.
REMEMBER_S = 300.0
#: Largest download accepted for a file without a registered size (4 GiB).
MAX_UNKNOWN_BYTES = 4 << 30

_UNREACHABLE: dict[str, tuple[float, str]] = {}
_LOCK = threading.Lock()


def _host(url: str) -> str:
    parts = urlsplit(url)
    return (parts.hostname or "") + (f":{parts.port}" if parts.port else "")


def unreachable(url: str) -> str | None:
    """Why the host of ``url`` could not be reached in the last :data:`REMEMBER_S` s, or None."""
    host = _host(url)
    with _LOCK:
        seen = _UNREACHABLE.get(host)
        if seen is None:
            return None
        if time.monotonic() - seen[0] > REMEMBER_S:
            del _UNREACHABLE[host]
            return None
        return seen[1]


def forget_unreachable() -> None:
    """Try every host again (e.g. after the network came back)."""
    with _LOCK:
        _UNREACHABLE.clear()


def _reason(err: BaseException) -> tuple[str, bool]:
    """A short reason for a failed download, and whether the host itself is unreachable."""
    import requests

    if isinstance(err, requests.exceptions.HTTPError) and err.response is not None:
        resp = err.response
        return f"the server answered HTTP {resp.status_code} {resp.reason or ''}".rstrip(), False
    if isinstance(err, requests.exceptions.ConnectTimeout):
        return f"the connection timed out after {CONNECT_TIMEOUT_S:.0f} s", True
    if isinstance(err, requests.exceptions.ReadTimeout):
        return f"the server stopped sending for {READ_TIMEOUT_S:.0f} s", False
    if isinstance(err, requests.exceptions.ConnectionError):
        chain, cause = [], err
        while cause is not None and len(chain) < 10:
            chain.append(f"{type(cause).__name__}: {cause}")
            cause = cause.__cause__ or cause.__context__
        text = " | ".join(chain)
        if any(s in text for s in ("NameResolution", "Name or service not known", "getaddrinfo",
                                   "nodename nor servname", "No address associated")):
            return "the host name does not resolve (no network, or no DNS)", True
        if "refused" in text.lower():
            return "the connection was refused", True
        if "Network is unreachable" in text or "No route to host" in text:
            return "the network is unreachable", True
        return f"the connection failed ({type(err).__name__})", False
    if isinstance(err, OSError):
        return f"the file could not be written ({type(err).__name__}: {err})", False
    return f"{type(err).__name__}: {str(err)[:200]}", False


def _failure(entry, url: str, reason: str, fix: str) -> DataFileError:
    err = DataFileError(f"{entry.name}: could not download {url}: {reason}.\n{fix}")
    err.url, err.reason = url, reason
    return err


# ------------------------------------------------------------------------------------- progress

class _LazyBar:
    """A progress bar drawn on the first byte received, so a download that fails to connect
    draws nothing; ``shared`` bars collect the files of a dataset."""

    def __init__(self, make) -> None:
        self.make, self.bar = make, None

    def update(self, n: int) -> None:
        if self.bar is None:
            self.bar = self.make()
        self.bar.update(n)


def _new_bar(total: int | None, desc: str):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024, leave=True)


class _Group:
    def __init__(self, label: str, total: int | None, enabled: bool) -> None:
        self.label, self.total, self.enabled = label, total, enabled
        self.bar, self.files = None, 0

    def file_bar(self, entry) -> _LazyBar | None:
        if not self.enabled:
            return None

        def make():
            if self.bar is None:
                start = self.total if self.total is not None else entry.size
                self.bar = _new_bar(start, f"downloading {self.label}")
            elif self.total is None and entry.size and self.bar.total is not None:
                self.bar.total += entry.size
            self.files += 1
            self.bar.set_postfix_str(f"{self.files} file{'s' if self.files > 1 else ''}")
            return self.bar

        return _LazyBar(make)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


_GROUP: ContextVar[_Group | None] = ContextVar("judgekit_download_group", default=None)


@contextlib.contextmanager
def progress_group(label: str, *, total: int | None = None, enabled: bool = True) -> Iterator[None]:
    """Show the downloads made inside the block as one progress bar named ``label``.

    The bar appears only if something is downloaded. ``total`` (bytes) when known in advance;
    otherwise the bar grows by each file's registered size.
    """
    if _GROUP.get() is not None:  # nested (a loader called by fetch): keep the outer bar
        yield
        return
    group = _Group(label, total, enabled)
    token = _GROUP.set(group)
    try:
        yield
    finally:
        _GROUP.reset(token)
        group.close()


def _progressbar(entry, progress: bool) -> _LazyBar | None:
    from judgekit._env import progress_bars

    if not progress or not progress_bars():
        return None
    group = _GROUP.get()
    if group is not None:
        return group.file_bar(entry)
    return _LazyBar(lambda: _new_bar(entry.size, f"downloading {entry.path.rsplit('/', 1)[-1]}"))


@contextlib.contextmanager
def _quiet_pooch() -> Iterator[None]:
    import pooch

    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


# ------------------------------------------------------------------------------------- download

class _Downloader:
    """A pooch downloader (``downloader(url, output_file, pooch)``): one streamed GET with
    timeouts, stopped as soon as the body grows past ``limit`` bytes."""

    def __init__(self, entry, limit: int, bar: _LazyBar | None) -> None:
        self.entry, self.limit, self.bar = entry, limit, bar

    def __call__(self, url: str, output_file, pooch, check_only: bool = False) -> None:
        import requests

        with requests.get(url, stream=True, timeout=(CONNECT_TIMEOUT_S, READ_TIMEOUT_S)) as resp:
            resp.raise_for_status()
            received = 0
            with open(output_file, "wb") as out:
                for chunk in resp.iter_content(chunk_size=1 << 16):
                    received += len(chunk)
                    if received > self.limit:
                        raise DataFileError(
                            f"{self.entry.name}: {url} sent more than the expected "
                            f"{self.limit:,} bytes; the download was stopped and discarded. "
                            "Upstream may have changed, or the server is not serving this file."
                        )
                    out.write(chunk)
                    if self.bar is not None:
                        self.bar.update(len(chunk))


def download(entry, target: Path, *, fix: str, progress: bool = True) -> Path:
    """Download ``entry`` to ``target`` (written to a temporary file, hashed, then renamed).

    Raises :class:`DataFileError` naming the file, its URL, the reason and ``fix``; the error
    carries ``url`` and ``reason`` attributes.
    """
    import pooch

    url = entry.url
    why = unreachable(url)
    if why is not None:
        raise _failure(entry, url, f"{_host(url)} could not be reached a moment ago ({why}); "
                                   "not trying it again for a few minutes", fix)
    known = f"sha256:{entry.sha256}" if entry.sha256 else None
    bar = _progressbar(entry, progress)
    limit = entry.size if entry.size is not None else MAX_UNKNOWN_BYTES
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with _quiet_pooch():
            path = pooch.retrieve(url, known_hash=known, fname=target.name, path=target.parent,
                                  downloader=_Downloader(entry, limit, bar))
    except DataFileError:
        raise
    except Exception as err:  # requests' network errors, pooch's hash check, OS errors
        import requests

        if isinstance(err, ValueError) and not isinstance(err, requests.RequestException):
            # pooch: the downloaded bytes do not match the registered sha256
            raise DataFileError(
                f"{entry.name}: the download from {url} does not match the registered sha256 "
                f"{entry.sha256} ({str(err).splitlines()[0][:200]}). Upstream may have changed, "
                "or JUDGEKIT_DATA_URL points at a server with other files; please report it."
            ) from None
        reason, host_down = _reason(err)
        if host_down:
            with _LOCK:
                _UNREACHABLE[_host(url)] = (time.monotonic(), reason)
        raise _failure(entry, url, reason, fix) from None
    finally:
        if bar is not None and _GROUP.get() is None and bar.bar is not None:
            bar.bar.close()
    return Path(path)
