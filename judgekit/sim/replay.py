"""Replay: the simulated server answers from stored judgments instead of simulating."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from judgekit.judging.templates import Template
from judgekit.sim.chat import Decision, RequestError, reply_text

__all__ = ["Replay"]


class Replay:
    """Stored judgments indexed by (judge or model, pair, order, ID swap, repeat).

    ``pair_ids`` maps (prompt, response_a, response_b) to the pair's id; it is the server's
    registry of known pairs, read at answer time.
    """

    def __init__(self, judgments: pd.DataFrame, pair_ids: Mapping[tuple[str, str, str], str]) -> None:
        from judgekit.schema import validate_judgments

        j = validate_judgments(judgments)
        if not pair_ids:
            raise ValueError("replay needs the pairs table too (pairs=...)")
        self.pair_ids = pair_ids
        self._index: dict[tuple, dict] = {}
        for row in j.to_dict("records"):
            key = (row["pair_id"], row["order"], bool(row["id_swap"]), int(row["repeat"]))
            for who in {row["judge"], row.get("model")} - {None}:
                self._index[(who, *key)] = row
            self._index[("*", *key)] = row

    def answer(self, model: str, d: Mapping[str, Any], repeat: int) -> tuple[str, int | None, Decision]:
        """(text, verdict offset, decision) of the stored judgment the decoded request asks for."""
        responses, ids, options = d["responses"], d["ids"], d["options"]
        if len(responses) != 2:
            raise RequestError("replay answers two-response requests only")
        key = (d["prompt"], responses[0], responses[1])
        order = "ab"
        if key not in self.pair_ids:
            key, order = (d["prompt"], responses[1], responses[0]), "ba"
        if key not in self.pair_ids:
            raise RequestError("replay: the request's pair is not in the pairs table")
        pair_id = self.pair_ids[key]
        swap = ids[0] != options[0]
        row = self._index.get((model, pair_id, order, swap, repeat)) or self._index.get(
            ("*", pair_id, order, swap, repeat))
        if row is None:
            raise RequestError(
                f"replay: no stored judgment for pair {pair_id!r}, order {order}, id_swap {swap}, "
                f"repeat {repeat}"
            )
        id_a, id_b = (ids[0], ids[1]) if order == "ab" else (ids[1], ids[0])
        verdict = row["verdict"]
        token = {"a": id_a, "b": id_b, "tie": d["tie_id"]}.get(verdict)
        p_a = row["p_a"]
        if p_a is None or (isinstance(p_a, float) and math.isnan(p_a)):
            probs = {}
        else:
            probs = {id_a: float(p_a), id_b: 1.0 - float(p_a)}
        template: Template = d["template"]
        raw = row.get("raw")
        if isinstance(raw, str) and raw:
            text, offset = raw, template.parse(raw).start
        elif token is not None:
            text, offset = reply_text(template, token)
        else:
            text, offset = "I cannot decide.", None
        return text, offset, Decision(token or "", probs)
