"""Published numbers from the five reference papers (and LLMBar's released statistics), as data.

Every number a paper printed that judgekit recomputes (in a test, a notebook or the reproduction
scoreboard) is typed exactly once, in a CSV file of this folder named after the paper, with where
it was printed. Tests, notebooks and the scoreboard all read it through :func:`published`.

Columns of every file:

``item``
    A stable id within the paper, ``/``-separated from the general to the specific, e.g.
    ``table2/mtbench/gpt-4-1106-preview/pc``.
``value``
    The number as printed (a proportion printed as a percentage is stored as printed, in percent).
``decimals``
    How many decimals were printed; half a unit in that place is the rounding tolerance.
``source``
    Where it was printed: ``"Table 2"``, ``"Figure 3"``, ``"Section 4.3"``, with the page when known.
``note``
    Anything a reader needs to interpret the value (which judge a column name means, ...).

The paper itself (authors, year, title, arXiv id) is in :data:`PAPERS`, keyed by the file name.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PAPERS", "published"]

#: The five reference papers, then LLMBar's repository statistics, keyed by the stem of their CSV file.
PAPERS: dict[str, dict[str, str]] = {
    "wei2024": {
        "citation": "Wei, He, Xia, Liu, Wong, Lin, Han (2024)",
        "title": "Systematic Evaluation of LLM-as-a-Judge in LLM Alignment Tasks: Explainable "
                 "Metrics and Diverse Prompt Templates",
        "arxiv": "2408.13006",
    },
    "li2024": {
        "citation": "Li, Chen, Ai, Chu, Zhou, Dong, Liu (2024)",
        "title": "CalibraEval: Calibrating Prediction Distribution to Mitigate Selection Bias in "
                 "LLMs-as-Judges",
        "arxiv": "2410.15393",
    },
    "dubois2024": {
        "citation": "Dubois, Galambosi, Liang, Hashimoto (2024)",
        "title": "Length-Controlled AlpacaEval: A Simple Way to Debias Automatic Evaluators",
        "arxiv": "2404.04475",
    },
    "shi2024": {
        "citation": "Shi, Ma, Vosoughi (2024)",
        "title": "Judging the Judges: A Systematic Investigation of Position Bias in Pairwise "
                 "Comparative Assessments by LLMs",
        "arxiv": "2406.07791",
    },
    "ye2024": {
        "citation": "Ye et al. (2024)",
        "title": "Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge",
        "arxiv": "2410.02736",
    },
    # not one of the five papers judgekit implements: the statistics LLMBar's repository
    # publishes beside its judges' outputs, which notebook 04 recomputes from those outputs
    "zeng2024": {
        "citation": "Zeng, Yu, Gao, Meng, Goyal, Chen (2024)",
        "title": "Evaluating Large Language Models at Evaluating Instruction Following (LLMBar; "
                 "the statistics.json files of its repository)",
        "arxiv": "2310.07641",
    },
}

_COLUMNS = ["item", "value", "decimals", "source", "note"]


@cache
def _read(paper: str) -> pd.DataFrame:
    import pandas as pd  # here: `import judgekit` (which binds `published`) imports no pandas

    path = resources.files(__name__) / f"{paper}.csv"
    if not path.is_file():
        return pd.DataFrame(columns=["paper", *_COLUMNS])
    with path.open("r", encoding="utf-8") as fh:
        frame = pd.read_csv(fh, dtype={"item": str, "source": str, "note": str},
                            keep_default_na=False, na_values={"value": [""]})
    missing = [c for c in _COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"judgekit/published/{paper}.csv lacks column(s) {missing}")
    dup = frame["item"].duplicated()
    if dup.any():
        raise ValueError(f"judgekit/published/{paper}.csv repeats item(s) "
                         f"{frame.loc[dup, 'item'].tolist()[:5]}")
    frame.insert(0, "paper", paper)
    return frame[["paper", *_COLUMNS]]


def published(paper: str | None = None, prefix: str = "") -> pd.DataFrame:
    """The published numbers of one paper (or of all), optionally only items under a prefix.

    Parameters
    ----------
    paper : str, optional
        A key of :data:`PAPERS` (``"shi2024"``, ...); all papers when omitted.
    prefix : str
        Keep only items starting with this (e.g. ``"table2/"``).

    Returns
    -------
    DataFrame
        Columns ``paper``, ``item``, ``value``, ``decimals``, ``source``, ``note`` and
        ``tolerance`` (half a unit in the last printed decimal).

    Raises
    ------
    ValueError
        For a ``paper`` that is not a key of :data:`PAPERS`.

    Examples
    --------
    Shi et al. (2024), Table 2, the MT-Bench row of GPT-4-Turbo (gpt-4-1106-preview):

    >>> import judgekit as jk
    >>> row = jk.published("shi2024", prefix="table2/mtbench/gpt-4-1106-preview/")
    >>> row["item"].str.rsplit("/", n=1).str[1].tolist()
    ['rs', 'rs_sd', 'pc', 'pc_sd', 'pf', 'error']
    >>> row["value"].tolist(), row["tolerance"].tolist()[0]
    ([0.94, 0.1, 0.75, 0.16, 0.02, 0.0], 0.005)
    >>> sorted(jk.published()["paper"].unique())
    ['dubois2024', 'li2024', 'shi2024', 'wei2024', 'ye2024', 'zeng2024']
    """
    import pandas as pd

    if paper is not None and paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; known: {sorted(PAPERS)}")
    keys = [paper] if paper is not None else list(PAPERS)
    frame = pd.concat([_read(k) for k in keys], ignore_index=True)
    if prefix:
        frame = frame[frame["item"].str.startswith(prefix)].reset_index(drop=True)
    frame["tolerance"] = 0.5 * 10.0 ** (-pd.to_numeric(frame["decimals"]).astype(float))
    return frame
