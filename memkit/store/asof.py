"""Time travel that tells the truth: a read at a past ``now`` judges each memory by its status then.

``frame(as_of=t)``, ``search(now=t)``, ``read(now=t)``, ``neighbours(now=t)``, a ``forget`` or a
``consolidate`` dated ``t``, and ``evaluate`` of a store all follow one rule, replayed from the audit
log (every event that sets a status carries ``detail.status``: :mod:`memkit.store.audit`):

- a memory exists from its ``created_at`` — when its writer says it was written: a conversation's
  history added today with its own times is there at those times — except a merge, which exists
  from its ``merge`` event: its ``created_at`` is its oldest member's (for decay), so before the
  merge was made the members are there, each as it was, and the merge is not;
- its status at ``t`` is that of its last status event dated by ``t`` (in log order: a write dated
  before an earlier one still comes after it); before its first one (a history written later with
  earlier times) the status it was written with;
- an erased memory is gone at every ``t``: erasure is not undone by time travel;
- so at every ``t`` a key has at most one current (``active``) version, whatever path wrote its
  history (``add``, ``add_many``, ``import_``, ``approve``, ``resolve``): each write logs every change
  it makes to a key's versions when it happened in the key's history (under ``supersede``: the
  latest-written version there and not held is current; a write dated before the current version
  takes its place in the history, ``superseded`` today: :mod:`memkit.store.timeline`), and this
  replay of the log shows it as it is.

Cost. The store keeps a watermark, the latest ``ts`` of any status event (:meth:`AsOfMixin._mark`):
looked up once, then raised by the store's own writes as the audit writer logs them, and on a server
by the other processes' changes as the index follows them (:mod:`memkit.store.sync`). A read at or
after it sees today's statuses, so it costs what it did (no look at the log). Only a ``now`` before
it pays: one set-based query lists the memories whose status then differs from today's (:class:`Then`:
``id, status``, null for one not yet written), and the read gate (:class:`~memkit.store.gate.Gate`,
field ``then``) applies it in SQL, in polars and over the index's codes — every index kind ranks
with the same mask. The query replays only the memories written after ``now`` or with a status event
dated after it (:func:`then_query`): a ``now`` just before the last few changes reads their events;
one before most of the store was written replays every memory (cheaper than finding them first).

>>> from datetime import datetime, timezone
>>> then = Then(datetime(2026, 1, 1, tzinfo=timezone.utc),
...             pl.DataFrame({"id": ["a", "b"], "status": ["active", None]}))
>>> then.ids(("active",)), then.ids(None)       # active then; not yet written then
(['a'], ['b'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from ..schema import STATUSES
from .audit import AuditMixin
from .vectors import epoch_us

__all__ = ["NOT_YET", "STATUS_OPS", "AsOfMixin", "Then", "then_query"]

NOT_YET = -2  # the index's status code, at a past `now`, of a memory not written by then (erased: -1)
# the ops whose events may set a status (detail.status): a write logging one raises the watermark
STATUS_OPS = frozenset({"add", "import", "merge", "supersede", "conflict", "resolve", "quarantine",
                        "approve"})  # fmt: skip
_UNKNOWN = object()  # the watermark before it is looked up (None: a log without status events)
# (by op, not by detail.status: no JSON to parse, and an op that may set one is enough for a watermark)
_MARK = f"SELECT max(ts) FROM events WHERE op IN ({', '.join(repr(op) for op in sorted(STATUS_OPS))})"
_MARK_OF = _MARK + " AND memory_id IN (SELECT unnest(?::VARCHAR[]))"  # (events_memory_id on a server)
# each memory's status at `t` where it differs from today's (null: not there at `t`): its last status
# event by `t`; else none if it is a merge (its first status event's op) or was written after `t`;
# else the status it was written with (a memory without any status event: today's)
_THEN = (
    "SELECT id, status FROM (SELECT m.id, m.status AS today, CASE WHEN s.status IS NOT NULL THEN s.status"
    " WHEN f.op = 'merge' OR m.created_at > ? THEN NULL ELSE COALESCE(f.status, m.status) END AS status"
    " FROM (SELECT id, status, created_at FROM memories WHERE {where}) m"
    " LEFT JOIN (SELECT DISTINCT ON (memory_id) memory_id, detail->>'status' AS status FROM events"
    " WHERE ts <= ? AND detail->>'status' IS NOT NULL ORDER BY memory_id, seq DESC) s ON s.memory_id = m.id"
    " LEFT JOIN (SELECT DISTINCT ON (memory_id) memory_id, op, detail->>'status' AS status FROM events"
    " WHERE detail->>'status' IS NOT NULL ORDER BY memory_id, seq) f ON f.memory_id = m.id) x"
    " WHERE {differ}"
)
# The same rule, replaying only `m`, the memories whose status at `t` may differ from today's: those
# written after `t` or with a status event dated after it. Any other has all its status events dated
# by `t`, so its last one by `t` is its last one (log order: seq) and set today's status (every status
# change is logged with the status it sets: what the watermark relies on too), or it has none and
# today's is the status it was written with. Found by time first (a recent `t`: few events after
# it), their status events `e` read once. A server reaches each through an index (events_ts,
# memories_created_at: pg_schema 5), one arm each; DuckDB scans the columns once.
_NARROWED = (
    "WITH m AS ({memories}), e AS (SELECT memory_id, seq, ts, op, detail->>'status' AS status FROM events"
    " JOIN m ON m.id = memory_id WHERE detail->>'status' IS NOT NULL) SELECT id, status FROM (SELECT"
    " m.id, m.status AS today, CASE WHEN s.status IS NOT NULL THEN s.status WHEN f.op = 'merge' OR"
    " m.created_at > ? THEN NULL ELSE COALESCE(f.status, m.status) END AS status FROM m LEFT JOIN"
    " (SELECT DISTINCT ON (memory_id) memory_id, status FROM e WHERE ts <= ? ORDER BY memory_id, seq DESC)"
    " s ON s.memory_id = m.id LEFT JOIN (SELECT DISTINCT ON (memory_id) memory_id, op, status FROM e"
    " ORDER BY memory_id, seq) f ON f.memory_id = m.id) x WHERE status IS DISTINCT FROM today"
)
_MEMORIES = "SELECT id, status, created_at FROM memories WHERE {where} AND "
_AFTER = "id IN (SELECT memory_id FROM events WHERE ts > ? AND detail->>'status' IS NOT NULL)"
_MAY_DIFFER = {  # on a server? -> `m` (on a server, two disjoint arms)
    False: f"{_MEMORIES}(created_at > ? OR {_AFTER})",
    True: f"{_MEMORIES}created_at > ? UNION ALL {_MEMORIES}created_at <= ? AND {_AFTER}",
}
# inside a transaction the index still holds the statuses from before it (rows join it at commit) while
# the table holds the transaction's: "differs from today's" must be judged against the index, so every
# memory is listed with its status then (a past read inside a transaction is rare)
_DIFFER = "status IS DISTINCT FROM today"
_CODE = {s: i for i, s in enumerate(STATUSES)}  # a status -> the index's code of it


def then_query(
    namespace: str | None, t: datetime, *, everyone: bool = False, server: bool = False, narrow: bool = True
) -> tuple[str, list[Any]]:
    """The query of :meth:`AsOfMixin._then` -> ``(sql, params)``: the memories of ``namespace``
    (None: all) whose status at ``t`` differs from today's (``server``: on PostgreSQL), or with
    ``everyone`` (inside a transaction: see :data:`_DIFFER`) every memory with its status then.
    ``narrow=False`` replays every memory's events (what the narrowed query must equal)."""
    where, space = ("namespace = ?", [namespace]) if namespace is not None else ("TRUE", [])
    if everyone or not narrow:  # (everyone: also the memories the transaction changed before `t`)
        return _THEN.format(where=where, differ="TRUE" if everyone else _DIFFER), [t, *space, t]
    memories = _MAY_DIFFER[server].format(where=where)
    params = [*space, t, *space, t, t] if server else [*space, t, t]
    return _NARROWED.format(memories=memories), [*params, t, t]


