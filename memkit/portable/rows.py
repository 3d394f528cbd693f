"""Turn ``add()`` arguments or ``add_many()`` frame rows into validated, complete memory rows.

One code path for both: every field is checked by a validator of :mod:`memkit.schema`, defaults are
filled in (layer by the admission rule, half-life by layer, owner and creator from the requester),
and the result is a dict of column lists ready for one batched insert. Any error names the field
(and, for a batch, the row), and is raised before anything is written.

A caller sets only :data:`WRITABLE` fields (:data:`memkit.schema.WRITABLE_FIELDS`); the rest are the
store's: a new id, the call's namespace, status ``active``, version 1, no lineage, no findings. The
write pipeline (:mod:`memkit.store.pipeline`) may then change status, version and supersedes.

>>> from datetime import datetime, timezone
>>> now = datetime(2026, 1, 1, tzinfo=timezone.utc)
>>> cols = build_rows([{"content": "likes tea", "importance": 0.2}], "u", "alice", now)
>>> cols["layer"], cols["half_life_hours"], cols["owner"], cols["status"]
(['short_term'], [2.0], ['alice'], ['active'])
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import polars as pl

from ..errors import ValidationError
from ..guard import identity
from ..params import MIN_HOURS
from ..schema import (
    ACCESS,
    COUNT_MAX,
    DEFAULT_IMPORTANCE,
    KINDS,
    LAYER_HALF_LIFE_HOURS,
    LAYERS,
    MAX_CONTENT_CHARS,
    MAX_NAME_CHARS,
    SOURCES,
    TABLE_FIELDS,
    WRITABLE_FIELDS,
    check_choice,
    check_count,
    check_half_life,
    check_importance,
    check_name,
    check_tags,
    check_text,
    check_time,
    check_validity,
    check_value,
    default_layer,
    layer_expr,
)
from ..text import INVISIBLE
from .columns import ArrowList, hex_array

__all__ = ["WRITABLE", "build_frame", "build_rows", "new_id", "new_ids"]

WRITABLE = WRITABLE_FIELDS
"""Fields a caller may set on a write (add keywords, add_many columns): schema's list, under its old name."""


def new_ids(n: int) -> list[str]:
    """``n`` short random ids, 16 hex characters each (64 bits; collisions are negligible below 10^8
    memories), from one call to the OS's random source, in ascending order: a batch's rows then enter
    the id key's index in order (a million random ids in random order took DuckDB ~30% longer to
    insert); each id is as random as before, only their order within one call is known. A batch (64
    ids or more) is made as Arrow and kept with it (:class:`~memkit.portable.columns.ArrowList`)."""
    raw = np.sort(np.frombuffer(os.urandom(8 * n), dtype=np.uint64)).astype(">u8").tobytes()
    if n >= 64:
        return ArrowList.of(hex_array(raw, 8))
    h = raw.hex()
    return [h[i : i + 16] for i in range(0, 16 * n, 16)]


def new_id() -> str:
    """One id of :func:`new_ids`."""
    return new_ids(1)[0]


def _or(value: Any, default: Any) -> Any:
    """``value`` unless it is None (unlike ``or``, an empty string stays and fails validation)."""
    return default if value is None else value


