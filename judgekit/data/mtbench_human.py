"""MT-Bench human judgments and GPT-4 pair judgments (Zheng et al., 2023). Online only.

Upstream: Hugging Face ``lmsys/mt_bench_human_judgments`` (CC-BY-4.0), parquet conversions of the
``human`` (3.3k expert votes) and ``gpt4_pair`` splits, with ``question_id``, ``model_a``,
``model_b``, ``winner`` ("model_a", "model_b", "tie", "tie (bothbad)"), ``judge``,
``conversation_a`` / ``conversation_b`` (lists of ``{"role", "content"}``) and ``turn`` (1 or 2).
Trusted on first use.

One pair per (question, model_a, model_b, turn); turn-2 pairs show both turns as
"[Turn 1] ... [Turn 2] ...". The pair's label is the human majority (missing when humans did
not judge it or split evenly). Every vote, human or GPT-4, is a row of the judgments table:
``judge`` is the upstream judge id (``"gpt4_pair"``, ``"author_3"``, ``"expert_12"``, ...),
``judge_type`` "human" or "gpt-4". Upstream records one consolidated verdict per vote without
the shown order, so ``order`` is "ab" (the GPT-4 pair verdicts were themselves made in both
orders and reconciled by the MT-Bench authors).
"""

from __future__ import annotations

import io
from collections import Counter

import numpy as np
import pandas as pd

from judgekit.data.fetch import lookup, read_bytes

_WINNER = {"model_a": "a", "model_b": "b", "tie": "tie", "tie (bothbad)": "tie"}


def _turns(conversation: object, role: str) -> list[str]:
    return [str(m["content"]) for m in list(conversation) if m["role"] == role]


def _join(parts: list[str]) -> str:
    if len(parts) == 1:
        return parts[0]
    return "\n\n".join(f"[Turn {k}]\n{p}" for k, p in enumerate(parts, start=1))


def load(*, progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """MT-Bench pairs with human-majority labels, and every human and GPT-4 vote."""
    frames = []
    for split, kind in (("human", "human"), ("gpt4_pair", "gpt-4")):
        entry = lookup("mtbench_human", f"lmsys/mt_bench_human_judgments/{split}.parquet")
        frames.append(pd.read_parquet(io.BytesIO(read_bytes(entry, progress=progress)))
                      .assign(judge_type=kind))
    return tables_from_votes(pd.concat(frames, ignore_index=True))


def tables_from_votes(votes: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pairs and judgments from MT-Bench votes (the columns of the upstream splits, plus
    ``judge_type`` "human" or "gpt-4"); see the module docstring."""
    pairs: dict[str, dict] = {}
    judg = {"pair_id": [], "judge": [], "verdict": [], "judge_type": [], "raw": []}
    human: dict[str, list[str]] = {}
    for r in votes.to_dict("records"):
        turn = int(r["turn"])
        pid = f"mtbench/{r['question_id']}/{r['model_a']}/{r['model_b']}/{turn}"
        if pid not in pairs:
            questions = _turns(r["conversation_a"], "user")[:turn]
            pairs[pid] = {
                "pair_id": pid, "prompt": _join(questions),
                "response_a": _join(_turns(r["conversation_a"], "assistant")[:turn]),
                "response_b": _join(_turns(r["conversation_b"], "assistant")[:turn]),
                "model_a": r["model_a"], "model_b": r["model_b"], "dataset": "mtbench_human",
                "task": f"turn {turn}", "instruction_id": str(r["question_id"]), "turn": turn,
            }
        verdict = _WINNER.get(str(r["winner"]))
        if verdict is None:
            raise ValueError(f"mtbench_human: unexpected winner {r['winner']!r} for {pid}")
        judg["pair_id"].append(pid)
        judg["judge"].append(str(r["judge"]))
        judg["verdict"].append(verdict)
        judg["judge_type"].append(r["judge_type"])
        judg["raw"].append(str(r["winner"]))
        if r["judge_type"] == "human":
            human.setdefault(pid, []).append(verdict)
    for pid, row in pairs.items():
        counts = Counter(human.get(pid, [])).most_common()
        row["label"] = counts[0][0] if counts and (len(counts) == 1 or counts[1][1] < counts[0][1]) else None
        row["n_human"] = len(human.get(pid, []))
    judgments = pd.DataFrame(judg)
    judgments.insert(2, "order", "ab")
    # the same judge may vote on the same pair more than once: number those votes
    judgments.insert(3, "repeat", judgments.groupby(["pair_id", "judge"]).cumcount().astype(np.int64))
    judgments.insert(5, "p_a", float("nan"))
    return pd.DataFrame(list(pairs.values())), judgments
