"""Memory id -> index row, as the search index finds its rows (:attr:`IndexColumns.row
<memkit.store.index_columns.IndexColumns>`).

A dict, plus the *blocks* of bulk writes: a batch's new ids are made in ascending order
(:func:`memkit.portable.rows.new_ids`) as one Arrow array of 16-character texts, so its rows are found
by a binary search over those bytes, viewed in place, instead of a million dict entries (building
them took ~0.3-0.4 s of a 1M-row ``add_many``; a lookup in a block costs a few µs instead of ~0.1).
An erased id leaves the dict, or is marked gone in its block; either way it is not found again. A lookup
searches every block, so there are at most :data:`MAX_BLOCKS`: past them (many bulk writes of a few
thousand rows) the smallest block's ids become dict entries, as every write's were before.

>>> import pyarrow as pa
>>> m = RowMap(); m.update([("x", 0)]); m.add_block(pa.array(["00000000000000a1", "00000000000000b2"]), 1)
True
>>> m["x"], m["00000000000000b2"], "00000000000000c3" in m, len(m), m.find(["00000000000000a1", "y"]).tolist()
(0, 2, False, 3, [1, -1])
>>> m.drop(["00000000000000a1"], [1]); "00000000000000a1" in m, len(m)
(False, 2)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import repeat
from typing import Any

import numpy as np
import pyarrow as pa

__all__ = ["BLOCK_ROWS", "RowMap"]

BLOCK_ROWS = 4096
"""An append of this many rows or more whose ids qualify (:meth:`RowMap.add_block`) becomes a block."""
MAX_BLOCKS = 4
"""Blocks held at most: a lookup searches each, so a further block moves the smallest into the dict."""
_WIDTH = 16  # bytes of a block's id: 64 random bits as lowercase hex (memkit.portable.rows.new_ids)


class _Block:
    """One bulk write's ids: ``keys`` ascending (``S16``, a view of the Arrow array's bytes), the row
    of ``keys[j]`` is ``start + j``; ``gone[j]`` once it is erased."""

    __slots__ = ("gone", "ids", "keys", "live", "start")

    def __init__(self, ids: pa.Array, keys: np.ndarray, start: int) -> None:
        self.ids, self.keys, self.start, self.live = ids, keys, start, len(keys)
        self.gone = np.zeros(len(keys), dtype=bool)

    def entries(self) -> Iterable[tuple[str, int]]:
        """The ``(id, row)`` pairs of the ids not gone (what the dict would hold)."""
        rows = np.flatnonzero(~self.gone)
        return zip(self.ids.take(pa.array(rows)).to_pylist(), (rows + self.start).tolist(), strict=True)

    def find(self, q: np.ndarray) -> np.ndarray:
        """Rows of the ``S16`` ids ``q`` -> ``(len(q),)`` int64, -1 where not held (or gone)."""
        pos = np.minimum(np.searchsorted(self.keys, q), len(self.keys) - 1)
        hit = (self.keys[pos] == q) & ~self.gone[pos]
        return np.where(hit, self.start + pos, -1)


class RowMap:
    """A mapping of memory ids to rows: what the index used a dict for (``in``, ``[]``, ``get``,
    ``del``, ``len``, ``update``), plus :meth:`add_block` for a bulk write's ids and the vectorized
    :meth:`find` and :meth:`drop`."""

    def __init__(self) -> None:
        """An empty map."""
        self._one: dict[str, int] = {}
        self._blocks: list[_Block] = []

    # ---------------------------------------------------------------------------------- writes
    def update(self, pairs: Iterable[tuple[str, int]]) -> None:
        """Add ``(id, row)`` pairs one by one (a few rows, or ids that do not qualify for a block)."""
        self._one.update(pairs)

    def add_block(self, ids: Any, start: int) -> bool:
        """Hold the Arrow string array ``ids`` at rows ``start, start + 1, ...`` as one block -> True;
        False (nothing held) unless every id is 16 bytes without a NUL, in strictly ascending order
        (a bulk write's new ids: checked here, in C, not trusted)."""
        if not isinstance(ids, (pa.Array, pa.ChunkedArray)):
            return False
        if isinstance(ids, pa.ChunkedArray):
            if ids.num_chunks != 1:
                return False
            ids = ids.chunk(0)
        m = len(ids)
        if not m or ids.type != pa.string() or ids.null_count:
            return False
        _, offsets, data = ids.buffers()
        at = np.frombuffer(offsets, np.int32, m + 1, ids.offset * 4)
        if at[-1] - at[0] != _WIDTH * m or (np.diff(at) != _WIDTH).any():
            return False
        raw = np.frombuffer(data, np.uint8, _WIDTH * m, int(at[0]))
        if not raw.all():  # a NUL byte: numpy's fixed-width bytes would drop it when compared
            return False
        keys = raw.view(f"S{_WIDTH}")
        if m > 1 and not (keys[1:] > keys[:-1]).all():
            return False
        if len(self._blocks) >= MAX_BLOCKS:  # many bulk writes: the smallest block becomes dict entries
            small = min(self._blocks, key=lambda b: b.live)
            self._blocks.remove(small)
            self._one.update(small.entries())
        self._blocks.append(_Block(ids, keys, start))
        return True

    def drop(self, ids: Sequence[str], rows: Sequence[int]) -> None:
        """Forget ``ids`` held at ``rows`` (row-aligned, as :meth:`find` gave them)."""
        for i in ids:
            self._one.pop(i, None)
        if self._blocks:
            rows = np.asarray(rows, dtype=np.int64)
            for b in self._blocks:
                j = np.unique(rows[(rows >= b.start) & (rows < b.start + len(b.keys))] - b.start)
                j = j[~b.gone[j]]
                b.gone[j] = True
                b.live -= len(j)

    def __delitem__(self, memory_id: str) -> None:
        """``del m[id]``: KeyError if it is not held."""
        row = self[memory_id]
        self.drop([memory_id], [row])

    # ----------------------------------------------------------------------------------- reads
    def find(self, ids: Sequence[Any]) -> np.ndarray:
        """Rows of ``ids`` -> ``(len(ids),)`` int64, -1 for an id not held."""
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        k = len(ids)
        if not self._one:
            out = np.full(k, -1, np.int64)
        else:
            out = np.fromiter(map(self._one.get, ids, repeat(-1)), np.int64, k)
        if not self._blocks:
            return out
        keyed = [(j, k) for j in np.flatnonzero(out < 0).tolist() if (k := _key(ids[j])) is not None]
        if keyed:
            miss = [j for j, _ in keyed]
            q = np.array([k for _, k in keyed], dtype=f"S{_WIDTH}")
            found = np.full(len(miss), -1, np.int64)
            for b in self._blocks:
                if b.live:
                    found = np.where(found < 0, b.find(q), found)
            out[miss] = found
        return out

    def held(self, ids: Iterable[Any]) -> list[Any]:
        """The ``ids`` this map holds, in their order (an erased one is not held)."""
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        return [i for i, r in zip(ids, self.find(ids).tolist(), strict=True) if r >= 0]

    def rows(self, ids: Sequence[Any]) -> np.ndarray:
        """:meth:`find`, or KeyError naming the first id not held."""
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        rows = self.find(ids)
        if len(rows) and rows.min() < 0:
            raise KeyError(ids[int(np.argmin(rows))])
        return rows

    def get(self, memory_id: Any, default: Any = None) -> Any:
        """The row of ``memory_id``, or ``default``."""
        row = self._one.get(memory_id)
        if row is not None or not self._blocks:
            return default if row is None else row
        key = _key(memory_id)
        for b in self._blocks if key is not None else ():
            j = int(b.keys.searchsorted(key))
            if j < len(b.keys) and b.keys[j] == key and not b.gone[j]:
                return b.start + j
        return default

    def __getitem__(self, memory_id: str) -> int:
        row = self.get(memory_id)
        if row is None:
            raise KeyError(memory_id)
        return row

    def __contains__(self, memory_id: object) -> bool:
        return self.get(memory_id) is not None

    def __len__(self) -> int:
        return len(self._one) + sum(b.live for b in self._blocks)


def _key(memory_id: Any) -> bytes | None:
    """An id as a block holds it (16 bytes of UTF-8), or None when no block can hold it."""
    if type(memory_id) is not str or len(memory_id) != _WIDTH:
        return None
    raw = memory_id.encode("utf-8", "surrogatepass")
    return raw if len(raw) == _WIDTH else None