def _one(
    d: Mapping[str, Any], namespace: str, requester: str | None, now: datetime, keep_authorship: bool
) -> dict[str, Any]:
    """One record -> one complete row: every Memory field, validated, with its default filled in.

    The order of the checks matters only for which error a record with several problems gets: the
    fields the defaults depend on (kind and importance decide the layer, the layer the half-life,
    created_at the last access) come first.
    """
    content = check_text("content", d.get("content"))
    kind = check_choice("kind", _or(d.get("kind"), "fact"), KINDS)
    imp = d.get("importance")
    importance = DEFAULT_IMPORTANCE if imp is None else check_importance(imp)  # 0.0 is a valid importance
    layer = d.get("layer")
    layer = default_layer(importance, kind) if layer is None else check_choice("layer", layer, LAYERS)
    hl = d.get("half_life_hours")  # None: the layer's default, below
    protected = d.get("protected")
    if protected is None:
        protected = False
    elif isinstance(protected, np.bool_):  # numpy's bool (a frame's, a mask's)
        protected = bool(protected)
    elif not isinstance(protected, bool):  # 0/1 or "yes" would pass a truthiness test
        raise ValidationError("protected", f"must be a bool, got {type(protected).__name__}")
    valid_from = check_time("valid_from", d.get("valid_from"), optional=True)
    valid_until = check_time("valid_until", d.get("valid_until"), optional=True)
    check_validity(valid_from, valid_until)
    created_at = check_time("created_at", _or(d.get("created_at"), now))  # may lie in the past
    last_access = check_time("last_access_at", _or(d.get("last_access_at"), created_at))
    if last_access < created_at:  # recalled before it existed: recency would start below a new memory's
        raise ValidationError("last_access_at", f"must not precede created_at ({last_access} < {created_at})")
    count = d.get("access_count")  # a restored memory (a COGX archive memkit wrote) keeps its count
    count = 0 if count is None else check_count("access_count", count)
    if keep_authorship:  # a row derived from stored ones (a merge) keeps theirs, null included
        owner, creator = d.get("owner"), d.get("created_by")
    else:
        owner = _or(d.get("owner"), requester)  # a null owner in a frame means "the requester", as in add()
        creator = _or(d.get("created_by"), requester)
        # names are kept as identities (an e-mail address becomes its pseudonym), as requesters are
        owner, creator = (None if x is None else identity(check_name(f, x)) for f, x in
                          (("owner", owner), ("created_by", creator)))  # fmt: skip
        if requester is not None and creator != requester:  # authorship cannot be forged
            raise ValidationError(
                "created_by", f"is the requester ({requester!r}); only the operator may write as {creator!r}"
            )
    return {  # in table order; build_rows lays the columns out by schema.TABLE_FIELDS
        "id": new_id(),
        "namespace": namespace,  # checked by the caller, once per batch
        "key": check_name("key", d.get("key"), optional=True),
        "content": content,
        "value": check_value(d.get("value")),  # stored as JSON text with sorted keys
        "layer": layer,
        "kind": kind,
        "importance": importance,
        "half_life_hours": LAYER_HALF_LIFE_HOURS[layer] if hl is None else check_half_life(hl),
        "source": check_choice("source", _or(d.get("source"), "user"), SOURCES),
        "owner": check_name("owner", owner, optional=True),
        "created_by": check_name("created_by", creator, optional=True),
        "access": check_choice("access", _or(d.get("access"), "public"), ACCESS),
        "tags": list(check_tags(d.get("tags"))),  # duplicates dropped, order kept
        "status": "active",  # the guard and the version plan may change it
        "protected": protected,
        # every timestamp is stored in UTC, whatever offset it came with (check_time converted them)
        "valid_from": valid_from,
        "valid_until": valid_until,
        "created_at": created_at,
        "updated_at": now.astimezone(UTC),
        "last_access_at": last_access,
        "access_count": count,
        "version": 1,  # the version plan numbers keyed rows
        "supersedes": None,
        "merged_from": [],  # a merge sets it after build_rows
        "findings": None,  # the guard's, set when it finds something
    }


def build_rows(
    records: Sequence[Mapping[str, Any]],
    namespace: str,
    requester: str | None,
    now: datetime,
    *,
    keep_authorship: bool = False,
) -> dict[str, list[Any]]:
    """Validate ``records`` (dicts of :data:`WRITABLE` fields) -> ``{column: [values]}``.

    Authorship: ``owner`` and ``created_by`` default to the requester, and only the operator
    (``requester=None``) may set ``created_by`` to someone else. ``keep_authorship`` takes both as
    given (rows the store derives from stored ones). Errors name the field and, when there is more
    than one record, the row: ``importance[row 3]``. The columns are every Memory field, in the
    table's order (:data:`memkit.schema.TABLE_FIELDS`).
    """
    rows = []
    for i, rec in enumerate(records):  # write path: validation is per row, like embedding
        unknown = set(rec) - set(WRITABLE)
        if unknown:
            raise ValidationError(sorted(unknown)[0], f"is not a writable field; use {', '.join(WRITABLE)}")
        try:
            rows.append(_one(rec, namespace, requester, now, keep_authorship))
        except ValidationError as e:
            if len(records) == 1:
                raise
            raise ValidationError(f"{e.field}[row {i}]", str(e).split(": ", 1)[1]) from None
    if not rows:
        raise ValidationError("frame", "has no rows")
    return {c: [r[c] for r in rows] for c in TABLE_FIELDS}


# ------------------------------------------------------------------------------- whole frames
# A frame of only these columns, every value plainly valid, is checked column by column in polars
# (build_frame); anything else -- another column, another dtype, one doubtful value -- goes through
# build_rows, row by row, which decides and names the error. The checks below are sufficient
# conditions for what the validators accept (never wider), so both paths accept the same frames.
_TIMES = ("created_at", "last_access_at", "valid_from", "valid_until")
_FRAME_COLUMNS = {"content", "importance", "key", "kind", "layer", "source", "access", "protected", "tags",
                  "half_life_hours", "access_count", *_TIMES}  # fmt: skip
