"""A PostgreSQL session that outlives its connection: what :class:`~memkit.store.postgres.PgConnection`
does when the server ends it (a restart, a failover, an idle timeout).

The next statement connects again, with the session's settings (each ``SET`` the store ran, once its
transaction committed), and then it depends on what was cut short:

==========================================  ====================================================
lost during                                 then
==========================================  ====================================================
a statement on its own that reads, sets     it runs again on the new connection
or purges (``SELECT``, ``SET``, ``VACUUM``,
``ANALYZE``)
any statement not yet sent                  it runs on the new connection
a statement inside a transaction            ConnectionLost(retryable=True): the server rolled
                                            the transaction back; every later statement of it
                                            is refused the same way until its ``ROLLBACK``
                                            (as PostgreSQL refuses them in an aborted one), and
                                            its ``COMMIT`` raises instead of committing half
``COMMIT`` (sent)                           ConnectionLost(retryable=False): it may or may not
                                            have been stored, and only a read can tell
``ROLLBACK``                                nothing to undo on the new connection
a statement on its own that writes          ConnectionLost(retryable=False)
anything while :meth:`pinned`               ConnectionLost(retryable=False), no new connection:
                                            a session-level lock (the migration's) is gone
==========================================  ====================================================

The store's transaction loop (:meth:`~memkit.store.core.StoreCore._tx`) runs a retryable one again
from its ``BEGIN``; ``store.transaction()`` turns it into ConflictError (run the block again).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import ConnectionLost

__all__ = ["SessionMixin"]

_AGAIN = (
    "SELECT",
    "SET",
    "SHOW",
    "VACUUM",
    "ANALYZE",
)  # safe to run twice: reads, settings, an erasure's purge
_TRIES = (0.0, 0.2, 1.0)  # seconds before each try to connect again (a server that restarts)


class SessionMixin:
    """The session state of a PostgreSQL connection and what happens when it is lost (module doc)."""

    psycopg: Any
    con: Any
    where: str  # the server, for messages (no password)

    def _connect(self) -> Any:
        """A new connection with the session the store expects (PgConnection)."""
        raise NotImplementedError

    def _cannot_connect(self, error: BaseException) -> str:
        """Why connecting failed, for a message (PgConnection)."""
        raise NotImplementedError

    def _init_session(self) -> None:
        """No transaction, no settings yet."""
        self.in_tx = False  # a BEGIN is open (as far as the store knows)
        self.lost_tx = False  # ... and the server already rolled it back with its connection
        self.session: dict[str, tuple[str, Any]] = {}  # SET name -> (statement, values), committed
        self._tx_session: dict[str, tuple[str, Any]] = {}  # SETs of the open transaction
        self.reconnects = 0  # connections opened again after one was lost (tests, diagnostics)
        self._pinned = 0

    def setting(self, name: str) -> Any:
        """The values of the session's last ``SET name`` (the open transaction's included), or None."""
        found = self._tx_session.get(name) or self.session.get(name)
        return None if found is None else found[1]

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Inside, the session holds something a new connection would not (a session-level
        advisory lock): a lost connection is an error, never silently replaced."""
        self._pinned += 1
        try:
            yield
        finally:
            self._pinned -= 1

    def _statement(
        self, head: str, run: Callable[[], Any], setting: tuple[str, str, Any] | None = None
    ) -> Any:
        """``run()`` the statement that starts with ``head`` (upper case), keeping the session's
        state: its transaction, and ``setting`` ``(name, statement, values)`` of a ``SET``."""
        if self.lost_tx:
            return self._refused(head)
        try:
            out = self._guarded(head, run)
        except BaseException:
            if head in ("COMMIT", "ROLLBACK"):  # refused or not, the server's transaction has ended
                self._end_tx(commit=False)
            raise
        if head == "BEGIN":
            self.in_tx = True
        elif head in ("COMMIT", "ROLLBACK"):
            self._end_tx(commit=head == "COMMIT")
        elif setting is not None:  # a transaction that rolls back takes its SETs along
            name, statement, values = setting
            (self._tx_session if self.in_tx else self.session)[name] = (statement, values)
        return out

    def _end_tx(self, commit: bool) -> None:
        """The transaction ended: its settings stay (commit) or go."""
        if commit:
            self.session.update(self._tx_session)
        self._tx_session.clear()
        self.in_tx = self.lost_tx = False

    def _refused(self, head: str) -> None:
        """A statement of a transaction that was lost with its connection: only its end runs."""
        if head == "ROLLBACK":  # nothing left to undo
            self._end_tx(commit=False)
            return None
        if head == "COMMIT":
            self._end_tx(commit=False)
            raise ConnectionLost(
                f"the connection to {self.where} was lost inside this transaction: the server rolled it"
                " back, nothing of it is stored (run it again)",
                retryable=True,
            )
        raise ConnectionLost(
            f"the connection to {self.where} was lost inside this transaction: nothing more runs in it"
            " until it is rolled back (the server already did; run it again)",
            retryable=True,
        )

    def _guarded(self, head: str, run: Callable[[], Any]) -> Any:
        """``run()``; when the connection is (or turns out) lost, connect again and go on as the
        module docstring's table says."""
        sent = not self.con.broken  # psycopg knows a lost connection once something failed on it
        lost: BaseException | None = None
        if sent:
            try:
                return run()
            except self.psycopg.OperationalError as e:
                if not self.con.broken:  # the server answered (a lock timeout, a serialization failure)
                    raise
                lost = e
        if self._pinned:
            raise ConnectionLost(
                f"the connection to {self.where} was lost while it held a session lock (a migration);"
                " open the store again",
                retryable=False,
            ) from lost
        self._reconnect(lost)
        if head == "ROLLBACK":  # a new connection has no transaction: nothing to undo
            return run()
        if head == "COMMIT":
            if not sent:
                raise ConnectionLost(
                    f"the connection to {self.where} was lost before this transaction's COMMIT: the"
                    " server rolled it back, nothing of it is stored (run it again)",
                    retryable=True,
                ) from lost
            raise ConnectionLost(
                f"the connection to {self.where} was lost while committing: the write may or may not be"
                " stored (the store has reconnected; read it back to know)",
                retryable=False,
                uncertain=True,
            ) from lost
        if self.in_tx:
            self.lost_tx = True
            raise ConnectionLost(
                f"the connection to {self.where} was lost inside a transaction: the server rolled it"
                " back, nothing of it is stored (the store has reconnected; run it again)",
                retryable=True,
            ) from lost
        if sent and head not in _AGAIN and head != "BEGIN":
            raise ConnectionLost(
                f"the connection to {self.where} was lost during a statement that writes: it may or"
                " may not have taken effect (the store has reconnected)",
                retryable=False,
                uncertain=True,
            ) from lost
        return run()

    def _reconnect(self, lost: BaseException | None) -> None:
        """A new connection in place of the lost one (three tries over about a second), else
        ConnectionLost saying why."""
        error: BaseException | None = None
        for wait in _TRIES:
            time.sleep(wait)
            try:
                con = self._connect()
            except (self.psycopg.Error, ValueError) as e:
                error = e
                continue
            old, self.con = self.con, con
            self.reconnects += 1
            old.close()
            return
        raise ConnectionLost(
            f"the connection was lost ({lost or 'found broken'}) and could not be opened again:"
            f" {self._cannot_connect(error)}",  # type: ignore[arg-type]
            retryable=False,
        ) from lost
