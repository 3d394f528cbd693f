"""Decay and recency curves, pure and vectorized.

Two clocks run on every memory:

- **strength** fades from the moment a memory is written:
  ``strength = importance · 0.5^(age_hours / half_life_hours)`` — after one half-life it is half its
  importance, after two a quarter. A memory whose strength falls below the retrieval floor
  (``DecayParams.min_strength``; the articles' 0.1, memkit's default 0) is no longer recalled, and
  the forgetting policy (``ForgetParams.min_strength``, 0.05) drops it.
- **recency** measures how recently it was *used*:
  ``recency = exp(-hours_since_last_access / time_scale_hours)`` with a 168 h (7-day) time scale.

Worked examples (DESIGN.md), which the tests hold the code to:

>>> round(float(strength(0.80, 24.0, 90 * 24.0)), 4)   # importance 0.8, half-life 90 days, 1 day old
0.7939
>>> round(float(strength(0.60, 4.0, 2.0)), 4)          # importance 0.6, half-life 2 h, 4 h old
0.15

Every function takes scalars or numpy arrays that broadcast together; the ``*_expr`` forms build the
same formulas as polars expressions, for frames.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from .errors import ValidationError
from .schema import check_time

__all__ = [
    "age_hours_expr",
    "below_floor",
    "hours_until",
    "recency",
    "recency_expr",
    "recency_of",
    "strength",
    "strength_expr",
    "strength_of",
]

ArrayLike = float | np.ndarray


def _positive(name: str, value: ArrayLike) -> np.ndarray:
    """``value`` as float64, every element finite and > 0, or ValidationError naming ``name``."""
    arr = np.asarray(value, dtype=np.float64)
    if not (np.isfinite(arr) & (arr > 0)).all():
        bad = arr[~(np.isfinite(arr) & (arr > 0))].ravel()[0]
        raise ValidationError(name, f"must be finite and > 0, got {bad}")
    return arr


def _numbers(name: str, value: ArrayLike, lo: float = -np.inf, hi: float = np.inf) -> np.ndarray:
    """``value`` as float64 with every number in ``[lo, hi]``, or ValidationError naming ``name``.
    NaN passes through (a missing value, e.g. a null of a frame, stays missing in the result)."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValidationError(name, f"must be numbers, got {type(value).__name__}") from None
    bounded = lo > -np.inf or hi < np.inf
    if bounded and arr.size and not (arr.min() >= lo and arr.max() <= hi):  # two reductions; a number
        out = (arr < lo) | (arr > hi)  # out of range, or a NaN somewhere: look closer (NaN is neither)
        if out.any():
            raise ValidationError(name, f"must lie in [{lo}, {hi}], got {arr[out].ravel()[0]}")
    return arr


def strength(importance: ArrayLike, age_hours: ArrayLike, half_life_hours: ArrayLike) -> np.ndarray:
    """``importance · 0.5^(age_hours / half_life_hours)``; ages below 0 (written "in the future"
    relative to ``now``) count as 0, so strength never exceeds importance. Half-lives must be > 0.

    >>> strength(np.array([1.0, 1.0, 1.0]), np.array([0.0, 2.0, 4.0]), 2.0).tolist()
    [1.0, 0.5, 0.25]
    >>> strength(0.5, 1.0, 0.0)
    Traceback (most recent call last):
    ...
    memkit.errors.ValidationError: half_life_hours: must be finite and > 0, got 0.0
    """
    age = np.maximum(_numbers("age_hours", age_hours), 0.0)
    imp, hl = _numbers("importance", importance, 0.0, 1.0), _positive("half_life_hours", half_life_hours)
    try:
        np.broadcast_shapes(imp.shape, age.shape, hl.shape)
    except ValueError:
        shapes = f"{imp.shape} {age.shape} {hl.shape}"
        raise ValidationError("age_hours", f"shapes {shapes} do not broadcast") from None
    return strength_of(imp, age, hl)


def strength_of(importance: np.ndarray, age_hours: np.ndarray, half_life_hours: np.ndarray) -> np.ndarray:
    """:func:`strength`'s formula alone, on float64 arrays already valid (the search index's own
    columns: a search's fixed cost); :func:`strength` checks its arguments, then calls this.

    >>> strength_of(np.array([1.0, 1.0]), np.array([-1.0, 2.0]), np.array([2.0, 2.0])).tolist()
    [1.0, 0.5]
    """
    return importance * np.exp2(-np.maximum(age_hours, 0.0) / half_life_hours)


def recency(hours_since_access: ArrayLike, time_scale_hours: ArrayLike = 168.0) -> np.ndarray:
    """``exp(-hours_since_access / time_scale_hours)``, 1.0 right after an access. float32 input
    stays float32 (the search's first pass); anything else is computed in float64.

    >>> round(float(recency(168.0)), 4)   # one time scale (7 days) later: 1/e
    0.3679
    """
    h = np.asarray(hours_since_access)
    if h.dtype != np.float32:
        h = _numbers("hours_since_access", h)  # (float32 is the search's own, from integer times)
    return recency_of(h, _positive("time_scale_hours", time_scale_hours))


