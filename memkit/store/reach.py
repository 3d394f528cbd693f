"""Which rows can reach a first pass's shortlist once neighbour expansion is added, so that the
expansion is computed for those rows only (:meth:`memkit.store.index.SearchIndex.rank`).

Neighbour expansion adds to each candidate ``λ ·`` its neighbours' best score
(:func:`memkit.scoring.neighbour_score`): over every row, that is two (four, with ``neighbour2``)
gathers through the adjacency, and then the shortlist's selection over every row. At 100k rows that
is ~1.5 ms after the matrix product, a third of the product itself. But a row's boost is at most
``λ(1 + λ₂)`` times the best score among its neighbours, so a row whose own score and whose
neighbours' scores are all below ``h`` ends below ``h · (1 + λ(1 + λ₂))``. Given a lower bound ``T``
of the shortlist's last final score (the ``size``-th best final score of *some* rows), every row that
can be shortlisted is one of the rows scoring at least ``h = (T − one tie step) / (1 + λ(1 + λ₂))``,
or a neighbour of one (the adjacency is symmetric: :func:`memkit.scoring.adjacent`). Those rows get
their boost, exactly as the full pass computes it (the same float32 operations on the same values),
and the shortlist is chosen among them: the same rows, in the same order.

:func:`neighbour_reach` finds ``T`` in one or two rounds: a guess of ``h`` from a sample of the
scores gives rows whose final scores bound ``T``; if the ``h`` that bound implies is lower than the
guess, a second round takes the rows at the lower ``h``. It gives up (None: the full pass runs) when
the bound is useless: no positive score, or most rows within reach. Without second neighbours (the
default weights) the rows in reach are pruned too (:func:`_pruned`): a neighbour of a high row whose
own score is noise cannot reach the shortlist and is left out before its own neighbours are read.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["neighbour_reach"]

AT_LEAST = 16_384  # fewer rows: the full pass is cheap and the sample too small to guess from
_SAMPLE = 4_096  # scores sampled (evenly spaced) for the first guess of h
_GUESS = 0.03  # the first guess takes about this share of the rows (or 4 · size, if more)
_MOST = 8  # more than one row in this many within reach: the full pass (as cheap, and no rounds)


def neighbour_reach(
    score: np.ndarray, adj: tuple[Any, ...], lam: float, lam2: float, size: int, tie: float,
    every: bool = False,
) -> tuple[np.ndarray, np.ndarray] | None:  # fmt: skip
    """The rows of ``score`` (every row's float32 first-pass score, ``-inf`` off the mask) that can be
    among the ``size`` best once ``lam ·`` :func:`~memkit.scoring.neighbour_score` (``adj``: prev,
    next, prev2, next2; ``lam2``: the second neighbours' share) is added and ranked with near-tie
    step ``tie`` -> ``(rows ascending, their final float32 scores)``, or None when the bound does
    not narrow them (then every row is expanded). ``every``: every row is a candidate (no ``-inf``).

    The final scores are those the full pass gives the same rows, bit for bit, and every row the
    full pass could shortlist is among ``rows`` with a margin wider than float32 rounding."""
    n = len(score)
    if n < AT_LEAST or size >= n // _MOST:
        return None
    top = float(score.max()) if lam2 else np.inf  # (without lam2: the best of the high rows, below)
    if not 0.0 < top:  # (NaN fails too) no positive score: the bound says nothing
        return None
    grow = 1.0 + lam * (1.0 + lam2)  # a final score is at most this times the best of its own and neighbours'
    sample = score[:: max(1, n // _SAMPLE)]
    take = min(len(sample), max(4 * size * len(sample) // n + 1, int(len(sample) * _GUESS)))
    guess = float(np.partition(sample, len(sample) - take)[len(sample) - take])
    if not guess > 0.0:
        return None
    # the best final score is at most top · grow, so a tie step is at most `step`; margins cover the
    # float32 rounding of the sums (relative 1e-7 a step) and of the comparison with h
    h = guess
    for _ in range(2):
        if lam2:
            near = _around(score, adj, h, lam, lam2, every)
        else:  # (the default weights) the neighbours that cannot reach the shortlist left out; the high
            near = _pruned(score, adj, h, lam, size, tie, grow)  # rows (h <= guess) hold the best score
            top = np.inf if near is None else near[2]
        if near is None or len(near[0]) < size or not top < np.inf:
            return None
        rows, final = near[:2]
        step, slack = tie * top * grow * 1.001, 1e-5 * top * grow
        bound = float(np.partition(final, len(final) - size)[len(final) - size])  # <= the size-th best
        need = (bound - step - slack) / (grow * (1.0 + 1e-5))
        if need >= h:  # every row that can be shortlisted is within reach of h: among rows
            return rows, final
        if not need > 0.0:
            return None
        h = need
    return None


def _around(
    score: np.ndarray, adj: tuple[Any, ...], h: float, lam: float, lam2: float, every: bool = False
) -> tuple[np.ndarray, np.ndarray] | None:
    """The candidate rows scoring at least ``h`` and their neighbours (those ``lam2`` reaches too) ->
    ``(rows ascending, final scores)``; None when more than one row in :data:`_MOST` would be.
    ``every``: every row is a candidate (no ``-inf`` in ``score``: no filter)."""
    n = len(score)
    lo = np.float32(h)  # h as a float32 no larger than h (every row scoring at least h is high)
    high = np.flatnonzero(score >= (lo if lo <= h else np.nextafter(lo, np.float32(-np.inf))))
    if len(high) > n // _MOST:
        return None
    reach = adj[:4] if lam2 else adj[:2]
    # a neighbour of a high row has it as its own other-side neighbour (the adjacency is symmetric)
    rows = np.sort(np.concatenate([high, *(a[high] for a in reach)]))  # (a few thousand: a sort
    rows = rows[np.concatenate(([True], rows[1:] != rows[:-1]))]  # beats marking n flags and finding them)
    rows = rows[np.searchsorted(rows, 0) :]  # -1: no neighbour
    own = score[rows]  # (read once: the filter's and the sum's)
    if not every:  # candidates only
        keep = own > -np.inf
        rows, own = rows[keep], own[keep]
    boost = _better(score, adj[0][rows], adj[1][rows])
    if lam2:
        boost += lam2 * _better(score, adj[2][rows], adj[3][rows])
    boost *= lam  # as the full pass: in place, float32
    own += boost  # (own is a copy: score[rows] + boost, the same float32 sums)
    return rows, own


def _pruned(
    score: np.ndarray, adj: tuple[Any, ...], h: float, lam: float, size: int, tie: float, grow: float
) -> tuple[np.ndarray, np.ndarray, float] | None:
    """:func:`_around` without second neighbours, less the neighbours that cannot be shortlisted.

    The rows scoring at least ``h`` ("high") get their final scores first: their ``size``-th best
    less :func:`neighbour_reach`'s ``step`` and ``slack`` (a tie step and rounding, from the best
    score) is a threshold ``t`` every row that can be shortlisted reaches. A neighbour ``j`` of a
    high row ``i`` that is not high itself ends at most at ``s(j) + lam · max(s(i), h)`` (its other
    neighbour is high, and then counted by that pair, or below ``h``): most are far below ``t`` (a
    random neighbour of a good match scores as noise) and are left out before their own neighbours
    are looked up. The rows kept hold every row whose final score reaches ``t``, so the ``size``
    best, the best row and the bound computed from them are :func:`_around`'s
    (``tests/store/test_neighbour_reach.py``) -> ``(rows ascending, final scores, the best score of
    all)`` (the high rows hold it: ``h`` is at most the best), or None as :func:`_around`."""
    n = len(score)
    lo = np.float32(h)  # as _around: every row scoring at least h (at least lo) is high
    lo = lo if lo <= h else np.nextafter(lo, np.float32(-np.inf))
    high = np.flatnonzero(score >= lo)
    if len(high) > n // _MOST:
        return None
    k = len(high)
    nb = np.concatenate([adj[0][high], adj[1][high]])  # the high rows' prev, then next (-1: none)
    got = score.take(nb)  # their scores, read once (-1 reads the last row: `none` below)
    none = nb < 0
    near = np.fmax(got, 0)  # _better's values: -1, -inf and a negative score count 0
    near[none] = 0
    boost = np.maximum(near[:k], near[k:])
    boost *= lam  # as the full pass: in place, float32
    raw = score[high]  # (no -inf: h > 0)
    final = raw + boost
    top = float(raw.max()) if k else np.inf  # (none: h above the best, the caller gives up)
    if k < size:  # no threshold yet: every neighbour is kept (as _around)
        t = -np.inf
    else:
        t = float(np.partition(final, k - size)[k - size])
        t = t - tie * top * grow * 1.001 - 1e-5 * top * grow  # (neighbour_reach's bound - step - slack)
    own = np.maximum(got, -1e30, dtype=np.float64)  # (-inf, off the mask: far below t)
    lift = lam * np.maximum(np.concatenate([raw, raw]), h, dtype=np.float64)  # each pair's high row
    # a margin far wider than the float32 rounding of the final sum; not high (those are in), a candidate
    keep = (own + lift + 1e-5 * (np.abs(own) + lift) >= t) & ~none & (own < lo) & (own > -1e30)
    if not keep.any():
        return high, final, top
    more = np.sort(nb[keep])
    more = more[np.concatenate(([True], more[1:] != more[:-1]))]  # once each
    extra = _better(score, adj[0][more], adj[1][more])
    extra *= lam
    extra += score[more]  # (the same float32 sum: addition commutes exactly)
    rows = np.concatenate([high, more])
    order = np.argsort(rows, kind="stable")
    return rows[order], np.concatenate([final, extra])[order], top


def _better(score: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`~memkit.scoring.neighbour_score`'s better neighbour of some rows, from their neighbours'
    scores alone (not a pass over every row): ``max(score[a], score[b])``, where ``-1`` (no
    neighbour), ``-inf`` (not a candidate) and a negative score count 0 (``score`` holds no NaN or
    +inf here: :func:`neighbour_reach` gives up first). The same float32 values, bit for bit.

    >>> s = np.array([0.5, -np.inf, 0.25], np.float32)
    >>> _better(s, np.array([-1, 0, 1]), np.array([2, -1, -1])).tolist()
    [0.25, 0.5, 0.0]
    """
    near = np.fmax(score.take(a), 0)  # (-1 reads the last row: set to 0 next)
    near[a < 0] = 0
    other = np.fmax(score.take(b), 0)
    other[b < 0] = 0
    return np.maximum(near, other, out=near)
