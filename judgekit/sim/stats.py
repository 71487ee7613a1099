"""Thread-safe counters of the simulated server (read from the test's thread, written on the
server's loop)."""

from __future__ import annotations

import threading
from collections import Counter

__all__ = ["Counters"]


class Counters:
    """Event counts, paid answers per request body and bearer-token digests."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self._events: Counter[str] = Counter()
            self._paid: Counter[str] = Counter()
            self._credentials: Counter[str] = Counter()

    def count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self._events[key] += n

    def paid(self, digest_hex: str, usage: dict | None = None) -> None:
        """One paid answer to the body with this sha256, billed ``usage`` (the true counts)."""
        with self._lock:
            self._events["paid"] += 1
            self._paid[digest_hex] += 1
            for kind in ("prompt", "completion"):
                self._events[f"billed_{kind}_tokens"] += int((usage or {}).get(f"{kind}_tokens", 0))

    def credential(self, digest_hex: str) -> None:
        with self._lock:
            self._credentials[digest_hex] += 1

    def events(self) -> dict[str, int]:
        with self._lock:
            return dict(self._events)

    def paid_counts(self) -> Counter[str]:
        with self._lock:
            return Counter(self._paid)

    def credentials(self) -> Counter[str]:
        with self._lock:
            return Counter(self._credentials)
