"""Judgments as battles: one row per game, the outcome for response a, and how many wins it counts.

Arena-Hard-Auto and Chatbot Arena fit their ratings to *battles*. A game (one judge call, in one
order) is a battle between the pair's two models; a tie is half a win for each. Arena-Hard counts
a significant win (``A>>B``) as ``weight`` battles (3 by default). This module turns judgekit's
tables into those battles through integer codes (no Python loop over rows), one group per judge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgekit.schema import _ids, validate_judgments, validate_pairs

#: The verdict labels Arena-Hard-Auto v0.1's ``show_result.py`` turns into battles (game 1 and
#: game 2 alike); any other label (``A<B``, ``B<<A``, ...) or none is left out of its battles.
V01_LABELS = frozenset({"A>>B", "A>B", "A=B", "B>A", "B>>A"})
VERSIONS = ("v0.1", "v2.0")


@dataclass(frozen=True)
class Battles:
    """One judge's games: ``pair`` (row of the validated pairs), ``y`` (1 response a won, 0.5 a
    tie, 0 it lost) and ``w`` (battles the game counts for: 1, or ``weight`` for a significant
    win). ``dropped`` counts the games left out per pair row (no verdict, or a label the chosen
    version does not count); ``labels`` the labels left out, by label."""

    judge: str
    pair: np.ndarray
    y: np.ndarray
    w: np.ndarray
    dropped: np.ndarray
    labels: dict[str, int]


def check_version(version: str) -> None:
    if version not in VERSIONS:
        raise ValueError(f"version must be one of {VERSIONS}, got {version!r}")


def tables(judgments: pd.DataFrame, pairs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Validated tables; the pairs need model_a and model_b on every row."""
    pairs = validate_pairs(pairs, require_text=False)
    if pairs.empty:
        raise ValueError("pairs: the table is empty")
    judgments = validate_judgments(judgments, pairs)
    if judgments.empty:
        raise ValueError("judgments: the table is empty; there are no battles to rate")
    for column in ("model_a", "model_b"):
        if column not in pairs.columns:
            raise ValueError(f"pairs: ratings need the columns 'model_a' and 'model_b' (which "
                             f"model wrote each response); missing {column!r}")
        bad = pairs[column].isna().to_numpy()
        if bad.any():
            raise ValueError(f"pairs: column {column!r} is missing in {_ids(pairs, bad, 'pair_id')}")
    return judgments, pairs


def battles(judgments: pd.DataFrame, pairs: pd.DataFrame, *, weight: int = 1,
            version: str = "v0.1") -> list[Battles]:
    """The games of every judge as battles (tables validated by :func:`tables`).

    The outcome is the judgment's ``margin`` (Arena-Hard's graded preference for response a,
    ±2 significant) where the column exists and is set, else its verdict. With ``version="v0.1"``
    a game whose ``score`` label is not one of :data:`V01_LABELS` is left out, as Arena-Hard v0.1
    leaves it out; with ``"v2.0"`` every label counts, but a pair with a game missing loses both
    of that judge's games (Arena-Hard v2.0 drops the record).
    """
    check_version(version)
    if isinstance(weight, bool) or not isinstance(weight, (int, np.integer)) or weight < 1:
        raise ValueError(f"weight must be an integer >= 1, got {weight!r}")
    pair = pd.Index(pairs["pair_id"]).get_indexer(judgments["pair_id"])
    verdict = judgments["verdict"]
    y = np.where(verdict == "a", 1.0, np.where(verdict == "b", 0.0,
                                               np.where(verdict == "tie", 0.5, np.nan)))
    significant = np.zeros(len(judgments), dtype=bool)
    if "margin" in judgments.columns:
        margin = pd.to_numeric(judgments["margin"], errors="coerce").to_numpy(dtype=float,
                                                                          na_value=np.nan)
        has = ~np.isnan(margin)
        y = np.where(has, np.where(margin > 0, 1.0, np.where(margin < 0, 0.0, 0.5)), y)
        significant = has & (np.abs(np.nan_to_num(margin)) >= 2)
    label_dropped: dict[str, int] = {}
    if version == "v0.1" and "score" in judgments.columns:
        labels = judgments["score"].astype(object)
        present = labels.notna().to_numpy()
        stripped = labels.where(~present, labels.astype(str).str.strip())
        uncounted = present & ~stripped.isin(V01_LABELS).to_numpy()
        if uncounted.any():
            label_dropped = stripped[uncounted].value_counts().to_dict()
            y = np.where(uncounted, np.nan, y)
    w = np.where(significant, float(weight), 1.0)
    judge_code, judge_names = pd.factorize(judgments["judge"], sort=True)
    out = []
    for code, judge in enumerate(judge_names):
        mine = judge_code == code
        ok = mine & ~np.isnan(y)
        if version == "v2.0":  # a pair with any game missing loses all its games
            broken = np.unique(pair[mine & np.isnan(y)])
            ok &= ~np.isin(pair, broken)
        dropped = np.bincount(pair[mine & ~ok], minlength=len(pairs))
        out.append(Battles(judge=str(judge), pair=pair[ok], y=y[ok], w=w[ok], dropped=dropped,
                           labels={str(k): int(v) for k, v in label_dropped.items()}))
    return out
