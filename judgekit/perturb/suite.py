"""Run the bias suite: perturb the pairs, judge originals (twice) and perturbations, report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import pandas as pd

from judgekit._stamp import stamped
from judgekit.perturb._common import BIASES, META_COLUMNS, assemble, prepare
from judgekit.perturb.authority import perturb_authority
from judgekit.perturb.notes import (
    perturb_bandwagon,
    perturb_compassion_fade,
    perturb_cot,
    perturb_distraction,
    perturb_diversity,
    perturb_refinement_aware,
)
from judgekit.perturb.position import _n_answers, perturb_position
from judgekit.perturb.report import bias_report, bias_summary
from judgekit.perturb.rewrite import perturb_fallacy, perturb_sentiment, perturb_verbosity
from judgekit.perturb.self_enhancement import perturb_self_enhancement

__all__ = ["BiasSuite", "bias_suite", "perturb_all"]

#: Biases made without a model call (the defaults of :func:`bias_suite`).
DETERMINISTIC: tuple[str, ...] = (
    "position", "compassion_fade", "bandwagon", "distraction", "authority", "diversity", "cot",
)
_REWRITES = {"verbosity": perturb_verbosity, "fallacy_oversight": perturb_fallacy, "sentiment": perturb_sentiment}
_SEEDED = {"bandwagon", "distraction", "diversity", "compassion_fade", "authority"}
_DETERMINISTIC = {
    "position": perturb_position, "bandwagon": perturb_bandwagon,
    "distraction": perturb_distraction, "diversity": perturb_diversity,
    "compassion_fade": perturb_compassion_fade, "authority": perturb_authority,
    "cot": perturb_cot, "refinement_aware": perturb_refinement_aware,
}


class BiasSuite(NamedTuple):
    """What ``bias_suite(..., details=True)`` returns."""

    report: pd.DataFrame
    summary: pd.DataFrame
    perturbed: pd.DataFrame
    judgments: pd.DataFrame


@stamped
def perturb_all(
    pairs: pd.DataFrame,
    biases: Sequence[str] = DETERMINISTIC,
    *,
    target: str = "random",
    seed: int = 0,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    rewriter: str | None = None,
    rewrite_options: Mapping[str, Any] | None = None,
    self_models: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Every requested perturbation of ``pairs``, concatenated into one table.

    Parameters
    ----------
    pairs : DataFrame
        The pairs to perturb.
    biases : sequence of str
        Names from :data:`judgekit.BIASES`. ``verbosity``, ``fallacy_oversight`` and
        ``sentiment`` need ``rewriter``; ``self_enhancement`` needs ``self_models`` and the
        ``model_a``/``model_b`` columns; ``refinement_aware`` needs pairs of an answer (a) and its
        refinement (b), e.g. from :func:`judgekit.refine_pairs`.
    target : str
        Which response each perturbation favours (see :func:`judgekit.perturb_bandwagon`);
        per-bias ``options`` override it.
    seed : int
        Seeds every perturbation.
    options : mapping of bias -> mapping
        Extra keyword arguments per perturbation, e.g. ``{"bandwagon": {"percents": [90]}}``.
    rewriter : str, optional
        The model that performs the rewrites, through :func:`judgekit.complete`.
    rewrite_options : mapping, optional
        Passed to :func:`judgekit.complete` (``client``, ``base_url``, ``cache``, ...).
    self_models : sequence of str, optional
        The judge's own model names, for self-enhancement.

    Returns
    -------
    DataFrame
        The perturbed pairs of every bias, with the columns described in
        :mod:`judgekit.perturb._common`.

    Examples
    --------
    >>> import judgekit as jk
    >>> out = jk.perturb_all(jk.sim.simulate_pairs(10, seed=0), ["bandwagon", "cot"],
    ...                      options={"bandwagon": {"percents": [90]}})
    >>> out.groupby("bias").size().to_dict()
    {'bandwagon': 10, 'cot': 10}
    """
    df = prepare(pairs)
    biases = tuple(biases)
    unknown = sorted(set(biases) - set(BIASES))
    if unknown:
        raise ValueError(f"unknown bias(es) {unknown}; choose from {list(BIASES)}")
    options = {k: dict(v) for k, v in (options or {}).items()}
    bad = sorted(set(options) - set(BIASES))
    if bad:
        raise ValueError(f"options for unknown bias(es) {bad}")
    pieces = []
    for bias in biases:
        kw = options.get(bias, {})
        if bias in _SEEDED:
            kw = {"target": target, "seed": seed, **kw}
        if bias in _DETERMINISTIC:
            pieces.append(_DETERMINISTIC[bias](df, **kw))
        elif bias == "self_enhancement":
            if not self_models:
                raise ValueError("self_enhancement needs self_models (the judge's own model names)")
            pieces.append(perturb_self_enhancement(df, self_models))
        else:
            if rewriter is None:
                raise ValueError(
                    f"{bias} needs an LLM rewrite: pass rewriter='<model>' (and rewrite_options), "
                    "or pass pre-perturbed pairs (e.g. jk.calm_perturbations) as perturbed="
                )
            defaults = {"verbosity": "rejected", "fallacy_oversight": "chosen", "sentiment": target}
            kw = {"target": defaults[bias], "seed": seed, **kw, **dict(rewrite_options or {})}
            pieces.append(_REWRITES[bias](df, rewriter, **kw))
    if not pieces:
        return assemble(df, [], bias="position")
    return pd.concat(pieces, ignore_index=True)


