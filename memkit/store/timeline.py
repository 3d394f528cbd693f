"""A key's versions in time: where a keyed write dated in the past takes its place (pure).

At every instant a key has at most one current version: of the versions there and not held (not
quarantined, conflicting, erased or expired) at ``t``, the latest-written — by ``created_at``, then
version; a merge by when it was made — except that a version replaced by one that has since expired
stays replaced (after the later one expires the key has no current value). A version *goes live*
when it is written, or later when it is approved (or made, a merge). So a keyed write that replaces
versions dated ``t`` logs each replacement when both it and the replaced version are live (never
before either was written), and a write dated before the key's current version does not replace it:
it takes its place in the key's history — current from when it went live until the next-written
version went live (``superseded`` today) — and the version current when it went live is replaced
then. The decisions stay the conflict
policy's (:func:`memkit.conflicts.plan_keyed_write`); :meth:`memkit.store.versions.VersionsMixin._plan_slot`
asks :class:`Timeline` where each write stands and when each change happened.

>>> from datetime import datetime, timezone
>>> at = lambda h: datetime(2026, 1, 1, h, tzinfo=timezone.utc)
>>> line = Timeline()
>>> for vid, h in (("boston", 0), ("denver", 3), ("austin", 2)):
...     line.note(vid, at(h))
>>> versions = [("boston", "superseded", "", 1), ("denver", "active", "", 2)]
>>> line.place(versions, "austin", 3)          # replaces boston at +2h, replaced by denver at +3h
('boston', [], 'denver')
>>> line.when("boston", "austin").hour, line.when("austin", "denver").hour
(2, 3)
"""

from __future__ import annotations

import json
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = [
    "LATER_SQL", "ONCE_CURRENT", "REDO_SQL", "TIMES_SQL", "Timeline", "VersionPlan", "behind", "change",
    "in_order", "timeline",
]  # fmt: skip

# the statuses of a version that was (or is) its key's current one at some instant: not one held
# (quarantined), pending (conflict: current only once resolve keeps it, which logs it then)
ONCE_CURRENT = ("active", "superseded", "out_of_validity")


@dataclass
class Timeline:
    """The versions of one key: ``born`` (id -> when it was written: the order, then version),
    ``live`` (id -> when it went live: approved or merged, else written), ``until`` (id -> its
    ``valid_until``), ``changed`` (id -> its last status change, or later: a version not changed
    since a past instant was not current after it unless it was the one written last before it) and
    ``settled`` (id -> the time of its last status event, in log order, when that made it ``superseded``,
    as it is today: from then on the log replays it superseded, whatever came before) and ``seq`` (id
    -> that event's ``seq``, when it is a ``supersede``: an earlier replacement is written over it)."""

    born: dict[str, datetime] = field(default_factory=dict)
    live: dict[str, datetime] = field(default_factory=dict)
    until: dict[str, datetime | None] = field(default_factory=dict)
    changed: dict[str, datetime] = field(default_factory=dict)
    settled: dict[str, datetime] = field(default_factory=dict)
    seq: dict[str, int] = field(default_factory=dict)

    def note(
        self,
        vid: str,
        born: datetime,
        live: Any = None,
        until: Any = None,
        changed: Any = None,
        settled: Any = None,
        seq: Any = None,
    ) -> None:
        """Version ``vid``: written at ``born``, live from ``live`` (None: ``born``), until ``until``,
        last changed at ``changed`` (None: when it went live), superseded for good from ``settled``
        (by the ``supersede`` event ``seq``)."""
        live = born if live is None or live < born else live
        self.born[vid], self.live[vid], self.until[vid] = born, live, until
        self.changed[vid] = live if changed is None or changed < live else changed
        if settled is not None:
            self.settled[vid] = settled
            if seq is not None:
                self.seq[vid] = seq

    def settles(self, vid: str, status: str, at: datetime) -> bool:
        """Whether a change of ``vid`` to ``status`` at ``at`` changes nothing: it is ``superseded``
        from an instant at or before ``at`` on, by its last event (a key's history written with its own
        times supersedes its older versions when they happened: a write dated later among them need
        not log them again)."""
        return status == "superseded" and vid in self.settled and self.settled[vid] <= at

    def place(
        self, versions: Sequence[tuple[str, str, Any, int]], vid: str, version: int
    ) -> tuple[Any, list[str], Any]:
        """Where version ``vid`` (number ``version``) stands among ``versions`` (``(id, status, value,
        version)``, the key's others) -> ``(before, others, after)``: the once-current version written
        just before it that still held when it went live; the other once-current versions written before
        it, still valid then, that may have been current then (changed since); and the one written just
        after it (None: it is the newest, and the policy decides as for any write). ``vid`` replaces
        ``before`` and ``others`` when it goes live."""
        mine, start = (self.born[vid], version), self.live[vid]
        born, until, changed = self.born, self.until, self.changed
        earlier, after = [], None  # (written, version, id) of each
        for v in versions:
            if v[1] not in ONCE_CURRENT or v[0] == vid:
                continue
            o = (born[v[0]], v[3], v[0])
            if o[:2] > mine:
                after = o if after is None or o < after else after
            elif o[:2] < mine and (until[v[0]] is None or until[v[0]] > start):
                earlier.append(o)
        if not earlier:
            return None, [], after and after[2]
        before = max(earlier)
        others = [o[2] for o in sorted(o for o in earlier if o is not before and changed[o[2]] > start)]
        return before[2], others, after and after[2]

    def when(self, old: str, by: str) -> datetime:
        """When version ``by`` replaces version ``old``: once both are live."""
        return max(self.live[old], self.live[by])


