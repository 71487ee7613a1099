"""Evaluation splits as in Wei et al. (2024), section 6 ("Data Selection"): one pair per prompt,
S non-overlapping splits of n pairs, stratified on whether the human-preferred response is the
longer one."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from judgekit._stamp import stamped
from judgekit.schema import validate_pairs

__all__ = ["sample_splits"]


def _lengths(texts: pd.Series, length: str | Callable[[str], int]) -> np.ndarray:
    if length == "chars":
        return texts.str.len().to_numpy(dtype=np.int64)
    if length == "words":
        return texts.str.split().str.len().to_numpy(dtype=np.int64)
    if callable(length):
        return np.fromiter((length(t) for t in texts), dtype=np.int64, count=len(texts))
    raise ValueError(f"length must be 'chars', 'words' or a callable, got {length!r}")


@stamped
def sample_splits(
    pairs: pd.DataFrame,
    n: int = 200,
    splits: int = 5,
    *,
    seed: int = 0,
    by: str = "prompt",
    length: str | Callable[[str], int] = "chars",
    return_summary: bool = False,
) -> pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]:
    """Draw ``splits`` non-overlapping evaluation splits of ``n`` labelled pairs, stratified on length.

    Following Wei et al. (2024, section 6, "Data Selection"): keep pairs with a decisive human
    label ("a" or "b"), keep one pair per prompt (chosen at random), then draw the splits without replacement so each
    holds the same share of pairs whose human-preferred response is longer as the deduplicated
    pool (Δl = len(preferred) − len(other) > 0 versus Δl ≤ 0, the strata of the length-bias
    metric).

    Parameters
    ----------
    pairs : DataFrame
        A pairs table (:func:`judgekit.validate_pairs`).
    n : int
        Pairs per split (the paper: 200).
    splits : int
        Number of splits S (the paper: 5).
    seed : int
        Seed of the random choices; the same seed gives the same splits.
    by : str
        Column whose equal values count as one prompt (``"prompt"``, or e.g. ``"instruction_id"``).
    length : {"chars", "words"} or callable
        How response length is measured: characters (default), whitespace tokens, or a callable
        returning the length of a text (e.g. a tokenizer's token count).
    return_summary : bool
        Also return the per-split summary table.

    Returns
    -------
    DataFrame
        The sampled pairs (``splits * n`` rows) with two added columns: ``split`` (0 ..
        ``splits`` − 1) and ``human_longer`` (the human-preferred response is longer). The
        achieved ratio is in ``.attrs["summary"]``, a table with one row per split and one for
        the pool: ``split``, ``n``, ``n_longer``, ``share_longer``.
    DataFrame, optional
        The same summary table, when ``return_summary`` is True.

    Raises
    ------
    ValueError
        When the deduplicated, labelled pool has too few pairs overall or in a stratum (the
        message gives the counts).

    Notes
    -----
    Each split receives ``k = round(n · r)`` longer-preferred pairs and ``n − k`` others, where
    ``r`` is the pool's share of longer-preferred pairs; the achieved share is therefore ``k/n``,
    within ``1/(2n)`` of ``r``. Wei et al. report 115:85 (TL;DR) and 111:89 (HH-RLHF helpfulness)
    for n = 200.

    References
    ----------
    Wei, H., He, S., Xia, T., Liu, F., Wong, A., Lin, J., Han, M. (2024). Systematic Evaluation of
    LLM-as-a-Judge in LLM Alignment Tasks: Explainable Metrics and Diverse Prompt Templates.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(2000, human_prefers_longer=0.6, seed=1)
    >>> sampled, summary = jk.sample_splits(pairs, n=100, splits=5, seed=0, return_summary=True)
    >>> sampled.groupby("split").size().tolist()
    [100, 100, 100, 100, 100]
    >>> summary["split"].tolist()
    [0, 1, 2, 3, 4, 'pool']
    """
    if int(n) < 1 or int(splits) < 1:
        raise ValueError(f"n and splits must be >= 1, got n={n}, splits={splits}")
    df = validate_pairs(pairs)
    if by not in df.columns:
        raise ValueError(f"pairs have no column {by!r} to identify prompts; columns: {list(df.columns)}")
    labelled = df[df["label"].isin(["a", "b"])]
    rng = np.random.default_rng(seed)
    # one pair per prompt, chosen at random: shuffle, then keep the first of each prompt
    shuffled = labelled.iloc[rng.permutation(len(labelled))]
    pool = shuffled.drop_duplicates(subset=by, keep="first")
    len_a = _lengths(pool["response_a"], length)
    len_b = _lengths(pool["response_b"], length)
    preferred_a = (pool["label"] == "a").to_numpy()
    delta = np.where(preferred_a, len_a - len_b, len_b - len_a)
    longer = delta > 0
    share = float(longer.mean()) if len(pool) else float("nan")
    k = int(round(n * share)) if len(pool) else 0
    need = {"longer": splits * k, "not longer": splits * (n - k)}
    have = {"longer": int(longer.sum()), "not longer": int((~longer).sum())}
    if len(pool) < splits * n or any(have[s] < need[s] for s in need):
        raise ValueError(
            f"sample_splits: {splits} splits of {n} need {splits * n} pairs with decisive labels "
            f"and distinct {by!r} ({need['longer']} where the preferred response is longer, "
            f"{need['not longer']} where it is not); the pool has {len(pool)} "
            f"({have['longer']} longer, {have['not longer']} not longer; {len(df) - len(labelled)} "
            f"pairs without a decisive label and {len(labelled) - len(pool)} repeated prompts "
            "were dropped)"
        )
    idx_longer = np.flatnonzero(longer)  # already in random order (pool was shuffled)
    idx_other = np.flatnonzero(~longer)
    parts = []
    for s in range(splits):
        take = np.concatenate([idx_longer[s * k:(s + 1) * k], idx_other[s * (n - k):(s + 1) * (n - k)]])
        take = np.sort(take)
        part = pool.iloc[take].assign(split=s, human_longer=longer[take])
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    summary = pd.DataFrame({
        "split": [*range(splits), "pool"],
        "n": [n] * splits + [len(pool)],
        "n_longer": [k] * splits + [have["longer"]],
    })
    summary["share_longer"] = summary["n_longer"] / summary["n"]
    out.attrs["summary"] = summary
    return (out, summary) if return_summary else out
