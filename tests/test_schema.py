"""Every branch of the pairs / judgments validators gives its own clear error."""

import numpy as np
import pandas as pd
import pytest

import judgekit as jk
from judgekit.schema import label_order, position_of


def make_pairs(n=3):
    return pd.DataFrame({
        "pair_id": [f"p{i}" for i in range(n)],
        "prompt": ["q"] * n,
        "response_a": ["short", "a longer one", "x"][:n],
        "response_b": ["bb", "b", "yyy"][:n],
        "label": ["a", "b", None][:n],
    })


def make_judgments():
    return pd.DataFrame({
        "pair_id": ["p0", "p0", "p1", "p1"],
        "judge": "j",
        "order": ["ab", "ba", "ab", "ba"],
        "repeat": [0, 0, 0, 0],
        "verdict": ["a", "b", "tie", np.nan],
        "p_a": [0.9, 0.2, np.nan, np.nan],
    })


def test_valid_pairs_get_lengths_and_canonical_labels():
    out = jk.validate_pairs(make_pairs())
    assert out["len_a"].tolist() == [5, 12, 1]
    assert out["len_b"].tolist() == [2, 1, 3]
    assert out["label"].tolist() == ["a", "b", None]


def test_pairs_missing_column_is_named_with_what_is_required():
    with pytest.raises(ValueError, match=r"pairs is missing required column 'response_b'\. "
                                         r"Required: pair_id, prompt, response_a, response_b; "
                                         r"filled in when absent: label = missing"):
        jk.validate_pairs(make_pairs().drop(columns="response_b"))


def test_pairs_without_labels_get_missing_labels():
    out = jk.validate_pairs(make_pairs().drop(columns="label"))
    assert out["label"].tolist() == [None, None, None] and out["label"].dtype == object
    # and the metrics that need no labels run on them, those that do are NaN
    card = jk.report_card(make_judgments(), make_pairs().drop(columns="label"), n_boot=0)
    assert np.isnan(card.loc[0, "acc_both"]) and card.loc[0, "n_labelled"] == 0


def test_pairs_duplicate_ids_are_listed():
    pairs = make_pairs().assign(pair_id=["p0", "p0", "p2"])
    with pytest.raises(ValueError, match=r"'pair_id' must be unique; duplicated in 2 rows \(pair_id: p0, p0\)"):
        jk.validate_pairs(pairs)


def test_pairs_bad_label_names_value_and_rows():
    pairs = make_pairs().assign(label=["A", "b", "first"])
    with pytest.raises(ValueError, match=r"'label'.*'A', 'first' in 2 rows \(pair_id: p0, p2\)"):
        jk.validate_pairs(pairs)


def test_pairs_nan_text_is_refused():
    pairs = make_pairs()
    pairs.loc[1, "response_b"] = np.nan
    with pytest.raises(ValueError, match=r"'response_b' has missing text in 1 row \(pair_id: p1\)"):
        jk.validate_pairs(pairs)


def test_pairs_non_string_text_is_refused():
    pairs = make_pairs().astype({"prompt": object})
    pairs.loc[2, "prompt"] = 42
    with pytest.raises(ValueError, match=r"'prompt' must hold strings; found 'int'"):
        jk.validate_pairs(pairs)


def test_error_lists_at_most_five_ids():
    pairs = pd.DataFrame({
        "pair_id": [f"p{i}" for i in range(8)], "prompt": "q", "response_a": "x",
        "response_b": "y", "label": "z",
    })
    with pytest.raises(ValueError, match=r"8 rows \(pair_id: p0, p1, p2, p3, p4 and 3 more\)"):
        jk.validate_pairs(pairs)


def test_not_a_frame():
    with pytest.raises(TypeError, match="pairs must be a pandas DataFrame"):
        jk.validate_pairs([1, 2])


def test_valid_judgments_are_canonicalised():
    out = jk.validate_judgments(make_judgments(), make_pairs())
    assert out["verdict"].tolist() == ["a", "b", "tie", None]
    assert out["id_swap"].tolist() == [False] * 4
    assert out["repeat"].dtype == np.int64


@pytest.mark.parametrize(
    ("column", "values", "pattern"),
    [
        ("order", ["ab", "ba", "AB", "ba"], r"'order' must be one of \['ab', 'ba'\]; found 'AB'"),
        ("verdict", ["a", "B", "tie", None], r"'verdict' must be one of .* or missing; found 'B'"),
        ("repeat", [0, -1, 0, 1.5], r"'repeat' must be an integer >= 0; found '-1.0', '1.5'"),
        ("p_a", [0.5, 1.2, np.nan, -0.1], r"'p_a' must be a probability in \[0, 1\]"),
        ("id_swap", [True, False, "yes", False], r"'id_swap' must be True or False; found 'yes'"),
    ],
)
def test_judgments_bad_values(column, values, pattern):
    with pytest.raises(ValueError, match=pattern):
        jk.validate_judgments(make_judgments().assign(**{column: values}))


