"""LLMBar (Zeng et al., 2024): 13 pair sets with gold labels, and 6 judges x strategies, both orders.

Upstream: princeton-nlp/LLMBar (MIT), ``Dataset/**/dataset.json`` (``input``, ``output_1``,
``output_2``, ``label`` 1 or 2) and ``Dataset/**/evaluators/<judge>/<strategy>/result.json``: the
same records with ``results``, a list of rounds; the last round holds the final verdict of both
orders, ``"swap = False"`` (output_1 shown first) and ``"swap = True"`` (output_2 shown first),
each with ``winner`` "1" / "2" (in response terms) or null when unparsed, and the raw completion.
"""

from __future__ import annotations

import pandas as pd

from judgekit.data._common import as_list, check_names, label_from, read_json
from judgekit.data.fetch import registry_files

#: set name -> (directory under Dataset/, group)
SETS: dict[str, tuple[str, str]] = {
    "Natural": ("LLMBar/Natural", "LLMBar-Natural"),
    "Neighbor": ("LLMBar/Adversarial/Neighbor", "LLMBar-Adversarial"),
    "GPTInst": ("LLMBar/Adversarial/GPTInst", "LLMBar-Adversarial"),
    "GPTOut": ("LLMBar/Adversarial/GPTOut", "LLMBar-Adversarial"),
    "Manual": ("LLMBar/Adversarial/Manual", "LLMBar-Adversarial"),
    "MT-Bench": ("Processed/MT-Bench", "Processed"),
    "FairEval": ("Processed/FairEval", "Processed"),
    "LLMEval^2": ("Processed/LLMEval^2", "Processed"),
    "Normal": ("CaseStudy/Normal", "CaseStudy"),
    "Constraint": ("CaseStudy/Constraint", "CaseStudy"),
    "Negation": ("CaseStudy/Negation", "CaseStudy"),
    "Base_9": ("CaseStudy/Base_9", "CaseStudy"),
    "Base_10": ("CaseStudy/Base_10", "CaseStudy"),
}
_LABELS = {"1": "a", "2": "b"}
_WINNER = {"1": "a", "2": "b"}
_ORDERS = (("swap = False", "ab"), ("swap = True", "ba"))


def _files() -> tuple[dict[str, object], dict[tuple[str, str, str], object]]:
    by_dir = {v[0]: k for k, v in SETS.items()}
    datasets, results = {}, {}
    for f in registry_files("llmbar"):
        parts = f.path.split("/")
        if parts[-1] == "dataset.json":
            datasets[by_dir["/".join(parts[1:-1])]] = f
        elif parts[-1] == "result.json" and parts[-4] == "evaluators":
            set_name = by_dir["/".join(parts[1:-4])]
            results[(set_name, parts[-3], parts[-2])] = f
    return datasets, results


def judges_and_strategies() -> pd.DataFrame:
    """Which (set, judge, strategy) result files exist upstream."""
    _, results = _files()
    return pd.DataFrame(sorted(results), columns=["set", "judge", "strategy"])


def _text(completion: object) -> str | None:
    if isinstance(completion, list):
        return completion[0] if completion and isinstance(completion[0], str) else None
    return completion if isinstance(completion, str) else None


def pairs_frame(records: list, set_name: str, group: str | None, source: str) -> pd.DataFrame:
    """The pairs of one set from its ``dataset.json`` records (``input``, ``output_1``,
    ``output_2``, ``label`` 1 or 2, or missing)."""
    if not isinstance(records, list):
        raise ValueError(f"{source}: expected a JSON list of records")
    try:
        return pd.DataFrame({
            "pair_id": [f"llmbar/{set_name}/{i}" for i in range(len(records))],
            "prompt": [r["input"] for r in records],
            "response_a": [r["output_1"] for r in records],
            "response_b": [r["output_2"] for r in records],
            "label": [label_from(r.get("label"), _LABELS) for r in records],
            "dataset": set_name,
            "group": group,
        })
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"{source}: a record lacks input / output_1 / output_2 or has a bad "
                         f"label ({err!r})") from None


def judgment_rows(results: list, records: list, set_name: str, judge: str, strategy: str,
                  source: str) -> dict[str, list]:
    """Both orders' verdicts of one ``result.json`` (the last round of each record's
    ``results``), checked record by record against the set's pairs."""
    if not isinstance(results, list):
        raise ValueError(f"{source}: expected a JSON list of records with results")
    if len(results) != len(records):
        raise ValueError(f"{source}: {len(results)} results for {len(records)} pairs")
    rec: dict[str, list] = {c: [] for c in ("pair_id", "judge", "model", "template", "order",
                                            "verdict", "raw", "error")}
    for i, (r, pair) in enumerate(zip(results, records)):
        if r.get("input") != pair["input"] or r.get("output_1") != pair["output_1"]:
            raise ValueError(f"{source}: result {i} does not match pair {i} of the set")
        try:
            final = r["results"][-1]
        except (KeyError, IndexError, TypeError):
            raise ValueError(f"{source}: result {i} has no 'results' rounds") from None
        for key, order in _ORDERS:
            if key not in final:
                continue  # a run without the swapped order
            out = final[key] or {}
            winner = out.get("winner")
            verdict = None if winner is None else _WINNER.get(str(winner).strip())
            rec["pair_id"].append(f"llmbar/{set_name}/{i}")
            rec["judge"].append(f"{judge}/{strategy}")
            rec["model"].append(judge)
            rec["template"].append(strategy)
            rec["order"].append(order)
            rec["verdict"].append(verdict)
            rec["raw"].append(_text(out.get("completion")))
            rec["error"].append(
                None if verdict is not None
                else "no verdict parsed upstream" if winner is None
                else f"unexpected upstream winner {winner!r}"
            )
    return rec


