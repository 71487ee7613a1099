"""Committed notebooks are reviewable: numbered, valid, without outputs or heavy metadata."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
ALL = sorted(NOTEBOOKS.glob("*.ipynb"))
NAME = re.compile(r"^\d{2}_[a-z0-9_]+\.ipynb$")
# What nbstripout keeps: the kernel to run and the language. Everything else (widget state,
# execution timestamps, toolbars, ...) is noise in a diff.
NOTEBOOK_METADATA = {"kernelspec", "language_info"}
CELL_METADATA = {"tags"}
MAX_BYTES = 60_000


def test_there_is_a_series():
    assert ALL, f"no notebooks in {NOTEBOOKS}"
    numbers = [p.name[:2] for p in ALL]
    assert len(numbers) == len(set(numbers)), f"two notebooks share a number: {numbers}"


@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_notebook_is_stripped(path: Path):
    assert NAME.match(path.name), f"{path.name}: name it NN_lowercase_title.ipynb"
    raw = path.read_bytes()
    assert len(raw) < MAX_BYTES, f"{path.name} is {len(raw)} bytes: outputs or data committed?"
    nb = nbformat.reads(raw.decode("utf-8"), as_version=4)
    nbformat.validate(nb)
    extra = set(nb.metadata) - NOTEBOOK_METADATA
    assert not extra, f"{path.name}: strip notebook metadata {sorted(extra)} (nbstripout)"
    problems = []
    for i, cell in enumerate(nb.cells):
        where = f"cell {i} ({cell.cell_type})"
        extra = set(cell.metadata) - CELL_METADATA
        if extra:
            problems.append(f"{where}: metadata {sorted(extra)}")
        if cell.cell_type == "code":
            if cell.get("outputs"):
                problems.append(f"{where}: has {len(cell.outputs)} output(s)")
            if cell.get("execution_count") is not None:
                problems.append(f"{where}: execution_count {cell.execution_count}")
        if cell.get("attachments"):
            problems.append(f"{where}: attachments")
    assert not problems, f"{path.name} is not stripped (run nbstripout):\n" + "\n".join(problems)


@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_notebook_starts_with_a_title_and_sets_up_viz(path: Path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    first = "".join(nb["cells"][0]["source"])
    assert nb["cells"][0]["cell_type"] == "markdown" and first.startswith(f"# {path.name[:2]} "), (
        f"{path.name}: the first cell is a markdown title '# {path.name[:2]} · ...'"
    )
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert "jk.viz.setup()" in code, f"{path.name}: call jk.viz.setup() so figures render offline"
    assert "api_key=\"sk-" not in code and "sk-proj" not in code, f"{path.name}: a key in the code?"


def test_strip_check_catches_outputs(tmp_path: Path):
    """The check above is not vacuous: an executed-looking notebook fails it."""
    nb = nbformat.v4.new_notebook(metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3"}, "widgets": {}})
    cell = nbformat.v4.new_code_cell("1 + 1", execution_count=3)
    cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=3)]
    nb.cells = [nbformat.v4.new_markdown_cell("# 99 · x"), cell]
    path = tmp_path / "99_example.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(AssertionError, match="widgets"):
        test_notebook_is_stripped(path)
    del nb.metadata["widgets"]
    nbformat.write(nb, path)
    with pytest.raises(AssertionError, match="output"):
        test_notebook_is_stripped(path)
