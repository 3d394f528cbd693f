"""Checking the fields of one line of a portable file: a validator per column of ``memories``.

A file is read strictly (:mod:`memkit.portable.jsonl`): each line is parsed by
:func:`~memkit.portable.strictjson.loads`, then every value goes through the :func:`validator` of
its column, which returns the value as the store keeps it:

- the store's own fields go through the validators of :mod:`memkit.schema`, the same ones a write
  uses, so a file cannot hold what ``add`` would refuse (an enum value outside its tuple, an
  importance of 1.5, a name with a control character);
- a column added by a later migration is checked by its DuckDB type (:mod:`memkit.portable.columns`),
  so it travels without a change here;
- a column an older file lacks gets its :func:`default`.

Errors name the field (the reader adds the line): ``line 7: importance: must be <= 1.0, got 1.5``.

>>> check = validator(Column("importance", "DOUBLE", False))
>>> check(0.5), validator(Column("tags", "VARCHAR[]", False))(["a", "b", "a"])
(0.5, ['a', 'b'])
>>> validator(Column("value", "JSON", True))({"b": 1, "a": [2]})
'{"a": [2], "b": 1}'

:func:`loads` and :func:`fail` (:mod:`~memkit.portable.strictjson`), :class:`Column`,
:func:`polars_type` and :func:`arrow_type` (:mod:`~memkit.portable.columns`) began in this module and
are still importable from it.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from dataclasses import MISSING
from datetime import datetime
from typing import Any

import numpy as np

from ..errors import ValidationError
from ..guard.names import SECRET_IN_NAME, holds_secret
from ..params import GuardParams, check_number
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
from .columns import Column, arrow_type, polars_type
from .ids import check_id, check_ids
from .strictjson import fail, loads

__all__ = [
    "EVENT_FIELDS", "MISSING_VALUE", "Column", "default", "fail", "loads",
    "parse_embedding", "parse_events", "parse_time", "polars_type", "validator", "arrow_type",
]  # fmt: skip

EVENT_FIELDS = ("ts", "op", "requester", "detail")  # an audit event as a file carries it (per memory)


def parse_time(name: str, v: Any) -> datetime | None:
    """An ISO-8601 string with an offset (or None) -> a UTC datetime; naive text is refused.

    >>> parse_time("ts", "2026-01-01T08:00:00+08:00")
    datetime.datetime(2026, 1, 1, 0, 0, tzinfo=datetime.timezone.utc)
    """
    if v is None:
        return None
    if not isinstance(v, str):
        raise ValidationError(name, f"must be an ISO-8601 string, got {type(v).__name__}")
    try:
        t = datetime.fromisoformat(v)
    except ValueError:
        raise ValidationError(name, f"is not an ISO-8601 timestamp: {v!r}") from None
    return check_time(name, t)  # in UTC


def _name(field: str, v: Any, optional: bool = False) -> str | None:
    """check_name with a fast path: printable ASCII has no control or invisible characters.

    A file of 50 000 memories holds half a million names (ids, namespaces, tags, owners); the
    Unicode category test of :func:`~memkit.schema.check_name` is only needed for the rare others.
    """
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
    """A JSON list of names (tags, merged_from, any ``VARCHAR[]``) -> the list, each one checked."""
    if not isinstance(v, list):
        raise ValidationError(name, f"must be a list of str, got {type(v).__name__}")
    return [_name(name, x) for x in v]


def _int(name: str, v: Any, bits: int) -> int:
    """A whole number that fits a signed ``bits``-bit column (``3.0`` is 3; ``1.5`` is refused)."""
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


_FINDING_KEYS = ("code", "kind", "message", "severity", "start", "end")  # Finding's fields
# a rule code as memkit writes them (MG101-MG390; a detector's: LLM01, X1, ADDR): a letter first, short,
# no spaces, no free text, and at most 4 digits: a longer run is a number (a phone, a card, an account)
_CODE = re.compile(r"^[A-Za-z][A-Za-z0-9_.:-]{0,31}$")
_CODE_DIGITS = 4


def _findings(v: Any) -> str:
    """The guard's findings of a row: a list of finding objects, each a valid
    :class:`~memkit.schema.Finding` (so that a hand-made file cannot plant data that crashes a read).

    Stricter than Finding itself: no keys beyond its fields, and a code of the shape memkit's codes
    have (a letter, then up to 31 letters, digits or ``_.:-``, with at most 4 digits: ``MG301``,
    ``LLM01``), since codes are shown in the quarantine review and kept in the audit log verbatim
    (the importing store's guard then judges them as ids: :mod:`memkit.portable.ids`).
    """
    if not isinstance(v, list):
        raise ValidationError("findings", f"must be a list of findings, got {type(v).__name__}")
    for j, f in enumerate(v):
        if not isinstance(f, dict) or not set(f) <= set(_FINDING_KEYS) or "code" not in f or "kind" not in f:
            raise ValidationError(
                f"findings[{j}]",
                f"must be an object with code, kind and optional {', '.join(_FINDING_KEYS[2:])}",
            )
        code = f["code"]
        if not isinstance(code, str) or not _CODE.match(code) or sum(map(str.isdigit, code)) > _CODE_DIGITS:
            raise ValidationError(
                f"findings[{j}].code",
                f"must be a rule code: a letter, then letters, digits or _.:- (32 at most), with"
                f" {_CODE_DIGITS} digits at most (MG301, LLM01)",
            )
        try:
            Finding(**f)
        except ValidationError as e:
            raise ValidationError(f"findings[{j}]", str(e)) from None
    return _json("findings", v)


def _hash(v: Any) -> str:
    """``content_hash`` as given: any string here; :func:`~memkit.portable.jsonl.read` then
    compares it with the hash of the content (an edited line is caught there)."""
    if not isinstance(v, str):
        raise ValidationError("content_hash", f"must be a str, got {type(v).__name__}")
    return v


def _bool(name: str, v: Any) -> bool:
    """JSON ``true`` or ``false`` only (not 0/1, not ``"yes"``)."""
    if not isinstance(v, bool):
        raise ValidationError(name, f"must be true or false, got {v!r}")
    return v


def _str(name: str, v: Any) -> str:
    """A text column a later migration added: a string, checked as memory text unless empty."""
    if not isinstance(v, str):
        raise ValidationError(name, f"must be a str, got {type(v).__name__}")
    return check_text(name, v) if v else v


def _version(v: Any) -> int:
    """A version number: a whole number in [1, 10**9] (room left in the INTEGER column for the key's
    later versions: a write numbers its version after the highest stored)."""
    if type(v) in (int, float) and v > 10**9:  # (check_count would say the column's limit, as a float)
        raise ValidationError("version", f"must be between 1 and 1000000000, got {v}")
    n = check_count("version", v)
    if not 1 <= n <= 10**9:
        raise ValidationError("version", f"must be between 1 and 1000000000, got {n}")
    return n


# The store's own fields, checked by its validators; any other column is checked by its type. The
# five timestamps (valid_from ... last_access_at) are absent on purpose: their type says it all.
_KNOWN: dict[str, Callable[[Any], Any]] = {
    "id": lambda v: check_id("id", v),  # an identifier, not text (memkit.portable.ids)
    "namespace": lambda v: _name("namespace", v),
    "key": lambda v: _name("key", v, optional=True),  # null: a memory without a slot
    "content": lambda v: check_text("content", v),
    "value": check_value,  # -> its JSON text, keys sorted, as a write stores it
    "layer": lambda v: check_choice("layer", v, LAYERS),
    "kind": lambda v: check_choice("kind", v, KINDS),
    "importance": check_importance,
    "half_life_hours": check_half_life,
    "source": lambda v: check_choice("source", v, SOURCES),
    "owner": lambda v: _name("owner", v, optional=True),  # mapped to identities on write, not here
    "created_by": lambda v: _name("created_by", v, optional=True),  # a requester's import checks it
    "access": lambda v: check_choice("access", v, ACCESS),
    "tags": lambda v: list(dict.fromkeys(_names("tags", v))),  # check_tags without a second check
    "status": lambda v: check_choice("status", v, STATUSES),
    "protected": lambda v: _bool("protected", v),
    "access_count": lambda v: check_count("access_count", v),  # fits an INTEGER column
    "version": _version,
    "supersedes": lambda v: check_id("supersedes", v, optional=True),  # an id; need not be in the file
    "merged_from": lambda v: check_ids("merged_from", v),  # ids (on_conflict="new_ids" remaps both)
    "content_hash": _hash,  # compared with the content once the whole column is read
    "findings": _findings,  # JSON text, key order kept
}
# Any other column, by its DuckDB type: (column name, value) -> clean value.
_BY_TYPE: dict[str, Callable[[str, Any], Any]] = {
    "VARCHAR": _str,  # text: valid Unicode, no NUL (empty allowed)
    "JSON": lambda n, v: _json(n, v),  # any JSON value -> its text
    "DOUBLE": lambda n, v: check_number(n, v),  # finite
    "FLOAT": lambda n, v: check_number(n, v),
    "INTEGER": lambda n, v: _int(n, v, 32),  # whole and within the column's range
    "BIGINT": lambda n, v: _int(n, v, 64),
    "BOOLEAN": _bool,
    "TIMESTAMP WITH TIME ZONE": parse_time,  # ISO-8601 with an offset -> UTC
    "VARCHAR[]": _names,  # a list of names
}


def validator(col: Column) -> Callable[[Any], Any]:
    """The check of one column: a non-null JSON value -> its clean value, or ValidationError.

    Nulls are the caller's business (``read`` knows which columns are nullable). A column whose
    type the format cannot carry fails here, before any line is checked.
    """
    polars_type(col)  # raises for a type the format cannot carry
    if col.name in _KNOWN:
        return _KNOWN[col.name]
    if col.sql_type.upper().startswith("TIMESTAMP"):
        return lambda v: parse_time(col.name, v)
    by_type = _BY_TYPE[col.sql_type.upper()]
    return lambda v: by_type(col.name, v)


def default(col: Column) -> Any:
    """What a column missing from an older file becomes: null, or the Memory default, or
    :data:`MISSING_VALUE` when there is neither (the file cannot be read into this store).

    >>> default(Column("findings", "JSON", True)), default(Column("tags", "VARCHAR[]", False))
    (None, [])
    """
    f = Memory.__dataclass_fields__.get(col.name)
    if col.nullable:
        return None
    if f is not None and f.default is not MISSING:
        return list(f.default) if isinstance(f.default, tuple) else f.default
    return MISSING_VALUE


MISSING_VALUE = object()
"""The sentinel :func:`default` returns for a required column with no default."""


def parse_embedding(v: Any, dim: int, line: int, field: str = "embedding") -> np.ndarray:
    """A line's ``embedding`` -> ``(dim,)`` float32: base64 of little-endian float32 bytes (what
    memkit writes, exact) or a list of numbers (hand-made files). NaN, infinity and a vector too
    large to normalize (its squared length overflows float32, as ``add_many`` refuses one) are
    refused, naming ``field``; an all-zero vector is the store's to judge (its embedder gives one to
    a text without words, such as ``"!!!"``).

    >>> parse_embedding("AACAPwAAAAA=", 2, 1), parse_embedding([0.5, 0], 2, 1)
    (array([1., 0.], dtype=float32), array([0.5, 0. ], dtype=float32))
    """
    if isinstance(v, str):
        try:
            raw = base64.b64decode(v, validate=True)
        except ValueError:
            raise fail(line, field, "is not valid base64") from None
        if len(raw) != 4 * dim:  # 4 bytes per float32
            raise fail(line, field, f"has {len(raw) // 4} values; the header's dim is {dim}")
        vec = np.frombuffer(raw, dtype="<f4")
    elif isinstance(v, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        if len(v) != dim:
            raise fail(line, field, f"has {len(v)} values; the header's dim is {dim}")
        vec = np.asarray(v, dtype=np.float32)
    else:
        raise fail(line, field, "must be base64 float32 text or a list of numbers")
    if not np.isfinite(vec).all():
        raise fail(line, field, "contains NaN or infinite values")
    with np.errstate(over="ignore"):  # a value past ~1e19: normalizing it in float32 gives zeros or NaN
        if not np.isfinite(np.dot(vec, vec)):
            raise fail(line, field, "is too large to normalize (its squared length overflows float32)")
    return vec


def parse_events(
    v: Any, row: int, line: int, guard: GuardParams | None = None
) -> list[tuple[int, datetime, str, str | None, str | None]]:
    """A line's ``events`` (its memory's audit history) -> ``(row, ts, op, requester, detail JSON)``
    tuples, ``row`` being the memory's position in the file. Each event has exactly
    :data:`EVENT_FIELDS`; ``op`` must be a known op and ``detail`` an object or null; a requester
    must hold no secret by the default rules plus the importing store's ``guard.extra_secret_patterns``.

    >>> event = {"ts": "2026-01-01T00:00:00Z", "op": "add", "requester": None, "detail": {"n": 1}}
    >>> parse_events([event], 0, 2)
    [(0, datetime.datetime(2026, 1, 1, 0, 0, tzinfo=datetime.timezone.utc), 'add', None, '{"n": 1}')]
    """
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
            if requester is not None and holds_secret(requester, guard):  # the log keeps them as they are
                raise ValidationError("requester", SECRET_IN_NAME)
            if e["detail"] is not None and not isinstance(e["detail"], dict):
                raise ValidationError("detail", "must be an object or null")
            detail = check_value(e["detail"])
        except ValidationError as err:  # re-raised as "line n: events[j].field: ..."
            raise fail(line, f"events[{j}].{err.field}", str(err).split(": ", 1)[1]) from None
        out.append((row, ts, op, requester, detail))
    return out
