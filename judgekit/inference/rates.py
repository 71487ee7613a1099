"""Prediction-powered estimates of human win rates and shares: a judge on every pair, humans on a
random subset."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgekit import _bootstrap
from judgekit._stack import caller_level
from judgekit._stamp import stamped
from judgekit.exceptions import MetricWarning
from judgekit.inference import _fit, _prepare, labelling
from judgekit.inference._estimators import METHODS

__all__ = ["ppi_compare", "ppi_mean", "ppi_win_rates"]

COLUMNS = ["judge", "model", "target", "method", "estimate", "se", "ci_low", "ci_high",
           "interval", "n_labelled", "n_unlabelled", "n_clusters", "n_invalid", "lam", "estimand"]
_INTERVALS = ("clt", "bootstrap", "both")


def _check(methods: Sequence[str], interval: str, estimand: str, n_boot: Any, ci: Any) -> list[str]:
    methods = [methods] if isinstance(methods, str) else list(methods)
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        raise ValueError(f"methods must be a non-empty subset of {list(METHODS)}, got {methods}")
    if interval not in _INTERVALS:
        raise ValueError(f"interval must be one of {list(_INTERVALS)}, got {interval!r}")
    if estimand == "pairs" and interval != "clt":
        raise ValueError(
            "interval: the cluster bootstrap resamples instructions from a population; for "
            "estimand='pairs' (the rate on exactly these pairs) use interval='clt'"
        )
    _bootstrap.check_args(n_boot, ci)
    return methods


def _sanity(unit: _prepare.Unit) -> None:
    if unit.pi is None:
        return
    lab = ~np.isnan(unit.y)
    expected, sd = unit.pi.sum(), np.sqrt(np.sum(unit.pi * (1 - unit.pi)))
    if abs(lab.sum() - expected) > 4 * sd + 2:
        warnings.warn(
            f"ppi_win_rates: sampling_prob sums to {expected:.1f} over the pairs of judge "
            f"{unit.judge!r}{', model ' + repr(unit.model) if unit.model else ''}, but "
            f"{int(lab.sum())} are labelled: are these the probabilities that each pair was sent "
            "for labelling (not relative weights)?", MetricWarning, stacklevel=caller_level())


def _units(judgments, pairs, target, models, prediction, strata, sampling_prob, cluster,
           estimand, check_labels):
    _prepare.check_options(target, prediction, estimand)
    j, p = _prepare.load_tables(judgments, pairs, scanned=True)
    units = _prepare.build_units(j, p, target=target, models=models, prediction=prediction,
                                 strata=strata, sampling_prob=sampling_prob, cluster=cluster,
                                 estimand=estimand)
    if not units:
        raise ValueError("judgments: no judge gave a usable verdict on the pairs in scope")
    for u in units:
        _sanity(u)
        if check_labels and sampling_prob is None:
            labelling.raise_if_nonrandom(u, labelling.ALPHA, strata)
    return units


@stamped
def ppi_win_rates(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    target: str = "win",
    models: str | Sequence[str] | None = None,
    methods: Sequence[str] = METHODS,
    prediction: str = "auto",
    estimand: str = "population",
    strata: str | None = None,
    sampling_prob: Any = None,
    cluster: str = "auto",
    interval: str = "clt",
    check_labels: bool = True,
    small_sample: bool = True,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """The human win rate (or another human share) from a judge on every pair and labels on some.

    Four estimates side by side: ``classical`` (the labelled pairs only), ``judge_only`` (the
    judge's rate over all pairs: an interval for the *judge*, wrong for humans when the judge is
    biased), ``ppi`` (the judge's rate corrected by its mean error on the labelled pairs) and
    ``ppi++`` (the same with the correction's weight λ tuned to minimise the variance, so it is
    never much worse than the labels alone and better when the judge is informative).

    Parameters
    ----------
    judgments, pairs : DataFrame
        The tidy tables (:mod:`judgekit.schema`). Pairs carry the human ``label`` ("a", "b",
        "tie") on the labelled pairs and missing elsewhere; every pair in scope should be judged.
    target : {"win", "a", "b", "tie"}, default "win"
        The human quantity: the win rate (1 for a win, 1/2 for a tie, 0 for a loss) of response a
        or of each model in ``models``, or the share of pairs where humans prefer a, prefer b, or
        call a tie.
    models : str, list of str or "all", optional
        Win rates of these models (pairs need ``model_a``/``model_b``): the model's pairs, from
        its side. Without it the unit is response a over all pairs.
    methods : subset of ("classical", "judge_only", "ppi", "ppi++")
        Which estimates to return.
    prediction : {"auto", "prob", "verdict"}, default "auto"
        The judge's prediction per call: ``p_a`` where it exists (``"auto"``), ``p_a`` only, or
        the verdict (a = 1, b = 0, tie = 1/2 for ``"win"``). Calls are averaged over repeats
        within an order, then over the orders present (the swap-averaged prediction); a pair with
        no usable call gets the judge's mean prediction (counted in ``n_invalid``).
    estimand : {"population", "pairs"}, default "population"
        What the interval is about: the human rate in the population the pairs were drawn from
        (the papers' setting), or on exactly these pairs, as if humans had labelled them all
        (a finite-population correction: narrower when a large share is labelled).
    strata : str, optional
        A column of pairs (e.g. ``"task"``) within whose groups labels were drawn at random,
        possibly at different rates: each group is weighted by its share of the pairs.
    sampling_prob : str, Series, mapping or float, optional
        The probability with which each pair was sent for labelling (a column of pairs, a Series
        by ``pair_id``, or one number): needed when labels were not a simple random sample, e.g.
        hard cases labelled more often. Labelled pairs are then weighted by 1/π.
    cluster : str, default "auto"
        What the intervals treat as independent: the instruction (``instruction_id``, else the
        prompt) for the population estimand, the pair for ``estimand="pairs"``; or a column of
        pairs, or ``"pair"``.
    interval : {"clt", "bootstrap", "both"}, default "clt"
        Normal intervals from the estimators' variance, and/or percentile intervals from a
        cluster bootstrap (λ re-estimated in every resample; population estimand only).
    check_labels : bool, default True
        Refuse (:class:`~judgekit.exceptions.NonRandomLabelsError`) when the labelled pairs do
        not look like a random sample (see :func:`check_labelling`), unless ``sampling_prob`` is
        given.
    small_sample : bool, default True
        CLT intervals with Student's t quantile (n − 1 degrees of freedom, n the labels), the
        labelled pairs' variances with divisor n − 1 and, for simple random labels and the
        population estimand, a score-type widening where the labels' spread can understate the
        variance (a rare class, a rare disagreement with the judge; see Notes). In simulations
        this keeps coverage at or above 0.93 down to 50 labels, also at rates of 0.92-0.98, and
        at or above 0.94 with 20 labels there. False gives the papers' normal intervals with
        divisor n (ppi-python's numbers exactly, wherever its interval lies inside [0, 1]).
    n_boot : int, default 1000
        Bootstrap resamples.
    ci : float, default 0.95
        Coverage of the intervals.
    seed : int, default 0
        Seeds the bootstrap.

    Returns
    -------
    DataFrame
        One row per (judge, model, method, interval): ``judge``, ``model`` (None for response
        a), ``target``, ``method``, ``estimate``, ``se``, ``ci_low``, ``ci_high``, ``interval``
        ("clt" or "bootstrap"), ``n_labelled``, ``n_unlabelled``, ``n_clusters``, ``n_invalid``,
        ``lam`` (the weight of the judge's prediction: 0 classical, 1 PPI, tuned for PPI++),
        ``estimand``. Rates are shares in [0, 1].

    Raises
    ------
    NonRandomLabelsError
        When the labels look missing not at random and no ``sampling_prob`` is given.
    ValueError
        For pairs without a ``label`` column, unknown options, invalid sampling probabilities,
        a stratum without labels.

    Notes
    -----
    With y the human outcome and f the judge's prediction, n labelled and N unlabelled pairs
    (labels a simple random sample, population estimand):

    * classical: ȳ_n, variance s²_y / n;
    * judge-only: mean of f over all n + N pairs;
    * PPI++: θ̂_λ = λ f̄_N + (ȳ_n − λ f̄_n), variance λ² s²_f,N / N + s²_{y−λf} / n, with
      λ̂ = Cov_n(y, f) / ((1 + n/N) Var(f)) clipped to [0, 1]; PPI is λ = 1 (Angelopoulos et
      al. 2023, Angelopoulos, Duchi and Zrnic 2023). With ``small_sample=False`` the variances
      use divisor n and the interval the normal quantile (as ppi-python); by default the
      labelled pairs' variances use divisor n − 1 and the quantile is Student's t with n − 1
      degrees of freedom.

    For simple random labels and the population estimand, with ``small_sample=True`` (the
    default), the CLT interval of the classical, PPI and PPI++ estimates is the smallest one
    holding every θ with |θ̂ − θ| <= t sqrt(V(θ)), V(θ) = se² + max(e, (θ(1 − θ) − ȳ(1 − ȳ))
    / (n − 1)): θ(1 − θ) − ȳ(1 − ȳ) is how much larger the outcome's variance would be at θ
    than the labels show (a Wilson-type score term: with λ = 0 and binary labels the interval
    contains Wilson's), and e adds one pseudo-pair whose residual y − λf sits 1 from the mean,
    so labels that happen to hold no disagreement with the judge do not read as no variance.
    Both only widen the t interval (by 0-3% at 300 labels and a rate of 0.6 in the simulations,
    more at extreme rates, where the t interval undercovers).

    For outcomes in [0, 1] every interval (CLT, bootstrap, any ``small_sample``) is cut to
    [0, 1] (to [−1, 1] for a difference). Labels that are all the same value warn
    (:class:`~judgekit.exceptions.MetricWarning`): their spread is zero.

    With strata, sampling probabilities or ``estimand="pairs"``, the prediction is the fitted
    g = a_h + λ f (an intercept per stratum, one slope, weighted least squares with weights
    (1 − π)/π²) and θ̂ = (1/M)[Σ_all g + Σ_labelled (y − g)/π] over the M pairs (Zrnic and
    Candès 2024); for the pairs at hand its variance is Σ_labelled (1 − π)/π² (y − g)² / M²
    (times n/(n − p) for p fitted coefficients), for the population the cluster-robust variance
    of the terms g + 1(labelled)(y − g)/π.

    CLT intervals sum each pair's influence within clusters (instructions by default), so pairs
    sharing an instruction are not taken for independent evidence; with one pair per cluster
    they are the papers' formulas. Both rest on labels drawn at random (within strata) or with
    the known probabilities given; nothing repairs labels chosen on what the humans would say.

    References
    ----------
    Angelopoulos, Bates, Fannjiang, Jordan, Zrnic (2023). Prediction-powered inference.
    Science 382. Angelopoulos, Duchi, Zrnic (2023). PPI++: Efficient prediction-powered
    inference. arXiv:2311.01453. Zrnic, Candès (2024). Active statistical inference.
    arXiv:2403.03208.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, _ = jk.sim.simulate_judgments(3000, accuracy=0.8, position_bias=0.5, seed=0)
    >>> humans = pairs["label"].where(pairs.index % 15 == 0)   # 200 random pairs labelled
    >>> out = jk.ppi_win_rates(judgments, pairs.assign(label=humans))
    >>> out[["method", "estimate", "ci_low", "ci_high", "n_labelled"]].round(3)
           method  estimate  ci_low  ci_high  n_labelled
    0   classical     0.460   0.390    0.530         200
    1  judge_only     0.501   0.487    0.514         200
    2         ppi     0.510   0.463    0.558         200
    3       ppi++     0.508   0.461    0.555         200
    >>> round(float((pairs["label"] == "a").mean()), 3)   # the truth from all 3,000 labels
    0.506
    """
    methods = _check(methods, interval, estimand, n_boot, ci)
    units = _units(judgments, pairs, target, models, prediction, strata, sampling_prob, cluster,
                   estimand, check_labels)
    out = []
    for u in units:
        label = {"judge": u.judge, "model": u.model, "target": target}
        n = int((~np.isnan(u.y)).sum())
        if n < 2:
            warnings.warn(f"ppi_win_rates: judge {u.judge!r}"
                          f"{', model ' + repr(u.model) if u.model else ''} has {n} labelled "
                          "pairs; its estimates are NaN", MetricWarning, stacklevel=caller_level())
            for m in methods:
                out.append({**label, "method": m, "estimate": np.nan, "se": np.nan,
                            "ci_low": np.nan, "ci_high": np.nan, "interval": interval,
                            "n_labelled": n, "n_unlabelled": len(u.y) - n, "n_clusters": np.nan,
                            "n_invalid": u.n_invalid, "lam": np.nan, "estimand": estimand})
            continue
        fitted = _fit.fit_unit(u, estimand, small_sample)
        out += _fit.rows([fitted], [1.0], label=label, methods=methods, interval=interval,
                         n_boot=n_boot, ci=ci, seed=seed, small_sample=small_sample)
    return pd.DataFrame(out, columns=COLUMNS)


@stamped
def ppi_compare(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    models: tuple[str, str],
    *,
    target: str = "win",
    methods: Sequence[str] = METHODS,
    prediction: str = "auto",
    estimand: str = "population",
    strata: str | None = None,
    sampling_prob: Any = None,
    cluster: str = "auto",
    interval: str = "clt",
    check_labels: bool = True,
    small_sample: bool = True,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """The difference between two models' human win rates, with an interval that knows they share
    instructions (and possibly pairs).

    Parameters
    ----------
    judgments, pairs : DataFrame
        As in :func:`ppi_win_rates`; pairs need ``model_a`` and ``model_b``.
    models : (str, str)
        The two models; the result is rate(first) − rate(second).
    target, methods, prediction, estimand, strata, sampling_prob, cluster, interval, check_labels, small_sample, n_boot, ci, seed
        As in :func:`ppi_win_rates`.

    Returns
    -------
    DataFrame
        The columns of :func:`ppi_win_rates`, with ``model`` "<first> - <second>" and ``lam``
        NaN (each model keeps its own λ).

    Notes
    -----
    Each model's estimate is the one of :func:`ppi_win_rates`; the variance of the difference
    sums the two models' influence terms within clusters before squaring (CLT), or resamples
    both models' pairs with the same instructions (bootstrap), so a shared instruction's effect
    on both models cancels instead of being counted twice.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, _ = jk.sim.simulate_judgments(3000, accuracy=0.8, seed=0)
    >>> pairs["model_a"], pairs["model_b"] = pairs.index.map(lambda i: f"m{i % 2 + 1}"), "base"
    >>> labelled = pairs.assign(label=pairs["label"].where(pairs.index % 15 == 0))
    >>> d = jk.ppi_compare(judgments, labelled, ("m1", "m2"), methods=["ppi++"])
    >>> d[["model", "method", "n_labelled"]]
         model method  n_labelled
    0  m1 - m2  ppi++         200
    """
    if isinstance(models, str) or len(models) != 2:
        raise ValueError(f"models must be two model names, got {models!r}")
    methods = _check(methods, interval, estimand, n_boot, ci)
    units = _units(judgments, pairs, target, list(models), prediction, strata, sampling_prob,
                   cluster, estimand, check_labels)
    out = []
    for judge in sorted({u.judge for u in units}):
        mine = {u.model: u for u in units if u.judge == judge}
        if set(models) - set(mine):
            continue
        pair = [mine[models[0]], mine[models[1]]]
        if min(int((~np.isnan(u.y)).sum()) for u in pair) < 2:
            warnings.warn(f"ppi_compare: judge {judge!r}: a model has fewer than 2 labelled "
                          "pairs; skipped", MetricWarning, stacklevel=caller_level())
            continue
        fits = [_fit.fit_unit(u, estimand, small_sample) for u in pair]
        label = {"judge": judge, "model": f"{models[0]} - {models[1]}", "target": target}
        out += _fit.rows(fits, [1.0, -1.0], label=label, methods=methods, interval=interval,
                         n_boot=n_boot, ci=ci, seed=seed, small_sample=small_sample)
    return pd.DataFrame(out, columns=COLUMNS)


@stamped
def ppi_mean(
    y: Any,
    f: Any,
    *,
    methods: Sequence[str] = METHODS,
    estimand: str = "population",
    strata: Any = None,
    sampling_prob: Any = None,
    cluster: Any = None,
    interval: str = "clt",
    small_sample: bool = True,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Prediction-powered mean of any outcome from arrays: ``y`` (NaN where unlabelled) and a
    prediction ``f`` for every item.

    The engine of :func:`ppi_win_rates`, for outcomes that are not pairwise preferences (a pass
    rate, a score) or for simulations. No labelling check is made here.

    Parameters
    ----------
    y : array-like of float
        The human outcome per item, NaN where the item is unlabelled.
    f : array-like of float
        The prediction per item (finite everywhere).
    methods, estimand
        As in :func:`ppi_win_rates`.
    strata : array-like, optional
        Stratum of each item (labels drawn at random within strata).
    sampling_prob : array-like or float, optional
        Probability that each item was labelled.
    cluster : array-like, optional
        Cluster of each item (default: every item is its own cluster).
    interval, small_sample, n_boot, ci, seed
        As in :func:`ppi_win_rates`.

    Returns
    -------
    DataFrame
        The columns of :func:`ppi_win_rates` without ``judge``, ``model`` and ``target``.

    Examples
    --------
    >>> import numpy as np, judgekit as jk
    >>> rng = np.random.default_rng(1)
    >>> y = rng.binomial(1, 0.3, 5000).astype(float)          # the truth is 0.3
    >>> f = np.where(rng.random(5000) < 0.85, y, 1 - y)        # an 85%-accurate classifier
    >>> y_seen = np.where(np.arange(5000) < 300, y, np.nan)    # 300 labels
    >>> jk.ppi_mean(y_seen, f)[["method", "estimate", "se"]].round(3)
           method  estimate     se
    0   classical     0.290  0.026
    1  judge_only     0.357  0.007
    2         ppi     0.266  0.023
    3       ppi++     0.275  0.020
    """
    methods = _check(methods, interval, estimand, n_boot, ci)
    y = np.asarray(y, dtype=float)
    f = np.asarray(f, dtype=float)
    if y.ndim != 1 or f.shape != y.shape:
        raise ValueError(f"y and f must be 1-d arrays of the same length, got {y.shape} and {f.shape}")
    if not np.isfinite(f).all():
        raise ValueError("f: every item needs a finite prediction")
    if np.isinf(y).any():
        raise ValueError("y: outcomes must be finite (NaN marks an unlabelled item)")
    if int((~np.isnan(y)).sum()) < 2:
        raise ValueError("y: at least two items must be labelled")
    M = len(y)
    ids = np.arange(M)
    if strata is None:
        scodes, snames = np.zeros(M, dtype=np.int64), ["all"]
    else:
        scodes, uniq = pd.factorize(np.asarray(strata, dtype=object), sort=True)
        scodes, snames = scodes.astype(np.int64), [str(u) for u in uniq]
    pi = None
    if sampling_prob is not None:
        pi = np.broadcast_to(np.asarray(sampling_prob, dtype=float), (M,)).copy()
        if not (np.isfinite(pi) & (pi > 0) & (pi <= 1)).all():
            raise ValueError("sampling_prob must be in (0, 1] for every item")
    clus = ids if cluster is None else np.asarray(cluster)
    unit = _prepare.Unit(judge="", model=None, pair_id=ids, y=y, f=f, cluster=clus,
                         stratum=scodes, strata=snames, pi=pi, n_invalid=0)
    fitted = _fit.fit_unit(unit, estimand, small_sample)
    out = pd.DataFrame(_fit.rows([fitted], [1.0], label={}, methods=methods, interval=interval,
                                 n_boot=n_boot, ci=ci, seed=seed, small_sample=small_sample))
    return out[[c for c in COLUMNS if c in out.columns]]
