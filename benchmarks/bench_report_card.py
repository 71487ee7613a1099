"""Benchmark: ``report_card`` (B = 1000 bootstrap intervals) against a bare pandas groupby that
computes only the point estimates, on the same table, in one run.

Two shapes by default: many small judges (4,000 judges x 100 pairs) and one large table (5M
rows: 50 judges x 10,000 pairs), each with 2 orders x 5 repeats and a few invalid verdicts. The
pandas baseline (:func:`pandas_point_estimates`) is what a user would write with plain pandas for
ten of the card's metrics (accuracy per order, Acc_both, Acc_random, PC, primacy, recency, PF,
RS, invalid rate): merge the labels, pivot the two orders side by side, group by judge. Its
numbers are checked against the card's (they must agree to 1e-9), so both do the same work.

Printed per shape: the time of each (best of ``--runs``), their ratio, the time spent in
``judgekit.validate_judgments`` alone (part of the card's time), and the peak memory each
allocates (tracemalloc, measured in separate untimed runs because tracing slows allocation).
Targets (issue 17): report card / pandas <= 2.5 and < 500 MiB extra at 4,000 judges x 100 pairs;
<= 1.3 at 5M rows. Exit status 1 when a target is missed.

Run: ``python benchmarks/bench_report_card.py [--shape small|large|both] [--runs 3]
[--boot 1000]``.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
import warnings

import numpy as np
import pandas as pd

import judgekit as jk

SHAPES = {  # name: (judges, pairs, repeats, target ratio, target extra MiB)
    "small": (4000, 100, 5, 2.5, 500.0),
    "large": (50, 10_000, 5, 1.3, None),
}
COMPARED = ["acc_ab", "acc_ba", "acc_cr", "acc_rc", "acc_both", "acc_random",
            "position_consistency", "primacy", "recency", "preference_fairness",
            "repetition_stability", "invalid_rate"]


def make_tables(n_judges: int, n_pairs: int, repeats: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pairs and judgments of ``n_judges`` simulated judges (20 distinct judge models, each
    copy with its own 5% of verdicts redrawn and 1% invalid)."""
    pairs = jk.sim.simulate_pairs(n_pairs, seed=seed)
    base = []
    for i in range(min(20, n_judges)):
        sim = jk.sim.simulate_judgments(
            pairs, accuracy=0.6 + 0.3 * (i % 7) / 6, position_bias=0.4 * ((i % 5) - 2),
            length_bias=0.5 * ((i % 3) - 1), flip_q=0.02 + 0.03 * (i % 4), repeats=repeats,
            judge_name=f"model-{i:02d}", seed=i,
        )
        base.append(sim.judgments)
    rng = np.random.default_rng(seed)
    copies = []
    per = len(base[0])
    for k in range(n_judges):
        j = base[k % len(base)].copy()
        j["judge"] = f"judge-{k:04d}"
        redraw = rng.random(per) < 0.05
        j.loc[redraw, "verdict"] = rng.choice(["a", "b"], redraw.sum())
        j.loc[rng.random(per) < 0.01, "verdict"] = None
        copies.append(j)
    judgments = pd.concat(copies, ignore_index=True)
    judgments["verdict"] = judgments["verdict"].astype(object)
    return pairs, judgments


