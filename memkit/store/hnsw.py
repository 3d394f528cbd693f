"""pgvector's HNSW as the first pass of a search (``MemoryStore(url, index="hnsw")``, PostgreSQL only).

The exact index holds every embedding in each process (``4 · dim`` bytes a memory); on a server with
many worker processes that is the memory of the store once per worker. :class:`HnswIndex` holds no
vectors: the first pass of :meth:`~memkit.store.index.SearchIndex.rank` asks the server's HNSW index
(cosine, ``vector_cosine_ops``) for the ``ef_search`` nearest memories the read gate lets through
(namespace and status in SQL; access, validity, filters and the floor as the list of ids let in, or
kept out, whichever is shorter), and scores them with their approximate cosines; every other candidate enters
the first pass with similarity 0, so a keyword or neighbour match still reaches the shortlist. The
shortlist (and its neighbours) is then read from the table and scored exactly, as by the int8 index:
the returned scores are exact; only which memories reach the shortlist depends on the HNSW recall.
A namespace with no more candidates than the shortlist skips the first pass: exact search.

pgvector 0.8 applies a ``WHERE`` filter after the index scan; ``hnsw.iterative_scan = relaxed_order``
keeps scanning until ``ef_search`` rows pass it (../shared/FIELD-NOTES.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..schema import STATUSES
from .index import SearchIndex
from .quantized import fetch_vectors

__all__ = ["HNSW_INDEX", "HnswIndex"]

_ACTIVE = STATUSES.index("active")  # the status code of an active row in the index

HNSW_INDEX = (
    "CREATE INDEX IF NOT EXISTS memories_embedding_hnsw ON memories USING hnsw (embedding vector_cosine_ops)"
)
"""The server-side index (pgvector defaults: m 16, ef_construction 64), made on a writable open."""
_NEAREST = (
    "SELECT id, 1 - (embedding <=> CAST(? AS vector)) AS sim FROM memories"
    " WHERE namespace = ANY(?::VARCHAR[]) AND status = 'active'"
    " ORDER BY embedding <=> CAST(? AS vector) LIMIT ?"
)
# the rest of the read gate (access, validity, filters, the floor) as ids: those it lets through, or
# those it keeps out, whichever list is shorter; without it, memories the search may not return took
# the ef_search places and the readable ones entered the first pass with similarity 0
_NEAREST_ONLY = _NEAREST.replace("'active'", "'active' AND id = ANY(?::VARCHAR[])")
_NEAREST_BUT = _NEAREST.replace("'active'", "'active' AND NOT (id = ANY(?::VARCHAR[]))")


class HnswIndex(SearchIndex):
    """A search index without vectors: HNSW candidates first, exact rows from the table (module doc).

    ``con`` returns the store's connection; ``ef_search`` is pgvector's ``hnsw.ef_search`` and the
    number of nearest memories the first pass takes (40 is pgvector's default)."""

    def __init__(self, dim: int, floor: float, con: Callable[[], Any], ef_search: int = 100) -> None:
        self.con, self.ef_search = con, ef_search
        self._names: dict[int, str | None] = {}  # the inverse of the names table (namespaces' codes)
        super().__init__(dim, floor)

    def _alloc_vectors(self, grow: Callable[..., np.ndarray], old: Callable[[str], Any]) -> None:
        """No vectors in memory."""

    def _set_vectors(self, rows: slice | np.ndarray, emb: np.ndarray) -> None:
        """Nothing to store: the table holds the vectors."""

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        """The exact embeddings of ``rows``, read from the table."""
        return fetch_vectors(self.con(), self.ids[np.asarray(rows, dtype=np.int64)].tolist(), self.dim)

    def nbytes(self) -> int:
        """Bytes of embeddings held in this process: none."""
        return 0

    def _first_pass_size(self, k: int, shortlist: int) -> int:
        """The shortlist: HNSW candidates and keyword matches compete for it."""
        return shortlist

    def _similarity32(self, q: np.ndarray, rows: np.ndarray | None, mask: np.ndarray) -> np.ndarray:
        """The HNSW neighbours' cosines, 0 for every other row (all rows, or ``rows``)."""
        out = np.zeros(self.n if rows is None else len(rows), np.float32)
        if not np.any(q):  # a query without tokens: cosine 0 with every row, as in the exact index
            return out  # (pgvector's <=> with a zero vector is NaN, and its order arbitrary)
        con = self.con()
        # the session's own record (a SET of a transaction that rolled back is not in it, and a new
        # connection after a lost one gets it again)
        if con.setting("hnsw.ef_search") != [int(self.ef_search)]:
            con.execute("SET hnsw.ef_search = ?", [int(self.ef_search)])  # bound client-side
            con.execute("SET hnsw.iterative_scan = relaxed_order")
        if len(self._names) != len(self.names.code):  # code -> name, refreshed when a name is added
            self._names = {code: name for name, code in self.names.code.items()}
        n, codes = self.n, np.unique(self.ns[: self.n][mask[: self.n]])
        spaces = [self._names[c] for c in codes.tolist()]
        vec = "[" + ",".join(f"{x:.8g}" for x in np.asarray(q, np.float32)) + "]"
        # what the SQL alone selects (active rows of these namespaces) against what the gate lets through
        selected = np.isin(self.ns[:n], codes) & (self.status[:n] == _ACTIVE)
        kept_out = selected & ~mask[:n]
        query, extra = _NEAREST, []
        if kept_out.any():
            let_in = mask[:n] & selected
            if np.count_nonzero(let_in) <= np.count_nonzero(kept_out):
                query, extra = _NEAREST_ONLY, [self.ids[:n][let_in].tolist()]
            else:
                query, extra = _NEAREST_BUT, [self.ids[:n][kept_out].tolist()]
        found = con.execute(query, [vec, spaces, *extra, vec, int(self.ef_search)]).fetchall()
        at = {r: i for i, r in enumerate(rows.tolist())} if rows is not None else None
        for memory_id, sim in found:
            row = self.row.get(memory_id)
            if row is not None and mask[row]:
                pos = row if at is None else at.get(row)
                if pos is not None:
                    out[pos] = sim
        return out
