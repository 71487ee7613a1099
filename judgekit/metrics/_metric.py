"""What a metric definition is: :class:`Metric` (one per metric, in
:mod:`judgekit.metrics._definitions`), the :class:`Reason` it can be NaN for, the :class:`Sums` its
estimator reads and the :class:`Est` it returns."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from judgekit.metrics import _statistics as st
from judgekit.metrics._prepare import Options
from judgekit.metrics._statistics import Stat


class Sums:
    """Sums of per-pair statistics, the statistics on the first axis (``T[k]`` is contiguous).

    ``sums[stat]`` is the array of one statistic's sums; :meth:`memo` keeps intermediate results
    (a flip probability, a de-noised accuracy) that several metrics share within one evaluation.
    """

    def __init__(self, T: np.ndarray, index: dict[Stat, int]) -> None:
        self.T = T
        self.index = index
        self._memo: dict[Hashable, Any] = {}

    def __getitem__(self, stat: Stat) -> np.ndarray:
        try:
            return self.T[self.index[stat]]
        except KeyError:
            raise KeyError(f"statistic {stat.name!r} is not among the sums; the metric reading it "
                           "must list it in its stats") from None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.T.shape[1:]

    def memo(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]


class Est(NamedTuple):
    """A metric's value, its ``n`` (the units in its denominator) and where it is NaN because
    de-noising broke down (1 - 2q <= :data:`~judgekit.metrics._formulas.MIN_DENOM`)."""

    value: np.ndarray
    n: np.ndarray
    unstable: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class Reason:
    """Why a metric can be NaN: ``when`` marks the groups (or resamples) where it is.

    ``design`` reasons come from what the tables hold by design (no labels given, no request
    repeated): :func:`judgekit.report_card` leaves those NaN without a warning. Other reasons
    (the data had no valid verdict where one was needed) always warn.
    """

    when: Callable[[Sums], np.ndarray]
    why: str
    stats: tuple[Stat, ...]
    design: bool = True


@dataclass(frozen=True, eq=False)
class Metric:
    """One metric: what it reads, how it is estimated, why it can be NaN, how it is reported."""

    name: str
    description: str
    stats: tuple[Stat, ...]
    estimate: Callable[[Sums, Options], Est]
    reasons: tuple[Reason, ...] = ()
    #: whether the row was de-noised (True/False); None: the metric is never de-noised (NA)
    denoised: Callable[[Sums, Options], np.ndarray] | None = None
    #: counts the units left out for an invalid verdict (``n_invalid``)
    invalid: Stat = st.INVALID
    #: tidy functions returning it (the metric named like the function first, then by definition)
    families: tuple[str, ...] = ()
    #: shown by :func:`judgekit.report_card` by default (columns in definition order)
    card: bool = False

    def needed(self) -> list[Stat]:
        """Every statistic the metric reads, in a stable order."""
        out = list(self.stats)
        for reason in self.reasons:
            out += reason.stats
        out.append(self.invalid)
        return list(dict.fromkeys(out))
