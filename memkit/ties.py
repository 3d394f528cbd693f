"""Near ties: the order in which hits within a step of each other rank newest first (``Weights.tie``).

The rule, pure and vectorized, and the one place it is written: search (both passes of every index
kind), :func:`memkit.evaluate.rank`, the :class:`~memkit.views.Reranker` and the LangGraph store
all order hits with it. Scores are counted down from the best one in steps of ``tie · |best|``::

    step = floor((best − score) / (tie · |best|) + TIE_SNAP)

A smaller step ranks first; within a step the newer memory (smaller age, hours since it was
written) does, then the higher score, then the lower index. ``tie = 0`` is the plain score order
(exact ties newest first). ``-inf`` (not a candidate) stays last.

``TIE_SNAP`` (a thousandth of a step) decides a score that lies exactly on a step boundary (it
moves every boundary up by a thousandth of a step: a score within 0.1% of a step above a boundary
counts as on it; consistent in every place the rule is used). With the
default weights such scores are common, not rare: a memory that scores only through its neighbour,
the best hit, scores ``0.8 ×`` that hit's score, exactly two steps of 0.1 below it (and a memory
scoring 0 is exactly ``1 / tie`` steps below any best). Computed, the ratio is
``1.9999999`` or ``2.0000001`` depending on the weights' scale and on float32 or float64, so
without the snap the memory's step, and the ranking, changed when every weight was multiplied by
the same factor, and evaluation (float32) disagreed with search (float64). With it, a ratio within
float rounding of a whole number lands in the step that number names, at any scale, in either
precision.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TIE_SNAP", "tie_order", "tie_step", "tie_steps", "top_k", "top_k_best", "top_k_rows"]

# subtle: far above float32's rounding of the ratio (~1e-6 at tie 0.1, ~1e-4 at tie 0.005) and far
# below any difference of score that means something: it only decides where an exact boundary goes
TIE_SNAP = 1e-3
_FEW = 2048  # top_k: up to this many scores, every step is computed (no superset by score first)


def tie_step(best: np.ndarray | float, score: np.ndarray | float, width: np.ndarray | float) -> np.ndarray:
    """The step of ``score`` counted down from ``best`` in steps of ``width`` (> 0):
    ``floor((best − score) / width + TIE_SNAP)``; broadcasts.

    >>> tie_step(1.0, np.array([1.0, 0.95, 0.9, 0.8, 0.8 * (1 + 1e-9)]), 0.1).tolist()
    [0.0, 0.0, 1.0, 2.0, 2.0]
    """
    return np.floor((best - score) / width + TIE_SNAP)


def tie_steps(scores: np.ndarray, tie: float | np.ndarray) -> np.ndarray:
    """Every score's step along the last axis (:func:`tie_step` from the best finite score, width
    ``tie · |best|``); ``-score`` where the width is 0 (``tie=0``: only exact ties are alike);
    ``inf`` for a score that is not finite. ``tie``: a scalar, or ``(g, 1)`` for a grid of rows.

    >>> tie_steps(np.array([0.5, 0.49, 0.4, -np.inf]), 0.05).tolist()
    [0.0, 0.0, 4.0, inf]
    """
    finite = np.isfinite(scores)
    if scores.ndim == 1 and np.ndim(tie) == 0 and scores.size and finite.all():  # a search's (fewer calls)
        return _finite_steps(scores, float(tie))
    best = np.max(np.where(finite, scores, -np.inf), axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):  # (a row with no finite score: 0 · inf)
        width = np.asarray(tie, dtype=np.float64) * np.abs(best)  # relative: the same at any weight scale
        step = np.where(width > 0, tie_step(best, scores, np.where(width > 0, width, 1.0)), -scores)
    return np.where(finite, step, np.inf)


def _finite_steps(scores: np.ndarray, tie: float) -> np.ndarray:
    """:func:`tie_steps` of one row of scores, every one finite (no check: top_k's, a fixed cost)."""
    top = scores.max()  # the same numbers as tie_steps' grid: best - scores in the scores' dtype, / a float64
    width = np.float64(tie * abs(float(top)))
    return np.floor((top - scores) / width + TIE_SNAP) if width > 0 else (-scores).astype(np.float64)


def _ordered(scores: np.ndarray, steps: np.ndarray, age: np.ndarray, finite: bool = False) -> np.ndarray:
    """The order by (step, age, −score, index) along the last axis; ``steps`` from :func:`tie_steps`
    (``finite``: every score is, as top_k's: no NaN to turn into -inf first). The index needs no
    key of its own: lexsort is stable, so rows alike in every key keep their order."""
    if np.shape(age) != scores.shape:  # (a search's: one row, its ages; no view)
        age = np.broadcast_to(age, scores.shape)
    neg = -scores if finite else -np.where(np.isfinite(scores), scores, -np.inf)
    return np.lexsort((neg, age, steps), axis=-1)


def tie_order(scores: np.ndarray, age: np.ndarray, tie: float | np.ndarray) -> np.ndarray:
    """The order of ``scores`` (along the last axis) with near ties ranked newest first (module doc).

    >>> tie_order(np.array([0.50, 0.49, 0.30]), np.array([10.0, 1.0, 0.0]), 0.05).tolist()
    [1, 0, 2]
    >>> tie_order(np.array([0.50, 0.49, 0.30]), np.array([10.0, 1.0, 0.0]), 0.0).tolist()
    [0, 1, 2]
    """
    return _ordered(scores, tie_steps(scores, tie), age)


def top_k(
    scores: np.ndarray, k: int, n_valid: int | None = None, *, age: np.ndarray | None = None, tie: float = 0.0
) -> np.ndarray:
    """Indices of the ``k`` largest finite scores, best first (ties broken by lower index).

    ``-inf`` marks rows that must not be returned; pass ``n_valid`` (how many are finite) when you
    know it, to skip counting. With ``age`` (hours since each memory was written), near ties rank
    newest first (:func:`tie_order`, step ``tie``); ``age`` may be any object that indexes like an
    array (the search index computes only the ages asked for).

    >>> top_k(np.array([0.1, 0.9, -np.inf, 0.5]), 3).tolist()
    [1, 3, 0]
    >>> top_k(np.array([0.1, 0.9, 0.895, 0.5]), 2, age=np.array([0.0, 5.0, 1.0, 0.0]), tie=0.01).tolist()
    [2, 1]
    """
    return _top_k(scores, k, n_valid, age, tie)[0]


def top_k_best(
    scores: np.ndarray, k: int, n_valid: int | None = None, *, age: np.ndarray | None = None, tie: float = 0.0
) -> tuple[np.ndarray, int]:
    """:func:`top_k`, and ``int(np.argmax(scores))`` (the best score's first row, which a cut by
    newest first may leave out): over many scores its superset already holds it, so the best row
    comes without a second pass over all of them (the search's first pass: a fixed cost).

    >>> age = np.array([0.0, 5.0, 1.0, 0.0])
    >>> rows, best = top_k_best(np.array([0.1, 0.9, 0.895, 0.5]), 1, age=age, tie=0.01)
    >>> rows.tolist(), best
    ([2], 1)
    """
    rows, best = _top_k(scores, k, n_valid, age, tie)
    return rows, int(np.argmax(scores)) if best is None else best


def _top_k(
    scores: np.ndarray, k: int, n_valid: int | None, age: np.ndarray | None, tie: float
) -> tuple[np.ndarray, int | None]:
    """:func:`top_k` -> its rows, and the best score's first row when the superset gave it (else None)."""
    n_ok = int(np.count_nonzero(np.isfinite(scores))) if n_valid is None else n_valid
    if n_valid is None and n_ok < len(scores):  # NaN or +inf: never ranked (the k largest *finite*
        scores = np.where(np.isfinite(scores), scores, -np.inf)  # scores); a partition sorts NaN last
    k = min(k, n_ok)
    if k <= 0:
        return np.empty(0, dtype=np.int64), None
    if age is None:
        if k < len(scores):  # every row at least the k-th score (rows tied with it too: the lower win;
            # negated, a NaN a given n_valid did not count sorts last, out of the k best)
            part = np.flatnonzero(scores >= -np.partition(-scores, k - 1)[k - 1])
        else:
            part = np.arange(len(scores))
        order = np.lexsort((part, -scores[part]))  # score desc, then index asc
        return part[order][:k], None
    # every row that could rank above the k-th under tie_order has a step at most the k-th's (steps
    # fall as scores rise; tie 0: a score at least the k-th's, so exact ties go to the newer row)
    if n_ok == len(scores) <= _FEW:  # few, all finite (the exact stage's): every row's step at once,
        steps = _finite_steps(scores, tie)  # the k-th's the k-th smallest (steps never rise with the score)
        part = np.flatnonzero(steps <= np.partition(steps, k - 1)[k - 1])  # no superset to narrow
        return part[_ordered(scores[part], steps[part], age[part], finite=True)][:k], None
    # only the k best scores' values count here (which of equal ones: alike), not their rows: the
    # last k of a partition (no negated copy of every score)
    top = np.partition(scores, len(scores) - k)[len(scores) - k :] if k < len(scores) else scores
    last = float(_finite_steps(top, tie).max())  # the k-th's step (k <= n_ok: finite): part holds the best
    best = float(top.max())
    width = tie * abs(best)
    if width > 0:  # one comparison over all rows, with a margin wider than float32 rounding (a
        # superset), then the rule's own steps on the few left
        reach = (last + 1.0) * width
        part = np.flatnonzero(scores >= best - reach * (1.0 + 1e-4) - 1e-6 * abs(best) - 1e-30)
    else:
        part = np.flatnonzero(np.isfinite(scores) & (scores >= -last))
    top = scores[part]
    first = int(part[np.argmax(top)])  # rows ascending, every best score among them: np.argmax's row
    steps = tie_steps(top, tie)  # the superset holds the best score: the same steps
    keep = steps <= last
    part, steps = part[keep], steps[keep]
    return part[_first_ordered(top[keep], steps, age[part], k)], first


def _first_ordered(scores: np.ndarray, steps: np.ndarray, age: np.ndarray, k: int) -> np.ndarray:
    """``_ordered(scores, steps, age, finite=True)[:k]`` without ordering every row: key by key (step,
    age, −score), the rows below the k-th value are in, the rows equal to it are narrowed by the next
    key, and rows alike in every key go in index order; only the k chosen are then ordered. (Many rows
    share the k-th's step when one term dominates the score: a bulk load of one importance and one
    write time under default weights put 100k rows there, and ordering them all took ~2.6 ms.)"""
    if len(scores) <= 4 * k:
        return _ordered(scores, steps, age, finite=True)[:k]
    age = np.asarray(age)
    rows, chosen, need = np.arange(len(scores)), [], k
    for key in (steps, age, -scores):
        vals = key[rows]
        kth = np.partition(vals, need - 1)[need - 1]
        same = vals == kth if kth == kth else np.isnan(vals)  # a NaN age: last and alike, as in lexsort
        chosen.append(rows[vals < kth if kth == kth else ~same])
        need -= len(chosen[-1])
        rows = rows[same]  # ascending, as `rows` was
        if len(rows) <= need:
            break
    keep = np.sort(np.concatenate([*chosen, rows[:need]]))  # index order: lexsort's last tie-break
    return keep[_ordered(scores[keep], steps[keep], age[keep], finite=True)]


def top_k_rows(scores: np.ndarray, k: int, age: np.ndarray, tie: float) -> np.ndarray:
    """Each row's top ``k`` under :func:`tie_order`: ``(q, n)`` scores, ``(n,)`` ages -> ``(q,
    min(k, n))`` column indices, best first; ``-1`` past a row's finite scores.

    Exact: every column that could rank in a row's top ``k`` has a step at most the row's ``k``-th
    smallest, so only those are ordered (a shortlist of a fixed size, by score or by newness, can
    cut hits the final order keeps: many memories in the first step, all written at one time).

    >>> top_k_rows(np.array([[0.5, 0.49, 0.3], [0.1, -np.inf, -np.inf]]), 2, np.array([10.0, 1.0, 0.0]),
    ...            0.05).tolist()
    [[1, 0], [0, -1]]
    """
    q, n = scores.shape
    kk = min(k, n)
    out = np.empty((q, kk), dtype=np.int64)
    if kk == 0 or q == 0:
        return out
    steps = tie_steps(scores, tie)  # (q, n)
    last = np.partition(steps, kk - 1, axis=1)[:, kk - 1 : kk]  # (q, 1): the k-th smallest step
    need = (steps <= last).sum(axis=1)  # (q,) how many columns each row must order
    cap = max(4 * kk, 64)  # most rows need a few; the few that need many (a flat first step) apart
    for rows in (need <= cap, need > cap):
        if rows.any():
            out[rows] = _top_rows(scores[rows], steps[rows], np.asarray(age), kk, int(need[rows].max()))
    return np.where(np.isfinite(np.take_along_axis(scores, out, axis=1)), out, -1)


def _top_rows(scores: np.ndarray, steps: np.ndarray, age: np.ndarray, k: int, wide: int) -> np.ndarray:
    """:func:`top_k_rows` of rows that each need at most ``wide`` columns ordered -> ``(q, k)``."""
    q, n = scores.shape
    if wide < n:  # the `wide` smallest steps of each row, back in column order (index breaks ties)
        part = np.sort(np.argpartition(steps, wide - 1, axis=1)[:, :wide], axis=1)  # (q, wide)
    else:
        part = np.broadcast_to(np.arange(n), (q, n))
    vals, st = np.take_along_axis(scores, part, axis=1), np.take_along_axis(steps, part, axis=1)
    return np.take_along_axis(part, _ordered(vals, st, age[part])[:, :k], axis=1)
