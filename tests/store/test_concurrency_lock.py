"""memkit/store/rwlock.py and how search uses it: rankings share the store's lock, writes and close()
take it alone. Deterministic: threads meet at barriers and events, and a helper waits (with a hang
guard, never a timed assertion) until a writer is queued on the lock."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import polars as pl
import pytest

import memkit as mk
from memkit.store.rwlock import StoreLock

NOW = datetime(2026, 1, 1, tzinfo=UTC)
HANG = 30.0  # seconds before a test that would hang fails instead (no timing is asserted)


class Worker(threading.Thread):
    """A thread that keeps its function's result or exception for the test to check."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        super().__init__(daemon=True)
        self.fn, self.result, self.error = fn, None, None
        self.done = threading.Event()

    def run(self) -> None:
        try:
            self.result = self.fn()
        except BaseException as e:  # re-raised by outcome()
            self.error = e
        finally:
            self.done.set()

    def outcome(self) -> Any:
        self.join(HANG)
        assert not self.is_alive(), "the thread hangs"
        if self.error is not None:
            raise self.error
        return self.result


def wait_until(cond: Callable[[], bool]) -> None:
    """Poll ``cond`` until it holds (the hang guard fails the test if it never does)."""
    give_up = threading.Event()
    timer = threading.Timer(HANG, give_up.set)
    timer.start()
    try:
        while not cond():
            assert not give_up.wait(0.001), "the condition never held"
    finally:
        timer.cancel()


def _store(path: str = ":memory:", n: int = 200) -> mk.MemoryStore:
    store = mk.MemoryStore(path)
    texts = [f"note {i} about {'tea' if i % 2 else 'coffee'} and the river" for i in range(n)]
    store.add_many(pl.DataFrame({"content": texts}), namespace="u", now=NOW)
    return store


def _park_rankings(store: mk.MemoryStore, parties: int) -> tuple[threading.Barrier, threading.Event]:
    """Make the index's ranking stop inside: each ranking waits at ``barrier`` (which opens only
    when ``parties`` rankings are inside at once), then until ``go`` is set."""
    barrier, go = threading.Barrier(parties, timeout=HANG), threading.Event()
    ix, rank = store._index, store._index.rank

    def parked(*a: Any, **kw: Any) -> Any:
        barrier.wait()
        assert go.wait(HANG)
        return rank(*a, **kw)

    ix.rank = parked  # the instance's attribute: this index only
    return barrier, go


# ------------------------------------------------------------------------------------ the lock itself
def test_readers_share_and_a_writer_waits_for_them() -> None:
    lock = StoreLock()
    inside, go = threading.Barrier(3, timeout=HANG), threading.Event()

    def read() -> int:
        with lock.shared():
            inside.wait()  # both readers and the test meet here: two readers hold it at once
            assert go.wait(HANG)
            return 1

    readers = [Worker(read) for _ in range(2)]
    for r in readers:
        r.start()
    inside.wait()
    assert lock.readers() == 2
    order: list[str] = []

    def write() -> None:
        with lock:
            order.append("writer")

    def late_read() -> None:
        with lock.shared():
            order.append("late reader")

    writer = Worker(write)
    writer.start()
    wait_until(lambda: lock.waiting() == 1)
    assert not writer.done.is_set()  # queued behind the readers
    late = Worker(late_read)  # a new reader queues behind the waiting writer
    late.start()
    wait_until(lambda: len(lock._queued) == 2)
    assert not late.done.is_set() and lock.readers() == 2
    go.set()
    assert [r.outcome() for r in readers] == [1, 1]
    writer.outcome()
    late.outcome()
    assert order == ["writer", "late reader"] and lock.readers() == 0


def test_reentrant_and_no_upgrade() -> None:
    lock = StoreLock()
    with lock, lock, lock.shared():  # a writer nests, and reads inside its own hold
        assert lock.readers() == 0
    with lock.shared(), lock.shared():
        assert lock.readers() == 1
        with pytest.raises(RuntimeError, match="shared"):  # it would wait for itself
            lock.acquire()
    with lock:  # free again
        pass
    with pytest.raises(RuntimeError, match="does not hold"):
        lock.release()


def test_writers_are_served_in_the_order_they_came() -> None:
    """A holder that releases and asks again at once queues behind the writers already waiting
    (before: it took the lock back before they woke, and a loop of exclusive searches could keep
    a write waiting for minutes)."""
    lock, order = StoreLock(), []
    lock.acquire()

    def write(name: str) -> None:
        with lock:
            order.append(name)

    first, second = Worker(lambda: write("first")), Worker(lambda: write("second"))
    first.start()
    wait_until(lambda: lock.waiting() == 1)
    second.start()
    wait_until(lambda: lock.waiting() == 2)
    lock.release()
    lock.acquire()  # asks again at once: served third
    assert order == ["first", "second"]
    lock.release()
    first.outcome()
    second.outcome()


def test_readers_and_writers_who_wait_are_served_in_the_order_they_came() -> None:
    """Readers queue too: a reader that came between two writers enters after the first and before
    the second (before: any waiting writer kept every reader out, so writers in a loop starved them)."""
    lock, order = StoreLock(), []
    lock.acquire()

    def write(name: str) -> None:
        with lock:
            order.append(name)

    def read(name: str) -> None:
        with lock.shared():
            order.append(name)

    queue = [Worker(lambda: write("w1")), Worker(lambda: read("r1")), Worker(lambda: read("r2")),
             Worker(lambda: write("w2")), Worker(lambda: read("r3"))]  # fmt: skip
    for i, w in enumerate(queue, 1):
        w.start()
        wait_until(lambda i=i: len(lock._queued) == i)  # each queued before the next comes
    lock.release()
    for w in queue:
        w.outcome()
    assert order[0] == "w1" and sorted(order[1:3]) == ["r1", "r2"] and order[3:] == ["w2", "r3"]


def test_a_loop_of_exclusive_holds_lets_a_waiting_writer_in_at_its_next_release() -> None:
    lock, stop, turns = StoreLock(), threading.Event(), {"seen waiting": 0}

    def loop() -> None:  # an int8 or guarded search in a loop: each call holds the lock alone
        while not stop.is_set():
            with lock:
                turns["seen waiting"] += lock.waiting()

    looper = Worker(loop)
    looper.start()
    writer = Worker(lambda: lock.__enter__() and lock.release())
    writer.start()
    writer.outcome()
    stop.set()
    looper.outcome()
    assert turns["seen waiting"] <= 1  # at most the hold during which the writer came


def test_a_reserved_place_is_served_before_later_writers_and_can_be_given_up() -> None:
    lock, order = StoreLock(), []
    ranked, go = threading.Event(), threading.Event()

    def search(give_up: bool) -> None:
        place = None
        try:
            with lock.shared(reserve=True) as place:
                ranked.set()
                assert go.wait(HANG)
            if give_up:
                return
            with lock.turn(place):
                order.append("search")
        finally:
            lock.cancel(place)

    def write() -> None:
        with lock:
            order.append("write")

    for give_up in (False, True):
        order.clear(), ranked.clear(), go.clear()
        reader = Worker(lambda g=give_up: search(g))
        reader.start()
        assert ranked.wait(HANG)
        writer = Worker(write)
        writer.start()
        wait_until(lambda: lock.waiting() == 1)  # came while the search ranked
        go.set()
        reader.outcome()
        writer.outcome()  # a place given up does not hold the writer back
        assert order == (["write"] if give_up else ["search", "write"])
    with lock.shared(reserve=True) as place:  # a thread asking without its place takes that place
        pass
    with lock:
        assert lock.readers() == 0
    lock.cancel(place)
    with pytest.raises(RuntimeError), lock.shared(reserve=True):
        raise RuntimeError("the ranking failed")  # the place is given up with the hold
    writer = Worker(lambda: lock.__enter__() and lock.release())
    writer.start()
    writer.outcome()


# ------------------------------------------------------------------------------------ the store
def test_two_searches_rank_at_once() -> None:
    store = _store()
    barrier, go = _park_rankings(store, parties=2)
    go.set()  # the barrier alone proves it: it opens only with both rankings inside
    search = lambda: store.search("tea", namespace="u", now=NOW, reinforce=False)
    searches = [Worker(search) for _ in range(2)]
    for s in searches:
        s.start()
    first, second = (s.outcome() for s in searches)
    assert first.equals(second) and first.height == 5
    store.close()


def test_a_write_waits_for_the_ranking_and_is_not_half_seen() -> None:
    store = _store()
    barrier, go = _park_rankings(store, parties=1)
    reader = Worker(lambda: store.search("tea", namespace="u", now=NOW, k=10))
    reader.start()
    wait_until(lambda: barrier.n_waiting == 0 and store._lock.readers() == 1)  # parked inside
    writer = Worker(lambda: store.add("tea tea tea", namespace="u", now=NOW))
    writer.start()
    wait_until(lambda: store._lock.waiting() == 1)
    assert not writer.done.is_set() and store._index.n == 200  # the index is untouched meanwhile
    go.set()
    hits = reader.outcome()
    new = writer.outcome()
    assert new.id not in hits["id"].to_list()  # ranked before the write, logged before it too
    assert store.audit(op="search")["seq"].max() < store.audit(op="add")["seq"].max()
    store.close()


def test_a_write_between_ranking_and_logging_ranks_again(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store()
    calls = {"n": 0}
    check = store._check_open

    def write_in_between() -> None:  # the third check opens the search's exclusive part
        calls["n"] += 1
        if calls["n"] == 3:
            store.add("tea tea tea", namespace="u", now=NOW, importance=1.0)
        check()

    monkeypatch.setattr(store, "_check_open", write_in_between)
    hits = store.search("tea tea tea", namespace="u", now=NOW)
    assert calls["n"] == 3 and hits["content"][0] == "tea tea tea"  # the event names what is there
    logged = json.loads(store.audit(op="search")["detail"][0])["ids"]
    assert logged == hits["id"].to_list()
    store.close()


def test_close_waits_for_the_rankings_inside(tmp_path) -> None:
    store = _store(str(tmp_path / "m.duckdb"))
    barrier, go = _park_rankings(store, parties=1)
    reader = Worker(lambda: store.search("coffee", namespace="u", now=NOW))
    reader.start()
    wait_until(lambda: store._lock.readers() == 1 and barrier.n_waiting == 0)
    closer = Worker(store.close)
    closer.start()
    wait_until(lambda: store._lock.waiting() == 1)
    assert store._con is not None  # still open while the search ranks
    go.set()
    assert reader.outcome().height == 5  # it finished, logged, and only then did the store close
    closer.outcome()
    with mk.MemoryStore(str(tmp_path / "m.duckdb")) as again:  # its event reached the file
        assert again.audit(op="search").height == 1
    with pytest.raises(mk.MemkitError, match="closed"):
        store.search("coffee", namespace="u", now=NOW)


def test_searches_beside_writes_match_serial_results(tmp_path) -> None:
    """Two threads searching namespace "u" while a third writes to namespace "w" (a write that does
    not change u's rankings, but changes the index under them): every search equals the serial
    answer, and the index ends equal to one rebuilt from the file."""
    store = _store(str(tmp_path / "m.duckdb"), n=300)
    queries = ["tea river", "coffee", "note 7", "river"]
    later = NOW + timedelta(hours=1)
    serial = {q: store.search(q, namespace="u", now=later, reinforce=False) for q in queries}
    out: list[pl.DataFrame] = []

    def search(t: int) -> None:
        for i in range(40):
            out.append(store.search(queries[(i + t) % 4], namespace="u", now=later, reinforce=False))

    def write() -> None:
        for i in range(40):
            store.add(f"tea and coffee {i}", namespace="w", now=NOW)

    workers = [Worker(lambda t=t: search(t)) for t in range(2)] + [Worker(write)]
    for w in workers:
        w.start()
    for w in workers:
        w.outcome()
    assert len(out) == 80 and all(any(h.equals(s) for s in serial.values()) for h in out)
    ix = store._index
    before = (ix.ids[: ix.n].tolist(), ix.importance[: ix.n].copy())
    store._load_index()
    assert before[0] == store._index.ids[: store._index.n].tolist()
    np.testing.assert_array_equal(before[1], store._index.importance[: store._index.n])
    store.close()
