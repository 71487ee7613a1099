"""AlpacaEval 2.0: GPT-4-turbo's annotations of every model against gpt4_1106_preview.

Upstream: tatsu-lab/alpaca_eval, ``results/<model>/weighted_alpaca_eval_gpt4_turbo/annotations.json``
(code Apache-2.0, data CC BY-NC 4.0). Each annotation compares the baseline (``output_1``,
``generator_1`` = gpt4_1106_preview) with a model (``output_2``); ``preference`` in [1, 2] is
1 + P(output_2 wins) from the judge's logprobs.

judgekit puts the baseline in position a and the model in b, so ``p_a = 2 - preference``.

A default load reads the 43 models of :data:`DEFAULT_MODELS` (169 MB of annotations, 3.3-4.2 MB
per model, downloaded on first use), the models the notebook series and its checks were written
against; ``models="all"`` reads all 58 known models (229 MB), ``models=[...]`` any of them.

The annotator shows the two outputs in a random order (seeded by the instruction, identical for
every model) and labels them "m" (shown first) and "M" (shown second). With
P = P(M) / (P(m) + P(M)) from the verdict token's top logprobs, ``preference`` equals 1 + P when
the baseline was shown first (order "ab") and 2 - P when it was shown second ("ba"). Where a row
has no logprobs or P = 0.5 exactly, the order is taken from another annotation of the same
instruction (by this or another model's file: files at hand first, then more are downloaded
until every order is known).

:func:`read_alpacaeval` reads the same annotations from your own ``alpaca_eval`` runs (any
annotator) with the same parsing.
"""

from __future__ import annotations

import ast
import math
import random
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from judgekit._stack import caller_level
from judgekit._stamp import stamped
from judgekit.data._common import (
    as_list,
    check_names,
    find_files,
    json_file,
    read_json,
    reads,
    short_hash,
)
from judgekit.data.fetch import DataFile, is_available, read_bytes, registry_files
from judgekit.exceptions import MissingDataWarning
from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["read_alpacaeval"]

BASELINE = "gpt4_1106_preview"
ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"

#: The models a default load reads (downloading them on first use): 169 MB of annotations.
DEFAULT_MODELS: tuple[str, ...] = (
    "FuseChat-Gemma-2-9B-Instruct", "FuseChat-Qwen-2.5-7B-Instruct",
    "Mixtral-8x7B-Instruct-v0.1_concise", "NullModel", "OpenHermes-2.5-Mistral-7B", "Qwen-14B-Chat",
    "alpaca-7b", "alpaca-7b_concise", "alpaca-farm-ppo-human", "alpaca-farm-ppo-sim-gpt4-20k",
    "baize-v2-13b", "chatglm2-6b", "claude-2.1_concise", "claude-2", "claude-instant-1.2", "claude",
    "falcon-40b-instruct", "falcon-7b-instruct", "gemma-2b-it", "gemma-7b-it",
    "gpt-3.5-turbo-1106", "gpt-3.5-turbo-1106_concise", "gpt35_turbo_instruct", "gpt4_0613_concise",
    "gpt4_1106_preview", "gpt4_gamed", "minichat-3b", "minotaur-13b", "nous-hermes-13b",
    "oasst-sft-llama-33b", "oasst-sft-pythia-12b", "openbuddy-llama2-13b-v11.1", "phi-2-sft",
    "phi-2", "pythia-12b-mix-sft", "text_davinci_001", "text_davinci_003", "ultralm-13b",
    "vicuna-13b-v1.5-togetherai", "vicuna-13b-v1.5", "vicuna-7b-v1.5", "vicuna-7b", "wizardlm-13b",
)

PAIR_COLUMNS = ["pair_id", "prompt", "response_a", "response_b", "label", "model_a", "model_b",
                "dataset", "instruction_id"]
JUDGMENT_COLUMNS = ["pair_id", "judge", "order", "repeat", "verdict", "p_a", "preference", "raw"]


def _model_of(entry: DataFile) -> str:
    return entry.path.split("/")[1]


def annotation_files() -> dict[str, DataFile]:
    """Known annotation files, by model name."""
    return {_model_of(f): f for f in registry_files("alpacaeval")}


def _p_second(raw: object) -> tuple[float | None, str | None]:
    """P(second-shown output) from the verdict token's top logprobs, and the completion text."""
    if raw is None:
        return None, None
    if isinstance(raw, str):
        try:
            raw = ast.literal_eval(raw)  # a Python literal upstream; never eval
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None, raw  # an annotator without logprobs stores the completion text
    text = raw.get("text") if isinstance(raw, dict) else None
    try:
        tops = raw["logprobs"]["content"][0]["top_logprobs"]
    except (KeyError, IndexError, TypeError):
        return None, text
    probs = {t["token"]: math.exp(t["logprob"]) for t in tops if t.get("token") in ("m", "M")}
    total = probs.get("m", 0.0) + probs.get("M", 0.0)
    if total <= 0:
        return None, text
    return probs.get("M", 0.0) / total, text


