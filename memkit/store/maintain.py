"""Maintenance: erasure (``delete``, ``forget``) and the analyzer (consolidation: :mod:`memkit.store.merge`).

**Erasure is final.** :meth:`MaintainMixin._erase` removes rows for good in one transaction:

- a merged memory takes its members with it (they hold the same text: the versions of one fact);
- a merged memory one of whose members is erased is *re-derived* from the members that remain
  (:func:`memkit.consolidate.remerge`: text, survivor and embedding), and so is any merge built on
  it; with no member left it is erased too. Lineage (``merged_from``) keeps ids only;
- cached embeddings of the erased texts go, and of the texts a re-derived merge held before (unless
  another memory still has the same text); lessons keep their vector but lose the text and reason;
  events keep ids and numbers only (:mod:`memkit.store.audit`): the memory's key leaves its own
  events, a ``context`` event that names it in its detail loses the key and every caller string the
  memory's key or text holds, and no event keeps a digest of an erased text or key
  (:mod:`memkit.store.forgotten`);
- in the process: the cached query vectors and the word caches of the hash embedder and the stemmer
  (:func:`memkit.embed.clear_word_caches`), which hold the words of every text embedded; on a
  server, every other store drops the same from its process when its next search sees the erasure
  (:mod:`memkit.store.sync`);
- the file is marked due for compaction in the same transaction, and compacted after the commit
  (:mod:`memkit.store.compaction`), so the text is not left in the file's free blocks either.

**Maintenance sees the store as it was at ``now``.** ``consolidate``, ``forget`` and ``analyze``
work on the memories written by ``now`` (``created_at <= now``); ``consolidate`` and the merge plan
of ``analyze`` only on those valid at ``now``. With a ``requester``, only what it may change.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import polars as pl

from ..analyze import analyze as lint
from ..consolidate import plan_grouped
from ..embed import clear_word_caches
from ..errors import NotFound, ValidationError
from ..forget import plan_forget
from ..params import ForgetParams, GuardParams, check_number
from ..schema import check_name
from .files import FilesMixin
from .forgotten import ForgottenMixin
from .rederive import RederiveMixin
from .versions import after

__all__ = ["MaintainMixin"]


_FOUND = (  # the rows an erasure takes, with what a merge of them and the cleanup need to know
    "SELECT id, namespace, updated_at, access_count, importance, last_access_at, key, content, content_hash,"
    " access, owner, created_by FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[]))"
)
# the cached vectors of texts an erasure removed (?: their hashes) that no memory holds any more
_UNCACHE = (
    "DELETE FROM embed_cache WHERE content_hash IN (SELECT unnest(?::VARCHAR[]))"
    " AND content_hash NOT IN (SELECT content_hash FROM memories)"
)
# the members of the merges in ?, in the merge's own namespace and access group (a lineage that
# names another tenant's or another creator's memory, e.g. forged in a file, reaches nothing)
# the forget events of ids an erasure took (their detail), for its report
_LOGGED = (
    "SELECT memory_id AS id, CASE WHEN detail->>'merged_into' IS NULL"
    " THEN CAST(detail AS VARCHAR) ELSE 'member of merged memory ' || (detail->>'merged_into') END AS detail"
    " FROM events WHERE op = 'forget'"
    " AND memory_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY seq"
)
_MEMBERS_OF = (  # (merges and members in the order written, not by their random ids)
    "SELECT m.id, p.id FROM (SELECT id, rowid AS place, namespace, access, owner, created_by,"
    " unnest(merged_from) AS mid FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[]))) p"
    " JOIN memories m ON m.id = p.mid AND m.namespace = p.namespace AND m.access = p.access"
    " AND m.owner IS NOT DISTINCT FROM p.owner AND m.created_by IS NOT DISTINCT FROM p.created_by"
    " ORDER BY p.place, m.created_at, m.rowid"
)


class MaintainMixin(RederiveMixin, FilesMixin, ForgottenMixin):
    """Erasure, forgetting and linting (consolidation: :mod:`memkit.store.merge`)."""

    # ------------------------------------------------------------------------------------ erasure
    def delete(
        self, memory_id: str, *, namespace: str | None = None, requester: str | None = None,
        now: datetime | None = None,
    ) -> None:  # fmt: skip
        """Erase a memory (user-initiated) for good: its row, text and embedding (see the module
        docstring for what else goes). Only the operator, the owner or the creator may delete; a
        requester names the namespace, or reaches only memories it owns or created. The audit log
        keeps a ``delete`` event with the id and version, never the content; the memory's key leaves
        every event of it.
        """
        memory_id = check_name("memory_id", memory_id)
        namespace = self._space(namespace, optional=True)
        requester, now = self._who(requester), self._now(now)
        with self._lock:
            row = self._locate(
                memory_id, namespace=namespace, requester=requester, now=now, op="delete", modify=True
            )
            # (a quarantined row's key may be the injection: the log does not repeat it, as for add)
            key = None if row["status"] == "quarantined" else row["key"]
            detail = {"key": key, "version": row["version"], "status_before": row["status"]}
            self._erase([memory_id], "delete", now, requester, [detail])

    def _erase(
        self, ids: list[str], op: str, now: datetime, requester: str | None, details: list[dict[str, Any]]
    ) -> dict[str, str]:
        """Erase ``ids`` (one event each, with ``details``) and what goes with them -> every id erased,
        in order, with its namespace as the row held it (the log may name it by a pseudonym)."""
        gone, events = list(ids), list(details)  # every id erased, and its event's detail
        frontier = list(ids)  # the ids whose merge members are still to be followed
        while frontier:  # the members of an erased merge hold its text: they go too (its own group only)
            rows = self._run(_MEMBERS_OF, [frontier])
            frontier = list(dict.fromkeys(m for m, _ in rows if m not in gone))
            gone += frontier
            events += [{"merged_into": p, "cascade": True} for m, p in dict(rows).items() if m in frontier]
        rederived: list[dict[str, Any]] = []  # filled inside the transaction, mirrored after it
        done: dict[str, str] = {}  # every id the committed transaction erased -> its namespace
        self._check_compactable()  # refused before anything changes, if the file could not be compacted

        def write() -> None:
            """The erasure: rows, cached vectors, events, re-derived merges, lessons' texts."""
            found = self._run(_FOUND, [gone])
            spaces = {r[0]: r[1] for r in found}
            was = {r[0]: r[3:6] for r in found}  # count, importance, last access (for a re-derived merge)
            said = {r[0]: (r[6], r[7]) for r in found}  # key and text, for the log's cleanup
            # the merges holding an erased text (not those erased with it)
            groups = {r[0]: (r[1], *r[9:12]) for r in found}  # (namespace, access, owner, created_by)
            parents = [p for p in self._merges_of(groups) if p["id"] not in spaces]
            # dated just after the last change of what it erases or re-derives, if `now` is earlier: a
            # backup of them is then older than the erasure, so the import's tombstone keeps them out
            at = after(now, max([r[2] for r in found] + [p["updated_at"] for p in parents], default=None))
            if op == "delete" and ids[0] not in spaces:  # another process erased it meanwhile
                raise NotFound(f"memory {ids[0]!r} was erased meanwhile")
            # per attempt (a retried transaction starts again): what is still there, then what
            # _rederive erases with it
            erased = [i for i in gone if i in spaces]
            details = [d for i, d in zip(gone, events, strict=True) if i in spaces]
            self._run("DELETE FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[]))", [erased])
            self._events(at, op, [spaces[i] for i in erased], erased, requester, details)
            before: dict[str, tuple[Any, ...]] = {}  # merges re-derived or erased: (key, text, hash, ns)
            rederived[:] = self._rederive(erased, op, at, requester, parents, was, before)
            # a cached vector would let someone confirm a guess of what was erased (unless another
            # memory still has the same text); a lesson keeps its vector, not the text. After the
            # re-derivation: a merge held its survivor's text (and hash) until then
            self._run(_UNCACHE, [[r[8] for r in found] + [b[2] for b in before.values()]])
            said.update({i: b[:2] for i, b in before.items() if i not in said})
            self._forget_in_log(erased, said, spaces.values())
            self._mark_compaction_due()
            changed = erased + [r["id"] for r in rederived]  # a lesson on any of them held the erased text
            self._erased.update(changed)  # the index's copies hold it too: hidden until the commit
            self._forget_in_lessons(changed, spaces.values(), said)  # their vector stays
            done.clear()  # (a retried transaction starts again)
            done.update({i: spaces[i] if i in spaces else before[i][3] for i in erased})

        self._tx(write)
        self._mirror(lambda: self._index.erase(self._index.row.held(done)))
        self._embed_query.cache_clear()  # a cached query may be the erased text ("forget <it>")
        clear_word_caches()  # process-wide: they hold the erased text's words (refilled by the next texts)
        for row in rederived:  # a re-derived merge: its old index row goes, the new version is appended
            self._mirror(lambda row=row: self._index.erase([row["id"]]))
            self._index_append({c: [row[c]] for c in row}, self._embedding_matrix("id = ?", [row["id"]]))
        self._on_commit(lambda: self._lesson_cache.clear())
        self._compact_after_erase()
        return done

    def forget(
        self,
        namespace: str | None = None,
        *,
        now: datetime | None = None,
        policy: ForgetParams | None = None,
        dry_run: bool = False,
        requester: str | None = None,
    ) -> pl.DataFrame:
        """Apply a forgetting policy (:mod:`memkit.forget`) to one namespace, or all -> the plan.

        The plan has one row per memory that goes: ``id, namespace, reason (expired | weak | capacity
        | cascade), strength, forget_cost, detail``; ``cascade`` rows are what the erasure of the
        others takes with it (a dropped merge's members; a merge with no member left).
        ``dry_run=True`` only returns it. Otherwise the memories are erased in one transaction (final,
        like :meth:`delete`), each with a ``forget`` event holding the reason but not the content, and
        the report lists exactly what was erased (a ``cascade`` the plan could not foresee, such as a
        re-derived merge the guard refuses, is added with its event's detail). Protected memories and
        pending conflicts are never dropped. Only memories written by ``now`` are considered. With a
        ``requester``, only those it owns or created (capacity counts them alone); ``requester=None``
        is the operator's maintenance.
        """
        namespace = self._space(namespace, optional=True)
        requester, now = self._who(requester), self._now(now)
        policy = self.forget_policy if policy is None else policy  # the store's (settings=), by default
        if not isinstance(policy, ForgetParams):
            raise ValidationError("policy", f"must be a memkit.ForgetParams, got {type(policy).__name__}")
        self._check_dry_run(dry_run)
        with self._lock:
            # all written by `now`, valid or not: an expired memory is exactly what forget drops
            plan = plan_forget(self._frame_at(namespace, now, requester, valid=False), policy, now)
            if dry_run or plan.is_empty():
                return plan
            # the erasure follows the lineage itself (and logs each cascade with its merge)
            first = plan.filter(pl.col("reason") != "cascade")
            details = first.select("reason", "strength", "forget_cost", "detail").to_dicts()
            done = self._erase(first["id"].to_list(), "forget", now, requester, details)
            return self._erased_report(plan, done)

    def _erased_report(self, plan: pl.DataFrame, done: dict[str, str]) -> pl.DataFrame:
        """The report of an applied forget: the rows of ``plan`` erased (``done``, every id the erasure
        removed -> its namespace), then one ``cascade`` row per id it removed that the plan did not
        list, with its namespace as the row held it (not as the log names it: a pseudonym when it holds
        a secret) and its ``forget`` event's detail: as the plan words it, the merge it was a member of."""
        report = plan.filter(pl.col("id").is_in(list(done)))
        listed = set(report["id"].to_list())
        extra = [i for i in done if i not in listed]
        if not extra:
            return report
        rows = self._sql(_LOGGED, [extra]).unique("id", keep="first", maintain_order=True)
        spaces = pl.Series([done[i] for i in rows["id"]], dtype=pl.String)
        rows = rows.with_columns(namespace=spaces, reason=pl.lit("cascade"), strength=None, forget_cost=None)
        return pl.concat([report, rows.select(list(plan.columns)).cast(plan.schema)])

    # -------------------------------------------------------------------------------------- lint
    def analyze(
        self,
        namespace: str | None = None,
        *,
        now: datetime | None = None,
        stale_days: float = 90.0,
        requester: str | None = None,
        guard: GuardParams | None = None,
    ) -> pl.DataFrame:
        """Lint the memories (:mod:`memkit.analyze`) -> findings ``code, severity, namespace,
        memory_id, key, message``, most severe first. Reads only. The near-duplicate finding (MK003)
        is the merge plan ``consolidate`` would apply at ``now``; with a ``requester`` (and its
        namespace) only what it may read is linted. ``guard`` gives the rules of MK008-MK010: by
        default the store's, or the default rules when the store's guard is off (what was written
        unscreened is what they are for); ``GuardParams(enabled=False)`` skips them."""
        namespace = self._space(namespace, optional=True)
        requester, now = self._who(requester), self._now(now)
        stale_days = check_number("stale_days", stale_days, lo=0.0, hi=365_000.0)
        if guard is None:
            guard = self.guard if self.guard.enabled else GuardParams()
        elif not isinstance(guard, GuardParams):
            raise ValidationError("guard", f"must be a memkit.GuardParams, got {type(guard).__name__}")
        with self._lock:
            frame = self.frame(namespace, requester=requester).filter(pl.col("created_at") <= now)
            # the operator's merge candidates, narrowed to what this requester may read
            cand, emb = self.merge_candidates(namespace, now=now)
            keep = cand["id"].is_in(frame["id"].implode()).to_numpy()
            merges = plan_grouped(cand.filter(pl.Series(keep)), emb[keep], self.merge_params())
            # MK006's floor: the retrieval floor when one is set (below it a memory cannot be
            # recalled), else this store's forgetting policy's (what forget() drops as weak); with the
            # default retrieval floor of 0, using it would make MK006 silent
            weak = self.decay.min_strength or self.forget_policy.min_strength
            return lint(frame, now, min_strength=weak, stale_days=stale_days,
                        merge_plan=merges, guard=guard)  # fmt: skip
