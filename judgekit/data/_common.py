"""Helpers shared by the dataset loaders and the file readers, and the register of formats.

A reader module declares its format with :func:`reads` on its reader function: the name
:func:`judgekit.read_any` takes, and how :func:`judgekit.detect_format` recognises a file or a
folder of it. Importing the module registers it (``judgekit.data`` imports every reader module),
so adding a format is one module: no list elsewhere names the formats.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from judgekit._jsonfile import parse_json, parse_jsonl
from judgekit.data._gzip import InflateLimitError, gunzip, limit_for
from judgekit.data.fetch import DataFile, inflate, read_bytes

F = TypeVar("F", bound=Callable[..., Any])


# ----------------------------------------------------------------------------- the formats

@dataclass(frozen=True)
class Format:
    """One format :func:`judgekit.read_any` reads, and how :func:`judgekit.detect_format` tells it.

    Detection asks the formats in ``rank`` order (lower first), in four steps: a file's name
    (``by_name``), then for a JSON file its first record (``by_record``), else for a table file
    its header (``by_header``); a folder by the layout of its files (``by_folder``), then by the
    first records of its JSON-lines files (formats with ``folder_of_records``). Each test returns
    the reason it claims the file ("its records have ...") or None. The ``fallback`` format takes
    what no other claims.
    """

    name: str
    about: str
    rank: int
    reader: Callable[..., tuple[pd.DataFrame | None, pd.DataFrame]]
    by_name: Callable[[str], str | None] | None = None
    by_record: Callable[[dict], str | None] | None = None
    by_header: Callable[[Path, str], str | None] | None = None
    by_folder: Callable[[Path], str | None] | None = None
    folder_of_records: Callable[[str], str] | None = None
    layout: str | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    takes_pairs: bool = False
    fallback: bool = False


#: The registered formats by name (filled as the reader modules are imported).
REGISTERED: dict[str, Format] = {}


def reads(name: str, about: str, *, rank: int, **how: Any) -> Callable[[F], F]:
    """Declare the decorated reader as the one :func:`judgekit.read_any` uses for format ``name``.

    ``about`` is the line :data:`judgekit.data.formats.FORMATS` shows; ``rank`` and ``how``
    (the fields of :class:`Format`) say how the format is recognised.
    """
    def register(reader: F) -> F:
        where = f"{reader.__module__}.{reader.__qualname__}"
        known = REGISTERED.get(name)
        if known is not None and f"{known.reader.__module__}.{known.reader.__qualname__}" != where:
            raise ValueError(f"two readers declare the format {name!r}: "
                             f"{known.reader.__module__}.{known.reader.__qualname__} and {where}")
        same_rank = [f.name for f in REGISTERED.values() if f.rank == rank and f.name != name]
        if same_rank:  # the order of detection must not depend on the order of imports
            raise ValueError(f"the format {name!r} has the rank {rank} of {same_rank[0]!r}; "
                             "give it a rank of its own")
        REGISTERED[name] = Format(name=name, about=about, rank=rank, reader=reader, **how)
        return reader
    return register


def formats() -> list[Format]:
    """The registered formats, in the order detection asks them."""
    return sorted(REGISTERED.values(), key=lambda f: f.rank)


# ------------------------------------------------------------------------ reading user files

def read_file(path: Path) -> bytes:
    """A file's bytes, inflated (within a bound) when its name ends in ``.gz``."""
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        try:
            data = gunzip(data, limit_for(len(data), None))
        except (InflateLimitError, EOFError, OSError, ValueError) as err:
            raise ValueError(f"{path}: not a readable gzip file ({err})") from None
    return data


def json_file(path: Path) -> object:
    """The parsed JSON of a (possibly gzip-compressed) file; a bad file is named."""
    return parse_json(read_file(path), path)


def jsonl_file(path: Path) -> list:
    """The records of a JSON-lines file (blank lines skipped); a bad line is named."""
    return parse_jsonl(read_file(path), path)


def find_files(path: Path, names: tuple[str, ...], pattern: str) -> list[Path]:
    """``path`` itself when it is a file, else the files under it matching one of ``names``."""
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    if path.is_file():
        return [path]
    found = sorted({p for name in names for p in path.rglob(name) if p.is_file()})
    if not found:
        raise ValueError(f"no {pattern} file under {path}")
    return found


