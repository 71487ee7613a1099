"""The public dataset API: list, load and fetch real public judge data.

Every loader returns the two tidy tables of :mod:`judgekit.schema`, validated. Parsed tables are
kept in a small in-process cache keyed by the dataset, the filters and the data location, so
``load_pairs`` followed by ``load_judgments`` parses the files once; each call returns a copy.
"""

from __future__ import annotations

import importlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from judgekit import _env
from judgekit._stamp import stamped
from judgekit.data._download import progress_group
from judgekit.data.fetch import is_available, registry_files
from judgekit.schema import validate_judgments, validate_pairs

__all__ = ["list_datasets", "load_dataset", "load_judgments", "load_pairs", "load_table"]


@dataclass(frozen=True)
class _Spec:
    name: str
    description: str
    license: str
    module: str  # judgekit.data.<module>.load(**filters) -> (pairs, judgments or None)
    has_judgments: bool
    offline_files: Callable[[], list] | None = None  # the files the default load needs

    def loader(self) -> Callable[..., tuple[pd.DataFrame, pd.DataFrame | None]]:
        return importlib.import_module(f"judgekit.data.{self.module}").load


_SPECS: dict[str, _Spec] = {}


def _register(spec: _Spec) -> None:
    _SPECS[spec.name] = spec


def _alpacaeval_default() -> list:
    from judgekit.data.alpacaeval import default_files

    return default_files()


_register(_Spec(
    "alpacaeval",
    "AlpacaEval 2.0: GPT-4-turbo judgments (with logprobs) of 43 models by default (58 with "
    "models='all') vs gpt4_1106_preview on 805 instructions",
    "code Apache-2.0; data CC BY-NC 4.0", "alpacaeval", True, _alpacaeval_default,
))

_register(_Spec(
    "llmbar",
    "LLMBar: 13 pair sets (Natural, 4 Adversarial, MT-Bench, FairEval, LLMEval^2, 5 case studies) "
    "with gold labels; 6 judges x up to 15 strategies, both orders",
    "MIT", "llmbar", True, lambda: registry_files("llmbar"),
))

_register(_Spec(
    "judging_the_judges",
    "Judging the Judges: 9 judges on MT-Bench (3 options) and DevBench (2 options), 3 repetitions "
    "x both orders, plus full runs of some judges; verdicts parsed from the raw texts",
    "MIT", "judging_the_judges", True, lambda: registry_files("judging_the_judges"),
))

_register(_Spec(
    "calm",
    "CALM bias suite: alignment, fact-related and refinement base sets, and pre-perturbed "
    "verbosity / fallacy-oversight / sentiment / authority / refinement sets (original + perturbed)",
    "none stated upstream: research use only, do not redistribute", "calm", False,
    lambda: registry_files("calm"),
))

_register(_Spec(
    "pandalm",
    "PandaLM test set: 999 pairs with 3 human annotators (majority label) and the single-order "
    "verdicts of gpt-3.5-turbo and PandaLM-7B",
    "Apache-2.0", "pandalm", True, lambda: registry_files("pandalm"),
))
_register(_Spec(
    "autoj_pairwise",
    "Auto-J pairwise test set: 1,392 human-labelled pairs (incl. ties) in 58 scenarios",
    "Apache-2.0", "autoj_pairwise", False, lambda: registry_files("autoj_pairwise"),
))
_register(_Spec(
    "hh_rlhf",
    "Anthropic HH-RLHF chosen/rejected dialogues; harmless-base test offline, helpful-base and "
    "the other subsets online (subset=, split=)",
    "MIT", "hh_rlhf", False,
    lambda: [f for f in registry_files("hh_rlhf") if f.path == "harmless-base/test.jsonl.gz"],
))
_register(_Spec(
    "tldr",
    "TL;DR summarize-from-feedback: human comparisons of two Reddit-post summaries (online only)",
    "MIT", "tldr", False, lambda: registry_files("tldr"),
))
_register(_Spec(
    "mtbench_human",
    "MT-Bench: expert human votes and GPT-4 pair judgments on 80 two-turn questions (online only)",
    "CC-BY-4.0", "mtbench", True, lambda: registry_files("mtbench_human"),
))
_register(_Spec(
    "rewardbench",
    "RewardBench filtered: 2,985 prompt/chosen/rejected triples across chat, chat-hard, safety "
    "and reasoning subsets (online only)",
    "ODC-BY", "rewardbench", False, lambda: registry_files("rewardbench"),
))

# Published tables: name -> (loader attribute in judgekit.data.alpacaeval, description)
_TABLES: dict[str, tuple[str, str]] = {
    "alpacaeval_leaderboard": ("load_leaderboard", "AlpacaEval 2.0 leaderboard: win rates and "
                               "length-controlled win rates of 223 models"),
    "arena_elo": ("load_arena_elo", "Chatbot Arena Elo beside AlpacaEval, LC AlpacaEval, MT-bench "
                  "and other benchmarks (56 models)"),
    "alpacaeval_glm_weights": ("load_glm_weights", "published per-model coefficients of the "
                               "length-controlled AlpacaEval GLM"),
    "alpacaeval_evaluators": ("load_evaluators", "AlpacaEval's evaluator leaderboard: human "
                              "agreement, price, bias, P(prefer longer) of 32 judges"),
}


