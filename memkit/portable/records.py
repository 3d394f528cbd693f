"""What the adapters share: other tools' records -> a frame ``MemoryStore.add_many`` takes.

An adapter (:mod:`~memkit.portable.adapters` for chat messages and mem0, :mod:`~memkit.portable.cogx`
for cognee's COGX) reads a foreign format into plain records, one dict per memory, and turns them
into a polars frame with :func:`records_frame`. Each adapter fills in :data:`ADAPTER_FIELDS` from its
own format; a record that memkit itself wrote elsewhere (a COGX archive's ``metadata["memkit"]``)
may also bring back any :data:`RESTORABLE` field.

>>> records_frame([{"namespace": "u", "content": "likes tea", "value": {"n": 1}}]).dtypes
[String, String, Object]
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import polars as pl

from ..errors import FormatError
from ..schema import WRITABLE_FIELDS, check_time

__all__ = ["ADAPTER_FIELDS", "RESTORABLE", "records_frame", "unencodable", "utc_time"]

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
