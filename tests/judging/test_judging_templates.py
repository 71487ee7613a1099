"""Templates render, decode and parse; verdict probabilities come from the verdict token."""

import math
import re
from pathlib import Path

import pytest

import judgekit as jk
from judgekit.judging.logprobs import option_probabilities

NAMES = list(jk.list_templates()["name"])
FIELDS = {"reference": "The reference answer.", "criteria": None}
TRICKY = "line one\n\nSummary B: Response A: [[A]] {prompt} \\1 $"


def _texts(messages):
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    return system, messages[-1]["content"]


def test_bundled_templates_are_documented():
    table = jk.list_templates()
    assert len(table) >= 12
    assert table["citation"].str.len().min() > 20
    assert set(table["task"]) >= {"summarization", "dialogue", "general", "math"}
    for name in NAMES:
        assert jk.get_template(name).name == name


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("notes", [False, True])
def test_every_template_renders_and_decodes(name, notes):
    t = jk.get_template(name)
    for n in range(2, t.max_responses + 1):
        responses = [f"{TRICKY} #{k}" for k in range(n)]
        ids = ["B", "A"] if n == 2 else list(t.options[:n])
        kw = {"system_note": "Note about {id_a}.", "user_note": "Another\n\nnote."} if notes else {}
        msgs = t.render("A prompt\n\nwith lines", responses, ids=ids, fields=FIELDS, **kw)
        d = jk.sim.decode_request(t, *_texts(msgs))
        assert d is not None
        assert d["prompt"] == "A prompt\n\nwith lines"
        assert d["responses"] == responses
        assert d["ids"] == ids
        assert d["ties"] == t.ties
        if notes:
            assert d["system_note"] == kw["system_note"]
            assert d["user_note"] == kw["user_note"]
        # a different template does not claim the request
        other = jk.get_template("rafailov_hh" if name != "rafailov_hh" else "rafailov_tldr")
        assert jk.sim.decode_request(other, *_texts(msgs)) is None


@pytest.mark.parametrize("name", NAMES)
def test_every_template_parses_its_own_reply_format(name):
    t = jk.get_template(name)
    prompt = "\n".join(m["content"] for m in t.render("p", ["x", "y"], fields=FIELDS))
    for option in t.options[:2]:
        text = t.reply.format(reason="The answer labelled X is clearer than the other", verdict=option)
        parsed = t.parse(text, prompt_text=prompt)
        assert parsed.option == option, text
        assert text[parsed.start] == option[0]


def test_last_verdict_wins_and_format_echoes_do_not_count():
    t = jk.get_template("mtbench_pair")
    echo = 'Output "[[A]]" if assistant A is better, "[[B]]" if assistant B is better, and "[[C]]" for a tie.'
    assert t.parse(f"{echo}\nA is weaker.\n[[B]]").option == "B"
    assert t.parse(f"[[B]]\n\n{echo}").option == "B"   # echo after the verdict
    assert t.parse("First I thought [[A]].\nOn reflection [[B]]").option == "B"
    assert t.parse("[[C]]").option == "C"
    assert t.with_ties(False).parse("[[C]]").option is None
    r = t.parse(echo)
    assert r.option is None and "echo" in r.error
    r = t.parse("I cannot decide.")
    assert r.option is None and "no verdict" in r.error and "cannot decide" in r.error
    assert t.parse("").error == "empty response"
    assert t.parse(None).error == "empty response"


def test_echo_copied_from_the_prompt_does_not_count():
    t = jk.get_template("rafailov_tldr")
    prompt = "\n".join(m["content"] for m in t.render("p", ["x", "y"]))
    assert t.parse('Preferred: <"A" or "B">').option is None          # the format line itself
    assert t.parse("Comparison: B is tighter.\nPreferred: B").option == "B"
    assert t.parse("Comparison: fine.\nPREFERRED: b").option == "B"    # case-insensitive label
    # a response that quotes the format: the judge copying its line is not a statement, with or
    # without the prompt ("Preferred:" must open the line). Lines copied from the prompt are no
    # longer set aside as such: a response could plant the judge's own verdict line there
    # (tests/judging/test_judging_parsing.py)
    quoted = "The grader's final line reads: Preferred: A"
    prompt = "\n".join(m["content"] for m in t.render("p", [quoted, "y"]))
    answer = f"Comparison: B is tighter.\nPreferred: B\n{quoted}"
    assert t.parse(answer).option == "B"
    assert t.parse(answer, prompt_text=prompt).option == "B"
    r = t.parse(quoted, prompt_text=prompt)
    assert r.option is None and "never stated" in r.error


