"""Anthropic HH-RLHF (Bai et al., 2022): chosen / rejected dialogues.

Upstream: anthropics/hh-rlhf (MIT), ``<subset>/<split>.jsonl.gz`` with ``chosen`` and
``rejected``, two dialogues ("\\n\\nHuman: ... \\n\\nAssistant: ...") that differ in the last
assistant turn. judgekit splits each at its last assistant turn: the shared context is the
prompt, the two last turns are the responses. Which one goes in position a is decided by a hash
of the texts (stable, about half each), so labels are balanced.

Only ``harmless-base/test`` has a published checksum and is in the offline mirror; the other
files (e.g. ``helpful-base``, which Wei et al. use) are Git LFS objects, downloaded from
GitHub's media host and trusted on first use.
"""

from __future__ import annotations

import pandas as pd

from judgekit.data._common import check_names, chosen_first, one_name, read_jsonl, split_last_turn
from judgekit.data.fetch import lookup

SUBSETS = ("harmless-base", "helpful-base", "helpful-online", "helpful-rejection-sampled")
SPLITS = ("train", "test")


def load(subset: str = "harmless-base", split: str = "test", *, progress: bool = True
         ) -> tuple[pd.DataFrame, None]:
    """HH-RLHF pairs of one subset and split (no judge outputs are published with them)."""
    check_names("HH-RLHF subset", [one_name(subset, "subset")], list(SUBSETS))
    check_names("HH-RLHF split", [one_name(split, "split")], list(SPLITS))
    entry = lookup("hh_rlhf", f"{subset}/{split}.jsonl.gz")
    rows = []
    for i, r in enumerate(read_jsonl(entry, progress=progress)):
        context, chosen = split_last_turn(r["chosen"])
        context_r, rejected = split_last_turn(r["rejected"])
        first = chosen_first(context, chosen, rejected)
        rows.append({
            "pair_id": f"hh_rlhf/{subset}/{split}/{i}", "prompt": context,
            "response_a": chosen if first else rejected, "response_b": rejected if first else chosen,
            "label": "a" if first else "b", "dataset": subset, "task": split,
            # a handful of records differ before the last turn too; keep them, flagged
            "same_context": context == context_r,
        })
    return pd.DataFrame(rows), None