_CHOICES = {"kind": KINDS, "layer": LAYERS, "source": SOURCES, "access": ACCESS}
# never whitespace, control or invisible (Python and Unicode agree; the Hangul fillers are letters, but
# invisible: memkit.text.INVISIBLE)
_SOLID = rf"[[\p{{L}}\p{{N}}\p{{P}}\p{{S}}]--[{INVISIBLE}]]"
_PLAIN_NAME = rf"^{_SOLID}(?:[\p{{L}}\p{{N}}\p{{P}}\p{{S}}\p{{M}} ]*{_SOLID})?$"
_EARLIEST, _LATEST = datetime(1, 1, 2), datetime(9999, 12, 30)  # (naive: compared in UTC)
_BOUNDS = {
    "importance": (0.0, 1.0, False),
    "half_life_hours": (MIN_HOURS, math.inf, False),
    "access_count": (0, COUNT_MAX, False),
}  # (low, high, low excluded), as schema's checks say


def _utc(name: str) -> pl.Expr:
    """An aware time column in UTC, to the microsecond (what a Python datetime holds)."""
    return pl.col(name).dt.convert_time_zone("UTC").dt.cast_time_unit("us")


def _is_name(e: pl.Expr) -> pl.Expr:
    """Values ``check_name`` accepts (a sufficient condition: short, no outer space, no invisible)."""
    return (e.str.len_chars() <= MAX_NAME_CHARS) & e.str.contains(_PLAIN_NAME)


def _plainly_valid(frame: pl.DataFrame, at: datetime) -> bool:
    """Every column of ``frame`` passes its validator, shown in polars (False: let the rows decide).
    ``at`` is the call's ``now``: a row's created_at, and so the earliest last access, when it has none."""
    if set(frame.columns) - _FRAME_COLUMNS or "content" not in frame.columns:
        return False
    # a column of nulls only (dtype Null) is a column of defaults
    dtypes = {c: t for c, t in frame.schema.items() if t != pl.Null or c == "content"}
    strings = [c for c in ("content", "key", *_CHOICES) if c in dtypes]
    if any(dtypes[c] != pl.String for c in strings) or dtypes.get("protected", pl.Boolean) != pl.Boolean:
        return False
    if any(c in dtypes and not (dtypes[c].is_float() or dtypes[c].is_integer())
           for c in ("importance", "half_life_hours")):  # fmt: skip
        return False
    names = pl.List(pl.String)  # a count of 2.0 and a list of nulls are the rows' to judge
    if not dtypes.get("access_count", pl.Int64).is_integer() or dtypes.get("tags", names) != names:
        return False
    if any(c in dtypes and not (dtypes[c] == pl.Datetime and dtypes[c].time_zone) for c in _TIMES):
        return False  # naive times, or text: the rows refuse them, naming the field
    c, checks = pl.col("content"), []
    checks += [c.is_not_null().all(), (c.str.len_chars() <= MAX_CONTENT_CHARS).all()]
    checks += [c.str.contains(_SOLID).all(), c.str.contains("\x00", literal=True).not_().all()]
    # numbers: finite, within the validator's bounds (a half-life from MIN_HOURS)
    for name, (lo, hi, lo_open) in _BOUNDS.items():
        if name in dtypes:
            x = pl.col(name).cast(pl.Float64)
            inside = x.is_finite() & ((x > lo) if lo_open else (x >= lo)) & (x <= hi)
            checks.append((x.is_null() | inside).all())
    if "key" in dtypes:
        checks.append((pl.col("key").is_null() | _is_name(pl.col("key"))).all())
    if "tags" in dtypes:  # every tag a plain name (an empty list is no tags)
        each = pl.col("tags").list.eval(_is_name(pl.element()).fill_null(False)).list.all()
        checks.append((pl.col("tags").is_null() | each).all())
    checks += [(pl.col(n).is_null() | pl.col(n).is_in(_CHOICES[n])).all() for n in _CHOICES if n in dtypes]
    times = [t for t in _TIMES if t in dtypes]
    for t in times:  # within what a Python datetime holds in UTC, with a day to spare
        utc = _utc(t).dt.replace_time_zone(None)
        checks.append((utc.is_null() | utc.is_between(_EARLIEST, _LATEST)).all())
    if "valid_from" in times and "valid_until" in times:  # the window [from, until) is not empty
        checks.append((_utc("valid_until") > _utc("valid_from")).fill_null(True).all())
    if "last_access_at" in times:  # not recalled before it existed
        created = _utc("created_at").fill_null(at) if "created_at" in times else pl.lit(at)
        checks.append((_utc("last_access_at") >= created).fill_null(True).all())
    return all(frame.select(e.alias(f"_{i}") for i, e in enumerate(checks)).row(0))


