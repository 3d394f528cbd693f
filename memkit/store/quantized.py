"""The int8 search index (``MemoryStore(path, index="int8")``): a quarter of the memory of the float32
matrix, and a ranking faster than the float32 floor, with the same hits and scores as the exact index.

How it works. Each embedding row ``x`` (unit length, ``dim`` floats) is kept as ``dim`` int8 codes and
one float32 scale (:func:`quantize`)::

    scale = max|x| / 127,   code = round(x / scale)  in [-127, 127],   x ≈ scale · code

so the index holds ``dim + 4`` bytes per row instead of ``4 · dim`` (0.26x at dim 384). A search runs
the exact index's two stages (:meth:`~memkit.store.index.SearchIndex.rank`) with a compiled first
pass (:mod:`memkit.store.int8_kernels`): over the read gate's mask (as the exact index renders it,
remembered between searches), one loop scores every row the gate lets through — int8 codes times an
int16 query, plus the other terms of the hybrid score — into a float32 array, neighbour expansion
over it, and a heap that gives the threshold of the *pool*, the best
``max(pool_per_k · k, min_pool)`` candidates under the final tie rule. The error of an approximate
cosine is at most ``scale / 2 · ‖q‖₁`` (about 4e-4 in practice).
The pool's exact float32 rows (and its neighbours') are then read from DuckDB, the source of truth,
and scored exactly in float64 as the exact index scores its shortlist: the returned scores are the
exact ones, and so are the hits, since the pool's cut is checked as the shortlist's is (a row within
the approximation error of ranking above the k-th hit joins the pool, and only its rows are read:
:func:`memkit.store.cut.missed`).

Why numba. numpy has no int8 matrix product (``codes @ q`` upcasts and runs 5x slower than the
float32 scan), and the flat int8 scans of faiss and usearch were not faster than numpy's float32
one on this 2-core machine (../shared/FIELD-NOTES.md). numba is the optional extra ``memkit[int8]``,
imported only when an int8 index is built; the kernels compile on first use (reported by
:func:`jit_seconds`). Scans under 96 MiB of codes (~260k rows at dim 384) run on the calling thread alone.

Threads. numba's default threading layer runs one parallel kernel at a time per process, so the
kernels are called under a process-wide lock (a store already ranks one query at a time).
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ..decay import below_floor, strength
from ..errors import MemkitError, ValidationError
from ..params import DecayParams, KeywordParams, Weights
from ..ties import tie_step, top_k
from . import int8_kernels as kern
from .cut import Hours, missed
from .index import SearchIndex, no_scores
from .index_columns import US_PER_HOUR

__all__ = ["INDEXES", "QuantizedIndex", "fetch_vectors", "jit_seconds", "new_index", "quantize"]

# MemoryStore(index=...): the float32 matrix; int8 codes + exact rescoring; pgvector's HNSW (hnsw.py)
INDEXES = ("exact", "int8", "hnsw")
jit_seconds = kern.jit_seconds  # seconds the kernels took to compile in this process (None before)
# below this many bytes of codes to scan, waking the other threads costs more than they save: a scan
# after a 0.2 s pause (a quiet host, 2026-12-08) took 4.95 ms on one thread and 6.13 on two at 100k
# rows of dim 384, 13.4 and 13.9 ms at 300k, 22.4 and 15.0 ms at 500k (a busy one: a parallel kernel
# waited a median 10-12 ms for its second thread at 20k rows)
_PARALLEL_BYTES = 96 << 20  # 96 MiB: ~260k rows at dim 384
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
    hit = [k for k, i in enumerate(ids) if i in found]  # gate hides it from searches) is a zero vector
    out[hit] = rows[[found[ids[k]] for k in hit]]
    return out  # (len(ids), dim)


class QuantizedIndex(SearchIndex):
    """A :class:`~memkit.store.index.SearchIndex` whose embeddings are int8 codes ``(cap, dim)`` and
    per-row scales ``(cap,)`` (see the module doc), ranked by compiled kernels; exact float32 rows
    come from ``source``.

    Parameters
    ----------
    dim, floor
        As :class:`~memkit.store.index_columns.IndexColumns`.
    source
        ``ids -> (len(ids), dim)`` float32: the stored embeddings (the store passes
        :func:`fetch_vectors` over its connection).
    pool_per_k, min_pool
        The first pass keeps ``max(pool_per_k · k, min_pool)`` candidates for exact rescoring, and the
        check of the cut adds any row the approximation could have misplaced (``cut.missed``; up
        to :attr:`widen_at_most` rows, and as many guessed before by :meth:`_likely_missed`), so
        the pool's size changes the time, not the hits (past that many, the first pass's order
        picks the rows added). The rows are read from DuckDB: at
        1M after a float32 matvec, ~5 ms a query (even ``SELECT 1`` after a pause) and a quarter of
        a millisecond a row. The ranking (similarity only, 1M rows, the float32 floor ~60 ms) took
        42 ms with a pool of 64, 35 with 32 and 31 with 20 (2 and 16), the same hits as the exact
        index for all 30 queries each; with default weights, whose neighbours are read too and
        whose cut is widened in most searches (a second query), 44, 42 and 41 ms.
    """

    widen_at_most = 256  # the cut is checked (cut.missed); each row added is read from DuckDB
    likely_sigmas = 8.0  # _likely_missed's guess of the first pass's error, in spreads of a code's rounding

    def __init__(
        self,
        dim: int,
        floor: float = 0.1,
        *,
        source: Callable[[Sequence[str]], np.ndarray],
        pool_per_k: int = 2,
        min_pool: int = 16,
    ) -> None:
        """An empty int8 index; compiles the kernels (MissingDependency without numba)."""
        for name, value in (("pool_per_k", pool_per_k), ("min_pool", min_pool)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValidationError(name, f"must be an int >= 1, got {value!r}")
        self._kernels = kern.compile_kernels()
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
    def rank(
        self,
        q: np.ndarray,
        query: str,
        gate: Any,
        now_us: int,
        *,
        floor: float,
        weights: Weights,
        k: int,
        decay: DecayParams,
        keyword: KeywordParams,
        layer: Sequence[str] | None = None,
        kind: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """:meth:`SearchIndex.rank <memkit.store.index.SearchIndex.rank>` (same arguments, result,
        masks, formula and tie rule) with the compiled first pass of the module doc."""
        default_floor = floor == self.floor
        kw_all, adj = None, (None,) * 4
        lam, size = float(weights.neighbour), max(self.pool_per_k * k, self.min_pool)
        # the read gate as the exact index renders it, remembered between searches (IndexColumns.mask):
        # the scan reads a byte a row, not the gate's nine columns (int8_kernels.scan)
        mask = self.mask(gate, now_us, floor=default_floor, layer=layer, kind=kind, tags=tags)
        if not default_floor:  # strength computed for the candidates only, as the exact index does
            cand = np.flatnonzero(mask)
            age_h = (now_us - self.created_us[cand]) / US_PER_HOUR
            weak = below_floor(strength(self.importance[cand], age_h, self.half_life_h[cand]), floor)
            mask[cand[weak]] = False
        kw_scan = None  # the scan's keyword scores: None when no candidate matches a query term (no pass)
        if weights.keyword:  # BM25's corpus is the candidates
            kw_scan = self.keyword_index().matches(query, mask, keyword)  # (n,) or None
            kw_all = no_scores(self.n) if kw_scan is None else kw_scan  # (the exact stage reads rows of it)
        if lam > 0:
            adj = self.adjacency(gate)  # prev, next, and two places away
        score, count = self._scan(q, mask, kw_scan, weights, decay, now_us)
        lams = (lam, float(weights.neighbour2))
        if count <= size:  # every candidate is scored exactly
            return self._rescore(q, np.flatnonzero(mask), mask, kw_all, adj, now_us, weights, decay, k)
        # an adjacency made for this call alone (ids an open transaction erased) is not narrowed: no copy
        cand, first = self._pool(score, adj, lams, now_us, float(weights.tie), size, not gate.hidden)
        cand = self._likely_missed(q, cand, first, weights, k, now_us)
        return self._rescore(q, cand, mask, kw_all, adj, now_us, weights, decay, k, first=first)

    def _likely_missed(
        self, q: np.ndarray, cand: np.ndarray, first: np.ndarray, weights: Weights, k: int, now_us: int
    ) -> np.ndarray:
        """``cand`` and the rows the check of its cut (:func:`~memkit.store.cut.missed`) would likely
        add once ``cand`` is scored exactly, guessed from the first pass alone: read in the same
        DuckDB query as the pool (a second query after the exact scores costs ~5 ms more, cold),
        not for the hits' sake — the check after the exact scores still decides. The guess: every
        row's error within :attr:`likely_sigmas` of a code's rounding (uniform in ± scale / 2, its
        spread scale / √12 · ‖q‖₂ in cosine), through the neighbour terms too."""
        if self.widen_at_most == 0 or self.likely_sigmas <= 0:
            return cand
        tie, hours = float(weights.tie), Hours(now_us, self.created_us, None)
        lam, lam2 = float(weights.neighbour), float(weights.neighbour2)
        spread = float(self.scale[cand].mean()) / math.sqrt(12) * float(np.linalg.norm(q))
        err = self.likely_sigmas * float(weights.similarity) * spread * (1 + lam + lam * lam2)
        guess = first[cand].astype(np.float64)
        best = top_k(guess, k, len(guess), age=hours[cand], tie=tie)
        more = missed(first, cand, guess, best, hours, tie, err=err)
        return np.union1d(cand, more) if 0 < len(more) <= self.widen_at_most else cand

    @contextlib.contextmanager
    def _threads(self, n: int) -> Iterator[int]:
        """Hold the kernel lock with numba's threads set for a scan of ``n`` rows -> how many."""
        numba = self._kernels["numba"]
        threads = numba.config.NUMBA_NUM_THREADS if n * self.dim >= _PARALLEL_BYTES else 1
        with _KERNEL_LOCK:
            numba.set_num_threads(threads)
            yield threads

    def _scan(
        self, q: np.ndarray, mask: np.ndarray, kw_all: np.ndarray | None, weights: Weights,
        decay: DecayParams, now_us: int,
    ) -> tuple[np.ndarray, int]:  # fmt: skip
        """:func:`~memkit.store.int8_kernels.scan` over the live rows ``mask`` lets through ->
        ``(score (n,) float32, -inf off the mask; how many rows the mask lets through)``."""
        n = self.n
        qc, qscale = kern.quantize_query(np.asarray(q, dtype=np.float32), self.dim)
        wk = float(weights.keyword) if kw_all is not None else 0.0
        w = np.array([weights.similarity, weights.importance, weights.recency, wk, decay.time_scale_hours])
        score = np.empty(n, dtype=np.float32)
        kw = np.zeros(0) if kw_all is None else kw_all
        with self._threads(n):
            count = self._kernels["scan"](
                self.codes, self.scale, qc, qscale, self.importance, self.last_access_us, kw, w, now_us, n,
                mask, score,
            )  # fmt: skip
        return score, count

    def _narrow(self, adj: tuple[np.ndarray, ...], far: bool) -> tuple[np.ndarray, ...]:
        """``adj`` (prev, next, prev2, next2; int64) as int32 for the neighbour pass: half the bytes
        to read (1M rows in random order, after a pause: 9.8 -> 7.1 ms on two threads). Kept for the
        last two adjacencies the index gave (the operator's and a requester's view, as
        :meth:`~memkit.store.adjacency.AdjacencyMixin.adjacency` keeps them), so searches that
        alternate between them copy nothing. Without second neighbours (``far``) only prev and next
        are read."""
        if self.n >= 2**31:
            return adj
        kept = self.__dict__.get("_adj32", [])  # [(prev, next as int64, with prev2/next2?, the copies)]
        for got in kept:
            if got[0] is adj[0] and got[1] is adj[1] and (got[2] or not far):
                return got[3]
        near = tuple(a.astype(np.int32) for a in (adj if far else adj[:2]))
        got = (adj[0], adj[1], far, near if far else near * 2)  # (without far: prev, next unread)
        self._adj32 = [got, *(g for g in kept if g[0] is not adj[0])][:2]
        return got[3]

    def _pool(
        self, score: np.ndarray, adj: tuple[Any, ...], lams: tuple[float, float], now_us: int,
        tie: float, size: int, narrow: bool = True,
    ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """The rest of the first pass -> ``(the rows (ascending) of the size best approximate scores
        under the final rule (:func:`memkit.scoring.top_k`: near ties newest first), every row's
        approximate score)``, the score plus ``lams[0]`` times the neighbour term (``lams[1]`` its
        share two places away); ``narrow``: the neighbour pass reads :meth:`_narrow`'s copies."""
        n, kr = self.n, self._kernels
        if lams[0] > 0:  # neighbour expansion needs every row's score first: a second pass
            base, score = score, np.empty(n, dtype=np.float32)
            with self._threads(n):
                kr["neighbours"](base, *(self._narrow(adj, lams[1] != 0) if narrow else adj), *lams, n, score)
        heap = np.full(size, -np.inf, dtype=np.float32)  # (size,): the best scores
        kr["top_values"](score, n, heap)  # all `size` finite: there are more candidates
        best, kth = float(heap.max()), float(heap[0])
        width = tie * abs(best)
        low = kth  # tie 0: every row scoring at least the size-th best (exact ties included)
        if width > 0:  # every row whose tie step is at most the size-th best's (a margin of 0.1%)
            low = best - (tie_step(best, kth, width) + 1.001) * width  # (the rule's step: memkit.ties)
        sub = np.flatnonzero(score >= low)  # (s,): a few hundred rows, a superset of top_k's
        age = (now_us - self.created_us[sub]) / US_PER_HOUR
        return np.sort(sub[top_k(score[sub], size, age=age, tie=tie)]), score
