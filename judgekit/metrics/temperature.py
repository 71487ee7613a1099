"""Choosing the decoding temperature from self-consistency and accuracy (Wei et al., Table 1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgekit._stamp import stamped
from judgekit.metrics._prepare import as_list as _as_list
from judgekit.metrics.report import report_card

__all__ = ["recommend_temperature", "temperature_table"]

_TABLE_METRICS = ("scr_cr", "scr_rc", "acc_both")


@stamped
def temperature_table(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    by: str | Sequence[str] | None = None,
    *,
    temperature: str = "temperature",
    flip_estimator: str = "consistent",
    repeats: str = "all",
    exclude_zero: bool = True,
    acc_tolerance: float = 0.01,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    splits: Any = None,
) -> pd.DataFrame:
    """Self-consistency per order and Acc_both at each temperature, with the recommended one.

    Parameters
    ----------
    judgments : DataFrame
        Judgments of the same judge(s) at several temperatures (the ``temperature`` column), with
        K >= 2 repeats per request. A judge's id includes its decoding settings, so it differs
        between temperatures; ``by`` names the columns that identify the judge otherwise.
    pairs : DataFrame
        The pairs with human labels.
    by : str or list of str, optional
        Columns identifying the judge apart from its temperature, e.g. ``["model", "template"]``;
        None pools all judgments per temperature.
    temperature : str, default "temperature"
        The temperature column of judgments.
    flip_estimator : {"consistent", "paper"}, default "consistent"
        ``"paper"`` reproduces Wei et al.'s SCR = 1 - d (see :func:`judgekit.flip_noise`).
    repeats : {"all", "first"}, default "all"
        Repeats used for Acc_both.
    exclude_zero, acc_tolerance
        The recommendation rule, see :func:`recommend_temperature`.
    n_boot, ci, seed, splits
        Uncertainty, as in :func:`judgekit.report_card`; Wei et al. report Acc_both as mean (std)
        over splits (``splits=5``).

    Returns
    -------
    DataFrame
        One row per (``by``, temperature): ``n_pairs``, ``scr_cr``, ``scr_rc``, ``acc_both``, their
        ``_ci_low`` / ``_ci_high`` (and ``_std`` with splits), and ``recommended`` (True on the
        temperature :func:`recommend_temperature` picks for that judge).

    References
    ----------
    Wei et al. (2024), §6 "Temperature Parameter Selection", Table 1 and Tables 4-6.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(300, seed=0)
    >>> runs = []
    >>> for t in (0.0, 0.5, 1.0):
    ...     _, j, _ = jk.sim.simulate_judgments(pairs, flip_q=0.02 + 0.1 * t, repeats=5, seed=1,
    ...                                     judge_name=f"sim@{t}")
    ...     runs.append(j.assign(model="sim", temperature=t))
    >>> table = jk.temperature_table(pd.concat(runs), pairs, by="model", n_boot=0)
    >>> table[["model", "temperature", "scr_cr", "scr_rc", "acc_both", "recommended"]].round(2)
      model  temperature  scr_cr  scr_rc  acc_both  recommended
    0   sim          0.0    0.98    0.98      0.63        False
    1   sim          0.5    0.93    0.93      0.58         True
    2   sim          1.0    0.88    0.88      0.53        False
    """
    by_cols = _as_list(by)
    if temperature in by_cols:
        raise ValueError(f"by: the temperature column {temperature!r} is added automatically")
    if temperature not in judgments.columns:
        raise ValueError(f"judgments has no temperature column {temperature!r}")
    if judgments[temperature].isna().any():
        raise ValueError(f"judgments: column {temperature!r} has missing values")
    card = report_card(
        judgments, pairs, [*by_cols, temperature], metrics=list(_TABLE_METRICS),
        flip_estimator=flip_estimator, repeats=repeats, n_boot=n_boot, ci=ci, seed=seed,
        splits=splits,
    )
    keep = [*by_cols, temperature, "n_pairs"]
    for m in _TABLE_METRICS:
        keep += [m, f"{m}_ci_low", f"{m}_ci_high"] + ([f"{m}_std"] if splits is not None else [])
    table = card[keep].copy()
    rec = recommend_temperature(
        table, by=by_cols, temperature=temperature, exclude_zero=exclude_zero,
        acc_tolerance=acc_tolerance,
    )
    chosen = rec[[*by_cols, temperature]].assign(recommended=True)
    table = table.merge(chosen, on=[*by_cols, temperature], how="left")
    table["recommended"] = table["recommended"].astype("boolean").fillna(False).astype(bool)
    return table


@stamped
def recommend_temperature(
    table: pd.DataFrame,
    by: str | Sequence[str] | None = None,
    *,
    temperature: str = "temperature",
    exclude_zero: bool = True,
    acc_tolerance: float = 0.01,
    z: float = 1.96,
) -> pd.DataFrame:
    """Wei et al.'s temperature choice, made explicit: the most self-consistent non-zero
    temperature among those whose accuracy is not materially worse.

    Parameters
    ----------
    table : DataFrame
        One row per (judge, temperature) with ``scr_cr``, ``scr_rc`` and ``acc_both`` (the output
        of :func:`temperature_table`, or a published table).
    by : str or list of str, optional
        Columns identifying the judge; one recommendation per group.
    temperature : str, default "temperature"
        The temperature column.
    exclude_zero : bool, default True
        Leave out temperature 0: Wei et al. avoid greedy decoding as "a special case" so that
        their flip-noise machinery is exercised, and because SCR < 1 even at 0.
    acc_tolerance : float, default 0.01
        Candidates must have Acc_both within this of the best candidate's, or not significantly
        below it (see ``z``).
    z : float, default 1.96
        When the table carries uncertainty (``acc_both_std`` from splits, or
        ``acc_both_ci_low``/``acc_both_ci_high``, read as a normal interval), a candidate also
        qualifies when its Acc_both is within z * sqrt(se^2 + se_best^2) of the best.

    Returns
    -------
    DataFrame
        One row per group: the ``by`` columns, the recommended ``temperature``, its ``scr_mean``
        ((scr_cr + scr_rc) / 2), ``acc_both`` and ``reason``.

    Notes
    -----
    Among the candidate temperatures (all, or all > 0), keep those whose Acc_both is not
    materially (``acc_tolerance``) or significantly (``z``) below the best candidate's; pick the
    one with the highest mean SCR; break ties by the lower temperature. On Wei et al.'s Tables 1
    and 4-6 (with their split standard deviations) this picks 0.1 in all eight cases, the value
    they chose ("accuracy is not significantly affected by temperatures").

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> table1 = pd.DataFrame({  # Wei et al. (2024) Table 1, TL;DR, GPT-4o
    ...     "temperature": [0.0, 0.1, 0.3, 0.5, 0.7],
    ...     "scr_cr": [0.977, 0.973, 0.963, 0.953, 0.946],
    ...     "scr_rc": [0.971, 0.967, 0.956, 0.949, 0.927],
    ...     "acc_both": [0.665, 0.666, 0.668, 0.663, 0.657]})
    >>> jk.recommend_temperature(table1)[["temperature", "scr_mean", "acc_both"]]
       temperature  scr_mean  acc_both
    0          0.1      0.97     0.666
    """
    by_cols = _as_list(by)
    need = [temperature, "scr_cr", "scr_rc", "acc_both", *by_cols]
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise ValueError(f"table is missing column(s) {missing}")
    if acc_tolerance < 0 or z < 0:
        raise ValueError(f"acc_tolerance and z must be >= 0, got {acc_tolerance}, {z}")
    df = table[need].copy()
    df["scr_mean"] = (df["scr_cr"] + df["scr_rc"]) / 2.0
    if "acc_both_std" in table.columns:
        df["_se"] = table["acc_both_std"].to_numpy(float)
    elif {"acc_both_ci_low", "acc_both_ci_high"} <= set(table.columns):
        df["_se"] = (table["acc_both_ci_high"] - table["acc_both_ci_low"]).to_numpy(float) / (2 * 1.959964)
    else:
        df["_se"] = np.nan
    groups = df.groupby(by_cols, sort=True, dropna=False) if by_cols else [((), df)]
    rows = []
    for key, sub in groups:
        cand = sub[sub[temperature] > 0] if exclude_zero else sub
        cand = cand[np.isfinite(cand["acc_both"]) & np.isfinite(cand["scr_mean"])]
        if cand.empty:
            raise ValueError(
                f"no temperature to recommend for {dict(zip(by_cols, np.atleast_1d(key)))}: "
                "need finite scr_cr, scr_rc and acc_both"
                + (" at a temperature > 0" if exclude_zero else "")
            )
        best = cand.loc[cand["acc_both"].idxmax()]
        best_acc = best["acc_both"]
        margin = z * np.sqrt(cand["_se"] ** 2 + best["_se"] ** 2)
        margin = np.where(np.isfinite(margin), np.maximum(margin, acc_tolerance), acc_tolerance)
        ok = cand[cand["acc_both"] >= best_acc - margin - 1e-12]
        ok = ok.sort_values(["scr_mean", temperature], ascending=[False, True], kind="stable")
        pick = ok.iloc[0]
        reason = (
            f"highest mean SCR ({pick['scr_mean']:.3f}) among {len(ok)} temperature(s)"
            f"{' > 0' if exclude_zero else ''} whose Acc_both is within {acc_tolerance} or not "
            f"significantly below the best ({best_acc:.3f})"
        )
        row = {c: pick[c] for c in by_cols}
        row.update({temperature: pick[temperature], "scr_mean": pick["scr_mean"],
                    "acc_both": pick["acc_both"], "reason": reason})
        rows.append(row)
    return pd.DataFrame(rows)
