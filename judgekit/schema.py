"""The two tidy tables every judgekit function takes and returns.

judgekit works on two long-form :class:`pandas.DataFrame` tables. Loaders produce them, the engine
produces judgments, and every metric, calibration and win-rate function consumes them. Each public
entry point validates its inputs with :func:`validate_pairs` / :func:`validate_judgments`, which
fill the optional columns with their defaults and raise a :class:`ValueError` naming the table,
the offending column and up to five row ids.

pairs
    One row per comparison.

    ================  ========================================================================
    column            meaning
    ================  ========================================================================
    ``pair_id``       unique string id of the comparison (required)
    ``prompt``        the instruction or conversation shown to the judge (required, text)
    ``response_a``    the first candidate response (required, text)
    ``response_b``    the second candidate response (required, text)
    ``label``         human (gold) preference: ``"a"``, ``"b"``, ``"tie"`` or missing (missing for
                      every pair when the column is absent)
    ``model_a``       optional: which model wrote response a
    ``model_b``       optional: which model wrote response b
    ``dataset``       optional: the source dataset or subset
    ``task``          optional: task type or category
    ``instruction_id`` optional: id of the instruction, shared by pairs with the same prompt
    ``reference``     optional: a reference answer
    ``len_a``         length of response a, a number >= 0 (characters, filled in when absent)
    ``len_b``         length of response b, a number >= 0 (characters, filled in when absent)
    ================  ========================================================================

judgments
    One row per judge call.

    ================  ========================================================================
    column            meaning
    ================  ========================================================================
    ``pair_id``       the pair judged (required; must exist in pairs when pairs are given)
    ``judge``         the judge's id: model, template and decoding settings (required)
    ``order``         which response was shown first: ``"ab"`` or ``"ba"`` (required)
    ``repeat``        repeat index of an identical request, an integer >= 0 (0 when absent, if
                      each (pair, judge, order, id_swap) appears once)
    ``verdict``       the preferred response in *response* terms: ``"a"``, ``"b"``, ``"tie"``,
                      or missing when the judge's answer was invalid (required)
    ``p_a``           probability that the judge prefers response a, from the verdict token's
                      logprobs; missing when logprobs do not exist (NaN when absent)
    ``id_swap``       optional: True when the first position carries the second option ID
                      (e.g. the first response is labelled "B"); False when absent
    ``model``, ``template``, ``temperature``   optional: the judge's settings (temperature a number)
    ``raw``           optional: the judge's raw text
    ``error``         optional: why the verdict is missing (parse failure, API error, ...)
    ``prompt_tokens``, ``completion_tokens``, ``cost_usd``, ``latency_s``   optional accounting
                      (numbers)
    ================  ========================================================================

Required columns are :data:`PAIR_REQUIRED` and :data:`JUDGMENT_REQUIRED`; the validators add the
others a validated table always has (:data:`PAIR_COLUMNS`, :data:`JUDGMENT_COLUMNS`) with their
defaults. Both tables must have one level of unique column names.

Verdicts are always in response terms; the position the judge picked is derived from
``(verdict, order)`` by :func:`position_of`. Orders relative to the human label are called ``cr``
(the human-preferred response shown first) and ``rc`` (shown second); see :func:`label_order`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from judgekit._stamp import stamped

__all__ = [
    "JUDGMENT_COLUMNS",
    "JUDGMENT_REQUIRED",
    "LABELS",
    "ORDERS",
    "PAIR_COLUMNS",
    "PAIR_REQUIRED",
    "VERDICTS",
    "label_order",
    "position_of",
    "validate_judgments",
    "validate_pairs",
]

#: Columns a pairs table must have.
PAIR_REQUIRED: tuple[str, ...] = ("pair_id", "prompt", "response_a", "response_b")
#: Columns every validated pairs table has (``label`` is added, missing, when absent).
PAIR_COLUMNS: tuple[str, ...] = (*PAIR_REQUIRED, "label")
#: Optional columns of a pairs table that judgekit understands.
PAIR_OPTIONAL: tuple[str, ...] = (
    "model_a", "model_b", "dataset", "task", "instruction_id", "reference", "len_a", "len_b",
)
#: Columns a judgments table must have.
JUDGMENT_REQUIRED: tuple[str, ...] = ("pair_id", "judge", "order", "verdict")
#: Columns every validated judgments table has (``repeat`` and ``p_a`` are added when absent).
JUDGMENT_COLUMNS: tuple[str, ...] = ("pair_id", "judge", "order", "repeat", "verdict", "p_a")
#: Optional columns of a judgments table that judgekit understands.
JUDGMENT_OPTIONAL: tuple[str, ...] = (
    "id_swap", "model", "template", "temperature", "raw", "error",
    "prompt_tokens", "completion_tokens", "cost_usd", "latency_s",
)
#: Optional judgment columns that must hold numbers when present.
_NUMERIC_OPTIONAL: tuple[str, ...] = (
    "temperature", "prompt_tokens", "completion_tokens", "cost_usd", "latency_s",
)
_PAIR_DEFAULTS = "label = missing; len_a, len_b = the responses' lengths in characters"
_JUDGMENT_DEFAULTS = ("repeat = 0 (when each pair-order is judged once), p_a = NaN, "
                      "id_swap = False")

LABELS = frozenset({"a", "b", "tie"})
VERDICTS = frozenset({"a", "b", "tie"})
ORDERS = frozenset({"ab", "ba"})

_MAX_IDS = 5
#: What ``Series.astype(str)`` gives with this pandas (an arrow-backed string dtype on pandas 3).
_STR_DTYPE = pd.Series(["x"], dtype=object).astype(str).dtype


def _ids(df: pd.DataFrame, mask: np.ndarray | pd.Series, id_column: str | None) -> str:
    """Up to five row ids where ``mask`` holds, for an error message."""
    mask = np.asarray(mask, dtype=bool)
    n = int(mask.sum())
    if id_column is not None and id_column in df.columns:
        ids = df[id_column].to_numpy()[np.flatnonzero(mask)[:_MAX_IDS]].astype(str).tolist()
        what = id_column
    else:
        ids = [str(i) for i in df.index[mask][:_MAX_IDS]]
        what = "index"
    more = f" and {n - len(ids)} more" if n > len(ids) else ""
    return f"{n} row{'s' if n != 1 else ''} ({what}: {', '.join(ids)}{more})"


def _bad_values(values: pd.Series, mask: np.ndarray) -> str:
    bad = pd.unique(values[np.asarray(mask, dtype=bool)].astype(str))[:_MAX_IDS]
    return ", ".join(repr(v) for v in bad)


def _require_frame(df: object, name: str) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(df).__name__}")
    return df


def _check_shape(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """One level of unique, string column names; index levels may not shadow columns.

    Returns a shallow copy whose index levels named like a column lose their names (pandas
    refuses to group such a frame: the name would be ambiguous); the index values are kept.
    """
    if isinstance(df.columns, pd.MultiIndex):
        raise ValueError(
            f"{name}: the columns are a MultiIndex with {df.columns.nlevels} levels (e.g. "
            f"{df.columns[0]!r}); judgekit needs one level of column names: flatten them first, "
            "e.g. df.columns = ['_'.join(map(str, c)) for c in df.columns]"
        )
    dup = df.columns.duplicated(keep=False)
    if dup.any():
        counts = pd.Series(df.columns[dup]).astype(str).value_counts(sort=False)
        listed = ", ".join(f"{c!r} ({k} times)" for c, k in counts.items())
        raise ValueError(f"{name}: column names must be unique; found {listed}. Drop or rename "
                         "the copies, e.g. df.loc[:, ~df.columns.duplicated()]")
    df = df.copy(deep=False)
    names = list(df.index.names)
    clash = [n for n in names if n is not None and n in df.columns]
    if clash:
        df.index = df.index.set_names([None if n in clash else n for n in names])
    return df


def _require_columns(df: pd.DataFrame, columns: Iterable[str], name: str, defaults: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        in_index = [c for c in missing if c in df.index.names]
        hint = (f"; {', '.join(repr(c) for c in in_index)} {'is an index level' if len(in_index) == 1 else 'are index levels'}: "
                "call .reset_index() first" if in_index else "")
        raise ValueError(
            f"{name} is missing required column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(repr(c) for c in missing)}{hint}. Required: {', '.join(columns)}; "
            f"filled in when absent: {defaults}. It has {list(df.columns)}"
        )


def _codes(values: pd.Series) -> tuple[np.ndarray, list]:
    """Integer codes (-1 for missing) and the distinct values, without turning every row into a
    Python object (arrow-backed strings are dictionary-encoded natively)."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64), list(uniques)


