"""Position bias with two to four answers: rotational permutations of the responses."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgekit._stamp import stamped
from judgekit.perturb._common import assemble, prepare

__all__ = ["perturb_position", "SLOTS"]

#: Response columns in display order; ``response_c`` / ``response_d`` are optional.
SLOTS: tuple[str, ...] = ("a", "b", "c", "d")


def _n_answers(df: pd.DataFrame) -> list[int]:
    """Number of responses per row: 2 plus the filled optional ``response_c`` / ``response_d``."""
    has_c = df["response_c"].notna().to_numpy() if "response_c" in df.columns else [False] * len(df)
    has_d = df["response_d"].notna().to_numpy() if "response_d" in df.columns else [False] * len(df)
    out = []
    for pid, c, d in zip(df["pair_id"], has_c, has_d):
        if d and not c:
            raise ValueError(f"pairs: column 'response_d' is filled but 'response_c' is missing (pair_id: {pid})")
        out.append(2 + int(c) + int(d))
    return out


@stamped
def perturb_position(pairs: pd.DataFrame, *, rotations: Sequence[int] | None = None) -> pd.DataFrame:
    """Rotate the order of the answers (position bias with 2 to 4 answers).

    For a row with n answers (``response_a``, ``response_b`` and optionally ``response_c``,
    ``response_d``), rotation r shows them starting from the (r+1)-th: with three answers,
    rotation 1 shows (b, c, a) and rotation 2 shows (c, a, b). With two answers the only rotation
    is the swap. The answers are moved between the response columns, so the engine shows them in
    the new order with the usual option IDs; ``model_*``, ``len_a``/``len_b`` and ``label`` move
    with them.

    Parameters
    ----------
    pairs : DataFrame
        A pairs table, optionally with ``response_c`` / ``response_d`` (and ``model_c`` /
        ``model_d``) for three or four answers.
    rotations : sequence of int, optional
        Which rotations to make (1 .. n−1); default all of them. Rotations a row does not have
        (e.g. 3 for a pair) are skipped for that row.

    Returns
    -------
    DataFrame
        One row per (pair, rotation) with ``variant`` ``"rot<r>"``, the extra column ``slots``
        (which source response each display slot now holds: ``"bca"`` means slot a holds the
        source's b, slot b its c, slot c its a; map a verdict ``v`` back with
        ``slots["abcd".index(v)]``) and ``favours`` = the source response now shown first (the
        one a judge that prefers the first position moves toward). ``label`` is the gold answer's
        new slot when that is a or b, and missing when the gold answer moved to slot c or d (the
        pairs schema has no label "c"; compare against the source pair's label instead).

    Notes
    -----
    Ye et al. (2024) count an instance as inconsistent when the selection differs across the
    rotations; the suite reports, per rotation, the share of verdicts that still pick the same
    source response, so it is comparable with the judge's own consistency on a re-run.

    References
    ----------
    Ye et al. (2024). Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge, appendix C;
    Zheng et al. (2023), Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> pairs = pd.DataFrame({"pair_id": ["q1"], "prompt": ["2+2?"], "response_a": ["4"],
    ...                       "response_b": ["5"], "response_c": ["22"], "label": ["a"]})
    >>> out = jk.perturb_position(pairs)
    >>> out[["variant", "slots", "response_a", "response_b", "response_c", "label", "favours"]]
      variant slots response_a response_b response_c label favours
    0    rot1   bca          5         22          4  None       b
    1    rot2   cab         22          4          5     b       c
    """
    df = prepare(pairs)
    n_answers = _n_answers(df)
    if rotations is not None:
        rotations = tuple(int(r) for r in rotations)
        if not rotations or any(not 1 <= r <= 3 for r in rotations):
            raise ValueError(f"rotations must be integers in 1..3, got {rotations}")
    rows = []
    for i, n in enumerate(n_answers):
        wanted = range(1, n) if rotations is None else [r for r in rotations if r < n]
        for r in wanted:
            slots = "".join(SLOTS[(k + r) % n] for k in range(n))
            edits: dict[str, object] = {}
            for k, source in enumerate(slots):
                edits[f"response_{SLOTS[k]}"] = df.at[i, f"response_{source}"]
            for k, source in enumerate(slots):
                column = f"model_{source}"
                if column in df.columns:
                    edits[f"model_{SLOTS[k]}"] = df.at[i, column]
            label = df.at[i, "label"]
            if label in ("a", "b"):
                new = SLOTS[slots.index(label)]
                new_label = new if new in ("a", "b") else None
                if new_label != label:
                    edits["label"] = new_label
            edits["slots"] = slots
            rows.append({"index": i, "variant": f"rot{r}", "side": slots, "favours": slots[0], "edits": edits})
    out = assemble(df, rows, bias="position")
    if not len(out):
        out["slots"] = pd.Series(dtype=object)
    return out
