"""What drives position bias: per-(judge, task, candidate) consistency and fairness, and a
bidirectional stepwise OLS by AIC on them (Shi et al., §2.2 and appendix F)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from judgekit._stack import warn_once
from judgekit._stamp import stamped
from judgekit.metrics._prepare import as_list as _as_list
from judgekit.metrics.report import report_card
from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["StepwiseResult", "position_bias_factors", "stepwise_ols"]


class StepwiseResult(NamedTuple):
    """What :func:`stepwise_ols` returns."""

    #: The final step, like Shi et al.'s Tables 3-8: one row for the final model (``term`` None)
    #: and one per term it keeps, with the fit after removing that term: ``df`` (parameters
    #: removed), ``sum_sq`` (increase in RSS), ``rss`` and ``aic``; sorted by ``aic``, so the
    #: most important term comes last.
    table: pd.DataFrame
    #: The fitted statsmodels OLS results of the final model.
    model: object
    #: The final model's formula.
    formula: str
    #: One row per step: ``step``, ``action`` ("+ term" / "- term" / "start"), ``aic``.
    history: pd.DataFrame
    #: Predictors left out before stepping because, given all the other predictors, they add no
    #: column to the design (exact linear combinations: e.g. a length that is constant within
    #: each task, whether it is listed before or after ``task``).
    aliased: list[str]


def _term(name: str, categorical: set[str]) -> str:
    quoted = f'Q("{name}")'
    return f"C({quoted})" if name in categorical else quoted


def _fit_formula(response: str, terms: list[str], categorical: set[str]) -> str:
    rhs = " + ".join(_term(t, categorical) for t in terms) if terms else "1"
    return f'Q("{response}") ~ {rhs}'


def _smf():
    """statsmodels' formula API, imported on first use (it is slow to import)."""
    import statsmodels.formula.api as smf

    return smf


def _fit(data: pd.DataFrame, response: str, terms: list[str], categorical: set[str]):
    from statsmodels.tools.sm_exceptions import SingularMatrixWarning

    formula = _fit_formula(response, terms, categorical)
    with warnings.catch_warnings():
        # nested factors (e.g. tasks and candidates that belong to one benchmark) are partly
        # collinear; statsmodels then fits by pseudo-inverse and counts parameters by rank,
        # which is what AIC needs, so the warning carries no news here
        warnings.simplefilter("ignore", SingularMatrixWarning)
        return _smf().ols(formula, data=data).fit(), formula


class _Design:
    """Each term's design columns, built once with the formula API, and fast OLS fits of any
    subset of terms (AIC and RSS computed as statsmodels does: parameters counted by rank)."""

    def __init__(self, data: pd.DataFrame, response: str, terms: list[str], categorical: set[str]):
        self.blocks = {}
        y = None
        for t in terms:
            model = _smf().ols(_fit_formula(response, [t], categorical), data=data)
            block = np.asarray(model.exog, dtype=float)[:, 1:]  # drop the intercept
            # centre and scale each column: with an intercept in every fit this changes neither
            # the column space nor any fit, but keeps raw lengths (thousands) and 0/1 dummies on
            # one scale, so that the rank lstsq reports does not depend on the units
            block = block - block.mean(axis=0)
            scale = np.sqrt((block**2).mean(axis=0))
            self.blocks[t] = block / np.where(scale > 0, scale, 1.0)
            y = np.asarray(model.endog)
        if y is None:
            y = np.asarray(_smf().ols(_fit_formula(response, [], categorical), data=data).endog)
        self.y = y
        self.n = len(y)

    def fit(self, terms: list[str]) -> tuple[float, float, int]:
        """(RSS, AIC, rank) of the OLS fit with an intercept and ``terms``."""
        X = np.column_stack([np.ones(self.n), *[self.blocks[t] for t in terms]])
        beta, _, rank, _ = np.linalg.lstsq(X, self.y, rcond=None)
        rss = float(np.sum((self.y - X @ beta) ** 2))
        llf = -self.n / 2.0 * (np.log(2 * np.pi) + np.log(rss / self.n) + 1.0)
        return rss, -2.0 * llf + 2.0 * rank, int(rank)


