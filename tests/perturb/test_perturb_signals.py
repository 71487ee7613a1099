"""The simulated judge's view of a perturbation: detect_signals on requests rendered by every bundled
template in both orders and both ID arrangements, the simulated rewrites, and ContentSimJudge."""

import numpy as np
import pandas as pd
import pytest

import judgekit as jk
from judgekit.sim.perturbations import SIM_FALLACIES, SIM_OWN_STYLE, SIM_PADDING, SIM_TONES


@pytest.fixture(scope="module")
def base():
    return pd.DataFrame({
        "pair_id": ["p1", "p2"],
        "prompt": ["Which planet is known as the Red Planet? Answer A or B if you can.", "Is 91 prime?"],
        "response_a": ["Mars is called the Red Planet because of iron oxide on its surface.", "No: 91 = 7 x 13."],
        "response_b": ["Jupiter, a gas giant, is the Red Planet.", "Yes, 91 is prime."],
        "label": ["a", "a"],
    })


def _perturbed(base):
    rewritten = []
    for kind, variant in (("verbosity", "2"), ("fallacy_oversight", "x"), ("sentiment", "angry")):
        rows = base.copy()
        rows["response_b"] = [jk.sim.simulated_rewrite(kind, variant, p, r) for p, r in zip(rows["prompt"], rows["response_b"])]
        rows["pair_id"] = rows["pair_id"] + f"-{kind}"
        # favoured: the padded / emotional response b; for fallacy the intact response a
        rewritten.append((rows, {"verbosity": "b", "fallacy_oversight": "a", "sentiment": "b"}[kind], kind))
    own = base.assign(response_a=base["response_a"] + " " + SIM_OWN_STYLE, pair_id=base["pair_id"] + "-own")
    rewritten.append((own, "a", "self_enhancement"))
    tables = [
        jk.perturb_bandwagon(base, percents=[80], target="both"),
        jk.perturb_distraction(base, target="both", seed=1),
        jk.perturb_diversity(base, identities=["muslim"], target="both"),
        jk.perturb_compassion_fade(base, target="both", seed=2),
        jk.perturb_authority(base, target="both", seed=3),
        jk.perturb_refinement_aware(base, revised="b"),
        jk.perturb_refinement_aware(base, revised="a"),
    ]
    cases = []
    for t in tables:
        for row in t.to_dict("records"):
            cases.append((row, row["favours"], row["bias"]))
    for rows, fav, bias in rewritten:
        for row in rows.to_dict("records"):
            cases.append((row, fav, bias))
    return cases


TEMPLATES = sorted(jk.list_templates()["name"])


@pytest.mark.parametrize("template", TEMPLATES)
def test_detects_each_perturbation_and_the_position_it_favours(template, base):
    t = jk.get_template(template)
    fields = {f: "a reference answer" for f in t.fields}
    checked = 0
    for row, favours, bias in _perturbed(base):
        for order in ("ab", "ba"):
            for swap in (False, True):
                messages = t.render_pair({**row, **fields}, order=order, id_swap=swap)
                system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
                user = messages[-1]["content"]
                d = jk.sim.decode_request(t, system, user)
                assert d is not None
                first, second = d["responses"]
                found = jk.sim.detect_signals(system, user, first, second)
                expected = 1.0 if order[0] == favours else -1.0
                assert found == {bias: expected}, (template, bias, order, swap, found)
                checked += 1
    assert checked > 50


def test_no_signal_without_a_perturbation(base):
    t = jk.get_template("mtbench_pair")
    for row in base.to_dict("records"):
        m = t.render_pair(row)
        assert jk.sim.detect_signals(m[0]["content"], m[1]["content"], row["response_a"], row["response_b"]) == {}
    cot = jk.perturb_cot(base, modes=["on"]).iloc[0].to_dict()
    m = t.render_pair(cot)
    assert jk.sim.detect_signals(m[0]["content"], m[1]["content"], cot["response_a"], cot["response_b"]) == {}


def test_the_same_perturbation_on_both_sides_cancels(base):
    row = base.iloc[0].to_dict()
    cited = {k: v + " (Citation: Doe, J. (2001). Red Planets, p. 3.)" for k, v in row.items() if k.startswith("response")}
    assert jk.sim.detect_signals("", "", cited["response_a"], cited["response_b"]) == {}


