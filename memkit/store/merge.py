"""Consolidation on the store: the merge plan over what holds at ``now``, through the write pipeline.
``consolidate`` and the merge explorer plan over the same memories (:meth:`MergeMixin.merge_candidates`:
written, active and valid at ``now``, changeable by the requester) with the same pure function
(:func:`memkit.consolidate.plan_grouped`: clusters within one namespace, layer, key and access group,
so a merge never widens who may read a text). Applying a plan writes each merged memory through the
write pipeline — the guard screens the merged text, and a cluster it would not store as active is
left unmerged, with a ``deny`` event — and retires the members as ``superseded`` in the same transaction.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import polars as pl

from .. import access as acl
from ..consolidate import MergeParams, plan_grouped
from ..decay import age_hours_expr, below_floor, strength_expr
from ..errors import MemkitError, ValidationError
from ..merge_rule import merged_importance
from ..params import check_number, slider_ranges
from ..portable.rows import build_rows
from ..schema import COUNT_MAX
from .pipeline import PipelineMixin
from .read import ReadMixin
from .vectors import COLUMNS

__all__ = ["MergeMixin", "merge_group", "merged_record", "own_reinforcement"]


def _union_validity(rows: list[dict[str, Any]]) -> dict[str, datetime | None]:
    """A merged memory holds whenever one of its members held: the earliest start, the latest end
    (an open bound wins)."""
    starts, ends = [r["valid_from"] for r in rows], [r["valid_until"] for r in rows]
    return {
        "valid_from": None if None in starts else min(starts),
        "valid_until": None if None in ends else max(ends),
    }


def merge_group(row: dict[str, Any]) -> tuple[Any, ...]:
    """A memory's merge group: its namespace, access, owner and creator (a merge holds only members of
    its own group)."""
    return row["namespace"], row["access"], row["owner"], row["created_by"]


def merged_record(
    members: list[dict[str, Any]], survivor: dict[str, Any], content: str, now: datetime
) -> dict[str, Any]:
    """The fields of a merged memory from its members' rows (the merge rule of
    :mod:`memkit.consolidate`), made at ``now``: the survivor's key, layer, kind, source, owner, creator
    and access; its value, else the first member's that has one (a plan never joins two values:
    :mod:`memkit.merge_links`); half-life and last access the max; created_at the min; importance the
    max, capped so that the merged memory is no stronger at ``now`` than its strongest member
    (:func:`memkit.merge_rule.merged_importance`: a merge of weak members stays weak); access counts
    summed; protected if any member is; the members' tags (oldest first; one instant's in the order
    of ``members``: as written); valid whenever a member was."""
    us = timedelta(microseconds=1)  # ages in hours computed as age_hours_expr does, to the last bit
    value = next((m["value"] for m in (survivor, *members) if m["value"] is not None), None)
    ages = [(now - m["created_at"]) // us / 3.6e9 for m in members]
    return {
        "content": content, "key": survivor["key"], "layer": survivor["layer"], "kind": survivor["kind"],
        "value": None if value is None else json.loads(value), "source": survivor["source"],
        "owner": survivor["owner"], "created_by": survivor["created_by"], "access": survivor["access"],
        "importance": merged_importance([m["importance"] for m in members],
                                        [m["half_life_hours"] for m in members], ages),
        "half_life_hours": max(m["half_life_hours"] for m in members),
        "created_at": min(m["created_at"] for m in members),
        "last_access_at": max(m["last_access_at"] for m in members),
        "access_count": min(sum(m["access_count"] for m in members), COUNT_MAX),
        "protected": any(m["protected"] for m in members),
        "tags": list(dict.fromkeys(t for m in sorted(members, key=lambda m: m["created_at"])  # (stable)
                                   for t in m["tags"])),
        **_union_validity(members),
    }  # fmt: skip


def own_reinforcement(
    rec: dict[str, Any], merge: dict[str, Any], members: list[dict[str, Any]], was: dict[str, tuple[Any, ...]]
) -> dict[str, Any]:
    """A re-derived merge's ``rec`` (from the members left) with the reinforcement the merge earned
    itself: its hits since it was made are its count above its members' summed counts, its gain in
    importance above their max, its own last access one later than theirs, as the members were at
    the merge (members are superseded then, so they stay; ``was`` has those an erasure just changed:
    ``(count, importance, last access)``). Nothing of an erased member's own stays."""
    current = {m["id"]: (m["access_count"], m["importance"], m["last_access_at"]) for m in members}
    then = [t for i in merge["merged_from"] if (t := was.get(i) or current.get(i)) is not None]
    hits = max(0, merge["access_count"] - sum(t[0] for t in then))
    gain = max(0.0, merge["importance"] - max((t[1] for t in then), default=merge["importance"]))
    own = merge["last_access_at"] > max((t[2] for t in then), default=merge["last_access_at"])
    last = max(rec["last_access_at"], merge["last_access_at"]) if own else rec["last_access_at"]
    count, importance = min(rec["access_count"] + hits, COUNT_MAX), min(1.0, rec["importance"] + gain)
    return {**rec, "access_count": count, "importance": importance, "last_access_at": last}


