"""The columns of the ``memories`` table and the types that carry them out of DuckDB and back in.

A portable file carries whatever columns the store's table has (the store reads them from
``information_schema`` as :class:`Column`\\ s), so a column added by a later migration travels
without a change here, as long as its type is one of these:

==========================  ======================  =====================  ==========================
DuckDB type                 in the file (JSON)      polars (export frame)  pyarrow (import batch)
==========================  ======================  =====================  ==========================
VARCHAR                     string                  String                 string
JSON                        any value (embedded)    String (its text)      string (its text)
DOUBLE / FLOAT              number                  Float64 / Float32      float64 / float32
INTEGER / BIGINT            whole number            Int32 / Int64          int32 / int64
BOOLEAN                     true / false            Boolean                bool
TIMESTAMP WITH TIME ZONE    ISO-8601, UTC, µs       Datetime(us, UTC)      timestamp(us, UTC)
VARCHAR[]                   list of strings         List(String)           list<string>
==========================  ======================  =====================  ==========================

Any other type (a user's ``BLOB`` column, say) stops an export or import with a
:class:`~memkit.errors.MemkitError` naming the column, rather than losing it. An import inserts its
rows as one Arrow table built by :func:`arrow_batch`.

>>> polars_type(Column("valid_from", "TIMESTAMP WITH TIME ZONE", True))
Datetime(time_unit='us', time_zone='UTC')
>>> arrow_type(Column("tags", "VARCHAR[]", False))
ListType(list<item: string>)
"""

from __future__ import annotations

import binascii
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import polars as pl
import pyarrow as pa

from ..errors import MemkitError

__all__ = [
    "ArrowList", "Column", "arrow_array", "arrow_batch", "arrow_type", "bulk_insert", "hex_array",
    "polars_type", "repeated",
]  # fmt: skip


class Column(NamedTuple):
    """One column of the store's ``memories`` table: name, DuckDB type, nullable."""

    name: str
    sql_type: str  # as information_schema spells it: VARCHAR, TIMESTAMP WITH TIME ZONE, VARCHAR[], ...
    nullable: bool  # NOT NULL columns must be present (or have a Memory default) in every line


_TYPES = {  # DuckDB type -> (polars, pyarrow) type that carries it; JSON travels as its text
    "VARCHAR": (pl.String(), pa.string()),
    "JSON": (pl.String(), pa.string()),
    "DOUBLE": (pl.Float64(), pa.float64()),
    "FLOAT": (pl.Float32(), pa.float32()),
    "INTEGER": (pl.Int32(), pa.int32()),
    "BIGINT": (pl.Int64(), pa.int64()),
    "BOOLEAN": (pl.Boolean(), pa.bool_()),
    "TIMESTAMP WITH TIME ZONE": (pl.Datetime("us", "UTC"), pa.timestamp("us", tz="UTC")),
    "VARCHAR[]": (pl.List(pl.String()), pa.list_(pa.string())),
}


def _types(col: Column) -> tuple[pl.DataType, pa.DataType]:
    """The (polars, pyarrow) pair of a column, or MemkitError for a type the format cannot carry."""
    t = col.sql_type.upper()
    if t not in _TYPES:
        raise MemkitError(
            f"column {col.name!r} has type {col.sql_type}, which the portable format cannot carry"
        )
    return _TYPES[t]


def polars_type(col: Column) -> pl.DataType:
    """DuckDB column type -> the polars type that carries it (``JSON`` travels as its text)."""
    return _types(col)[0]


def arrow_type(col: Column) -> pa.DataType:
    """DuckDB column type -> the pyarrow type of a bulk insert (built in C from Python lists)."""
    return _types(col)[1]


def arrow_batch(cols: dict[str, Any], columns: Sequence[Column], emb: np.ndarray | None) -> pa.Table:
    """The rows to insert as one Arrow table: every column typed as the table's, plus ``embedding``
    ``(n, dim)`` as a fixed-size list (pyarrow converts the Python lists in C, column by column). A
    column may also come as an Arrow array already.

    >>> batch = arrow_batch({"id": ["a"]}, [Column("id", "VARCHAR", False)], np.ones((1, 2)))
    >>> batch.schema.field("embedding").type
    FixedSizeListType(fixed_size_list<item: float>[2])
    """
    arrays = {c.name: arrow_array(cols[c.name], arrow_type(c)) for c in columns}
    if emb is not None:
        n, dim = emb.shape
        flat = np.ascontiguousarray(emb, dtype=np.float32).ravel()  # no copy when it is float32 already
        arrays["embedding"] = pa.FixedSizeListArray.from_arrays(pa.array(flat), dim)
    return pa.table(arrays)


def repeated(values: Any) -> bool:
    """Whether ``values`` is a list of 64 or more rows that all hold one value (a bulk write's
    defaults: its time, its author, no key, no tags); ``==`` in C, so no pass in Python.

    >>> repeated([None] * 64), repeated([None] * 63 + [1]), repeated(["a"] * 8)
    (True, False, False)
    """
    n = len(values)
    if n < 64 or not isinstance(values, list):
        return False
    # the last row first (compared as count compares): a column of distinct values (ids, texts) is
    # told apart without a pass over its rows
    return values[-1:].count(values[0]) == 1 and values.count(values[0]) == n


