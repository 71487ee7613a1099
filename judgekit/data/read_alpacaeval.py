"""Read AlpacaEval results (your own runs, any annotator) as judgekit's two tables."""

from __future__ import annotations

import math
import random
import warnings
from pathlib import Path

import pandas as pd

from judgekit._stack import caller_level
from judgekit._stamp import stamped
from judgekit.data import alpacaeval as _ae
from judgekit.data.readers import _find, _json
from judgekit.exceptions import MissingDataWarning
from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["read_alpacaeval"]

_HARD = (1.0, 1.5, 2.0)  # preferences of an annotator without probabilities (0 is read as 1.5)


def seeded_order(instruction: str, seed: int = 0) -> str:
    """The order AlpacaEval's annotators show an instruction's two outputs in.

    AlpacaEval switches ``output_1`` and ``output_2`` at random, seeded by the text
    ``"is_switched_outputs" + instruction + str(seed)`` through Python's :class:`random.Random`
    (its default seed is 0). Returns "ba" (the baseline, output_1, shown second) when switched.

    Examples
    --------
    >>> seeded_order("What is the capital of France?") in ("ab", "ba")
    True
    """
    switched = random.Random(f"is_switched_outputs{instruction}{seed}").choices([False, True], k=1)[0]
    return "ba" if switched else "ab"


def _in_results_layout(f: Path) -> bool:
    """``.../results/<model>/<annotator>/annotations.json``, as in AlpacaEval's repository."""
    return len(f.parents) > 3 and f.parents[2].name == "results"


def _only(values: list) -> str | None:
    """The one distinct value of a field across annotations (None when absent or several)."""
    distinct = {str(v) for v in values if v is not None and v == v}
    if len(distinct) > 1:
        return None
    return distinct.pop() if distinct else None


def _model_of(f: Path, rows: list[dict], model: str | None) -> str:
    if model is not None:
        return model
    if _in_results_layout(f):
        return f.parents[1].name  # the results folder name, as on the leaderboard
    generator = _only([r.get("generator_2") for r in rows])
    if generator is not None:
        return generator
    raise ValueError(f"{f}: cannot tell which model was compared (no single 'generator_2' in the "
                     "annotations, and not in results/<model>/<annotator>/); pass model=")


def _annotator_of(f: Path, rows: list[dict], annotator: str | None) -> str:
    if annotator is not None:
        return annotator
    named = _only([r.get("annotator") for r in rows])
    if named is not None:
        return named
    if _in_results_layout(f) or f.parent.name not in ("", "."):
        return f.parent.name
    return "alpacaeval"


def _outputs_by_instruction(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    records = _json(path)
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise ValueError(f"{path}: expected a JSON list of {{instruction, output, ...}} records")
    try:
        return {r["instruction"]: r["output"] for r in records}
    except KeyError as err:
        raise ValueError(f"{path}: a record lacks {err}") from None


def _fill_outputs(rows: list, f: Path, model_outputs: dict[str, str],
                  reference_outputs: dict[str, str]) -> list:
    """Annotations that omit an output take it from the model's (or reference's) outputs."""
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"{f}: expected a JSON list of annotations (AlpacaEval's annotations.json)")
    out = []
    for i, r in enumerate(rows):
        r = dict(r)
        for column, source, name in (("output_2", model_outputs, "model_outputs"),
                                     ("output_1", reference_outputs, "reference_outputs")):
            if r.get(column) is None:
                if r.get("instruction") not in source:
                    raise ValueError(f"{f}, annotation {i}: no {column!r}, and no {name} record "
                                     "for its instruction; pass "
                                     f"{name}= (a model_outputs.json with that instruction)")
                r[column] = source[r["instruction"]]
        out.append(r)
    return out