_LAYER_FROM = ("layer", "importance", "kind")  # a row's layer (and so its half-life) follows from these


def build_frame(
    frame: pl.DataFrame, namespace: str, requester: str | None, now: datetime
) -> dict[str, list[Any]] | None:
    """:func:`build_rows` for a whole frame at once -> the same columns, or None when the frame needs
    the row path (a column or a value :func:`_plainly_valid` cannot vouch for).

    Nothing here is per row in Python but the ids: defaults are filled by polars expressions and the
    constant columns are lists of one repeated value.
    """
    n = frame.height
    at = now.astimezone(UTC)
    if n == 0 or not _plainly_valid(frame, at):
        return None
    has = {c for c, t in frame.schema.items() if t != pl.Null}  # a column of nulls: the defaults

    def col(name: str, default: Any) -> pl.Expr:
        return pl.col(name).fill_null(default) if name in has else pl.lit(default)

    importance = col("importance", DEFAULT_IMPORTANCE).cast(pl.Float64)
    kind = col("kind", "fact")
    layer = layer_expr(importance, kind)
    layer = pl.col("layer").fill_null(layer) if "layer" in has else layer
    half_lives = pl.Series(list(LAYER_HALF_LIFE_HOURS.values()), dtype=pl.Float64)
    half_life = layer.replace_strict(list(LAYER_HALF_LIFE_HOURS), half_lives)  # the layer's, unless given
    if "half_life_hours" in has:
        half_life = pl.col("half_life_hours").cast(pl.Float64).fill_null(half_life)
    created = _utc("created_at").fill_null(at) if "created_at" in has else pl.lit(at)
    built = frame.with_columns(
        importance.alias("importance"),
        kind.alias("kind"),
        layer.alias("layer"),
        half_life.alias("half_life_hours"),
        col("source", "user").alias("source"),
        col("access", "public").alias("access"),
        col("protected", False).alias("protected"),
        col("access_count", 0).cast(pl.Int64).alias("access_count"),
        created.alias("created_at"),  # each row's own time in UTC (a missing one: now)
        (pl.coalesce(_utc("last_access_at"), created) if "last_access_at" in has else created).alias(
            "last_access_at"
        ),  # by default its creation
        *(_utc(t).alias(t) for t in ("valid_from", "valid_until") if t in has),
        *([pl.col("tags").list.unique(maintain_order=True).fill_null([])] if "tags" in has else []),
    )  # fmt: skip (with_columns: literals take the frame's height)
    # each picked column and the frame's columns it is made from: made from none, it is one default
    picked = {"importance": ("importance",), "kind": ("kind",), "layer": _LAYER_FROM,
              "half_life_hours": (*_LAYER_FROM, "half_life_hours"), "source": ("source",),
              "access": ("access",), "protected": ("protected",), "access_count": ("access_count",),
              "created_at": ("created_at",), "last_access_at": ("created_at", "last_access_at"),
              "valid_from": ("valid_from",), "valid_until": ("valid_until",), "tags": ("tags",),
              "key": ("key",)}  # fmt: skip
    # a default repeated is one object (later passes compare it by identity); no tags: one empty
    # list, never changed in place
    defaults = {"created_at": at, "last_access_at": at, "valid_from": None, "valid_until": None, "tags": [],
                "key": None}  # fmt: skip
    out: dict[str, list[Any]] = {
        name: [defaults[name] if name in defaults else built[name][0]] * n
        if has.isdisjoint(made_from)
        else built[name].to_list()
        for name, made_from in picked.items()
    }
    if "last_access_at" not in has and "created_at" in has:  # its last access starts at its creation
        out["last_access_at"] = list(out["created_at"])
    out |= {
        "id": new_ids(n), "namespace": [namespace] * n,
        "content": ArrowList(frame["content"].to_list(), frame["content"].to_arrow()), "value": [None] * n,
        "owner": [requester] * n, "created_by": [requester] * n, "status": ["active"] * n,
        "updated_at": [at] * n, "version": [1] * n, "supersedes": [None] * n,
        "merged_from": [[]] * n, "findings": [None] * n,
    }  # fmt: skip
    return {c: out[c] for c in TABLE_FIELDS}
