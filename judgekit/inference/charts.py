"""Moved: the charts of the human-label estimators are drawn in :mod:`judgekit.viz.inference`
(``jk.viz.ppi_chart``, ``jk.viz.plan_chart``). ``judgekit.inference.charts.ppi_chart`` keeps working
for the deprecation period, with a DeprecationWarning naming the new place."""

from judgekit._deprecation import moved

__all__: list[str] = []

__getattr__ = moved("judgekit.inference.charts", {"ppi_chart": "judgekit.viz.inference"})
