"""Time ``import judgekit`` against ``import pandas`` in fresh interpreters (issue: the import adds
at most 0.3 s to pandas). Rounds are interleaved so machine load hits both; medians printed.

    python benchmarks/bench_import.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def _time(code: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    cases = {"python": "pass", "pandas": "import pandas",
             "pandas + judgekit": "import pandas, judgekit",
             "jk.report_card (metrics)": "import judgekit as jk; jk.report_card"}
    times: dict[str, list[float]] = {k: [] for k in cases}
    _time("import pandas, judgekit")  # warm the file cache
    for _ in range(args.rounds):
        for name, code in cases.items():
            times[name].append(_time(code))
    med = {k: statistics.median(v) for k, v in times.items()}
    for name, value in med.items():
        print(f"{name:24s} {value:6.3f} s (median of {args.rounds})")
    added = med["pandas + judgekit"] - med["pandas"]
    print(f"import judgekit adds {added:.3f} s to import pandas "
          f"(ratio {med['pandas + judgekit'] / med['pandas']:.2f}x; target: at most 0.3 s)")


if __name__ == "__main__":
    main()
