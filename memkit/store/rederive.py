"""Re-deriving a merge when an erasure takes one of its members (:meth:`MaintainMixin._erase
<memkit.store.maintain.MaintainMixin._erase>`), or an import's overwrite moves one out of the merge's
group (:mod:`memkit.store.leave`).

A merged memory holds its members' text, so erasing a member re-derives the merge from the members
of its own group that remain, by the merge rule (:func:`memkit.consolidate.remerge`: text, survivor,
embedding, every merged field), up the lineage; with no member left it is erased too. The new text
meets the write pipeline's guard stage like any write (members that passed one by one may add up to
an injection), and a reviewer's approval stands only for what the reviewer saw. What the merge
earned itself since it was made (hits, importance, last access) stays with it
(:func:`~memkit.store.merge.own_reinforcement`).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from ..consolidate import remerge
from ..embed import content_hash
from ..schema import check_value
from .merge import MergeMixin, merge_group, merged_record, own_reinforcement
from .vectors import COLUMNS
from .versions import after

__all__ = ["RederiveMixin"]

# the remaining members of one merge (its merged_from, in its namespace and access group)
_GROUP_MEMBERS = (
    f"SELECT {COLUMNS} FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[])) AND namespace = ?"
    " AND access = ? AND owner IS NOT DISTINCT FROM ? AND created_by IS NOT DISTINCT FROM ?"
)
# a re-derived merge: every merged field from the remaining members, the survivor's embedding; and a
# new place in the table order ({place}: see _new_place)
_REDERIVE = (
    "UPDATE memories SET content = ?, content_hash = ?, value = ?, tags = ?, importance = ?,"
    " half_life_hours = ?, created_at = ?, last_access_at = ?, access_count = ?, protected = ?,"
    " valid_from = ?, valid_until = ?, supersedes = ?, updated_at = ?, status = ?, findings = ?,"
    " embedding = (SELECT embedding FROM memories WHERE id = ?){place} WHERE id = ?"
)
# the last review of a memory: approve (a reviewer released it) or quarantine (the guard held it since)
_LAST_REVIEW = (
    "SELECT op FROM events WHERE memory_id = ? AND op IN ('approve', 'quarantine') ORDER BY seq DESC LIMIT 1"
)
_COSINE = re.compile(r" \(cosine [0-9.]+\)$")  # a lesson finding's message ends with its similarity


def _kinds(findings: str | None) -> set[tuple[str, str, str]]:
    """A findings list's ``(code, severity, message)`` triples (a lesson's without its cosine): one rule
    code covers findings of several severities ("new task:" is info, "ignore previous instructions" a
    warning), so an approval releases the kinds it saw, not the code."""
    return {
        (f["code"], f["severity"], _COSINE.sub("", f["message"] or "")) for f in json.loads(findings or "[]")
    }


class RederiveMixin(MergeMixin):
    """The re-derivation of merges inside an erasure."""

    def _rederive(
        self,
        erased: list[str],
        op: str,
        at: datetime,
        requester: str | None,
        parents: list[dict[str, Any]],
        was: dict[str, tuple[Any, ...]] | None = None,
        before: dict[str, tuple[Any, ...]] | None = None,
    ) -> list[dict[str, Any]]:
        """Inside an erasure dated ``at``: re-derive every merge that held an erased text from the
        members of its own group that remain (text, survivor, embedding and every merged field), up
        the lineage; a merge with none left is erased too (its id joins ``erased``) -> the re-derived
        rows as they are now. ``parents``: the merges of ``erased``, if the caller has them; ``was``:
        the erased rows' access count, importance and last access
        (:func:`~memkit.store.merge.own_reinforcement`); ``before``, if given, collects every merge it
        re-derives or erases as it was: id -> ``(key, content, content_hash, namespace)`` (the erasure drops
        that text's cached vector too, and a log entry naming it; its report names the namespace)."""
        changed: dict[str, None] = {}  # re-derived merge ids, in order, each once
        was = {} if was is None else was  # rows this erasure changes -> (count, importance, last) before
        while parents:  # up the lineage: a merge of merges is re-derived after the merge it holds
            frontier: dict[str, tuple[Any, ...]] = {}  # the merges changed in this step -> their group
            for p in parents:  # merges are few; each re-derived once per erased member
                if before is not None:  # (as before this erasure: what a cache or an event may hold)
                    was_then = (p["key"], p["content"], content_hash(p["content"]), p["namespace"])
                    before.setdefault(p["id"], was_then)
                now = after(at, p["updated_at"])  # (a merge changed after the erasure's `now`: after it)
                group = [p["merged_from"], p["namespace"], p["access"], p["owner"], p["created_by"]]
                # in the order written (merged_from lists one instant's so): the merge rule's last tie
                place = {m: i for i, m in enumerate(p["merged_from"])}
                found = self._sql(_GROUP_MEMBERS, group).to_dicts()
                members = sorted(found, key=lambda m: (m["created_at"], place[m["id"]]))
                if not members:  # nothing of it is left
                    self._run("DELETE FROM memories WHERE id = ?", [p["id"]])
                    self._event(
                        now, op, p["namespace"], p["id"], requester, cascade=True, reason="no member left"
                    )
                    erased.append(p["id"])
                else:
                    survivor, content = remerge(pl.DataFrame(members))  # the merge rule, on what is left
                    rec = merged_record(
                        members, next(m for m in members if m["id"] == survivor), content, now
                    )
                    rec = own_reinforcement(rec, p, members, was)  # what the merge earned itself stays
                    # (for a merge of this merge: the merge as it was)
                    was[p["id"]] = (p["access_count"], p["importance"], p["last_access_at"])
                    value = None if rec["value"] is None else check_value(rec["value"])
                    cols = self._rescreen(
                        p, {**rec, "content": content, "value": value}, survivor, requester, now, op
                    )
                    if cols["status"][0] == "refused":  # what is left holds a secret: the merge goes
                        self._run("DELETE FROM memories WHERE id = ?", [p["id"]])
                        self._event(now, op, p["namespace"], p["id"], requester, cascade=True, reason="guard")
                        erased.append(p["id"])
                        frontier[p["id"]] = merge_group(p)
                        continue
                    content, value, tags = cols["content"][0], cols["value"][0], cols["tags"][0]
                    findings = cols["findings"][0]
                    # held for review, unless superseded: an older version is not served as current
                    status = "superseded" if p["status"] == "superseded" else cols["status"][0]
                    self._run(_REDERIVE.format(place=self._new_place()), [
                        content, content_hash(content), value, tags, rec["importance"],
                        rec["half_life_hours"], rec["created_at"], rec["last_access_at"], rec["access_count"],
                        rec["protected"], rec["valid_from"], rec["valid_until"], survivor, now, status,
                        findings, survivor, p["id"],
                    ])  # fmt: skip
                    self._event(now, "merge", p["namespace"], p["id"], requester, rederived=True,
                                members=[m["id"] for m in members], status=status)  # fmt: skip
                    if status != p["status"]:
                        had = json.loads(p["findings"] or "[]")  # the event names the new codes
                        new = [f["code"] for f in json.loads(findings or "[]") if f not in had]
                        codes = list(dict.fromkeys(new))
                        ns = p["namespace"]
                        self._event(now, "quarantine", ns, p["id"], requester, status=status, codes=codes)
                    changed[p["id"]] = None
                frontier[p["id"]] = merge_group(p)
            parents = self._merges_of(frontier) if frontier else []
        live = [i for i in changed if i not in erased]  # re-derived, and not erased since
        return self._sql(
            f"SELECT {COLUMNS} FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[]))", [live]
        ).to_dicts()

    def _new_place(self) -> str:
        """What :data:`_REDERIVE` adds so that the rewritten merge moves to the end of the table order,
        after every row, on both backends: nothing on DuckDB, which writes a row whose list column
        (tags, embedding) an UPDATE changes at the table's end (its rowid changes); on a server the
        identity column's next value. Ties of equal ``created_at`` (neighbour expansion, near ties,
        frames, exports) then rank the same on both, in every process (:mod:`memkit.store.sync`)."""
        return "" if self._pg is None else ", rowid = DEFAULT"

    def _rescreen(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        survivor: str,
        requester: str | None,
        now: datetime,
        op: str,
    ) -> dict[str, list[Any]]:
        """A re-derived merge's new text and fields (``rec``) through the write pipeline's guard stage
        and lesson check, as any write -> its columns, one row, with status ``refused`` when what is
        left holds a secret. Members that passed one by one may add up to an injection once merged."""
        cols = {f: [rec[f]] for f in ("content", "value", "tags")}
        cols.update(
            {f: [p[f]] for f in ("key", "owner", "created_by", "source", "namespace", "status", "findings")}
        )
        self._screen(cols, requester, now, op=op, refuse=False)  # redacted as written; held, not refused
        emb = self._run("SELECT embedding FROM memories WHERE id = ?", [survivor])[0][0]
        if cols["status"][0] != "refused" and emb is not None:  # lessons compare embeddings
            self._near_lessons(cols, np.asarray(emb, np.float32).reshape(1, -1))
        if cols["status"][0] == "quarantined" and p["status"] == "active" and self._approved(p["id"]):
            if _kinds(cols["findings"][0]) <= _kinds(p["findings"]):  # only what the reviewer released
                cols["status"] = [p["status"]]  # the approval stands
        return cols

    def _approved(self, memory_id: str) -> bool:
        """Whether a reviewer released ``memory_id`` and the guard has not held it since."""
        return self._run(_LAST_REVIEW, [memory_id]) == [("approve",)]
