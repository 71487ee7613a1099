"""Robustness of a judge to the perturbations, measured against its own noise (from judgments)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgekit import _bootstrap
from judgekit._columns import member
from judgekit._stamp import stamped
from judgekit.perturb._common import BIASES, META_COLUMNS, seeded_rng
from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["REPORT_METRICS", "bias_report", "bias_summary"]

#: Metrics of :func:`bias_report`, in output order.
REPORT_METRICS: tuple[str, ...] = (
    "robustness", "consistency", "gap", "favoured_shift", "flip_to_favoured", "acc_ori", "acc_hack",
    "self_preference",
)

_LETTERS = "abcd"


def _as_slots(slots: pd.Series) -> pd.Series:
    """The ``slots`` of position rows as strings, missing elsewhere."""
    s = pd.Series(slots.to_numpy(dtype=object), index=slots.index, dtype=object)
    return s.where(s.notna(), None).astype("string")


def _map_to_source(verdict: pd.Series, slots: pd.Series) -> np.ndarray:
    """Verdicts of rotated position rows in the source pair's terms (others unchanged).

    A verdict naming the k-th shown response of a position row becomes ``slots[k]``; one letter
    at a time, so the work is vectorised over rows.
    """
    v = verdict.to_numpy(dtype=object)
    out = v.copy()
    s = _as_slots(slots)
    length = s.str.len().fillna(0).to_numpy(dtype=np.int64)
    for k, letter in enumerate(_LETTERS):
        hit = (s.notna() & (pd.Series(v, index=s.index) == letter)).to_numpy(dtype=bool)
        if not hit.any():
            continue
        beyond = hit & (length <= k)
        if beyond.any():
            raise ValueError(f"judgments: verdict {letter!r} is beyond the {int(length[beyond][0])} "
                             "responses of a position row")
        out[hit] = s[hit].str[k].to_numpy(dtype=object)
    return out


def _favoured(slots: pd.Series, order: pd.Series, favours: pd.Series) -> np.ndarray:
    """The favoured response: for position rows the source response shown first in the order
    judged (``slots[index of order's first letter]``), else ``favours`` as it is."""
    out = favours.to_numpy(dtype=object).copy()
    s = _as_slots(slots)
    first = order.astype(str).str[0].to_numpy(dtype=object)
    for k, letter in enumerate(_LETTERS):
        hit = s.notna().to_numpy(dtype=bool) & (first == letter)
        if hit.any():
            out[hit] = s[hit].str[k].to_numpy(dtype=object)
    return out


def _valid_wide_order(order: pd.Series) -> np.ndarray:
    """Orders of n-way rows must be a permutation of the first n letters."""
    valid = {"".join(p) for n in (0, 1, 3, 4) for p in itertools.permutations(_LETTERS[:n])}
    return order.isin(valid).to_numpy(dtype=bool)


def _validate_mixed(judgments: pd.DataFrame) -> pd.DataFrame:
    """Validate two-response judgments with the schema, n-way ones (orders like "bca") here."""
    if not isinstance(judgments, pd.DataFrame):
        raise TypeError(f"judgments must be a DataFrame, got {type(judgments).__name__}")
    if "order" not in judgments.columns:
        return validate_judgments(judgments)
    n = judgments["order"].astype(str).str.len().to_numpy()
    two = validate_judgments(judgments[n == 2])
    wide = judgments[n != 2].copy()
    if wide.empty:
        return two
    bad = ~_valid_wide_order(wide["order"])
    if bad.any():
        raise ValueError(f"judgments: column 'order' has invalid values {sorted(set(wide.loc[bad, 'order']))[:5]}")
    v = wide["verdict"].astype(object)
    bad = (v.notna() & ~v.isin(["a", "b", "c", "d", "tie"])).to_numpy()
    if bad.any():
        raise ValueError(f"judgments: n-way verdicts must be a-d or tie; found {sorted(set(v[bad]))[:5]}")
    wide["verdict"] = v.where(v.notna(), None)
    wide["pair_id"] = wide["pair_id"].astype(str)
    wide["repeat"] = wide["repeat"].astype("int64")
    wide["id_swap"] = wide["id_swap"].astype(bool) if "id_swap" in wide.columns else False
    return pd.concat([two, wide], ignore_index=True)


def _eq(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """1.0 where x and y hold the same value (two missing values count as the same), else 0.0."""
    codes, _ = pd.factorize(np.concatenate([np.asarray(x, dtype=object), np.asarray(y, dtype=object)]))
    return (codes[: len(x)] == codes[len(x):]).astype(float)


class _Group:
    """One (bias, variant) group of instances: its source pairs are the bootstrap's clusters, and
    every metric is a ratio (or a difference of two ratios) of per-cluster sums."""

    def __init__(self, frame: pd.DataFrame, n_boot: int, ci: float, rng: np.random.Generator) -> None:
        self.clusters = pd.Index(pd.unique(frame["source_pair_id"]))
        self.W = _bootstrap.counts(len(self.clusters), n_boot, rng)
        self.ci = ci

    def sums(self, frame: pd.DataFrame, values: np.ndarray) -> np.ndarray:
        """Per-cluster sums of ``values`` (one per row of ``frame``, a subset of the group)."""
        codes = self.clusters.get_indexer(frame["source_pair_id"])
        return np.bincount(codes, weights=values, minlength=len(self.clusters))

    def ratio(self, num: np.ndarray, den: np.ndarray, num2: np.ndarray | None = None,
              den2: np.ndarray | None = None, test: bool = False) -> dict | None:
        """sum(num)/sum(den) [minus sum(num2)/sum(den2)] with its percentile interval and, with
        ``test``, the normal p-value against 0 from the bootstrap standard error; None when a
        denominator is empty."""
        n = float(den.sum())
        if n == 0 or (den2 is not None and den2.sum() == 0):
            return None
        est = num.sum() / n
        with np.errstate(invalid="ignore", divide="ignore"):
            boot = (self.W @ num) / (self.W @ den)
            if num2 is not None:
                est = est - num2.sum() / den2.sum()
                boot = boot - (self.W @ num2) / (self.W @ den2)
        # resamples with an empty denominator (e.g. no flips drawn) are left out: the interval
        # is conditional on the metric being defined, as the estimate is
        lo, hi, se = _bootstrap.interval(boot, self.ci, min_finite=1e-12)
        p = np.nan
        if test:
            # no spread at all: a shift every resample shows is certain, no shift is none
            p = float(_bootstrap.p_value(est, se)) if se > 0 else (
                np.nan if np.isnan(se) else float(est == 0))
        n_out = int(n if den2 is None else min(n, den2.sum()))
        return {"estimate": float(est), "ci_low": float(lo), "ci_high": float(hi), "n": n_out,
                "p_value": p}


@stamped
def bias_report(
    pairs: pd.DataFrame,
    perturbed: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    reference_repeat: int = 1,
    by_variant: bool = True,
    n_boot: int = 2000,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Per bias: robustness, the judge's own consistency, their gap, and which way it moved.

    Parameters
    ----------
    pairs : DataFrame
        The unperturbed pairs.
    perturbed : DataFrame
        Perturbed pairs from the ``perturb_*`` functions (concatenated), with ``source_pair_id``,
        ``bias``, ``variant``, ``favours`` (and ``slots`` for position rows).
    judgments : DataFrame
        One judge's verdicts on ``pairs`` (repeats 0 and ``reference_repeat`` of every order and
        ID arrangement judged) and on ``perturbed`` (any repeats). Self-enhancement rows need no
        judgments of their own: they are read from the unperturbed ones.
    reference_repeat : int
        The unperturbed repeat that perturbed verdicts are compared with. The judge's consistency
        is the agreement of repeat 0 with this repeat, so both rates compare two separate calls.
    by_variant : bool
        Also report each variant (e.g. each bandwagon percentage); ``variant`` is ``"all"`` for
        the pooled rows.
    n_boot : int
        Bootstrap resamples of the source pairs (clusters: every perturbed row, order and repeat of
        a pair moves together).
    ci : float
        Level of the percentile intervals.
    seed : int
        Seeds the bootstrap.

    Returns
    -------
    DataFrame
        Columns ``bias``, ``variant``, ``metric``, ``estimate``, ``ci_low``, ``ci_high``, ``n``
        and ``p_value`` (two-sided p-value of ``gap``, ``favoured_shift`` and ``self_preference``
        against 0, from the estimate over its bootstrap standard error; missing for the others). Metrics, over instances = (perturbed row, order, ID arrangement,
        repeat) with valid verdicts in the perturbed call, the reference call and repeat 0:

        ``robustness``
            share of instances whose verdict equals the reference verdict (Ye et al.'s robustness
            rate).
        ``consistency``
            share whose unperturbed repeat 0 equals the reference verdict: what robustness would be
            if the perturbation did nothing.
        ``gap``
            robustness − consistency (negative: the perturbation moves the judge beyond its noise).
        ``favoured_shift``
            P(perturbed verdict = favoured response) − P(reference verdict = favoured response):
            positive when the judge moves toward the response the perturbation favours, negative
            when it moves away. Only for biases that favour a response.
        ``flip_to_favoured``
            among instances whose verdict changed, the share that changed to the favoured response.
        ``acc_ori``, ``acc_hack``
            accuracy against gold of the unperturbed verdicts (repeat 0 and the reference, averaged)
            and of the perturbed verdicts, on pairs labelled a/b. After a fallacy rewrite the gold
            answer is the intact response.
        ``self_preference``
            self-enhancement rows only: accuracy of the unperturbed verdicts on pairs whose gold
            answer is the judge's own minus on pairs whose gold answer is the other model's
            (positive: the judge sides with its own answers beyond their quality).

    Notes
    -----
    Ties count as verdicts (a tie that stays a tie is unchanged). Position rows are compared in
    the source pair's terms through their ``slots``.

    References
    ----------
    Ye et al. (2024). Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge, §3 and appendix C.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(200, seed=0)
    >>> pert = jk.perturb_position(pairs)
    >>> judge = jk.sim.SimJudge(position_bias=1.0, flip_q=0.05, seed=0)
    >>> base = jk.sim.simulate_judgments(pairs, judge=judge, orders=("ab",), repeats=2).judgments
    >>> moved = jk.sim.simulate_judgments(pert, judge=judge, orders=("ab",)).judgments
    >>> rep = jk.bias_report(pairs, pert, pd.concat([base, moved]), by_variant=False, n_boot=200)
    >>> shift = rep.set_index("metric").loc["favoured_shift"]
    >>> bool(shift["ci_low"] > 0)
    True
    """
    n_boot = _bootstrap.check_args(n_boot, ci, minimum=1)
    pairs = validate_pairs(pairs)
    perturbed = validate_pairs(perturbed, name="perturbed")
    missing = [c for c in META_COLUMNS if c not in perturbed.columns]
    if missing:
        raise ValueError(f"perturbed is missing column(s) {missing}; make it with the perturb_* functions")
    unknown = ~member(perturbed["source_pair_id"], pairs["pair_id"])
    if unknown.any():
        raise ValueError(
            "perturbed: column 'source_pair_id' refers to pairs not in pairs: "
            + ", ".join(perturbed.loc[unknown, "source_pair_id"].astype(str).unique()[:5])
        )
    clash = member(perturbed["pair_id"], pairs["pair_id"])
    if clash.any():
        raise ValueError(
            "perturbed: 'pair_id' values also used by pairs: "
            + ", ".join(perturbed.loc[clash, "pair_id"].unique()[:5])
        )
    j = _validate_mixed(judgments)
    judges = j["judge"].unique()
    if len(judges) != 1:
        raise ValueError(f"judgments must hold one judge, found {len(judges)}: {list(judges)[:5]}")

    key = ["order", "id_swap"]
    base = j[member(j["pair_id"], pairs["pair_id"])]
    ref = base[base["repeat"] == reference_repeat].rename(columns={"verdict": "v_ref", "pair_id": "source_pair_id"})
    rep0 = base[base["repeat"] == 0].rename(columns={"verdict": "v0", "pair_id": "source_pair_id"})
    if ref.empty or rep0.empty:
        raise ValueError(
            f"judgments need repeats 0 and {reference_repeat} of the unperturbed pairs (judge them with "
            f"repeats={reference_repeat + 1})"
        )
    anchor = rep0[["source_pair_id", *key, "v0"]].merge(
        ref[["source_pair_id", *key, "v_ref"]], on=["source_pair_id", *key], how="inner"
    )
    labels = pairs.set_index("pair_id")["label"]
    anchor["label_src"] = labels.reindex(anchor["source_pair_id"]).to_numpy()

    slots = perturbed["slots"] if "slots" in perturbed.columns else pd.Series(None, index=perturbed.index, dtype=object)
    meta = perturbed[["pair_id", "source_pair_id", "bias", "variant", "favours", "label"]].assign(
        slots=slots.astype(object).where(slots.notna(), None).to_numpy()
    )

    frames = []
    judged = meta[meta["bias"] != "self_enhancement"]
    if len(judged):
        pj = j[member(j["pair_id"], judged["pair_id"])].merge(judged, on="pair_id", how="inner")
        not_judged = pd.unique(judged.loc[~member(judged["pair_id"], pj["pair_id"]), "pair_id"])
        if len(not_judged):
            raise ValueError(
                f"judgments have no verdict rows for {len(not_judged)} perturbed pair(s), e.g. "
                f"{sorted(not_judged)[:3]}"
            )
        pj["v_p"] = _map_to_source(pj["verdict"], pj["slots"])
        slots_str = _as_slots(pj["slots"])
        is_pos = slots_str.notna().to_numpy(dtype=bool)
        if is_pos.any():
            n_way = slots_str.str.len().fillna(0).to_numpy(dtype=np.int64)
            bad = is_pos & (pj["order"] == "ba").to_numpy(dtype=bool) & (n_way > 2)
            if bad.any():
                raise ValueError("position rows with more than two answers must be judged in order 'ab' only")
            # the favoured response is the one shown first in the arrangement judged
            pj["favours"] = _favoured(pj["slots"], pj["order"], pj["favours"])
        # the gold answer after the perturbation, in source terms
        src_label = labels.reindex(pj["source_pair_id"]).to_numpy(dtype=object)
        pj["label_hack"] = np.where(is_pos, src_label, pj["label"].to_numpy(dtype=object))
        pj = pj.merge(anchor, on=["source_pair_id", *key], how="inner")
        frames.append(pj[["source_pair_id", "bias", "variant", "favours", "v_p", "v0", "v_ref", "label_src", "label_hack"]])
    inst = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["source_pair_id", "bias", "variant", "favours", "v_p", "v0", "v_ref", "label_src", "label_hack"]
    )

    self_rows = meta[meta["bias"] == "self_enhancement"]
    selfe = self_rows.merge(anchor, on="source_pair_id", how="inner")

    # the bootstrap resamples the source pairs of each (bias, variant) group
    out: list[dict] = []

    def emit(bias: str, variant: str, metric: str, row: dict | None) -> None:
        if row is not None:
            out.append({"bias": bias, "variant": variant, "metric": metric, **row})

    def groups(frame: pd.DataFrame):
        present = [str(b) for b in pd.unique(frame["bias"])]
        for bias in [b for b in BIASES if b in present] + sorted(set(present) - set(BIASES)):
            g = frame[frame["bias"] == bias]
            yield bias, "all", g
            if by_variant and g["variant"].nunique() > 1:
                for variant, gv in g.groupby("variant", sort=True):
                    yield bias, str(variant), gv

    for bias, variant, g in groups(inst):
        valid = g["v_p"].notna() & g["v0"].notna() & g["v_ref"].notna()
        g = g[valid.to_numpy()]
        if g.empty:
            continue
        grp = _Group(g, n_boot, ci, seeded_rng(seed, "bootstrap", bias, variant))
        one = np.ones(len(g))
        same = _eq(g["v_p"].to_numpy(), g["v_ref"].to_numpy())
        cons = _eq(g["v0"].to_numpy(), g["v_ref"].to_numpy())
        n_s, same_s, cons_s = grp.sums(g, one), grp.sums(g, same), grp.sums(g, cons)
        emit(bias, variant, "robustness", grp.ratio(same_s, n_s))
        emit(bias, variant, "consistency", grp.ratio(cons_s, n_s))
        emit(bias, variant, "gap", grp.ratio(same_s, n_s, cons_s, n_s, test=True))
        has_fav = g["favours"].notna().to_numpy()
        if has_fav.any():
            gf = g[has_fav]
            fav = gf["favours"].to_numpy(dtype=object)
            to_fav = _eq(gf["v_p"].to_numpy(), fav)
            ref_fav = _eq(gf["v_ref"].to_numpy(), fav)
            d = grp.sums(gf, np.ones(len(gf)))
            emit(bias, variant, "favoured_shift",
                 grp.ratio(grp.sums(gf, to_fav), d, grp.sums(gf, ref_fav), d, test=True))
            flipped = 1.0 - same[has_fav]
            emit(bias, variant, "flip_to_favoured", grp.ratio(grp.sums(gf, flipped * to_fav), grp.sums(gf, flipped)))
        lab = g["label_src"].isin(["a", "b"]).to_numpy()
        if lab.any():
            gl = g[lab]
            correct = (_eq(gl["v0"].to_numpy(), gl["label_src"].to_numpy())
                       + _eq(gl["v_ref"].to_numpy(), gl["label_src"].to_numpy())) / 2
            emit(bias, variant, "acc_ori", grp.ratio(grp.sums(gl, correct), grp.sums(gl, np.ones(len(gl)))))
        lab = g["label_hack"].isin(["a", "b"]).to_numpy()
        if lab.any():
            gl = g[lab]
            hack = _eq(gl["v_p"].to_numpy(), gl["label_hack"].to_numpy())
            emit(bias, variant, "acc_hack", grp.ratio(grp.sums(gl, hack), grp.sums(gl, np.ones(len(gl)))))

    for bias, variant, g in groups(selfe):
        g = g[g["v0"].notna().to_numpy() & g["v_ref"].notna().to_numpy() & g["label_src"].isin(["a", "b"]).to_numpy()]
        if g.empty:
            continue
        grp = _Group(g, n_boot, ci, seeded_rng(seed, "bootstrap", bias, variant))
        correct = (_eq(g["v0"].to_numpy(), g["label_src"].to_numpy())
                   + _eq(g["v_ref"].to_numpy(), g["label_src"].to_numpy())) / 2
        own = (g["label_src"].to_numpy(dtype=object) == g["favours"].to_numpy(dtype=object)).astype(float)
        emit(bias, variant, "self_preference", grp.ratio(grp.sums(g, correct * own), grp.sums(g, own),
             grp.sums(g, correct * (1 - own)), grp.sums(g, 1 - own), test=True))
        emit(bias, variant, "acc_ori", grp.ratio(grp.sums(g, correct), grp.sums(g, np.ones(len(g)))))

    cols = ["bias", "variant", "metric", "estimate", "ci_low", "ci_high", "n", "p_value"]
    frame = pd.DataFrame(out, columns=cols)
    frame["n"] = frame["n"].astype("int64")
    order = {m: k for k, m in enumerate(REPORT_METRICS)}
    frame["_m"] = frame["metric"].map(order)
    frame["_b"] = frame["bias"].map({b: k for k, b in enumerate(BIASES)}).fillna(len(BIASES))
    frame["_v"] = (frame["variant"] != "all").astype(int)
    frame = frame.sort_values(["_b", "bias", "_v", "variant", "_m"], kind="stable").drop(columns=["_m", "_b", "_v"])
    return frame.reset_index(drop=True)


@stamped
def bias_summary(report: pd.DataFrame, *, alpha: float = 0.05, metrics: Sequence[str] = ("favoured_shift", "self_preference")) -> pd.DataFrame:
    """One row per bias: robustness, consistency, gap, direction and whether the bias is detected.

    A bias is *detected* when its directional effect (``favoured_shift``, or ``self_preference``
    for self-enhancement; ``gap`` for biases that favour no response, such as chain-of-thought)
    differs from 0 after Holm's correction over the biases in the report (statsmodels'
    ``multipletests``), at family-wise level ``alpha``. A bias without a p-value (e.g. too few
    bootstrap draws) gets a missing ``p_holm`` and is not detected. The direction is ``"toward"`` (the judge moves toward the favoured response),
    ``"away"`` or ``"none"``.

    Parameters
    ----------
    report : DataFrame
        The output of :func:`bias_report` or :func:`bias_suite`.
    alpha : float
        Family-wise error rate over the biases tested.
    metrics : sequence of str
        Directional metrics, in order of preference.

    Returns
    -------
    DataFrame
        ``bias``, ``robustness``, ``consistency``, ``gap``, ``gap_ci_low``, ``gap_ci_high``,
        ``effect_metric``, ``effect``, ``effect_ci_low``, ``effect_ci_high``, ``p_value``,
        ``p_holm``, ``detected``, ``direction``, ``n``.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(200, seed=0)
    >>> pert = jk.perturb_position(pairs)
    >>> judge = jk.sim.SimJudge(position_bias=1.0, flip_q=0.05, seed=0)
    >>> j = pd.concat([jk.sim.simulate_judgments(p, judge=judge, orders=("ab",), repeats=k).judgments
    ...                for p, k in ((pairs, 2), (pert, 1))])
    >>> jk.bias_summary(jk.bias_report(pairs, pert, j, n_boot=200))[["bias", "detected", "direction"]]
           bias  detected direction
    0  position      True    toward
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    r = report[report["variant"] == "all"]
    rows = []
    for bias, g in r.groupby("bias", sort=False):
        m = g.set_index("metric")
        effect_metric = next((x for x in metrics if x in m.index), "gap" if "gap" in m.index else None)
        if effect_metric is None:
            continue

        def val(metric: str, col: str, m: pd.DataFrame = m) -> float:
            return float(m.at[metric, col]) if metric in m.index else np.nan

        rows.append({
            "bias": bias,
            "robustness": val("robustness", "estimate"), "consistency": val("consistency", "estimate"),
            "gap": val("gap", "estimate"), "gap_ci_low": val("gap", "ci_low"), "gap_ci_high": val("gap", "ci_high"),
            "effect_metric": effect_metric, "effect": val(effect_metric, "estimate"),
            "effect_ci_low": val(effect_metric, "ci_low"), "effect_ci_high": val(effect_metric, "ci_high"),
            "p_value": val(effect_metric, "p_value"), "n": int(m.at[effect_metric, "n"]),
        })
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    # Holm step-down over the biases that have a p-value (statsmodels); a missing p-value is
    # reported as missing and never counts as a detection
    from statsmodels.stats.multitest import multipletests

    p = out["p_value"].to_numpy(dtype=float)
    adj = np.full(len(p), np.nan)
    tested = np.isfinite(p)
    if tested.any():
        adj[tested] = multipletests(p[tested], alpha=alpha, method="holm")[1]
    out["p_holm"] = adj
    out["detected"] = out["p_holm"] < alpha
    sign = np.sign(out["effect"].to_numpy(dtype=float))
    directional = out["effect_metric"] != "gap"
    out["direction"] = np.where(
        ~out["detected"], "none",
        np.where(directional, np.where(sign > 0, "toward", "away"), np.where(sign < 0, "less robust", "more robust")),
    )
    cols = ["bias", "robustness", "consistency", "gap", "gap_ci_low", "gap_ci_high", "effect_metric", "effect",
            "effect_ci_low", "effect_ci_high", "p_value", "p_holm", "detected", "direction", "n"]
    return out[cols]