@dataclass
class VersionPlan:
    """What a batch does to stored versions: ``changes`` ``(id, namespace, new status, by id)``,
    ``batch`` (the same, for rows of the batch itself: they are written with their final status),
    ``conflicts`` ``(row, id of the active version it disputes)``, ``at`` (``(id, by id)`` -> when
    the change happened, in the key's history), ``began`` (row -> the status it went live with,
    when the batch replaces it later: its write's event says so), ``logged`` (id -> where its last
    change is: in ``batch``, at which place) and ``redo`` (stored id -> the ``seq`` of the ``supersede``
    event its change is written over: :meth:`log`)."""

    changes: list[tuple[str, str, str, str]] = field(default_factory=list)  # stored rows to update
    batch: list[tuple[str, str, str, str]] = field(default_factory=list)  # logged only: already written so
    conflicts: list[tuple[int, str]] = field(default_factory=list)  # one "conflict" event each
    at: dict[tuple[str, str], datetime] = field(default_factory=dict)
    began: dict[int, str] = field(default_factory=dict)
    logged: dict[str, tuple[bool, int]] = field(default_factory=dict)
    redo: dict[str, int] = field(default_factory=dict)

    def log(self, old: str, space: str, status: str, by: str, at: datetime, batch: bool, again: Any) -> None:
        """``old`` (``batch``: a row of the batch) becomes ``status`` by ``by`` at ``at``. ``again``: it
        was superseded later (its event says so: :meth:`Timeline.settles`), then by a version that, as
        it turns out, replaced ``by`` and never ``old``: this change takes that event's place, the
        plan's (its place in the plan) or the log's (``again`` is its ``seq``: written over), so each
        version's replacement is logged once, naming the version that replaced it."""
        entries, entry = self.batch if batch else self.changes, (old, space, status, by)
        if again is not None and old in self.logged:
            j = self.logged[old][1]
            self.at.pop((old, entries[j][3]), None)
            entries[j] = entry
        else:
            if again is not None and again is not True:
                self.redo[old] = again
            self.logged[old] = (batch, len(entries))
            entries.append(entry)
        self.at[old, by] = at

    def events(self) -> tuple[list[tuple[str, str, str, str]], list[tuple[int, str, str, str]]]:
        """The plan's changes, stored then batch -> ``(new, redone)``: those logged as new events, and
        those written over an event of the log (``(seq, id, status, by)``)."""
        if not self.redo:  # (the usual plan: no pass over its changes)
            return self.changes + self.batch, []
        new, redone = [], []
        for batch, entries in ((False, self.changes), (True, self.batch)):
            for j, e in enumerate(entries):
                if e[0] in self.redo and self.logged[e[0]] == (batch, j):
                    redone.append((self.redo[e[0]], e[0], e[2], e[3]))
                else:
                    new.append(e)
        return new, redone

    def redone(self, redone: list[tuple[int, str, str, str]], requester: str | None) -> list[Any]:
        """The parameters of :data:`REDO_SQL` that writes the ``redone`` events (:meth:`events`) over
        the stored ones, for this write's ``requester``."""
        seqs, times = [r[0] for r in redone], [self.at[i, by] for _, i, _, by in redone]
        return [requester, seqs, times, [json.dumps({"by": by, "status": st}) for _, _, st, by in redone]]


