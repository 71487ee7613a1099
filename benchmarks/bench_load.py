"""Time loading every offline dataset cold (target: < 30 s in total on a 2-core machine).

Run from the checkout with the mirror available::

    JUDGEKIT_DATA_MIRROR=/path/to/mirror python benchmarks/bench_load.py

"Cold" means a fresh process with judgekit's in-process cache empty: every file is read from the
mirror, decompressed, sha256-verified, parsed and validated. (The operating system's file cache
may still hold the mirror's bytes from an earlier run; the first run after boot is slower.)
Times on a shared machine are noisy: compare runs, not single numbers.
"""

from __future__ import annotations

import time
import warnings

import judgekit as jk


def main() -> None:
    table = jk.list_datasets()
    offline = table.loc[table["offline"], "name"].tolist()
    print(f"offline datasets here: {', '.join(offline)}")
    total = cpu_total = 0.0
    for name in offline:
        start, cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", jk.MissingDataWarning)
            pairs, judgments = jk.load_dataset(name)
        seconds, cpu_s = time.perf_counter() - start, time.process_time() - cpu
        total += seconds
        cpu_total += cpu_s
        n_j = 0 if judgments is None else len(judgments)
        print(f"{name:<20} {len(pairs):>7,} pairs {n_j:>8,} judgments {seconds:7.2f} s wall "
              f"{cpu_s:7.2f} s cpu", flush=True)
    start, cpu = time.perf_counter(), time.process_time()
    for table_name in ("alpacaeval_leaderboard", "arena_elo", "alpacaeval_glm_weights",
                       "alpacaeval_evaluators"):
        jk.load_table(table_name)
    seconds, cpu_s = time.perf_counter() - start, time.process_time() - cpu
    total += seconds
    cpu_total += cpu_s
    print(f"{'4 tables':<20} {'':>34} {seconds:7.2f} s wall {cpu_s:7.2f} s cpu")
    print(f"TOTAL (cold, all offline datasets and tables): {total:.1f} s wall, {cpu_total:.1f} s cpu "
          "(target < 30 s)")


if __name__ == "__main__":
    main()
