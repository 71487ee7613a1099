"""Writing report files without following symbolic links inside the output folder.

A report folder may have been prepared or shared by someone else, so judgekit does not trust what
it finds inside it. Two rules, applied by every writer of a report (``Audit.save``, ``judgekit
reproduce``) and of a single file (chart export, ``scoreboard.save``, ``Cache.export``,
``Calibrator.save``):

- **A file is replaced, never written through.** Each file is written to a new temporary file in
  the same folder and renamed over its name (:func:`os.replace`), so a symbolic link found at that
  name is replaced by the file and its target is never opened; a reader never sees half a file.
- **A folder inside the output folder must be a real folder.** A link there (``report/charts ->
  ~/photos``) is refused with :class:`~judgekit.exceptions.OutputPathError` naming it, before
  anything is deleted or written: judgekit cannot tell why the link is there, so it neither
  writes behind it nor removes it. Stale files of an earlier report are removed only from real
  folders, and a link among them is removed as a link.

The output folder itself is the user's choice: when it is a link (``--out`` naming a link), the
link is followed. On POSIX systems every step below it goes through open folder descriptors with
``O_NOFOLLOW``, so a folder swapped for a link between the check and the write is refused too;
elsewhere (Windows) the same checks are made by path just before each step.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import os
import secrets
import stat
from pathlib import Path, PurePosixPath
from typing import IO

from judgekit.exceptions import OutputPathError

__all__ = ["OutputFolder", "write_file"]

_CAN_USE_FDS = (
    hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY")
    and {os.open, os.mkdir, os.unlink, os.rename, os.lstat} <= os.supports_dir_fd
    and os.scandir in os.supports_fd
)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _link_error(path: Path) -> OutputPathError:
    try:
        target = f" (to {os.readlink(path)})"
    except OSError:
        target = ""
    return OutputPathError(
        errno.ELOOP,
        f"{path} is a symbolic link{target}: judgekit does not write through a link inside an "
        "output folder; remove the link, or choose another output folder", str(path))


class OutputFolder:
    """A folder judgekit writes a report into; every name below it is handled as above.

    Parameters
    ----------
    path : str or Path
        The output folder, created with its parents when needed.

    Examples
    --------
    >>> import tempfile
    >>> with OutputFolder(tempfile.mkdtemp()) as out:
    ...     table = out.write("tables/a.csv", "x\\n1\\n")
    >>> table.read_text()
    'x\\n1\\n'
    """

    def __init__(self, path: str | os.PathLike, *, use_fds: bool = _CAN_USE_FDS) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = None
        if use_fds:
            self._fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)

    def __enter__(self) -> OutputFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    # ------------------------------------------------------------------------------- folders
    @staticmethod
    def _parts(relative: str) -> list[str]:
        parts = PurePosixPath(relative).parts
        if not parts or relative.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise ValueError(f"{relative!r} is not a path inside the output folder")
        return list(parts)

    @contextlib.contextmanager
    def _folder(self, parts: list[str], *, create: bool):
        """The folder ``parts`` below this one, as an open descriptor (or a checked path);
        None when it does not exist and ``create`` is False."""
        if self._fd is None:
            yield self._folder_by_path(parts, create=create)
            return
        fd = os.dup(self._fd)
        try:
            here = self.path
            for name in parts:
                here = here / name
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, dir_fd=fd)
                try:
                    sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC,
                                  dir_fd=fd)
                except FileNotFoundError:
                    if create:
                        raise
                    os.close(fd)
                    fd = -1
                    yield None
                    return
                except OSError:
                    if stat.S_ISLNK(os.lstat(name, dir_fd=fd).st_mode):
                        raise _link_error(here) from None
                    raise OutputPathError(errno.ENOTDIR, f"{here} is not a folder", str(here)) from None
                os.close(fd)
                fd = sub
            yield fd
        finally:
            if fd >= 0:
                os.close(fd)

    def _folder_by_path(self, parts: list[str], *, create: bool) -> Path | None:
        here = self.path
        for name in parts:
            here = here / name
            if here.is_symlink():
                raise _link_error(here)
            if create:
                here.mkdir(exist_ok=True)
            elif not here.exists():
                return None
            if not here.is_dir():
                raise OutputPathError(errno.ENOTDIR, f"{here} is not a folder", str(here))
        return here

    def makedirs(self, relative: str) -> Path:
        """Create a folder below this one (refusing links on the way); returns its path."""
        with self._folder(self._parts(relative), create=True):
            return self.path.joinpath(*self._parts(relative))

    # --------------------------------------------------------------------------------- files
    def write(self, relative: str, data: str | bytes) -> Path:
        """Write a file below this folder (text as UTF-8), replacing whatever had its name.

        Returns the file's path.
        """
        *folder, name = self._parts(relative)
        target = self.path.joinpath(*folder, name)
        payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        with self._folder(folder, create=True) as where:
            handle, temporary = self._create(where, name)
            try:
                with os.fdopen(handle, "wb") as fh:
                    fh.write(payload)
                self._rename(where, temporary, name, target)
            except BaseException:
                self._unlink(where, temporary)
                raise
        return target

    def open_text(self, relative: str) -> IO[str]:
        """A new empty text file below this folder, open for writing (e.g. a log that another
        process writes into); a link at its name is replaced, not followed."""
        *folder, name = self._parts(relative)
        with self._folder(folder, create=True) as where:
            handle, temporary = self._create(where, name)
            try:
                self._rename(where, temporary, name, self.path.joinpath(*folder, name))
            except BaseException:
                os.close(handle)
                self._unlink(where, temporary)
                raise
        return os.fdopen(handle, "w", encoding="utf-8")

    def remove(self, relative_folder: str, pattern: str) -> int:
        """Delete the files matching ``pattern`` in a folder below this one (links among them
        as links; sub-folders are left alone). Returns how many were deleted."""
        removed = 0
        with self._folder(self._parts(relative_folder), create=False) as where:
            if where is None:
                return 0
            with os.scandir(where) as entries:
                names = [e.name for e in entries if fnmatch.fnmatchcase(e.name, pattern)
                         and (e.is_symlink() or e.is_file(follow_symlinks=False))]
            for name in names:
                self._unlink(where, name)
                removed += 1
        return removed

    @staticmethod
    def _create(where: int | Path, name: str) -> tuple[int, str]:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC
        flags |= getattr(os, "O_BINARY", 0)
        for _ in range(100):
            temporary = f".{name[:80]}.{secrets.token_hex(6)}.tmp"
            try:
                if isinstance(where, int):
                    return os.open(temporary, flags, 0o666, dir_fd=where), temporary
                return os.open(where / temporary, flags, 0o666), temporary
            except FileExistsError:
                continue
        raise FileExistsError(f"no free temporary name for {name} in the output folder")

    @staticmethod
    def _rename(where: int | Path, temporary: str, name: str, target: Path) -> None:
        try:
            if isinstance(where, int):
                os.rename(temporary, name, src_dir_fd=where, dst_dir_fd=where)
            else:
                os.replace(where / temporary, where / name)
        except IsADirectoryError:
            raise OutputPathError(errno.EISDIR, f"cannot write {target}: it is a folder",
                                  str(target)) from None

    @staticmethod
    def _unlink(where: int | Path, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            if isinstance(where, int):
                os.unlink(name, dir_fd=where)
            else:
                os.unlink(where / name)


def write_file(path: str | os.PathLike, data: str | bytes) -> Path:
    """Write one file the safe way: through a temporary file renamed over ``path``, so a link at
    ``path`` is replaced and its target never written. The folder is created when needed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "kept.txt"
    >>> _ = target.write_text("mine")
    >>> link = target.with_name("link.txt")
    >>> link.symlink_to(target)
    >>> _ = write_file(link, "judgekit's")
    >>> target.read_text(), link.is_symlink(), link.read_text()
    ('mine', False, "judgekit's")
    """
    path = Path(path)
    with OutputFolder(path.parent) as folder:
        folder.write(path.name, data)
    return path