def _order(preference: float, p_second: float | None) -> str | None:
    if p_second is None or not np.isfinite(preference):
        return None
    e_ab = abs(preference - (1.0 + p_second))
    e_ba = abs(preference - (2.0 - p_second))
    if min(e_ab, e_ba) > 1e-3 or abs(e_ab - e_ba) < 1e-9:
        return None
    return "ab" if e_ab < e_ba else "ba"


def _parse(entry: DataFile, model: str, *, progress: bool) -> tuple[dict[str, list], dict[str, str]]:
    return annotation_rows(read_json(entry, progress=progress), model, entry.name)


def annotation_rows(rows: object, model: str, source: str) -> tuple[dict[str, list], dict[str, str]]:
    """Columns of one ``annotations.json`` (``model`` is the compared model, in ``pair_id`` and
    ``model_b``), and the shown order of each instruction whose logprobs determine it.

    ``preference`` 1 means output_1 (the baseline) wins, 2 output_2; AlpacaEval codes a draw as
    1.5 (or 0, in its older annotators).
    """
    if not isinstance(rows, list):
        raise ValueError(f"{source}: expected a list of annotations")
    rec: dict[str, list] = {c: [] for c in (*PAIR_COLUMNS, "order", "verdict", "p_a", "preference", "raw")}
    for i, r in enumerate(rows):
        try:
            instruction = r["instruction"]
            pref = r.get("preference")
            pref = float(pref) if pref is not None else math.nan
            p_second, text = _p_second(r.get("raw_completion"))
            outputs = r["output_1"], r["output_2"]
        except (KeyError, ValueError, SyntaxError, TypeError) as err:
            raise ValueError(f"{source}, annotation {i}: cannot parse ({err!r})") from err
        if pref == 0:
            pref = 1.5  # AlpacaEval's older code for a draw
        iid = short_hash(instruction)
        rec["pair_id"].append(f"alpacaeval/{model}/{iid}")
        rec["prompt"].append(instruction)
        rec["response_a"].append(outputs[0])
        rec["response_b"].append(outputs[1])
        rec["label"].append(None)
        rec["model_a"].append(r.get("generator_1", BASELINE))
        rec["model_b"].append(model)  # the results folder name, as on the leaderboard
        rec["dataset"].append(r.get("dataset"))
        rec["instruction_id"].append(iid)
        rec["order"].append(_order(pref, p_second))
        if np.isfinite(pref):
            verdict = "a" if pref < 1.5 else ("b" if pref > 1.5 else "tie")
            p_a = min(1.0, max(0.0, 2.0 - pref))
        else:
            verdict, p_a = None, math.nan
        rec["verdict"].append(verdict)
        rec["p_a"].append(p_a)
        rec["preference"].append(pref)
        rec["raw"].append(text)
    known = {iid: o for iid, o in zip(rec["instruction_id"], rec["order"]) if o is not None}
    return rec, known


def default_files() -> list[DataFile]:
    """The annotation files a default load reads (one per model of :data:`DEFAULT_MODELS`)."""
    return [f for m, f in annotation_files().items() if m in DEFAULT_MODELS]


