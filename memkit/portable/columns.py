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

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import polars as pl
import pyarrow as pa

from ..errors import MemkitError

__all__ = ["Column", "arrow_array", "arrow_batch", "arrow_type", "polars_type"]


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


def arrow_batch(cols: dict[str, list[Any]], columns: Sequence[Column], emb: np.ndarray) -> pa.Table:
    """The rows to insert as one Arrow table: every column typed as the table's, plus ``embedding``
    ``(n, dim)`` as a fixed-size list (pyarrow converts the Python lists in C, column by column).

    >>> batch = arrow_batch({"id": ["a"]}, [Column("id", "VARCHAR", False)], np.ones((1, 2)))
    >>> batch.schema.field("embedding").type
    FixedSizeListType(fixed_size_list<item: float>[2])
    """
    arrays = {c.name: arrow_array(cols[c.name], arrow_type(c)) for c in columns}
    n, dim = emb.shape
    flat = np.ascontiguousarray(emb, dtype=np.float32).ravel()  # no copy when it is float32 already
    arrays["embedding"] = pa.FixedSizeListArray.from_arrays(pa.array(flat), dim)
    return pa.table(arrays)


def arrow_array(values: Any, type_: pa.DataType) -> pa.Array:
    """One column as Arrow: a value repeated in every row (a batch's defaults: its time, its author,
    no key) is converted once, not once per row (a million datetimes take a second otherwise). Not
    a list column's: ``pa.repeat`` of a list is ten times slower than converting a million ``[]``."""
    n = len(values)
    nested = pa.types.is_list(type_)
    if n >= 64 and not nested and isinstance(values, list) and values.count(values[0]) == n:
        return pa.repeat(pa.scalar(values[0], type=type_), n)
    return pa.array(values, type=type_)
