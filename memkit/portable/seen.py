"""An adapter import run again writes nothing again: which rows of a frame the store holds already.

:func:`~memkit.portable.records.add_frame` (every adapter's writer: chat, mem0, COGX; ``memkit import
--from``) skips, by default, a row the namespace already holds: a memory, in any status (active, superseded,
quarantined, merged, deleted), with the same text (as the write would store it: after the guard's redaction,
so "My email is bob@example.com" matches the held "My email is [EMAIL]"), the same key (both none, or equal)
and the same owner (else creator) as the row would get (alice's import of "I like green tea" is hers even
when bob holds a public one), and, when the row gives a ``created_at`` (a chat message's time, mem0's
``created_at``), the same one. Its report's action is then ``present``, with the id of the memory it
matched. Two records of one file with the same text are both written the first time (two messages may say
the same); run again, both are present. A changed record (its text edited) is a new memory. What is compared
is what the writer may read: with a ``requester``, its view (a memory it cannot read is not matched, so an
import says nothing of what it cannot see). ``duplicates="add"`` writes every row again, as before.

memkit's own format has its ids, so its import needs none of this (``on_conflict``).
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
    ``namespace`` that is the same record (module docstring), else None. Two joins, no Python loop."""
    held = store.frame(namespace, requester=requester).select(
        "id", "content", "key", "created_at", pl.coalesce("owner", "created_by").alias("who")
    )
    if held.is_empty():
        return [None] * part.height
    none = pl.lit(None, pl.String)
    texts = part["content"].cast(pl.String)
    guard = getattr(store, "guard", None)
    if guard is not None and guard.enabled:  # the text as the write would store it (PII redacted)
        texts = pl.Series("content", screen_many(texts.to_list(), guard).texts, dtype=pl.String)
    rows = part.select(
        texts.alias("content"),
        (pl.col("key").cast(pl.String) if "key" in part.columns else none).alias("key"),
        (pl.col("created_at") if "created_at" in part.columns else pl.lit(None)).alias("created_at"),
        # whose memory the row becomes: another writer's same text is not this record (alice's import
        # of "I like green tea" is hers even when bob holds a public one)
        pl.coalesce(
            pl.col("owner").cast(pl.String) if "owner" in part.columns else none, pl.lit(requester, pl.String)
        ).alias("who"),
    ).with_row_index("row")
    held = held.with_columns(pl.col("created_at").dt.replace_time_zone("UTC"))
    # the first held memory of each (text, key) and each (text, key, time): as the rows were stored
    by_text = held.unique(["content", "key", "who"], keep="first", maintain_order=True)
    by_text = by_text.select("content", "key", "who", "id")
    by_time = held.unique(["content", "key", "who", "created_at"], keep="first", maintain_order=True)
    # cast even when empty: a frame without created_at gives a Null column, which no join accepts
    timed = rows.filter(pl.col("created_at").is_not_null())
    timed = timed.with_columns(pl.col("created_at").cast(held.schema["created_at"]))
    found = pl.concat(
        [
            rows.filter(pl.col("created_at").is_null())
            .join(by_text, on=["content", "key", "who"], how="left", nulls_equal=True)
            .select("row", "id"),
            timed.join(
                by_time.select("content", "key", "who", "created_at", "id"),
                on=["content", "key", "who", "created_at"],
                how="left",
                nulls_equal=True,
            ).select("row", "id"),
        ]
    )
    return found.sort("row")["id"].to_list()
