"""Read Chatbot Arena battles (crowd votes between two anonymous models) as judgekit's tables.

A battle record, as LMSYS publishes them (``lmsys/chatbot_arena_conversations``,
``lmarena-ai/arena-human-preference-*``) and as arena-style evaluations write them::

    {"question_id": "58210e39b3fd4441a2bd4a518bb44c2d", "model_a": "chatglm-6b",
     "model_b": "koala-13b", "winner": "model_b", "judge": "arena_user_973",
     "conversation_a": [{"role": "user", "content": "..."}, {"role": "assistant", ...}],
     "conversation_b": [...], "turn": 1, "anony": true, "language": "English",
     "tstamp": 1682351591.1322}

``winner`` is "model_a", "model_b", "tie" or "tie (bothbad)" (both answers bad). Each record is
one person's vote; the same battle voted on by several people is one pair with several votes.
The Kaggle release (``lmsys/lmsys-arena-human-preference-55k``, a CSV) writes the winner one-hot
(``winner_model_a``, ``winner_model_b``, ``winner_tie``) and the texts as JSON lists of turns
(``prompt``, ``response_a``, ``response_b``), with ``id``; it is read the same way (it has no
"tie (bothbad)").
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from judgekit._jsonfile import parse_json, parse_jsonl
from judgekit._stamp import stamped
from judgekit.data._common import read_file, reads
from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["crowd_agreement", "read_arena_battles"]

#: Keys only Arena battle records have (MT-Bench's human votes, which share model_a, model_b,
#: winner and the conversations, have none of them).
ARENA_MARKS = ("language", "anony", "tstamp", "toxic_chat_tag", "openai_moderation",
               "evaluation_order", "conv_metadata", "is_code", "timestamp", "category_tag")
_WINNERS = {"model_a": "a", "model_b": "b", "tie": "tie", "tie (bothbad)": "tie"}
#: The Kaggle release's one-hot winner columns.
_ONE_HOT = {"a": "winner_model_a", "b": "winner_model_b", "tie": "winner_tie"}
_ONE_HOT_WINNER = {"a": "model_a", "b": "model_b", "tie": "tie"}
_SPELLING = {"a": "model_a", "b": "model_b"}


def is_arena_record(record: object) -> bool:
    """Whether a record is an Arena battle: ``model_a``, ``model_b``, ``winner`` and a key only
    Arena records have (``language``, ``anony``, ``tstamp``, ...) or an ``arena_user`` voter."""
    if not isinstance(record, dict) or not {"model_a", "model_b"} <= set(record):
        return False
    if set(_ONE_HOT.values()) <= set(record):  # the Kaggle release (arena-human-preference-55k)
        return True
    if "winner" not in record:
        return False
    return any(k in record for k in ARENA_MARKS) or str(record.get("judge", "")).startswith(
        "arena_user")


def _winner(r: dict, where: str) -> str:
    """The record's winner in the Arena's spelling; the Kaggle release gives it one-hot."""
    if "winner" in r:
        return str(r["winner"]).strip()
    try:
        hot = [w for w, column in _ONE_HOT.items() if int(float(r[column])) == 1]
    except (TypeError, ValueError):
        hot = []
    if len(hot) != 1:
        raise ValueError(f"{where}: exactly one of {', '.join(_ONE_HOT)} must be 1, got "
                         f"{[r.get(c) for c in _ONE_HOT]}")
    return _ONE_HOT_WINNER[hot[0]]


def _records(path: Path) -> list[dict]:
    name = path.name.lower().removesuffix(".gz")
    data = read_file(path)
    if name.endswith((".csv", ".tsv")):
        try:
            return pd.read_csv(io.BytesIO(data), sep="," if name.endswith(".csv") else "\t",
                               keep_default_na=False, na_values=[""]).to_dict("records")
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
            raise ValueError(f"{path}: not a readable table ({err})") from None
    if name.endswith((".parquet", ".pq")):
        try:
            return pd.read_parquet(io.BytesIO(data)).to_dict("records")
        except Exception as err:  # pyarrow raises its own error classes
            raise ValueError(f"{path}: not a readable parquet file ({err})") from None
    if data.lstrip()[:1] == b"[":
        records = parse_json(data, path)
        if not isinstance(records, list):
            raise ValueError(f"{path}: expected a JSON list of battle records")
        return records
    return parse_jsonl(data, path)


def _turns(conversation: object, role: str, where: str) -> list[str]:
    if isinstance(conversation, str):
        try:
            conversation = json.loads(conversation)
        except json.JSONDecodeError:
            raise ValueError(f"{where}: a conversation is neither a list of messages nor JSON "
                             "text of one") from None
    try:
        return [str(m["content"]) for m in list(conversation) if m["role"] == role]
    except (TypeError, KeyError):
        raise ValueError(f"{where}: a conversation must be a list of {{'role', 'content'}} "
                         "messages") from None


def _join(parts: list[str]) -> str:
    if len(parts) == 1:
        return parts[0]
    return "\n\n".join(f"[Turn {k}]\n{p}" for k, p in enumerate(parts, start=1))


def _turn_list(text: object) -> str:
    """A text, or the Kaggle release's JSON list of turns (``'["Hi", "And?"]'``) joined."""
    if isinstance(text, str) and text.startswith("["):
        try:
            turns = json.loads(text)
        except json.JSONDecodeError:
            return text
        if isinstance(turns, list) and all(t is None or isinstance(t, str) for t in turns):
            return _join([t or "" for t in turns]) if turns else ""
    return "" if text is None or (isinstance(text, float) and np.isnan(text)) else str(text)


