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


_MAX_DEPTH = 50


def _children(item: dict | list | tuple):
    return (v for kv in item.items() for v in kv) if isinstance(item, dict) else iter(item)


def _check_plain(obj: object) -> None:
    """Check that ``obj`` is made of plain data only, visiting each container once.

    A pickle may reference one container from many places (``x = [y, y]``, nested): walking every
    path would take exponential time, so each container is checked once and its nesting height
    memoised (linear in the number of distinct objects and references). A container that
    contains itself (a cycle) is refused: plain data has none, and code walking it later would
    not terminate; so is nesting deeper than 50 levels.
    """
    height: dict[int, int] = {}  # containers fully checked -> levels of containers below + 1
    on_path: set[int] = set()
    stack: list[tuple[object, bool]] = [(obj, False)]  # (object, leaving?): iterative post-order
    while stack:
        item, leaving = stack.pop()
        if leaving:
            key = id(item)
            on_path.discard(key)
            height[key] = 1 + max((height[id(c)] for c in _children(item)
                                   if isinstance(c, (dict, list, tuple))), default=0)
            if height[key] > _MAX_DEPTH:
                raise UnsafePickleError(f"pickle nests deeper than {_MAX_DEPTH} levels")
            continue
        if isinstance(item, _PLAIN):
            continue
        if not isinstance(item, (dict, list, tuple)):
            raise UnsafePickleError(f"pickle holds a {type(item).__name__}, not plain data")
        key = id(item)
        if key in on_path:
            raise UnsafePickleError("pickle holds a container that contains itself (a cycle)")
        if key in height:
            continue
        if len(on_path) >= _MAX_DEPTH:  # stop a deep descent before it gets long
            raise UnsafePickleError(f"pickle nests deeper than {_MAX_DEPTH} levels")
        on_path.add(key)
        stack.append((item, True))
        stack.extend((child, False) for child in _children(item))


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
    judgekit.exceptions.UnsafePickleError: evil.pkl: refused to load the global builtins.print: ...
    """
    try:
        obj = _PlainUnpickler(io.BytesIO(data)).load()
        _check_plain(obj)
    except UnsafePickleError as err:
        raise UnsafePickleError(f"{source}: {err}") from None
    except Exception as err:  # malformed pickles: EOFError, UnpicklingError, ...
        raise UnsafePickleError(f"{source}: not a valid pickle of plain data ({type(err).__name__}: {err})") from err
    return obj
