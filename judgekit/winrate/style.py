"""Style features of answers (length and markdown), as Chatbot Arena's style control counts them.

Style control (Li et al., 2024, "Does style matter?") adds four features of each battle to the
Bradley-Terry regression: the answers' lengths and their counts of markdown headers, list items and
bold spans. For every feature the battle's covariate is the normalised difference
(a − b) / (a + b + 1), standardised over the battles (mean 0, population standard deviation 1).
Markdown is counted outside fenced code blocks. These are the features of Chatbot Arena's
``construct_style_matrices`` and of Arena-Hard-Auto v0.1's ``show_result.py --style-control``.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd

from judgekit._stack import caller_level
from judgekit._stamp import stamped
from judgekit.exceptions import MetricWarning
from judgekit.schema import validate_pairs

__all__ = ["style_features"]

#: The style features, in the order of the published style-control regression.
FEATURES: tuple[str, ...] = ("length", "header", "list", "bold")
#: Which features each ``control`` puts in the regression (``None``/"none": no style term).
CONTROLS: dict[str, tuple[str, ...]] = {
    "none": (),
    "length": ("length",),
    "markdown": ("header", "list", "bold"),
    "style": FEATURES,
}

# The counting rules of the published metadata (Chatbot Arena / Arena-Hard-Auto): a header is a
# line opening with 1-6 '#' and a whitespace, a list item a line opening with "<digits>. " or one
# of - * + and a whitespace (leading whitespace, blank lines included, allowed), a bold span
# **text** or __text__ on one line. Code blocks (``` ... ```) are emptied first.
_CODE = re.compile(r"```([^`]*)```")
_HEADER = re.compile(r"^#{1,6}\s", re.MULTILINE)
_ORDERED = re.compile(r"^\s*\d+\.\s", re.MULTILINE)
_UNORDERED = re.compile(r"^\s*[-*+]\s", re.MULTILINE)
_BOLD_STARS = re.compile(r"\*\*[^*\n]+\*\*")
_BOLD_UNDERSCORES = re.compile(r"__[^_\n]+__")
_UPSTREAM_COLUMNS = {"header": "header_count", "list": "list_count", "bold": "bold_count"}


def markdown_counts(text: str) -> tuple[int, int, int]:
    """Markdown headers, list items and bold spans of one answer, outside code blocks.

    Parameters
    ----------
    text : str
        The answer.

    Returns
    -------
    header, list, bold : int
        The counts Chatbot Arena's style control uses (the sums of its ``header_count`` h1-h6,
        ``list_count`` ordered + unordered and ``bold_count`` ``**`` + ``__``).

    Examples
    --------
    >>> from judgekit.winrate.style import markdown_counts
    >>> markdown_counts("# Plan\\n\\n1. **Mix** it\\n2. Bake\\n- note\\n```\\n# not a header\\n```")
    (1, 3, 1)
    """
    for block in _CODE.findall(text):  # as upstream: each block's content is removed everywhere
        if block:
            text = text.replace(block, "")
    headers = len(_HEADER.findall(text))
    items = len(_ORDERED.findall(text)) + len(_UNORDERED.findall(text))
    bold = len(_BOLD_STARS.findall(text)) + len(_BOLD_UNDERSCORES.findall(text))
    return headers, items, bold


def _counts_of(texts: pd.Series) -> np.ndarray:
    """(n, 3) markdown counts of a column of texts, each distinct text counted once."""
    codes, uniques = pd.factorize(texts)
    table = np.array([markdown_counts(t) if isinstance(t, str) else (np.nan,) * 3
                      for t in uniques], dtype=float).reshape(-1, 3)
    out = np.full((len(texts), 3), np.nan)
    ok = codes >= 0
    out[ok] = table[codes[ok]]
    return out


def lengths(pairs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, str]:
    """The answers' lengths (validated pairs): token counts where every known answer has one,
    else characters; and the unit."""
    tokens = {"tokens_a", "tokens_b"} <= set(pairs.columns)
    if tokens:
        counts = pairs[["tokens_a", "tokens_b"]].apply(pd.to_numeric, errors="coerce")
        known = pairs[["len_a", "len_b"]].notna().to_numpy()
        if (counts.isna().to_numpy() & known).any():  # one unit for every answer, never mixed
            warnings.warn("style_features: some answers have no token count; every length is "
                          "in characters instead", MetricWarning, stacklevel=caller_level())
            tokens = False
    cols = ("tokens_a", "tokens_b") if tokens else ("len_a", "len_b")
    a, b = (pd.to_numeric(pairs[c], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            for c in cols)
    return a, b, "tokens" if tokens else "characters"


@stamped
def style_features(pairs: pd.DataFrame) -> pd.DataFrame:
    """The style features of both answers of every pair (length, headers, list items, bold).

    Parameters
    ----------
    pairs : DataFrame
        The pairs table. Lengths are ``tokens_a``/``tokens_b`` when present (the token counts
        Arena-Hard-Auto records, which :func:`judgekit.read_arena_hard` reads), else
        ``len_a``/``len_b`` (characters). Markdown counts are ``header_count_a`` ... ``bold_count_b``
        when present (Arena-Hard's ``conv_metadata``), else counted in the texts.

    Returns
    -------
    DataFrame
        One row per pair: ``pair_id``, ``length_a``, ``length_b``, ``header_a``, ``header_b``,
        ``list_a``, ``list_b``, ``bold_a``, ``bold_b`` (floats) and ``length_unit``
        ("tokens" or "characters").

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> pairs = pd.DataFrame({"pair_id": ["p1"], "prompt": ["Plan a party."],
    ...                       "response_a": ["Invite friends."],
    ...                       "response_b": ["## Plan\\n- **Invite** friends\\n- Cook"]})
    >>> jk.style_features(pairs)[["length_a", "length_b", "header_b", "list_b", "bold_b"]]
       length_a  length_b  header_b  list_b  bold_b
    0      15.0      35.0       1.0     2.0     1.0
    """
    pairs = validate_pairs(pairs, require_text=False)
    out = pd.DataFrame({"pair_id": pairs["pair_id"].to_numpy()})
    out["length_a"], out["length_b"], unit = lengths(pairs)
    for side in ("a", "b"):
        given = [f"{_UPSTREAM_COLUMNS[f]}_{side}" for f in ("header", "list", "bold")]
        counted = None
        if set(given) <= set(pairs.columns):
            counts = pairs[given].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
        else:
            counts = np.full((len(pairs), 3), np.nan)
        gaps = np.isnan(counts).any(axis=1)
        if gaps.any():
            counted = _counts_of(pairs.loc[gaps, f"response_{side}"])
            counts[gaps] = counted
        for j, feature in enumerate(("header", "list", "bold")):
            out[f"{feature}_{side}"] = counts[:, j]
    out["length_unit"] = unit
    return out


def style_matrix(values_a: np.ndarray, values_b: np.ndarray, weights: np.ndarray,
                 features: tuple[str, ...], *, who: str
                 ) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Standardised normalised differences (a − b)/(a + b + 1) of the chosen features.

    ``values_a``/``values_b`` are (rows, 4) in :data:`FEATURES` order; ``weights`` the number
    of battles each row stands for (the mean and population sd are over battles, as upstream).
    A feature without spread cannot be estimated: it is left out with a MetricWarning naming
    ``who``. Returns the (rows, k) matrix, the features kept, and the value of each kept
    standardised feature at equal style (a = b: −mean/sd).
    """
    cols = [FEATURES.index(f) for f in features]
    a, b = values_a[:, cols], values_b[:, cols]
    diff = (a - b) / (a + b + 1.0)
    w = weights / weights.sum()
    mean = w @ diff
    sd = np.sqrt(w @ (diff - mean) ** 2)
    keep = sd > 1e-12
    if not keep.all():
        dropped = [f for f, k in zip(features, keep) if not k]
        warnings.warn(f"style control for {who}: the feature(s) {dropped} do not vary over the "
                      "battles and are left out of the regression", MetricWarning,
                      stacklevel=caller_level())
    z = (diff[:, keep] - mean[keep]) / sd[keep]
    return z, [f for f, k in zip(features, keep) if k], -mean[keep] / sd[keep]
