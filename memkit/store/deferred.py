"""Deferred reads: a search's audit event and reinforcement, written in batches, never lost.

Every search writes two things: an audit event (``search``, the query's digest, the hit ids) and the
reinforcement of its hits (last access, access count, importance). Written at once, that is a DuckDB
transaction per search, several milliseconds, more than the ranking itself. So outside an explicit
:meth:`~memkit.store.MemoryStore.transaction`, reads (``search`` and the audited reads ``get``,
``read``, ``export`` and refusals) *defer* their writes:

1. the search index is reinforced at once, so the next search in this process sees it;
2. the entry is appended, as one JSON line, to a journal beside the file (``<file>.reads``): a write
   into the operating system's page cache, which survives the process being killed;
3. entries are written to DuckDB in one transaction — events with their original timestamps,
   reinforcement summed per memory — when :data:`FLUSH_AT` are waiting, before *any* other statement
   runs on the connection (so a write, ``frame``, ``audit`` or ``export`` always sees every read
   before it, in order), on :meth:`flush`, and on ``close``.

After a crash, opening the file replays the journal before the index loads. Each entry carries a
number, and the flush records the last number it wrote in ``meta`` *in the same transaction*, so an
entry is applied exactly once even if the process died between that commit and the journal's
truncation. A half-written last line (the process died inside ``write``) was never acknowledged to
the caller — the call returns after the write — and is skipped.

A store in memory has no journal (a crash loses the whole store anyway); a read-only store writes
nothing, as before. A PostgreSQL store has no journal either: it writes each read at once, in its own
transaction, so nothing waits in one process that the others (or a crash) would miss.
"""

from __future__ import annotations

import json
import os
import warnings
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import ConnectionLost
from .audit import AuditMixin
from .vectors import REINFORCE, VectorsMixin, epoch_us

__all__ = ["FLUSH_AT", "DeferredMixin"]

FLUSH_AT = 256
"""Deferred entries that trigger a flush: one transaction per 256 searches instead of 256."""
_JSON = json.JSONEncoder(ensure_ascii=False, default=str)  # json.dumps's, built once (a search's fixed cost)
_IMPORTANCES = "SELECT id, importance FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[]))"


