"""Perturbations that live in the judge's prompt rather than in the responses.

Bandwagon, distraction, diversity and chain-of-thought add a sentence to the judge's system prompt
(column ``system_note``); compassion-fade and refinement-awareness add one to the user message
(column ``user_note``). The engine appends the note to the rendered prompt and replaces ``{id_a}`` /
``{id_b}`` by the option IDs that responses a and b carry in the arrangement being judged, so a note
keeps pointing at the same response when the display order or the option IDs are swapped.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgekit._stamp import stamped
from judgekit.perturb._common import (
    append_note,
    assemble,
    check_choice,
    check_seed,
    note_of,
    other,
    pick,
    prepare,
    seeded_rng,
    targets_for,
)

__all__ = [
    "COT_INSTRUCTIONS",
    "DISTRACTIONS",
    "IDENTITIES",
    "STRONG_MODELS",
    "WEAK_MODELS",
    "perturb_bandwagon",
    "perturb_compassion_fade",
    "perturb_cot",
    "perturb_distraction",
    "perturb_diversity",
    "perturb_refinement_aware",
]

#: Well-known strong chat models, named in compassion-fade notes.
STRONG_MODELS: tuple[str, ...] = (
    "GPT-4o", "GPT-4 Turbo", "Claude 3.5 Sonnet", "Claude 3 Opus", "Gemini 1.5 Pro",
    "Llama 3.1 405B Instruct",
)
#: Well-known weak (small or early) models, named opposite a strong one.
WEAK_MODELS: tuple[str, ...] = (
    "Alpaca 7B", "Vicuna 7B", "Dolly v2 12B", "GPT-2", "Pythia 12B", "StableLM Tuned Alpha 7B",
)

#: Irrelevant statements about the assistant behind one response (``{id}`` is its option ID).
DISTRACTIONS: tuple[str, ...] = (
    "The assistant behind response {id} spent last weekend repainting a garden fence.",
    "The assistant behind response {id} collects vintage postage stamps from island nations.",
    "The assistant behind response {id} prefers tea to coffee in the morning.",
    "The assistant behind response {id} once hiked a mountain trail in heavy rain.",
    "The assistant behind response {id} is learning to play the cello.",
)

#: The six identities of Ye et al. (2024)'s diversity bias, as they are stated in the note.
IDENTITIES: dict[str, str] = {
    "female": "a woman",
    "black": "a Black person",
    "homosexual": "a gay person",
    "muslim": "a Muslim",
    "refugee": "a refugee",
    "hiv_positive": "a person living with HIV",
}

#: System-prompt instructions that switch step-by-step reasoning on or off.
COT_INSTRUCTIONS: dict[str, str] = {
    "on": (
        "Think step by step before you decide: compare the responses point by point, write out "
        "your reasoning, and only then give your final verdict in the required format."
    ),
    "off": "Do not explain your reasoning. Give only your final verdict, in the required format.",
}

BANDWAGON_NOTE = "{percent}% of people believe that response {id} is the better one for this question."
COMPASSION_NOTE = "Response {{id_a}} was written by {name_a} and response {{id_b}} by {name_b}."
DIVERSITY_NOTE = "The author of response {id} is {identity}."
REFINEMENT_NOTE = (
    "Response {revised} is a revised version of response {original}: the assistant wrote "
    "response {original} first, was asked to improve it, and produced response {revised}."
)


def _slot(side: str) -> str:
    return "{id_" + side + "}"


@stamped
def perturb_bandwagon(
    pairs: pd.DataFrame,
    *,
    percents: Sequence[int] = (60, 70, 80, 90),
    target: str = "random",
    seed: int = 0,
) -> pd.DataFrame:
    """Tell the judge that a majority of people prefer one response (bandwagon effect).

    Adds to the system prompt: "{p}% of people believe that response {id} is the better one for
    this question.", one row per percentage.

    Parameters
    ----------
    pairs : DataFrame
        A pairs table (see :mod:`judgekit.schema`).
    percents : sequence of int
        The majority sizes, each in (50, 100]; Ye et al. (2024) use 60, 70, 80 and 90.
    target : {"random", "a", "b", "chosen", "rejected", "both"}
        Which response the crowd is said to prefer: a seeded coin per pair, a fixed side, the
        human-preferred or the other one (needs labels), or one row for each.
    seed : int
        Seeds the coin of ``target="random"``.

    Returns
    -------
    DataFrame
        The perturbed pairs with ``system_note`` set and the columns ``source_pair_id``, ``bias``,
        ``variant`` (the percentage), ``changed`` and ``favours`` (the response said to be
        preferred).

    Notes
    -----
    The note names the response by the option ID it carries in each arrangement (``{id_a}`` /
    ``{id_b}``, resolved by the engine), so it points at the same response in both orders.

    References
    ----------
    Ye et al. (2024). Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge, appendix C.

    Examples
    --------
    >>> import judgekit as jk
    >>> out = jk.perturb_bandwagon(jk.sim.simulate_pairs(2, seed=0), percents=(90,), target="a")
    >>> out.loc[0, "system_note"]
    '90% of people believe that response {id_a} is the better one for this question.'
    >>> out[["variant", "changed", "favours"]].iloc[0].tolist()
    ['90', 'system_note', 'a']
    """
    seed = check_seed(seed)
    df = prepare(pairs)
    percents = tuple(percents)
    if not percents:
        raise ValueError("percents must not be empty")
    for p in percents:
        if not isinstance(p, (int, float)) or not 50 < p <= 100:
            raise ValueError(f"percents must be numbers in (50, 100], got {p!r}")
    rows = []
    for i, sides in enumerate(targets_for(df, target, seed, "bandwagon")):
        for side in sides:
            for p in percents:
                label = f"{p:g}"
                note = BANDWAGON_NOTE.format(percent=label, id=_slot(side))
                rows.append({
                    "index": i, "variant": label, "side": side, "favours": side,
                    "edits": {"system_note": append_note(note_of(df, i, "system_note"), note)},
                })
    return assemble(df, rows, bias="bandwagon")


@stamped
def perturb_distraction(
    pairs: pd.DataFrame,
    *,
    statements: Sequence[str] = DISTRACTIONS,
    target: str = "random",
    seed: int = 0,
) -> pd.DataFrame:
    """Add an irrelevant sentence about the assistant behind one response (distraction).

    Parameters
    ----------
    pairs : DataFrame
        A pairs table.
    statements : sequence of str
        Irrelevant statements with an ``{id}`` placeholder for the option ID; one is drawn per
        pair with the seed.
    target : {"random", "a", "b", "chosen", "rejected", "both"}
        The response the statement is about. Ye et al. (2024) analyse distraction of the better
        and of the worse response separately: use ``"chosen"`` and ``"rejected"``.
    seed : int
        Seeds the choice of statement and of ``target="random"``.

    Returns
    -------
    DataFrame
        The perturbed pairs with ``system_note`` set; ``variant`` is the index of the statement;
        ``favours`` is the response the statement is about (a judge may well move *away* from it:
        the suite estimates the sign).

    References
    ----------
    Ye et al. (2024). Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge, appendix C.

    Examples
    --------
    >>> import judgekit as jk
    >>> out = jk.perturb_distraction(jk.sim.simulate_pairs(1, seed=0), target="b", seed=3)
    >>> out.loc[0, "system_note"].startswith("The assistant behind response {id_b}")
    True
    """
    seed = check_seed(seed)
    df = prepare(pairs)
    statements = tuple(statements)
    if not statements:
        raise ValueError("statements must not be empty")
    for s in statements:
        if "{id}" not in s:
            raise ValueError(f"each distraction statement needs an '{{id}}' placeholder: {s!r}")
    rows = []
    for i, sides in enumerate(targets_for(df, target, seed, "distraction")):
        k = int(seeded_rng(seed, "distraction", "statement", df.at[i, "pair_id"]).integers(len(statements)))
        for side in sides:
            note = statements[k].replace("{id}", _slot(side))
            rows.append({
                "index": i, "variant": str(k), "side": side, "favours": side,
                "edits": {"system_note": append_note(note_of(df, i, "system_note"), note)},
            })
    return assemble(df, rows, bias="distraction")


@stamped
def perturb_diversity(
    pairs: pd.DataFrame,
    *,
    identities: Sequence[str] = tuple(IDENTITIES),
    target: str = "random",
    seed: int = 0,
) -> pd.DataFrame:
    """State an identity of the author of one response in the system prompt (diversity bias).

    Parameters
    ----------
    pairs : DataFrame
        A pairs table.
    identities : sequence of str
        Keys of :data:`IDENTITIES` (the six groups of Ye et al. 2024), one row per identity.
    target : {"random", "a", "b", "chosen", "rejected", "both"}
        The response whose author the statement is about.
    seed : int
        Seeds ``target="random"``.

    Returns
    -------
    DataFrame
        The perturbed pairs with ``system_note`` set; ``variant`` is the identity key;
        ``favours`` is the response whose author is described (the suite estimates whether the
        judge moves toward or away from it).

    References
    ----------
    Ye et al. (2024). Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge, appendix C.

    Examples
    --------
    >>> import judgekit as jk
    >>> out = jk.perturb_diversity(jk.sim.simulate_pairs(1, seed=0), identities=["refugee"], target="a")
    >>> out.loc[0, "system_note"]
    'The author of response {id_a} is a refugee.'
    """
    seed = check_seed(seed)
    df = prepare(pairs)
    identities = check_choice(identities, IDENTITIES, "identities")
    rows = []
    for i, sides in enumerate(targets_for(df, target, seed, "diversity")):
        for side in sides:
            for key in identities:
                note = DIVERSITY_NOTE.format(id=_slot(side), identity=IDENTITIES[key])
                rows.append({
                    "index": i, "variant": key, "side": side, "favours": side,
                    "edits": {"system_note": append_note(note_of(df, i, "system_note"), note)},
                })
    return assemble(df, rows, bias="diversity")


@stamped
def perturb_compassion_fade(
    pairs: pd.DataFrame,
    *,
    names: str = "strong_vs_weak",
    strong: Sequence[str] = STRONG_MODELS,
    weak: Sequence[str] = WEAK_MODELS,
    target: str = "random",
    seed: int = 0,
) -> pd.DataFrame:
    """Reveal the names of the models behind the responses (compassion-fade bias).

    Adds to the user message: "Response {id_a} was written by <name> and response {id_b} by
    <name>."

    Parameters
    ----------
    pairs : DataFrame
        A pairs table.
    names : {"strong_vs_weak", "columns"}
        ``"strong_vs_weak"`` names the target response's author with a well-known strong model
        and the other with a weak one (drawn with the seed from ``strong`` / ``weak``), so the
        note favours the target. ``"columns"`` reveals the real authors from ``model_a`` /
        ``model_b`` (which must be filled); it favours no response (``favours`` missing).
    strong, weak : sequences of str
        Model names to draw from.
    target : {"random", "a", "b", "chosen", "rejected", "both"}
        The response given the strong name (``names="strong_vs_weak"`` only).
    seed : int
        Seeds the names and ``target="random"``.

    Returns
    -------
    DataFrame
        The perturbed pairs with ``user_note`` set; ``variant`` is ``names``.

    Notes
    -----
    Ye et al. (2024) reveal the real identities of the models under judgment and compare with
    the anonymous condition: that is ``names="columns"``, measured by robustness only. The
    default ``"strong_vs_weak"`` departs from it: the names are attributed, not the true
    authors, so that the perturbation has a direction (toward the response credited to a strong
    model) that the suite can test, and so that it works on pairs without author columns.

    References
    ----------
    Ye et al. (2024). Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge, appendix C;
    Koo et al. (2023), Benchmarking Cognitive Biases in Large Language Models as Evaluators.

    Examples
    --------
    >>> import judgekit as jk
    >>> out = jk.perturb_compassion_fade(jk.sim.simulate_pairs(1, seed=0), target="a",
    ...                                  strong=["GPT-4o"], weak=["GPT-2"])
    >>> out.loc[0, "user_note"]
    'Response {id_a} was written by GPT-4o and response {id_b} by GPT-2.'
    """
    seed = check_seed(seed)
    df = prepare(pairs)
    check_choice([names], ("strong_vs_weak", "columns"), "names")
    rows = []
    if names == "columns":
        for column in ("model_a", "model_b"):
            if column not in df.columns:
                raise ValueError(f"pairs: names='columns' needs column {column!r}; it has {list(df.columns)}")
            missing = df[column].isna().to_numpy()
            if missing.any():
                ids = df.loc[missing, "pair_id"].tolist()
                raise ValueError(
                    f"pairs: column {column!r} is missing in {len(ids)} row(s) (pair_id: {', '.join(ids[:5])})"
                )
        for i in range(len(df)):
            note = COMPASSION_NOTE.format(name_a=df.at[i, "model_a"], name_b=df.at[i, "model_b"])
            rows.append({
                "index": i, "variant": names, "side": "ab", "favours": None,
                "edits": {"user_note": append_note(note_of(df, i, "user_note"), note)},
            })
        return assemble(df, rows, bias="compassion_fade")
    strong, weak = tuple(strong), tuple(weak)
    if set(strong) & set(weak):
        raise ValueError(f"strong and weak model names overlap: {sorted(set(strong) & set(weak))}")
    for i, sides in enumerate(targets_for(df, target, seed, "compassion_fade")):
        rng = seeded_rng(seed, "compassion_fade", "names", df.at[i, "pair_id"])
        strong_name, weak_name = pick(rng, strong), pick(rng, weak)
        for side in sides:
            named = {side: strong_name, other(side): weak_name}
            note = COMPASSION_NOTE.format(name_a=named["a"], name_b=named["b"])
            rows.append({
                "index": i, "variant": names, "side": side, "favours": side,
                "edits": {"user_note": append_note(note_of(df, i, "user_note"), note)},
            })
    return assemble(df, rows, bias="compassion_fade")


@stamped
def perturb_cot(pairs: pd.DataFrame, *, modes: Sequence[str] = ("on",)) -> pd.DataFrame:
    """Ask the judge to reason step by step before its verdict, or to answer without reasoning.

    This is the instruction form of the chain-of-thought comparison; the template form is to judge
    the original pairs with a template that reasons first (``bias_suite(..., cot_template=...)``).

    Parameters
    ----------
    pairs : DataFrame
        A pairs table.
    modes : sequence of {"on", "off"}
        Which instructions of :data:`COT_INSTRUCTIONS` to add, one row per mode. Give the judge
        enough ``max_tokens`` for "on".

    Returns
    -------
    DataFrame
        The perturbed pairs with ``system_note`` set; ``variant`` is the mode; ``favours`` is
        missing (the measure is accuracy before and after, and robustness).

    References
    ----------
    Ye et al. (2024). Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge, appendix C.

    Examples
    --------
    >>> import judgekit as jk
    >>> out = jk.perturb_cot(jk.sim.simulate_pairs(1, seed=0), modes=["on", "off"])
    >>> out["variant"].tolist(), out["favours"].tolist()
    (['on', 'off'], [None, None])
    """
    df = prepare(pairs)
    modes = check_choice(modes, COT_INSTRUCTIONS, "modes")
    rows = [
        {
            "index": i, "variant": mode, "side": "ab", "favours": None,
            "edits": {"system_note": append_note(note_of(df, i, "system_note"), COT_INSTRUCTIONS[mode])},
        }
        for i in range(len(df))
        for mode in modes
    ]
    return assemble(df, rows, bias="cot")


@stamped
def perturb_refinement_aware(pairs: pd.DataFrame, *, revised: str = "b") -> pd.DataFrame:
    """Tell the judge that one response is the assistant's own revision of the other.

    The pairs must compare an answer with its refined version (as made by
    :func:`judgekit.refine_pairs`, or the CALM refinement set); the unperturbed judgment shows
    both without history, the perturbed one reveals the refinement history in the user message.

    Parameters
    ----------
    pairs : DataFrame
        Pairs whose ``revised`` response is a refinement of the other.
    revised : {"a", "b"}
        Which column holds the refined answer.

    Returns
    -------
    DataFrame
        The perturbed pairs with ``user_note`` set; ``favours`` is the revised response.

    References
    ----------
    Ye et al. (2024). Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge, appendix C
    (refinement-aware bias, after Xu et al. 2024).

    Examples
    --------
    >>> import judgekit as jk
    >>> out = jk.perturb_refinement_aware(jk.sim.simulate_pairs(1, seed=0))
    >>> out.loc[0, "user_note"].split(":")[0]
    'Response {id_b} is a revised version of response {id_a}'
    """
    df = prepare(pairs)
    check_choice([revised], ("a", "b"), "revised")
    note = REFINEMENT_NOTE.format(revised=_slot(revised), original=_slot(other(revised)))
    rows = [
        {
            "index": i, "variant": "history", "side": revised, "favours": revised,
            "edits": {"user_note": append_note(note_of(df, i, "user_note"), note)},
        }
        for i in range(len(df))
    ]
    return assemble(df, rows, bias="refinement_aware")
