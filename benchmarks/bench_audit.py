"""Time `judgekit audit` on one AlpacaEval annotations file, start-up included, and where it goes.

    JUDGEKIT_DATA_MIRROR=... python benchmarks/bench_audit.py [--model vicuna-7b] [--rounds 3]

The file (805 judgments) is found through judgekit's own registry of AlpacaEval files (from the
data mirror, or the download cache). Each round runs the command as a user would, ``python -m
judgekit.cli audit FILE --out DIR --no-progress`` in a fresh process, and prints its wall time to the
first answer (the summary the command prints on stderr once the analysis is done) and to the end
(target ≤ 3 s), beside its CPU time (user + system of the command and its chart worker, from the
children's resource usage) and the load average, since on a shared machine wall time is mostly
waiting for a core. Then, in one more fresh process, the breakdown of the CPU time of the same
steps done one after the other in one process: interpreter, imports, reading, the analysis, each
chart (altair's import, its Vega-Lite spec and PNG), and the page.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 3.0

# Runs in a fresh interpreter: the command's steps, one at a time, with the CPU time of each.
_BREAKDOWN = r"""
import sys, time
t0 = time.process_time()
marks = [("interpreter start-up", t0)]
def lap(label):
    marks.append((label, time.process_time()))
from judgekit._deferred import defer_iri_grammar
defer_iri_grammar()                                    # as the command line does
import numpy, pandas; lap("import numpy, pandas")
from judgekit.auditing import audit
from judgekit.data.formats import detect_format, read_any; lap("import judgekit (audit, readers)")
fmt, _ = detect_format(sys.argv[1]); pairs, judgments = read_any(sys.argv[1], fmt); lap("read the file")
report = audit(judgments, pairs, source=sys.argv[1]); lap("analysis (7 sections: tables, findings)")
from judgekit.viz.audit_report import chart_names
import altair; lap("import altair")
for s in report.sections.values():
    for name in chart_names(s):
        report.png(s.key, name); lap(f"  chart {s.key}/{name}: drawn, Vega-Lite spec, PNG")
report.to_html(images="files"); lap("HTML page")
prev = 0.0
for label, t in marks:
    print(f"{label:<56} {t - prev:6.2f} s")
    prev = t
print(f"{'total CPU':<56} {prev:6.2f} s")
"""


def _annotations(model: str) -> Path:
    from judgekit.data.alpacaeval import annotation_files
    from judgekit.data.fetch import _cache_path, _mirror_path

    entry = annotation_files()[model]
    path = _mirror_path(entry)
    if path is None and _cache_path(entry).is_file():
        path = _cache_path(entry)
    if path is None:
        sys.exit(f"no local copy of {entry.name}: set JUDGEKIT_DATA_MIRROR, or run "
                 "`judgekit fetch alpacaeval` first")
    return path


def run_once(path: Path, out: Path) -> tuple[float, float, float, str]:
    """Wall seconds to the first answer and to the end of one `judgekit audit` in a fresh
    process, its CPU seconds, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    first = float("nan")
    with subprocess.Popen([sys.executable, "-m", "judgekit.cli", "audit", str(path), "--out",
                           str(out), "--no-progress"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as run:
        err = []
        for line in run.stderr:  # the first answer: the summary, printed before the report
            if first != first and " judgments: " in line:
                first = time.perf_counter() - start
            err.append(line)
        stdout = run.stdout.read()
        run.wait()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        sys.exit(f"judgekit audit failed ({run.returncode}):\n{''.join(err)}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return first, wall, cpu, stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="vicuna-7b", help="AlpacaEval model (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    path = _annotations(args.model)
    print(f"file: {path}\n{os.cpu_count()} cores\n")
    walls, firsts = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            load = os.getloadavg()[0]
            first, wall, cpu, line = run_once(path, Path(tmp) / f"report{i}")
            walls.append(wall)
            firsts.append(first)
            print(f"round {i + 1}: first answer {first:5.2f} s   done {wall:5.2f} s wall   cpu "
                  f"{cpu:5.2f} s   load average {load:4.1f}   target ≤ {TARGET_S:.0f} s wall: "
                  f"{'met' if wall <= TARGET_S else 'NOT met'}")
        print(f"  ({line.split(': ', 1)[-1]})\n")
        print(f"best of {args.rounds}: first answer {min(firsts):.2f} s, done {min(walls):.2f} s "
              f"wall\n\nwhere the CPU time goes (one more fresh process, the same steps one by "
              "one, without the chart worker):")
        run = subprocess.run([sys.executable, "-c", _BREAKDOWN, str(path)], capture_output=True,
                             text=True)
        print(run.stdout if run.returncode == 0 else run.stderr)


if __name__ == "__main__":
    main()