def load(models: str | list[str] | None = None, *, progress: bool = True
         ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pairs and judgments of AlpacaEval 2.0 (see :func:`judgekit.load_pairs`).

    ``models``: None for :data:`DEFAULT_MODELS`, ``"all"`` for every known model, or names.
    """
    files = annotation_files()
    if models is None:
        wanted = [m for m in files if m in DEFAULT_MODELS]
    elif isinstance(models, str) and models == "all":
        wanted = list(files)
    else:
        wanted = as_list(models, "models")
        check_names("AlpacaEval model", wanted, list(files))
        wanted = list(dict.fromkeys(wanted))

    parts = []
    orders: dict[str, str] = {}
    for model in wanted:
        rec, known = _parse(files[model], model, progress=progress)
        parts.append(rec)
        orders.update(known)

    # Fill orders that the logprobs do not determine from other annotations of the instruction
    # (every model shares the order per instruction: 0 conflicts). Files at hand are read first,
    # then others are downloaded one by one until every order is known, so the result does not
    # depend on what happens to be cached.
    needed = {iid for rec in parts for iid, o in zip(rec["instruction_id"], rec["order"])
              if o is None and iid not in orders}
    others = [m for m in files if m not in wanted]
    others.sort(key=lambda m: (not is_available(files[m]), m not in DEFAULT_MODELS))
    for model in others:
        if needed <= orders.keys():
            break
        _, known = _parse(files[model], model, progress=progress)
        orders.update(known)

    return assemble(parts, orders, [ANNOTATOR] * len(parts))


def assemble(parts: list[dict[str, list]], orders: dict[str, str], judges: list[str]
             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two tables from :func:`annotation_rows` parts, each judged by ``judges[i]``; a
    judgment whose order is neither determined by its own logprobs nor in ``orders`` (by
    instruction id) is left out, with a warning."""

    def column(name: str) -> list:
        return [v for rec in parts for v in rec[name]]

    pairs = pd.DataFrame({c: column(c) for c in PAIR_COLUMNS})
    judg = pd.DataFrame({
        "pair_id": pairs["pair_id"],
        "judge": [j for rec, j in zip(parts, judges) for _ in rec["pair_id"]],
        "order": [o if o is not None else orders.get(iid) for o, iid in
                  zip(column("order"), column("instruction_id"))],
        "repeat": 0, "verdict": column("verdict"), "p_a": column("p_a"),
        "preference": column("preference"), "raw": pd.Series(column("raw"), dtype=object),
    })
    unknown = judg["order"].isna()
    if unknown.any():
        warnings.warn(
            f"alpacaeval: the shown order of {int(unknown.sum())} annotations cannot be recovered "
            "(no logprobs here or in any other file at hand); their judgments are left out, the "
            "pairs are kept. Load a model with logprobs alongside to recover them.",
            MissingDataWarning, stacklevel=caller_level(),
        )
        judg = judg[~unknown].reset_index(drop=True)
    return pairs, judg


def _table(name: str) -> DataFile:
    (entry,) = registry_files(name)
    return entry


def _csv(name: str) -> pd.DataFrame:
    import io

    entry = _table(name)
    return pd.read_csv(io.BytesIO(read_bytes(entry)))


def load_leaderboard() -> pd.DataFrame:
    """The published AlpacaEval 2.0 leaderboard (GPT-4-turbo annotator), one row per model."""
    df = _csv("alpacaeval_leaderboard")
    return df.rename(columns={df.columns[0]: "model"})


def load_arena_elo() -> pd.DataFrame:
    """Arena Elo beside AlpacaEval, LC AlpacaEval, MT-bench and other benchmarks (56 models)."""
    df = _csv("arena_elo")
    df.columns = [" ".join(str(c).split()) for c in df.columns]
    return df.rename(columns={"Model": "model"})


def load_glm_weights() -> pd.DataFrame:
    """Published per-model coefficients of the length-controlled GLM (baseline gpt4_1106_preview).

    Columns keep the upstream term names: ``np.tanh(std_delta_len)`` (length term),
    ``instruction_difficulty`` and ``not_gamed_baseline.astype(float)`` (the model's intercept).
    """
    df = _csv("alpacaeval_glm_weights")
    return df.rename(columns={df.columns[0]: "model"})


def load_evaluators() -> pd.DataFrame:
    """AlpacaEval's evaluator leaderboard: human agreement, price, time, biases of 32 judges."""
    df = _csv("alpacaeval_evaluators")
    return df.rename(columns={df.columns[0]: "evaluator"})


# ------------------------------------------------------------- reading your own runs

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


def _compared_model(f: Path, rows: list[dict], model: str | None) -> str:
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
    records = json_file(path)
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


def _by_record(record: dict) -> str | None:
    if {"instruction", "output_1", "output_2"} <= set(record) and "preference" in record:
        return "its records are AlpacaEval annotations (instruction, output_1/2, preference)"
    return None


@reads("alpacaeval", "jk.read_alpacaeval: AlpacaEval annotations.json (a file or results folder)",
       rank=40, by_record=_by_record, layout="AlpacaEval annotations.json",
       by_name=lambda name: ("the file is named annotations.json"
                             if name in ("annotations.json", "annotations.json.gz") else None),
       by_folder=lambda path: ("the folder holds annotations.json files"
                               if next(path.rglob("annotations.json*"), None) is not None else None))
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
        files = find_files(root, ("annotations.json", "annotations.json.gz"), "annotations.json")
    given_outputs = _outputs_by_instruction(Path(model_outputs) if model_outputs else None)
    reference = _outputs_by_instruction(Path(reference_outputs) if reference_outputs else None)
    groups: dict[str, tuple[list[dict], dict[str, str]]] = {}
    for f in files:
        rows = json_file(f)
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
        rec, known = annotation_rows(rows, _compared_model(f, rows, model), str(f))
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
        p, j = assemble(parts, orders, [judge] * len(parts))
        pair_frames.append(p)
        judgment_frames.append(j)
    pairs = pd.concat(pair_frames, ignore_index=True).drop_duplicates("pair_id", ignore_index=True)
    pairs = validate_pairs(pairs, name=f"AlpacaEval pairs from {root}")
    judgments = validate_judgments(pd.concat(judgment_frames, ignore_index=True), pairs,
                                   name=f"AlpacaEval judgments from {root}")
    return pairs, judgments
