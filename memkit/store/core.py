"""The store's core: one DuckDB connection, transactions, and the state every part relies on.

:class:`StoreCore` is the base of :class:`~memkit.store.MemoryStore`. It declares every attribute the
other parts (the mixins of this package) use, so a part never reaches for something nobody declared:

==================  ==========================================================================
attribute           what it is
==================  ==========================================================================
``path``            the database file, or ``":memory:"``
``embedder``        the :class:`~memkit.embed.Embedder` whose vectors the file holds
``conflict_policy`` what a keyed write with a different value does (:mod:`memkit.conflicts`)
``decay``           :class:`~memkit.params.DecayParams`: recency scale, floor, reinforcement
``keyword``         :class:`~memkit.params.KeywordParams`: BM25 constants
``guard``           :class:`~memkit.params.GuardParams`: the write-time guard
``weights``...      defaults of search, forget, consolidate (``weights``, ``forget_policy``,
                    ``merge_threshold``, ``merge_distinct_facts``): :class:`memkit.Settings` sets them all
``read_only``       opened read-only: reads work, writes raise
``_secret_names``   which names hold a secret by the store's own rules, judged once each (names.py)
``_index``          the derived :class:`~memkit.store.index.SearchIndex` (numpy), see vectors.py
``_stale``          ``(name, dim)`` of the embedder the file was written with, when it is not
                    ``embedder``: the file is readable (export) but not writable until
                    :meth:`~memkit.store.MemoryStore.reembed`
==================  ==========================================================================

Transactions. :meth:`_tx` runs a function in one DuckDB transaction, rolls back on any error and
retries DuckDB's "Conflict on update" (and PostgreSQL's refusals; which, and how often it did:
:mod:`memkit.store.retry`, ``store.retries``). Work that must follow a commit (mirroring rows into the
numpy index, compacting the file after an erasure) is handed to :meth:`_on_commit`: it runs right
after the commit, or, inside :meth:`transaction` (several calls as one), after the outer commit, and
is dropped on a rollback. So the index never shows a row DuckDB does not have.

Threads. ``with self._lock:`` runs a call alone (every write, every statement: a DuckDB connection serves
one thread at a time); a search's ranking holds ``self._lock.shared()``, beside other rankings but never
beside a write (:mod:`memkit.store.rwlock`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

import duckdb
import polars as pl

from ..embed import Embedder
from ..errors import ConflictError, ConnectionLost, MemkitError, ValidationError
from ..guard.names import SECRET_IN_NAME as _SECRET
from ..guard.names import identity, old_pseudonym
from ..params import DecayParams, ForgetParams, GuardParams, KeywordParams, Weights
from ..schema import check_name, check_time
from .index import SearchIndex
from .names import PSEUDONYM, SecretNames, log_space
from .postgres import PgConnection
from .rwlock import StoreLock
from .stale import stale_error

__all__ = ["StoreCore", "log_space", "utcnow"]  # log_space: memkit.store.names, by the default rules

T = TypeVar("T")


def utcnow() -> datetime:
    """The wall clock, used only when a caller passes no ``now=``."""
    return datetime.now(UTC)


class StoreCore:
    """Connection, transactions and declared state of a store (see the module docstring)."""

    path: str
    embedder: Embedder
    conflict_policy: str
    decay: DecayParams
    keyword: KeywordParams
    guard: GuardParams
    weights: Weights  # search's default weights (memkit.settings)
    forget_policy: ForgetParams  # forget's default policy
    merge_threshold: float  # consolidate's default threshold
    merge_distinct_facts: bool  # consolidate's default MergeParams.distinct_facts
    read_only: bool
    compact_on_erase: bool  # rewrite the file after every erasure (memkit.store.compaction)
    _due: bool  # an erasure left the file to compact (meta.compact_due; memkit.store.compaction)
    _con: duckdb.DuckDBPyConnection | PgConnection | None  # None once closed
    _pg: PgConnection | None  # the PostgreSQL backend's connection (memkit.store.postgres), else None
    _seen_xid: str  # on a server: the snapshot of the last look (changes it did not see are not applied)
    _file: str | None  # resolved path of a file store (None for ":memory:")
    _let_go: Callable[[], object]  # lets the file go (memkit.store.connect.release), once; also at collection
    _lock: StoreLock  # `with _lock:` one call at a time; `_lock.shared()` rankings side by side (rwlock.py)
    _index: SearchIndex
    _revision_base: int  # the revision the current index's version counts from (MemoryStore.revision)
    _erasures_base: int  # the same for MemoryStore.erasures (the index's erasures count from it)
    index: str  # "exact" (float32, the default) or "int8" (memkit.store.quantized), set by MemoryStore
    _stale: tuple[str, int] | None
    _secret_names: SecretNames  # which names hold a secret by the store's own rules, cached (names.py)
    _embed_query: Callable[[str], Any]  # a query's vector, LRU-cached per store (vectors.py)
    _lesson_cache: dict[tuple[str, ...], Any]  # a namespace's names -> its lessons' embeddings (guard.py)
    _lesson_order: str  # ORDER BY of lessons: created_at, write order (pg_schema.lesson_order)
    _depth: int  # > 0 inside a transaction
    _after: list[Callable[[], None]]  # work waiting for the outer commit
    _erased: set[str]  # ids the open transaction erased: the index holds them until its commit
    _pending: list[dict[str, Any]]  # reads whose event and reinforcement wait for a flush (deferred.py)
    _flushing: bool  # a flush is writing them: statements run without triggering another

    def _flush_pending(self) -> None:
        """Write the deferred reads before a statement runs (implemented in memkit.store.deferred)."""
        raise NotImplementedError

    def _check_embedder(self, meta: dict[str, str] | None = None) -> None:
        """On a server, MemkitError if another process re-embedded the store (memkit.store.sync)."""
        raise NotImplementedError

    # ---------------------------------------------------------------------------------- statements
    @property
    def _db(self) -> Any:
        """The open connection, or MemkitError once the store is closed (not DuckDB's own error)."""
        if self._con is None:
            raise MemkitError(f"the store {self.path!r} is closed")
        if self._pending and not self._flushing:  # deferred reads go first (memkit.store.deferred)
            self._flush_pending()
        return self._con

    def _run(self, query: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Execute one statement, fetch its whole result (a half-fetched one blocks DuckDB 2.0)."""
        return self._db.execute(query, list(params)).fetchall()

    def _sql(self, query: str, params: Sequence[Any] = ()) -> pl.DataFrame:
        """Run a read query -> polars frame (fully fetched)."""
        return pl.from_arrow(self._db.sql(query, params=list(params)).to_arrow_table())

    def _secret(self, name: str) -> bool:
        """Whether a name holds a secret by the store's own rules: the built-in secret rules plus
        ``guard.extra_secret_patterns`` (:mod:`memkit.store.names`), judged once per name."""
        return self._secret_names(name, self.guard)

    def _log_space(self, namespace: str | None) -> str | None:
        """A namespace as the audit log keeps it, by the store's own rules (:func:`log_space`)."""
        return log_space(namespace, self._secret)

    def _who(self, requester: str | None) -> str | None:
        """``requester=`` validated and mapped to its identity (:func:`memkit.guard.identity`): a
        name that is PII (an e-mail address) becomes the same pseudonym as the ``owner`` and
        ``created_by`` it is compared with, so access rules hold and the log never keeps it. A name
        holding a pseudonym of an older form is refused (:func:`~memkit.guard.names.old_pseudonym`)."""
        requester = check_name("requester", requester, optional=True)
        if requester is None:
            return None
        if self._secret(requester):  # it would be written into the log
            raise ValidationError("requester", _SECRET)
        if old := old_pseudonym(requester):  # it would match what an older store kept of someone else
            raise ValidationError("requester", f"holds {old}, an older store's pseudonym: give the name")
        return identity(requester)

    def _space(self, namespace: Any, *, optional: bool = False) -> str | None:
        """``namespace=`` of any call, validated (:func:`~memkit.schema.check_name`). One that holds
        a secret is refused for new rows (:meth:`_check_spaces`, in the write pipeline) but still
        reads, erases and forgets what is stored there (a store written before that rule); the audit
        log keeps it as a pseudonym (:meth:`_log_space`)."""
        return check_name("namespace", namespace, optional=optional)

    def _check_spaces(self, namespaces: Iterable[str | None]) -> None:
        """ValidationError naming ``namespace`` if one holds a secret by the store's own rules (a
        key, a password, a match of its extra patterns) or is a pseudonym: a namespace is stored
        with every row and every event, and is never redacted."""
        for ns in set(namespaces):
            if ns is not None and (self._secret(ns) or PSEUDONYM.match(ns)):
                raise ValidationError("namespace", _SECRET)

    def _now(self, now: datetime | None) -> datetime:
        """``now=`` validated, or the wall clock when it is None."""
        return check_time("now", now, optional=True) or utcnow()

    @staticmethod
    def _clock(now: datetime | None) -> Callable[[], datetime]:
        """``now=`` validated -> the call's time, read when asked: ``now``, or the wall clock then (a
        read asks under the store's lock, so the time comes after every write that ran before)."""
        given = check_time("now", now, optional=True)
        return utcnow if given is None else lambda: given

    # -------------------------------------------------------------------------------- transactions
    def _check_writable(self) -> None:
        """Raise MemkitError unless the store may write: not opened read-only, and its vectors are
        the embedder's (a *stale* file, written by another embedder, waits for ``reembed``)."""
        if self.read_only:
            raise MemkitError(f"the store {self.path!r} is open read-only; reopen it without read_only")
        if self._stale is not None:  # the advice depends on who wrote the vectors (a model: its name)
            raise stale_error(self.path, self._stale, self.embedder)

    def _check_dry_run(self, dry_run: object) -> None:
        """``dry_run=`` of a maintenance call: a bool; applying needs a writable store."""
        if not isinstance(dry_run, bool):
            raise ValidationError("dry_run", "must be a bool")
        if not dry_run:
            self._check_writable()

    def _tx(self, fn: Callable[[], T], retries: int = 5) -> T:
        """Run ``fn`` in one transaction (joining an open :meth:`transaction`); roll back on any
        error, retry write-write conflicts."""
        self._check_writable()
        with self._lock:
            if self._depth:  # inside transaction(): its commit or rollback decides
                return fn()
            if self._pg is not None:  # serializable transactions fail more often than DuckDB's
                retries = max(retries, 12)
            for attempt in range(retries):
                self._begin()
                try:
                    out = fn()
                except BaseException as e:
                    self._rollback()
                    if not self._retryable(e, attempt, retries):
                        raise
                    continue
                try:
                    after = self._commit_only()  # PostgreSQL may refuse a serializable transaction here
                except Exception as e:
                    if not self._retryable(e, attempt, retries):
                        raise
                    continue
                self._run_after(after)  # committed: whatever fails now must not run `fn` again
                return out
        raise AssertionError("unreachable")

    def _tx_one(self, query: str, params: Sequence[Any], retries: int = 5) -> None:
        """:meth:`_tx` of one INSERT statement: DuckDB runs a statement outside a transaction as its
        own, so the ``BEGIN`` and ``COMMIT`` round trips (~0.3 ms) are saved; inside
        :meth:`transaction`, or on a server, it is one statement of a transaction as any other.
        Inserts only: DuckDB 2.0.1 skips its write-write conflict check for an UPDATE inside a CTE
        (another connection's committed update is lost), which a transaction's UPDATE would catch."""
        self._check_writable()
        with self._lock:
            if self._depth or self._pg is not None:
                self._tx(lambda: self._run(query, params), retries)
                return
            for attempt in range(retries):
                try:
                    self._run(query, params)  # nothing waits for its commit: no _on_commit work was queued
                    return
                except BaseException as e:  # DuckDB rolled the statement back whole
                    if not self._retryable(e, attempt, retries):
                        raise
        raise AssertionError("unreachable")

    def _retryable(self, error: BaseException, attempt: int, retries: int) -> bool:
        """Whether a failed transaction is run again (counted, after a wait): memkit.store.retry."""
        raise NotImplementedError

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """Several calls as one: everything written inside commits together, or nothing does.

        >>> from datetime import datetime, timezone
        >>> import memkit as mk
        >>> now = datetime(2026, 1, 1, tzinfo=timezone.utc)
        >>> with mk.MemoryStore() as store:
        ...     try:
        ...         with store.transaction():
        ...             _ = store.add("first", namespace="u", now=now)
        ...             _ = store.add("", namespace="u", now=now)   # invalid: the first is undone too
        ...     except mk.ValidationError:
        ...         pass
        ...     store.count()
        0

        Searches inside see the index as it was before the transaction (rows join it at commit),
        less what the transaction erased: a deleted or forgotten memory is gone from them at once.
        Other threads wait until it ends. Nested ``transaction()`` blocks join the outer one. On
        PostgreSQL the block is one SERIALIZABLE transaction: if another process's write makes it
        impossible to serialize, it is rolled back and ConflictError raised (run it again).
        """
        self._check_writable()
        with self._lock:
            if self._depth:
                yield self
                return
            self._begin()
            try:
                yield self
            except BaseException as e:
                self._rollback()
                self._raise_conflict(e)
                raise
            try:
                self._commit()
            except Exception as e:
                self._raise_conflict(e)
                raise

    def _raise_conflict(self, error: BaseException) -> None:
        """On a server, a serialization failure inside :meth:`transaction` (another process wrote
        what it read) or a connection lost inside it is a ConflictError: everything in the block was
        rolled back; run it again."""
        if self._pg is not None and self._pg.is_conflict(error):
            why = (
                "the connection to the server was lost (the store has reconnected)"
                if isinstance(error, ConnectionLost)
                else "another process wrote concurrently what this transaction read"
            )
            message = f"{why}: it was rolled back (nothing of it is stored); run it again"
            raise ConflictError(message) from error

    def _begin(self) -> None:
        """Open the outer transaction; :meth:`_on_commit` work collects from here."""
        self._run("BEGIN TRANSACTION")
        self._depth, self._after, self._erased = 1, [], set()

    def _rollback(self) -> None:
        """Undo the transaction and drop the work waiting for its commit."""
        # subtle: first, so a failing ROLLBACK still leaves no waiting work
        self._depth, self._after, self._erased = 0, [], set()
        self._lesson_cache.clear()  # it may hold lessons the transaction learned or unlearned
        self._run("ROLLBACK")

    def _commit(self) -> None:
        """Commit, then run the waiting work in order (index mirroring, compaction). A failed COMMIT
        leaves nothing waiting: DuckDB has rolled back, so the index must not change either."""
        self._run_after(self._commit_only())

    def _commit_only(self) -> list[Callable[[], None]]:
        """COMMIT -> the work waiting for it (see :meth:`_commit`), out of the transaction."""
        try:
            self._run("COMMIT")
        except BaseException:
            self._depth, self._after, self._erased = 0, [], set()
            raise
        after, self._depth, self._after, self._erased = self._after, 0, [], set()
        return after

    @staticmethod
    def _run_after(after: list[Callable[[], None]]) -> None:
        """The work a committed transaction left waiting, in order."""
        for fn in after:
            fn()

    def _on_commit(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` once the current transaction has committed (now, if none is open)."""
        if self._depth:
            self._after.append(fn)
        else:
            fn()
