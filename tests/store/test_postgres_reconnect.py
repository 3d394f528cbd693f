"""A PostgreSQL store whose connection is lost (a server restart, a failover, an idle session ended)
connects again: reads run again, a transaction cut short runs again from the start or, when it is
the caller's own ``transaction()``, raises ConflictError; a COMMIT cut short says that nobody can
tell whether it was stored. The server ends the session the way a restart would
(``pg_terminate_backend``), from a second connection."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl
import pytest

import memkit as mk
from memkit.store import pg_session, postgres

psycopg = pytest.importorskip("psycopg", reason="the extra memkit[postgres] is not installed")

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def end_session(store: mk.MemoryStore) -> None:
    """The server ends the store's session, as a restart or an idle timeout would."""
    pid = store._pg.con.info.backend_pid
    with psycopg.connect(store._pg.url, autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)


def once(fn: Callable[..., Any], before: Callable[[], None]) -> Callable[..., Any]:
    """``fn`` that runs ``before()`` ahead of its first call only."""
    calls = {"n": 0}

    def wrapped(*a: Any, **kw: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            before()
        return fn(*a, **kw)

    return wrapped


def test_reads_after_a_lost_connection_run_on_a_new_one(url: str) -> None:
    with mk.MemoryStore(url, index="hnsw") as store:
        others = pl.DataFrame({"content": [f"note {i} about the garden" for i in range(80)]})
        store.add_many(others, namespace="u", now=NOW)  # more than a shortlist: HNSW's first pass runs
        m = store.add("the user lives in Hangzhou", namespace="u", now=NOW)
        assert store.search("Hangzhou", namespace="u", now=NOW)["id"][0] == m.id  # SETs hnsw.ef_search
        end_session(store)
        assert store.search("Hangzhou", namespace="u", now=NOW)["id"][0] == m.id
        assert store._pg.reconnects == 1
        # the session's settings came along (memkit's 100, not pgvector's default 40)
        assert store._pg.execute("SHOW hnsw.ef_search").fetchall() == [("100",)]
        assert store.get(m.id, namespace="u").content == "the user lives in Hangzhou"
        end_session(store)
        n = store.add("the user drinks oolong tea", namespace="u", now=NOW)  # BEGIN on a new connection
        assert store.count() == 82 and store._pg.reconnects == 2
        assert store.audit(op="add")["memory_id"].to_list()[-2:] == [m.id, n.id]


def test_a_write_cut_short_is_rolled_back_and_runs_again(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with mk.MemoryStore(url) as store:
        store.add("before", namespace="u", now=NOW)
        # the session ends inside the write's transaction, after its BEGIN
        monkeypatch.setattr(store, "_insert", once(store._insert, lambda: end_session(store)))
        m = store.add("the user drinks oolong tea", namespace="u", key="drink", now=NOW)
        monkeypatch.undo()
        assert store._pg.reconnects == 1
        rows = store.frame(namespace="u")
        assert rows.height == 2 and rows.filter(rows["key"] == "drink")["id"].to_list() == [m.id]  # once
        assert store.audit(op="add").height == 2
        assert store.search("oolong", namespace="u", now=NOW)["id"].to_list()[0] == m.id
        # a bulk write (its rows copied into a temporary table) and an erasure (then VACUUM) too
        monkeypatch.setattr(store, "_insert", once(store._insert, lambda: end_session(store)))
        many = pl.DataFrame({"content": [f"note {i} about the garden" for i in range(50)]})
        ids = store.add_many(many, namespace="u", now=NOW)["id"].to_list()
        monkeypatch.undo()
        assert store.count() == 52 and store.audit(op="add").height == 52 and store._pg.reconnects == 2
        monkeypatch.setattr(store, "_vacuum", once(store._vacuum, lambda: end_session(store)))
        store.delete(ids[0], now=NOW)
        assert store.count() == 51 and store._pg.reconnects == 3


def test_a_callers_transaction_cut_short_is_a_conflict_error(url: str) -> None:
    with mk.MemoryStore(url) as store:
        with pytest.raises(mk.ConflictError, match="connection to the server was lost.*run it again"):
            with store.transaction():
                store.add("first", namespace="u", now=NOW)
                end_session(store)
                store.add("second", namespace="u", now=NOW)
        assert store.count() == 0 and store.audit(op="add").height == 0  # nothing of it
        assert store.search("first", namespace="u", now=NOW).height == 0  # nor in the index
        with store.transaction():  # and run again, it commits
            store.add("first", namespace="u", now=NOW)
            store.add("second", namespace="u", now=NOW)
        assert store.count() == 2
        # a caller that catches the loss inside its block and goes on commits nothing of the block
        with pytest.raises(mk.ConflictError, match="connection to the server was lost"):
            with store.transaction():
                store.add("third", namespace="u", now=NOW)
                end_session(store)
                for text in ("fourth", "fifth"):
                    with pytest.raises(mk.ConnectionLost, match="inside"):
                        store.add(text, namespace="u", now=NOW)
        assert store.count() == 2 and sorted(store.frame(namespace="u")["content"]) == ["first", "second"]
        # the caller's own error survives a rollback whose connection is gone
        with pytest.raises(ValueError, match="the caller's"):
            with store.transaction():
                store.add("sixth", namespace="u", now=NOW)
                end_session(store)
                raise ValueError("the caller's")
        assert store.count() == 2


def test_a_read_whose_commit_may_have_landed_is_not_written_twice(url: str) -> None:
    """A search's event and reinforcement whose COMMIT landed but whose answer was lost: written
    again, they would count twice (a server keeps no journal of reads)."""
    with mk.MemoryStore(url) as store:
        m = store.add("the user drinks oolong tea", namespace="u", now=NOW)
        real = store._pg.con

        class CommitThenDie:  # the COMMIT lands; the session ends before its answer comes back
            def __getattr__(self, name: str) -> Any:
                return getattr(real, name)

            def execute(self, q: str, *a: Any) -> Any:
                out = real.execute(q, *a)
                if q == "COMMIT":
                    end_session(store)
                    real.execute("SELECT 1")  # psycopg notices the loss here, as on a lost answer
                return out

        store._pg.con = CommitThenDie()
        with pytest.raises(mk.ConnectionLost, match="while committing") as e:
            store.search("oolong", namespace="u", now=NOW)
        assert e.value.uncertain and store._pending == []
        assert store.audit(op="search").height == 1  # once, not twice
        assert store.get(m.id, namespace="u").access_count == 1


def test_a_commit_cut_short_may_or_may_not_be_stored(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with mk.MemoryStore(url) as store:
        pg = store._pg

        def execute(query: str, params: Any = ()) -> Any:
            if query == "COMMIT":
                end_session(store)
            return postgres.PgConnection.execute(pg, query, params)

        monkeypatch.setattr(pg, "execute", execute)
        with pytest.raises(mk.ConnectionLost, match="while committing: the write may or may not") as e:
            store.add("the user drinks oolong tea", namespace="u", now=NOW)
        assert not e.value.retryable  # not run again: it might be there twice
        monkeypatch.undo()
        # here the server had not committed; the store reads what is there, and writes again
        assert store.count() == 0 and store.search("oolong", namespace="u", now=NOW).height == 0
        store.add("the user drinks green tea", namespace="u", now=NOW + timedelta(minutes=1))
        assert store.count() == 1


def test_a_server_that_does_not_come_back_is_a_clear_error(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with mk.MemoryStore(url) as store:
        store.add("before", namespace="u", now=NOW)
        end_session(store)
        waits: list[float] = []
        monkeypatch.setattr(pg_session.time, "sleep", waits.append)  # no real waiting in a test

        def refuse() -> Any:
            raise psycopg.OperationalError("connection refused")

        monkeypatch.setattr(store._pg, "_connect", refuse)
        with pytest.raises(mk.ConnectionLost, match="could not be opened again.*connection refused"):
            store.count()
        assert waits == [0.0, 0.2, 1.0]  # three tries over about a second
        monkeypatch.undo()
        assert store.count() == 1  # the server is back: the next call connects
