"""Bounded gzip decompression: a small compressed file never inflates past a known limit.

A gzip stream can expand a thousandfold (510 KB of zeros inflate to 512 MiB), so data files are
never decompressed blindly. When the upstream size is registered, that size is the limit; when it
is not (files trusted on first use), the limit is :data:`MAX_RATIO` times the compressed size, and
at least :data:`FLOOR` bytes. Real data files compress about 3 to 10 times.
"""

from __future__ import annotations

import zlib

__all__ = ["FLOOR", "MAX_RATIO", "InflateLimitError", "gunzip", "limit_for"]

#: Largest expansion allowed when the decompressed size is not known in advance.
MAX_RATIO = 50
#: Smallest limit used when the decompressed size is not known in advance (32 MiB).
FLOOR = 32 << 20


class InflateLimitError(ValueError):
    """The gzip data inflates to more than the limit (internal; callers raise DataFileError)."""


def limit_for(compressed_size: int, expected: int | None) -> int:
    """The most bytes a gzip stream of ``compressed_size`` bytes may inflate to.

    Examples
    --------
    >>> limit_for(1000, 4000)
    4000
    >>> limit_for(10_000_000, None) == 50 * 10_000_000
    True
    """
    if expected is not None:
        return int(expected)
    return max(FLOOR, MAX_RATIO * int(compressed_size))


def gunzip(data: bytes, limit: int) -> bytes:
    """Decompress gzip ``data`` (one or more members), producing at most ``limit`` bytes.

    Raises
    ------
    InflateLimitError
        When the data would inflate to more than ``limit`` bytes (decompression stops there).
    EOFError
        When the stream is truncated.
    zlib.error
        When it is not gzip data or is corrupted.

    Examples
    --------
    >>> import gzip
    >>> gunzip(gzip.compress(b"abc") + gzip.compress(b"def"), limit=6)
    b'abcdef'
    >>> gunzip(gzip.compress(b"0" * 1000), limit=999)
    Traceback (most recent call last):
    ...
    judgekit.data._gzip.InflateLimitError: gzip data inflates to more than 999 bytes
    """
    out = bytearray()
    rest = data
    while True:
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        out += inflater.decompress(rest, limit + 1 - len(out))
        if len(out) > limit or inflater.unconsumed_tail:
            raise InflateLimitError(f"gzip data inflates to more than {limit:,} bytes")
        if not inflater.eof:
            raise EOFError("gzip data is truncated")
        rest = inflater.unused_data
        if not rest.strip(b"\x00"):  # like the gzip module, ignore trailing zero padding
            return bytes(out)
