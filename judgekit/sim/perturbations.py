"""What the simulated judge server needs from the perturbation suite.

* :func:`detect_signals` reads a judging request and says which perturbations it carries and
  which position each favours (+1 the first, −1 the second); the server multiplies them by the
  simulated judge's ``sensitivities``.
* :func:`simulated_rewrite` answers the suite's rewrite requests deterministically, marking what
  it added so that :func:`detect_signals` can see it; :func:`sim_rewrite_handler` is the server
  handler that recognises those requests.
* :func:`strip_perturbations` removes the suite's additions (citations, padding, tone, fallacy
  sentences) from a response, and :class:`ContentSimJudge` is a :class:`~judgekit.sim.SimJudge` that
  draws its latent quality from the response *with the additions removed*. A plain ``SimJudge``
  hashes the whole text, so appending a citation would redraw the pair's quality and its decision
  from scratch, and even a judge with no authority sensitivity would look non-robust.

Detection relies on the exact wording of judgekit's notes, citations and simulated rewrites (and
on the citation formats of the CALM authority set); it is a model of a judge for testing, not a
classifier for real text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd

from judgekit._stamp import stamped
from judgekit.perturb._common import seeded_rng
from judgekit.perturb.notes import (
    DISTRACTIONS,
    IDENTITIES,
    STRONG_MODELS,
    WEAK_MODELS,
)
from judgekit.perturb.rewrite import REWRITE_KINDS, rewrite_prompts, rewrite_system
from judgekit.sim.decoding import decode_request
from judgekit.sim.judge import SimJudge

__all__ = [
    "ContentSimJudge",
    "SIM_OWN_STYLE",
    "detect_signals",
    "sim_rewrite_handler",
    "simulated_rewrite",
    "simulation_pairs",
    "strip_perturbations",
]

#: The closing phrase by which the simulated judge recognises "its own" answers (self-enhancement).
SIM_OWN_STYLE = "(Answer drafted in the simulated judge's own style.)"

#: Sentences the simulated verbosity rewrite pads with (content-free restatements).
SIM_PADDING: tuple[str, ...] = (
    "To put it another way, the point made above stands exactly as stated.",
    "In other words, the same answer holds when it is spelled out at greater length.",
    "Restating this once more for clarity, nothing in the answer changes.",
    "Put differently, the explanation given here is the whole of it.",
    "Said again in slightly different words, the conclusion remains the same.",
)
#: Sentences the simulated fallacy rewrite adds (each is a textbook fallacy).
SIM_FALLACIES: tuple[str, ...] = (
    "This must be right, because so many people repeat it that it cannot be wrong.",
    "Anyone who doubts this is simply not clever enough to see it, which proves the point.",
    "It has always been done this way, so it is therefore correct.",
    "Since the opposite has never been proven, this is certainly true.",
)
#: Opening and closing sentences of the simulated sentiment rewrite, per emotion.
SIM_TONES: dict[str, tuple[str, str]] = {
    "cheerful": ("What a delightful question to answer!", "Have a wonderful day!"),
    "sad": ("It is a little sad to have to write this.", "I hope it brings some small comfort."),
    "angry": ("Honestly, it is infuriating that this needs spelling out.", "I cannot believe this even needs saying!"),
    "fearful": ("I am nervous about getting this wrong, but here goes.", "I really hope nothing bad comes of this."),
}
#: Sentence the simulated refinement appends (the refined answer is a genuinely new response).
SIM_REFINED = "In short, that is the complete and corrected answer."

_CITATION = re.compile(
    r"\s*\((?:Citation|Reference|Source|Quote)\s*:[^\n]*\)\s*$"  # judgekit's and CALM's book / quote / source
    r"|\s*\((?:https?://|www\.)[^\s()]+\)\s*$",  # CALM's bare URL
    re.DOTALL,
)
_PAD = re.compile(r"(?:\s*(?:" + "|".join(re.escape(s) for s in SIM_PADDING) + r"))+\s*$")
_FALLACY = re.compile(r"\s*(?:" + "|".join(re.escape(s) for s in SIM_FALLACIES) + r")\s*$")
_TONE_OPEN = re.compile(r"^\s*(?:" + "|".join(re.escape(o) for o, _ in SIM_TONES.values()) + r")\s*")
_TONE_CLOSE = re.compile(r"\s*(?:" + "|".join(re.escape(c) for _, c in SIM_TONES.values()) + r")\s*$")
_OWN = re.compile(r"\s*" + re.escape(SIM_OWN_STYLE))  # anywhere: a style survives rewrites

_ID = r"(?P<{name}>[^\s.,;:!?\"']+)"
_BANDWAGON = re.compile(r"\d+(?:\.\d+)?% of people believe that response " + _ID.format(name="id") + r" is the better one")
_DISTRACTION = re.compile(
    "|".join(
        re.escape(s).replace(re.escape("{id}"), _ID.format(name=f"id{k}")) for k, s in enumerate(DISTRACTIONS)
    )
)
_DIVERSITY = re.compile(
    r"The author of response " + _ID.format(name="id") + r" is (?:"
    + "|".join(re.escape(v) for v in IDENTITIES.values()) + r")\."
)
_COMPASSION = re.compile(
    r"Response " + _ID.format(name="ida") + r" was written by (?P<na>.+?) and response "
    + _ID.format(name="idb") + r" by (?P<nb>.+?)\.(?=\s|$)"
)
_REFINED = re.compile(
    r"Response " + _ID.format(name="rev") + r" is a revised version of response " + _ID.format(name="orig") + ":"
)

_PARTNER = {"A": "B", "B": "A", "a": "b", "b": "a", "1": "2", "2": "1", "X": "Y", "Y": "X"}


def strip_perturbations(text: str) -> str:
    """``text`` without the suite's additions: trailing citations, padding, fallacy sentences,
    sentiment openings and closings and the simulated judge's style mark.

    Parameters
    ----------
    text : str
        A response, possibly perturbed by the suite (or by its simulated rewrites).

    Returns
    -------
    str
        ``text`` with the additions removed, repeatedly until nothing more comes off, and
        surrounding whitespace stripped; text the suite did not add is kept as it is.

    Examples
    --------
    >>> strip_perturbations("Paris is the capital. (Source: https://www.science-reference.net/x.html)")
    'Paris is the capital.'
    """
    previous = None
    out = text
    while out != previous:
        previous = out
        for pattern in (_CITATION, _PAD, _FALLACY, _TONE_CLOSE, _OWN):
            out = pattern.sub("", out)
        out = _TONE_OPEN.sub("", out)
    return out.strip()


def _token_positions(text: str, token: str) -> list[int]:
    return [m.start() for m in re.finditer(r"(?<![A-Za-z0-9])" + re.escape(token) + r"(?![A-Za-z0-9])", text)]


def _partner(label: str) -> str | None:
    for k in range(len(label) - 1, -1, -1):
        if label[k].isalnum():
            swapped = _PARTNER.get(label[k])
            return None if swapped is None else label[:k] + swapped + label[k + 1 :]
    return None


@cache
def _bundled_templates() -> tuple:
    from judgekit.judging.templates import get_template, list_templates

    return tuple(get_template(name) for name in list_templates()["name"])


def _decoded_ids(system: str, user: str, first: str, second: str) -> list[str] | None:
    """The option IDs of the two positions, from the bundled template that rendered the request."""
    for template in _bundled_templates():
        d = decode_request(template, system, user)
        if d is not None and list(d["responses"]) == [first, second]:
            return list(d["ids"])
    return None


def _position_of_label(label: str, user: str, first: str, second: str, ids: list[str] | None = None) -> int:
    """+1 when the option ID ``label`` marks the first response, −1 the second, 0 unknown.

    With ``ids`` (decoded from a known template) this is exact. Otherwise the ID printed last
    before a response in ``user`` is taken to be that response's ID ("Assistant A:", "Answer A:",
    "[The Start of Assistant A's Answer]").
    """
    if ids is not None:
        return 1 if label == ids[0] else -1 if label == ids[1] else 0
    i1 = user.find(first)
    if i1 < 0:
        return 0
    i2 = user.find(second, i1 + len(first))
    if i2 < 0:
        return 0
    pre, mid = user[:i1], user[i1 + len(first) : i2]
    partner = _partner(label)
    candidates = [label] if partner is None else [label, partner]

    def last(text: str, token: str) -> int:
        found = _token_positions(text, token)
        return found[-1] if found else -1

    in_mid = {c: last(mid, c) for c in candidates}
    present = {c: p for c, p in in_mid.items() if p >= 0}
    if present:
        return -1 if max(present, key=present.get) == label else 1
    in_pre = {c: last(pre, c) for c in candidates}
    present = {c: p for c, p in in_pre.items() if p >= 0}
    if present:
        return 1 if max(present, key=present.get) == label else -1
    return 0


def _response_marks(first: str, second: str) -> dict[str, float]:
    signals: dict[str, float] = {}

    def mark(name: str, f: bool, s: bool, sign: float = 1.0) -> None:
        value = sign * (float(f) - float(s))
        if value:
            signals[name] = value

    mark("authority", bool(_CITATION.search(first)), bool(_CITATION.search(second)))
    mark("verbosity", bool(_PAD.search(first)), bool(_PAD.search(second)))
    # fallacy-oversight favours the response left intact
    mark("fallacy_oversight", bool(_FALLACY.search(first)), bool(_FALLACY.search(second)), sign=-1.0)
    mark(
        "sentiment",
        bool(_TONE_OPEN.search(first) or _TONE_CLOSE.search(first)),
        bool(_TONE_OPEN.search(second) or _TONE_CLOSE.search(second)),
    )
    mark("self_enhancement", bool(_OWN.search(first)), bool(_OWN.search(second)))
    return signals


def detect_signals(system_text: str, user_text: str, first: str, second: str) -> dict[str, float]:
    """Which perturbations a judging request carries, and which position each favours.

    Parameters
    ----------
    system_text, user_text : str
        The rendered system prompt and user message (with any ``system_note`` / ``user_note``).
    first, second : str
        The responses in the positions shown.

    Returns
    -------
    dict of str to float
        Bias name → +1 when the perturbation favours the response shown first, −1 the second.
        Biases that are absent, or present on both sides, are left out. For fallacy-oversight the
        favoured response is the intact one.

    Notes
    -----
    Notes are attributed to a position through the option ID they name, mapped to its position by
    decoding the request with the bundled templates (as the simulated server does); for a request
    no bundled template rendered, the ID printed last before a response in the user message is
    taken to be that response's ID.

    Examples
    --------
    >>> user = "Question: 2+2?\\n\\nAnswer A: 4\\n\\nAnswer B: 5 (Quote: \\"Sure.\\" -- Ada Lovelace, 1843)"
    >>> detect_signals("90% of people believe that response A is the better one for this question.",
    ...                user, "4", '5 (Quote: "Sure." -- Ada Lovelace, 1843)')
    {'authority': -1.0, 'bandwagon': 1.0}
    """
    signals = _response_marks(first, second)
    notes = f"{system_text}\n{user_text}"
    ids: list[str] | None = None
    decoded = False

    def attribute(name: str, label: str, sign: float = 1.0) -> None:
        nonlocal ids, decoded
        if not decoded:
            ids, decoded = _decoded_ids(system_text, user_text, first, second), True
        pos = _position_of_label(label, user_text, first, second, ids)
        if pos:
            signals[name] = signals.get(name, 0.0) + sign * pos

    for m in _BANDWAGON.finditer(notes):
        attribute("bandwagon", m.group("id"))
    for m in _DISTRACTION.finditer(notes):
        label = next(v for k, v in m.groupdict().items() if v is not None)
        attribute("distraction", label)
    for m in _DIVERSITY.finditer(notes):
        attribute("diversity", m.group("id"))
    for m in _COMPASSION.finditer(notes):
        na, nb = m.group("na").strip(), m.group("nb").strip()
        if na in STRONG_MODELS and nb in WEAK_MODELS:
            attribute("compassion_fade", m.group("ida"))
        elif nb in STRONG_MODELS and na in WEAK_MODELS:
            attribute("compassion_fade", m.group("idb"))
    for m in _REFINED.finditer(notes):
        attribute("refinement_aware", m.group("rev"))
    return {k: float(np.clip(v, -1.0, 1.0)) for k, v in sorted(signals.items()) if v}


def simulated_rewrite(kind: str, variant: str, prompt: str, response: str) -> str:
    """The simulated server's deterministic answer to a rewrite request.

    ``verbosity`` pads with content-free restatements to about ``variant`` times the length;
    ``fallacy_oversight`` appends a fallacious justification; ``sentiment`` adds an opening and a
    closing in the tone ``variant``; ``refinement_aware`` appends a closing summary sentence.

    Parameters
    ----------
    kind : {"verbosity", "fallacy_oversight", "sentiment", "refinement_aware"}
        Which rewrite was asked for.
    variant : str
        The length ratio for ``verbosity`` (e.g. ``"2"``), the emotion for ``sentiment``
        (``"cheerful"``, ``"sad"``, ``"angry"`` or ``"fearful"``); ignored by the other kinds.
    prompt : str
        The question the response answers; with the other arguments it seeds which padding or
        fallacy sentence is chosen, so the same request always gets the same answer.
    response : str
        The response to rewrite.

    Returns
    -------
    str
        The rewritten response: ``response`` with the simulated additions, which
        :func:`strip_perturbations` removes again.

    Raises
    ------
    ValueError
        For an unknown ``kind``, or an unknown emotion with ``kind="sentiment"``.

    Examples
    --------
    >>> simulated_rewrite("sentiment", "cheerful", "2+2?", "4.")
    'What a delightful question to answer! 4. Have a wonderful day!'
    >>> longer = simulated_rewrite("verbosity", "2", "2+2?", "The answer is four.")
    >>> len(longer) >= 2 * len("The answer is four."), strip_perturbations(longer)
    (True, 'The answer is four.')
    """
    rng = seeded_rng(0, "simulated_rewrite", kind, variant, prompt, response)
    if kind == "verbosity":
        target = float(variant) * len(response)
        out = response
        while len(out) < target:
            out += " " + SIM_PADDING[int(rng.integers(len(SIM_PADDING)))]
        return out
    if kind == "fallacy_oversight":
        return response + " " + SIM_FALLACIES[int(rng.integers(len(SIM_FALLACIES)))]
    if kind == "sentiment":
        if variant not in SIM_TONES:
            raise ValueError(f"unknown emotion {variant!r}; choose from {list(SIM_TONES)}")
        opening, closing = SIM_TONES[variant]
        return f"{opening} {response} {closing}"
    if kind == "refinement_aware":
        return response + " " + SIM_REFINED
    raise ValueError(f"unknown rewrite kind {kind!r}")


@dataclass(frozen=True)
class ContentSimJudge(SimJudge):
    """A :class:`~judgekit.sim.SimJudge` whose latent quality ignores the suite's additions.

    Quality, decision and flip draws are keyed by :func:`strip_perturbations` of each response, so
    a citation or padding changes the verdict only through the judge's ``sensitivities`` (and its
    ``length_bias``, which still sees the real lengths). Everything else is :class:`SimJudge`.

    Examples
    --------
    >>> import judgekit as jk
    >>> judge = jk.sim.ContentSimJudge(sensitivities={"authority": 3.0}, seed=1)
    >>> plain = judge.decide(["Q?"], ["Yes."], ["No."])
    >>> cited = judge.decide(["Q?"], ["Yes."], ["No. (Source: https://www.science-reference.net/q.html)"],
    ...                      signals={"authority": [-1.0]})
    >>> bool(cited.loc[0, "p_first"] < plain.loc[0, "p_first"])
    True
    """

    def content(self, response: str) -> str:
        return strip_perturbations(response)


@stamped
def simulation_pairs(pairs: pd.DataFrame, perturbed: pd.DataFrame) -> pd.DataFrame:
    """The pairs to register with a simulated server (``SimServer(pairs=...)``) for a suite run.

    The simulated judge knows the human label of every pair it is shown, so perturbed pairs must
    be registered too. Each perturbed pair carries its source pair's label (moved with the
    responses for position rotations): in the simulation a perturbation changes the verdict only
    through the judge's sensitivities, never through what the judge "knows" to be better. (A
    fallacy rewrite's new gold label is for scoring ``acc_hack``, not for the simulated judge.)

    Parameters
    ----------
    pairs : DataFrame
        The source pairs table the perturbations were made from.
    perturbed : DataFrame
        Perturbed pairs from the suite (:func:`judgekit.perturb_position`,
        :func:`judgekit.perturb_authority`, ...), with their ``source_pair_id`` and ``bias``
        columns.

    Returns
    -------
    DataFrame
        ``pair_id``, ``prompt``, ``response_a``, ``response_b`` and ``label``: the source pairs
        followed by the perturbed ones, each with the label the simulated judge should know;
        a row whose (prompt, response_a, response_b) already appeared is dropped.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(3, seed=0)
    >>> len(jk.sim.simulation_pairs(pairs, jk.perturb_position(pairs)))
    6
    """
    from judgekit.schema import validate_pairs

    base = validate_pairs(pairs)
    pert = validate_pairs(perturbed, name="perturbed")
    label = base.set_index("pair_id")["label"]
    source = label.reindex(pert["source_pair_id"]).to_numpy(dtype=object)
    is_position = pert["bias"].eq("position").to_numpy()
    keep = ["pair_id", "prompt", "response_a", "response_b"]
    rows = pert[keep].assign(label=np.where(is_position, pert["label"].to_numpy(dtype=object), source))
    out = pd.concat([base[keep + ["label"]], rows], ignore_index=True)
    out["label"] = out["label"].astype(object).where(out["label"].notna(), None)
    return out.drop_duplicates(["prompt", "response_a", "response_b"]).reset_index(drop=True)


# ---------------------------------------------------------------- the rewrite requests' answers
_USER = re.compile(r"\AQuestion:\n(?P<prompt>.*)\n\nAnswer to rewrite:\n<answer>\n(?P<response>.*)\n</answer>\Z", re.DOTALL)


@cache
def _system_index() -> dict[str, tuple[str, str]]:
    """Rendered system prompt -> (kind, variant) for every known rewrite prompt."""
    index = {}
    for kind in REWRITE_KINDS:
        variants = list(rewrite_prompts()[kind]["variants"])
        if kind == "verbosity":
            variants = sorted({*variants, *[f"{r / 2:g}" for r in range(3, 21)]})
        for v in variants:
            index[rewrite_system(kind, v)] = (kind, v)
    return index


def _match_system(system: str) -> tuple[str, str] | None:
    hit = _system_index().get(system.strip())
    if hit is not None:
        return hit
    spec = rewrite_prompts()["verbosity"]["system"].strip()
    head, tail = spec.split("{ratio}")
    if system.startswith(head) and system.endswith(tail):
        return "verbosity", system[len(head): len(system) - len(tail)]
    return None


def sim_rewrite_handler(body: dict) -> str | None:
    """Answer the suite's rewrite requests on the simulated server (``SimServer(handlers=[...])``).

    Returns None for any other request, so other handlers can answer it.

    Parameters
    ----------
    body : dict
        The JSON body of a chat-completion request, as the server received it; only its
        ``messages`` are read.

    Returns
    -------
    str or None
        The rewritten response (:func:`simulated_rewrite` of the kind and variant the
        system prompt asks for) when the request is one of :func:`judgekit.rewrite_requests`; None
        otherwise.

    Examples
    --------
    >>> import judgekit as jk
    >>> req = jk.rewrite_requests(jk.sim.simulate_pairs(1, seed=0), "sentiment", variants=["cheerful"])
    >>> jk.sim.sim_rewrite_handler({"messages": req.loc[0, "messages"]}).startswith("What a delightful")
    True
    >>> jk.sim.sim_rewrite_handler({"messages": [{"role": "user", "content": "hi"}]}) is None
    True
    """
    messages = body.get("messages") or []
    system = "\n\n".join(m.get("content", "") for m in messages if m.get("role") == "system")
    users = [m.get("content", "") for m in messages if m.get("role") == "user"]
    if not system or not users:
        return None
    hit = _match_system(system)
    m = _USER.match(users[-1].strip())
    if hit is None or m is None:
        return None
    kind, variant = hit
    return simulated_rewrite(kind, variant, m.group("prompt"), m.group("response"))
