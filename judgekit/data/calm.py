"""CALM (Ye et al., 2024, "Justice or Prejudice?"): base sets and pre-perturbed bias sets.

Upstream: Y0oMu/LLM-Judge-Bias-Dataset (no licence stated: research use only, never
redistribute). Records hold ``question``, ``answer1``, ``answer2`` and ``data_resource``; the
bias sets add perturbed versions of one answer:

============================  ==========================================  =====================
set                           perturbed fields                            pairs (a, b)
============================  ==========================================  =====================
``alignment``                 (base set: DPO pairs)                       answer1, answer2
``fact_related``              (base set)                                  answer1, answer2
``refinement_aware``          (base set) ``answer1_polished``             answer1, polished
``verbosity``                 ``answer2_longer`` (worse answer lengthened)
``fallacy_oversight``         ``answer1_fallacy_oversight`` (better answer's logic scrambled)
``sentiment``                 ``answer{1,2}_{cheerful,sad,angry,fear}``
``authority``                 ``answer{1,2}_with_reference_{book,url,quote}``
``refinement``                ``answer1_polished``
============================  ==========================================  =====================

In the CALM data ``answer1`` is the better answer (the paper lengthens "the worse quality
answers" into ``answer2_longer`` and scrambles "the better quality answers" into
``answer1_fallacy_oversight``), so base pairs are labelled "a". For each record of a bias set
judgekit emits the original pair (``perturbation`` missing) and one pair per perturbed field,
which replaces that answer and keeps the other. Labels of perturbed pairs: unchanged ("a"),
except fallacy-oversight, where the paper counts the unscrambled worse answer as the better one
("b"); refinement pairs (original vs polished answer) have no label. ``changed`` is False where
the upstream "perturbed" text equals the original (a few rewrites came back unchanged).
"""

from __future__ import annotations

import pandas as pd

from judgekit.data._common import as_list, check_names, read_json
from judgekit.data.fetch import registry_files

#: set name -> (upstream path, bias studied or None for a base set)
SETS: dict[str, tuple[str, str | None]] = {
    "alignment": ("base_datasets/alignment_dataset.json", None),
    "fact_related": ("base_datasets/fact_related_dataset.json", None),
    "refinement_aware": ("base_datasets/refinement_aware_dataset.json", None),
    "verbosity": ("bias_datasets/verbosity_bias_standardized.json", "verbosity"),
    "fallacy_oversight": ("bias_datasets/fallacy_oversight_bias_standardized.json", "fallacy_oversight"),
    "sentiment": ("bias_datasets/sentiment_bias_standardized.json", "sentiment"),
    "authority": ("bias_datasets/authority_bias_standardized.json", "authority"),
    "refinement": ("bias_datasets/refinement_bias_standardized.json", "refinement_aware"),
}
_EXTRA_COLUMNS = ["task", "bias", "perturbation", "perturbed", "changed", "original_pair_id",
                  "original_response_a", "original_response_b", "item"]


def _perturbed_fields(record: dict) -> list[tuple[str, str]]:
    """(field, side) of every perturbed answer in a record, in a fixed order."""
    out = []
    for field in sorted(record):
        if field.startswith("answer1_"):
            out.append((field, "a"))
        elif field.startswith("answer2_"):
            out.append((field, "b"))
    return out


def _label(set_name: str, bias: str | None, field: str | None) -> str | None:
    if set_name in ("refinement_aware", "refinement"):
        return None
    if field is not None and bias == "fallacy_oversight":
        return "b"
    return "a"


def load(sets: str | list[str] | None = None, *, progress: bool = True) -> tuple[pd.DataFrame, None]:
    """CALM pairs (all base and bias sets by default); CALM publishes no judge outputs."""
    wanted = as_list(sets, "sets") or list(SETS)
    check_names("CALM set", wanted, list(SETS))
    files = {f.path: f for f in registry_files("calm")}
    rows: list[dict] = []
    for set_name in wanted:
        path, bias = SETS[set_name]
        records = read_json(files[path], progress=progress)
        for i, r in enumerate(records):
            question, ans1 = r["question"], r["answer1"]
            refinement = set_name in ("refinement_aware", "refinement")
            ans2 = r["answer1_polished"] if refinement else r["answer2"]
            base_id = f"calm/{set_name}/{i}"
            common = {"prompt": question, "dataset": set_name, "task": r.get("data_resource"),
                      "bias": bias, "item": i, "original_response_a": ans1,
                      "original_response_b": ans2}
            if refinement:
                rows.append({**common, "pair_id": f"{base_id}/answer1_polished", "response_a": ans1,
                             "response_b": ans2, "label": None, "perturbation": "answer1_polished",
                             "perturbed": "b", "changed": ans2 != ans1, "original_pair_id": None})
                continue
            rows.append({**common, "pair_id": base_id, "response_a": ans1, "response_b": ans2,
                         "label": _label(set_name, bias, None), "perturbation": None,
                         "perturbed": None, "changed": False, "original_pair_id": base_id})
            if bias is None:
                continue
            for field, side in _perturbed_fields(r):
                text = r[field]
                if not isinstance(text, str):
                    continue
                rows.append({**common, "pair_id": f"{base_id}/{field}",
                             "response_a": text if side == "a" else ans1,
                             "response_b": text if side == "b" else ans2,
                             "label": _label(set_name, bias, field), "perturbation": field,
                             "perturbed": side, "changed": text != (ans1 if side == "a" else ans2),
                             "original_pair_id": base_id})
    columns = ["pair_id", "prompt", "response_a", "response_b", "label", "dataset", *_EXTRA_COLUMNS]
    return pd.DataFrame(rows, columns=columns), None
