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
"""

from __future__ import annotations

import json
import os

__all__ = ["parse_json", "parse_jsonl"]

_BLANK = " \t\r"


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
    source = str(source)
    out = []
    for i, line in enumerate(_text(data, source).split("\n"), start=1):
        if line.strip(_BLANK):
            out.append(_loads(line, f"{source}, line {i}"))
    return out
