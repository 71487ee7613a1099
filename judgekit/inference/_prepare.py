"""From the two tables to the per-pair arrays of :mod:`judgekit.inference._estimators`.

A *unit* is one judge x one model (or response a) for one target share: the pairs in scope, the
human outcome on the labelled ones, the judge's prediction on all of them, and the cluster,
stratum and sampling probability of each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgekit._scanned import frame_of, is_scanned
from judgekit.schema import validate_judgments, validate_pairs

TARGETS = ("win", "a", "b", "tie")
PREDICTIONS = ("auto", "prob", "verdict")
ESTIMANDS = ("population", "pairs")


@dataclass
class Unit:
    """One judge x model x target: what the estimators need, aligned by pair."""

    judge: str
    model: str | None
    pair_id: np.ndarray
    y: np.ndarray  # human outcome, NaN where unlabelled
    f: np.ndarray  # judge prediction in [0, 1]
    cluster: np.ndarray  # the cluster key of each pair (instruction, pair, ...), as strings
    stratum: np.ndarray  # int codes (all 0 without strata)
    strata: list[str]
    pi: np.ndarray | None  # sampling probability per pair, or None
    n_invalid: int  # pairs without a usable judgment (predicted by the judge's mean)
    covariates: dict[str, np.ndarray] = field(default_factory=dict)


def check_options(target: str, prediction: str, estimand: str) -> None:
    if target not in TARGETS:
        raise ValueError(f"target must be one of {list(TARGETS)}, got {target!r}")
    if prediction not in PREDICTIONS:
        raise ValueError(f"prediction must be one of {list(PREDICTIONS)}, got {prediction!r}")
    if estimand not in ESTIMANDS:
        raise ValueError(f"estimand must be one of {list(ESTIMANDS)}, got {estimand!r}")


def load_tables(judgments: pd.DataFrame, pairs: pd.DataFrame, *, scanned: bool = False,
                ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Validate both tables, tolerating an absent ``p_a`` column; pairs must carry labels.
    ``scanned``: the caller accepts a :class:`judgekit.ScannedTable` of judgments (it only needs
    :func:`predictions`)."""
    if is_scanned(judgments) and not scanned:
        raise TypeError("judgments: this function needs the judgments in memory (a DataFrame); "
                        "of the PPI functions, ppi_mean, ppi_win_rates and check_labelling "
                        "accept a ScannedTable")
    pairs = frame_of(pairs)
    if not isinstance(pairs, pd.DataFrame):
        raise TypeError(f"pairs must be a pandas DataFrame, got {type(pairs).__name__}")
    if "label" not in pairs.columns:
        raise ValueError(
            "pairs has no 'label' column: prediction-powered estimates need human labels "
            "('a', 'b', 'tie') on a random subset of the pairs, missing elsewhere"
        )
    if isinstance(judgments, pd.DataFrame) and "p_a" not in judgments.columns:
        judgments = judgments.assign(p_a=np.nan)
    p = validate_pairs(pairs)
    if is_scanned(judgments):  # validated by the engine when it sums the predictions
        return judgments, p
    j = validate_judgments(judgments, p)
    return j, p


def _per_call(j: pd.DataFrame, target: str, prediction: str) -> pd.Series:
    """Each judgment's prediction of the target (in response-a terms for "win"), NaN if unusable."""
    v = j["verdict"].astype(object)
    code = {"win": {"a": 1.0, "b": 0.0, "tie": 0.5}, "a": {"a": 1.0, "b": 0.0, "tie": 0.0},
            "b": {"a": 0.0, "b": 1.0, "tie": 0.0}, "tie": {"a": 0.0, "b": 0.0, "tie": 1.0}}[target]
    from_verdict = v.map(code).astype(float)
    if target == "tie" or prediction == "verdict":
        return from_verdict
    p_a = j["p_a"].astype(float)
    prob = 1.0 - p_a if target == "b" else p_a
    if prediction == "prob":
        return prob
    return prob.where(p_a.notna(), from_verdict)


