"""A judge: a model, a prompt template and decoding settings, and the request body it sends."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from judgekit.judging.templates import Template, get_template

__all__ = ["Judge", "as_judges"]


@dataclass(frozen=True)
class Judge:
    """One judge: a model, a template and decoding settings.

    Parameters
    ----------
    model : str
        The model name the endpoint knows.
    template : str, Template, dict or path
        The prompt template (see :func:`judgekit.list_templates`).
    temperature : float
        Sampling temperature (0 by default: the least noisy setting, Wei et al. 2024, Table 1).
    max_tokens : int, optional
        Completion budget; default 16 for templates that answer with the ID only, else 512.
    logprobs : bool
        Ask for the verdict token's logprobs (``p_a``). Turn off for endpoints without them.
    top_logprobs : int
        How many alternatives per token (10: room for four options and their case variants).
    seed : int, optional
        When set, repeat k is sent with ``seed = seed + k`` (reproducible repeats where the
        endpoint honours seeds; the simulated server uses it as the repeat index).
    base_url : str, optional
        Endpoint of this judge (else the client's, or ``OPENAI_BASE_URL``, or OpenAI's).
    extra : mapping
        Further request parameters (e.g. ``{"top_p": 0.9}``), sent in the body.
    name : str, optional
        Overrides :attr:`id`.

    Examples
    --------
    >>> import judgekit as jk
    >>> jk.Judge("gpt-4o-mini", "rafailov_tldr").id
    'gpt-4o-mini/rafailov_tldr/T0'
    >>> jk.Judge("gpt-4o-mini", "rafailov_tldr", temperature=0.7, extra={"top_p": 0.9}).id
    'gpt-4o-mini/rafailov_tldr/T0.7/...'
    """

    model: str
    template: str | Template | Mapping[str, Any] = "mtbench_pair"
    temperature: float = 0.0
    max_tokens: int | None = None
    logprobs: bool = True
    top_logprobs: int = 10
    seed: int | None = None
    base_url: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    name: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model:
            raise ValueError("Judge.model must be a non-empty string")
        object.__setattr__(self, "template", get_template(self.template))
        object.__setattr__(self, "extra", dict(self.extra))
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")
        if not 0 <= self.top_logprobs <= 20:
            raise ValueError(f"top_logprobs must be in 0..20, got {self.top_logprobs}")
        clash = {"model", "messages", "temperature", "max_tokens", "logprobs", "top_logprobs",
                 "seed", "stream", "n"} & set(self.extra)
        if clash:
            raise ValueError(f"set {sorted(clash)} through the Judge's own fields, not 'extra'")

    def __hash__(self) -> int:
        return hash(self.id)

    @property
    def tokens(self) -> int:
        """The completion budget actually requested."""
        if self.max_tokens is not None:
            return self.max_tokens
        return 512 if self.template.reasons_first else 16

    @property
    def id(self) -> str:
        """Stable id: ``model/template/T<temperature>`` plus a short hash of other settings."""
        if self.name:
            return self.name
        base = f"{self.model}/{self.template.name}/T{self.temperature:g}"
        other = {"max_tokens": self.max_tokens, "logprobs": self.logprobs,
                 "top_logprobs": self.top_logprobs, "seed": self.seed, "extra": self.extra}
        defaults = {"max_tokens": None, "logprobs": True, "top_logprobs": 10, "seed": None, "extra": {}}
        if other == defaults:
            return base
        digest = hashlib.sha256(json.dumps(other, sort_keys=True, default=str).encode()).hexdigest()
        return f"{base}/{digest[:8]}"

    def body(self, messages: list[dict[str, str]], repeat: int) -> dict[str, Any]:
        """The request body for these messages and repeat index."""
        body: dict[str, Any] = {
            "model": self.model, "messages": messages, "temperature": self.temperature,
            "max_tokens": self.tokens,
        }
        if self.logprobs:
            body["logprobs"] = True
            if self.top_logprobs:
                body["top_logprobs"] = self.top_logprobs
        if self.seed is not None:
            body["seed"] = int(self.seed) + int(repeat)
        body.update(self.extra)
        return body


def as_judges(judges: Judge | str | Sequence[Judge | str]) -> list[Judge]:
    if isinstance(judges, (Judge, str)):
        judges = [judges]
    out = [j if isinstance(j, Judge) else Judge(str(j)) for j in judges]
    if not out:
        raise ValueError("give at least one judge")
    ids = [j.id for j in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"judges must have distinct ids; repeated: {dup} (set Judge.name)")
    return out
