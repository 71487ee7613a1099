"""Warnings point at the user's line, however deep inside judgekit they are raised."""

from __future__ import annotations

import os
import sys

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def caller_level() -> int:
    """The ``stacklevel`` for ``warnings.warn`` (called by the function that calls this) that
    names the first frame outside judgekit: the notebook cell or script that called judgekit.

    A fixed stacklevel is right for one call path only; the same check reached from
    ``report_card`` or from ``accuracy``, or through a decorator, is a different depth.
    """
    frame = sys._getframe(1)   # the function that warns: stacklevel 1
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level


#: (category, text, file, line) of every warning :func:`warn_once` has shown in this process.
_SHOWN: set[tuple] = set()


def _action(category: type[Warning], text: str, module: str, lineno: int) -> str:
    """The action the warnings filters give this warning (as :func:`warnings.warn` finds it)."""
    import warnings

    for action, msg, cat, mod, line in warnings.filters:
        if ((msg is None or msg.match(text)) and issubclass(category, cat)
                and (mod is None or mod.match(module)) and line in (0, lineno)):
            return action
    return warnings.defaultaction


def warn_once(message: str, category: type[Warning] = UserWarning) -> None:
    """Warn at the user's line (:func:`caller_level`), once per message and line.

    That is Python's "default" action, which its own registry cannot keep: every
    ``warnings.catch_warnings`` block (judgekit and its dependencies use them to silence
    expected warnings) resets that registry, so a call repeated in a loop printed its warning
    on every pass. The filters still decide: under "always" (``pytest.warns``) every call
    warns, under "error" it raises, under "ignore" nothing is shown.
    """
    import warnings

    level = caller_level()
    try:
        frame = sys._getframe(level - 1)
    except ValueError:  # no caller outside judgekit
        warnings.warn(message, category, stacklevel=1)
        return
    module = frame.f_globals.get("__name__", "<string>")
    where = (frame.f_code.co_filename, frame.f_lineno)
    action = _action(category, str(message), module, frame.f_lineno)
    key = {"once": (category, str(message)), "module": (category, str(message), where[0])}.get(
        action, (category, str(message), *where))
    if action in ("default", "once", "module"):
        if key in _SHOWN:
            return
        _SHOWN.add(key)
    warnings.warn(message, category, stacklevel=level)
