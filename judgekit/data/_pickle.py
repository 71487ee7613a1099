"""A restricted unpickler for third-party pickles that should hold only plain data.

``pickle`` runs arbitrary code when a pickle names a global (a class or a function), so judgekit
never calls :func:`pickle.loads` on downloaded files. :func:`safe_loads` refuses every global: only
the opcodes that build dicts, lists, tuples, strings, numbers, booleans and None can succeed, and
the result is checked to be made of nothing else.
"""

from __future__ import annotations

import io
import pickle

from judgekit.exceptions import UnsafePickleError

__all__ = ["UnsafePickleError", "safe_loads"]

_PLAIN = (str, int, float, bool, type(None))


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        raise UnsafePickleError(
            f"refused to load the global {module}.{name}: only plain containers and strings are "
            "allowed in this pickle"
        )

    def persistent_load(self, pid):
        raise UnsafePickleError("refused a persistent id: only plain data is allowed in this pickle")


def _check_plain(obj: object, depth: int = 0) -> None:
    if depth > 50:
        raise UnsafePickleError("pickle nests deeper than 50 levels")
    if isinstance(obj, dict):
        for key, value in obj.items():
            _check_plain(key, depth + 1)
            _check_plain(value, depth + 1)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            _check_plain(value, depth + 1)
    elif not isinstance(obj, _PLAIN):
        raise UnsafePickleError(f"pickle holds a {type(obj).__name__}, not plain data")


def safe_loads(data: bytes, *, source: str = "pickle") -> object:
    """Unpickle ``data`` admitting only dicts, lists, tuples, strings, numbers, booleans and None.

    Raises
    ------
    UnsafePickleError
        When the pickle names any global or holds anything else; ``source`` names the file.

    Examples
    --------
    >>> import pickle
    >>> safe_loads(pickle.dumps({"q;a;b": "[[A]]"}))
    {'q;a;b': '[[A]]'}
    >>> safe_loads(pickle.dumps(print), source="evil.pkl")
    Traceback (most recent call last):
    ...
    judgekit.data._pickle.UnsafePickleError: evil.pkl: refused to load the global builtins.print: ...
    """
    try:
        obj = _PlainUnpickler(io.BytesIO(data)).load()
        _check_plain(obj)
    except UnsafePickleError as err:
        raise UnsafePickleError(f"{source}: {err}") from None
    except Exception as err:  # malformed pickles: EOFError, UnpicklingError, ...
        raise UnsafePickleError(f"{source}: not a valid pickle of plain data ({type(err).__name__}: {err})") from err
    return obj