def test_judgments_missing_column_says_what_is_required():
    with pytest.raises(ValueError, match=r"judgments is missing required column 'order'\. "
                                         r"Required: pair_id, judge, order, verdict; filled in "
                                         r"when absent: repeat = 0 .*, p_a = NaN, id_swap = False"):
        jk.validate_judgments(make_judgments().drop(columns="order"))
    # a required column hiding in the index is named as such
    with pytest.raises(ValueError, match=r"'judge' is an index level: call \.reset_index\(\) first"):
        jk.validate_judgments(make_judgments().set_index("judge"))


def test_judgments_optional_columns_are_filled():
    j = make_judgments().drop(columns=["p_a", "repeat"])
    out = jk.validate_judgments(j, make_pairs())
    assert out["repeat"].tolist() == [0, 0, 0, 0] and out["repeat"].dtype == np.int64
    assert out["p_a"].isna().all() and out["p_a"].dtype == np.float64
    assert out["id_swap"].tolist() == [False] * 4
    # the table the validators fill in is what the explicit defaults give
    full = jk.validate_judgments(make_judgments().assign(p_a=np.nan), make_pairs())
    pd.testing.assert_frame_equal(out[full.columns], full)
    # report_card takes a judgments table without p_a (it used to refuse it)
    card = jk.report_card(j, make_pairs(), n_boot=0)
    assert card.loc[0, "n_judgments"] == 4


def test_repeat_cannot_be_filled_when_calls_repeat():
    j = make_judgments().drop(columns="repeat")
    j = pd.concat([j, j.iloc[[0]]], ignore_index=True)
    with pytest.raises(ValueError, match=r"appears more than once in 2 rows \(pair_id: p0, p0\) "
                                         r"and there is no 'repeat' column.*cumcount"):
        jk.validate_judgments(j)


def test_judgments_unknown_pair_is_named():
    j = make_judgments().assign(pair_id=["p0", "p0", "p1", "zz"])
    with pytest.raises(ValueError, match=r"not in the pairs table in 1 row \(pair_id: zz\)"):
        jk.validate_judgments(j, make_pairs())


def test_judgments_duplicate_calls_are_refused():
    j = make_judgments().assign(order=["ab", "ab", "ab", "ba"])
    with pytest.raises(ValueError, match=r"appears more than once in 2 rows \(pair_id: p0, p0\)"):
        jk.validate_judgments(j)


def test_position_and_label_order():
    verdict = pd.Series(["a", "b", "a", "b", "tie", None])
    order = pd.Series(["ab", "ab", "ba", "ba", "ab", "ab"])
    assert position_of(verdict, order).tolist() == ["first", "second", "second", "first", "tie", None]
    label = pd.Series(["a", "a", "b", "b", "tie", None])
    assert label_order(order, label).tolist() == ["cr", "cr", "cr", "cr", None, None]


# ------------------------------------------------------------------ bad column contents (issue 12)

def test_lengths_given_as_text_name_the_column_and_rows():
    pairs = make_pairs().assign(len_a=["5", "x", None])
    with pytest.raises(ValueError, match=r"pairs: column 'len_a' must hold lengths \(numbers >= 0\) "
                                         r"or be missing; found 'x' in 1 row \(pair_id: p1\)"):
        jk.validate_pairs(pairs)
    with pytest.raises(ValueError, match=r"column 'len_b' must hold lengths .* found '-3'"):
        jk.validate_pairs(make_pairs().assign(len_b=[1, -3, 2]))
    # numbers written as text are read as numbers, missing ones are filled in
    out = jk.validate_pairs(make_pairs().assign(len_a=["7", "8", None]))
    assert out["len_a"].tolist() == [7, 8, 1]


def test_duplicated_and_multiindex_columns_are_named():
    j = make_judgments()
    with pytest.raises(ValueError, match=r"judgments: column names must be unique; found "
                                         r"'verdict' \(2 times\)"):
        jk.validate_judgments(pd.concat([j, j[["verdict"]]], axis=1))
    multi = j.copy()
    multi.columns = pd.MultiIndex.from_product([["x"], j.columns])
    with pytest.raises(ValueError, match=r"judgments: the columns are a MultiIndex with 2 levels"):
        jk.validate_judgments(multi)
    with pytest.raises(ValueError, match=r"pairs: column names must be unique; found 'prompt'"):
        jk.validate_pairs(pd.concat([make_pairs(), make_pairs()[["prompt"]]], axis=1))


def test_an_index_that_repeats_columns_is_harmless():
    j = make_judgments()
    indexed = j.set_index(["pair_id", "judge"], drop=False)
    out = jk.validate_judgments(indexed)
    assert out.index.names == [None, None] and out.index.tolist() == indexed.index.tolist()
    plain = jk.report_card(j, make_pairs(), n_boot=0)
    pd.testing.assert_frame_equal(jk.report_card(indexed, make_pairs(), n_boot=0), plain)


