"""Were the human labels drawn at random? Tests that can tell when they were not.

Prediction-powered estimates are unbiased only when the labelled pairs are a random sample of the
pairs (or of each stratum), or when the probability with which each pair was sent for labelling
is known. Nothing in the labels themselves says how they were chosen, but the judge has seen
every pair: when the labelled pairs differ from the rest in what the judge said about them, in
how confident or order-consistent it was, in their length gap or in which model or task they
come from, more than chance allows, they were not drawn at random.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from judgekit._stamp import stamped
from judgekit.exceptions import NonRandomLabelsError
from judgekit.inference import _prepare
from judgekit.inference._prepare import Unit

__all__ = ["check_labelling", "sample_for_labelling"]

#: Family-wise level below which :func:`judgekit.ppi_win_rates` refuses to run.
ALPHA = 1e-3
_MIN_EXPECTED = 5.0


def _categorical(x: np.ndarray, lab: np.ndarray, stratum: np.ndarray) -> tuple[float, float, str]:
    """Chi-square of labelled share by category, within strata (statistics and df add up)."""
    chi2, dof, detail = 0.0, 0, []
    for h in np.unique(stratum):
        m = stratum == h
        table = pd.crosstab(pd.Series(x[m], dtype=object), lab[m])
        if table.shape[1] < 2 or table.shape[0] < 2:
            continue
        expected = table.sum(axis=1).to_numpy()[:, None] * table.sum(axis=0).to_numpy()[None, :]
        expected = expected / table.to_numpy().sum()
        small = expected.min(axis=1) < _MIN_EXPECTED
        if small.any():  # pool sparse categories so the chi-square approximation holds
            pooled = table[~small]
            rest = table[small].sum(axis=0)
            if rest.sum() > 0:
                pooled = pd.concat([pooled, rest.to_frame("<other>").T])
            table = pooled
        if table.shape[0] < 2 or (table.to_numpy().sum(axis=0) == 0).any():
            continue
        c, _, d, _ = stats.chi2_contingency(table.to_numpy(), correction=False)
        chi2, dof = chi2 + c, dof + d
        share = table[True] / table.sum(axis=1)
        detail += [(v, f"{k}: {v:.0%}") for k, v in share.items()]
    if dof == 0:
        return np.nan, np.nan, ""
    detail = [text for _, text in sorted(detail, key=lambda d: d[0])]
    shown = detail if len(detail) <= 4 else [*detail[:2], "...", *detail[-2:]]
    return chi2, float(stats.chi2.sf(chi2, dof)), "labelled share " + ", ".join(shown)


def _numeric(x: np.ndarray, lab: np.ndarray, stratum: np.ndarray) -> tuple[float, float, str]:
    """Mann-Whitney U of labelled against unlabelled values; with strata, van Elteren's
    stratified form (each stratum's U standardised with its tie-corrected variance, weighted by
    1/(n_h + 1))."""
    x = np.asarray(x, float)
    num, var, auc_num, auc_den = 0.0, 0.0, 0.0, 0.0
    for h in np.unique(stratum):
        m = stratum == h
        a, b = x[m & lab], x[m & ~lab]
        n1, n2 = len(a), len(b)
        if n1 == 0 or n2 == 0:
            continue
        ranks = stats.rankdata(x[m])
        u = ranks[lab[m]].sum() - n1 * (n1 + 1) / 2
        n = n1 + n2
        _, t = np.unique(x[m], return_counts=True)
        v = n1 * n2 / 12 * ((n + 1) - np.sum(t**3 - t) / (n * (n - 1))) if n > 1 else 0.0
        w = 1.0 / (n + 1)
        num += w * (u - n1 * n2 / 2)
        var += w * w * v
        auc_num += u
        auc_den += n1 * n2
    a, b = x[lab], x[~lab]
    if var <= 0 or len(a) < 2 or len(b) < 2:
        return np.nan, np.nan, ""
    zstat = num / np.sqrt(var)
    auc = auc_num / auc_den
    return float(auc), float(2 * stats.norm.sf(abs(zstat))), (
        f"labelled mean {np.mean(a):.3g} vs unlabelled {np.mean(b):.3g} (AUC {auc:.2f})")


def unit_tests(unit: Unit) -> pd.DataFrame:
    """Every test for one unit: covariate, kind, statistic, p_value, detail."""
    lab = ~np.isnan(unit.y)
    rows = []
    if lab.all() or not lab.any():
        return pd.DataFrame(columns=["covariate", "test", "statistic", "p_value", "detail"])
    for name, x in unit.covariates.items():
        if x.dtype == object:
            stat, p, detail = _categorical(x, lab, unit.stratum)
            test = "chi-square"
        else:
            stat, p, detail = _numeric(x, lab, unit.stratum)
            test = "Mann-Whitney"
        if np.isfinite(p):
            rows.append({"covariate": name, "test": test, "statistic": stat, "p_value": p,
                         "detail": detail})
    out = pd.DataFrame(rows, columns=["covariate", "test", "statistic", "p_value", "detail"])
    if len(out):  # Holm's step-down adjustment over the unit's tests
        order = np.argsort(out["p_value"].to_numpy())
        k = len(out)
        adj = np.maximum.accumulate(out["p_value"].to_numpy()[order] * (k - np.arange(k)))
        out.loc[out.index[order], "p_holm"] = np.minimum(adj, 1.0)
    else:
        out["p_holm"] = []
    return out


def raise_if_nonrandom(unit: Unit, alpha: float, strata: str | None) -> None:
    """Raise :class:`NonRandomLabelsError` when a test rejects random labelling at ``alpha``."""
    tests = unit_tests(unit)
    bad = tests[tests["p_holm"] < alpha] if len(tests) else tests
    if not len(bad):
        return
    lab = ~np.isnan(unit.y)
    what = f"judge {unit.judge!r}" + (f", model {unit.model!r}" if unit.model else "")
    lines = "\n".join(
        f"  - {r.covariate}: {r.test} p = {r.p_value:.2g} (Holm {r.p_holm:.2g}); {r.detail}"
        for r in bad.sort_values("p_value").itertuples()
    )
    within = f" within strata of {strata!r}" if strata else ""
    raise NonRandomLabelsError(
        f"the {int(lab.sum())} labelled pairs ({what}) do not look like a random sample of the "
        f"{len(lab)} pairs{within}: they differ from the unlabelled pairs beyond chance "
        f"(family-wise level {alpha:g}):\n{lines}\n"
        "Prediction-powered and label-only estimates are biased when labels are missing not at "
        "random (e.g. only hard cases or only one model were labelled). Fixes: pass "
        "sampling_prob= (the probability with which each pair was sent for labelling, a column "
        "of pairs or a Series by pair_id) to weight by it; or strata= (a column of pairs) if "
        "labels were drawn at random within its groups; or check_labels=False if you drew the "
        "labels at random and this is a false alarm (it happens with probability about "
        f"{alpha:g})."
    )


@stamped
def check_labelling(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    target: str = "win",
    models: Any = None,
    prediction: str = "auto",
    strata: str | None = None,
) -> pd.DataFrame:
    """Test whether the labelled pairs look like a random sample of the pairs.

    Under random labelling, labelled and unlabelled pairs come from the same distribution, so
    everything the judge said about them, and everything known about them, has the same
    distribution in both groups. This compares the two groups on the judge's prediction, its
    confidence (distance from 1/2), its disagreement between the two orders, the length gap,
    and the model, opponent, task and dataset columns where they exist.

    Parameters
    ----------
    judgments, pairs : DataFrame
        The tidy tables (:mod:`judgekit.schema`); pairs carry ``label`` on the labelled pairs and
        missing elsewhere.
    target, models, prediction
        As in :func:`judgekit.ppi_win_rates` (they decide which pairs and predictions are used).
    strata : str, optional
        A column of pairs within whose groups labels were drawn at random (at rates that may
        differ between groups): the tests then compare labelled and unlabelled pairs within
        each group.

    Returns
    -------
    DataFrame
        One row per (judge, model, covariate): ``judge``, ``model``, ``covariate``, ``test``
        (``"chi-square"`` of the labelled share by category, or ``"Mann-Whitney"`` of the values),
        ``statistic`` (chi-square, or the AUC within strata: 0.5 when the groups do not differ), ``p_value``,
        ``p_holm`` (Holm-adjusted over the unit's tests) and ``detail``.

    Notes
    -----
    Categories with an expected count below 5 are pooled before the chi-square test; with
    strata, chi-square statistics and degrees of freedom are added over strata and numeric
    covariates are compared with van Elteren's stratified Mann-Whitney test. :func:`judgekit.ppi_win_rates` refuses to run when some
    ``p_holm`` is below 0.001, so an honest random sample is refused about once in a thousand
    analyses. No test can see a selection on something the judge, the lengths and the columns
    do not reflect: random labelling remains an assumption to state.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, _ = jk.sim.simulate_judgments(2000, accuracy=0.8, seed=0)
    >>> random = pairs.assign(label=pairs["label"].where(pairs.index % 10 == 0))
    >>> bool((jk.check_labelling(judgments, random)["p_holm"] > 0.001).all())
    True
    >>> f = judgments.groupby("pair_id")["p_a"].mean()  # label only where the judge was unsure:
    >>> unsure = pairs["pair_id"].map((f - 0.5).abs() < 0.2)
    >>> hard = jk.check_labelling(judgments, pairs.assign(label=pairs["label"].where(unsure)))
    >>> bool(hard["p_holm"].min() < 1e-6)
    True
    """
    _prepare.check_options(target, prediction, "population")
    j, p = _prepare.load_tables(judgments, pairs, scanned=True)
    units = _prepare.build_units(j, p, target=target, models=models, prediction=prediction,
                                 strata=strata, sampling_prob=None, cluster="pair",
                                 estimand="population")
    frames = []
    for u in units:
        t = unit_tests(u)
        t.insert(0, "model", u.model)
        t.insert(0, "judge", u.judge)
        frames.append(t)
    cols = ["judge", "model", "covariate", "test", "statistic", "p_value", "p_holm", "detail"]
    if not frames:
        return pd.DataFrame(columns=cols)
    return pd.concat(frames, ignore_index=True)[cols]


@stamped
def sample_for_labelling(
    pairs: pd.DataFrame,
    n: int,
    *,
    strata: str | None = None,
    allocation: dict[str, int] | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Choose the pairs to send to human annotators, at random, and record the probabilities.

    Parameters
    ----------
    pairs : DataFrame
        The pairs table (validated).
    n : int
        How many pairs to label (without ``strata``), or the total when ``allocation`` is None
        (then shared across strata in proportion to their size).
    strata : str, optional
        A column of pairs to draw within (e.g. ``"model"`` or ``"task"``).
    allocation : dict, optional
        Labels per stratum (overrides the proportional split), e.g. more for a rare task.
    seed : int
        Seeds the draw.

    Returns
    -------
    DataFrame
        ``pair_id``, ``to_label`` (bool) and ``sampling_prob`` (the probability the pair was
        chosen: n_h / M_h in its stratum), ready for ``sampling_prob=`` of
        :func:`judgekit.ppi_win_rates` once the labels are in.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(1000, seed=0)
    >>> plan = jk.sample_for_labelling(pairs, 100, seed=1)
    >>> int(plan["to_label"].sum()), float(plan["sampling_prob"].iloc[0])
    (100, 0.1)
    """
    from judgekit.schema import validate_pairs

    p = validate_pairs(pairs) if "label" in pairs.columns else pairs.copy()
    rng = np.random.default_rng(seed)
    M = len(p)
    groups = pd.Series("all", index=p.index) if strata is None else p[strata].astype(str)
    sizes = groups.value_counts()
    if allocation is None:
        if not 0 < n <= M:
            raise ValueError(f"n must be between 1 and the {M} pairs, got {n}")
        raw = n * sizes / M
        alloc = np.floor(raw).astype(int)
        short = n - int(alloc.sum())
        alloc[(raw - alloc).sort_values(ascending=False).index[:short]] += 1
    else:
        alloc = pd.Series(allocation).reindex(sizes.index).fillna(0).astype(int)
        too_many = alloc > sizes
        if too_many.any():
            raise ValueError(f"allocation: more labels than pairs in {list(alloc.index[too_many])}")
    to_label = np.zeros(M, dtype=bool)
    prob = np.zeros(M)
    pos = {g: np.flatnonzero((groups == g).to_numpy()) for g in sizes.index}
    for g, idx in pos.items():
        k = int(alloc.get(g, 0))
        to_label[rng.choice(idx, k, replace=False)] = True
        prob[idx] = k / len(idx)
    return pd.DataFrame({"pair_id": p["pair_id"].astype(str).to_numpy(), "to_label": to_label,
                         "sampling_prob": prob})
