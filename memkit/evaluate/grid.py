"""The grid of a weight sweep (:func:`memkit.evaluate.sweep`): which parameters it may vary and
its points, from ``{name: values}`` (every combination) or a list of points; and the one check of a
ranking setting (:func:`check_setting`), so ``evaluate``, ``rank`` and ``sweep`` refuse a bad value
as ``search`` does: a :class:`~memkit.errors.ValidationError` naming it, never a raw TypeError or a
silent ranking."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ValidationError
from ..params import MAX_WEIGHT, MIN_HOURS, check_number

__all__ = ["HALF_LIFE_FLOOR", "SWEEP_KEYS", "WEIGHT_KEYS", "check_setting", "floor_of", "grid_points"]

WEIGHT_KEYS = ("similarity", "importance", "recency", "keyword", "neighbour", "tie", "neighbour2")
SWEEP_KEYS = (*WEIGHT_KEYS, "time_scale_hours", "half_life_hours", "min_strength")
# the strength floor of a point that sets half_life_hours and no min_strength: a half-life acts on a
# ranking only through the floor, so without one every half-life would rank alike (the articles' 0.1)
HALF_LIFE_FLOOR = 0.1
# each setting's range: (lo, hi, lo excluded). Weights as Weights takes them; the floor a strength in
# [0, 1] (search's and DecayParams' range); the time scale and a half-life at least MIN_HOURS, as the
# store's own
_RANGE = {
    **{w: (0.0, MAX_WEIGHT, False) for w in WEIGHT_KEYS},
    "min_strength": (0.0, 1.0, False),
    "time_scale_hours": (MIN_HOURS, None, False),
    "half_life_hours": (MIN_HOURS, None, False),
}


def check_setting(name: str, value: Any, field: str | None = None) -> float:
    """``value`` of the ranking setting ``name`` (one of :data:`SWEEP_KEYS`) as a float, or a
    ValidationError naming ``field`` (default ``name``): a number (not a bool, not a string), finite,
    in the setting's range.

    >>> check_setting("min_strength", 2.0)
    Traceback (most recent call last):
    ...
    memkit.errors.ValidationError: min_strength: must be <= 1.0, got 2.0
    """
    lo, hi, lo_open = _RANGE[name]
    return check_number(field or name, value, lo=lo, hi=hi, lo_open=lo_open)


def floor_of(source: Any, min_strength: float | None = None) -> float:
    """The strength floor to rank with: ``min_strength`` if given, else a store's own retrieval floor
    (``store.decay.min_strength``, what its search applies), else 0 (a frame or a Prepared)."""
    if min_strength is not None:
        return min_strength
    decay = getattr(source, "decay", None) if hasattr(source, "frame") else None  # a MemoryStore
    return 0.0 if decay is None else float(decay.min_strength)


def grid_points(
    grid: Mapping[str, Sequence[float]] | Sequence[Mapping[str, float]],
) -> list[dict[str, float]]:
    """A grid -> its points as dicts: ``{name: values}`` gives every combination, a list of dicts
    gives those points; every name must be one of :data:`SWEEP_KEYS`, every value a number in its
    range (:func:`check_setting`, the error naming ``grid.<name>``)."""
    try:
        if isinstance(grid, Mapping):
            keys = list(grid)
            points = [dict(zip(keys, vals, strict=True)) for vals in itertools.product(*grid.values())]
        else:
            points = [dict(p) for p in grid]
    except (TypeError, ValueError):  # a number where a list of values or a point belongs
        raise ValidationError("grid", "must map names to lists of values, or be a list of dicts") from None
    if not points:
        raise ValidationError("grid", "is empty")
    for p in points:
        bad = set(p) - set(SWEEP_KEYS)
        if bad:
            raise ValidationError("grid", f"unknown parameter(s) {sorted(bad)}; use {', '.join(SWEEP_KEYS)}")
    return [{name: check_setting(name, v, f"grid.{name}") for name, v in p.items()} for p in points]
