"""An import's ``overwrite`` that moves a merged member out of its merge's group
(:meth:`~memkit.store.portable.PortableMixin.import_`).

A merged memory holds its members' text, and lineage is followed only within a merge's group
(namespace, access, owner, creator: :func:`~memkit.store.merge.merge_group`), so that a forged
``merged_from`` reaches nothing. An overwrite that gave a member another access, owner or creator
would unlink it: erasing it later would leave its text in the merge, which the old group still reads.
So the overwrite itself settles the lineage, in the import's transaction:

- a member it moves out of the merge's group (or that the merge's own line no longer lists) **leaves**
  the merge: the merge is re-derived from the members of its group that remain, exactly as an erasure
  of that member re-derives it (:meth:`~memkit.store.rederive.RederiveMixin._rederive`: text, value,
  tags, every merged field, the guard, up the lineage, the same ``merge`` events; erased with a
  ``delete`` event when no member is left); the cached vectors of the texts it held go. The member
  keeps its text and takes the status its line gives (:meth:`LeaveMixin._keep_superseded`: it is no
  longer held superseded by that merge), except that a line calling it ``superseded`` (as an export made
  after the merge does) makes it ``active`` unless a newer version of its key supersedes it: otherwise
  its text would be in no live row at all;
- a merge it moves away from a member of its group that stays (the merge's access, owner or creator
  changed without its members') is refused, naming the merge's line and field, nothing written: it
  would be left with no member of its new group, erased by its own overwrite. Move the members with it.

The namespace of an overwritten row cannot change at all (the import refuses that first).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..guard import identity
from ..portable.strictjson import fail
from .merge import merge_group
from .rederive import RederiveMixin
from .vectors import COLUMNS

__all__ = ["LeaveMixin"]

_BY_ID = f"SELECT {COLUMNS} FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[]))"
# of the ids ?, those (all, if ?) the lineage rules need as they were: superseded, members, merges
_LINEAGE = (
    _BY_ID + " AND (? OR status = 'superseded' OR id IN (SELECT unnest(merged_from) FROM memories)"
    " OR id IN (SELECT id FROM (SELECT id, unnest(merged_from) AS member FROM memories) x))"
)
# the merges that list any of ? as a member, whatever their group (the leave decides)
_LISTING = f"SELECT {COLUMNS} FROM memories WHERE list_has_any(merged_from, ?::VARCHAR[])"
# the cached vectors of texts a re-derived merge held (?: their hashes) that no memory holds any more
_UNCACHE = (
    "DELETE FROM embed_cache WHERE content_hash IN (SELECT unnest(?::VARCHAR[]))"
    " AND content_hash NOT IN (SELECT content_hash FROM memories)"
)
# of the ids ?, what supersedes them: a newer version of their key, or the merge (listing them) they left
_SUCCEEDED = "SELECT supersedes, merged_from FROM memories WHERE supersedes IN (SELECT unnest(?::VARCHAR[]))"
_GROUP = ("namespace", "access", "owner", "created_by")  # merge_group's fields, in its order


class LeaveMixin(RederiveMixin):
    """Members leaving their merge when an import's overwrite moves them (module docstring)."""

    def _stored_rows(self, ids: list[str], every: bool = True) -> dict[str, dict[str, Any]]:
        """The stored rows of ``ids`` (every Memory column), by id; with ``every=False`` only those the
        lineage rules need (superseded rows, merges and their members: an overwrite of many plain
        rows reads few)."""
        if not ids:
            return {}
        query, params = (_BY_ID, [ids]) if every else (_LINEAGE, [ids, False])
        return {r["id"]: r for r in self._sql(query, params).to_dicts()}

    def _versions_after(self, ids: list[str]) -> set[str]:
        """Those of ``ids`` a newer version of their key supersedes (not a merge listing them)."""
        succeeded = self._run(_SUCCEEDED, [sorted(ids)]) if ids else []
        return {x for x, members in succeeded if x not in (members or ())}

    def _keep_superseded(self, cols: dict[str, list[Any]], before: dict[str, dict[str, Any]]) -> None:
        """An overwritten row the store has since superseded (by a newer version, by a merge) keeps its
        place in the key's history: its line gets status ``superseded`` and the stored version and
        ``supersedes`` (an older file does not revive it) -- unless its line moves it out of the
        group of a merge that holds it: it leaves that merge and takes its line's status. (Judged on
        the names as the write stores them; should the guard redact one further, the transaction's
        :meth:`_leave` still settles the lineage from the rows as written.)"""
        held = {x: r for x, r in before.items() if r["status"] == "superseded"}
        if not held:
            return
        line = {x: i for i, x in enumerate(cols["id"])}  # every id of the file -> its row

        def group(x: str, stored: dict[str, Any]) -> tuple[Any, ...]:  # as it will be stored
            if x not in line:
                return merge_group(stored)
            ns, access, owner, creator = (cols[f][line[x]] for f in _GROUP)
            return ns, access, *(None if n is None else identity(n) for n in (owner, creator))

        moved = {x: merge_group(r) for x, r in held.items() if x in line and group(x, r) != merge_group(r)}
        leaving: set[str] = set()  # the held rows that leave a merge: their line's status stands
        parted: dict[str, set[str]] = {}  # a merge no longer active -> the held rows that leave it
        for p in self._merges_of(moved) if moved else ():  # the merges that hold them in their group
            lists = cols["merged_from"][line[p["id"]]] if p["id"] in line else p["merged_from"]
            out = {m for m in p["merged_from"] if moved.get(m) == merge_group(p)
                   and (m not in lists or group(m, held[m]) != group(p["id"], p))}  # fmt: skip
            leaving |= out
            if p["status"] != "active":  # (superseded: by a newer version of its key, or a merge above)
                parted[p["id"]] = out
        # a leaving row its line calls superseded, which no newer version of its key supersedes (nor of
        # its merge's key), was superseded by the merge it leaves: nothing holds its text: active again
        successors = self._versions_after([*leaving, *parted])
        replaced = {m for p, out in parted.items() if p in successors for m in out}
        for x in leaving - successors - replaced:
            if cols["status"][line[x]] == "superseded":
                cols["status"][line[x]] = "active"
        for x, i in line.items():
            if x in held and x not in leaving:
                r = held[x]
                cols["status"][i], cols["version"][i], cols["supersedes"][i] = (
                    "superseded", r["version"], r["supersedes"])  # fmt: skip

    def _leave(
        self,
        before: dict[str, dict[str, Any]],
        lines: dict[str, int],
        requester: str | None,
        now: datetime,
        out: dict[str, list[Any]],
    ) -> None:
        """Inside the import's transaction, after its rows are written: every merge that held one of
        the overwritten rows (``before``: those lineage needs, as they were; ``lines``: id -> line)
        as a member of its group and no longer does is re-derived from the members of its group that
        remain, or erased when none is; a merge moved away from a member that stays is refused
        (FormatError). ``out`` gets the re-derived rows (``rows``) and the erased ids (``erased``),
        for the index after the commit."""
        out["rows"], out["erased"] = [], []  # (a retried transaction starts again)
        if not before:
            return
        merges = {r["id"]: r for r in self._sql(_LISTING, [list(before)]).to_dicts()}  # as they are now
        merges.update(self._stored_rows([x for x, r in before.items() if r["merged_from"]]))
        if not merges:  # (an overwrite of rows no merge holds: nothing more to read)
            return
        listed = {m for x in merges for m in (before.get(x) or merges[x])["merged_from"]}
        rows = self._stored_rows(sorted(listed))  # the merges' members then, as they are now
        parents: list[dict[str, Any]] = []  # the merges members left, as they are now
        was: dict[str, tuple[Any, ...]] = {}  # the members that left: count, importance, last access then
        for mid, new in merges.items():
            old = before.get(mid) or new  # the merge as it was before the import
            then = {x: before.get(x) or rows[x] for x in old["merged_from"] if x in rows}
            held = [x for x, r in then.items() if merge_group(r) == merge_group(old)]  # its members then
            gone = [x for x in held if x not in new["merged_from"]
                    or merge_group(rows[x]) != merge_group(new)]  # fmt: skip
            if not gone:
                continue
            if merge_group(new) != merge_group(old):  # the merge itself moved, away from `gone`
                field = next(f for f in _GROUP if new[f] != old[f])
                raise fail(lines[mid], field, f"moves merged memory {mid!r} out of the group of its member"
                           f" {gone[0]!r} (namespace, access, owner, creator): overwrite a merge together"
                           " with its members, or it would be left with none")  # fmt: skip
            parents.append(new)
            was.update({x: (then[x]["access_count"], then[x]["importance"], then[x]["last_access_at"])
                        for x in gone})  # fmt: skip
        if not parents:
            return
        erased: list[str] = []
        held_text: dict[str, tuple[Any, ...]] = {}  # merges re-derived or erased: (key, text, hash, ns)
        out["rows"] = self._rederive(erased, "delete", now, requester, parents, was, held_text)
        out["erased"] = erased
        self._run(_UNCACHE, [[b[2] for b in held_text.values()]])  # their old texts' cached vectors
        self._erased.update([*erased, *(r["id"] for r in out["rows"])])  # hidden until the commit

    def _mirror_left(self, out: dict[str, list[Any]]) -> None:
        """After :meth:`_leave`: the index drops the erased merges and the re-derived ones' old rows,
        and appends their new versions (on the commit, as the erasure does)."""
        gone = [*out.get("erased", []), *(r["id"] for r in out.get("rows", []))]
        if gone:
            self._mirror(lambda: self._index.erase(self._index.row.held(gone)))
        for row in out.get("rows", []):
            self._index_append({c: [row[c]] for c in row}, self._embedding_matrix("id = ?", [row["id"]]))