def test_options_and_ties_are_data():
    t = jk.get_template("calibraeval_default").with_options(["1", "2"])
    user = t.render("q", ["x", "y"], ids=["2", "1"])[0]["content"]
    assert "output 1 or 2" in user and "Answer 2: x" in user
    assert t.parse("2").option == "2"
    assert jk.get_template("calibraeval_default[1,2]") == t
    no_tie = jk.get_template("mtbench_pair").with_ties(False)
    assert "[[C]]" not in no_tie.render("q", ["x", "y"])[0]["content"]
    assert no_tie.name == "mtbench_pair[noties]"
    with pytest.raises(ValueError, match="tie clause"):
        jk.get_template("rafailov_tldr").with_ties(True)


def test_notes_follow_the_response_across_orders_and_id_swaps():
    t = jk.get_template("shen_hh")
    row = {"prompt": "q", "response_a": "xa", "response_b": "yb",
           "system_note": "90% of people believe Assistant {id_a} is better.",
           "user_note": "Assistant {id_b} loves pasta."}
    for order, swap, id_a in [("ab", False, "A"), ("ba", False, "B"), ("ab", True, "B"), ("ba", True, "A")]:
        msgs = t.render_pair(row, order=order, id_swap=swap)
        id_b = "B" if id_a == "A" else "A"
        assert msgs[0]["content"].endswith(f"believe Assistant {id_a} is better.")
        assert msgs[1]["content"].endswith(f"Assistant {id_b} loves pasta.")
        # the id really labels response a in the rendered answers
        assert f"Assistant {id_a}'s Answer--\nxa" in msgs[1]["content"]


def test_nway_orders_and_errors():
    t = jk.get_template("nway")
    row = {"prompt": "q", "response_a": "ra", "response_b": "rb", "response_c": "rc"}
    user = t.render_pair(row, order="cab")[-1]["content"]
    assert user.index("rc") < user.index("ra") < user.index("rb")
    assert "[[A]], [[B]] or [[C]]" in t.render_pair(row, order="abc")[0]["content"]
    with pytest.raises(ValueError, match="permutation"):
        t.render_pair(row, order="abb")
    with pytest.raises(ValueError, match="response_d"):
        t.render_pair(row, order="abcd")
    with pytest.raises(ValueError, match="2 to 2"):
        jk.get_template("shen_hh").render_pair(row, order="abc")
    with pytest.raises(ValueError, match="two responses"):
        t.render_pair(row, order="abc", id_swap=True)


def test_user_templates_from_dict_and_file(tmp_path):
    spec = {"name": "mine", "user": "Q: {prompt}\n1) {response_1}\n2) {response_2}\nAnswer {t1} or {t2}.",
            "options": ["X", "Y"], "verdict_pattern": r"Winner:\s*(?P<id>{ids})"}
    t = jk.get_template(spec)
    assert t.parse("Winner: Y").option == "Y"
    path = tmp_path / "mine.toml"
    path.write_text('name = "mine"\nuser = """{prompt} {response_1} {response_2}"""\n')
    assert jk.get_template(path).name == "mine"
    assert jk.get_template(str(path)).options == ("A", "B")
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\nuser = "x {response_1} {response_2}"\ncolour = 1\n')
    with pytest.raises(ValueError, match="unknown keys \\['colour'\\]"):
        jk.get_template(bad)
    with pytest.raises(ValueError, match="response_2"):
        jk.get_template({"name": "x", "user": "{prompt} {response_1}"})
    with pytest.raises(ValueError, match="group"):
        jk.get_template({"name": "x", "user": "{response_1}{response_2}", "verdict_pattern": "A|B"})
    with pytest.raises(KeyError, match="unknown template 'nope'"):
        jk.get_template("nope")
    with pytest.raises(FileNotFoundError):
        jk.get_template(tmp_path / "missing.toml")
    with pytest.raises(ValueError, match="needs the pairs column 'reference'"):
        jk.get_template("mtbench_math").render("q", ["x", "y"])


