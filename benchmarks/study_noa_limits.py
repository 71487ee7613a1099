"""Study: where NOA's default stops recovering a judge's own probabilities (known truth).

Run: python benchmarks/study_noa_limits.py [--reps 3] [--pairs 1000]

Judges from `judgekit.sim.selection_bias.noisy_arrangement_judgments` (content logit δ ~ N(0, 2),
all four arrangements, per-arrangement noise N(0, 0.3) unless stated); the truth is the same
judge's P(a) without its selection bias. Scenarios: a logit shift of +1 toward option ID t1
(NOA's design case); a 30% lapse toward t1 (P(t1) → 0.7 P(t1) + 0.3); a power distortion
(P(t1) → P(t1)^0.6); a position bias of +1 logit toward the first position; and an unbiased judge
whose per-arrangement noise has sd 1 logit. Each method is fitted on half the pairs and scored
on the other half: RMSE of the calibrated P(a) to the unbiased P(a), mean over `--reps` seeds.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd

import judgekit as jk
from judgekit.exceptions import ConvergenceWarning
from judgekit.sim.selection_bias import noisy_arrangement_judgments


def _distort(j: pd.DataFrame, fn) -> pd.DataFrame:
    """Apply ``fn`` to P(t1) and turn it back into P(a)."""
    a_t1 = jk.with_arrangements(j)["a_has_t1"].to_numpy()
    p = j["p_a"].to_numpy()
    t1 = fn(np.where(a_t1, p, 1 - p))
    return j.assign(p_a=np.where(a_t1, t1, 1 - t1))


SCENARIOS = {
    "logit shift +1 toward t1": lambda n, s: noisy_arrangement_judgments(n, token_bias=1.0, seed=s),
    "30% lapse toward t1": lambda n, s: _distort(noisy_arrangement_judgments(n, seed=s),
                                                 lambda p: 0.7 * p + 0.3),
    "power distortion P^0.6": lambda n, s: _distort(noisy_arrangement_judgments(n, seed=s),
                                                    lambda p: p**0.6),
    "position bias +1": lambda n, s: noisy_arrangement_judgments(n, position_bias=1.0, seed=s),
    "unbiased, arrangement noise sd 1": lambda n, s: noisy_arrangement_judgments(n, noise=1.0, seed=s),
}
METHODS = {"raw": None, "noa (default)": {"method": "noa"}, "noa4": {"method": "noa4"},
           "noa, paper as written (mini-batch 32, one epoch)": {"method": "noa",
                                                                "settings": "paper_minibatch"},
           "noa, paper settings (full batch)": {"method": "noa", "settings": "paper"}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=1000, help="estimation pairs (as many held out)")
    args = parser.parse_args()
    rows = []
    for scenario, make in SCENARIOS.items():
        for seed in range(args.reps):
            j = make(2 * args.pairs, seed)
            for label, kwargs in METHODS.items():
                if kwargs is None:
                    held = j.assign(p_a_calibrated=j["p_a"])
                else:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", ConvergenceWarning)
                        _, out = jk.calibrate(j, seed=seed, **kwargs)
                    held = out[out["calibration_split"] == "evaluation"]
                err = held["p_a_calibrated"].to_numpy(float) - held["p_a_unbiased"].to_numpy(float)
                rows.append({"scenario": scenario, "method": label,
                             "rmse": float(np.sqrt(np.nanmean(err**2)))})
    t = pd.DataFrame(rows).groupby(["scenario", "method"], sort=False)["rmse"].mean().unstack()
    pd.set_option("display.width", 200)
    print(f"RMSE to the judge's unbiased P(a), held-out pairs; K = {args.pairs}, "
          f"mean over {args.reps} seeds\n")
    print(t[list(METHODS)].round(3).to_string())


if __name__ == "__main__":
    main()
