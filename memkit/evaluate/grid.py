"""The grid of a weight sweep (:func:`memkit.evaluate.sweep`): which parameters it may vary and
its points, from ``{name: values}`` (every combination) or a list of points."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ValidationError

__all__ = ["HALF_LIFE_FLOOR", "SWEEP_KEYS", "WEIGHT_KEYS", "floor_of", "grid_points"]

WEIGHT_KEYS = ("similarity", "importance", "recency", "keyword", "neighbour", "tie", "neighbour2")
SWEEP_KEYS = (*WEIGHT_KEYS, "time_scale_hours", "half_life_hours", "min_strength")
# the strength floor of a point that sets half_life_hours and no min_strength: a half-life acts on a
# ranking only through the floor, so without one every half-life would rank alike (the articles' 0.1)
HALF_LIFE_FLOOR = 0.1


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
    gives those points; every name must be one of :data:`SWEEP_KEYS`."""
    if isinstance(grid, Mapping):
        keys = list(grid)
        points = [dict(zip(keys, vals, strict=True)) for vals in itertools.product(*grid.values())]
    else:
        points = [dict(p) for p in grid]
    if not points:
        raise ValidationError("grid", "is empty")
    for p in points:
        bad = set(p) - set(SWEEP_KEYS)
        if bad:
            raise ValidationError("grid", f"unknown parameter(s) {sorted(bad)}; use {', '.join(SWEEP_KEYS)}")
    return points