def _arrow(values: pd.Series):
    """The pyarrow array behind an arrow-backed string column, else None."""
    if pd.api.types.is_object_dtype(values.dtype) or not pd.api.types.is_string_dtype(values.dtype):
        return None
    to_arrow = getattr(values.array, "__arrow_array__", None)
    return to_arrow() if to_arrow is not None else None


def _category_codes(values: pd.Series, categories: Sequence[str]) -> np.ndarray:
    """Index of each value in ``categories``: -1 where missing, -2 for any other value.

    Arrow-backed strings are looked up by pyarrow in one vectorised pass; other columns through
    their distinct values, so no row becomes a Python object either way.
    """
    arrow = _arrow(values)
    if arrow is not None:
        import pyarrow as pa
        import pyarrow.compute as pc

        found = pc.index_in(arrow, value_set=pa.array(list(categories)).cast(arrow.type))
        codes = pc.if_else(pc.is_null(arrow), -1, pc.fill_null(found, -2))
        return np.asarray(codes.to_numpy(), dtype=np.int64)
    fcodes, uniques = _codes(values)
    index = {c: i for i, c in enumerate(categories)}
    lut = np.array([index.get(u, -2) if isinstance(u, str) else -2 for u in uniques] + [-1],
                   dtype=np.int64)
    return lut[fcodes]  # code -1 (missing) reads the trailing -1


