"""MT-Bench: the published human and GPT-4 judgments (``load``), and FastChat's judgment files
(:func:`read_mtbench`).

The dataset ``mtbench_human`` holds the MT-Bench human judgments and GPT-4 pair judgments
(Zheng et al., 2023). Online only.

Upstream: Hugging Face ``lmsys/mt_bench_human_judgments`` (CC-BY-4.0), parquet conversions of the
``human`` (3.3k expert votes) and ``gpt4_pair`` splits, with ``question_id``, ``model_a``,
``model_b``, ``winner`` ("model_a", "model_b", "tie", "tie (bothbad)"), ``judge``,
``conversation_a`` / ``conversation_b`` (lists of ``{"role", "content"}``) and ``turn`` (1 or 2).
Trusted on first use.

One pair per (question, model_a, model_b, turn); turn-2 pairs show both turns as
"[Turn 1] ... [Turn 2] ...". The pair's label is the human majority (missing when humans did
not judge it or split evenly). Every vote, human or GPT-4, is a row of the judgments table:
``judge`` is the upstream judge id (``"gpt4_pair"``, ``"author_3"``, ``"expert_12"``, ...),
``judge_type`` "human" or "gpt-4". Upstream records one consolidated verdict per vote without
the shown order, so ``order`` is "ab" (the GPT-4 pair verdicts were themselves made in both
orders and reconciled by the MT-Bench authors).

The reader reads FastChat MT-Bench judgment files (``llm_judge``) as judgekit's two tables.
Three layouts, as FastChat writes and publishes them:

- pairwise judgments (``model_judgment/gpt-4_pair.jsonl``): one line per (question, model_1,
  model_2, turn) with both games, ``g1`` showing model_1 as assistant A and ``g2`` showing model_2
  as A, and each game's winner ``"model_1"`` / ``"model_2"`` / ``"tie"`` / ``"error"``;
- human judgments (``lmsys/mt_bench_human_judgments``, a JSON list or lines of votes with
  ``model_a``, ``model_b``, ``winner``, ``judge``, ``conversation_a``/``_b`` and ``turn``);
- single-answer grading (``model_judgment/gpt-4_single.jsonl``): a 1-10 ``score`` per (question,
  model, turn), turned into pairwise preferences only when asked (``single_as_pairs=True``).

The judgment files do not hold the questions and answers; they are read from FastChat's layout
beside them (``<bench>/question.jsonl`` and ``<bench>/model_answer/<model>.jsonl``, or given as
``questions=`` and ``answers=``), and otherwise from the judge prompts the file records, split
along FastChat's prompt templates.
"""

from __future__ import annotations

import io
import itertools
import math
import re
import warnings
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from judgekit._stack import caller_level
from judgekit._stamp import stamped
from judgekit.data._common import json_file, jsonl_file, read_file, reads
from judgekit.data.fetch import lookup, read_bytes
from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["read_mtbench"]

_VOTE_WINNER = {"model_a": "a", "model_b": "b", "tie": "tie", "tie (bothbad)": "tie"}


def _turns(conversation: object, role: str) -> list[str]:
    return [str(m["content"]) for m in list(conversation) if m["role"] == role]


def _join(parts: list[str]) -> str:
    if len(parts) == 1:
        return parts[0]
    return "\n\n".join(f"[Turn {k}]\n{p}" for k, p in enumerate(parts, start=1))


