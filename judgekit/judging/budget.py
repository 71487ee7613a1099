"""The spending limit of a run: reserve an upper bound before a call, settle it on the answer.

Every method that changes the money runs without an ``await`` inside, so no other call can be
sent between a call's answer and its charge, and no call is sent against money a call in flight
may still spend.
"""

from __future__ import annotations

import asyncio

__all__ = ["Budget", "Reservation"]


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
            self.reserved += upper
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


class Reservation:
    """The part of the budget one call holds: its upper bound, while it is in flight.

    Examples
    --------
    >>> import asyncio
    >>> budget = Budget(1.0)
    >>> money = Reservation(budget, 0.4)
    >>> asyncio.run(money.take())
    True
    >>> asyncio.run(money.renew()), budget.charged   # an attempt that may have been billed
    (True, 0.4)
    >>> money.settle(0.1); round(budget.charged, 10), budget.reserved
    (0.5, 0.0)
    """

    def __init__(self, budget: Budget, upper: float) -> None:
        self.budget, self.upper, self.held = budget, upper, False

    async def take(self) -> bool:
        """Reserve the upper bound (False: the budget cannot cover it; nothing is held)."""
        self.held = await self.budget.reserve(self.upper)
        return self.held

    async def renew(self) -> bool:
        """The last attempt may have been billed: charge it at the upper bound, then reserve
        for the next attempt (False when the budget cannot cover it)."""
        self.settle(self.upper)
        return await self.take()

    def settle(self, charge: float) -> None:
        """Replace the reservation by ``charge`` (no await in between)."""
        if self.held:
            self.held = False
            self.budget.settle(self.upper, charge)
