"""A judgekit warning repeated in a loop is shown once per line (Python's "default" action), even
though the calls in between reset Python's own registry with ``warnings.catch_warnings``; the
filters still decide ("always", "error", "ignore")."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import judgekit as jk
from judgekit import _stack
from judgekit.exceptions import ConvergenceWarning


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(_stack, "_SHOWN", set())


def _aliased() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    d = pd.DataFrame({"x": rng.random(60), "z": rng.random(60)})
    d["both"] = d["x"] + d["z"]  # an exact linear combination: aliased, left out with a warning
    d["y"] = d["x"] + rng.normal(0, 0.1, 60)
    return d


def _loop(action: str, n: int = 4) -> list[str]:
    d = _aliased()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter(action)
        for _ in range(n):  # notebook 05 calls stepwise_ols once per benchmark and response
            jk.stepwise_ols(d, "y", ["x", "z", "both"])
    return [str(w.message) for w in caught if "aliased" in str(w.message)]


def test_a_warning_in_a_loop_is_shown_once(fresh):
    shown = _loop("default")
    assert len(shown) == 1 and "['both']" in shown[0]
    # the warning names the caller's line (this file), not judgekit's
    d = _aliased()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        jk.stepwise_ols(d, "y", ["x", "z", "both"])   # another line: shown again
    assert [w.filename for w in caught if "aliased" in str(w.message)] == [__file__]


def test_the_filters_still_decide(fresh):
    assert len(_loop("always")) == 4
    assert _loop("ignore") == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="aliased"):
            jk.stepwise_ols(_aliased(), "y", ["x", "z", "both"])


def test_noa_stopped_early_warns_once_over_a_study(fresh):
    # notebook 06: the paper's 300-step limit stopped six fits of one study, six warnings
    pairs, judgments, _ = jk.sim.simulate_judgments(120, accuracy=0.75, token_bias=1.0,
                                                id_swap=(False, True), seed=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(3):
            jk.calibrate(judgments, "noa", settings="paper", max_iter=2)
    stopped = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(stopped) == 1 and "max_iter = 2" in str(stopped[0].message)