def change(
    cols: dict[str, list[Any]],
    i: int,
    old_id: str,
    status: str,
    in_batch: dict[str, int],
    plan: VersionPlan,
    at: datetime,
    line: Timeline | None = None,
) -> None:
    """Row ``i`` changes version ``old_id`` to ``status`` at ``at`` (``in_batch``: id -> row of the
    batch's own versions, written with their final status, their event with the one they went live with),
    unless it is superseded by then already (:meth:`Timeline.settles`: no event that changes no status);
    superseded only later, that later replacement's event becomes this one (:meth:`VersionPlan.log`)."""
    again = None
    if line is not None:
        if line.settles(old_id, status, at):
            return
        if status == "superseded" and old_id in line.settled:
            again = line.seq.pop(old_id, True)
        line.changed[old_id] = max(line.changed.get(old_id, at), at)
        if status == "superseded":  # its event is now its last one
            line.settled[old_id] = at
        else:
            line.settled.pop(old_id, None)
            line.seq.pop(old_id, None)
    if old_id in in_batch:  # not stored yet
        plan.began.setdefault(in_batch[old_id], cols["status"][in_batch[old_id]])
        cols["status"][in_batch[old_id]] = status
    plan.log(old_id, cols["namespace"][i], status, cols["id"][i], at, old_id in in_batch, again)


def behind(
    cols: dict[str, list[Any]],
    i: int,
    around: tuple[str | None, list[str], str],
    versions: list[tuple[str, str, Any, int]],
    in_batch: dict[str, int],
    plan: VersionPlan,
    line: Timeline,
) -> list[tuple[str, str, Any, int]]:
    """Row ``i`` of a batch goes live in the past, between the versions ``around`` (:meth:`Timeline.place`):
    it replaces ``before`` when it goes live and ``after`` replaces it when that goes live, so today it
    is ``superseded`` and the key's current version stays as it is -> the slot ``versions`` after row
    ``i`` (without it)."""
    before, others, after = around
    rid = cols["id"][i]
    cols["version"][i] = max((v[3] for v in versions), default=0) + 1
    cols["status"][i], cols["supersedes"][i] = "superseded", before
    plan.began[i] = "active"  # its write's event: live then, until `after` replaced it
    line.changed[rid] = line.settled[rid] = line.when(rid, after)
    plan.log(rid, cols["namespace"][i], "superseded", after, line.settled[rid], True, None)
    gone = [v for v in (before, *others) if v is not None]
    for old in gone:
        change(cols, i, old, "superseded", in_batch, plan, line.when(old, rid), line)
    return [(v[0], "superseded" if v[0] in gone else v[1], v[2], v[3]) for v in versions]


