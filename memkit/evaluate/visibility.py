"""What an evaluation may rank at ``now``, and which memories neighbour expansion pairs: the store's
read gate and its neighbours over a memories frame, for :func:`memkit.evaluate.prepare`.

A search at ``now`` returns only memories already written (``created_at <= now``) and valid then
(``valid_from <= now < valid_until``, either bound open when null or absent), on every path; from a
store's frame (its ``status`` and access columns) only the ``active`` ones its requester may read.
All of it is :class:`~memkit.store.gate.Gate`, the rule every read of the store passes.

Neighbours are paired as the store pairs them (:meth:`IndexColumns.adjacency
<memkit.store.index_columns.IndexColumns.adjacency>` under a gate, and ``store.neighbours``): in
the order of writing, among the memories the requester may read. A memory a search may not return
for another reason (not yet written, expired, superseded, disputed, quarantined) keeps its place
between the turns around it and lends them nothing; one the requester may not read is not there
for it at all, so it does not part two of the requester's own memories.

From a store, each group is judged as a search at its ``now`` judges it (:func:`as_of_groups`): each
memory by its status then, one not yet written then (a merge made later) keeping only its place.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import polars as pl

from ..access import readable_expr
from ..errors import ValidationError
from ..scoring import NEIGHBOUR_WINDOW_HOURS, adjacent
from ..store.gate import Gate

__all__ = ["GATED", "TIMES", "UNWRITTEN", "as_of_groups", "rankable"]

GATED = ("status", "access", "owner", "created_by", "valid_from", "valid_until")  # store.frame() has them
TIMES = ("created_at", "valid_from", "valid_until")  # read as UTC; the last two optional
UNWRITTEN = "unwritten"  # the status, in an evaluation, of a memory not yet written at its group's now
_US_PER_HOUR = 3.6e9
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _utc(mem: pl.DataFrame) -> pl.DataFrame:
    """The time columns in UTC (a naive one read as UTC, as the ages are), the validity bounds added
    as nulls when absent; any other type is a ValidationError naming the column."""
    cols = []
    for c in TIMES:
        if c not in mem.columns:
            cols.append(pl.lit(None, dtype=pl.Datetime("us", "UTC")).alias(c))
            continue
        dt = mem.schema[c]
        if dt == pl.Null:
            cols.append(pl.col(c).cast(pl.Datetime("us", "UTC")))
        elif dt == pl.Date or (isinstance(dt, pl.Datetime) and dt.time_zone is None):
            cols.append(pl.col(c).cast(pl.Datetime("us")).dt.replace_time_zone("UTC"))
        elif isinstance(dt, pl.Datetime):
            cols.append(pl.col(c).dt.convert_time_zone("UTC"))
        else:
            raise ValidationError(c, f"must be a datetime column, got {dt}")
    return mem.with_columns(cols)


def rankable(
    mem: pl.DataFrame, now_us: int, requester: str | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One group's memories at ``now_us`` (µs since the epoch) -> ``(visible, prev, next)``, each
    ``(n,)``: which a search may return (for ``requester``, when ``mem`` is a store's frame: it has
    every :data:`GATED` column), and each memory's neighbours (row numbers, ``-1`` for none) as the
    store pairs them.

    >>> t = [datetime(2026, 1, d, tzinfo=UTC) for d in (1, 2, 3)]
    >>> day2 = 1_767_312_000_000_000                                       # 2026-01-02 in µs
    >>> v, p, n = rankable(pl.DataFrame({"created_at": t}), day2, None)   # the third: not yet written
    >>> v.tolist(), p.tolist(), n.tolist()
    ([True, True, False], [-1, 0, 1], [1, 2, -1])
    """
    frame, at = _utc(mem), _EPOCH + timedelta(microseconds=now_us)  # exact (no float seconds)
    store = all(c in mem.columns for c in GATED)
    gate = Gate(None, requester, ("active",), at) if store else Gate(None, None, None, at)
    visible = frame.select(gate.expr()).to_series().to_numpy()
    there = None  # what the requester may read: the others are not there for it (not even a place)
    if store and requester is not None:
        there = frame.select(readable_expr(requester)).to_series().to_numpy()
    # in µs, as the store compares them: turns exactly a day apart stay neighbours
    written = frame["created_at"].dt.epoch("us").to_numpy()
    window = int(NEIGHBOUR_WINDOW_HOURS * _US_PER_HOUR)
    prev, nxt = adjacent(np.zeros(len(written), np.int8), written, window, there)
    return visible.astype(bool), prev, nxt


def as_of_groups(store: Any, mem: pl.DataFrame, group: str, now: datetime | None) -> pl.DataFrame:
    """A store's memories frame (``store.frame()``, its namespaces in column ``group``) with each
    group's statuses as they were at the time it is evaluated at (``now``, else its newest memory's
    ``created_at``), as ``store.frame(as_of=)`` and a search then judge them; a memory not yet
    written then (a merge made later) gets :data:`UNWRITTEN`: it keeps its place as a neighbour,
    and is not ranked. One ``frame(as_of=)`` per group: cheap unless a status changed after it."""
    parts = []
    for (g,), part in mem.group_by(group, maintain_order=True):
        at = now if now is not None else part["created_at"].max()
        then = store.frame(g, as_of=at).select("id", status_then="status")
        part = part.join(then, on="id", how="left", maintain_order="left")
        parts.append(part.with_columns(status=pl.col("status_then").fill_null(UNWRITTEN)).drop("status_then"))
    return pl.concat(parts) if parts else mem
