"""A judge: a model, a prompt template and decoding settings, and the request body it sends."""

from __future__ import annotations

import hashlib
import json
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from judgekit.judging.secrets import odd_path, public_endpoint
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
            raise ValueError(f"Judge.model must be a non-empty string, got {self.model!r}")
        object.__setattr__(self, "template", get_template(self.template))
        if not isinstance(self.extra, Mapping):
            raise ValueError(f"Judge.extra must be a mapping of request parameters, got "
                             f"{type(self.extra).__name__}")
        object.__setattr__(self, "extra", dict(self.extra))
        t = self.temperature
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t < float("inf"):
            raise ValueError(f"Judge.temperature must be a finite number >= 0, got {t!r}")
        for name, low, high in (("max_tokens", 1, None), ("top_logprobs", 0, 20), ("seed", None, None)):
            value = getattr(self, name)
            if value is None and name != "top_logprobs":
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
                    or (low is not None and value < low) or (high is not None and value > high):
                span = f" in {low}..{high}" if high is not None else f" >= {low}" if low else ""
                raise ValueError(f"Judge.{name} must be an integer{span}, got {value!r}")
            object.__setattr__(self, name, int(value))
        if not isinstance(self.logprobs, bool):
            raise ValueError(f"Judge.logprobs must be True or False, got {self.logprobs!r}")
        for name in ("base_url", "name"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(f"Judge.{name} must be a non-empty string, got {value!r}")
        if self.base_url is not None and not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"Judge.base_url must start with http:// or https://, got "
                             f"{public_endpoint(self.base_url)!r}")
        if self.base_url is not None:
            check_base_url(self.base_url, "Judge.base_url")
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

def check_base_url(url: str, name: str, *, path_only: bool = False) -> None:
    """Refuse a base URL with a query string or fragment: requests go to
    ``{base_url}/chat/completions``, which such a URL cannot be extended to (neither transport
    would reach the endpoint). Refuse as well a path that holds a query or parameters in another
    spelling (``.../v1%3Fapi-key=...``, ``.../v1;key=...``): the request would carry them to a
    path, where a key is logged by every server and proxy on the way; the message does not
    repeat what follows them. ``path_only`` checks the path alone (a client's base URL)."""
    from urllib.parse import urlsplit

    odd = odd_path(url)
    if odd is not None:
        raise ValueError(
            f"{name} has {odd} in its path ({public_endpoint(url)!r}): what follows would be "
            "sent as part of the path (a key there reaches every log on the way). Give the "
            "endpoint's base URL only (e.g. https://host/v1) and the key as api_key= or "
            "OPENAI_API_KEY")
    parts = urlsplit(url)
    if not path_only and (parts.query or parts.fragment):
        raise ValueError(
            f"{name} must not carry a query string or fragment, got {public_endpoint(url)!r}: "
            "requests go to {base_url}/chat/completions. For an endpoint that needs query "
            "parameters (Azure's api-version), pass client=openai.AsyncAzureOpenAI(...) or "
            "client=openai.AsyncOpenAI(base_url=..., default_query={...})")
