"""The truncation attack on length-controlled win rates (Dubois et al. 2024, §4.3)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgekit._columns import member
from judgekit._stamp import stamped
from judgekit.schema import validate_judgments, validate_pairs
from judgekit.winrate._data import prepare
from judgekit.winrate._glm import single_threaded
from judgekit.winrate.lc import LENGTH_PENALTY, InstructionDifficulty, _fit_difficulty, lc_win_rates

__all__ = ["truncation_attack"]


@stamped
def truncation_attack(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    model: str,
    *,
    baseline: str | None = None,
    difficulty: InstructionDifficulty | None = None,
    min_preference: float = 0.5,
    max_length_ratio: float | None = None,
    truncate_to: int = 10,
    truncated_preference: float = 0.0,
    length_penalty: float = LENGTH_PENALTY,
    preference: str = "auto",
    seed: int = 0,
) -> pd.DataFrame:
    """Simulate truncating all but a model's best answers and refit its LC win rate.

    The attacker keeps the answers the judge already prefers (preference for the model of at
    least ``min_preference``, and optionally no longer than ``max_length_ratio`` times the
    baseline's) and cuts every other answer to ``truncate_to`` characters, which the judge then
    rejects (its preference for the model becomes ``truncated_preference``). Poor quality is
    then perfectly confounded with short length, and a GLM that lets the length term explain it
    credits the model with a high win rate "at equal length". The extra penalty on the length
    coefficient is the defence; this function shows the LC win rate with and without it.

    Parameters
    ----------
    judgments, pairs : DataFrame
        The tidy tables with every model of the leaderboard (γ is fitted on all of them unless
        ``difficulty`` is given; the attacker cannot move it).
    model : str
        The model whose answers are truncated.
    baseline : str, optional
        The reference model (inferred when one model takes part in every pair).
    difficulty : InstructionDifficulty, optional
        A fitted γ; default :func:`judgekit.instruction_difficulty` on all the data.
    min_preference : float
        Answers the judge prefers at least this much are kept.
    max_length_ratio : float, optional
        Keep only answers at most this many times as long as the baseline's.
    truncate_to : int
        Characters left in a truncated answer.
    truncated_preference : float
        The judge's preference for a truncated answer (GPT-4-turbo gave the truncated answers of
        AlpacaEval's ``gpt4_gamed`` a mean of 0.003).
    length_penalty : float
        The penalty compared with no penalty (0).
    preference : {"auto", "prob", "verdict"}
        As in :func:`judgekit.win_rates`.
    seed : int
        Seeds the cross-validation folds.

    Returns
    -------
    DataFrame
        Four rows, ``scenario`` ("original", "truncated") × ``length_penalty`` (the given value
        and 0): ``model``, ``scenario``, ``length_penalty``, ``n``, ``n_kept``, ``avg_length``,
        ``win_rate``, ``lc_win_rate``, ``theta``, ``phi``, ``psi``.

    References
    ----------
    Dubois, Galambosi, Liang, Hashimoto (2024). Length-Controlled AlpacaEval, §4.3.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, *_ = jk.sim.simulate_leaderboard(6, 150, seed=3)
    >>> gamma = jk.instruction_difficulty(judgments, pairs, l2=1.0)
    >>> out = jk.truncation_attack(judgments, pairs, "model_3", difficulty=gamma)
    >>> lc = out.pivot(index="scenario", columns="length_penalty", values="lc_win_rate")
    >>> bool(lc.loc["truncated", 0.0] > lc.loc["truncated", 20.0] > lc.loc["original", 20.0])
    True
    """
    if not 0 <= truncated_preference <= 1:
        raise ValueError(f"truncated_preference must be in [0, 1], got {truncated_preference}")
    if truncate_to < 0:
        raise ValueError(f"truncate_to must be >= 0, got {truncate_to}")
    pairs = validate_pairs(pairs)
    judgments = validate_judgments(judgments, pairs)
    preps = prepare(judgments, pairs, baseline, preference=preference)
    if len(preps) > 1:
        raise ValueError(f"judgments hold several judges {sorted(preps)}; pass one judge's rows")
    prep = next(iter(preps.values()))
    if model == prep.baseline or model not in prep.models:
        raise ValueError(f"model {model!r} is not a judged non-baseline model; have {prep.models}")
    if difficulty is None:
        with single_threaded():
            difficulty = _fit_difficulty(prep, "cv", None, 5, seed)

    rows = prep.rows[prep.rows["model"] == model]
    keep = rows["y"] >= min_preference
    if max_length_ratio is not None:
        keep &= rows["len_model"] <= max_length_ratio * rows["len_baseline"]
    kept_ids = rows.loc[keep, "pair_id"]
    attacked = f"{model} (truncated)"
    of_model = member(pairs["pair_id"], rows["pair_id"])
    mine = pairs[of_model].copy()
    model_is_b = (mine["model_b"].astype(str) == model).to_numpy()
    cut = ~member(mine["pair_id"], kept_ids)
    new_ids = "truncated/" + mine["pair_id"]
    for side, is_side in (("a", ~model_is_b), ("b", model_is_b)):
        sel = cut & is_side
        mine.loc[sel, f"response_{side}"] = mine.loc[sel, f"response_{side}"].str.slice(0, truncate_to)
        mine.loc[is_side, f"model_{side}"] = attacked
    mine = mine.drop(columns=["len_a", "len_b"])
    mine["pair_id"] = new_ids.to_numpy()

    j_kept = judgments[member(judgments["pair_id"], kept_ids)].copy()
    j_kept["pair_id"] = "truncated/" + j_kept["pair_id"]
    cut_pairs = mine[cut]
    p_model = float(truncated_preference)
    model_side = np.where(cut_pairs["model_b"].astype(str) == attacked, "b", "a")
    j_cut = pd.DataFrame({
        "pair_id": cut_pairs["pair_id"].to_numpy(), "judge": prep.judge, "order": "ab", "repeat": 0,
        "verdict": np.where(p_model > 0.5, model_side, np.where(p_model < 0.5,
                            np.where(model_side == "b", "a", "b"), "tie")).astype(object),
        "p_a": np.where(model_side == "a", p_model, 1.0 - p_model),
    })
    base_pairs = pairs[of_model]
    all_pairs = pd.concat([base_pairs, mine], ignore_index=True)
    cols = ["pair_id", "judge", "order", "repeat", "verdict", "p_a"]
    all_j = pd.concat([judgments.loc[member(judgments["pair_id"], rows["pair_id"]), cols],
                       j_kept[cols], j_cut], ignore_index=True)

    out = []
    for penalty in (float(length_penalty), 0.0):
        lb = lc_win_rates(all_j, all_pairs, baseline=prep.baseline, difficulty=difficulty,
                          length_penalty=penalty, n_boot=0, preference=preference, seed=seed)
        for scenario, name in (("original", model), ("truncated", attacked)):
            r = lb[lb["model"] == name].iloc[0]
            out.append({
                "model": model, "scenario": scenario, "length_penalty": penalty, "n": int(r["n"]),
                "n_kept": int(keep.sum()) if scenario == "truncated" else int(r["n"]),
                "avg_length": r["avg_length"], "win_rate": r["win_rate"],
                "lc_win_rate": r["lc_win_rate"], "theta": r["theta"], "phi": r["phi"],
                "psi": r["psi"],
            })
    return pd.DataFrame(out)
