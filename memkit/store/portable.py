"""The portable format on the store: ``export`` through the read gate, ``import_`` through the write
pipeline (:mod:`memkit.portable.jsonl` reads and writes the files, :mod:`memkit.portable.plan` decides
what each line of an import does; this module moves rows in and out).

An import is a write like any other: the whole file is validated first (FormatError naming the line
and field), then every row is screened by the guard (a secret refuses the file, an injection is
quarantined, PII redacted — in text, values, keys, tags and owners), keyed rows meet their stored
versions under the conflict policy (never two active versions of one key), and rows, the file's
events and one ``import`` event per row commit in one transaction.

An export is a read like any other: the read gate decides which rows a requester gets, and the file
carries every column of the table as it is now: ids, versions, lineage, timestamps to the
microsecond and, on request, the embeddings and each memory's events, all an import needs.
"""

from __future__ import annotations

import json
import random
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import ConflictError, ValidationError, check_output, check_path
from ..guard import identity, is_rule_message
from ..outfile import STDOUT
from ..portable import cogx, jsonl
from ..portable.columns import Column
from ..portable.plan import approved, check_map_holds, check_namespace_map, plan_import, seen_from, unvouched
from ..portable.rows import new_id
from ..portable.strictjson import fail
from ..schema import check_choice
from .audit import digest, scrub
from .carried import CarriedMixin
from .files import is_database
from .gate import Gate
from .leave import LeaveMixin
from .retry import RetryMixin

__all__ = ["PortableMixin"]

_PLANS = 5  # how often an import on a server plans again when another one stored the same ids first


def _scrub_findings(findings: str | None) -> str | None:
    """An imported row's findings JSON with every message that is not one of the guard's own (a
    custom detector's, or a hand-made one that could carry text) kept as its digest."""
    if findings is None:
        return None
    found = json.loads(findings)  # already checked finding by finding when the file was read
    for f in found:
        if not is_rule_message(f.get("message", "")):
            f["message"] = digest(f["message"]) if f.get("message") else ""
    return json.dumps(found, ensure_ascii=False)


