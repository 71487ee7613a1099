"""Arena-Hard-Auto's score: the win rate against the baseline that its Bradley-Terry fit predicts.

Arena-Hard-Auto v0.1 (Li, Chiang et al., 2024) judges every model against one baseline on each
question twice, the second time with the answers swapped, and grades each game on a five-point
scale. ``show_result.py`` turns the two games of a question into up to six battles (a significant
win ``A>>B`` counts as ``weight`` = 3 wins, a slight win as one, a tie as half a win for each),
fits a Bradley-Terry model to all battles, and reports each model's predicted win rate against
the baseline; the baseline sits at 50. The interval comes from refitting on battles resampled
with replacement (100 rounds), the 2.5 and 97.5 percentiles. With style control
(``--style-control``, ``--length-control-only``, ``--markdown-control-only``) the battles carry
the answers' style features (:mod:`judgekit.winrate.style`) and the score is the win rate the
fit predicts from the model coefficients alone.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import special

from judgekit import _bootstrap
from judgekit._stack import caller_level
from judgekit._stamp import stamped
from judgekit.exceptions import ConvergenceWarning, MetricWarning
from judgekit.winrate import _battles, _bt
from judgekit.winrate._data import infer_baseline
from judgekit.winrate.style import CONTROLS, FEATURES, lengths, style_features, style_matrix

__all__ = ["arena_hard_scores"]

#: Columns of :func:`arena_hard_scores`.
SCORE_COLUMNS = ["judge", "model", "baseline", "control", "score", "se", "ci_low", "ci_high",
                 "n", "n_battles", "n_dropped", "avg_length", "length_unit"]
#: The L2 strength of the style-control fits (scikit-learn's default C = 1 on the doubled
#: battles of the published code, in judgekit's objective on undoubled battles).
STYLE_L2 = 0.5
_ALPHA = np.log(10.0)


def controls_of(control: str | None | Sequence[str | None]) -> list[str]:
    items = [control] if control is None or isinstance(control, str) else list(control)
    names = ["none" if c is None else c for c in items]
    unknown = [c for c in names if c not in CONTROLS]
    if unknown or not names:
        raise ValueError(f"control must be None or one of {list(CONTROLS)} (or a list of them), "
                         f"got {control!r}")
    return names


def _percentiles(logits: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Interval ends (in the logit scale, as upstream takes percentiles of ratings) and the se of
    the win rates, per column of a (B, m) array of bootstrap logits."""
    logits = np.clip(logits, -40.0, 40.0)   # a resample won (or lost) throughout: 100 (0)
    lo = np.nanpercentile(logits, 100 * (1 - ci) / 2, axis=0)
    hi = np.nanpercentile(logits, 100 * (1 + ci) / 2, axis=0)
    se = np.nanstd(100 * special.expit(logits), axis=0, ddof=1)
    return lo, hi, se


