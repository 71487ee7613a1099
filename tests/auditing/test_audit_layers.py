"""The audit computes; judgekit.viz draws and writes (issue 24): the analysis modules of
judgekit.auditing import no chart, PNG or template library, an audit computed in a fresh process
loads none of them, and the page's templates escape what comes from the data."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

import judgekit as jk
from judgekit.viz.audit_report import _environment, summary_html

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
AUDITING = ROOT / "judgekit" / "auditing"
DRAWING = {"altair", "vl_convert", "jinja2", "markupsafe"}
#: The methods of Audit and Section that hand over to judgekit.viz (the output side).
ADAPTERS = {"charts", "png", "to_html", "save"}


def _imports(path: Path) -> list[tuple[str, str]]:
    """(module, enclosing function or "") of every absolute import in a file, at any depth."""
    found = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else where
            if isinstance(child, ast.Import):
                found.extend((a.name, where) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
                # "from judgekit import viz" is recorded as judgekit.viz
                found.extend((f"{child.module}.{a.name}", where) for a in child.names)
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def test_the_analysis_imports_no_drawing_library_and_reaches_viz_only_through_the_adapters():
    files = sorted(AUDITING.glob("*.py"))
    assert {"core.py", "sections.py", "verdicts.py"} <= {f.name for f in files}
    for path in files:
        for module, where in _imports(path):
            assert module.split(".")[0] not in DRAWING, (path.name, module)
            if module.startswith("judgekit.viz") and path.name != "html.py":  # html.py: the old name
                assert path.name == "core.py" and where in ADAPTERS, (path.name, module, where)


def test_an_audit_loads_no_drawing_library_until_asked_to_draw():
    probe = ("import sys, json, judgekit as jk\n"
             "pairs, judgments, _ = jk.sim.simulate_judgments(60, repeats=2, seed=0)\n"
             "report = jk.audit(judgments, pairs, n_boot=0)\n"
             "before = sorted(m for m in ('altair', 'vl_convert', 'jinja2') if m in sys.modules)\n"
             "report.sections['consistency'].charts\n"
             "print(json.dumps([before, 'altair' in sys.modules, report.summary()]))\n")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    before, drawn, summary = json.loads(run.stdout)
    assert before == [] and drawn                 # computed without them; drawing loads altair
    assert summary.startswith("1 judge, 60 pairs")


def test_the_templates_escape_by_default():
    page = _environment().get_template("audit_summary.html.j2").render(
        concerns=[{"level": "bad", "text": "<script>alert(1)</script>", "section_title": "<b>s</b>"}],
        unsure=[], good=[], missing=[{"title": "<img src=x>", "reason": "r", "fix": ""}],
        max_findings=15)
    assert "<script" not in page and "<img" not in page and "<b>s</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;img src=x&gt;" in page


def test_a_hostile_judge_name_shows_as_text_in_the_summary():
    """(The whole page, charts and tables included, is checked in test_audit.py.)"""
    pairs, judgments, _ = jk.sim.simulate_judgments(40, seed=0)
    evil = "<script>alert('judge')</script>"
    two = pd.concat([judgments.assign(judge=evil), judgments.assign(judge="plain")])
    report = jk.audit(two, pairs, n_boot=0)  # two judges: the findings name them
    summary = summary_html(report)
    assert "&lt;script&gt;alert(&#39;judge&#39;)&lt;/script&gt;" in summary
    assert "<script" not in summary


_WORKER = r"""
import json, sys, judgekit as jk
from judgekit.viz._audit_worker import ChartWorker
pairs, judgments, _ = jk.sim.simulate_judgments(60, seed=0)
worker = ChartWorker()
try:
    report = jk.audit(judgments, pairs, n_boot=0, on_section=worker.send)
    worker.collect(report)
finally:
    worker.close()
