"""Regenerate the instruction difficulties γ that judgekit ships (maintainers only).

For each public AlpacaEval annotator judgekit reads (today ``weighted_alpaca_eval_gpt4_turbo``),
γ is fitted jointly on the public leaderboard's models whose annotations judgekit registers and
reads by default (``judgekit.data.alpacaeval.DEFAULT_MODELS``), leaving out the two entries that
attack the metric rather than answer the instructions (``gpt4_gamed``: truncated outputs;
``NullModel``: one constant output). The fit is :func:`judgekit.instruction_difficulty` with its
defaults. Then, for every model on the published leaderboard, γ is refitted without that model
and the model's annotations alone get their LC win rate (as one ``annotations.json`` read on its
own would), beside the same with γ fitted on that file alone: the held-out accuracy the package
quotes.

Writes ``judgekit/data/difficulty/<annotator>.csv`` and ``.json``. Run from the repository root
with the data mirror or the downloaded files at hand::

    JUDGEKIT_DATA_MIRROR=/path/to/mirror python tools/fit_instruction_difficulty.py

``tests/winrate/test_winrate_difficulty.py`` checks that the shipped γ equals what :func:`fit` computes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import pandas as pd

import judgekit as jk
from judgekit.data import alpacaeval

OUT = Path(__file__).resolve().parent.parent / "judgekit" / "data" / "difficulty"
#: Entries of the leaderboard built to game the metric; they say nothing about the instructions.
ADVERSARIAL = {
    "gpt4_gamed": "GPT-4 outputs truncated to a few characters unless they win (Dubois et al. §4.3)",
    "NullModel": "one constant output for every instruction",
}
METHOD = ("judgekit.instruction_difficulty(judgments, pairs) with its defaults: one L2-penalised "
          "logistic regression over every (model, instruction) comparison with the baseline, "
          "logit P = gamma[x] + theta[m] + phi[m] * tanh(dlen / sd_m(dlen)), soft labels from the "
          "judge's probabilities, L2 strength by 5-fold cross-validation over (model, "
          "instruction) cells (seed 0); length_prior = median of the per-model phi")


def models(annotator: str) -> list[str]:
    """The models γ is fitted on: the registered default models, adversarial entries left out."""
    if annotator != alpacaeval.ANNOTATOR:
        raise ValueError(f"judgekit reads no annotations of {annotator!r}")
    return [m for m in alpacaeval.DEFAULT_MODELS if m not in ADVERSARIAL]


def tables(annotator: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pairs and judgments of the fitted models."""
    wanted = models(annotator)
    pairs, judgments = jk.load_dataset("alpacaeval", models=wanted)
    return pairs, judgments


def fit(annotator: str = alpacaeval.ANNOTATOR, data: tuple | None = None):
    """γ fitted on the public models, and its provenance (without the held-out accuracy)."""
    pairs, judgments = data if data is not None else tables(annotator)
    diff = jk.instruction_difficulty(judgments, pairs)
    files = alpacaeval.annotation_files()
    fitted = models(annotator)
    meta = {
        "annotator": annotator,
        "baseline": diff.baseline,
        "instructions": int(len(diff.gamma)),
        "models": fitted,
        "excluded": ADVERSARIAL,
        "upstream": {"repo": files[fitted[0]].repo, "commit": files[fitted[0]].commit,
                     "paths": "results/<model>/" + annotator + "/annotations.json"},
        "files": {m: files[m].sha256 for m in fitted},
        "licence": "derived from AlpacaEval annotations (code Apache-2.0, data CC BY-NC 4.0)",
        "method": METHOD,
        "l2": diff.l2,
        "length_prior": diff.length_prior,
        "judgekit_version": jk.__version__,
        "script": "tools/fit_instruction_difficulty.py",
    }
    return diff, meta


