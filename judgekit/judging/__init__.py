"""The judging engine: templates, verdict parsing, logprobs, the client, cache and runs."""

from judgekit.judging.batch import collect_batch, run_judges_batch, submit_batch
from judgekit.judging.cache import Cache, request_key
from judgekit.judging.completions import acomplete, complete
from judgekit.judging.config import RunConfig
from judgekit.judging.engine import arun_judges, run_judges
from judgekit.judging.judge import Judge
from judgekit.judging.logprobs import option_probabilities
from judgekit.judging.pricing import DEFAULT_PRICES, estimate_cost, price_table
from judgekit.judging.templates import ParsedVerdict, Template, get_template, list_templates

__all__: list[str] = [
    "DEFAULT_PRICES",
    "Cache",
    "Faults",
    "Judge",
    "ParsedVerdict",
    "RunConfig",
    "SimServer",
    "Template",
    "acomplete",
    "arun_judges",
    "collect_batch",
    "complete",
    "estimate_cost",
    "get_template",
    "list_templates",
    "option_probabilities",
    "price_table",
    "request_key",
    "run_judges",
    "run_judges_batch",
    "submit_batch",
]


def __getattr__(name: str) -> object:
    # The simulated server's names are re-exported here, but imported on first use:
    # judgekit.sim itself imports judgekit.judging.templates, so importing it at the top would
    # make ``import judgekit.sim`` (what ``judgekit serve-sim`` does first) circular.
    if name in ("Faults", "SimServer"):
        from judgekit import sim

        return getattr(sim, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