def _spec(name: str) -> _Spec:
    if not isinstance(name, str) or name not in _SPECS:
        hint = " (that is a table: use jk.load_table)" if name in _TABLES else ""
        raise ValueError(f"unknown dataset {name!r}{hint}; known: {', '.join(sorted(_SPECS))}")
    return _SPECS[name]


@stamped
def list_datasets() -> pd.DataFrame:
    """The datasets judgekit can load, with licences and whether they are available offline here.

    Returns
    -------
    DataFrame
        One row per dataset: ``name``, ``description``, ``license``, ``offline`` (every file
        the default load needs is in the mirror or the cache), ``has_judgments`` (judge outputs
        are included, not only human labels), ``files`` and ``files_available``.

    Examples
    --------
    >>> import judgekit as jk
    >>> table = jk.list_datasets()
    >>> "llmbar" in set(table["name"])
    True
    """
    rows = []
    for spec in _SPECS.values():
        files = spec.offline_files() if spec.offline_files else []
        offline = bool(files) and all(is_available(f) for f in files)
        rows.append({
            "name": spec.name, "description": spec.description, "license": spec.license,
            "offline": offline, "has_judgments": spec.has_judgments,
            "files": len(registry_files(spec.name)),
            "files_available": sum(is_available(f) for f in registry_files(spec.name)),
        })
    return pd.DataFrame(rows)


def _freeze(value: object) -> object:
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_freeze(v) for v in value]
        return tuple(sorted(items, key=repr)) if isinstance(value, (set, frozenset)) else tuple(items)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    return value


_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 6


