"""A clear error when a metric of agreement with human labels gets pairs without any label."""

from __future__ import annotations

import pandas as pd


def _looks_like_labels(values: pd.Series) -> bool:
    from judgekit.data._tidy import side_of

    present = values.dropna()
    if present.empty or present.map(lambda v: isinstance(v, (list, dict))).any():
        return False
    sides = [side_of(v)[0] for v in pd.unique(present)[:20]]
    return all(s is not None for s in sides) and any(s in ("a", "b") for s in sides)


def require_labels(pairs: pd.DataFrame | None, what: str) -> None:
    """Raise a ValueError naming the likely label column when no pair is labelled "a" or "b"."""
    if pairs is None:
        raise ValueError(f"{what} needs human labels: pass pairs= with a 'label' column "
                         "('a', 'b' or 'tie')")
    if not isinstance(pairs, pd.DataFrame):
        return  # the validators name the wrong type
    if "label" in pairs.columns and pairs["label"].astype(object).isin(["a", "b"]).any():
        return
    state = ("the pairs have no 'label' column" if "label" not in pairs.columns
             else "every 'label' is missing or a tie")
    from judgekit.data._tidy import ALIASES, _key

    named = [c for c in pairs.columns if c != "label" and _key(c) in ALIASES["label"]]
    valued = [c for c in pairs.columns if c not in named and c != "label"
              and c not in ("pair_id", "prompt", "response_a", "response_b")
              and _looks_like_labels(pairs[c])]
    hint = ""
    if named or valued:
        c = (named or valued)[0]
        hint = (f"; column {c!r} looks like the labels: rename it, "
                f"pairs.rename(columns={{{c!r}: 'label'}})")
    raise ValueError(f"{what} needs human labels, and no pair has one ('label' 'a' or 'b'): "
                     f"{state}{hint}. The pairs have columns {[str(c) for c in pairs.columns]}")