def _mostly_new(ix: Any, namespace: str | None, t: datetime) -> bool:
    """Whether at least half the memories the index ``ix`` holds are of ``namespace`` (None: any) and
    written after ``t``: the narrowed replay would replay them anyway, and replaying every memory
    costs less than finding them first."""
    live = len(getattr(ix, "row", ()))
    if not live:
        return False
    new = (ix.created_us[: ix.n] > epoch_us(t)) & (ix.status[: ix.n] >= 0)  # (erased: -1)
    if namespace is not None:
        new &= ix.ns[: ix.n] == ix.names.lookup(namespace)
    return 2 * int(np.count_nonzero(new)) >= live


@dataclass(frozen=True, eq=False)
class Then:
    """The statuses instant ``at`` saw that differ from today's: ``changed`` is ``id, status``, one
    row per such memory (``status`` null: not written by ``at``). A memory not listed had its status
    of today."""

    at: datetime
    changed: pl.DataFrame
    _codes: dict[Any, np.ndarray] = field(default_factory=dict, repr=False)  # per index state

    def ids(self, statuses: Sequence[str] | None) -> list[str]:
        """The listed ids whose status then is one of ``statuses`` (None: those not yet written)."""
        s = self.changed["status"]
        keep = s.is_null() if statuses is None else s.is_in(list(statuses)).fill_null(False)
        return self.changed["id"].filter(keep).to_list()

    def codes(self, ix: Any) -> np.ndarray:
        """The index ``ix``'s status column as it stood at ``at`` -> ``(n,)`` int8 (:data:`NOT_YET`
        for a memory not written by then; an id the index does not hold is skipped)."""
        key = (id(ix), ix.version, ix.n)
        if key not in self._codes:  # one per index state: a search masks several times
            ids = self.changed["id"].to_list()
            rows = ix.row.find(ids)  # (c,), -1: unknown
            code = self.changed["status"].replace_strict(_CODE, default=None, return_dtype=pl.Int8)
            code = code.fill_null(NOT_YET).to_numpy()
            status = ix.status[: ix.n].copy()  # (n,)
            status[rows[rows >= 0]] = code[rows >= 0]
            self._codes.clear()
            self._codes[key] = status
        return self._codes[key]

    def status_expr(self) -> pl.Expr:
        """A memories frame's ``status`` as it was at ``at`` (null: not written by then)."""
        listed = pl.col("id").is_in(self.changed["id"].implode())
        then = pl.col("id").replace_strict(self.changed["id"], self.changed["status"], default=None)
        return pl.when(listed).then(then).otherwise(pl.col("status"))

    def apply(self, frame: pl.DataFrame) -> pl.DataFrame:
        """``frame`` (memories, today's statuses) as it stood at ``at``: the memories written by
        then, each with its status then, in the same order."""
        if self.changed.is_empty():
            return frame
        return frame.with_columns(status=self.status_expr()).filter(pl.col("status").is_not_null())