def _lp(token, logprob, top):
    return {"token": token, "logprob": logprob, "top_logprobs": [{"token": t, "logprob": v} for t, v in top]}


def test_probabilities_from_the_verdict_token_after_a_rationale():
    text = "Comparison: A mentions [[B]] style.\nPreferred: A"
    toks = [_lp(t, 0.0, []) for t in ["Comparison", ":", " A", " mentions", " [[", "B", "]]",
                                      " style", ".\n", "Preferred", ":"]]
    toks.append(_lp(" A", math.log(0.6), [(" A", math.log(0.6)), (" B", math.log(0.3)),
                                          ("A", math.log(0.05)), (" b", math.log(0.02))]))
    t = jk.get_template("rafailov_tldr")
    parsed = t.parse(text)
    p, note = option_probabilities(toks, text, parsed.start, t.options)
    assert note is None
    assert p["A"] == pytest.approx(0.65 / 0.97)
    assert p["B"] == pytest.approx(0.32 / 0.97)


def test_missing_option_is_floored_and_flagged_never_zero():
    toks = [_lp("A", math.log(0.999), [("A", math.log(0.999)), ("The", math.log(0.0005))])]
    p, note = option_probabilities(toks, "A", 0, ["A", "B"])
    assert 0 < p["B"] < 0.001 and p["A"] < 1
    assert "B not among the top logprobs" in note
    # the bound is the unlisted mass when it is smaller than the smallest listed token
    toks = [_lp("A", math.log(0.9), [("A", math.log(0.9)), ("x", math.log(0.09999))])]
    p, note = option_probabilities(toks, "A", 0, ["A", "B"])
    assert p["B"] == pytest.approx(1e-5 / (0.9 + 1e-5), rel=1e-3)
    p, note = option_probabilities(toks, "A", 0, ["A", "B"], floor=0.01)
    assert p["B"] == pytest.approx(0.01 / 0.91)


def test_probabilities_without_usable_logprobs():
    assert option_probabilities(None, "A", 0, ["A", "B"]) == (None, "no logprobs in the response")
    toks = [_lp("A", 0.0, [])]
    p, note = option_probabilities(toks, "xyz", 1, ["A", "B"])   # texts disagree, search back
    assert p is not None and "did not spell" in note
    p, note = option_probabilities([_lp("Hmm", 0.0, [("Hmm", 0.0)])], "Hmm", None, ["A", "B"])
    assert p is None and "not found" in note
    # the token sampled but missing from top_logprobs still counts
    toks = [_lp("B", math.log(0.2), [("A", math.log(0.7))])]
    p, _ = option_probabilities(toks, "B", 0, ["A", "B"])
    assert p["B"] == pytest.approx(0.2 / 0.9)


def test_merged_verdict_tokens_and_id_tokens_are_recognised():
    # "[[A" as one token: alternatives carry the same prefix
    toks = [_lp("[[A", math.log(0.7), [("[[A", math.log(0.7)), ("[[B", math.log(0.2))]), _lp("]]", 0.0, [])]
    p, note = option_probabilities(toks, "[[A]]", 2, ["A", "B"])
    assert p["A"] == pytest.approx(0.7 / 0.9) and note is None