def predictions(j: pd.DataFrame, target: str, prediction: str) -> pd.DataFrame:
    """Per (judge, pair): the judge's prediction, averaged over repeats within an order (and
    option-ID arrangement), then over the orders present; ``f`` NaN when nothing was usable.
    Also ``disagree``: |mean of order ab − mean of order ba| where both orders exist."""
    if is_scanned(j):  # the engine sums each (judge, pair, order, id_swap) cell
        cells = j.ppi_cells(target, prediction)
    else:
        x = _per_call(j, target, prediction)
        df = pd.DataFrame({"judge": j["judge"].to_numpy(), "pair_id": j["pair_id"].to_numpy(),
                           "cell": j["order"].astype(str) + "/" + j["id_swap"].astype(str),
                           "order": j["order"].to_numpy(), "x": x.to_numpy()})
        cells = df.groupby(["judge", "pair_id", "cell"], sort=False, observed=True).agg(
            x=("x", "mean"), order=("order", "first")).reset_index()
    per = cells.groupby(["judge", "pair_id"], sort=False, observed=True)["x"].mean().rename("f")
    by_order = cells.groupby(["judge", "pair_id", "order"], sort=False, observed=True)["x"].mean()
    wide = by_order.unstack("order")
    out = per.to_frame()
    if {"ab", "ba"} <= set(wide.columns):
        out["disagree"] = (wide["ab"] - wide["ba"]).abs().reindex(out.index)
    else:
        out["disagree"] = np.nan
    return out.reset_index()


def _as_per_pair(value: Any, p: pd.DataFrame, name: str) -> np.ndarray:
    """A per-pair float array from a column name of pairs, a Series / mapping by pair_id, or a
    scalar."""
    if isinstance(value, str):
        if value not in p.columns:
            raise ValueError(f"{name}: column {value!r} is not in pairs")
        out = pd.to_numeric(p[value], errors="coerce").to_numpy(float)
    elif isinstance(value, (pd.Series, Mapping)):
        s = pd.Series(value)
        s.index = s.index.astype(str)
        out = pd.to_numeric(s.reindex(p["pair_id"]), errors="coerce").to_numpy(float)
    elif np.isscalar(value):
        out = np.full(len(p), float(value))
    else:
        raise TypeError(f"{name} must be a column name, a Series or mapping by pair_id, or a number")
    return out


def sampling_probabilities(value: Any, p: pd.DataFrame) -> np.ndarray:
    """Validated sampling probabilities: in (0, 1] for every pair in scope."""
    pi = _as_per_pair(value, p, "sampling_prob")
    bad = ~(np.isfinite(pi) & (pi > 0) & (pi <= 1))
    if bad.any():
        ids = p["pair_id"].to_numpy()[bad][:5].tolist()
        raise ValueError(
            f"sampling_prob must be a probability in (0, 1] for every pair (a pair that could "
            f"never be labelled makes the human rate unidentifiable); {int(bad.sum())} pairs "
            f"have a missing, zero or out-of-range value (pair_id: {', '.join(ids)})"
        )
    return pi


def _codes(values: pd.Series) -> tuple[np.ndarray, list[str]]:
    codes, uniq = pd.factorize(values.astype(object).where(values.notna(), "<missing>"), sort=True)
    return codes.astype(np.int64), [str(u) for u in uniq]


def cluster_column(p: pd.DataFrame, cluster: str, estimand: str) -> pd.Series:
    """The cluster of each pair: ``"auto"`` is the instruction (``instruction_id``, else the
    prompt) for the population estimand and the pair for the finite one."""
    if cluster == "auto":
        if estimand == "pairs":
            return p["pair_id"]
        if "instruction_id" in p.columns and p["instruction_id"].notna().all():
            return p["instruction_id"].astype(str)
        return p["prompt"]
    if cluster == "pair":
        return p["pair_id"]
    if cluster not in p.columns:
        raise ValueError(f"cluster: column {cluster!r} is not in pairs (or use 'auto' / 'pair')")
    return p[cluster]


def model_list(p: pd.DataFrame, models: str | Sequence[str] | None) -> list[str | None]:
    if models is None:
        return [None]
    have = {"model_a", "model_b"} <= set(p.columns)
    if not have:
        raise ValueError("models: pairs needs 'model_a' and 'model_b' columns for per-model rates")
    known = sorted(set(p["model_a"].dropna().astype(str)) | set(p["model_b"].dropna().astype(str)))
    wanted = known if models == "all" else [models] if isinstance(models, str) else list(models)
    unknown = [m for m in wanted if m not in known]
    if unknown:
        raise ValueError(f"models: {unknown} not in pairs' model_a / model_b; known: {known}")
    return list(wanted)


