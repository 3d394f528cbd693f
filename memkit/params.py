"""Tunable parameters as frozen dataclasses.

Every field has a documented default (the source articles' numbers) and is validated in
``__post_init__``, which :func:`dataclasses.replace` re-runs, so an invalid setting can never exist:

>>> import dataclasses
>>> w = Weights()
>>> dataclasses.replace(w, recency=0.2).recency
0.2
>>> Weights(similarity=float("nan"))
Traceback (most recent call last):
...
memkit.errors.ValidationError: Weights.similarity: must be a finite number, got nan

Field metadata carries a slider range (``metadata["range"] == (min, max, step)``) so a widget panel can
be generated from the dataclass (see :func:`slider_ranges`).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass, field
from typing import Any

from .errors import ValidationError

__all__ = ["DecayParams", "ForgetParams", "KeywordParams", "Weights", "check_number", "slider_ranges"]


def _knob(default: float, lo: float, hi: float, step: float, doc: str) -> Any:
    return field(default=default, metadata={"range": (lo, hi, step), "doc": doc})


def check_number(
    name: str,
    value: Any,
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
) -> float:
    """Return ``value`` as a float, or raise ValidationError naming ``name``.

    Rejects bools, non-numbers, NaN and infinities, and values outside ``[lo, hi]``
    (``(lo, hi]`` with ``lo_open=True``).
    """
    # numbers.Real covers int, float and numpy scalars; bool is an int but never a valid number here
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValidationError(name, f"must be a number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v):
        raise ValidationError(name, f"must be a finite number, got {v}")
    if lo is not None and (v <= lo if lo_open else v < lo):
        raise ValidationError(name, f"must be {'>' if lo_open else '>='} {lo}, got {v}")
    if hi is not None and v > hi:
        raise ValidationError(name, f"must be <= {hi}, got {v}")
    return v


def _validate_fields(obj: Any) -> None:
    """Check each field against the bounds of its slider range's lower end (>= lo)."""
    for f in dataclasses.fields(obj):
        lo, _, _ = f.metadata["range"]
        v = check_number(f"{type(obj).__name__}.{f.name}", getattr(obj, f.name), lo=lo)
        object.__setattr__(obj, f.name, v)


@dataclass(frozen=True)
class Weights:
    """Weights of the hybrid score (DESIGN.md): ``score = similarity·cos + importance·imp +
    recency·rec + keyword·kw``. Each weight is >= 0 and at least one is positive. They need not sum
    to 1; :meth:`normalized` rescales them if you want scores in [0, 1]-ish units.
    """

    similarity: float = _knob(0.6, 0.0, 1.0, 0.05, "weight of cosine similarity to the query")
    importance: float = _knob(0.3, 0.0, 1.0, 0.05, "weight of the stored importance in [0, 1]")
    recency: float = _knob(0.1, 0.0, 1.0, 0.05, "weight of exp(-hours since last access / scale)")
    keyword: float = _knob(0.0, 0.0, 1.0, 0.05, "weight of the per-query scaled BM25 score")

    def __post_init__(self) -> None:
        _validate_fields(self)
        if self.total() <= 0:
            raise ValidationError("Weights", "at least one weight must be positive")

    def total(self) -> float:
        """Sum of the four weights."""
        return self.similarity + self.importance + self.recency + self.keyword

    def normalized(self) -> Weights:
        """The same proportions, summing to 1: ``Weights(1, 1, 0, 0).normalized().similarity == 0.5``."""
        t = self.total()
        return Weights(self.similarity / t, self.importance / t, self.recency / t, self.keyword / t)


@dataclass(frozen=True)
class DecayParams:
    """How memories fade and are reinforced.

    - ``time_scale_hours``: recency = exp(-hours_since_last_access / time_scale_hours); 168 h = 7 days.
    - ``min_strength``: retrieval floor; a memory whose strength
      (importance · 0.5^(age / half_life)) is below it is not recalled.
    - ``reinforce_step``: importance added on each hit (capped at 1.0).
    """

    time_scale_hours: float = _knob(168.0, 1.0, 24.0 * 90, 1.0, "recency time scale (hours)")
    min_strength: float = _knob(0.1, 0.0, 1.0, 0.01, "retrieval floor on decayed strength")
    reinforce_step: float = _knob(0.005, 0.0, 0.1, 0.001, "importance added per retrieval hit")

    def __post_init__(self) -> None:
        _validate_fields(self)
        check_number("DecayParams.time_scale_hours", self.time_scale_hours, lo=0.0, lo_open=True)
        check_number("DecayParams.min_strength", self.min_strength, hi=1.0)
        check_number("DecayParams.reinforce_step", self.reinforce_step, hi=1.0)


@dataclass(frozen=True)
class KeywordParams:
    """Okapi BM25 constants of the keyword score: ``k1`` saturates term frequency, ``b`` normalizes
    by document length (0 = none, 1 = full). Defaults are the textbook 1.5 and 0.75."""

    k1: float = _knob(1.5, 0.0, 3.0, 0.1, "term-frequency saturation")
    b: float = _knob(0.75, 0.0, 1.0, 0.05, "length normalization")

    def __post_init__(self) -> None:
        _validate_fields(self)
        check_number("KeywordParams.b", self.b, hi=1.0)


def slider_ranges(params: type) -> dict[str, tuple[float, float, float]]:
    """``{field: (min, max, step)}`` of a parameter dataclass, for building sliders.

    >>> slider_ranges(Weights)["similarity"]
    (0.0, 1.0, 0.05)
    """
    return {f.name: f.metadata["range"] for f in dataclasses.fields(params) if "range" in f.metadata}


@dataclass(frozen=True)
class ForgetParams:
    """A forgetting policy (see :mod:`memkit.forget`).

    - ``capacity``: live memories kept per namespace; above it the lowest forget-cost go first.
    - ``min_strength``: memories whose decayed strength is below it are dropped as weak.
    - ``drop_expired``: drop memories whose ``valid_until`` has passed.
    - ``cost_importance`` / ``cost_access``: forget-cost = cost_importance · importance +
      access_count / cost_access (the articles' 2 · importance + access_count / 1.1).
    """

    capacity: float = _knob(500, 1, 100_000, 1, "live memories kept per namespace")
    min_strength: float = _knob(0.1, 0.0, 1.0, 0.01, "strength below which a memory is dropped")
    drop_expired: bool = field(default=True, metadata={"doc": "drop memories past valid_until"})
    cost_importance: float = _knob(2.0, 0.0, 10.0, 0.1, "forget-cost weight of importance")
    cost_access: float = _knob(1.1, 0.1, 100.0, 0.1, "forget-cost divisor of access_count")

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            if "range" in f.metadata:
                lo, hi, _ = f.metadata["range"]
                v = check_number(f"ForgetParams.{f.name}", getattr(self, f.name), lo=lo, hi=hi)
                object.__setattr__(self, f.name, v)
        if self.capacity != int(self.capacity):
            raise ValidationError("ForgetParams.capacity", f"must be a whole number, got {self.capacity}")
        object.__setattr__(self, "capacity", int(self.capacity))
        if not isinstance(self.drop_expired, bool):
            raise ValidationError("ForgetParams.drop_expired", "must be a bool")
