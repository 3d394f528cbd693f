"""What the adapters share: other tools' records -> a frame ``MemoryStore.add_many`` takes, and
:func:`add_frame`, which writes such a frame (``mk.adapters.add_frame``).

An adapter (:mod:`~memkit.portable.adapters` for chat messages and mem0, :mod:`~memkit.portable.cogx`
for cognee's COGX) reads a foreign format into plain records, one dict per memory, and turns them
into a polars frame with :func:`records_frame`. Each adapter fills in :data:`ADAPTER_FIELDS` from its
own format; a record that memkit itself wrote elsewhere (a COGX archive's ``metadata["memkit"]``)
may also bring back any :data:`RESTORABLE` field.

>>> records_frame([{"namespace": "u", "content": "likes tea", "value": {"n": 1}}]).dtypes
[String, String, Object]
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import polars as pl

from ..conflicts import POLICIES
from ..errors import AccessDenied, FormatError, ValidationError, WriteRefused, check_bool, check_frame
from ..schema import WRITABLE_FIELDS, check_choice, check_name, check_time
from .rows import build_rows
from .seen import DUPLICATES, present

__all__ = [
    "ADAPTER_FIELDS", "RESTORABLE", "add_frame", "check_store", "record_names", "records_frame",
    "unencodable", "utc_time",
]  # fmt: skip

ADAPTER_FIELDS = ("content", "tags", "source", "created_at")
"""The writable fields every adapter sets from its own format: the text, labels, origin and date."""

RESTORABLE = tuple(f for f in WRITABLE_FIELDS if f not in ADAPTER_FIELDS)
"""The other writable fields (``key``, ``value``, ``layer``, ...): what a record memkit wrote can
restore on the way back in."""


def utc_time(where: str, v: Any) -> datetime | None:
    """ISO-8601 text with an offset -> UTC datetime (naive text is ambiguous: rejected).

    ``where`` names the record and field in the error (``results[3].created_at``); None and the
    empty string mean "no time".

    >>> utc_time("created_at", "2024-07-20T01:25:51-07:00")
    datetime.datetime(2024, 7, 20, 8, 25, 51, tzinfo=datetime.timezone.utc)
    """
    if v is None or v == "":
        return None
    try:
        t = datetime.fromisoformat(v) if isinstance(v, str) else v
        return check_time(where, t)  # in UTC
    except (ValueError, TypeError) as e:
        raise FormatError(where, f"is not a timezone-aware ISO-8601 timestamp ({v!r}): {e}") from None


def records_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Records -> a frame; ``value`` stays a Python object column (any JSON shape).

    subtle: ``value`` is popped from each record before polars sees it, since values of different
    shapes (a dict here, a list there) would not share one inferred type. An empty input still has
    the two columns every adapter frame has.
    """
    values = [r.pop("value", None) for r in rows]
    try:
        df = pl.DataFrame(rows, infer_schema_length=None)
    except UnicodeEncodeError:  # a lone surrogate ("\ud800") in some text: name where it is
        found = (f"records[{i}].{k}" for i, r in enumerate(rows) for k, v in r.items() if unencodable(v))
        where = next(found, "records")  # (deeper in a field: the records as a whole)
        raise FormatError(where, "contains a lone surrogate (invalid Unicode)") from None
    if not rows:
        return pl.DataFrame(schema={"namespace": pl.String, "content": pl.String})
    return (
        df.with_columns(pl.Series("value", values, dtype=pl.Object))
        if any(v is not None for v in values)
        else df
    )


def unencodable(v: Any) -> bool:
    """Whether ``v`` (a text, or a list of them) holds what UTF-8 cannot encode (a lone surrogate)."""
    texts = v if isinstance(v, list) else [v]
    return any(isinstance(t, str) and not t.isascii() and _surrogate(t) for t in texts)


