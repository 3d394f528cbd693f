"""The compiled loops of the int8 index (:mod:`memkit.store.quantized`), one pass over the rows each:

- :func:`scan` — the read gate of :meth:`~memkit.store.index_columns.IndexColumns.mask` (namespace,
  statuses, access, validity and write time, the default floor as the expiry instant) fused with
  the int8 dot product and the hybrid score: for every row the gate lets through,
  ``ws · cos + wi · importance + wr · recency + wk · keyword`` in float32, ``-inf`` elsewhere — one
  loop instead of a dozen numpy passes over a million rows and their temporaries;
- :func:`neighbours` — neighbour expansion over those scores (``+ λ · max(prev, next, 0)``, and
  two places away);
- :func:`top_values` — the ``m`` best scores in a min-heap, which give the pool's threshold
  without sorting a million floats.

The dot product. Codes are int8 and the query is quantized to int16 (:func:`quantize_query`), so
``codes[i] · q`` is a sum of int16 x int16 products in int32: LLVM turns the one-row loop into
``pmaddwd``, 16 products per instruction. Measured at 1M x 384 on this machine, in the same run: the
float32-query loop 0.71x the float32 matvec's time, the int16-query loop 0.49x; an int8 query
(``q8``) was no faster and coarser. :func:`scan` takes the rows four at a time (one pass over ``q``
serves four dot products; a block none of whose rows passes the gate is skipped): that loop
compiles to ``vpmulld`` on int32 lanes, yet on one thread it runs as fast as a loop that only sums
the same bytes (40 against 38 ms, 1M rows, Intel Xeon of 2026-12-07) and faster than the one-row
``pmaddwd`` loop (57 ms): the pass waits on memory, and four rows at a time keep more of it in
flight. The rows go by chunks (:data:`CHUNK`) to plain loops (:func:`_gate_rows`, vectorized
without branches; :func:`_dot_rows`; one loop per score term): at 1M rows, two threads, the same
store ranked by both forms in turn in one process (the machine busy: other processes used 0.8 of
its 2 CPUs), the scan took 75 ms against 90 ms for one parallel loop over blocks of four (similarity
only) and 79 against 89 ms (default weights), the float32 floor 140 ms in that run.
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

__all__ = [
    "GATE", "GATE_SCORE", "P_ACCESS", "P_FLOOR", "P_NOW", "P_NS", "P_PRIVATE", "P_PROTECTED", "P_PUBLIC",
    "P_REQ", "P_VALID", "SCORE", "compile_kernels", "jit_seconds", "neighbours", "quantize_query", "scan",
    "top_values",
]  # fmt: skip

prange = range  # numba.prange once compile_kernels() ran (the parallel loop of the kernels)
_KERNELS: dict[str, Any] = {}  # name -> compiled kernel; "numba" -> the module; "seconds" -> compile time
US_PER_HOUR = 3.6e9  # the index's time unit (epoch microseconds) -> hours

# the int64 parameter vector `p` of scan's gate: what the gate asks, as codes (-1: no such condition)
P_NS, P_REQ, P_PUBLIC, P_PROTECTED, P_PRIVATE, P_ACCESS, P_VALID, P_FLOOR, P_NOW = range(9)
GATE, GATE_SCORE, SCORE = 0, 1, 2  # scan's modes: the mask only; the mask and the scores; the scores
CHUNK = 1024  # rows per task of scan's parallel loop


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


def scan(mode, gate_cols, status_ok, p, codes, scale, q, qscale, importance, last_access, keyword,
         w, n, mask, out):  # fmt: skip
    """One pass over rows ``[0, n)``: the read gate, the int8 cosine and the hybrid score.

    ``mode`` :data:`GATE` writes ``mask[i]`` (row ``i`` passes the gate) and returns how many pass;
    :data:`GATE_SCORE` also writes ``out[i]``, the float32 hybrid score of a passing row and ``-inf``
    elsewhere; :data:`SCORE` reads ``mask`` instead of applying the gate (numpy built it, or the
    keyword score needed it first).

    The gate: ``gate_cols`` = (namespace, status, access, owner, creator codes; valid from, valid
    until, created, expiry instants); ``status_ok[status + 1]`` says which statuses pass (index 0:
    erased rows); ``p`` holds the rest (``P_*``): namespace code (-1: any), requester code and the
    access levels' codes (``p[P_ACCESS]`` 0: no requester), ``p[P_VALID]`` (valid and written at
    ``p[P_NOW]``), ``p[P_FLOOR]`` (not expired at ``p[P_NOW]``). These are the rules of
    :meth:`~memkit.store.index_columns.IndexColumns.mask`; a test compares the two on random stores.

    The score: ``w`` = (similarity, importance, recency, keyword weights, recency time scale in
    hours); a zero weight skips its term (``keyword`` may then be empty). The cosine is
    ``scale[i] · qscale · (codes[i] · q)`` with ``q`` the int16 query (:func:`quantize_query`);
    recency is ``exp(-max(hours since last access, 0) / time scale)`` (:func:`memkit.decay.recency`).

    The rows go by chunks of :data:`CHUNK`, one task of the parallel loop each, in plain loops
    (:func:`_gate_rows`, :func:`_score_rows`) that LLVM compiles as it would alone.
    """
    # rows let through, as a reduction: an array of counts and its sum were parallel regions of their
    # own (numba's parfors), each waiting for both threads: 20 ms on a busy machine
    count = 0
    for c in prange((n + CHUNK - 1) // CHUNK):
        i0 = c * CHUNK
        i1 = min(i0 + CHUNK, n)
        if mode == SCORE:
            k = _score(i0, i1, codes, scale, q, qscale, importance, last_access, keyword, w, p[P_NOW], mask,
                       out)  # fmt: skip
        else:
            k = _gate(i0, i1, gate_cols, status_ok, p, mask)
            if mode == GATE_SCORE:
                _score(i0, i1, codes, scale, q, qscale, importance, last_access, keyword, w, p[P_NOW],
                       mask, out)  # fmt: skip
        count += k
    return count


def _gate_rows(i0, i1, gate_cols, status_ok, p, mask):
    """:func:`scan`'s read gate over rows ``[i0, i1)`` into ``mask`` -> how many pass. One loop
    without branches (LLVM vectorizes it; every column streams at once): a condition the gate does
    not ask is or-ed with True."""
    ns, status, access, owner, creator, valid_from, valid_until, created, expire = gate_cols
    now, want_ns, req = p[P_NOW], p[P_NS], p[P_REQ]
    public, protected, private = p[P_PUBLIC], p[P_PROTECTED], p[P_PRIVATE]
    any_ns, anyone, any_time, no_floor = want_ns == -1, p[P_ACCESS] == 0, p[P_VALID] == 0, p[P_FLOOR] == 0
    count = 0
    for i in range(i0, i1):
        a = access[i]
        ok = (
            status_ok[status[i] + 1]
            & (any_ns | (ns[i] == want_ns))
            # memkit.access.readable_mask, over codes
            & (
                anyone
                | (a == public)
                | ((a == protected) & (owner[i] == req))
                | ((a == private) & (creator[i] == req))
            )
            # valid in [from, until), and written by then
            & (any_time | ((valid_from[i] <= now) & (now < valid_until[i]) & (created[i] <= now)))
            & (no_floor | (now <= expire[i]))  # strength >= the default floor until `expire`
        )
        mask[i] = ok
        count += np.int64(ok)
    return count


def _dot_rows(i0, i1, codes, q, mask, out):
    """``out[i] = codes[i] · q`` (int32) for the rows ``i`` of ``[i0, i1)`` in ``mask`` (others: 0)
    -> how many are in ``mask``. Four rows at a time (one pass over ``q`` serves four dot products);
    a block of four none of whose rows is in ``mask`` is skipped."""
    dim, count = q.shape[0], 0
    for i in range(i0, i1, 4):
        m0 = mask[i]
        if i + 4 > i1:  # the last rows, fewer than 4
            for r in range(i, i1):
                acc = np.int32(0)
                if mask[r]:
                    count += 1
                    for j in range(dim):
                        acc = np.int32(acc + np.int32(codes[r, j]) * np.int32(q[j]))
                out[r - i0] = acc
            break
        m1, m2, m3 = mask[i + 1], mask[i + 2], mask[i + 3]
        count += (1 if m0 else 0) + (1 if m1 else 0) + (1 if m2 else 0) + (1 if m3 else 0)
        a0 = np.int32(0)  # (a row not in the mask is multiplied too: cheaper than a branch)
        a1 = np.int32(0)
        a2 = np.int32(0)
        a3 = np.int32(0)
        if m0 or m1 or m2 or m3:
            for j in range(dim):  # subtle: the casts keep int32 lanes (numba widens ints to int64)
                qj = np.int32(q[j])
                a0 = np.int32(a0 + np.int32(codes[i, j]) * qj)
                a1 = np.int32(a1 + np.int32(codes[i + 1, j]) * qj)
                a2 = np.int32(a2 + np.int32(codes[i + 2, j]) * qj)
                a3 = np.int32(a3 + np.int32(codes[i + 3, j]) * qj)
        out[i - i0] = a0
        out[i - i0 + 1] = a1
        out[i - i0 + 2] = a2
        out[i - i0 + 3] = a3
    return count


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
_gate, _dot, _score = _gate_rows, _dot_rows, _score_rows


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


def _numba() -> Any:
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
    numba = _numba()
    prange = numba.prange  # the kernels' loops become parallel (resolved when each compiles)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        # numba warns (NumbaWarning) when it cannot write its cache, e.g. a read-only install:
        # then the kernels are simply compiled in each process, which is no reason to fail a caller
        warnings.simplefilter("ignore", numba.NumbaWarning)

        def jit(fn: Callable[..., Any], parallel: bool = True) -> Any:
            """``fn`` compiled, cached on disk where numba can write, else not cached."""
            try:
                return numba.njit(parallel=parallel, fastmath=True, cache=True)(fn)
            except RuntimeError:  # "cannot cache ... no locator available": nowhere writable
                return numba.njit(parallel=parallel, fastmath=True)(fn)

        global _gate, _dot, _score
        _gate = jit(_gate_rows, False)  # scan calls these (resolved when scan compiles)
        _dot = jit(_dot_rows, False)
        _score = jit(_score_rows, False)
        k = {"scan": jit(scan), "neighbours": jit(neighbours), "top_values": jit(top_values, False)}
        # compile now, on one row of the real types, so that the first search pays nothing more
        i8, i32, i64 = (np.zeros(1, t) for t in (np.int8, np.int32, np.int64))
        f32, f64, ok = np.zeros(1, np.float32), np.zeros(1), np.ones(1, bool)
        cols = (i32, i8, i8, i32, i32, i64, i64, i64, i64)
        k["scan"](GATE, cols, ok, np.zeros(9, np.int64), np.zeros((1, 1), np.int8), f32,
                  np.zeros(1, np.int16), 1.0, f64, i64, f64, np.zeros(5), 1, ok, f32)  # fmt: skip
        k["neighbours"](f32, i64, i64, i64, i64, 1.0, 1.0, 1, f32.copy())
        k["top_values"](f32, 1, np.full(1, -np.inf, np.float32))
    k["seconds"], k["numba"] = time.perf_counter() - t0, numba
    _KERNELS.update(k)
    return _KERNELS


def jit_seconds() -> float | None:
    """Seconds the kernels took to compile (or load from cache) in this process; None before."""
    return _KERNELS.get("seconds")
