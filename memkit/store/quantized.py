"""The int8 search index (``MemoryStore(path, index="int8")``): a quarter of the memory of the float32
matrix, and a scan faster than the float32 floor, with the same hits and scores as the exact index.

How it works. Each embedding row ``x`` (unit length, ``dim`` floats) is kept as ``dim`` int8 codes and
one float32 scale (:func:`quantize`)::

    scale = max|x| / 127,   code = round(x / scale)  in [-127, 127],   x ≈ scale · code

so the index holds ``dim + 4`` bytes per row instead of ``4 · dim`` (0.26x at dim 384). A search
scans every candidate row with a compiled kernel (numba: int8 codes times the float32 query, summed
in float32, times the row's scale), whose error per row is at most ``scale / 2 · ‖q‖₁`` and in
practice about 4e-4 in cosine. The approximate scores go through the same first pass as the exact
index (:meth:`~memkit.store.index.SearchIndex.rank`: hybrid score, neighbour expansion, tie order)
and pick a *pool* of ``max(pool_per_k · k, min_pool)`` candidates; the exact float32 rows of the pool
(and of its neighbours) are then read from DuckDB, the source of truth, and scored exactly in float64
like the exact index's shortlist. So the returned scores are the exact ones, and the hits are the
exact index's whenever its top k is inside the pool (recall@10 1.0 on random unit vectors and on
LoCoMo turns here, ``benchmarks/search.py``).

Why numba. numpy has no int8 matrix product (``codes @ q`` upcasts to float64 and runs 5x slower than
the float32 scan), and the flat int8 scans of faiss and usearch were not faster than numpy's float32
one on this 2-core machine (../shared/FIELD-NOTES.md). A 10-line numba loop reads a byte per
dimension and widens it in registers, on every core: 0.5-0.85x the time of numpy's float32 scan at
1M x 384 here (the lower end when the machine is busy, where numpy's memory-bound scan suffers
more; the loop is compute-bound, as numba emits no VNNI dot-product instructions). numba is the
optional extra ``memkit[int8]``, imported only when an int8 index is built; the kernels compile on
first use (about a second, reported by :func:`jit_seconds`) and are cached on disk where numba can
write its cache. Small scans (under 4 MiB of codes) run on the calling thread alone.

Threads. numba's default threading layer runs one parallel kernel at a time per process, so the
kernels are called under a process-wide lock (a store already ranks one query at a time).
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import MemkitError, MissingDependency, ValidationError
from .index import SearchIndex

__all__ = ["INDEXES", "QuantizedIndex", "fetch_vectors", "jit_seconds", "new_index", "quantize"]

# MemoryStore(index=...): the float32 matrix; int8 codes + exact rescoring; pgvector's HNSW (hnsw.py)
INDEXES = ("exact", "int8", "hnsw")
_KERNELS: dict[str, Any] = {}  # "dense", "sparse" -> compiled kernels; "seconds" -> compile time
# below this many bytes of codes to scan, waking the other threads costs more than the scan (and on
# a busy machine one may wait ms for a core): the kernel then runs on the calling thread alone
_PARALLEL_BYTES = 1 << 22  # 4 MiB: ~11k rows at dim 384
_KERNEL_LOCK = threading.Lock()  # numba's workqueue threading layer: one parallel kernel at a time


def quantize(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``(m, dim)`` float32 -> ``(codes (m, dim) int8, scale (m,) float32)``, ``x ≈ scale · codes``.

    One scale per row (its largest magnitude maps to 127), so a row with small components keeps its
    precision; an all-zero row (an erased one) gets scale 0.

    >>> codes, scale = quantize(np.array([[0.6, -0.8, 0.0]], np.float32))
    >>> codes.tolist(), round(float(scale[0]) * 127, 6)
    ([[95, -127, 0]], 0.8)
    """
    x = np.asarray(x, dtype=np.float32)
    peak = np.abs(x).max(axis=1) if x.size else np.zeros(len(x), np.float32)  # (m,)
    scale = (peak / 127).astype(np.float32)
    safe = np.where(scale > 0, scale, 1.0)[:, None]
    codes = np.clip(np.rint(x / safe), -127, 127).astype(np.int8)  # (m, dim)
    return codes, scale


