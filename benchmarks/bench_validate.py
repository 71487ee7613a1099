"""Benchmark: ``validate_judgments`` on 5,000,000 judgments (100 judges x 5,000 pairs x 2 orders
x 5 repeats, arrow-backed string columns as pandas 3 reads them), against the straightforward
pandas validator judgekit used before (``astype(object)`` round trips, ``DataFrame.duplicated``,
``Series.isin``), run on the same table in the same process. Both must return identical tables.

Run: ``python benchmarks/bench_validate.py [--judges 100] [--pairs 5000] [--repeats 5]
[--rounds 3]``. Prints each round's times, the medians and the ratio new / reference (the rounds
are interleaved, so a busy machine slows both alike). Exit code 1 when the outputs differ or the
new validator is not faster.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pandas as pd

import judgekit as jk

KEY = ["pair_id", "judge", "order", "id_swap", "repeat"]


def reference_validate(judgments: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The validator as it was (valid input only): every check through pandas object paths."""
    df = judgments.copy()
    for column in ("pair_id", "judge"):
        assert not df[column].isna().any()
        df[column] = df[column].astype(str)
    assert df["order"].astype(object).isin(jk.ORDERS).all()
    verdict = df["verdict"]
    assert (verdict.isna() | verdict.astype(object).isin(jk.VERDICTS)).all()
    df["verdict"] = verdict.astype(object).where(verdict.notna(), None)
    repeat = pd.to_numeric(df["repeat"], errors="coerce")
    assert not (repeat.isna() | (repeat < 0) | (repeat % 1 != 0)).any()
    df["repeat"] = repeat.astype("int64")
    p_a = pd.to_numeric(df["p_a"], errors="coerce")
    assert not (df["p_a"].notna() & (p_a.isna() | (p_a < 0) | (p_a > 1))).any()
    df["p_a"] = p_a.astype("float64")
    df["id_swap"] = False
    assert not df.duplicated(KEY, keep=False).any()
    assert df["pair_id"].isin(pd.Index(pairs["pair_id"].astype(str))).all()
    return df


def make_tables(n_judges: int, n_pairs: int, repeats: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(0)
    per_judge = n_pairs * 2 * repeats
    n = per_judge * n_judges
    pair_ids = np.array([f"pair-{i:06d}" for i in range(n_pairs)], dtype=object)
    judgments = pd.DataFrame({
        "pair_id": np.tile(np.repeat(pair_ids, 2 * repeats), n_judges),
        "judge": np.repeat(np.array([f"judge-{k:03d}" for k in range(n_judges)], dtype=object),
                           per_judge),
        "order": np.tile(np.repeat(np.array(["ab", "ba"], dtype=object), repeats), n // (2 * repeats)),
        "repeat": np.tile(np.arange(repeats), n // repeats),
        "verdict": rng.choice(np.array(["a", "b", "tie", None], dtype=object), n, p=[.45, .45, .07, .03]),
        "p_a": np.where(rng.random(n) < 0.9, rng.random(n), np.nan),
    })
    for column in ("pair_id", "judge", "order", "verdict"):  # what pandas 3 reads from a file
        judgments[column] = judgments[column].astype("str")
    pairs = pd.DataFrame({"pair_id": pair_ids, "prompt": "q", "response_a": "x", "response_b": "y"})
    return pairs, judgments


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judges", type=int, default=100)
    ap.add_argument("--pairs", type=int, default=5000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    pairs, judgments = make_tables(args.judges, args.pairs, args.repeats)
    print(f"{len(judgments):,} judgments; dtypes: "
          + ", ".join(f"{c}={judgments[c].dtype}" for c in judgments.columns))

    new_t, ref_t = [], []
    for r in range(args.rounds):
        t = time.perf_counter()
        new = jk.validate_judgments(judgments, pairs)
        new_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        ref = reference_validate(judgments, pairs)
        ref_t.append(time.perf_counter() - t)
        print(f"round {r + 1}: validate_judgments {new_t[-1]:.2f} s, reference {ref_t[-1]:.2f} s")
    same = True
    try:
        pd.testing.assert_frame_equal(new, ref)
    except AssertionError as err:
        same = False
        print(f"OUTPUTS DIFFER: {err}")
    ratio = statistics.median(new_t) / statistics.median(ref_t)
    print(f"median: validate_judgments {statistics.median(new_t):.2f} s, reference "
          f"{statistics.median(ref_t):.2f} s -> new/reference = {ratio:.2f}; identical output: {same}")
    return 0 if same and ratio < 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