def pandas_point_estimates(judgments: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The point estimates of :data:`COMPARED` per judge, in plain pandas (no intervals): one
    merge, one pivot of the two orders, a few groupbys."""
    j = judgments.merge(pairs[["pair_id", "label"]], on="pair_id", how="left")
    j["z"] = (j["verdict"] == j["label"]).astype(float)  # every pair is labelled "a" or "b" here
    first = np.where(j["order"] == "ab", j["verdict"] == "a", j["verdict"] == "b")
    j["pos"] = np.where(j["verdict"].isna(), None,
                        np.where(j["verdict"] == "tie", "C", np.where(first, "A", "B")))
    # accuracy per display order and per label order: mean over a pair's repeats, then pairs
    per_pair = j.groupby(["judge", "order", "pair_id"])["z"].mean().reset_index()
    acc_order = per_pair.groupby(["judge", "order"])["z"].mean().unstack()
    label = pairs.set_index("pair_id")["label"]
    per_pair["cr"] = np.where((per_pair["pair_id"].map(label) == "a") == (per_pair["order"] == "ab"),
                              "cr", "rc")
    acc_label = per_pair.groupby(["judge", "cr"])["z"].mean().unstack()
    # both orders side by side, matched by repeat
    wide = j.set_index(["judge", "pair_id", "repeat", "order"])[["z", "pos"]].unstack("order")
    both = wide[("z", "ab")] * wide[("z", "ba")]
    acc_both = both.groupby(level=["judge", "pair_id"]).mean().groupby(level="judge").mean()
    ab, ba = wide[("pos", "ab")], wide[("pos", "ba")]
    valid = ab.notna() & ba.notna()
    ab, ba = ab[valid], ba[valid]
    pc = (((ab == "A") & (ba == "B")) | ((ab == "B") & (ba == "A")) | ((ab == "C") & (ba == "C"))
          ).groupby(level="judge").mean()
    primacy = ((ab == "A") & (ba == "A")).groupby(level="judge").sum()
    recency = ((ab == "B") & (ba == "B")).groupby(level="judge").sum()
    pf = (recency - primacy) / valid.groupby(level="judge").sum()
    # repetition stability: majority share of each request's trials (invalid ones count)
    request = ["judge", "pair_id", "order"]
    top = j.groupby([*request, "pos"]).size().groupby(level=request).max()
    rs = (top / j.groupby(request).size().loc[top.index]).groupby(level="judge").mean()
    invalid = j["verdict"].isna().groupby(j["judge"]).mean()
    return pd.DataFrame({
        "acc_ab": acc_order["ab"], "acc_ba": acc_order["ba"], "acc_cr": acc_label["cr"],
        "acc_rc": acc_label["rc"], "acc_both": acc_both,
        "acc_random": (acc_label["cr"] + acc_label["rc"]) / 2,
        "position_consistency": pc, "primacy": primacy.astype(float),
        "recency": recency.astype(float), "preference_fairness": pf,
        "repetition_stability": rs, "invalid_rate": invalid,
    })


def _best(fn, runs: int) -> tuple[float, list[float], object]:
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), times, out


def _peak_mib(fn) -> float:
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def run_shape(name: str, runs: int, n_boot: int) -> bool:
    n_judges, n_pairs, repeats, target, target_mib = SHAPES[name]
    t0 = time.perf_counter()
    pairs, judgments = make_tables(n_judges, n_pairs, repeats)
    print(f"\n[{name}] {len(judgments):,} judgments: {n_judges:,} judges x {n_pairs:,} pairs x 2 "
          f"orders x {repeats} repeats (made in {time.perf_counter() - t0:.1f} s, not timed)")

    def card():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", jk.MetricWarning)
            return jk.report_card(judgments, pairs, n_boot=n_boot, seed=0)

    t_pd, times_pd, ref = _best(lambda: pandas_point_estimates(judgments, pairs), runs)
    t_card, times_card, out = _best(card, runs)
    t_val, _, _ = _best(lambda: jk.validate_judgments(judgments, pairs), runs)
    ours = out.set_index("judge")[COMPARED]
    np.testing.assert_allclose(ours.to_numpy(float), ref.loc[ours.index, COMPARED].to_numpy(float),
                               rtol=0, atol=1e-9, err_msg="report card and pandas disagree")
    ratio = t_card / t_pd
    print(f"pandas point estimates: best {t_pd:.2f} s (runs {', '.join(f'{t:.2f}' for t in times_pd)})")
    print(f"report_card, B = {n_boot}: best {t_card:.2f} s (runs "
          f"{', '.join(f'{t:.2f}' for t in times_card)}); of which validate_judgments {t_val:.2f} s")
    print(f"ratio report_card / pandas = {ratio:.2f} (target <= {target})")
    mib_card = _peak_mib(card)
    mib_pd = _peak_mib(lambda: pandas_point_estimates(judgments, pairs))
    print(f"peak memory allocated: report_card {mib_card:.0f} MiB, pandas {mib_pd:.0f} MiB "
          f"(ratio {mib_card / mib_pd:.2f})" + (f"; target < {target_mib:.0f} MiB" if target_mib else ""))
    ok = ratio <= target and (target_mib is None or mib_card < target_mib)
    print(f"[{name}] within targets: {ok}")
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", choices=["small", "large", "both"], default="both")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--boot", type=int, default=1000)
    args = ap.parse_args(argv)
    shapes = ["small", "large"] if args.shape == "both" else [args.shape]
    results = [run_shape(s, args.runs, args.boot) for s in shapes]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
