"""Rebuild ``registry.tsv`` from a mirror's ``MANIFEST.tsv`` and ``UPSTREAM-ONLY.tsv`` (maintainers only).

Usage::

    python tools/build_registry.py /path/to/mirror

The registry holds addresses and checksums only, never data. Files that live outside GitHub, or
whose checksum is not published (the online-only sets), are listed in ``_ONLINE`` below with an
empty sha256: they are verified trust-on-first-use (see :mod:`judgekit.data.fetch`).
"""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

COLUMNS = ("dataset", "repo", "commit", "path", "sha256", "bytes", "license", "url")

_HH_COMMIT = "354e5c3cb8960630860dd5774a6ac2a58313bf4d"
_TLDR_BATCHES = [f"batch{i}" for i in range(3, 21)] + ["batch22"]
_HF = "https://huggingface.co/datasets"

# (dataset, repo, commit, path, license, url) of files with no published checksum.
_ONLINE: list[tuple[str, str, str, str, str, str]] = [
    *[
        ("hh_rlhf", "anthropics/hh-rlhf", _HH_COMMIT, f"{subset}/{split}.jsonl.gz", "MIT",
         # Git LFS objects: raw.githubusercontent.com would return the pointer, so use the media host.
         f"https://media.githubusercontent.com/media/anthropics/hh-rlhf/{_HH_COMMIT}/{subset}/{split}.jsonl.gz")
        for subset in ("helpful-base", "helpful-online", "helpful-rejection-sampled", "harmless-base")
        for split in ("train", "test")
        if (subset, split) != ("harmless-base", "test")
    ],
    *[
        ("tldr", "", "", f"summarize-from-feedback/dataset/comparisons/{b}.json", "MIT",
         f"https://openaipublic.blob.core.windows.net/summarize-from-feedback/dataset/comparisons/{b}.json")
        for b in _TLDR_BATCHES
    ],
    *[
        ("mtbench_human", "", "", f"lmsys/mt_bench_human_judgments/{split}.parquet", "CC-BY-4.0",
         f"{_HF}/lmsys/mt_bench_human_judgments/resolve/refs%2Fconvert%2Fparquet/default/{split}/0000.parquet")
        for split in ("human", "gpt4_pair")
    ],
    ("rewardbench", "", "", "allenai/reward-bench/filtered.parquet", "ODC-BY",
     f"{_HF}/allenai/reward-bench/resolve/refs%2Fconvert%2Fparquet/default/filtered/0000.parquet"),
]

_TABLES = {
    "src/alpaca_eval/leaderboards/data_AlpacaEval_2/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv":
        "alpacaeval_leaderboard",
    "notebooks/benchmarks.csv": "arena_elo",
    "src/alpaca_eval/leaderboards/evaluators/evaluators_leaderboard.csv": "alpacaeval_evaluators",
}
_DATASETS = {
    "tatsu-lab/alpaca_eval": "alpacaeval",
    "princeton-nlp/LLMBar": "llmbar",
    "Slimshilin/Position-Bias-Analyzer": "judging_the_judges",
    "WeOpenML/PandaLM": "pandalm",
    "prometheus-eval/prometheus-eval": "autoj_pairwise",
    "anthropics/hh-rlhf": "hh_rlhf",
    "Y0oMu/LLM-Judge-Bias-Dataset": "calm",
}


def _dataset(repo: str, path: str) -> str:
    if path in _TABLES:
        return _TABLES[path]
    if "/metrics/weights/" in path:
        return "alpacaeval_glm_weights"
    return _DATASETS[repo]


def build(mirror: Path) -> list[dict[str, str]]:
    rows = []
    for name in ("MANIFEST.tsv", "UPSTREAM-ONLY.tsv"):
        with open(mirror / name, newline="", encoding="utf-8") as fh:
            for rec in csv.DictReader(fh, delimiter="\t"):
                rows.append({
                    "dataset": _dataset(rec["repo"], rec["path"]), "repo": rec["repo"],
                    "commit": rec["commit"], "path": rec["path"], "sha256": rec["sha256"],
                    "bytes": rec["bytes"], "license": rec["license"], "url": "",
                })
    for dataset, repo, commit, path, lic, url in _ONLINE:
        rows.append({"dataset": dataset, "repo": repo, "commit": commit, "path": path,
                     "sha256": "", "bytes": "", "license": lic, "url": url})
    rows.sort(key=lambda r: (r["dataset"], r["repo"], r["path"]))
    return rows


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python tools/build_registry.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("mirror", nargs="?", default=os.environ.get("JUDGEKIT_DATA_MIRROR"),
                        help="the mirror directory, with MANIFEST.tsv (default: "
                             "$JUDGEKIT_DATA_MIRROR)")
    args = parser.parse_args(argv)
    if not args.mirror:
        parser.error("give the mirror directory, or set JUDGEKIT_DATA_MIRROR")
    mirror = Path(args.mirror)
    if not (mirror / "MANIFEST.tsv").is_file():
        parser.error(f"{mirror}: no MANIFEST.tsv there; is it a judgekit data mirror?")
    out = Path(__file__).resolve().parents[1] / "judgekit" / "data" / "registry.tsv"
    rows = build(mirror)
    with open(out, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows)} entries to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
