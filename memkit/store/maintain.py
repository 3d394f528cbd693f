"""Maintenance: erasure (``delete``, ``forget``), consolidation and the analyzer.

**Erasure is final.** :meth:`MaintainMixin._erase` removes rows for good in one transaction:

- a merged memory takes its members with it (they hold the same text: the versions of one fact);
- a merged memory one of whose members is erased is *re-derived* from the members that remain
  (:func:`memkit.consolidate.remerge`: text, survivor and embedding), and so is any merge built on
  it; with no member left it is erased too. Lineage (``merged_from``) keeps ids only;
- cached embeddings of the erased texts go (unless another memory has the same text), lessons keep
  their vector but lose the text, events keep ids and numbers only (:mod:`memkit.store.audit`);
- after the commit, a file store is compacted (:meth:`~memkit.store.files.FilesMixin.compact`), so
  the text is not left in the file's free blocks either.

**Maintenance sees the store as it was at ``now``.** ``consolidate``, ``forget`` and ``analyze``
work on the memories written by ``now`` (``created_at <= now``); ``consolidate`` and the merge plan
of ``analyze`` only on those valid at ``now``. With a ``requester``, only what it may change.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from ..analyze import analyze as lint
from ..consolidate import MergeParams, plan_grouped, remerge
from ..embed import content_hash
from ..errors import ValidationError
from ..forget import plan_forget
from ..params import ForgetParams, check_number
from ..rows import build_rows
from ..schema import check_name
from .files import FilesMixin
from .gate import Gate
from .pipeline import PipelineMixin
from .read import ReadMixin
from .vectors import COLUMNS

__all__ = ["MaintainMixin"]


def _union_validity(rows: list[dict[str, Any]]) -> dict[str, datetime | None]:
    """A merged memory holds whenever one of its members held: the earliest start, the latest end
    (an open bound wins)."""
    starts, ends = [r["valid_from"] for r in rows], [r["valid_until"] for r in rows]
    return {
        "valid_from": None if None in starts else min(starts),
        "valid_until": None if None in ends else max(ends),
    }


class MaintainMixin(PipelineMixin, ReadMixin, FilesMixin):
    """Erasure, consolidation, forgetting and linting."""

    # ------------------------------------------------------------------------------------ frames
    def _frame_at(
        self,
        namespace: str | None,
        now: datetime,
        requester: str | None,
        *,
        valid: bool,
        embedding: bool = False,
    ) -> pl.DataFrame:
        """The memories maintenance works on at ``now``: written by then (and, with ``valid``, valid
        then); with a ``requester``, only those it may change (owner or creator)."""
        frame = self.frame(namespace, include_embedding=embedding)
        keep = pl.col("created_at") <= now
        if valid:
            keep = Gate(None, None, valid_at=now).expr()
        if requester is not None:
            keep = keep & ((pl.col("owner") == requester) | (pl.col("created_by") == requester)).fill_null(
                False
            )
        return frame.filter(keep)

    def merge_candidates(
        self, namespace: str | None = None, *, now: datetime | None = None, requester: str | None = None
    ) -> tuple[pl.DataFrame, np.ndarray]:
        """What ``consolidate`` would plan over -> ``(memories frame, embeddings (n, dim))``, row-aligned:
        the memories written and valid at ``now`` that ``requester`` may change. The merge explorer
        plans over these with :func:`memkit.consolidate.plan_grouped`, as ``consolidate`` does."""
        namespace = check_name("namespace", namespace, optional=True)
        requester, now = self._who(requester), self._now(now)
        frame = self._frame_at(namespace, now, requester, valid=True, embedding=True)
        emb = frame["embedding"].to_numpy()
        emb = (
            (np.stack(list(emb)) if emb.dtype == object else emb)
            .astype(np.float32)
            .reshape(-1, self.embedder.dim)
        )
        return frame.drop("embedding"), emb

    # ------------------------------------------------------------------------------------ erasure
    def delete(
        self, memory_id: str, *, namespace: str | None = None, requester: str | None = None,
        now: datetime | None = None,
    ) -> None:  # fmt: skip
        """Erase a memory (user-initiated) for good: its row, text and embedding (see the module
        docstring for what else goes). Only the operator, the owner or the creator may delete; a
        requester names the namespace, or reaches only memories it owns or created. The audit log
        keeps a ``delete`` event with the id, key and version but never the content.
        """
        memory_id = check_name("memory_id", memory_id)
        namespace = check_name("namespace", namespace, optional=True)
        requester, now = self._who(requester), self._now(now)
        with self._lock:
            row = self._locate(
                memory_id, namespace=namespace, requester=requester, now=now, op="delete", modify=True
            )
            detail = {"key": row["key"], "version": row["version"], "status_before": row["status"]}
            self._erase([memory_id], "delete", now, requester, [detail])

    def _erase(
        self, ids: list[str], op: str, now: datetime, requester: str | None, details: list[dict[str, Any]]
    ) -> list[str]:
        """Erase ``ids`` (one event each, with ``details``) and what goes with them -> every id erased."""
        gone, events = list(ids), [json.dumps(d, ensure_ascii=False, default=str) for d in details]
        frontier = list(ids)
        while frontier:  # the members of an erased merge hold its text: they go too
            rows = self._run(
                "SELECT mid, id FROM (SELECT id, unnest(merged_from) AS mid FROM memories"
                " WHERE id IN (SELECT unnest(?::VARCHAR[]))) WHERE mid IN (SELECT id FROM memories)",
                [frontier],
            )
            frontier = list(dict.fromkeys(m for m, _ in rows if m not in gone))
            gone += frontier
            events += [
                json.dumps({"merged_into": p, "cascade": True})
                for m, p in dict(rows).items()
                if m in frontier
            ]
        rederived: list[dict[str, Any]] = []

        def write() -> None:
            self._run(
                "CREATE OR REPLACE TEMP TABLE _gone AS SELECT id, namespace, content_hash, status"
                " FROM memories"
                " WHERE id IN (SELECT unnest(?::VARCHAR[]))", [gone])  # fmt: skip
            self._run("DELETE FROM memories WHERE id IN (SELECT id FROM _gone)")
            # a cached vector would let someone confirm a guess of what was erased
            self._run("DELETE FROM embed_cache WHERE content_hash IN (SELECT content_hash FROM _gone)"
                      " AND content_hash NOT IN (SELECT content_hash FROM memories)")  # fmt: skip
            self._run("UPDATE lessons SET content = '[erased]' WHERE memory_id IN (SELECT id FROM _gone)")
            self._run(
                "INSERT INTO events (ts, namespace, op, memory_id, requester, detail)"
                " SELECT ?, g.namespace, ?, g.id, ?, d.detail FROM _gone g JOIN"
                " (SELECT unnest(?::VARCHAR[]) AS id, unnest(?::VARCHAR[]) AS detail) d"
                " USING (id)", [now, op, requester, gone, events])  # fmt: skip
            self._run("DROP TABLE _gone")
            rederived[:] = self._rederive(gone, op, now, requester)

        self._tx(write)
        self._mirror(lambda: self._index.erase(gone))
        for row in rederived:
            self._mirror(lambda row=row: self._index.erase([row["id"]]))
            emb = self._embedding_matrix("id = ?", [row["id"]])
            self._index_append({c: [row[c]] for c in row}, emb)
        self._on_commit(lambda: self._lesson_cache.clear())
        self._compact_after_erase()
        return gone

    def _rederive(
        self, erased: list[str], op: str, now: datetime, requester: str | None
    ) -> list[dict[str, Any]]:
        """Inside an erasure: re-derive every merge that held an erased text, up the lineage ->
        the re-derived rows as they are now."""
        changed: dict[str, None] = {}
        frontier = list(erased)
        while frontier:
            parents = self._sql(
                f"SELECT {COLUMNS} FROM memories WHERE list_has_any(merged_from, ?::VARCHAR[])", [frontier]
            ).to_dicts()
            frontier = []
            for p in parents:  # merges are few; each re-derived once per erased member
                members = self._sql(
                    "SELECT id, content, importance, created_at FROM memories"
                    " WHERE id IN (SELECT unnest(?::VARCHAR[]))",
                    [p["merged_from"]],
                )
                if members.is_empty():  # nothing of it is left
                    self._run("DELETE FROM memories WHERE id = ?", [p["id"]])
                    self._event(
                        now, op, p["namespace"], p["id"], requester, cascade=True, reason="no member left"
                    )
                    erased.append(p["id"])
                else:
                    survivor, content = remerge(members)
                    self._run(
                        "UPDATE memories SET content = ?, content_hash = ?, supersedes = ?, updated_at = ?,"
                        " embedding = (SELECT embedding FROM memories WHERE id = ?) WHERE id = ?",
                        [content, content_hash(content), survivor, now, survivor, p["id"]],
                    )
                    self._event(now, "merge", p["namespace"], p["id"], requester, rederived=True,
                                members=members["id"].to_list(), status=p["status"])  # fmt: skip
                    changed[p["id"]] = None
                frontier.append(p["id"])
        live = [i for i in changed if i not in erased]
        return self._sql(
            f"SELECT {COLUMNS} FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[]))", [live]
        ).to_dicts()

    def forget(
        self,
        namespace: str | None = None,
        *,
        now: datetime | None = None,
        policy: ForgetParams = ForgetParams(),
        dry_run: bool = False,
        requester: str | None = None,
    ) -> pl.DataFrame:
        """Apply a forgetting policy (:mod:`memkit.forget`) to one namespace, or all -> the plan.

        The plan has one row per dropped memory: ``id, namespace, reason (expired | weak | capacity),
        strength, forget_cost, detail``. ``dry_run=True`` only returns it. Otherwise the memories are
        erased in one transaction (final, like :meth:`delete`), each with a ``forget`` event holding
        the reason but not the content. Protected memories and pending conflicts are never dropped.
        Only memories written by ``now`` are considered. With a ``requester``, only those it owns or
        created (capacity counts them alone); ``requester=None`` is the operator's maintenance.
        """
        namespace = check_name("namespace", namespace, optional=True)
        requester, now = self._who(requester), self._now(now)
        if not isinstance(policy, ForgetParams):
            raise ValidationError("policy", f"must be a memkit.ForgetParams, got {type(policy).__name__}")
        if not isinstance(dry_run, bool):
            raise ValidationError("dry_run", "must be a bool")
        with self._lock:
            plan = plan_forget(self._frame_at(namespace, now, requester, valid=False), policy, now)
            if dry_run or plan.is_empty():
                return plan
            details = plan.select("reason", "strength", "forget_cost", "detail").to_dicts()
            self._erase(plan["id"].to_list(), "forget", now, requester, details)
        return plan

    # ------------------------------------------------------------------------------- consolidation
    def consolidate(
        self,
        namespace: str | None = None,
        *,
        threshold: float = 0.85,
        now: datetime | None = None,
        dry_run: bool = False,
        params: MergeParams | None = None,
        requester: str | None = None,
    ) -> pl.DataFrame:
        """Merge near-duplicate memories (:mod:`memkit.consolidate`) -> the plan, one row per cluster.

        Clusters form among the memories written and valid at ``now``, within one namespace, layer,
        key-or-no-key and access group (same access, owner and creator), so a merge never widens who
        may read a text. ``dry_run=True`` returns the plan only. Applying it writes one merged memory
        per cluster through the write pipeline (the guard screens the merged text; a cluster it would
        not store as active is left unmerged, ``merged_id`` null) and retires the members as
        ``superseded``, in one transaction. The plan gains a ``merged_id`` column. A second run
        merges nothing.
        """
        namespace = check_name("namespace", namespace, optional=True)
        requester, now = self._who(requester), self._now(now)
        params = MergeParams(threshold=threshold) if params is None else params
        if not isinstance(params, MergeParams):
            raise ValidationError("params", f"must be a memkit.MergeParams, got {type(params).__name__}")
        if not isinstance(dry_run, bool):
            raise ValidationError("dry_run", "must be a bool")
        with self._lock:
            frame, emb = self.merge_candidates(namespace, now=now, requester=requester)
            plan = plan_grouped(frame, emb, params)
            if dry_run or plan.is_empty():
                return plan.with_columns(merged_id=pl.lit(None, pl.String))
            return self._apply_merges(plan, frame, emb, now, requester)

    def _apply_merges(
        self, plan: pl.DataFrame, frame: pl.DataFrame, emb: np.ndarray, now: datetime, requester: str | None
    ) -> pl.DataFrame:
        by_id = {r["id"]: (i, r) for i, r in enumerate(frame.to_dicts())}
        records, order = [], []
        for c in plan.to_dicts():  # one record per cluster (a handful), not per memory
            ms = [by_id[m][1] for m in c["members"]]
            s = by_id[c["survivor"]][1]
            records.append({
                "content": c["content"], "key": s["key"], "layer": s["layer"], "kind": s["kind"],
                "value": json.loads(s["value"]) if s["value"] else None, "importance": c["importance"],
                "half_life_hours": max(m["half_life_hours"] for m in ms), "source": s["source"],
                "owner": s["owner"], "created_by": s["created_by"], "access": s["access"],
                "protected": c["protected"], "tags": list(dict.fromkeys(t for m in ms for t in m["tags"])),
                **_union_validity(ms), "created_at": c["created_at"], "last_access_at": c["last_access_at"],
                "access_count": c["access_count"], "namespace": s["namespace"],
                "version": max(m["version"] for m in ms) + (s["key"] is not None),
            })  # fmt: skip
        cols: dict[str, list[Any]] = {}
        for ns in dict.fromkeys(r["namespace"] for r in records):  # build_rows is per namespace
            part = [i for i, r in enumerate(records) if r["namespace"] == ns]
            order += part
            fields = [
                {k: v for k, v in records[i].items() if k not in ("namespace", "version")} for i in part
            ]
            for name, values in build_rows(fields, ns, requester, now, keep_authorship=True).items():
                cols.setdefault(name, []).extend(values)
        plan = plan[order]
        cols["version"] = [records[i]["version"] for i in order]
        cols["merged_from"], cols["supersedes"] = plan["members"].to_list(), plan["survivor"].to_list()
        screened = {k: list(v) for k, v in cols.items()}
        self._screen(screened, requester, now, op="merge", refuse=False)
        ok = [i for i, st in enumerate(screened["status"]) if st == "active"]  # the guard passes it as is
        cols = {k: [v[i] for i in ok] for k, v in cols.items()}
        members = [m for ms in cols["merged_from"] for m in ms]
        survivor_emb = (
            emb[[by_id[s][0] for s in cols["supersedes"]]] if ok else np.zeros((0, emb.shape[1]), np.float32)
        )

        def retire() -> None:
            self._set_status(members, "superseded", now)
            self._events(now, "supersede", [by_id[m][1]["namespace"] for m in members], members, requester,
                         [{"status": "superseded", "merged": True}] * len(members))  # fmt: skip

        merged_ids: list[str | None] = [None] * plan.height
        if ok:
            self._write(
                cols, requester=requester, now=now, policy=self.conflict_policy, op="merge", emb=survivor_emb,
                details=[{"members": ms} for ms in cols["merged_from"]], also=retire, exclude=members,
            )  # fmt: skip
            self._mirror(lambda: self._index.set_status(members, "superseded"))
            for j, i in enumerate(ok):
                merged_ids[i] = cols["id"][j]
        return plan.with_columns(merged_id=pl.Series(merged_ids, dtype=pl.String))

    # -------------------------------------------------------------------------------------- lint
    def analyze(
        self,
        namespace: str | None = None,
        *,
        now: datetime | None = None,
        stale_days: float = 90.0,
        requester: str | None = None,
    ) -> pl.DataFrame:
        """Lint the memories (:mod:`memkit.analyze`) -> findings ``code, severity, namespace,
        memory_id, key, message``, most severe first. Reads only. The near-duplicate finding (MK003)
        is the merge plan ``consolidate`` would apply at ``now``; with a ``requester`` (and its
        namespace) only what it may read is linted."""
        namespace = check_name("namespace", namespace, optional=True)
        requester, now = self._who(requester), self._now(now)
        stale_days = check_number("stale_days", stale_days, lo=0.0)
        with self._lock:
            frame = self.frame(namespace, requester=requester).filter(pl.col("created_at") <= now)
            cand, emb = self.merge_candidates(namespace, now=now)
            keep = cand["id"].is_in(frame["id"].implode()).to_numpy()
            merges = plan_grouped(cand.filter(pl.Series(keep)), emb[keep], MergeParams())
            return lint(frame, now, min_strength=self.decay.min_strength, stale_days=stale_days,
                        merge_plan=merges, guard=self.guard)  # fmt: skip
