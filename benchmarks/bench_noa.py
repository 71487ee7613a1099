"""Benchmark: NOA on 20,000 estimation pairs, and `jk.calibrate` on a table of 200,000 pairs.

Run: python benchmarks/bench_noa.py [--samples 20000] [--pairs 200000] [--dense-steps 1]

Prints, measured in one run on this machine (wall-clock; a shared machine adds noise of tens of
percent, so the ratios matter more than the seconds):

* `noa_fit` with judgekit's default settings on K = 20,000 pairs in all four arrangements
  (target < 2 s), and with `settings="paper"` (300 gradient steps on M + 1 = 60,002 grid
  points), with their ratio;
* the paper setting's O(M) gradient step against the straightforward O(M^2) one that forms the
  Jacobian dg(z_j)/dd_k in row blocks (timed for a few steps and extrapolated, as printed);
* `jk.calibrate(method="noa")` on 200,000 pairs x 4 arrangements = 800,000 judgments (target
  < 2 s), the share of it spent in the fit, and the arrangement table built with integer codes
  against the same table from a pandas groupby on the id columns (the former implementation).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy.special import expit

import judgekit as jk
from judgekit.calibration._noa_paper import _dense_gradient, _Problem
from judgekit.calibration.arrangements import _add_arrangements, _cells
from judgekit.calibration.calibrate import _Rows
from judgekit.exceptions import ConvergenceWarning
from judgekit.sim.selection_bias import noisy_arrangement_judgments


def samples(k: int, seed: int = 0) -> np.ndarray:
    """P(t1) in X0..X3 for k pairs: token bias 1, position bias 0.5, arrangement noise 0.3."""
    rng = np.random.default_rng(seed)
    delta = rng.normal(0.0, 2.0, k)
    e = rng.normal(0.0, 0.3, (k, 4))
    pos, tok = 0.5, 1.0
    return np.column_stack([expit(delta + pos + tok + e[:, 0]), expit(delta - pos + tok + e[:, 1]),
                            expit(-delta + pos + tok + e[:, 2]), expit(-delta - pos + tok + e[:, 3])])


def best_of(fn, repeats: int) -> tuple[float, float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), float(np.median(times)), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--pairs", type=int, default=200_000)
    parser.add_argument("--dense-steps", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)  # the paper setting stops at 300 steps

    s = samples(args.samples)
    print(f"K = {args.samples} estimation pairs in X0..X3\n")
    best, med, fit = best_of(lambda: jk.noa_fit(s), args.repeats)
    print(f"noa_fit, judgekit settings: {fit.objective!r} objective, {fit.n_grid} knots, "
          f"{fit.n_iter} projected-gradient steps, converged={fit.converged}")
    print(f"  wall time: best {best:.3f} s, median {med:.3f} s of {args.repeats} "
          f"(target < 2 s): {'PASS' if best < 2 else 'FAIL'}")
    best_p, med_p, paper = best_of(lambda: jk.noa_fit(s, objective="full", settings="paper"), args.repeats)
    print(f"noa_fit, settings='paper': {paper.n_iter} steps, converged={paper.converged}, "
          f"M + 1 = {paper.n_grid} grid points")
    print(f"  wall time: best {best_p:.3f} s, median {med_p:.3f} s; paper / judgekit = {best_p / best:.1f}x")

    problem = _Problem(s, "full", "shared")
    d = problem.init()
    n_fast = 50
    t0 = time.perf_counter()
    for _ in range(n_fast):
        _, grad = problem.loss_and_grad(d, 0.5)
    fast = (time.perf_counter() - t0) / n_fast
    t0 = time.perf_counter()
    for _ in range(args.dense_steps):
        dense = _dense_gradient(problem, d, 0.5, block=128)
    slow = (time.perf_counter() - t0) / args.dense_steps
    print(f"paper setting, O(M) gradient: {fast * 1e3:.2f} ms per step (mean of {n_fast}); "
          f"O(M^2) Jacobian product: {slow:.2f} s per step (timed over {args.dense_steps}); "
          f"ratio {slow / fast:,.0f}x, max |difference| {np.abs(dense - grad).max():.1e}")

    print(f"\ncalibrate on {args.pairs:,} pairs x 4 arrangements")
    j = noisy_arrangement_judgments(args.pairs, token_bias=1.0, seed=1).drop(columns="p_a_unbiased")
    best_c, med_c, (cal, _) = best_of(lambda: jk.calibrate(j, "noa"), args.repeats)
    n_est = cal.info["sim"]["n_estimation"]
    est = jk.arrangement_table(j)[["s0", "s1", "s2", "s3"]].to_numpy()[:n_est]
    fit_only, _, _ = best_of(lambda: jk.noa_fit(est), args.repeats)
    print(f"  jk.calibrate(method='noa'): best {best_c:.3f} s, median {med_c:.3f} s of {args.repeats} "
          f"(target < 2 s): {'PASS' if best_c < 2 else 'FAIL'}")
    print(f"  the fit on {n_est:,} estimation pairs alone: {fit_only:.3f} s ({fit_only / best_c:.0%} "
          "of the call; the rest is validation and table handling)")
    df = jk.validate_judgments(j)
    coded, _, _ = best_of(lambda: _cells(df, (r := _Rows.of(df)).p_t1, r.code, sort_judges=False),
                          args.repeats)
    grouped, _, _ = best_of(lambda: _add_arrangements(df.copy()).groupby(
        ["judge", "pair_id", "arrangement"], sort=True)["p_t1"].mean().unstack("arrangement"), args.repeats)
    print(f"  P(t1) per pair and arrangement from integer codes: {coded:.3f} s; from a pandas "
          f"groupby on the string columns (the former way): {grouped:.3f} s; ratio {grouped / coded:.1f}x")
    validate, _, _ = best_of(lambda: jk.validate_judgments(j), args.repeats)
    print(f"  validate_judgments alone (judgekit/schema.py): {validate:.3f} s ({validate / best_c:.0%} of the call)")


if __name__ == "__main__":
    main()