class PortableMixin(LeaveMixin, RetryMixin, CarriedMixin):
    """``export`` and ``import_``."""

    def _memory_columns(self) -> list[Column]:
        """The ``memories`` table's columns as it is now (later migrations included), no embedding.

        Read from ``information_schema`` rather than a list in the code, so a column a migration adds
        is exported and imported without a change anywhere in :mod:`memkit.portable`.
        """
        rows = self._run(
            "SELECT column_name, data_type, is_nullable = 'YES' FROM information_schema.columns"
            " WHERE table_name = 'memories' AND table_schema = current_schema()"
            " AND column_name <> 'embedding' ORDER BY ordinal_position"
        )
        return [Column(*r) for r in rows]

    def export(
        self,
        path: str | Path,
        namespace: str | None = None,
        *,
        include_embeddings: bool = False,
        include_events: bool = False,
        now: datetime | None = None,
        requester: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]:
        """Write the memories of ``namespace`` (or all) to a portable JSONL file -> its header.

        Every column of the ``memories`` table is carried (see :mod:`memkit.portable`), plus the
        embeddings and each memory's audit events on request. The operator exports everything, the
        guard's lessons of ``namespace`` too (:mod:`memkit.store.carried`); a ``requester`` (with its
        namespace) exports only what it may read, without quarantined memories nor lessons. Logs one
        ``export`` event. The file is written whole or not at all (a temporary file renamed into
        place; a link's target, the link kept), never over a database file, nor over a read-only
        one unless ``force``; ``"-"`` is standard output (:mod:`memkit.outfile`).
        """
        namespace = self._space(namespace, optional=True)
        requester, now = self._who(requester), self._now(now)
        for name, flag in (("include_embeddings", include_embeddings), ("include_events", include_events),
                           ("force", force)):  # fmt: skip
            if not isinstance(flag, bool):
                raise ValidationError(name, "must be a bool")
        # not a folder, a device, a pipe, nor a database: export("memories.db") must not overwrite a store
        if path != STDOUT:  # "-": standard output (memkit.outfile)
            check_output("path", path, is_database=is_database)
        statuses = None if requester is None else ("active", "superseded", "conflict")  # not quarantined
        gate, params = self._gate(namespace, requester, statuses=statuses).where()
        where = (
            f"{gate} ORDER BY rowid"  # table order (as the index holds it): ties rank the same after import
        )
        embedder = self._stale or (self.embedder.name, self.embedder.dim)  # who made the vectors
        with self._lock:
            columns = self._memory_columns()
            names = ", ".join(f'"{c.name}"' for c in columns)  # quoted names read from the table itself
            frame = self._lineage(self._sql(f"SELECT {names} FROM memories WHERE {where}", params), requester)
            emb = self._embedding_matrix(where, params) if include_embeddings else None
            events = None
            if include_events:
                events = self._sql(
                    "SELECT memory_id, ts, op, requester, CAST(detail AS VARCHAR) AS detail FROM events"
                    f" WHERE memory_id IN (SELECT id FROM memories WHERE {gate}) ORDER BY seq",
                    params,
                )
                events = self._event_lineage(events, requester)
            lessons, vectors = (None, None) if requester is not None else self._export_lessons(
                namespace, frame["namespace"].unique().to_list(), include_embeddings)  # fmt: skip
            try:
                header = jsonl.write(path, frame, columns, embedder=embedder, now=now, namespace=namespace,
                                     embeddings=emb, events=events, lessons=lessons,
                                     lesson_embeddings=vectors, force=force)  # fmt: skip
            except OSError as e:  # (a disk that fails; never the temporary file's name)
                raise ValidationError("path", f"cannot write {str(path)!r}: {e.strerror or e}") from None
            where_to = scrub(str(path), self.guard)  # a path may name a person: kept only if it does not
            self._log("export", now, namespace, requester, path=where_to, embeddings=include_embeddings,
                      **header["counts"])  # fmt: skip
        return header

    def export_cogx(
        self,
        directory: str | Path,
        namespace: str | None = None,
        *,
        now: datetime | None = None,
        requester: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]:
        """Write the memories of ``namespace`` (or all) as a COGX archive (cognee's format, a folder:
        :func:`memkit.cogx.write_cogx`) -> its manifest. The same read as :meth:`export`: the operator
        gets everything, a ``requester`` only what it may read, without quarantined memories; one
        ``export`` event (``format: "cogx"``) is logged; ``force``: as :meth:`export`'s."""
        namespace = self._space(namespace, optional=True)
        requester, now = self._who(requester), self._now(now)
        if not isinstance(force, bool):
            raise ValidationError("force", "must be a bool")
        d = check_path("directory", directory)
        if d.exists() and not d.is_dir():  # a database file, or any file: COGX is a folder
            raise ValidationError("directory", f"{str(directory)!r} exists and is not a folder: not replaced")
        with self._lock:
            frame = self.frame(namespace, requester=requester)
            if requester is not None:  # as export(): a requester's file holds no quarantined memory
                frame = frame.filter(pl.col("status") != "quarantined")
            try:
                manifest = cogx.write_cogx(frame, d, embedder=self.embedder.name, now=now, force=force)
            except OSError as e:
                raise ValidationError("directory", f"cannot write {str(directory)!r}: {e}") from None
            where_to = scrub(str(directory), self.guard)  # as export's path
            self._log("export", now, namespace, requester, path=where_to, format="cogx",
                      memories=frame.height)  # fmt: skip
        return manifest

    def import_(
        self,
        path: str | Path,
        *,
        on_conflict: str = "skip",
        namespace_map: dict[str, str] | None = None,
        requester: str | None = None,
        reembed: bool = False,
        now: datetime | None = None,
        conflict_policy: str | None = None,
    ) -> pl.DataFrame:
        """Load a portable JSONL file, all or nothing -> one row per line: ``line, source_id, id,
        namespace, action`` (``added``, ``skipped``, ``overwritten`` or ``erased``).

        ``on_conflict`` says what an id already in the store does: ``skip`` (default), ``overwrite``,
        ``new_ids`` (fresh ids for every line, lineage inside the file kept) or ``error``.
        ``namespace_map`` renames namespaces (``{"old": "new"}``). Erasure is final: a line whose id
        this store erased (``delete``, ``forget``), or a merge of one as it was before, is left out
        (``erased``) whatever ``on_conflict`` says; to keep such a text again, ``add`` it anew. An
        overwritten row the store has since superseded (by a newer version, by a merge) stays
        superseded, unless the overwrite moves it out of its merge's group (another access, owner or
        creator): it leaves the merge, which is re-derived from the members that remain
        (:mod:`memkit.store.leave`; a merge moved away from its members is refused). The rows go
        through the write pipeline (module docstring): the guard screens them, and a keyed live
        version that meets another of its key (stored, or earlier in the file) is decided by
        ``conflict_policy`` (default: the store's). A requester may import only rows it created
        (``created_by`` its name or null), and its import does not replay the file's events (only
        the operator's does). Embeddings are reused only when the file's embedder is this store's
        and ``reembed`` is False, and only for rows the guard left unchanged.
        """
        on_conflict = check_choice("on_conflict", on_conflict, jsonl.ON_CONFLICT)
        nsmap = check_namespace_map(namespace_map, self.guard)
        requester, now = self._who(requester), self._now(now)
        # the conflict policy for keyed rows that meet stored versions, as add() takes it
        policy = check_choice(
            "conflict_policy",
            self.conflict_policy if conflict_policy is None else conflict_policy,
            ("flag", "supersede", "strict"),
        )
        if not isinstance(reembed, bool):
            raise ValidationError("reembed", "must be a bool")
        check_path("path", path)
        self._check_writable()
        for attempt in range(_PLANS):
            try:
                return self._import_file(path, on_conflict, nsmap, requester, now, policy, reembed)
            except Exception as e:  # on a server, another process may import the same ids meanwhile:
                if self._pg is None or not self._pg.is_duplicate(e):  # plan again (their ids are now
                    raise  # stored ones), a few times, then say so in memkit's words
                if attempt == _PLANS - 1:
                    raise ConflictError(
                        "another process kept importing the same ids meanwhile: nothing of this file was"
                        " written; run the import again"
                    ) from None
                self._count_retry()  # store.retries: the import runs again (memkit.store.retry)
                time.sleep(0.01 * 2**attempt * (0.5 + random.random()))  # writers in lockstep spread out
        raise AssertionError("unreachable")

    def _import_file(
        self, path: str | Path, on_conflict: str, nsmap: Any, requester: str | None, now: datetime,
        policy: str, reembed: bool,
    ) -> pl.DataFrame:  # fmt: skip
        """:meth:`import_` once its arguments are checked: read, plan, write (one transaction)."""
        with self._lock:
            columns = self._memory_columns()
            # the whole file, validated (ids, codes, requesters by the store's own secret rules too)
            data = jsonl.read(path, columns, self.guard)  # nothing is written yet
            # what the file holds, and the namespace it is an export of (its memories may all be gone)
            held = [*data.columns["namespace"], *(x["namespace"] for x in data.lessons)]
            check_map_holds(nsmap, [*held, *filter(None, [data.header.get("namespace")])])
            stored = self._run(
                "SELECT id, namespace FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[]))",
                [data.columns["id"]],
            )
            existing: dict[str, str] = dict(stored)  # the file's ids already stored -> their namespace
            named = [*{*data.columns["id"], *(m for ms in data.columns["merged_from"] for m in ms),
                       *(x["memory_id"] for x in data.lessons)}]  # fmt: skip
            # tombstones: erasure is final, a backup does not bring text back: what the store erased,
            # and the merges it re-derived then (an older version of one still holds the erased text)
            erased, rederived = (self._run(_TOMBSTONES.format(ops=ops), [named]) for ops in (
                "op IN ('delete', 'forget')", "op = 'merge' AND detail->>'rederived' = 'true'"))  # fmt: skip
            # a requester's import sees its lines' namespaces only (memkit.portable.plan.seen_from)
            lines_ns = [nsmap.get(ns, ns) for ns in data.columns["namespace"]]
            if (
                requester is not None
            ):  # lineage it cannot vouch for is dropped (memkit.portable.plan.unvouched)
                gate, params = Gate(None, requester).where()  # (of those ids, which it may read and where)
                unvouched(data.columns, lines_ns, lambda ids: dict(self._run(_READABLE.format(gate=gate),
                                                                             [*params, ids])))  # fmt: skip
            erased, rederived, foreign = seen_from(
                data.columns["id"], lines_ns, existing, erased, rederived,
                None if requester is None else self._log_space,
            )  # fmt: skip
            data, report = plan_import(
                data, set(existing), on_conflict, nsmap, new_id, erased, rederived, foreign
            )
            remap = dict(zip(report["source_id"], report["id"], strict=True))  # new_ids: lessons follow
            kept, learned = self._taught(
                data, nsmap, on_conflict, requester, remap, erased, rederived, reembed
            )
            report = pl.concat([report, learned])  # the lessons' lines after the memories'
            cols, lines = data.columns, data.lines
            if not lines:  # every memory line skipped: only lessons (if any) to write
                if kept:
                    self._tx(lambda: self._write_lessons(kept, now, requester))
                return report
            replaced = [x for x in cols["id"] if x in existing] if on_conflict == "overwrite" else []
            for x, ns, line in zip(cols["id"], cols["namespace"], lines, strict=True) if replaced else ():
                if x in existing and existing[x] != ns:  # overwriting it would move it out of its namespace
                    raise fail(line, "id", f"{x!r} is a memory of another namespace: overwrite replaces one"
                               " in its own namespace only (on_conflict='new_ids' copies it)")  # fmt: skip
            # the overwritten rows as they are: all a requester's (its rights), else those of lineage
            before = self._stored_rows(replaced, every=requester is not None)  # (memkit.store.leave)
            for x in replaced if requester is not None else ():  # overwriting is changing: owner or
                self._check_modify(before[x], requester, now, "overwrite")  # creator only (first named)
            if requester is not None:  # authorship cannot be forged by an import either (null: the requester)
                cols["created_by"] = [requester if c is None else c for c in cols["created_by"]]
                for creator, line in zip(cols["created_by"], lines, strict=True):
                    if creator is not None and identity(creator) != requester:
                        raise fail(
                            line,
                            "created_by",
                            f"is {creator!r}: a requester imports only rows it created"
                            " (the operator's import, requester=None, keeps the file's authorship)",
                        )
            # a row the store has since superseded (by a newer version, by a merge) keeps its place in
            # the key's history, unless the overwrite moves it out of its merge's group: it leaves it
            self._keep_superseded(cols, before)
            emb = self._carried_vectors(data, reembed)  # None: the pipeline embeds the texts
            # the guard's findings a file brings keep their codes; their messages go through the
            # log's rule (a hand-made message could carry text)
            cols["findings"] = [_scrub_findings(f) for f in cols["findings"]]
            left: dict[str, list[Any]] = {}  # what the overwrite's leaves re-derived and erased
            at_line = dict(zip(cols["id"], lines, strict=True))  # id -> its line (a refused leave names it)
            act = report.filter(pl.col("action").is_in(("added", "overwritten")))  # aligned with `cols`
            details = [
                {"action": a, "source_id": s} for a, s in zip(act["action"], act["source_id"], strict=True)
            ]

            def file_events() -> None:  # the file's history (an operator's import), before its own events
                """Replay the file's events (``_history`` scrubs them): the operator's import only,
                since a requester's file could otherwise write someone else's history."""
                # an overwritten memory keeps the store's own history (the file's, appended after it,
                # would outrank later events: frame(as_of=) replays the log in order); a held row's
                # key is the guard's business, not the log's
                own = set(replaced)
                events = [e for e in data.events if cols["id"][e[0]] not in own]
                if requester is None:
                    self._history([(ts, cols["namespace"][r], op, cols["id"][r], who, detail)
                                   for r, ts, op, who, detail in events],
                                  keys=[None if cols["status"][r] == "quarantined" else cols["key"][r]
                                        for r, *_ in events])  # fmt: skip

            def also() -> None:  # after the rows, in their transaction
                """A member moved out of its merge's group leaves it (memkit.store.leave); the lessons."""
                if replaced:
                    self._leave(before, at_line, requester, now, left)
                self._write_lessons(kept, now, requester)

            self._write(
                cols, requester=requester, now=now, policy=policy, op="import", emb=emb, details=details,
                before=file_events, replaced=replaced, keep_consistent=True, columns=columns,
                where=lambda i: f"line {lines[i]}",
                # a reviewer's approval in the file's history stands in the operator's import
                released=approved(data.events) if requester is None else (),
                also=also if replaced or kept else None,
            )  # fmt: skip
            self._mirror_left(left)
        if left.get("erased"):  # a merge whose members all left: the overwrite of its line erased it
            gone = pl.col("id").is_in(left["erased"])
            report = report.with_columns(action=pl.when(gone).then(pl.lit("erased")).otherwise("action"))
        return report


_TOMBSTONES = (  # when the store last did `ops` to each of the ids, by the namespace the log names
    "SELECT memory_id, namespace, max(ts) FROM events WHERE {ops}"
    " AND memory_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY memory_id, namespace"
)

_READABLE = "SELECT id, namespace FROM memories WHERE ({gate}) AND id IN (SELECT unnest(?::VARCHAR[]))"
