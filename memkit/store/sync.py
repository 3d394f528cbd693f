"""A server's search index follows the other processes' writes (PostgreSQL only).

Each process holds its own numpy :class:`~memkit.store.index.SearchIndex`. On a DuckDB file nothing
else writes, so the index changes only with the store's own commits. On a PostgreSQL server other
processes write too: before a search, :meth:`SyncMixin._synced` reads the change log that triggers
keep (:mod:`memkit.store.pg_schema`) from the last bound on, and applies each changed memory:

- a memory now gone (erased elsewhere) is erased from the index; and once any is gone, held by the
  index or not (a re-derived merge comes with an erasure too), what an erasure drops from the
  erasing process's memory goes from this one's too (:meth:`SyncMixin._drop_erased_caches`, as
  :meth:`~memkit.store.maintain.MaintainMixin._erase` does there): the store's cached query vectors
  (a query it embedded may be the erased text), the process's word caches
  (:func:`memkit.embed.clear_word_caches`) and the lesson cache; they refill with the next texts;
- a memory whose text, key, tags, names and place in the table order (``rowid``) are unchanged (a
  status change, a reinforcement) is updated in place
  (:meth:`~memkit.store.index_columns.IndexColumns.update`);
- any other (new, or rewritten: a re-derived merge, an overwriting import, even with the same text)
  is erased and appended again, at the end of the index as at the end of the table, as on DuckDB.

The index's rows are in table order (loaded ``ORDER BY rowid``, then appended as written), which
decides neighbour expansion and near ties among memories written at the same instant. So the store
keeps each index row's ``rowid`` beside the index (:attr:`SyncMixin._rowids`): a row written again
has a new one, and is moved.

The bound is the previous look's snapshot: the changes of transactions it did not see are read, so
a transaction that commits late is still seen, and one left open elsewhere costs nothing until it
commits; a change seen twice is applied twice, with the same result. The cost is
one query per search, plus the rows that changed. The store's own commits reach its index the same
way (:meth:`SyncMixin._mirror`). Inside a transaction the index is left as it was
(searches there see the index as of the transaction's start, as on DuckDB).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from ..embed import clear_word_caches
from ..errors import MemkitError
from .asof import AsOfMixin
from .index import SearchIndex
from .pg_schema import EMBEDDER, SNAPSHOT, STATE
from .vectors import INDEX_COLUMNS, VectorsMixin, erasures_of, index_rows

__all__ = ["SyncMixin"]

_ROWIDS = "SELECT id, rowid FROM memories"  # each memory's place in the table order
_CHANGED = (
    f"SELECT c.id AS changed_id, m.* FROM memkit_changes c LEFT JOIN (SELECT {INDEX_COLUMNS}, rowid"
    " FROM memories) m"
    " ON m.id = c.id WHERE c.xid >= pg_snapshot_xmin(CAST(? AS pg_snapshot))"
    " AND NOT pg_visible_in_snapshot(c.xid, CAST(? AS pg_snapshot)) ORDER BY m.rowid"
)
_SAME = ("content", "key", "namespace", "owner", "created_by")  # with tags: what an in-place update keeps
_RELOAD_AT = 10_000  # dead index rows below which a rebuild is not worth it
_CODED = {"namespace": "ns", "owner": "owner", "created_by": "creator"}  # the index's coded name columns


class SyncMixin(AsOfMixin, VectorsMixin):
    """The index kept in step with a shared server (see the module docstring)."""

    _rowids: np.ndarray  # on a server: the rowid each index row was read with, (>= n,) int64; -1 unknown

    def _load_index(self) -> None:
        """(Re)build the search index, and on a server note each row's ``rowid``. Read first, with
        the look's bound set back to before that read: whatever commits in between (a row written
        again after its rowid was read) is applied again by the next :meth:`_synced`."""
        if self._pg is None:
            super()._load_index()
            self._rowids = np.zeros(0, np.int64)
            return
        seen = self._run(SNAPSHOT)[0][0]
        places = pl.DataFrame(self._db.sql(_ROWIDS).to_arrow_table())  # (id, rowid) of every memory
        super()._load_index()
        ix = self._index  # its ids, in table order -> their rowids as read (-1: written since)
        ids = pl.DataFrame({"id": pl.Series(ix.ids[: ix.n], dtype=pl.String)})
        found = ids.join(places, on="id", how="left", maintain_order="left")["rowid"]
        self._rowids = found.fill_null(-1).to_numpy().astype(np.int64)  # (n,)
        self._seen_xid = seen

    def _synced(self) -> SearchIndex:
        """The search index, with every change other processes committed applied (a no-op on DuckDB).
        MemkitError if another process has re-embedded the store since it was opened."""
        if self._pg is None or self._depth or self._stale is not None:
            return self._index
        # first: what commits after this snapshot is seen next time; and the recorded embedder
        seen, name, dim = self._run(STATE)[0]
        self._check_embedder({} if name is None else {"embedder": name, "dim": dim})
        table = self._db.sql(_CHANGED, [self._seen_xid, self._seen_xid]).to_arrow_table()
        if table.num_rows:
            self._apply_changes(table)
            self._marks_follow(table.column("changed_id").to_pylist())  # their status events (asof.py)
        self._seen_xid = seen
        dead = self._index.n - len(self._index.row)  # rows of rewritten or erased memories
        if dead > max(_RELOAD_AT, len(self._index.row)):  # more dead rows than live ones: rebuild
            self._load_index()  # (a worker that merges or re-imports often would grow without end)
        return self._index

    @property
    def revision(self) -> int:
        """A number that grows with every committed change of the memories: a write, a status change
        (supersede, resolve, approve), a merge, an erasure (``delete``, ``forget``), a reload of the
        index; on a server, other processes' changes too (read first, as a search reads them; there,
        reinforcement counts as well). Reads and searches leave it as it is.

        Its value means nothing in itself: compare it with one read earlier. What caches a view of
        the store (the panels of :mod:`memkit.widgets`) re-reads the store when it differs.

        >>> import memkit as mk
        >>> store = mk.MemoryStore()
        >>> before = store.revision
        >>> _ = store.add("用户住在杭州", namespace="u")
        >>> _ = store.search("杭州", namespace="u")   # a read: no change
        >>> store.revision > before, store.revision == store.revision
        (True, True)
        >>> store.close()
        """
        with self._lock:
            ix = self._synced() if self._con is not None else self._index  # (closed: the last one)
            return self._revision_base + ix.version

    @property
    def erasures(self) -> int:
        """A number that grows with every committed erasure (``delete``, ``forget``, a merge re-derived
        or emptied by one, an overwriting import), and with a reload of the index; on a server,
        other processes' erasures too (read first, as :attr:`revision` reads them). Writes, status
        changes, merges and reads leave it as it is (a rare false alarm is possible: a memory moved in
        time counts). Compare it with one read earlier: what holds memory ids (an agent's recent
        turns: :mod:`memkit.agent.recent`) asks which still exist only when it moved.

        >>> import memkit as mk
        >>> store = mk.MemoryStore()
        >>> m = store.add("用户住在杭州", namespace="u")
        >>> before = store.erasures
        >>> _ = store.add("用户喜欢拿铁", namespace="u")
        >>> store.erasures == before
        True
        >>> store.delete(m.id, namespace="u")
        >>> store.erasures > before
        True
        >>> store.close()
        """
        with self._lock:
            ix = self._synced() if self._con is not None else self._index
            return self._erasures_base + erasures_of(ix)

    def _check_embedder(self, meta: dict[str, str] | None = None) -> None:
        """On a server: the vectors are still this embedder's (another process may have run
        ``reembed``). If not, the store turns stale, as a file of another embedder opens, and
        MemkitError says what to do; nothing is written with the old model's vectors. ``meta``:
        the recorded ``embedder`` and ``dim`` when the caller has read them already."""
        meta = dict(self._run(EMBEDDER)) if meta is None else meta
        recorded = (meta.get("embedder"), int(meta.get("dim", 0)))
        if "embedder" in meta and recorded != (self.embedder.name, self.embedder.dim):
            self._stale = (meta["embedder"], int(meta["dim"]))
            self._load_index()  # a stale store's index is empty: it is not searchable
            raise MemkitError(
                f"{self.path} was re-embedded with {meta['embedder']} (dim {meta['dim']}) by another"
                f" process: reopen it with that embedder (this store has {self.embedder.name})"
            )

    def _mirror(self, fn: Any) -> None:
        """On a server, a commit's changes reach the index through the change log like everyone
        else's: the store's own row may supersede one another process wrote, which this index
        has not seen yet, so replaying ``fn`` alone could miss it. On DuckDB, ``fn`` as before."""
        if self._pg is None:
            super()._mirror(fn)
        elif self._sync_after_commit not in self._after:  # once per transaction
            self._on_commit(self._sync_after_commit)

    def _sync_after_commit(self) -> None:
        """:meth:`_synced`, run once the transaction has committed."""
        self._synced()

    def _apply_changes(self, table: object) -> None:
        """Apply the change log's rows (``changed_id`` plus :data:`INDEX_COLUMNS`, NULL when gone)."""
        ix = self._index
        changed = pl.from_arrow(table.select(["changed_id", "id"]))  # type: ignore[attr-defined]
        gone = ix.row.held(changed.filter(pl.col("id").is_null())["changed_id"].to_list())
        live = table.filter(pl.Series(changed["id"].is_not_null()).to_arrow())  # type: ignore[attr-defined]
        if gone:
            ix.erase(gone)
        if changed["id"].null_count():  # erased elsewhere (or here), whether this index held it or not
            self._drop_erased_caches()
        if not live.num_rows:
            return
        cols, emb = index_rows(live, self.embedder.dim)
        ids = cols["id"]
        known = ix.row.find(ids) >= 0
        same = known.copy()
        if known.any():  # in place only when text, key, tags and names are what the index holds
            at = np.flatnonzero(known)
            rows = ix.rows([ids[j] for j in at])
            for c in _SAME:
                new = [cols[c][j] for j in at]
                if c in _CODED:  # names are held as integer codes
                    same[at] &= getattr(ix, _CODED[c])[rows] == np.array([ix.names.lookup(v) for v in new])
                else:
                    same[at] &= ix_column(ix, c)[rows] == np.array(new, dtype=object)
            tags = [tuple(ix.tags[r]) == tuple(cols["tags"][j] or ()) for r, j in zip(rows, at, strict=True)]
            same[at] &= np.array(tags, dtype=bool)
            # written again (a re-derived merge, an overwrite), even with the same text: it moved
            same[at] &= self._rowids[rows] == cols["rowid"][at]
        pick = {c: _take(v, np.flatnonzero(same)) for c, v in cols.items()}
        if same.any():
            ix.update(ix.rows(pick["id"]), pick)
        renew = np.flatnonzero(~same)
        if renew.size:
            stale = [ids[j] for j in renew if known[j]]
            if stale:
                ix.erase(stale)
            start = ix.n
            ix.append({c: _take(v, renew) for c, v in cols.items()}, emb[renew])
            self._note_rowids(start, cols["rowid"][renew])

    def _drop_erased_caches(self) -> None:
        """Another process erased a text: drop what the erasing process drops from its memory (the
        cached query vectors, the word caches, the lesson cache), as that process's own erasure
        (:meth:`~memkit.store.maintain.MaintainMixin._erase`) did there. Outside any transaction."""
        self._embed_query.cache_clear()  # a cached query may be the erased text ("forget <it>")
        clear_word_caches()  # process-wide: they may hold the erased text's words
        self._lesson_cache.clear()

    def _note_rowids(self, start: int, rowids: np.ndarray) -> None:
        """The rowids of the index rows appended from ``start`` on; the array grows by doubling, as
        the index's columns do (an append costs what it appends)."""
        end = start + len(rowids)
        if end > len(self._rowids):
            grown = np.full(max(2 * len(self._rowids), end), -1, np.int64)
            grown[:start] = self._rowids[:start]
            self._rowids = grown
        self._rowids[start:end] = rowids


def ix_column(ix: SearchIndex, name: str) -> np.ndarray:
    """An object column of the index (``content``, ``key``) by its memory field name."""
    return getattr(ix, name)


def _take(values: object, at: np.ndarray) -> object:
    """Rows ``at`` of a column as :func:`index_rows` gives it (a Python list or a numpy array)."""
    if isinstance(values, np.ndarray):
        return values[at]
    return [values[j] for j in at]  # type: ignore[index]
