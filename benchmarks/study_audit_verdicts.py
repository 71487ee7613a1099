"""Study: are the audit's verdicts right? Simulated judges of known truth, audited as files.

Run: python benchmarks/study_audit_verdicts.py [--reps 100] [--boot 1000] [--direct] [--cases ...]

Three cases, each a judge simulated with `jk.sim.simulate_judgments` (both orders, human labels)
whose true de-noised position bias is known (`truth["position_bias"]`), written to a CSV file and
read back by `jk.audit(path)`: *biased* (true bias about twice the default margin of 0.10),
*unbiased* (true bias 0) and *too few* (a small true bias, 40 pairs). The audit's finding on
position bias is one of "effect", "no_material_effect", "inconclusive". Targets (issue 20): a
biased judge called "no material bias" in at most 5% of runs, an unbiased judge called biased in
at most 5%, the too-few case inconclusive in at least 90%. Prints the markdown table of
docs/audit.md, each rate with its 95% Wilson interval (the study's own Monte Carlo error).

``--direct`` skips the file: the same simulated tables go straight to `jk.position_bias` and the
audit's own reading of its row (`judgekit.auditing.verdicts.bias_findings`), which is what
`jk.audit` does with them (tests/auditing/test_audit_verdicts.py checks that both give the same finding)
at a fraction of the cost, so that enough runs fit to make the rates' intervals informative.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

import judgekit as jk

#: case -> (simulated position_bias parameter, pairs)
CASES = {"unbiased": (0.0, 400), "biased": (0.8, 400), "too_few": (0.2, 40)}
KINDS = ("effect", "no_material_effect", "inconclusive")


def direct_kind(judgments, pairs, n_boot: int, seed: int) -> str:
    """The audit's position-bias finding without the file: `jk.position_bias` read by the audit's
    own `bias_findings` with the default margins."""
    from judgekit.auditing.verdicts import MARGINS, bias_findings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pb = jk.position_bias(judgments, pairs, n_boot=n_boot, seed=seed)
    found = [f.kind for f in bias_findings(pb, pb.iloc[:0], False, MARGINS)
             if f.metric == "position_bias"]
    return found[0] if found else "missing"


def run_case(position_bias: float, n_pairs: int, reps: int, seed: int = 0, n_boot: int = 1000,
             folder: Path | None = None, direct: bool = False) -> tuple[list[str], list[float]]:
    """Audit ``reps`` simulated judges from their written files (or, ``direct``, from the tables
    in memory); return the kind of each run's position-bias finding and each run's true
    de-noised position bias."""
    folder = Path(folder or tempfile.mkdtemp())
    kinds, truths = [], []
    for r in range(reps):
        pairs, judgments, truth = jk.sim.simulate_judgments(n_pairs, position_bias=position_bias,
                                                        seed=seed + r)
        if direct:
            kinds.append(direct_kind(judgments, pairs, n_boot, r))
            truths.append(float(truth["position_bias"]))
            continue
        path = folder / f"judge_{r}.csv"
        judgments.merge(pairs, on="pair_id").to_csv(path, index=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = jk.audit(path, n_boot=n_boot, seed=r)
        found = [f.kind for f in report.findings if getattr(f, "metric", "") == "position_bias"]
        kinds.append(found[0] if found else "missing")
        truths.append(float(truth["position_bias"]))
    return kinds, truths


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion k / n."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--direct", action="store_true", help="no files: the audit's reading of "
                        "jk.position_bias on the tables in memory")
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    args = parser.parse_args()
    t0 = time.perf_counter()
    print(f"{args.reps} runs per case, {args.boot} bootstrap draws, margin 0.10"
          f"{', direct' if args.direct else ', audited as files'}; rates with 95% Wilson "
          "intervals\n")
    print("| case | pairs | true position bias (mean) | evidence of bias | no material bias | "
          "inconclusive | target |")
    print("|---|---:|---:|---:|---:|---:|---|", flush=True)
    targets = {"biased": "no material <= 5%", "unbiased": "bias <= 5%", "too_few": "inconclusive >= 90%"}
    for case in args.cases:
        bias, n = CASES[case]
        kinds, truths = run_case(bias, n, args.reps, seed=1000, n_boot=args.boot, direct=args.direct)
        c = Counter(kinds)
        rates = []
        for kind in KINDS:
            lo, hi = wilson(c[kind], len(kinds))
            rates.append(f"{c[kind] / len(kinds):.1%} [{lo:.1%}, {hi:.1%}]")
        print(f"| {case} | {n} | {sum(truths) / len(truths):+.3f} | {' | '.join(rates)} | "
              f"{targets[case]} |", flush=True)
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
