"""Study: are the audit's verdicts right? Simulated judges of known truth, audited as files.

Run: python benchmarks/study_audit_verdicts.py [--reps 100] [--boot 1000] [--direct] [--cases ...]

Each case is a judge simulated with `jk.sim.simulate_judgments` (both orders, human labels)
whose true de-noised position bias is known (`truth["position_bias"]`), written to a CSV file and
read back by `jk.audit(path)`. The audit's finding on position bias is one of "effect",
"no_material_effect", "inconclusive"; a finding is *wrong* when it says "effect" and the true bias
is 0 or of the other sign, or "no material" and the true bias is beyond the margin (0.10).

- *unbiased* and *biased* (true bias 0 and about twice the margin), 400 pairs;
- *too_few*: no bias, 40 pairs, too few to show that the bias is within the margin (or beyond
  it); *biased_40*: the biased judge with 40 pairs;
- *small_40*: a small true bias inside the margin (+0.05) with 40 pairs. Every finding but a
  wrong-sign "effect" is right here: the bias is real ("effect" is right) and within the margin
  ("no material" is right). How often 40 pairs detect it is the test's power, not an error.

Targets (issue 20): a biased judge called "no material bias" in at most 5% of runs, an unbiased
judge called biased in at most 5%, the too-few case inconclusive in at least 90%, and at most 5%
wrong findings in the other cases. Prints the markdown table of docs/audit.md, each rate with its
95% Wilson interval (the study's own Monte Carlo error).

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
from judgekit.auditing.verdicts import MARGINS, bias_findings

#: case -> (simulated position_bias parameter, pairs)
CASES = {"unbiased": (0.0, 400), "biased": (0.8, 400), "too_few": (0.0, 40),
         "biased_40": (0.8, 40), "small_40": (0.2, 40)}
KINDS = ("effect", "no_material_effect", "inconclusive")
#: case -> (what is counted, "max" or "min", the bound): the issue's targets
TARGETS = {"unbiased": ("effect", "max", 0.05), "biased": ("no_material_effect", "max", 0.05),
           "too_few": ("inconclusive", "min", 0.90),
           "biased_40": ("no_material_effect", "max", 0.05), "small_40": ("wrong", "max", 0.05)}
MARGIN = MARGINS["position_bias"]  # the audit's default margin of position bias


def wrong(kind: str, estimate: float, truth: float, margin: float = MARGIN) -> bool:
    """Whether a finding contradicts the truth: "effect" when the true bias is 0 or of the other
    sign, "no material" when it is beyond the margin (an inconclusive finding is never wrong)."""
    if kind == "effect":
        return abs(truth) < 1e-12 or math.copysign(1.0, estimate) != math.copysign(1.0, truth)
    if kind == "no_material_effect":
        return abs(truth) > margin
    return False


def direct_kind(judgments, pairs, n_boot: int, seed: int) -> tuple[str, float]:
    """The audit's position-bias finding without the file (`jk.position_bias` read by the audit's
    own `bias_findings` with the default margins) and the estimate it reads."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pb = jk.position_bias(judgments, pairs, n_boot=n_boot, seed=seed)
    found = [f.kind for f in bias_findings(pb, pb.iloc[:0], False, MARGINS)
             if f.metric == "position_bias"]
    return (found[0] if found else "missing"), _estimate(pb)


def _estimate(table) -> float:
    return float(table.loc[table["metric"] == "position_bias", "estimate"].iloc[0])


def run_case(position_bias: float, n_pairs: int, reps: int, seed: int = 0, n_boot: int = 1000,
             folder: Path | None = None, direct: bool = False
             ) -> tuple[list[str], list[float], list[float]]:
    """Audit ``reps`` simulated judges from their written files (or, ``direct``, from the tables
    in memory); return the kind of each run's position-bias finding, each run's true de-noised
    position bias and the estimate the finding read."""
    folder = Path(folder or tempfile.mkdtemp())
    kinds, truths, estimates = [], [], []
    for r in range(reps):
        pairs, judgments, truth = jk.sim.simulate_judgments(n_pairs, position_bias=position_bias,
                                                            seed=seed + r)
        truths.append(float(truth["position_bias"]))
        if direct:
            kind, estimate = direct_kind(judgments, pairs, n_boot, r)
            kinds.append(kind)
            estimates.append(estimate)
            continue
        path = folder / f"judge_{r}.csv"
        judgments.merge(pairs, on="pair_id").to_csv(path, index=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = jk.audit(path, n_boot=n_boot, seed=r)
        found = [f.kind for f in report.findings if getattr(f, "metric", "") == "position_bias"]
        kinds.append(found[0] if found else "missing")
        estimates.append(_estimate(report.sections["accuracy"].tables["position_bias"]))
    return kinds, truths, estimates


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
    print(f"{args.reps} runs per case, {args.boot} bootstrap draws, margin {MARGIN:.2f}"
          f"{', direct' if args.direct else ', audited as files'}; rates with 95% Wilson "
          "intervals\n")
    print("| case | pairs | true position bias (mean) | evidence of bias | no material bias | "
          "inconclusive | wrong | target |")
    print("|---|---:|---:|---:|---:|---:|---:|---|", flush=True)
    names = {"effect": "bias", "no_material_effect": "no material", "inconclusive": "inconclusive",
             "wrong": "wrong"}
    for case in args.cases:
        bias, n = CASES[case]
        kinds, truths, estimates = run_case(bias, n, args.reps, seed=1000, n_boot=args.boot,
                                            direct=args.direct)
        c = Counter(kinds)
        c["wrong"] = sum(wrong(k, e, t) for k, e, t in zip(kinds, estimates, truths))
        rates = []
        for kind in (*KINDS, "wrong"):
            lo, hi = wilson(c[kind], len(kinds))
            rates.append(f"{c[kind] / len(kinds):.1%} [{lo:.1%}, {hi:.1%}]")
        what, side, bound = TARGETS[case]
        rate = c[what] / len(kinds)
        met = rate <= bound if side == "max" else rate >= bound
        print(f"| {case} | {n} | {sum(truths) / len(truths):+.3f} | {' | '.join(rates)} | "
              f"{names[what]} {'<=' if side == 'max' else '>='} {bound:.0%}: "
              f"{'met' if met else 'NOT met'} |", flush=True)
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
