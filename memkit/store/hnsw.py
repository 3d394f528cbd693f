"""pgvector's HNSW as the first pass of a search (``MemoryStore(url, index="hnsw")``, PostgreSQL only).

The exact index holds every embedding in each process (``4 · dim`` bytes a memory); on a server with
many worker processes that is the memory of the store once per worker. :class:`HnswIndex` holds no
vectors: the first pass of :meth:`~memkit.store.index.SearchIndex.rank` asks the server's HNSW index
(cosine, ``vector_cosine_ops``) for the ``ef_search`` nearest memories the read gate lets through
(the gate's namespace, access, status and validity in SQL; what only the filters or the floor keep
out as the list of ids let in, or kept out, whichever is shorter), and scores them with their
approximate cosines; every other candidate enters the first pass with similarity 0, so a keyword or
neighbour match still reaches the shortlist. The
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

from .index import SearchIndex
from .quantized import fetch_vectors

__all__ = ["HNSW_INDEX", "HnswIndex"]

HNSW_INDEX = (
    "CREATE INDEX IF NOT EXISTS memories_embedding_hnsw ON memories USING hnsw (embedding vector_cosine_ops)"
)
"""The server-side index (pgvector defaults: m 16, ef_construction 64), made on a writable open."""
_NEAREST = (
    "SELECT id, 1 - (embedding <=> CAST(? AS vector)) AS sim FROM memories"
    " WHERE namespace = ANY(?::VARCHAR[]) AND status = 'active'"
    " ORDER BY embedding <=> CAST(? AS vector) LIMIT ?"
)
# a search's first pass asks for the nearest memories its read gate lets through (without the gate,
# memories the search may not return took the ef_search places and the readable ones entered the
# first pass with similarity 0)
_SIM = "SELECT id, 1 - (embedding <=> CAST(? AS vector)) AS sim FROM memories"


class HnswIndex(SearchIndex):
    """A search index without vectors: HNSW candidates first, exact rows from the table (module doc).

    ``con`` returns the store's connection; ``ef_search`` is pgvector's ``hnsw.ef_search`` and the
    number of nearest memories the first pass takes (40 is pgvector's default)."""

    bounded_first_pass = False  # a row past the HNSW neighbours scores similarity 0, not near it

    def __init__(self, dim: int, floor: float, con: Callable[[], Any], ef_search: int = 100) -> None:
        self.con, self.ef_search = con, ef_search
        self._limit = ef_search  # how many nearest rows this ranking asks for (_first_pass_size)
        self._asked: tuple[Any, int] | None = None  # the read gate and time of the ranking under way
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

    def rank(self, q: np.ndarray, query: str, gate: Any, now_us: int, **kw: Any) -> Any:
        """:meth:`SearchIndex.rank`, its read gate kept for the first pass's server query (a search of
        a server store holds the store's lock alone, so no other ranking shares this index meanwhile)."""
        self._asked = (gate, now_us)
        return super().rank(q, query, gate, now_us, **kw)

    def _first_pass_size(self, k: int, shortlist: int) -> int:
        """The shortlist: HNSW candidates and keyword matches compete for it. At least that many
        nearest rows get their real cosine (:meth:`_similarity32`): with only ``ef_search`` of them,
        recall@200 fell to ~0.55 (every row past them scored 0)."""
        self._limit = max(int(self.ef_search), shortlist)
        return shortlist

    def _similarity32(self, q: np.ndarray, rows: np.ndarray | None, mask: np.ndarray) -> np.ndarray:
        """The HNSW neighbours' cosines, 0 for every other row (all rows, or ``rows``)."""
        out = np.zeros(self.n if rows is None else len(rows), np.float32)
        if not np.any(q):  # a query without tokens: cosine 0 with every row, as in the exact index
            return out  # (pgvector's <=> with a zero vector is NaN, and its order arbitrary)
        con = self.con()
        # the session's own record (a SET of a transaction that rolled back is not in it, and a new
        # connection after a lost one gets it again)
        limit = int(self._limit)
        ef = min(limit, 1000)  # pgvector's most; its iterative scan goes on past it up to the LIMIT
        if con.setting("hnsw.ef_search") != [ef]:
            con.execute("SET hnsw.ef_search = ?", [ef])  # bound client-side
            con.execute("SET hnsw.iterative_scan = relaxed_order")
        n = self.n
        vec = "[" + ",".join(f"{x:.8g}" for x in np.asarray(q, np.float32)) + "]"
        # the read gate in SQL (namespace, access, status, validity); what only the filters or the floor
        # keep out goes as ids: those let in or those kept out, whichever list is shorter
        gate, now_us = self._asked
        where, params = gate.where()
        selected = self.mask(gate, now_us, floor=False)[:n]
        kept_out = selected & ~mask[:n]
        extra: list[Any] = []
        if kept_out.any():
            let_in = mask[:n] & selected
            if np.count_nonzero(let_in) <= np.count_nonzero(kept_out):
                where, extra = where + " AND id = ANY(?::VARCHAR[])", [self.ids[:n][let_in].tolist()]
            else:
                where, extra = where + " AND NOT (id = ANY(?::VARCHAR[]))", [self.ids[:n][kept_out].tolist()]
        query = f"{_SIM} WHERE {where} ORDER BY embedding <=> CAST(? AS vector) LIMIT ?"
        found = con.execute(query, [vec, *params, *extra, vec, limit]).fetchall()
        at = {r: i for i, r in enumerate(rows.tolist())} if rows is not None else None
        for memory_id, sim in found:
            row = self.row.get(memory_id)
            if row is not None and mask[row]:
                pos = row if at is None else at.get(row)
                if pos is not None:
                    out[pos] = sim
        return out