from_worker = dict(report._png)
fresh = jk.audit(judgments, pairs, n_boot=0)          # drawn here, in this process
print(json.dumps({"failed": worker.failed, "charts": sorted(report.charts),
                  "worker": sorted("/".join(k) for k in from_worker),
                  "same": all(png == fresh.png(*k) for k, png in from_worker.items()),
                  "titles": all(report._chart_titles.get(k) for k in from_worker),
                  "skipped_when_warm": ChartWorker()._proc is None}))
"""


def test_the_chart_worker_draws_the_charts_the_audit_draws_itself():
    """`judgekit audit` draws each section's charts in a forked child while the analysis runs;
    they are byte for byte the charts drawn in-process. (In a fresh process, as the command
    runs: once vl-convert's engine runs in a process, no child is forked from it.)"""
    if not sys.platform.startswith("linux"):
        import pytest

        pytest.skip("the worker forks on Linux only (elsewhere the report is drawn in-process)")
    run = subprocess.run([sys.executable, "-c", _WORKER], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["failed"] == ""
    assert got["worker"] == got["charts"] and len(got["charts"]) >= 3
    assert got["same"] and got["titles"]
    assert got["skipped_when_warm"]


def test_the_old_homes_of_the_moved_names_still_work_and_warn():
    import importlib

    import pytest

    from judgekit.viz import audit_report
    from judgekit.viz.inference import ppi_chart

    assert jk.viz.ppi_chart is ppi_chart
    for old_home in ("judgekit", "judgekit.inference", "judgekit.inference.charts"):
        with pytest.warns(DeprecationWarning, match="judgekit.viz.inference.ppi_chart"):
            assert importlib.import_module(old_home).ppi_chart is ppi_chart
    plan = jk.plan_labels(accuracy=0.8, half_width=0.05)
    with pytest.warns(DeprecationWarning, match="plan_chart"):
        old = plan.chart.to_dict()
    assert old == jk.viz.plan_chart(plan).to_dict()
    html = importlib.import_module("judgekit.auditing.html")
    with pytest.warns(DeprecationWarning, match="judgekit.viz.audit_report.audit_page"):
        assert html.render is audit_report.audit_page
    with pytest.warns(DeprecationWarning, match="audit_report.table_file"):
        assert html.table_file("a b", "c") == "tables/a-b-c.csv"


def test_sections_are_computed_charts_first_and_found_as_if_in_the_order_shown(monkeypatch):
    """`judgekit audit` computes the sections with charts first (so that its chart worker draws
    while the report card is computed); the report is the same as one computed in the order
    shown: same sections in the same order, the same findings in the same order."""
    from judgekit.auditing import sections

    shown = [key for key, _ in sections.SECTIONS]
    assert sorted(sections.COMPUTE_ORDER) == sorted(shown)
    assert sections.COMPUTE_ORDER[-1] == "report_card"
    pairs, judgments, _ = jk.sim.simulate_judgments(80, repeats=2, seed=3)
    fast = jk.audit(judgments, pairs, n_boot=50)
    monkeypatch.setattr(sections, "COMPUTE_ORDER", tuple(shown))
    plain = jk.audit(judgments, pairs, n_boot=50)
    assert list(fast.sections) == list(plain.sections) == shown
    assert [(f.section, f.level, f.text) for f in fast.findings] == \
        [(f.section, f.level, f.text) for f in plain.findings]
    assert len({f.section for f in fast.findings}) >= 3


def test_the_chart_worker_warms_every_chart_function_the_sections_draw_with():
    import re

    from judgekit.viz import audit_report

    used = set(re.findall(r"\bviz\.(\w+)\(", Path(audit_report.__file__).read_text("utf-8")))
    assert used and used == set(audit_report._BUILDERS)


def test_the_command_line_starts_without_pandas_or_scipy():
    """`judgekit audit` forks its chart worker once pandas is imported and before scipy and the
    metrics: the command's own module and `import judgekit` load neither."""
    probe = ("import sys, judgekit, judgekit.cli\n"
             "print(sorted(m for m in ('pandas', 'scipy', 'numpy', 'altair') if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