def _check_in_set(
    df: pd.DataFrame, column: str, allowed: frozenset[str], name: str, id_column: str | None,
    *, allow_missing: bool,
) -> tuple[np.ndarray, list[str]]:
    """Check a categorical column against ``allowed``; return the codes into the sorted allowed
    values (-1 where missing) and those values."""
    categories = sorted(allowed)
    codes = _category_codes(df[column], categories)
    missing = codes == -1
    if not allow_missing and missing.any():
        raise ValueError(f"{name}: column {column!r} is missing in {_ids(df, missing, id_column)}")
    bad = codes == -2
    if bad.any():
        raise ValueError(
            f"{name}: column {column!r} must be one of {categories}"
            f"{' or missing' if allow_missing else ''}; found {_bad_values(df[column], bad)} in "
            f"{_ids(df, bad, id_column)}"
        )
    return codes, categories


def _check_text(df: pd.DataFrame, column: str, name: str, id_column: str | None,
                require: bool = True) -> None:
    values = df[column]
    missing = values.isna().to_numpy()
    if require and missing.any():
        raise ValueError(
            f"{name}: column {column!r} has missing text in {_ids(df, missing, id_column)}. A "
            "reader leaves a text missing when the source does not hold it; the text-free analyses "
            "(win_rates, arena_hard_scores, bradley_terry) accept such pairs, the others need the "
            f"rows dropped first, e.g. pairs.dropna(subset=[{column!r}])")
    if missing.any():
        values = values[~missing]
    if pd.api.types.is_string_dtype(values.dtype) and not pd.api.types.is_object_dtype(values.dtype):
        return  # a string dtype holds nothing but strings (and missing values, refused above)
    if pd.api.types.infer_dtype(values, skipna=False) in ("string", "empty"):
        return  # every value a str (checked in C, without a Python call per row)
    not_str = ~values.map(lambda v: isinstance(v, str)).to_numpy(dtype=bool)
    if not_str.any():
        rows = df.loc[values.index] if len(values) < len(df) else df
        raise ValueError(
            f"{name}: column {column!r} must hold strings; found "
            f"{_bad_values(values.map(type).map(lambda t: t.__name__), not_str)} in "
            f"{_ids(rows, not_str, id_column)}"
        )


