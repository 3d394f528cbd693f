"""A large ``add_many`` batch whose given vectors are already of unit length is inserted from the
frame's own array, and the copy the index keeps is made on a second thread meanwhile
(``WriteMixin._given_vectors``). What is stored, indexed and ranked is what the copying path gives; the
index never holds the caller's memory; a refused or failed call stores nothing and leaves no copy
running; a redacted row's vector is replaced in the copy, never in the caller's array."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import memkit as mk
from memkit.embed import check_embeddings
from memkit.store import write
from memkit.store.pipeline import OVERLAP_ROWS, on_thread

NOW = datetime(2026, 1, 1, tzinfo=UTC)
DIM = 8
N = OVERLAP_ROWS + 37


def _unit(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _frame(emb: np.ndarray) -> pl.DataFrame:
    texts = [f"note {i} about {('tea', 'rivers', 'deploys')[i % 3]}" for i in range(len(emb))]
    return pl.DataFrame({"content": texts, "embedding": emb})


def _store() -> mk.MemoryStore:
    return mk.MemoryStore(embedder=mk.HashEmbedder(dim=DIM))


def _stored(store: mk.MemoryStore) -> np.ndarray:
    table = store._con.execute("SELECT embedding FROM memories ORDER BY content_hash, id").fetchnumpy()
    return np.stack(table["embedding"]) if len(table["embedding"]) else np.zeros((0, DIM), np.float32)


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> list[Future[np.ndarray]]:
    """The copies add_many starts (their futures), to see that none is left running."""
    started: list[Future[np.ndarray]] = []

    def slow(fn: Any, *args: Any) -> Any:  # a copy that outlasts a refusal unless the call waits for it
        threading.Event().wait(0.5)
        return fn(*args)

    def spy(fn: Any, *args: Any, name: str) -> Future[Any]:
        started.append(done := on_thread(slow, fn, *args, name=name))
        return done

    monkeypatch.setattr(write, "on_thread", spy)
    return started


def test_check_embeddings_borrows_only_a_contiguous_float32_array_of_unit_rows() -> None:
    unit = _unit(5000)
    unit.flags.writeable = False  # as a polars column's array is
    assert check_embeddings(unit, 5000, DIM, borrow=True) is unit
    assert check_embeddings(unit, 5000, DIM) is not unit  # without borrow: always a copy
    strided = np.asfortranarray(unit)
    assert not np.shares_memory(check_embeddings(strided, 5000, DIM, borrow=True), strided)


@pytest.mark.parametrize("row", [0, 4095, 4096, 4999])  # a block's first or last row, the batch's last
def test_a_row_to_divide_anywhere_makes_the_same_copy_as_the_copying_path(row: int) -> None:
    given = _unit(5000)
    given[row] *= 3.0
    given.flags.writeable = False
    borrowed = check_embeddings(given, 5000, DIM, borrow=True)
    copied = check_embeddings(given, 5000, DIM)
    assert not np.shares_memory(borrowed, given)
    assert np.array_equal(borrowed, copied)  # bit for bit
    assert np.isclose(np.linalg.norm(borrowed[row]), 1.0)


def test_a_bulk_write_stores_and_indexes_what_the_copying_path_does(copies: list[Future[np.ndarray]]) -> None:
    emb = _unit(N)
    frame = _frame(emb)
    with _store() as a, _store() as b:
        a.add_many(frame, namespace="u", now=NOW)  # borrowed: N >= OVERLAP_ROWS
        for part in (frame[: N // 2], frame[N // 2 :]):  # below OVERLAP_ROWS each: copied as before
            b.add_many(part, namespace="u", now=NOW)
        assert np.array_equal(_stored(a), _stored(b))
        assert np.array_equal(a._index.emb[: a._index.n], b._index.emb[: b._index.n])
        hits = [s.search("tea note", namespace="u", k=5, now=NOW)["content"].to_list() for s in (a, b)]
        assert len(hits[0]) == 5 and hits[0] == hits[1]
        # the index holds its own copy: never the frame's memory
        held = a._index.emb
        assert not np.shares_memory(held, frame["embedding"].to_numpy())
        assert held.flags.writeable and held.base is None
        assert len(copies) == 1 and held is copies[0].result()  # borrowed once (a), copied per call (b)


def test_a_refused_batch_stores_nothing_and_leaves_no_copy_running(copies: list[Future[np.ndarray]]) -> None:
    frame = _frame(_unit(N)).with_columns(
        pl.when(pl.int_range(pl.len()) == N - 1)
        .then(pl.lit("my api key is sk-abcdefghijklmnopqrstuvwx"))
        .otherwise(pl.col("content"))
        .alias("content")
    )
    with _store() as store:
        with pytest.raises(mk.WriteRefused):
            store.add_many(frame, namespace="u", now=NOW)
        assert store.count() == 0 and store._index.n == 0
        assert len(copies) == 1 and copies[0].done()  # started, and ended before the call raised


def test_a_batch_invalid_after_its_vectors_stores_nothing_and_leaves_no_copy_running(
    copies: list[Future[np.ndarray]],
) -> None:
    frame = _frame(_unit(N)).with_columns(importance=pl.lit(2.0))  # out of [0, 1]
    with _store() as store:
        with pytest.raises(mk.ValidationError, match="importance"):
            store.add_many(frame, namespace="u", now=NOW)
        assert store.count() == 0 and store._index.n == 0
        assert len(copies) == 1 and copies[0].done()  # started, and ended before the call raised


def test_a_redacted_rows_vector_is_replaced_in_the_copy_not_in_the_callers_array() -> None:
    emb = _unit(N)
    frame = _frame(emb).with_columns(
        pl.when(pl.int_range(pl.len()) == 7)
        .then(pl.lit("mail alice@example.com about tea"))
        .otherwise(pl.col("content"))
        .alias("content")
    )
    before = frame["embedding"].to_numpy().copy()
    with _store() as store:
        store.add_many(frame, namespace="u", now=NOW)
        index, n = store._index, N  # the index's rows in the frame's order
        assert index.n == n and "alice@example.com" not in index.content[7]
        assert np.array_equal(frame["embedding"].to_numpy(), before)  # the caller's vectors untouched
        own = store.embedder.embed([index.content[7]])[0]  # the redacted text's own vector
        assert np.allclose(index.emb[7], own / np.linalg.norm(own), atol=1e-6)
        assert np.array_equal(np.delete(index.emb[:n], 7, axis=0), np.delete(emb, 7, axis=0))


def test_a_read_only_store_refuses_before_the_vectors_are_checked_or_copied(
    copies: list[Future[np.ndarray]], tmp_path: Path
) -> None:
    path = tmp_path / "s.duckdb"
    with mk.MemoryStore(path, embedder=mk.HashEmbedder(dim=DIM), create=True):
        pass
    with mk.MemoryStore(path, embedder=mk.HashEmbedder(dim=DIM), read_only=True) as store:
        with pytest.raises(mk.MemkitError, match="read-only"):
            store.add_many(_frame(_unit(N)), namespace="u", now=NOW)
    assert copies == []
