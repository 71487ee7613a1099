"""Study: selection-bias calibration of simulated judges with known biases (docs/calibration.md).

Run: python benchmarks/study_selection_bias.py [--pairs 2000] [--boot 1000] [--server]

`jk.sim.selection_bias_study` with the calibration methods of `judgekit.sim.selection_bias`, NOA with
the paper's settings (`settings="paper"`, and stopped after 1 and 5 gradient steps) and the
paper's Table 3 ablations (L1 / L2 only): every method fitted on half of the pairs, every metric
on the other half, 95% percentile bootstrap intervals over pairs. Prints the markdown table of
docs/calibration.md. `--server` judges through `jk.sim.SimServer` and the engine (real HTTP, the
verdict token's logprobs); the default in-memory simulator gives the same probabilities to 1e-12
(tested), faster.
"""

from __future__ import annotations

import argparse
import time
import warnings

import judgekit as jk
from judgekit.exceptions import ConvergenceWarning
from judgekit.sim.selection_bias import STUDY_METHODS, server_runner

METRICS = ["fleiss_kappa", "icc2k", "icc3k", "rstd", "accuracy"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--server", action="store_true")
    args = parser.parse_args()
    paper = {"method": "noa", "settings": "paper"}
    methods = {
        **STUDY_METHODS,
        "noa (paper)": paper,
        "noa (paper, 1 step)": {**paper, "max_iter": 1},
        "noa (paper, 5 steps)": {**paper, "max_iter": 5},
        "noa l1 only": {"method": "noa", "objective": "l1"},
        "noa l2 only": {"method": "noa", "objective": "l2"},
    }
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        out = jk.sim.selection_bias_study(args.pairs, methods=methods, n_boot=args.boot, seed=0,
                                      runner=server_runner() if args.server else None)
    print(f"{args.pairs} pairs, {args.boot} bootstrap draws, "
          f"{'server' if args.server else 'in-memory'} runner: {time.perf_counter() - t0:.0f} s\n")
    four = out[out["arrangements"] == "X0,X1,X2,X3"]
    three = out[(out["arrangements"] == "X0,X1,X2") & (out["metric"] == "fleiss_kappa")]
    three = three.set_index(["scenario", "method"])["estimate"]
    cols = METRICS + ["kappa (X0-X2, paper)", "rmse_unbiased"]
    print("| scenario | method | " + " | ".join(cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for (scenario, method), g in four.groupby(["scenario", "method"], sort=False):
        m = g.set_index("metric")
        cells = [f"{m.at[k, 'estimate']:.3f} [{m.at[k, 'ci_low']:.2f}, {m.at[k, 'ci_high']:.2f}]"
                 for k in METRICS]
        cells += [f"{three[(scenario, method)]:.3f}", f"{m.at['rmse_unbiased', 'estimate']:.3f}"]
        print(f"| {scenario} | {method} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