@stamped
def read_alpacaeval(
    path: str | Path,
    *,
    model: str | None = None,
    annotator: str | None = None,
    model_outputs: str | Path | None = None,
    reference_outputs: str | Path | None = None,
    order_seed: int | None = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read AlpacaEval annotations (your own ``alpaca_eval`` runs, any annotator) as pairs and
    judgments.

    Parameters
    ----------
    path : str or Path
        An ``annotations.json`` file, or a folder searched recursively for them (e.g. a results
        folder laid out as AlpacaEval's, ``results/<model>/<annotator>/annotations.json``, or an
        ``alpaca_eval`` output folder). Files may be gzip-compressed (``.gz``).
    model : str, optional
        The compared model (``model_b``). Default: the folder name in the ``results`` layout
        (as on AlpacaEval's leaderboard), else the annotations' ``generator_2``.
    annotator : str, optional
        The judge's name. Default: the annotations' ``annotator`` field, else the folder name.
    model_outputs, reference_outputs : str or Path, optional
        ``model_outputs.json`` files (``[{"instruction", "output", "generator"}, ...]``) that supply
        ``output_2`` (the model's) and ``output_1`` (the baseline's) where an annotation omits
        them. In the ``results`` layout the model's ``model_outputs.json`` beside the annotator
        folder is used when present.
    order_seed : int or None, default 0
        AlpacaEval shows the two outputs in an order drawn at random from the instruction (see
        :func:`seeded_order`). Where the verdict token's logprobs do not tell the shown order
        (annotators without logprobs, or P = 1/2 exactly), the order is the seeded one. It is
        used only when it agrees with every order the logprobs do tell (it does for AlpacaEval
        2.0's default annotator: all 32,088 annotations of 43 models whose logprobs tell the
        order); otherwise, or with ``None``,
        such judgments are left out with a :class:`MissingDataWarning`.

    Returns
    -------
    pairs, judgments : DataFrame
        Validated tables with the columns of ``jk.load_dataset("alpacaeval")``: one pair per
        (model, instruction), ``pair_id`` ``alpacaeval/<model>/<instruction hash>``, the
        baseline (``output_1``) as response a; one judgment per annotation with ``p_a`` = 2 -
        ``preference`` for probability-weighted annotators (NaN for annotators whose
        preferences are all 1, 1.5 or 2), ``preference`` and ``raw`` (the completion text).

    Raises
    ------
    ValueError
        For a file that is not in this format, naming the file and the annotation.

    Notes
    -----
    An ``annotations.json`` is a list of records::

        [{"instruction": "Name a prime.", "output_1": "2", "generator_1": "gpt4_1106_preview",
          "output_2": "9", "generator_2": "my-model", "annotator": "weighted_alpaca_eval_gpt4_turbo",
          "preference": 1.03, "raw_completion": {"logprobs": {"content": [{"top_logprobs":
          [{"token": "m", "logprob": -0.03}, {"token": "M", "logprob": -3.6}]}]}}}, ...]

    ``preference`` is 1 when output_1 wins and 2 when output_2 wins; weighted annotators give
    1 + P(output_2 wins) from the logprobs of the tokens ``m`` (first shown) and ``M``; 1.5 (or
    0, in older versions) is a draw.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> import judgekit as jk
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> rows = [{"instruction": "Name a prime.", "output_1": "2", "generator_1": "ref",
    ...          "output_2": "9", "generator_2": "mine", "annotator": "my_gpt4_judge",
    ...          "preference": 1.0, "raw_completion": "m"}]
    >>> _ = (folder / "annotations.json").write_text(json.dumps(rows))
    >>> pairs, judgments = jk.read_alpacaeval(folder)
    >>> judgments[["judge", "order", "verdict", "p_a"]].to_dict("records")  # order: AlpacaEval's seeded one
    [{'judge': 'my_gpt4_judge', 'order': 'ba', 'verdict': 'a', 'p_a': nan}]
    """
    root = Path(path)
    if root.is_file():
        files = [root]
    else:
        files = _find(root, ("annotations.json", "annotations.json.gz"), "annotations.json")
    given_outputs = _outputs_by_instruction(Path(model_outputs) if model_outputs else None)
    reference = _outputs_by_instruction(Path(reference_outputs) if reference_outputs else None)
    groups: dict[str, tuple[list[dict], dict[str, str]]] = {}
    for f in files:
        rows = _json(f)
        if isinstance(rows, list) and rows and isinstance(rows[0], dict):
            outputs = given_outputs
            beside = f.parents[1] / "model_outputs.json" if _in_results_layout(f) else None
            if not outputs and beside is not None and beside.is_file() and any(
                    r.get("output_2") is None for r in rows):
                outputs = _outputs_by_instruction(beside)
            rows = _fill_outputs(rows, f, outputs, reference)
        elif not isinstance(rows, list):
            raise ValueError(f"{f}: expected a JSON list of annotations (AlpacaEval's "
                             "annotations.json)")
        judge = _annotator_of(f, rows, annotator)
        rec, known = _ae.annotation_rows(rows, _model_of(f, rows, model), str(f))
        prefs = [p for p in rec["preference"] if not math.isnan(p)]
        if not judge.startswith("weighted_") and all(p in _HARD for p in prefs):
            rec["p_a"] = [math.nan] * len(rec["p_a"])  # a hard verdict is not a probability
        parts, orders = groups.setdefault(judge, ([], {}))
        parts.append(rec)
        orders.update(known)

    pair_frames, judgment_frames = [], []
    for judge, (parts, orders) in groups.items():
        texts = {iid: p for rec in parts for iid, p in zip(rec["instruction_id"], rec["prompt"])}
        if order_seed is not None:
            wrong = sum(seeded_order(texts[iid], order_seed) != o for iid, o in orders.items())
            if wrong:
                warnings.warn(
                    f"alpacaeval: {wrong} of {len(orders)} orders that {judge}'s logprobs determine "
                    f"differ from AlpacaEval's seeded order (seed {order_seed}); orders are taken "
                    "from the logprobs only", MissingDataWarning, stacklevel=caller_level())
            else:
                orders = {**{iid: seeded_order(t, order_seed) for iid, t in texts.items()}, **orders}
        p, j = _ae.assemble(parts, orders, [judge] * len(parts))
        pair_frames.append(p)
        judgment_frames.append(j)
    pairs = pd.concat(pair_frames, ignore_index=True).drop_duplicates("pair_id", ignore_index=True)
    pairs = validate_pairs(pairs, name=f"AlpacaEval pairs from {root}")
    judgments = validate_judgments(pd.concat(judgment_frames, ignore_index=True), pairs,
                                   name=f"AlpacaEval judgments from {root}")
    return pairs, judgments
