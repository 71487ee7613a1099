"""OpenAI-style error answers of the simulated server."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["error_response"]


def error_response(status: int, message: str, kind: str = "invalid_request_error",
                   headers: Mapping[str, str] | None = None, code: str | None = None):
    """An aiohttp JSON response with OpenAI's error body ``{"error": {message, type, param, code}}``."""
    from aiohttp import web

    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return web.json_response(body, status=status, headers=dict(headers or {}))
