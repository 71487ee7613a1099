"""Find, download and verify the public files behind judgekit's datasets.

Every file a loader reads is listed in ``registry.tsv`` (shipped with the package): its dataset,
upstream repository, commit, path, sha256 and size of the upstream bytes, licence, and, for files
outside GitHub, its URL. judgekit carries these addresses and checksums, never the data.

Where a file is looked for, in this order:

1. the local mirror named by ``JUDGEKIT_DATA_MIRROR``, laid out as
   ``github/<owner>/<repo>/<commit>/<path>`` (plain, or gzip-compressed with ``.gz`` appended;
   files outside GitHub as ``web/<host>/<path>``). Mirror files are read straight into memory
   (``.gz`` decompressed in memory, never past the registered size), never copied into the cache.
2. the user cache, ``judgekit._env.cache_dir() / "data"`` (``JUDGEKIT_CACHE_DIR`` overrides).
3. a download into that cache (:mod:`judgekit.data._download`: pooch, one attempt, fail fast
   when the host cannot be reached), from upstream or, for GitHub-hosted files, from the server
   named by ``JUDGEKIT_DATA_URL``.

The sha256 is always checked on the upstream (decompressed) bytes. A missing file, a wrong hash,
a truncated gzip or a failed download raises :class:`DataFileError` naming the file, its URL and
how to fix it.

Files without a published checksum (the online-only sets: TL;DR, HH-RLHF subsets other than
harmless-base/test, MT-Bench human judgments, RewardBench) are trusted on first use: the first
download records its sha256 in a ``.sha256`` file beside the cached copy and warns with
:class:`UnverifiedDataWarning`; every later read is verified against that record. A cached copy
without its record (planted, or left by an interrupted download) is never trusted: it is
downloaded again and recorded, or refused when that is not possible.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import warnings
import zlib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd

from judgekit import _env
from judgekit._safewrite import write_file
from judgekit._stack import caller_level
from judgekit._stamp import stamped
from judgekit.data import _download
from judgekit.data._gzip import InflateLimitError, gunzip, limit_for
from judgekit.exceptions import DataFileError, UnverifiedDataWarning

__all__ = ["DataFileError", "UnverifiedDataWarning", "data_files", "fetch_dataset"]

_GITHUB_RAW = "https://raw.githubusercontent.com/"


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
    def github(self) -> bool:
        """Whether the file lives in a GitHub repository (raw or Git LFS host)."""
        return bool(self.repo and self.commit)

    @property
    def url(self) -> str:
        """Where the upstream bytes are downloaded from (``JUDGEKIT_DATA_URL`` applies to GitHub files)."""
        base = _env.data_url() if self.github else None
        if base is not None:
            return f"{base}{self.repo}/{self.commit}/{self.path}"
        if self.url_override:
            return self.url_override
        return f"{_GITHUB_RAW}{self.repo}/{self.commit}/{self.path}"

    @property
    def key(self) -> str:
        """Relative location inside a mirror and inside the cache."""
        if self.github:
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
    """How to get the file, in a line or two; never mentions a mirror unless one is set."""
    ways = [f"connect to the internet and run `judgekit fetch {entry.dataset}`"]
    mirror = _env.data_mirror()
    if mirror is not None:
        ways.append(f"put the upstream file at {mirror / entry.key} (plain or .gz)")
    elif entry.sha256:  # files without a checksum are only trusted from a download of ours
        ways.append(f"download the URL yourself to {_cache_path(entry)}")
    hint = "To fix: " + ", or ".join(ways) + "."
    if entry.github and _env.data_url() is not None:
        hint += (f" (JUDGEKIT_DATA_URL={_env.data_url()} is set: check that it serves "
                 "<owner>/<repo>/<commit>/<path>, or unset it.)")
    return hint


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
            UnverifiedDataWarning, stacklevel=caller_level(),
        )
    return data


def inflate(entry: DataFile, data: bytes, source: Path | str, expected: int | None = None) -> bytes:
    """Decompress gzip ``data`` of ``entry`` without ever producing more than ``expected`` bytes
    (or, when the size is unknown, :data:`judgekit.data._gzip.MAX_RATIO` times the input)."""
    limit = limit_for(len(data), expected)
    try:
        return gunzip(data, limit)
    except InflateLimitError as err:
        what = (f"the registered {expected:,} bytes" if expected is not None
                else f"{limit:,} bytes ({len(data):,} compressed)")
        raise DataFileError(
            f"{entry.name}: {source} inflates to more than {what}; decompression was stopped. "
            f"It is not the upstream file (a gzip bomb, or another file). Upstream: {entry.url}. "
            f"Replace or delete it. {_fix_hint(entry)}"
        ) from err
    except (EOFError, zlib.error) as err:
        raise DataFileError(
            f"{entry.name}: {source} is not a complete gzip file ({err}); the copy is truncated "
            f"or corrupted. Upstream: {entry.url}. Replace or delete it. {_fix_hint(entry)}"
        ) from err


def _read_mirror(entry: DataFile, path: Path) -> bytes:
    raw = path.read_bytes()
    if path.name.endswith(".gz") and not entry.key.endswith(".gz"):
        # The mirror's own compression: the registered size bounds the decompression.
        raw = inflate(entry, raw, path, entry.size)
    return _check(entry, raw, path)


def _write_record(entry: DataFile, path: Path) -> None:
    """Trust a first download of a file without a published checksum: record its sha256."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    record = _record_path(path)
    write_file(record, f"{digest}  {entry.url}\n")  # a link at either name is not followed
    warnings.warn(
        f"{entry.name}: upstream publishes no checksum; trusting this first download "
        f"(sha256 {digest}, recorded in {record}); later reads are verified against it.",
        UnverifiedDataWarning, stacklevel=caller_level(),
    )


