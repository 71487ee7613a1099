"""Prior-division baselines (Pride, contextual and domain-context calibration) and content-free pairs.

All three estimate a prior P(t1) that a judge would give without content to prefer, and remove
it by dividing the odds: P_cal(t1) ∝ P(t1) / prior, P_cal(t2) ∝ P(t2) / (1 − prior), i.e.
logit P_cal(t1) = logit P(t1) − logit prior. They differ in where the prior comes from:

* Pride (Zheng et al. 2024): the judge's own answers on the same pairs with the contents
  permuted over the IDs (X0 and X2): per pair, softmax of the mean log-probability of each ID,
  averaged over the estimation pairs.
* Contextual calibration, CC (Zhao et al. 2021): content-free options ("N/A") in the same
  prompt; the prior is the mean P(t1) over content-free requests.
* Domain-context calibration, DC (Fei et al. 2023): options made of random in-domain words.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from judgekit._stamp import stamped
from judgekit.schema import validate_pairs

__all__ = ["content_free_pairs"]

_EPS = 1e-10


def _logit(p: np.ndarray) -> np.ndarray:
    return logit(np.clip(np.asarray(p, dtype=float), _EPS, 1.0 - _EPS))


def pride_prior(s_first: np.ndarray, s_swapped: np.ndarray) -> float:
    """Pride's prior P(t1) from P(t1) with the contents in both ID slots (X0/X2 or X1/X3).

    Per pair, the prior is the softmax of the mean log-probability of each ID over the two
    permutations, σ((logit s + logit s') / 2); these are averaged over pairs.
    """
    return float(np.mean(expit((_logit(s_first) + _logit(s_swapped)) / 2.0)))


def divide_prior(s: np.ndarray, prior: np.ndarray | float) -> np.ndarray:
    """P(t1) with the prior's odds divided out: σ(logit s − logit prior); NaN stays NaN."""
    return expit(_logit(s) - _logit(prior))


@stamped
def content_free_pairs(
    pairs: pd.DataFrame,
    kind: str = "na",
    *,
    n: int | None = None,
    text: str = "N/A",
    n_words: int | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Pairs whose options carry no content, to estimate a judge's prior for contextual calibration.

    Judge them in the arrangements you calibrate (both ``id_swap`` values, so the prior is known
    with t1 in each position), then pass the judgments to :func:`judgekit.calibrate` as
    ``content_free=`` with ``method="contextual"`` or ``"domain_context"``.

    Parameters
    ----------
    pairs : DataFrame
        The pairs being judged: their prompts are reused, and for ``kind="domain"`` their
        responses are the word pool.
    kind : {"na", "domain"}
        ``"na"``: both options are ``text`` (contextual calibration; CalibraEval uses "N/A").
        ``"domain"``: each option is ``n_words`` words drawn at random from the responses of
        ``pairs`` (domain-context calibration: in-domain words without meaning).
    n : int, optional
        How many prompts to use (a seeded sample); all by default.
    text : str
        The content-free option for ``kind="na"``.
    n_words : int, optional
        Length of a random-word option; by default the median response length in words.
    seed : int
        Seeds the sample of prompts and the random words.

    Returns
    -------
    DataFrame
        A valid pairs table: ``pair_id`` (``"cf-<kind>-<source pair_id>"``), the source
        ``prompt``, the content-free ``response_a`` / ``response_b``, no label, ``dataset``
        (``"content_free:<kind>"``) and ``source_pair_id``.

    References
    ----------
    Zhao, Wallace, Feng, Klein, Singh (2021). Calibrate before use. Fei, Hou, Chen, Bosselut
    (2023). Mitigating label biases for in-context learning. Li et al. (2024), CalibraEval, §4.2.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(20, seed=0)
    >>> cf = jk.content_free_pairs(pairs, "na", n=3)
    >>> cf[["response_a", "response_b"]].drop_duplicates().values.tolist()
    [['N/A', 'N/A']]
    >>> dc = jk.content_free_pairs(pairs, "domain", n=2, n_words=5, seed=1)
    >>> [len(r.split()) for r in dc["response_a"]]
    [5, 5]
    """
    if kind not in ("na", "domain"):
        raise ValueError(f"kind must be 'na' or 'domain', got {kind!r}")
    p = validate_pairs(pairs)
    rng = np.random.default_rng(seed)
    if n is not None:
        if not 1 <= n <= len(p):
            raise ValueError(f"n must be between 1 and the number of pairs ({len(p)}), got {n}")
        p = p.iloc[np.sort(rng.choice(len(p), size=n, replace=False))]
    if kind == "na":
        resp_a = resp_b = [text] * len(p)
    else:
        split = pd.concat([pairs["response_a"], pairs["response_b"]], ignore_index=True).str.split()
        words = split.explode().dropna().to_numpy(dtype=str)
        if words.size == 0:
            raise ValueError("pairs: the responses hold no words to draw domain context from")
        if n_words is None:
            n_words = max(int(np.median(split.str.len())), 1)
        if n_words < 1:
            raise ValueError(f"n_words must be >= 1, got {n_words}")
        draws = rng.choice(words, size=(len(p), 2, n_words), replace=True)
        resp_a = [" ".join(row) for row in draws[:, 0]]
        resp_b = [" ".join(row) for row in draws[:, 1]]
    out = pd.DataFrame({
        "pair_id": (f"cf-{kind}-" + p["pair_id"].astype(str)).to_numpy(),
        "prompt": p["prompt"].to_numpy(),
        "response_a": resp_a,
        "response_b": resp_b,
        "label": None,
        "dataset": f"content_free:{kind}",
        "source_pair_id": p["pair_id"].to_numpy(),
    })
    return validate_pairs(out)
