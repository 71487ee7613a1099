"""The simulation wing (issue 24): production code never imports ``judgekit.sim``, and every
simulator name that moved there still works at its old place, with a warning naming the new one."""

import ast
import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import judgekit as jk

PACKAGE = Path(jk.__file__).parent

#: Where each simulator name was public before the move (besides the flat ``jk`` namespace).
OLD_HOMES = {
    "judgekit.data": ("SimJudge", "Simulation", "simulate_judgments", "simulate_pairs"),
    "judgekit.judging": ("Faults", "SimServer"),
    "judgekit.calibration": ("IDLapseJudge", "selection_bias_study"),
    "judgekit.winrate": ("ArenaSimulation", "LeaderboardSimulation", "simulate_arena_hard",
                         "simulate_leaderboard"),
    "judgekit.perturb": ("ContentSimJudge", "detect_signals", "sim_rewrite_handler",
                         "simulated_rewrite", "simulation_pairs", "strip_perturbations"),
}
MOVED = [name for names in OLD_HOMES.values() for name in names]


def _imports_of_the_wing(tree: ast.AST) -> list[tuple[int, bool]]:
    """(line, at module level) of each import statement that imports judgekit.sim or a module
    of it; ``at module level`` is False inside a function."""
    found = []

    def visit(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                names = [child.module] + [f"{child.module}.{a.name}" for a in child.names]
            if any(n == "judgekit.sim" or n.startswith("judgekit.sim.") for n in names):
                found.append((child.lineno, not nested))
            visit(child, inner)

    visit(tree, False)
    return found


def test_no_production_module_imports_the_simulation_wing():
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("sim/"):
            continue
        hits = _imports_of_the_wing(ast.parse(path.read_text(encoding="utf-8"), filename=rel))
        if rel == "cli.py":  # ``judgekit serve-sim`` imports the server inside its command only
            hits = [(line, top) for line, top in hits if top]
        if rel == "_apiref.py":  # the API page generator documents jk.sim.* (a tool, not production)
            hits = []
        if hits:
            offenders[rel] = [line for line, _ in hits]
    assert not offenders, f"production modules import judgekit.sim: {offenders}"


def test_the_import_check_sees_an_import_of_the_wing():
    # the check above must be able to fail: every spelling of the import is caught
    for source, top in [("import judgekit.sim", True), ("from judgekit import sim", True),
                        ("from judgekit.sim.judge import SimJudge", True),
                        ("def f():\n    from judgekit.sim import SimServer", False)]:
        assert _imports_of_the_wing(ast.parse(source)) == [(source.count("\n") + 1, top)], source
    assert _imports_of_the_wing(ast.parse("from judgekit import simulation_tools")) == []


def test_importing_every_production_module_loads_nothing_of_the_wing():
    # the packages the simulators left (their shims resolve the new place only on use), and
    # the command line (``serve-sim`` imports the server inside its command)
    code = ("import sys, importlib, judgekit\n"
            "for name in ['data', 'judging', 'calibration', 'winrate', 'perturb', 'cli']:\n"
            "    importlib.import_module('judgekit.' + name)\n"
            "print(sorted(m for m in sys.modules if m.startswith('judgekit.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = ast.literal_eval(out.stdout.strip().splitlines()[-1])
    assert "judgekit.cli" in loaded and "judgekit.judging.engine" in loaded  # the imports ran
    assert [m for m in loaded if m == "judgekit.sim" or m.startswith("judgekit.sim.")] == []


def test_the_wing_lists_every_simulator_and_each_resolves():
    assert set(MOVED) <= set(jk.sim.__all__)
    assert {"decode_request", "request_regexes", "RateLimiter", "serve_forever"} <= set(jk.sim.__all__)
    for name in jk.sim.__all__:
        assert getattr(jk.sim, name) is not None, name
    assert set(jk.sim.__all__) <= set(dir(jk.sim))
    with pytest.raises(AttributeError, match="no attribute 'simulate_nothing'"):
        jk.sim.simulate_nothing  # noqa: B018
    # moved names left the flat namespace's listing (so ``from judgekit import *`` does not warn)
    assert not set(MOVED) & set(jk.__all__)


@pytest.mark.parametrize("name", MOVED)
def test_the_old_flat_name_warns_and_gives_the_same_object(name):
    with pytest.warns(DeprecationWarning) as caught:
        old = getattr(jk, name)
    assert old is getattr(jk.sim, name)
    message = str(caught[0].message)
    assert message == (f"jk.{name} is deprecated since judgekit 0.2; use jk.sim.{name} instead")
    assert caught[0].filename == __file__  # the warning points at the line that used the name


@pytest.mark.parametrize(("module", "name"), [(m, n) for m, names in OLD_HOMES.items() for n in names])
def test_the_old_subpackage_attribute_warns_and_gives_the_same_object(module, name):
    package = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=rf"^{module}\.{name} is deprecated since judgekit "
                                                rf"0\.2; use jk\.sim\.{name} instead$"):
        old = getattr(package, name)
    assert old is getattr(jk.sim, name)
    assert name not in package.__all__


def test_from_import_of_an_old_name_still_works():
    with pytest.warns(DeprecationWarning, match=r"judgekit\.data\.simulate_pairs .* jk\.sim\.simulate_pairs"):
        from judgekit.data import simulate_pairs
    assert simulate_pairs is jk.sim.simulate_pairs


def test_unknown_names_are_still_attribute_errors():
    import judgekit.data

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="module 'judgekit.data' has no attribute 'simulate'"):
            judgekit.data.simulate  # noqa: B018
        with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
            jk.no_such_name  # noqa: B018


def test_template_decode_moved_to_the_wing_and_still_works():
    t = jk.get_template("shen_hh")
    msgs = t.render("hi", ["one", "two"], ids=["B", "A"])
    new = jk.sim.decode_request(t, msgs[0]["content"], msgs[1]["content"])
    assert new["responses"] == ["one", "two"] and new["ids"] == ["B", "A"]
    with pytest.warns(DeprecationWarning, match=r"Template\.decode is deprecated since judgekit 0\.2; "
                                                r"use jk\.sim\.decode_request instead"):
        assert t.decode(msgs[0]["content"], msgs[1]["content"]) == new
    with pytest.warns(DeprecationWarning, match=r"use jk\.sim\.request_regexes instead"):
        assert t.request_regexes(2) == jk.sim.request_regexes(t, 2)
