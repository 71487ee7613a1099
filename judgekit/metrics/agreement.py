"""How alike judges are: mutual agreement between every two judges, and per-instance disagreement
(Shi et al., appendix C)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgekit import _bootstrap as bs
from judgekit._stack import caller_level
from judgekit._stamp import stamped
from judgekit.exceptions import MetricWarning
from judgekit.metrics._formulas import ratio
from judgekit.metrics._prepare import ABSENT, INVALID, TIE, VERDICT_CODE, A, B, as_list
from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["disagreement", "mutual_agreement"]

_INSTANCE = ["pair_id", "order", "id_swap", "repeat"]


def _with_by(judgments: pd.DataFrame, pairs: pd.DataFrame | None, by: list[str], judge: str) -> pd.DataFrame:
    j = validate_judgments(judgments, pairs)
    if len(j) == 0:
        raise ValueError("judgments: the table is empty (0 rows); there is nothing to compare")
    if judge not in j.columns:
        raise ValueError(f"judge: column {judge!r} is not in judgments")
    if judge in by:
        raise ValueError(f"by: cannot group by the judge column {judge!r} when comparing judges")
    p = validate_pairs(pairs) if pairs is not None else None
    for col in by:
        if col in j.columns:
            continue
        if p is not None and col in p.columns:
            j[col] = p.set_index("pair_id")[col].reindex(j["pair_id"]).to_numpy()
            continue
        raise ValueError(f"by: column {col!r} is not in judgments or pairs")
    return j


def _per_pair(x: np.ndarray, order: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per pair, the judge x judge counts of instances where both judges have ``x`` True."""
    outer = (x[order, :, None] & x[order, None, :]).astype(np.float32)
    return np.add.reduceat(outer, starts, axis=0).reshape(len(starts), -1)


