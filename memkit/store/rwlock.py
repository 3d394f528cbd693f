"""The store's lock: many readers at once, or one writer.

A search's ranking only reads the numpy index, and numpy's matrix product releases the GIL, so two
threads can rank at once on two cores. Everything else — every write, anything that changes the
index or runs a statement on the DuckDB connection (which is not safe to share between threads) —
must run alone. :class:`StoreLock` gives both:

- ``with lock:`` takes it **exclusively** (the store's ``self._lock``, as every write and SQL read
  has always taken it). It is re-entrant: the writer may take it again, and may take it shared,
  which is then part of its exclusive hold.
- ``with lock.shared():`` takes it **shared**: any number of threads at once, never beside a writer.
  Re-entrant too. A thread holding it shared must not ask for it exclusively (it would wait for
  itself): that raises RuntimeError instead of hanging.

Writers go first: once a writer waits, new readers wait behind it, so a stream of searches never
starves a write (or ``close``, which takes the lock exclusively and so waits for the readers inside).

>>> lock = StoreLock()
>>> with lock.shared(), lock.shared():   # readers nest
...     lock.readers()
1
>>> with lock, lock.shared():            # a writer reads inside its own hold
...     lock.readers()
0
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["StoreLock"]


class StoreLock:
    """A re-entrant reader-writer lock, writer-preferring (see the module docstring)."""

    def __init__(self) -> None:
        """An unheld lock."""
        self._cond = threading.Condition(threading.Lock())  # guards the fields below
        self._writer: int | None = None  # thread ident of the exclusive holder
        self._depth = 0  # the writer's re-entries (exclusive and shared alike)
        self._readers: dict[int, int] = {}  # thread ident -> shared re-entries
        self._waiting = 0  # writers waiting: new readers queue behind them

    def acquire(self) -> bool:
        """Take the lock exclusively (waits for every reader and any other writer) -> True."""
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:
                self._depth += 1
                return True
            if me in self._readers:
                raise RuntimeError("this thread holds the store's lock shared: it cannot take it exclusively")
            self._waiting += 1
            try:
                while self._writer is not None or self._readers:
                    self._cond.wait()
            finally:
                self._waiting -= 1
            self._writer, self._depth = me, 1
            return True

    def release(self) -> None:
        """Release one exclusive (or, for the writer, nested shared) hold."""
        with self._cond:
            if self._writer != threading.get_ident():
                raise RuntimeError("release of the store's lock by a thread that does not hold it")
            self._depth -= 1
            if not self._depth:
                self._writer = None
                self._cond.notify_all()

    def __enter__(self) -> StoreLock:
        """``with lock:`` — exclusive."""
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        """End of ``with lock:``."""
        self.release()

    @contextmanager
    def shared(self) -> Iterator[None]:
        """``with lock.shared():`` — shared with other readers, never with a writer."""
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:  # inside its own write: already alone
                self._depth += 1
            elif me in self._readers:
                self._readers[me] += 1
            else:
                while self._writer is not None or self._waiting:  # subtle: waiting writers go first
                    self._cond.wait()
                self._readers[me] = 1
        try:
            yield
        finally:
            if self._writer == me:
                self.release()
            else:
                with self._cond:
                    self._readers[me] -= 1
                    if not self._readers[me]:
                        del self._readers[me]
                        self._cond.notify_all()

    def readers(self) -> int:
        """How many threads hold the lock shared now (for tests and diagnostics)."""
        with self._cond:
            return len(self._readers)

    def waiting(self) -> int:
        """How many writers wait for the lock now (for tests and diagnostics)."""
        with self._cond:
            return self._waiting