def _numbers(df: pd.DataFrame, column: str, name: str, id_column: str | None, *,
             what: str = "numbers", minimum: float | None = None) -> pd.Series:
    """The column as numbers (missing stays missing); a clear error for text or out-of-range
    values. A numeric column comes back unchanged."""
    values = df[column]
    if pd.api.types.is_bool_dtype(values.dtype):
        bad = np.ones(len(values), dtype=bool)
        num = values
    elif pd.api.types.is_numeric_dtype(values.dtype):
        num = values
        bad = np.zeros(len(values), dtype=bool)
    else:
        num = pd.to_numeric(values, errors="coerce")
        bad = (values.notna() & num.isna()).to_numpy() | values.map(
            lambda v: isinstance(v, bool)).to_numpy(dtype=bool)
    with np.errstate(invalid="ignore"):
        # nullable dtypes (Int64, Float64) hold pd.NA, which older pandas will not turn into a
        # float without being told what to put there
        arr = (pd.Series(num).to_numpy(dtype=float, na_value=np.nan) if not bad.all()
               else np.full(len(values), np.nan))
        bad = bad | np.isinf(arr)
        if minimum is not None:
            bad = bad | (arr < minimum)
    if bad.any():
        raise ValueError(
            f"{name}: column {column!r} must hold {what} or be missing; found "
            f"{_bad_values(values, bad)} in {_ids(df, bad, id_column)}"
        )
    return num


@stamped
def validate_pairs(pairs: pd.DataFrame, *, name: str = "pairs",
                   require_text: bool = True) -> pd.DataFrame:
    """Check a pairs table and return it with canonical dtypes and its defaults filled in.

    Parameters
    ----------
    pairs : DataFrame
        One row per comparison; see the module docstring for the columns. Required:
        ``pair_id``, ``prompt``, ``response_a``, ``response_b``.
    name : str
        What to call the table in error messages.
    require_text : bool, default True
        False lets ``prompt`` / ``response_a`` / ``response_b`` be missing (a reader leaves a
        text missing when the source does not hold it); their lengths are then missing too
        (``len_a``/``len_b`` become nullable). The text-free analyses validate this way.

    Returns
    -------
    DataFrame
        A copy with ``pair_id`` as strings, labels as ``"a"``/``"b"``/``"tie"``/missing (all
        missing when the table has no ``label`` column), and ``len_a``/``len_b`` (characters)
        filled in where they were absent or missing.

    Raises
    ------
    ValueError
        Naming the table, the column and up to five row ids: a missing required column (the
        message lists what is required and what is filled in), a duplicate ``pair_id``, a label
        outside {"a", "b", "tie"}, missing or non-string text, a length that is not a number
        >= 0, duplicated column names or a MultiIndex of columns.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> pairs = pd.DataFrame({"pair_id": ["p1"], "prompt": ["2+2?"], "response_a": ["4"],
    ...                       "response_b": ["5"]})
    >>> jk.validate_pairs(pairs)[["pair_id", "label", "len_a", "len_b"]]
      pair_id label  len_a  len_b
    0      p1  None      1      1
    >>> jk.validate_pairs(pairs.assign(label="A"))
    Traceback (most recent call last):
    ...
    ValueError: pairs: column 'label' must be one of ['a', 'b', 'tie'] or missing; found 'A' in 1 row (pair_id: p1)
    """
    df = _check_shape(_require_frame(pairs, name), name)
    _require_columns(df, PAIR_REQUIRED, name, _PAIR_DEFAULTS)
    ids_missing = df["pair_id"].isna().to_numpy()
    if ids_missing.any():
        raise ValueError(f"{name}: column 'pair_id' is missing in {_ids(df, ids_missing, None)}")
    df["pair_id"] = df["pair_id"].astype(str)
    dup = df["pair_id"].duplicated(keep=False).to_numpy()
    if dup.any():
        raise ValueError(f"{name}: column 'pair_id' must be unique; duplicated in {_ids(df, dup, 'pair_id')}")
    for column in ("prompt", "response_a", "response_b"):
        _check_text(df, column, name, "pair_id", require_text)
    if "label" not in df.columns:
        df["label"] = pd.Series([None] * len(df), index=df.index, dtype=object)
    _check_in_set(df, "label", LABELS, name, "pair_id", allow_missing=True)
    df["label"] = df["label"].astype(object).where(df["label"].notna(), None)
    for side in ("a", "b"):
        column = f"len_{side}"
        if column in df.columns:
            given = _numbers(df, column, name, "pair_id", what="lengths (numbers >= 0)", minimum=0)
        if column not in df.columns or given.isna().any():
            lengths = df[f"response_{side}"].str.len()
            df[column] = lengths if column not in df.columns else given.fillna(lengths)
        df[column] = df[column].astype("Int64" if df[column].isna().any() else "int64")
    return df