@stamped
def mutual_agreement(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame | None = None,
    by: str | Sequence[str] | None = None,
    *,
    judge: str = "judge",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Share of instances on which two judges give the same verdict, for every two judges.

    Parameters
    ----------
    judgments : DataFrame
        The judgments table of several judges on the same instances.
    pairs : DataFrame, optional
        Only needed for ``by`` columns that live in pairs.
    by : str or list of str, optional
        Compute the agreement separately per group (e.g. ``"dataset"``).
    judge : str, default "judge"
        The column that tells judges apart.
    n_boot, ci, seed
        Cluster bootstrap over pairs for the intervals (0 skips them).

    Returns
    -------
    DataFrame
        Tidy, one row per (group, judge_1, judge_2, metric) over all ordered pairs of judges
        including a judge with itself: the ``by`` columns, ``judge_1``, ``judge_2``, ``metric``
        (``"agreement"`` or ``"agreement_no_ties"``), ``estimate``, ``ci_low``, ``ci_high``,
        ``n`` (instances both judged validly, resp. both without a tie) and ``se``. Square, so it
        goes straight into a heatmap.

    Notes
    -----
    Memory and time grow with judges squared x pairs x ``n_boot``; for dozens of judges on
    thousands of pairs, use ``n_boot=0`` or fewer resamples.

    An instance is one request: (pair, order, option-ID arrangement, repeat). Two judges agree on
    it when their verdicts are identical (response terms, so equivalently position terms within
    the instance); invalid verdicts are left out. ``agreement_no_ties`` leaves out the instances
    where either judge said tie, Shi et al.'s "without tie" agreement for 3-option judges
    (a tie against a preference is a milder disagreement than opposite preferences).

    References
    ----------
    Shi, Ma, Vosoughi (2024), appendix C.1 and Fig. 5(c)-(e).

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> pairs, j1, _ = jk.sim.simulate_judgments(300, judge_name="j1", seed=1)
    >>> _, j2, _ = jk.sim.simulate_judgments(pairs, judge_name="j2", position_bias=1.0, seed=2)
    >>> ma = jk.mutual_agreement(pd.concat([j1, j2]), n_boot=0)
    >>> ma[ma["metric"] == "agreement"][["judge_1", "judge_2", "estimate", "n"]].round(3)
      judge_1 judge_2  estimate    n
    0      j1      j1     1.000  600
    1      j1      j2     0.613  600
    2      j2      j1     0.613  600
    3      j2      j2     1.000  600
    """
    n_boot = bs.check_args(n_boot, ci)
    by = as_list(by)
    j = _with_by(judgments, pairs, by, judge)
    if by:
        grouped = j.groupby(by, sort=True, dropna=False, observed=True)
        g_codes = grouped.ngroup().to_numpy()
        keys = grouped.size().index.to_frame(index=False)[by]
    else:
        g_codes = np.zeros(len(j), dtype=np.int64)
        keys = pd.DataFrame(index=range(1))
    verdict = j["verdict"].astype(object).map(VERDICT_CODE).fillna(INVALID).to_numpy(np.int8)
    seeds = np.random.SeedSequence(seed).spawn(len(keys))
    frames = []
    for gi in range(len(keys)):
        rows = np.flatnonzero(g_codes == gi)
        sub = j.iloc[rows]
        inst, _ = pd.MultiIndex.from_frame(sub[_INSTANCE]).factorize()
        jcode, judges = pd.factorize(sub[judge], sort=True)
        n_inst, n_j = int(inst.max()) + 1, len(judges)
        M = np.full((n_inst, n_j), ABSENT, dtype=np.int8)
        M[inst, jcode] = verdict[rows]
        # the pair (cluster) of each instance
        inst_pair = np.empty(n_inst, dtype=object)
        inst_pair[inst] = sub["pair_id"].to_numpy(object)
        pcode, _ = pd.factorize(inst_pair)
        n_p = int(pcode.max()) + 1
        valid = (M != ABSENT) & (M != INVALID)
        nt = valid & (M != TIE)
        # per pair (the bootstrap cluster), judge x judge counts summed over its instances
        order = np.argsort(pcode, kind="stable")
        starts = np.searchsorted(pcode[order], np.arange(n_p))

        onehot = [(c == M) for c in (A, B, TIE)]
        agree_nt = sum(_per_pair(o, order, starts) for o in onehot[:2])
        agree = agree_nt + _per_pair(onehot[2], order, starts)
        S = np.concatenate(
            [agree, _per_pair(valid, order, starts), agree_nt, _per_pair(nt, order, starts)], axis=1
        )
        T = S.sum(axis=0, dtype=np.float64)
        k = n_j * n_j

        def est(t: np.ndarray, k: int = k) -> tuple[np.ndarray, np.ndarray]:
            a, b, a2, b2 = (t[..., i * k : (i + 1) * k] for i in range(4))
            return ratio(a, b), ratio(a2, b2)

        point = est(T)
        group = f" ({', '.join(f'{c}={keys.iloc[gi][c]!r}' for c in by)})" if by else ""
        if not np.isfinite(point[0]).all():
            none = [f"{judges[i // n_j]} / {judges[i % n_j]}"
                    for i in np.flatnonzero(~np.isfinite(point[0])) if i // n_j <= i % n_j]
            more = f" and {len(none) - 5} more" if len(none) > 5 else ""
            warnings.warn(f"agreement is NaN for {', '.join(none[:5])}{more}{group}: no instance "
                          "has a valid verdict from both judges", MetricWarning, stacklevel=caller_level())
        if n_boot > 0:
            bs.warn_few_clusters(n_p, f"mutual_agreement{group}")
        ns = (T[k : 2 * k], T[3 * k : 4 * k])
        lo = [np.full(k, np.nan), np.full(k, np.nan)]
        hi = [np.full(k, np.nan), np.full(k, np.nan)]
        se = [np.full(k, np.nan), np.full(k, np.nan)]
        if n_boot > 0:
            reps = est(bs.resample_sums(S, n_boot, np.random.default_rng(seeds[gi])))
            for i in range(2):
                low_i, high_i, se_i = bs.interval(reps[i], ci, axis=0)
                ok = np.isfinite(point[i])
                lo[i], hi[i], se[i] = (np.where(ok, x, np.nan) for x in (low_i, high_i, se_i))
        j1 = np.repeat(np.asarray(judges, dtype=object), n_j)
        j2 = np.tile(np.asarray(judges, dtype=object), n_j)
        for i, metric in enumerate(("agreement", "agreement_no_ties")):
            f = pd.DataFrame({c: keys.iloc[gi][c] for c in by}, index=range(k)) if by else pd.DataFrame(index=range(k))
            f["judge_1"], f["judge_2"], f["metric"] = j1, j2, metric
            f["estimate"], f["ci_low"], f["ci_high"] = point[i], lo[i], hi[i]
            f["n"] = ns[i].astype(np.int64)
            f["se"] = se[i]
            frames.append(f)
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values([*by, "metric", "judge_1", "judge_2"], kind="stable").reset_index(drop=True)


@stamped
def disagreement(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame | None = None,
    by: str | Sequence[str] | None = None,
    *,
    judge: str = "judge",
) -> pd.DataFrame:
    """Per instance: how many judges differ from the majority verdict.

    Parameters
    ----------
    judgments : DataFrame
        The judgments table of several judges on the same instances.
    pairs : DataFrame, optional
        Only needed for ``by`` columns that live in pairs.
    by : str or list of str, optional
        Extra columns to keep beside the instance key (e.g. ``"dataset"``).
    judge : str, default "judge"
        The column that tells judges apart.

    Returns
    -------
    DataFrame
        One row per instance: the ``by`` columns, ``pair_id``, ``order``, ``id_swap``,
        ``repeat``, ``n_judges`` (valid verdicts), ``n_a``, ``n_b``, ``n_tie``, ``majority``
        (the most frequent verdict; None when two verdicts tie for most frequent) and
        ``disagreement`` = n_judges - (count of the most frequent verdict).

    Notes
    -----
    Shi et al. define the disagreement of an instance as the number of judgments different from
    the majority: 0 when all judges agree, at most 8 for twelve 3-option judges (4-4-4). Invalid
    verdicts are left out. The distribution of ``disagreement`` (e.g.
    ``out["disagreement"].value_counts()``) is their Fig. 5(a)-(b).

    References
    ----------
    Shi, Ma, Vosoughi (2024), appendix C.2.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> j = pd.DataFrame({"pair_id": "p1", "judge": ["x", "y", "z"], "order": "ab", "repeat": 0,
    ...                   "verdict": ["a", "a", "tie"], "p_a": float("nan")})
    >>> jk.disagreement(j)[["pair_id", "n_judges", "n_a", "n_tie", "majority", "disagreement"]]
      pair_id  n_judges  n_a  n_tie majority  disagreement
    0      p1         3    2      1        a             1
    """
    by = as_list(by)
    j = _with_by(judgments, pairs, by, judge)
    keys = [*by, *_INSTANCE]
    v = j["verdict"].astype(object)
    j = j.assign(
        _a=(v == "a").astype(np.int64), _b=(v == "b").astype(np.int64),
        _t=(v == "tie").astype(np.int64),
    )
    out = j.groupby(keys, sort=True, dropna=False, observed=True)[["_a", "_b", "_t"]].sum().reset_index()
    out = out.rename(columns={"_a": "n_a", "_b": "n_b", "_t": "n_tie"})
    counts = out[["n_a", "n_b", "n_tie"]].to_numpy()
    top = counts.max(axis=1)
    out.insert(len(keys), "n_judges", counts.sum(axis=1))
    n_top = (counts == top[:, None]).sum(axis=1)
    names = np.array(["a", "b", "tie"], dtype=object)
    majority = np.where((n_top == 1) & (top > 0), names[counts.argmax(axis=1)], None)
    out["majority"] = pd.Series(majority, dtype=object)
    out["disagreement"] = out["n_judges"] - top
    return out
