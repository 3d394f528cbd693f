"""Vectors: the embedding cache, row inserts, and the numpy search index kept in step with DuckDB.

- :meth:`VectorsMixin._embed` embeds texts through a cache keyed by (embedder name, content hash)
  (a model's text is embedded once per store); it writes nothing (the write's transaction does).
- :meth:`VectorsMixin._insert` writes rows (and new cache entries): bound values, or one Arrow batch.
- The index (:class:`~memkit.store.index.SearchIndex`) is derived: loaded from DuckDB on open, changed
  only after a commit (:meth:`_mirror`, :meth:`_index_append`), rebuilt from DuckDB if that fails.
- ``reembed`` (:mod:`memkit.store.reembed`) migrates a file written by another embedder.

Times cross into the index as integer microseconds since the Unix epoch (:func:`epoch_us`): exact,
so a validity bound compares the same in numpy as in DuckDB; an open bound is the int64 minimum
(``valid_from``) or maximum (``valid_until``).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import polars as pl

from ..embed import check_embeddings, content_hashes
from ..portable.columns import Column, bulk_insert
from ..schema import TABLE_FIELDS
from .core import StoreCore
from .hnsw import HnswIndex
from .pg_schema import SNAPSHOT
from .quantized import new_index

__all__ = ["ZERO_VECTOR", "VectorsMixin", "epoch_us", "erasures_of", "index_cols", "points"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
OPEN_START, OPEN_END = np.iinfo(np.int64).min, np.iinfo(np.int64).max  # an open validity bound, in µs
COLUMNS = ", ".join(TABLE_FIELDS)
"""The ``memories`` columns a Memory is built from (everything but ``content_hash`` and ``embedding``),
as SQL text in table order: ``id, namespace, key, content, ...`` (:data:`memkit.schema.TABLE_FIELDS`)."""
_FIELDS = COLUMNS.split(", ")
_TS = "TIMESTAMP WITH TIME ZONE"
_SQL_TYPES = {  # the memories table's type of each Memory field that is not VARCHAR (migrations.py)
    "value": "JSON", "importance": "DOUBLE", "half_life_hours": "DOUBLE", "tags": "VARCHAR[]",
    "protected": "BOOLEAN", "valid_from": _TS, "valid_until": _TS, "created_at": _TS, "updated_at": _TS,
    "last_access_at": _TS, "access_count": "INTEGER", "version": "INTEGER", "merged_from": "VARCHAR[]",
    "findings": "JSON",
}  # fmt: skip
# a row batch's columns and their types (a column that is null in every row still has its type)
_MEMORY_COLUMNS = [Column(c, _SQL_TYPES.get(c, "VARCHAR"), True) for c in (*TABLE_FIELDS, "content_hash")]
SMALL = 32
"""Batches up to this many rows take the bound-parameter paths (an ``add``); larger ones, Arrow."""
_INSERT_CACHE = "INSERT OR IGNORE INTO embed_cache (embedder, content_hash, embedding) SELECT * FROM _view"
_VALUES_ROWS = f"INSERT INTO memories ({COLUMNS}, content_hash, embedding) VALUES "  # + (?, ...) per row
_VALUES_CACHE = "INSERT OR IGNORE INTO embed_cache (embedder, content_hash, embedding) VALUES "
_CACHED_ONE = "SELECT content_hash, embedding FROM embed_cache WHERE embedder = ? AND content_hash = ?"
_CACHED = _CACHED_ONE.replace("content_hash = ?", "content_hash IN (SELECT unnest(?::VARCHAR[]))")


def erasures_of(index: Any) -> int:
    """How many erasures ``index`` has applied (:meth:`~memkit.store.index_columns.IndexColumns.erase`)."""
    return int(index._erasures)


def epoch_us(t: datetime) -> int:
    """Datetime -> exact integer microseconds since the Unix epoch (the index's time unit).

    >>> epoch_us(datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC))
    1000000
    """
    return (t - _EPOCH) // _US


REINFORCE = (
    "UPDATE memories SET last_access_at = greatest(last_access_at, ?), access_count ="
    " CAST(least(CAST(access_count AS BIGINT) + 1, 2147483647) AS INTEGER),"  # saturates: COUNT_MAX
    " importance = least(1.0, importance + ?) WHERE id IN (SELECT unnest(?::VARCHAR[]))"
)  # one read's reinforcement of ``ids`` (``now``, ``step``, ``ids``): as the index adds it, one step

INDEX_COLUMNS = (
    "id, namespace, key, content, tags, owner, created_by, status, access, layer, kind, importance,"
    " half_life_hours AS half_life_h, access_count, epoch_us(created_at) AS created_us,"
    " epoch_us(last_access_at) AS last_access_us, epoch_us(valid_from) AS valid_from_us,"
    " epoch_us(valid_until) AS valid_until_us, embedding"
)
"""What the search index holds of a memory, as :func:`index_rows` reads it."""


def index_rows(table: Any, dim: int) -> tuple[dict[str, Any], np.ndarray]:
    """An Arrow table of :data:`INDEX_COLUMNS` -> ``(cols, emb)`` for :meth:`SearchIndex.append`: texts
    as lists, numbers as numpy arrays, open bounds as the int64 extremes, ``(n, dim)`` embeddings."""
    emb = table.column("embedding").combine_chunks().flatten().to_numpy()
    df = pl.from_arrow(table.drop(["embedding"])).with_columns(
        pl.col("valid_from_us").fill_null(OPEN_START), pl.col("valid_until_us").fill_null(OPEN_END)
    )
    cols = {c: df[c].to_list() if df[c].dtype in (pl.String, pl.List) else df[c].to_numpy()
            for c in df.columns}  # fmt: skip
    return cols, emb.reshape(table.num_rows, dim)


# what a write says of a vector :meth:`VectorsMixin._lying_zeros` finds (add_many's row, import's line)
ZERO_VECTOR = (
    "is all zeros (or too small to normalize), but the text's own vector is not (it would match nothing)"
)


def points(vectors: np.ndarray) -> np.ndarray:
    """Which rows of ``vectors`` ``(n, dim)`` have a direction: a squared length above 0 in float32
    (``(n,)`` bool; all zeros, or values so small their squares vanish, point nowhere)."""
    with np.errstate(under="ignore"):
        return np.einsum("ij,ij->i", vectors, vectors) > 0


class VectorsMixin(StoreCore):
    """Embeddings, row inserts and the derived search index."""

    # ------------------------------------------------------------------------------ embeddings
    def _check_embeddings(
        self, x: Any, n: int, field: str = "embedding", *, fresh: bool = False, borrow: bool = False
    ) -> np.ndarray:
        """:func:`memkit.embed.check_embeddings` with the store's dim: it never trusts an embedder."""
        return check_embeddings(x, n, self.embedder.dim, field, fresh=fresh, borrow=borrow)

    def _lying_zeros(self, vectors: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """The rows of given ``vectors`` ``(n, dim)`` that point nowhere (:func:`points`) while this
        store's embedder gives their text (``texts``, row-aligned) a direction -> their positions
        ``(z,)``, ascending. Such a vector would make its memory match nothing, so a write refuses it
        (``import_``: a file's line; ``add_many``: an ``embedding`` column); a zero vector for a text
        the embedder maps to zero too (no words: ``"!!!"``) is kept. Only the zero rows are embedded."""
        zero = np.flatnonzero(~points(vectors))  # (z,)
        if not zero.size:
            return zero
        own = self._check_embeddings(self.embedder.embed([texts[i] for i in zero]), len(zero))
        return zero[points(own)]

    def _embed(self, texts: list[str]) -> tuple[np.ndarray, list[str], dict[str, np.ndarray]]:
        """Embeddings of ``texts`` -> ``(matrix (n, dim), content hashes, new cache entries)``.

        Cached vectors are reused; the rest are computed once per distinct text. Nothing is written
        here: the caller inserts the new cache entries in its transaction. An embedder whose
        ``cache`` attribute is False (:class:`~memkit.embed.HashEmbedder`: recomputing costs less
        than a lookup and an insert) is neither looked up nor stored.
        """
        hashes = content_hashes(texts)
        distinct = list(dict.fromkeys(hashes))
        cached = getattr(self.embedder, "cache", True)
        vectors = self._cached_vectors(distinct) if cached else {}
        missing = [h for h in distinct if h not in vectors]
        new: dict[str, np.ndarray] = {}
        if missing:
            first = {h: t for h, t in zip(reversed(hashes), reversed(texts), strict=True)}  # hash -> a text
            fresh = getattr(self.embedder, "fresh_output", False)  # a new array per call: normalized in place
            made = self._check_embeddings(self.embedder.embed([first[h] for h in missing]), len(missing),
                                          fresh=fresh)  # fmt: skip
            new = dict(zip(missing, made, strict=True))
            vectors.update(new)
        if len(missing) == len(hashes):  # every text new and distinct (a bulk write): already in order
            return made, hashes, new if cached else {}
        return (
            np.stack([vectors[h] for h in hashes]).astype(np.float32, copy=False),
            hashes,
            new if cached else {},
        )

    def _cached_vectors(self, distinct: list[str]) -> dict[str, np.ndarray]:
        """The embedding cache's vectors of the content hashes ``distinct`` (those it holds)."""
        if len(distinct) > SMALL:  # many rows: one Arrow round trip
            table = self._sql(_CACHED, [self.embedder.name, distinct])
            return dict(zip(table["content_hash"].to_list(), table["embedding"].to_numpy(), strict=True))
        one = len(distinct) == 1  # one text (an add): a point lookup on the cache's key
        found = self._run(
            _CACHED_ONE if one else _CACHED, [self.embedder.name, distinct[0] if one else distinct]
        )
        return {h: np.asarray(e, dtype=np.float32) for h, e in found}

    def _embed_query_uncached(self, text: str) -> np.ndarray:
        """A query's embedding ``(dim,)``, checked and normalized (``_embed_query`` caches it)."""
        return self._check_embeddings(self.embedder.embed([text]), 1)[0]

    def _embedding_matrix(self, where: str, params: list[Any]) -> np.ndarray:
        """``SELECT embedding FROM memories WHERE ...`` -> ``(n, dim)`` without Python lists; ``dim`` is
        the stored vectors' own (a stale file's are its recorded embedder's, not the open one's)."""
        table = self._db.sql(f"SELECT embedding FROM memories WHERE {where}", params=params).to_arrow_table()
        flat = table.column("embedding").combine_chunks().flatten().to_numpy()  # (n * dim,)
        dim = self._stale[1] if self._stale else self.embedder.dim
        return flat.reshape(table.num_rows, dim)  # (n, dim)

    # ------------------------------------------------------------------------------------ inserts
    def _insert(
        self,
        cols: dict[str, list[Any]],
        emb: np.ndarray,
        hashes: Sequence[str],
        new_cache: dict[str, np.ndarray],
        columns: list[Any] | None = None,
    ) -> Any:
        """Insert rows (in a transaction) from one Arrow batch, and new cache entries -> the batch's ``id``
        column (Arrow; None for a few rows, bound values). ``columns`` (the table's columns)
        types every column ``cols`` carries, later migrations' included; else the Memory fields are.
        ``hashes`` may be an Arrow array already (more than :data:`SMALL` rows)."""
        ids = None
        if columns is None and len(hashes) <= SMALL:  # a few rows: one INSERT with bound values
            self._run(*self._values_rows(cols, hashes, emb))
        else:  # a column of one value is bound once (not on a server: its batch is copied to a table)
            row, bind = {**cols, "content_hash": hashes}, self._pg is None
            batch, sql, params = bulk_insert("memories", row, columns or _MEMORY_COLUMNS, emb, bind=bind)
            self._with_view(batch, sql, params)
            ids = batch.column("id") if "id" in batch.column_names else None
        if new_cache and len(new_cache) <= SMALL:
            name = self.embedder.name
            self._run(*self._values(_VALUES_CACHE, [[name, h, v.tolist()] for h, v in new_cache.items()]))
        elif new_cache:
            cache = pl.DataFrame(
                {"embedder": self.embedder.name, "content_hash": list(new_cache),
                 "embedding": np.stack(list(new_cache.values()))},
                schema_overrides={"embedding": pl.Array(pl.Float32, self.embedder.dim)},
            )  # fmt: skip
            self._with_view(cache.to_arrow(), _INSERT_CACHE)
        return ids

    def _values_rows(
        self, cols: dict[str, list[Any]], hashes: list[str], emb: np.ndarray
    ) -> tuple[str, list[Any]]:
        """A few Memory rows as one ``INSERT ... VALUES`` with bound values -> ``(sql, params)``."""
        rows = [[*(cols[c][i] for c in _FIELDS), hashes[i], emb[i].tolist()] for i in range(len(hashes))]
        return self._values(_VALUES_ROWS, rows)

    def _values(self, head: str, rows: list[list[Any]]) -> tuple[str, list[Any]]:
        """``head`` (a constant ``INSERT ... VALUES``) and one ``(?, ...)`` per row -> ``(sql, params)``:
        a few rows bound in one statement (an Arrow view's register, scan and unregister cost several
        times more for one row). Each row's last value is an embedding, cast to the fixed-size array."""
        one = "(" + "?, " * (len(rows[0]) - 1) + "?::FLOAT[" + str(int(self.embedder.dim)) + "])"
        return head + ", ".join([one] * len(rows)), [v for r in rows for v in r]

    def _with_view(self, table: Any, statement: str, params: Sequence[Any] = ()) -> None:
        """Run ``statement`` (with ``params``) with the Arrow ``table`` registered as the view ``_view``.

        DuckDB reads the Arrow buffers in place, so a batch of thousands of rows is one statement
        and no Python loop; the view is unregistered again whatever happens.
        """
        self._db.register("_view", table)
        try:
            self._run(statement, params)
        finally:
            with suppress(Exception):  # an aborted transaction refuses this; the real error propagates
                self._db.unregister("_view")

    # -------------------------------------------------------------------------------------- index
    def _load_index(self) -> None:
        """(Re)build the search index from DuckDB: columns via Arrow, embeddings flattened. The new
        index replaces the old one only once it is complete."""
        # subtle: the raw connection, not self._db, which would first flush deferred reads: an int8
        # index reads stored vectors in the middle of a ranking, which must not write anything
        if self.index == "hnsw":  # no vectors in memory: the server's HNSW index, exact rows from the table
            index: Any = HnswIndex(self.embedder.dim, self.decay.min_strength, lambda: self._con)
        else:
            index = new_index(self.index, self.embedder.dim, self.decay.min_strength, lambda: self._con)
        # on a server, the changes from here on are applied by memkit.store.sync before a search
        seen = self._run(SNAPSHOT)[0][0] if self._pg is not None else ""
        order = " ORDER BY rowid" if self._pg is not None else ""  # DuckDB scans in write order anyway
        table = self._db.sql(f"SELECT {INDEX_COLUMNS} FROM memories{order}").to_arrow_table()
        if table.num_rows and self._stale is None:  # a stale file's vectors are not searchable: empty
            index.append(*index_rows(table, self.embedder.dim))
        # a rebuilt index counts from 0 again: the store's revision goes on from the old one's, plus one
        old = self.__dict__.get("_index")
        self._revision_base = 0 if old is None else self._revision_base + old.version + 1
        self._erasures_base = 0 if old is None else self._erasures_base + erasures_of(old) + 1
        self._index, self._seen_xid = index, seen

    def _mirror(self, fn: Any) -> None:
        """Apply a committed change to the index after the commit; if that fails, rebuild it from
        DuckDB and let the error propagate."""

        def apply() -> None:
            """The change, or on failure a rebuilt index (then the error)."""
            try:
                fn()
            except Exception:
                self._load_index()
                raise

        self._on_commit(apply)

    def _index_append(self, cols: dict[str, list[Any]], emb: np.ndarray, staged: Any = None) -> None:
        """Mirror inserted rows into the index (after the commit). ``cols`` are the rows as stored
        (redacted, with their final status); ``emb`` is ``(n, dim)``, row-aligned; ``staged``: the
        append's first part, prepared during the transaction (:mod:`memkit.store.staging`)."""
        full = (staged.columns() if staged is not None else None) or index_cols(cols)
        self._mirror(lambda: self._index.append(full, emb, staged))


def index_cols(cols: dict[str, list[Any]]) -> dict[str, Any]:
    """Rows as stored -> the columns :meth:`SearchIndex.append` takes: times as epoch microseconds
    (an open validity bound as the int64 extremes), the half-life under the index's name."""

    def us(column: str, missing: int = 0) -> list[int]:
        """A timestamp column -> epoch microseconds, ``missing`` for None (an open bound)."""
        values = cols[column]
        if len(values) >= 64 and values.count(values[0]) == len(values):  # a batch's one time
            return [missing if values[0] is None else epoch_us(values[0])] * len(values)
        return [missing if t is None else epoch_us(t) for t in values]

    return {
        **cols,
        "created_us": us("created_at"),
        "last_access_us": us("last_access_at"),
        "valid_from_us": us("valid_from", OPEN_START),
        "valid_until_us": us("valid_until", OPEN_END),
        "half_life_h": cols["half_life_hours"],
    }
