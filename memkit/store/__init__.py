"""The store: the only package that imports duckdb. See :mod:`memkit.store.memory` for its parts."""

from __future__ import annotations

from .memory import MemoryStore

__all__ = ["MemoryStore"]
