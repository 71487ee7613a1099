"""Turn (judgments, pairs) into per-judge, per-model preference rows against a baseline."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgekit import _bootstrap
from judgekit._scanned import frame_of, is_scanned
from judgekit.schema import _ids, validate_judgments, validate_pairs

PREFERENCES = ("auto", "prob", "verdict")


@dataclass(frozen=True)
class Prepared:
    """One judge's comparisons of every model with the baseline, one row per pair.

    ``rows`` has columns ``model``, ``instruction``, ``pair_id``, ``y`` (P(model preferred),
    averaged over the orders and repeats judged), ``y_discrete`` (the same from verdicts only),
    ``len_model``, ``len_baseline``, ``n_judgments``. Identity pairs (baseline against itself)
    are in ``identity`` instead. ``all_models`` lists every non-baseline model of the pairs, so
    a model none of whose judgments is usable can be reported (as NaN) instead of vanishing.
    """

    judge: str
    baseline: str
    rows: pd.DataFrame
    identity: pd.DataFrame
    n_invalid: pd.Series
    orders: pd.Series
    all_models: tuple[str, ...] = ()
    preference: str = "auto"

    @property
    def models(self) -> list[str]:
        return sorted(self.rows["model"].unique())

    @property
    def instructions(self) -> pd.Index:
        return pd.Index(pd.unique(self.rows["instruction"]), name="instruction_id").sort_values()

    @property
    def unusable(self) -> list[str]:
        """Models of the pairs without a single usable judgment by this judge."""
        judged = set(self.models)
        return [m for m in self.all_models if m not in judged]


def infer_baseline(pairs: pd.DataFrame) -> str:
    """The model that takes part in every pair (if two do, the one more often in position a)."""
    n = len(pairs)
    codes, names = pd.factorize(pd.concat([pairs["model_a"].astype(str), pairs["model_b"].astype(str)],
                                          ignore_index=True))
    a, b = codes[:n], codes[n:]
    k = len(names)
    appears = np.bincount(a, minlength=k) + np.bincount(b, minlength=k) - np.bincount(a[a == b], minlength=k)
    as_a = np.bincount(a, minlength=k)
    order = np.argsort(np.asarray(names, dtype=str), kind="stable")
    every = [int(c) for c in order if appears[c] == n]
    if not every:
        raise ValueError(
            "cannot infer the baseline: no model takes part in every pair; pass baseline=..."
        )
    best = max(as_a[c] for c in every)
    top = [str(names[c]) for c in every if as_a[c] == best]
    if len(top) > 1:
        raise ValueError(f"cannot infer the baseline: {top} take part in every pair equally often "
                         "as response a; pass baseline=...")
    return top[0]


def _prompt_key(prompts: pd.Series) -> np.ndarray:
    """``"prompt:" + sha1(prompt)[:16]``, hashed once per distinct prompt."""
    codes, uniques = pd.factorize(prompts)
    keys = np.array(["prompt:" + hashlib.sha1(str(s).encode()).hexdigest()[:16] for s in uniques],
                    dtype=object)
    return keys[codes]


def instruction_key(pairs: pd.DataFrame) -> pd.Series:
    """``instruction_id`` where present, else a short hash of the prompt text."""
    if "instruction_id" not in pairs.columns:
        return pd.Series(_prompt_key(pairs["prompt"]), index=pairs.index, name="prompt")
    iid = pairs["instruction_id"]
    missing = iid.isna().to_numpy()
    if missing.any():
        iid = iid.astype(object).copy()
        iid[missing] = _prompt_key(pairs.loc[missing, "prompt"])
    return iid.astype(str)


def prepare(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    baseline: str | None = None,
    *,
    preference: str = "auto",
    require_lengths: bool = True,
) -> dict[str, Prepared]:
    """Validate the tables and orient every pair as (model vs baseline), per judge.

    ``preference`` chooses what a judgment says about P(model preferred): ``"prob"`` uses ``p_a``
    (rows without it are invalid), ``"verdict"`` uses the verdict (tie = 1/2), ``"auto"`` uses
    ``p_a`` where present and the verdict elsewhere. Judgments are averaged over repeats and
    ID swaps within an order, then over the orders present (so both orders weigh equally).
    The tables are handled through integer codes of their id columns (no Python loop over rows).
    Pairs may lack texts (a reader leaves a text missing when the source does not hold it); with
    ``require_lengths`` a pair whose lengths are unknown for that reason is an error naming its
    models, since the length-based estimators cannot use it.
    """
    if preference not in PREFERENCES:
        raise ValueError(f"preference must be one of {PREFERENCES}, got {preference!r}")
    pairs = validate_pairs(frame_of(pairs), require_text=False)
    if pairs.empty:
        raise ValueError("pairs: the table is empty")
    scanned = is_scanned(judgments)
    if not scanned:
        judgments = validate_judgments(judgments, pairs)
        if judgments.empty:
            raise ValueError("judgments: the table is empty; there is nothing to compute a win "
                             "rate from")
    missing = [c for c in ("model_a", "model_b") if c not in pairs.columns]
    if missing:
        raise ValueError(
            f"pairs: win rates need the columns 'model_a' and 'model_b' (which model wrote each "
            f"response); missing {missing}"
        )
    for column in ("model_a", "model_b"):
        bad = pairs[column].isna().to_numpy()
        if bad.any():
            raise ValueError(f"pairs: column {column!r} is missing in {_ids(pairs, bad, 'pair_id')}")
    if baseline is None:
        baseline = infer_baseline(pairs)
    baseline = str(baseline)
    model_a, model_b = pairs["model_a"].astype(str), pairs["model_b"].astype(str)
    a_is_base = (model_a == baseline).to_numpy(dtype=bool)
    b_is_base = (model_b == baseline).to_numpy(dtype=bool)
    neither = ~a_is_base & ~b_is_base
    if neither.any():
        raise ValueError(
            f"pairs: every pair must involve the baseline {baseline!r} as model_a or model_b; "
            f"it is absent from {_ids(pairs, neither, 'pair_id')}. Filter those pairs out first."
        )
    len_a = pairs["len_a"].to_numpy(dtype=float, na_value=np.nan)
    len_b = pairs["len_b"].to_numpy(dtype=float, na_value=np.nan)
    unknown = np.isnan(len_a) | np.isnan(len_b)
    if require_lengths and unknown.any():
        who = sorted(set(np.where(a_is_base, model_b, model_a)[unknown]))
        raise ValueError(
            f"pairs: the answer lengths of {len(who)} model(s) are unknown (their texts were not "
            f"read: {who[:5]}{' ...' if len(who) > 5 else ''}, {_ids(pairs, unknown, 'pair_id')}); "
            "length-based win rates need them: leave those models out, e.g. "
            "pairs[pairs['len_a'].notna() & pairs['len_b'].notna()]")
    identity_pair = a_is_base & b_is_base
    side = np.where(identity_pair, "identity", np.where(a_is_base, "b", "a"))
    p = pd.DataFrame({
        "pair_id": pairs["pair_id"].to_numpy(),
        "model": np.where(a_is_base, model_b, model_a),
        "side": side,
        "instruction": instruction_key(pairs).to_numpy(),
        "len_model": np.where(a_is_base, len_b, len_a),
        "len_baseline": np.where(a_is_base, len_a, len_b),
    })
    all_models = tuple(sorted(pd.unique(p.loc[~identity_pair, "model"])))
    p_model = p["model"].to_numpy(dtype=object)
    if scanned:  # the engine's per-(judge, pair, order) sums
        per_judge = judgments.winrate_orders(pairs, side == "a", preference)
    else:
        per_judge = _per_order(judgments, pairs, side, preference)

    out: dict[str, Prepared] = {}
    for judge, (per_order, invalid_pairs) in per_judge.items():
        invalid_models = pd.Series(p_model[invalid_pairs], dtype=object)
        n_invalid = invalid_models.value_counts().sort_index().rename_axis("model")
        per_order["ba"] = ~per_order["ab"]
        per_pair = per_order.groupby("pair", sort=True).agg(
            y=("s", "mean"), y_discrete=("s_discrete", "mean"), n_judgments=("n", "sum"),
            ab=("ab", "any"), ba=("ba", "any"),
        )
        per_pair["orders"] = np.where(per_pair["ab"] & per_pair["ba"], "ab+ba",
                                      np.where(per_pair["ab"], "ab", "ba"))
        rows = p.iloc[per_pair.index.to_numpy()].reset_index(drop=True)
        for column in ("y", "y_discrete", "n_judgments", "orders"):
            rows[column] = per_pair[column].to_numpy()
        is_identity = (rows["side"] == "identity").to_numpy(dtype=bool)
        identity = rows[is_identity].reset_index(drop=True)
        rows = rows[~is_identity].drop(columns="side").reset_index(drop=True)
        combos = rows[["model", "orders"]].drop_duplicates().sort_values(["model", "orders"])
        orders = combos.groupby("model")["orders"].agg("/".join)
        out[str(judge)] = Prepared(
            judge=str(judge), baseline=baseline, rows=rows, identity=identity,
            n_invalid=n_invalid, orders=orders, all_models=all_models, preference=preference,
        )
    if not out:
        raise ValueError("judgments: no judgment refers to the given pairs")
    return out


def _per_order(judgments: pd.DataFrame, pairs: pd.DataFrame, side: np.ndarray,
               preference: str) -> dict[str, tuple[pd.DataFrame, np.ndarray]]:
    """Per judge: the mean preference for the model per (pair, order) judged (columns pair, ab,
    s, s_discrete, n) and the pairs (rows of ``pairs``) of its unusable judgments."""
    # every judgment as codes: its pair (row of p), order, verdict
    pair = pd.Index(pairs["pair_id"]).get_indexer(judgments["pair_id"])
    model_is_a = (side == "a")[pair]
    verdict = judgments["verdict"]
    is_a = (verdict == "a").to_numpy(dtype=bool)
    is_b = (verdict == "b").to_numpy(dtype=bool)
    is_tie = (verdict == "tie").to_numpy(dtype=bool)
    s_verdict = np.where((is_a & model_is_a) | (is_b & ~model_is_a), 1.0,
                         np.where(is_tie, 0.5, np.where(is_a | is_b, 0.0, np.nan)))
    p_a = judgments["p_a"].to_numpy(dtype=float)
    s_prob = np.where(model_is_a, p_a, 1.0 - p_a)
    if preference == "prob":
        s = s_prob
    elif preference == "verdict":
        s = s_verdict
    else:
        s = np.where(np.isnan(p_a), s_verdict, s_prob)
    valid = ~np.isnan(s)
    ab = (judgments["order"] == "ab").to_numpy(dtype=bool)
    judge_code, judge_names = pd.factorize(judgments["judge"], sort=True)
    out = {}
    for code, judge in enumerate(judge_names):
        mine = judge_code == code
        ok = mine & valid
        per_order = pd.DataFrame({"pair": pair[ok], "ab": ab[ok], "s": s[ok],
                                  "s_discrete": s_verdict[ok]}).groupby(["pair", "ab"], sort=False).agg(
            s=("s", "mean"), s_discrete=("s_discrete", "mean"), n=("s", "size")).reset_index()
        out[str(judge)] = (per_order, pair[mine & ~valid])
    return out


def fold_of(instructions: pd.Index | np.ndarray, n_folds: int, seed: int) -> np.ndarray:
    """A fold in 0..n_folds-1 for each instruction id: a hash of (seed, id), so it does not depend
    on which other instructions or models are present."""
    if n_folds < 2:
        raise ValueError(f"n_folds must be >= 2, got {n_folds}")
    out = np.empty(len(instructions), dtype=np.intp)
    for i, iid in enumerate(instructions):
        digest = hashlib.blake2b(f"{seed}\x00{iid}".encode(), digest_size=8).digest()
        out[i] = int.from_bytes(digest, "little") % n_folds
    return out


def bootstrap_counts(n: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, n) counts: how often each of n instructions is drawn in each resample
    (judgekit's one cluster bootstrap, :mod:`judgekit._bootstrap`)."""
    return _bootstrap.counts(n, n_boot, seed)