def _texts(r: dict, where: str) -> tuple[str, str, str]:
    if "conversation_a" in r and "conversation_b" in r:
        prompt = _join(_turns(r["conversation_a"], "user", where))
        return (prompt, _join(_turns(r["conversation_a"], "assistant", where)),
                _join(_turns(r["conversation_b"], "assistant", where)))
    if {"prompt", "response_a", "response_b"} <= set(r):
        return _turn_list(r["prompt"]), _turn_list(r["response_a"]), _turn_list(r["response_b"])
    raise ValueError(f"{where}: a battle needs conversation_a and conversation_b (or prompt, "
                     "response_a and response_b)")


def _by_record(record: dict) -> str | None:
    if not is_arena_record(record):
        return None
    return ("its records are Chatbot Arena battles (model_a, model_b, winner, "
            + ", ".join(k for k in ARENA_MARKS if k in record)[:60] + ")")


def _parquet_columns(path: Path) -> list[str]:
    try:
        import pyarrow.parquet as pq

        return list(pq.read_schema(io.BytesIO(read_file(path))).names)
    except Exception:  # not decided here: the reader chosen says what is wrong with the file
        return []


def _by_header(path: Path, name: str) -> str | None:
    if (".parquet" in name or name.endswith((".pq", ".pq.gz"))) and is_arena_record(
            dict.fromkeys(_parquet_columns(path), "")):
        return "its columns are Chatbot Arena battles' (model_a, model_b, winner)"
    if ".csv" in name:
        header = read_file(path).split(b"\n", 1)[0].decode("utf-8", "replace")
        if is_arena_record(dict.fromkeys((c.strip().strip('"') for c in header.split(",")), "")):
            return ("its columns are Chatbot Arena battles' (model_a, model_b, "
                    "winner_model_a, winner_model_b, winner_tie)")
    return None


# read_any reads battles as the crowd's judgments without labels: a label made of the same votes
# would make the crowd agree with itself (pass the file as pairs= of a judge's verdicts to audit
# against the crowd)
@reads("arena-battles", "jk.read_arena_battles: Chatbot Arena battles (crowd votes), as the "
       "crowd's judgments", rank=20, by_record=_by_record, by_header=_by_header,
       defaults={"labels": False})