def beside(folder: Path, name: str) -> Path | None:
    """``folder/name`` or its ``.gz`` copy, when either is a file."""
    for candidate in (folder / name, folder / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    return None


# ---------------------------------------------------------------------- parsing the datasets


def short_hash(text: str, n: int = 12) -> str:
    """A stable short id for a text (hex of its sha256)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]


def read_json(entry: DataFile, *, progress: bool = True) -> object:
    """Parse a registered JSON file (the bytes are verified first)."""
    return parse_json(read_bytes(entry, progress=progress), entry.name)


def read_jsonl(entry: DataFile, *, progress: bool = True) -> list[dict]:
    """Parse a registered JSON-lines file (gzip-compressed upstream when its name ends in .gz)."""
    data = read_bytes(entry, progress=progress)
    if entry.path.endswith(".gz"):  # verified first, then inflated within a bound
        data = inflate(entry, data, entry.name)
    return parse_jsonl(data, entry.name)


def as_list(value: str | Iterable[str] | None, what: str = "filter") -> list[str] | None:
    """A filter value as a list of names: ``None`` stays None (no filter: everything), a string
    becomes a one-element list, any other iterable of strings a list.

    An empty list selects nothing, which is never what a caller means, so it raises rather than
    returning an empty table (or, as before, everything). A mapping raises too: its keys are
    not a clear filter (``{"Natural": False}`` would select Natural).

    Raises
    ------
    ValueError
        For an empty filter.
    TypeError
        For a mapping, a non-iterable, or an element that is not a string.

    Examples
    --------
    >>> as_list("Natural"), as_list(("a", "b")), as_list(None)
    (['Natural'], ['a', 'b'], None)
    >>> as_list([], "sets")
    Traceback (most recent call last):
    ...
    ValueError: sets=[] selects nothing: pass None (the default) for all, or at least one name
    """
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        raise TypeError(f"{what}= takes a name or a list of names, not a {type(value).__name__} "
                        f"(a mapping's keys are not a filter); pass e.g. {what}={list(value)[:3]!r}")
    if isinstance(value, (bytes, bool, int, float)) or not isinstance(value, Iterable):
        raise TypeError(f"{what}= takes a name or a list of names, not {value!r}")
    items = list(value)
    bad = [v for v in items if not isinstance(v, str)]
    if bad:
        raise TypeError(f"{what}= takes names (strings); got {bad[0]!r} ({type(bad[0]).__name__})")
    if not items:
        raise ValueError(f"{what}=[] selects nothing: pass None (the default) for all, "
                         "or at least one name")
    return items


def one_name(value: object, what: str) -> str:
    """A filter that takes exactly one name."""
    if not isinstance(value, str):
        raise TypeError(f"{what}= takes one name (a string), not {value!r}")
    return value


def check_names(what: str, given: Sequence[str], known: Sequence[str]) -> None:
    """Raise a ValueError naming unknown ``given`` values, with close matches."""
    unknown = [g for g in given if g not in set(known)]
    if not unknown:
        return
    hints = []
    for u in unknown:
        close = difflib.get_close_matches(u, known, n=3)
        hints.append(f"{u!r}" + (f" (did you mean {', '.join(map(repr, close))}?)" if close else ""))
    raise ValueError(f"unknown {what} {', '.join(hints)}; known: {', '.join(sorted(known))}")


def frame(records: dict[str, list], columns: Sequence[str]) -> pd.DataFrame:
    """A DataFrame with exactly ``columns`` from a dict of equal-length lists."""
    return pd.DataFrame({c: records[c] for c in columns})


def label_from(value: object, mapping: dict) -> str | None:
    """Map an upstream label to "a"/"b"/"tie"/None; unknown values raise."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    key = str(value).strip()
    if key not in mapping:
        raise ValueError(f"unexpected label {value!r}; expected one of {sorted(mapping)}")
    return mapping[key]


def chosen_first(*texts: str) -> bool:
    """Whether the chosen response goes in position a, decided by a hash of the pair's texts.

    Sets that store (chosen, rejected) would otherwise always be labelled "a"; a stable
    pseudo-random side balances the labels and stays the same on every machine and run.
    """
    return int(hashlib.sha256("\x1f".join(texts).encode("utf-8")).hexdigest()[-1], 16) % 2 == 0


def split_last_turn(dialogue: str, marker: str = "\n\nAssistant:") -> tuple[str, str]:
    """Split an HH-RLHF style dialogue into (context up to the last assistant turn, that turn)."""
    cut = dialogue.rfind(marker)
    if cut < 0:
        raise ValueError(f"no {marker.strip()!r} turn in dialogue starting {dialogue[:60]!r}")
    return dialogue[:cut].strip("\n"), dialogue[cut + len(marker):].strip()


def as_text(value: object) -> object:
    """Upstream JSON sometimes stores a one-word answer as a literal (``true``, ``3``): make it
    the text it was; leave None and strings alone."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float)):
        return str(value)
    return value
