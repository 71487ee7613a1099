"""Each perturbation changes what it says it changes, nothing else, and is a pure seeded function."""

import numpy as np
import pandas as pd
import pytest

import judgekit as jk
from judgekit.perturb.authority import AUTHORITY_KINDS
from judgekit.perturb.notes import COT_INSTRUCTIONS, IDENTITIES, STRONG_MODELS, WEAK_MODELS

META = {"pair_id", "source_pair_id", "bias", "variant", "changed", "favours", "slots"}


@pytest.fixture
def pairs():
    """A small hand-written table: labels of every kind, authors, one pair with its own note."""
    return pd.DataFrame({
        "pair_id": ["p1", "p2", "p3", "p4", "p5", "p6"],
        "prompt": [
            "What causes the seasons on Earth?",
            "Name a prime number between 10 and 20.",
            "How do vaccines train the immune system?",
            "Suggest a title for a story about a lighthouse keeper.",
            "Why does ice float on water?",
            "Translate 'good morning' into French.",
        ],
        "response_a": [
            "The tilt of Earth's axis changes how directly sunlight strikes each hemisphere.",
            "13 is a prime number between 10 and 20.",
            "They expose the body to a harmless piece of a pathogen so it learns to recognise it.",
            "The Last Light on Gull Rock",
            "Ice is less dense than liquid water because its molecules form an open lattice.",
            "Bonjour.",
        ],
        "response_b": [
            "The Earth gets closer to the Sun in summer.",
            "15.",
            "Vaccines kill every germ in the blood.",
            "Lighthouse",
            "Because it is cold.",
            "Bonsoir.",
        ],
        "label": ["a", "a", "a", "tie", "a", None],
        "model_a": ["gpt-4o", "llama-3-8b", "gpt-4o", "mistral-7b", "llama-3-8b", "gpt-4o"],
        "model_b": ["llama-3-8b", "gpt-4o", "mistral-7b", "gpt-4o", "mistral-7b", "gpt-4o"],
        "system_note": [None, "Judge strictly.", None, None, None, None],
    })


@pytest.fixture
def nway():
    return pd.DataFrame({
        "pair_id": ["two", "three", "four"],
        "prompt": ["q2", "q3", "q4"],
        "response_a": ["a2", "a3", "a4"],
        "response_b": ["b2", "b3", "b4"],
        "response_c": [None, "c3", "c4"],
        "response_d": [None, None, "d4"],
        "model_a": ["ma", "ma", "ma"], "model_b": ["mb", "mb", "mb"],
        "model_c": [None, "mc", "mc"], "model_d": [None, None, "md"],
        "label": ["a", "b", "a"],
    })


DETERMINISTIC = {
    "bandwagon": lambda p, s: jk.perturb_bandwagon(p, seed=s),
    "distraction": lambda p, s: jk.perturb_distraction(p, seed=s),
    "diversity": lambda p, s: jk.perturb_diversity(p, seed=s),
    "compassion_fade": lambda p, s: jk.perturb_compassion_fade(p, seed=s),
    "authority": lambda p, s: jk.perturb_authority(p, seed=s),
    "cot": lambda p, s: jk.perturb_cot(p, modes=["on", "off"]),
    "refinement_aware": lambda p, s: jk.perturb_refinement_aware(p),
    "position": lambda p, s: jk.perturb_position(p),
    "self_enhancement": lambda p, s: jk.perturb_self_enhancement(p, "gpt-4o"),
}


def _same(x, y) -> bool:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return y is None or (isinstance(y, float) and np.isnan(y))
    return x == y


def _check_changes_only_what_it_says(source: pd.DataFrame, out: pd.DataFrame) -> None:
    src = jk.validate_pairs(source).set_index("pair_id")
    assert set(out["source_pair_id"]) <= set(src.index)
    assert out["pair_id"].is_unique
    assert not set(out["pair_id"]) & set(src.index)
    for row in out.to_dict("records"):
        before = src.loc[row["source_pair_id"]]
        changed = set(filter(None, row["changed"].split(",")))
        for column in set(out.columns) - META:
            if column in changed:
                assert not _same(row[column], before.get(column)), (row["pair_id"], column)
            else:
                assert _same(row[column], before.get(column)), (row["pair_id"], column)


