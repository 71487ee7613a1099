"""Settings read from the environment, always at call time (never at import)."""

from __future__ import annotations

import os
from pathlib import Path


def smoke() -> bool:
    """True when judgekit runs in its fast "smoke" mode (``JUDGEKIT_SMOKE=1``).

    Notebooks and ``judgekit reproduce --smoke`` use it to pick fewer pairs, resamples and
    replications, so that the whole series runs in CI in a few minutes. Read at call time.

    Returns
    -------
    bool
        True when the environment variable ``JUDGEKIT_SMOKE`` is ``1``, ``true`` or ``yes``.

    Examples
    --------
    >>> import judgekit as jk
    >>> n_boot = 200 if jk.smoke() else 2000
    """
    return os.environ.get("JUDGEKIT_SMOKE", "").strip().lower() in {"1", "true", "yes"}


def data_mirror() -> Path | None:
    """The local mirror of the public data (``JUDGEKIT_DATA_MIRROR``), laid out like upstream."""
    value = os.environ.get("JUDGEKIT_DATA_MIRROR", "").strip()
    return Path(value).expanduser().resolve() if value else None


def cache_dir() -> Path:
    """Where judgekit keeps downloads and judge caches (``JUDGEKIT_CACHE_DIR`` overrides)."""
    value = os.environ.get("JUDGEKIT_CACHE_DIR", "").strip()
    if value:
        return Path(value).expanduser().resolve()
    import pooch

    return Path(pooch.os_cache("judgekit"))
