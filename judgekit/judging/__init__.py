"""The judging engine: templates, verdict parsing, logprobs, the client, cache and runs."""

from judgekit._deprecation import moved
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
    "Judge",
    "ParsedVerdict",
    "RunConfig",
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


# Moved to the simulation wing (issue 24): the old names warn and still work.
__getattr__ = moved(__name__, dict.fromkeys(("Faults", "SimServer"), "judgekit.sim"))