def _numba() -> Any:
    """The numba module, or MissingDependency naming the extra to install."""
    try:
        import numba  # optional: only an int8 index needs it
    except ImportError as e:
        raise MissingDependency(
            f"index='int8' needs numba ({e}); install the extra: pip install 'memkit[int8]'"
        ) from None
    return numba


def _compile() -> dict[str, Any]:
    """Compile (or load from numba's cache) the two scan kernels, once per process."""
    if _KERNELS:
        return _KERNELS
    numba = _numba()
    from numba import prange  # the parallel loop of the kernels

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        # numba warns (NumbaWarning) when it cannot write its cache, e.g. a read-only install:
        # then the kernels are simply compiled in each process, which is no reason to fail a caller
        warnings.simplefilter("ignore", numba.NumbaWarning)

        def jit(fn: Callable[..., None]) -> Any:
            """``fn`` compiled parallel, cached on disk where numba can write, else not cached."""
            try:
                return numba.njit(parallel=True, fastmath=True, cache=True)(fn)
            except RuntimeError:  # "cannot cache ... no locator available": nowhere writable
                return numba.njit(parallel=True, fastmath=True)(fn)

        def dense(codes: Any, scale: Any, q: Any, mask: Any, out: Any) -> None:
            """``out[i] = scale[i] · (codes[i] · q)`` for every row with ``mask[i]``, else 0."""
            for i in prange(out.shape[0]):
                acc = np.float32(0.0)
                if mask[i]:
                    for j in range(q.shape[0]):
                        acc += np.float32(codes[i, j]) * q[j]
                out[i] = acc * scale[i]

        def sparse(codes: Any, scale: Any, q: Any, rows: Any, out: Any) -> None:
            """``out[r] = scale[rows[r]] · (codes[rows[r]] · q)``: the candidates only, no copy."""
            for r in prange(rows.shape[0]):
                i = rows[r]
                acc = np.float32(0.0)
                for j in range(q.shape[0]):
                    acc += np.float32(codes[i, j]) * q[j]
                out[r] = acc * scale[i]

        kernels: dict[str, Any] = {"dense": jit(dense), "sparse": jit(sparse), "numba": numba}
        # compile now, on a tiny input of the real types, so the first search pays nothing more
        c, s, q1 = np.zeros((1, 1), np.int8), np.zeros(1, np.float32), np.zeros(1, np.float32)
        kernels["dense"](c, s, q1, np.ones(1, bool), np.empty(1, np.float32))
        kernels["sparse"](c, s, q1, np.zeros(1, np.int64), np.empty(1, np.float32))
    kernels["seconds"] = time.perf_counter() - t0
    _KERNELS.update(kernels)
    return _KERNELS


def jit_seconds() -> float | None:
    """Seconds the kernels took to compile (or load from cache) in this process; None before."""
    return _KERNELS.get("seconds")


def new_index(kind: str, dim: int, floor: float, con: Callable[[], Any]) -> SearchIndex:
    """An empty index of ``kind`` (one of :data:`INDEXES`); an int8 one reads exact rows through
    ``con()``, the store's current DuckDB connection (a compaction replaces it)."""
    if kind == "exact":
        return SearchIndex(dim, floor)
    return QuantizedIndex(dim, floor, source=lambda ids: fetch_vectors(con(), ids, dim))


def fetch_vectors(con: Any, ids: Sequence[str], dim: int) -> np.ndarray:
    """The stored float32 embeddings of memory ``ids`` from DuckDB -> ``(len(ids), dim)``, in the
    order of ``ids`` (``con`` is the store's connection); an id the file no longer holds (erased in
    the open transaction) gives a zero row.

    One statement; ``list_contains`` over the id column measured ~0.5 ms + 28 µs per id at 1M rows
    (``id IN (SELECT unnest(...))`` plans a hash join over the whole table: 200-400 ms)."""
    if con is None:
        raise MemkitError("the store is closed")
    if not len(ids):
        return np.zeros((0, dim), np.float32)
    table = con.sql(
        "SELECT id, embedding FROM memories WHERE list_contains($ids, id)", params={"ids": list(ids)}
    ).to_arrow_table()
    flat = table.column("embedding").combine_chunks().flatten().to_numpy()  # (m * dim,)
    found = {i: r for r, i in enumerate(table.column("id").to_pylist())}
    rows = flat.reshape(table.num_rows, dim)
    out = np.zeros((len(ids), dim), np.float32)  # subtle: an id erased in the open transaction (the
    hit = [k for k, i in enumerate(ids) if i in found]  # index drops it at commit) scores as a zero vector
    out[hit] = rows[[found[ids[k]] for k in hit]]
    return out  # (len(ids), dim)


