"""Versions and validity: the version plan of keyed writes (``resolve``: :mod:`memkit.store.resolve`).

Every write that makes a keyed memory live (``add``, ``add_many``, ``import_``, ``approve``) asks
:meth:`VersionsMixin._plan_versions` what the conflict policy (:func:`memkit.conflicts.plan_keyed_write`)
makes of it, against the versions already stored and those earlier in the same batch, and commits the
answer with :meth:`VersionsMixin._apply_versions`. The rules, in one place:

- only an *expired* version (``valid_until <= now``) leaves its key's slot; a version that starts
  later already holds it, or two versions would both be current once it starts;
- a non-public slot may only get a new version from its owner or creator (or the operator);
- a write changes only versions its writer may change (public ones, or its own; an approval: the
  quarantined row's writer): another's non-public pending version stays, whatever the policy and value;
- under ``flag``, a requester's update of its own fact (the current version's owner or creator,
  from the same source) supersedes it at once; a different writer's value waits as a conflict;
- a quarantined write takes the next version number but changes no other version until approved.

Rows that need no decision (no key, or a key new to the store and alone in the batch) are planned
without a Python loop; only keys that meet other versions are decided one by one. A worked example under
``flag``: ``deploy.url`` holds ``a`` (v1, active, written by alice). bob writes ``b``: v2 becomes
``conflict`` against v1, and both stay live until ``resolve``. alice then writes ``c`` from the same
source: her own fact, so v3 supersedes v1 at once (v1 ``superseded``), and bob's v2 still waits beside
it. The decisions are :func:`memkit.conflicts.plan_keyed_write`'s; this module feeds it and writes them.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import polars as pl

from ..access import readable_expr
from ..conflicts import plan_keyed_write
from ..errors import ValidationError
from .gate import GateMixin, key_matches
from .timeline import LATER_SQL, REDO_SQL, TIMES_SQL, VersionPlan, behind, change, in_order, timeline
from .vectors import VectorsMixin

__all__ = ["VersionPlan", "VersionsMixin"]

_LIVE = ("active", "conflict")  # the statuses that hold a key's slot (superseded ones are history)


def _holds(cols: dict[str, list[Any]], i: int, now: datetime) -> bool:
    """Row ``i`` has not expired at ``now`` (only expiry frees a key's slot)."""
    until = cols["valid_until"][i]
    return until is None or now < until


def check_forward(rows: list[dict[str, Any]], now: datetime) -> None:
    """A change dated ``now`` to stored ``rows`` goes forward in time: not before any row's last change
    (``updated_at``), or ``frame(as_of=)`` would show a version replaced before it was written."""
    if late := [r for r in rows if r["updated_at"] is not None and r["updated_at"] > now]:
        r = late[0]
        last = r["updated_at"].isoformat()
        raise ValidationError("now", f"{now.isoformat()} is before the last change of memory {r['id']!r}"
                              f" ({last}): a change to it cannot be dated earlier")  # fmt: skip


def after(now: datetime, last: datetime | None) -> datetime:
    """``now``, or just after ``last`` if that is later (at it, at the calendar's last microsecond): an
    erasure dated before the last change of what it erases is logged after it (tombstones compare)."""
    if last is None or last <= now:
        return now
    return last if last.replace(tzinfo=None) == datetime.max else last + timedelta(microseconds=1)


def _inherit(
    cols: dict[str, list[Any]],
    i: int,
    unset: dict[str, Any],
    versions: list[tuple[str, str, Any, int]],
    authors: dict[str, tuple[Any, ...]],
    held: dict[str, tuple[str, bool]],
) -> None:
    """Row ``i`` of a key, which did not give its ``access`` (``protected``), takes them from the key's
    current version (the newest ``active`` one) when its writer (``created_by``) owns or created that
    version: the next value of a private fact stays private, unless the write says otherwise. Another
    writer's current version passes nothing on (its access rules are :meth:`_check_slots`'s)."""
    wanted = [c for c in ("access", "protected") if _unset(unset, c, i)]
    current = [v for v in versions if v[1] == "active"]
    if not wanted or not current:
        return
    of = max(current, key=lambda v: v[3])[0]
    writer = cols["created_by"][i]
    if writer is None or writer not in authors[of][:2]:
        return
    for c in wanted:
        cols[c][i] = held[of][c == "protected"]


def _unset(unset: dict[str, Any], c: str, i: int) -> bool:
    """Whether row ``i`` left column ``c`` unset (``unset[c]``: a bool for every row, or a bool Series)."""
    flag = unset.get(c, False)
    return bool(flag) if isinstance(flag, bool) else bool(flag[i])


class VersionsMixin(GateMixin, VectorsMixin):
    """The version plan, shared by every write."""

    def _stored_versions(
        self,
        cols: dict[str, list[Any]],
        rows: list[int],
        now: datetime,
        exclude: list[str],
        given: list[Any] | None = None,
    ) -> pl.DataFrame:
        """Every stored version of the keys of ``rows`` (minus ``exclude``), oldest first, with
        ``value`` (the JSON value, or the text) for the policy to compare and ``valid_now``.

        ``given`` are the keys as the caller wrote them, before the guard: a key the guard renamed
        (``contact.[PHONE:…]``) continues the chain written under its raw name while the guard was
        off, and so does the chain an older store wrote under its PII's shorter pseudonyms
        (:func:`~memkit.store.gate.key_matches`): their versions are reported under the name they
        are continued by."""
        spaces, slot = [cols["namespace"][i] for i in rows], [cols["key"][i] for i in rows]
        stored = list(slot)
        renamed = [i for i in rows if given[i] != cols["key"][i]] if given else []  # usually none
        for i in renamed:
            others = key_matches(cols["key"][i], given[i])[1:]  # type: ignore[index]
            spaces += [cols["namespace"][i]] * len(others)
            stored += others
            slot += [cols["key"][i]] * len(others)
        return self._sql(
            "SELECT m.id, m.namespace, s.slot AS key, m.status,"
            " coalesce(CAST(m.value AS VARCHAR), m.content) AS value, m.version, m.access, m.protected,"
            " m.owner, m.created_by, m.source, (m.valid_until IS NULL OR ? < m.valid_until) AS valid_now,"
            " m.created_at, m.valid_until, m.updated_at"
            " FROM memories m JOIN (SELECT DISTINCT unnest(?::VARCHAR[]) AS namespace,"
            " unnest(?::VARCHAR[]) AS stored, unnest(?::VARCHAR[]) AS slot) s"
            " ON m.namespace = s.namespace AND m.key = s.stored"
            " WHERE m.id NOT IN (SELECT unnest(?::VARCHAR[])) ORDER BY m.version, m.created_at",
            [now, spaces, stored, slot, exclude],
        )

    def _plan_versions(
        self,
        cols: dict[str, list[Any]],
        now: datetime,
        policy: str,
        requester: str | None,
        *,
        exclude: list[str] | None = None,
        keep_consistent: bool = False,
        given: list[Any] | None = None,
        writer: str | None = None,
        unset: dict[str, Any] | None = None,
        live_from: datetime | None = None,
        born: datetime | None = None,
    ) -> VersionPlan:
        """Decide the ``status``, ``version`` and ``supersedes`` of each keyed row of ``cols`` (in
        place) -> the changes to stored versions. Raises ConflictError (``strict``) or
        AccessDenied (a non-public slot) before anything is written.

        ``keep_consistent`` (an import): a key the store holds no live version of keeps the file's
        own statuses (its versions numbered after the stored ones) when they are consistent: at
        most one active version holding at ``now``. Otherwise the file's versions are decided in
        version order, like writes. ``given``: the keys before the guard (:meth:`_stored_versions`).
        ``writer``: whose versions the write may change, when not ``requester``'s (an approval).
        ``unset``: ``access`` and ``protected`` -> True (no row gave it), False, or a per-row bool
        Series: a row that did not give one takes its writer's own current version's (:func:`_inherit`).
        ``live_from``: when the rows go live, if after their ``created_at`` (an approval); ``born``: when
        they were written, if not at their ``created_at`` (a merge). Each keyed row takes its place in
        its key's history (:mod:`memkit.store.timeline`).
        """
        plan = VersionPlan()
        keys = cols["key"]  # unkeyed rows: nothing to decide (a bulk write's often none: no pass)
        keyed = [] if keys.count(None) == len(keys) else [i for i, k in enumerate(keys) if k is not None]
        if exclude:  # a superseded row that replaces its stored self (an import's overwrite) stays as it is
            out = set(exclude)
            keyed = [i for i in keyed if not (cols["status"][i] == "superseded" and cols["id"][i] in out)]
        if not keyed:
            return plan
        stored = self._stored_versions(cols, keyed, now, exclude or [], given)  # one query: the whole batch
        self._check_slots(stored, requester, now)
        # another writer's non-public versions: this write leaves them as they are (a pending one too)
        writer = requester if writer is None else writer  # acl.can_modify over the column (operator: any)
        mine = pl.col("owner").eq_missing(writer) | pl.col("created_by").eq_missing(writer)
        fixed = set() if writer is None else set(stored.filter((pl.col("access") != "public") & ~mine)["id"])
        # versions whose value the writer (or the requester, who is told the outcome) may not read: the
        # plan must not depend on it (an owner's write is no oracle of its creator's private value)
        hidden = set(stored.filter(~(readable_expr(writer) & readable_expr(requester)))["id"])
        groups: dict[tuple[str, str], list[int]] = {}  # (namespace, key) -> its rows, in batch order
        for i in keyed:
            groups.setdefault((cols["namespace"][i], cols["key"][i]), []).append(i)
        held = dict(stored.group_by("namespace", "key"))  # (namespace, key) -> its stored versions
        slots = []  # (rows, stored versions, whether they need the key's timeline)
        for slot, rows in groups.items():  # only keys of this batch
            old = held.get(slot)
            if old is None and len(rows) == 1 and not keep_consistent:
                continue  # a new key: version 1, as built
            if keep_consistent:
                rows = sorted(rows, key=lambda i: cols["version"][i])
                base = 0 if old is None else int(old["version"].max())
                # the file's own state, judged at the import's `now` (not at a time the file claims)
                n_active = sum(cols["status"][i] == "active" and _holds(cols, i, now) for i in rows)
                if old is None or old.filter(pl.col("status").is_in(_LIVE) & pl.col("valid_now")).is_empty():
                    if n_active <= 1:
                        for i in rows:
                            cols["version"][i] += base
                        continue
            old_rows = [] if old is None else old.to_dicts()
            slots.append((rows, old_rows, not in_order(old_rows, cols, rows, now, (live_from, born))))
        # the log of the versions of keys a write lands among, not after (timeline.py): read only then
        late = [r["id"] for _, old_rows, lined in slots if lined for r in old_rows]
        log = {r[0]: r[1:] for r in self._sql(TIMES_SQL, [late]).iter_rows()} if late else {}
        for rows, old_rows, lined in slots:
            times = (live_from, born, log if lined else None)
            self._plan_slot(cols, rows, old_rows, policy, plan, now, fixed, hidden, unset, times)
        return plan

    def _check_slots(self, stored: pl.DataFrame, requester: str | None, now: datetime) -> None:
        """AccessDenied (audited) when a key of ``stored`` (:meth:`_stored_versions`) is held by a current
        non-public version ``requester`` may not change: only its owner or creator writes its next version."""
        for row in stored.filter(
            (pl.col("status") == "active") & pl.col("valid_now") & (pl.col("access") != "public")
        ).to_dicts():
            self._check_modify(row, requester, now, "write a new version of")

    def _plan_slot(
        self,
        cols: dict[str, list[Any]],
        rows: list[int],
        stored: list[dict[str, Any]],
        policy: str,
        plan: VersionPlan,
        now: datetime,
        fixed: set[str],
        hidden: set[str],
        unset: dict[str, Any] | None = None,
        times: tuple[Any, Any, Any] = (None, None, None),
    ) -> None:
        """Decide the rows of one key in order, each against everything before it.

        ``versions`` is the slot as the policy sees it, ``(id, status, value, version)``: the
        stored versions (those out of validity marked so), then each decided row of the batch.
        ``fixed``: stored versions the requester may not change (the policy leaves them as they are);
        ``hidden``: those whose value it may not read (the policy takes it as different).
        ``times``: ``(live_from, born)`` of the rows (:meth:`_plan_versions`) and the log of ``stored``
        (None: the rows come after all of it, :func:`~memkit.store.timeline.in_order`). A live row written
        before a version that was once current does not replace it: it takes its place in the key's
        history (:func:`~memkit.store.timeline.behind`); every change is dated when it happened (``plan.at``).
        """
        in_batch = {cols["id"][i]: i for i in rows}  # id -> row, for rows the batch itself supersedes
        versions = [
            (r["id"], r["status"] if r["valid_now"] else "out_of_validity", r["value"], r["version"])
            for r in stored
        ]
        # who wrote each version, from which source: a writer's update of its own fact supersedes
        authors = {r["id"]: (r["owner"], r["created_by"], r["source"]) for r in stored}
        authors.update(
            {cols["id"][i]: (cols["owner"][i], cols["created_by"][i], cols["source"][i]) for i in rows}
        )
        held = {r["id"]: (r["access"], r["protected"]) for r in stored}  # what a new version may inherit
        line, born = timeline(stored, cols, rows, now, times)  # (None: the rows come after the rest)
        for i, at in zip(rows, born, strict=True):
            if unset:
                _inherit(cols, i, unset, versions, authors, held)
            held[cols["id"][i]] = (cols["access"][i], cols["protected"][i])
            value = cols["value"][i] or cols["content"][i]
            if cols["status"][i] not in _LIVE:  # quarantined (or imported history): a number, no change
                # (approve() plans it again, against the slot as it is then)
                cols["version"][i] = max((v[3] for v in versions), default=0) + 1
                versions.append((cols["id"][i], cols["status"][i], value, cols["version"][i]))
                continue
            writer, source = cols["created_by"][i], cols["source"][i]
            own = {  # the versions this writer wrote from this source: its own fact, if it updates one
                v
                for v, (o, c, s) in authors.items()
                if writer is not None and writer in (o, c) and s == source
            }
            decided = plan_keyed_write(versions, value, policy, own=own, fixed=fixed, hidden=hidden)
            if decided.status == "active" and line is not None:
                before, others, after = line.place(versions, cols["id"][i], decided.version)
                before = None if before in fixed else before  # (another's pending value stays as it is)
                others = [v for v in others if v not in fixed]
                if after is not None:  # written before a version once current: history, not today's
                    versions = behind(cols, i, (before, others, after), versions, in_batch, plan, line)
                    versions.append((cols["id"][i], "superseded", value, decided.version))
                    continue
                then = [v for v in (before, *others) if v is not None and v not in dict(decided.changes)]
                if then:  # current when it went live, not today
                    decided = replace(decided, changes=(*decided.changes, *((v, "superseded") for v in then)))
            cols["status"][i], cols["version"][i] = decided.status, decided.version
            cols["supersedes"][i] = decided.against if decided.op == "supersede" else None
            if decided.op == "conflict":
                plan.conflicts.append((i, decided.against or ""))
            changed = dict(decided.changes)  # old id -> its new status
            for old_id, status in decided.changes:
                when = line.when(old_id, cols["id"][i]) if line else at
                change(cols, i, old_id, status, in_batch, plan, when, line)
            versions = [(v[0], changed.get(v[0], v[1]), v[2], v[3]) for v in versions]  # the slot after row i
            versions.append((cols["id"][i], decided.status if _holds(cols, i, now) else "out_of_validity",
                             value, decided.version))  # fmt: skip

    def _set_status(self, ids: list[str], status: str, now: datetime) -> dict[str, datetime]:
        """Set the status of ``ids`` in DuckDB (inside a transaction) -> each id's ``updated_at``:
        ``now``, or the row's own if later. A version plan logs each change when it happened in its
        key's history (``plan.at``: never before the version was written or went live); other callers
        log it at this time. The caller mirrors it into the index."""
        where = "WHERE id IN (SELECT unnest(?::VARCHAR[]))"
        # (not UPDATE ... RETURNING: DuckDB then moves the rows to the table's end, changing rowid ties)
        self._run(f"UPDATE memories SET status = ?, updated_at = greatest(updated_at, ?) {where}",
                  [status, now, list(ids)])  # fmt: skip
        later = self._run(f"SELECT id, updated_at FROM memories {where} AND updated_at > ?", [list(ids), now])
        return {**dict.fromkeys(ids, now), **dict(later)}

    def _apply_versions(
        self, plan: VersionPlan, cols: dict[str, list[Any]], now: datetime, requester: str | None
    ) -> None:
        """Commit a plan (inside the write's transaction): conflict events, then the status changes
        of stored versions (one statement per status) and one ``supersede`` event each, dated when it
        happened in its key's history (``plan.at``), which may be before ``now``."""
        rows = [i for i, _ in plan.conflicts]  # batch rows that wait as conflicts
        details = [{"key": cols["key"][i], "against": a, "status": "conflict"} for i, a in plan.conflicts]
        self._events(now, "conflict", [cols["namespace"][i] for i in rows], [cols["id"][i] for i in rows],
                     requester, details)  # fmt: skip
        dated: dict[str, datetime] = {}  # a stored version's change: at `now`, or its own later change
        for status in dict.fromkeys(st for _, _, st, _ in plan.changes):
            dated.update(self._set_status([i for i, _, st, _ in plan.changes if st == status], status, now))
        changes, redone = plan.events()  # (redone: an earlier replacement, over its stored event)
        spaces, ids = [ns for _, ns, _, _ in changes], [i for i, _, _, _ in changes]
        at = [plan.at.get((i, by)) or dated.get(i, now) for i, _, _, by in changes]
        late = [(i, t) for (i, _, _, _), t in zip(changes, at, strict=True) if t > dated.get(i, now)]
        if late:  # a change dated after updated_at (a superseder written ahead of its time): see LATER_SQL
            self._run(LATER_SQL, [*map(list, zip(*late, strict=True))])
        details = [{"by": by, "status": st} for _, _, st, by in changes]
        self._events(at, "supersede", spaces, ids, requester, details)
        if redone:  # each over its stored event, which named a version that replaced it only later
            self._run(REDO_SQL, plan.redone(redone, requester))

    def _mirror_versions(self, plan: VersionPlan) -> None:
        """After the commit, the plan's status changes of stored rows in the index (the batch's own
        rows enter the index with their final status)."""

        def apply() -> None:
            """Each changed stored version's new status."""
            for old_id, _, status, _ in plan.changes:
                self._index.set_status([old_id], status)

        if plan.changes:
            self._mirror(apply)