def _surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (what UTF-8 cannot encode)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def add_frame(
    store: Any,
    frame: pl.DataFrame,
    *,
    requester: str | None = None,
    now: datetime | None = None,
    duplicates: str = "skip",
    conflict_policy: str | None = None,
    time_order: bool = False,
) -> pl.DataFrame:
    """Write an adapter's frame with ``store.add_many`` (one call per namespace; rows whose ``store``
    column is false are skipped) -> report ``row, namespace, id, action`` (``added`` / ``skipped`` /
    ``present``).

    A row the namespace holds already (the same text, key and given time: :mod:`.seen`) is not
    written again (``present``, the id of the memory it matched), so an import run twice writes
    nothing the second time; ``duplicates="add"`` writes it again, as a new memory.

    All or nothing: every row is validated first, and every namespace commits in one transaction
    (``store.transaction()``), so a record refused or rejected in the last namespace leaves no
    earlier one written. The rows are an import's: screened as ``source="import"`` whatever ``source``
    they claim (kept as stored), a refusal audited as ``attempted: "import"``. Columns that are not
    writable Memory fields (``turn``, ``role``, ``reason``, ...) are not written, and neither is a
    column that is null in every row of a namespace, so that the field gets its default there. An
    error names the record by the frame's ``record`` column (``messages[3].content: ...``), else by
    its ``row``.

    Keyed rows meet the key's stored versions, and each other in frame order, under ``conflict_policy``
    (None: the store's). With ``"supersede"`` (a chat import: :func:`~memkit.portable.adapters.import_file`)
    a key is used as :class:`~memkit.agent.MemoryAgent` uses it: a later statement supersedes the
    earlier one, and a row keeps no key (it is written as a plain memory) when the key's current
    version is not the requester's to change (AccessDenied, audited as the agent's write is), is
    another writer's (its owner, else creator, is not the row's owner, else the requester: bob's chat
    does not replace alice's fact), or is dated after the row (an old chat does not replace what the
    user has said since), and when an earlier row of the frame with the key is dated after it. With
    ``time_order`` each namespace's rows are written oldest ``created_at`` first (a row without one last,
    as the write's now), whatever their order in the frame (mem0 lists its memories in no order of time),
    so a key's older values are superseded by its newer ones; the report keeps the frame's rows. With
    ``"supersede"`` a keyed row also matches the same record held *without* a key (the text, owner and
    time an import by a memkit that did not key it wrote): it is ``present``, not written again beside
    it (the held row keeps no key). Bad arguments (a ``store`` that is not a store, a ``frame`` without
    ``namespace`` or ``content``, a non-boolean ``store`` column, ``time_order="y"``) are refused first,
    naming the argument (and the column)."""
    check_store(store)
    check_frame(frame, "frame", ("namespace", "content"))
    if "row" in frame.columns:  # the report's own column
        raise ValidationError("frame", "has a column 'row', which the report adds: drop or rename it")
    if frame.schema.get("store", pl.Boolean) not in (pl.Boolean, pl.Null):
        raise ValidationError("frame", f"column 'store' must be Boolean, got {frame.schema['store']}")
    duplicates = check_choice("duplicates", duplicates, DUPLICATES)
    if conflict_policy is not None:
        conflict_policy = check_choice("conflict_policy", conflict_policy, POLICIES)
    time_order, now = check_bool("time_order", time_order), check_time("now", now, optional=True)
    frame = frame.with_row_index("row")  # the report's row: the position in the input frame
    writable = set(WRITABLE_FIELDS)
    wanted = frame.filter(pl.col("store")) if "store" in frame.columns else frame
    parts = [
        frame.join(wanted, on="row", how="anti").select(
            "row", "namespace", id=pl.lit(None, pl.String), action=pl.lit("skipped")
        )
    ]
    groups = []
    for (ns,), part in wanted.group_by("namespace", maintain_order=True):
        cols = [c for c in part.columns if c in writable and part[c].null_count() < part.height]
        # validate every namespace before writing any, so bad input in the last group writes nothing
        records, space, at = (
            part.select(cols).to_dicts(),
            check_name("namespace", ns),
            now or datetime.now(UTC),
        )
        try:
            build_rows(records, space, requester, at)
        except ValidationError as e:  # name the record (messages[3], results[0]), not the group's row
            names = part["record"] if "record" in part.columns else [f"row {r}" for r in part["row"]]
            for rec, name in zip(records, names, strict=True):  # the slow path, on the error only
                try:
                    build_rows([rec], space, requester, at)
                except ValidationError as one:
                    raise type(one)(f"{name}.{one.field}", str(one)[len(one.field) + 2 :]) from None
            raise e from None
        if time_order and "created_at" in part.columns:  # stable: rows of one time keep the frame's order
            part = part.sort("created_at", nulls_last=True, maintain_order=True)
        given = part
        derived = conflict_policy == "supersede" and "key" in part.columns
        if derived:
            part = part.with_columns(key=_usable_keys(store, part, space, requester, at))
        if duplicates == "skip":  # what the namespace holds already is not written again (seen.py)
            found = pl.Series("id", present(store, space, part, requester), dtype=pl.String)
            # a key dropped now (a newer value since) may have been written by an earlier import
            if part is not given and not part["key"].equals(given["key"]):
                found = found.fill_null(pl.Series(present(store, space, given, requester), dtype=pl.String))
            if derived and found.is_null().any() and given["key"].is_not_null().any():
                # the record as a memkit that did not key it wrote it (same text, owner, time; no key)
                bare = present(store, space, given.with_columns(key=pl.lit(None, pl.String)), requester)
                found = found.fill_null(pl.Series(bare, dtype=pl.String))
            known = part.select("row", "namespace").with_columns(id=found, action=pl.lit("present"))
            parts.append(known.filter(pl.col("id").is_not_null()))
            part = part.filter(found.is_null())
        groups.append((ns, part, cols))
    # every namespace, or none; the rows are an import's (screened as source "import" whatever they claim)
    with store.transaction(), store._as_import():
        for ns, part, cols in groups:
            if part.is_empty():
                continue
            try:
                ids = store.add_many(
                    part.select(cols),
                    namespace=ns,
                    requester=requester,
                    now=now,
                    conflict_policy=conflict_policy,
                )
            except WriteRefused as e:  # its rows are the group's: name the frame's row (and record) instead
                raise _in_frame(
                    e, part["row"], part["record"] if "record" in part.columns else None
                ) from None
            parts.append(part.select("row", "namespace").with_columns(id=ids["id"], action=pl.lit("added")))
    return pl.concat(parts).sort("row")