def test_numeric_settings_must_be_numbers():
    j = make_judgments()
    with pytest.raises(ValueError, match=r"judgments: column 'temperature' must hold numbers or be "
                                         r"missing; found 'hot' in 2 rows \(pair_id: p0, p1\)"):
        jk.validate_judgments(j.assign(temperature=["hot", 0.0, "hot", 1.0]))
    with pytest.raises(ValueError, match=r"column 'cost_usd' must hold numbers"):
        jk.validate_judgments(j.assign(cost_usd=[0.1, True, 0.0, 0.0]))
    out = jk.validate_judgments(j.assign(temperature=["0.7", "0.7", "1", None]))
    assert out["temperature"].tolist()[:3] == [0.7, 0.7, 1.0]
    kept = jk.validate_judgments(j.assign(temperature=0))
    assert kept["temperature"].dtype == np.int64  # numeric columns are left as they are


def test_the_repro_cases_get_clear_messages():
    """The cases of issue 12, item 13: each used to fail deep in pandas."""
    pairs, j, _ = jk.sim.simulate_judgments(50, repeats=2, seed=0)
    with pytest.raises(ValueError, match=r"^pairs: column 'len_a' must hold lengths"):
        jk.report_card(j, pairs.assign(len_a="x"), n_boot=10)
    card = jk.report_card(j.set_index(["pair_id", "judge"], drop=False), pairs, n_boot=10)
    pd.testing.assert_frame_equal(card, jk.report_card(j, pairs, n_boot=10))
    with pytest.raises(ValueError, match=r"^judgments: column names must be unique; found 'verdict'"):
        jk.report_card(pd.concat([j, j[["verdict"]]], axis=1), pairs, n_boot=10)
    with pytest.raises(ValueError, match=r"^judgments: column 'temperature' must hold numbers"):
        jk.temperature_table(j.assign(temperature="hot"), pairs)


# ------------------------------------------------------------- the fast paths give the same table

@pytest.mark.parametrize("dtype", ["object", "str"])
def test_string_storage_does_not_change_the_result(dtype):
    pairs, j, _ = jk.sim.simulate_judgments(200, repeats=3, seed=1)
    j.loc[j.index[::7], "verdict"] = None  # some invalid answers
    as_object = j.astype({c: object for c in ("pair_id", "judge", "order", "verdict")})
    as_object["verdict"] = as_object["verdict"].where(as_object["verdict"].notna(), np.nan)
    given = as_object.astype({c: dtype for c in ("pair_id", "judge", "order")})
    out = jk.validate_judgments(given, pairs)
    ref = jk.validate_judgments(as_object, pairs)
    # the order column keeps its storage; everything else is the same table
    pd.testing.assert_frame_equal(out.astype({"order": object}), ref.astype({"order": object}))
    assert out["verdict"].dtype == object
    assert set(out["verdict"].map(type)) <= {str, type(None)}
    assert out["verdict"].isna().sum() == j["verdict"].isna().sum() > 0


def test_errors_on_arrow_strings_match_object_errors():
    j = make_judgments().assign(order=["ab", "ba", "AB", None])
    # "str" is pandas 3's arrow-backed string dtype; before pandas 3 it means numpy str, which
    # turns None into the text "None", so there the arrow dtype is named explicitly
    dtypes = ["object", "string[pyarrow]"] + (["str"] if int(pd.__version__.split(".")[0]) >= 3 else [])
    for dtype in dtypes:
        with pytest.raises(ValueError, match=r"'order' is missing in 1 row \(pair_id: p1\)"):
            jk.validate_judgments(j.astype({"order": dtype}))
        with pytest.raises(ValueError, match=r"'order' must be one of \['ab', 'ba'\]; found 'AB' in "
                                             r"1 row \(pair_id: p1\)"):
            jk.validate_judgments(j.assign(order=["ab", "ba", "AB", "ba"]).astype({"order": dtype}))


def test_unknown_pairs_and_duplicates_at_scale():
    pairs, j, _ = jk.sim.simulate_judgments(3000, repeats=4, seed=2)
    j = j.astype({"pair_id": "str"})
    bad = j.copy()
    bad.loc[bad.index[-3:], "pair_id"] = ["nowhere-1", "nowhere-2", "nowhere-3"]
    with pytest.raises(ValueError, match=r"not in the pairs table in 3 rows \(pair_id: nowhere-1, "
                                         r"nowhere-2, nowhere-3\)"):
        jk.validate_judgments(bad, pairs)
    twice = pd.concat([j, j.iloc[[10]]], ignore_index=True)
    with pytest.raises(ValueError, match=r"appears more than once in 2 rows"):
        jk.validate_judgments(twice, pairs)


def test_run_judges_takes_pairs_with_only_the_required_columns():
    """Issue 13: a frame of pair_id/prompt/response_a/response_b was refused by run_judges."""
    full = jk.sim.simulate_pairs(6, seed=3)
    bare = full[["pair_id", "prompt", "response_a", "response_b"]]
    with jk.sim.SimServer(jk.sim.SimJudge(seed=1), pairs=full) as url:
        judge = jk.Judge("sim", "rafailov_tldr", base_url=url, seed=0)
        judged = jk.run_judges(bare, judge, cache=False, progress=False)
    assert len(judged) == 12 and set(judged["order"]) == {"ab", "ba"}
    card = jk.report_card(judged, bare, n_boot=0)
    assert card.loc[0, "n_pairs"] == 6 and card.loc[0, "n_labelled"] == 0
