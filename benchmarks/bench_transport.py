"""The engine's lean transport against a bare aiohttp POST loop and the openai SDK, on a fast
loopback endpoint.

Starts ``judgekit serve-sim`` in a separate process (its CPU is not this process's), then sends
the same ``--requests`` judge requests, for each concurrency in ``--concurrency``, these ways,
alternating within each round so a change in the machine's load hits all of them:

1. ``aiohttp``: a bare loop, one ``aiohttp.ClientSession`` with a pool of ``concurrency``
   connections and a semaphore, each answer read and parsed with ``json.loads`` (the floor: what
   any client has to do);
2. ``transport``: the same loop through the engine's lean transport
   (``judgekit.judging.transport.LeanTransport``: the body serialised per call, the reply
   decoded as text, then parsed): the transport's own cost;
3. ``engine``: ``jk.run_judges`` with its default (lean) transport and a fresh SQLite cache:
   render, claim, send, store, parse the verdict and its logprobs, build the table;
4. ``engine-sdk`` (``--sdk``): the same with ``transport="openai"``, the SDK path.

Wall time and CPU time (``time.process_time``: every thread of this process, so the engine's
event loop and its cache writer count) are measured per round; the ratios to the bare loop of the
same round are printed, with the medians over the rounds. Targets (issue 17): at 0.05 s latency,
engine / aiohttp time within 1.3 at concurrency 64 and within 2 at 256; the transport's CPU per
call within 1.5x aiohttp's (the engine's whole CPU per call is printed too: it adds the cache
writes and the parsing a bare loop does not do); at 0.5 s latency (``--latency 0.5
--concurrency 64 --sdk``) the engine no slower than the SDK path.

    python benchmarks/bench_transport.py [--requests 2000] [--latency 0.05]
        [--concurrency 64,256] [--rounds 3] [--sdk]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

import _serve_sim

import judgekit as jk


async def bare_aiohttp(url: str, payloads: list[bytes], concurrency: int) -> None:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=concurrency)
    headers = {"Authorization": "Bearer bench", "Content-Type": "application/json"}
    sem = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def one(data: bytes) -> None:
            async with sem, session.post(f"{url}/chat/completions", data=data) as resp:
                answer = json.loads(await resp.read())
                assert resp.status == 200 and answer["choices"], answer

        await asyncio.gather(*(one(p) for p in payloads))


async def lean_loop(url: str, bodies: list[dict], concurrency: int) -> None:
    from judgekit.judging.transport import LeanTransport

    lean = LeanTransport(url, "bench", timeout=60.0, pool=concurrency)
    sem = asyncio.Semaphore(concurrency)

    async def one(body: dict) -> None:
        async with sem:
            reply = await lean.chat(body)
            answer = json.loads(reply.text)
            assert reply.status == 200 and answer["choices"], answer

    try:
        await asyncio.gather(*(one(b) for b in bodies))
    finally:
        await lean.close()


def timed(fn, *args, **kwargs) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return time.perf_counter() - wall, time.process_time() - cpu, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", default="64,256")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sdk", action="store_true", help="also time the engine on the SDK path")
    args = ap.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]

    pairs = jk.sim.simulate_pairs(args.requests // 2, median_length=600, seed=0)
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = _serve_sim.start(Path(tmp), {"latency": args.latency,
                                      "judge": {"position_bias": 0.5, "seed": 1}}, pairs)
        try:
            judge = jk.Judge("sim-judge", "mtbench_pair", base_url=url, seed=0)
            bodies = [
                judge.body(judge.template.render_pair(row, order), 0)
                for row in pairs.to_dict("records") for order in ("ab", "ba")
            ][: args.requests]
            payloads = [json.dumps(b).encode() for b in bodies]
            # warm up every path (imports, the engine's loop, connection setup)
            asyncio.run(bare_aiohttp(url, payloads[:8], 4))
            for transport in ("aiohttp", "openai") if args.sdk else ("aiohttp",):
                jk.run_judges(pairs.head(4), judge, cache=False, progress=False,
                              transport=transport)
            asyncio.run(lean_loop(url, bodies[:8], 4))
            paths = ["aiohttp", "transport", "engine"] + (["engine-sdk"] if args.sdk else [])
            n = 0
            for r in range(args.rounds):
                for c in levels:
                    for path in paths:
                        if path == "aiohttp":
                            wall, cpu, _ = timed(asyncio.run, bare_aiohttp(url, payloads, c))
                        elif path == "transport":
                            wall, cpu, _ = timed(asyncio.run, lean_loop(url, bodies, c))
                        else:
                            n += 1
                            wall, cpu, j = timed(
                                jk.run_judges, pairs, judge, concurrency=c, progress=False,
                                cache=Path(tmp) / f"cache{n}.sqlite", timeout=60,
                                transport="openai" if path == "engine-sdk" else "aiohttp")
                            run = j.attrs["judgekit_run"]
                            assert run["called"] == args.requests and run["errors"] == 0, run
                        results.setdefault((path, c), []).append((wall, cpu))
                        print(f"round {r + 1} concurrency {c:4d} {path:10s} {wall:6.2f} s wall "
                              f"{1000 * cpu / args.requests:6.2f} ms CPU per call", flush=True)
        finally:
            served = _serve_sim.stop(proc)

    print(f"\n{args.requests} requests, latency {args.latency} s, {args.rounds} rounds; server "
          f"counted {served.get('requests', 0)} requests")
    print("concurrency  path        wall (median)  ideal   / aiohttp   CPU ms/call  / aiohttp")
    for c in levels:
        ideal = args.requests * args.latency / c
        base = results[("aiohttp", c)]
        for path in ("aiohttp", "transport", "engine", "engine-sdk"):
            if (path, c) not in results:
                continue
            rows = results[(path, c)]
            wall = statistics.median(w for w, _ in rows)
            cpu = statistics.median(1000 * u / args.requests for _, u in rows)
            # ratios within each round, then their median
            t_ratio = statistics.median(w / b[0] for (w, _), b in zip(rows, base))
            c_ratio = statistics.median(u / b[1] for (_, u), b in zip(rows, base))
            print(f"{c:11d}  {path:10s} {wall:9.2f} s  {ideal:6.2f}   {t_ratio:8.2f}   "
                  f"{cpu:10.2f}   {c_ratio:8.2f}")
        if ("engine-sdk", c) in results:
            pairs_ = zip(results[("engine", c)], results[("engine-sdk", c)])
            ratio = statistics.median(e[0] / s_[0] for e, s_ in pairs_)
            print(f"{c:11d}  engine / engine-sdk time {ratio:.2f} (median of the rounds' ratios)")


if __name__ == "__main__":
    main()