# a stored version's change dated after its updated_at (its superseder was written ahead of its time)
# moves updated_at there: in_order reads updated_at as when the version last changed, and a superseder
# erased later must not leave the fast path a version whose change it cannot see
LATER_SQL = (
    "UPDATE memories SET updated_at = greatest(updated_at, x.t) FROM (SELECT unnest(?::VARCHAR[]) AS id,"
    " unnest(?::TIMESTAMPTZ[]) AS t) x WHERE memories.id = x.id"
)
# the log of stored versions ``id``: when each went live (its approval or merge, if after it was
# written) and, for one superseded today, the time of its last status event if that says so (and its
# seq if that is a supersede: an earlier replacement is written over it, VersionPlan.log)
TIMES_SQL = (
    "WITH e AS (SELECT memory_id, seq, ts, op, detail->>'status' AS status FROM events"
    " WHERE memory_id IN (SELECT unnest(?::VARCHAR[])) AND detail->>'status' IS NOT NULL),"
    " a AS (SELECT memory_id, max(ts) AS ts FROM e WHERE op IN ('approve', 'merge') GROUP BY memory_id),"
    " l AS (SELECT DISTINCT ON (memory_id) memory_id, seq, ts, op, status FROM e"
    " ORDER BY memory_id, seq DESC) SELECT l.memory_id AS id, a.ts AS live_from,"
    " CASE WHEN l.status = 'superseded' THEN l.ts END AS settled,"
    " CASE WHEN l.status = 'superseded' AND l.op = 'supersede' THEN l.seq END AS seq"
    " FROM l LEFT JOIN a ON a.memory_id = l.memory_id"
)
# a stored version's supersede event that an earlier replacement takes the place of (VersionPlan.log):
# the write that replaced it then is, as it turns out, not the one that replaced it
REDO_SQL = (
    "UPDATE events SET ts = u.t, requester = ?, detail = u.d FROM (SELECT unnest(?::BIGINT[]) AS s,"
    " unnest(?::TIMESTAMPTZ[]) AS t, unnest(?::JSON[]) AS d) u WHERE events.seq = u.s"
)


def _written(
    cols: dict[str, list[Any]], rows: list[int], now: datetime, born: datetime | None
) -> list[datetime]:
    """When each of ``rows`` was written: ``born`` (a merge: when it is made), else its ``created_at``."""
    return [born or cols["created_at"][i] or now for i in rows]


def in_order(
    stored: list[dict[str, Any]],
    cols: dict[str, list[Any]],
    rows: list[int],
    now: datetime,
    times: tuple[Any, Any],
) -> bool:
    """Whether the ``rows`` of a key come after all of its ``stored`` versions (the usual write, and a
    new key's history added with its own times in time order): live when written (``times``: no
    approval or merge), in time order, none expiring, and no stored version written, changed or live
    after the first of them, nor valid then and expired since, nor beside another current one. Then
    no row is written before another version, no other was current when it was written than the one
    the policy replaces, and each change happens when its row is written: no timeline, nor its log."""
    if times[0] is not None:
        return False
    written, until = _written(cols, rows, now, times[1]), cols["valid_until"]
    if any(until[i] is not None for i in rows) or not all(map(operator.le, written, written[1:])):
        return False
    start, current = written[0], 0
    for r in stored:  # (a version's approval or merge changed it: updated_at is at or after it)
        if r["created_at"] > start or r["updated_at"] > start:
            return False
        if r["valid_until"] is not None and r["valid_until"] > start and not r["valid_now"]:
            return False
        current += r["status"] == "active"
    return current <= 1


def timeline(
    stored: list[dict[str, Any]],
    cols: dict[str, list[Any]],
    rows: list[int],
    now: datetime,
    times: tuple[Any, Any, Any],
) -> tuple[Timeline | None, list[datetime]]:
    """The timeline of a key's ``stored`` versions and of its ``rows`` in the batch, and when each row
    was written -> ``(line, written)``. ``times``: ``(live_from, born)`` of the rows and the log of the
    stored versions (:data:`TIMES_SQL`: id -> ``(live_from, settled, seq)``), None when the rows come after
    all of them (:func:`in_order`): ``line`` is then None, each row replacing the version current
    before it when it is written, as the policy decides (no pass over the key's versions per row)."""
    written = _written(cols, rows, now, times[1])
    if times[2] is None:
        return None, written
    line, log = Timeline(), times[2]
    for r in stored:
        live, settled, seq = log.get(r["id"], (None, None, None))
        settled, seq = (settled, seq) if r["status"] == "superseded" else (None, None)
        line.note(r["id"], r["created_at"], live, r["valid_until"], r["updated_at"], settled, seq)
    for i, at in zip(rows, written, strict=True):
        line.note(cols["id"][i], at, times[0], cols["valid_until"][i])
    return line, written
