"""Altair chart builders and ipywidgets explorers.

Every builder takes a tidy frame as judgekit's metric functions return it and returns an altair
chart without displaying it. ``jk.viz.setup()`` at the top of a notebook gives the judgekit look
and an offline-capable renderer; ``jk.viz.save_chart`` writes PNG, SVG, PDF or HTML.

The submodules (and altair, ipywidgets) are imported on first use, so ``import judgekit`` stays
fast for code that draws nothing.
"""

from __future__ import annotations

from typing import Any

#: Every module's ``__all__`` is public here except ``shared`` (the builders' common parts); a
#: new chart module needs no registration (:mod:`judgekit._namespace`).
_PRIVATE = ("shared",)


def _where() -> dict[str, str]:
    from judgekit._namespace import exports, public_modules

    return exports(public_modules(__name__, __path__, _PRIVATE))


def __getattr__(name: str) -> Any:
    if name == "__all__":
        value = sorted(_where())
        globals()[name] = value
        return value
    from judgekit._namespace import resolve

    return resolve(globals(), _where(), name, "judgekit.viz")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__getattr__("__all__")))
