"""Engine throughput against a loopback server with fixed latency, and a cached re-run.

Starts ``judgekit serve-sim`` in a separate process (0.5 s per completion), then sends the same
2,000 judge requests at concurrency 64 three ways, all in this one run:

1. the bare ``openai`` SDK (``AsyncOpenAI`` + a semaphore): the reference the issue quotes;
2. ``jk.run_judges`` with a fresh SQLite cache (render, claim, call, persist, parse, logprobs);
3. ``jk.run_judges`` again on the same cache: no call may reach the server.

1 and 2 alternate for ``--rounds`` rounds, so a change in the machine's load hits both. Each is
reported as a ratio to the ideal time, requests x latency / concurrency, and the engine as a
ratio to the SDK of the same round. The machine is shared, so the numbers are noisy: compare
the ratios within one run.

    python benchmarks/bench_engine.py [--requests 2000] [--latency 0.5] [--concurrency 64] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import _serve_sim
import openai

import judgekit as jk


async def bare_sdk(url: str, bodies: list[dict], concurrency: int) -> float:
    client = openai.AsyncOpenAI(base_url=url, api_key="bench", max_retries=0, timeout=60)
    sem = asyncio.Semaphore(concurrency)

    async def one(body: dict) -> None:
        async with sem:
            await client.chat.completions.create(**body)

    start = time.perf_counter()
    await asyncio.gather(*(one(b) for b in bodies))
    elapsed = time.perf_counter() - start
    await client.close()
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()

    pairs = jk.sim.simulate_pairs(args.requests // 2, median_length=600, seed=0)
    ideal = args.requests * args.latency / args.concurrency
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = _serve_sim.start(Path(tmp), {"latency": args.latency,
                                      "judge": {"position_bias": 0.5, "seed": 1}}, pairs)
        try:
            judge = jk.Judge("sim-judge", "mtbench_pair", base_url=url, seed=0)
            # warm up both paths (imports, connection pools) with a few requests
            jk.run_judges(pairs.head(4), judge, cache=False, progress=False)
            bodies = [
                judge.body(judge.template.render_pair(row, order), 0)
                for row in pairs.to_dict("records") for order in ("ab", "ba")
            ][: args.requests]

            sdks, engines = [], []
            for r in range(args.rounds):
                sdks.append(asyncio.run(bare_sdk(url, bodies, args.concurrency)))
                cache = Path(tmp) / f"cache{r}.sqlite"
                start = time.perf_counter()
                j = jk.run_judges(pairs, judge, concurrency=args.concurrency, cache=cache,
                                  progress=False, timeout=60)
                engines.append(time.perf_counter() - start)
                run = j.attrs["judgekit_run"]
                assert run["called"] == args.requests and run["errors"] == 0, run

            start = time.perf_counter()
            again = jk.run_judges(pairs, judge, concurrency=args.concurrency, cache=cache,
                                  progress=False)
            rerun = time.perf_counter() - start
            rerun_calls = again.attrs["judgekit_run"]["called"]
        finally:
            served = _serve_sim.stop(proc)

    print(f"requests {args.requests}, latency {args.latency} s, concurrency {args.concurrency}; "
          f"ideal {ideal:.2f} s")
    for r, (sdk, engine) in enumerate(zip(sdks, engines)):
        print(f"round {r + 1}: bare openai SDK {sdk:7.2f} s ({sdk / ideal:4.2f}x ideal)   "
              f"jk.run_judges {engine:7.2f} s ({engine / ideal:4.2f}x ideal)   "
              f"engine / SDK {engine / sdk:4.2f}")
    print(f"all rounds: engine / SDK {sum(engines) / sum(sdks):4.2f}")
    print(f"cached re-run       {rerun:7.2f} s   calls sent {rerun_calls}")
    print(f"server counted {served.get('requests', 0)} requests "
          f"(= warm-up 8 + {args.rounds} x (SDK {len(bodies)} + engine {run['called']}) + re-run "
          f"{rerun_calls})")
    print(f"verdicts: {j['verdict'].value_counts(dropna=False).to_dict()}, "
          f"p_a present {j['p_a'].notna().mean():.3f}")


if __name__ == "__main__":
    main()
