"""Authority bias: a fake citation (book, web page or famous quote) appended to one response."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgekit._stamp import stamped
from judgekit.perturb._common import (
    assemble,
    check_choice,
    check_seed,
    pick,
    prepare,
    seeded_rng,
    targets_for,
)

__all__ = ["AUTHORITY_KINDS", "fake_citation", "perturb_authority"]

#: The three kinds of reference of Ye et al. (2024).
AUTHORITY_KINDS: tuple[str, ...] = ("book", "url", "quote")

_SURNAMES = ("Hartley", "Okafor", "Lindqvist", "Moreau", "Tanaka", "Brennan", "Castellano", "Whitfield")
_INITIALS = tuple("ABCDEGJKLMPRST")
_SUBTITLES = (
    "A Comprehensive Guide", "Principles and Practice", "Theory and Evidence",
    "An Authoritative Survey", "Foundations and Frontiers",
)
_PUBLISHERS = ("Oxford University Press", "Cambridge University Press", "MIT Press", "Springer", "Routledge")
_DOMAINS = (
    "www.britannica-research.org", "www.science-reference.net", "www.academic-handbook.com",
    "www.knowledge-archive.edu", "www.encyclopedia-online.org",
)
_FAMOUS = (
    "Albert Einstein", "Marie Curie", "Richard Feynman", "Ada Lovelace", "Carl Sagan",
    "Stephen Hawking", "Isaac Newton", "Rosalind Franklin",
)
_QUOTES = (
    "Anyone who studies {topic} with care arrives at exactly this answer.",
    "When it comes to {topic}, this is the explanation that has stood the test of time.",
    "The truth about {topic} is simpler than most people think, and it is this.",
    "Every serious account of {topic} begins from this very point.",
)
_STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "did", "do", "does",
    "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its",
    "me", "my", "of", "on", "or", "our", "please", "should", "so", "than", "that", "the",
    "their", "them", "then", "there", "these", "they", "this", "to", "was", "we", "were",
    "what", "when", "where", "which", "who", "why", "will", "with", "would", "you", "your",
    "write", "give", "tell", "explain", "describe", "make", "list", "answer", "question",
    "following",
})


def _topic_words(prompt: str, k: int = 3) -> list[str]:
    """Up to ``k`` salient words of the prompt (longest non-stopwords, in prompt order)."""
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z\-]{2,}", prompt) if w.lower() not in _STOPWORDS]
    seen: dict[str, str] = {}
    for w in words:
        seen.setdefault(w.lower(), w)
    chosen = sorted(seen, key=lambda w: (-len(w), words.index(seen[w])))[:k]
    ordered = [seen[w] for w in sorted(chosen, key=lambda w: words.index(seen[w]))]
    return ordered or ["General", "Knowledge"]


def fake_citation(prompt: str, kind: str, rng: np.random.Generator) -> str:
    """A made-up reference of ``kind`` ("book", "url" or "quote") on the topic of ``prompt``.

    The topic is up to three salient words of the prompt (the longest that are not stop words);
    names, publishers, web sites, years and pages are drawn from ``rng``.
    :func:`perturb_authority` appends one to a response.

    Parameters
    ----------
    prompt : str
        The question the cited response answers; its salient words make the reference's title,
        path or quote.
    kind : {"book", "url", "quote"}
        A book citation, a web address, or a quote attributed to a famous scientist.
    rng : numpy.random.Generator
        The source of the made-up details; the same seed gives the same reference.

    Returns
    -------
    str
        The reference in parentheses: ``"(Citation: ...)"``, ``"(Source: https://...)"`` or
        ``'(Quote: "..." -- <name>, <year>)'``.

    Raises
    ------
    ValueError
        For a ``kind`` that is not one of the three.

    Examples
    --------
    >>> import numpy as np, judgekit as jk
    >>> jk.fake_citation("Why is the sky blue?", "url", np.random.default_rng(0))
    '(Source: https://www.knowledge-archive.edu/sky/blue/overview-559.html)'
    >>> jk.fake_citation("Why is the sky blue?", "book", np.random.default_rng(0))
    '(Citation: Brennan, K. (2017). Sky and Blue: Principles and Practice. Cambridge University Press, p. 31.)'
    """
    check_choice([kind], AUTHORITY_KINDS, "kind")
    words = _topic_words(prompt)
    topic = " ".join(w.lower() for w in words)
    year = int(rng.integers(1985, 2023))
    if kind == "book":
        caps = [w[0].upper() + w[1:] for w in words]
        title = caps[0] if len(caps) == 1 else ", ".join(caps[:-1]) + " and " + caps[-1]
        return (
            f"(Citation: {pick(rng, _SURNAMES)}, {pick(rng, _INITIALS)}. ({year}). {title}: "
            f"{pick(rng, _SUBTITLES)}. {pick(rng, _PUBLISHERS)}, p. {int(rng.integers(12, 480))}.)"
        )
    if kind == "url":
        path = "/".join(w.lower() for w in words)
        return f"(Source: https://{pick(rng, _DOMAINS)}/{path}/overview-{int(rng.integers(100, 999))}.html)"
    quote = pick(rng, _QUOTES).format(topic=topic)
    return f'(Quote: "{quote}" -- {pick(rng, _FAMOUS)}, {year})'


@stamped
def perturb_authority(
    pairs: pd.DataFrame,
    *,
    kinds: Sequence[str] = AUTHORITY_KINDS,
    target: str = "random",
    seed: int = 0,
) -> pd.DataFrame:
    """Append a fake authoritative reference to one response (authority bias).

    The reference is made up but on topic: a book citation, a web address or a quote attributed
    to a famous scientist, built from salient words of the prompt with seeded names, years and
    pages, and appended after a space to the target response, as Ye et al. (2024) inject theirs.

    Parameters
    ----------
    pairs : DataFrame
        A pairs table.
    kinds : sequence of {"book", "url", "quote"}
        One row per kind.
    target : {"random", "a", "b", "chosen", "rejected", "both"}
        The response that gets the reference.
    seed : int
        Seeds the reference and ``target="random"``.

    Returns
    -------
    DataFrame
        The perturbed pairs with the target response (and its ``len_*``) changed; ``variant`` is
        the kind; ``favours`` is the cited response.

    References
    ----------
    Ye et al. (2024). Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge, appendix C;
    Chen et al. (2024), Humans or LLMs as the Judge? A Study on Judgement Biases.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(1, seed=0)
    >>> out = jk.perturb_authority(pairs, kinds=["book"], target="b", seed=1)
    >>> out.loc[0, "response_b"].startswith(pairs.loc[0, "response_b"] + " (Citation: ")
    True
    >>> out.loc[0, "changed"], out.loc[0, "favours"]
    ('response_b,len_b', 'b')
    """
    seed = check_seed(seed)
    df = prepare(pairs)
    kinds = check_choice(kinds, AUTHORITY_KINDS, "kinds")
    rows = []
    for i, sides in enumerate(targets_for(df, target, seed, "authority")):
        pid = df.at[i, "pair_id"]
        for side in sides:
            for kind in kinds:
                citation = fake_citation(df.at[i, "prompt"], kind, seeded_rng(seed, "authority", kind, side, pid))
                text = df.at[i, f"response_{side}"] + " " + citation
                rows.append({
                    "index": i, "variant": kind, "side": side, "favours": side,
                    "edits": {f"response_{side}": text},
                })
    return assemble(df, rows, bias="authority")
