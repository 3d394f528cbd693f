"""The search index's embedding storage: a bulk load into an empty index becomes the matrix (no
zeroed copy beside it), every other batch is copied in, and appends, erasure and growth keep rows."""

from __future__ import annotations

import numpy as np
import pytest

from memkit.store.index_columns import IndexColumns

DIM = 8
T0 = 1_700_000_000_000_000  # µs since the epoch


def _cols(start: int, m: int) -> dict[str, object]:
    """``append``'s columns for ``m`` plain memories numbered from ``start``."""
    return {
        "id": [f"m{i}" for i in range(start, start + m)],
        "content": [f"text {i}" for i in range(start, start + m)],
        "key": [None] * m, "tags": [()] * m, "namespace": ["u"] * m, "owner": [None] * m,
        "created_by": [None] * m, "status": ["active"] * m, "access": ["public"] * m,
        "layer": ["long_term"] * m, "kind": ["fact"] * m, "importance": np.full(m, 0.5),
        "half_life_h": np.full(m, 2160.0), "access_count": np.zeros(m, np.int64),
        "created_us": T0 + np.arange(start, start + m, dtype=np.int64),
        "last_access_us": T0 + np.arange(start, start + m, dtype=np.int64),
        "valid_from_us": np.full(m, np.iinfo(np.int64).min),
        "valid_until_us": np.full(m, np.iinfo(np.int64).max),
    }  # fmt: skip


def _unit(rng: np.random.Generator, m: int) -> np.ndarray:
    x = rng.standard_normal((m, DIM), dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_a_bulk_load_into_an_empty_index_becomes_the_matrix_and_later_writes_keep_every_row() -> None:
    rng = np.random.default_rng(0)
    ix = IndexColumns(DIM)
    batch = _unit(rng, 3000)  # more than the initial capacity (1024): the index grows to exactly it
    expected = batch.copy()
    ix.append(_cols(0, 3000), batch)
    assert ix.emb is batch and ix.n == ix.cap == 3000  # adopted: no second matrix was allocated
    more = _unit(rng, 5)
    ix.append(_cols(3000, 5), more)  # grows by doubling, copying the live rows
    assert ix.cap == 6000 and ix.emb is not batch
    np.testing.assert_array_equal(ix.vectors(np.arange(3005)), np.vstack([expected, more]))
    ix.erase(["m7"])
    assert not ix.vectors(np.array([7])).any()  # an erased row's vector is zeroed
    np.testing.assert_array_equal(ix.vectors(np.array([6, 8, 3004])), expected[[6, 8]].tolist() + [more[4]])


@pytest.mark.parametrize("how", ["smaller than the capacity", "a view", "float64", "read-only"])
def test_a_first_batch_that_cannot_become_the_matrix_is_copied(how: str) -> None:
    rng = np.random.default_rng(1)
    ix = IndexColumns(DIM)
    m = 10 if how == "smaller than the capacity" else 2048
    batch = _unit(rng, m + (how == "a view"))
    if how == "a view":
        batch = batch[1:]
    elif how == "float64":
        batch = batch.astype(np.float64)
    elif how == "read-only":
        batch.flags.writeable = False
    expected = batch.astype(np.float32)
    ix.append(_cols(0, m), batch)
    assert ix.emb is not batch and ix.emb.shape == (ix.cap, DIM) and ix.emb.dtype == np.float32
    if batch.flags.writeable:
        batch[:] = 0  # the caller's array is theirs: the index holds its own copy
    np.testing.assert_array_equal(ix.vectors(np.arange(m)), expected)
    assert ix.vectors(np.array([0])).shape == (1, DIM)
