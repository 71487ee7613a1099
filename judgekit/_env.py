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


def data_url() -> str | None:
    """Base URL that replaces ``https://raw.githubusercontent.com/`` for GitHub-hosted data files.

    ``JUDGEKIT_DATA_URL`` points judgekit at a server laid out like GitHub's raw host, i.e. one that
    answers ``<base>/<owner>/<repo>/<commit>/<path>`` with the upstream bytes (an internal mirror
    behind a firewall, or a loopback server in tests). Returned with exactly one trailing slash;
    None when unset. Read at call time.

    Raises
    ------
    ValueError
        When the value is not an ``http://`` or ``https://`` URL.
    """
    value = os.environ.get("JUDGEKIT_DATA_URL", "").strip()
    if not value:
        return None
    if not value.lower().startswith(("http://", "https://")):
        raise ValueError(
            f"JUDGEKIT_DATA_URL={value!r} is not an http:// or https:// URL; set it to the base of a "
            "server laid out like https://raw.githubusercontent.com/ (<owner>/<repo>/<commit>/<path>), "
            "or unset it"
        )
    return value.rstrip("/") + "/"


def cache_dir() -> Path:
    """Where judgekit keeps downloads and judge caches (``JUDGEKIT_CACHE_DIR`` overrides)."""
    value = os.environ.get("JUDGEKIT_CACHE_DIR", "").strip()
    if value:
        return Path(value).expanduser().resolve()
    import pooch

    return Path(pooch.os_cache("judgekit"))


def progress_bars() -> bool:
    """False when progress bars are turned off with ``TQDM_DISABLE`` (``1``, ``true``, ``yes``).

    tqdm reads that variable itself, but its notebook bars (``tqdm.auto`` in Jupyter) do not;
    judgekit's download bars check it here. ``judgekit reproduce`` sets it for the notebooks it
    runs, whose pages are static. Read at call time.
    """
    return os.environ.get("TQDM_DISABLE", "").strip().lower() not in {"1", "true", "yes"}
