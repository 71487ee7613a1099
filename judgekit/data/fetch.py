"""Find, download and verify the public files behind judgekit's datasets.

Every file a loader reads is listed in ``registry.tsv`` (shipped with the package): its dataset,
upstream repository, commit, path, sha256 and size of the upstream bytes, licence, and, for files
outside GitHub, its URL. judgekit carries these addresses and checksums, never the data.

Where a file is looked for, in this order:

1. the local mirror named by ``JUDGEKIT_DATA_MIRROR``, laid out as
   ``github/<owner>/<repo>/<commit>/<path>`` (plain, or gzip-compressed with ``.gz`` appended;
   files outside GitHub as ``web/<host>/<path>``). Mirror files are read straight into memory
   (``.gz`` decompressed in memory), never copied into the cache.
2. the user cache, ``judgekit._env.cache_dir() / "data"`` (``JUDGEKIT_CACHE_DIR`` overrides).
3. a download with :mod:`pooch` into that cache: hashed, written atomically (pooch downloads to
   a temporary file and renames it), with a progress bar.

The sha256 is always checked on the upstream (decompressed) bytes. A missing file, a wrong hash,
a truncated gzip or a failed download raises :class:`DataFileError` naming the file, its URL and
how to fix it.

Files without a published checksum (the online-only sets: TL;DR, HH-RLHF subsets other than
harmless-base/test, MT-Bench human judgments, RewardBench) are trusted on first use: the first
download records its sha256 in a ``.sha256`` file beside the cached copy and warns with
:class:`UnverifiedDataWarning`; every later read is verified against that record.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import warnings
import zlib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd

from judgekit import _env
from judgekit.exceptions import DataFileError, UnverifiedDataWarning

__all__ = ["DataFileError", "UnverifiedDataWarning", "data_files", "fetch_dataset"]


@dataclass(frozen=True)
class DataFile:
    """One upstream file: where it lives and what its bytes must hash to."""

    dataset: str
    repo: str
    commit: str
    path: str
    sha256: str
    size: int | None
    license: str
    url_override: str = ""

    @property
    def url(self) -> str:
        """Where the upstream bytes are downloaded from."""
        if self.url_override:
            return self.url_override
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit}/{self.path}"

    @property
    def key(self) -> str:
        """Relative location inside a mirror and inside the cache."""
        if not self.url_override:
            return f"github/{self.repo}/{self.commit}/{self.path}"
        parts = urlsplit(self.url_override)
        return f"web/{parts.netloc}/{self.path}"

    @property
    def name(self) -> str:
        """Short human-readable name for messages."""
        return f"{self.repo}@{self.commit[:7]}:{self.path}" if self.repo and self.commit else self.path


@lru_cache(maxsize=1)
def _registry() -> tuple[DataFile, ...]:
    text = resources.files("judgekit.data").joinpath("registry.tsv").read_text(encoding="utf-8")
    out = []
    for rec in csv.DictReader(io.StringIO(text), delimiter="\t"):
        out.append(DataFile(
            dataset=rec["dataset"], repo=rec["repo"], commit=rec["commit"], path=rec["path"],
            sha256=rec["sha256"], size=int(rec["bytes"]) if rec["bytes"] else None,
            license=rec["license"], url_override=rec["url"],
        ))
    return tuple(out)


def registry_files(dataset: str | None = None) -> list[DataFile]:
    """The registered files, optionally of one dataset or table."""
    files = list(_registry())
    if dataset is None:
        return files
    return [f for f in files if f.dataset == dataset]


def lookup(dataset: str, path: str) -> DataFile:
    """The registered file ``path`` of ``dataset`` (exact upstream path)."""
    for f in _registry():
        if f.dataset == dataset and f.path == path:
            return f
    raise KeyError(f"no registered file {path!r} for dataset {dataset!r}")


# --------------------------------------------------------------------------------------------
# where a file is


def _mirror_paths(entry: DataFile) -> list[Path]:
    mirror = _env.data_mirror()
    if mirror is None:
        return []
    plain = mirror / entry.key
    return [plain, plain.with_name(plain.name + ".gz")]


def _mirror_path(entry: DataFile) -> Path | None:
    for p in _mirror_paths(entry):
        if p.is_file():
            return p
    return None


def _cache_path(entry: DataFile) -> Path:
    return _env.cache_dir() / "data" / entry.key


def _record_path(cached: Path) -> Path:
    return cached.with_name(cached.name + ".sha256")


def is_available(entry: DataFile) -> bool:
    """True when the file is in the mirror or the cache (no download needed)."""
    return _mirror_path(entry) is not None or _cache_path(entry).is_file()


def _fix_hint(entry: DataFile) -> str:
    mirror = _env.data_mirror()
    where = (
        f"place the upstream file at {mirror / entry.key} (plain or .gz)"
        if mirror is not None
        else "set JUDGEKIT_DATA_MIRROR to a local mirror that holds it"
    )
    return (
        f"To fix: connect to the internet and run `judgekit fetch {entry.dataset}` "
        f"(or download {entry.url} yourself), or {where}."
    )


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _expected_hash(entry: DataFile) -> str | None:
    if entry.sha256:
        return entry.sha256
    record = _record_path(_cache_path(entry))
    if record.is_file():
        return record.read_text(encoding="utf-8").split()[0]
    return None


def _check(entry: DataFile, data: bytes, source: Path) -> bytes:
    expected = _expected_hash(entry)
    if entry.size is not None and len(data) != entry.size:
        raise DataFileError(
            f"{entry.name}: {source} holds {len(data):,} bytes, expected {entry.size:,} "
            f"(sha256 {entry.sha256}); the copy is corrupted or from another commit. "
            f"Upstream: {entry.url}. Replace or delete it. {_fix_hint(entry)}"
        )
    if expected is not None:
        got = _sha256(data)
        if got != expected:
            raise DataFileError(
                f"{entry.name}: sha256 mismatch for {source}: got {got}, expected {expected}. "
                f"The copy is corrupted or from another commit. Upstream: {entry.url}. "
                f"Replace or delete it. {_fix_hint(entry)}"
            )
    else:
        warnings.warn(
            f"{entry.name}: no published sha256; read {source} unverified (sha256 {_sha256(data)}).",
            UnverifiedDataWarning, stacklevel=3,
        )
    return data


def _read_mirror(entry: DataFile, path: Path) -> bytes:
    raw = path.read_bytes()
    if path.name.endswith(".gz") and not entry.key.endswith(".gz"):
        try:
            raw = gzip.decompress(raw)
        except (EOFError, gzip.BadGzipFile, zlib.error) as err:
            raise DataFileError(
                f"{entry.name}: {path} is not a complete gzip file ({err}); the mirror copy is "
                f"truncated or corrupted. Upstream: {entry.url}. Re-copy it. {_fix_hint(entry)}"
            ) from err
    return _check(entry, raw, path)


def _download(entry: DataFile, *, progress: bool = True) -> Path:
    """Download ``entry`` into the cache with pooch (atomic, hashed) and return its path."""
    import pooch

    target = _cache_path(entry)
    target.parent.mkdir(parents=True, exist_ok=True)
    known = f"sha256:{entry.sha256}" if entry.sha256 else None
    mirror = _env.data_mirror()
    looked = f"; not in the mirror {mirror}" if mirror is not None else ""
    try:
        path = pooch.retrieve(
            entry.url, known_hash=known, fname=target.name, path=target.parent,
            downloader=pooch.HTTPDownloader(progressbar=progress, timeout=60),
        )
    except ValueError as err:  # pooch: hash mismatch after download
        raise DataFileError(
            f"{entry.name}: the download from {entry.url} does not match the registered sha256 "
            f"{entry.sha256} ({err}). Upstream may have changed; please report it."
        ) from err
    except Exception as err:  # network failures from requests, OS errors writing the cache
        raise DataFileError(
            f"{entry.name}: could not download {entry.url} ({type(err).__name__}: {err})"
            f"{looked}; not in the cache {target.parent}. {_fix_hint(entry)}"
        ) from err
    path = Path(path)
    if not entry.sha256:
        record = _record_path(path)
        if not record.is_file():
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            tmp = record.with_name(record.name + ".tmp")
            tmp.write_text(f"{digest}  {entry.url}\n", encoding="utf-8")
            tmp.replace(record)
            warnings.warn(
                f"{entry.name}: upstream publishes no checksum; trusting this first download "
                f"(sha256 {digest}, recorded in {record}); later reads are verified against it.",
                UnverifiedDataWarning, stacklevel=3,
            )
    return path


def read_bytes(entry: DataFile, *, progress: bool = True) -> bytes:
    """The verified upstream bytes of ``entry``: from the mirror, the cache, or a download."""
    path = _mirror_path(entry)
    if path is not None:
        return _read_mirror(entry, path)
    cached = _cache_path(entry)
    if cached.is_file():
        data = cached.read_bytes()
        try:
            return _check(entry, data, cached)
        except DataFileError:
            warnings.warn(f"{entry.name}: cached copy {cached} is corrupted; downloading again",
                          stacklevel=2)
            cached.unlink()
    return _check(entry, _download(entry, progress=progress).read_bytes(), cached)


def data_files(name: str | None = None) -> pd.DataFrame:
    """The upstream files behind a dataset or table: addresses, checksums, licences, availability.

    Parameters
    ----------
    name : str, optional
        A dataset or table name (see :func:`list_datasets`); all files when omitted.

    Returns
    -------
    DataFrame
        Columns ``dataset``, ``repo``, ``commit``, ``path``, ``url``, ``sha256``, ``bytes``,
        ``license``, ``available`` (in the mirror or the cache).

    Examples
    --------
    >>> import judgekit as jk
    >>> files = jk.data_files("pandalm")
    >>> files["path"].tolist()
    ['data/gpt-3.5-turbo-testset-v1.json', 'data/pandalm-7b-testset-v1.json', 'data/testset-v1.json']
    """
    files = registry_files(name)
    if name is not None and not files:
        known = sorted({f.dataset for f in _registry()})
        raise ValueError(f"unknown dataset or table {name!r}; known: {', '.join(known)}")
    return pd.DataFrame({
        "dataset": [f.dataset for f in files], "repo": [f.repo for f in files],
        "commit": [f.commit for f in files], "path": [f.path for f in files],
        "url": [f.url for f in files], "sha256": [f.sha256 or None for f in files],
        "bytes": pd.array([f.size for f in files], dtype="Int64"),
        "license": [f.license for f in files], "available": [is_available(f) for f in files],
    })


def fetch_dataset(name: str, *, progress: bool = True) -> pd.DataFrame:
    """Download a dataset's files into the cache, or verify them in the mirror.

    Parameters
    ----------
    name : str
        A dataset name (``"alpacaeval"`` also fetches the four AlpacaEval tables), a table name,
        or ``"all"``.
    progress : bool
        Show a progress bar per download.

    Returns
    -------
    DataFrame
        One row per file: ``dataset``, ``path``, ``source`` (``"mirror"``, ``"cache"`` or
        ``"download"``), ``location`` and ``sha256`` (verified; for files without a published
        checksum, the recorded one).

    Raises
    ------
    DataFileError
        After trying every file, when some cannot be had or fail their hash: the message names
        the first such file, its URL and how to fix it, and lists the others.
    ValueError
        For an unknown name.
    """
    from judgekit.data.datasets import _TABLES

    if name == "all":
        files = registry_files()
    else:
        data_files(name)  # raises for unknown names
        files = registry_files(name)
        if name == "alpacaeval":
            for table in _TABLES:
                files += registry_files(table)
    rows, failures = [], []
    for entry in files:
        mirror = _mirror_path(entry)
        cached = _cache_path(entry)
        try:
            if mirror is not None:
                data, source, location = _read_mirror(entry, mirror), "mirror", mirror
            elif cached.is_file():
                data, source, location = read_bytes(entry, progress=progress), "cache", cached
            else:
                location = _download(entry, progress=progress)
                data, source = _check(entry, location.read_bytes(), location), "download"
        except DataFileError as err:  # keep going: fetch what can be fetched, then report
            failures.append((entry, err))
            continue
        rows.append({"dataset": entry.dataset, "path": entry.path, "source": source,
                     "location": str(location), "sha256": _sha256(data)})
    if failures:
        raise DataFileError(
            f"{len(failures)} of {len(files)} files of {name!r} could not be fetched or verified "
            f"({len(rows)} are fine). First problem: {failures[0][1]}"
            + ("" if len(failures) == 1 else "\nAlso failed: " + ", ".join(
                entry.path for entry, _ in failures[1:]))
        )
    return pd.DataFrame(rows, columns=["dataset", "path", "source", "location", "sha256"])