def test_calm_style_citations_are_recognised():
    # the three formats of the CALM authority set, on made-up text
    for tail in (
        " (Citation:Doe, J. (2019). Planetary Colours: A Survey, p. 12)",
        ' (Quote: "Colour is a clue." \u2014\u2014Jane Doe, 1999, in an interview on the topic of planets)',
        " (www.planets.com/mars/red-colour/find=iron-oxide.html)",
    ):
        text = "Mars looks red." + tail
        assert jk.sim.strip_perturbations(text) == "Mars looks red."
        assert jk.sim.detect_signals("", "", text, "Jupiter.") == {"authority": 1.0}
    # a parenthesis that is part of the answer is not a citation
    assert jk.sim.strip_perturbations("It is 91 (seven times thirteen).") == "It is 91 (seven times thirteen)."


@pytest.mark.parametrize("kind,variant", [("verbosity", "2"), ("verbosity", "3.5"), ("fallacy_oversight", "x"),
                                          *[("sentiment", e) for e in SIM_TONES], ("refinement_aware", "r")])
def test_simulated_rewrites_are_deterministic_and_strippable(kind, variant):
    text = "Water expands when it freezes, so ice is less dense than liquid water."
    out = jk.sim.simulated_rewrite(kind, variant, "Why does ice float?", text)
    assert out == jk.sim.simulated_rewrite(kind, variant, "Why does ice float?", text)
    assert out != text
    if kind == "verbosity":
        assert len(out) >= float(variant) * len(text)
        assert all(s in SIM_PADDING for s in out[len(text) + 1:].replace(". ", ".|").split("|"))
    if kind == "fallacy_oversight":
        assert out[len(text) + 1:] in SIM_FALLACIES
    if kind == "refinement_aware":
        assert jk.sim.strip_perturbations(out) != text  # a refined answer is a new answer
    else:
        assert jk.sim.strip_perturbations(out) == text
    with pytest.raises(ValueError, match="unknown"):
        jk.sim.simulated_rewrite("sentiment", "bored", "q", text)


def test_content_sim_judge_ignores_additions_but_not_their_signal_or_length():
    prompts = [f"Question {i}?" for i in range(400)]
    first = [f"Answer {i} one." for i in range(400)]
    second = [f"Answer {i} two." for i in range(400)]
    cited = [s + " (Source: https://www.science-reference.net/q.html)" for s in second]
    judge = jk.sim.ContentSimJudge(seed=3, flip_q=0.1)
    plain = judge.decide(prompts, first, second, repeat=1)
    same = judge.decide(prompts, first, cited, repeat=1, signals={"authority": np.full(400, -1.0)})
    pd.testing.assert_frame_equal(plain, same)  # no sensitivity: identical draws
    sensitive = jk.sim.ContentSimJudge(seed=3, flip_q=0.1, sensitivities={"authority": 2.0})
    moved = sensitive.decide(prompts, first, cited, repeat=1, signals={"authority": np.full(400, -1.0)})
    assert (moved["p_first"] < plain["p_first"]).all()
    assert ((moved["decision"] == "first") <= (plain["decision"] == "first")).all()  # only toward the cited one
    # a plain SimJudge redraws the quality of the changed text
    redrawn = jk.sim.SimJudge(seed=3, flip_q=0.1).decide(prompts, first, cited, repeat=1)
    assert not np.allclose(redrawn["p_first"], plain["p_first"])
    longer = jk.sim.ContentSimJudge(seed=3, length_bias=1.0, length_scale=20).decide(prompts, first, cited)
    assert (longer["p_first"] < jk.sim.ContentSimJudge(seed=3, length_bias=1.0, length_scale=20)
            .decide(prompts, first, second)["p_first"]).all()


def test_notes_are_attributed_on_a_template_the_detector_does_not_know(base):
    t = jk.get_template({
        "name": "mine", "options": ["X", "Y"],
        "user": "Task: {prompt}\n\nCandidate {id_1} says:\n{response_1}\n\nCandidate {id_2} says:\n{response_2}\n\nReply X or Y.",
    })
    for row in jk.perturb_bandwagon(base, percents=[90], target="both").to_dict("records"):
        for order in ("ab", "ba"):
            for swap in (False, True):
                user = t.render_pair(row, order=order, id_swap=swap)[-1]["content"]
                system = jk.get_template("mtbench_pair").system  # not this template's: no decoding
                note = row["system_note"].replace("{id_a}", t.ids_for(2, swap)[order.index("a")]).replace(
                    "{id_b}", t.ids_for(2, swap)[order.index("b")])
                first, second = (row[f"response_{s}"] for s in order)
                found = jk.sim.detect_signals(system + "\n\n" + note, user, first, second)
                assert found == {"bandwagon": 1.0 if order[0] == row["favours"] else -1.0}