def _download_entry(entry: DataFile, *, progress: bool = True) -> Path:
    """Download ``entry`` into the cache (atomic, hashed); record the hash of unverifiable files."""
    target = _cache_path(entry)
    path = _download.download(entry, target, fix=_fix_hint(entry), progress=progress)
    if not entry.sha256 and not _record_path(path).is_file():
        _write_record(entry, path)
    return path


def _refetch_unrecorded(entry: DataFile, cached: Path, *, progress: bool) -> bytes:
    """A cached online-only file without its checksum record cannot be verified: download it
    again (which records it); if that fails, refuse it rather than trust it."""
    aside = cached.with_name(cached.name + ".unrecorded")
    os.replace(cached, aside)
    try:
        path = _download_entry(entry, progress=progress)
    except DataFileError as err:
        os.replace(aside, cached)  # keep the user's copy; it stays untrusted
        raise DataFileError(
            f"{entry.name}: the cached copy {cached} has no checksum record "
            f"({_record_path(cached).name}), so it cannot be verified (it was put there by hand, "
            "or a download was interrupted before its record was written), and a fresh copy "
            f"could not be downloaded: {getattr(err, 'reason', err)}.\n"
            f"To fix: connect to the internet and run `judgekit fetch {entry.dataset}`, or "
            f"delete {cached}."
        ) from None
    old = aside.read_bytes()
    aside.unlink()
    data = path.read_bytes()
    if old != data:
        warnings.warn(
            f"{entry.name}: the unrecorded cached copy differed from a fresh download "
            f"(sha256 {_sha256(old)} vs {_sha256(data)}); replaced it.",
            UnverifiedDataWarning, stacklevel=caller_level(),
        )
    return _check(entry, data, path)


