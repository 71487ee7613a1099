"""The spending limit of a run: reserve an upper bound before a call, settle it on the answer.

Every method that changes the money runs without an ``await`` inside, so no other call can be
sent between a call's answer and its charge, and no call is sent against money a call in flight
may still spend.
"""

from __future__ import annotations

import asyncio

__all__ = ["Budget"]


class Budget:
    """``limit`` USD for a run (None: no limit).

    ``charged`` counts against the limit: the known costs of the answers received, plus the upper
    bound of calls that may have been billed without a usage (answers without usage, abandoned
    timeouts). ``reserved`` is held by the calls in flight.

    Examples
    --------
    >>> import asyncio
    >>> b = Budget(1.0)
    >>> asyncio.run(b.reserve(0.6)), b.reserved
    (True, 0.6)
    >>> b.settle(0.6, 0.5); b.charged
    0.5
    >>> asyncio.run(b.reserve(0.6)), b.stopped   # 0.5 + 0.6 > 1: nothing more is sent
    (False, True)
    """

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.charged = 0.0
        self.reserved = 0.0
        self.stopped = False
        self._freed: asyncio.Event | None = None

    @property
    def active(self) -> bool:
        return self.limit is not None

    async def reserve(self, upper: float) -> bool:
        """Reserve ``upper`` USD: wait while calls in flight hold the rest; False (and stop for
        good) when even the money not yet charged cannot cover it."""
        if self.limit is None:
            return True
        while True:
            if self.stopped or self.charged + upper > self.limit:
                self.stopped = True
                return False
            if self.charged + self.reserved + upper <= self.limit:
                self.reserved += upper
                return True
            if self._freed is None:
                self._freed = asyncio.Event()
            await self._freed.wait()

    def charge(self, amount: float) -> None:
        """Count money spent outside a reservation (e.g. an abandoned call)."""
        self.charged += amount

    def settle(self, upper: float, charge: float) -> None:
        """Replace a call's reservation by its charge, with no await in between."""
        self.reserved -= upper
        self.charged += charge
        if self._freed is not None:
            freed, self._freed = self._freed, None
            freed.set()
