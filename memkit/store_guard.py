"""The store's side of the guard (:mod:`memkit.guard`): screening writes, the quarantine, lessons.

:class:`GuardedStore` is a mixin of :class:`~memkit.store.MemoryStore`; it holds no connection of its
own and runs every statement through the store's ``_run`` / ``_sql`` / ``_tx`` (only ``store.py``
imports duckdb). What it adds:

- ``_screen`` — called by ``add`` / ``add_many`` before anything is embedded: PII is redacted, a
  secret refuses the whole call (:class:`~memkit.errors.WriteRefused`, audited as a ``deny`` event
  without the text), a suspected injection makes the row ``quarantined``;
- ``_near_lessons`` — after embedding, a write close to a lesson (a memory confirmed bad) is
  quarantined too;
- :meth:`approve`, :meth:`quarantine` — the human review of quarantined writes;
- :meth:`learn_lesson`, :meth:`lessons`, :meth:`unlearn` — the persisted lessons record;
- ``_guard_hits`` — ``search(guard=True)``: hits near a lesson are dropped, the consistency check
  adds ``lesson_similarity, consensus, consensus_z, outlier``.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import numpy as np
import polars as pl

from .conflicts import plan_keyed_write
from .errors import NotFound, ValidationError, WriteRefused
from .guard import consistency, lesson_similarity, screen_many
from .guard_rules import LESSON
from .rows import new_id
from .schema import Memory, check_name, check_text, check_time

__all__ = ["GuardedStore"]

_VALID_AT = "(valid_from IS NULL OR valid_from <= ?) AND (valid_until IS NULL OR ? < valid_until)"
_LESSON_COLUMNS = "id, namespace, memory_id, content, reason, requester, created_at"


_BARE_PLACEHOLDER = re.compile(r'(?<!")(\[[A-Z_]+\])(?!")')


def _redacted_json(text: str) -> str:
    """A value's JSON text after redaction: a placeholder that replaced a bare number
    (``{"phone": 13812345678}``) is quoted so the value stays JSON; if it still does not parse, the
    value becomes the redacted text as a JSON string."""
    for candidate in (text, _BARE_PLACEHOLDER.sub(r'"\1"', text)):
        try:
            json.loads(candidate)
            return candidate
        except ValueError:
            continue
    return json.dumps(text, ensure_ascii=False)


def _now(now: datetime | None) -> datetime:
    return check_time("now", now, optional=True) or datetime.now(UTC)


class GuardedStore:
    """Mixin: the guard's write hooks, the quarantine review and the lessons record."""

    # ------------------------------------------------------------------------- write hooks
    def _screen(
        self, cols: dict[str, list[Any]], namespace: str, requester: str | None, now: datetime
    ) -> None:
        """Screen ``cols["content"]`` and ``cols["value"]`` in place: redacted texts, ``status``
        quarantined where suspect, ``findings`` as JSON per row (a value's findings have no span and a
        message starting "in value:"). Raises WriteRefused (after a ``deny`` event) on a secret."""
        n = len(cols["content"])
        cols.setdefault("findings", [None] * n)
        if not self.guard.enabled:
            return
        s = screen_many(cols["content"], self.guard)
        actions, found = list(s.actions), s.findings
        values = cols.get("value") or [None] * n
        vrows = [i for i, v in enumerate(values) if v is not None]
        if vrows:  # a structured value is screened too: a key in {"api_key": "sk-…"} is still a key
            v = screen_many([values[i] for i in vrows], self.guard)
            rank = {"store": 0, "quarantine": 1, "refuse": 2}
            for j, i in enumerate(vrows):
                actions[i] = max(actions[i], v.actions[j], key=rank.__getitem__)
                if v.actions[j] != "refuse" and v.texts[j] != values[i]:
                    values[i] = _redacted_json(v.texts[j])
            moved = v.findings.with_columns(
                row=pl.col("row").replace_strict(dict(enumerate(vrows)), return_dtype=pl.Int32),
                start=pl.lit(None, pl.Int32), end=pl.lit(None, pl.Int32),
                message="in value: " + pl.col("message"),
            )  # fmt: skip
            found = pl.concat([found, moved]).sort("row", maintain_order=True)
            cols["value"] = values
        refused = [i for i, a in enumerate(actions) if a == "refuse"]
        if refused:
            bad = found.filter(pl.col("row").is_in(refused))
            brief = bad.filter(pl.col("kind").is_in(["secret", "topic"])).select(
                "row", "code", "kind", "start", "end"
            )
            self._log(
                lambda: self._event(now, "deny", namespace, None, requester, attempted="add", reason="guard",
                                    rows=n, findings=brief.to_dicts())
            )  # fmt: skip
            codes = ", ".join(dict.fromkeys(brief["code"].to_list()))
            where = f" in row {refused[0]}" + (f" (and {len(refused) - 1} more)" if len(refused) > 1 else "")
            raise WriteRefused(f"write refused by the guard{where if n > 1 else ''}: {codes}", bad)
        cols["content"] = s.texts
        cols["status"] = [
            "quarantined" if a == "quarantine" else st for a, st in zip(actions, cols["status"], strict=True)
        ]
        for (row,), part in found.group_by("row"):  # only rows with findings
            cols["findings"][row] = json.dumps(part.drop("row").to_dicts(), ensure_ascii=False)

    def _lesson_matrix(self, namespace: str) -> np.ndarray:
        cache = self.__dict__.setdefault("_lesson_cache", {})
        if namespace not in cache:
            t = self._sql("SELECT embedding FROM lessons WHERE namespace = ?", [namespace])
            cache[namespace] = (
                np.stack(t["embedding"].to_numpy()).astype(np.float32) if t.height
                else np.zeros((0, self.embedder.dim), np.float32)
            )  # fmt: skip
        return cache[namespace]

    def _near_lessons(self, cols: dict[str, list[Any]], emb: np.ndarray, namespace: str) -> None:
        """Quarantine the rows whose embedding is within ``lesson_similarity`` of a lesson."""
        if not self.guard.enabled or not self.guard.screen_injection:
            return
        sim = lesson_similarity(emb, self._lesson_matrix(namespace))
        for i in np.flatnonzero(sim >= self.guard.lesson_similarity):
            code, kind, severity, message = LESSON
            found = json.loads(cols["findings"][i] or "[]") + [
                {"code": code, "kind": kind, "severity": severity, "start": None, "end": None,
                 "message": f"{message} (cosine {sim[i]:.3f})"}
            ]  # fmt: skip
            cols["findings"][i] = json.dumps(found, ensure_ascii=False)
            cols["status"][i] = "quarantined"

    def _log_quarantine(self, cols: dict[str, list[Any]], now: datetime, requester: str | None) -> None:
        """One ``quarantine`` event per quarantined row (inside the write's transaction)."""
        for i in [i for i, st in enumerate(cols["status"]) if st == "quarantined"]:
            codes = list(dict.fromkeys(x["code"] for x in json.loads(cols["findings"][i] or "[]")))
            ns, mid = cols["namespace"][i], cols["id"][i]
            self._event(now, "quarantine", ns, mid, requester, status="quarantined", codes=codes)

    # ------------------------------------------------------------------------- quarantine review
    def quarantine(self, namespace: str | None = None) -> pl.DataFrame:
        """The quarantined memories (of one namespace, or all), in the order they were quarantined:
        ``id, namespace, key, content, created_by, created_at, codes, findings`` (findings as JSON)."""
        namespace = check_name("namespace", namespace, optional=True)
        with self._lock:
            q = self._sql(  # in the order they were quarantined (the audit log's sequence)
                "SELECT id, namespace, key, content, created_by, created_at,"
                " CAST(findings AS VARCHAR) AS findings FROM memories m LEFT JOIN (SELECT memory_id,"
                " max(seq) AS seq FROM events WHERE op = 'quarantine' GROUP BY memory_id) e"
                " ON e.memory_id = m.id WHERE status = 'quarantined' AND (? IS NULL OR namespace = ?)"
                " ORDER BY e.seq NULLS FIRST, created_at, id",
                [namespace, namespace],
            )
        codes = (
            q["findings"]
            .str.json_decode(pl.List(pl.Struct({"code": pl.String})))
            .list.eval(pl.element().struct.field("code").unique(maintain_order=True))
        )
        return q.with_columns(codes=codes).select("id", "namespace", "key", "content", "created_by",
                                                  "created_at", "codes", "findings")  # fmt: skip

    def _check_reviewer(self, row: dict[str, Any], requester: str | None, now: datetime, op: str) -> None:
        # subtle: the writer of a quarantined text may be the attacker, so owning it is not enough
        if requester is not None and requester not in self.guard.reviewers:
            self._deny(row, requester, now, op)

    def approve(self, memory_id: str, *, requester: str | None = None, now: datetime | None = None) -> Any:
        """Release a quarantined memory -> the :class:`~memkit.schema.Memory` with its new status.

        Only the operator (``requester=None``) or a ``GuardParams.reviewers`` member may approve;
        anyone else gets AccessDenied (audited as ``deny``). A keyed memory then meets the key's
        versions under the store's conflict policy, as a fresh write would (``active``, or
        ``conflict`` under ``flag``); an ``approve`` event records it.
        """
        memory_id = check_name("memory_id", memory_id)
        requester = check_name("requester", requester, optional=True)
        now = _now(now)
        with self._lock:
            row = self._row(memory_id)
            if row is None:
                raise NotFound(f"no memory with id {memory_id!r}")
            if row["status"] != "quarantined":
                raise ValidationError("memory_id", f"{memory_id!r} is {row['status']!r}, not quarantined")
            self._check_reviewer(row, requester, now, "approve")
            status, changes, conflict_with = "active", (), None
            if row["key"] is not None:
                others = self._sql(  # as in add(): only expiry frees a slot
                    "SELECT id, status, coalesce(CAST(value AS VARCHAR), content) AS value, version,"
                    " (valid_until IS NULL OR ? < valid_until) AS valid_now"
                    " FROM memories WHERE namespace = ? AND key = ? AND id <> ?",
                    [now, row["namespace"], row["key"], memory_id],
                ).to_dicts()
                versions = [
                    (r["id"], r["status"] if r["valid_now"] else "out_of_validity", r["value"], r["version"])
                    for r in others
                ]
                plan = plan_keyed_write(versions, row["value"] or row["content"], self.conflict_policy)
                status, changes = plan.status, plan.changes
                conflict_with = plan.against if plan.op == "conflict" else None

            def write() -> None:
                self._set_status([memory_id], status, now)
                self._event(
                    now, "approve", row["namespace"], memory_id, requester, status=status, key=row["key"]
                )
                if conflict_with is not None:
                    self._event(now, "conflict", row["namespace"], memory_id, requester, key=row["key"],
                                against=conflict_with, status="conflict")  # fmt: skip
                for old_id, st in changes:
                    self._set_status([old_id], st, now)
                    self._event(
                        now, "supersede", row["namespace"], old_id, requester, by=memory_id, status=st
                    )

            self._tx(write)

            def mirror() -> None:
                self._index.set_status([memory_id], status)
                for old_id, st in changes:
                    self._index.set_status([old_id], st)

            self._guard_index(mirror)
        return Memory.from_row({**row, "status": status, "updated_at": now})

    # ------------------------------------------------------------------------- lessons
    def learn_lesson(
        self, memory_id: str, *, reason: str, requester: str | None = None, now: datetime | None = None
    ) -> str:
        """Record that a memory is confirmed bad -> the lesson's id.

        The lesson keeps the memory's text and embedding (for the audit, and so that later writes
        and ``search(guard=True)`` can recognise repeats: cosine >= ``GuardParams.lesson_similarity``).
        An ``active`` memory is quarantined at once. Operator or reviewers only.
        """
        memory_id = check_name("memory_id", memory_id)
        reason = check_text("reason", reason, max_chars=1000)
        requester = check_name("requester", requester, optional=True)
        now = _now(now)
        with self._lock:
            row = self._row(memory_id)
            if row is None:
                raise NotFound(f"no memory with id {memory_id!r}")
            self._check_reviewer(row, requester, now, "learn a lesson from")
            emb = self._index.emb[self._index.rows([memory_id])[0]].copy()
            lid, ns, retire = new_id(), row["namespace"], row["status"] == "active"

            def write() -> None:
                self._run(
                    f"INSERT INTO lessons ({_LESSON_COLUMNS}, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [lid, ns, memory_id, row["content"], reason, requester, now, emb.tolist()],
                )
                self._event(now, "lesson", ns, memory_id, requester, lesson=lid, action="learn")
                if retire:
                    self._set_status([memory_id], "quarantined", now)
                    self._event(now, "quarantine", ns, memory_id, requester, status="quarantined", lesson=lid)

            self._tx(write)
            self.__dict__.get("_lesson_cache", {}).pop(ns, None)
            if retire:
                self._guard_index(lambda: self._index.set_status([memory_id], "quarantined"))
        return lid

    def lessons(self, namespace: str | None = None) -> pl.DataFrame:
        """The lessons (of one namespace, or all), oldest first:
        ``id, namespace, memory_id, content, reason, requester, created_at``."""
        namespace = check_name("namespace", namespace, optional=True)
        with self._lock:
            return self._sql(
                f"SELECT {_LESSON_COLUMNS} FROM lessons WHERE (? IS NULL OR namespace = ?)"
                " ORDER BY created_at, id",
                [namespace, namespace],
            )

    def unlearn(self, lesson_id: str, *, requester: str | None = None, now: datetime | None = None) -> None:
        """Drop a lesson (a wrong call); the memory it came from keeps its status."""
        lesson_id = check_name("lesson_id", lesson_id)
        requester = check_name("requester", requester, optional=True)
        now = _now(now)
        with self._lock:
            rows = self._sql(f"SELECT {_LESSON_COLUMNS} FROM lessons WHERE id = ?", [lesson_id]).to_dicts()
            if not rows:
                raise NotFound(f"no lesson with id {lesson_id!r}")
            les = rows[0]
            fake = {"id": les["memory_id"], "namespace": les["namespace"], "access": "public"}
            self._check_reviewer(fake, requester, now, "unlearn a lesson about")

            def write() -> None:
                self._run("DELETE FROM lessons WHERE id = ?", [lesson_id])
                self._event(now, "lesson", les["namespace"], les["memory_id"], requester, lesson=lesson_id,
                            action="unlearn")  # fmt: skip

            self._tx(write)
            self.__dict__.get("_lesson_cache", {}).pop(les["namespace"], None)

    # ------------------------------------------------------------------------- read time
    def _guard_hits(
        self, hits: pl.DataFrame, rows: np.ndarray, namespace: str, query: str
    ) -> tuple[pl.DataFrame, np.ndarray]:
        """``search(guard=True)``: drop hits near a lesson, then the consistency check on the rest."""
        emb = self._index.emb[rows]  # (k, dim)
        sim = lesson_similarity(emb, self._lesson_matrix(namespace))
        keep = sim < self.guard.lesson_similarity
        hits = hits.with_columns(lesson_similarity=pl.Series(sim)).filter(pl.Series(keep))
        rows = rows[keep]
        hits = consistency(hits, emb[keep], self.guard, query=query)
        return hits.with_columns(rank=pl.int_range(1, hits.height + 1, dtype=pl.Int32)), rows