class AsOfMixin(AuditMixin):
    """The watermark and the statuses of a past instant (see the module docstring)."""

    _status_mark: Any  # the latest ts of a status event; None: none logged; _UNKNOWN: not looked up
    _then_memo: tuple[Any, Then | None]  # the last (key, Then): searches at one past `now` in a row

    def _synced(self) -> Any:
        """On a server, the index with the other processes' writes (implemented in memkit.store.sync)."""
        raise NotImplementedError

    def _mark(self) -> datetime | None:
        """The watermark: the latest ``ts`` of a status event (None: there is none), looked up once."""
        mark = self.__dict__.get("_status_mark", _UNKNOWN)
        if mark is _UNKNOWN:
            mark = self._status_mark = self._run(_MARK)[0][0]
        return mark

    def _past(self, t: datetime, *, look: bool = False) -> bool:
        """Whether ``t`` may be before the last status change (False: the statuses of today are those
        of ``t``). An unknown watermark is looked up with ``look`` (taking the lock), else: yes."""
        if look and self.__dict__.get("_status_mark", _UNKNOWN) is _UNKNOWN:
            with self._lock:
                self._mark()
        mark = self.__dict__.get("_status_mark", _UNKNOWN)
        return mark is _UNKNOWN or (mark is not None and t < mark)

    def _saw(self, ts: Any, op: str) -> None:
        """A status event at ``ts`` was written: the watermark rises to it (once known). A write that
        rolls back leaves it a little high: a read after it then merely looks at the log."""
        mark = self.__dict__.get("_status_mark", _UNKNOWN)
        if op not in STATUS_OPS or mark is _UNKNOWN:
            return
        if not isinstance(ts, datetime) or ts.tzinfo is None:  # (not a logged time: look again)
            self._status_mark = _UNKNOWN
        elif mark is None or ts > mark:
            self._status_mark = ts

    def _marks_follow(self, ids: list[str]) -> None:
        """On a server, the other processes' changes of memories ``ids`` were applied to the index:
        the watermark rises to their latest status event (each status event comes with its row's
        change, in one transaction)."""
        if ids and self.__dict__.get("_status_mark", _UNKNOWN) is not _UNKNOWN:
            latest = self._run(_MARK_OF, [ids])[0][0]
            if latest is not None:
                self._saw(latest, "add")

    def _then(self, namespace: str | None, t: datetime, *, synced: bool = False) -> Then | None:
        """The statuses of ``namespace`` (None: all) at ``t`` that differ from today's, or None when
        none can (``t`` at or after the watermark): the cheap answer of almost every read.
        ``synced``: the caller has just synced a server's index."""
        with self._lock:  # (re-entrant: most callers hold it already)
            if self._pg is not None and not synced:
                self._synced()  # another process's change raises the watermark (sync.py)
            mark = self._mark()
            if mark is None or t >= mark:
                return None
            ix = self.__dict__.get("_index")
            key = (namespace, t, id(ix), getattr(ix, "version", None), getattr(ix, "n", None))
            memo = self.__dict__.get("_then_memo")
            if memo is not None and memo[0] == key and not self._depth:  # (in a transaction: again)
                return memo[1]
            narrow = not _mostly_new(ix, namespace, t)
            query, params = then_query(namespace, t, everyone=bool(self._depth), server=self._pg is not None,
                                       narrow=narrow)  # fmt: skip
            changed = self._sql(query, params)
            then = Then(t, changed.cast({"id": pl.String, "status": pl.String})) if changed.height else None
            if not self._depth:  # what a transaction saw may be rolled back: never remembered
                self._then_memo = (key, then)
            return then

    def _as_of(self, gate: Any, t: datetime, *, synced: bool = False) -> Any:
        """``gate`` (a :class:`~memkit.store.gate.Gate` valid at ``t``) judging status as at ``t``."""
        then = self._then(gate.namespace, t, synced=synced)
        return gate if then is None else replace(gate, then=then)

    # ------------------------------------------------------------- the audit writer raises the watermark
    def _event(self, ts: datetime, op: str, *args: Any, **detail: Any) -> None:
        """:meth:`AuditMixin._event <memkit.store.audit.AuditMixin._event>`, noted by the watermark."""
        super()._event(ts, op, *args, **detail)
        self._saw(ts, op)

    def _events(
        self,
        ts: datetime | Sequence[datetime],
        op: str,
        namespaces: Sequence[str | None],
        *args: Any,
        **kw: Any,
    ) -> None:
        """:meth:`AuditMixin._events <memkit.store.audit.AuditMixin._events>`, noted by the watermark
        (the latest of the events' times)."""
        super()._events(ts, op, namespaces, *args, **kw)
        if len(namespaces):
            self._saw(ts if isinstance(ts, datetime) else max(ts), op)

    def _logged(self, insert: tuple[str, list[Any]], ts: datetime, op: str, *args: Any) -> Any:
        """:meth:`AuditMixin._logged <memkit.store.audit.AuditMixin._logged>`, noted by the watermark."""
        self._saw(ts, op)  # (before the statement runs: a watermark too high only costs a query)
        return super()._logged(insert, ts, op, *args)

    def _event_rows(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """:meth:`AuditMixin._event_rows <memkit.store.audit.AuditMixin._event_rows>` (imported
        history, deferred reads), noted by the watermark: the latest of its status events."""
        super()._event_rows(rows)
        if self.__dict__.get("_status_mark", _UNKNOWN) is not _UNKNOWN:
            times = [r[0] for r in rows if r[2] in STATUS_OPS]  # (deferred reads: none)
            try:
                self._saw(max(times), "add") if times else None
            except TypeError:  # times of mixed kinds: look the watermark up again
                self._status_mark = _UNKNOWN