def _cot_template_rows(pairs: pd.DataFrame, template_name: str) -> pd.DataFrame:
    rows = [{"index": i, "variant": f"template:{template_name}", "side": "ab", "favours": None, "edits": {}}
            for i in range(len(pairs))]
    out = assemble(pairs, rows, bias="cot")
    out["changed"] = "template"
    return out


@stamped
def bias_suite(
    pairs: pd.DataFrame,
    judge: Any,
    biases: Sequence[str] | None = None,
    client: Any = None,
    *,
    perturbed: pd.DataFrame | None = None,
    orders: Sequence[str] = ("ab",),
    target: str = "random",
    seed: int = 0,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    rewriter: str | None = None,
    rewrite_options: Mapping[str, Any] | None = None,
    self_models: Sequence[str] | None = None,
    cot_template: str | None = None,
    n_boot: int | None = None,
    ci: float = 0.95,
    alpha: float = 0.05,
    details: bool = False,
    progress: bool = True,
    **run_options: Any,
) -> pd.DataFrame | BiasSuite:
    """How far each of the twelve CALM biases sways a judge, beyond the judge's own noise.

    The suite perturbs the pairs (:func:`perturb_all`), judges the original pairs twice (the
    second call measures the judge's consistency: how often a verdict survives a plain re-run)
    and every perturbed pair once, and reports per bias the robustness rate next to that
    consistency, their gap with a bootstrap interval, the accuracy before and after, and which way
    the verdicts moved (:func:`bias_report`).

    Parameters
    ----------
    pairs : DataFrame
        The pairs (optionally with ``response_c`` / ``response_d`` for the n-way position study,
        and ``model_a`` / ``model_b`` for self-enhancement).
    judge : Judge
        The judge (:class:`judgekit.Judge`).
    biases : sequence of str, optional
        Biases to perturb here. Default: the deterministic ones (position, compassion-fade,
        bandwagon, distraction, authority, diversity, chain-of-thought), plus self-enhancement when
        the pairs name the judge's model, plus verbosity, fallacy-oversight and sentiment when a
        ``rewriter`` is given. ``[]`` with ``perturbed=`` runs only the given perturbations.
    client : openai client, optional
        Passed to :func:`judgekit.run_judges`.
    perturbed : DataFrame, optional
        Further perturbed pairs made beforehand (e.g. ``jk.calm_perturbations(...)[1]`` or the
        output of the ``perturb_*`` functions on these pairs).
    orders : sequence of {"ab", "ba"}
        Display orders judged (both: each instance is judged in both orders).
    target, seed, options, rewriter, rewrite_options, self_models
        See :func:`perturb_all`. ``self_models`` defaults to the judge's model.
    cot_template : str, optional
        Also judge the original pairs with this template (one that reasons before its verdict),
        reported as bias ``cot`` variant ``template:<name>``.
    n_boot : int, optional
        Bootstrap resamples (default 2000; 200 in smoke mode, ``JUDGEKIT_SMOKE=1``).
    ci, alpha : float
        Interval level; family-wise level of :func:`bias_summary`'s detection.
    details : bool
        Return a :class:`BiasSuite` (report, summary, perturbed pairs, judgments) instead of the
        report alone.
    progress : bool
        Progress bars.
    **run_options
        Passed to every :func:`judgekit.run_judges` call (``cache``, ``concurrency``,
        ``budget_usd``, ``api_key``, ...).

    Returns
    -------
    DataFrame or BiasSuite
        The tidy report of :func:`bias_report`: ``bias``, ``variant``, ``metric``, ``estimate``,
        ``ci_low``, ``ci_high``, ``n``, ``p_value``.

    Notes
    -----
    Calls: 2 per pair and order for the originals, plus one per perturbed pair and order
    (self-enhancement needs none). Use :func:`judgekit.estimate_cost` on
    ``perturb_all(...)`` to price a run first; ``docs/perturb.md`` has a worked estimate.

    References
    ----------
    Ye et al. (2024). Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(40, seed=0)
    >>> sim = jk.sim.ContentSimJudge(sensitivities={"bandwagon": 4.0}, flip_q=0.05, seed=1)
    >>> with jk.sim.SimServer(sim, pairs=pairs, signal_detector=jk.sim.detect_signals) as url:
    ...     judge = jk.Judge("sim", "mtbench_pair[noties]", base_url=url)
    ...     rep = jk.bias_suite(pairs, judge, ["bandwagon"], cache=False, progress=False,
    ...                         options={"bandwagon": {"percents": [90]}})
    >>> shift = rep.set_index(["bias", "metric"]).loc[("bandwagon", "favoured_shift")]
    >>> bool(shift["ci_low"] > 0)
    True
    """
    from judgekit._env import smoke
    from judgekit.judging import Judge, run_judges

    if not isinstance(judge, Judge):
        raise TypeError(f"judge must be a judgekit Judge, got {type(judge).__name__}")
    df = prepare(pairs)
    orders = tuple(orders)
    if not orders or set(orders) - {"ab", "ba"}:
        raise ValueError(f"orders must be a non-empty subset of ('ab', 'ba'), got {orders}")
    if n_boot is None:
        n_boot = 200 if smoke() else 2000
    self_models = list(self_models) if self_models is not None else [judge.model]
    if biases is None:
        biases = list(DETERMINISTIC)
        if {"model_a", "model_b"} <= set(df.columns) and (
            df["model_a"].isin(self_models) ^ df["model_b"].isin(self_models)
        ).any():
            biases.append("self_enhancement")
        if rewriter is not None:
            biases += list(_REWRITES)
    pieces = [perturb_all(df, biases, target=target, seed=seed, options=options, rewriter=rewriter,
                          rewrite_options=rewrite_options, self_models=self_models)]
    if cot_template is not None:
        pieces.append(_cot_template_rows(df, cot_template))
    if perturbed is not None:
        extra = perturbed.copy()
        missing = [c for c in META_COLUMNS if c not in extra.columns]
        if missing:
            raise ValueError(f"perturbed is missing column(s) {missing}; make it with the perturb_* functions")
        unknown = sorted(set(extra["source_pair_id"]) - set(df["pair_id"]))
        if unknown:
            raise ValueError(f"perturbed: source_pair_id not in pairs: {unknown[:5]}")
        pieces.append(extra)
    pert = pd.concat([p for p in pieces if len(p)], ignore_index=True) if any(len(p) for p in pieces) else pieces[0]
    if pert.empty:
        raise ValueError("nothing to judge: no bias produced a perturbed pair")
    if pert["pair_id"].duplicated().any():
        dup = pert.loc[pert["pair_id"].duplicated(), "pair_id"].unique()[:5]
        raise ValueError(f"perturbed pairs have duplicate pair_id values: {list(dup)}")

    run = {"client": client, "progress": progress, **run_options}
    frames = []
    slots = pert["slots"] if "slots" in pert.columns else pd.Series(None, index=pert.index, dtype=object)
    width = slots.map(lambda s: len(s) if isinstance(s, str) else 2)
    # originals, twice, where a two-response perturbation (or self-enhancement) needs them
    needed = df["pair_id"].isin(pert.loc[(width == 2).to_numpy(), "source_pair_id"])
    if needed.any():
        frames.append(run_judges(df[needed], judge, orders=orders, repeats=2, **run))
    # n-way originals and rotations, shown in full
    n_src = dict(zip(df["pair_id"], _n_answers(df)))
    for n in (3, 4):
        rotated = pert[(width == n).to_numpy()]
        if rotated.empty:
            continue
        order = "abcd"[:n]
        sources = df[df["pair_id"].isin(rotated["source_pair_id"]) & df["pair_id"].map(n_src).eq(n)]
        frames.append(run_judges(sources, judge, orders=(order,), repeats=2, **run))
        frames.append(run_judges(rotated, judge, orders=(order,), repeats=1, **run))
    # two-response perturbations (the CoT-template rows with the CoT judge)
    is_template = pert["changed"].eq("template").to_numpy()
    two = pert[(width == 2).to_numpy() & ~is_template & pert["bias"].ne("self_enhancement").to_numpy()]
    if len(two):
        frames.append(run_judges(two, judge, orders=orders, repeats=1, **run))
    if is_template.any():
        cot_judge = replace(judge, template=cot_template, name=None)
        j = run_judges(pert[is_template], cot_judge, orders=orders, repeats=1, **run)
        frames.append(j.assign(judge=judge.id))
    judgments = pd.concat(frames, ignore_index=True)
    report = bias_report(df, pert, judgments, n_boot=n_boot, ci=ci, seed=seed)
    if not details:
        return report
    return BiasSuite(report, bias_summary(report, alpha=alpha), pert, judgments)
