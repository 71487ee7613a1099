"""Raw, swap-averaged, length-normalized and length-balanced win rates against a baseline."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy import special

from judgekit import _bootstrap
from judgekit._stack import caller_level
from judgekit._stamp import stamped
from judgekit.exceptions import MetricWarning
from judgekit.winrate._data import Prepared, bootstrap_counts, prepare

__all__ = ["length_balanced_win_rates", "length_normalized_win_rates", "win_rates"]

#: Temperature (characters) of the length-normalized win rate (Dubois et al. 2024, §4.4).
LN_TEMPERATURE = 500.0
#: Columns of the tidy frames returned by the functions of this module.
TIDY_COLUMNS = ["judge", "model", "baseline", "metric", "estimate", "se", "ci_low", "ci_high", "n"]


def _check_common(n_boot: int, ci: float) -> None:
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), got {ci}")


def _nan_rows(prep: Prepared, metrics: list[str], what: str) -> list[dict]:
    """NaN rows, with one MetricWarning, for the models without a usable judgment."""
    missing = prep.unusable
    if not missing:
        return []
    why = {"prob": "preference='prob' needs p_a, and none has one",
           "verdict": "preference='verdict' needs a verdict, and every one is missing",
           "auto": "every verdict is missing and there is no p_a"}[prep.preference]
    warnings.warn(
        f"{what} NaN for judge {prep.judge!r} and model(s) {missing}: none of their judgments "
        f"has a usable preference ({why})", MetricWarning, stacklevel=caller_level(),
    )
    return [{"judge": prep.judge, "model": model, "baseline": prep.baseline, "metric": metric,
             "estimate": np.nan, "se": np.nan, "ci_low": np.nan, "ci_high": np.nan, "n": 0,
             "n_invalid": int(prep.n_invalid.get(model, 0)), "orders": ""}
            for model in missing for metric in metrics]


def _resampled(
    prep: Prepared, stats: dict[str, Callable[[np.ndarray, pd.DataFrame], np.ndarray]],
    n_boot: int, ci: float, seed: int,
) -> pd.DataFrame:
    """Evaluate ``stats`` (weights (B, rows) -> values (B,)) per model on the data and on
    ``n_boot`` resamples of the instructions (the same resamples for every model)."""
    instructions = prep.instructions
    counts = bootstrap_counts(len(instructions), n_boot, seed) if n_boot and len(instructions) else None
    inst = instructions.get_indexer(prep.rows["instruction"])
    out = []
    for model, idx in sorted(prep.rows.groupby("model", sort=True).indices.items()):
        rows = prep.rows.iloc[idx]
        weights = np.vstack([np.ones((1, len(rows))), counts[:, inst[idx]]]) if counts is not None \
            else np.ones((1, len(rows)))
        if counts is not None:
            _bootstrap.warn_few_clusters(len(np.unique(inst[idx])), f"win rates of judge {prep.judge!r}, "
                                         f"model {model!r}", unit="instructions")
        for metric, fn in stats.items():
            with np.errstate(invalid="ignore", divide="ignore"):
                values = fn(weights, rows)
            boot = values[1:]
            boot = boot[np.isfinite(boot)]
            alpha = (1 - ci) / 2
            out.append({
                "judge": prep.judge, "model": model, "baseline": prep.baseline, "metric": metric,
                "estimate": values[0],
                "se": float(np.std(boot, ddof=1)) if len(boot) > 1 else np.nan,
                "ci_low": float(np.quantile(boot, alpha)) if len(boot) else np.nan,
                "ci_high": float(np.quantile(boot, 1 - alpha)) if len(boot) else np.nan,
                "n": len(rows),
                "n_invalid": int(prep.n_invalid.get(model, 0)),
                "orders": prep.orders.get(model, ""),
            })
    out += _nan_rows(prep, list(stats), " and ".join(stats) + (" are" if len(stats) > 1 else " is"))
    frame = pd.DataFrame(out, columns=[*TIDY_COLUMNS, "n_invalid", "orders"])
    if prep.unusable:
        frame = frame.sort_values("model", kind="stable").reset_index(drop=True)
    return frame


def _mean(column: str) -> Callable[[np.ndarray, pd.DataFrame], np.ndarray]:
    def fn(w: np.ndarray, rows: pd.DataFrame) -> np.ndarray:
        return 100.0 * (w @ rows[column].to_numpy(dtype=float)) / w.sum(axis=1)
    return fn


@stamped
def win_rates(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    baseline: str | None = None,
    preference: str = "auto",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Win rate of every model against a baseline, per judge: probability-weighted and discrete.

    Each pair compares a model with the baseline (either may be response a). A judgment's
    preference for the model is ``p_a`` (or 1 − ``p_a``) where the judge's probability exists,
    and its verdict otherwise (win 1, tie 1/2, loss 0). Repeats are averaged within an order and
    the orders present are averaged with equal weight (the swap-averaged win rate), then the
    pairs are averaged.

    Parameters
    ----------
    judgments, pairs : DataFrame
        The tidy tables (:mod:`judgekit.schema`); pairs need ``model_a`` and ``model_b``.
        ``instruction_id`` (else the prompt) defines the instructions resampled by the bootstrap.
    baseline : str, optional
        The reference model; inferred when exactly one model takes part in every pair.
    preference : {"auto", "prob", "verdict"}
        What ``win_rate`` is computed from: ``p_a`` where present (``"auto"``), ``p_a`` only
        (judgments without it count as invalid), or verdicts only.
    n_boot : int
        Bootstrap resamples of the instructions for ``se`` and the percentile interval.
    ci : float
        Coverage of the interval.
    seed : int
        Seeds the bootstrap.

    Returns
    -------
    DataFrame
        One row per (judge, model, metric) with ``metric`` in ``"win_rate"`` (the preference
        chosen above) and ``"discrete_win_rate"`` (verdicts), in percent: ``judge``, ``model``,
        ``baseline``, ``metric``, ``estimate``, ``se``, ``ci_low``, ``ci_high``, ``n`` (pairs),
        ``n_invalid`` (judgments without a usable preference), ``orders`` (orders judged).
        Baseline-against-itself pairs, when present, give the baseline's row.

    Notes
    -----
    win rate = 100 · mean over pairs of ȳ, where ȳ averages the judge's preference for the model
    over repeats, then over the orders ``ab``/``ba`` present. The bootstrap resamples
    instructions, so all pairs of an instruction move together.

    References
    ----------
    Dubois, Galambosi, Liang, Hashimoto (2024). Length-Controlled AlpacaEval, §2.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, *_ = jk.sim.simulate_leaderboard(2, 100, seed=1)
    >>> wr = jk.win_rates(judgments, pairs, n_boot=200)
    >>> wr[["model", "metric", "n"]].head(2)
         model             metric    n
    0  model_0           win_rate  100
    1  model_0  discrete_win_rate  100
    """
    _check_common(n_boot, ci)
    frames = []
    for prep in prepare(judgments, pairs, baseline, preference=preference,
                        require_lengths=False).values():
        frames.append(_resampled(
            prep, {"win_rate": _mean("y"), "discrete_win_rate": _mean("y_discrete")},
            n_boot, ci, seed,
        ))
        if len(prep.identity):
            ident = prep.identity
            for metric, col in (("win_rate", "y"), ("discrete_win_rate", "y_discrete")):
                frames.append(pd.DataFrame([{
                    "judge": prep.judge, "model": prep.baseline, "baseline": prep.baseline,
                    "metric": metric, "estimate": 100.0 * ident[col].mean(), "se": np.nan,
                    "ci_low": np.nan, "ci_high": np.nan, "n": len(ident), "n_invalid": 0,
                    "orders": "/".join(np.sort(pd.unique(ident["orders"]).astype(str))),
                }]))
    return pd.concat(frames, ignore_index=True)