def check_store(store: Any) -> None:
    """ValidationError naming ``store`` unless it is a :class:`~memkit.MemoryStore` (what a writer of
    adapter frames needs of one: this package sits below the store, so by what it does)."""
    if not all(callable(getattr(store, m, None)) for m in ("add_many", "transaction", "_as_import", "frame")):
        raise ValidationError("store", f"must be a memkit.MemoryStore, got {type(store).__name__}")


def record_names(where: Any, n: int, default: str = "messages") -> list[str]:
    """What errors name ``n`` records by: ``where`` (a list of ``n`` str: ``line 4``), else
    ``messages[i]``; ValidationError naming ``where`` for anything else (a str is not split into
    characters)."""
    if where is None:
        return [f"{default}[{i}]" for i in range(n)]
    if isinstance(where, (str, bytes)) or not isinstance(where, (list, tuple)):
        raise ValidationError("where", f"must be a list of str, one per record; got {type(where).__name__}")
    if len(where) != n or not all(isinstance(w, str) for w in where):
        raise ValidationError("where", f"must hold one str per record: {n} records, {len(where)} names")
    return list(where)


def _usable_keys(
    store: Any, part: pl.DataFrame, namespace: str, requester: str | None, now: datetime
) -> pl.Series:
    """``part``'s keys, null where a keyed write would not supersede as the agent's does (see
    :func:`add_frame`): one check and one read per distinct key of the part (``store.versions``, gated
    as ``frame`` is: the key's rows only, not the namespace's), not per row."""
    keys = part["key"].drop_nulls().unique().to_list()
    if not keys:
        return part["key"]
    denied, current = [], []
    for key in keys:  # a handful: the slots and preference topics a conversation touches
        try:
            store.check_key_write(key, namespace=namespace, requester=requester, now=now)
        except AccessDenied:
            denied.append(key)
            continue
        live = store.versions(key, namespace=namespace, requester=requester).filter(
            pl.col("status") == "active"
        )
        current.append(
            live.select(
                key=pl.lit(key, pl.String),
                since=pl.col("created_at").dt.replace_time_zone("UTC").cast(pl.Datetime("us", "UTC")),
                holder=pl.coalesce("owner", "created_by").cast(pl.String),
            ).tail(1)  # oldest first: the newest version
        )
    held = pl.concat(current) if current else pl.DataFrame(schema=_HELD_KEYS)
    at = pl.col("created_at") if "created_at" in part.columns else pl.lit(None, pl.Datetime("us", "UTC"))
    owner = pl.col("owner").cast(pl.String) if "owner" in part.columns else pl.lit(None, pl.String)
    dated = part.select(
        "key",
        at=pl.coalesce(at, pl.lit(now)).cast(pl.Datetime("us", "UTC")),
        who=pl.coalesce(owner, pl.lit(requester, pl.String)),
    ).join(held, on="key", how="left", maintain_order="left")
    older = dated["since"].is_not_null() & (dated["at"] < dated["since"])
    # another writer's value (public too): in a shared namespace bob's chat does not replace alice's
    # fact (MK011 counts them per user too)
    theirs = dated["since"].is_not_null() & dated["holder"].ne_missing(dated["who"])
    # a message dated before an earlier one of the same key (a file listed newest first): not the value
    behind = dated.select(pl.col("at") < pl.col("at").cum_max().over("key"))["at"]
    return part["key"].set(older | theirs | behind | part["key"].is_in(denied), None)


_HELD_KEYS = {"key": pl.String, "since": pl.Datetime("us", "UTC"), "holder": pl.String}


def _in_frame(e: WriteRefused, rows: pl.Series, records: pl.Series | None) -> WriteRefused:
    """A refusal of one namespace's ``add_many`` -> the same, its rows those of the whole frame (and
    the first one's ``record``, when the frame names its records: ``(chat.jsonl: line 4)``)."""
    found = e.findings.with_columns(row=rows.gather(e.findings["row"]))  # type: ignore[attr-defined]
    first = found["row"].unique(maintain_order=True)
    more = f" (and {first.len() - 1} more)" if first.len() > 1 else ""
    codes = str(e).rpartition(": ")[2]
    where = "" if records is None else f" ({records[int(e.findings['row'][0])]})"  # type: ignore[attr-defined]
    return WriteRefused(f"write refused by the guard in row {first[0]}{more}: {codes}{where}", found)