def human_outcome(label: pd.Series, target: str) -> np.ndarray:
    code = {"win": {"a": 1.0, "b": 0.0, "tie": 0.5}, "a": {"a": 1.0, "b": 0.0, "tie": 0.0},
            "b": {"a": 0.0, "b": 1.0, "tie": 0.0}, "tie": {"a": 0.0, "b": 0.0, "tie": 1.0}}[target]
    return label.astype(object).map(code).astype(float).to_numpy()


def build_units(
    j: pd.DataFrame, p: pd.DataFrame, *, target: str, models: Any, prediction: str,
    strata: str | None, sampling_prob: Any, cluster: str, estimand: str,
) -> list[Unit]:
    """One :class:`Unit` per (judge, model) in scope."""
    preds = predictions(j, target, prediction)
    unknown = ~preds["pair_id"].isin(p["pair_id"]).to_numpy()
    if unknown.any():  # a frame was checked by validate_judgments; a scanned table only here
        ids = list(dict.fromkeys(preds["pair_id"][unknown]))[:5]
        raise ValueError(f"judgments: pair_id(s) not in pairs (pair_id: {', '.join(ids)})")
    y_all = human_outcome(p["label"], target)
    pi_all = sampling_probabilities(sampling_prob, p) if sampling_prob is not None else None
    clus = cluster_column(p, cluster, estimand)
    if strata is not None and strata not in p.columns:
        raise ValueError(f"strata: column {strata!r} is not in pairs")
    units = []
    for model in model_list(p, models):
        if model is None:
            rows = np.arange(len(p))
            flip = np.zeros(len(p), dtype=bool)
        else:
            ma, mb = p["model_a"].astype(str).to_numpy(), p["model_b"].astype(str).to_numpy()
            keep = (ma == model) ^ (mb == model)
            rows = np.flatnonzero(keep)
            flip = (mb == model)[rows] & (target == "win")
        sub = p.iloc[rows]
        for judge, jp in preds.groupby("judge", sort=True):
            fmap = jp.set_index("pair_id")
            f = fmap["f"].reindex(sub["pair_id"]).to_numpy(float)
            dis = fmap["disagree"].reindex(sub["pair_id"]).to_numpy(float)
            y = y_all[rows].copy()
            f = np.where(flip, 1.0 - f, f)
            y = np.where(flip, 1.0 - y, y)
            bad = ~np.isfinite(f)
            if bad.all():
                continue
            f[bad] = np.nanmean(f)
            if strata is None:
                scodes, snames = np.zeros(len(rows), dtype=np.int64), ["all"]
            else:
                scodes, snames = _codes(sub[strata])
            cov = {"judge prediction": f, "judge confidence": np.abs(f - 0.5)}
            if np.isfinite(dis).any():
                cov["order disagreement"] = np.where(np.isfinite(dis), dis, 0.0)
            cov["length difference"] = (sub["len_a"] - sub["len_b"]).to_numpy(float) * np.where(
                flip, -1.0, 1.0)
            if model is not None:
                ma_s, mb_s = sub["model_a"].astype(str).to_numpy(), sub["model_b"].astype(str).to_numpy()
                cov["opponent"] = np.where(mb_s == model, ma_s, mb_s)
            for col in ("task", "dataset") if model is not None else (
                    "model_a", "model_b", "task", "dataset"):
                if col in sub.columns and col != strata and sub[col].notna().any():
                    cov[col] = sub[col].astype(object).where(sub[col].notna(), "<missing>").to_numpy()
            units.append(Unit(
                judge=str(judge), model=model, pair_id=sub["pair_id"].to_numpy(), y=y, f=f,
                cluster=clus.iloc[rows].astype(str).to_numpy(), stratum=scodes, strata=snames,
                pi=None if pi_all is None else pi_all[rows], n_invalid=int(bad.sum()),
                covariates=cov,
            ))
    return units
