"""TL;DR summarize-from-feedback comparisons (Stiennon et al., 2020). Online only.

Upstream: OpenAI's public blob ``summarize-from-feedback/dataset/comparisons/batch<N>.json``
(MIT), JSON lines with ``info`` (``id``, ``post``, ``title``, ``subreddit``; or ``article`` for
CNN/DM), ``split`` ("train", "valid1", "valid2"), ``summaries`` (two, each with ``text`` and
``policy``), ``choice`` (0 or 1: the summary the labeller preferred), ``worker`` and ``batch``.
No checksums are published: files are trusted on first use (see :mod:`judgekit.data.fetch`).
"""

from __future__ import annotations

import pandas as pd

from judgekit.data._common import as_list, check_names, read_jsonl
from judgekit.data.fetch import registry_files

SPLITS = ("train", "valid1", "valid2")


def _batches() -> dict[str, object]:
    return {f.path.rsplit("/", 1)[1].removesuffix(".json"): f for f in registry_files("tldr")}


def _prompt(info: dict) -> str:
    if info.get("post") is not None:
        return (f"SUBREDDIT: r/{info.get('subreddit', '')}\nTITLE: {info.get('title', '')}\n"
                f"POST: {info['post']}")
    return info.get("article") or ""


def load(split: str | list[str] | None = None, batches: str | list[str] | None = None, *,
         progress: bool = True) -> tuple[pd.DataFrame, None]:
    """TL;DR comparison pairs (labels from the human labellers), optionally of some splits/batches."""
    files = _batches()
    wanted = as_list(batches, "batches") or list(files)
    check_names("TL;DR batch", wanted, list(files))
    splits = as_list(split, "split")
    if splits is not None:
        check_names("TL;DR split", splits, list(SPLITS))
    rows = []
    for name in wanted:
        for i, r in enumerate(read_jsonl(files[name], progress=progress)):
            if splits is not None and r.get("split") not in splits:
                continue
            s0, s1 = r["summaries"][0], r["summaries"][1]
            info = r["info"]
            rows.append({
                "pair_id": f"tldr/{name}/{i}", "prompt": _prompt(info), "response_a": s0["text"],
                "response_b": s1["text"], "label": "a" if int(r["choice"]) == 0 else "b",
                "model_a": s0.get("policy"), "model_b": s1.get("policy"), "dataset": "tldr",
                "task": r.get("split"), "instruction_id": info.get("id"),
                "worker": r.get("worker"), "batch": r.get("batch", name),
            })
    return pd.DataFrame(rows), None
