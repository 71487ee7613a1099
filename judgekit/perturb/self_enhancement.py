"""Self-enhancement: the pairs in which the judge's own model wrote one of the two responses."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgekit._stamp import stamped
from judgekit.perturb._common import assemble, prepare

__all__ = ["perturb_self_enhancement"]


@stamped
def perturb_self_enhancement(pairs: pd.DataFrame, models: str | Sequence[str]) -> pd.DataFrame:
    """Select the pairs that set the judge's own answers against another model's.

    Nothing is changed: self-enhancement is measured by judging a model's own answers against
    others' without saying who wrote what, and comparing how often the judge sides with its own
    answer with how often the gold label does. The selection marks which response is the judge's.

    Parameters
    ----------
    pairs : DataFrame
        A pairs table with ``model_a`` and ``model_b``.
    models : str or sequence of str
        The name(s) under which the judge's model appears in ``model_a`` / ``model_b`` (e.g. the
        judge's ``model`` and any aliases).

    Returns
    -------
    DataFrame
        The pairs in which exactly one response was written by ``models``, with ``variant`` = that
        author, ``changed`` empty and ``favours`` = the judge's own response.

    References
    ----------
    Ye et al. (2024). Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge, appendix C;
    Zheng et al. (2023), Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena, §3.3.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> pairs = pd.DataFrame({"pair_id": ["p1", "p2"], "prompt": ["q", "q"], "response_a": ["x", "y"],
    ...                       "response_b": ["z", "w"], "label": ["a", "b"],
    ...                       "model_a": ["gpt-4o", "llama"], "model_b": ["llama", "mistral"]})
    >>> jk.perturb_self_enhancement(pairs, "gpt-4o")[["source_pair_id", "favours", "changed"]]
      source_pair_id favours changed
    0             p1       a
    """
    df = prepare(pairs)
    names = {models} if isinstance(models, str) else set(models)
    if not names:
        raise ValueError("models must name at least one model")
    for column in ("model_a", "model_b"):
        if column not in df.columns:
            raise ValueError(
                f"pairs: self-enhancement needs column {column!r} (who wrote each response); it has "
                f"{list(df.columns)}"
            )
    own_a = df["model_a"].isin(names).to_numpy()
    own_b = df["model_b"].isin(names).to_numpy()
    rows = []
    for i in range(len(df)):
        if own_a[i] == own_b[i]:
            continue
        side = "a" if own_a[i] else "b"
        rows.append({
            "index": i, "variant": str(df.at[i, f"model_{side}"]), "side": side, "favours": side,
            "edits": {},
        })
    return assemble(df, rows, bias="self_enhancement")
