"""The check of a first pass's cut (:meth:`memkit.store.index.SearchIndex.rank`): which rows the
first pass left out could rank above the ``k``-th hit once scored exactly (:func:`missed`), the hours
since the rows it looks at were written (:class:`Hours`), and the float32 rows a widened pass reads
(:func:`vectors_of`: only those the pass before did not)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ties import tie_step
from .codes import US_PER_HOUR

__all__ = ["Hours", "Read", "missed", "vectors_of"]

Read = tuple[np.ndarray, np.ndarray]  # rows, and their float32 vectors (len(rows), dim)


def vectors_of(ix: Any, rows: np.ndarray, known: Read | None) -> np.ndarray:
    """``ix.vectors(rows)`` (``ix`` a :class:`~memkit.store.index.SearchIndex`), where the rows of
    ``known`` (rows, their vectors) are taken from it: an int8 index reads each row from DuckDB, a
    quarter of a millisecond a row at 1M -> ``(len(rows), dim)`` float32."""
    if known is None or not len(known[0]):
        return ix.vectors(rows)
    krows, kvec = known
    order = np.argsort(krows, kind="stable")
    at = order[np.minimum(np.searchsorted(krows[order], rows), len(krows) - 1)]
    hit = krows[at] == rows
    if hit.all():
        return kvec[at]
    vec = np.empty((len(rows), kvec.shape[1]), dtype=np.float32)
    vec[hit] = kvec[at[hit]]
    vec[~hit] = ix.vectors(rows[~hit])
    return vec


class Hours:
    """Hours since each scored row was written, computed for the rows :func:`memkit.scoring.top_k`
    looks up (the few near the cut: its tie rule), not for every row of the first pass (two passes
    over a million int64s). ``rows``: the scored rows' row numbers, or None when all are scored."""

    def __init__(self, now_us: int, created_us: np.ndarray, rows: np.ndarray | None) -> None:
        self.now_us, self.created_us, self.rows = now_us, created_us, rows

    def __getitem__(self, at: np.ndarray) -> np.ndarray:
        rows = at if self.rows is None else self.rows[at]
        return (self.now_us - self.created_us[rows]) / US_PER_HOUR


def missed(
    first: np.ndarray, cand: np.ndarray, exact: np.ndarray, best: np.ndarray, hours: Any, tie: float,
    err: float | None = None,
) -> np.ndarray:  # fmt: skip
    """The rows outside ``cand`` that could rank above the ``k``-th hit once scored exactly -> their
    row numbers (ascending; empty when the cut is sound).

    ``first``: every row's first-pass score (``-inf`` off the mask); ``exact``: the exact scores of
    ``cand``, whose top ``k`` are ``best`` (positions in cand, best first); ``hours[rows]``: hours
    since those rows were written. A row's exact score is at most its first-pass one plus ``err``:
    three times the largest first-pass error among ``cand`` (whose scores are known both ways;
    the int8 codes' rounding, or float32's), plus float32's rounding of the best score. Such a row
    could rank above the ``k``-th hit (:func:`memkit.scoring.tie_order`) if its earliest possible
    tie step (counted from the best score known, and never before the first) comes before the
    latest the ``k``-th's could be (counted from the highest best score any row could reach), or is
    the same and the row is newer, or as new and could score at least as much (tie 0: score at
    least the ``k``-th's). Rows of exactly the ``k``-th's first-pass score, where the scored ones of
    that score tie exactly too (identical memories), are left in the first pass's order."""
    if not len(best):
        return np.empty(0, np.int64)
    b, kth = float(exact.max()), float(exact[best[-1]])
    if err is None:  # (given: a guess of the error before any row is scored exactly)
        err = 3.0 * float(np.max(np.abs(first[cand] - exact)))
    err += 1e-6 * abs(b)
    width = tie * abs(b)
    if width > 0:  # the k-th's latest step: counted from the highest best score a row could reach
        scored, first[cand] = first[cand], -np.inf  # (the rows outside cand, without a copy of first)
        top = max(b, float(first.max()) + err)
        first[cand] = scored
        last = tie_step(top, kth, tie * abs(top))  # the rule's step (memkit.ties)
        low = b - (last + 1.0) * width  # below it, a row's earliest step (from b) is after the k-th's
    else:
        low = kth  # tie 0: a row below the k-th's score ranks after it
    rows = np.flatnonzero(first >= low - err)  # (r,): the cut's neighbourhood, a few rows
    rows = rows[cand[np.minimum(np.searchsorted(cand, rows), len(cand) - 1)] != rows]  # not yet scored
    if not len(rows):
        return rows
    up = first[rows].astype(np.float64) + err  # the most each could score exactly
    k_h, k_f = hours[cand[best[-1]]], first[cand[best[-1]]]
    keep = np.ones(len(rows), dtype=bool)  # tie 0: every row that could score at least the k-th's
    if width > 0:
        step = np.maximum(tie_step(b, up, width), 0.0)  # its earliest step (a new best: step 0)
        h = hours[rows]  # within the k-th's step the newer ranks first, then (as new) the higher score
        keep = (step < last) | ((step == last) & ((h < k_h) | ((h == k_h) & (up >= kth))))
    same = first[cand] == k_f  # an exact tie: scored rows of the k-th's very first-pass score all
    if same.sum() > 1 and np.ptp(exact[same]) == 0:  # score alike exactly (identical memories)
        keep &= ~((first[rows] == k_f) & (hours[rows] >= k_h))  # the first pass ordered them, as exactly
    return rows[keep]
