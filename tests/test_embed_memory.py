"""Embedding without extra copies: what bulk ingestion relies on to stay within 2x the matrix.

HashEmbedder adds its features in chunks, l2_normalize takes its norms by blocks of rows, and the
store normalizes an embedder's fresh output in place. Each must give exactly the numbers of the
plain computation, and an array the store does not own must never change."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import polars as pl
import pytest

import memkit as mk
from memkit.embed import FusedEmbedder, HashEmbedder, l2_normalize
from memkit.embed.hashing import _CHUNK, _ROWS, check_embeddings

NOW = datetime(2026, 1, 1, tzinfo=UTC)
WORDS = "tea coffee alice bob hangzhou deploy report 杭州 咖啡 会议 报告 I like black coffee".split()


def test_hash_embedder_rows_do_not_depend_on_the_batch_they_are_embedded_in() -> None:
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(WORDS, int(rng.integers(0, 30)))) for _ in range(4000)] + ["", "!!"]
    emb = HashEmbedder()
    together = emb.embed(texts)
    assert sum(len(emb.features(t)) for t in texts) > 2 * _CHUNK  # the batch spans several chunks
    alone = np.vstack([emb.embed([t]) for t in texts])
    np.testing.assert_array_equal(together, alone)  # bit for bit
    assert not together[-2:].any()  # texts without features stay zero


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_l2_normalize_by_blocks_equals_the_plain_division(dtype: type) -> None:
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((2 * _ROWS + 5, 16)) * rng.uniform(0.1, 10, (2 * _ROWS + 5, 1))).astype(dtype)
    x[3] = 0.0
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    expected = x / np.where(norms == 0, 1.0, norms)
    np.testing.assert_array_equal(l2_normalize(x), expected)
    y = x.copy()
    assert l2_normalize(y, inplace=True) is y
    np.testing.assert_array_equal(y, expected)


def test_check_embeddings_normalizes_in_place_only_an_array_it_may_change() -> None:
    x = np.array([[3.0, 4.0], [0.0, 2.0]], np.float32)
    out = check_embeddings(x, 2, 2, fresh=True)
    assert out is x and x.tolist() == [[0.6000000238418579, 0.800000011920929], [0.0, 1.0]]
    y = np.array([[3.0, 4.0]], np.float32)
    assert check_embeddings(y, 1, 2) is not y and y.tolist() == [[3.0, 4.0]]  # not fresh: a copy
    y.flags.writeable = False
    assert check_embeddings(y, 1, 2, fresh=True) is not y  # read-only: a copy
    z = np.array([[3.0, 4.0]])  # float64: converted, so the input is untouched anyway
    assert check_embeddings(z, 1, 2, fresh=True) is not z and z.tolist() == [[3.0, 4.0]]


class _TableEmbedder:
    """An embedder that hands out rows of a table it keeps (not a fresh array, no ``fresh_output``)."""

    dim, name = 4, "table-4"

    def __init__(self) -> None:
        self.table = np.arange(1.0, 4 * 64 + 1, dtype=np.float32).reshape(64, 4)

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.table[: len(texts)] if len(texts) <= 64 else np.ones((len(texts), 4), np.float32)


def test_the_store_never_changes_an_array_an_embedder_keeps() -> None:
    emb = _TableEmbedder()
    before = emb.table.copy()
    with mk.MemoryStore(embedder=emb) as store:
        store.add_many(pl.DataFrame({"content": [f"m{i}" for i in range(40)]}), namespace="u", now=NOW)
        store.add("one more", namespace="u", now=NOW)
        assert store.count() == 41
    np.testing.assert_array_equal(emb.table, before)


def test_fresh_embedders_say_so_and_a_bulk_load_keeps_their_vectors() -> None:
    assert (
        HashEmbedder().fresh_output
        and FusedEmbedder([(HashEmbedder(), 1), (HashEmbedder(64), 1)]).fresh_output
    )
    texts = [f"{WORDS[i % len(WORDS)]} {i}" for i in range(3000)]
    with mk.MemoryStore() as store:
        store.add_many(pl.DataFrame({"content": texts}), namespace="u", now=NOW)
        ix = store._index
        # the store checks what the embedder returns; rows already of unit length are kept bit for bit
        np.testing.assert_array_equal(ix.vectors(np.arange(3000)), HashEmbedder().embed(texts))


class _Memo(HashEmbedder):
    """A subclass that keeps what it returned (a memo): its arrays are not the store's to change."""

    def __init__(self) -> None:
        super().__init__(dim=64)
        self.memo: dict[tuple[str, ...], np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        key = tuple(texts)
        if key not in self.memo:
            self.memo[key] = super().embed(texts)
        return self.memo[key]


def test_a_subclass_that_overrides_embed_is_not_taken_as_fresh() -> None:
    memo = _Memo()
    assert not memo.fresh_output  # it must say so itself; HashEmbedder's flag covers HashEmbedder.embed
    texts = [f"memory number {i} about topic {i % 7}" for i in range(3000)]
    with mk.MemoryStore(embedder=memo) as store:
        store.add_many(pl.DataFrame({"content": texts}), namespace="a", now=NOW)
        kept = memo.memo[tuple(texts)].copy()
        assert store._index.emb is not memo.memo[tuple(texts)]  # the store holds its own copy
        store.delete(store.frame("a")["id"][0], namespace="a", now=NOW)
        np.testing.assert_array_equal(memo.memo[tuple(texts)], kept)  # erasure zeroed the store's row only
        store.add_many(pl.DataFrame({"content": texts}), namespace="b", now=NOW)
        assert np.all(np.linalg.norm(store._index.vectors(np.arange(3000, 6000)), axis=1) > 0.99)


def test_a_converted_copy_is_normalized_in_place_and_the_input_kept() -> None:
    x = np.array([[3.0, 4.0]])  # float64: converted to a new float32 array, which is the store's own
    out = check_embeddings(x, 1, 2)
    assert out.dtype == np.float32 and x.tolist() == [[3.0, 4.0]]
    np.testing.assert_array_equal(out, l2_normalize(np.array([[3.0, 4.0]], np.float32)))
    assert check_embeddings([[3, 4]], 1, 2).tolist() == out.tolist()  # a list: same numbers


def test_given_unit_vectors_are_stored_exactly_and_never_adopted() -> None:
    """A caller's vectors already of unit length are kept bit for bit (dividing by a norm within float32
    rounding of 1 would move their last bits), and the store keeps its own copy: changing the caller's
    array afterwards, or erasing a row, touches only one side."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((500, 384), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    assert not np.array_equal(x, l2_normalize(x))  # a second division would move some bits
    given = x.copy()
    with mk.MemoryStore(embedder=HashEmbedder(dim=384)) as store:
        store.add_many(pl.DataFrame({"content": [f"m{i}" for i in range(500)], "embedding": given}),
                       namespace="u", now=NOW)  # fmt: skip
        stored = np.vstack(store.frame("u", include_embedding=True)["embedding"].to_numpy())
        np.testing.assert_array_equal(stored, x)
        np.testing.assert_array_equal(store._index.vectors(np.arange(500)), x)
        store.delete(store.frame("u")["id"][0], namespace="u", now=NOW)
        np.testing.assert_array_equal(given, x)  # the erasure zeroed the store's row, not the caller's
        given[:] = 0  # the caller's array changes: the store's does not
        np.testing.assert_array_equal(store._index.vectors(np.arange(1, 500)), x[1:])
    arr = np.ones((2, 4), np.float32) / 2
    out = check_embeddings(arr, 2, 4)
    assert not np.shares_memory(out, arr) and np.array_equal(out, arr)  # the caller's: an exact copy
    mixed = np.array([[0.6, 0.8], [3.0, 4.0], [0.0, 0.0]], np.float32)
    assert check_embeddings(mixed, 3, 2).tolist() == [[0.6000000238418579, 0.800000011920929]] * 2 + [[0, 0]]


def test_a_batch_of_new_ids_is_ascending_and_random() -> None:
    from memkit.portable.rows import new_ids

    a, b = new_ids(5000), new_ids(5000)
    assert a == sorted(a) and b == sorted(b) and len(set(a) | set(b)) == 10_000
    assert all(len(i) == 16 and int(i, 16) >= 0 for i in a)
    assert int(a[0], 16) < 2**64 // 100 and int(a[-1], 16) > 2**64 - 2**64 // 100  # spread over 64 bits


class _BufferEmbedder(HashEmbedder):
    """Returns one buffer it keeps and overwrites on every single-text call (allowed: not fresh)."""

    fresh_output = False

    def __init__(self) -> None:
        super().__init__(dim=64)
        self.buf = np.zeros((1, 64), np.float32)

    def embed(self, texts):  # type: ignore[no-untyped-def]
        out = super().embed(texts)
        if len(texts) != 1:
            return out
        self.buf[:] = out  # unit rows: nothing to divide, so the store must still copy them
        return self.buf


def test_an_embedders_reused_buffer_never_becomes_a_cached_query() -> None:
    w = mk.Weights(similarity=1.0, importance=0.0, recency=0.0, keyword=0.0, neighbour=0.0)
    with mk.MemoryStore(embedder=_BufferEmbedder()) as s:
        s.add("tea with milk", namespace="u", now=NOW)
        s.add("rust compiler errors", namespace="u", now=NOW)
        first = s.search("tea", namespace="u", k=1, weights=w, reinforce=False, now=NOW)["content"][0]
        s.search("rust compiler", namespace="u", k=1, weights=w, reinforce=False, now=NOW)  # overwrites buf
        assert s.search("tea", namespace="u", k=1, weights=w, reinforce=False, now=NOW)["content"][0] == first
        assert first == "tea with milk"
