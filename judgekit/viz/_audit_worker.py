"""Draw an audit's charts in a second process while the first computes the audit.

``judgekit audit`` spends about a second starting altair and vl-convert's engine and half a
second per chart; on a machine with two cores that work can run beside the analysis. The
worker is a forked child (Linux only), forked by the command once pandas is imported (which
both need) and before the analysis' own imports (scipy, judgekit's metrics), which the child does
not need: it starts altair and vl-convert at once, then draws each section it is sent
(:func:`judgekit.viz.audit_report.audit_charts`) and sends back the PNG bytes and titles. The
charts are the same ones :meth:`judgekit.Audit.save` draws in one process; when the worker
cannot start or fails, the report is drawn in the parent as before.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

# An audit and its sections are judgekit.auditing's Audit and Section; viz sits below auditing
# in the layers, so they are typed Any here (nothing of auditing is imported).
Audit = Section = Any

__all__: list[str] = []

#: How long to wait for a section's charts before drawing them in-process instead.
_PATIENCE_S = 120.0

_WARM_UP = {"data": {"values": [{"x": 1}]}, "mark": "point",
            "encoding": {"x": {"field": "x", "type": "quantitative"}}}


def _serve(conn: Any) -> None:
    """The child: start the engines, then draw every section received until None arrives."""
    try:
        from judgekit.viz._export import chart_title, to_png

        to_png(_WARM_UP)  # imports altair's theme and starts vl-convert's engine
        from judgekit.viz.audit_report import audit_charts, warm_charts

        warm_charts()
        while (section := conn.recv()) is not None:
            drawn = {}
            for name, chart in audit_charts(section).items():
                # the spec unvalidated (the builders' specs are validated in the tests and in
                # every in-process drawing); the PNG is the same bytes, tested
                spec = chart.to_dict(validate=False)
                drawn[name] = (to_png(spec), chart_title(spec) or name.replace("_", " "))
            conn.send((section.key, drawn))
    except EOFError:  # the parent went away
        pass
    except BaseException as err:  # reported to the parent, which then draws itself
        with contextlib.suppress(Exception):
            conn.send(("error", f"{type(err).__name__}: {err}"))
    finally:
        conn.close()


class ChartWorker:
    """A child process drawing the charts of sections as they are computed.

    ``send(section)`` after each section (the ``on_section`` of :func:`judgekit.audit`), then
    ``collect(audit)`` puts the PNGs and titles into the audit, so that saving it draws nothing.
    """

    def __init__(self) -> None:
        self._conn = self._proc = None
        self._sent: list[str] = []
        self.failed = ""
        if not sys.platform.startswith("linux"):  # fork is safe there; elsewhere draw in-process
            return
        if "vl_convert" in sys.modules:
            # its engine may already run threads here, which a forked child would wait for
            # forever; it is warm anyway, so drawing in-process costs no start-up
            return
        try:
            import multiprocessing

            ctx = multiprocessing.get_context("fork")
            self._conn, child = ctx.Pipe()
            self._proc = ctx.Process(target=_serve, args=(child,), daemon=True)
            self._proc.start()
            child.close()
        except (OSError, ValueError) as err:
            self._conn = self._proc = None
            self.failed = f"{type(err).__name__}: {err}"

    def send(self, section: Section) -> None:
        from judgekit.viz.audit_report import chart_names

        if self._conn is None or not chart_names(section):
            return
        try:
            self._conn.send(section)
            self._sent.append(section.key)
        except Exception as err:  # e.g. a table that cannot be pickled: drawn in-process instead
            self._sent.clear()
            self._stop(f"{type(err).__name__}: {err}")

    def collect(self, audit: Audit) -> None:
        """Wait for the sections sent and keep their charts in ``audit``; on failure nothing is
        kept and :meth:`judgekit.Audit.save` draws them itself."""
        if self._conn is None:
            return
        drawn: dict[str, dict[str, tuple[bytes, str]]] = {}
        try:
            for _ in self._sent:
                if not self._conn.poll(_PATIENCE_S):
                    raise RuntimeError(f"no chart from the worker in {_PATIENCE_S:.0f} s")
                key, charts = self._conn.recv()
                if key == "error":
                    raise RuntimeError(charts)
                drawn[key] = charts
        except (OSError, EOFError, RuntimeError) as err:
            self._stop(str(err) or type(err).__name__)
            return
        for key, charts in drawn.items():
            for name, (png, title) in charts.items():
                audit._png[(key, name)] = png
                audit._chart_titles[(key, name)] = title
        self._stop("")

    def close(self) -> None:
        """Stop the child (after :meth:`collect`, or when the audit failed)."""
        self._stop("")

    def _stop(self, why: str) -> None:
        self.failed = self.failed or why
        if self._conn is not None:
            with contextlib.suppress(OSError, ValueError):
                self._conn.send(None)
            self._conn.close()
        if self._proc is not None:
            # nothing is left for it to do (it may still be starting its engines: not waited for)
            self._proc.terminate()
            self._proc.join(timeout=5)
        self._conn = self._proc = None
