"""Carry a store over whole: its tables copied into another store, DuckDB or PostgreSQL, either way.

:meth:`CopyMixin.copy_to` (and ``memkit copy SRC DST``) is the operator's move from a prototype to
production: every memory in every status with its version chain, the audit log with its sequence
numbers, the lessons and the embedding cache are copied as they are, through Arrow, in one
transaction of the target. Nothing passes the write pipeline again (an ``import`` would: new ids are
not made, the guard does not re-screen, no ``import`` events are added), so the target answers the
same searches with the same scores. The tuned parameters travel as their own file
(:func:`memkit.save_settings`): both stores open with ``settings=``.

The target must be empty (a new file, a new database or schema); a failed copy leaves no new target
(the file or the tables its open made are removed, :mod:`.copy_target`) and an existing one as it
was (one transaction). The target records the embedder that wrote
the source's vectors, which are copied, not recomputed. The source's deferred reads are flushed first.
"""

from __future__ import annotations

import os
from contextlib import suppress
from typing import Any

from ..errors import MemkitError, ValidationError
from .copy_target import before, discard
from .core import StoreCore
from .migrations import log_patterns, log_spaces, patterns_mark

__all__ = ["COPIED", "CopyMixin", "Recorded"]

COPIED = ("memories", "events", "lessons", "embed_cache")
"""The tables a copy carries (``meta`` is the target's own: its schema version and embedder)."""
_ORDER = {"memories": "rowid", "events": "seq", "embed_cache": "content_hash"}  # lessons: _lesson_order
_COLUMNS = (
    "SELECT column_name FROM information_schema.columns WHERE table_name = ?"
    " AND table_schema = current_schema() ORDER BY ordinal_position"
)


class Recorded:
    """The embedder a store's vectors were written with, known by its name and dimension only: a
    copy's target records it, and anything that would embed a text says which model to load."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def embed(self, texts: Any) -> Any:
        """Refused: the model itself is not loaded in this process."""
        raise MemkitError(f"the vectors are {self.name}'s: open the store with that embedder to write")


class CopyMixin(StoreCore):
    """``copy_to``: this store's tables into an empty store (see the module docstring)."""

    def copy_to(self, target: Any) -> dict[str, int]:
        """Copy everything this store holds into ``target`` -> rows copied per table.

        ``target`` is an empty :class:`~memkit.store.MemoryStore` or a path or URL, opened (and
        created) for the embedder that wrote this store's vectors (which need not be loaded: the
        vectors are copied, not recomputed) and closed again. MemkitError if it is not empty;
        nothing is written then, nor on any error during the copy (one transaction).
        """
        # the vectors travel as they are: the target records the embedder that wrote them, which
        # need not be loaded here (`memkit copy` opens every store with the default embedder)
        embedder = self.embedder if self._stale is None else Recorded(*self._stale)
        opened = isinstance(target, (str, os.PathLike))
        if opened and str(target) == ":memory:":  # the copy would vanish as the target closes
            raise ValidationError("target", "is ':memory:': a copy opened by path must go to a file or a URL")
        if not opened and not isinstance(target, type(self)):
            got = type(target).__name__
            raise ValidationError("target", f"must be a MemoryStore, a path or a URL, got {got}")
        if not opened and target._con is None:
            raise ValidationError("target", f"the store {target.path!r} is closed")
        held = before(target) if opened else None  # what a failed copy leaves: what was there
        try:
            try:
                dst = type(self)(target, embedder=embedder) if opened else target
            except ValidationError as e:  # the store's own checks of the path: this call names it target
                if e.field != "path":
                    raise
                raise ValidationError("target", str(e).removeprefix("path: ")) from None
            try:
                if (dst.embedder.name, dst.embedder.dim) != (embedder.name, embedder.dim):
                    raise ValidationError("target", f"uses {dst.embedder.name}, not {embedder.name}")
                if any(dst._run(f"SELECT count(*) FROM {table}")[0][0] for table in COPIED):
                    raise MemkitError(f"{dst.path} is not empty: a copy goes into a new store only")
                with self._lock:
                    self.flush()
                    frames = {table: self._table(table) for table in COPIED}
                counts = dst._receive(frames)
            finally:
                if opened:
                    dst.close()
        except BaseException as e:
            if opened:  # the new file or tables the open made go too (copy_target)
                try:
                    discard(target, held)
                except Exception as gone:  # noqa: BLE001 - the copy's own error is the one to see
                    e.add_note(f"the new target could not be removed: {gone}")
            raise
        return counts

    def _table(self, table: str) -> Any:
        """One table as Arrow, in its write order, by the column names it has here."""
        columns = [r[0] for r in self._run(_COLUMNS, [table])]  # fields (translate drops the server's own)
        names = ", ".join(f'"{c}"' for c in columns)
        order = self._lesson_order if table == "lessons" else _ORDER[table]  # (the target's write order)
        return self._db.sql(f"SELECT {names} FROM {table} ORDER BY {order}").to_arrow_table()

    def _receive(self, frames: dict[str, Any]) -> dict[str, int]:
        """Insert the copied tables in one transaction, carry the event numbering on, reload the index."""

        def write() -> None:
            """Every table, the logged namespaces renamed, then the event sequence (the next event
            continues after the copied ones)."""
            for table, data in frames.items():
                if not data.num_rows:
                    continue
                names = ", ".join(f'"{c}"' for c in data.column_names)
                self._db.register("_copy", data)
                try:
                    self._run(f"INSERT INTO {table} ({names}) SELECT {names} FROM _copy")
                finally:  # an aborted transaction refuses this: the real error propagates
                    with suppress(Exception):
                        self._db.unregister("_copy")
            # a source an older memkit wrote, never opened writable since, logged secret namespaces
            # by their raw names, and one without this store's extra secret patterns logged their
            # matches raw: the copy keeps them as this store's log does (and marks both done)
            log_spaces(self._run, self._secret)
            log_patterns(self._run, self._secret, patterns_mark(self.guard.extra_secret_patterns))
            last = self._run("SELECT coalesce(max(seq), 0) FROM events")[0][0]
            if last:
                self._run("SELECT setval('event_seq', ?)", [last])

        with self._lock:
            self._tx(write)
            self._load_index()
        return {table: data.num_rows for table, data in frames.items()}
