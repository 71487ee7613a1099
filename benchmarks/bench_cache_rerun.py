"""A cached re-run of a large judging run: time against the select-and-parse floor, peak memory.

1. Fill a cache with ``--calls`` real answers (``jk.run_judges`` against ``judgekit serve-sim`` in
   a separate process, ``mtbench_pair`` with logprobs: about 3 KB of request and 3.3 KB of
   answer per call). ``--cache PATH`` keeps the file between runs (it is filled only when it
   holds fewer answers).
2. In fresh interpreters, alternating for ``--rounds`` rounds, each after loading the pairs:

   - ``floor``: the least any re-run must do, written directly: render each request and hash
     it into its key (as any cache keyed by the request must), ``SELECT key, response`` by key
     with ``sqlite3``, ``json.loads`` each answer and read its verdict and ``p_a`` with the
     template's parser and ``option_probabilities``; it keeps two lists;
   - ``engine``: ``jk.run_judges(pairs, judge, cache=path)``: the full judgments table
     (validated), every call answered from the cache.

   Each prints its time and the process's peak resident memory during the re-run (Linux: the
   peak is reset with ``/proc/self/clear_refs`` after the imports and the pairs are loaded, then
   read as ``VmHWM``), also net of what was resident before it. Targets (issue 17): engine within 1.5x the floor of the same round,
   peak memory under 400 MB.

    python benchmarks/bench_cache_rerun.py [--calls 100000] [--rounds 2] [--cache PATH]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r'''
import json, sqlite3, sys, time
import pandas as pd
import judgekit as jk
from judgekit.judging.cache import request_key
from judgekit.judging.logprobs import option_probabilities
from judgekit.judging.secrets import public_endpoint

mode, pairs_path, cache_path, url = sys.argv[1:5]
pairs = pd.read_parquet(pairs_path)
judge = jk.Judge("sim-judge", "mtbench_pair", base_url=url, seed=0)
def status_mb(field):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith(field)) / 1024
imports_mb = status_mb("VmHWM")          # the peak so far: imports and reading the pairs
base = status_mb("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")                          # reset the peak, so what follows is measured alone
start = time.perf_counter()
if mode == "engine":
    j = jk.run_judges(pairs, judge, cache=cache_path, progress=False)
    assert j.attrs["judgekit_run"]["called"] == 0, j.attrs["judgekit_run"]
    verdicts, p_a = j["verdict"].tolist(), j["p_a"].tolist()
else:
    template, endpoint = judge.template, public_endpoint(url)
    keys = [request_key(endpoint, judge.body(template.render_pair(row, order), 0), 0)
            for row in pairs.to_dict("records") for order in ("ab", "ba")]
    conn = sqlite3.connect(cache_path)
    answers = {}
    for i in range(0, len(keys), 500):
        chunk = keys[i:i + 500]
        marks = ",".join("?" * len(chunk))
        for key, response in conn.execute(
                f"SELECT key, response FROM responses WHERE key IN ({marks})", chunk):
            choice = json.loads(response)["choices"][0]
            text = choice["message"]["content"]
            parsed = template.parse(text)
            probs, _ = option_probabilities(choice["logprobs"]["content"], text, parsed.start,
                                            ["A", "B"], tie_id="C")
            answers[key] = (parsed.option, probs)
    verdicts = [answers[k][0] for k in keys]
    p_a = [answers[k][1] for k in keys]
elapsed = time.perf_counter() - start
peak = status_mb("VmHWM")
print(json.dumps({"mode": mode, "seconds": elapsed, "peak_mb": peak, "base_mb": base,
                  "setup_peak_mb": imports_mb,
                  "rows": len(verdicts), "answered": sum(v is not None for v in verdicts)}))
'''


def stored(path: Path) -> int:
    if not path.exists():
        return 0
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=None, help="keep the filled cache here")
    ap.add_argument("--port", type=int, default=18731, help="the server's port (part of the keys)")
    args = ap.parse_args()

    sys.path.insert(0, str(Path(__file__).parent))
    import _serve_sim

    import judgekit as jk

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cache = args.cache or tmp / "cache.sqlite"
        pairs = jk.sim.simulate_pairs(args.calls // 2, median_length=600, seed=0)
        pairs_path = tmp / "pairs.parquet"
        pairs.to_parquet(pairs_path)
        url = f"http://127.0.0.1:{args.port}/v1"
        if stored(cache) < args.calls:
            proc, served_url = _serve_sim.start(
                tmp, {"latency": 0.0, "judge": {"position_bias": 0.5, "seed": 1}}, pairs,
                port=args.port)
            assert served_url == url, served_url
            try:
                start = time.perf_counter()
                judge = jk.Judge("sim-judge", "mtbench_pair", base_url=url, seed=0)
                j = jk.run_judges(pairs, judge, cache=cache, concurrency=128, progress=True)
                print(f"filled {len(j)} answers in {time.perf_counter() - start:.0f} s")
            finally:
                _serve_sim.stop(proc)
        size = cache.stat().st_size / 2**20
        print(f"cache: {stored(cache)} answers, {size:.0f} MiB")

        results: dict[str, list[dict]] = {"floor": [], "engine": []}
        for r in range(args.rounds):
            for mode in ("floor", "engine"):
                out = subprocess.run([sys.executable, "-c", CHILD, mode, str(pairs_path),
                                      str(cache), url], capture_output=True, text=True)
                if out.returncode:
                    raise RuntimeError(out.stderr)
                row = json.loads(out.stdout.strip().splitlines()[-1])
                assert row["rows"] == args.calls and row["answered"] > 0.9 * args.calls, row
                results[mode].append(row)
                print(f"round {r + 1} {mode:6s} {row['seconds']:7.2f} s   peak RSS "
                      f"{row['peak_mb']:6.0f} MB ({row['peak_mb'] - row['base_mb']:+.0f} MB over the "
                      f"{row['base_mb']:.0f} MB resident after imports and pairs; loading them "
                      f"peaked at {row['setup_peak_mb']:.0f} MB)", flush=True)

    ratios = [e["seconds"] / f["seconds"] for e, f in zip(results["engine"], results["floor"])]
    peak = max(e["peak_mb"] for e in results["engine"])
    print(f"\n{args.calls} cached calls: engine / floor {statistics.median(ratios):.2f} "
          f"(rounds: {', '.join(f'{x:.2f}' for x in ratios)}; target <= 1.5), engine peak RSS "
          f"{peak:.0f} MB during the re-run (target < 400)")


if __name__ == "__main__":
    main()