def _drop_aliased(design: _Design, predictors: list[str]) -> list[str]:
    """Predictors that add no rank to the design of all the other (kept) predictors.

    Checked from the last predictor to the first, each against every predictor still kept, so a
    term is aliased whatever its place in the list (a length listed before ``task`` is dropped,
    not ``task`` reduced by a degree of freedom); of several predictors that are combinations of
    each other, the later ones are dropped. One pass suffices: dropping an aliased term leaves
    the column space unchanged, so no kept term becomes aliased afterwards.
    """
    kept = list(predictors)
    _, _, rank = design.fit(kept)
    aliased = []
    for t in reversed(predictors):
        others = [x for x in kept if x != t]
        _, _, r = design.fit(others)
        if r == rank:
            kept = others
            aliased.append(t)
    return [t for t in predictors if t in aliased]


@stamped
def stepwise_ols(
    data: pd.DataFrame,
    response: str,
    predictors: Sequence[str],
    *,
    categorical: Sequence[str] = (),
    start: str = "full",
    max_steps: int = 100,
) -> StepwiseResult:
    """Bidirectional stepwise OLS regression by AIC, with statsmodels' formula API.

    Parameters
    ----------
    data : DataFrame
        One row per observation.
    response : str
        The column to predict (e.g. ``"position_consistency"``).
    predictors : sequence of str
        Candidate terms (column names).
    categorical : sequence of str
        Predictors to treat as categorical (``C(...)``: one dummy per level but the first).
    start : {"full", "null"}, default "full"
        Start from all predictors (backward first) or from the intercept only (forward first).
    max_steps : int, default 100
        Safety limit on the number of steps.

    Returns
    -------
    StepwiseResult
        ``table`` (the final step), ``model``, ``formula``, ``history`` and ``aliased``.

    Notes
    -----
    Each step tries removing every term of the current model and adding every term not in it,
    and takes the change that lowers AIC the most; it stops when no change lowers AIC. AIC is
    statsmodels' Gaussian 2k - 2 log L (Shi et al.'s eq. 4-6). R's ``step()``, which Shi et al.'s
    tables look like, prints n log(RSS/n) + 2p instead; the two differ by a constant for a given
    n, so the chosen model and the AIC differences are the same. Rows with a missing value in the
    response or any predictor are dropped first (once, so all fits use the same rows). A predictor
    that adds no rank given all the other predictors (an exact linear combination of them, which
    would otherwise sit in the final table with 0 degrees of freedom) is left out before stepping,
    whatever its position in ``predictors``, listed in ``aliased``, with a warning; of several
    predictors that are combinations of each other, the ones listed last are left out. Every term
    of the final table therefore has at least one degree of freedom.

    References
    ----------
    Shi, Ma, Vosoughi (2024), appendix F (Tables 3-8).

    Examples
    --------
    >>> import numpy as np, pandas as pd, judgekit as jk
    >>> rng = np.random.default_rng(0)
    >>> d = pd.DataFrame({"gap": rng.random(300), "noise": rng.random(300),
    ...                   "judge": rng.choice(["x", "y", "z"], 300)})
    >>> d["pc"] = 0.5 + 0.8 * d["gap"] + d["judge"].map({"x": 0.0, "y": 0.1, "z": -0.1}) \\
    ...     + rng.normal(0, 0.05, 300)
    >>> res = jk.stepwise_ols(d, "pc", ["gap", "noise", "judge"], categorical=["judge"])
    >>> res.table["term"].tolist()
    [None, 'judge', 'gap']
    """
    if start not in ("full", "null"):
        raise ValueError(f"start must be 'full' or 'null', got {start!r}")
    predictors = list(dict.fromkeys(predictors))
    missing = [c for c in [response, *predictors] if c not in data.columns]
    if missing:
        raise ValueError(f"data is missing column(s) {missing}")
    cat = set(categorical)
    unknown = cat - set(predictors)
    if unknown:
        raise ValueError(f"categorical: {sorted(unknown)} are not predictors")
    d = data[[response, *predictors]].dropna().reset_index(drop=True)
    if len(d) <= len(predictors) + 1:
        raise ValueError(f"too few complete rows ({len(d)}) for {len(predictors)} predictors")
    # a categorical predictor with a single level, or a constant numeric one, cannot be fitted
    constant = [c for c in predictors if d[c].nunique() < 2]
    if constant:
        raise ValueError(f"predictor(s) {constant} take a single value; leave them out")

    design = _Design(d, response, predictors, cat)
    aliased = _drop_aliased(design, predictors)
    if aliased:
        warn_once(
            f"stepwise_ols: {aliased} are exact linear combinations of the other predictors "
            "(aliased) and are left out", UserWarning,
        )
        predictors = [t for t in predictors if t not in aliased]
    current = list(predictors) if start == "full" else []
    rss, aic, rank = design.fit(current)
    history = [{"step": 0, "action": "start", "aic": aic}]
    for step in range(1, max_steps + 1):
        best = None
        moves = [(f"- {t}", [x for x in current if x != t]) for t in current]
        moves += [(f"+ {t}", [x for x in predictors if x in current or x == t])
                  for t in predictors if t not in current]
        for action, trial in moves:
            _, a, _ = design.fit(trial)
            if best is None or a < best[0]:
                best = (a, action, trial)
        if best is None or best[0] >= aic - 1e-7:
            break
        current = best[2]
        rss, aic, rank = design.fit(current)
        history.append({"step": step, "action": best[1], "aic": aic})

    fit, formula = _fit(d, response, current, cat)
    rows = [{"term": None, "df": np.nan, "sum_sq": np.nan, "rss": rss, "aic": aic}]
    for t in current:
        r_rss, r_aic, r_rank = design.fit([x for x in current if x != t])
        rows.append({"term": t, "df": rank - r_rank, "sum_sq": r_rss - rss, "rss": r_rss, "aic": r_aic})
    table = pd.DataFrame(rows).sort_values("aic", kind="stable").reset_index(drop=True)
    table["term"] = table["term"].astype(object).where(table["term"].notna(), None)
    table["df"] = table["df"].astype("Int64")
    return StepwiseResult(table, fit, formula, pd.DataFrame(history), aliased)


