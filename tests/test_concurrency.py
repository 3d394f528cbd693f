"""Concurrency: threads sharing one store, DuckDB write-write conflicts retried, one writer process.

How the store is shared: one DuckDB connection and one readers-writer lock per store
(memkit/store/rwlock.py). Writes and every other call hold it alone, so they are serialized (never
interleaved inside one call) and the derived search index and DuckDB always move together; a search's
ranking holds it shared, so searches from several threads rank side by side, then take it alone for
their event and reinforcement (README "Threads"). A second process is refused with ``StoreLocked``
(tests/test_store.py, tests/test_hardening.py).
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

import memkit as mk

NOW = datetime(2026, 1, 1, tzinfo=UTC)
S = timedelta(seconds=1)
WRITERS, READERS, WRITES = 3, 3, 25


def _run_threads(targets) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(targets))

    def wrap(fn):
        def go() -> None:
            try:
                barrier.wait(timeout=60)
                fn()
            except BaseException as e:  # noqa: BLE001 - collected and re-raised by the test
                errors.append(e)

        return go

    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return errors


def test_threads_reading_and_writing_one_store(tmp_path: Path) -> None:
    path = str(tmp_path / "m.duckdb")
    store = mk.MemoryStore(path, embedder=mk.HashEmbedder(dim=64), conflict_policy="supersede")
    written: dict[int, list[str]] = {w: [] for w in range(WRITERS)}
    done = threading.Event()
    seen: list[int] = []

    def writer(w: int):
        def run() -> None:
            for i in range(WRITES):
                t = NOW + (w * WRITES + i) * S
                # every writer also rewrites the same shared key: the versions race for one slot
                m = store.add(f"writer {w} note {i}", namespace="shared", now=t)
                k = store.add(f"value {w}.{i}", namespace="shared", key="contended", now=t)
                written[w] += [m.id, k.id]
                if i % 5 == 4:
                    batch = store.add_many(pl.DataFrame({"content": [f"bulk {w}.{i}.{j}" for j in range(3)]}),
                                           namespace="shared", now=t)  # fmt: skip
                    written[w] += batch["id"].to_list()
                if i % 7 == 6:
                    store.delete(written[w].pop(0), now=t)

        return run

    def reader() -> None:
        while not done.is_set():
            hits = store.search("note", namespace="shared", k=10_000, now=NOW + 10_000 * S, min_strength=0.0)
            current = store.read("contended", namespace="shared", now=NOW + 10_000 * S)
            assert current is None or current.key == "contended"
            assert hits["id"].n_unique() == hits.height
            seen.append(hits.height)

    def writers_then_stop() -> None:
        errs = _run_threads([writer(w) for w in range(WRITERS)])
        done.set()
        if errs:
            raise errs[0]

    errors = _run_threads([writers_then_stop, *([reader] * READERS)])
    assert not errors, errors
    assert seen, "the readers never ran"
    # nothing lost, nothing doubled, and exactly one current version of the contended key
    alive = {i for ids in written.values() for i in ids}
    frame = store.frame()
    assert alive <= set(frame["id"])
    live = frame.filter((pl.col("key") == "contended") & (pl.col("status") == "active"))
    assert live.height == 1
    # the derived index agrees with DuckDB (a search sees exactly the active rows)
    hits = store.search(
        "x", namespace="shared", k=10_000, now=NOW + 10_000 * S, min_strength=0.0, reinforce=False
    )
    assert set(hits["id"]) == set(frame.filter(pl.col("status") == "active")["id"])
    store.close()
    with mk.MemoryStore(path, embedder=mk.HashEmbedder(dim=64)) as again:
        assert (
            again.frame()
            .drop("last_access_at", "access_count", "importance")
            .equals(frame.drop("last_access_at", "access_count", "importance"))
        )


def test_concurrent_reinforcement_loses_no_update() -> None:
    with mk.MemoryStore() as store:
        m = store.add("the one memory", namespace="u", now=NOW)
        per_thread = 30

        def hammer() -> None:
            for _ in range(per_thread):
                store.search("memory", namespace="u", now=NOW + S)

        assert not _run_threads([hammer] * 4)
        assert store.get(m.id).access_count == 4 * per_thread
        assert store._index.access_count[store._index.row[m.id]] == 4 * per_thread
        assert store.audit(op="search").height == 4 * per_thread


def test_write_write_conflict_is_retried() -> None:
    """A real DuckDB "Conflict on update": another connection holds an uncommitted update of the row.
    The first attempt conflicts; the other side commits; the retry wins."""
    with mk.MemoryStore() as store:
        m = store.add("x", namespace="u", now=NOW)
        other = store._db.cursor()
        other.execute("BEGIN TRANSACTION")
        other.execute("UPDATE memories SET importance = 0.7 WHERE id = ?", [m.id])
        attempts = []

        def write() -> None:
            attempts.append(1)
            try:
                store._run("UPDATE memories SET importance = 0.6 WHERE id = ?", [m.id])
            except Exception:
                if len(attempts) == 1:
                    other.execute("COMMIT")  # the competing transaction finishes
                raise

        store._tx(write)
        assert len(attempts) == 2
        assert store._run("SELECT importance FROM memories WHERE id = ?", [m.id]) == [(0.6,)]
        other.close()


def test_conflict_that_never_clears_raises_and_writes_nothing() -> None:
    with mk.MemoryStore() as store:
        m = store.add("x", namespace="u", now=NOW)
        other = store._db.cursor()
        other.execute("BEGIN TRANSACTION")
        other.execute("UPDATE memories SET importance = 0.7 WHERE id = ?", [m.id])
        attempts = []

        def write() -> None:
            attempts.append(1)
            store._run("INSERT INTO meta VALUES ('probe', 'x')")  # would be written with the update
            store._run("UPDATE memories SET importance = 0.6 WHERE id = ?", [m.id])

        with pytest.raises(Exception, match="Conflict"):
            store._tx(write, retries=3)
        assert len(attempts) == 3
        other.execute("ROLLBACK")
        other.close()
        assert store._run("SELECT count(*) FROM meta WHERE name = 'probe'") == [(0,)]
        assert store.get(m.id).importance == 0.5
        store.add("still works", namespace="u", now=NOW)


def test_non_conflict_errors_are_not_retried() -> None:
    with mk.MemoryStore() as store:
        attempts = []

        def write() -> None:
            attempts.append(1)
            raise mk.ValidationError("x", "boom")

        with pytest.raises(mk.ValidationError):
            store._tx(write)
        assert attempts == [1]


def test_a_wall_clock_search_during_a_key_update_always_finds_one_version() -> None:
    """Searches and reads with ``now=None`` while another thread supersedes a key: the clock was read
    before the lock, so an update that ran first was "written after now" while its old version was
    already superseded, and ~1 search in 4 found no version of the key at all."""
    store = mk.MemoryStore(embedder=mk.HashEmbedder(dim=64), conflict_policy="supersede")
    store.add("value -1 of city", namespace="u", key="city")
    stop, seen = threading.Event(), []

    def writer() -> None:
        try:
            for i in range(150):
                store.add(f"value {i} of city", namespace="u", key="city")
        finally:
            stop.set()

    def searcher() -> None:
        while not stop.is_set():
            hits = store.search("value city", namespace="u", k=10, min_strength=0.0, reinforce=False)
            current = store.read("city", namespace="u")
            seen.append((hits.height, current is not None))

    errors = _run_threads([writer, searcher, searcher])
    assert not errors, errors
    assert seen and set(seen) == {(1, True)}