def read_bytes(entry: DataFile, *, progress: bool = True) -> bytes:
    """The verified upstream bytes of ``entry``: from the mirror, the cache, or a download."""
    path = _mirror_path(entry)
    if path is not None:
        return _read_mirror(entry, path)
    cached = _cache_path(entry)
    if cached.is_file():
        if _expected_hash(entry) is None:
            return _refetch_unrecorded(entry, cached, progress=progress)
        data = cached.read_bytes()
        try:
            return _check(entry, data, cached)
        except DataFileError:
            warnings.warn(f"{entry.name}: cached copy {cached} is corrupted; downloading again",
                          stacklevel=caller_level())
            cached.unlink()
    path = _download_entry(entry, progress=progress)
    return _check(entry, path.read_bytes(), path)


@stamped
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


@stamped
def fetch_dataset(name: str, *, progress: bool = True) -> pd.DataFrame:
    """Download a dataset's files into the cache, or verify them in the mirror.

    Parameters
    ----------
    name : str
        A dataset name (``"alpacaeval"`` fetches every known model and the four AlpacaEval
        tables), a table name, or ``"all"``.
    progress : bool
        Show one progress bar for the files downloaded.

    Returns
    -------
    DataFrame
        One row per file: ``dataset``, ``path``, ``source`` (``"mirror"``, ``"cache"`` or
        ``"download"``), ``location`` and ``sha256`` (verified; for files without a published
        checksum, the recorded one).

    Raises
    ------
    DataFileError
        After trying every file, when some cannot be had or fail their hash: a few lines naming
        the first such file, its URL, the reason and the fix, and counting the others. A host
        that cannot be reached is tried once, not once per file.
    ValueError
        For an unknown name.

    Examples
    --------
    >>> import judgekit as jk
    >>> jk.fetch_dataset("pandalm", progress=False)["path"].tolist()  # doctest: +SKIP
    ['data/gpt-3.5-turbo-testset-v1.json', 'data/pandalm-7b-testset-v1.json', 'data/testset-v1.json']
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
    missing = [f for f in files if not is_available(f)]
    total = sum(f.size for f in missing) if all(f.size for f in missing) else None
    rows, failures = [], []
    with _download.progress_group(name, total=total or None, enabled=progress):
        for entry in files:
            mirror = _mirror_path(entry)
            cached = _cache_path(entry)
            try:
                if mirror is not None:
                    data, source, location = _read_mirror(entry, mirror), "mirror", mirror
                elif cached.is_file():
                    data, source, location = read_bytes(entry, progress=progress), "cache", cached
                else:
                    location = _download_entry(entry, progress=progress)
                    data, source = _check(entry, location.read_bytes(), location), "download"
            except DataFileError as err:  # keep going: fetch what can be fetched, then report
                failures.append((entry, err))
                continue
            rows.append({"dataset": entry.dataset, "path": entry.path, "source": source,
                         "location": str(location), "sha256": _sha256(data)})
    if failures:
        raise DataFileError(_fetch_report(name, files, rows, failures))
    return pd.DataFrame(rows, columns=["dataset", "path", "source", "location", "sha256"])


def _fetch_report(name: str, files: list, rows: list, failures: list) -> str:
    """A few lines: the first failure in full, the others counted, and one fix."""
    first = failures[0][1]
    lines = [f"{len(failures)} of {len(files)} files of {name!r} could not be fetched or verified "
             f"({len(rows)} are fine). The first:", str(first).strip()]
    others = failures[1:]
    if others:
        down = [e for e, _ in others if _download.unreachable(e.url)]
        if down:
            hosts = sorted({urlsplit(e.url).netloc for e in down})
            lines.append(f"{len(down)} more need {', '.join(hosts)}, which could not be reached: "
                         "not tried.")
        rest = [e for e, _ in others if not _download.unreachable(e.url)]
        if rest:
            shown = ", ".join(e.path for e in rest[:5])
            more = f" and {len(rest) - 5} more" if len(rest) > 5 else ""
            lines.append(f"Also failed: {shown}{more}.")
    return "\n".join(lines)