@stamped
def read_arena_battles(
    path: str | Path | pd.DataFrame | Iterable[dict],
    *,
    labels: bool = True,
    dataset: str | None = None,
    crowd: str = "crowd",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read Chatbot Arena battles: pairs labelled by the crowd's votes, and the votes.

    Parameters
    ----------
    path : str, Path, DataFrame or list of dict
        A JSON, JSON-lines, parquet or CSV file of battle records (plain or ``.gz``), or the
        records.
    labels : bool, default True
        Give each pair the crowd's majority as its human ``label`` (missing when the votes split
        evenly), so a judge's verdicts on the same pairs can be audited against the crowd. Use
        False to audit the crowd itself (its label would come from the same votes).
    dataset : str, optional
        The pairs' ``dataset`` (default: the file's name without its suffixes, or "arena").
    crowd : str
        The ``judge`` of the votes: the crowd is one judge; each voter is kept in ``voter``.

    Returns
    -------
    pairs : DataFrame
        One row per battle: ``pair_id`` the record's ``question_id`` (with the two models
        appended when one question has battles of several model pairs, a hash of the texts when
        there is no ``question_id``), ``prompt`` (the user turns, "[Turn k]" when several),
        ``response_a``/``response_b`` (each model's answers), ``model_a``, ``model_b``,
        ``dataset``, ``instruction_id``, ``language`` and ``turn`` when given; the votes:
        ``n_votes``, ``votes_a``, ``votes_b``, ``votes_tie``, ``votes_bothbad``, ``share_a``,
        ``share_b``, ``share_tie`` (both kinds of tie); ``label`` the majority ("a", "b" or
        "tie", both kinds of tie together) and ``crowd_winner`` the majority as Arena spells it
        ("tie (bothbad)" when most tie votes said both were bad).
    judgments : DataFrame
        One row per vote: ``judge`` ``crowd``, ``voter`` (the record's ``judge``), ``order`` "ab"
        (the Arena shows model_a first), ``repeat`` numbering the votes on a pair, ``verdict``
        ("tie" for both ties), ``tie_kind`` ("bothbad" for "tie (bothbad)", else missing) and
        ``raw`` the record's ``winner``.

    Raises
    ------
    ValueError
        Naming the file and record: a record without model_a, model_b or winner, an unknown
        winner, or no texts.

    Examples
    --------
    >>> import judgekit as jk
    >>> conv = lambda q, a: [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
    >>> vote = lambda who, winner: {"question_id": "q1", "model_a": "x", "model_b": "y",
    ...     "winner": winner, "judge": who, "conversation_a": conv("2+2?", "4"),
    ...     "conversation_b": conv("2+2?", "5"), "turn": 1, "language": "English"}
    >>> pairs, votes = jk.read_arena_battles([vote("u1", "model_a"), vote("u2", "model_a"),
    ...                                       vote("u3", "tie (bothbad)")])
    >>> pairs[["pair_id", "label", "n_votes", "share_a"]].round(2).to_dict("records")
    [{'pair_id': 'q1', 'label': 'a', 'n_votes': 3, 'share_a': 0.67}]
    >>> votes[["voter", "verdict", "tie_kind"]].to_dict("records")[2]
    {'voter': 'u3', 'verdict': 'tie', 'tie_kind': 'bothbad'}
    """
    if isinstance(path, pd.DataFrame):
        records, source, stem = path.to_dict("records"), "the battles table", "arena"
    elif isinstance(path, (str, Path)):
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"{p} does not exist" if not p.exists() else f"{p} is a folder")
        records, source = _records(p), str(p)
        stem = p.name.split(".")[0] or "arena"
    else:
        records, source, stem = list(path), "the battle records", "arena"
    if not records:
        raise ValueError(f"{source}: no battle records")
    dataset = dataset or stem
    keys: list[tuple] = []
    rows: list[dict] = []
    for i, r in enumerate(records):
        where = f"{source}, record {i + 1}"
        if not isinstance(r, dict) or not {"model_a", "model_b"} <= set(r) or not (
                "winner" in r or set(_ONE_HOT.values()) <= set(r)):
            raise ValueError(f"{where}: not an Arena battle (it needs model_a, model_b and winner, "
                             "or winner_model_a, winner_model_b and winner_tie)")
        winner = _winner(r, where)
        if winner not in _WINNERS:
            raise ValueError(f"{where}: winner {r['winner']!r} is none of "
                             f"{', '.join(map(repr, _WINNERS))}")
        prompt, resp_a, resp_b = _texts(r, where)
        qid = r.get("question_id", r.get("id"))
        qid = None if qid is None or (isinstance(qid, float) and np.isnan(qid)) else str(qid)
        key = (qid or hashlib.sha256("\x1f".join((prompt, resp_a, resp_b)).encode()).hexdigest()[:12],
               str(r["model_a"]), str(r["model_b"]))
        keys.append(key)
        rows.append({"prompt": prompt, "response_a": resp_a, "response_b": resp_b,
                     "winner": winner, "voter": str(r.get("judge", f"voter_{i + 1}")),
                     "language": r.get("language"), "turn": r.get("turn"), "qid": qid})
    per_question: dict[str, set] = {}
    for k in keys:
        per_question.setdefault(k[0], set()).add(k[1:])
    pair_ids = [k[0] if len(per_question[k[0]]) == 1 else f"{k[0]}/{k[1]}/{k[2]}" for k in keys]
    votes = pd.DataFrame(rows)
    votes["pair_id"] = pair_ids
    votes["model_a"] = [k[1] for k in keys]
    votes["model_b"] = [k[2] for k in keys]
    verdict = votes["winner"].map(_WINNERS)
    counts = pd.DataFrame({
        "votes_a": verdict.eq("a"), "votes_b": verdict.eq("b"),
        "votes_tie": votes["winner"].eq("tie"), "votes_bothbad": votes["winner"].eq("tie (bothbad)"),
    }).astype(np.int64).groupby(votes["pair_id"], sort=False).sum()
    first = votes.drop_duplicates("pair_id").set_index("pair_id")
    pairs = pd.DataFrame({"pair_id": counts.index})
    for c in ("prompt", "response_a", "response_b", "model_a", "model_b"):
        pairs[c] = first.loc[counts.index, c].to_numpy()
    pairs["dataset"] = dataset
    if votes["qid"].notna().any():
        pairs["instruction_id"] = first.loc[counts.index, "qid"].to_numpy()
    for c in ("language", "turn"):
        if votes[c].notna().any():
            pairs[c] = first.loc[counts.index, c].to_numpy()
    n = counts.sum(axis=1).to_numpy()
    pairs["n_votes"] = n
    for c in counts.columns:
        pairs[c] = counts[c].to_numpy()
    ties = counts["votes_tie"].to_numpy() + counts["votes_bothbad"].to_numpy()
    pairs["share_a"] = counts["votes_a"].to_numpy() / n
    pairs["share_b"] = counts["votes_b"].to_numpy() / n
    pairs["share_tie"] = ties / n
    stacked = np.column_stack([counts["votes_a"], counts["votes_b"], ties])
    top = stacked.max(axis=1)
    unique_top = (stacked == top[:, None]).sum(axis=1) == 1
    majority = np.where(unique_top, np.array(["a", "b", "tie"])[stacked.argmax(axis=1)], None)
    bothbad = counts["votes_bothbad"].to_numpy() > counts["votes_tie"].to_numpy()
    pairs["crowd_winner"] = [None if m is None else _SPELLING.get(m) or
                             ("tie (bothbad)" if bb else "tie") for m, bb in zip(majority, bothbad)]
    if labels:
        pairs["label"] = pd.Series(majority, dtype=object)
    judgments = pd.DataFrame({
        "pair_id": votes["pair_id"], "judge": crowd, "order": "ab",
        "repeat": votes.groupby("pair_id", sort=False).cumcount().astype(np.int64),
        "verdict": verdict.astype(object), "p_a": np.nan,
        "tie_kind": np.where(votes["winner"].eq("tie (bothbad)"), "bothbad", None).astype(object),
        "voter": votes["voter"], "raw": votes["winner"],
    })
    pairs = validate_pairs(pairs, name=f"Arena battles from {source}")
    judgments = validate_judgments(judgments, pairs, name=f"Arena votes from {source}")
    return pairs, judgments


@stamped
def crowd_agreement(pairs: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """How often two voters agree on the same battle: the crowd's own agreement.

    Parameters
    ----------
    pairs : DataFrame
        Pairs with vote counts ``votes_a``, ``votes_b``, ``votes_tie`` and optionally
        ``votes_bothbad`` (as :func:`read_arena_battles` returns them).
    n_boot : int
        Bootstrap resamples of pairs for the interval (0: no interval).
    seed : int
        Seed of the bootstrap.

    Returns
    -------
    DataFrame
        Columns ``metric``, ``estimate``, ``ci_low``, ``ci_high``, ``n`` (pairs with at least two
        votes), ``n_votes`` (their votes). Metric ``crowd_agreement``: the chance that two
        different voters on the same pair, drawn at random, give the same verdict (a, b or a
        tie of either kind), averaged over pairs with at least two votes; NaN when no pair has
        two.

    Notes
    -----
    A pair with counts :math:`c_k` of :math:`n` votes has agreement
    :math:`\\sum_k c_k (c_k - 1) / (n (n - 1))`, the share of its voter pairs that agree (the
    agreement of Zheng et al. (2023) between humans, per pair). The interval is a percentile
    bootstrap over pairs.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> p = pd.DataFrame({"votes_a": [2, 1, 3], "votes_b": [0, 1, 0], "votes_tie": [0, 0, 0]})
    >>> jk.crowd_agreement(p, n_boot=0)[["estimate", "n", "n_votes"]].to_dict("records")
    [{'estimate': 0.6666666666666666, 'n': 3, 'n_votes': 7}]
    """
    missing = [c for c in ("votes_a", "votes_b", "votes_tie") if c not in pairs.columns]
    if missing:
        raise ValueError(f"pairs: crowd_agreement needs vote counts; missing "
                         f"{', '.join(map(repr, missing))} (read the battles with "
                         "jk.read_arena_battles)")
    ties = pairs["votes_tie"].to_numpy(dtype=float) + (
        pairs["votes_bothbad"].to_numpy(dtype=float) if "votes_bothbad" in pairs.columns else 0.0)
    c = np.column_stack([pairs["votes_a"].to_numpy(dtype=float),
                         pairs["votes_b"].to_numpy(dtype=float), ties])
    n = c.sum(axis=1)
    keep = n >= 2
    per = (c[keep] * (c[keep] - 1)).sum(axis=1) / (n[keep] * (n[keep] - 1))
    est = float(per.mean()) if len(per) else np.nan
    lo = hi = np.nan
    if n_boot and len(per) >= 2:
        rng = np.random.default_rng(seed)
        draws = per[rng.integers(0, len(per), size=(n_boot, len(per)))].mean(axis=1)
        lo, hi = (float(x) for x in np.quantile(draws, [0.025, 0.975]))
    return pd.DataFrame([{"metric": "crowd_agreement", "estimate": est, "ci_low": lo,
                          "ci_high": hi, "n": int(keep.sum()), "n_votes": int(n[keep].sum())}])
