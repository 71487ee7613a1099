"""Study: are the audit's verdicts right? Simulated judges of known truth, audited as files.

Run: python benchmarks/study_audit_verdicts.py [--reps 100] [--boot 200]

Three cases, each a judge simulated with `jk.sim.simulate_judgments` (both orders, human labels)
whose true de-noised position bias is known (`truth["position_bias"]`), written to a CSV file and
read back by `jk.audit(path)`: *biased* (true bias about twice the default margin of 0.10),
*unbiased* (true bias 0) and *too few* (a small true bias, 40 pairs). The audit's finding on
position bias is one of "effect", "no_material_effect", "inconclusive". Targets (issue 20): a
biased judge called "no material bias" in at most 5% of runs, an unbiased judge called biased in
at most 5%, the too-few case inconclusive in at least 90%. Prints the markdown table of
docs/audit.md.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

import judgekit as jk

#: case -> (simulated position_bias parameter, pairs)
CASES = {"unbiased": (0.0, 400), "biased": (0.8, 400), "too_few": (0.2, 40)}
KINDS = ("effect", "no_material_effect", "inconclusive")


def run_case(position_bias: float, n_pairs: int, reps: int, seed: int = 0, n_boot: int = 200,
             folder: Path | None = None) -> tuple[list[str], list[float]]:
    """Audit ``reps`` simulated judges from their written files; return the kind of each run's
    position-bias finding and each run's true de-noised position bias."""
    folder = Path(folder or tempfile.mkdtemp())
    kinds, truths = [], []
    for r in range(reps):
        pairs, judgments, truth = jk.sim.simulate_judgments(n_pairs, position_bias=position_bias,
                                                        seed=seed + r)
        path = folder / f"judge_{r}.csv"
        judgments.merge(pairs, on="pair_id").to_csv(path, index=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = jk.audit(path, n_boot=n_boot, seed=r)
        found = [f.kind for f in report.findings if getattr(f, "metric", "") == "position_bias"]
        kinds.append(found[0] if found else "missing")
        truths.append(float(truth["position_bias"]))
    return kinds, truths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--boot", type=int, default=200)
    args = parser.parse_args()
    t0 = time.perf_counter()
    print(f"{args.reps} runs per case, {args.boot} bootstrap draws, margin 0.10\n")
    print("| case | pairs | true position bias (mean) | evidence of bias | no material bias | "
          "inconclusive | target |")
    print("|---|---:|---:|---:|---:|---:|---|", flush=True)
    targets = {"biased": "no material <= 5%", "unbiased": "bias <= 5%", "too_few": "inconclusive >= 90%"}
    for case, (bias, n) in CASES.items():
        kinds, truths = run_case(bias, n, args.reps, seed=1000, n_boot=args.boot)
        c = Counter(kinds)
        e, z, i = (c[k] / len(kinds) for k in KINDS)
        print(f"| {case} | {n} | {sum(truths) / len(truths):+.3f} | {e:.0%} | {z:.0%} | {i:.0%} | "
              f"{targets[case]} |", flush=True)
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
