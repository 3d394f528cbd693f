"""Reading one line of a portable file strictly: JSON, then each field through a validator.

:func:`loads` parses JSON with duplicate keys, ``NaN``/``Infinity`` tokens and numbers that overflow
to infinity all rejected (Python's ``json`` accepts every one of them by default). :func:`validator`
gives the check of one column of the ``memories`` table: the store's own fields go through the
validators of :mod:`memkit.schema` (the same ones a write uses); a column added by a later migration
is checked by its DuckDB type, so it travels without a change here. Errors are FormatErrors naming
the line and the field: ``line 7: importance: must be <= 1.0, got 1.5``.

>>> loads('{"a": 1}', 1)
{'a': 1}
>>> loads('{"a": 1, "a": 2}', 3)
Traceback (most recent call last):
...
memkit.errors.FormatError: line 3: json: duplicate key 'a'
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from dataclasses import MISSING
from datetime import UTC, datetime
from typing import Any, NamedTuple

import numpy as np
import polars as pl
import pyarrow as pa

from ..errors import FormatError, MemkitError, ValidationError
from ..params import check_number
from ..schema import (
    ACCESS,
    KINDS,
    LAYERS,
    MAX_NAME_CHARS,
    OPS,
    SOURCES,
    STATUSES,
    Finding,
    Memory,
    check_choice,
    check_count,
    check_half_life,
    check_importance,
    check_name,
    check_text,
    check_time,
    check_value,
)

__all__ = [
    "EVENT_FIELDS", "MISSING_VALUE", "Column", "default", "fail", "loads",
    "parse_embedding", "parse_events", "parse_time", "polars_type", "validator", "arrow_type",
]  # fmt: skip

EVENT_FIELDS = ("ts", "op", "requester", "detail")


class Column(NamedTuple):
    """One column of the store's ``memories`` table: name, DuckDB type, nullable."""

    name: str
    sql_type: str
    nullable: bool


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


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not valid JSON (non-finite numbers are rejected)")


def _finite_float(token: str) -> float:
    v = float(token)
    if not np.isfinite(v):  # subtle: "1e999" parses to inf without going through parse_constant
        raise ValueError(f"{token} overflows to infinity")
    return v


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise ValueError(f"duplicate key {dup!r}")
    return d


def fail(line: int, name: str, message: str) -> FormatError:
    err = FormatError(f"line {line}: {name}", message)
    err.line = line  # type: ignore[attr-defined]
    return err


def parse_time(name: str, v: Any) -> datetime | None:
    if v is None:
        return None
    if not isinstance(v, str):
        raise ValidationError(name, f"must be an ISO-8601 string, got {type(v).__name__}")
    try:
        t = datetime.fromisoformat(v)
    except ValueError:
        raise ValidationError(name, f"is not an ISO-8601 timestamp: {v!r}") from None
    return check_time(name, t).astimezone(UTC)


def _name(field: str, v: Any, optional: bool = False) -> str | None:
    """check_name with a fast path: printable ASCII has no control or invisible characters."""
    if (
        isinstance(v, str)
        and v.isascii()
        and v.isprintable()
        and 0 < len(v) <= MAX_NAME_CHARS
        and v == v.strip()
    ):
        return v
    return check_name(field, v, optional=optional)


def _names(name: str, v: Any) -> list[str]:
    if not isinstance(v, list):
        raise ValidationError(name, f"must be a list of str, got {type(v).__name__}")
    return [_name(name, x) for x in v]


def _int(name: str, v: Any, bits: int) -> int:
    x = check_number(name, v, lo=-(2 ** (bits - 1)), hi=2 ** (bits - 1) - 1)
    if x != int(x):
        raise ValidationError(name, f"must be a whole number, got {x}")
    return int(v)


def _json(name: str, v: Any) -> str:
    """Another JSON column (the guard's ``findings``): checked like ``value``, but written back in
    its key order with ``json.dumps``'s default separators, which is how memkit writes such columns,
    so that the text round-trips exactly (``value`` itself is stored with sorted keys)."""
    try:
        check_value(v)
    except ValidationError as e:
        raise ValidationError(name, str(e).split(": ", 1)[1]) from None
    return json.dumps(v, ensure_ascii=False, allow_nan=False)


_FINDING_KEYS = ("code", "kind", "message", "severity", "start", "end")
_CODE = re.compile(r"^[A-Za-z0-9_.:-]{1,32}$")


def _findings(v: Any) -> str:
    """The guard's findings of a row: a list of finding objects, each a valid
    :class:`~memkit.schema.Finding` (so that a hand-made file cannot plant data that crashes a read)."""
    if not isinstance(v, list):
        raise ValidationError("findings", f"must be a list of findings, got {type(v).__name__}")
    for j, f in enumerate(v):
        if not isinstance(f, dict) or not set(f) <= set(_FINDING_KEYS) or "code" not in f or "kind" not in f:
            raise ValidationError(
                f"findings[{j}]",
                f"must be an object with code, kind and optional {', '.join(_FINDING_KEYS[2:])}",
            )
        if not isinstance(f["code"], str) or not _CODE.match(f["code"]):
            raise ValidationError(f"findings[{j}].code", "must be a short code (letters, digits, _.:-)")
        try:
            Finding(**f)
        except ValidationError as e:
            raise ValidationError(f"findings[{j}]", str(e)) from None
    return _json("findings", v)


