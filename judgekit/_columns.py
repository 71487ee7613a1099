"""Vectorised helpers for string columns (object or Arrow-backed) without Python-level loops.

``Series.isin(other_series)`` turns every value of the argument into a Python object first (for
Arrow strings, one ``pa.scalar`` per value); factorising both sides together hashes them in C.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def member(values: pd.Series | np.ndarray, allowed: pd.Series | np.ndarray | pd.Index) -> np.ndarray:
    """Boolean array: which of ``values`` occur in ``allowed`` (missing values never do)."""
    values = pd.Series(np.asarray(values, dtype=object)) if isinstance(values, np.ndarray) else values
    allowed = pd.Series(np.asarray(allowed, dtype=object)) if not isinstance(allowed, pd.Series) else allowed
    both = pd.concat([allowed.reset_index(drop=True), values.reset_index(drop=True)], ignore_index=True)
    codes, uniques = pd.factorize(both)
    seen = np.zeros(len(uniques) + 1, dtype=bool)
    seen[codes[: len(allowed)]] = True
    seen[-1] = False  # code -1 (missing) indexes the last slot
    return seen[codes[len(allowed):]]
