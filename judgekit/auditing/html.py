"""Moved: the audit page is rendered by :mod:`judgekit.viz.audit_report` from jinja2 templates
(``judgekit/viz/templates``). The old names here keep working for one release, with a
DeprecationWarning naming the new place."""

from __future__ import annotations

import warnings
from typing import Any

from judgekit._deprecation import _message
from judgekit._stack import caller_level

#: Old name here -> its new home in judgekit.viz.audit_report.
_MOVED = {"render": "audit_page", "chart_file": "chart_file", "table_file": "table_file",
          "MAX_ROWS": "MAX_ROWS", "MAX_FINDINGS": "MAX_FINDINGS"}

__all__: list[str] = []


def __getattr__(name: str) -> Any:
    new = _MOVED.get(name)
    if new is None:
        raise AttributeError(f"module 'judgekit.auditing.html' has no attribute {name!r}")
    from judgekit.viz import audit_report

    warnings.warn(_message(f"judgekit.auditing.html.{name}", "0.2",
                           f"judgekit.viz.audit_report.{new}", None),
                  DeprecationWarning, stacklevel=caller_level())
    return getattr(audit_report, new)
