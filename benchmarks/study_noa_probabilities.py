"""Study: does NOA return probabilities? Simulated judges with known truth, K = 300 to 20,000.

Run: python benchmarks/study_noa_probabilities.py [--reps 5] [--sizes 300 1000 5000 20000]

For each scenario (token bias +1 logit toward t1, position bias +1 toward the first position, no
bias, both) and each K, `judgekit.sim.selection_bias.probability_study` simulates 2K pairs in all
four arrangements (content logit δ ~ N(0, 2), per-arrangement noise N(0, 0.3)), calibrates
with `jk.calibrate` (fitted on K pairs, scored on the other K) and compares the held-out
calibrated P(a) with the judge's own unbiased P(a). Repeated over `--reps` seeds.

Prints, per scenario, K and method, the mean over seeds of: the share of calibrated
probabilities within 0.01 of 0 or 1 minus that share among the unbiased probabilities
(`extreme_excess`), the RMSE to the unbiased probabilities, Fleiss' κ over the four
arrangements minus the raw κ (`kappa_gain`, with its standard error and minimum over seeds),
and then checks the criteria of the default NOA: extreme_excess <= 0.05; RMSE below the raw
RMSE where a token bias is present and at most raw + 0.01 without bias; κ at least the raw κ
(the mean over seeds not below zero by more than two standard errors: without a bias to remove,
a fitted map equals the raw κ only up to the sampling noise of its centre).
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from judgekit.sim.selection_bias import probability_study


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1000, 5000, 20000])
    args = parser.parse_args()
    methods = {"raw": None, "noa": {"method": "noa"}, "noa (paper)": {"method": "noa", "settings": "paper"},
               "noa4": {"method": "noa4"}}
    t0 = time.perf_counter()
    frames = [probability_study(tuple(args.sizes), methods=methods, seed=seed).assign(seed=seed)
              for seed in range(args.reps)]
    t = pd.concat(frames, ignore_index=True)
    t["extreme_excess"] = t["extreme_share"] - t["extreme_share_unbiased"]
    raw = t[t["method"] == "raw"].set_index(["scenario", "K", "seed"])
    key = ["scenario", "K", "seed"]
    t = t.join(raw[["rmse_unbiased", "kappa", "kappa_paper"]].add_prefix("raw_"), on=key)
    t["kappa_gain"] = t["kappa"] - t["raw_kappa"]
    t["kappa_paper_gain"] = t["kappa_paper"] - t["raw_kappa_paper"]
    summary = t.groupby(["scenario", "K", "method"], sort=False).agg(
        extreme_excess=("extreme_excess", "mean"), rmse=("rmse_unbiased", "mean"),
        raw_rmse=("raw_rmse_unbiased", "mean"), kappa=("kappa", "mean"),
        kappa_gain=("kappa_gain", "mean"), kappa_gain_se=("kappa_gain", "sem"),
        kappa_gain_min=("kappa_gain", "min"),
        kappa_paper_gain=("kappa_paper_gain", "mean"),
    ).reset_index()
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 200)
    print(f"{args.reps} seeds, K in {args.sizes}; {time.perf_counter() - t0:.0f} s\n")
    print(summary.round(4).to_string(index=False))

    noa = summary[summary["method"] == "noa"].copy()
    token = noa["scenario"].isin(["token bias", "both"])
    none = noa["scenario"] == "no bias"
    checks = {
        "extreme share at most 5 points above the unbiased share": (noa["extreme_excess"] <= 0.05).all(),
        "RMSE below raw wherever a token bias is present": (noa.loc[token, "rmse"] < noa.loc[token, "raw_rmse"]).all(),
        "RMSE at most raw + 0.01 without bias": (noa.loc[none, "rmse"] <= noa.loc[none, "raw_rmse"] + 0.01).all(),
        "kappa at least raw (mean over seeds, within 2 standard errors)":
            (noa["kappa_gain"] + 2 * noa["kappa_gain_se"].fillna(0) >= 0).all(),
    }
    print("\ndefault NOA (method='noa'):")
    for name, ok in checks.items():
        print(f"  {'PASS' if ok else 'FAIL'}  {name}")
    worst = noa.loc[noa["kappa_gain_min"].idxmin()]
    print(f"  worst single-seed kappa change: {worst['kappa_gain_min']:+.4f} "
          f"({worst['scenario']}, K = {worst['K']})")


if __name__ == "__main__":
    main()