def recency_of(hours_since_access: np.ndarray, time_scale_hours: ArrayLike) -> np.ndarray:
    """:func:`recency`'s formula alone, on a float32 or float64 array and a time scale already
    valid (the search index's: a search's fixed cost); :func:`recency` checks, then calls this.

    >>> recency_of(np.array([-1.0, 0.0]), 168.0).tolist()
    [1.0, 1.0]
    """
    h = hours_since_access
    return np.exp(-np.maximum(h, h.dtype.type(0.0)) / h.dtype.type(time_scale_hours))


def hours_until(floor: ArrayLike, importance: ArrayLike, half_life_hours: ArrayLike) -> np.ndarray:
    """Age (hours) at which strength falls to ``floor``: ``half_life · log2(importance / floor)``.

    0 if the memory starts at or below the floor. Half-lives and the floor must be > 0.

    >>> round(float(hours_until(0.1, 0.6, 2.0)), 2)   # the 0.6 / 2 h memory is forgotten after ~5.17 h
    5.17
    """
    imp = _numbers("importance", importance, 0.0, 1.0)
    hl, fl = _positive("half_life_hours", half_life_hours), _positive("floor", floor)
    with np.errstate(divide="ignore", over="ignore"):  # a huge half-life lives "forever": inf
        t = hl * np.log2(imp / fl)
    return np.maximum(t, 0.0)


def below_floor(strength: Any, floor: float) -> Any:
    """``strength < floor``, on the exact strength: the one test of "below the floor" (a numpy
    array, a polars expression or Series, or a float). Every judge of it calls this — forget's
    ``weak``, ``memory_states``' ``faded``, the merge planner's ``_weak``, the analyzer's MK006 and the
    search's retrieval floor (whose index folds its default floor into the instant strength crosses
    it, :func:`hours_until`, to the microsecond) — so one memory is weak for all or for none. Round
    only what is shown: a strength of 0.0999997 rounds to 0.1, yet is below a floor of 0.1.

    >>> below_floor(np.array([0.0999997, 0.1, 0.15]), 0.1).tolist()
    [True, False, False]
    """
    return strength < floor


def _col(x: str | pl.Expr) -> pl.Expr:
    """A column name or an expression, as an expression."""
    return pl.col(x) if isinstance(x, str) else x


def age_hours_expr(column: str | pl.Expr, now: datetime) -> pl.Expr:
    """Hours from a timestamp column to ``now`` (a timezone-aware datetime), as Float64."""
    now = check_time("now", now)  # in UTC, as the columns are (polars compares no two zones)
    return (pl.lit(now) - _col(column)).dt.total_microseconds().cast(pl.Float64) / 3.6e9


def _batches(fn: Any, name: str, **columns: str | pl.Expr) -> pl.Expr:
    """``fn`` applied to whole columns (numpy arrays, by keyword) as a polars expression: the
    formulas live once, in the numpy functions above, and the expressions call them.

    polars re-raises an error of the function with its message only, so a ValidationError
    surfaces as a ValueError naming the field.
    """

    def apply(s: pl.Series) -> pl.Series:
        """Run ``fn`` on the struct's fields as numpy arrays -> a Series; memkit's ValidationError
        becomes the ValueError polars expects from a UDF."""
        args = {k: s.struct.field(k).to_numpy() for k in columns}
        try:
            return pl.Series(np.asarray(fn(**args), dtype=np.float64))
        except ValidationError as e:
            raise ValueError(str(e)) from None

    parts = {k: _col(v).cast(pl.Float64) for k, v in columns.items()}
    return pl.struct(**parts).map_batches(apply, return_dtype=pl.Float64).alias(name)


def strength_expr(
    importance: str | pl.Expr = "importance",
    age_hours: str | pl.Expr = "age_hours",
    half_life_hours: str | pl.Expr = "half_life_hours",
) -> pl.Expr:
    """:func:`strength` as a polars expression over columns (names or expressions); it calls
    :func:`strength` itself.

    >>> df = pl.DataFrame({"importance": [0.8, 0.6], "age_hours": [24.0, 4.0],
    ...                    "half_life_hours": [2160.0, 2.0]})
    >>> df.select(strength_expr().round(4).alias("s"))["s"].to_list()
    [0.7939, 0.15]
    """
    return _batches(
        strength, "strength", importance=importance, age_hours=age_hours, half_life_hours=half_life_hours
    )


def recency_expr(
    hours_since_access: str | pl.Expr = "hours_since_access", time_scale_hours: float = 168.0
) -> pl.Expr:
    """:func:`recency` as a polars expression (it calls :func:`recency`).

    >>> df = pl.DataFrame({"hours_since_access": [0.0, 168.0]})
    >>> df.select(recency_expr().round(4))["recency"].to_list()
    [1.0, 0.3679]
    """
    return _batches(lambda h: recency(h, time_scale_hours), "recency", h=hours_since_access)
