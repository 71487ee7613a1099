"""The shape of the package, read from the source with ast: the layers import only downwards and
no module grows past 650 lines. (That no production package imports the simulation wing, not even
from a layer above it, is ``tests/sim/test_sim_wing.py``'s stricter check.)

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
            # the base modules (rank -1) import one another freely; everything else only downwards
            if _rank(other) > _rank(unit):
                upward.append(f"{path.relative_to(PACKAGE.parent)} imports judgekit.{other}")
    assert not upward, "imports running up the layers:\n" + "\n".join(sorted(upward))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_no_module_is_over_650_lines(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.name} has {lines} lines; split it by concept"
