"""Every exception and warning judgekit raises, in one place.

Catch these by class rather than by message: the messages name the table, column, file or judge
involved and may be reworded between releases, the classes will not.

Errors

- :class:`DataFileError` (an :class:`OSError`): a data file is missing, damaged, fails its
  checksum or cannot be downloaded. The message names the file, its URL and the fix.
- :class:`UnsafePickleError`: a downloaded pickle asks for more than plain data.
- :class:`JudgeConnectionError` (an :class:`OSError`): a judge endpoint cannot be reached at all
  (the host does not resolve, or refuses connections), so a run stops instead of returning a
  table of errors.
- :class:`CacheError` (an :class:`OSError`): the judge cache file cannot be opened, read or
  written. The message names the file and the fix.
- :class:`OutputPathError` (an :class:`OSError`): a report cannot be written because a name
  inside its output folder is a symbolic link (judgekit never writes behind one) or a folder
  where a file belongs. The message names the path and the fix.
- :class:`TableError` (a :class:`ValueError`): a table of judgments cannot be read. It lists
  every problem found in the table at once, grouped by kind, each with the first rows it is in;
  ``problems`` holds them by kind and ``notes`` what was read without trouble.
- :class:`NonRandomLabelsError` (a :class:`ValueError`): the human labels do not look like a
  random sample of the pairs, so estimates from them would be biased. The message names the
  judge, the covariates that differ and the fixes (sampling probabilities or strata).

Warnings

- :class:`MetricWarning`: a metric could not be estimated for some group (it is NaN there) or its
  interval is unreliable (too few clusters, too many failed resamples).
- :class:`ConvergenceWarning`: an iterative fit (a GLM, NOA) stopped before converging.
- :class:`MissingDataWarning`: some known files of a dataset were skipped.
- :class:`UnverifiedDataWarning`: a file without a published checksum was trusted on first use.
- :class:`CacheWarning`: a judging run returned paid answers it could not store in the judge
  cache (a read-only cache, or a write that failed mid-run).
"""

from __future__ import annotations

import pickle

__all__ = [
    "CacheError",
    "CacheWarning",
    "ConvergenceWarning",
    "DataFileError",
    "JudgeConnectionError",
    "MetricWarning",
    "MissingDataWarning",
    "NonRandomLabelsError",
    "OutputPathError",
    "TableError",
    "UnsafePickleError",
    "UnverifiedDataWarning",
]


class DataFileError(OSError):
    """A data file is missing, corrupted, truncated or could not be downloaded."""


class TableError(ValueError):
    """A table of judgments has problems; the message lists all of them, grouped by kind."""

    def __init__(self, name: str, problems: dict[str, list[str]], notes: list[str] | None = None):
        self.name, self.problems, self.notes = name, dict(problems), list(notes or [])
        n = sum(len(v) for v in self.problems.values())
        lines = [f"{name}: {n} problem{'s' if n != 1 else ''} found, so nothing was read:"]
        for kind, texts in self.problems.items():
            lines += [f"  - {kind}: {t}" for t in texts]
        if self.notes:
            lines.append("Read without trouble:")
            lines += [f"  - {note}" for note in self.notes]
        super().__init__("\n".join(lines))


class UnsafePickleError(pickle.UnpicklingError):
    """The pickle asks for a global (class or function) or holds something other than plain data."""


class JudgeConnectionError(OSError):
    """No connection could be made to a judge endpoint (name resolution failed, or refused)."""


class CacheError(OSError):
    """The judge cache file cannot be opened, read or written."""


class OutputPathError(OSError):
    """A report file cannot be written where it belongs: a folder inside the output folder is a
    symbolic link (refused, never followed), or a folder stands where a file belongs."""


class NonRandomLabelsError(ValueError):
    """The labelled pairs differ from the unlabelled ones beyond chance: labels are missing not at
    random, and an unweighted estimate from them would be biased."""


class MetricWarning(RuntimeWarning):
    """A metric could not be estimated for some group (and is NaN there), or its interval is
    unreliable. The message names the metric, the reason and the groups."""


class ConvergenceWarning(RuntimeWarning):
    """An iterative fit stopped before meeting its convergence criterion."""


class MissingDataWarning(UserWarning):
    """Some known files of a dataset are neither in the mirror nor in the cache, so were skipped."""


class UnverifiedDataWarning(UserWarning):
    """A file without a published checksum was downloaded and trusted on first use."""


class CacheWarning(RuntimeWarning):
    """Paid answers were returned but not stored in the judge cache (read-only, or a write
    failed); the message names the file and says how many."""
