"""The reduced tables of the win rates and the PPI estimators, summed by the engine: one row per
(judge, pair, order[, id_swap]) with the sums and counts whose ratios the pandas path takes as
means. Each statistic is one ibis expression, so DuckDB, Spark and any other backend run the same
definition."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from judgekit.scale._cells import _check_design, _column, batches
from judgekit.scale._source import ScannedTable, _ibis


def _verdict_value(t: Any, mapping: dict[str, float]) -> Any:
    ibis = _ibis()
    return ibis.cases(*[(t["verdict"] == k, ibis.literal(v, type="float64"))
                        for k, v in mapping.items()],
                      else_=ibis.null("float64"))


def _fetch(table: ScannedTable, expr: Any, desc: str) -> pd.DataFrame:
    """The (small) reduced table as a frame, batch by batch with a progress bar."""
    frames = [batch.to_pandas() for batch in batches(table, expr, desc, " rows")]
    if not frames:
        raise ValueError(f"{table.name}: the table is empty (0 rows); there is nothing to measure")
    out = pd.concat(frames, ignore_index=True)
    for col in ("judge", "pair_id"):
        if out[col].isna().any():
            raise ValueError(f"{table.name}: column {col!r} is missing in some rows")
    if "bad_p" in out and out["bad_p"].sum() > 0:
        raise ValueError(f"{table.name}: column 'p_a' must be a probability in [0, 1] or "
                         f"missing; {int(out['bad_p'].sum())} rows are outside")
    return out


def _pair_rows(table: ScannedTable, out: pd.DataFrame, pairs: pd.DataFrame) -> np.ndarray:
    pos = pd.Index(pairs["pair_id"]).get_indexer(out["pair_id"])
    if (pos < 0).any():
        ids = list(dict.fromkeys(out["pair_id"][pos < 0]))[:5]
        raise ValueError(f"{table.name}: pair_id(s) not in pairs (pair_id: {', '.join(ids)})")
    return pos


def _base(table: ScannedTable) -> tuple[Any, Any]:
    t = table.expr
    _check_design(table, t)
    p_a = _column(t, "p_a", None, "float64").cast("float64")
    t = t.mutate(judge=t["judge"].cast("string"), pair_id=t["pair_id"].cast("string"))
    return t, p_a


def winrate_orders(table: ScannedTable, pairs: pd.DataFrame, model_is_a: np.ndarray,
                   preference: str) -> dict[str, tuple[pd.DataFrame, np.ndarray]]:
    """:func:`judgekit.winrate._data._per_order` from the engine's sums per (judge, pair, order)."""
    ibis = _ibis()
    t, p_a = _base(table)
    v_a = _verdict_value(t, {"a": 1.0, "b": 0.0, "tie": 0.5})
    x_a = {"prob": p_a, "verdict": v_a}.get(preference, p_a.fill_null(v_a))
    t = t.mutate(_x=x_a, _v=ibis.ifelse(x_a.notnull(), v_a, ibis.null("float64")),
                 _bad=ibis.ifelse((p_a < 0) | (p_a > 1), 1, 0))
    expr = t.group_by(["judge", "pair_id", "order"]).aggregate(
        n=t["_x"].count(), sx=t["_x"].sum(), nv=t["_v"].count(), sv=t["_v"].sum(),
        rows=t.count(), bad_p=t["_bad"].sum())
    out = _fetch(table, expr, "sums per (judge, pair, order)")
    pos = _pair_rows(table, out, pairs)
    flip = ~model_is_a[pos]
    n = out["n"].to_numpy(np.int64)
    nv = out["nv"].to_numpy(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = out["sx"].to_numpy(float) / n
        sd = np.where(nv > 0, out["sv"].to_numpy(float) / np.maximum(nv, 1), np.nan)
    s = np.where(flip, 1.0 - s, s)
    sd = np.where(flip, 1.0 - sd, sd)
    bad = out["rows"].to_numpy(np.int64) - n
    ab = (out["order"] == "ab").to_numpy(bool)
    judge_code, judge_names = pd.factorize(out["judge"], sort=True)
    result = {}
    for code, judge in enumerate(judge_names):
        mine = judge_code == code
        ok = mine & (n > 0)
        per_order = pd.DataFrame({"pair": pos[ok], "ab": ab[ok], "s": s[ok], "s_discrete": sd[ok],
                                  "n": n[ok]})
        result[str(judge)] = (per_order, np.repeat(pos[mine], bad[mine]))
    return result


def ppi_cells(table: ScannedTable, target: str, prediction: str) -> pd.DataFrame:
    """The PPI path's per-(judge, pair, order/id_swap) mean prediction (columns judge, pair_id,
    cell, order, x) from the engine's sums."""
    ibis = _ibis()
    t, p_a = _base(table)
    code = {"win": {"a": 1.0, "b": 0.0, "tie": 0.5}, "a": {"a": 1.0, "b": 0.0, "tie": 0.0},
            "b": {"a": 0.0, "b": 1.0, "tie": 0.0}, "tie": {"a": 0.0, "b": 0.0, "tie": 1.0}}[target]
    from_verdict = _verdict_value(t, code)
    prob = 1.0 - p_a if target == "b" else p_a
    if target == "tie" or prediction == "verdict":
        x = from_verdict
    elif prediction == "prob":
        x = prob
    else:
        x = prob.fill_null(from_verdict)
    swap = _column(t, "id_swap", False, "boolean")
    t = t.mutate(_x=x, _swap=swap, _bad=ibis.ifelse((p_a < 0) | (p_a > 1), 1, 0))
    expr = t.group_by(["judge", "pair_id", "order", "_swap"]).aggregate(
        n=t["_x"].count(), sx=t["_x"].sum(), bad_p=t["_bad"].sum())
    out = _fetch(table, expr, "sums per (judge, pair, order, id_swap)")
    n = out["n"].to_numpy(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        x = np.where(n > 0, out["sx"].to_numpy(float) / np.maximum(n, 1), np.nan)
    return pd.DataFrame({"judge": out["judge"].astype(str).to_numpy(),
                         "pair_id": out["pair_id"].astype(str).to_numpy(),
                         "cell": out["order"].astype(str) + "/" + out["_swap"].astype(str),
                         "order": out["order"].to_numpy(), "x": x})


def arrangement_cells(table: ScannedTable, prob: str) -> pd.DataFrame:
    """:func:`judgekit.arrangement_table` (before ``complete``) from the engine's sums of P(t1)
    per (judge, pair, arrangement): judges and pairs sorted, as the frame path orders them."""
    ibis = _ibis()
    t, p_a = _base(table)
    if prob != "p_a":
        if prob not in t.columns:
            raise ValueError(f"{table.name}: column {prob!r} is missing")
        p_a = t[prob].cast("float64")
    ab = t["order"] == "ab"
    swap = _column(t, "id_swap", False, "boolean")
    # X0 = (ab, no swap), X1 = (ba, swap), X2 = (ba, no swap), X3 = (ab, swap)
    code = ibis.ifelse(ab, ibis.ifelse(swap, 3, 0), ibis.ifelse(swap, 1, 2))
    p_t1 = ibis.ifelse(ab != swap, p_a, 1.0 - p_a)
    t = t.mutate(_code=code, _p=p_t1, _bad=ibis.ifelse((p_a < 0) | (p_a > 1), 1, 0))
    expr = t.group_by(["judge", "pair_id", "_code"]).aggregate(
        n=t["_p"].count(), sp=t["_p"].sum(), bad_p=t["_bad"].sum())
    out = _fetch(table, expr, "sums per (judge, pair, arrangement)")
    judge_codes, judges = pd.factorize(out["judge"].astype(str), sort=True)
    pair_codes, pairs = pd.factorize(out["pair_id"].astype(str), sort=True)
    key = judge_codes.astype(np.int64) * max(len(pairs), 1) + pair_codes
    cell, cells = pd.factorize(key, sort=True)
    count = np.zeros((len(cells), 4), dtype=np.int64)
    total = np.zeros((len(cells), 4))
    code = out["_code"].to_numpy(np.int64)
    count[cell, code] = out["n"].to_numpy(np.int64)
    total[cell, code] = np.nan_to_num(out["sp"].to_numpy(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    judge, pair = np.divmod(np.asarray(cells, dtype=np.int64), max(len(pairs), 1))
    return pd.DataFrame({
        "judge": pd.Index(judges).take(judge), "pair_id": pd.Index(pairs).take(pair),
        **{f"s{j}": s[:, j] for j in range(4)},
        "n_repeats": count.max(axis=1, initial=0).astype(np.int64),
    })
