"""LLMBar (Zeng et al., 2024): 13 pair sets with gold labels, and 6 judges x strategies, both orders.

Upstream: princeton-nlp/LLMBar (MIT), ``Dataset/**/dataset.json`` (``input``, ``output_1``,
``output_2``, ``label`` 1 or 2) and ``Dataset/**/evaluators/<judge>/<strategy>/result.json``: the
same records with ``results``, a list of rounds; the last round holds the final verdict of both
orders, ``"swap = False"`` (output_1 shown first) and ``"swap = True"`` (output_2 shown first),
each with ``winner`` "1" / "2" (in response terms) or null when unparsed, and the raw completion.

:func:`read_llmbar_results` reads the same layout from a folder of your own runs of LLMBar's
evaluation code, with the same parsing, so a table you read equals what the loader returns for
the same files. Files may be plain or gzip-compressed (``.gz``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgekit._stamp import stamped
from judgekit.data._common import (
    as_list,
    beside,
    check_names,
    find_files,
    json_file,
    label_from,
    read_json,
    reads,
)
from judgekit.data.fetch import registry_files
from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["read_llmbar_results"]

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


# ------------------------------------------------------------- reading your own runs

def _llmbar_set(set_dir: Path, root: Path, set_name: str | None) -> tuple[str, str | None]:
    """The set's name and group: LLMBar's own name for a folder of its release, else the
    folder's path below ``root``."""
    if set_name is not None:
        return set_name, None
    posix = set_dir.as_posix()
    for name, (sub, group) in SETS.items():
        if posix == sub or posix.endswith("/" + sub):
            return name, group
    try:
        rel = set_dir.relative_to(root).as_posix()
    except ValueError:
        rel = "."
    return (set_dir.name if rel == "." else rel), None


def _by_folder(path: Path) -> str | None:
    if any(p.parents[2].name == "evaluators" for p in path.rglob("result.json*")
           if len(p.parents) > 2):
        return "the folder holds <set>/evaluators/<judge>/<strategy>/result.json files"
    return None


@reads("llmbar", "jk.read_llmbar_results: LLMBar-style result.json files", rank=50,
       by_folder=_by_folder, layout="LLMBar result.json",
       by_record=lambda record: ("its records are LLMBar results (input, output_1/2, results)"
                                 if {"input", "output_1", "output_2", "results"} <= set(record)
                                 else None))
@stamped
def read_llmbar_results(path: str | Path, *, judge: str | None = None,
                        strategy: str | None = None, set_name: str | None = None
                        ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read LLMBar-style evaluation results (your own runs of its code) as pairs and judgments.

    Parameters
    ----------
    path : str or Path
        A ``result.json`` file, or a folder searched recursively for them. The layout of
        LLMBar's release is understood: ``<set>/evaluators/<judge>/<strategy>/result.json`` with
        the set's ``<set>/dataset.json`` (its pairs and gold labels) two levels above
        ``evaluators``. Without a ``dataset.json`` the pairs come from the result records.
    judge, strategy : str, optional
        Names for a ``result.json`` outside that layout (required then); they override the
        folder names otherwise.
    set_name : str, optional
        The set's name in ``pair_id`` and ``dataset`` (default: LLMBar's name for a folder of its
        release, e.g. ``Natural``, else the set folder's path below ``path``).

    Returns
    -------
    pairs, judgments : DataFrame
        Validated tables with the columns of ``jk.load_dataset("llmbar")``: pairs ``pair_id``
        (``llmbar/<set>/<index>``), ``dataset``, ``group``, labels "a"/"b" from ``label`` 1/2;
        judgments in both orders (``order`` "ab" is ``swap = False``) with ``judge`` =
        ``<judge>/<strategy>``, ``model``, ``template``, ``raw``, ``error``.

    Raises
    ------
    ValueError
        For a file that is not in this format, names the file and what is missing.

    Notes
    -----
    Each record of ``result.json`` is a pair (``input``, ``output_1``, ``output_2``, ``label``)
    with ``results``, a list of rounds; the last round holds the verdict of both orders::

        [{"input": "Write a haiku.", "output_1": "...", "output_2": "...", "label": 1,
          "results": [{"swap = False": {"winner": "1", "completion": "Output (a)"},
                       "swap = True": {"winner": "1", "completion": "Output (b)"}}]}]

    ``winner`` is "1" or "2" in response terms (whichever order was shown), or null when
    LLMBar's parser found no verdict (kept as an invalid verdict with ``error``).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> import judgekit as jk
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "MySet" / "evaluators" / "my-judge" / "Vanilla"
    >>> folder.mkdir(parents=True)
    >>> rounds = [{"swap = False": {"winner": "1"}, "swap = True": {"winner": "1"}}]
    >>> record = {"input": "2+2?", "output_1": "4", "output_2": "5", "label": 1, "results": rounds}
    >>> _ = (folder / "result.json").write_text(json.dumps([record]))
    >>> pairs, judgments = jk.read_llmbar_results(folder.parents[2])
    >>> judgments[["pair_id", "judge", "order", "verdict"]].to_dict("records")
    [{'pair_id': 'llmbar/MySet/0', 'judge': 'my-judge/Vanilla', 'order': 'ab', 'verdict': 'a'}, {'pair_id': 'llmbar/MySet/0', 'judge': 'my-judge/Vanilla', 'order': 'ba', 'verdict': 'a'}]
    """
    root = Path(path)
    files = find_files(root, ("result.json", "result.json.gz"), "result.json")
    base = root if root.is_dir() else root.parent
    by_set: dict[Path, list[tuple[Path, str, str]]] = {}
    for f in files:
        in_layout = len(f.parents) > 3 and f.parents[2].name == "evaluators"
        j = judge or (f.parents[1].name if in_layout else None)
        s = strategy or (f.parent.name if in_layout else None)
        if j is None or s is None:
            raise ValueError(f"{f}: not in <set>/evaluators/<judge>/<strategy>/result.json; pass "
                             "judge= and strategy= to name the judge and prompting strategy")
        set_dir = f.parents[3] if in_layout else f.parent
        by_set.setdefault(set_dir, []).append((f, j, s))
    pair_frames, rec = [], None
    for set_dir, results in by_set.items():
        name, group = _llmbar_set(set_dir, base, set_name)
        dataset = beside(set_dir, "dataset.json")
        if dataset is not None:
            records, source = json_file(dataset), str(dataset)
        else:  # the result records carry the pairs themselves
            records, source = json_file(results[0][0]), str(results[0][0])
        pair_frames.append(pairs_frame(records, name, group, source))
        for f, j, s in sorted(results, key=lambda t: (t[1], t[2])):
            rows = judgment_rows(json_file(f), records, name, j, s, str(f))
            rec = rows if rec is None else {k: rec[k] + v for k, v in rows.items()}
    pairs = pd.concat(pair_frames, ignore_index=True)
    if pairs["pair_id"].duplicated().any():
        dup = pairs.loc[pairs["pair_id"].duplicated(), "pair_id"].iloc[0]
        raise ValueError(f"two sets under {root} share the name of {dup!r}; pass set_name= or "
                         "read them separately")
    pairs = validate_pairs(pairs, name=f"LLMBar pairs from {root}")
    judgments = validate_judgments(judgments_frame(rec), pairs,
                                   name=f"LLMBar judgments from {root}")
    return pairs, judgments