def bulk_insert(
    table: str,
    cols: dict[str, Any],
    columns: Sequence[Column],
    emb: np.ndarray | None = None,
    *,
    bind: bool = True,
) -> tuple[pa.Table, str, list[Any]]:
    """``INSERT INTO table`` of the rows ``cols`` (and ``emb``, into ``embedding``) -> ``(batch, sql,
    params)``: ``sql`` reads the Arrow ``batch`` registered as the view ``_view``. A column that holds
    one value in every row (:func:`repeated`) is one bound parameter cast to the column's type
    instead: DuckDB does not read it from Arrow a million times (a bulk write's 24 such columns cost
    ~15% of its insert). ``bind=False`` puts every column in the batch (PostgreSQL copies the batch
    into a table). ``table`` and the columns' names and types are the store's own.

    >>> batch, sql, params = bulk_insert("t", {"a": ["x", "y"] * 32, "b": [None] * 64},
    ...                                  [Column("a", "VARCHAR", False), Column("b", "JSON", True)])
    >>> batch.column_names, sql, params
    (['a'], 'INSERT INTO t ("a", "b") SELECT "a", CAST(? AS JSON) FROM _view', [None])
    """
    same = [c for c in columns if bind and repeated(cols[c.name])]
    if emb is None and len(same) == len(columns):  # the batch needs a column to have its rows
        same = same[1:]
    batch = arrow_batch(cols, [c for c in columns if c not in same], emb)
    names = ", ".join(f'"{c}"' for c in [*batch.column_names, *(c.name for c in same)])
    # the type as _TYPES spells it (_types refuses any other): one of a few known names
    typed = [f"CAST(? AS {c.sql_type.upper()})" for c in same if _types(c)]
    select = ", ".join([*(f'"{c}"' for c in batch.column_names), *typed])
    return batch, f"INSERT INTO {table} ({names}) SELECT {select} FROM _view", [cols[c.name][0] for c in same]


class ArrowList(list):  # type: ignore[type-arg]
    """A list of strings that also holds the same values as one Arrow array (``arrow``), so a bulk
    write converts a column to Arrow once: a batch's ids are made as Arrow, its texts come from the
    caller's frame, and the insert reads those arrays instead of converting a million strings back.

    Any change in place drops the array (``arrow`` becomes None: the list alone is right); a copy
    (:meth:`copy`) keeps it, as it holds the same values; ``list(x)`` and slices are plain lists.

    >>> x = ArrowList.of(pa.array(["a", "b"])); x, x.arrow.to_pylist()
    (['a', 'b'], ['a', 'b'])
    >>> y = x.copy(); y[0] = "c"; y.arrow, x.arrow is not None
    (None, True)
    """

    __slots__ = ("arrow",)

    def __init__(self, values: Any = (), arrow: pa.Array | None = None) -> None:
        """``values`` as a list; ``arrow``: the same values as Arrow (the caller vouches for that)."""
        super().__init__(values)
        self.arrow = arrow

    @classmethod
    def of(cls, array: pa.Array | pa.ChunkedArray) -> ArrowList:
        """An Arrow string array as its Python strings, keeping the array."""
        return cls(array.to_pylist(), array)

    def copy(self) -> ArrowList:  # type: ignore[override]
        """A shallow copy that keeps the Arrow array (the same values)."""
        return ArrowList(self, self.arrow)

    def sort(self, *, key: Any = None, reverse: bool = False) -> None:
        """``list.sort``, dropping the Arrow array."""
        self.arrow = None
        list.sort(self, key=key, reverse=reverse)


def _dropping(name: str) -> Any:
    """``list.<name>`` for :class:`ArrowList`: the Arrow array is dropped first (the values change)."""
    method = getattr(list, name)

    def change(self: ArrowList, *args: Any) -> Any:
        self.arrow = None
        return method(self, *args)

    change.__name__, change.__qualname__ = name, f"ArrowList.{name}"
    return change


for _name in ("__setitem__", "__delitem__", "__iadd__", "__imul__", "append", "extend", "insert", "pop",
              "remove", "clear", "reverse"):  # fmt: skip
    setattr(ArrowList, _name, _dropping(_name))
del _name


def hex_array(raw: bytes | bytearray, size: int) -> pa.Array:
    """Each ``size`` bytes of ``raw`` as its lowercase hex text -> one Arrow string array, made without a
    Python string per value (a batch's ids, its content hashes: what ``bytes.hex()`` of each gives).

    >>> hex_array(bytes([0, 255, 16, 1]), 2).to_pylist()
    ['00ff', '1001']
    """
    n, width = len(raw) // size, 2 * size
    large = width * n >= 2**31  # past int32 offsets
    offsets = np.arange(0, width * n + 1, width, dtype=np.int64 if large else np.int32)
    kind = pa.large_string() if large else pa.string()
    return pa.Array.from_buffers(kind, n, [None, pa.py_buffer(offsets), pa.py_buffer(binascii.hexlify(raw))])


def arrow_array(values: Any, type_: pa.DataType) -> pa.Array:
    """One column as Arrow: a value repeated in every row (a batch's defaults: its time, its author,
    no key) is converted once, not once per row (a million datetimes take a second otherwise). Not
    a list column's: ``pa.repeat`` of a list is ten times slower than converting a million ``[]``.
    An :class:`ArrowList` gives its array (cast to ``type_`` if it is another string type)."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):  # converted already (a batch's ids, for its events)
        return values
    if isinstance(values, ArrowList) and values.arrow is not None:  # made as Arrow, unchanged since
        return values.arrow if values.arrow.type == type_ else values.arrow.cast(type_)
    n = len(values)
    nested = pa.types.is_list(type_)
    if not nested and repeated(values):
        return pa.repeat(pa.scalar(values[0], type=type_), n)
    return pa.array(values, type=type_)
