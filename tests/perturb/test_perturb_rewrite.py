"""LLM rewrites: the requests, folding completions back, the simulated handler, CALM tables."""

import pandas as pd
import pytest

import judgekit as jk


@pytest.fixture
def pairs():
    return pd.DataFrame({
        "pair_id": ["p1", "p2"],
        "prompt": ["Explain {response} placeholders in one line.", "Why is the sky blue?"],
        "response_a": ["They are filled in later.", "Rayleigh scattering of sunlight."],
        "response_b": ["No idea.", "Because it reflects the sea."],
        "label": ["a", "a"],
    })


def test_requests_carry_prompt_and_response_verbatim(pairs):
    req = jk.rewrite_requests(pairs, "verbosity", variants=["3"], target="b")
    assert req["id"].tolist() == ["p1|verbosity|3|b", "p2|verbosity|3|b"]
    user = req.loc[0, "messages"][1]["content"]
    assert "Explain {response} placeholders in one line." in user and "<answer>\nNo idea.\n</answer>" in user
    assert "about 3 times as long" in req.loc[0, "messages"][0]["content"]
    sent = jk.rewrite_requests(pairs, "sentiment", target="both")
    assert len(sent) == 2 * 2 * 4
    with pytest.raises(ValueError, match="variants"):
        jk.rewrite_requests(pairs, "sentiment", variants=["bored"])
    with pytest.raises(ValueError, match="ratios"):
        jk.rewrite_requests(pairs, "verbosity", variants=["0.5"])
    with pytest.raises(ValueError, match="kind"):
        jk.rewrite_requests(pairs, "sarcasm")


@pytest.mark.parametrize("kind,variants", [("verbosity", ["2"]), ("fallacy_oversight", None),
                                           ("sentiment", ["fearful"]), ("refinement_aware", None)])
def test_simulated_handler_answers_every_rewrite_request(pairs, kind, variants):
    req = jk.rewrite_requests(pairs, kind, variants=variants, target="a")
    for r in req.to_dict("records"):
        text = jk.sim.sim_rewrite_handler({"messages": r["messages"]})
        source = pairs.set_index("pair_id").at[r["pair_id"], "response_a"]
        prompt = pairs.set_index("pair_id").at[r["pair_id"], "prompt"]
        assert text == jk.sim.simulated_rewrite(kind, r["variant"], prompt, source)


def test_apply_rewrites_moves_the_gold_label_for_fallacies(pairs):
    req = jk.rewrite_requests(pairs, "fallacy_oversight", target="chosen")
    texts = pd.DataFrame({"id": req["id"], "text": ["  scrambled one ", "scrambled two"], "error": None})
    out = jk.apply_rewrites(pairs, req, texts)
    assert out["response_a"].tolist() == ["scrambled one", "scrambled two"]
    assert out["label"].tolist() == ["b", "b"] and out["favours"].tolist() == ["b", "b"]
    assert out["changed"].tolist() == ["response_a,len_a,label"] * 2
    failed = texts.assign(text=[None, "ok"], error=["api: 500 server error", None])
    with pytest.raises(ValueError, match=r"p1\|fallacy_oversight\|chaotic\|a: api: 500"):
        jk.apply_rewrites(pairs, req, failed)


def test_rewrites_and_refinement_through_the_engine(pairs, tmp_path):
    server = jk.sim.SimServer(handlers=[jk.sim.sim_rewrite_handler])
    with server as url:
        opts = {"base_url": url, "cache": str(tmp_path / "c.sqlite"), "progress": False}
        out = jk.perturb_sentiment(pairs, "rewriter", emotions=["cheerful"], target="b", **opts)
        refined = jk.refine_pairs(pairs, "rewriter", **opts)
        again = jk.perturb_sentiment(pairs, "rewriter", emotions=["cheerful"], target="b", **opts)
        paid = server.stats["paid"]
    assert out["response_b"].str.startswith("What a delightful question to answer!").all()
    pd.testing.assert_frame_equal(out, again)
    assert paid == 4  # the repeated rewrite came from the cache
    assert refined["response_a"].tolist() == pairs["response_a"].tolist()
    assert refined["response_b"].str.endswith("complete and corrected answer.").all()
    assert refined["label"].isna().all() and (refined["model_b"] == "rewriter").all()


def test_calm_tables_are_split_into_originals_and_perturbations():
    # a hand-written table in the schema of jk.load_pairs("calm") (no CALM data)
    rows = [
        ("calm/verbosity/0", "verbosity", "verbosity", None, None, "good", "bad", "a"),
        ("calm/verbosity/0/answer2_longer", "verbosity", "verbosity", "answer2_longer", "b", "good", "bad, padded", "a"),
        ("calm/fallacy_oversight/0", "fallacy_oversight", "fallacy_oversight", None, None, "good", "bad", "a"),
        ("calm/fallacy_oversight/0/answer1_fallacy_oversight", "fallacy_oversight", "fallacy_oversight",
         "answer1_fallacy_oversight", "a", "good but absurd", "bad", "b"),
        ("calm/sentiment/0", "sentiment", "sentiment", None, None, "good", "bad", "a"),
        ("calm/sentiment/0/answer2_fear", "sentiment", "sentiment", "answer2_fear", "b", "good", "bad, scared", "a"),
        ("calm/authority/0", "authority", "authority", None, None, "good", "bad", "a"),
        ("calm/authority/0/answer2_with_reference_url", "authority", "authority", "answer2_with_reference_url", "b",
         "good", "bad (www.x.com/y.html)", "a"),
        ("calm/refinement/0/answer1_polished", "refinement", "refinement_aware", "answer1_polished", "b",
         "short", "short, polished", None),
        ("calm/fact_related/0", "fact_related", None, None, None, "good", "bad", "a"),
    ]
    calm = pd.DataFrame(rows, columns=["pair_id", "dataset", "bias", "perturbation", "perturbed",
                                       "response_a", "response_b", "label"])
    calm["prompt"] = "q"
    calm["original_pair_id"] = calm["pair_id"].str.rsplit("/", n=1).str[0].where(
        calm["perturbation"].notna(), calm["pair_id"])
    calm.loc[calm["dataset"] == "refinement", "original_pair_id"] = None
    pairs, pert = jk.calm_perturbations(calm)
    assert sorted(pairs["pair_id"]) == sorted(["calm/verbosity/0", "calm/fallacy_oversight/0", "calm/sentiment/0",
                                               "calm/authority/0", "calm/refinement/0/answer1_polished",
                                               "calm/fact_related/0"])
    assert "perturbation" not in pairs.columns and "bias" not in pairs.columns
    p = pert.set_index("bias")
    assert p.at["verbosity", "variant"] == "longer" and p.at["verbosity", "favours"] == "b"
    assert p.at["fallacy_oversight", "favours"] == "b" and p.at["fallacy_oversight", "label"] == "b"
    assert p.at["fallacy_oversight", "changed"] == "response_a,len_a,label"
    assert p.at["sentiment", "variant"] == "fearful"
    assert p.at["authority", "variant"] == "url"
    assert p.at["refinement_aware", "favours"] == "b"
    assert p.at["refinement_aware", "user_note"].startswith("Response {id_b} is a revised version")
    with pytest.raises(ValueError, match="load_pairs"):
        jk.calm_perturbations(calm.drop(columns="perturbation"))
