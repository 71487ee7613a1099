"""Moved: the audit page is rendered by :mod:`judgekit.viz.audit_report` from jinja2 templates
(``judgekit/viz/templates``). The old names here keep working for one release, with a
DeprecationWarning naming the new place."""

from __future__ import annotations

from judgekit._deprecation import moved

__all__: list[str] = []

__getattr__ = moved("judgekit.auditing.html", {
    "render": "judgekit.viz.audit_report:audit_page",
    **dict.fromkeys(("chart_file", "table_file", "MAX_ROWS", "MAX_FINDINGS"),
                    "judgekit.viz.audit_report"),
})
