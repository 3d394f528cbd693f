"""memkit/store/deferred.py: a refusal is audited even when the transaction around it rolls back.

A write the guard or the access rules refuse logs a ``deny`` event. Inside ``store.transaction()``
(which a LangGraph batch, an adapter's import and ``memkit import --from`` all open) that event was
written with the transaction, and the refusal rolled it back with everything else: the refusal left
no trace. Now it is audited again after the rollback, once; a transaction that commits keeps it once.
Runs on DuckDB and PostgreSQL (tests/conftest.py CONTRACT)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import memkit as mk

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SECRET = "my password is hunter22!"


def _denials(store: mk.MemoryStore) -> list[dict[str, object]]:
    return store.audit(op="deny").select("requester", "detail").to_dicts()


def test_a_refusal_inside_a_rolled_back_transaction_is_audited_once(backend: str) -> None:
    with mk.MemoryStore() as store:
        with pytest.raises(mk.WriteRefused), store.transaction():
            store.add("the user likes tea", namespace="u", requester="bot", now=NOW)
            store.add(SECRET, namespace="u", requester="bot", now=NOW)
        assert store.count() == 0  # the transaction's writes are gone...
        assert [d["requester"] for d in _denials(store)] == ["bot"]  # ...its refusal is not


def test_an_access_refusal_inside_a_rolled_back_transaction_is_audited(backend: str) -> None:
    with mk.MemoryStore() as store:
        mine = store.add("alice's diary", namespace="u", requester="alice", access="private", now=NOW)
        with pytest.raises(mk.AccessDenied), store.transaction():
            store.add("a note", namespace="u", requester="bob", now=NOW)
            store.delete(mine.id, namespace="u", requester="bob", now=NOW + timedelta(minutes=1))
        assert [d["requester"] for d in _denials(store)] == ["bob"] and store.count() == 1


def test_a_refusal_caught_inside_a_committed_transaction_is_audited_once(backend: str) -> None:
    with mk.MemoryStore() as store:
        with store.transaction():
            with pytest.raises(mk.WriteRefused):
                store.add(SECRET, namespace="u", requester="bot", now=NOW)
            store.add("the user likes tea", namespace="u", requester="bot", now=NOW)
        assert store.count() == 1 and len(_denials(store)) == 1


def test_a_refused_multi_namespace_import_is_audited(backend: str) -> None:
    records = [
        {"id": "a", "memory": "Likes hiking", "user_id": "alice"},
        {"id": "b", "memory": f"Said: {SECRET}", "user_id": "bob"},
    ]
    with mk.MemoryStore() as store:
        with pytest.raises(mk.WriteRefused):
            mk.adapters.add_frame(store, mk.adapters.mem0_frame({"results": records}), now=NOW)
        assert store.count() == 0 and len(_denials(store)) == 1


def test_a_langgraph_batch_refused_by_the_guard_is_audited(backend: str) -> None:
    pytest.importorskip("langgraph")
    from memkit.integrations.langgraph import MemkitStore

    with mk.MemoryStore() as store:
        lg = MemkitStore(store, requester="bot", now=lambda: NOW)
        with pytest.raises(mk.WriteRefused):
            lg.put(("memories", "u"), "pw", {"memory": SECRET})
        assert store.count() == 0 and [d["requester"] for d in _denials(store)] == ["bot"]


@pytest.mark.duckdb_only("a COMMIT made to fail by hand: the server's own case is a serialization failure")
def test_a_refusal_survives_a_commit_that_fails(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with mk.MemoryStore() as store:
        run = store._run

        def failing_commit(query: str, params: object = ()) -> object:
            if query == "COMMIT":  # as a failed COMMIT leaves it: rolled back, and an error
                run("ROLLBACK")
                raise RuntimeError("commit refused")
            return run(query, params)  # type: ignore[arg-type]

        with pytest.raises(RuntimeError, match="commit refused"), store.transaction():
            with pytest.raises(mk.WriteRefused):
                store.add(SECRET, namespace="u", requester="bot", now=NOW)
            store.add("the user likes tea", namespace="u", requester="bot", now=NOW)
            monkeypatch.setattr(store, "_run", failing_commit)
        monkeypatch.setattr(store, "_run", run)
        assert store.count() == 0 and [d["requester"] for d in _denials(store)] == ["bot"]


@pytest.mark.duckdb_only("the journal is made to fail by hand")
def test_a_refusal_that_cannot_be_audited_after_the_rollback_warns(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not silently: the transaction's own error is raised, and a warning names what was lost."""

    def disk_full(*args: object) -> None:
        raise OSError("disk full")

    with mk.MemoryStore() as store:
        with (
            pytest.warns(RuntimeWarning, match="could not be audited"),
            pytest.raises(RuntimeError, match="undo"),
        ):
            with store.transaction():
                with pytest.raises(mk.WriteRefused):
                    store.add(SECRET, namespace="u", requester="bot", now=NOW)
                monkeypatch.setattr(store, "_defer", disk_full)  # the re-deferral after the rollback
                raise RuntimeError("undo")
