"""`judgekit audit` starts faster without changing what it computes.

Speed is measured by ``benchmarks/bench_audit.py`` (no timed tests here). What is checked:

- the command line defers ``rfc3987_syntax`` (a grammar jsonschema loads for altair, about 2 s of
  start-up): in a fresh process, after altair is imported and a chart is validated, the real
  package is still not loaded, and jsonschema's IRI check, when asked, gives the answers it gives
  without the deferral (the real grammar is loaded then);
- the audit of a mirrored AlpacaEval file writes the tables it wrote before the start-up work
  (content digests computed with the previous code, commit 2e8568a, written down here).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
MIRROR = Path(os.environ["JUDGEKIT_DATA_MIRROR"]) if os.environ.get("JUDGEKIT_DATA_MIRROR") else None

_PROBE = r"""
import json, sys
if sys.argv[1] == "defer":
    from judgekit._deferred import defer_iri_grammar
    assert defer_iri_grammar()
import altair as alt, pandas as pd
alt.Chart(pd.DataFrame({"x": [1, 2]})).mark_point().encode(x="x:Q").to_dict()  # validated
loaded_before = type(sys.modules.get("rfc3987_syntax")).__name__
import jsonschema
checker = jsonschema.Draft7Validator.FORMAT_CHECKER
answers = {iri: checker.conforms(iri, "iri") for iri in
           ["http://example.com/ü", "http://exa mple.com", "no scheme", "urn:isbn:0451450523"]}
print(json.dumps({"before": loaded_before, "after": type(sys.modules.get("rfc3987_syntax")).__name__,
                  "iri": "iri" in checker.checkers, "answers": answers}))
"""


def _probe(mode: str) -> dict:
    run = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_the_iri_grammar_is_deferred_and_still_checks():
    pytest.importorskip("rfc3987_syntax")
    deferred, plain = _probe("defer"), _probe("plain")
    assert plain["before"] == "module"                  # jsonschema imports it with altair ...
    assert deferred["before"] == "_StandIn"             # ... not with the deferral
    assert deferred["iri"] and plain["iri"]             # the checker is registered either way
    assert deferred["answers"] == plain["answers"]      # and answers the same, real grammar
    assert deferred["after"] == "module"
    assert set(plain["answers"].values()) == {True, False}  # the probe tells IRIs apart


# sha256 of each table the audit wrote (columns and values), before the start-up work
BEFORE = {
    "calibration-first_position_summary.csv":
        "5d9b4c53b71176b2713e4f0163678e499178b79892f86587757c1c40190caed1",
    "calibration-reliability.csv":
        "62816dff0e63a7524c4d129b6f3b8dddc0b646f7a7c159817c09fddefc77ebe8",
    "data-overview.csv":
        "d57d3d9e4b7dfc930a39087b2ae28592061838e100bb2b7139c73a4cde756043",
    "report_card-report_card.csv":
        "cc574912f27b984e8cc8e2aaac9db18b85f3e33f66fd1e6114da191a0b0375fc",
    "win_rates-lc_win_rates.csv":
        "7b088fb8cb78503edd2ad74b49e70a3d9b0b05f2827af38673b598f57bdd278d",
    "win_rates-win_rates.csv":
        "f62e1e3daaaca9893572aa4946858cb8d3af9c13fd044b3d531dc5f0909f8aee",
}


def _cell(text: str) -> str:
    """A cell as compared: numbers to 6 significant digits (the last digits of a bootstrap or a
    fit may move between numpy/scipy versions), everything else as written."""
    try:
        return f"{float(text):.6g}"
    except ValueError:
        return text


def _digest(path: Path) -> str:
    frame = pd.read_csv(path, keep_default_na=False, dtype=str)
    content = {"columns": list(frame.columns),
               "values": [[_cell(v) for v in row] for row in frame.to_numpy().tolist()]}
    return hashlib.sha256(json.dumps(content).encode()).hexdigest()


@pytest.mark.skipif(MIRROR is None or not MIRROR.is_dir(), reason="needs the data mirror")
def test_the_audit_writes_the_tables_it_wrote_before(tmp_path):
    (annotations,) = (MIRROR / "github" / "tatsu-lab" / "alpaca_eval").glob(
        "*/results/vicuna-7b/weighted_alpaca_eval_gpt4_turbo/annotations.json*")
    out = tmp_path / "report"
    run = subprocess.run([sys.executable, "-m", "judgekit.cli", "audit", str(annotations), "--out",
                          str(out), "--no-progress"], capture_output=True, text=True, cwd=ROOT,
                         timeout=600)
    assert run.returncode == 0, run.stderr
    written = {p.name: _digest(p) for p in sorted((out / "tables").glob("*.csv"))}
    assert {name: written.get(name) for name in BEFORE} == BEFORE
    # the one table added since (issue 20): each model's length gap, which decides whether its
    # length finding can be measured at all
    assert set(written) - set(BEFORE) == {"win_rates-length_gaps.csv"}
    assert len(list((out / "charts").glob("*.png"))) == 2


def test_the_wilson_interval_is_statsmodels_to_the_last_bit():
    from statsmodels.stats.proportion import proportion_confint

    from judgekit.calibration.reliability import _wilson

    for ci in (0.8, 0.9, 0.95, 0.99):
        for n in (*range(1, 40), 97, 416, 805, 10_007):
            for hits in sorted({0, 1, n // 3, n // 2, n - 1, n} - {-1}):
                want = proportion_confint(hits, n, alpha=1 - ci, method="wilson")
                # statsmodels clips to [0, 1] since 0.14.1 (0.14.0 left 1e-17 outside)
                want = tuple(float(np.clip(w, 0, 1)) for w in want)
                assert _wilson(hits, n, ci) == want, (hits, n, ci)


_SLOW_IMPORTS = r"""
import json, sys
from judgekit.auditing import audit
from judgekit.data.formats import read_any
pairs, judgments = read_any(sys.argv[1], "alpacaeval")
audit(judgments, pairs)
print(json.dumps(sorted(m for m in ("scipy.stats", "scipy.optimize", "statsmodels", "altair")
                        if m in sys.modules)))
"""


@pytest.mark.skipif(MIRROR is None or not MIRROR.is_dir(), reason="needs the data mirror")
def test_an_audit_of_an_alpacaeval_file_imports_none_of_the_slow_modules():
    """scipy.stats alone takes about 1 s to import here: the audit of an AlpacaEval file needs
    none of these (each is imported where it is used). (scipy.sparse.csgraph is no longer
    imported by judgekit's Bradley-Terry module at import either, but the minimum scipy's own
    modules import it.)"""
    (annotations,) = (MIRROR / "github" / "tatsu-lab" / "alpaca_eval").glob(
        "*/results/vicuna-7b/weighted_alpaca_eval_gpt4_turbo/annotations.json*")
    run = subprocess.run([sys.executable, "-c", _SLOW_IMPORTS, str(annotations)],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == []
