"""Deferred reads (memkit/store/deferred.py): a search's event and reinforcement are journaled at once,
written in batches, seen by every later statement, replayed once after a crash, never lost."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

import memkit as mk
from memkit.store.deferred import FLUSH_AT

NOW = datetime(2026, 3, 1, tzinfo=UTC)
EMB = mk.HashEmbedder(dim=32)


def _store(path: Path) -> mk.MemoryStore:
    return mk.MemoryStore(str(path), embedder=EMB)


def test_a_search_is_journaled_then_flushed_before_anything_reads_the_file(tmp_path: Path) -> None:
    with _store(tmp_path / "m.duckdb") as s:
        m = s.add("green tea with Alice", namespace="u", now=NOW)
        s.search("green tea", namespace="u", now=NOW + timedelta(hours=1))
        journal = tmp_path / "m.duckdb.reads"
        assert len(s._pending) == 1 and len(journal.read_text().splitlines()) == 1
        assert s.get(m.id, namespace="u").access_count == 1  # the index saw it at once ...
        events = s.audit(namespace="u")  # ... and any read of the file flushes first
        assert events["op"].to_list() == ["add", "search", "read"]  # in the order they happened
        assert s._pending == [] and journal.read_text() == ""
        assert s.frame(namespace="u")["access_count"].to_list() == [1]
    assert not journal.exists()  # closed: everything is in the file


def test_reinforcement_of_many_searches_equals_one_by_one(tmp_path: Path) -> None:
    with _store(tmp_path / "m.duckdb") as s:
        m = s.add("green tea with Alice", namespace="u", importance=0.5, now=NOW)
        for i in range(7):
            s.search("green tea", namespace="u", now=NOW + timedelta(hours=i))
        assert s.flush() == 7
        row = s.frame(namespace="u").row(0, named=True)
        assert row["access_count"] == 7
        assert row["importance"] == pytest.approx(min(1.0, 0.5 + 7 * s.decay.reinforce_step))
        assert row["last_access_at"] == NOW + timedelta(hours=6)
        assert s.flush() == 0
        assert s.get(m.id, namespace="u").importance == pytest.approx(row["importance"])


def test_flush_at_writes_a_full_batch_by_itself(tmp_path: Path) -> None:
    with _store(tmp_path / "m.duckdb") as s:
        s.add("green tea with Alice", namespace="u", now=NOW)
        for _ in range(FLUSH_AT):
            s.search("green tea", namespace="u", now=NOW, reinforce=False)
        assert s._pending == []  # the FLUSH_AT-th read flushed the batch


def _crash_after_searching(path: Path, searches: int) -> str:
    """A child process that adds, searches ``searches`` times and dies without closing -> the id."""
    code = f"""
import os
from datetime import datetime, timezone, timedelta
import memkit as mk
s = mk.MemoryStore({str(path)!r}, embedder=mk.HashEmbedder(dim=32))
now = datetime(2026, 3, 1, tzinfo=timezone.utc)
m = s.add("green tea with Alice", namespace="u", now=now)
for i in range({searches}):
    s.search("green tea", namespace="u", now=now + timedelta(hours=1 + i))
print(m.id, flush=True)
os._exit(0)  # no close, no flush: what SIGKILL would leave
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_a_crash_loses_no_acknowledged_search(tmp_path: Path) -> None:
    path = tmp_path / "m.duckdb"
    mid = _crash_after_searching(path, 3)
    assert len((tmp_path / "m.duckdb.reads").read_text().splitlines()) == 3  # only in the journal
    with _store(path) as s:  # replayed on open, before the index loads
        assert s.frame(namespace="u")["access_count"].to_list() == [3]
        searches = s.audit(namespace="u").filter(pl.col("op") == "search")
        assert searches["ts"].to_list() == [NOW + timedelta(hours=h) for h in (1, 2, 3)]
        hits = s.search("green tea", namespace="u", now=NOW, reinforce=False)  # a 4th, not reinforcing
        assert hits["id"].to_list() == [mid] and hits["access_count"].to_list() == [3]
    with _store(path) as s:  # and applied once only
        assert s.frame(namespace="u")["access_count"].to_list() == [3]
        assert s.audit(namespace="u").filter(pl.col("op") == "search").height == 4


def test_entries_already_flushed_are_not_applied_twice(tmp_path: Path) -> None:
    """A crash between the flush's commit and the journal's truncation leaves flushed entries in
    the journal: their numbers are at or below meta.journal_seq, so the replay skips them."""
    path = tmp_path / "m.duckdb"
    with _store(path) as s:
        s.add("green tea with Alice", namespace="u", now=NOW)
        s.search("green tea", namespace="u", now=NOW)
        entries = list(s._pending)
        s.flush()
    journal = tmp_path / "m.duckdb.reads"
    journal.write_text("".join(json.dumps(e) + "\n" for e in entries) + '{"n": 99, "ts": "2026-0')  # torn
    with _store(path) as s:
        assert s.frame(namespace="u")["access_count"].to_list() == [1]
        assert s.audit(namespace="u").filter(pl.col("op") == "search").height == 1


