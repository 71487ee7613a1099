"""The faster Arena-Hard reader and JSON parser give the very tables they gave before.

Speed itself is measured by ``benchmarks/bench_arena.py`` (no timed tests here). What is checked:

- ``jk.read_arena_hard`` on a real Arena-Hard v0.1 folder (``shared/realfiles``, skipped when
  absent) and on a small folder made by the benchmark's own generator returns tables whose
  content digests equal the ones the reader gave before it was made faster (computed with the
  previous code, commit 2e8568a, and written down here);
- with and without orjson the reader's frames are equal, dtypes included;
- the JSON parser gives the value :mod:`json` gives, or the same error message, on the inputs
  where orjson and :mod:`json` are known to differ.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import judgekit as jk
from judgekit import _jsonfile

ROOT = Path(__file__).resolve().parents[2]
REAL = Path(__file__).resolve().parents[3] / "shared" / "realfiles"
ZEPP = REAL / "zeppombal__arena-hard-auto@a41ca006cc3718c6bde4025f9bee5f921c01963d" / "data" / "arena-hard-v0.1"

# sha256 of _canon(pairs), _canon(judgments) as the reader returned them before the speed-up
BEFORE = {
    "real, texts=files": (
        "6f0a438c119fcced1d3e8f2046f6011fdb6bf0d08773ebc57c2633f098e2d96a",
        "a82f50087236d1bbb3f2a8ef38ed65d38def3410cb916783fd233500e261fc4e"),
    "real, texts=prompt": (
        "616640e8224a3c0f731165f1a04a3f450ab8090d415801840e7e113d13e4c854",
        "a82f50087236d1bbb3f2a8ef38ed65d38def3410cb916783fd233500e261fc4e"),
    "synthetic": (
        "8cf0c35933a22971c1db614599ec9192310d33eaa40e51c36634e78aa40d8f6d",
        "1254f9f44a962eb87120280fef5d655d41adfa5849091d10acac8ee0ff052edc"),
}


def _value(v: object) -> object:
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return str(v)


def _canon(frame: pd.DataFrame) -> str:
    """A digest of a frame's columns, row order and values (not dtypes, which differ between
    pandas versions for the same values)."""
    content = {"columns": [str(c) for c in frame.columns],
               "values": [[_value(v) for v in frame[c].astype(object).tolist()] for c in frame.columns]}
    return hashlib.sha256(json.dumps(content).encode()).hexdigest()


def _bench_module():
    spec = importlib.util.spec_from_file_location("bench_arena", ROOT / "benchmarks" / "bench_arena.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> Path:
    """4 models x 30 questions in the real v0.1 schema, from the benchmark's generator."""
    bench = _bench_module().write_folder(tmp_path_factory.mktemp("arena"), n_models=4, n_questions=30)
    return bench / "model_judgment"


def _read(path: Path, **options) -> tuple[pd.DataFrame, pd.DataFrame]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the real fork's misaligned answers
        return jk.read_arena_hard(path, **options)


def _cases(synthetic_path: Path) -> dict[str, tuple[Path, dict]]:
    cases = {"synthetic": (synthetic_path, {})}
    if ZEPP.is_dir():
        cases["real, texts=files"] = (ZEPP / "model_judgment", {})
        cases["real, texts=prompt"] = (ZEPP / "model_judgment", {"texts": "prompt"})
    return cases


@pytest.mark.parametrize("case", sorted(BEFORE))
def test_the_reader_gives_the_tables_it_gave_before(case, synthetic):
    cases = _cases(synthetic)
    if case not in cases:
        pytest.skip(f"the real judgment files are not at {REAL}")
    path, options = cases[case]
    pairs, judgments = _read(path, **options)
    assert (_canon(pairs), _canon(judgments)) == BEFORE[case]


@pytest.mark.parametrize("case", ["synthetic", "real, texts=files"])
def test_with_and_without_orjson_the_frames_are_equal(case, synthetic, monkeypatch):
    if _jsonfile._orjson is None:
        pytest.skip("orjson is not installed: only the json path exists")
    cases = _cases(synthetic)
    if case not in cases:
        pytest.skip(f"the real judgment files are not at {REAL}")
    path, options = cases[case]
    fast = _read(path, **options)
    monkeypatch.setattr(_jsonfile, "_orjson", None)
    slow = _read(path, **options)
    for a, b in zip(fast, slow):
        pd.testing.assert_frame_equal(a, b, check_exact=True)


# Inputs on which orjson alone would answer differently from json (value or refusal), and a few
# it must not change.
_DIFFERENT = [
    b'{"id": 18446744073709551616}',          # beyond 64 bits: orjson reads a float
    b'{"id": -9223372036854775809}',
    b'[1, 2, 100000000000000000000000000000]',
    b'{"x": NaN, "y": Infinity, "z": -Infinity}',  # orjson refuses, json reads
    b'{"x": 1e400}',
    b'{"s": "\\ud800 lone"}',                  # an escaped lone surrogate
    b"[" * 700 + b"]" * 700,                   # json stops near 1,000 levels, orjson at 1,024
    b"[" * 1010 + b"]" * 1010,
    b"[" * 2000 + b"]" * 2000,
    b'{"a": 1, "a": 2}',
    b'{"f": -0.0, "g": 2.2250738585072011e-308, "h": 1.7976931348623157e308, "i": 1e20}',
    b'\xef\xbb\xbf{"bom": true}',
    b'{"t": "tab\there"}',                     # a raw control character: both refuse
    b'{"u": "\xff"}',                          # not UTF-8: both refuse
    b'  {"ws": "\\u2028"} \r',
    b"",
    b" \t\r",                                  # blank lines (JSON lines: skipped)
    b'\r\n  {"x": 1}\r\n\t\n{"y": 2}',          # indented records, CRLF, no last newline
    b'{"x": 1}\n{"x": ',                        # a broken last line: the same line named
]


def _json_reference(data: bytes, source: str, lines: bool) -> tuple[str, object]:
    monkey = _jsonfile._orjson
    _jsonfile._orjson = None
    try:
        fn = _jsonfile.parse_jsonl if lines else _jsonfile.parse_json
        return "ok", fn(data, source)
    except ValueError as err:
        return "error", str(err)
    finally:
        _jsonfile._orjson = monkey


@pytest.mark.parametrize("lines", [False, True], ids=["json", "jsonl"])
@pytest.mark.parametrize("data", _DIFFERENT, ids=range(len(_DIFFERENT)))
def test_the_parser_answers_as_json_does(data, lines):
    if lines:
        data = b'{"first": 1}\n' + data + b"\n\n"
    want = _json_reference(data, "f.json", lines)
    fn = _jsonfile.parse_jsonl if lines else _jsonfile.parse_json
    try:
        got = ("ok", fn(data, "f.json"))
    except ValueError as err:
        got = ("error", str(err))
    assert got[0] == want[0]
    if got[0] == "ok":
        assert repr(got[1]) == repr(want[1])  # repr: NaN equals itself, ints stay ints
        assert json.dumps(got[1]) == json.dumps(want[1])
    else:
        assert got[1] == want[1]


def test_the_garbage_collector_is_left_as_it_was(synthetic, tmp_path):
    import gc

    assert gc.isenabled()
    _read(synthetic)
    assert gc.isenabled()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question_id": "q1", "model": "m"}\n')  # no games
    with pytest.raises(ValueError, match="not an Arena-Hard judgment"):
        jk.read_arena_hard(bad, baseline="b")
    assert gc.isenabled()
    gc.disable()
    try:
        _read(synthetic)
        assert not gc.isenabled()  # a caller's choice is kept too
    finally:
        gc.enable()
