"""A simulation study of selection-bias calibration with judges whose biases are known.

Judges with (i) an option-ID (token) bias, (i') an ID *lapse* (a bias that is not a shift of the
logit), (ii) a position bias, (iii) both, judged in all four arrangements; every calibration
method is fitted on half of the pairs and evaluated on the other half.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit

from judgekit._stamp import stamped
from judgekit.calibration.baselines import content_free_pairs
from judgekit.calibration.calibrate import calibrate
from judgekit.calibration.selection_bias import selection_bias_metrics
from judgekit.sim.judge import SimJudge, simulate_judgments, simulate_pairs

__all__ = [
    "STUDY_METHODS",
    "IDLapseJudge",
    "noisy_arrangement_judgments",
    "probability_study",
    "selection_bias_study",
    "server_runner",
    "study_judges",
]


@dataclass(frozen=True)
class IDLapseJudge(SimJudge):
    """A simulated judge that, with probability ``id_lapse``, answers option ID t1 whatever it reads.

    P(first) = (1 − ε) σ(u) + ε · 1[the first position carries t1], where u is the
    :class:`~judgekit.sim.SimJudge` logit. Unlike ``token_bias`` (a shift of the logit, i.e. a
    division of the odds, which is exactly Pride's model), a lapse is not removed by dividing out
    a prior; a monotone map of P(t1) still removes it.

    Examples
    --------
    >>> judge = IDLapseJudge(id_lapse=0.2)
    >>> float(expit(judge.first_logit(0.0, 0.0, first_is_t1=True)))
    0.6
    """

    id_lapse: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 <= self.id_lapse < 1.0:
            raise ValueError(f"id_lapse must be in [0, 1), got {self.id_lapse}")

    def first_logit(self, delta_first, dlen_first, first_is_t1=True, signals=None):
        u = super().first_logit(delta_first, dlen_first, first_is_t1, signals)
        t1 = np.asarray(first_is_t1, dtype=float)
        p = (1.0 - self.id_lapse) * expit(u) + self.id_lapse * t1
        with np.errstate(divide="ignore"):
            return np.log(p) - np.log1p(-p)


def study_judges(seed: int = 0, strength: float = 1.0, lapse: float = 0.3) -> dict[str, SimJudge]:
    """The judges of the study: (i) token, (i') token lapse, (ii) position, (iii) both."""
    return {
        "(i) ID token bias": SimJudge(token_bias=strength, seed=seed),
        "(i') ID lapse": IDLapseJudge(id_lapse=lapse, seed=seed),
        "(ii) position bias": SimJudge(position_bias=strength, seed=seed),
        "(iii) both": SimJudge(token_bias=strength, position_bias=strength, seed=seed),
    }


#: Method label → :func:`judgekit.calibrate` keyword arguments (None: uncalibrated).
STUDY_METHODS: dict[str, dict[str, Any] | None] = {
    "raw": None,
    "pride": {"method": "pride"},
    "pride (by position)": {"method": "pride", "by_position": True},
    "contextual": {"method": "contextual"},
    "domain_context": {"method": "domain_context"},
    "noa": {"method": "noa"},
    "noa4 (shared map)": {"method": "noa4", "maps": "shared"},
    "noa4": {"method": "noa4"},
}

_KEY = ["pair_id", "judge", "order", "id_swap", "repeat"]

#: ``run(pairs, judge, judge_name) -> judgments`` in all four arrangements.
Runner = Callable[[pd.DataFrame, SimJudge, str], pd.DataFrame]


def _memory_runner(pairs: pd.DataFrame, judge: SimJudge, name: str) -> pd.DataFrame:
    return simulate_judgments(pairs, judge=judge, id_swap=(False, True), judge_name=name).judgments


def server_runner(template: str = "calibraeval_default", **options: Any) -> Runner:
    """A study runner that judges through the engine and the simulated OpenAI-compatible server.

    Each call starts :class:`judgekit.sim.SimServer` with the judge on a loopback port and runs
    :func:`judgekit.run_judges` with the ``template`` in all four arrangements, so ``p_a`` comes
    from the verdict token's logprobs in real HTTP responses. ``options`` go to ``run_judges``
    (default: no cache, no progress bar).

    Examples
    --------
    >>> import judgekit as jk
    >>> from judgekit.sim.selection_bias import server_runner
    >>> pairs = jk.sim.simulate_pairs(3, seed=0)
    >>> j = server_runner()(pairs, jk.sim.SimJudge(token_bias=1.0), "sim")
    >>> sorted(map(tuple, j[["order", "id_swap"]].drop_duplicates().values.tolist()))
    [('ab', False), ('ab', True), ('ba', False), ('ba', True)]
    """
    from judgekit.judging import Judge, run_judges
    from judgekit.sim.server import SimServer

    opts = {"cache": False, "progress": False, **options}

    def run(pairs: pd.DataFrame, judge: SimJudge, name: str) -> pd.DataFrame:
        with SimServer(judge, pairs=pairs) as url:
            spec = Judge("sim", template, base_url=url, name=name)
            return run_judges(pairs, spec, id_swap=(False, True), **opts)

    return run


def _unbiased(judge: SimJudge) -> SimJudge:
    changes: dict[str, float] = {"token_bias": 0.0, "position_bias": 0.0}
    if isinstance(judge, IDLapseJudge):
        changes["id_lapse"] = 0.0
    return dataclasses.replace(judge, **changes)


@stamped
def selection_bias_study(
    n_pairs: int = 2000,
    *,
    judges: Mapping[str, SimJudge] | None = None,
    methods: Mapping[str, dict[str, Any] | None] | None = None,
    runner: Runner | None = None,
    estimation_size: float = 0.5,
    n_content_free: int = 200,
    n_boot: int = 200,
    seed: int = 0,
) -> pd.DataFrame:
    """Calibrate simulated judges with known biases and measure selection bias before and after.

    Parameters
    ----------
    n_pairs : int
        Labelled synthetic pairs (:func:`judgekit.sim.simulate_pairs`), judged in X0..X3.
    judges : mapping of str to SimJudge, optional
        Scenario name → judge; default :func:`study_judges`.
    methods : mapping, optional
        Method label → keyword arguments of :func:`judgekit.calibrate`; default
        :data:`STUDY_METHODS`.
    runner : callable, optional
        ``runner(pairs, judge, judge_name)`` returning judgments in all four arrangements; by
        default the in-memory simulator. Pass one that goes through the engine and the simulated
        HTTP server to use real protocol logprobs (same generative model, same draws).
    estimation_size : float
        Fraction of pairs the calibrations are fitted on; all metrics use the other pairs.
    n_content_free : int
        Prompts for the content-free pairs of contextual / domain-context calibration.
    n_boot : int
        Bootstrap resamples for the intervals.
    seed : int
        Seeds pairs, judges' draws and splits.

    Returns
    -------
    DataFrame
        ``scenario``, ``method``, ``metric``, ``estimate``, ``ci_low``, ``ci_high``, ``n``:
        the metrics of :func:`judgekit.selection_bias_metrics` over the four arrangements and
        over CalibraEval's three (``arrangements``), plus ``rmse_unbiased``: the root mean squared
        difference between the (calibrated) P(response a) and the probability the same judge
        gives without its selection bias, over all held-out judgments.

    Examples
    --------
    >>> from judgekit.sim.selection_bias import selection_bias_study, study_judges
    >>> out = selection_bias_study(100, judges={"token": study_judges()["(i) ID token bias"]},
    ...                            methods={"raw": None, "noa": {"method": "noa", "max_iter": 30}},
    ...                            n_content_free=5, n_boot=0)
    >>> k = out[(out.metric == "fleiss_kappa") & (out.arrangements == "X0,X1,X2,X3")]
    >>> bool(k.set_index("method").loc["noa", "estimate"] > k.set_index("method").loc["raw", "estimate"])
    True
    """
    judges = dict(study_judges(seed) if judges is None else judges)
    methods = dict(STUDY_METHODS if methods is None else methods)
    run = runner or _memory_runner
    pairs = simulate_pairs(n_pairs, seed=seed)
    cf_pairs = {
        "contextual": content_free_pairs(pairs, "na", n=min(n_content_free, n_pairs), seed=seed),
        "domain_context": content_free_pairs(pairs, "domain", n=min(n_content_free, n_pairs),
                                             n_words=30, seed=seed),
    }
    frames = []
    for scenario, judge in judges.items():
        name = "sim"
        judgments = run(pairs, judge, name)
        truth = _memory_runner(pairs, _unbiased(judge), name)[[*_KEY, "p_a"]]
        truth = truth.rename(columns={"p_a": "p_a_unbiased"})
        content_free = {}
        eval_ids: set[str] | None = None
        outputs: dict[str, pd.DataFrame] = {}
        for label, kwargs in methods.items():
            if kwargs is None:
                outputs[label] = judgments.assign(p_a_calibrated=judgments["p_a"])
                continue
            kwargs = dict(kwargs)
            extra = {}
            if kwargs["method"] in cf_pairs:
                m = kwargs["method"]
                if m not in content_free:
                    content_free[m] = run(cf_pairs[m], judge, name)
                extra["content_free"] = content_free[m]
            _, out = calibrate(judgments, estimation_size=estimation_size, seed=seed, **kwargs, **extra)
            if kwargs["method"] in ("noa", "noa4", "pride"):
                ids = set(out.loc[out["calibration_split"] == "evaluation", "pair_id"])
                if eval_ids is not None and ids != eval_ids:
                    raise RuntimeError("methods were evaluated on different held-out pairs")
                eval_ids = ids
            outputs[label] = out
        if eval_ids is None:
            ids = np.sort(pairs["pair_id"].to_numpy())
            rng = np.random.default_rng(seed)
            est = set(rng.choice(ids, size=max(int(round(estimation_size * len(ids))), 2), replace=False))
            eval_ids = set(ids) - est
        for label, out in outputs.items():
            held = out[out["pair_id"].isin(eval_ids)]
            for arrs in (("X0", "X1", "X2", "X3"), ("X0", "X1", "X2")):
                m = selection_bias_metrics(held, pairs, prob="p_a_calibrated", arrangements=arrs,
                                           n_boot=n_boot, seed=seed)
                frames.append(m.assign(scenario=scenario, method=label))
            merged = held.merge(truth, on=_KEY, how="left")
            err = (merged["p_a_calibrated"] - merged["p_a_unbiased"]).to_numpy(dtype=float)
            err = err[~np.isnan(err)]
            frames.append(pd.DataFrame([{
                "judge": name, "metric": "rmse_unbiased", "estimate": float(np.sqrt(np.mean(err**2))),
                "ci_low": np.nan, "ci_high": np.nan, "n": len(err), "prob": "p_a_calibrated",
                "arrangements": "X0,X1,X2,X3", "scenario": scenario, "method": label,
            }]))
    out = pd.concat(frames, ignore_index=True)
    cols = ["scenario", "method", "arrangements", "metric", "estimate", "ci_low", "ci_high", "n"]
    return out[cols]


#: (order, id_swap, t1 carries o1 = response a, t1 shown first) of X0..X3.
_LAYOUT = (("ab", False, True, True), ("ba", True, True, False), ("ba", False, False, True),
           ("ab", True, False, False))


def noisy_arrangement_judgments(
    n_pairs: int,
    *,
    token_bias: float = 0.0,
    position_bias: float = 0.0,
    noise: float = 0.3,
    content_sd: float = 2.0,
    judge_name: str = "sim",
    seed: int = 0,
) -> pd.DataFrame:
    """A judge whose P(response a) is known without its selection bias, in all four arrangements.

    Each pair has a content logit δ ~ N(0, ``content_sd``); in each arrangement the judge's
    unbiased logit of P(a) is δ plus its own noise ε_j ~ N(0, ``noise``) (a real judge does not
    give the same probability twice when the layout changes). The observed P(t1) adds
    ``token_bias`` toward option ID t1 and ``position_bias`` toward the first position to
    that logit.

    Parameters
    ----------
    n_pairs : int
        Pairs, each judged in X0..X3.
    token_bias, position_bias : float
        Logit shifts toward t1 and toward the first position.
    noise : float
        Standard deviation of the per-arrangement noise, logit units.
    content_sd : float
        Standard deviation of δ.
    judge_name : str
        Value of the ``judge`` column.
    seed : int
        Seeds δ and ε.

    Returns
    -------
    DataFrame
        A judgments table (``verdict`` is the argmax of ``p_a``) plus ``p_a_unbiased``, the
        probability the same judge gives without selection bias.

    Examples
    --------
    >>> from judgekit.sim.selection_bias import noisy_arrangement_judgments
    >>> j = noisy_arrangement_judgments(3, token_bias=1.0, seed=0)
    >>> j[["order", "id_swap"]].drop_duplicates().shape[0], len(j)
    (4, 12)
    >>> bool((j["p_a"] == j["p_a_unbiased"]).any())       # the bias moved every probability
    False
    """
    rng = np.random.default_rng(seed)
    delta = rng.normal(0.0, content_sd, n_pairs)
    eps = rng.normal(0.0, noise, (4, n_pairs))
    ids = np.array([f"p{i:07d}" for i in range(n_pairs)], dtype=object)
    frames = []
    for j, (order, swap, a_has_t1, t1_first) in enumerate(_LAYOUT):
        unbiased = delta + eps[j]  # logit P(a) without selection bias
        t1 = (unbiased if a_has_t1 else -unbiased) + token_bias + (position_bias if t1_first else -position_bias)
        p_a = expit(t1) if a_has_t1 else expit(-t1)
        frames.append(pd.DataFrame({
            "pair_id": ids, "judge": judge_name, "order": order, "repeat": 0, "id_swap": swap,
            "verdict": np.where(p_a > 0.5, "a", np.where(p_a < 0.5, "b", "tie")), "p_a": p_a,
            "p_a_unbiased": expit(unbiased),
        }))
    return pd.concat(frames, ignore_index=True)


#: Scenario name → (token_bias, position_bias) of :func:`probability_study`.
PROBABILITY_SCENARIOS: dict[str, tuple[float, float]] = {
    "token bias": (1.0, 0.0),
    "position bias": (0.0, 1.0),
    "no bias": (0.0, 0.0),
    "both": (1.0, 1.0),
}


def probability_study(
    sizes: tuple[int, ...] = (300, 1000, 5000, 20000),
    *,
    scenarios: Mapping[str, tuple[float, float]] | None = None,
    methods: Mapping[str, dict[str, Any] | None] | None = None,
    noise: float = 0.3,
    seed: int = 0,
) -> pd.DataFrame:
    """Does a calibration keep probabilities? Judges with known truth, K estimation pairs each.

    For each scenario and K, :func:`noisy_arrangement_judgments` makes 2K pairs; each method is
    fitted with :func:`judgekit.calibrate` on K of them (``fit_on="split"``) and scored on the
    other K, against the judge's own unbiased probabilities.

    Parameters
    ----------
    sizes : tuple of int
        K, the estimation pairs.
    scenarios : mapping, optional
        Name → (token_bias, position_bias); default :data:`PROBABILITY_SCENARIOS`.
    methods : mapping, optional
        Label → :func:`judgekit.calibrate` keyword arguments (None: uncalibrated); default the
        raw probabilities, NOA with the default settings and NOA with ``settings="paper"``.
    noise : float
        Per-arrangement noise (logit units).
    seed : int
        Seeds the judges and the splits.

    Returns
    -------
    DataFrame
        ``scenario``, ``K``, ``method``, ``extreme_share`` (share of held-out P(a) within 0.01
        of 0 or 1), ``extreme_share_unbiased`` (the same for the unbiased probabilities),
        ``rmse_unbiased`` (root mean squared difference to them), ``kappa`` (Fleiss' κ over the
        four arrangements) and ``kappa_paper`` (over X0, X1, X2), ``n_iter``.

    Examples
    --------
    >>> from judgekit.sim.selection_bias import probability_study
    >>> t = probability_study((300,), scenarios={"token bias": (1.0, 0.0)})
    >>> t.set_index("method")["rmse_unbiased"].round(2).to_dict()
    {'raw': 0.17, 'noa': 0.01, 'noa (paper)': 0.27}
    """
    import warnings

    from judgekit.exceptions import ConvergenceWarning

    scenarios = dict(PROBABILITY_SCENARIOS if scenarios is None else scenarios)
    methods = dict({"raw": None, "noa": {"method": "noa"},
                    "noa (paper)": {"method": "noa", "settings": "paper"}} if methods is None else methods)
    rows = []
    for scenario, (token, position) in scenarios.items():
        for K in sizes:
            j = noisy_arrangement_judgments(2 * K, token_bias=token, position_bias=position,
                                            noise=noise, seed=seed + K)
            for label, kwargs in methods.items():
                n_iter = np.nan
                if kwargs is None:
                    held = j.assign(p_a_calibrated=j["p_a"])
                else:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", ConvergenceWarning)
                        cal, out = calibrate(j, seed=seed, **kwargs)
                    held = out[out["calibration_split"] == "evaluation"]
                    n_iter = cal.info["sim"].get("n_iter", np.nan)
                p, u = held["p_a_calibrated"].to_numpy(float), held["p_a_unbiased"].to_numpy(float)
                kappa = {}
                for key, arrs in (("kappa", ("X0", "X1", "X2", "X3")), ("kappa_paper", ("X0", "X1", "X2"))):
                    m = selection_bias_metrics(held, prob="p_a_calibrated", arrangements=arrs, n_boot=0)
                    kappa[key] = float(m.set_index("metric").loc["fleiss_kappa", "estimate"])
                rows.append({
                    "scenario": scenario, "K": K, "method": label,
                    "extreme_share": float(np.mean((p < 0.01) | (p > 0.99))),
                    "extreme_share_unbiased": float(np.mean((u < 0.01) | (u > 0.99))),
                    "rmse_unbiased": float(np.sqrt(np.mean((p - u) ** 2))),
                    **kappa, "n_iter": n_iter,
                })
    return pd.DataFrame(rows)
