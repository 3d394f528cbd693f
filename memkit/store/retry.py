"""What the store runs again when another writer got in its way, and how often it did: ``store.retries``.

A transaction that a concurrent one makes impossible is rolled back, nothing of it kept, and run
again from its start by the store's transaction loop (:meth:`~memkit.store.core.StoreCore._tx`),
after a wait that grows with each attempt, with jitter so that writers in lockstep spread out:

==========  ==================================================================================
backend     what is run again
==========  ==================================================================================
PostgreSQL  a serialization failure (the server refused a SERIALIZABLE transaction, at one of its
            statements or at its ``COMMIT``: another process wrote what it read), a deadlock, a
            connection lost before the ``COMMIT`` (:mod:`memkit.store.pg_session`); up to 12
            attempts. And an import whose ids another process's import stored first: planned
            and written again (:meth:`~memkit.store.portable.PortableMixin.import_`, 5 plans)
DuckDB      "Conflict on update", up to 5 attempts. A file has one writing store (one per file
            per process, :mod:`memkit.store.connect`, and one writing process), whose calls take
            turns under its lock, so on DuckDB it does not happen: ``retries`` stays 0
==========  ==================================================================================

Every entry point that writes goes through that loop: ``add``, ``add_many``, ``approve``,
``resolve``, ``delete``, ``forget``, ``consolidate``, ``import_``, ``reembed``, ``copy_to``'s target,
a search's audit event and reinforcement, the migrations at open. So :attr:`RetryMixin.retries`
counts the runs again of them all, per store object (what another store, another connection,
another process ran again is counted there). Not counted: the last refusal (no attempt left: it is
raised), a ``store.transaction()`` block (memkit never runs your block again: ConflictError says to),
and a read statement sent again on a new connection after a lost one (no transaction ran again).

The count is kept under a lock of its own, so threads sharing a store add to it safely (the loop
runs under the store's lock; an import plans again outside it), and reading it waits for nothing: a
thread may watch it while others write.
"""

from __future__ import annotations

import random
import threading
import time

import duckdb

from .core import StoreCore

__all__ = ["RetryMixin"]


class RetryMixin(StoreCore):
    """Which failed transactions run again, the wait before, and their count (module docstring)."""

    _retried: int  # runs again since the store was made (store.retries), guarded by _retry_lock
    _retry_lock: threading.Lock  # set with _retried by MemoryStore.__init__

    @property
    def retries(self) -> int:
        """How many times this store ran a transaction again because a concurrent one got in its way
        (on PostgreSQL, mostly a transaction the server refused to serialize), since it was made.

        It only grows; compare it with one read earlier. On a DuckDB file it stays 0 (one writing
        store per file). What is counted and what is not: :mod:`memkit.store.retry`.

        >>> import memkit as mk
        >>> store = mk.MemoryStore()
        >>> _ = store.add("用户住在杭州", namespace="u")
        >>> store.retries
        0
        >>> store.close()
        """
        return self._retried

    def _count_retry(self) -> None:
        """One more run again (:attr:`retries`), from any thread."""
        with self._retry_lock:
            self._retried += 1

    def _retryable(self, error: BaseException, attempt: int, retries: int) -> bool:
        """Whether a failed transaction is run again: a write-write conflict (DuckDB's "Conflict on
        update", PostgreSQL's serialization failure or deadlock, a connection lost inside it), with
        attempts left. Counts it and waits first, longer each time, with jitter."""
        if attempt >= retries - 1:
            return False
        if self._pg is not None:
            conflict = self._pg.is_conflict(error)
        else:
            conflict = isinstance(error, duckdb.TransactionException) and "conflict" in str(error).lower()
        if conflict:  # subtle: only real contention sleeps
            self._count_retry()
            time.sleep(0.005 * 2 ** min(attempt, 6) * (0.5 + random.random()))
        return conflict
