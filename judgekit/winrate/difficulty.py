"""Instruction difficulties γ shipped with judgekit, fitted once on a public leaderboard.

The LC GLM needs γ_x, the difficulty of each instruction for one judge. Fitted on a single
model's annotations, γ absorbs part of that model's own outcomes and its LC win rate drifts
from the leaderboard's; fitted jointly on many models, it is a property of the instructions and
the judge alone, so it can be reused for a new model (as AlpacaEval does). judgekit ships, for
each annotator whose annotations are public, the γ fitted on the public leaderboard's models,
with its provenance: the models and the sha256 of their annotation files, the upstream commit,
the fitting method, the judgekit version, the held-out accuracy of single-file LC win rates, and
the maintainer script that regenerates it (``tools/fit_instruction_difficulty.py``).

Files: ``judgekit/data/difficulty/<annotator>.csv`` (``instruction_id``, ``gamma``) and
``<annotator>.json`` (the provenance).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import pandas as pd

__all__ = ["load_difficulty"]

_PACKAGE = "judgekit.data"
_FOLDER = "difficulty"


def _folder():
    return resources.files(_PACKAGE) / _FOLDER


@cache
def shipped_annotators() -> tuple[str, ...]:
    """The annotators (judge names) with a shipped γ."""
    folder = _folder()
    if not folder.is_dir():
        return ()
    return tuple(sorted(p.name.removesuffix(".json") for p in folder.iterdir()
                        if p.name.endswith(".json")))


@cache
def _read(annotator: str) -> tuple[pd.Series, dict[str, Any]]:
    folder = _folder()
    with (folder / f"{annotator}.json").open("r", encoding="utf-8") as fh:
        meta = json.load(fh)
    with (folder / f"{annotator}.csv").open("r", encoding="utf-8") as fh:
        table = pd.read_csv(fh, dtype={"instruction_id": str})
    gamma = pd.Series(table["gamma"].to_numpy(dtype=float),
                      index=pd.Index(table["instruction_id"], name="instruction_id"), name="gamma")
    return gamma, meta


def load_difficulty(annotator: str = "weighted_alpaca_eval_gpt4_turbo"):
    """The instruction difficulty γ that judgekit ships for a public annotator.

    :func:`judgekit.lc_win_rates` uses it by default (``difficulty="auto"``) for a judge of that
    name with the same baseline whose instructions it covers, e.g. one AlpacaEval
    ``annotations.json`` read with :func:`judgekit.read_alpacaeval`.

    Parameters
    ----------
    annotator : str
        The judge's name as AlpacaEval spells it (the ``annotator`` field of its annotations).

    Returns
    -------
    InstructionDifficulty
        ``gamma`` by instruction id, ``length_prior`` and ``l2`` of the joint fit, ``judge``,
        ``baseline`` and ``source``: the provenance (``models`` fitted on, ``files`` with their
        sha256, ``upstream`` repository and commit, ``method``, ``judgekit_version``,
        ``script``, and ``held_out``: how far the LC win rate of one model's file, fitted with a
        γ that left that model out, sat from the published leaderboard).

    Raises
    ------
    ValueError
        For an annotator without a shipped γ (the message lists those shipped).

    Examples
    --------
    >>> import judgekit as jk
    >>> d = jk.load_difficulty("weighted_alpaca_eval_gpt4_turbo")
    >>> len(d.gamma), d.baseline, d.source["upstream"]["repo"]
    (805, 'gpt4_1106_preview', 'tatsu-lab/alpaca_eval')
    """
    from judgekit.winrate.lc import InstructionDifficulty

    if annotator not in shipped_annotators():
        raise ValueError(f"judgekit ships no instruction difficulty for {annotator!r}; it ships "
                         f"{list(shipped_annotators())}. Fit one with jk.instruction_difficulty "
                         "on many models of that judge and pass it as difficulty=")
    gamma, meta = _read(annotator)
    return InstructionDifficulty(
        gamma=gamma.copy(), length_prior=float(meta["length_prior"]), l2=float(meta["l2"]),
        judge=meta["annotator"], baseline=meta["baseline"], source=dict(meta),
    )


def _unusable(judge: str, baseline: str, instructions: pd.Index) -> str | None:
    """Why the shipped γ for ``judge`` does not apply to these data (None when it does)."""
    gamma, meta = _read(judge)
    if meta["baseline"] != baseline:
        return f"its baseline is {meta['baseline']!r}, not {baseline!r}"
    missing = int((~pd.Index(instructions).isin(gamma.index)).sum())
    if missing:
        return f"{missing} of the {len(instructions)} instructions are not among its {len(gamma)}"
    return None


def resolve_difficulty(prep, difficulty, n_judges: int, l2, n_folds: int, seed: int):
    """γ for one judge of :func:`judgekit.lc_win_rates` and where it came from: ``"shipped"``
    (``"auto"`` and :func:`load_difficulty` applies), ``"fitted"`` or ``"given"``."""
    from judgekit.winrate.lc import InstructionDifficulty, _fit_difficulty

    if difficulty is None or isinstance(difficulty, str):
        if (difficulty == "auto" and prep.judge in shipped_annotators()
                and _unusable(prep.judge, prep.baseline, prep.instructions) is None):
            return load_difficulty(prep.judge), "shipped"
        return _fit_difficulty(prep, l2, None, n_folds, seed), "fitted"
    if isinstance(difficulty, InstructionDifficulty):
        if n_judges > 1:
            raise ValueError("judgments hold several judges; pass difficulty as a mapping "
                             "judge -> InstructionDifficulty")
        return difficulty, "given"
    if prep.judge not in difficulty:
        raise ValueError(f"difficulty has no entry for judge {prep.judge!r}")
    return difficulty[prep.judge], "given"


def difficulty_note(prep, diff, how: str) -> dict[str, Any]:
    """``attrs["judgekit_difficulty"][judge]`` of :func:`judgekit.lc_win_rates`: the source of
    γ, the number of models it was fitted on and a sentence on what that means for LC."""
    if how == "shipped":
        src = diff.source or {}
        return {"source": how, "models": len(src.get("models", [])), "note": accuracy_note(src),
                "held_out": dict(src.get("held_out", {}))}
    if how == "fitted":
        n = len(prep.models)
        note = f"LC uses an instruction difficulty fitted on the {n} model(s) of these data"
    else:
        n = len(diff.terms) if diff.terms is not None else None
        note = ("LC uses the instruction difficulty given" +
                (f" (fitted on {n} models)" if n is not None else ""))
    shipped = prep.judge in shipped_annotators()
    if how == "fitted" and shipped:
        why = _unusable(prep.judge, prep.baseline, prep.instructions)
        note += (f"; judgekit's shipped γ for {prep.judge} was not used ({why})" if why else
                 f"; judgekit's shipped γ for {prep.judge} was not asked for (difficulty='fit')")
    if how == "fitted" and n < 10:
        note += ". With few models γ absorbs part of each model's own outcomes"
        if shipped:
            h = _read(prep.judge)[1]["held_out"]
            note += (f": for {prep.judge}, one file fitted alone sat {h['self_fit_mae']:.2f} "
                     f"points from the published leaderboard on average (max "
                     f"{h['self_fit_max']:.2f}), against {h['mae']:.2f} (max {h['max']:.2f}) "
                     "with the shipped γ")
        else:
            note += ("; pass a γ fitted on many models of this judge as difficulty= "
                     "(jk.instruction_difficulty)")
    return {"source": how, "models": n, "note": note + "."}


def accuracy_note(source: dict[str, Any]) -> str:
    """One sentence: how far single-file LC win rates with this shipped γ sat from the
    published leaderboard on models left out of the fit."""
    h = source["held_out"]
    return (f"LC uses the instruction difficulty judgekit ships for {source['annotator']} "
            f"(fitted on {len(source['models'])} public models). On {h['n']} models left out of "
            f"that fit, one file's LC win rate sat {h['mae']:.2f} points from the published "
            f"leaderboard on average (max {h['max']:.2f}, {h['max_model']}); {h['n_aligned']} "
            f"models whose published LC is not affected by upstream's misaligned lookup: "
            f"{h['mae_aligned']:.2f} (max {h['max_aligned']:.2f}).")
