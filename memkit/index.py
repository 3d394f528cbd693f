"""Moved to :mod:`memkit.store.index` (the index is part of the store); kept so old imports work."""

from __future__ import annotations

from .store.index import DELETED, SearchIndex

__all__ = ["DELETED", "SearchIndex"]