def held_out(annotator: str, data: tuple, progress: bool = True) -> dict:
    """Per model on the published leaderboard: LC of its annotations alone with γ refitted
    without it, and with γ fitted on its annotations alone, beside the published LC."""
    pairs, judgments = data
    published = jk.load_table("alpacaeval_leaderboard").set_index("model")["length_controlled_winrate"]
    baseline = alpacaeval.BASELINE
    scored = [m for m in models(annotator) if m != baseline and m in published.index]
    n_instructions = pairs["instruction_id"].nunique()
    rows = {}
    for i, m in enumerate(scored):
        start = time.time()
        mine = pairs["model_b"] == m
        own_p, own_j = pairs[mine], judgments[judgments["pair_id"].isin(pairs.loc[mine, "pair_id"])]
        rest_p = pairs[~mine]
        rest_j = judgments[judgments["pair_id"].isin(rest_p["pair_id"])]
        gamma = jk.instruction_difficulty(rest_j, rest_p)
        value = {}
        for key, difficulty in (("held_out", gamma), ("self_fit", "fit")):
            lb = jk.lc_win_rates(own_j, own_p, difficulty=difficulty, n_boot=0)
            value[key] = float(lb.set_index("model").loc[m, "lc_win_rate"])
        rows[m] = {"published": float(published[m]), **value,
                   "complete": bool(mine.sum() == n_instructions)}
        if progress:
            print(f"  [{i + 1}/{len(scored)}] {m}: published {rows[m]['published']:.2f}, held out "
                  f"{value['held_out']:.2f}, self-fit {value['self_fit']:.2f} "
                  f"({time.time() - start:.1f} s)", file=sys.stderr)
    table = pd.DataFrame(rows).T
    err = (table["held_out"] - table["published"]).abs().astype(float)
    self_err = (table["self_fit"] - table["published"]).abs().astype(float)
    aligned = table["complete"].astype(bool)
    return {
        "method": ("each model left out in turn: gamma refitted on the other models, then the "
                   "model's annotations alone through jk.lc_win_rates(difficulty=that gamma, "
                   "n_boot=0); self_fit: difficulty='fit' on the model's annotations alone; "
                   "against the published leaderboard's length_controlled_winrate"),
        "n": int(len(table)), "mae": float(err.mean()), "max": float(err.max()),
        "max_model": str(err.idxmax()),
        "n_aligned": int(aligned.sum()), "mae_aligned": float(err[aligned].mean()),
        "max_aligned": float(err[aligned].max()),
        "aligned_note": ("aligned = models with all instructions annotated; upstream looks gamma "
                         "up by row position, which misaligns the published LC of models that "
                         "miss an annotation (docs/winrate.md)"),
        "self_fit_mae": float(self_err.mean()), "self_fit_max": float(self_err.max()),
        "per_model": {m: {k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()}
                      for m, r in rows.items()},
    }


def write(diff, meta: dict, out: Path = OUT) -> None:
    out.mkdir(parents=True, exist_ok=True)
    name = meta["annotator"]
    table = pd.DataFrame({"instruction_id": diff.gamma.index.astype(str),
                          "gamma": diff.gamma.to_numpy(dtype=float)})
    table.to_csv(out / f"{name}.csv", index=False, float_format="%.17g", lineterminator="\n")
    (out / f"{name}.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n",
                                      encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotator", default=alpacaeval.ANNOTATOR)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    start = time.time()
    data = tables(args.annotator)
    diff, meta = fit(args.annotator, data)
    print(f"{args.annotator}: gamma for {len(diff.gamma)} instructions from {len(meta['models'])} "
          f"models (l2 {diff.l2:g}, length prior {diff.length_prior:.4f})", file=sys.stderr)
    meta["held_out"] = held_out(args.annotator, data)
    h = meta["held_out"]
    print(f"held out: MAE {h['mae']:.2f}, max {h['max']:.2f} ({h['max_model']}) on {h['n']} models; "
          f"aligned {h['mae_aligned']:.2f} / {h['max_aligned']:.2f} on {h['n_aligned']}; "
          f"self-fit {h['self_fit_mae']:.2f} / {h['self_fit_max']:.2f} "
          f"({time.time() - start:.0f} s)", file=sys.stderr)
    write(diff, meta, args.out)
    print(f"wrote {args.out / (args.annotator + '.csv')} and .json", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
