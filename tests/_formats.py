"""Where the reader fixtures live, and the AlpacaEval one laid out in its upstream tree.

The AlpacaEval fixture rows are made up, but the reader finds the model and the annotator from the
upstream layout (``results/<model>/<annotator>/annotations.json``). The repository keeps them as
one file, ``fixtures/formats/alpacaeval_toy.json`` (layout path -> content), so no file named like
upstream data is committed; :func:`alpacaeval_tree` writes the tree once per test session.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from pathlib import Path

FORMATS = Path(__file__).parent / "fixtures" / "formats"
_tree: Path | None = None


def alpacaeval_tree() -> Path:
    """The ``alpacaeval`` folder (holding ``results/toy-model/...``), written on first use."""
    global _tree
    if _tree is None:
        base = Path(tempfile.mkdtemp(prefix="judgekit-formats-"))
        atexit.register(shutil.rmtree, base, True)
        root = base / "alpacaeval"
        layout = json.loads((FORMATS / "alpacaeval_toy.json").read_text(encoding="utf-8"))
        for relative, content in layout.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(content, indent=1, ensure_ascii=False), encoding="utf-8")
        _tree = root
    return _tree
