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
"""

from __future__ import annotations

import ast
import math
import warnings

import numpy as np
import pandas as pd

from judgekit._stack import caller_level
from judgekit.data._common import as_list, check_names, read_json, short_hash
from judgekit.data.fetch import DataFile, is_available, read_bytes, registry_files
from judgekit.exceptions import MissingDataWarning

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
