"""A long run against an endpoint that limits requests and tokens per minute.

Starts ``judgekit serve-sim`` in a separate process with a sliding-window limit of ``--rpm``
requests and ``--tpm`` tokens per ``--window`` seconds (a request costs its prompt tokens, the
server's own count, plus its ``max_tokens``), then sends ``--calls`` distinct judge requests with
``jk.run_judges`` three ways, each against a fresh server:

1. ``given``: the limits passed as ``rpm=`` / ``tpm=``;
2. ``adaptive``: no limits passed; the server sends OpenAI's ``x-ratelimit-*`` headers;
3. ``adaptive-no-headers``: no limits passed and no headers: the engine learns only from the
   429 answers (and their ``type``: requests or tokens).

For each it prints the time the tighter limit implies (calls / rpm or tokens / tpm, in windows),
the time taken and their ratio, and the share of requests answered 429. The targets: ratio at
most 1.15 with the limits given, 1.3 without; fewer than 2 % of requests answered 429.

With the defaults (3,000 calls, 600 rpm, 150,000 tpm, 60 s windows) each variant takes about
five minutes. ``--window 6`` (with ``--latency 0.1``) is a quick check at a tenth of the time:
the same number of calls per window, scaled down.

    python benchmarks/bench_ratelimit.py [--calls 3000] [--rpm 600] [--tpm 150000] [--window 60]
        [--latency 1.0] [--concurrency 32] [--variants given,adaptive,adaptive-no-headers]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import _serve_sim

import judgekit as jk
from judgekit.sim.chat import completion_budget, prompt_tokens

VARIANTS = ("given", "adaptive", "adaptive-no-headers")


def run_variant(name: str, args: argparse.Namespace, pairs, judge_template: str) -> dict:
    config = {"latency": args.latency, "latency_jitter": args.latency / 2, "rpm": args.rpm,
              "tpm": args.tpm, "rate_window": args.window, "rate_headers": name != "adaptive-no-headers",
              "judge": {"position_bias": 0.5, "seed": 1}}
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = _serve_sim.start(Path(tmp), config, pairs)
        try:
            judge = jk.Judge("sim-judge", judge_template, base_url=url, seed=0)
            limits = {"rpm": args.rpm, "tpm": args.tpm} if name == "given" else {}
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                j = jk.run_judges(pairs, judge, concurrency=args.concurrency, cache=False,
                                  progress=False, rate_window=args.window, timeout=60, **limits)
            elapsed = time.perf_counter() - start
        finally:
            served = _serve_sim.stop(proc)
    run = j.attrs["judgekit_run"]
    return {"variant": name, "elapsed_s": elapsed, "answered": int(j["error"].isna().sum()),
            "errors": run["errors"], "requests_seen": served.get("requests", 0),
            "rate_limited": served.get("rate_limited", 0), "retries": run["retries"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--rpm", type=int, default=600)
    ap.add_argument("--tpm", type=int, default=150_000)
    ap.add_argument("--window", type=float, default=60.0)
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    args = ap.parse_args()

    template = "calibraeval_default"   # an ID-only answer: max_tokens 16
    pairs = jk.sim.simulate_pairs(args.calls // 2, median_length=300, seed=0)
    judge = jk.Judge("sim-judge", template)
    bodies = [judge.body(judge.template.render_pair(r, order=o), 0)
              for r in pairs.to_dict("records") for o in ("ab", "ba")]
    tokens = sum(prompt_tokens(b["messages"]) + completion_budget(b) for b in bodies)
    by_requests = len(bodies) / args.rpm * args.window
    by_tokens = tokens / args.tpm * args.window
    implied = max(by_requests, by_tokens)
    print(f"{len(bodies)} calls, {tokens} tokens (server's count, prompt + max_tokens); limits "
          f"{args.rpm} requests and {args.tpm} tokens per {args.window:g} s; latency "
          f"{args.latency:g} s (+ up to {args.latency / 2:g}), concurrency {args.concurrency}")
    print(f"time implied: by requests {by_requests:.1f} s, by tokens {by_tokens:.1f} s -> "
          f"{implied:.1f} s (the tighter)")
    for name in args.variants.split(","):
        r = run_variant(name, args, pairs, template)
        share = r["rate_limited"] / max(r["requests_seen"], 1)
        print(f"{name:20s} {r['elapsed_s']:8.1f} s   ratio {r['elapsed_s'] / implied:5.3f}   "
              f"429s {r['rate_limited']:4d} of {r['requests_seen']} requests ({100 * share:.2f} %)"
              f"   answered {r['answered']}/{len(bodies)}, errors {r['errors']}", flush=True)


if __name__ == "__main__":
    main()
