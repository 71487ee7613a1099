"""The pre-perturbed CALM sets as (pairs, perturbed) tables for the suite, with no rewrite call."""

from __future__ import annotations

import pandas as pd

from judgekit._stamp import stamped
from judgekit.perturb._common import META_COLUMNS, assemble, prepare
from judgekit.perturb.notes import perturb_refinement_aware

__all__ = ["calm_perturbations"]

_CALM_COLUMNS = ("bias", "perturbation", "perturbed", "original_pair_id", "original_response_a",
                 "original_response_b", "item")


def _variant(field: str) -> str:
    """``answer2_longer`` -> ``longer``; ``answer1_with_reference_book`` -> ``book``."""
    tail = field.split("_", 1)[1] if "_" in field else field
    tail = tail.removeprefix("with_reference_")
    return {"fear": "fearful", "fallacy_oversight": "chaotic"}.get(tail, tail)


@stamped
def calm_perturbations(calm: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split CALM pairs (``jk.load_pairs("calm", sets=...)``) into originals and perturbations.

    Parameters
    ----------
    calm : DataFrame
        CALM pairs as the ``calm`` loader returns them: the original pair of every record
        (``perturbation`` missing) and one pair per pre-perturbed answer (``perturbation`` names
        the field, ``perturbed`` the side, ``original_pair_id`` the original pair). Base sets
        (``alignment``, ``fact_related``) are returned as originals only, ready for the
        deterministic perturbations; the refinement sets (an answer and its polished version) get
        the refinement-history note of :func:`judgekit.perturb_refinement_aware`.

    Returns
    -------
    pairs, perturbed : DataFrame, DataFrame
        ``pairs`` holds the originals (CALM's bookkeeping columns dropped); ``perturbed`` the
        perturbed pairs with the suite's columns: ``bias`` (``verbosity``, ``fallacy_oversight``,
        ``sentiment``, ``authority`` or ``refinement_aware``), ``variant`` (``longer``,
        ``chaotic``, the emotion, ``book``/``url``/``quote``, ``history``), ``changed`` and
        ``favours`` (the lengthened, emotional or cited answer; for fallacy-oversight the intact
        one, which CALM's label also names; for refinement the polished answer).

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> calm = pd.DataFrame({
    ...     "pair_id": ["calm/verbosity/0", "calm/verbosity/0/answer2_longer"],
    ...     "prompt": ["Why is ice slippery?"] * 2,
    ...     "response_a": ["A thin water film.", "A thin water film."],
    ...     "response_b": ["Cold.", "Cold, because it is cold, which is to say it is cold."],
    ...     "label": ["a", "a"], "dataset": "verbosity", "bias": "verbosity",
    ...     "perturbation": [None, "answer2_longer"], "perturbed": [None, "b"],
    ...     "original_pair_id": ["calm/verbosity/0"] * 2})
    >>> pairs, pert = jk.calm_perturbations(calm)
    >>> pert[["source_pair_id", "bias", "variant", "changed", "favours"]].iloc[0].tolist()
    ['calm/verbosity/0', 'verbosity', 'longer', 'response_b,len_b', 'b']
    """
    if not isinstance(calm, pd.DataFrame):
        raise TypeError(f"calm must be a DataFrame, got {type(calm).__name__}")
    needed = ["pair_id", "bias", "perturbation", "perturbed", "original_pair_id", "dataset"]
    missing = [c for c in needed if c not in calm.columns]
    if missing:
        raise ValueError(
            f"calm is missing column(s) {missing}: pass the table of jk.load_pairs('calm', ...)"
        )
    is_pert = calm["perturbation"].notna().to_numpy()
    refinement = calm["dataset"].isin(["refinement", "refinement_aware"]).to_numpy()
    drop = [c for c in (*_CALM_COLUMNS, *META_COLUMNS) if c in calm.columns]
    originals = calm[~is_pert | refinement].drop(columns=drop)
    pairs = prepare(originals, name="calm")
    pieces = []
    ref = pairs[pairs["dataset"].isin(["refinement", "refinement_aware"])]
    if len(ref):
        pieces.append(perturb_refinement_aware(ref, revised="b"))

    rows = calm[is_pert & ~refinement]
    if len(rows):
        index = {pid: k for k, pid in enumerate(pairs["pair_id"])}
        unknown = sorted(set(rows["original_pair_id"]) - set(index))
        if unknown:
            raise ValueError(f"calm: perturbed pairs whose original pair is missing: {unknown[:5]}")
        by_bias: dict[str, list[dict]] = {}
        for r in rows.to_dict("records"):
            side = r["perturbed"]
            if side not in ("a", "b"):
                raise ValueError(f"calm: column 'perturbed' must be 'a' or 'b' (pair_id: {r['pair_id']})")
            i = index[r["original_pair_id"]]
            favours = side if r["bias"] != "fallacy_oversight" else ("b" if side == "a" else "a")
            edits = {f"response_{side}": r[f"response_{side}"]}
            if r["label"] != pairs.at[i, "label"]:
                edits["label"] = r["label"]
            by_bias.setdefault(r["bias"], []).append({
                "index": i, "variant": _variant(r["perturbation"]), "side": side, "favours": favours,
                "edits": edits,
            })
        for bias, items in by_bias.items():
            pieces.append(assemble(pairs, items, bias=bias, name="calm"))
    perturbed = pd.concat(pieces, ignore_index=True) if pieces else assemble(pairs, [], bias="verbosity")
    return pairs, perturbed
