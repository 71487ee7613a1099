"""A loopback OpenAI-compatible server that misbehaves on purpose, for the engine's tests.

The first path segment of the base URL picks the behaviour (``http://127.0.0.1:PORT/<mode>/v1``);
:data:`MODES` lists them. It speaks HTTP/1.1 over raw sockets, so it can send what no framework
would (bodies that never end, answers that inflate to gigabytes, hundreds of headers), and it
counts per mode the chat requests it received (``asked``) and the answers it generated
(``paid``). Any request in absolute form (the server used as an HTTP proxy) gets a 502 that
quotes its ``Proxy-Authorization``, as a debugging proxy would (a 200 answer quoting it, for a
path with ``/echo200/``); a CONNECT (an https URL through it) is refused with a 502 and its
headers kept in ``tunnels``.
"""

from __future__ import annotations

import asyncio
import collections
import email.utils
import gzip
import json
import time
import zlib

from judgekit._aioloop import BackgroundLoop

#: the modes, by what they send
MODES = {
    "ok": "a normal answer",
    "gzip": "a normal answer, gzip-compressed",
    "trickle": "a normal answer whose body (with a Content-Length) comes at a byte per 0.25 s",
    "endless": "a chunked body that never ends (a chunk per 0.1 s)",
    "keepalive": "an event stream of keep-alive comments that never ends",
    "slow_headers": "a status line, then a header line per 0.25 s, for ever",
    "bomb_gzip": "8 MiB of spaces in an answer, gzip-compressed (about 8 KB on the wire)",
    "bomb_deflate": "the same, deflate (zlib) compressed, chunked",
    "bomb_rawdeflate": "the same, raw deflate without the zlib wrapper",
    "bomb_double": "the same, gzip twice (Content-Encoding: gzip, gzip)",
    "big": "an answer of 2 MiB, with a Content-Length",
    "big_chunked": "an answer of 2 MiB, chunked",
    "brotli": "an answer labelled Content-Encoding: br (not asked for)",
    "big_500": "a 500 whose body inflates to 8 MiB (gzip)",
    "error200": "HTTP 200 carrying {'error': {'message', 'code': 502}} on the first two requests",
    "error200_rate": "HTTP 200 carrying a rate-limit error object (type rate_limit_error), once",
    "error200_quota": "HTTP 200 carrying an insufficient_quota error object",
    "headers200": "a normal answer with 300 extra headers",
    "huge_headers": "a normal answer with 4000 extra headers of 64 bytes",
    "retry_after_seconds": "429 with Retry-After: 86400 for the first request, then normal",
    "retry_after_date": "429 with Retry-After an HTTP date a year ahead, first request",
    "retry_after_garbage": "429 with Retry-After: soon-ish, first request",
    "tokens_1": "normal answers advertising x-ratelimit-limit-tokens: 1",
}

ANSWER_TEXT = "Both are fine, but [[A]] is better."


