"""Judgment logs of any size: the metrics' per-(judge, pair) cells computed where the data lives
(DuckDB on one machine, Spark or a warehouse beyond it) through ibis, the bootstrap in memory.

Needs ``pip install "llm-judgekit[duckdb]"`` or ``"llm-judgekit[spark]"``; see
``docs/large_logs.md``.
"""

from judgekit.scale._source import ScannedTable, scan_table

__all__ = ["ScannedTable", "scan_table"]