class QuantizedIndex(SearchIndex):
    """A :class:`~memkit.store.index.SearchIndex` whose embeddings are int8 codes ``(cap, dim)`` and
    per-row scales ``(cap,)`` (see the module doc); exact float32 rows come from ``source``.

    Parameters
    ----------
    dim, floor
        As :class:`~memkit.store.index_columns.IndexColumns`.
    source
        ``ids -> (len(ids), dim)`` float32: the stored embeddings (the store passes
        :func:`fetch_vectors` over its connection).
    pool_per_k, min_pool
        The first pass keeps ``max(pool_per_k · k, min_pool)`` candidates (at least the exact index's
        shortlist, ``max(4k, 64)``) for exact rescoring: 4 and 64 measured recall@10 1.0 on 1M
        random vectors and on LoCoMo (``benchmarks/search.py``).
    """

    def __init__(
        self,
        dim: int,
        floor: float = 0.1,
        *,
        source: Callable[[Sequence[str]], np.ndarray],
        pool_per_k: int = 4,
        min_pool: int = 64,
    ) -> None:
        """An empty int8 index; compiles the kernels (MissingDependency without numba)."""
        for name, value in (("pool_per_k", pool_per_k), ("min_pool", min_pool)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValidationError(name, f"must be an int >= 1, got {value!r}")
        self._kernels = _compile()
        self.source, self.pool_per_k, self.min_pool = source, pool_per_k, min_pool
        super().__init__(dim, floor)

    # ------------------------------------------------------------------------------ vector storage
    def _alloc_vectors(self, grow: Callable[..., np.ndarray], old: Callable[[str], Any]) -> None:
        """int8 codes ``(cap, dim)`` and float32 scales ``(cap,)`` instead of the float32 matrix."""
        self.codes = grow(old("codes"), np.int8, (self.dim,))
        self.scale = grow(old("scale"), np.float32)

    def _set_vectors(self, rows: slice | np.ndarray, emb: np.ndarray) -> None:
        """Quantize ``emb`` ``(m, dim)`` into ``rows``."""
        self.codes[rows], self.scale[rows] = quantize(emb)

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        """The exact float32 embeddings of ``rows`` -> ``(len(rows), dim)``, read from the store."""
        rows = np.asarray(rows, dtype=np.int64)
        return self.source(self.ids[rows].tolist())

    def nbytes(self) -> int:
        """Bytes of the live embedding storage (codes and scales of ``n`` rows)."""
        return self.n * (self.dim * self.codes.itemsize + self.scale.itemsize)

    # ------------------------------------------------------------------------------------- ranking
    def _first_pass_size(self, k: int, shortlist: int) -> int:
        """The pool: ``max(pool_per_k · k, min_pool, shortlist)`` candidates go to exact rescoring."""
        return max(self.pool_per_k * k, self.min_pool, shortlist)

    def _similarity32(self, q: np.ndarray, rows: np.ndarray | None, mask: np.ndarray) -> np.ndarray:
        """Approximate cosines: every row (``rows=None``; 0 where ``mask`` is False) or ``rows``."""
        q = np.ascontiguousarray(q, dtype=np.float32)
        m = self.n if rows is None else len(rows)  # rows scanned
        numba, threads = self._kernels["numba"], self._kernels["numba"].config.NUMBA_NUM_THREADS
        out = np.empty(m, np.float32)  # (m,)
        with _KERNEL_LOCK:
            numba.set_num_threads(threads if m * self.dim >= _PARALLEL_BYTES else 1)
            if rows is None:
                self._kernels["dense"](self.codes, self.scale, q, mask, out)
            else:
                self._kernels["sparse"](self.codes, self.scale, q, rows.astype(np.int64, copy=False), out)
        return out
