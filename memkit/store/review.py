"""The human side of the guard: the quarantine review, approval, and the lessons record.

- :meth:`ReviewMixin.quarantine` lists quarantined writes with their findings: the one read that
  shows quarantined text (``get`` and ``versions`` withhold it);
- :meth:`ReviewMixin.approve` releases one through the write pipeline's version plan (a keyed memory
  meets its key's versions under the conflict policy, exactly as a fresh write would);
- :meth:`ReviewMixin.learn_lesson` / :meth:`lessons` / :meth:`unlearn` keep the memories a reviewer
  confirmed bad, so that later writes (:meth:`~memkit.store.guard.GuardMixin._near_lessons`) and
  ``search(guard=True)`` recognise repeats.

Only the operator (``requester=None``) or a ``GuardParams.reviewers`` member may review: the writer
of a quarantined text may be the attacker, so owning it is not enough. A reviewer is no reader of
everything: it learns a lesson from what the review holds (quarantined) or what it may read (so it
cannot pull another writer's private memory into the review, nor its text into ``lessons``), and
``approve`` replies with the row as the gate shows it to the reviewer (``[withheld: ...]`` where it
may not read it).

Table ``lessons`` (migration 2): ``id, namespace, memory_id, content, reason, requester,
created_at, embedding``. A lesson belongs to the namespace of its memory and outlives it: erasing
the memory replaces the lesson's text and reason with ``[erased]`` but keeps its vector, so repeats
are still recognised (:mod:`memkit.store.forgotten`; a reviewer's reason is never ``[erased]``).
A reason holding a secret is refused by the default rules plus the store's ``extra_secret_patterns``,
whatever the guard's switches, as names are (:mod:`memkit.store.names`); its PII is redacted by the
store's guard (the default rules when it is off).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import polars as pl

from .. import access as acl
from ..errors import AccessDenied, NotFound, ValidationError
from ..guard import identity, screen, secret_names
from ..params import GuardParams
from ..portable.rows import new_id
from ..schema import Memory, check_name, check_text
from .forgotten import ERASED
from .names import log_names
from .pipeline import PipelineMixin
from .versions import check_forward

__all__ = ["ReviewMixin"]

_LESSON_COLUMNS = "id, namespace, memory_id, content, reason, requester, created_at"  # all but embedding
_LIVE = ("active", "conflict")  # statuses a lesson quarantines: served, or waiting to be


def _codes(findings: str | None) -> list[str]:
    """Distinct finding codes of stored findings JSON; tolerant of anything stored (never raises).

    >>> _codes('[{"code": "MG301"}, {"code": "MG301"}, {"kind": "pii"}]'), _codes("not json")
    (['MG301'], [])
    """
    try:
        found = json.loads(findings) if findings else []
    except ValueError:
        return []
    if not isinstance(found, list):
        return []
    codes = [f.get("code") for f in found if isinstance(f, dict)]
    return list(dict.fromkeys(c for c in codes if isinstance(c, str)))


class ReviewMixin(PipelineMixin):
    """Quarantine review, approval and lessons."""

    def _reviews(self, requester: str | None) -> bool:
        """Whether ``requester`` is the operator or a ``GuardParams.reviewers`` member."""
        # subtle: the writer of a quarantined text may be the attacker, so owning it is not enough
        return requester is None or requester in {identity(r) for r in self.guard.reviewers}

    def _check_reviewer(self, row: dict[str, Any], requester: str | None, now: datetime, op: str) -> None:
        """AccessDenied (audited as ``deny``) unless ``requester`` is the operator or a reviewer."""
        if not self._reviews(requester):
            self._deny(row, requester, now, op)

    def _may_read(self, memory_id: str, requester: str | None) -> bool:
        """Whether ``requester`` may read the memory ``memory_id`` (False once it is erased)."""
        row = self._row(memory_id)
        return row is not None and acl.can_read(row["access"], row["owner"], row["created_by"], requester)

    def _reviewable(
        self, memory_id: str, namespace: str | None, requester: str | None, now: datetime, op: str
    ) -> dict[str, Any]:
        """The row a reviewer acts on (reviewers work across namespaces; naming one scopes the id).

        Unlike :meth:`~memkit.store.gate.GateMixin._locate`, no access rule applies here: the
        caller checks :meth:`_check_reviewer`, and the row is unmasked (a reviewer sees the text).
        But as there, a memory a non-reviewer may not read is unknown to it by id alone (NotFound,
        :meth:`~memkit.store.gate.GateMixin._unseen`): its refusal does not tell a real id.
        """
        row = self._row(memory_id)
        if row is None or (namespace is not None and row["namespace"] != namespace):
            raise self._unknown(memory_id, namespace)
        if namespace is None and not self._reviews(requester):
            self._unseen(row, requester, now, op, namespace)
        return row

    def quarantine(self, namespace: str | None = None) -> pl.DataFrame:
        """The quarantined memories (of one namespace, or all), in the order they were quarantined:
        ``id, namespace, key, content, created_by, created_at, codes, findings`` (findings as JSON)."""
        namespace = self._space(namespace, optional=True)
        with self._lock:
            # the latest quarantine event of each memory orders the queue (rows without one first)
            q = self._sql(
                "SELECT id, namespace, key, content, created_by, created_at,"
                " CAST(findings AS VARCHAR) AS findings FROM memories m LEFT JOIN (SELECT memory_id,"
                " max(seq) AS seq FROM events WHERE op = 'quarantine' GROUP BY memory_id) e"
                " ON e.memory_id = m.id WHERE status = 'quarantined' AND (? IS NULL OR namespace = ?)"
                " ORDER BY e.seq NULLS FIRST, created_at, m.rowid",  # (one instant's: as written)
                [namespace, namespace],
            )
        # the codes (MG301, ...) per row, for a reviewer to filter on without parsing the JSON
        codes = pl.Series("codes", [_codes(f) for f in q["findings"]], dtype=pl.List(pl.String))
        return q.with_columns(codes).select(
            "id", "namespace", "key", "content", "created_by", "created_at", "codes", "findings"
        )

    def approve(
        self,
        memory_id: str,
        *,
        namespace: str | None = None,
        requester: str | None = None,
        now: datetime | None = None,
    ) -> Memory:
        """Release a quarantined memory -> the :class:`~memkit.schema.Memory` with its new status.

        Only the operator or a ``GuardParams.reviewers`` member may approve (anyone else gets
        AccessDenied, audited as ``deny``; NotFound, as for a made-up id, by an id alone of a memory
        it may not read). A keyed memory then meets the key's versions under the
        store's conflict policy, as a fresh write would (``active``, or ``conflict`` under ``flag``;
        ``strict`` raises ConflictError and changes nothing); an ``approve`` event records it. The
        reply is the memory as the reviewer may read it: another writer's private (or protected)
        memory comes back with its text, key, value and tags withheld (``[withheld: ...]``).
        """
        memory_id = check_name("memory_id", memory_id)
        namespace = self._space(namespace, optional=True)
        requester = self._who(requester)
        now = self._now(now)
        with self._lock:
            row = self._reviewable(memory_id, namespace, requester, now, "approve")
            self._check_reviewer(row, requester, now, "approve")  # first: no one else may learn the status
            if row["status"] != "quarantined":  # approving twice, or an active memory, is a mistake
                raise ValidationError("memory_id", f"{memory_id!r} is {row['status']!r}, not quarantined")
            check_forward([row], now)
            cols: dict[str, list[Any]] = {}

            def decide() -> Any:
                """The stored row as a batch of one, asking to go live: the version plan decides the
                rest, planned as the operator's (releasing it is the reviewer's decision), changing only
                the versions its writer could change (another's private pending value stays)."""
                cols.clear()
                cols.update({c: [v] for c, v in row.items()})
                cols["status"], cols["supersedes"] = ["active"], [None]
                return self._plan_versions(cols, now, self.conflict_policy, None, exclude=[memory_id],
                                           writer=row.get("created_by") or row.get("owner"),
                                           live_from=now)  # fmt: skip

            plan = decide()  # before the transaction: "strict" refuses with nothing written
            status = cols["status"][0]  # active, or conflict under "flag"

            def write() -> None:
                """The new status, the ``approve`` event and the plan's changes, in one transaction."""
                nonlocal plan, status
                if self._pg is not None:  # another process may have written the key since: decide
                    plan = decide()  # again, inside the (serializable) transaction
                    status = cols["status"][0]
                self._set_status([memory_id], status, now)
                self._event(
                    now,
                    "approve",
                    row["namespace"],
                    memory_id,
                    requester,
                    status=plan.began.get(0, status),
                    key=row["key"],
                )
                self._apply_versions(plan, cols, now, requester)

            self._tx(write)
            self._mirror(lambda: self._index.set_status([memory_id], status))
            self._mirror_versions(plan)
        with self._lock:  # as the gate shows it to the reviewer: no text or lineage id it may not read
            return Memory.from_row(self._reply_row({**row, "status": status, "updated_at": now}, requester))

    # ------------------------------------------------------------------------------------ lessons
    def learn_lesson(
        self,
        memory_id: str,
        *,
        reason: str,
        namespace: str | None = None,
        requester: str | None = None,
        now: datetime | None = None,
    ) -> str:
        """Record that a memory is confirmed bad -> the lesson's id.

        The lesson keeps the memory's text and embedding (for the audit, and so that later writes
        and ``search(guard=True)`` can recognise repeats: cosine >= ``GuardParams.lesson_similarity``).
        A live memory (``active``, or a pending ``conflict`` version) is quarantined at once: a value
        confirmed bad is neither served as a key's pending value nor resolved into its current one.
        Operator or reviewers only, and a reviewer only from a memory the review holds (quarantined)
        or one it may read (AccessDenied, audited; anyone else gets :meth:`approve`'s refusals). If the
        memory is erased later, the lesson keeps its embedding but loses the text and the reason (the
        reviewer's words about it); the embedding can confirm a guess of the text, so unlearn the
        lesson first if nothing may remain.
        """
        memory_id = check_name("memory_id", memory_id)
        reason = check_text("reason", reason, max_chars=1000)
        if reason.strip() == ERASED:  # what an erasure leaves: a lesson so named would look erased
            raise ValidationError("reason", f"{ERASED!r} is what an erasure leaves: say why")
        said = screen(reason, self.guard if self.guard.enabled else GuardParams())  # kept: screened as text
        # a secret by the default rules plus the store's own patterns, whatever the switches (as names)
        if "secret" in said.findings["kind"].to_list() or secret_names([reason], self.guard):
            raise ValidationError("reason", "holds a secret (a key, a password): say why without it")
        reason = said.text  # PII redacted
        namespace = self._space(namespace, optional=True)
        requester = self._who(requester)
        now = self._now(now)
        with self._lock:
            row = self._reviewable(memory_id, namespace, requester, now, "learn a lesson from")
            self._check_reviewer(row, requester, now, "learn a lesson from")
            if row["status"] != "quarantined":  # what the review holds, or what the reviewer may read
                self._check_read(row, requester, now, "learn a lesson from")
            self._check_writable()  # before reading the vector: a stale file's is another embedder's
            emb = self._embedding_matrix("id = ?", [memory_id])[0]  # DuckDB's: also inside a transaction
            lid, ns, retire = new_id(), row["namespace"], row["status"] in _LIVE
            space = self._log_space(ns)  # as the log names it: a pseudonym if it holds a secret

            def write() -> None:
                """The lesson, its event and (for a live memory) the quarantine, together."""
                nonlocal retire
                if self._pg is not None:  # another process may have erased or re-statused it since
                    now_row = self._run("SELECT status FROM memories WHERE id = ?", [memory_id])
                    if not now_row:  # a lesson must not keep the text of a memory erased meanwhile
                        raise NotFound(f"memory {memory_id!r} was erased meanwhile")
                    retire = now_row[0][0] in _LIVE
                    if retire and row["status"] == "quarantined":  # released meanwhile: out of the review
                        self._check_read(row, requester, now, "learn a lesson from")
                self._run(
                    f"INSERT INTO lessons ({_LESSON_COLUMNS}, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [lid, space, memory_id, row["content"], reason, requester, now, emb.tolist()],
                )
                self._event(now, "lesson", ns, memory_id, requester, lesson=lid, action="learn")
                if retire:
                    at = self._set_status([memory_id], "quarantined", now)[memory_id]  # (or its last change)
                    self._event(at, "quarantine", ns, memory_id, requester, status="quarantined", lesson=lid)

            self._tx(write)
            self._lesson_cache.clear()  # now (later writes of an open transaction) and after it
            self._on_commit(self._lesson_cache.clear)  # the next write reloads the lessons
            if retire:
                self._mirror(lambda: self._index.set_status([memory_id], "quarantined"))
        return lid

    def lessons(self, namespace: str | None = None) -> pl.DataFrame:
        """The lessons (of one namespace, or all), oldest first:
        ``id, namespace, memory_id, content, reason, requester, created_at``. A namespace's lessons are
        those stored under its name and under its log name (a pseudonym when it holds a secret by the
        store's rules: :func:`~memkit.store.names.log_names`), as the lessons' ``namespace`` says."""
        namespace = self._space(namespace, optional=True)
        names = None if namespace is None else log_names(namespace)
        with self._lock:
            return self._sql(
                f"SELECT {_LESSON_COLUMNS} FROM lessons"
                " WHERE (?::VARCHAR[] IS NULL OR namespace IN (SELECT unnest(?::VARCHAR[])))"
                f" ORDER BY {self._lesson_order}",  # one instant's in write order (ids are random)
                [names, names],
            )

    def unlearn(self, lesson_id: str, *, requester: str | None = None, now: datetime | None = None) -> None:
        """Drop a lesson (a wrong call); the memory it came from keeps its status.

        Operator or reviewers only: anyone else gets AccessDenied naming the lesson, never its memory,
        audited as a ``deny`` event (``attempted: unlearn``, the lesson's id) — when it may read the
        lesson's memory; otherwise (another writer's private memory, an erased one) exactly a made-up
        id's NotFound, its ``deny`` (``answered: NotFound``) the operator's only: a lesson id alone
        tells it nothing (:meth:`approve`'s rule).

        A memory the lesson quarantined stays quarantined: :meth:`approve` releases it, so undoing
        a lesson never makes a text live without a reviewer saying so.
        """
        lesson_id = check_name("lesson_id", lesson_id)
        requester = self._who(requester)
        now = self._now(now)
        with self._lock:
            rows = self._sql(f"SELECT {_LESSON_COLUMNS} FROM lessons WHERE id = ?", [lesson_id]).to_dicts()
            unknown = NotFound(f"no lesson with id {lesson_id!r}")
            if not rows:
                raise unknown
            les = rows[0]
            if not self._reviews(requester):  # audited under the lesson's namespace, by the lesson's
                # id only: its memory is not named (the learn event links the two for the operator)
                if not self._may_read(les["memory_id"], requester):  # as a made-up id (gate._unseen)
                    self._log("deny", now, les["namespace"], requester, attempted="unlearn", lesson=lesson_id,
                              answered="NotFound")  # fmt: skip
                    raise unknown
                self._log("deny", now, les["namespace"], requester, attempted="unlearn", lesson=lesson_id)
                raise AccessDenied(
                    f"{requester!r} may not unlearn lesson {lesson_id!r}: only the operator or a"
                    " reviewer (GuardParams.reviewers) may"
                )

            def write() -> None:
                """Drop the lesson and log it (the event keeps the lesson's id, not its text)."""
                self._run("DELETE FROM lessons WHERE id = ?", [lesson_id])
                self._event(now, "lesson", les["namespace"], les["memory_id"], requester, lesson=lesson_id,
                            action="unlearn")  # fmt: skip

            self._tx(write)
            self._lesson_cache.clear()  # now (later writes of an open transaction) and after it
            self._on_commit(self._lesson_cache.clear)  # (its namespace may be a pseudonym) reload next time
