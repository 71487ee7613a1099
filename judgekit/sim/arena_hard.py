"""Simulated Arena-Hard leaderboards of known truth: a judge that rewards length and markdown."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from judgekit._stamp import stamped

__all__ = ["ArenaSimulation", "simulate_arena_hard"]

_WORDS = np.array(["the", "a", "model", "answer", "result", "value", "method", "step", "data", "list", "code", "check", "first", "then", "output", "input", "number", "case", "because", "so", "it", "is", "we", "can", "use"])


class ArenaSimulation(NamedTuple):
    """What :func:`simulate_arena_hard` returns."""

    pairs: pd.DataFrame
    judgments: pd.DataFrame
    truth: pd.DataFrame


def _answer(gen: np.random.Generator, lines: np.ndarray, n_words: int, markdown: float) -> str:
    """About ``n_words`` words in lines of ten; each line a header, a list item (bold or not)
    or plain text, the first two at rates that grow with ``markdown``."""
    picked = lines[gen.integers(0, len(lines), size=max(1, n_words // 10))]
    r = gen.random(len(picked))
    kind = np.where(r < 0.06 * markdown, "## ", np.where(r < 0.25 * markdown, "- **x** ",
                    np.where(r < 0.5 * markdown, "- ", "")))
    return "\n".join(np.char.add(kind, picked))


@stamped
def simulate_arena_hard(
    n_models: int = 8,
    n_questions: int = 300,
    *,
    quality: np.ndarray | None = None,
    verbosity: np.ndarray | None = None,
    markdown: np.ndarray | None = None,
    length_effect: float = 1.0,
    markdown_effect: float = 0.5,
    baseline: str = "baseline",
    judge: str = "sim-judge",
    seed: int = 0,
) -> ArenaSimulation:
    """An Arena-Hard leaderboard whose judge prefers better, longer and more formatted answers.

    Each model answers every question with a length (words) drawn around ``exp(verbosity)`` times
    the baseline's and markdown (headers, bold list items) at rate ``markdown``. For each
    question the judge sees both orders; in each game its latent preference for the model is
    ``quality + length_effect · Δlen + markdown_effect · Δmd + logistic noise``, with Δlen =
    (len_m − len_b)/(len_m + len_b) and Δmd the same difference of markdown-element counts, and
    its label is ``B>>A`` / ``B>A`` / ``A=B`` / ``A>B`` / ``A>>B`` by thresholds ±0.5, ±2.

    Parameters
    ----------
    n_models, n_questions : int
        Models besides the baseline, and questions.
    quality, verbosity, markdown : array, optional
        Per model (length ``n_models``): true quality (logit of the judge's preference at equal
        style), log length ratio to the baseline, and markdown rate in [0, 1]. Defaults: evenly
        spaced quality in [-1.5, 1.5]; verbosity and markdown drawn independently of quality.
    length_effect, markdown_effect : float
        How much the judge rewards relative length and markdown (0: a style-blind judge).
    baseline, judge : str
        Names.
    seed : int
        Seeds everything.

    Returns
    -------
    ArenaSimulation
        ``pairs`` (texts, ``model_a`` the baseline), ``judgments`` (both games, ``score`` label and
        ``margin``, as :func:`judgekit.read_arena_hard` gives them) and ``truth``: one row per
        model with ``quality``, ``verbosity``, ``markdown``, ``quality_rank`` (1 = best) and
        ``avg_length`` (words).

    Examples
    --------
    >>> import judgekit as jk
    >>> sim = jk.sim.simulate_arena_hard(4, 50, seed=1)
    >>> len(sim.pairs), len(sim.judgments), sim.truth["quality_rank"].tolist()
    (200, 400, [4, 3, 2, 1])
    """
    gen = np.random.default_rng(seed)
    quality = np.linspace(-1.5, 1.5, n_models) if quality is None else np.asarray(quality, float)
    verbosity = gen.normal(0.3, 0.5, n_models) if verbosity is None else np.asarray(verbosity, float)
    markdown = gen.uniform(0, 1, n_models) if markdown is None else np.asarray(markdown, float)
    for name, arr in (("quality", quality), ("verbosity", verbosity), ("markdown", markdown)):
        if arr.shape != (n_models,):
            raise ValueError(f"{name} must have one value per model ({n_models}), got {arr.shape}")
    models = [f"model-{i:02d}" for i in range(n_models)]
    base_words = np.maximum(20, gen.lognormal(np.log(250), 0.5, n_questions)).astype(int)
    base_md = 0.3
    lines = np.array([" ".join(gen.choice(_WORDS, size=10)) for _ in range(500)])
    base_text = [_answer(gen, lines, int(n), base_md) for n in base_words]
    pair_rows, rec = [], []
    lengths = np.zeros(n_models)
    labels = np.array(["B>>A", "B>A", "A=B", "A>B", "A>>B"])  # game 1: A is the baseline
    for m, model in enumerate(models):
        words = np.maximum(5, base_words * np.exp(verbosity[m] + gen.normal(0, 0.3, n_questions))).astype(int)
        lengths[m] = words.mean()
        for q in range(n_questions):
            text = _answer(gen, lines, int(words[q]), markdown[m])
            pid = f"sim/{model}/q{q:04d}"
            pair_rows.append({"pair_id": pid, "prompt": f"Question {q}", "response_a": base_text[q],
                              "response_b": text, "model_a": baseline, "model_b": model,
                              "instruction_id": f"q{q:04d}", "dataset": "simulated-arena-hard"})
            la, lb = len(base_text[q]), len(text)
            md_a = base_text[q].count("\n## ") + base_text[q].count("\n- ")
            md_b = text.count("\n## ") + text.count("\n- ")
            latent_mean = (quality[m] + length_effect * (lb - la) / (la + lb)
                           + markdown_effect * (md_b - md_a) / (md_a + md_b + 1))
            for order in ("ab", "ba"):
                latent = latent_mean + gen.logistic()
                grade = int(np.digitize(latent, [-2.0, -0.5, 0.5, 2.0]))  # 0..4: model better
                label = labels[4 - grade] if order == "ab" else labels[grade]
                margin = [2, 1, 0, -1, -2][grade]            # preference for response a
                rec.append({"pair_id": pid, "judge": judge, "order": order, "score": str(label),
                            "margin": margin,
                            "verdict": "a" if margin > 0 else "b" if margin < 0 else "tie"})
    pairs = pd.DataFrame(pair_rows)
    judgments = pd.DataFrame(rec)
    judgments["margin"] = judgments["margin"].astype("Int64")
    rank = (-quality).argsort().argsort() + 1
    truth = pd.DataFrame({"model": models, "quality": quality, "verbosity": verbosity,
                          "markdown": markdown, "quality_rank": rank, "avg_length": lengths})
    return ArenaSimulation(pairs, judgments, truth)
