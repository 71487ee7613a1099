"""The deprecation path: a public name or keyword that is going away keeps working for at least
one release, warning with what replaces it (CHANGELOG.md lists it under "Deprecated").

A :class:`DeprecationWarning` raised with the caller's frame is shown in a notebook cell and in a
script's ``__main__``, and hidden when it comes from inside another library.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from judgekit._stack import caller_level

F = TypeVar("F", bound=Callable[..., Any])


def _message(what: str, since: str, use: str | None, removal: str | None) -> str:
    text = f"{what} is deprecated since judgekit {since}"
    if removal:
        text += f" and will be removed in {removal}"
    return text + (f"; use {use} instead" if use else "")


def deprecated(*, since: str, use: str | None = None, removal: str | None = None) -> Callable[[F], F]:
    """Decorate a function that is going away: each call warns, naming its replacement.

    Examples
    --------
    >>> import warnings
    >>> @deprecated(since="0.2", use="jk.new_thing", removal="0.4")
    ... def old_thing(x):
    ...     return x + 1
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     old_thing(1)
    2
    >>> print(caught[0].message)
    old_thing is deprecated since judgekit 0.2 and will be removed in 0.4; use jk.new_thing instead
    """
    def decorate(func: F) -> F:
        message = _message(func.__name__, since, use, removal)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            warnings.warn(message, DeprecationWarning, stacklevel=caller_level())
            return func(*args, **kwargs)

        wrapper.__doc__ = f".. deprecated:: {since}\n    {message}.\n\n{inspect.getdoc(func) or ''}"
        return wrapper  # type: ignore[return-value]
    return decorate


def renamed_keyword(old: str, new: str, *, since: str, removal: str | None = None) -> Callable[[F], F]:
    """Decorate a function whose keyword ``old`` is now ``new``: ``old=`` still works, warns, and
    is passed on as ``new=``; giving both is a TypeError.

    Examples
    --------
    >>> import warnings
    >>> @renamed_keyword("nboot", "n_boot", since="0.2")
    ... def estimate(x, *, n_boot=1000):
    ...     return n_boot
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     estimate(1, nboot=50)
    50
    >>> print(caught[0].message)
    estimate(nboot=) is deprecated since judgekit 0.2; use n_boot= instead
    """
    def decorate(func: F) -> F:
        if new not in inspect.signature(func).parameters:
            raise TypeError(f"{func.__name__} has no parameter {new!r} to rename {old!r} to")
        message = _message(f"{func.__name__}({old}=)", since, f"{new}=", removal)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if old in kwargs:
                if new in kwargs:
                    raise TypeError(f"{func.__name__}() got both {old}= (deprecated) and {new}=; "
                                    f"pass {new}= only")
                warnings.warn(message, DeprecationWarning, stacklevel=caller_level())
                kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)
        return wrapper  # type: ignore[return-value]
    return decorate


#: The release that moved the simulators into :mod:`judgekit.sim` (issue 24).
MOVED_SINCE = "0.2"


def _shown(module: str) -> str:
    """How a module is named in a message: ``jk`` for the top level and its ``sim`` wing (the
    names users type), the full path for the subpackages."""
    if module == "judgekit" or module.startswith("judgekit.sim"):
        return "jk" + module[len("judgekit"):]
    return module


def moved(old_module: str, names: Mapping[str, str], *, since: str = MOVED_SINCE) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for public names that moved out of ``old_module``.

    ``names`` maps each moved name to the module it lives in now, or to ``"module:new_name"``
    when it was renamed as it moved. Looking one up warns, naming the new place, and returns the
    very object found there (its module is imported by name on
    first use, so the old module does not import the new one); any other name is an
    AttributeError, as for a module without ``__getattr__``.

    Examples
    --------
    >>> import warnings
    >>> __getattr__ = moved("judgekit.data", {"simulate_pairs": "judgekit.sim"})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     found = __getattr__("simulate_pairs")
    >>> import judgekit.sim
    >>> found is judgekit.sim.simulate_pairs
    True
    >>> print(caught[0].message)
    judgekit.data.simulate_pairs is deprecated since judgekit 0.2; use jk.sim.simulate_pairs instead
    """
    table = dict(names)

    def __getattr__(name: str) -> Any:
        new = table.get(name)
        if new is None:
            raise AttributeError(f"module {old_module!r} has no attribute {name!r}")
        module, _, new_name = new.partition(":")
        new_name = new_name or name
        warnings.warn(_message(f"{_shown(old_module)}.{name}", since,
                               f"{_shown(module)}.{new_name}", None),
                      DeprecationWarning, stacklevel=caller_level())
        return getattr(importlib.import_module(module), new_name)

    __getattr__.moved = table  # type: ignore[attr-defined]  # what moved, for tests and dir()
    return __getattr__


def moved_method(old: str, module: str, name: str, *, since: str = MOVED_SINCE) -> Callable[..., Any]:
    """A method that moved out of its class to the function ``module.name``, which takes the
    instance as its first argument: calling the method warns and calls the function.

    Examples
    --------
    >>> import warnings
    >>> class T:
    ...     decode = moved_method("T.decode", "judgekit.sim.decoding", "decode_request")
    >>> T.decode.__doc__.splitlines()[1].strip()
    'T.decode is deprecated since judgekit 0.2; use jk.sim.decode_request instead.'
    """
    shown = "jk.sim" if module.startswith("judgekit.sim") else module
    message = _message(old, since, f"{shown}.{name}", None)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        warnings.warn(message, DeprecationWarning, stacklevel=caller_level())
        return getattr(importlib.import_module(module), name)(self, *args, **kwargs)

    method.__name__ = old.rsplit(".", 1)[-1]
    method.__doc__ = f".. deprecated:: {since}\n    {message}."
    return method