def _filled_repeat(df: pd.DataFrame, key: tuple[np.ndarray, int], name: str) -> None:
    dup = _duplicated(*key)
    if dup.any():
        raise ValueError(
            f"{name}: the same (pair_id, judge, order, id_swap) appears more than once in "
            f"{_ids(df, dup, 'pair_id')} and there is no 'repeat' column to tell the calls apart; "
            "number identical requests 0, 1, ..., e.g. df['repeat'] = "
            "df.groupby(['pair_id', 'judge', 'order']).cumcount()"
        )
    df["repeat"] = np.zeros(len(df), dtype=np.int64)


def _combine(parts: Sequence[tuple[np.ndarray, int]]) -> tuple[np.ndarray, int]:
    """One int64 code per row for a tuple of categorical codes (each in 0..k-1), and the size of
    the code space; re-coded densely whenever the product of the level counts would overflow."""
    key = np.zeros(len(parts[0][0]), dtype=np.int64)
    size = 1
    for codes, k in parts:
        k = max(int(k), 1)
        if size * k >= 2**62:
            key, uniq = pd.factorize(key)
            key = np.asarray(key, dtype=np.int64)
            size = max(len(uniq), 1)
        key *= k
        key += codes
        size *= k
    return key, size


def _duplicated(key: np.ndarray, size: int) -> np.ndarray:
    """Rows whose key occurs more than once (every copy marked). Counting in a dense array when
    the code space is small, else through a hash table."""
    if size <= max(4 * len(key), 1 << 20):
        return np.bincount(key, minlength=size)[key] > 1
    codes, uniq = pd.factorize(key)
    return np.bincount(codes, minlength=len(uniq))[codes] > 1


