"""The compiled loops of the int8 index (:mod:`memkit.store.quantized`), one pass over the rows each:

- :func:`scan` — over the read gate's mask, the int8 dot product and the hybrid score: for every
  row the gate lets through, ``ws · cos + wi · importance + wr · recency + wk · keyword`` in
  float32, ``-inf`` elsewhere — one loop instead of a dozen numpy passes over a million rows and
  their temporaries;
- :func:`neighbours` — neighbour expansion over those scores (``+ λ · max(prev, next, 0)``, and
  two places away);
- :func:`top_values` — the ``m`` best scores in a min-heap, which give the pool's threshold
  without sorting a million floats.

The dot product. Codes are int8 and the query is quantized to int16 (:func:`quantize_query`), so
``codes[i] · q`` is a sum of int16 x int16 products in int32: LLVM turns the one-row loop into
``pmaddwd``. An int8 query (``q8``) was no faster and coarser; a float32 one slower. What bounds the
loop is memory, not arithmetic: on 4,096 rows held in the L2 cache the one-row loop takes 18 ns a
row, but over a million rows it waited on each row's bytes in turn (68 ns a row, one thread). So
:func:`_dot_rows` asks for the row :data:`AHEAD` places on before it multiplies (``llvm.prefetch``,
a hint; :func:`_prefetch_hint`): 30 ms for 1M x 384 on one thread and 14.5 ms on two, where a
pass that only reads the same 384 MB takes 25 and 14 ms (Intel Xeon of 2026-12-07). The loop that
took the rows four at a time (one pass over ``q`` for four dot products, ``vpmulld``), fastest
without the hint, took 45 and 24 ms. The rows go by chunks (:data:`CHUNK`, one task of the parallel
loop each) to plain loops (:func:`_dot_rows`; one loop per score term).
The query's rounding error (``max|q| / 65534`` per component) is 1/256 of
the rows' own. int32 cannot overflow: ``|sum| <= dim · 127 · qmax``, and :func:`quantize_query`
picks ``qmax <= 32767`` so that this stays below 2**31.

numba is optional (``memkit[int8]``): this module imports without it, and :func:`compile_kernels`
compiles the functions below on first use (cached on disk where numba can write). Until then
``prange`` is the built-in ``range``, so each function is also plain, slow, readable Python.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import MissingDependency
from .codes import US_PER_HOUR  # the index's time unit (epoch microseconds) -> hours

__all__ = [
    "AHEAD", "CHUNK", "compile_kernels", "jit_seconds", "neighbours", "quantize_query", "require_numba",
    "scan", "top_values",
]  # fmt: skip

prange = range  # numba.prange once compile_kernels() ran (the parallel loop of the kernels)
_KERNELS: dict[str, Any] = {}  # name -> compiled kernel; "numba" -> the module; "seconds" -> compile time

CHUNK = 1024  # rows per task of scan's parallel loop
AHEAD = 8  # rows between the one the dot product reads and the one it asks of memory (_dot_rows)


def quantize_query(q: np.ndarray, dim: int) -> tuple[np.ndarray, float]:
    """Query ``(dim,)`` float -> ``(codes (dim,) int16, scale)``, ``q ≈ scale · codes``; the largest
    code ``qmax`` keeps ``dim · 127 · qmax < 2**31`` (no int32 overflow in :func:`scan`).

    >>> codes, s = quantize_query(np.array([0.5, -1.0, 0.25], np.float32), 3)
    >>> codes.tolist(), round(s * 32767, 6)
    ([16384, -32767, 8192], 1.0)
    """
    qmax = min(32767, (2**31 - 1) // (127 * max(dim, 1)))
    peak = float(np.abs(q).max()) if q.size else 0.0
    scale = peak / qmax if peak > 0 else 1.0
    return np.clip(np.rint(q / scale), -qmax, qmax).astype(np.int16), scale


def scan(codes, scale, q, qscale, importance, last_access, keyword, w, now, n, mask, out):
    """``out[i]``, the float32 hybrid score of each row ``i`` of ``[0, n)`` the read gate lets through
    (``mask[i]``), ``-inf`` elsewhere -> how many rows ``mask`` lets through.

    ``mask`` is the gate as :meth:`~memkit.store.index_columns.IndexColumns.mask` renders it (numpy,
    remembered between searches): one byte a row, where evaluating the gate's nine columns in this
    loop took 74 ms at 1M after a float32 matvec, and reading the mask 56 ms.

    The score: ``w`` = (similarity, importance, recency, keyword weights, recency time scale in
    hours); a zero weight skips its term (``keyword`` may then be empty). The cosine is
    ``scale[i] · qscale · (codes[i] · q)`` with ``q`` the int16 query (:func:`quantize_query`);
    recency, at ``now``, is ``exp(-max(hours since last access, 0) / time scale)``
    (:func:`memkit.decay.recency`).

    The rows go by chunks of :data:`CHUNK`, one task of the parallel loop each, in plain loops
    (:func:`_score_rows`) that LLVM compiles as it would alone.
    """
    # rows let through, as a reduction: an array of counts and its sum were parallel regions of their
    # own (numba's parfors), each waiting for both threads: 20 ms on a busy machine
    count = 0
    for c in prange((n + CHUNK - 1) // CHUNK):
        i0 = c * CHUNK
        count += _score(i0, min(i0 + CHUNK, n), codes, scale, q, qscale, importance, last_access, keyword,
                        w, now, mask, out)  # fmt: skip
    return count


def _dot_rows(i0, i1, codes, q, mask, out):
    """``out[i - i0] = codes[i] · q`` (int32) for the rows ``i`` of ``[i0, i1)`` in ``mask`` (others:
    0) -> how many are in ``mask``. One row at a time (LLVM turns the loop into ``pmaddwd``), and
    the row :data:`AHEAD` places on, if in ``mask``, is asked of memory first (:func:`_prefetch`):
    without it the loop waits on each row's bytes in turn (1M rows, one thread: 68 ms, and 30 ms
    with it; a pass that only reads the same bytes took 25 ms)."""
    dim, n, count = q.shape[0], mask.shape[0], 0
    for i in range(i0, i1):
        ahead = i + AHEAD
        if ahead < n and mask[ahead]:
            for b in range(0, dim, 64):  # one cache line at a time
                _prefetch(codes, ahead * dim + b)
        acc = np.int32(0)
        if mask[i]:
            count += 1
            for j in range(dim):  # subtle: the casts keep int32 lanes (numba widens ints to int64)
                acc = np.int32(acc + np.int32(codes[i, j]) * np.int32(q[j]))
        out[i - i0] = acc
    return count


def _no_prefetch(a, at):
    """Plain Python (and numba without the prefetch hint): nothing to do."""


def _score_rows(i0, i1, codes, scale, q, qscale, importance, last_access, keyword, w, now, mask, out):
    """:func:`scan`'s scores of rows ``[i0, i1)`` into ``out`` (``-inf`` off ``mask``) -> how many
    rows ``mask`` lets through. One loop per term, in the formula's order, over float64 sums (each
    loop vectorizes; the sums round as the formula's one expression does)."""
    acc = np.empty(i1 - i0, dtype=np.int32)
    count = _dot(i0, i1, codes, q, mask, acc)
    ws, wi, wr, wk, hours = w[0], w[1], w[2], w[3], w[4]
    s = np.empty(i1 - i0)  # the chunk's sums, float64
    for i in range(i1 - i0):
        s[i] = ws * (np.float64(acc[i]) * scale[i0 + i] * qscale)
    if wi != 0.0:
        for i in range(i1 - i0):
            s[i] += wi * importance[i0 + i]
    if wr != 0.0:
        for i in range(i1 - i0):
            if mask[i0 + i]:
                s[i] += wr * math.exp(-max((now - last_access[i0 + i]) / US_PER_HOUR, 0.0) / hours)
    if wk != 0.0:
        for i in range(i1 - i0):
            s[i] += wk * keyword[i0 + i]
    for i in range(i1 - i0):
        out[i0 + i] = s[i] if mask[i0 + i] else -np.inf
    return count


