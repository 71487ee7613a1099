"""A loopback OpenAI-compatible server whose answers the test writes byte for byte.

``answer(body, attempt)`` returns ``(status, headers, body bytes)`` for the ``attempt``-th request
(0, 1, ...) carrying a chat request ``body``; the server counts every answer with a 2xx status as
paid (``paid``, by request body) and every request (``seen``). The Files and Batches endpoints
are served just enough for ``submit_batch``/``collect_batch``: a batch completes at once, with
the output file that ``batch_output(input lines)`` writes.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections import Counter
from collections.abc import Callable

from aiohttp import web

Answer = tuple[int, list[tuple[str, str]], bytes]


def digest(body: dict) -> str:
    """A request body's identity (its canonical JSON)."""
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


def chat_answer(content: str = "[[A]]", usage: object = None, **extra: object) -> bytes:
    """The JSON bytes of a chat completion answering ``content``."""
    body = {"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 2} if usage is None else usage,
            **extra}
    return json.dumps(body, ensure_ascii=False).encode()


def ok(data: bytes) -> Answer:
    return 200, [("Content-Type", "application/json")], data


class RawServer:
    """Start with ``with RawServer(answer) as url:`` (``url`` ends in ``/v1``)."""

    def __init__(self, answer: Callable[[dict, int], Answer] | None = None,
                 batch_output: Callable[[list[dict]], bytes] | None = None) -> None:
        self.answer = answer or (lambda body, attempt: ok(chat_answer()))
        self.batch_output = batch_output
        self.paid: Counter[str] = Counter()
        self.seen: Counter[str] = Counter()
        self.bodies: dict[str, dict] = {}
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.port = 0

    def reset(self, answer: Callable[[dict, int], Answer]) -> None:
        """New answers and zero counts (the server keeps running)."""
        with self._lock:
            self.answer = answer
            self.paid.clear()
            self.seen.clear()
            self.bodies.clear()

    async def _chat(self, request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        key = digest(body)
        with self._lock:
            attempt = self.seen[key]
            self.seen[key] += 1
            self.bodies[key] = body
            answer = self.answer
        status, headers, data = answer(body, attempt)
        if 200 <= status < 300:
            with self._lock:
                self.paid[key] += 1
        response = web.Response(status=status, body=data)
        for name, value in headers:
            response.headers[name] = value
        return response

    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        data = form["file"].file.read()
        file_id = f"file-{uuid.uuid4().hex[:12]}"
        self.files[file_id] = data
        return web.json_response({"id": file_id, "object": "file", "bytes": len(data),
                                  "created_at": 0, "filename": "in.jsonl", "purpose": "batch",
                                  "status": "processed"})

    async def _create(self, request: web.Request) -> web.Response:
        spec = await request.json()
        lines = [json.loads(x) for x in self.files[spec["input_file_id"]].split(b"\n") if x]
        out_id = f"file-{uuid.uuid4().hex[:12]}"
        self.files[out_id] = self.batch_output(lines)
        with self._lock:
            for line in lines:
                self.paid[digest(line["body"])] += 1
        batch_id = f"batch_{uuid.uuid4().hex[:12]}"
        self.batches[batch_id] = {
            "id": batch_id, "object": "batch", "endpoint": "/v1/chat/completions",
            "input_file_id": spec["input_file_id"], "completion_window": "24h",
            "status": "completed", "output_file_id": out_id, "error_file_id": None,
            "created_at": 0, "request_counts": {"total": len(lines), "completed": len(lines),
                                                "failed": 0}}
        return web.json_response(self.batches[batch_id])

    async def _batch(self, request: web.Request) -> web.Response:
        return web.json_response(self.batches[request.match_info["batch_id"]])

    async def _content(self, request: web.Request) -> web.Response:
        return web.Response(body=self.files[request.match_info["file_id"]],
                            content_type="application/octet-stream")

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        app = web.Application(client_max_size=1 << 26)
        app.add_routes([web.post("/v1/chat/completions", self._chat),
                        web.post("/v1/files", self._upload),
                        web.post("/v1/batches", self._create),
                        web.get("/v1/batches/{batch_id}", self._batch),
                        web.get("/v1/files/{file_id}/content", self._content)])
        runner = web.AppRunner(app, access_log=None)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(runner.cleanup())
            loop.close()

    def __enter__(self) -> str:
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the loopback server did not start")
        return f"http://127.0.0.1:{self.port}/v1"

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
