"""Parsing JSON and JSON-lines files: the one parser every judgekit reader uses.

- **Errors name the file** (and the line, for JSON lines) and are :class:`ValueError`: text that
  is not JSON, bytes that are not text, and JSON nested deeper than Python's parser can follow
  (which :func:`json.loads` reports as a bare :class:`RecursionError` naming nothing).
- **JSON lines are split at line feeds only.** :meth:`str.splitlines` also breaks at U+2028,
  U+2029, U+0085 and a few control characters, all of which may stand unescaped inside a JSON
  string (a writer using ``ensure_ascii=False`` leaves them so), which cut valid records in two
  and gave wrong line numbers. A carriage return before the line feed is JSON whitespace, so CRLF
  files read too; blank lines are skipped.
- **Bytes are decoded strictly** in the encoding JSON allows (UTF-8, with or without a byte order
  mark, UTF-16 or UTF-32, as :func:`json.detect_encoding` tells): a byte that is not text is an
  error naming the file and line, never replaced silently.
- **Fast when it can be, identical always.** Where orjson is installed, UTF-8 input is parsed by
  it first (three to four times faster than :mod:`json` on large judgment files); the result is
  kept only where :mod:`json` would give the same value, and otherwise the whole document goes
  through :mod:`json` as before, so values, errors and their messages do not depend on whether
  orjson is there. orjson differs from :mod:`json` in three places, each caught: it refuses
  ``NaN``/``Infinity``, out-of-range numbers and escaped lone surrogates (an error: :mod:`json`
  then reads them), it reads an integer beyond 64 bits as a float (a float of that size sends
  the document to :mod:`json`), and it follows nesting to 1,024 levels where :mod:`json` stops
  near 1,000 (nesting past :data:`_DEEP` levels sends the document to :mod:`json`).
"""

from __future__ import annotations

import json
import os

try:  # optional speed-up; every result is the one json gives (see the module's notes)
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency, but the library runs without it
    _orjson = None

__all__ = ["parse_json", "parse_jsonl"]

_BLANK = " \t\r"
_BLANK_BYTES = b" \t\r"
_UTF8_BOM = b"\xef\xbb\xbf"
#: Nesting deeper than this is left to json (which stops near 1,000 levels, less the caller's
#: own stack depth); orjson would read up to 1,024.
_DEEP = 500
#: orjson turns an integer of 2**63 or more (in magnitude) into a float; json keeps the integer.
_BIG = 2.0 ** 63


def _unlike_json(value: object) -> bool:
    """Whether orjson's ``value`` might differ from json's: a float as large as an integer
    orjson could not keep (a real float that large only costs a second parse), or nesting
    deeper than :data:`_DEEP`."""
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        obj, depth = pop()
        if depth > _DEEP:
            return True
        items = obj.values() if type(obj) is dict else obj
        for v in items:
            t = type(v)
            if t is dict or t is list:
                push((v, depth + 1))
            elif t is float and not -_BIG < v < _BIG:
                return True
    return False


def _fast_utf8(data: object) -> bytes | None:
    """The bytes orjson may parse: UTF-8 input without its byte order mark, else None."""
    if _orjson is None or not isinstance(data, (bytes, bytearray, memoryview)):
        return None
    data = bytes(data)
    encoding = json.detect_encoding(data)
    if encoding == "utf-8-sig":
        data = data[len(_UTF8_BOM):]
    elif encoding != "utf-8":
        return None
    return data


def _fast_json(data: bytes | str) -> tuple[bool, object]:
    raw = _fast_utf8(data)
    if raw is None:
        return False, None
    try:
        value = _orjson.loads(raw)
    except ValueError:  # orjson.JSONDecodeError: json decides, and words the error
        return False, None
    if type(value) in (dict, list) and _unlike_json([value]):
        return False, None
    if type(value) is float and not -_BIG < value < _BIG:
        return False, None
    return True, value


def _fast_jsonl(data: bytes | str) -> list | None:
    raw = _fast_utf8(data)
    if raw is None:
        return None
    loads, find, view = _orjson.loads, raw.find, memoryview(raw)
    out = []
    start, size = 0, len(raw)
    try:
        while start <= size:  # lines as views of the file's bytes: no copy of each line
            end = find(b"\n", start)
            if end < 0:
                end = size
            if end > start and (raw[start] not in _BLANK_BYTES
                                or raw[start:end].strip(_BLANK_BYTES)):
                out.append(loads(view[start:end]))
            start = end + 1
    except ValueError:  # orjson.JSONDecodeError: json decides, and words the error
        return None
    return None if _unlike_json(out) else out


def _text(data: bytes | str, source: str) -> str:
    if isinstance(data, str):
        return data.removeprefix("\ufeff")
    data = bytes(data)
    encoding = json.detect_encoding(data)
    try:
        return data.decode(encoding).removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        where = f", line {line}" if encoding in ("utf-8", "utf-8-sig") else ""
        raise ValueError(f"{source}{where}: not {encoding.upper().removesuffix('-SIG')} text "
                         f"(byte {err.start}: {err.reason})") from None


def _loads(text: str, source: str) -> object:
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(f"{source}: JSON nested too deeply to read (Python's parser stops near "
                         "1000 levels); the file is damaged, or was made to break parsers") from None
    except ValueError as err:
        raise ValueError(f"{source}: not valid JSON ({err})") from None


def parse_json(data: bytes | str, source: str | os.PathLike) -> object:
    """The value of a JSON document.

    Parameters
    ----------
    data : bytes or str
        The file's content.
    source : str or path
        What to call it in an error (the file).

    Returns
    -------
    object

    Raises
    ------
    ValueError
        Naming ``source``: not text, not JSON, or nested too deeply.

    Examples
    --------
    >>> parse_json(b'{"a": [1, 2]}', "x.json")
    {'a': [1, 2]}
    >>> parse_json("[" * 100_000 + "]" * 100_000, "deep.json")
    Traceback (most recent call last):
    ...
    ValueError: deep.json: JSON nested too deeply to read (...)...
    """
    ok, value = _fast_json(data)
    if ok:
        return value
    return _loads(_text(data, str(source)), str(source))


def parse_jsonl(data: bytes | str, source: str | os.PathLike) -> list:
    """The records of a JSON-lines document, one per non-blank line (split at line feeds only).

    Parameters
    ----------
    data : bytes or str
        The file's content.
    source : str or path
        What to call it in an error (the file); the line number is added.

    Returns
    -------
    list

    Raises
    ------
    ValueError
        Naming ``source`` and the line: not text, not JSON, or nested too deeply.

    Examples
    --------
    >>> parse_jsonl('{"text": "one\\u2028two"}\\r\\n\\n{"text": "three"}\\n', "a.jsonl")
    [{'text': 'one\\u2028two'}, {'text': 'three'}]
    >>> parse_jsonl('{"ok": 1}\\n{"ok": \\n', "b.jsonl")
    Traceback (most recent call last):
    ...
    ValueError: b.jsonl, line 2: not valid JSON (...)
    """
    fast = _fast_jsonl(data)
    if fast is not None:
        return fast
    return _stdlib_jsonl(data, str(source))


def _stdlib_jsonl(data: bytes | str, source: str) -> list:
    out = []
    for i, line in enumerate(_text(data, source).split("\n"), start=1):
        if line.strip(_BLANK):
            out.append(_loads(line, f"{source}, line {i}"))
    return out