def _check_filters(name: str, loader: Callable, filters: dict) -> None:
    """An unknown filter is a TypeError naming the dataset's filters (and the nearest one)."""
    import difflib
    import inspect

    params = inspect.signature(loader).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    unknown = [k for k in filters if k not in params]
    if not unknown:
        return
    valid = [n for n, p in params.items() if n != "progress" and p.kind in (
        inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    near = [m for k in unknown for m in difflib.get_close_matches(k, valid, n=1)]
    raise TypeError(
        f"dataset {name!r} has no filter {', '.join(map(repr, unknown))}; its filters are "
        + (", ".join(f"{v}=" for v in valid) if valid else "none (it loads everything)")
        + (f" (did you mean {', '.join(f'{m}=' for m in near)}?)" if near else ""))


def _load(name: str, filters: dict) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    spec = _spec(name)
    key = (name, _freeze(filters), str(_env.data_mirror()), str(_env.cache_dir()))
    try:
        hit = key in _CACHE
    except TypeError:  # unhashable filter value: just do not cache
        hit, key = False, None
    if hit:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    loader = spec.loader()
    _check_filters(name, loader, filters)
    with progress_group(name):
        pairs, judgments = loader(**filters)
    pairs = validate_pairs(pairs, name=f"{name} pairs")
    if judgments is not None:
        judgments = validate_judgments(judgments, pairs, name=f"{name} judgments")
    if key is not None:
        _CACHE[key] = (pairs, judgments)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return pairs, judgments


@stamped
def load_dataset(name: str, **filters) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Pairs and judgments of a dataset in one call (judgments is None when it has none).

    Parameters
    ----------
    name : str
        The dataset's name, as :func:`list_datasets` lists it (see :func:`load_pairs`).
    **filters
        The dataset-specific selection keywords of :func:`load_pairs` (``sets=``, ``judges=``,
        ``models=``, ...); omitted means everything the dataset loads by default.

    Returns
    -------
    pairs : DataFrame
        The validated pairs table, as :func:`load_pairs` returns it.
    judgments : DataFrame or None
        The validated judgments table of the published judge outputs, as
        :func:`load_judgments` returns it (every ``pair_id`` is in ``pairs``), or None for a
        dataset with human labels only (``has_judgments`` False in :func:`list_datasets`).

    Raises
    ------
    ValueError, DataFileError
        As :func:`load_pairs`.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments = jk.load_dataset("pandalm")
    >>> len(pairs), len(judgments), sorted(judgments["judge"].unique())
    (999, 1998, ['gpt-3.5-turbo', 'pandalm-7b'])
    >>> pairs, judgments = jk.load_dataset("autoj_pairwise")  # human labels only
    >>> len(pairs), judgments is None
    (1392, True)
    """
    pairs, judgments = _load(name, filters)
    return pairs.copy(), (None if judgments is None else judgments.copy())


@stamped
def load_pairs(name: str, **filters) -> pd.DataFrame:
    """Load a real public dataset as a validated pairs table.

    Files come from ``JUDGEKIT_DATA_MIRROR``, the user cache, or are downloaded on first use
    (sha256-checked, one progress bar per dataset; ``JUDGEKIT_DATA_URL`` replaces GitHub's raw
    host); see :mod:`judgekit.data.fetch`. ``jk.list_datasets()`` lists the names;
    ``docs/data.md`` the columns of each.

    Parameters
    ----------
    name : str
        ``"alpacaeval"``, ``"llmbar"``, ``"judging_the_judges"``, ``"pandalm"``,
        ``"autoj_pairwise"``, ``"hh_rlhf"``, ``"calm"``, ``"tldr"``, ``"mtbench_human"`` or
        ``"rewardbench"``.
    **filters
        Dataset-specific keywords, e.g. ``models=`` (alpacaeval: the 43 default models when
        omitted, ``"all"`` for 58), ``sets=`` / ``judges=`` / ``strategies=`` (llmbar),
        ``benchmark=`` / ``run=`` (judging_the_judges), ``subset=`` / ``split=`` (hh_rlhf),
        ``sets=`` (calm). Each takes a name or a list of names; omitted means all. Unknown
        keywords raise a TypeError, as do mappings and non-string names; an empty list raises
        a ValueError (it would select nothing).

    Returns
    -------
    DataFrame
        A pairs table (:func:`judgekit.validate_pairs`) with ``len_a`` / ``len_b`` filled in.

    Raises
    ------
    ValueError
        For an unknown dataset, model, set or judge name (with close matches).
    DataFileError
        When a file is missing, fails its sha256, is truncated, or cannot be downloaded; the
        message names the file, its URL and the fix.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs = jk.load_pairs("llmbar", sets="Natural", judges="GPT-4", strategies="Vanilla")
    >>> len(pairs), bool(pairs["label"].isin(["a", "b"]).all())
    (100, True)
    """
    return _load(name, filters)[0].copy()


@stamped
def load_judgments(name: str, **filters) -> pd.DataFrame:
    """Load the judge outputs published with a dataset as a validated judgments table.

    Takes the same names and filters as :func:`load_pairs`; every ``pair_id`` is in the pairs
    table that :func:`load_pairs` returns for the same arguments.

    Parameters
    ----------
    name : str
        A dataset with published judge outputs: ``"alpacaeval"``, ``"llmbar"``,
        ``"judging_the_judges"``, ``"pandalm"`` or ``"mtbench_human"``.
    **filters
        The dataset-specific selection keywords of :func:`load_pairs`; for ``"llmbar"`` the
        ``judges=`` and ``strategies=`` keywords choose which judge runs come back.

    Returns
    -------
    DataFrame
        A judgments table (:func:`judgekit.validate_judgments`): one row per published verdict,
        with ``pair_id``, ``judge``, ``order``, ``repeat``, ``verdict``, ``p_a`` (NaN where the
        source has no probabilities), ``id_swap`` and the dataset's extra columns (``model``,
        ``template``, ``raw``, ... when the source has them).

    Raises
    ------
    ValueError
        For a dataset without published judge outputs (``has_judgments`` is False in
        :func:`list_datasets`), and as :func:`load_pairs`.
    DataFileError
        As :func:`load_pairs`.

    Examples
    --------
    >>> import judgekit as jk
    >>> j = jk.load_judgments("llmbar", sets="Natural", judges="GPT-4", strategies="Vanilla")
    >>> len(j), j["judge"].unique().tolist(), j["order"].value_counts().sort_index().tolist()
    (200, ['GPT-4/Vanilla'], [100, 100])
    >>> jk.load_judgments("autoj_pairwise")
    Traceback (most recent call last):
    ...
    ValueError: dataset 'autoj_pairwise' has human labels but no published judge outputs; ...
    """
    judgments = _load(name, filters)[1]
    if judgments is None:
        with_j = sorted(n for n, s in _SPECS.items() if s.has_judgments)
        raise ValueError(
            f"dataset {name!r} has human labels but no published judge outputs; "
            f"datasets with judgments: {', '.join(with_j)}"
        )
    return judgments.copy()


@stamped
def load_table(name: str) -> pd.DataFrame:
    """Load a published table: leaderboards and coefficients used to check judgekit's numbers.

    Parameters
    ----------
    name : str
        ``"alpacaeval_leaderboard"`` (win rate, LC win rate, standard errors, average length per
        model), ``"arena_elo"`` (Arena Elo beside other benchmarks), ``"alpacaeval_glm_weights"``
        (published LC GLM coefficients) or ``"alpacaeval_evaluators"`` (judges' human agreement
        and biases).

    Returns
    -------
    DataFrame
        The upstream CSV with its first column named ``model`` (``evaluator`` for
        ``alpacaeval_evaluators``); line breaks in column names become spaces.

    Examples
    --------
    >>> import judgekit as jk
    >>> lb = jk.load_table("alpacaeval_leaderboard")
    >>> float(lb.set_index("model").loc["gpt4_1106_preview", "win_rate"])
    50.0
    """
    if not isinstance(name, str) or name not in _TABLES:
        hint = " (that is a dataset: use jk.load_pairs)" if name in _SPECS else ""
        raise ValueError(f"unknown table {name!r}{hint}; known: {', '.join(sorted(_TABLES))}")
    from judgekit.data import alpacaeval

    with progress_group(name):
        return getattr(alpacaeval, _TABLES[name][0])()