def answer(body: dict, **extra) -> dict:
    return {"id": "chatcmpl-h", "object": "chat.completion", "created": 0,
            "model": body.get("model", "m"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": ANSWER_TEXT}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
            **extra}


def _head(status: int, headers: list[tuple[str, object]], reason: str = "OK") -> bytes:
    lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _padded(body: dict, size: int) -> bytes:
    """An answer whose JSON is padded with spaces to ``size`` bytes."""
    text = json.dumps(answer(body)).encode()
    return text[:-1] + b" " * max(0, size - len(text)) + b"}"


class HostileServer:
    """Start with ``with HostileServer() as srv:``; ``srv.url(mode)`` is a base URL,
    ``srv.paid[mode]`` and ``srv.asked[mode]`` the counts."""

    def __init__(self) -> None:
        self.paid: collections.Counter = collections.Counter()
        self.asked: collections.Counter = collections.Counter()
        self.proxied: list[str] = []
        #: the headers of every CONNECT received (the server used as the proxy of an https URL)
        self.tunnels: list[dict[str, str]] = []
        self._tasks: set[asyncio.Task] = set()

    def url(self, mode: str) -> str:
        return f"http://127.0.0.1:{self.port}/{mode}/v1"

    # ------------------------------------------------------------------ plumbing
    def __enter__(self) -> HostileServer:
        self._loop = BackgroundLoop("hostile-server")

        async def start():
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
            return self._server.sockets[0].getsockname()[1]

        self.port = self._loop.run(start())
        return self

    def __exit__(self, *exc) -> None:
        async def stop():
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

        self._loop.run(stop())
        self._loop.stop()

    async def _serve(self, reader, writer) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                target, headers, raw = request
                if not target.startswith(("/", "http://")):  # CONNECT host:port: refused
                    self.tunnels.append(headers)
                    writer.write(_head(502, [("Content-Length", 0)], "Bad Gateway"))
                    await writer.drain()
                    return
                if target.startswith("http://"):
                    self.proxied.append(target)
                    quoted = headers.get("proxy-authorization", "")
                    if "/echo200/" in target:   # a 200 whose answer quotes it
                        self.paid["echo200"] += 1
                        reply = answer({}, note=f"via proxy, Proxy-Authorization: {quoted}")
                        reply["choices"][0]["message"]["content"] = f"[[A]] ({quoted})"
                        await self._send(writer, 200, json.dumps(reply).encode())
                        continue
                    data = json.dumps({"error": {"message": f"bad gateway (request carried "
                                                 f"Proxy-Authorization: {quoted})"}}).encode()
                    writer.write(_head(502, [("Content-Type", "application/json"),
                                             ("Content-Length", len(data))], "Bad Gateway") + data)
                    await writer.drain()
                    continue
                mode = target.strip("/").split("/")[0]
                mode = "ok" if mode.startswith("v1") else mode
                self.asked[mode] += 1
                if await self._chat(writer, mode, json.loads(raw or b"{}")) == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError, OSError, ValueError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _send(self, w, status, data: bytes, headers=(), reason="OK") -> None:
        w.write(_head(status, [("Content-Type", "application/json"),
                               ("Content-Length", len(data)), *headers], reason) + data)
        await w.drain()

    # ------------------------------------------------------------------ the modes
    async def _chat(self, w, mode: str, body: dict):
        nth = self.asked[mode]
        if mode.startswith("retry_after_") and nth == 1:
            value = {"retry_after_seconds": "86400",
                     "retry_after_date": email.utils.formatdate(time.time() + 365 * 86400,
                                                                usegmt=True),
                     "retry_after_garbage": "soon-ish"}[mode]
            data = json.dumps({"error": {"message": "slow down", "type": "requests"}}).encode()
            await self._send(w, 429, data, [("Retry-After", value)], "Too Many Requests")
            return None
        if mode.startswith("error200"):
            error = {"error200": {"message": "Upstream provider overloaded, try again",
                                  "code": 502},
                     "error200_rate": {"message": "Rate limit reached upstream",
                                       "type": "rate_limit_error"},
                     "error200_quota": {"message": "You exceeded your current quota",
                                        "type": "insufficient_quota",
                                        "code": "insufficient_quota"}}[mode]
            failing = {"error200": 2, "error200_rate": 1, "error200_quota": 10 ** 9}[mode]
            if nth <= failing:
                await self._send(w, 200, json.dumps({"error": error}).encode())
                return None
        self.paid[mode] += 1
        text = json.dumps(answer(body)).encode()
        if mode == "gzip":
            await self._send(w, 200, gzip.compress(text), [("Content-Encoding", "gzip")])
        elif mode == "trickle":
            w.write(_head(200, [("Content-Type", "application/json"),
                                ("Content-Length", len(text))]))
            for byte in text:
                w.write(bytes([byte]))
                await w.drain()
                await asyncio.sleep(0.25)
        elif mode in ("endless", "keepalive"):
            kind = "text/event-stream" if mode == "keepalive" else "application/json"
            w.write(_head(200, [("Content-Type", kind), ("Transfer-Encoding", "chunked")]))
            w.write(_chunk(text[:-1]))
            while True:
                w.write(_chunk(b": keep-alive\n\n" if mode == "keepalive" else b" "))
                await w.drain()
                await asyncio.sleep(0.1)
        elif mode == "slow_headers":
            w.write(b"HTTP/1.1 200 OK\r\n")
            for i in range(10 ** 6):
                w.write(f"X-Slow-{i}: 1\r\n".encode())
                await w.drain()
                await asyncio.sleep(0.25)
        elif mode.startswith("bomb_") or mode == "big_500":
            plain = _padded(body, 8 << 20)
            if mode in ("bomb_gzip", "big_500"):
                data, encoding = gzip.compress(plain, 9), "gzip"
            elif mode == "bomb_deflate":
                data, encoding = zlib.compress(plain, 9), "deflate"
            elif mode == "bomb_rawdeflate":
                co = zlib.compressobj(9, zlib.DEFLATED, -15)
                data, encoding = co.compress(plain) + co.flush(), "deflate"
            else:
                data, encoding = gzip.compress(gzip.compress(plain, 9), 9), "gzip, gzip"
            status = 500 if mode == "big_500" else 200
            if mode == "bomb_deflate":   # chunked, no length to refuse it by
                w.write(_head(status, [("Content-Type", "application/json"),
                                       ("Content-Encoding", encoding),
                                       ("Transfer-Encoding", "chunked")]))
                for at in range(0, len(data), 1024):
                    w.write(_chunk(data[at:at + 1024]))
                w.write(b"0\r\n\r\n")
                await w.drain()
            else:
                await self._send(w, status, data, [("Content-Encoding", encoding)],
                                 "OK" if status == 200 else "Internal Server Error")
        elif mode == "big":
            await self._send(w, 200, _padded(body, 2 << 20))
        elif mode == "big_chunked":
            data = _padded(body, 2 << 20)
            w.write(_head(200, [("Content-Type", "application/json"),
                                ("Transfer-Encoding", "chunked")]))
            for at in range(0, len(data), 65536):
                w.write(_chunk(data[at:at + 65536]))
            w.write(b"0\r\n\r\n")
            await w.drain()
        elif mode == "brotli":
            await self._send(w, 200, b"\x1b\x03\x00\xf8" + text, [("Content-Encoding", "br")])
        elif mode == "headers200":
            await self._send(w, 200, text, [(f"X-Trace-{i}", "1") for i in range(300)])
        elif mode == "huge_headers":
            await self._send(w, 200, text, [(f"X-Trace-{i}", "x" * 64) for i in range(4000)])
        elif mode == "tokens_1":
            await self._send(w, 200, text, [("x-ratelimit-limit-tokens", "1")])
        else:
            await self._send(w, 200, text)
        return None


async def _read_request(reader):
    line = await reader.readline()
    if not line:
        return None
    _, target, _ = line.decode("latin1").split(" ", 2)
    headers = {}
    while True:
        h = await reader.readline()
        if h in (b"\r\n", b"\n", b""):
            break
        name, _, value = h.decode("latin1").partition(":")
        headers[name.strip().lower()] = value.strip()
    size = int(headers.get("content-length") or 0)
    return target, headers, (await reader.readexactly(size) if size else b"")
