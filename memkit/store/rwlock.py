"""The store's lock: many readers at once, or one writer; whoever waits is served in order.

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

First come, first served. Whoever must wait takes a ticket and is served in ticket order, so
nobody starves: a thread that releases the lock and asks again at once — an int8 or guarded
search in a loop, whose whole call holds the lock alone — queues behind the writers (and
readers) already waiting instead of taking it back before they wake; readers that queued behind
a writer enter together when it is done, while a writer that came after them waits. A reader
that finds nobody waiting enters at once, beside the readers inside.

A search ranks shared, then writes its event alone. ``lock.shared(reserve=True)`` takes its place
in the queue *as it enters*: a write that comes while it ranks is served after its event, so the
event never waits behind (nor has to re-rank after) a write that arrived later, and a ``close``
queued meanwhile closes after it. ``lock.turn(place)`` takes the lock alone at that place;
``lock.cancel(place)`` gives it up (a place neither taken nor cancelled would hold every later
writer back, so callers cancel in ``finally``; cancelling a taken place does nothing).

>>> lock = StoreLock()
>>> with lock.shared(), lock.shared():   # readers nest
...     lock.readers()
1
>>> with lock, lock.shared():            # a writer reads inside its own hold
...     lock.readers()
0
>>> with lock.shared(reserve=True) as place:   # rank here ...
...     pass
>>> with lock.turn(place):                      # ... then write the event, before later writers
...     lock.waiting()
0
>>> lock.cancel(place)                          # (after a taken turn: nothing to give up)
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["StoreLock"]


class StoreLock:
    """A re-entrant reader-writer lock that serves those who wait in the order they came (see the
    module docstring)."""

    def __init__(self) -> None:
        """An unheld lock."""
        self._cond = threading.Condition(threading.Lock())  # guards the fields below
        self._writer: int | None = None  # thread ident of the exclusive holder
        self._depth = 0  # the writer's re-entries (exclusive and shared alike)
        self._readers: dict[int, int] = {}  # thread ident -> shared re-entries
        self._waiting = 0  # writers waiting (for waiting(): tests and diagnostics)
        self._tickets = itertools.count()  # the queue: served lowest ticket first
        # ticket -> (thread, what): a waiting "write" or "read", or a reader's reserved "place"
        self._queued: dict[int, tuple[int, str]] = {}

    def _first(self, ticket: int) -> bool:
        """No ticket before ``ticket`` is queued (a writer's turn)."""
        return min(self._queued) == ticket

    def _no_writer_before(self, ticket: int) -> bool:
        """No writer waits with a ticket before ``ticket`` (a waiting reader's turn)."""
        return not any(t < ticket and what == "write" for t, (_, what) in self._queued.items())

    def _wait(self, ticket: int, ready: Any) -> None:
        """Wait (holding ``_cond``) until ``ready()``, then leave the queue; interrupted, leave it
        too (a ticket left behind would hold everyone after it back)."""
        try:
            while not ready():
                self._cond.wait()
        finally:
            del self._queued[ticket]
            self._cond.notify_all()

    def acquire(self, place: int | None = None) -> bool:
        """Take the lock exclusively (waits for every reader, and for everyone queued before it)
        -> True. ``place``: a ticket from ``shared(reserve=True)``, else a new one."""
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:
                self._depth += 1
                self._queued.pop(place, None)  # type: ignore[arg-type]
                return True
            if me in self._readers:
                raise RuntimeError("this thread holds the store's lock shared: it cannot take it exclusively")
            if place not in self._queued:  # this thread's own reserved place, else the end of the queue
                # (a thread that reserved and asks without its place would otherwise wait for itself)
                mine = [t for t, (who, what) in self._queued.items() if who == me and what == "place"]
                place = min(mine) if mine else next(self._tickets)
            self._queued[place] = (me, "write")  # type: ignore[index]
            self._waiting += 1
            try:
                self._wait(
                    place,  # type: ignore[arg-type]
                    lambda: self._writer is None and not self._readers and self._first(place),  # type: ignore[arg-type]
                )
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
    def turn(self, place: int | None) -> Iterator[None]:
        """``with lock.turn(place):`` — exclusive, at the ``place`` a shared hold reserved."""
        self.acquire(place)
        try:
            yield
        finally:
            self.release()

    def cancel(self, place: int | None) -> None:
        """Give up a reserved ``place`` (nothing if it was taken, cancelled, or None)."""
        if place is None:
            return
        with self._cond:
            if self._queued.pop(place, None) is not None:
                self._cond.notify_all()

    @contextmanager
    def shared(self, reserve: bool = False) -> Iterator[int | None]:
        """``with lock.shared():`` — shared with other readers, never with a writer. With
        ``reserve``, yields a place in the queue taken as the hold begins (None when this thread
        already holds the lock: its writes need no place)."""
        me = threading.get_ident()
        place = None
        with self._cond:
            if self._writer == me:  # inside its own write: already alone
                self._depth += 1
            elif me in self._readers:
                self._readers[me] += 1
            else:
                if self._writer is not None or self._waiting:  # subtle: behind whoever waits already
                    ticket = next(self._tickets)
                    self._queued[ticket] = (me, "read")
                    self._wait(ticket, lambda: self._writer is None and self._no_writer_before(ticket))
                self._readers[me] = 1
                if reserve:  # every writer that comes later queues behind this place
                    place = next(self._tickets)
                    self._queued[place] = (me, "place")
        try:
            yield place
        except BaseException:
            self.cancel(place)
            raise
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
