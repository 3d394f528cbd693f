"""Shared fixtures: an injected clock, an in-memory store, small helpers for "nothing changed" checks."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import polars as pl
import pytest

import memkit as mk

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def now() -> datetime:
    """The injected clock of every test (never the wall clock)."""
    return NOW


@pytest.fixture
def later(now: datetime):
    """``later(hours)`` -> now + hours."""
    return lambda hours: now + timedelta(hours=hours)


@pytest.fixture
def store() -> Iterator[mk.MemoryStore]:
    s = mk.MemoryStore()
    try:
        yield s
    finally:
        s.close()


def snapshot(store: mk.MemoryStore) -> tuple[int, pl.DataFrame, pl.DataFrame]:
    """Everything a failed call must leave unchanged: count, memories (with embeddings) and audit log."""
    return store.count(), store.frame(include_embedding=True), store.audit()


def assert_unchanged(store: mk.MemoryStore, before: tuple[int, pl.DataFrame, pl.DataFrame]) -> None:
    count, frame, audit = snapshot(store)
    assert count == before[0]
    assert frame.equals(before[1])
    assert audit.equals(before[2])


class CountingEmbedder:
    """A tiny deterministic embedder that records every text it is asked to embed."""

    name = "counting-8"
    dim = 8

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.extend(texts)
        return mk.HashEmbedder(dim=8).embed(list(texts))


class FixedEmbedder:
    """Returns whatever ``make(n)`` builds: used to feed the store bad embeddings."""

    dim = 8

    def __init__(self, make: Any, name: str = "fixed-8") -> None:
        self.make, self.name = make, name

    def embed(self, texts: Sequence[str]) -> Any:
        return self.make(len(texts))


@pytest.fixture
def counting() -> CountingEmbedder:
    return CountingEmbedder()
