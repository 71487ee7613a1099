"""Every table judgekit returns says which judgekit computed it.

Numbers change between releases (CHANGELOG.md lists them), so a result saved today and read next
year must carry its version: :func:`stamped` wraps a public function so that the tables it returns
(a DataFrame or Series, the tables in a tuple, or the table fields of a result object such as
:class:`~judgekit.Calibration`) hold ``attrs["judgekit_version"]``. pandas keeps ``attrs`` through
copies, selections and ``concat``, and parquet files keep them too.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import pandas as pd

from judgekit._version import __version__

#: The ``attrs`` key holding the version.
VERSION_KEY = "judgekit_version"

F = TypeVar("F", bound=Callable[..., Any])


def stamp(result: Any) -> Any:
    """Record the version in the tables of ``result``; returns ``result``."""
    if isinstance(result, (pd.DataFrame, pd.Series)):
        stamp_table(result)
    elif isinstance(result, tuple):     # also the named tuples (Calibration, Simulation, ...)
        for item in result:
            stamp_table(item)
    elif dataclasses.is_dataclass(result) and not isinstance(result, type):
        for field in dataclasses.fields(result):
            stamp_table(getattr(result, field.name, None))
    elif hasattr(result, "__dict__") and not callable(result):
        for value in vars(result).values():     # a result object such as Audit
            stamp_table(value)
    return result


def stamp_table(value: Any) -> None:
    """Record the version in ``value`` when it is a DataFrame or Series."""
    if isinstance(value, (pd.DataFrame, pd.Series)):
        value.attrs[VERSION_KEY] = __version__


def stamped(func: F) -> F:
    """``func`` (sync or async) with its results passed through :func:`stamp`; the name,
    docstring, signature and module stay ``func``'s, so help(), doctests and pickling see it."""
    if inspect.iscoroutinefunction(func):
        @functools.wraps(func)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            return stamp(await func(*args, **kwargs))
        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return stamp(func(*args, **kwargs))
    return wrapper  # type: ignore[return-value]