@stamped
def position_bias_factors(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    baseline: str | Sequence[str] | None = None,
    candidate: str | None = None,
    judge: str = "judge",
    task: str = "task",
    by: str | Sequence[str] | None = None,
    repeats: str = "all",
    mixed_ties: str = "neutral",
) -> pd.DataFrame:
    """Position consistency, preference fairness, answer quality gap and lengths per
    (judge, task, candidate): the data of Shi et al.'s factor analysis.

    Parameters
    ----------
    judgments, pairs : DataFrame
        The tidy tables; pairs need the ``task`` column and either ``candidate`` or
        ``model_a`` / ``model_b`` with ``baseline``.
    baseline : str or sequence of str, optional
        The fixed reference model(s) (Shi et al.: vicuna-13b-v1.3 on MT-Bench, human on
        DevBench). Each pair must have exactly one side among them; the other side's model is the
        candidate.
    candidate : str, optional
        Instead of ``baseline``: a pairs column naming the candidate; its response must then be
        ``response_a``.
    judge, task : str
        The judge column (judgments) and task column (pairs or judgments).
    by : str or list of str, optional
        Further grouping columns (e.g. ``"benchmark"``).
    repeats, mixed_ties
        As in :func:`judgekit.position_consistency` / :func:`judgekit.preference_fairness`.

    Returns
    -------
    DataFrame
        One row per (``by``, judge, task, candidate): ``n_pairs``, ``position_consistency``,
        ``preference_fairness``, ``win_rate`` (the candidate's overall win rate over the
        baseline), ``quality_gap`` (|win_rate - 0.5|), and mean lengths in characters:
        ``input_length`` (the task input, i.e. the prompt), ``output_length`` (the candidate's
        response: Shi et al.'s candidate-level "task output"), ``prompt_length`` (input plus both
        responses; the judge template, a constant per benchmark, is not counted).

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, _ = jk.sim.simulate_judgments(200, position_bias=0.5, seed=0)
    >>> pairs = pairs.assign(task=["t1", "t2"] * 100, model_a=["m1"] * 100 + ["m2"] * 100,
    ...                      model_b="base")
    >>> cells = jk.position_bias_factors(judgments, pairs, baseline="base")
    >>> cells[["judge", "task", "candidate", "n_pairs"]]
      judge task candidate  n_pairs
    0   sim   t1        m1       50
    1   sim   t1        m2       50
    2   sim   t2        m1       50
    3   sim   t2        m2       50
    """
    p = validate_pairs(pairs)
    j = validate_judgments(judgments, p)
    by_cols = _as_list(by)
    if (baseline is None) == (candidate is None):
        raise ValueError("give exactly one of baseline= (model names) or candidate= (a pairs column)")
    if candidate is not None:
        if candidate not in p.columns:
            raise ValueError(f"candidate: column {candidate!r} is not in pairs")
        cand = p[candidate].astype(object).to_numpy()
        flip = np.zeros(len(p), dtype=bool)
    else:
        for c in ("model_a", "model_b"):
            if c not in p.columns:
                raise ValueError(f"baseline= needs pairs column {c!r}")
        base = {baseline} if isinstance(baseline, str) else set(baseline)
        a_base = p["model_a"].isin(base).to_numpy()
        b_base = p["model_b"].isin(base).to_numpy()
        bad = a_base == b_base
        if bad.any():
            ids = p.loc[bad, "pair_id"].tolist()[:5]
            raise ValueError(
                f"baseline: {int(bad.sum())} pairs have {'both' if (a_base & b_base).any() else 'neither'} "
                f"sides among {sorted(base)} (pair_id: {', '.join(ids)})"
            )
        flip = a_base  # the candidate is response b: relabel so that it becomes a
        cand = np.where(flip, p["model_b"].to_numpy(object), p["model_a"].to_numpy(object))
    p = p.assign(candidate=cand)
    if task not in p.columns and task not in j.columns:
        raise ValueError(f"task: column {task!r} is in neither pairs nor judgments")
    # relabel flipped pairs: swap a/b in verdicts, orders and lengths (the chosen position stays)
    flip_by_id = pd.Series(flip, index=p["pair_id"])
    jf = flip_by_id.reindex(j["pair_id"]).to_numpy()
    v = j["verdict"].astype(object)
    j["verdict"] = np.where(jf & (v == "a"), "b", np.where(jf & (v == "b"), "a", v.to_numpy()))
    j["verdict"] = j["verdict"].astype(object).where(j["verdict"].notna(), None)
    j["order"] = np.where(jf, np.where(j["order"] == "ab", "ba", "ab"), j["order"].to_numpy(object))
    swapped = p.copy()
    for x, y in (("response_a", "response_b"), ("len_a", "len_b")):
        swapped.loc[flip, x], swapped.loc[flip, y] = p.loc[flip, y].to_numpy(), p.loc[flip, x].to_numpy()
    swapped.loc[flip, "label"] = p.loc[flip, "label"].map({"a": "b", "b": "a", "tie": "tie"})
    for c in ("model_a", "model_b"):
        if c in swapped.columns:
            swapped = swapped.drop(columns=c)
    keys = [*by_cols, judge, task, "candidate"]
    card = report_card(
        j, swapped, keys,
        metrics=["position_consistency", "preference_fairness", "win_rate", "quality_gap"],
        repeats=repeats, mixed_ties=mixed_ties, n_boot=0,
    )
    lengths = swapped.assign(
        input_length=swapped["prompt"].str.len().astype(float),
        output_length=swapped["len_a"].astype(float),  # the candidate is response a now
    )
    lengths["prompt_length"] = lengths["input_length"] + lengths["len_a"] + lengths["len_b"]
    pair_cols = [c for c in keys if c in lengths.columns and c not in j.columns]
    # mean lengths over the pairs each cell judged
    judged = j[[c for c in keys if c in j.columns] + ["pair_id"]].drop_duplicates()
    judged = judged.merge(
        lengths[["pair_id", *pair_cols, "input_length", "output_length", "prompt_length"]],
        on="pair_id", how="left",
    )
    means = judged.groupby(keys, sort=True, dropna=False)[
        ["input_length", "output_length", "prompt_length"]
    ].mean().reset_index()
    out = card[[*keys, "n_pairs", "position_consistency", "preference_fairness", "win_rate",
                "quality_gap"]].merge(means, on=keys, how="left")
    return out
