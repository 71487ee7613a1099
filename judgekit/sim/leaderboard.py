"""A simulated leaderboard drawn from the length-controlled GLM, with its true parameters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import special

from judgekit._stamp import stamped

__all__ = ["LeaderboardSimulation", "simulate_leaderboard"]

_WORDS = (
    "the", "judge", "reads", "both", "answers", "and", "weighs", "accuracy", "clarity", "depth",
    "before", "it", "picks", "one", "while", "longer", "answers", "often", "look", "thorough",
)


class LeaderboardSimulation(NamedTuple):
    """``(pairs, judgments, truth, gamma)`` from :func:`simulate_leaderboard`."""

    pairs: pd.DataFrame
    judgments: pd.DataFrame
    truth: pd.DataFrame
    gamma: pd.Series


def _filler(n_chars: int) -> str:
    sentence = " ".join(_WORDS) + ". "
    return sentence * (n_chars // len(sentence) + 1)


@stamped
def simulate_leaderboard(
    n_models: int = 5,
    n_instructions: int = 400,
    *,
    theta: Sequence[float] | None = None,
    phi: Sequence[float] | float = 1.5,
    psi: Sequence[float] | float = 1.0,
    length_shift: Sequence[float] | None = None,
    gamma_sd: float = 1.0,
    baseline_length: float = 1500.0,
    soft: bool = False,
    baseline: str = "baseline",
    judge: str = "sim-judge",
    seed: int = 0,
) -> LeaderboardSimulation:
    """Simulate judgments of several models against a baseline from the LC GLM, with the truth.

    For model m and instruction x the judge prefers the model with probability
    σ(θ_m + φ_m·tanh(Δ/sd_m(Δ)) + ψ_m·γ_x), where Δ = len(model) − len(baseline) in characters
    and γ_x ~ N(0, ``gamma_sd``) is the instruction's difficulty. Response lengths are log-normal
    around ``baseline_length``; model m's are shifted by ``length_shift[m]`` on the log scale.

    Parameters
    ----------
    n_models, n_instructions : int
        Models (besides the baseline) and instructions.
    theta, phi, psi : float or sequence of float
        θ_m, φ_m, ψ_m (one value for all models, or one per model). θ defaults to evenly spaced
        values in [-2, 0.5].
    length_shift : sequence of float, optional
        Mean log-length ratio of each model to the baseline (default: evenly spaced in [-0.6, 0.6]).
    gamma_sd : float
        Standard deviation of the instruction difficulties γ_x.
    baseline_length : float
        Median length of the baseline's responses (characters).
    soft : bool
        False: each judgment is a verdict drawn with the GLM's probability (``p_a`` missing).
        True: the judge reports the GLM's probability as ``p_a`` (verdict = the likelier side).
    baseline, judge : str
        Names of the baseline model and of the judge.
    seed : int
        Seeds every draw.

    Returns
    -------
    LeaderboardSimulation
        ``pairs`` (baseline as response a, model as b, with ``model_a``, ``model_b``,
        ``instruction_id``), ``judgments`` (one per pair, order ``ab``) and ``truth``: one row
        per model with ``theta``, ``phi``, ``psi``, ``length_scale`` (sd of Δ), the true
        ``lc_win_rate`` = 100·mean_x σ(θ_m + ψ_m γ_x) and the expected raw ``win_rate``;
        ``gamma``: the true difficulties γ_x by ``instruction_id``.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, truth, gamma = jk.sim.simulate_leaderboard(3, 50, seed=0)
    >>> len(pairs), sorted(truth.index)
    (150, ['model_0', 'model_1', 'model_2'])
    """
    if n_models < 1 or n_instructions < 2:
        raise ValueError("need n_models >= 1 and n_instructions >= 2")
    rng = np.random.default_rng(seed)
    models = [f"model_{k}" for k in range(n_models)]

    def per_model(value, name):
        arr = np.broadcast_to(np.asarray(value, dtype=float), (n_models,)) if np.ndim(value) == 0 \
            else np.asarray(value, dtype=float)
        if arr.shape != (n_models,):
            raise ValueError(f"{name} must be a number or have one value per model ({n_models})")
        return arr

    theta = per_model(np.linspace(-2.0, 0.5, n_models) if theta is None else theta, "theta")
    phi = per_model(phi, "phi")
    psi = per_model(psi, "psi")
    shift = per_model(np.linspace(-0.6, 0.6, n_models) if length_shift is None else length_shift,
                      "length_shift")
    gamma = rng.normal(0.0, gamma_sd, n_instructions)
    iids = [f"inst-{i:04d}" for i in range(n_instructions)]
    len_b = np.maximum(20, np.exp(rng.normal(np.log(baseline_length), 0.5, n_instructions))).astype(int)
    prompts = [f"Simulated instruction {i}." for i in range(n_instructions)]
    lengths_m = [np.maximum(5, np.round(len_b * np.exp(rng.normal(shift[m], 0.5, n_instructions))))
                 for m in range(n_models)]
    filler = _filler(int(max(len_b.max(), max(x.max() for x in lengths_m))) + 40)
    base_text = [(f"[{i} base] " + filler)[: int(k)] for i, k in enumerate(len_b)]

    pair_rows, judg_rows, truth = [], [], []
    for m, name in enumerate(models):
        len_m = lengths_m[m]
        delta = len_m - len_b
        scale = float(np.std(delta, ddof=1))
        eta = theta[m] + phi[m] * np.tanh(delta / scale) + psi[m] * gamma
        p = special.expit(eta)
        won = rng.random(n_instructions) < p
        for i in range(n_instructions):
            pid = f"{name}/{iids[i]}"
            pair_rows.append((pid, prompts[i], base_text[i], (f"[{i} {name}] " + filler)[: int(len_m[i])],
                              baseline, name, iids[i]))
            if soft:
                judg_rows.append((pid, "a" if p[i] < 0.5 else "b", 1.0 - p[i]))
            else:
                judg_rows.append((pid, "b" if won[i] else "a", np.nan))
        truth.append({
            "model": name, "theta": theta[m], "phi": phi[m], "psi": psi[m], "length_scale": scale,
            "lc_win_rate": 100.0 * float(np.mean(special.expit(theta[m] + psi[m] * gamma))),
            "win_rate": 100.0 * float(np.mean(p)),
        })
    pairs = pd.DataFrame(pair_rows, columns=["pair_id", "prompt", "response_a", "response_b",
                                             "model_a", "model_b", "instruction_id"])
    pairs.insert(4, "label", None)
    pairs["dataset"] = "simulated-leaderboard"
    judgments = pd.DataFrame(judg_rows, columns=["pair_id", "verdict", "p_a"])
    judgments.insert(1, "judge", judge)
    judgments.insert(2, "order", "ab")
    judgments.insert(3, "repeat", 0)
    judgments["verdict"] = judgments["verdict"].astype(object)
    return LeaderboardSimulation(
        pairs, judgments, pd.DataFrame(truth).set_index("model"),
        pd.Series(gamma, index=pd.Index(iids, name="instruction_id"), name="gamma"),
    )