def test_inside_a_transaction_a_search_writes_with_it_and_rolls_back_with_it(tmp_path: Path) -> None:
    with _store(tmp_path / "m.duckdb") as s:
        m = s.add("green tea with Alice", namespace="u", now=NOW)
        with pytest.raises(mk.ValidationError), s.transaction():
            s.search("green tea", namespace="u", now=NOW)
            assert s._pending == []  # written in the transaction, not deferred
            s.add("", namespace="u", now=NOW)  # invalid: the whole transaction rolls back
        assert s.get(m.id, namespace="u").access_count == 0  # the index was not touched either
        assert s.audit(namespace="u").filter(pl.col("op") == "search").is_empty()


def test_a_read_only_store_keeps_no_journal(tmp_path: Path) -> None:
    path = tmp_path / "m.duckdb"
    with _store(path) as s:
        s.add("green tea with Alice", namespace="u", now=NOW)
    with mk.MemoryStore(str(path), embedder=EMB, read_only=True) as s:
        s.search("green tea", namespace="u", now=NOW)
        assert s._pending == [] and not (tmp_path / "m.duckdb.reads").exists()


def test_after_reembed_of_a_stale_file_reads_are_journaled_and_a_crash_journal_is_replayed(
    tmp_path: Path,
) -> None:
    """Regression: a stale file never opened its journal, so after reembed() reads were in memory only
    and the numbering restarted (lowering meta.journal_seq), and a crash's journal was left behind."""
    path = tmp_path / "m.duckdb"
    _crash_after_searching(path, 3)  # 3 searches only in the journal (written with dim 32)
    other = mk.HashEmbedder(dim=16)
    with mk.MemoryStore(str(path), embedder=other) as s:  # stale: another embedder's file
        assert s._journal is None
        s.reembed()
        assert s._journal is not None  # writable now: replayed and journaling
        assert s.audit().filter(pl.col("op") == "search").height == 3
        for i in range(2):
            s.search("green tea", namespace="u", now=NOW + timedelta(days=1, hours=i))
    with mk.MemoryStore(str(path), embedder=other) as s:
        assert s.audit().filter(pl.col("op") == "search").height == 5
        assert s.frame(namespace="u")["access_count"].to_list() == [5]


def test_a_closed_store_refuses_a_search(tmp_path: Path) -> None:
    s = _store(tmp_path / "m.duckdb")
    s.add("green tea with Alice", namespace="u", now=NOW)
    s.close()
    with pytest.raises(mk.MemkitError, match="closed"):
        s.search("green tea", namespace="u", now=NOW)


def test_close_frees_the_file_even_when_the_flush_fails_and_keeps_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "m.duckdb"
    s = _store(path)
    s.add("green tea with Alice", namespace="u", now=NOW)
    s.search("green tea", namespace="u", now=NOW)

    def boom(entries: object) -> None:
        raise RuntimeError("disk full")

    s._apply = boom  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        s.close()
    assert (tmp_path / "m.duckdb.reads").exists()  # kept for the next open
    with _store(path) as again:  # the file is free again, and the read is replayed
        assert again.audit(namespace="u").filter(pl.col("op") == "search").height == 1


def test_batched_reinforcement_equals_the_index_bit_for_bit(tmp_path: Path) -> None:
    with _store(tmp_path / "m.duckdb") as s:
        ids = [
            s.add(f"green tea note {i}", namespace="u", importance=0.3 + i / 100, now=NOW).id
            for i in range(8)
        ]
        for i in range(9):
            s.search("green tea", namespace="u", now=NOW + timedelta(hours=i), k=8)
        live = s.search("green tea", namespace="u", now=NOW, k=8, reinforce=False)
        s.flush()
        stored = dict(zip(*s.frame(namespace="u").select("id", "importance"), strict=True))
        assert {r["id"]: r["importance"] for r in live.to_dicts()} == {i: stored[i] for i in ids}


def test_a_search_after_a_delete_in_the_same_transaction_works(tmp_path: Path) -> None:
    with _store(tmp_path / "m.duckdb") as s:
        ms = [s.add(f"green tea note {i}", namespace="u", now=NOW) for i in range(5)]
        with s.transaction():
            s.delete(ms[0].id, namespace="u", now=NOW)
            hits = s.search("green tea", namespace="u", now=NOW)
        assert len(hits) >= 1
        assert ms[0].id not in s.frame(namespace="u")["id"].to_list()