def _normalized(temperature: float) -> Callable[[np.ndarray, pd.DataFrame], np.ndarray]:
    def fn(w: np.ndarray, rows: pd.DataFrame) -> np.ndarray:
        total = w.sum(axis=1)
        wr = 100.0 * (w @ rows["y"].to_numpy(dtype=float)) / total
        len_m = (w @ rows["len_model"].to_numpy(dtype=float)) / total
        len_b = (w @ rows["len_baseline"].to_numpy(dtype=float)) / total
        return wr * 2.0 * special.expit((len_b - len_m) / temperature)
    return fn


@stamped
def length_normalized_win_rates(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    baseline: str | None = None,
    temperature: float = LN_TEMPERATURE,
    preference: str = "auto",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Length-normalized win rate: the win rate scaled by a logistic function of the length gap.

    LN = WR · 2 · σ((L̄_baseline − L̄_model) / T), with L̄ the mean response length (characters, from
    ``len_a``/``len_b``) over the model's pairs and T the ``temperature``. A model as long as the
    baseline keeps its win rate; a longer one is scaled down, a shorter one up.

    Parameters
    ----------
    judgments, pairs, baseline
        As in :func:`win_rates`.
    temperature : float, default 500
        T in characters, > 0; 500 is the value Dubois et al. (2024) found best on AlpacaEval.
    preference, n_boot, ci, seed
        As in :func:`win_rates`.

    Returns
    -------
    DataFrame
        The columns of :func:`win_rates`, with ``metric == "ln_win_rate"``.

    Notes
    -----
    This is the "length-normalized win rate" compared in Dubois et al. (2024), Fig. 6. Unlike the
    length-controlled win rate it is not a win rate: its range depends on the model's length.

    References
    ----------
    Dubois, Galambosi, Liang, Hashimoto (2024). Length-Controlled AlpacaEval, §4.4.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, *_ = jk.sim.simulate_leaderboard(2, 100, seed=1)
    >>> jk.length_normalized_win_rates(judgments, pairs, n_boot=0)["metric"].unique().tolist()
    ['ln_win_rate']
    """
    _check_common(n_boot, ci)
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    return pd.concat([
        _resampled(prep, {"ln_win_rate": _normalized(temperature)}, n_boot, ci, seed)
        for prep in prepare(judgments, pairs, baseline, preference=preference).values()
    ], ignore_index=True)


def _balanced(w: np.ndarray, rows: pd.DataFrame) -> np.ndarray:
    y = rows["y"].to_numpy(dtype=float)
    longer = (rows["len_model"] > rows["len_baseline"]).to_numpy()
    shorter = (rows["len_model"] < rows["len_baseline"]).to_numpy()
    overall = (w @ y) / w.sum(axis=1)
    strata = []
    for mask in (longer, shorter):
        total = w[:, mask].sum(axis=1)
        mean = np.divide(w[:, mask] @ y[mask], total, out=np.full(len(w), np.nan), where=total > 0)
        strata.append(np.where(total > 0, mean, overall))
    return 100.0 * (strata[0] + strata[1]) / 2.0


@stamped
def length_balanced_win_rates(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    baseline: str | None = None,
    preference: str = "auto",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Length-balanced win rate: the mean of the win rates where the model is longer and shorter.

    LB = ½ (WR over pairs where the model's response is longer than the baseline's + WR over
    pairs where it is shorter). Pairs of equal length enter neither stratum. When a stratum is
    empty the overall win rate stands in for it (``n_longer`` / ``n_shorter`` show when).

    Parameters
    ----------
    judgments, pairs, baseline, preference, n_boot, ci, seed
        As in :func:`win_rates`.

    Returns
    -------
    DataFrame
        The columns of :func:`win_rates` with ``metric == "lb_win_rate"``, plus ``n_longer`` and
        ``n_shorter``.

    Notes
    -----
    Stratification on "longer / shorter" is the length-balanced win rate proposed by Duong (2024)
    and compared in Dubois et al. (2024), Fig. 6. With few pairs in one stratum it is noisy and
    easy to game (truncating losing answers moves them into the "shorter" stratum).

    References
    ----------
    Dubois, Galambosi, Liang, Hashimoto (2024). Length-Controlled AlpacaEval, §4.4.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, *_ = jk.sim.simulate_leaderboard(2, 100, seed=1)
    >>> lb = jk.length_balanced_win_rates(judgments, pairs, n_boot=0)
    >>> bool((lb["n_longer"] + lb["n_shorter"] <= lb["n"]).all())
    True
    """
    _check_common(n_boot, ci)
    frames = []
    for prep in prepare(judgments, pairs, baseline, preference=preference).values():
        df = _resampled(prep, {"lb_win_rate": _balanced}, n_boot, ci, seed)
        rows = prep.rows
        longer = (rows["len_model"] > rows["len_baseline"]).groupby(rows["model"]).sum()
        shorter = (rows["len_model"] < rows["len_baseline"]).groupby(rows["model"]).sum()
        df["n_longer"] = df["model"].map(longer).fillna(0).astype("int64")
        df["n_shorter"] = df["model"].map(shorter).fillna(0).astype("int64")
        frames.append(df)
    return pd.concat(frames, ignore_index=True)