@stamped
def validate_judgments(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame | None = None,
    *,
    name: str = "judgments",
    require: Sequence[str] = (),
) -> pd.DataFrame:
    """Check a judgments table (and that it refers to known pairs) and return it canonicalised.

    Parameters
    ----------
    judgments : DataFrame
        One row per judge call; see the module docstring for the columns. Required: ``pair_id``,
        ``judge``, ``order``, ``verdict``.
    pairs : DataFrame, optional
        When given, every ``pair_id`` of ``judgments`` must be one of its ``pair_id``.
    name : str
        What to call the table in error messages.
    require : sequence of str
        Further columns the caller needs (e.g. ``("temperature",)``).

    Returns
    -------
    DataFrame
        A copy with ``pair_id`` and ``judge`` as strings, ``repeat`` as int64 (0 when absent),
        ``p_a`` as float64 (NaN when absent), missing verdicts as ``None`` and ``id_swap``
        (bool) added as False when absent. Numeric settings (``temperature``, token counts,
        cost, latency) given as text are converted to numbers.

    Raises
    ------
    ValueError
        Naming the table, the column and up to five row ids: a missing required column (the
        message lists what is required and what is filled in), an order outside {"ab", "ba"},
        a verdict outside {"a", "b", "tie"}, a negative or non-integer repeat, ``p_a`` outside
        [0, 1], text in a numeric column, a ``pair_id`` not in pairs, the same (pair, judge,
        order, id_swap, repeat) twice, duplicated column names or a MultiIndex of columns.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> j = pd.DataFrame({"pair_id": ["p1", "p1"], "judge": "gpt", "order": ["ab", "ba"],
    ...                   "verdict": ["a", None]})
    >>> out = jk.validate_judgments(j)
    >>> out["verdict"].tolist(), out["repeat"].tolist(), bool(out["p_a"].isna().all())
    (['a', None], [0, 0], True)
    >>> jk.validate_judgments(j.assign(order=["ab", "AB"]))
    Traceback (most recent call last):
    ...
    ValueError: judgments: column 'order' must be one of ['ab', 'ba']; found 'AB' in 1 row (pair_id: p1)
    """
    df = _check_shape(_require_frame(judgments, name), name)
    _require_columns(df, (*JUDGMENT_REQUIRED, *require), name, _JUDGMENT_DEFAULTS)
    id_codes = {}
    for column in ("pair_id", "judge"):
        missing = df[column].isna().to_numpy()
        if missing.any():
            raise ValueError(f"{name}: column {column!r} is missing in {_ids(df, missing, None)}")
        if df[column].dtype != _STR_DTYPE:
            df[column] = df[column].astype(str)
        id_codes[column] = _codes(df[column])
    order_codes, order_values = _check_in_set(df, "order", ORDERS, name, "pair_id",
                                              allow_missing=False)
    v_codes, v_values = _check_in_set(df, "verdict", VERDICTS, name, "pair_id", allow_missing=True)
    lut = np.array([*v_values, None], dtype=object)  # code -1 (missing) reads None
    df["verdict"] = pd.Series(lut[v_codes], index=df.index, dtype=object)

    if "repeat" in df.columns:
        repeat = df["repeat"]
        if pd.api.types.is_integer_dtype(repeat.dtype) and not repeat.hasnans:
            bad = (repeat < 0).to_numpy()
        else:
            repeat = pd.to_numeric(repeat, errors="coerce")
            bad = (repeat.isna() | (repeat < 0) | (repeat % 1 != 0)).to_numpy()
        if bad.any():
            raise ValueError(
                f"{name}: column 'repeat' must be an integer >= 0; found "
                f"{_bad_values(df['repeat'], bad)} in {_ids(df, bad, 'pair_id')}"
            )
        df["repeat"] = repeat.astype("int64")

    if "p_a" not in df.columns:
        df["p_a"] = np.full(len(df), np.nan)
    elif pd.api.types.is_float_dtype(df["p_a"].dtype):
        p = df["p_a"].to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            bad = (p < 0) | (p > 1)
        if bad.any():
            raise ValueError(
                f"{name}: column 'p_a' must be a probability in [0, 1] or missing; found "
                f"{_bad_values(df['p_a'], bad)} in {_ids(df, bad, 'pair_id')}"
            )
        df["p_a"] = df["p_a"].astype("float64")
    else:
        p_a = pd.to_numeric(df["p_a"], errors="coerce")
        bad = (df["p_a"].notna() & (p_a.isna() | (p_a < 0) | (p_a > 1))).to_numpy()
        if bad.any():
            raise ValueError(
                f"{name}: column 'p_a' must be a probability in [0, 1] or missing; found "
                f"{_bad_values(df['p_a'], bad)} in {_ids(df, bad, 'pair_id')}"
            )
        df["p_a"] = p_a.astype("float64")

    if "id_swap" not in df.columns:
        df["id_swap"] = False
    elif not pd.api.types.is_bool_dtype(df["id_swap"].dtype) or df["id_swap"].hasnans:
        swap = df["id_swap"]
        bad = ~swap.isin([True, False, 0, 1]).to_numpy()
        if bad.any():
            raise ValueError(
                f"{name}: column 'id_swap' must be True or False; found "
                f"{_bad_values(swap, bad)} in {_ids(df, bad, 'pair_id')}"
            )
        df["id_swap"] = swap.astype(bool)

    for column in _NUMERIC_OPTIONAL:
        if column in df.columns:
            num = _numbers(df, column, name, "pair_id")
            if num is not df[column]:
                df[column] = num

    pair_codes, pair_uniques = id_codes["pair_id"]
    parts = [(pair_codes, len(pair_uniques)), (id_codes["judge"][0], len(id_codes["judge"][1])),
             (order_codes, len(order_values)), (df["id_swap"].to_numpy(dtype=bool).astype(np.int64), 2)]
    if "repeat" not in df.columns:
        _filled_repeat(df, _combine(parts), name)
    else:
        rep_codes, rep_uniques = _codes(df["repeat"])
        dup = _duplicated(*_combine([*parts, (rep_codes, len(rep_uniques))]))
        if dup.any():
            columns = "pair_id, judge, order, id_swap, repeat"
            raise ValueError(
                f"{name}: the same ({columns}) appears more than once in "
                f"{_ids(df, dup, 'pair_id')}; give repeated calls distinct 'repeat' values"
            )

    if pairs is not None:
        known = pd.Index(_require_frame(pairs, "pairs")["pair_id"].astype(str))
        unknown_u = np.append(~pd.Index(pair_uniques, dtype=object).isin(known), False)
        unknown = unknown_u[pair_codes]
        if unknown.any():
            raise ValueError(
                f"{name}: column 'pair_id' refers to pairs that are not in the pairs table in "
                f"{_ids(df, unknown, 'pair_id')}"
            )
    return df