# what scan calls: compiled by compile_kernels()
_dot, _score, _prefetch = _dot_rows, _score_rows, _no_prefetch


def neighbours(base, prev, nxt, prev2, nxt2, lam, lam2, n, out):
    """``out[i] = base[i] + lam · (max(base[prev[i]], base[nxt[i]], 0) + lam2 · max(base[prev2[i]],
    base[nxt2[i]], 0))`` where ``base[i]`` is finite (:func:`memkit.scoring.neighbour_score`: a
    missing neighbour, -1, and ``-inf`` count 0)."""
    for i in prange(n):
        b = base[i]
        if b == -np.inf:
            out[i] = b
            continue
        best = 0.0
        if prev[i] >= 0 and base[prev[i]] > best:
            best = base[prev[i]]
        if nxt[i] >= 0 and base[nxt[i]] > best:
            best = base[nxt[i]]
        far = 0.0
        if lam2 != 0.0:
            if prev2[i] >= 0 and base[prev2[i]] > far:
                far = base[prev2[i]]
            if nxt2[i] >= 0 and base[nxt2[i]] > far:
                far = base[nxt2[i]]
        out[i] = b + lam * (best + lam2 * far)


def top_values(score, n, heap):
    """``heap`` (``(m,)``, filled with ``-inf``) <- the ``m`` largest of ``score[:n]``, as a min-heap
    (the smallest kept value at ``heap[0]``). One thread: a pass over 4 MB that most rows leave
    at the first compare, faster alone than waking a second thread on a busy machine."""
    m = heap.shape[0]
    for i in range(n):
        s = score[i]
        if s <= heap[0]:  # most rows: not among the m best so far
            continue
        j = 0  # replace the root, sift the new value down to its place
        while True:
            c = 2 * j + 1
            if c >= m:
                break
            if c + 1 < m and heap[c + 1] < heap[c]:
                c += 1
            if heap[c] >= s:
                break
            heap[j] = heap[c]
            j = c
        heap[j] = s


