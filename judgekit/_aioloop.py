"""An asyncio event loop running in a daemon thread, driven from synchronous code.

judgekit's synchronous entry points (``run_judges``, the simulated server's ``start``) must work
the same from a script and from inside Jupyter, whose own loop is already running in the main
thread. Each owner keeps one :class:`BackgroundLoop` and submits coroutines to it; the calling
thread waits in short slices, so it can refresh a progress bar and still be interrupted.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class BackgroundLoop:
    """A lazily started event loop in a named daemon thread.

    Parameters
    ----------
    name : str
        The thread's name (shown by debuggers and ``py-spy``).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def in_loop_thread(self) -> bool:
        """True when called from the loop's own thread (where blocking on it would deadlock)."""
        return self._thread is not None and threading.current_thread() is self._thread

    def get(self) -> asyncio.AbstractEventLoop:
        """The loop, started on first use (and restarted if its thread died)."""
        with self._lock:
            if self._loop is None or not self.running:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=self._serve, args=(loop,), name=self.name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    @staticmethod
    def _serve(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop and return its future (does not wait)."""
        if self.in_loop_thread():
            coro.close()
            raise RuntimeError(f"{self.name}: cannot wait on the loop from inside its own thread")
        return asyncio.run_coroutine_threadsafe(coro, self.get())

    def run(
        self, coro: Coroutine[Any, Any, T], *, poll: Callable[[], None] | None = None,
        interval: float = 0.1, cancel_timeout: float = 30.0,
    ) -> T:
        """Run ``coro`` on the loop and wait for its result, calling ``poll()`` every ``interval``
        seconds while waiting. Ctrl-C cancels the coroutine, waits up to ``cancel_timeout`` seconds
        for it to unwind (so it can save what it has), and re-raises."""
        future = self.submit(coro)
        try:
            while True:
                try:
                    return future.result(timeout=interval)
                except concurrent.futures.TimeoutError:
                    if poll is not None:
                        poll()
        except KeyboardInterrupt:
            future.cancel()
            with contextlib.suppress(concurrent.futures.CancelledError, concurrent.futures.TimeoutError):
                future.result(timeout=cancel_timeout)
            raise

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the loop (cancelling what still runs on it) and join its thread."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        if thread.is_alive():
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
