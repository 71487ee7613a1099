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
