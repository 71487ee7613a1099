"""Lazy namespaces generated from the modules' own ``__all__``.

``jk.<name>`` and ``jk.viz.<name>`` import the module that defines a name on first use. Which module
that is comes from the modules' ``__all__`` lists, read from their source with :mod:`ast` (without
importing them), so a public name is declared once: in the ``__all__`` of the module or subpackage
that defines it. A test checks that every ``__all__`` involved is a literal list of strings and that
no name is given twice with different meanings.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from collections.abc import Iterable
from functools import cache


def literal_all(module: str) -> tuple[str, ...]:
    """The names in ``module``'s ``__all__``, read from its source without importing it.

    A module whose source cannot be read (installed as bytecode only) is imported instead.
    Raises TypeError when ``__all__`` is not a literal list or tuple of strings.
    """
    spec = importlib.util.find_spec(module)
    if spec is None:
        raise ModuleNotFoundError(f"no module named {module!r}")
    origin = spec.origin or ""
    if not origin.endswith(".py"):
        return tuple(importlib.import_module(module).__all__)
    with open(origin, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), filename=origin)
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, ast.AnnAssign) else None)
        if isinstance(target, ast.Name) and target.id == "__all__":
            try:
                names = ast.literal_eval(node.value)  # type: ignore[arg-type]
            except ValueError:
                names = None
            if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
                raise TypeError(f"{origin}: __all__ must be a literal list of strings")
            return tuple(names)
    return ()


@cache
def exports(modules: tuple[str, ...]) -> dict[str, str]:
    """Public name -> the first of ``modules`` whose ``__all__`` lists it."""
    where: dict[str, str] = {}
    for module in modules:
        for name in literal_all(module):
            where.setdefault(name, module)
    return where


def resolve(namespace: dict, where: dict[str, str], name: str, owner: str) -> object:
    """Import ``name`` from the module ``where`` names, bind it in ``namespace`` (so later lookups
    skip the module ``__getattr__``) and return it."""
    if name not in where:
        raise AttributeError(f"module {owner!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where[name]), name)
    namespace[name] = value
    return value


def public_modules(package: str, path: Iterable[str], private: Iterable[str] = ()) -> tuple[str, ...]:
    """The modules of a package whose ``__all__`` is public, in name order (``pkgutil``)."""
    import pkgutil

    skip = set(private)
    return tuple(f"{package}.{info.name}" for info in sorted(pkgutil.iter_modules(path),
                                                             key=lambda i: i.name)
                 if info.name not in skip)
