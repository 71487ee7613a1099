"""Moved: the charts of the human-label estimators are drawn in :mod:`judgekit.viz.inference`
(``jk.ppi_chart`` and ``jk.viz.ppi_chart`` are unchanged). ``judgekit.inference.charts.ppi_chart``
keeps working for one release, with a DeprecationWarning naming the new place."""

from __future__ import annotations

import warnings
from typing import Any

from judgekit._deprecation import _message
from judgekit._stack import caller_level

__all__: list[str] = []


def __getattr__(name: str) -> Any:
    if name != "ppi_chart":
        raise AttributeError(f"module 'judgekit.inference.charts' has no attribute {name!r}")
    from judgekit.viz.inference import ppi_chart

    warnings.warn(_message("judgekit.inference.charts.ppi_chart", "0.2", "judgekit.viz.ppi_chart "
                           "(or jk.ppi_chart)", None), DeprecationWarning, stacklevel=caller_level())
    return ppi_chart
