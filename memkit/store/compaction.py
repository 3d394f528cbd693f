"""Compacting the database file, so that erased text does not linger in its free blocks.

- **Why.** DuckDB frees a deleted row's blocks but does not overwrite them, so erased text would
  linger in the file. After every erasure (``delete``, ``forget``, a re-derived merge) a file store is
  rewritten (:meth:`~memkit.store.files.FilesMixin.compact`): the tables are copied into a fresh file
  through Arrow, which then replaces the old one atomically (``os.replace``). Forgetting is then final
  for the whole file, at a cost proportional to the file's size (about 2 s for 50k memories here). A
  file that also holds tables or views of your own cannot be compacted without losing them: there an
  erasure is refused (nothing changes) until they move.
- **Due until done.** An erasure records ``meta.compact_due`` in its own transaction, and only a
  compaction's fresh file drops it: a compaction that fails after the erasure committed (a full disk)
  or never runs (the process killed first) is not forgotten. A store opened with ``compact_on_erase``
  (the default) compacts a due file when it opens writable and when it closes. A failure after the
  commit does not make the erasure look failed (it is done): it is a :class:`RuntimeWarning` naming
  the retry, and the file stays due.
- **Deferred.** ``MemoryStore(path, compact_on_erase=False)`` never compacts by itself: the text stays
  in free blocks until you call ``store.compact()`` (after a batch of erasures, say). The file stays
  due meanwhile, so a later store opened on it with the default compacts it at open.
- **Elsewhere.** A read-only or stale store never compacts (a due file waits for a writable open), a
  store in memory has no file, and a server runs VACUUM after each erasure instead (``VACUUM FULL`` on
  ``compact()``): neither records anything.
"""

from __future__ import annotations

import warnings

import duckdb

from ..errors import MemkitError
from .core import StoreCore

__all__ = ["TABLES", "CompactionMixin"]

TABLES = ("meta", "memories", "events", "embed_cache", "lessons")  # everything a compaction copies
_DUE = "INSERT OR REPLACE INTO meta VALUES ('compact_due', '1')"  # an erasure not yet compacted


class CompactionMixin(StoreCore):
    """What erasures, opening and closing ask of compaction (``compact`` itself: files.py)."""

    def compact(self) -> None:
        """Rewrite the file (implemented in :class:`memkit.store.files.FilesMixin`)."""
        raise NotImplementedError

    def _copy_table(self, table: str, fresh: duckdb.DuckDBPyConnection) -> None:
        """Copy ``table`` (a name of :data:`TABLES`) into the fresh file, by column name; a column
        the migrations do not create (one a user added) is added to the copy first."""
        query = (
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ?"
            " ORDER BY ordinal_position"
        )
        have = {r[0] for r in fresh.execute(query, [table]).fetchall()}
        old = self._run(query, [table])
        for column in (f'"{name}" {kind}' for name, kind in old if name not in have):
            fresh.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
        names = ", ".join(f'"{name}"' for name, _ in old)  # quoted: a user's column may be any name
        # subtle: one Arrow table crosses from one connection to the other, without Python rows
        fresh.register("_copy", self._db.sql(f"SELECT {names} FROM {table}").to_arrow_table())
        try:
            fresh.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM _copy")
        finally:
            fresh.unregister("_copy")

    def _foreign_tables(self) -> list[str]:
        """Tables and views in the file that memkit does not own (a user's own)."""
        rows = self._run(
            "SELECT table_schema || '.' || table_name FROM information_schema.tables"
            " WHERE table_catalog = current_database()"
            " AND NOT (table_schema = 'main' AND table_name IN (SELECT unnest(?::VARCHAR[])))",
            [list(TABLES)],
        )
        return [r[0] for r in rows]

    def _refuse_foreign(self) -> None:
        """Compaction keeps only memkit's tables, so a file holding anything else is not compacted
        (and, with ``compact_on_erase``, not erased from): nothing of yours is lost silently."""
        foreign = self._foreign_tables()
        if foreign:
            raise MemkitError(
                f"{self.path} also holds {', '.join(foreign[:3])}: compacting the file (which an erasure"
                " does, so that nothing erased stays in it) would lose them. Move them to another file,"
                " or open the store with compact_on_erase=False and call store.compact() once they are gone"
            )

    def _check_compactable(self) -> None:
        """Called by every erasure before it writes: refused first when the compaction after it
        could not run, so nothing changes."""
        if self.compact_on_erase and self._file:
            self._refuse_foreign()

    def _mark_compaction_due(self) -> None:
        """Called by every erasure inside its transaction: a file records that it is due, with the
        erasure itself (see the module doc); memory and a server have nothing to record."""
        if self._file:
            self._run(_DUE)

    def _compact_after_erase(self) -> None:
        """Called by every erasure once it is written: compact after the commit (once per transaction)."""
        if self._file and self._erasure_committed not in self._after:
            self._on_commit(self._erasure_committed)
        elif self._pg is not None and self._vacuum not in self._after:
            self._on_commit(self._vacuum)

    def _erasure_committed(self) -> None:
        """After an erasure's commit: the file is due; compacted now unless ``compact_on_erase=False``."""
        self._due = True
        if self.compact_on_erase:
            self._compact_or_warn("after the erasure", 7)  # delete's or forget's caller

    def _compact_if_due(self, when: str) -> None:
        """At open (``when="on opening"``: read from ``meta``) and at close: compact a due file, if this store
        compacts by itself (``compact_on_erase``, writable, not stale, no transaction open)."""
        if not (self._file and self.compact_on_erase) or self.read_only or self._stale is not None:
            return
        if when == "on opening":
            self._due = bool(self._run("SELECT 1 FROM meta WHERE name = 'compact_due'"))
        if self._due and not self._depth:  # (the caller of MemoryStore() or of close())
            self._compact_or_warn(when, 5 if when == "on opening" else 4)

    def _compact_or_warn(self, when: str, stacklevel: int) -> None:
        """:meth:`compact`, a failure of which is a RuntimeWarning: the erasure it follows is committed
        (an error would say it failed), and the file stays due, so closing or opening it retries."""
        try:
            self.compact()
        except Exception as e:
            closed = (
                " (the store could not reconnect and is closed: open it again)" if self._con is None else ""
            )
            warnings.warn(
                f"{self.path} was not compacted {when} ({type(e).__name__}: {e}){closed}: what was erased is"
                " gone from every table, but may remain in the file's free blocks until a compaction"
                " succeeds; store.compact() retries it, and so do closing the store and opening it again",
                RuntimeWarning,
                stacklevel=stacklevel,
            )

    def _vacuum(self) -> None:
        """On a server, an erasure is followed by VACUUM (the audit log too: an erasure rewrites its events);
        the server's write-ahead log and backups are the operator's to expire."""
        self._run("VACUUM memories, embed_cache, lessons, events")
