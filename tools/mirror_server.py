"""Serve a judgekit data mirror over HTTP, laid out like ``https://raw.githubusercontent.com/``.

``GET /<owner>/<repo>/<commit>/<path>`` answers the upstream bytes of
``<mirror>/github/<owner>/<repo>/<commit>/<path>``; a copy stored as ``<path>.gz`` is sent
decompressed (or, when the client accepts it, as is with ``Content-Encoding: gzip``, as GitHub's
raw host does). With ``JUDGEKIT_DATA_URL`` pointing at it, judgekit downloads through its real
online path without the internet: the tests and ``benchmarks/bench_first_run.py`` use it, and
it can serve an offline cluster from one copy of the data.

Usage::

    with MirrorServer("/path/to/mirror") as server:
        os.environ["JUDGEKIT_DATA_URL"] = server.url
        ...
"""

from __future__ import annotations

import gzip
import http.server
import threading
from collections import Counter
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

__all__ = ["MirrorServer"]


class MirrorServer:
    """A threaded loopback HTTP server over a mirror's ``github/`` folder.

    Parameters
    ----------
    mirror : str or Path
        The mirror folder (holding ``github/<owner>/<repo>/<commit>/...``).
    host : str
        Address to bind (loopback by default).
    port : int
        0 picks a free port.

    Attributes
    ----------
    url : str
        Base URL to use as ``JUDGEKIT_DATA_URL``.
    served : collections.Counter
        Requests answered with 200, by (unquoted) path, e.g. ``/<owner>/<repo>/<commit>/<path>``.
    """

    def __init__(self, mirror: str | Path, host: str = "127.0.0.1", port: int = 0) -> None:
        self.root = Path(mirror).resolve() / "github"
        if not self.root.is_dir():
            raise FileNotFoundError(f"{self.root} does not exist: not a judgekit data mirror")
        self.served: Counter[str] = Counter()
        self._lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                path = unquote(urlsplit(self.path).path)
                body, encoding = server._lookup(path, "gzip" in self.headers.get("Accept-Encoding", ""))
                if body is None:
                    self.send_error(404, "not in the mirror")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                if encoding:
                    self.send_header("Content-Encoding", encoding)
                self.end_headers()
                self.wfile.write(body)
                with server._lock:
                    server.served[path] += 1

            def log_message(self, *args) -> None:
                pass

        self._httpd = http.server.ThreadingHTTPServer((host, port), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://{host}:{self._httpd.server_address[1]}/"
        self._thread: threading.Thread | None = None

    def _lookup(self, path: str, gzip_ok: bool) -> tuple[bytes | None, str | None]:
        parts = PurePosixPath(path).parts[1:]  # drop the leading "/"
        if len(parts) < 4 or any(p in ("..", ".", "") for p in parts):
            return None, None
        plain = self.root.joinpath(*parts)
        packed = plain.with_name(plain.name + ".gz")
        if plain.is_file():
            return plain.read_bytes(), None
        if packed.is_file():
            data = packed.read_bytes()
            return (data, "gzip") if gzip_ok else (gzip.decompress(data), None)
        return None, None

    def start(self) -> MirrorServer:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> MirrorServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
