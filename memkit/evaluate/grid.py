"""Weight sweeps: :func:`sweep` evaluates a whole grid of weightings over one :class:`Prepared`
(embeddings and BM25 computed once), the tuning loop of lesson 09 and the README's LoCoMo tables."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from ..errors import ValidationError
from ..params import Weights
from .metrics import check_ks, summarize
from .retrieval import SWEEP_KEYS, WEIGHT_KEYS, as_prepared, query_metrics, rank, tuned

__all__ = ["sweep"]


def _grid_points(
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


def sweep(
    store_or_frame: Any,
    queries: pl.DataFrame | None = None,
    grid: Mapping[str, Sequence[float]] | Sequence[Mapping[str, float]] = (),
    *,
    k: int | Sequence[int] = (5, 10),
    by: str | None = "category",
    base: Weights | None = None,
    **prepare_kw: Any,
) -> pl.DataFrame:
    """Evaluate every point of ``grid`` -> a tidy frame: the point's parameters, ``by``, metrics.

    ``grid`` is a dict of value lists (their cartesian product) or a list of dicts, over
    ``similarity, importance, recency, keyword, neighbour, tie, neighbour2`` (unset ones come from ``base``),
    ``time_scale_hours`` (recency), ``half_life_hours`` and ``min_strength`` (the strength floor).
    Embeddings and BM25 are computed once; points whose weights are all zero are skipped. ``base`` and
    the time scale default to a store's own (what its search ranks with), else ``Weights()``.
    """
    ks = check_ks(k)
    base, scale = tuned(store_or_frame, base, None)
    prep = as_prepared(store_or_frame, queries, dict(prepare_kw))
    frames = []
    for p in _grid_points(grid):
        w = {f: p.get(f, getattr(base, f)) for f in WEIGHT_KEYS}
        if sum(w[f] for f in WEIGHT_KEYS[:4]) <= 0:  # neighbour and tie alone rank nothing
            continue
        opts = {
            "time_scale_hours": p.get("time_scale_hours", scale),
            "half_life_hours": p.get("half_life_hours"),
            "min_strength": p.get("min_strength", 0.0 if "half_life_hours" not in p else 0.1),
        }
        ranked = rank(prep, Weights(**w), k=max(ks), **opts)
        summary = summarize(query_metrics(prep, ranked, ks), by)
        params = {**w, **{c: v for c, v in opts.items() if v is not None}}
        frames.append(summary.select(*[pl.lit(v).alias(c) for c, v in params.items()], pl.all()))
    if not frames:
        raise ValidationError(
            "grid", "has no point with a weight above 0 (similarity, importance, recency, keyword)"
        )
    return pl.concat(frames, how="diagonal_relaxed")
