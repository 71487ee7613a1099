"""A check for the length term of the LC win rate: heavy-tailed length differences switch it off.

The LC GLM scales each model's length differences by their standard deviation, tanh(Δlen / sd)
(Dubois et al. 2024, as AlpacaEval defines it). A few answers tens of thousands of characters
long inflate the sd, so for every ordinary answer tanh(Δlen / sd) is near 0 and the length term
has nothing to work with: the LC win rate falls back towards the raw one. judgekit keeps the
published definition (changing the scale would move every published LC number) and says when
it happens, pointing to the length-controlled Bradley-Terry score, whose bounded
(a − b)/(a + b + 1) feature is not affected.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from judgekit._stack import caller_level
from judgekit.exceptions import MetricWarning

#: sd / (1.4826 · MAD) above which the length differences count as heavy-tailed (a normal
#: sample gives about 1).
RATIO = 3.0


def warn_heavy_tails(rows: pd.DataFrame, judge: str) -> list[str]:
    """Warn (once per judge) naming the models whose Δlen sd is over ``RATIO`` times its robust
    scale; return them."""
    delta = (rows["len_model"] - rows["len_baseline"]).to_numpy(dtype=float)
    flagged = []
    for model, idx in rows.groupby("model", sort=True).indices.items():
        d = delta[idx]
        if len(d) < 10:
            continue
        sd = float(np.std(d, ddof=1))
        robust = 1.4826 * float(np.median(np.abs(d - np.median(d))))
        if robust > 0 and sd > RATIO * robust:
            small = float(np.mean(np.abs(np.tanh(d / sd)) < 0.1))
            flagged.append(f"{model} (sd {sd:,.0f} vs robust scale {robust:,.0f}; "
                           f"|tanh(Δlen/sd)| < 0.1 for {100 * small:.0f}% of its pairs)")
    if flagged:
        warnings.warn(
            f"lc_win_rates, judge {judge!r}: heavy-tailed length differences for "
            f"{'; '.join(flagged[:5])}{' ...' if len(flagged) > 5 else ''}. The LC length term "
            "tanh(Δlen/sd) nearly switches off there, so their LC stays close to the raw win "
            "rate; the LC definition keeps the sd. arena_hard_scores(control='length') uses "
            "bounded differences (a − b)/(a + b + 1) instead", MetricWarning,
            stacklevel=caller_level())
    return flagged