def load(*, progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """MT-Bench pairs with human-majority labels, and every human and GPT-4 vote."""
    frames = []
    for split, kind in (("human", "human"), ("gpt4_pair", "gpt-4")):
        entry = lookup("mtbench_human", f"lmsys/mt_bench_human_judgments/{split}.parquet")
        frames.append(pd.read_parquet(io.BytesIO(read_bytes(entry, progress=progress)))
                      .assign(judge_type=kind))
    return tables_from_votes(pd.concat(frames, ignore_index=True))


def tables_from_votes(votes: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pairs and judgments from MT-Bench votes (the columns of the upstream splits, plus
    ``judge_type`` "human" or "gpt-4"); see the module docstring."""
    pairs: dict[str, dict] = {}
    judg = {"pair_id": [], "judge": [], "verdict": [], "judge_type": [], "raw": []}
    human: dict[str, list[str]] = {}
    for r in votes.to_dict("records"):
        turn = int(r["turn"])
        pid = f"mtbench/{r['question_id']}/{r['model_a']}/{r['model_b']}/{turn}"
        if pid not in pairs:
            questions = _turns(r["conversation_a"], "user")[:turn]
            pairs[pid] = {
                "pair_id": pid, "prompt": _join(questions),
                "response_a": _join(_turns(r["conversation_a"], "assistant")[:turn]),
                "response_b": _join(_turns(r["conversation_b"], "assistant")[:turn]),
                "model_a": r["model_a"], "model_b": r["model_b"], "dataset": "mtbench_human",
                "task": f"turn {turn}", "instruction_id": str(r["question_id"]), "turn": turn,
            }
        verdict = _VOTE_WINNER.get(str(r["winner"]))
        if verdict is None:
            raise ValueError(f"mtbench_human: unexpected winner {r['winner']!r} for {pid}")
        judg["pair_id"].append(pid)
        judg["judge"].append(str(r["judge"]))
        judg["verdict"].append(verdict)
        judg["judge_type"].append(r["judge_type"])
        judg["raw"].append(str(r["winner"]))
        if r["judge_type"] == "human":
            human.setdefault(pid, []).append(verdict)
    for pid, row in pairs.items():
        counts = Counter(human.get(pid, [])).most_common()
        row["label"] = counts[0][0] if counts and (len(counts) == 1 or counts[1][1] < counts[0][1]) else None
        row["n_human"] = len(human.get(pid, []))
    judgments = pd.DataFrame(judg)
    judgments.insert(2, "order", "ab")
    # the same judge may vote on the same pair more than once: number those votes
    judgments.insert(3, "repeat", judgments.groupby(["pair_id", "judge"]).cumcount().astype(np.int64))
    judgments.insert(5, "p_a", float("nan"))
    return pd.DataFrame(list(pairs.values())), judgments


# ------------------------------------------------------------------ FastChat's judgment files

#: FastChat's margin under which two single-answer scores are a tie (``TIE_DELTA``).
TIE_DELTA = 0.1

_S = re.DOTALL
# The parts of FastChat's judge prompts that carry the texts (pair-v2, pair-math-v1, their
# multi-turn forms, and the single-answer single-v1 / single-math-v1 forms).
_REF1 = r"(?:\[The Start of Reference Answer\]\n(?P<ref1>.*?)\n\[The End of Reference Answer\]\n\n)?"
_PAIR_1 = re.compile(
    r"\A\[User Question\]\n(?P<q1>.*?)\n\n" + _REF1
    + r"\[The Start of Assistant A's Answer\]\n(?P<a1>.*?)\n\[The End of Assistant A's Answer\]\n\n"
    r"\[The Start of Assistant B's Answer\]\n(?P<b1>.*?)\n\[The End of Assistant B's Answer\]\Z", _S)
_REF2 = (r"(?:<\|The Start of Reference Answer\|>\n\n### User:\n.*?\n\n### Reference answer:\n"
         r"(?P<ref1>.*?)\n\n### User:\n.*?\n\n### Reference answer:\n(?P<ref2>.*?)\n\n"
         r"<\|The End of Reference Answer\|>\n\n\n)?")


def _conversation(who: str, first: str, second: str, q: str = "") -> str:
    q1, q2 = (r"(?P<q1>.*?)", r"(?P<q2>.*?)") if not q else ("(?P=q1)", "(?P=q2)")
    return (rf"<\|The Start of Assistant {who}'s Conversation with User\|>\n\n### User:\n{q1}\n\n"
            rf"### Assistant {who}:\n(?P<{first}>.*?)\n\n### User:\n{q2}\n\n### Assistant {who}:\n"
            rf"(?P<{second}>.*?)\n\n<\|The End of Assistant {who}'s Conversation with User\|>")


_PAIR_2 = re.compile(r"\A" + _REF2 + _conversation("A", "a1", "a2") + r"\n\n\n"
                     + _conversation("B", "b1", "b2", q="same") + r"\Z", _S)
_SINGLE_1 = re.compile(
    r"\n\n\[Question\]\n(?P<q1>.*?)\n\n" + _REF1
    + r"\[The Start of Assistant's Answer\]\n(?P<a1>.*?)\n\[The End of Assistant's Answer\]\Z", _S)
_SINGLE_2 = re.compile(r"\A" + _REF2 + _conversation("A", "a1", "a2") + r"\Z", _S)


def _layout_of(records: list) -> str:
    first = records[0] if records else {}
    if not isinstance(first, dict):
        raise ValueError("expected JSON records (objects)")
    if {"g1_winner", "g2_winner", "model_1", "model_2"} <= first.keys():
        return "pair"
    if {"winner", "conversation_a", "conversation_b", "model_a", "model_b"} <= first.keys():
        return "human"
    if {"score", "model", "question_id"} <= first.keys():
        return "single"
    raise ValueError(
        "not an MT-Bench judgment file: expected pairwise judgments (model_1, model_2, g1_winner, "
        "g2_winner), human votes (model_a, model_b, winner, conversation_a, conversation_b) or "
        f"single-answer grades (question_id, model, score); the first record has {sorted(first)}")


def _records(path: Path) -> list:
    if path.name.endswith((".jsonl", ".jsonl.gz")):
        return jsonl_file(path)
    data = read_file(path).lstrip()
    if data[:1] == b"[":
        records = json_file(path)
        if not isinstance(records, list):
            raise ValueError(f"{path}: expected a JSON list of records")
        return records
    return jsonl_file(path)


def _judge_name(judge: object) -> tuple[str, str | None]:
    """FastChat records the judge as [model, template]; human votes as a name."""
    if isinstance(judge, (list, tuple)) and judge:
        return str(judge[0]), (str(judge[1]) if len(judge) > 1 else None)
    return str(judge), None


# ------------------------------------------------------------------------ questions and answers

class _Texts:
    """Questions (turns, reference answers) and each model's answers by question id."""

    def __init__(self, questions: dict[str, dict], answers: dict[str, dict[str, list[str]]]):
        self.questions, self.answers = questions, answers

    @classmethod
    def load(cls, judgment_file: Path, questions: str | Path | None,
             answers: str | Path | Iterable[str | Path] | None) -> _Texts:
        bench = judgment_file.parent.parent if judgment_file.parent.name == "model_judgment" else None
        q_path = Path(questions) if questions is not None else (
            bench / "question.jsonl" if bench is not None else None)
        qs: dict[str, dict] = {}
        if q_path is not None and q_path.is_file():
            for r in jsonl_file(q_path):
                qid = str(r.get("question_id"))
                turns = [t["content"] if isinstance(t, dict) else t for t in r.get("turns", [])]
                qs[qid] = {"turns": [str(t) for t in turns], "category": r.get("category"),
                           "reference": r.get("reference")}
        elif questions is not None:
            raise FileNotFoundError(f"questions: {q_path} does not exist")
        if answers is None:
            answer_files = sorted((bench / "model_answer").glob("*.jsonl")) if bench is not None else []
        elif isinstance(answers, (str, Path)) and Path(answers).is_dir():
            answer_files = sorted(Path(answers).glob("*.jsonl"))
        else:
            answer_files = [Path(a) for a in ([answers] if isinstance(answers, (str, Path)) else answers)]
        ans: dict[str, dict[str, list[str]]] = {}
        for f in answer_files:
            for r in jsonl_file(f):
                model = str(r.get("model_id") or r.get("model") or f.stem)
                try:
                    turns = r["choices"][0]["turns"]
                except (KeyError, IndexError, TypeError):
                    raise ValueError(f"{f}: an answer record has no choices[0].turns") from None
                turns = [t["content"] if isinstance(t, dict) else t for t in turns]
                ans.setdefault(model, {})[str(r.get("question_id"))] = [str(t) for t in turns]
        return cls(qs, ans)

    def question(self, qid: str, turn: int) -> list[str] | None:
        q = self.questions.get(qid)
        return q["turns"][:turn] if q and len(q["turns"]) >= turn else None

    def answer(self, model: str, qid: str, turn: int) -> list[str] | None:
        a = self.answers.get(model, {}).get(qid)
        return a[:turn] if a and len(a) >= turn else None


def _from_prompt(prompt: object, pattern: re.Pattern, turn: int) -> dict[str, list[str]] | None:
    if not isinstance(prompt, str):
        return None
    m = pattern.search(prompt)
    if m is None:
        return None
    g = m.groupdict()
    keys = {"q": ["q1", "q2"], "a": ["a1", "a2"], "b": ["b1", "b2"]}
    return {k: [g[n] for n in names[:turn] if g.get(n) is not None] for k, names in keys.items()}


def _pair_texts(r: dict, qid: str, turn: int, texts: _Texts, source: str
                ) -> tuple[list[str], list[str], list[str]]:
    q = texts.question(qid, turn)
    a = texts.answer(str(r["model_1"]), qid, turn)
    b = texts.answer(str(r["model_2"]), qid, turn)
    if q is None or a is None or b is None:
        parsed = _from_prompt(r.get("g1_user_prompt"), _PAIR_2 if turn == 2 else _PAIR_1, turn)
        if parsed is None or len(parsed["a"]) != turn:
            raise ValueError(
                f"{source}: no texts for question {qid} (turn {turn}, {r['model_1']} vs "
                f"{r['model_2']}): FastChat keeps them in question.jsonl and "
                "model_answer/<model>.jsonl beside model_judgment/; pass questions= and answers=")
        q, a, b = q or parsed["q"], a or parsed["a"], b or parsed["b"]
    return q, a, b


# ------------------------------------------------------------------------------------- layouts

_WINNER = {"model_1": "1", "model_2": "2", "tie": "tie"}


def _pair_tables(records: list[dict], source: str, texts: _Texts
                 ) -> tuple[dict[str, dict], dict[str, list]]:
    pairs: dict[str, dict] = {}
    rec: dict[str, list] = {c: [] for c in ("pair_id", "judge", "order", "verdict", "model",
                                            "template", "raw", "error")}
    for i, r in enumerate(records):
        try:
            qid, m1, m2 = str(r["question_id"]), str(r["model_1"]), str(r["model_2"])
            games = ((r["g1_winner"], r.get("g1_judgment"), "ab"),
                     (r["g2_winner"], r.get("g2_judgment"), "ba"))
        except (KeyError, TypeError) as err:
            raise ValueError(f"{source}, record {i}: missing {err}") from None
        model, template = _judge_name(r.get("judge", "judge"))
        turn = int(r.get("turn") or (2 if template and "multi-turn" in template else 1))
        pid = f"mtbench/{qid}/{m1}/{m2}/{turn}"
        if pid not in pairs:
            q, a, b = _pair_texts(r, qid, turn, texts, f"{source}, record {i}")
            question = texts.questions.get(qid, {})
            pairs[pid] = {"pair_id": pid, "prompt": _join(q), "response_a": _join(a),
                          "response_b": _join(b), "model_a": m1, "model_b": m2,
                          "dataset": "mtbench", "task": f"turn {turn}", "instruction_id": qid,
                          "turn": turn, "category": question.get("category")}
        for winner, raw, order in games:
            side = _WINNER.get(str(winner))
            rec["pair_id"].append(pid)
            rec["judge"].append(model)
            rec["order"].append(order)
            rec["verdict"].append({"1": "a", "2": "b", "tie": "tie"}.get(side))
            rec["model"].append(model)
            rec["template"].append(template)
            rec["raw"].append(raw if isinstance(raw, str) else None)
            rec["error"].append(None if side else f"no verdict upstream ({winner!r})")
    return pairs, rec


def _single_tables(records: list[dict], source: str, texts: _Texts, baseline: str | None,
                   tie_delta: float) -> tuple[dict[str, dict], dict[str, list]]:
    grades: dict[tuple[str, str, int, str], dict] = {}
    repeats: dict[tuple[str, str, int, str], list[float]] = {}
    for i, r in enumerate(records):
        try:
            qid, model = str(r["question_id"]), str(r["model"])
            score = float(r["score"]) if r.get("score") is not None else math.nan
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"{source}, record {i}: cannot read ({err!r})") from None
        judge, template = _judge_name(r.get("judge", "judge"))
        turn = int(r.get("turn") or (2 if template and "multi-turn" in template else 1))
        if score < 0:  # FastChat's -1: the grade could not be parsed
            score = math.nan
        key = (judge, qid, turn, model)
        if key in grades:
            repeats.setdefault(key, [grades[key]["score"]]).append(score)
        grades[key] = {"score": score, "template": template,
                       "prompt": r.get("user_prompt"), "raw": r.get("judgment")}
    for key, scores in repeats.items():  # FastChat averages a question's repeated grades
        valid = [x for x in scores if not math.isnan(x)]
        grades[key]["score"] = sum(valid) / len(valid) if valid else math.nan
    if repeats:
        who = sorted({k[3] for k in repeats})
        warnings.warn(f"{source}: {len(repeats)} (model, question, turn) graded more than once "
                      f"(models: {', '.join(who[:5])}{' ...' if len(who) > 5 else ''}); their "
                      "grades are averaged, as FastChat averages them", stacklevel=caller_level())
    models = sorted({k[3] for k in grades})
    if len(models) < 2:
        raise ValueError(
            f"{source}: single-answer grades of one model only ({', '.join(models)}): a pair "
            "needs two models' grades of the same question; pass the grade files of several "
            "models together (a list of files, or their folder)")
    if baseline is not None and baseline not in models:
        raise ValueError(f"{source}: the baseline {baseline!r} has no grades here; graded: "
                         f"{', '.join(models[:10])}")
    pairs: dict[str, dict] = {}
    rec: dict[str, list] = {c: [] for c in ("pair_id", "judge", "order", "verdict", "model",
                                            "template", "raw", "error", "score_a", "score_b")}
    by_question: dict[tuple[str, str, int], list[str]] = {}
    for judge, qid, turn, model in grades:
        by_question.setdefault((judge, qid, turn), []).append(model)
    for (judge, qid, turn), models in by_question.items():
        models = sorted(models)
        if baseline is not None:
            combos = [(baseline, m) for m in models if m != baseline] if baseline in models else []
        else:
            combos = list(itertools.combinations(models, 2))
        for m_a, m_b in combos:
            ga, gb = grades[(judge, qid, turn, m_a)], grades[(judge, qid, turn, m_b)]
            pid = f"mtbench/{qid}/{m_a}/{m_b}/{turn}"
            if pid not in pairs:
                q = texts.question(qid, turn)
                a = texts.answer(m_a, qid, turn)
                b = texts.answer(m_b, qid, turn)
                pattern = _SINGLE_2 if turn == 2 else _SINGLE_1
                pa, pb = _from_prompt(ga["prompt"], pattern, turn), _from_prompt(gb["prompt"], pattern, turn)
                q = q or (pa or pb or {}).get("q")
                a = a or (pa or {}).get("a")
                b = b or (pb or {}).get("a")
                if not q or not a or not b or len(a) != turn or len(b) != turn:
                    raise ValueError(
                        f"{source}: no texts for question {qid} (turn {turn}, {m_a} vs {m_b}): "
                        "FastChat keeps them in question.jsonl and model_answer/<model>.jsonl "
                        "beside model_judgment/; pass questions= and answers=")
                pairs[pid] = {"pair_id": pid, "prompt": _join(q), "response_a": _join(a),
                              "response_b": _join(b), "model_a": m_a, "model_b": m_b,
                              "dataset": "mtbench", "task": f"turn {turn}", "instruction_id": qid,
                              "turn": turn, "category": texts.questions.get(qid, {}).get("category")}
            sa, sb = ga["score"], gb["score"]
            if math.isnan(sa) or math.isnan(sb):
                verdict, error = None, "a grade could not be parsed upstream"
            else:
                verdict = "tie" if abs(sa - sb) <= tie_delta else ("a" if sa > sb else "b")
                error = None
            rec["pair_id"].append(pid)
            rec["judge"].append(judge)
            rec["order"].append("ab")  # each answer was graded alone: no order was shown
            rec["verdict"].append(verdict)
            rec["model"].append(judge)
            rec["template"].append(ga["template"])
            rec["raw"].append(None)
            rec["error"].append(error)
            rec["score_a"].append(sa)
            rec["score_b"].append(sb)
    return pairs, rec


def _files(path: str | Path | Iterable[str | Path]) -> list[Path]:
    """The judgment files: one file, the ``*.jsonl`` files of a folder, or a list of files."""
    if isinstance(path, (str, Path)):
        p = Path(path)
        if p.is_dir() and (p / "model_judgment").is_dir():  # a benchmark folder
            p = p / "model_judgment"
        if p.is_dir():
            found = sorted(f for f in p.glob("*.jsonl*") if f.is_file())
            if not found:
                raise ValueError(f"{p}: no *.jsonl judgment file in the folder")
            return found
        if not p.is_file():
            raise FileNotFoundError(f"{p} is not a file")
        return [p]
    files = [Path(f) for f in path]
    missing = [str(f) for f in files if not f.is_file()]
    if missing or not files:
        raise FileNotFoundError(f"not files: {missing or 'an empty list'}")
    return files


def _by_record(record: dict) -> str | None:
    keys = set(record)
    if {"g1_winner", "g2_winner"} <= keys:
        return "its records are FastChat pairwise judgments (g1_winner, g2_winner)"
    if {"winner", "conversation_a", "conversation_b"} <= keys:
        return "its records are MT-Bench human votes (winner, conversation_a/b)"
    if {"score", "model", "question_id", "judgment"} <= keys:
        return "its records are FastChat single-answer grades (score)"
    return None


# rank 30: after Chatbot Arena battles (rank 20), whose records also carry winner and
# conversation_a/b
@reads("mtbench", "jk.read_mtbench: FastChat MT-Bench pairwise, human or single-answer judgments",
       rank=30, by_record=_by_record, layout="FastChat judgment JSONL",
       folder_of_records=lambda reason: ("the folder holds FastChat judgment files ("
                                         + reason.removeprefix("its records are ") + ")"))
@stamped
def read_mtbench(
    path: str | Path | Iterable[str | Path],
    *,
    questions: str | Path | None = None,
    answers: str | Path | Iterable[str | Path] | None = None,
    single_as_pairs: bool = False,
    baseline: str | None = None,
    tie_delta: float = TIE_DELTA,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read FastChat MT-Bench judgments (pairwise, human votes, or single-answer grades).

    Parameters
    ----------
    path : str, Path or list of them
        A judgment file: FastChat's ``gpt-4_pair.jsonl`` (or any ``*_pair.jsonl``), the human
        judgments (a JSON list or JSON lines of votes), or ``gpt-4_single.jsonl``; plain or
        ``.gz``. Or several files in one layout, as a list or their folder (e.g. the
        single-grade files of several models, one per model, as arena-bench writes them);
        questions and answers are looked up beside the first.
    questions : str or Path, optional
        FastChat's ``question.jsonl`` (default: ``<bench>/question.jsonl`` when the file is in
        ``<bench>/model_judgment/``).
    answers : str, Path or list of them, optional
        A ``model_answer`` folder or answer files (default: ``<bench>/model_answer/``). Without
        questions and answers the texts are taken from the judge prompts recorded in the file.
    single_as_pairs : bool, default False
        Single-answer grades are not pairwise preferences; with True each two models' grades of
        a question and turn become a pair whose verdict is the higher grade (a tie within
        ``tie_delta``, as FastChat's single-to-pair comparison), with order ``"ab"`` (no order
        was shown) and the grades in ``score_a`` / ``score_b``. A (model, question, turn)
        graded more than once gets the mean of its grades, with a warning (FastChat averages
        them); grades of one model alone make no pair and are an error.
    baseline : str, optional
        With ``single_as_pairs``, pair every model with this one only (default: every two models).
    tie_delta : float
        The tie margin of ``single_as_pairs``.

    Returns
    -------
    pairs, judgments : DataFrame
        Validated tables. Pairs: one per (question, model_1, model_2, turn), ``pair_id``
        ``mtbench/<question>/<model a>/<model b>/<turn>`` as in ``jk.load_dataset("mtbench_human")``;
        a turn-2 pair shows both turns ("[Turn 1] ... [Turn 2] ..."); ``task`` "turn 1"/"turn 2",
        ``instruction_id`` the question id, ``category`` when the questions are known.
        Judgments of the pairwise layout: both games, ``order`` "ab" for game 1 (model_1 shown
        as assistant A) and "ba" for game 2, ``judge`` the judge model, ``template`` FastChat's
        prompt name, ``raw`` the judgment text, ``error`` where FastChat found no verdict. The
        human layout gives what ``jk.load_dataset("mtbench_human")`` gives for the same votes.

    Raises
    ------
    ValueError
        For a file in none of the layouts, a single-answer file without ``single_as_pairs``,
        or a record whose texts cannot be found, naming the file and record.

    Notes
    -----
    One line of ``gpt-4_pair.jsonl``::

        {"question_id": 81, "model_1": "gpt-4", "model_2": "vicuna-13b-v1.3",
         "g1_winner": "model_1", "g2_winner": "tie", "judge": ["gpt-4", "pair-v2"],
         "g1_user_prompt": "[User Question]\\n...", "g1_judgment": "... [[A]]",
         "g2_user_prompt": "...", "g2_judgment": "... [[C]]", "turn": 1, "tstamp": 1687221911.2}

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> import judgekit as jk
    >>> prompt = ("[User Question]\\n2+2?\\n\\n[The Start of Assistant A's Answer]\\n4\\n"
    ...           "[The End of Assistant A's Answer]\\n\\n[The Start of Assistant B's Answer]\\n5\\n"
    ...           "[The End of Assistant B's Answer]")
    >>> line = {"question_id": 1, "model_1": "x", "model_2": "y", "g1_winner": "model_1",
    ...         "g2_winner": "model_1", "judge": ["gpt-4", "pair-v2"], "g1_user_prompt": prompt,
    ...         "g1_judgment": "[[A]]", "g2_judgment": "[[B]]", "turn": 1}
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "gpt-4_pair.jsonl"
    >>> _ = f.write_text(json.dumps(line) + "\\n")
    >>> pairs, judgments = jk.read_mtbench(f)
    >>> pairs[["pair_id", "response_a", "response_b"]].to_dict("records")
    [{'pair_id': 'mtbench/1/x/y/1', 'response_a': '4', 'response_b': '5'}]
    >>> judgments[["order", "verdict"]].to_dict("records")
    [{'order': 'ab', 'verdict': 'a'}, {'order': 'ba', 'verdict': 'a'}]
    """
    files = _files(path)
    records, layouts = [], set()
    for f in files:
        part = _records(f)
        if not part:
            raise ValueError(f"{f}: no records")
        try:
            layouts.add(_layout_of(part))
        except ValueError as err:
            raise ValueError(f"{f}: {err}") from None
        records += part
    if len(layouts) > 1:
        raise ValueError(f"{path}: the files mix layouts ({', '.join(sorted(layouts))}); read "
                         "each layout separately")
    layout = layouts.pop()
    path = files[0] if len(files) == 1 else Path(path) if isinstance(path, (str, Path)) else files[0]
    where = f"MT-Bench {{}} from {path}"
    if layout == "human":
        votes = pd.DataFrame(records)
        # FastChat records a model judge as [model, template] ("gpt4_pair" in the published
        # split), a human as "expert_<n>" / "author_<n>"; only human votes make the label
        votes["judge_type"] = ["gpt-4" if isinstance(j, (list, tuple)) or str(j).startswith("gpt")
                               else "human" for j in votes["judge"]]
        votes["judge"] = [j[0] if isinstance(j, (list, tuple)) and j else j for j in votes["judge"]]
        pairs, judgments = tables_from_votes(votes)
    else:
        if layout == "single" and not single_as_pairs:
            raise ValueError(
                f"{path}: single-answer grades (a 1-10 score per answer), not pairwise "
                "preferences; pass single_as_pairs=True to compare each two models' grades")
        texts = _Texts.load(files[0], questions, answers)
        if layout == "pair":
            pair_rows, rec = _pair_tables(records, str(path), texts)
        else:
            pair_rows, rec = _single_tables(records, str(path), texts, baseline, tie_delta)
        pairs = pd.DataFrame(list(pair_rows.values()))
        judgments = pd.DataFrame(rec)
        judgments.insert(3, "repeat", judgments.groupby(["pair_id", "judge", "order"]).cumcount())
        judgments.insert(5, "p_a", math.nan)
        judgments["raw"] = judgments["raw"].astype(object)
    pairs = validate_pairs(pairs, name=where.format("pairs"))
    judgments = validate_judgments(judgments, pairs, name=where.format("judgments"))
    return pairs, judgments
