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

import secrets
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from ..errors import ValidationError
from ..guard import identity
from ..schema import (
    ACCESS,
    DEFAULT_IMPORTANCE,
    KINDS,
    LAYER_HALF_LIFE_HOURS,
    LAYERS,
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
)

__all__ = ["WRITABLE", "build_rows", "new_id"]

WRITABLE = WRITABLE_FIELDS
"""Fields a caller may set on a write (add keywords, add_many columns): schema's list, under its old name."""


def new_id() -> str:
    """A short random id: 16 hex characters (64 bits; collisions are negligible below 10^8 memories)."""
    return secrets.token_hex(8)


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
    elif not isinstance(protected, bool):  # 0/1 or "yes" would pass a truthiness test
        raise ValidationError("protected", f"must be a bool, got {type(protected).__name__}")
    valid_from = check_time("valid_from", d.get("valid_from"), optional=True)
    valid_until = check_time("valid_until", d.get("valid_until"), optional=True)
    check_validity(valid_from, valid_until)
    created_at = check_time("created_at", _or(d.get("created_at"), now))  # may lie in the past
    last_access = check_time("last_access_at", _or(d.get("last_access_at"), created_at))
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
        # every timestamp is stored in UTC, whatever offset it came with
        "valid_from": valid_from and valid_from.astimezone(UTC),
        "valid_until": valid_until and valid_until.astimezone(UTC),
        "created_at": created_at.astimezone(UTC),
        "updated_at": now.astimezone(UTC),
        "last_access_at": last_access.astimezone(UTC),
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
