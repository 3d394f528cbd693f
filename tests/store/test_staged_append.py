"""A large batch that grows the index has its append prepared on a second thread while DuckDB inserts
it (:mod:`memkit.store.staging`): the index ends up exactly as the append on the write's own thread
leaves it; a write that fails leaves the index untouched; and a stage the index has moved past since
is not taken (the append is made from the start)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import numpy as np
import polars as pl
import pytest

import memkit as mk
import memkit.store.staging as staging
from memkit.portable.rows import build_frame
from memkit.store.index import SearchIndex
from memkit.store.staging import STAGE_ROWS, Staged, stage
from memkit.store.vectors import index_cols

NOW = datetime(2026, 1, 1, tzinfo=UTC)
DIM = 8
N = STAGE_ROWS + 100


def _frame(n: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    texts = [f"note {i} about {w}" for i, w in enumerate(rng.choice(["tea", "rivers", "deploys"], n))]
    return pl.DataFrame(
        {
            "content": texts,
            "embedding": rng.standard_normal((n, DIM)).astype(np.float32),
            "importance": rng.uniform(0.05, 1, n),
            "tags": [["a", "b"][: i % 3] for i in range(n)],
            "kind": rng.choice(["fact", "event", "preference"], n).tolist(),
        }
    )


def _rows(n: int, seed: int = 0) -> tuple[dict[str, object], np.ndarray]:
    f = _frame(n, seed)
    cols = build_frame(f.drop("embedding"), "ns", "alice", NOW)
    assert cols is not None
    emb = f["embedding"].to_numpy().copy()
    return cols, emb / np.linalg.norm(emb, axis=1, keepdims=True)


_ARRAYS = ("emb", "ids", "content", "key", "tags", "ns", "owner", "creator", "status", "access", "layer",
           "kind", "importance", "half_life_h", "access_count", "created_us", "last_access_us",
           "valid_from_us", "valid_until_us", "expire_us", "open_us", "shut_us")  # fmt: skip


def _same(a: SearchIndex, b: SearchIndex) -> None:
    assert (a.n, a.cap, a.version, len(a.row)) == (b.n, b.cap, b.version, len(b.row))
    for c in _ARRAYS:
        x, y = getattr(a, c)[: a.n], getattr(b, c)[: b.n]
        assert x.dtype == y.dtype and np.array_equal(x, y), c
    assert a.names.code == b.names.code and a.tag_codes.code == b.tag_codes.code
    assert [r.tolist() for r in a._tag_rows] == [r.tolist() for r in b._tag_rows]
    assert [v.tolist() for v in a._tag_vals] == [v.tolist() for v in b._tag_vals]
    assert a.row.find(list(a.ids[: a.n])).tolist() == list(range(a.n))


@pytest.mark.parametrize("first", [0, 700])  # into an empty index; growing one that holds rows
def test_a_staged_append_leaves_the_index_as_the_plain_one(first: int) -> None:
    plain, staged = SearchIndex(DIM), SearchIndex(DIM)
    if first:
        cols, emb = _rows(first, seed=1)
        for ix in (plain, staged):
            ix.append(index_cols(cols), emb.copy())
    cols, emb = _rows(N)
    plain.append(index_cols(cols), emb.copy())
    before = {c: getattr(staged, c) for c in _ARRAYS}
    s = stage(staged, cols, emb, index_cols)
    assert s is not None
    s.wait()
    assert all(getattr(staged, c) is a for c, a in before.items()) and staged.n == first  # not yet
    staged.append(s.columns(), emb, s)
    assert all(getattr(staged, c) is s.shadow.__dict__[c] for c in _ARRAYS)  # the shadow's arrays
    _same(staged, plain)


def test_a_stage_is_not_taken_once_the_index_has_changed() -> None:
    cols, emb = _rows(N)
    ix, plain = SearchIndex(DIM), SearchIndex(DIM)
    s = stage(ix, cols, emb, index_cols)
    assert s is not None
    s.wait()
    for index in (ix, plain):
        index.version += 1  # (what any change does: a status set, an erasure)
    ix.append(s.columns(), emb, s)
    plain.append(index_cols(cols), emb.copy())
    # made again (the batch becomes the matrix of an empty index either way)
    assert all(getattr(ix, c) is not s.shadow.__dict__[c] for c in _ARRAYS[1:])
    _same(ix, plain)
    assert stage(ix, *_rows(10)[::1], index_cols) is None  # a few rows: no stage
    big = SearchIndex(DIM)
    big._alloc(4 * N)
    assert stage(big, cols, emb, index_cols) is None  # no growth: no stage


def _store_rows(store: mk.MemoryStore) -> list[tuple[object, ...]]:
    sql = "SELECT content, importance, kind, tags, embedding FROM memories ORDER BY content"
    return store._con.execute(sql).fetchall()


@pytest.mark.parametrize("kind", ["exact", "int8"])
def test_a_store_writes_and_ranks_as_without_a_stage(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    published: list[bool] = []
    publish = Staged.publish

    def spy(self: Staged, index: object) -> bool:
        published.append(publish(self, index))
        return published[-1]

    monkeypatch.setattr(Staged, "publish", spy)
    out = []
    for rows in (STAGE_ROWS, 10**9):  # staged; every append on the write's thread
        monkeypatch.setattr(staging, "STAGE_ROWS", rows)
        with mk.MemoryStore(embedder=mk.HashEmbedder(dim=DIM), index=kind) as store:
            store.add_many(_frame(N), namespace="ns", now=NOW)
            store.add_many(_frame(2 * N, seed=2), namespace="ns", now=NOW)  # grows the index again
            hits = store.search("tea rivers", namespace="ns", k=10, now=NOW, tags=["a"])
            ix = store._index
            vectors = [ix.emb] if kind == "exact" else [ix.codes, ix.scale]
            out.append(
                (
                    _store_rows(store),
                    hits.drop("id").rows(),
                    ix.n,
                    ix.cap,
                    [v[: ix.n].tolist() for v in vectors],
                )
            )
    assert published == [True, True]
    assert out[0] == out[1]


def test_a_failed_write_leaves_the_index_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    with mk.MemoryStore(embedder=mk.HashEmbedder(dim=DIM)) as store:
        store.add_many(_frame(100), namespace="ns", now=NOW)
        ix = store._index
        before = {c: getattr(ix, c) for c in _ARRAYS}
        state, rows = (ix.n, ix.cap, ix.version, len(ix.row)), _store_rows(store)
        started: list[Staged] = []
        real = staging.Staged.__init__

        def spy(self: Staged, *a: object) -> None:
            real(self, *a)
            started.append(self)

        def broken(*a: object, **k: object) -> None:
            raise RuntimeError("disk full")

        monkeypatch.setattr(staging.Staged, "__init__", spy)
        monkeypatch.setattr(type(store), "_events", broken)
        with pytest.raises(RuntimeError, match="disk full"):
            store.add_many(_frame(N, seed=3), namespace="ns", now=NOW)
        assert len(started) == 1 and not started[0]._thread.is_alive()  # waited for, then dropped
        assert store._index is ix and (ix.n, ix.cap, ix.version, len(ix.row)) == state
        assert all(getattr(ix, c) is a for c, a in before.items())
        assert _store_rows(store) == rows
        assert not [t for t in threading.enumerate() if t.name == "memkit-index-stage"]


def test_an_error_in_the_stage_fails_the_write_and_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # raised on the stage's thread only: the write raises it (before its commit), not an append made again
    fill = SearchIndex.fill

    def broken(self: SearchIndex, *a: object) -> None:
        if threading.current_thread().name == "memkit-index-stage":
            raise MemoryError("no room for the grown columns")
        fill(self, *a)

    monkeypatch.setattr(SearchIndex, "fill", broken)
    with mk.MemoryStore(embedder=mk.HashEmbedder(dim=DIM)) as store:
        store.add_many(_frame(100), namespace="ns", now=NOW)
        ix = store._index
        state, rows = (ix.n, ix.cap, ix.version, len(ix.row)), _store_rows(store)
        with pytest.raises(MemoryError, match="no room"):
            store.add_many(_frame(N, seed=3), namespace="ns", now=NOW)
        assert store._index is ix and (ix.n, ix.cap, ix.version, len(ix.row)) == state
        assert _store_rows(store) == rows and store.count() == 100
        assert not [t for t in threading.enumerate() if t.name == "memkit-index-stage"]
        store.add_many(_frame(50, seed=4), namespace="ns", now=NOW)  # a small write: no stage
        assert ix.n == store.count() == 150


def test_publishing_takes_only_what_the_stage_grew() -> None:
    # what the index gained meanwhile (a cache a reader built: here the BM25 postings) is kept
    class Postings:
        def __init__(self) -> None:
            self.added: list[int] = []

        def add(self, texts: list[str], first: int) -> None:
            self.added.append(first)

    ix, plain = SearchIndex(DIM), SearchIndex(DIM)
    cols, emb = _rows(N)
    s = stage(ix, cols, emb, index_cols)
    assert s is not None
    s.wait()
    ix.keyword = postings = Postings()
    ix.append(s.columns(), emb, s)
    assert ix.keyword is postings and postings.added == [0]
    plain.append(index_cols(cols), emb.copy())
    _same(ix, plain)
