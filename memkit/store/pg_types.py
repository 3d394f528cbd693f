"""Values between PostgreSQL and the store: result rows as Arrow tables typed as DuckDB's, vectors
parsed into numpy, and the columns of an Arrow view written by ``COPY`` (:mod:`memkit.store.postgres`).

DuckDB hands the store Arrow tables whose types the store relies on (``FLOAT[dim]`` as a fixed-size
float32 list, ``TIMESTAMPTZ`` as microseconds in UTC, JSON as text); :class:`Result` gives the same
from psycopg's rows, typed by each column's PostgreSQL type, so an empty result keeps its schema.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

__all__ = ["JSON_COLUMNS", "Result", "copy_column", "pg_type", "plain", "vector_loader"]

JSON_COLUMNS = frozenset({"value", "findings", "detail"})  # the store's JSON columns, by name


def _arrow_type(oid: int, vector_oid: int) -> pa.DataType | None:
    """The Arrow type of a result column of PostgreSQL type ``oid`` (None: inferred from values)."""
    if oid == vector_oid:
        return None  # built from the stacked numpy vectors in _column
    return {
        16: pa.bool_(), 20: pa.int64(), 23: pa.int32(), 21: pa.int16(), 700: pa.float32(),
        701: pa.float64(), 1700: pa.float64(), 25: pa.string(), 1043: pa.string(), 114: pa.string(),
        3802: pa.string(), 19: pa.string(), 1184: pa.timestamp("us", "UTC"), 1114: pa.timestamp("us"),
        1015: pa.list_(pa.string()), 1009: pa.list_(pa.string()), 2950: pa.string(),
    }.get(oid)  # fmt: skip


def _column(values: list[Any], oid: int, vector_oid: int, dim: int) -> pa.Array:
    """One result column as an Arrow array; vectors as DuckDB gives ``FLOAT[dim]``: a fixed-size
    float32 list (NULL rows masked), typed even when the result is empty."""
    if oid == vector_oid:
        if dim <= 0:  # an untyped vector expression: the length of the first value
            dim = next((len(v) for v in values if v is not None), 0)
        missing = np.array([v is None for v in values], dtype=bool)
        flat = np.zeros((len(values), dim), np.float32)
        present = np.flatnonzero(~missing)
        if present.size:
            flat[present] = np.stack([values[i] for i in present])
        mask = pa.array(missing) if missing.any() else None
        return pa.FixedSizeListArray.from_arrays(pa.array(flat.ravel()), dim, mask=mask)
    if oid == 1700:
        values = [None if v is None else float(v) for v in values]
    return pa.array(values, type=_arrow_type(oid, vector_oid))


class Result:
    """A finished statement: ``fetchall()`` rows, or ``to_arrow_table()`` (column types as DuckDB's)."""

    def __init__(
        self, rows: list[tuple[Any, ...]], description: Any, vector_oid: int, dims: Sequence[int] = ()
    ) -> None:
        self.rows, self.description, self.vector_oid, self.dims = rows, description, vector_oid, dims

    def fetchall(self) -> list[tuple[Any, ...]]:
        """Every row, as tuples."""
        return self.rows

    def to_arrow_table(self) -> pa.Table:
        """The rows as an Arrow table (an empty result keeps its typed columns)."""
        names = [d.name for d in self.description or ()]
        columns = list(zip(*self.rows, strict=True)) if self.rows else [()] * len(names)
        dims = list(self.dims) or [0] * len(names)
        arrays = [
            _column(list(col), d.type_code, self.vector_oid, dim)
            for col, d, dim in zip(columns, self.description or (), dims, strict=True)
        ]
        return pa.Table.from_arrays(arrays, names=names)


def pg_type(name: str, kind: pa.DataType, json_columns: set[str] | frozenset[str] = frozenset()) -> str:
    """The temporary-table column type for an Arrow column of a registered view: JSON for a name
    that is a JSON column of the store's tables (the view feeds one of them), else by Arrow type."""
    if name in JSON_COLUMNS or name in json_columns:
        return "JSON"
    if pa.types.is_list(kind) or pa.types.is_fixed_size_list(kind) or pa.types.is_large_list(kind):
        return "REAL[]" if pa.types.is_floating(kind.value_type) else "VARCHAR[]"
    if pa.types.is_timestamp(kind):
        return "TIMESTAMPTZ"
    for test, pg in ((pa.types.is_boolean, "BOOLEAN"), (pa.types.is_integer, "BIGINT"),
                     (pa.types.is_floating, "DOUBLE PRECISION")):  # fmt: skip
        if test(kind):
            return pg
    return "VARCHAR"


def vector_loader(psycopg: Any) -> type:
    """A loader of pgvector's text form ``[0.1,0.2,...]`` straight into a float32 numpy array."""

    class VectorLoader(psycopg.adapt.Loader):  # type: ignore[misc,name-defined]
        """pgvector ``vector`` -> ``np.ndarray`` (float32), parsed in C."""

        def load(self, data: Any) -> np.ndarray:
            """One vector's text -> its array."""
            return np.array(bytes(data)[1:-1].split(b","), dtype=np.float32)

    return VectorLoader


def copy_column(column: Any) -> list[Any]:
    """A column of a registered view as ``COPY`` values. Vectors (float lists) are formatted here,
    in one numpy pass, as array literals ``{0.1,...}`` (psycopg's list dumper costs ~0.8 ms a row at
    dim 384: 70% of an ingestion); ``%.9g`` round-trips every float32 exactly."""
    kind = column.type
    if not (pa.types.is_fixed_size_list(kind) or pa.types.is_list(kind)) or not pa.types.is_floating(
        kind.value_type
    ):
        return column.to_pylist()
    rows = column.to_pylist() if not pa.types.is_fixed_size_list(kind) else None
    if rows is not None:  # variable-length lists: rare (not the store's own vectors)
        return [None if r is None else "{" + ",".join(f"{x:.9g}" for x in r) + "}" for r in rows]
    flat = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    size = kind.list_size
    matrix = flat.flatten().to_numpy(zero_copy_only=False).reshape(-1, size) if size else None
    buf = io.StringIO()
    if matrix is not None and len(matrix):
        np.savetxt(buf, matrix, fmt="%.9g", delimiter=",")
    text = iter(buf.getvalue().splitlines())
    valid = flat.is_valid().to_numpy(zero_copy_only=False)
    return ["{" + next(text) + "}" if ok else None for ok in valid]


def plain(value: Any) -> Any:
    """A bound value psycopg adapts: numpy scalars as Python numbers, float32 vectors as lists."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value
