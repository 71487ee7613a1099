"""Benchmark: the report card of a judgments log far larger than memory, computed through DuckDB
(``jk.scan_table``), against the pandas path on the sizes pandas holds, in one run.

1. Writes a synthetic log to parquet: ``--judges`` x ``--pairs`` x 2 orders x ``--repeats``
   judgments (default 1,000 x 20,000 x 2 x 5 = 200M rows), one file per ``--per-file`` judges,
   from judges with known accuracy and position bias and 1% invalid verdicts, written block by
   block (never the whole log in memory).
2. On the first size of ``--pandas-rows`` (default 5M rows: the first files), runs the report
   card both ways, each in a fresh process, prints the times, their ratio and each process's
   peak resident memory (``ru_maxrss``), and checks the two cards are equal (to 1e-9).
3. Runs the report card on the whole log through DuckDB in a fresh process and prints its time
   and peak memory; target: peak < 4 GB.
4. Compares the two paths again on the other sizes (default 20M rows).
Exit status 1 when the equality or the memory target fails.

The bootstrap (``--boot``, default 1,000 resamples as the report card) runs in memory on the
(judge, pair) cells; its cost grows with judges x pairs x resamples, not with rows.

Run: ``nice -n 19 python benchmarks/bench_scale.py [--judges 1000] [--out DIR] [--keep]``
(needs ``pip install "llm-judgekit[duckdb]"`` and ~2 GB of disk per 200M rows).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd

LIMIT_GB = 4.0


def write_log(out: str, judges: int, n_pairs: int, repeats: int, per_file: int,
              seed: int = 0) -> tuple[str, str, int]:
    """The pairs (one parquet file) and the judgments (a folder of files); rows written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    pair_ids = np.array([f"p{i:06d}" for i in range(n_pairs)], dtype=object)
    label = rng.choice(np.array(["a", "b"], dtype=object), n_pairs)
    len_a = rng.integers(100, 2000, n_pairs)
    len_b = rng.integers(100, 2000, n_pairs)
    pairs = pd.DataFrame({"pair_id": pair_ids, "prompt": "", "response_a": "", "response_b": "",
                          "label": label, "len_a": len_a, "len_b": len_b})
    pairs_path = os.path.join(out, "pairs.parquet")
    pairs.to_parquet(pairs_path, index=False)
    folder = os.path.join(out, "judgments")
    os.makedirs(folder, exist_ok=True)
    is_a = label == "a"
    pair_dict = pa.array(pair_ids.astype(str))
    order_dict = pa.array(["ab", "ba"])
    verdict_dict = pa.array(["a", "b", "tie"])
    rows = 0
    for f0 in range(0, judges, per_file):
        writer = None
        path = os.path.join(folder, f"part-{f0 // per_file:05d}.parquet")
        for jdx in range(f0, min(f0 + per_file, judges)):
            acc = 0.6 + 0.3 * rng.random()
            bias = rng.uniform(-0.3, 0.3)
            n = n_pairs * 2 * repeats
            pair = np.repeat(np.arange(n_pairs, dtype=np.int32), 2 * repeats)
            order = np.tile(np.repeat(np.array([0, 1], dtype=np.int8), repeats), n_pairs)
            repeat = np.tile(np.arange(repeats, dtype=np.int64), 2 * n_pairs)
            # P(verdict names the human's choice), shifted towards the first position
            right = rng.random(n) < acc
            says_a_true = np.where(is_a[pair], right, ~right)
            first_a = order == 0
            push = rng.random(n) < abs(bias)
            says_a = np.where(push, first_a == (bias > 0), says_a_true)
            verdict = np.where(says_a, np.where(first_a, 0, 1), np.where(first_a, 1, 0))
            verdict = np.where(rng.random(n) < 0.02, 2, verdict).astype(np.int8)
            invalid = rng.random(n) < 0.01
            table = pa.table({
                "pair_id": pa.DictionaryArray.from_arrays(pa.array(pair), pair_dict),
                "judge": pa.DictionaryArray.from_arrays(
                    pa.array(np.zeros(n, dtype=np.int8)), pa.array([f"judge-{jdx:04d}"])),
                "order": pa.DictionaryArray.from_arrays(pa.array(order), order_dict),
                "repeat": pa.array(repeat),
                "verdict": pa.DictionaryArray.from_arrays(
                    pa.array(verdict, mask=invalid), verdict_dict),
            })
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema, compression="zstd")
            writer.write_table(table, row_group_size=1 << 20)
            rows += n
        writer.close()
    return pairs_path, folder, rows


def _run_child(mode: str, pairs: str, files: list[str], boot: int, result: str) -> dict:
    """The report card in a fresh process: its time and peak resident memory."""
    cmd = [sys.executable, __file__, "--child", mode, "--pairs-file", pairs, "--boot", str(boot),
           "--result", result, *files]
    subprocess.run(cmd, check=True)
    with open(result + ".json") as fh:
        return json.load(fh)