class DeferredMixin(AuditMixin, VectorsMixin):
    """Reads' events and reinforcement, journaled and flushed in batches (see the module docstring)."""

    _denied: list[tuple[Any, ...]]  # refusals audited in the open transaction (kept past a rollback)

    _journal: int | None  # file descriptor of <file>.reads, opened for appending (None: in memory)
    _journal_seq: int  # number of the last entry journaled (or flushed)

    def _journal_path(self) -> Path | None:
        """The journal beside a file store (None in memory)."""
        return None if self._file is None else Path(self._file + ".reads")

    def _defer(
        self,
        ts: datetime,
        op: str,
        namespace: str | None,
        memory_id: str | None,
        requester: str | None,
        detail: dict[str, Any],
        touch: list[str] | None = None,
        at: tuple[Any, Any] | None = None,
    ) -> None:
        """Record a read's event (and the reinforcement of ``touch``): journaled now, written to
        DuckDB at the next flush. Inside an open transaction it is written at once instead, so the
        transaction's commit or rollback decides, as for any write."""
        step = self.decay.reinforce_step

        def reinforce_index() -> None:
            """The index's copy of the reinforcement: the next search sees it."""
            if not touch:  # (a search without reinforcement: no lookup)
                return
            # the held ids' rows, in order (an erased id has none); `at`: (index, the rows of touch in it),
            # which a search found them at, under the lock held since: the same rows, without a lookup
            if at is not None and at[0] is self._index:  # (every row a ranking found is there: >= 0)
                self._index.touch(at[1], epoch_us(ts), step)
                return
            rows = self._index.row.find(touch)
            if (rows >= 0).any():
                self._index.touch(rows[rows >= 0], epoch_us(ts), step)

        if self._depth:  # in a transaction: written with it, mirrored into the index at its commit
            at = None  # (mirrored at the commit: the rows are looked up then)
            self._event(ts, op, namespace, memory_id, requester, **detail)
            if op == "deny":  # a refusal outlives the transaction that rolls back what it refused
                self._denied.append((ts, op, namespace, memory_id, requester, detail))
            if touch:
                self._reinforce_rows([(touch, ts, step)])
            self._mirror(reinforce_index)
            return
        self._journal_seq += 1
        entry = {"n": self._journal_seq, "ts": ts.isoformat(), "op": op, "ns": self._log_space(namespace),
                 "id": memory_id, "req": requester, "detail": detail or None, "touch": touch or [],
                 "step": step}  # fmt: skip
        # subtle: journaled first, before the index changes and before the call returns, so a read
        # the caller saw is never lost, and a failed write (a full disk) leaves the index as it was
        if self._journal is not None:
            os.write(self._journal, (_JSON.encode(entry) + "\n").encode())
        self._pending.append(entry)
        reinforce_index()
        if len(self._pending) >= FLUSH_AT or self._pg is not None:  # a server has no journal: at once
            self.flush()

    def _log(
        self, op: str, ts: datetime, namespace: str | None, requester: str | None, **detail: Any
    ) -> None:
        """Audit a read (deferred, see :meth:`_defer`); a read-only or stale store reads unlogged."""
        if self.read_only or self._stale is not None:
            return
        memory_id = detail.pop("memory_id", None)
        with self._lock:
            self._defer(ts, op, namespace, memory_id, requester, detail)

    def _begin(self) -> None:
        """Open the outer transaction (core.py), with no refusal audited in it yet."""
        super()._begin()
        self._denied = []

    def _rollback(self) -> None:
        """Undo the transaction (core.py); then audit again the refusals it held, deferred as any
        read: a write refused inside ``transaction()`` (or a LangGraph batch, an adapter's import)
        that rolls back must still leave its ``deny`` event, as it does outside one."""
        denied, self._denied = self._denied, []
        super()._rollback()
        self._redefer(denied)

    def _redefer(self, denied: list[tuple[Any, ...]]) -> None:
        """Defer ``denied`` again, out of the transaction. A failure to write one now (a server gone,
        a full disk) never replaces the error that ended the transaction: it is a RuntimeWarning
        naming what was not audited (an entry journaled before the failure stays pending)."""
        for entry in denied:
            try:
                self._defer(*entry)
            except Exception as e:  # the transaction's own error is the one to raise
                warnings.warn(f"memkit: a refusal ({entry[1]}) could not be audited after the rollback: "
                              f"{type(e).__name__}: {e}", RuntimeWarning, stacklevel=3)  # fmt: skip

    def _commit_only(self) -> list[Any]:
        """Commit (core.py): the refusals are written with it; if the COMMIT fails (the server refuses
        to serialize, the connection drops), they are audited again as after a rollback."""
        denied, self._denied = self._denied, []
        try:
            return super()._commit_only()
        except BaseException:
            self._redefer(denied)
            raise

    def flush(self) -> int:
        """Write the deferred reads (events and reinforcement) to the database now -> how many.

        Runs by itself every :data:`FLUSH_AT` reads, before any other statement and on ``close``;
        call it to make the file complete for another reader (a second process opening it)."""
        with self._lock:
            # inside a transaction nothing is pending (reads write at once there), and a flush must
            # not join a transaction that may still roll back
            if not self._pending or self._flushing or self._con is None or self._depth:
                return 0
            entries = self._pending
            self._flushing = True
            try:
                self._tx(lambda: self._apply(entries))
            except ConnectionLost as e:
                if e.uncertain:  # a server's COMMIT that may have landed: written again, the reads
                    self._pending = []  # would count twice (a server keeps no journal to tell)
                raise
            finally:
                self._flushing = False
            self._pending = []
            if self._journal is not None:  # everything in it is now in the file (and numbered in meta)
                os.ftruncate(self._journal, 0)
            return len(entries)

    def _flush_pending(self) -> None:
        """The hook :meth:`~memkit.store.core.StoreCore._run` calls before any statement."""
        self.flush()

    def _apply(self, entries: list[dict[str, Any]]) -> None:
        """Write ``entries`` in the open transaction: their events in one statement, the
        reinforcement in one, and the number of the last entry into ``meta``."""
        self._event_rows(
            [(datetime.fromisoformat(e["ts"]), e["ns"], e["op"], e["id"], e["req"],
              json.dumps(e["detail"], ensure_ascii=False, default=str) if e["detail"] else None)
             for e in entries]
        )  # fmt: skip
        touched = [(e["touch"], datetime.fromisoformat(e["ts"]), e["step"]) for e in entries if e["touch"]]
        if len(touched) == 1:  # one read (always, on a server): one UPDATE, no read before it
            ids, ts, step = touched[0]
            self._run(REINFORCE, [ts, step, list(dict.fromkeys(ids))])
        elif touched:
            self._reinforce_rows(touched)
        if self._journal_path() is not None:  # the journal's watermark (a server or memory has no
            self._run(  # journal, and one row every read writes would make all readers conflict)
                "INSERT OR REPLACE INTO meta (name, value) VALUES ('journal_seq', ?)", [str(entries[-1]["n"])]
            )

    def _reinforce_rows(self, touched: list[tuple[list[str], datetime, float]]) -> None:
        """Reinforcement of several reads in one UPDATE: per memory, last access = the latest read
        (never backwards), count + reads, importance + each read's step (at most 1).

        subtle: the importance is computed here, one step at a time, exactly as the index adds them
        (``min(importance + step, 1)`` per read), and written as a value: a sum of the steps added
        at once would differ from the index in the last bit, and ties would order differently
        after a reopen."""
        per: dict[str, list[Any]] = {}  # id -> [latest, reads, [steps]]
        for ids, ts, step in touched:
            for i in ids:
                p = per.setdefault(i, [ts, 0, []])
                p[0], p[1] = max(p[0], ts), p[1] + 1
                p[2].append(step)
        ids = list(per)
        now = dict(
            self._run("SELECT id, importance FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ids])
        )
        ids = [i for i in ids if i in now]  # an id erased since its read has nothing to reinforce
        if not ids:
            return
        importance = []
        for i in ids:
            v = float(now[i])
            for step in per[i][2]:
                v = min(v + step, 1.0)
            importance.append(v)
        self._run(
            "UPDATE memories SET last_access_at = greatest(last_access_at, r.latest),"
            " access_count = CAST(least(CAST(access_count AS BIGINT) + r.reads, 2147483647) AS INTEGER),"
            " importance = r.importance"
            " FROM (SELECT unnest(?::VARCHAR[]) AS id, unnest(?::TIMESTAMPTZ[]) AS latest,"
            " unnest(?::INTEGER[]) AS reads, unnest(?::DOUBLE[]) AS importance) AS r"
            " WHERE memories.id = r.id",
            [ids, [per[i][0] for i in ids], [per[i][1] for i in ids], importance],
        )

    # ------------------------------------------------------------------------------ the journal file
    def _open_journal(self) -> None:
        """After migrations, before the index loads: the last number written, then (a writable file
        store) what a crash left in the journal replayed, and the journal opened for appending. A
        stale file (another embedder's) keeps its journal until :meth:`reembed` makes it writable."""
        self._pending, self._flushing, self._journal, self._journal_seq = [], False, None, 0
        if self._journal_path() is None or self.read_only:
            return
        done = self._run("SELECT value FROM meta WHERE name = 'journal_seq'")
        self._journal_seq = int(done[0][0]) if done else 0
        if self._stale is None:
            self._start_journal()

    def _start_journal(self) -> None:
        """Replay the journal's entries numbered after ``meta.journal_seq`` (what a crash left), then
        open it for appending. Called on open, and by ``reembed`` once a stale file is writable."""
        path = self._journal_path()
        if path is None or self._journal is not None:
            return
        if path.exists():
            left = [e for e in _read_journal(path) if e["n"] > self._journal_seq]
            if left:
                self._flushing = True  # subtle: the replay is the flush; nothing else may trigger one
                try:
                    self._tx(lambda: self._apply(left))
                finally:
                    self._flushing = False
                self._journal_seq = left[-1]["n"]
        self._journal = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)

    def _close_journal(self) -> None:
        """Flush, then close and remove the journal (the file now holds everything). If the flush
        fails the journal is closed but kept, so the next open replays it, and the error propagates."""
        opened = self._journal is not None
        try:
            self.flush()
        finally:
            if self._journal is not None:
                os.close(self._journal)
                self._journal = None
        path = self._journal_path()
        if opened and path is not None:  # reached only when the flush succeeded
            path.unlink(missing_ok=True)


def _read_journal(path: Path) -> list[dict[str, Any]]:
    """The complete entries of a journal, in order (a torn last line is skipped)."""
    out = []
    for line in path.read_bytes().split(b"\n"):
        try:
            out.append(json.loads(line))
        except ValueError:  # the empty tail after the last newline, or a line cut by a crash
            continue
    return out
