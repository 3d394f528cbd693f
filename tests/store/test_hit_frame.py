"""A search's result frame is the same whether it is built row by row (a few hits: one call after the
matrix product has left every cache cold) or as columns (more hits): values, dtypes, nulls, empty lists,
time zones, the guard's columns and an empty result."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

import memkit as mk
from memkit.store import hits

NOW = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)


@pytest.fixture(scope="module")
def store() -> mk.MemoryStore:
    s = mk.MemoryStore(embedder=mk.HashEmbedder(dim=64))
    frame = pl.DataFrame({
        "content": [f"note {i} about tea and the river {i % 7}" for i in range(400)],
        "importance": [0.3 + (i % 10) / 15 for i in range(400)],
        "created_at": [NOW - timedelta(hours=3 * i, microseconds=i) for i in range(400)],
        "tags": [["tea", f"t{i % 3}"] if i % 4 == 0 else [] for i in range(400)],
        "layer": ["episodic" if i % 5 else "long_term" for i in range(400)],
    })  # fmt: skip
    s.add_many(frame, namespace="u", now=NOW)
    s.add("住在杭州, likes green tea", namespace="u", key="city", now=NOW)
    s.add("lives in Paris, drinks tea", namespace="u", key="city", conflict_policy="flag", now=NOW)  # pending
    s.add("tea ceremony on friday", namespace="u", kind="event", now=NOW)
    return s


def _both(monkeypatch: pytest.MonkeyPatch, search: object) -> tuple[pl.DataFrame, pl.DataFrame]:
    monkeypatch.setattr(hits, "ROWS_AT_MOST", 10**6)
    by_rows = search()  # type: ignore[operator]
    monkeypatch.setattr(hits, "ROWS_AT_MOST", 0)
    by_columns = search()  # type: ignore[operator]
    return by_rows, by_columns


@pytest.mark.parametrize("k", [1, 5, 300])
@pytest.mark.parametrize("guard", [False, True])
def test_rows_and_columns_build_the_same_frame(
    store: mk.MemoryStore, monkeypatch: pytest.MonkeyPatch, k: int, guard: bool
) -> None:
    def search() -> pl.DataFrame:
        return store.search("tea 杭州", namespace="u", k=k, now=NOW, reinforce=False, guard=guard)

    by_rows, by_columns = _both(monkeypatch, search)
    assert by_rows.schema == by_columns.schema
    assert by_rows.equals(by_columns, null_equal=True)
    assert by_rows.height == min(k, by_rows.height) > 0
    assert by_rows["created_at"].dtype == pl.Datetime("us", "UTC")
    # the frame holds what the store holds: a hit's datetimes to the microsecond, its tags, its note
    first = by_rows.row(0, named=True)
    assert store.get(first["id"], namespace="u").created_at == first["created_at"]
    if k > 5:
        assert by_rows["tags"].list.len().max() == 2 and by_rows["tags"].list.len().min() == 0
        city = by_rows.filter(pl.col("key") == "city")
        assert city.height == 1 and city["pending"].to_list() == [["lives in Paris, drinks tea"]]


def test_an_empty_result_has_every_column(store: mk.MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    def search() -> pl.DataFrame:
        return store.search("tea", namespace="u", k=5, now=NOW, reinforce=False, layer="short_term")

    by_rows, by_columns = _both(monkeypatch, search)
    assert by_rows.height == by_columns.height == 0
    assert by_rows.schema == by_columns.schema and "pending" in by_rows.columns
