"""The maintainers' mirror server (``tools/mirror_server.py``, not part of the package) for the
tests that download through judgekit's real online path from a loopback HTTP server."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def _tools_module(name: str):
    root = next(p for p in Path(__file__).resolve().parents if (p / "tools" / f"{name}.py").is_file())
    spec = importlib.util.spec_from_file_location(name, root / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


MirrorServer = _tools_module("mirror_server").MirrorServer
