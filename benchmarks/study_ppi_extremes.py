"""Study: coverage of the PPI intervals at extreme human rates and few labels (known truth).

Run: python benchmarks/study_ppi_extremes.py [--reps 300]

Binary human outcomes with rate 0.5, 0.92 or 0.98 over 2,000 judged pairs; a judge whose
decision (shared by both orders) agrees with the humans with probability 0.85 or 0.95; n labels
drawn at random. Prints, per cell, the coverage of the 95% CLT interval of the label-only, PPI
and PPI++ estimates with the default intervals (t quantile, divisor n − 1 and the score-type
widening) and with the t interval alone (before judgekit 0.2), and the default's mean width over
the t interval's (PPI++).
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from scipy import stats

from judgekit.inference._fit import quick_intervals
from judgekit.sim.labels import simulate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    for rate in (0.5, 0.92, 0.98):
        for accuracy in (0.85, 0.95):
            for n in (20, 50, 200):
                hit_new, hit_t, width = {}, {}, {}
                for _ in range(args.reps):
                    y, f = simulate(2000, win_rate=rate, accuracy=accuracy, rng=rng)
                    ys = np.full(len(y), np.nan)
                    idx = rng.choice(len(y), n, replace=False)
                    ys[idx] = y[idx]
                    for method, (theta, se, low, high) in quick_intervals(ys, f).items():
                        if method == "judge_only":
                            continue
                        t = stats.t.ppf(0.975, n - 1)
                        hit_new.setdefault(method, []).append(low <= rate <= high)
                        hit_t.setdefault(method, []).append(abs(theta - rate) <= t * se)
                        width.setdefault(method, []).append((high - low, 2 * t * se))
                row = {"rate": rate, "judge accuracy": accuracy, "labels": n}
                for m in hit_new:
                    row[f"{m}"] = np.mean(hit_new[m])
                    row[f"{m} (t only)"] = np.mean(hit_t[m])
                w = np.asarray(width["ppi++"])
                row["PPI++ mean width / t width"] = w[:, 0].mean() / w[:, 1].mean()
                rows.append(row)
    pd.set_option("display.width", 200)
    print(f"{args.reps} replications per cell; coverage of 95% intervals\n")
    print(pd.DataFrame(rows).round(3).to_string(index=False))


if __name__ == "__main__":
    main()