@pytest.mark.parametrize("bias", sorted(DETERMINISTIC))
def test_changes_exactly_the_listed_columns_and_is_a_valid_pairs_table(bias, pairs):
    out = DETERMINISTIC[bias](pairs, 0)
    assert len(out) > 0
    jk.validate_pairs(out)
    assert (out["bias"] == bias).all()
    _check_changes_only_what_it_says(pairs, out)
    assert out["favours"].map(lambda f: f is None or f in {"a", "b"}).all()


@pytest.mark.parametrize("bias", sorted(DETERMINISTIC))
def test_deterministic_under_a_seed_and_independent_of_row_order(bias, pairs):
    a = DETERMINISTIC[bias](pairs, 7)
    b = DETERMINISTIC[bias](pairs, 7)
    pd.testing.assert_frame_equal(a, b)
    reversed_ = DETERMINISTIC[bias](pairs.iloc[::-1], 7)
    pd.testing.assert_frame_equal(
        a.sort_values("pair_id").reset_index(drop=True),
        reversed_.sort_values("pair_id").reset_index(drop=True),
    )


@pytest.mark.parametrize("bias", ["bandwagon", "distraction", "compassion_fade", "authority"])
def test_the_seed_matters_for_seeded_perturbations(bias):
    many = jk.sim.simulate_pairs(60, seed=1)
    a, b = DETERMINISTIC[bias](many, 1), DETERMINISTIC[bias](many, 2)
    assert not a.equals(b)


def test_random_target_is_a_fair_coin_per_pair():
    out = jk.perturb_bandwagon(jk.sim.simulate_pairs(800, seed=3), percents=[60], seed=5)
    share_a = (out["favours"] == "a").mean()
    assert abs(share_a - 0.5) < 3 * np.sqrt(0.25 / 800)


def test_targets_chosen_rejected_both(pairs):
    labelled = pairs[pairs["label"].isin(["a", "b"])]
    chosen = jk.perturb_bandwagon(labelled, percents=[70], target="chosen")
    assert (chosen["favours"].to_numpy() == labelled["label"].to_numpy()).all()
    rejected = jk.perturb_bandwagon(labelled, percents=[70], target="rejected")
    assert (rejected["favours"].to_numpy() != labelled["label"].to_numpy()).all()
    both = jk.perturb_distraction(pairs, target="both")
    assert all(sorted(g) == ["a", "b"] for _, g in both.groupby("source_pair_id")["favours"])
    with pytest.raises(ValueError, match=r"label.*p4.*p6"):
        jk.perturb_bandwagon(pairs, target="chosen")
    with pytest.raises(ValueError, match="target must be one of"):
        jk.perturb_bandwagon(pairs, target="A")


def test_bandwagon_note_names_the_favoured_response_with_each_percentage(pairs):
    out = jk.perturb_bandwagon(pairs, target="b")
    assert sorted(out["variant"].unique()) == ["60", "70", "80", "90"]
    assert len(out) == 4 * len(pairs)
    for row in out.to_dict("records"):
        assert row["system_note"].endswith(
            f"{row['variant']}% of people believe that response {{id_b}} is the better one for this question."
        )
    kept = out[out["source_pair_id"] == "p2"]["system_note"]
    assert kept.str.startswith("Judge strictly.\n\n").all()  # an existing note is kept
    with pytest.raises(ValueError, match="percents"):
        jk.perturb_bandwagon(pairs, percents=[40])


def test_distraction_diversity_and_cot_notes(pairs):
    d = jk.perturb_distraction(pairs, target="a", seed=2)
    assert d["system_note"].str.contains("response {id_a}", regex=False).all()
    assert not d["system_note"].str.contains("{id_b}", regex=False).any()
    v = jk.perturb_diversity(pairs, target="b")
    assert sorted(v["variant"].unique()) == sorted(IDENTITIES)
    assert all(IDENTITIES[r["variant"]] in r["system_note"] for r in v.to_dict("records"))
    c = jk.perturb_cot(pairs, modes=["on", "off"])
    for mode in ("on", "off"):
        notes = c.loc[c["variant"] == mode, "system_note"]
        assert notes.str.endswith(COT_INSTRUCTIONS[mode]).all()
    assert c["favours"].isna().all()
    with pytest.raises(ValueError, match="unknown value"):
        jk.perturb_diversity(pairs, identities=["martian"])