@stamped
def arena_hard_scores(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    baseline: str | None = None,
    control: str | None | Sequence[str | None] = None,
    weight: int = 3,
    version: str = "v0.1",
    reference: str = "average",
    n_boot: int = 100,
    ci: float | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Arena-Hard-Auto's score of every model: its win rate against the baseline, in percent.

    Parameters
    ----------
    judgments, pairs : DataFrame
        The tidy tables, e.g. from :func:`judgekit.read_arena_hard`. Every pair compares a model
        with the baseline. A judgment's outcome is its ``margin`` (the graded verdict: ±2 a
        significant win) where present, else its verdict; both games of a question count.
    baseline : str, optional
        The baseline model (inferred when one model takes part in every pair).
    control : None, "length", "markdown", "style", or a list of them
        None gives the published score; the others fit the Bradley-Terry model with the answers'
        length, markdown (headers, lists, bold) or all four style features as covariates (Arena-Hard
        v0.1's ``--length-control-only``, ``--markdown-control-only``, ``--style-control``), from
        :func:`judgekit.style_features` of the pairs.
    weight : int, default 3
        How many wins a significant win (``A>>B``) counts for.
    version : {"v0.1", "v2.0"}
        Which ``show_result.py``: v0.1 counts the labels ``A>>B, A>B, A=B, B>A, B>>A`` of each
        game (any other label, or none, leaves that game out) and resamples all battles together;
        v2.0 counts all ten labels, leaves out both games of a question when one has no label,
        resamples each model's battles separately and reports a 90% interval by default. Style
        control follows v0.1 (Chatbot Arena's features).
    reference : {"average", "equal"}
        Where a style-controlled score is read off the fit: at the leaderboard's average style
        difference from the baseline (the published score: the features are centred, so the
        model coefficients alone predict this), or at equal style (no length or markdown
        difference from the baseline: the question the length-controlled AlpacaEval win rate
        answers). No effect without ``control``.
    n_boot : int, default 100
        Bootstrap rounds (upstream's default); 0 skips the interval.
    ci : float, optional
        Coverage of the percentile interval (default 0.95 for v0.1, 0.90 for v2.0, as published).
    seed : int
        Seeds the bootstrap.

    Returns
    -------
    DataFrame
        One row per (judge, control, model), the baseline included at 50, sorted by score:
        ``judge``, ``model``, ``baseline``, ``control`` ("none", "length", "markdown", "style"),
        ``score`` (%), ``se`` (bootstrap sd), ``ci_low``, ``ci_high``, ``n`` (games counted),
        ``n_battles`` (battles: a significant win counts ``weight`` times), ``n_dropped``
        (games left out), ``avg_length`` (mean length of the model's answers) and
        ``length_unit``.

    Raises
    ------
    ValueError
        When a pair does not involve the baseline, for an unknown ``control`` or ``version``.

    Warns
    -----
    MetricWarning
        Naming the judge and the labels left out, and when baseline-against-baseline games are
        left out (the baseline is 50 by definition).

    Notes
    -----
    For one model m and the baseline, with games g of outcome y_g ∈ {1, ½, 0} for m and count
    w_g (``weight`` for a significant win, else 1), the battles are a star around the baseline,
    so the Bradley-Terry fit has the closed form

        score_m = 100 · Σ_g w_g y_g / Σ_g w_g,

    which judgekit uses (the published code reaches it by logistic regression). With style
    control the model is logit P(baseline beats m) = ln(10)(c_b − c_m) + z·β, with z the
    standardised normalised style differences (baseline − model) of the battle, and the score
    is 100 · σ(ln(10)(c_m − c_b)). As in the published code the features are centred over the
    battles, so this is the win rate at the *average* style difference of the leaderboard,
    not at equal style (``reference="equal"`` gives that one); the fit carries
    scikit-learn's default L2 penalty, as published.

    References
    ----------
    Li, Chiang, Frick, Dunlap, Wu, Zhu, Gonzalez, Stoica (2024). From Crowdsourced Data to
    High-Quality Benchmarks: Arena-Hard and BenchBuilder Pipeline. arXiv:2406.11939.
    Li, Chiang, Frick, Dunlap, Zhu, Gonzalez, Stoica (2024). Does style matter? Disentangling
    style and substance in Chatbot Arena. LMSYS blog.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> pairs = pd.DataFrame({"pair_id": ["q1", "q2"], "prompt": ["Q1", "Q2"],
    ...                       "response_a": ["base", "base"], "response_b": ["mine", "mine"],
    ...                       "model_a": "gpt-4-0314", "model_b": "my-model"})
    >>> judgments = pd.DataFrame({"pair_id": ["q1", "q1", "q2", "q2"], "judge": "gpt-4-turbo",
    ...                           "order": ["ab", "ba", "ab", "ba"], "verdict": ["b", "b", "a", "tie"],
    ...                           "margin": [-2, -1, 1, 0]})
    >>> jk.arena_hard_scores(judgments, pairs, n_boot=0)[["model", "score", "n", "n_battles"]]
            model  score  n  n_battles
    0    my-model   75.0  4          6
    1  gpt-4-0314   50.0  0          0
    """
    _battles.check_version(version)
    controls = controls_of(control)
    if version == "v2.0" and any(c != "none" for c in controls):
        raise ValueError("style control follows Arena-Hard v0.1 (Chatbot Arena's features); "
                         "v2.0's density features are not implemented: use version='v0.1'")
    if reference not in ("average", "equal"):
        raise ValueError(f"reference must be 'average' or 'equal', got {reference!r}")
    ci = (0.95 if version == "v0.1" else 0.90) if ci is None else ci
    n_boot = _bootstrap.check_args(n_boot, ci)
    judgments, pairs = _battles.tables(judgments, pairs)
    baseline = str(infer_baseline(pairs) if baseline is None else baseline)
    model_a, model_b = pairs["model_a"].astype(str).to_numpy(), pairs["model_b"].astype(str).to_numpy()
    a_base, b_base = model_a == baseline, model_b == baseline
    if not (a_base | b_base).all():
        from judgekit.schema import _ids
        raise ValueError(f"pairs: every pair must involve the baseline {baseline!r}; it is absent "
                         f"from {_ids(pairs, ~(a_base | b_base), 'pair_id')}")
    self_pairs = a_base & b_base
    model = np.where(a_base, model_b, model_a)
    features = style_features(pairs) if any(c != "none" for c in controls) else None
    len_a, len_b, unit = lengths(pairs)
    length_model = np.where(a_base, len_b, len_a)
    rows = []
    for bt in _battles.battles(judgments, pairs, weight=weight, version=version):
        if bt.labels:
            warnings.warn(f"Arena-Hard scores of judge {bt.judge!r}: games with the labels "
                          f"{bt.labels} are left out, as Arena-Hard {version} leaves them out",
                          MetricWarning, stacklevel=caller_level())
        keep = ~self_pairs[bt.pair]
        if (~keep).any():
            warnings.warn(f"Arena-Hard scores of judge {bt.judge!r}: {int((~keep).sum())} games of "
                          f"the baseline {baseline!r} against itself are left out (its score is "
                          "50 by definition)", MetricWarning, stacklevel=caller_level())
        pair = bt.pair[keep]
        y = np.where(a_base[pair], 1.0 - bt.y[keep], bt.y[keep])   # the outcome for the model
        w = bt.w[keep]
        codes, names = pd.factorize(model[pair], sort=True)
        names = [str(x) for x in names]
        gen = _bootstrap.rng(seed)
        for ctrl in controls:
            if ctrl == "none":
                logit, boots = _plain(codes, y, w, len(names), n_boot, gen, version)
            else:
                logit, boots = _controlled(codes, y, w, pair, a_base, features, CONTROLS[ctrl],
                                           names, n_boot, gen, f"judge {bt.judge!r}", reference)
            lo, hi, se = _percentiles(boots, ci) if n_boot else (np.full(len(names), np.nan),) * 3
            n_games = np.bincount(codes, minlength=len(names))
            n_battles = np.bincount(codes, w, minlength=len(names))
            drop_model = model[~self_pairs]
            dropped = pd.Series(bt.dropped[~self_pairs]).groupby(drop_model).sum()
            avg = pd.Series(length_model[~self_pairs]).groupby(model[~self_pairs]).mean()
            for i, name in enumerate(names):
                rows.append({"judge": bt.judge, "model": name, "baseline": baseline, "control": ctrl,
                             "score": 100 * float(special.expit(logit[i])), "se": float(se[i]),
                             "ci_low": 100 * float(special.expit(lo[i])),
                             "ci_high": 100 * float(special.expit(hi[i])), "n": int(n_games[i]),
                             "n_battles": int(n_battles[i]), "n_dropped": int(dropped.get(name, 0)),
                             "avg_length": float(avg.get(name, np.nan)), "length_unit": unit})
            base_len = np.where(a_base, len_a, len_b)
            rows.append({"judge": bt.judge, "model": baseline, "baseline": baseline, "control": ctrl,
                         "score": 50.0, "se": 0.0 if n_boot else np.nan,
                         "ci_low": 50.0 if n_boot else np.nan, "ci_high": 50.0 if n_boot else np.nan,
                         "n": 0, "n_battles": 0, "n_dropped": 0,
                         "avg_length": float(np.mean(base_len[np.isfinite(base_len)]))
                         if np.isfinite(base_len).any() else np.nan,
                         "length_unit": unit})
    out = pd.DataFrame(rows, columns=SCORE_COLUMNS)
    order = pd.Categorical(out["control"], categories=list(CONTROLS))
    out = out.assign(_c=order).sort_values(["judge", "_c", "score"], ascending=[True, True, False],
                                           kind="stable").drop(columns="_c")
    return out.reset_index(drop=True)


def _plain(codes: np.ndarray, y: np.ndarray, w: np.ndarray, m: int, n_boot: int,
           gen: np.random.Generator, version: str) -> tuple[np.ndarray, np.ndarray]:
    """The closed-form fit (logit of each model's weighted win share) and its battle bootstrap.

    A battle is a (model, outcome) cell repeated ``w`` times; resampling battles with
    replacement draws multinomial counts of the cells, all models together (v0.1) or each
    model's battles separately (v2.0)."""
    cell = codes * 3 + np.rint(2 * y).astype(np.int64)        # outcome 0, ½, 1 -> 0, 1, 2
    counts = np.bincount(cell, w, minlength=3 * m).reshape(m, 3)
    value = np.array([0.0, 0.5, 1.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        share = counts @ value / counts.sum(axis=1)
        logit = special.logit(share)
    boots = np.empty((n_boot, m))
    if n_boot:
        if version == "v0.1":
            total = int(round(counts.sum()))
            draws = gen.multinomial(total, counts.ravel() / counts.sum(), size=n_boot)
            draws = draws.reshape(n_boot, m, 3)
        else:
            draws = np.stack([gen.multinomial(int(round(c.sum())), c / c.sum(), size=n_boot)
                              for c in counts], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            boots = special.logit(draws @ value / draws.sum(axis=2))
    return logit, boots


def _controlled(codes, y, w, pair, a_base, features, chosen, names, n_boot, gen, who, reference):
    """Style-controlled fit (baseline as model a of every battle, as upstream) and its battle
    bootstrap (features kept as standardised on the full data, as upstream)."""
    m = len(names)
    vals_a = features[[f"{f}_a" for f in FEATURES]].to_numpy(dtype=float)
    vals_b = features[[f"{f}_b" for f in FEATURES]].to_numpy(dtype=float)
    flip = a_base[pair]
    base_vals = np.where(flip[:, None], vals_a[pair], vals_b[pair])
    model_vals = np.where(flip[:, None], vals_b[pair], vals_a[pair])
    usable = ~(np.isnan(base_vals[:, [FEATURES.index(f) for f in chosen]]).any(axis=1)
               | np.isnan(model_vals[:, [FEATURES.index(f) for f in chosen]]).any(axis=1))
    if not usable.all():
        missing = sorted({names[c] for c in codes[~usable]})
        raise ValueError(f"style control for {who}: answers without text or length for "
                         f"{missing[:5]}{' ...' if len(missing) > 5 else ''}; leave those models "
                         "out or read their answers")
    Z, _, equal = style_matrix(base_vals, model_vals, w, tuple(chosen), who=who)
    # the model's win logit is α(c_m − c_b) − z·β (z: baseline − model); z = 0 at the average
    # style difference, z = ``equal`` where the two answers have the same style
    at = np.zeros(len(equal)) if reference == "average" else equal
    ia = np.full(len(codes), m)               # the baseline is model m, always model a
    ib = codes
    ya = 1.0 - y                              # the outcome for the baseline
    _bt.check_connected(ia, ib, w, [*names, "baseline"], who)

    def solve(weights, start=None):
        theta, ok = _bt.fit(ia, ib, ya, weights, m + 1, Z=Z, l2=STYLE_L2, alpha=_ALPHA,
                            ref=m, start=start)
        return theta, ok

    theta, ok = solve(w)
    if not ok:
        warnings.warn(f"style-controlled Bradley-Terry fit for {who} did not converge",
                      ConvergenceWarning, stacklevel=caller_level())
    logit = _ALPHA * (theta[:m] - theta[m]) - at @ theta[m + 1:]
    boots = np.empty((n_boot, m))
    if n_boot:
        total = int(round(w.sum()))
        for b in range(n_boot):
            counts = gen.multinomial(total, w / w.sum()).astype(float)
            t, _ = solve(counts, start=theta)
            boots[b] = _ALPHA * (t[:m] - t[m]) - at @ t[m + 1:]
    return logit, boots
