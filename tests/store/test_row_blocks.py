"""A bulk write's ids enter the index as one block (:class:`memkit.store.rowmap.RowMap`): found by a
binary search over the batch's ascending ids instead of a million dict entries. The map answers as the
dict did (``in``, ``[]``, ``get``, ``del``, ``len``), erased ids are gone from it, and a store whose
bulk writes took blocks ranks, reinforces, erases and travels in time exactly as one whose writes
took the dict."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

import memkit as mk
import memkit.store.index_columns as index_columns
from memkit.portable.rows import new_ids
from memkit.store import rowmap
from memkit.store.rowmap import BLOCK_ROWS, RowMap

NOW = datetime(2026, 1, 1, tzinfo=UTC)
DIM = 16
N = BLOCK_ROWS + 904  # one bulk write large enough to become a block


def test_a_block_answers_as_a_dict() -> None:
    ids = new_ids(5000)
    m, d = RowMap(), {}
    m.update([("own-id", 0)])
    d["own-id"] = 0
    assert m.add_block(ids.arrow, 1)
    d.update(zip(ids, range(1, 5001), strict=True))
    assert len(m) == len(d) == 5001 and m._one == {"own-id": 0}  # the block took no dict entry
    probe = [*ids[::97], "own-id", "nope", ids[3].upper(), ids[3][:15], ids[3] + "0", 7, None, "é" * 16]
    for i in probe:
        assert (i in m) == (i in d) and m.get(i, -1) == d.get(i, -1)
    assert m.find(probe).tolist() == [d.get(i, -1) for i in probe]
    assert m.held(probe) == [i for i in probe if i in d] and m.held(iter(probe[:3])) == probe[:3]
    assert [m[i] for i in ids[:50]] == list(range(1, 51))
    with pytest.raises(KeyError):
        m["nope"]
    gone = [ids[10], ids[4999], "own-id"]
    m.drop(gone, m.find(gone))
    del m[ids[11]]
    for i in [*gone, ids[11]]:
        del d[i]
    assert len(m) == len(d) == 4997
    assert m.find(ids).tolist() == [d.get(i, -1) for i in ids]
    with pytest.raises(KeyError):
        del m[ids[10]]
    m.update([(ids[10], 9999)])  # written again (an import of the same id): found at its new row
    assert m[ids[10]] == 9999 and len(m) == 4998


@pytest.mark.parametrize(
    "ids",
    [
        pa.array(["b" * 16, "a" * 16]),  # not ascending
        pa.array(["a" * 16, "a" * 16]),  # a repeat
        pa.array(["a" * 16, "b" * 15]),  # another width
        pa.array(["a" * 16, None]),
        pa.array(["a" * 15 + "\0", "b" * 16]),  # a NUL byte
        pa.array(["a" * 16, "b" * 16], pa.large_string()),
        pa.chunked_array([["a" * 16], ["b" * 16]]),
        ["a" * 16, "b" * 16],  # no Arrow array: the ids went through a list that was changed
        None,
    ],
)
def test_ids_that_do_not_qualify_take_no_block(ids: object) -> None:
    m = RowMap()
    assert not m.add_block(ids, 0) and len(m) == 0


def test_a_sliced_array_is_read_at_its_offset() -> None:
    ids = new_ids(100)
    m = RowMap()
    assert m.add_block(ids.arrow.slice(10, 50), 0)
    assert m.find(ids).tolist() == [-1] * 10 + list(range(50)) + [-1] * 40


def _frame(n: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    emb = rng.standard_normal((n, DIM)).astype(np.float32)
    words = np.array("tea coffee river report deploy meeting alice bob".split())
    texts = [" ".join(w) + f" {i}" for i, w in enumerate(words[rng.integers(0, len(words), (n, 4))])]
    return pl.DataFrame({"content": texts, "embedding": emb, "importance": rng.uniform(0.3, 1, n)})


def _story(store: mk.MemoryStore) -> list[object]:
    """What a caller sees of a store after one bulk write: searches (with reinforcement), deletes,
    a time-travelling search, a second bulk write, searches again -- by content, not by id."""
    out: list[object] = []
    ids = store.add_many(_frame(N), namespace="ns", now=NOW)["id"].to_list()
    index = store._index
    assert [index.row[i] for i in ids[::101]] == [index.ids.tolist().index(i) for i in ids[::101]]
    later = NOW + timedelta(hours=1)

    def hits(query: str, at: datetime, **kw: object) -> list[tuple[str, float]]:
        found = store.search(query, namespace="ns", k=8, now=at, **kw)
        return list(zip(found["content"].to_list(), found["score"].to_list(), strict=True))

    out.append(hits("tea river", later))
    for i in ids[5:40:3]:
        store.delete(i, now=later)
    assert all(i not in index.row for i in ids[5:40:3]) and len(index.row) == N - 12
    out.append(hits("coffee report", later + timedelta(minutes=1)))
    out.append(hits("coffee report", NOW + timedelta(minutes=30), reinforce=False))
    store.add_many(_frame(N, seed=1), namespace="ns", now=later + timedelta(minutes=2))
    out.append(hits("deploy meeting", later + timedelta(minutes=3)))
    out.append(store.count(namespace="ns"))
    out.append(sorted(store.frame("ns")["access_count"].to_list()))
    return out


def test_a_store_of_blocks_ranks_as_a_store_of_dict_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    with mk.MemoryStore(embedder=mk.HashEmbedder(dim=DIM)) as store:
        blocks = _story(store)
        assert len(store._index.row._blocks) == 2 and store._index.row._one == {}
    monkeypatch.setattr(index_columns, "BLOCK_ROWS", 10**9)  # the dict, as every write took before
    with mk.MemoryStore(embedder=mk.HashEmbedder(dim=DIM)) as store:
        entries = _story(store)
        assert not store._index.row._blocks
    assert blocks == entries


def test_a_reopened_store_finds_the_same_rows(tmp_path: object) -> None:
    path = f"{tmp_path}/m.duckdb"
    with mk.MemoryStore(path, embedder=mk.HashEmbedder(dim=DIM)) as store:
        ids = store.add_many(_frame(N), namespace="ns", now=NOW)["id"].to_list()
        store.delete(ids[7], now=NOW)
        before = store.search("tea river", namespace="ns", k=5, now=NOW, reinforce=False)
        assert store._index.row.find(ids[:10]).tolist() == [*range(7), -1, 8, 9]
    with mk.MemoryStore(path, embedder=mk.HashEmbedder(dim=DIM)) as store:  # loaded as dict entries
        assert ids[7] not in store._index.row and len(store._index.row) == N - 1
        after = store.search("tea river", namespace="ns", k=5, now=NOW, reinforce=False)
    assert before.drop("id").equals(after.drop("id")) and before["id"].equals(after["id"])


def test_many_bulk_writes_keep_a_few_blocks() -> None:
    # a lookup searches every block: past MAX_BLOCKS the smallest one's ids become dict entries
    batches = [new_ids(64 + i) for i in range(rowmap.MAX_BLOCKS + 3)]
    m, d, at = RowMap(), {}, 0
    for ids in batches:
        assert m.add_block(ids.arrow, at)
        d.update(zip(ids, range(at, at + len(ids)), strict=True))
        at += len(ids)
        if len(batches[0]) + 1 == len(ids):  # an erasure in an early block: not moved to the dict
            m.drop([batches[0][3]], [3])
            del d[batches[0][3]]
    assert len(m._blocks) == rowmap.MAX_BLOCKS
    assert sorted(len(b.keys) for b in m._blocks) == [len(ids) for ids in batches[3:]]
    assert len(m._one) == len(d) - sum(len(ids) for ids in batches[3:]) and len(m) == len(d)
    every = [i for ids in batches for i in ids]
    assert m.find(every).tolist() == [d.get(i, -1) for i in every]
    assert all(m.get(i, -1) == d.get(i, -1) for i in every)
