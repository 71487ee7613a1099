"""Bradley-Terry (Elo-scale) ratings from pairwise judgments, as Chatbot Arena computes them."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgekit import _bootstrap
from judgekit._stack import caller_level
from judgekit._stamp import stamped
from judgekit.exceptions import ConvergenceWarning
from judgekit.winrate import _battles, _bt
from judgekit.winrate.arena_hard import STYLE_L2, controls_of
from judgekit.winrate.style import CONTROLS, FEATURES, style_features, style_matrix

__all__ = ["bradley_terry"]

RATING_COLUMNS = ["judge", "control", "model", "rating", "se", "ci_low", "ci_high", "rank", "n",
                  "n_battles", *[f"coef_{f}" for f in FEATURES]]


@stamped
def bradley_terry(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    control: str | None | Sequence[str | None] = None,
    weight: int = 1,
    anchor: str | None = None,
    anchor_rating: float = 1000.0,
    scale: float = 400.0,
    base: float = 10.0,
    init_rating: float = 1000.0,
    l2: float | None = None,
    n_boot: int = 100,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Bradley-Terry ratings on the Elo scale, per judge, with battle-bootstrap intervals.

    Every judgment is a battle between its pair's ``model_a`` and ``model_b`` (both orders of a
    pair are two battles); a tie is half a win for each side, as Chatbot Arena counts it. Works
    for judge verdicts and human votes alike, among any number of models.

    Parameters
    ----------
    judgments, pairs : DataFrame
        The tidy tables; pairs need ``model_a`` and ``model_b``. The outcome is the judgment's
        ``margin`` where present (Arena-Hard's graded verdict), else its verdict.
    control : None, "length", "markdown", "style", or a list of them
        Style covariates (:func:`judgekit.style_features`): Chatbot Arena's style control.
    weight : int, default 1
        Battles a significant win (``|margin| >= 2``) counts for (Arena-Hard uses 3).
    anchor : str, optional
        A model held at ``anchor_rating`` (Chatbot Arena anchors mixtral-8x7b-instruct-v0.1 at
        1114, Arena-Hard its baseline). Default: none, so the ratings are
        ``init_rating + scale · c`` with the first model (alphabetically) at c = 0 (uncontrolled)
        or the penalised solution (controlled).
    anchor_rating, scale, base, init_rating : float
        The Elo scale: P(a beats b) = 1 / (1 + base^((R_b − R_a) / scale)).
    l2 : float, optional
        L2 penalty on the coefficients, ½ l2 Σ c² on undoubled battles. Default: 0 without style
        control (Chatbot Arena's unpenalised fit) and 0.5 with it (scikit-learn's default C = 1
        on the published code's doubled battles).
    n_boot : int, default 100
        Bootstrap rounds: battles resampled with replacement (all judges' battles separately),
        refitted; 0 skips the intervals.
    ci : float
        Coverage of the percentile interval.
    seed : int
        Seeds the bootstrap.

    Returns
    -------
    DataFrame
        One row per (judge, control, model), sorted by rating: ``judge``, ``control``,
        ``model``, ``rating``, ``se``, ``ci_low``, ``ci_high``, ``rank`` (Chatbot Arena's: 1 +
        the number of models whose interval lies wholly above this one's; the order of the
        ratings when ``n_boot`` is 0), ``n`` (games), ``n_battles`` (with significant wins
        counted ``weight`` times), and the fitted style coefficients ``coef_length``,
        ``coef_header``, ``coef_list``, ``coef_bold`` (per standard deviation of the normalised
        difference a − b, so positive: the judge favours the longer / more formatted answer;
        NaN when not in the model).

    Raises
    ------
    ValueError
        When the battles split the models into groups that never meet (no common scale).

    Notes
    -----
    logit P(a beats b) = ln(base) (c_a − c_b) + z·β, fitted by maximum likelihood (Newton's
    method), R = init_rating + scale · c, shifted so that ``anchor`` is at ``anchor_rating``.
    The published code duplicates every battle and gives one copy of a tie to each side; that is
    the same likelihood as a tie counted as y = ½ once with twice the weight, which judgekit
    fits. The style covariates are the normalised differences (a − b)/(a + b + 1) of each
    feature, standardised over the battles.

    References
    ----------
    Chiang et al. (2024). Chatbot Arena: An Open Platform for Evaluating LLMs by Human
    Preference. arXiv:2403.04132. Li et al. (2024). Does style matter? LMSYS blog.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> pairs = pd.DataFrame({"pair_id": ["p1", "p2", "p3"], "prompt": ["q"] * 3,
    ...                       "response_a": ["x"] * 3, "response_b": ["y"] * 3,
    ...                       "model_a": ["a", "b", "a"], "model_b": ["b", "c", "c"]})
    >>> judgments = pd.DataFrame({"pair_id": ["p1", "p1", "p2", "p2", "p3", "p3"], "judge": "j",
    ...                           "order": ["ab", "ba"] * 3,
    ...                           "verdict": ["a", "tie", "a", "b", "a", "b"]})
    >>> bt = jk.bradley_terry(judgments, pairs, anchor="b", n_boot=0)
    >>> bt[["model", "rating", "rank"]].round(1)
      model  rating  rank
    0     a  1119.2     1
    1     c  1059.6     2
    2     b  1000.0     3
    """
    controls = controls_of(control)
    n_boot = _bootstrap.check_args(n_boot, ci)
    judgments, pairs = _battles.tables(judgments, pairs)
    features = style_features(pairs) if any(c != "none" for c in controls) else None
    codes_all, names_all = pd.factorize(pd.concat([pairs["model_a"].astype(str),
                                                   pairs["model_b"].astype(str)]), sort=True)
    names = [str(x) for x in names_all]
    m = len(names)
    code_a, code_b = codes_all[:len(pairs)], codes_all[len(pairs):]
    alpha = float(np.log(base))
    if anchor is not None and anchor not in names:
        raise ValueError(f"anchor {anchor!r} is not one of the models: {names[:10]}")
    rows = []
    for bt in _battles.battles(judgments, pairs, weight=weight):
        ia, ib, y, w = code_a[bt.pair], code_b[bt.pair], bt.y, bt.w
        if not len(y):
            continue
        who = f"judge {bt.judge!r}"
        _bt.check_connected(ia, ib, w, names, who)
        gen = _bootstrap.rng(seed)
        for ctrl in controls:
            chosen = CONTROLS[ctrl]
            Z, kept = None, []
            if chosen:
                vals_a = features[[f"{f}_a" for f in FEATURES]].to_numpy(dtype=float)[bt.pair]
                vals_b = features[[f"{f}_b" for f in FEATURES]].to_numpy(dtype=float)[bt.pair]
                cols = [FEATURES.index(f) for f in chosen]
                if np.isnan(vals_a[:, cols]).any() or np.isnan(vals_b[:, cols]).any():
                    raise ValueError(f"style control for {who}: some answers have no text or "
                                     "length; leave those pairs out")
                Z, kept, _ = style_matrix(vals_a, vals_b, w, tuple(chosen), who=who)
            lam = (STYLE_L2 if chosen else 0.0) if l2 is None else float(l2)
            if not chosen:  # the likelihood only needs the counts of each (a, b, outcome)
                cell, inverse = np.unique(np.stack([ia, ib, np.rint(2 * y)]), axis=1,
                                          return_inverse=True)
                fa, fb, fy = cell[0].astype(np.int64), cell[1].astype(np.int64), cell[2] / 2
                fw = np.bincount(inverse.ravel(), w, minlength=cell.shape[1])
            else:
                fa, fb, fy, fw = ia, ib, y, w
            theta, ok = _bt.fit(fa, fb, fy, fw, m, Z=Z, l2=lam, alpha=alpha)
            if not ok:
                warnings.warn(f"Bradley-Terry fit for {who} ({ctrl}) did not converge: a model "
                              "may have won or lost every battle", ConvergenceWarning,
                              stacklevel=caller_level())
            boots = np.full((n_boot, m + len(kept)), np.nan)
            total = int(round(fw.sum()))
            for b in range(n_boot):
                counts = gen.multinomial(total, fw / fw.sum()).astype(float)
                boots[b], _ = _bt.fit(fa, fb, fy, counts, m, Z=Z, l2=lam, alpha=alpha,
                                      start=theta)
            rating = _scaled(theta[:m], names, anchor, anchor_rating, scale, init_rating)
            brat = np.array([_scaled(t[:m], names, anchor, anchor_rating, scale, init_rating)
                             for t in boots]).reshape(n_boot, m)
            present = np.isfinite(rating)
            lo = np.nanpercentile(brat, 100 * (1 - ci) / 2, axis=0) if n_boot else np.full(m, np.nan)
            hi = np.nanpercentile(brat, 100 * (1 + ci) / 2, axis=0) if n_boot else np.full(m, np.nan)
            se = np.nanstd(brat, axis=0, ddof=1) if n_boot > 1 else np.full(m, np.nan)
            if n_boot:
                rank = np.array([1 + int(np.sum(lo[present] > hi[i])) for i in range(m)])
            else:
                order = (-np.nan_to_num(rating, nan=-np.inf)).argsort(kind="stable")
                rank = np.empty(m, dtype=int)
                rank[order] = np.arange(1, m + 1)
            n_games = np.bincount(ia, minlength=m) + np.bincount(ib, minlength=m)
            n_bat = np.bincount(ia, w, minlength=m) + np.bincount(ib, w, minlength=m)
            coefs = {f"coef_{f}": np.nan for f in FEATURES}
            coefs.update({f"coef_{f}": float(theta[m + j]) for j, f in enumerate(kept)})
            for i in np.flatnonzero(present):
                rows.append({"judge": bt.judge, "control": ctrl, "model": names[i],
                             "rating": float(rating[i]), "se": float(se[i]), "ci_low": float(lo[i]),
                             "ci_high": float(hi[i]), "rank": int(rank[i]), "n": int(n_games[i]),
                             "n_battles": int(n_bat[i]), **coefs})
    out = pd.DataFrame(rows, columns=RATING_COLUMNS)
    order = pd.Categorical(out["control"], categories=list(CONTROLS))
    out = out.assign(_c=order).sort_values(["judge", "_c", "rating"], ascending=[True, True, False],
                                           kind="stable").drop(columns="_c")
    return out.reset_index(drop=True)


def _scaled(c: np.ndarray, names: list[str], anchor: str | None, anchor_rating: float,
            scale: float, init_rating: float) -> np.ndarray:
    rating = init_rating + scale * c
    if anchor is not None:
        rating = rating + anchor_rating - rating[names.index(anchor)]
    return rating