@stamped
def position_of(verdict: pd.Series, order: pd.Series) -> pd.Series:
    """The position the judge picked: ``"first"``, ``"second"``, ``"tie"`` or missing.

    Parameters
    ----------
    verdict : Series
        Verdicts in response terms: ``"a"``, ``"b"``, ``"tie"`` or missing (the judgments
        table's ``verdict`` column).
    order : Series
        Which response was shown first, ``"ab"`` or ``"ba"``, aligned with ``verdict`` (the
        judgments table's ``order`` column).

    Returns
    -------
    Series
        Object dtype, on ``verdict``'s index: ``"first"`` when the response the judge preferred
        was shown first, ``"second"`` when it was shown second, ``"tie"`` for a tie, and
        ``None`` when the verdict is missing or the order is neither ``"ab"`` nor ``"ba"``.

    Examples
    --------
    >>> import pandas as pd
    >>> position_of(pd.Series(["a", "a", "tie", None]), pd.Series(["ab", "ba", "ab", "ba"])).tolist()
    ['first', 'second', 'tie', None]
    """
    v = verdict.astype(object)
    o = order.astype(object)
    first = ((v == "a") & (o == "ab")) | ((v == "b") & (o == "ba"))
    second = ((v == "b") & (o == "ab")) | ((v == "a") & (o == "ba"))
    out = np.select([first.to_numpy(), second.to_numpy(), (v == "tie").to_numpy()],
                    ["first", "second", "tie"], default=None)
    return pd.Series(out, index=verdict.index, dtype=object)


@stamped
def label_order(order: pd.Series, label: pd.Series) -> pd.Series:
    """Order relative to the human label: ``"cr"`` when the preferred response is shown first,
    ``"rc"`` when it is shown second, missing when the label is a tie or missing.

    Parameters
    ----------
    order : Series
        Which response was shown first, ``"ab"`` or ``"ba"`` (a judgments table's ``order``).
    label : Series
        The human preference of each row's pair, ``"a"``, ``"b"``, ``"tie"`` or missing,
        aligned with ``order`` (e.g. the pairs' ``label`` merged onto the judgments).

    Returns
    -------
    Series
        Object dtype, on ``order``'s index: ``"cr"`` (correct response first), ``"rc"``
        (correct response second) or ``None`` when the label is a tie or missing.

    Examples
    --------
    >>> import pandas as pd
    >>> label_order(pd.Series(["ab", "ba", "ab"]), pd.Series(["a", "a", "b"])).tolist()
    ['cr', 'rc', 'rc']
    """
    o = order.astype(object).to_numpy()
    lab = label.astype(object).to_numpy()
    cr = ((lab == "a") & (o == "ab")) | ((lab == "b") & (o == "ba"))
    rc = ((lab == "a") & (o == "ba")) | ((lab == "b") & (o == "ab"))
    out = np.select([cr, rc], ["cr", "rc"], default=None)
    return pd.Series(out, index=order.index, dtype=object)