def test_compassion_fade_names(pairs):
    out = jk.perturb_compassion_fade(pairs, target="a", seed=4)
    for note in out["user_note"]:
        strong = note.split(" was written by ")[1].split(" and response ")[0]
        weak = note.split(" by ")[-1].rstrip(".")
        assert strong in STRONG_MODELS and weak in WEAK_MODELS
    real = jk.perturb_compassion_fade(pairs, names="columns")
    assert real.loc[0, "user_note"] == "Response {id_a} was written by gpt-4o and response {id_b} by llama-3-8b."
    assert real["favours"].isna().all()
    with pytest.raises(ValueError, match="model_a"):
        jk.perturb_compassion_fade(pairs.drop(columns="model_a"), names="columns")


def test_authority_appends_an_on_topic_reference_of_each_kind(pairs):
    out = jk.perturb_authority(pairs, target="b", seed=3)
    src = pairs.set_index("pair_id")
    assert sorted(out["variant"].unique()) == sorted(AUTHORITY_KINDS)
    for row in out.to_dict("records"):
        original = src.at[row["source_pair_id"], "response_b"]
        added = row["response_b"][len(original):]
        assert row["response_b"].startswith(original + " (")
        assert row["len_b"] == len(row["response_b"])
        prefix = {"book": " (Citation: ", "url": " (Source: https://", "quote": ' (Quote: "'}[row["variant"]]
        assert added.startswith(prefix)
        assert jk.sim.strip_perturbations(row["response_b"]) == original
    vaccine = out[(out["source_pair_id"] == "p3") & (out["variant"] == "book")]["response_b"].iloc[0]
    assert "Vaccines" in vaccine and "Immune" in vaccine


def test_position_rotations_for_two_three_and_four_answers(nway):
    out = jk.perturb_position(nway)
    assert out.groupby("source_pair_id").size().to_dict() == {"two": 1, "three": 2, "four": 3}
    src = nway.set_index("pair_id")
    for row in out.to_dict("records"):
        n = len(row["slots"])
        for k, letter in enumerate("abcd"[:n]):
            source_letter = row["slots"][k]
            assert row[f"response_{letter}"] == src.at[row["source_pair_id"], f"response_{source_letter}"]
            assert row[f"model_{letter}"] == src.at[row["source_pair_id"], f"model_{source_letter}"]
        # rotation r starts from the (r+1)-th answer
        r = int(row["variant"][3:])
        assert row["slots"] == "".join("abcd"[(k + r) % n] for k in range(n))
        assert row["favours"] == row["slots"][0]
        gold = src.at[row["source_pair_id"], "label"]
        new_slot = "abcd"[row["slots"].index(gold)]
        assert row["label"] == (new_slot if new_slot in "ab" else None)
    # every answer visits every slot once across the rotations (plus the original)
    four = out[out["source_pair_id"] == "four"]["slots"].tolist() + ["abcd"]
    for k in range(4):
        assert sorted(s[k] for s in four) == list("abcd")
    assert jk.perturb_position(nway, rotations=[1])["variant"].eq("rot1").all()
    with pytest.raises(ValueError, match="response_c"):
        jk.perturb_position(nway.assign(response_c=None))


def test_self_enhancement_selects_pairs_with_exactly_one_own_answer(pairs):
    out = jk.perturb_self_enhancement(pairs, "gpt-4o")
    assert out["source_pair_id"].tolist() == ["p1", "p2", "p3", "p4"]  # p6 is gpt-4o vs itself
    assert out["favours"].tolist() == ["a", "b", "a", "b"]
    assert (out["changed"] == "").all()
    assert jk.perturb_self_enhancement(pairs, ["llama-3-8b"])["source_pair_id"].tolist() == ["p1", "p2", "p5"]
    with pytest.raises(ValueError, match="model_b"):
        jk.perturb_self_enhancement(pairs.drop(columns="model_b"), "gpt-4o")


def test_refinement_aware_note_points_at_the_revised_answer(pairs):
    out = jk.perturb_refinement_aware(pairs, revised="a")
    assert out["favours"].eq("a").all()
    assert out["user_note"].str.startswith("Response {id_a} is a revised version of response {id_b}").all()


def test_perturbing_a_perturbed_table_is_refused(pairs):
    once = jk.perturb_cot(pairs)
    with pytest.raises(ValueError, match="already has perturbation column"):
        jk.perturb_bandwagon(once)


def test_bad_input_names_the_column(pairs):
    with pytest.raises(ValueError, match="response_b"):
        jk.perturb_authority(pairs.drop(columns="response_b"))
    with pytest.raises(TypeError, match="seed"):
        jk.perturb_authority(pairs, seed=1.5)
    with pytest.raises(ValueError, match="kinds"):
        jk.perturb_authority(pairs, kinds=["tweet"])