def judgments_frame(rec: dict[str, list]) -> pd.DataFrame:
    """The judgments table from :func:`judgment_rows` output (concatenated lists)."""
    return pd.DataFrame({
        "pair_id": rec["pair_id"], "judge": rec["judge"], "order": rec["order"], "repeat": 0,
        "verdict": rec["verdict"], "p_a": float("nan"), "model": rec["model"],
        "template": rec["template"],
        # long texts: kept as Python objects, skipping a costly copy into Arrow strings
        "raw": pd.Series(rec["raw"], dtype=object), "error": rec["error"],
    })


def load(sets: str | list[str] | None = None, judges: str | list[str] | None = None,
         strategies: str | list[str] | None = None, *, progress: bool = True
         ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pairs (all 13 sets by default) and every judge x strategy's verdicts in both orders."""
    datasets, results = _files()
    set_list = as_list(sets, "sets") or list(SETS)
    check_names("LLMBar set", set_list, list(SETS))
    all_judges = sorted({k[1] for k in results})
    all_strats = sorted({k[2] for k in results})
    judge_list = as_list(judges, "judges")
    strat_list = as_list(strategies, "strategies")
    if judge_list is not None:
        check_names("LLMBar judge", judge_list, all_judges)
    if strat_list is not None:
        check_names("LLMBar strategy", strat_list, all_strats)

    pair_frames = []
    rec: dict[str, list] = {c: [] for c in ("pair_id", "judge", "model", "template", "order",
                                            "verdict", "raw", "error")}
    for set_name in set_list:
        entry = datasets[set_name]
        records = read_json(entry, progress=progress)
        pair_frames.append(pairs_frame(records, set_name, SETS[set_name][1], entry.name))
        for (s, judge, strategy), entry in sorted(results.items()):
            if s != set_name or (judge_list and judge not in judge_list) or (
                    strat_list and strategy not in strat_list):
                continue
            rows = judgment_rows(read_json(entry, progress=progress), records, set_name, judge,
                                 strategy, entry.name)
            for k, v in rows.items():
                rec[k].extend(v)
    return pd.concat(pair_frames, ignore_index=True), judgments_frame(rec)


def statistics(judgments: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The counts LLMBar's repository publishes in each ``statistics.json``, from the judgments.

    Per (set, judge/strategy): ``correct_False`` and ``correct_True`` (pairs judged right with
    output_1 shown first, and with the outputs swapped), ``correct_both`` (right in both orders)
    and ``equal`` (the same verdict in both orders), over all ``n`` pairs with an unparsed verdict
    counting as wrong. The accuracies are :func:`judgekit.report_card`'s ``acc_ab``, ``acc_ba``
    and ``acc_both`` times ``n``; ``equal`` is the position-consistent pairs of
    :func:`judgekit.position_consistency` plus, as LLMBar counts them, the pairs unparsed in both
    orders (judgekit leaves pairs with an unparsed verdict out of position consistency).

    Returns
    -------
    DataFrame
        ``dataset``, ``judge``, ``correct_False``, ``correct_True``, ``correct_both``, ``equal``, ``n``.
    """
    import judgekit as jk

    by = ["dataset", "judge"]
    judgments = judgments.merge(pairs[["pair_id", "dataset"]], on="pair_id", how="left")
    card = jk.report_card(judgments, pairs, by=by, metrics=["acc_ab", "acc_ba", "acc_both"],
                          n_boot=0).set_index(by)
    pc = jk.position_consistency(judgments, pairs, by=by, n_boot=0).set_index(by)
    parsed = judgments["verdict"].notna().groupby([judgments[c] for c in (*by, "pair_id")]).any()
    unparsed = (~parsed).groupby(level=by).sum()
    n = pairs.groupby("dataset").size()
    out = pd.DataFrame({"n": card.index.get_level_values("dataset").map(n)}, index=card.index)
    for column, metric in (("correct_False", "acc_ab"), ("correct_True", "acc_ba"),
                           ("correct_both", "acc_both")):
        out[column] = card[metric] * out["n"]
    consistent = (pc["estimate"] * pc["n"]).reindex(out.index).fillna(0)
    out["equal"] = consistent + unparsed.reindex(out.index).fillna(0)
    columns = ["correct_False", "correct_True", "correct_both", "equal", "n"]
    return out[columns].round(9).reset_index()