_STILL_ACTIVE = (
    "SELECT count(*) FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[])) AND status = 'active'"
)


class MergeMixin(PipelineMixin, ReadMixin):
    """The memories maintenance works on, and ``consolidate``."""

    # ------------------------------------------------------------------------------------ frames
    def _merges_of(self, members: dict[str, tuple[Any, ...]]) -> list[dict[str, Any]]:
        """The merges that hold any of ``members`` (id -> its :func:`merge_group`) as a member of their own
        group (stored rows, every column): a lineage is followed only within a merge's namespace and
        access group, upwards as downwards, so a ``merged_from`` that names another tenant's memory
        (forged in an imported file) never lets its erasure reach the merge."""
        found = self._sql(
            f"SELECT {COLUMNS} FROM memories WHERE list_has_any(merged_from, ?::VARCHAR[])", [list(members)]
        ).to_dicts()  # (merges are few)
        return [p for p in found if any(members.get(m) == merge_group(p) for m in p["merged_from"])]

    def _frame_at(
        self,
        namespace: str | None,
        now: datetime,
        requester: str | None,
        *,
        valid: bool,
        embedding: bool = False,
    ) -> pl.DataFrame:
        """The memories maintenance works on at ``now``: written by then (by their write's event: a
        merge made later is not there; statuses are today's: what waits for a review waits now)
        and, with ``valid``, valid then; with a ``requester`` (who names its namespace), only those
        it may both read and change (the owner or creator of a memory another creator made private
        may not read it)."""
        gate = self._gate(namespace, requester, valid_at=now if valid else None)
        keep = gate.expr() & (pl.col("created_at") <= now)
        then = self._then(namespace, now)  # written by then: by its write's event (memkit.store.asof)
        if then is not None:
            keep = keep & ~pl.col("id").is_in(then.ids(None))
        keep = keep & acl.modifiable_expr(requester)  # (the operator: everything)
        # a requester's view is the gated one: quarantined rows withheld
        return self.frame(namespace, include_embedding=embedding, requester=requester).filter(keep)

    def merge_candidates(
        self, namespace: str | None = None, *, now: datetime | None = None, requester: str | None = None
    ) -> tuple[pl.DataFrame, np.ndarray]:
        """What ``consolidate`` would plan over -> ``(memories frame, embeddings (n, dim))``, row-aligned:
        the memories written, active and valid at ``now``, strong enough to be recalled (strength at least
        ``DecayParams.min_strength``), that ``requester`` may read and change; ``_weak`` marks those
        below the forgetting policy's floor, never linked to a stronger member
        (:func:`memkit.consolidate.cluster_labels`: they merge among themselves, or are forget's
        business: a merged memory takes its oldest member's ``created_at``: one year-old duplicate
        would date a fresh fact a year old, and ``forget()`` would erase it); ``_age_hours`` is each
        one's age at ``now`` (a merged importance is capped with it: :mod:`memkit.merge_rule`). The
        merge explorer plans over these with :func:`memkit.consolidate.plan_grouped`, as
        ``consolidate`` does."""
        namespace = self._space(namespace, optional=True)
        requester, now = self._who(requester), self._now(now)
        frame = self._frame_at(namespace, now, requester, valid=True, embedding=True)
        # only what search could recall: a weak memory is forget's business, and as the oldest member it
        # would date the merged memory (created_at = min) below the floor, hiding the others
        strength = strength_expr(age_hours=age_hours_expr("created_at", now))
        # active at `now` too (`then`: statuses unlike today's; one approved later would be served early)
        then = [] if (t := self._then(namespace, now)) is None else t.changed["id"].to_list()
        live = (pl.col("status") == "active") & ~pl.col("id").is_in(then)
        frame = frame.filter(~below_floor(strength, self.decay.min_strength) & live)
        # _weak: below the forgetting floor, never linked to a stronger member (whose facts a merged memory
        # dated by it would lose to forget()); _age_hours: the planner caps a merged importance with it
        frame = frame.with_columns(
            _weak=below_floor(strength, self.forget_policy.min_strength),
            _age_hours=age_hours_expr("created_at", now),
        )
        emb = frame["embedding"].to_numpy()
        dim = self._stale[1] if self._stale else self.embedder.dim  # a stale file's vectors are its own
        emb = (np.stack(list(emb)) if emb.dtype == object else emb).astype(np.float32).reshape(-1, dim)
        return frame.drop("embedding"), emb

    # ------------------------------------------------------------------------------- consolidation
    def merge_params(self, threshold: float | None = None) -> MergeParams:
        """The :class:`~memkit.consolidate.MergeParams` this store merges with by default: its
        ``merge_threshold`` (or ``threshold``) and ``merge_distinct_facts`` (what ``consolidate``,
        MK003 and the merge explorer plan with); a bad ``threshold`` is a ValidationError naming it."""
        if threshold is not None:  # in MergeParams' range, the error naming the argument passed
            lo, hi, _ = slider_ranges(MergeParams)["threshold"]
            threshold = check_number("threshold", threshold, lo=lo, hi=hi)
        return MergeParams(
            threshold=self.merge_threshold if threshold is None else threshold,
            distinct_facts=self.merge_distinct_facts,
        )

    def consolidate(
        self,
        namespace: str | None = None,
        *,
        threshold: float | None = None,
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
        not store as active is left unmerged, ``merged_id`` null, with one ``deny`` event) and retires
        the members as ``superseded``, in one transaction. The plan gains a ``merged_id`` column and
        ``refused``: why a cluster is not merged (``guard``, ``namespace``: :meth:`_merge_rows`; null
        when it is), which a dry run, screening the merged texts too, tells beforehand. A second run
        merges nothing.

        ``params`` (a :class:`~memkit.consolidate.MergeParams`) sets ``max_cluster``, ``block_size``
        and ``distinct_facts``, and the threshold when none is given. An explicit ``threshold`` wins over
        ``params.threshold``, as an explicit argument wins over a parameter object elsewhere in
        memkit (``search(min_strength=)``, a ``sweep`` grid point over its ``base``). With neither,
        the store's threshold (``MergeParams().threshold``, or what ``settings=`` gave it). Without
        ``params``, memories whose fact tokens differ are kept apart as ``store.merge_distinct_facts``
        says (True by default; :func:`memkit.consolidate.held_apart` lists such pairs).
        """
        namespace = self._space(namespace, optional=True)
        requester, now = self._who(requester), self._now(now)
        if threshold is not None:  # in MergeParams' range, the error naming the argument passed
            lo, hi, _ = slider_ranges(MergeParams)["threshold"]
            threshold = check_number("threshold", threshold, lo=lo, hi=hi)
        if params is None:  # the store's threshold and fact rule (settings=) unless a threshold is given
            params = self.merge_params(threshold)
        elif not isinstance(params, MergeParams):
            raise ValidationError("params", f"must be a memkit.MergeParams, got {type(params).__name__}")
        elif threshold is not None:
            params = replace(params, threshold=threshold)
        self._check_dry_run(dry_run)
        with self._lock:
            frame, emb = self.merge_candidates(namespace, now=now, requester=requester)
            plan = plan_grouped(frame, emb, params)
            if plan.is_empty():
                return plan.with_columns(merged_id=pl.lit(None, pl.String), refused=pl.lit(None, pl.String))
            if dry_run:  # what applying would refuse, screened as it would be (nothing written)
                ordered, _, order, refused, _ = self._merge_rows(plan, frame, emb, now, requester)
                plan = ordered.with_columns(merged_id=pl.lit(None, pl.String),
                                            refused=pl.Series(refused, dtype=pl.String))  # fmt: skip
                return plan[np.argsort(order, kind="stable")]
            return self._apply_merges(plan, frame, emb, now, requester)

    def _merge_rows(
        self, plan: pl.DataFrame, frame: pl.DataFrame, emb: np.ndarray, now: datetime, requester: str | None
    ) -> tuple[pl.DataFrame, dict[str, list[Any]], list[int], list[str | None], list[dict[str, Any]]]:
        """A merge plan as the rows it would write -> ``(plan, cols, order, refused, denials)``: the plan's
        rows in the order of ``cols`` (grouped by namespace; ``order``: their places in the plan), each
        cluster's record (:func:`merged_record`) validated per namespace by ``build_rows`` with the
        members' authorship, and why each would not be written (None: it would): ``guard``, the guard
        would not store it as active (a secret, an injection, a lesson's repeat: screened here on a
        copy, as ``_write`` screens the rows again, same result), or ``namespace``, one holding a
        secret by the store's rules (an old store's: no new rows). ``denials``: the ``deny`` event
        details of those the guard refused (codes and spans of its findings, never text). ``cols``
        also holds ``_at`` (each survivor's row in ``emb``) and ``_spaces`` (its members' namespaces)."""
        # the members' rows only (a few per cluster, not every candidate), `_at` their row in `emb`
        held = frame.with_row_index("_at").filter(pl.col("id").is_in(plan["members"].explode().implode()))
        rows = {r["id"]: r for r in held.to_dicts()}
        records, order = [], []
        for c in plan.to_dicts():  # one record per cluster (a handful), not per memory
            ms, s = [rows[m] for m in c["members"]], rows[c["survivor"]]
            version = max(m["version"] for m in ms) + (s["key"] is not None)  # a keyed merge: next version
            records.append(
                {**merged_record(ms, s, c["content"], now), "namespace": s["namespace"], "version": version}
            )
        cols: dict[str, list[Any]] = {}
        for ns in dict.fromkeys(r["namespace"] for r in records):  # build_rows is per namespace
            part = [i for i, r in enumerate(records) if r["namespace"] == ns]
            order += part
            fields = [
                {k: v for k, v in records[i].items() if k not in ("namespace", "version")} for i in part
            ]
            for name, values in build_rows(fields, ns, requester, now, keep_authorship=True).items():
                cols.setdefault(name, []).extend(values)
        plan = plan[order]  # the plan's rows in the order of `cols` (grouped by namespace)
        cols["version"] = [records[i]["version"] for i in order]
        cols["merged_from"], cols["supersedes"] = plan["members"].to_list(), plan["survivor"].to_list()
        cols["_at"] = [rows[s]["_at"] for s in cols["supersedes"]]  # the survivor's vector (popped by _apply)
        cols["_spaces"] = [[rows[m]["namespace"] for m in ms] for ms in cols["merged_from"]]  # (the same)
        screened = {k: list(v) for k, v in cols.items()}  # subtle: the guard's dry run, on a copy
        self._screen(screened, requester, now, op="merge", refuse=False)
        if self._stale is None:  # (a stale file's vectors are another embedder's, and it takes no writes)
            # a lesson's repeat, by the survivor's vector and the text's own, as _write checks a given one
            self._near_lessons(screened, emb[cols["_at"]], range(len(order)))
        refused: list[str | None] = [
            None if st == "active" and not self._secret(ns) else "guard" if st != "active" else "namespace"
            for st, ns in zip(screened["status"], cols["namespace"], strict=True)
        ]
        denials = [
            {"attempted": "merge", "reason": "guard", "members": ms,
             "findings": [{k: f.get(k) for k in ("code", "kind", "start", "end")}
                          for f in json.loads(found or "[]")]}
            for ms, found, why in zip(cols["merged_from"], screened["findings"], refused, strict=True)
            if why == "guard"
        ]  # fmt: skip
        return plan, cols, order, refused, denials

    def _apply_merges(
        self, plan: pl.DataFrame, frame: pl.DataFrame, emb: np.ndarray, now: datetime, requester: str | None
    ) -> pl.DataFrame:
        """Write a merge plan -> the plan with ``merged_id`` (null for a cluster left unmerged).

        The clusters :meth:`_merge_rows` would write are written through the pipeline with the
        survivor's embedding, while ``retire`` marks the members ``superseded`` in the same
        transaction; each one the guard refused leaves its members as they are and one ``deny`` event
        (``attempted: merge``, ``reason: guard``, the members' ids, the findings' codes and spans).
        """
        plan, cols, order, refused, denials = self._merge_rows(plan, frame, emb, now, requester)
        ok = [i for i, why in enumerate(refused) if why is None]
        denied = [cols["namespace"][i] for i, why in enumerate(refused) if why == "guard"]
        cols = {k: [v[i] for i in ok] for k, v in cols.items()}
        members = [m for ms in cols["merged_from"] for m in ms]
        spaces = [ns for nss in cols.pop("_spaces") for ns in nss]  # each member's namespace
        # (merged, dim): the survivor's vector, though the text may add others' sentences
        survivor_emb = emb[cols.pop("_at")] if ok else np.zeros((0, emb.shape[1]), np.float32)

        def deny() -> None:
            """The refused merges' ``deny`` events (inside the merges' transaction, or one of their own)."""
            self._events(now, "deny", denied, [None] * len(denied), requester, denials)

        def retire() -> None:
            """Inside the merge's transaction: the members become ``superseded``, one event each.
            On a server another process may have merged (or erased) a member since the plan: then
            nothing is merged (MemkitError); a new ``consolidate`` plans from what is there now."""
            if self._pg is not None:
                live = self._run(_STILL_ACTIVE, [members])[0][0]
                if live != len(members):
                    raise MemkitError(
                        "another process changed the memories being merged: nothing was merged;"
                        " run consolidate again"
                    )
            dated = self._set_status(members, "superseded", now)  # (a member changed after `now`: then)
            self._events([dated[m] for m in members], "supersede", spaces, members, requester,
                            [{"status": "superseded", "merged": True}] * len(members))  # fmt: skip
            deny()

        merged_ids: list[str | None] = [None] * plan.height
        if ok:
            self._write(
                cols, requester=requester, now=now, policy=self.conflict_policy, op="merge", emb=survivor_emb,
                details=[{"members": ms} for ms in cols["merged_from"]], also=retire, exclude=members,
            )  # fmt: skip
            self._mirror(lambda: self._index.set_status(members, "superseded"))
            for j, i in enumerate(ok):
                merged_ids[i] = cols["id"][j]
        elif denied and not self.read_only and self._stale is None:  # (as _log: a read-only store logs none)
            self._tx(deny)
        merged = plan.with_columns(
            merged_id=pl.Series(merged_ids, dtype=pl.String), refused=pl.Series(refused, dtype=pl.String)
        )
        return merged[np.argsort(order, kind="stable")]  # back in the plan's order, as a dry run gives it