def require_numba() -> Any:
    """The numba module, or MissingDependency naming the extra to install."""
    try:
        import numba  # optional: only an int8 index needs it
    except ImportError as e:
        raise MissingDependency(
            f"index='int8' needs numba ({e}); install the extra: pip install 'memkit[int8]'"
        ) from None
    return numba


def compile_kernels() -> dict[str, Any]:
    """Compile (or load from numba's cache) the kernels, once per process -> ``{name: kernel}``."""
    global prange
    if _KERNELS:
        return _KERNELS
    numba = require_numba()
    prange = numba.prange  # the kernels' loops become parallel (resolved when each compiles)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        # numba warns (NumbaWarning) when it cannot write its cache, e.g. a read-only install:
        # then the kernels are simply compiled in each process, which is no reason to fail a caller
        warnings.simplefilter("ignore", numba.NumbaWarning)

        def jit(fn: Callable[..., Any], parallel: bool = True, cache: bool = True) -> Any:
            """``fn`` compiled, cached on disk where numba can write (and ``cache``), else not cached."""
            try:
                return numba.njit(parallel=parallel, fastmath=True, cache=cache)(fn)
            except RuntimeError:  # "cannot cache ... no locator available": nowhere writable
                return numba.njit(parallel=parallel, fastmath=True)(fn)

        def build(hint: Any, cache: bool) -> dict[str, Any]:
            """The kernels, ``_dot_rows`` calling ``hint``, compiled and run once."""
            global _dot, _score, _prefetch
            _prefetch = hint  # _dot_rows calls it (resolved when _dot compiles)
            _dot = jit(_dot_rows, False, cache)  # scan calls these (resolved when scan compiles)
            _score = jit(_score_rows, False, cache)
            k = {"scan": jit(scan, True, cache), "neighbours": jit(neighbours, True, cache),
                 "top_values": jit(top_values, False, cache)}  # fmt: skip
            _warm_up(k)  # compile now, on one row of the real types: the first search pays nothing more
            return k

        try:
            k = build(_prefetch_hint(numba), True)
            k["prefetch"] = True
        except numba.core.errors.NumbaError as e:  # the hint's code generation (numba's internals moved)
            # subtle: numba's disk cache is keyed by the function, not by the _prefetch it resolved, so
            # the kernels without the hint are not cached: a later process with a working hint would
            # load them (two times slower at 1M) instead of compiling its own
            warnings.warn(f"int8 kernels without the prefetch hint ({type(e).__name__})", stacklevel=2)
            k = build(numba.njit(_no_prefetch), False)
            k["prefetch"] = False
    k["seconds"], k["numba"] = time.perf_counter() - t0, numba
    _KERNELS.update(k)
    return _KERNELS


def _warm_up(k: dict[str, Any]) -> None:
    """Run the kernels ``k`` once on one row of the real types (which compiles them)."""
    i64, f32, f64, ok = np.zeros(1, np.int64), np.zeros(1, np.float32), np.zeros(1), np.ones(1, bool)
    codes, q = np.zeros((1, 1), np.int8), np.zeros(1, np.int16)
    k["scan"](codes, f32, q, 1.0, f64, i64, f64, np.zeros(5), 0, 1, ok, f32)
    for adj in (i64, i64.astype(np.int32)):  # the index's adjacency, and its int32 copies
        k["neighbours"](f32, adj, adj, adj, adj, 1.0, 1.0, 1, f32.copy())
    k["top_values"](f32, 1, np.full(1, -np.inf, np.float32))


def _prefetch_hint(numba: Any) -> Any:
    """A numba intrinsic ``prefetch(codes, at)``: LLVM's ``llvm.prefetch`` (read, kept in every cache
    level) of byte ``at`` of an int8 array's data, a hint that never faults (x86 ``prefetcht0``,
    aarch64 ``prfm``). One spelling serves every LLVM numba uses: LLVM 14 (numba 0.60) renames
    ``llvm.prefetch.p0`` to its typed-pointer ``p0i8`` itself."""
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    @intrinsic
    def prefetch(typingctx: Any, array: Any, at: Any) -> Any:
        if not (
            isinstance(array, types.Array) and array.dtype == types.int8 and isinstance(at, types.Integer)
        ):
            return None  # (an element offset is a byte offset for int8 only)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            data = context.make_array(signature.args[0])(context, builder, args[0]).data
            i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0"
            )
            builder.call(fn, [builder.bitcast(builder.gep(data, [args[1]]), i8p), i32(0), i32(3), i32(1)])
            return context.get_dummy_value()

        return types.void(array, at), codegen

    return prefetch


def jit_seconds() -> float | None:
    """Seconds the kernels took to compile (or load from cache) in this process; None before."""
    return _KERNELS.get("seconds")
