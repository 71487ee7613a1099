"""Time reading an Arena-Hard-Auto folder and scoring it, on a synthetic folder in the real schema.

    python benchmarks/bench_arena.py [--models 72] [--questions 500] [--boot 100]

Writes an Arena-Hard v0.1 folder (``question.jsonl``, ``model_answer/<model>.jsonl`` with
``token_len``, ``model_judgment/<judge>/<model>.jsonl`` with both games, each recording the judge
prompt with both answers, as the real files do) in a temporary directory: 72 models × 500
questions = 36,000 pairs by default, answers of realistic size (a lognormal around 2,000
characters with markdown). Then prints wall and CPU time (judgekit imported beforehand) of
``jk.read_arena_hard`` (target ≤ 3 s),
``jk.win_rates`` and ``jk.arena_hard_scores`` / ``jk.bradley_terry`` point estimates (target ≤ 1 s
each), the style-controlled score, and the bootstraps; the load average is printed beside them,
and the folder's size and the time ``json.loads`` alone takes on its judgment files, so a reader
of the numbers can tell parsing from the rest.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

import judgekit as jk

READ_TARGET_S, FIT_TARGET_S = 3.0, 1.0
_WORDS = ["the", "model", "answer", "data", "value", "table", "list", "first", "second", "result", "check", "case", "step", "code", "method", "number", "using", "should", "would", "because", "however", "example", "output", "input", "string"]
_LABELS = np.array(["A>>B", "A>B", "A=B", "B>A", "B>>A"])


def _text(gen: np.random.Generator, n_chars: int, markdown: float) -> str:
    words = gen.choice(_WORDS, size=max(4, n_chars // 6))
    lines, line = [], []
    for i, word in enumerate(words):
        line.append(str(word))
        if len(line) > 12 or i == len(words) - 1:
            text = " ".join(line)
            r = gen.random()
            if r < 0.05 * markdown:
                text = "## " + text
            elif r < 0.35 * markdown:
                text = "- **" + line[0] + "** " + text
            lines.append(text)
            line = []
    return "\n".join(lines)


def write_folder(root: Path, n_models: int = 72, n_questions: int = 500, seed: int = 0,
                 judge: str = "gpt-4-1106-preview") -> Path:
    """An Arena-Hard v0.1 folder of synthetic battles against gpt-4-0314, in the real schema."""
    gen = np.random.default_rng(seed)
    bench = root / "data" / "arena-hard-v0.1"
    (bench / "model_answer").mkdir(parents=True, exist_ok=True)
    (bench / "model_judgment" / judge).mkdir(parents=True, exist_ok=True)
    qids = [f"{i:032x}" for i in gen.integers(0, 2**62, size=n_questions)]
    questions = [_text(gen, int(gen.lognormal(5.5, 0.6)), 0.0) for _ in qids]
    with open(bench / "question.jsonl", "w") as f:
        for qid, q in zip(qids, questions):
            f.write(json.dumps({"question_id": qid, "category": "arena-hard-v0.1",
                                "cluster": "synthetic", "turns": [{"content": q}]}) + "\n")
    pool = [_text(gen, int(gen.lognormal(7.6, 0.6)), gen.random()) for _ in range(600)]
    judge_texts = [_text(gen, int(gen.lognormal(7.2, 0.3)), 0.2) for _ in range(200)]
    models = ["gpt-4-0314", *[f"model-{i:02d}" for i in range(n_models)]]
    answers = {}
    for model in models:
        pick = gen.integers(0, len(pool), size=n_questions)
        answers[model] = [pool[i] for i in pick]
        with open(bench / "model_answer" / f"{model}.jsonl", "w") as f:
            for qid, a in zip(qids, answers[model]):
                f.write(json.dumps({"question_id": qid, "answer_id": qid[:22], "model_id": model,
                                    "choices": [{"index": 0, "turns": [
                                        {"content": a, "token_len": len(a) // 4}]}],
                                    "tstamp": 1712000000.0}) + "\n")
    template = ("<|User Prompt|>\n{q}\n\n<|The Start of Assistant A's Answer|>\n{a}\n"
                "<|The End of Assistant A's Answer|>\n\n<|The Start of Assistant B's Answer|>\n{b}\n"
                "<|The End of Assistant B's Answer|>")
    for k, model in enumerate(models[1:]):
        strength = (k - n_models / 2) / n_models * 3
        with open(bench / "model_judgment" / judge / f"{model}.jsonl", "w") as f:
            for i, qid in enumerate(qids):
                base, mine = answers["gpt-4-0314"][i], answers[model][i]
                games = []
                for swap in (False, True):
                    latent = strength + gen.logistic()
                    label = int(np.clip(np.rint(latent / 1.2) + 2, 0, 4))  # 4: model much better
                    label = _LABELS[4 - label] if not swap else _LABELS[label]
                    a, b = (mine, base) if swap else (base, mine)
                    games.append({"user_prompt": template.format(q=questions[i], a=a, b=b),
                                  "judgment": judge_texts[gen.integers(0, 200)]
                                  + f"\n\nMy final verdict is [[{label}]]", "score": str(label)})
                f.write(json.dumps({"question_id": qid, "model": model, "judge": judge,
                                    "games": games}) + "\n")
    return bench


def timed(label: str, fn, target: float | None = None):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    note = "" if target is None else (f"   target ≤ {target:.0f} s: wall {'met' if wall <= target else 'NOT met'}, "
                                      f"cpu {'met' if cpu <= target else 'NOT met'}")
    print(f"{label:<52} wall {wall:6.2f} s   cpu {cpu:6.2f} s{note}")
    return out, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=72)
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--boot", type=int, default=100)
    args = parser.parse_args()
    for name in ("read_arena_hard", "win_rates", "arena_hard_scores", "bradley_terry"):
        getattr(jk, name)  # import the subpackages first: a one-off cost, not the step's
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        bench = write_folder(Path(tmp), args.models, args.questions)
        files = sorted((bench / "model_judgment").rglob("*.jsonl"))
        size = sum(f.stat().st_size for f in bench.rglob("*.jsonl")) / 1e6
        print(f"wrote {args.models} models × {args.questions} questions ({size:,.0f} MB) in "
              f"{time.perf_counter() - t:.0f} s; load average {os.getloadavg()[0]:.1f} on "
              f"{os.cpu_count()} cores\n")
        timed("json.loads of the judgment files alone (reference)",
              lambda: [json.loads(line) for f in files for line in f.read_bytes().split(b"\n")
                       if line])
        (pairs, judgments), _ = timed("jk.read_arena_hard (texts, checks, validation)",
                                      lambda: jk.read_arena_hard(bench / "model_judgment"),
                                      READ_TARGET_S)
        print(f"  {len(pairs):,} pairs, {len(judgments):,} judgments\n")
        timed("jk.win_rates (point estimates)", lambda: jk.win_rates(judgments, pairs, n_boot=0),
              FIT_TARGET_S)
        timed("jk.arena_hard_scores (point estimates)",
              lambda: jk.arena_hard_scores(judgments, pairs, n_boot=0), FIT_TARGET_S)
        timed("jk.bradley_terry (point estimates)",
              lambda: jk.bradley_terry(judgments, pairs, weight=3, n_boot=0), FIT_TARGET_S)
        timed("jk.style_features (markdown counted in the texts)",
              lambda: jk.style_features(pairs))
        timed("jk.arena_hard_scores, style control (point estimates)",
              lambda: jk.arena_hard_scores(judgments, pairs, control="style", n_boot=0))
        timed(f"jk.arena_hard_scores, {args.boot} bootstrap rounds",
              lambda: jk.arena_hard_scores(judgments, pairs, n_boot=args.boot))
        timed(f"jk.arena_hard_scores, style control, {args.boot} rounds",
              lambda: jk.arena_hard_scores(judgments, pairs, control="style", n_boot=args.boot))


if __name__ == "__main__":
    main()
