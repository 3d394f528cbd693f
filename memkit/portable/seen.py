"""An adapter import run again writes nothing again (but what was erased): the rows a store holds already.

:func:`~memkit.portable.records.add_frame` (every adapter's writer: chat, mem0, COGX; ``memkit import
--from``) skips, by default, a row the namespace already holds: a memory, in any status (active,
superseded, conflict, quarantined; a merged member is superseded), with the same text (as the write would
store it: after the guard's redaction, so "My email is bob@example.com" matches the held "My email is
[EMAIL]"), the same key (both none, or equal)
and the same owner (else creator) as the row would get (alice's import of "I like green tea" is hers even
when bob holds a public one), and, when the row gives a ``created_at`` (a chat message's time, mem0's
``created_at``), the same one. Its report's action is then ``present``, with the id of the memory it
matched. Two records of one file with the same text are both written the first time (two messages may say
the same); run again, both are present. A keyed record of a chat or mem0 import (``conflict_policy=
"supersede"``) that matches nothing is looked for once more without its key: an older memkit wrote it
unkeyed (``add_frame`` does it). A changed record (its text edited) is a new memory. What is compared
is what the writer may read: with a ``requester``, its view (a memory it cannot read is not matched, so an
import says nothing of what it cannot see). ``duplicates="add"`` writes every row again, as before.

An erased memory (``delete``, ``forget``) is gone, so it is not matched: importing the file again
writes it again. These records have no id for a tombstone to name, and one matching the text would
keep a digest of erased text, which erasure never keeps (README, "Forgetting is final").

memkit's own format has its ids, so its import needs none of this (``on_conflict``; an erased id
stays out).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from ..guard import screen_many

__all__ = ["DUPLICATES", "present"]

DUPLICATES = ("skip", "add")
"""What :func:`~memkit.portable.records.add_frame` does with a row the store holds already."""


def present(store: Any, namespace: str, part: pl.DataFrame, requester: str | None) -> list[str | None]:
    """For each row of ``part`` (one namespace's rows of an adapter frame), the id of a memory of
    ``namespace`` that is the same record (module docstring), else None. Joins, no Python loop; the
    guard screens only the rows whose text as given matched nothing (the write screens them again).

    Only the memories holding one of the rows' texts are read (``store.frame(contents=)``: the same
    view, a requester's included), first as given, then as the guard would store the rest: a re-import
    into a namespace of 100k memories reads the few it matches, not the 100k."""
    none = pl.lit(None, pl.String)
    rows = part.select(
        pl.col("content").cast(pl.String),
        (pl.col("key").cast(pl.String) if "key" in part.columns else none).alias("key"),
        (pl.col("created_at") if "created_at" in part.columns else pl.lit(None)).alias("created_at"),
        # whose memory the row becomes: another writer's same text is not this record (alice's import
        # of "I like green tea" is hers even when bob holds a public one)
        pl.coalesce(
            pl.col("owner").cast(pl.String) if "owner" in part.columns else none, pl.lit(requester, pl.String)
        ).alias("who"),
    ).with_row_index("row")
    found = _matched(rows, _held(store, namespace, rows, requester))
    guard = getattr(store, "guard", None)
    missed = found.filter(pl.col("id").is_null())["row"]
    if guard is not None and guard.enabled and len(missed) and store.count(namespace):  # as the write
        again = rows.filter(pl.col("row").is_in(missed.implode()))  # would store it (PII redacted)
        redacted = screen_many(again["content"].to_list(), guard).texts
        again = again.with_columns(content=pl.Series(redacted, dtype=pl.String))
        found = pl.concat(
            [
                found.filter(pl.col("id").is_not_null()),
                _matched(again, _held(store, namespace, again, requester)),
            ]
        )
    return found.sort("row")["id"].to_list()


def _held(store: Any, namespace: str, rows: pl.DataFrame, requester: str | None) -> pl.DataFrame:
    """``id, content, key, created_at, who`` of the memories of ``namespace`` (as ``requester`` may read
    them) whose text is one of ``rows``', in the frame's order (oldest first)."""
    texts = rows["content"].drop_nulls().unique().to_list()
    held = store.frame(namespace, requester=requester, contents=texts)
    return held.select(
        "id",
        "content",
        "key",
        pl.col("created_at").dt.replace_time_zone("UTC"),
        pl.coalesce("owner", "created_by").alias("who"),
    )


def _matched(rows: pl.DataFrame, held: pl.DataFrame) -> pl.DataFrame:
    """``row, id``: the first held memory of each row's (text, key, owner), and of its time when the
    row gives one (null: none)."""
    # cast even when empty: a frame without created_at gives a Null column, which no join accepts
    rows = rows.with_columns(pl.col("created_at").cast(held.schema["created_at"]))
    by_text = held.unique(["content", "key", "who"], keep="first", maintain_order=True)
    by_time = held.unique(["content", "key", "who", "created_at"], keep="first", maintain_order=True)
    untimed = rows.filter(pl.col("created_at").is_null()).drop("created_at")
    return pl.concat(
        [
            untimed.join(
                by_text.drop("created_at"), on=["content", "key", "who"], how="left", nulls_equal=True
            ),
            rows.filter(pl.col("created_at").is_not_null()).join(
                by_time, on=["content", "key", "who", "created_at"], how="left", nulls_equal=True
            ),
        ],
        how="diagonal",
    ).select("row", "id")
