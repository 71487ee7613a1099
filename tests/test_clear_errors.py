"""Wrong inputs get an answer that says what is wrong, not a silent or misleading one; and the
command line's help and tables are readable."""

import socket

import pandas as pd
import pytest

import judgekit as jk
from judgekit.cli import _fit_table, _parser, main


def test_an_empty_judgments_table_is_not_audited():
    pairs, judgments, _ = jk.sim.simulate_judgments(200, seed=0)
    with pytest.raises(ValueError, match=r"the judgments table is empty \(0 rows\), so there is "
                                         r"nothing to audit; the pairs table has 200 pairs"):
        jk.audit(judgments.iloc[:0], pairs, n_boot=0)


def test_accuracy_without_a_label_column_names_the_likely_one():
    pairs, judgments, _ = jk.sim.simulate_judgments(50, seed=0)
    with pytest.raises(ValueError, match=r"accuracy needs human labels, and no pair has one .*"
                                         r"no 'label' column; column 'human_label' looks like the "
                                         r"labels: rename it"):
        jk.accuracy(judgments, pairs.rename(columns={"label": "human_label"}), n_boot=0)
    with pytest.raises(ValueError, match=r"column 'gold_side' looks like the labels"):
        jk.accuracy(judgments, pairs.rename(columns={"label": "gold_side"}), n_boot=0)
    with pytest.raises(ValueError, match="every 'label' is missing or a tie"):
        jk.accuracy(judgments, pairs.assign(label=None), n_boot=0)


def test_an_unknown_dataset_filter_names_the_filters():
    with pytest.raises(TypeError, match=r"dataset 'llmbar' has no filter 'judge'; its filters are "
                                        r"sets=, judges=, strategies= \(did you mean judges=\?\)"):
        jk.load_judgments("llmbar", judge="GPT-4")


def test_a_cost_without_a_price_warns():
    pairs = jk.sim.simulate_pairs(5, seed=0)
    with pytest.warns(UserWarning, match=r"no price for 'my-local-judge': its cost is NaN "
                                         r"\(unknown, not free\); pass prices="):
        est = jk.estimate_cost(pairs, jk.Judge("my-local-judge", "mtbench_pair"))
    assert est["cost_usd_max"].isna().all()
    est = jk.estimate_cost(pairs, jk.Judge("my-local-judge", "mtbench_pair"),
                           prices={"my-local-judge": (0.1, 0.2)})
    assert est["cost_usd_max"].gt(0).all()


def test_the_progress_bar_of_an_unreachable_endpoint_shows_failure(capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    judge = jk.Judge("gpt-4o-mini", "mtbench_pair", base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(jk.JudgeConnectionError):
        jk.run_judges(jk.sim.simulate_pairs(30, seed=1), judge, api_key="sk-test", cache=False,
                      progress=True)
    last = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]
    assert "FAILED" in last and "calls not made" in last and "100%" not in last, last


@pytest.mark.parametrize("command", ["audit", "reproduce", "serve-sim", "datasets", "fetch"])
def test_every_command_has_a_description(command):
    sub = next(a for a in _parser()._actions if a.dest == "command")
    assert len(sub.choices[command].description or "") > 60


def test_the_datasets_table_fits_the_terminal(capsys, monkeypatch):
    listed = jk.list_datasets()
    table = listed.drop(columns=["has_judgments", "files", "files_available"])
    for width in (80, 120):
        text = _fit_table(table, width)
        assert max(len(line) for line in text.splitlines()) <= width
        assert text.splitlines()[1].split()[0] == table["name"].iloc[0]  # names are kept whole
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    assert len(out.splitlines()) == len(listed) + 1
    assert out.splitlines()[0].split() == ["name", "description", "license", "offline",
                                           "judgments", "files"]
    wide = pd.DataFrame({"name": ["x"], "description": ["word " * 100]})
    assert "..." in _fit_table(wide, 60) and "word " * 5 in _fit_table(wide, 60)