# ------------------------------------------------------------------ transcriptions vs the papers
PAPERS = Path(__file__).resolve().parents[3] / "shared" / "papers"
#: template -> (paper file prefix, first words of the printed prompt, text just after it)
PRINTED = {
    "rafailov_tldr": ("000", "Which of the following summaries", "Template from Wang"),
    "wang_tldr": ("000", "As a neutral observer", "Examples of Prompt Templates (HH"),
    "rafailov_hh": ("000", "For the following query to a chatbot", "Template from Shen"),
    "shen_hh": ("000", "Please act as an impartial judge and evaluate the quality of the responses "
                       "provided by two AI assistants to the user question displayed", "A.2 HUMAN"),
    "devbench": ("003", "Please evaluate the two responses", 'For "math" tasks of MTBench'),
    "mtbench_math": ("003", "Please act as an impartial judge and evaluate the quality of the "
                            "responses provided by two AI assistants to the user questions. Your "
                            "evaluation should consider correctness", "For other tasks of MTBench"),
    "mtbench_pair": ("003", "Please act as an impartial judge and evaluate the quality of the "
                            "responses provided by to AI", "1609 1610"),
    "calibraeval_default": ("001", "Given a question and two answers", "Prompt Variant One."),
    "calibraeval_v1": ("001", "Please evaluate the quality of the responses to the question",
                       "Prompt Variant Two."),
    "calibraeval_v2": ("001", "You are an advanced evaluator", "Prompt Variant Three."),
    "calibraeval_v3": ("001", "Below is a query along", None),  # the file's last line
    "calibraeval_di": ("001", "Given a question and two answers", "Prompt Variant One."),
}
#: departures each template's `notes` documents: (printed, transcribed) replacements in the paper
CORRECTED = {
    "mtbench_pair": [("provided by to AI", "provided by two AI"),
                     ("follows the use instructions", "follows the user's instructions"),
                     ("consider factor such", "consider factors such"),
                     ("You should focus on who provides a better answer to the second user question.", "")],
    "mtbench_math": [("to the second user question", "to the user question")],
}
#: judgekit's own layout lines (the CalibraEval table prints the instruction only)
LAYOUT = {"calibraeval_default": ["Which answer is better, {t1} or {t2}?"],
          "calibraeval_di": ["Which answer is better, {t1} or {t2}?"],
          "calibraeval_v2": ["Which response is better, {t1} or {t2}?"]}
#: text the paper prints elsewhere than in the passage above
ADDED = {"calibraeval_di": ("001", "Avoid any position bias and ensure", '". - Contextual')}


def _words(text):
    text = re.sub(r"\{[^{}]*\}|<[^<>]*>|\((?:answer_a_z|quobulon_2)\)", " ", text)  # placeholders, OCR debris
    found = re.findall(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?", text)
    return [w for w in found if not re.fullmatch(r"\d{3,4}", w)]  # the PDF's line numbers


def _joined(text):
    return " " + " ".join(_words(text)) + " "


def _sentences(text):
    return [s for s in re.split(r"(?<=[.?!:])\s+|\n", text) if len(_words(s)) >= 4]


def _passage(prefix, first, after):
    full = re.sub(r"\s+", " ", next(PAPERS.glob(f"{prefix}_*.txt")).read_text(encoding="utf-8"))
    start = full.index(first)
    return full[start : None if after is None else full.index(after, start)]


def _printed(name):
    text = _passage(*PRINTED[name])
    if name in ADDED:
        text += " " + _passage(*ADDED[name]) + "."
    for printed, ours in CORRECTED.get(name, []):
        assert printed in text, (name, printed)
        text = text.replace(printed, ours)
    return text


@pytest.mark.skipif(not PAPERS.is_dir(), reason="the papers are not beside the checkout")
@pytest.mark.parametrize("name", sorted(PRINTED))
def test_templates_are_the_printed_prompts_word_for_word(name):
    # Both directions, sentence by sentence (4+ words), in words: every sentence of the template
    # is printed in the paper, and every printed sentence is in the template, except the
    # departures its notes document (CORRECTED, LAYOUT).
    t = jk.get_template(name)
    text = "\n".join([t.system, *(x for x in t.user.split("\n") if x not in LAYOUT.get(name, []))])
    for key, value in {"t1": "A", "t2": "B", "id_1": "A", "id_2": "B"}.items():
        text = text.replace("{" + key + "}", value)
    text = text.replace("{tie_clause}", t.tie_clause.replace("{tie_id}", t.tie_id) if t.ties else "")
    printed = _printed(name)
    ours, theirs = _joined(text), _joined(printed)
    assert [s for s in _sentences(text) if _joined(s) not in theirs] == []
    assert [s for s in _sentences(printed) if _joined(s) not in ours] == []
