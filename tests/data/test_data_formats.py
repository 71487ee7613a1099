"""One module per format: every reader declares its format in its own module, and read_any and
detect_format know exactly the declared ones (no central list names them)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import json
import pkgutil
import textwrap
from pathlib import Path

import pandas as pd
import pytest

import judgekit as jk
import judgekit.data
from judgekit.data import _common, formats

FORMATS = Path(__file__).parents[1] / "fixtures" / "formats"


def _data_modules() -> dict[str, object]:
    return {m.name: importlib.import_module(f"judgekit.data.{m.name}")
            for m in pkgutil.iter_modules(judgekit.data.__path__)
            if not m.name.startswith("_") and m.name not in ("simulate",) and not m.ispkg}


def test_the_formats_read_any_knows_are_the_reader_modules_declarations():
    modules = _data_modules()
    declared = {}
    for name, module in modules.items():
        source = inspect.getsource(module)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "reads":
                declared[node.args[0].value] = name
    registered = {f.name: f.reader.__module__.removeprefix("judgekit.data.")
                  for f in _common.formats()}
    assert registered == declared
    assert set(formats.FORMATS) == set(declared)
    # every public read_* of judgekit.data (but read_any) reads one declared format
    readers = {n for n in judgekit.data.__all__ if n.startswith("read_") and n != "read_any"}
    assert {f.reader.__name__ for f in _common.formats()} == readers
    # one fallback, the table of judgments
    assert [f.name for f in _common.formats() if f.fallback] == ["csv"]


def test_the_dispatcher_names_no_format():
    """detect_format and read_any ask the declarations: formats.py holds no format's name."""
    source = inspect.getsource(formats)
    literals = {n.value for n in ast.walk(ast.parse(source))
                if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert not literals & set(formats.FORMATS), literals & set(formats.FORMATS)
    assert "read_alpacaeval" not in source and "read_mtbench" not in source


def test_a_new_reader_is_one_module(tmp_path, monkeypatch):
    """A reader declared in a module of its own is detected and read, with no other edit."""
    module = tmp_path / "toy_format.py"
    module.write_text(textwrap.dedent('''
        import pandas as pd
        from judgekit.data._common import reads

        @reads("toy", "read_toy: .toy files of one verdict per line", rank=5,
               by_name=lambda name: "the file ends in .toy" if name.endswith(".toy") else None)
        def read_toy(path, judge="toy-judge"):
            verdicts = open(path).read().split()
            judgments = pd.DataFrame({"pair_id": [f"p{i}" for i in range(len(verdicts))],
                                      "judge": judge, "order": "ab", "verdict": verdicts})
            return None, judgments
    '''))
    monkeypatch.setattr(_common, "REGISTERED", dict(_common.REGISTERED))
    spec = importlib.util.spec_from_file_location("toy_format", module)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    f = tmp_path / "run.toy"
    f.write_text("a b tie\n")
    assert jk.detect_format(f) == ("toy", "the file ends in .toy")
    assert "toy" in formats.FORMATS
    pairs, judgments = jk.read_any(f, judge="mine")
    assert pairs is None
    assert judgments["verdict"].tolist() == ["a", "b", "tie"]
    assert set(judgments["judge"]) == {"mine"}
    with pytest.raises(ValueError, match="carries its pairs"):
        jk.read_any(f, pairs=pd.DataFrame())


def test_two_readers_cannot_declare_one_format_or_one_rank(monkeypatch):
    monkeypatch.setattr(_common, "REGISTERED", dict(_common.REGISTERED))
    with pytest.raises(ValueError, match="two readers declare the format 'mtbench'"):
        _common.reads("mtbench", "another", rank=1)(lambda path: (None, None))
    with pytest.raises(ValueError, match="has the rank 30 of 'mtbench'"):
        _common.reads("another", "another", rank=30)(lambda path: (None, None))


def test_rank_decides_between_formats_that_share_keys(tmp_path):
    """A Chatbot Arena battle carries MT-Bench's winner and conversation_a/b too: arena-battles
    (rank 20) is asked before mtbench (rank 30), so the battle is read as a battle and the
    MT-Bench vote, without an Arena mark, as MT-Bench."""
    vote = {"question_id": 81, "model_a": "x", "model_b": "y", "winner": "model_a",
            "judge": "expert_1", "turn": 1,
            "conversation_a": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
            "conversation_b": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "b"}]}
    for record, expected in ((vote, "mtbench"), ({**vote, "tstamp": 1.0}, "arena-battles")):
        f = tmp_path / f"{expected}.jsonl"
        f.write_text(json.dumps(record) + "\n")
        assert jk.detect_format(f)[0] == expected
    assert [f.name for f in _common.formats()].index("arena-battles") < \
        [f.name for f in _common.formats()].index("mtbench")
    assert jk.detect_format(FORMATS / "arena_hard" / "data")[0] == "arena-hard"
    assert jk.detect_format(FORMATS / "my_pipeline.csv")[0] == "csv"
