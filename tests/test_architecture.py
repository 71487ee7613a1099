"""The shape of the package, read from the source with ast: the layers import only downwards, no
production package imports the simulation wing, and no module grows past 650 lines.

The layers, lowest first (a package may import any package before it in this list, and none
after it; imports inside functions count too):

- the base: judgekit's private top-level modules (``judgekit._*``), ``exceptions``, ``schema``,
  ``published``, ``templates`` (the bundled prompt templates, data only);
- the inputs: ``data`` (loaders and readers), ``judging`` (the engine);
- the analyses: ``metrics``, ``winrate``, ``calibration``, ``inference``, ``perturb``;
- ``scale`` (the analyses' reductions inside an engine: the analyses call it through the
  ScannedTable they are given, never by import);
- presentation and tools: ``viz``, ``sim`` (the simulation wing), ``auditing``, ``scoreboard``,
  ``reproduce``, ``cli``.
"""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "judgekit"

LAYERS = ["data", "judging", "metrics", "winrate", "calibration", "inference", "perturb", "scale",
          "viz", "sim", "auditing", "scoreboard", "reproduce", "cli"]
BASE = {"exceptions", "schema", "published", "templates"}
MAX_LINES = 650
#: the one production module allowed to import the simulation wing: the command line's
#: ``judgekit serve-sim`` starts the simulated server; and the API page generator (a tool, see
#: TOOLS), which documents ``jk.sim.*``.
SIM_USERS = {"cli", "_apiref"}
#: private modules that are tools over the whole package, above every layer: the API page
#: generator (``python -m judgekit._apiref``).
TOOLS = {"_apiref"}


def _unit(path: pathlib.Path) -> str:
    """The layer unit of a source file: its subpackage, or its module at the top level."""
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imports(path: pathlib.Path) -> set[str]:
    """The judgekit units a file imports, anywhere in it (``from judgekit import sim`` too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
            if node.module == "judgekit":
                names += [f"judgekit.{a.name}" for a in node.names]
        else:
            continue
        found |= {n.split(".")[1] for n in names if n.startswith("judgekit.")}
    return found


def _rank(unit: str) -> int:
    if unit in TOOLS:
        return len(LAYERS)
    if unit.startswith("_") or unit in BASE:
        return -1
    return LAYERS.index(unit)


SOURCES = sorted(PACKAGE.rglob("*.py"))
UNITS = {_unit(p) for p in SOURCES} - {"__init__"}


def test_every_unit_has_a_layer():
    unknown = {u for u in UNITS if not (u.startswith("_") or u in BASE or u in LAYERS)}
    assert not unknown, f"add these to the layers in tests/test_architecture.py: {sorted(unknown)}"


def test_imports_run_down_the_layers_only():
    upward = []
    for path in SOURCES:
        unit = _unit(path)
        if unit == "__init__":  # judgekit/__init__.py: the lazy namespace over everything
            continue
        for other in _imports(path) & UNITS - {unit}:
            # the base modules import one another freely; everything else only downwards
            if _rank(other) > _rank(unit) or (_rank(other) == _rank(unit) != -1):
                upward.append(f"{path.relative_to(PACKAGE.parent)} imports judgekit.{other}")
    assert not upward, "imports running up the layers:\n" + "\n".join(sorted(upward))


def test_no_production_module_imports_the_simulation_wing():
    users = sorted(str(p.relative_to(PACKAGE.parent)) for p in SOURCES
                   if _unit(p) not in {"sim", *SIM_USERS} and "sim" in _imports(p))
    assert not users, f"production modules importing judgekit.sim: {users}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_no_module_is_over_650_lines(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.name} has {lines} lines; split it by concept"
