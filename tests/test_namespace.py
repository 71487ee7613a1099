"""The flat ``jk.*`` namespace: complete, without collisions, and loaded only on use."""

import importlib
import subprocess
import sys

import pytest

import judgekit as jk

SUBPACKAGES = ["exceptions", "schema", "data", "judging", "metrics", "calibration", "winrate",
               "perturb", "inference", "auditing", "scale"]


def _table() -> dict[str, tuple[str, ...]]:
    """What ``judgekit._EXPORTS`` should be: each subpackage's ``__all__``, a name given by the
    first subpackage that exports it (exceptions first)."""
    seen, table = set(), {}
    for name in SUBPACKAGES:
        module = importlib.import_module(f"judgekit.{name}")
        names = tuple(n for n in sorted(module.__all__) if n not in seen)
        seen.update(names)
        table[f"judgekit.{name}"] = names
    return table


def test_the_lazy_table_equals_the_subpackages_exports():
    expected = _table()
    actual = {module: tuple(sorted(names)) for module, names in jk._EXPORTS.items()}
    assert actual == expected, (
        "judgekit/__init__.py's _EXPORTS is out of date; paste:\n"
        + "\n".join(f"    {m!r}: {n!r}," for m, n in expected.items()))


def test_no_name_is_given_twice_with_different_objects():
    owners: dict[str, list[tuple[str, object]]] = {}
    for name in SUBPACKAGES:
        module = importlib.import_module(f"judgekit.{name}")
        for attr in module.__all__:
            owners.setdefault(attr, []).append((name, getattr(module, attr)))
    clashes = {attr: [m for m, _ in found] for attr, found in owners.items()
               if len({id(obj) for _, obj in found}) > 1}
    assert not clashes, f"names exported with different meanings: {clashes}"
    submodules = {"viz", "scoreboard", "published", *SUBPACKAGES}
    assert not (set(owners) & (submodules - {"published"})), "a name hides a subpackage"


def test_every_public_name_resolves_and_dir_lists_it():
    for name in jk.__all__:
        assert getattr(jk, name) is not None, name
    assert set(jk.__all__) <= set(dir(jk))
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        jk.no_such_name  # noqa: B018


def test_functions_named_like_their_package_stay_functions():
    import judgekit.auditing
    import judgekit.published  # noqa: F401

    assert callable(jk.audit) and jk.audit.__name__ == "audit"
    assert callable(jk.published) and jk.published.__name__ == "published"


def test_import_loads_no_subpackage_and_no_heavy_dependency():
    code = ("import sys, judgekit; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('scipy', 'statsmodels', 'altair', 'openai', 'aiohttp', 'sklearn', 'ipywidgets') "
            "or m.startswith(('judgekit.metrics', 'judgekit.judging', 'judgekit.viz'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