def child(mode: str, pairs_file: str, files: list[str], boot: int, result: str) -> None:
    import warnings

    import judgekit as jk

    pairs = pd.read_parquet(pairs_file)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if mode == "pandas":
            judgments = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
            for col in ("pair_id", "judge", "order", "verdict"):  # dictionaries read as category
                judgments[col] = judgments[col].astype(object)
            card = jk.report_card(judgments, pairs, n_boot=boot)
        else:
            if len(files) == 1:  # the whole folder, or one file
                scan = jk.scan_table(files[0], memory_limit="1GB", progress=sys.stderr.isatty())
            else:
                scan = _scan_files(jk, files, os.path.dirname(result))
            card = jk.report_card(scan, pairs, n_boot=boot)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux
    card.to_parquet(result + ".parquet")
    with open(result + ".json", "w") as fh:
        json.dump({"seconds": seconds, "peak_bytes": peak, "judges": len(card)}, fh)


def _scan_files(jk, files: list[str], where: str):
    """A subset of the log's files: a folder of symbolic links to them (in ``where``, removed
    with the log), read as one table."""
    link_dir = tempfile.mkdtemp(prefix="subset-", dir=where)
    for f in files:
        os.symlink(f, os.path.join(link_dir, os.path.basename(f)))
    return jk.scan_table(link_dir, memory_limit="1GB", progress=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judges", type=int, default=1000)
    ap.add_argument("--pairs", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--per-file", type=int, default=25)
    ap.add_argument("--pandas-rows", default="5e6,20e6")
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--out", default=None, help="folder for the log (default: a temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the parquet log afterwards")
    ap.add_argument("--reuse", action="store_true", help="use the log already in --out")
    ap.add_argument("--child", default=None)
    ap.add_argument("--pairs-file")
    ap.add_argument("--result")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    if args.child:
        child(args.child, args.pairs_file, args.files, args.boot, args.result)
        return 0

    out = args.out or tempfile.mkdtemp(prefix="bench-scale-")
    os.makedirs(out, exist_ok=True)
    ok = True
    try:
        t0 = time.perf_counter()
        pairs_file, folder = os.path.join(out, "pairs.parquet"), os.path.join(out, "judgments")
        reused = args.reuse and os.path.isdir(folder)
        if reused:  # a log this script wrote before
            rows = args.judges * args.pairs * 2 * args.repeats
        else:
            pairs_file, folder, rows = write_log(out, args.judges, args.pairs, args.repeats,
                                                 args.per_file)
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        print(f"log: {rows:,} judgments ({args.judges} judges x {args.pairs} pairs x 2 orders x "
              f"{args.repeats} repeats), {size / 1e9:.2f} GB of parquet, "
              + ("reused" if reused else f"written in {time.perf_counter() - t0:.0f} s"),
              flush=True)
        files = sorted(os.path.join(folder, f) for f in os.listdir(folder))
        rows_per_file = args.per_file * args.pairs * 2 * args.repeats
        res = os.path.join(out, "result")
        sizes = [int(float(s)) for s in args.pandas_rows.split(",") if s]

        def compare(i: int, n: int) -> bool:
            k = max(1, round(n / rows_per_file))
            if k > len(files):
                return True
            sub = files[:k]
            pd_run = _run_child("pandas", pairs_file, sub, args.boot, res + "-pandas")
            db_run = _run_child("duckdb", pairs_file, sub, args.boot, res + "-duckdb")
            print(f"{k * rows_per_file:>12,} rows: pandas {pd_run['seconds']:7.1f} s "
                  f"(peak {pd_run['peak_bytes'] / 1e9:.2f} GB), DuckDB {db_run['seconds']:7.1f} s "
                  f"(peak {db_run['peak_bytes'] / 1e9:.2f} GB); DuckDB / pandas = "
                  f"{db_run['seconds'] / pd_run['seconds']:.2f}", flush=True)
            if i > 0:
                return True
            a = pd.read_parquet(res + "-pandas.parquet")
            b = pd.read_parquet(res + "-duckdb.parquet")
            num = a.select_dtypes("number").columns
            diff = float(np.nanmax(np.abs(a[num].to_numpy(float) - b[num].to_numpy(float))))
            try:
                pd.testing.assert_frame_equal(a, b, rtol=1e-9, atol=1e-9)
                print(f"  equal to the pandas path (largest difference {diff:.1e})", flush=True)
                return True
            except AssertionError as err:
                print(f"  NOT EQUAL to the pandas path: {err}", flush=True)
                return False

        # the equality check first, then the whole log, then the larger pandas sizes
        if sizes:
            ok &= compare(0, sizes[0])
        full = _run_child("duckdb", pairs_file, [folder], args.boot, res + "-full")
        peak = full["peak_bytes"] / 1e9
        print(f"{rows:>12,} rows through DuckDB: {full['seconds']:.0f} s, peak memory "
              f"{peak:.2f} GB (target < {LIMIT_GB:.0f} GB): "
              f"{'ok' if peak < LIMIT_GB else 'MISSED'}; {full['judges']} judges", flush=True)
        ok &= peak < LIMIT_GB
        for i, n in enumerate(sizes[1:], start=1):
            ok &= compare(i, n)
    finally:
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
