"""A key's versions in time: where a keyed write dated in the past takes its place (pure).

At every instant a key has at most one current version: of the versions there and not held (not
quarantined, conflicting, erased or expired) at ``t``, the latest-written — by ``created_at``, then
version; a merge by when it was made. A version *goes live* when it is written, or later when it
is approved (or made, a merge). So a keyed write that replaces versions dated ``t`` logs each
replacement when both it and the replaced version are live (never before either was written), and a
write dated before the key's current version does not replace it: it takes its place in the key's
history — current from when it went live until the next-written version went live (``superseded``
today) — and the version current when it went live is replaced then. The decisions stay the conflict
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

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["ONCE_CURRENT", "Timeline", "VersionPlan", "behind", "change"]

# the statuses of a version that was (or is) its key's current one at some instant: not one held
# (quarantined), pending (conflict: current only once resolve keeps it, which logs it then)
ONCE_CURRENT = ("active", "superseded", "out_of_validity")


@dataclass
class Timeline:
    """The versions of one key: ``born`` (id -> when it was written: the order, then version),
    ``live`` (id -> when it went live: approved or merged, else written), ``until`` (id -> its
    ``valid_until``) and ``changed`` (id -> its last status change, or later: a version not changed
    since a past instant was not current after it unless it was the one written last before it)."""

    born: dict[str, datetime] = field(default_factory=dict)
    live: dict[str, datetime] = field(default_factory=dict)
    until: dict[str, datetime | None] = field(default_factory=dict)
    changed: dict[str, datetime] = field(default_factory=dict)

    def note(
        self, vid: str, born: datetime, live: Any = None, until: Any = None, changed: Any = None
    ) -> None:
        """Version ``vid``: written at ``born``, live from ``live`` (None: ``born``), until ``until``,
        last changed at ``changed`` (None: when it went live)."""
        self.born[vid], self.live[vid], self.until[vid] = born, max(born, live or born), until
        self.changed[vid] = max(self.live[vid], changed or born)

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
        once = [(self.born[v[0]], v[3], v[0]) for v in versions if v[1] in ONCE_CURRENT and v[0] != vid]
        later = [o for o in once if o[:2] > mine]
        earlier = [o for o in once if o[:2] < mine and (self.until[o[2]] is None or self.until[o[2]] > start)]
        before = max(earlier)[2] if earlier else None
        others = [o[2] for o in sorted(earlier) if o[2] != before and self.changed[o[2]] > start]
        return before, others, (min(later)[2] if later else None)

    def when(self, old: str, by: str) -> datetime:
        """When version ``by`` replaces version ``old``: once both are live."""
        return max(self.live[old], self.live[by])


@dataclass
class VersionPlan:
    """What a batch does to stored versions: ``changes`` ``(id, namespace, new status, by id)``,
    ``batch`` (the same, for rows of the batch itself: they are written with their final status),
    ``conflicts`` ``(row, id of the active version it disputes)``, ``at`` (``(id, by id)`` -> when
    the change happened, in the key's history) and ``began`` (row -> the status it went live with,
    when the batch replaces it later: its write's event says so)."""

    changes: list[tuple[str, str, str, str]] = field(default_factory=list)  # stored rows to update
    batch: list[tuple[str, str, str, str]] = field(default_factory=list)  # logged only: already written so
    conflicts: list[tuple[int, str]] = field(default_factory=list)  # one "conflict" event each
    at: dict[tuple[str, str], datetime] = field(default_factory=dict)
    began: dict[int, str] = field(default_factory=dict)


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
    batch's own versions, written with their final status, their event with the one they went live with)."""
    plan.at[old_id, cols["id"][i]] = at
    if line is not None:
        line.changed[old_id] = max(line.changed.get(old_id, at), at)
    if old_id in in_batch:  # not stored yet
        plan.began.setdefault(in_batch[old_id], cols["status"][in_batch[old_id]])
        cols["status"][in_batch[old_id]] = status
        plan.batch.append((old_id, cols["namespace"][i], status, cols["id"][i]))
    else:
        plan.changes.append((old_id, cols["namespace"][i], status, cols["id"][i]))


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
    plan.batch.append((rid, cols["namespace"][i], "superseded", after))
    plan.at[rid, after] = line.changed[rid] = line.when(rid, after)
    gone = [v for v in (before, *others) if v is not None]
    for old in gone:
        change(cols, i, old, "superseded", in_batch, plan, line.when(old, rid), line)
    return [(v[0], "superseded" if v[0] in gone else v[1], v[2], v[3]) for v in versions]
