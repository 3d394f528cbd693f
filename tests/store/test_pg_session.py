"""memkit/store/pg_session.py: what a PostgreSQL connection does when the server ends its session,
row by row of the module's table, on a fake connection (no server needed). The same paths on a
real server: tests/store/test_postgres_reconnect.py."""

from __future__ import annotations

import types
from typing import Any

import pytest

import memkit as mk
from memkit.store import pg_session
from memkit.store.pg_session import SessionMixin


class OperationalError(Exception):
    pass


class Refused(OperationalError):
    """The server answered with an error (a serialization failure): the connection is fine."""


class FakeCon:
    """A connection that records what it ran; ``kill()`` ends its session like the server would:
    psycopg finds out (``broken``) on the next statement, which fails."""

    def __init__(self, log: list[str]) -> None:
        self.log, self.killed, self.broken, self.closed = log, False, False, False
        self.refuse: str | None = None

    def execute(self, q: str) -> str:
        if self.killed:
            self.broken = True
            raise OperationalError("terminating connection due to administrator command")
        if q == self.refuse:
            raise Refused(f"could not serialize access ({q})")
        self.log.append(q)
        return q

    def close(self) -> None:
        self.closed = True


class Session(SessionMixin):
    def __init__(self) -> None:
        self.psycopg = types.SimpleNamespace(OperationalError=OperationalError, Error=OperationalError)
        self.where, self.log, self.down = "postgresql://db", [], False
        self._init_session()
        self.con = self._connect()

    def _connect(self) -> Any:
        if self.down:
            raise OperationalError("connection refused")
        con = FakeCon(self.log)
        for statement, _ in self.session.values():
            con.execute(statement)
        return con

    def _cannot_connect(self, error: BaseException) -> str:
        return f"cannot connect to {self.where}: {error}"

    def run(self, q: str) -> Any:
        head = q.split()[0].upper()
        setting = (q.split()[1], q, [q]) if head == "SET" else None
        return self._statement(head, lambda: self.con.execute(q), setting)


@pytest.fixture(autouse=True)
def _no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg_session.time, "sleep", lambda s: None)


def test_a_read_or_a_setting_runs_again_on_a_new_connection() -> None:
    s = Session()
    s.run("SET hnsw.ef_search = 100")
    s.con.killed = True
    assert s.run("SELECT 1") == "SELECT 1" and s.reconnects == 1
    assert s.log == ["SET hnsw.ef_search = 100", "SET hnsw.ef_search = 100", "SELECT 1"]  # replayed
    s.con.killed = True
    assert s.run("VACUUM memories") == "VACUUM memories"  # an erasure's purge: twice changes nothing


def test_a_write_on_its_own_is_uncertain_unless_it_was_never_sent() -> None:
    s = Session()
    s.con.killed = True
    with pytest.raises(mk.ConnectionLost, match="may or may not have taken effect") as e:
        s.run("INSERT INTO meta VALUES (1)")
    assert not e.value.retryable and e.value.uncertain
    s.con.killed, s.con.broken = True, True  # psycopg already knows: the statement is never sent
    assert s.run("INSERT INTO meta VALUES (2)") == "INSERT INTO meta VALUES (2)"


def test_a_transaction_cut_short_refuses_everything_until_its_rollback() -> None:
    s = Session()
    s.run("BEGIN")
    s.run("INSERT INTO memories VALUES (1)")
    s.con.killed = True
    with pytest.raises(mk.ConnectionLost, match="inside a transaction") as e:
        s.run("INSERT INTO memories VALUES (2)")
    assert e.value.retryable and s.in_tx and s.lost_tx
    with pytest.raises(mk.ConnectionLost, match="nothing more runs"):  # a caller that caught it and went on
        s.run("INSERT INTO memories VALUES (3)")
    with pytest.raises(mk.ConnectionLost, match="rolled it back") as e:  # and its COMMIT does not commit
        s.run("COMMIT")
    assert e.value.retryable and not s.in_tx and not s.lost_tx
    assert s.log == ["BEGIN", "INSERT INTO memories VALUES (1)"]  # nothing after the loss reached a server
    s.run("BEGIN")
    s.con.killed = True
    with pytest.raises(mk.ConnectionLost):
        s.run("SELECT 1")
    assert s.run("ROLLBACK") is None and not s.in_tx  # the end of a lost transaction: nothing to undo


def test_a_lost_rollback_is_no_error_and_a_lost_commit_is_uncertain() -> None:
    s = Session()
    s.run("BEGIN")
    s.con.killed = True
    s.run("ROLLBACK")  # the caller's own error stays the one it sees
    assert not s.in_tx and s.reconnects == 1
    s.run("BEGIN")
    s.con.killed = True
    with pytest.raises(mk.ConnectionLost, match="while committing") as e:
        s.run("COMMIT")
    assert e.value.uncertain and not e.value.retryable and not s.in_tx
    s.run("BEGIN")
    s.con.killed, s.con.broken = True, True  # lost before the COMMIT was sent: certainly rolled back
    with pytest.raises(mk.ConnectionLost, match="before this transaction's COMMIT") as e:
        s.run("COMMIT")
    assert e.value.retryable and not e.value.uncertain


def test_a_refused_commit_ends_the_transaction_and_rolled_back_settings_are_forgotten() -> None:
    s = Session()
    s.run("BEGIN")
    s.run("SET hnsw.ef_search = 40")
    s.con.refuse = "COMMIT"
    with pytest.raises(Refused):
        s.run("COMMIT")
    assert not s.in_tx and s.setting("hnsw.ef_search") is None  # the server undid the SET with it
    s.con.refuse = None
    s.con.killed = True
    assert s.run("SELECT 1") == "SELECT 1"  # a plain read again, not "inside a transaction"
    s.run("BEGIN")
    s.run("SET hnsw.ef_search = 100")
    assert s.setting("hnsw.ef_search") == ["SET hnsw.ef_search = 100"]  # pending inside it
    s.run("COMMIT")
    assert s.session["hnsw.ef_search"][0] == "SET hnsw.ef_search = 100"


def test_a_pinned_session_is_never_replaced_and_a_server_that_stays_down_is_a_clear_error() -> None:
    s = Session()
    with s.pinned():
        s.con.killed = True
        with pytest.raises(mk.ConnectionLost, match="held a session lock"):
            s.run("SELECT 1")
    assert s.reconnects == 0
    s.down = True
    with pytest.raises(mk.ConnectionLost, match="could not be opened again.*connection refused") as e:
        s.run("SELECT 1")
    assert not e.value.retryable
    s.down = False
    assert s.run("SELECT 1") == "SELECT 1" and s.reconnects == 1  # the next call connects
