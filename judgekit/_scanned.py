"""Whether a table argument is a :class:`judgekit.ScannedTable` (a table an engine holds), told
without importing ibis or the scale subpackage."""

from __future__ import annotations

from typing import Any


def is_scanned(table: Any) -> bool:
    return type(table).__name__ == "ScannedTable" and hasattr(table, "expr")


def frame_of(table: Any) -> Any:
    """A small scanned table (pairs) read whole into a frame; anything else unchanged."""
    return table.to_pandas() if is_scanned(table) else table
