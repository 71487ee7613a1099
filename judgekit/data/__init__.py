"""Datasets (real public data, downloaded or read from a mirror) and sampling; simulated data is in :mod:`judgekit.sim`."""

from judgekit._deprecation import moved
from judgekit.data._pickle import UnsafePickleError
from judgekit.data.alpacaeval import read_alpacaeval
from judgekit.data.arena_battles import crowd_agreement, read_arena_battles
from judgekit.data.arena_hard import read_arena_hard
from judgekit.data.datasets import (
    list_datasets,
    load_dataset,
    load_judgments,
    load_pairs,
    load_table,
)
from judgekit.data.fetch import DataFileError, UnverifiedDataWarning, data_files, fetch_dataset
from judgekit.data.formats import detect_format, read_any
from judgekit.data.judging_the_judges import read_judging_the_judges
from judgekit.data.llmbar import read_llmbar_results
from judgekit.data.mtbench import read_mtbench
from judgekit.data.sampling import sample_splits
from judgekit.data.table import read_judgments, split_tables
from judgekit.exceptions import MissingDataWarning

__all__ = [
    "DataFileError",
    "MissingDataWarning",
    "UnsafePickleError",
    "UnverifiedDataWarning",
    "crowd_agreement",
    "data_files",
    "detect_format",
    "fetch_dataset",
    "list_datasets",
    "load_dataset",
    "load_judgments",
    "load_pairs",
    "load_table",
    "read_alpacaeval",
    "read_any",
    "read_arena_battles",
    "read_arena_hard",
    "read_judging_the_judges",
    "read_judgments",
    "read_llmbar_results",
    "read_mtbench",
    "sample_splits",
    "split_tables",
]

# Moved to the simulation wing (issue 24): the old names warn and still work.
__getattr__ = moved(__name__, dict.fromkeys(("SimJudge", "Simulation", "simulate_judgments", "simulate_pairs"), "judgekit.sim"))
