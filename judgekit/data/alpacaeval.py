"""AlpacaEval 2.0: GPT-4-turbo's annotations of every model against gpt4_1106_preview.

Upstream: tatsu-lab/alpaca_eval, ``results/<model>/weighted_alpaca_eval_gpt4_turbo/annotations.json``
(code Apache-2.0, data CC BY-NC 4.0). Each annotation compares the baseline (``output_1``,
``generator_1`` = gpt4_1106_preview) with a model (``output_2``); ``preference`` in [1, 2] is
1 + P(output_2 wins) from the judge's logprobs.

judgekit puts the baseline in position a and the model in b, so ``p_a = 2 - preference``.

The annotator shows the two outputs in a random order (seeded by the instruction, identical for
every model) and labels them "m" (shown first) and "M" (shown second). With
P = P(M) / (P(m) + P(M)) from the verdict token's top logprobs, ``preference`` equals 1 + P when
the baseline was shown first (order "ab") and 2 - P when it was shown second ("ba"). Where a row
has no logprobs or P = 0.5 exactly, the order is taken from another annotation of the same
instruction (by this or another model's file).
"""

from __future__ import annotations

import ast
import math
import warnings

import numpy as np
import pandas as pd

from judgekit.data._common import as_list, check_names, read_json, short_hash
from judgekit.data.fetch import DataFile, DataFileError, is_available, read_bytes, registry_files
from judgekit.exceptions import MissingDataWarning

BASELINE = "gpt4_1106_preview"
ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"

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
        raw = ast.literal_eval(raw)  # a Python literal upstream; never eval
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
    rows = read_json(entry, progress=progress)
    if not isinstance(rows, list):
        raise ValueError(f"{entry.name}: expected a list of annotations")
    rec: dict[str, list] = {c: [] for c in (*PAIR_COLUMNS, "order", "verdict", "p_a", "preference", "raw")}
    for i, r in enumerate(rows):
        try:
            instruction = r["instruction"]
            pref = r.get("preference")
            pref = float(pref) if pref is not None else math.nan
            p_second, text = _p_second(r.get("raw_completion"))
        except (KeyError, ValueError, SyntaxError) as err:
            raise ValueError(f"{entry.name}, annotation {i}: cannot parse ({err!r})") from err
        iid = short_hash(instruction)
        rec["pair_id"].append(f"alpacaeval/{model}/{iid}")
        rec["prompt"].append(instruction)
        rec["response_a"].append(r["output_1"])
        rec["response_b"].append(r["output_2"])
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


def load(models: str | list[str] | None = None, *, progress: bool = True
         ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pairs and judgments of AlpacaEval 2.0 (see :func:`judgekit.load_pairs`)."""
    files = annotation_files()
    wanted = as_list(models)
    if wanted is None:
        wanted = [m for m, f in files.items() if is_available(f)]
        skipped = sorted(set(files) - set(wanted))
        if not wanted:
            raise DataFileError(
                "alpacaeval: no annotation file is in the mirror or the cache; pass models=[...] "
                f"to download some (known: {', '.join(sorted(files))}), or run "
                "`judgekit fetch alpacaeval`."
            )
        if skipped:
            warnings.warn(
                f"alpacaeval: loading the {len(wanted)} models at hand; skipped {len(skipped)} "
                f"known models not in the mirror or cache (pass models=[...] to download them): "
                f"{', '.join(skipped)}", MissingDataWarning, stacklevel=4,
            )
    else:
        check_names("AlpacaEval model", wanted, list(files))
        wanted = list(dict.fromkeys(wanted))

    parts = []
    orders: dict[str, str] = {}
    for model in wanted:
        rec, known = _parse(files[model], model, progress=progress)
        parts.append(rec)
        orders.update(known)

    # Fill orders that the logprobs do not determine from other annotations of the instruction.
    needed = {iid for rec in parts for iid, o in zip(rec["instruction_id"], rec["order"])
              if o is None and iid not in orders}
    if needed:
        for model, entry in files.items():
            if model in wanted or not is_available(entry):
                continue
            _, known = _parse(entry, model, progress=progress)
            orders.update(known)
            if needed <= orders.keys():
                break
    def column(name: str) -> list:
        return [v for rec in parts for v in rec[name]]

    pairs = pd.DataFrame({c: column(c) for c in PAIR_COLUMNS})
    judg = pd.DataFrame({
        "pair_id": pairs["pair_id"], "judge": ANNOTATOR,
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
            MissingDataWarning, stacklevel=4,
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