def _hash(v: Any) -> str:
    if not isinstance(v, str):  # read() compares it with the hash of the content
        raise ValidationError("content_hash", f"must be a str, got {type(v).__name__}")
    return v


def _bool(name: str, v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValidationError(name, f"must be true or false, got {v!r}")
    return v


def _str(name: str, v: Any) -> str:
    if not isinstance(v, str):
        raise ValidationError(name, f"must be a str, got {type(v).__name__}")
    return check_text(name, v) if v else v


def _version(v: Any) -> int:
    n = check_count("version", v)
    if n < 1:
        raise ValidationError("version", "must be >= 1")
    return n


# The store's own fields, checked by its validators; any other column is checked by its type.
_KNOWN: dict[str, Callable[[Any], Any]] = {
    "id": lambda v: _name("id", v),
    "namespace": lambda v: _name("namespace", v),
    "key": lambda v: _name("key", v, optional=True),
    "content": lambda v: check_text("content", v),
    "value": check_value,
    "layer": lambda v: check_choice("layer", v, LAYERS),
    "kind": lambda v: check_choice("kind", v, KINDS),
    "importance": check_importance,
    "half_life_hours": check_half_life,
    "source": lambda v: check_choice("source", v, SOURCES),
    "owner": lambda v: _name("owner", v, optional=True),
    "created_by": lambda v: _name("created_by", v, optional=True),
    "access": lambda v: check_choice("access", v, ACCESS),
    "tags": lambda v: list(dict.fromkeys(_names("tags", v))),  # check_tags without a second check
    "status": lambda v: check_choice("status", v, STATUSES),
    "protected": lambda v: _bool("protected", v),
    "access_count": lambda v: check_count("access_count", v),
    "version": _version,
    "supersedes": lambda v: _name("supersedes", v, optional=True),
    "merged_from": lambda v: _names("merged_from", v),
    "content_hash": _hash,
    "findings": _findings,
}
_BY_TYPE: dict[str, Callable[[str, Any], Any]] = {
    "VARCHAR": _str,
    "JSON": lambda n, v: _json(n, v),
    "DOUBLE": lambda n, v: check_number(n, v),
    "FLOAT": lambda n, v: check_number(n, v),
    "INTEGER": lambda n, v: _int(n, v, 32),
    "BIGINT": lambda n, v: _int(n, v, 64),
    "BOOLEAN": _bool,
    "TIMESTAMP WITH TIME ZONE": parse_time,
    "VARCHAR[]": _names,
}


def validator(col: Column) -> Callable[[Any], Any]:
    polars_type(col)
    if col.name in _KNOWN:
        return _KNOWN[col.name]
    if col.sql_type.upper().startswith("TIMESTAMP"):
        return lambda v: parse_time(col.name, v)
    by_type = _BY_TYPE[col.sql_type.upper()]
    return lambda v: by_type(col.name, v)


def default(col: Column) -> Any:
    """What a column missing from an older file becomes: null, or the Memory default."""
    f = Memory.__dataclass_fields__.get(col.name)
    if col.nullable:
        return None
    if f is not None and f.default is not MISSING:
        return list(f.default) if isinstance(f.default, tuple) else f.default
    return MISSING_VALUE


MISSING_VALUE = object()


def loads(text: str, line: int) -> Any:
    try:
        return json.loads(
            text, parse_constant=_reject_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys
        )
    except RecursionError:
        raise fail(line, "json", "is nested too deeply") from None
    except ValueError as e:  # JSONDecodeError is a ValueError, and so are the hooks' errors
        raise fail(line, "json", str(e)) from None


def parse_embedding(v: Any, dim: int, line: int) -> np.ndarray:
    if isinstance(v, str):
        try:
            raw = base64.b64decode(v, validate=True)
        except ValueError:
            raise fail(line, "embedding", "is not valid base64") from None
        if len(raw) != 4 * dim:
            raise fail(line, "embedding", f"has {len(raw) // 4} values; the header's dim is {dim}")
        vec = np.frombuffer(raw, dtype="<f4")
    elif isinstance(v, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        if len(v) != dim:
            raise fail(line, "embedding", f"has {len(v)} values; the header's dim is {dim}")
        vec = np.asarray(v, dtype=np.float32)
    else:
        raise fail(line, "embedding", "must be base64 float32 text or a list of numbers")
    if not np.isfinite(vec).all():
        raise fail(line, "embedding", "contains NaN or infinite values")
    return vec


def parse_events(v: Any, row: int, line: int) -> list[tuple[int, datetime, str, str | None, str | None]]:
    if not isinstance(v, list):
        raise fail(line, "events", "must be a list")
    out = []
    for j, e in enumerate(v):
        if not isinstance(e, dict) or set(e) != set(EVENT_FIELDS):
            raise fail(line, f"events[{j}]", f"must be an object with exactly {', '.join(EVENT_FIELDS)}")
        try:
            ts = parse_time("ts", e["ts"])
            if ts is None:
                raise ValidationError("ts", "must not be null")
            op = check_choice("op", e["op"], OPS)
            requester = check_name("requester", e["requester"], optional=True)
            if e["detail"] is not None and not isinstance(e["detail"], dict):
                raise ValidationError("detail", "must be an object or null")
            detail = check_value(e["detail"])
        except ValidationError as err:
            raise fail(line, f"events[{j}].{err.field}", str(err).split(": ", 1)[1]) from None
        out.append((row, ts, op, requester, detail))
    return out
