"""Start-up cost the command line does not pay: a third-party grammar loaded only when used.

altair validates every chart with jsonschema, and jsonschema, at import, registers a checker for
the ``iri`` string format from ``rfc3987_syntax`` when that package is installed (it comes with
Jupyter's ``jsonschema[format-nongpl]``). Importing ``rfc3987_syntax`` compiles some 40 Lark
grammars: about 2 s of CPU, more than the whole analysis of an AlpacaEval file. Vega-Lite's
schema never uses the ``iri`` formats, so a chart never calls the checker.

:func:`defer_iri_grammar` puts a stand-in for ``rfc3987_syntax`` in :data:`sys.modules` that
imports the real package the first time any of its names is used (a call of its
``is_valid_syntax`` included): every check still runs, with the real grammar; only the cost
moves to the first IRI actually checked. The command line calls it for its own process, before
it imports altair; the library itself never does (``import judgekit`` changes no other module).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

__all__ = ["defer_iri_grammar"]

_NAME = "rfc3987_syntax"


def _real() -> types.ModuleType:
    """The real package, imported now (replacing the stand-in in :data:`sys.modules`)."""
    stand_in = sys.modules.get(_NAME)
    if isinstance(stand_in, _StandIn):
        del sys.modules[_NAME]
    try:
        return importlib.import_module(_NAME)
    except BaseException:
        if stand_in is not None and _NAME not in sys.modules:
            sys.modules[_NAME] = stand_in
        raise


class _StandIn(types.ModuleType):
    """``rfc3987_syntax`` until one of its names is used."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if name == "is_valid_syntax":  # taken by jsonschema at import: defer the import to a call
            def is_valid_syntax(term: str, value: str) -> Any:
                return _real().is_valid_syntax(term, value)

            return is_valid_syntax
        return getattr(_real(), name)


def defer_iri_grammar() -> bool:
    """Defer the import of ``rfc3987_syntax`` to its first use; True when it was deferred
    (False when it is not installed or already imported)."""
    if _NAME in sys.modules or importlib.util.find_spec(_NAME) is None:
        return False
    stand_in = _StandIn(_NAME, "stand-in for rfc3987_syntax until it is used (judgekit._deferred)")
    sys.modules[_NAME] = stand_in
    return True
