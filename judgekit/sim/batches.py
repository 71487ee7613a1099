"""The Files and Batches endpoints of the simulated server (OpenAI's Batch API, in memory).

A batch reads its JSONL input file, waits ``delay`` seconds "in_progress", answers every line with
the chat completer (batch requests bypass faults and rate limits, as the Batch API has its own
queue) and writes the output and error files.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from judgekit.sim.chat import RequestError
from judgekit.sim.errors import error_response

__all__ = ["BatchStore"]


class BatchStore:
    """Uploaded files and batches, and the aiohttp handlers that serve them.

    Parameters
    ----------
    complete : callable
        ``await complete(body)`` returns the chat.completion object answering a request body.
    count : callable
        ``count(key)`` increments one of the server's counters.
    delay : float
        Seconds a batch stays "in_progress" before it completes.
    """

    def __init__(self, complete: Callable[[dict], Awaitable[dict]], count: Callable[[str], None],
                 delay: float) -> None:
        self._complete = complete
        self._count = count
        self.delay = float(delay)
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}

    def routes(self) -> list:
        from aiohttp import web

        return [
            web.post("/v1/files", self.file_upload),
            web.get("/v1/files/{file_id}", self.file_get),
            web.get("/v1/files/{file_id}/content", self.file_content),
            web.post("/v1/batches", self.batch_create),
            web.get("/v1/batches/{batch_id}", self.batch_get),
            web.post("/v1/batches/{batch_id}/cancel", self.batch_cancel),
        ]

    # ------------------------------------------------------------------ files
    def _store(self, data: bytes, filename: str, purpose: str) -> dict[str, Any]:
        file_id = f"file-{uuid.uuid4().hex[:24]}"
        meta = {"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                "filename": filename, "purpose": purpose, "status": "processed"}
        self.files[file_id] = {"meta": meta, "data": data}
        return meta

    async def file_upload(self, request):
        from aiohttp import web

        reader = await request.multipart()
        purpose, filename, data = "batch", "upload.jsonl", b""
        async for part in reader:
            if part.name == "purpose":
                purpose = (await part.read()).decode()
            elif part.name == "file":
                filename = part.filename or filename
                data = await part.read()
        return web.json_response(self._store(data, filename, purpose))

    async def file_get(self, request):
        from aiohttp import web

        f = self.files.get(request.match_info["file_id"])
        if f is None:
            return error_response(404, "no such file")
        return web.json_response(f["meta"])

    async def file_content(self, request):
        from aiohttp import web

        f = self.files.get(request.match_info["file_id"])
        if f is None:
            return error_response(404, "no such file")
        return web.Response(body=f["data"], content_type="application/octet-stream")

    # ------------------------------------------------------------------ batches
    async def batch_create(self, request):
        from aiohttp import web

        try:
            body = await request.json()
        except ValueError:
            return error_response(400, "request body is not JSON")
        file_id = body.get("input_file_id")
        if file_id not in self.files:
            return error_response(400, f"unknown input_file_id {file_id!r}")
        if body.get("endpoint") != "/v1/chat/completions":
            return error_response(400, "only the /v1/chat/completions endpoint is simulated")
        batch_id = f"batch_{uuid.uuid4().hex[:24]}"
        obj = {
            "id": batch_id, "object": "batch", "endpoint": body["endpoint"], "errors": None,
            "input_file_id": file_id, "completion_window": body.get("completion_window", "24h"),
            "status": "validating", "output_file_id": None, "error_file_id": None,
            "created_at": int(time.time()), "in_progress_at": None, "completed_at": None,
            "metadata": body.get("metadata"),
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
        }
        self.batches[batch_id] = obj
        asyncio.get_running_loop().create_task(self._run(batch_id))
        return web.json_response(obj)

    async def _run(self, batch_id: str) -> None:
        obj = self.batches[batch_id]
        # JSON lines end at line feeds only (str.splitlines also breaks at U+2028 in a string)
        lines = self.files[obj["input_file_id"]]["data"].decode().split("\n")
        obj["status"], obj["in_progress_at"] = "in_progress", int(time.time())
        obj["request_counts"]["total"] = sum(1 for line in lines if line.strip())
        await asyncio.sleep(self.delay)
        out, err = [], []

        async def one(line: str) -> None:
            custom_id = None
            try:
                item = json.loads(line)
                custom_id = item["custom_id"]
                payload = await self._complete(item["body"])
            except (ValueError, KeyError, TypeError, RequestError) as exc:
                obj["request_counts"]["failed"] += 1
                err.append({"id": f"batch_req_{uuid.uuid4().hex[:12]}", "custom_id": custom_id,
                            "response": None,
                            "error": {"code": "invalid_request", "message": str(exc)}})
                return
            self._count("batch_requests")
            self._count("paid")
            obj["request_counts"]["completed"] += 1
            out.append({"id": f"batch_req_{uuid.uuid4().hex[:12]}", "custom_id": custom_id,
                        "response": {"status_code": 200, "request_id": uuid.uuid4().hex,
                                     "body": payload}, "error": None})

        todo = [line for line in lines if line.strip()]
        for start in range(0, len(todo), 256):
            if obj["status"] == "cancelling":
                break
            await asyncio.gather(*(one(line) for line in todo[start : start + 256]))
        for rows, key in ((out, "output_file_id"), (err, "error_file_id")):
            if rows:
                data = "".join(json.dumps(r) + "\n" for r in rows).encode()
                obj[key] = self._store(data, f"{batch_id}_{key}.jsonl", "batch_output")["id"]
        obj["status"] = "cancelled" if obj["status"] == "cancelling" else "completed"
        obj["completed_at"] = int(time.time())

    async def batch_get(self, request):
        from aiohttp import web

        obj = self.batches.get(request.match_info["batch_id"])
        if obj is None:
            return error_response(404, "no such batch")
        return web.json_response(obj)

    async def batch_cancel(self, request):
        from aiohttp import web

        obj = self.batches.get(request.match_info["batch_id"])
        if obj is None:
            return error_response(404, "no such batch")
        if obj["status"] in ("validating", "in_progress"):
            obj["status"] = "cancelling"
        return web.json_response(obj)

