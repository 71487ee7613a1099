"""Perturbations that need a language model: verbosity, fallacy-oversight, sentiment, refinement.

A rewrite is a chat request (system prompt of the kind, user message with the question and the
answer to rewrite, prompts in ``rewrites.toml``) sent through the engine's cached completion runner
(:func:`judgekit.complete`), so a rewrite is paid once and re-runs are free. The pre-perturbed CALM
sets give the same four perturbations with no call at all (:func:`calm_perturbations`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

import pandas as pd

from judgekit._stamp import stamped
from judgekit.perturb._common import assemble, check_choice, check_seed, other, prepare, targets_for

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 only
    import tomli as tomllib

__all__ = [
    "EMOTIONS",
    "REWRITE_KINDS",
    "apply_rewrites",
    "perturb_fallacy",
    "perturb_sentiment",
    "perturb_verbosity",
    "refine_pairs",
    "rewrite_requests",
]

#: The four biases whose perturbation is an LLM rewrite of one response.
REWRITE_KINDS: tuple[str, ...] = ("verbosity", "fallacy_oversight", "sentiment", "refinement_aware")
#: Tones of the sentiment rewrite (Ye et al. 2024).
EMOTIONS: tuple[str, ...] = ("cheerful", "sad", "angry", "fearful")


@cache
def rewrite_prompts() -> dict[str, Any]:
    """The rewrite prompts of ``rewrites.toml``: per kind, its system prompt and variants; the user message."""
    with resources.files("judgekit.perturb").joinpath("rewrites.toml").open("rb") as fh:
        return tomllib.load(fh)


def rewrite_system(kind: str, variant: str) -> str:
    """The system prompt of a rewrite of ``kind`` (a ratio or an emotion as ``variant``)."""
    spec = rewrite_prompts()[kind]
    return spec["system"].strip().replace("{ratio}", variant).replace("{emotion}", variant)


def _user(prompt: str, response: str) -> str:
    values = {"prompt": prompt, "response": response}
    return re.sub(r"\{(prompt|response)\}", lambda m: values[m.group(1)], rewrite_prompts()["user"].strip())


@stamped
def rewrite_requests(
    pairs: pd.DataFrame,
    kind: str,
    *,
    variants: Sequence[str] | None = None,
    target: str = "random",
    seed: int = 0,
) -> pd.DataFrame:
    """The chat requests that rewrite one response of each pair.

    Parameters
    ----------
    pairs : DataFrame
        A pairs table.
    kind : {"verbosity", "fallacy_oversight", "sentiment", "refinement_aware"}
        Which rewrite.
    variants : sequence of str, optional
        Length ratios for verbosity (default ``["2"]``), emotions for sentiment (default all four).
    target : {"random", "a", "b", "chosen", "rejected", "both"}
        The response to rewrite.
    seed : int
        Seeds ``target="random"``.

    Returns
    -------
    DataFrame
        ``id`` (``"<pair_id>|<kind>|<variant>|<side>"``), ``pair_id``, ``kind``, ``variant``,
        ``side`` and ``messages`` (the chat request), ready for :func:`judgekit.complete`.

    Examples
    --------
    >>> import judgekit as jk
    >>> req = jk.rewrite_requests(jk.sim.simulate_pairs(1, seed=0), "sentiment", variants=["sad"], target="a")
    >>> req.loc[0, "messages"][0]["content"].split(".")[1].strip()
    'Rewrite the answer below in a clearly sad tone, keeping its content, facts and conclusion unchanged'
    """
    seed = check_seed(seed)
    check_choice([kind], REWRITE_KINDS, "kind")
    df = prepare(pairs)
    defaults = {"verbosity": ("2",), "sentiment": EMOTIONS}
    variants = tuple(str(v) for v in (variants or defaults.get(kind, tuple(rewrite_prompts()[kind]["variants"]))))
    if kind == "sentiment":
        check_choice(variants, EMOTIONS, "variants")
    if kind == "verbosity":
        for v in variants:
            try:
                ok = float(v) > 1
            except ValueError:
                ok = False
            if not ok:
                raise ValueError(f"verbosity variants are length ratios > 1, got {v!r}")
    rows = []
    for i, sides in enumerate(targets_for(df, target, seed, kind)):
        for side in sides:
            for variant in variants:
                rows.append({
                    "id": f"{df.at[i, 'pair_id']}|{kind}|{variant}|{side}",
                    "pair_id": df.at[i, "pair_id"], "kind": kind, "variant": variant, "side": side,
                    "messages": [
                        {"role": "system", "content": rewrite_system(kind, variant)},
                        {"role": "user", "content": _user(df.at[i, "prompt"], df.at[i, f"response_{side}"])},
                    ],
                })
    return pd.DataFrame(rows, columns=["id", "pair_id", "kind", "variant", "side", "messages"])


@stamped
def apply_rewrites(pairs: pd.DataFrame, requests: pd.DataFrame, texts: pd.DataFrame) -> pd.DataFrame:
    """Perturbed pairs from rewrite requests and their completions.

    Parameters
    ----------
    pairs : DataFrame
        The pairs the requests were made from.
    requests : DataFrame
        From :func:`rewrite_requests`.
    texts : DataFrame
        Completions with ``id`` and ``text`` (and ``error``), as :func:`judgekit.complete` returns.

    Returns
    -------
    DataFrame
        One perturbed pair per request whose rewrite came back, with the rewritten response in
        place; ``favours`` is the rewritten response, except for fallacy-oversight where it is
        the intact one and ``label`` moves to it (Ye et al. count the intact answer as the better
        one after the better answer's logic is scrambled).

    Raises
    ------
    ValueError
        When a rewrite is missing or failed: the message names the request ids and errors.

    Examples
    --------
    Completions made elsewhere (here by the simulated rewriter, offline) are matched to the
    requests by ``id``; the scrambled response loses the gold label:

    >>> import pandas as pd, judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(2, seed=0)
    >>> req = jk.rewrite_requests(pairs, "fallacy_oversight", target="chosen")
    >>> texts = pd.DataFrame({"id": req["id"],
    ...                       "text": [jk.sim.sim_rewrite_handler({"messages": m}) for m in req["messages"]]})
    >>> out = jk.apply_rewrites(pairs, req, texts)
    >>> pairs["label"].tolist(), out["label"].tolist(), out["favours"].tolist()
    (['b', 'b'], ['a', 'a'], ['a', 'a'])
    >>> jk.apply_rewrites(pairs, req, texts.iloc[:1])
    Traceback (most recent call last):
    ...
    ValueError: 1 rewrite(s) did not come back (sim-0-00001|fallacy_oversight|chaotic|b: no completion); ...
    """
    df = prepare(pairs)
    got = texts.set_index("id")
    missing = [i for i in requests["id"] if i not in got.index]
    failed = [i for i in requests["id"] if i in got.index and not isinstance(got.at[i, "text"], str)]
    if missing or failed:
        detail = [f"{i}: no completion" for i in missing[:3]]
        detail += [f"{i}: {got.at[i, 'error'] if 'error' in got.columns else 'no text'}" for i in failed[:3]]
        raise ValueError(
            f"{len(missing) + len(failed)} rewrite(s) did not come back ({'; '.join(detail)}); "
            "re-run to retry (finished rewrites are cached)"
        )
    index = {pid: k for k, pid in enumerate(df["pair_id"])}
    rows = []
    for req in requests.to_dict("records"):
        i = index[req["pair_id"]]
        side = req["side"]
        text = got.at[req["id"], "text"].strip()
        edits: dict[str, object] = {f"response_{side}": text}
        favours = side
        if req["kind"] == "fallacy_oversight":
            favours = other(side)
            if df.at[i, "label"] in ("a", "b"):
                edits["label"] = favours
        rows.append({"index": i, "variant": req["variant"], "side": side, "favours": favours, "edits": edits})
    out = []
    for kind in dict.fromkeys(requests["kind"]):
        mine = [r for r, k in zip(rows, requests["kind"]) if k == kind]
        out.append(assemble(df, mine, bias=kind))
    return pd.concat(out, ignore_index=True) if out else assemble(df, [], bias="verbosity")


def _rewrite(
    pairs: pd.DataFrame, kind: str, model: str, *, variants: Sequence[str] | None, target: str, seed: int,
    options: dict[str, Any],
) -> pd.DataFrame:
    from judgekit.judging import complete

    requests = rewrite_requests(pairs, kind, variants=variants, target=target, seed=seed)
    if requests.empty:
        return apply_rewrites(pairs, requests, pd.DataFrame({"id": [], "text": []}))
    texts = complete(requests[["id", "messages"]], model, **options)
    return apply_rewrites(pairs, requests, texts)


@stamped
def perturb_verbosity(
    pairs: pd.DataFrame, model: str, *, ratios: Sequence[float] = (2,), target: str = "rejected",
    seed: int = 0, **options: Any,
) -> pd.DataFrame:
    """Have a model lengthen one response without adding content (verbosity bias).

    Parameters
    ----------
    pairs : DataFrame
        A pairs table.
    model : str
        The rewriting model.
    ratios : sequence of float
        Target length ratios (> 1), one rewrite each.
    target : {"rejected", "chosen", "random", "a", "b", "both"}
        The response to lengthen; Ye et al. (2024) lengthen the worse one.
    seed : int
        Seeds ``target="random"``.
    **options
        Passed to :func:`judgekit.complete` (``client``, ``base_url``, ``temperature``,
        ``max_tokens``, ``cache``, ``budget_usd``, ...).

    Returns
    -------
    DataFrame
        The perturbed pairs; ``variant`` is the ratio, ``favours`` the lengthened response.

    References
    ----------
    Ye et al. (2024). Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge, appendix C.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(2, seed=0)
    >>> with jk.sim.SimServer(handlers=[jk.sim.sim_rewrite_handler]) as url:
    ...     out = jk.perturb_verbosity(pairs, "sim", base_url=url, cache=False, progress=False)
    >>> bool((out["len_a"] + out["len_b"] > pairs["len_a"] + pairs["len_b"]).all())
    True
    """
    return _rewrite(pairs, "verbosity", model, variants=[f"{float(r):g}" for r in ratios], target=target,
                    seed=seed, options=options)


@stamped
def perturb_fallacy(
    pairs: pd.DataFrame, model: str, *, target: str = "chosen", seed: int = 0, **options: Any,
) -> pd.DataFrame:
    """Have a model scramble the reasoning of one response (fallacy-oversight bias).

    The gold answer moves to the intact response (``label``), which is also ``favours``: a judge
    that notices fallacies moves toward it; one that overlooks them does not move.

    Parameters
    ----------
    pairs : DataFrame
        A pairs table.
    model : str
        The rewriting model.
    target : {"chosen", "rejected", "random", "a", "b", "both"}
        The response to scramble; Ye et al. (2024) scramble the better one.
    seed : int
        Seeds ``target="random"``.
    **options
        Passed to :func:`judgekit.complete`.

    Returns
    -------
    DataFrame
        The perturbed pairs with ``label`` moved to the intact response.

    References
    ----------
    Ye et al. (2024). Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge, appendix C.

    Examples
    --------
    With the simulated server standing in for the rewriting model:

    >>> import judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(2, seed=0)
    >>> with jk.sim.SimServer(handlers=[jk.sim.sim_rewrite_handler]) as url:
    ...     out = jk.perturb_fallacy(pairs, "sim", base_url=url, cache=False, progress=False)
    >>> pairs["label"].tolist(), out["label"].tolist(), out["favours"].tolist()
    (['b', 'b'], ['a', 'a'], ['a', 'a'])
    """
    return _rewrite(pairs, "fallacy_oversight", model, variants=None, target=target, seed=seed, options=options)


@stamped
def perturb_sentiment(
    pairs: pd.DataFrame, model: str, *, emotions: Sequence[str] = EMOTIONS, target: str = "random",
    seed: int = 0, **options: Any,
) -> pd.DataFrame:
    """Have a model rewrite one response in an emotional tone (sentiment bias).

    Parameters
    ----------
    pairs : DataFrame
        A pairs table.
    model : str
        The rewriting model.
    emotions : sequence of {"cheerful", "sad", "angry", "fearful"}
        One rewrite per emotion.
    target : {"random", "chosen", "rejected", "a", "b", "both"}
        The response to rewrite.
    seed : int
        Seeds ``target="random"``.
    **options
        Passed to :func:`judgekit.complete`.

    Returns
    -------
    DataFrame
        The perturbed pairs; ``variant`` is the emotion, ``favours`` the rewritten response (most
        judges move away from it: a negative ``favoured_shift``).

    References
    ----------
    Ye et al. (2024). Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge, appendix C.

    Examples
    --------
    With the simulated server standing in for the rewriting model:

    >>> import judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(1, seed=0)
    >>> with jk.sim.SimServer(handlers=[jk.sim.sim_rewrite_handler]) as url:
    ...     out = jk.perturb_sentiment(pairs, "sim", emotions=["sad", "angry"], target="a",
    ...                                base_url=url, cache=False, progress=False)
    >>> out["variant"].tolist(), out["favours"].tolist()
    (['sad', 'angry'], ['a', 'a'])
    >>> out.loc[0, "response_a"][:41]
    'It is a little sad to have to write this.'
    """
    return _rewrite(pairs, "sentiment", model, variants=emotions, target=target, seed=seed, options=options)


@stamped
def refine_pairs(
    pairs: pd.DataFrame, model: str, *, side: str = "a", **options: Any,
) -> pd.DataFrame:
    """Pairs of an answer and the model's refinement of it, for the refinement-aware bias.

    Each output pair holds the original ``side`` response as ``response_a`` and its refined
    version as ``response_b`` (no label); perturb them with
    :func:`judgekit.perturb_refinement_aware`, which reveals the refinement history.

    Parameters
    ----------
    pairs : DataFrame
        A pairs table.
    model : str
        The refining model (the judge's own model, to study self-refinement).
    side : {"a", "b"}
        Which response to refine.
    **options
        Passed to :func:`judgekit.complete`.

    Returns
    -------
    DataFrame
        A new pairs table with ``pair_id`` ``"<pair_id>::refined"``, ``model_b`` = ``model``.

    References
    ----------
    Ye et al. (2024), appendix C; Xu et al. (2024), Pride and Prejudice: LLM Amplifies
    Self-Bias in Self-Refinement.

    Examples
    --------
    With the simulated server standing in for the refining model:

    >>> import judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(2, seed=0)
    >>> with jk.sim.SimServer(handlers=[jk.sim.sim_rewrite_handler]) as url:
    ...     refined = jk.refine_pairs(pairs, "sim", base_url=url, cache=False, progress=False)
    >>> refined["pair_id"].tolist()
    ['sim-0-00000::refined', 'sim-0-00001::refined']
    >>> bool((refined["response_a"] == pairs["response_a"]).all()), bool(refined["label"].isna().all())
    (True, True)
    """
    from judgekit.judging import complete

    check_choice([side], ("a", "b"), "side")
    df = prepare(pairs)
    requests = rewrite_requests(df, "refinement_aware", target=side)
    texts = complete(requests[["id", "messages"]], model, **options).set_index("id")
    bad = [i for i in requests["id"] if i not in texts.index or not isinstance(texts.at[i, "text"], str)]
    if bad:
        raise ValueError(f"{len(bad)} refinement(s) did not come back, e.g. {bad[:3]}; re-run to retry")
    keep = [c for c in ("dataset", "task", "instruction_id") if c in df.columns]
    out = pd.DataFrame({
        "pair_id": df["pair_id"] + "::refined",
        "prompt": df["prompt"],
        "response_a": df[f"response_{side}"],
        "response_b": [texts.at[i, "text"].strip() for i in requests["id"]],
        "label": None,
        **({"model_a": df[f"model_{side}"]} if f"model_{side}" in df.columns else {}),
        "model_b": model,
        **{c: df[c] for c in keep},
    })
    return prepare(out)
