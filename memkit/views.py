"""Tidy frames for the charts and panels, computed from what the store returns (pure).

The charts (:mod:`memkit.charts`) draw frames; the panels (:mod:`memkit.widgets`) move sliders. What
sits between them lives here, as plain functions of frames and arrays, so a notebook can call any of
them and a test can check every number:

- :func:`decay_curves` — strength over age for (importance, half-life) pairs; :func:`worked_examples`
  the two DESIGN.md numbers (0.7939 and 0.15);
- :func:`contributions` — a search frame as one row per (hit, component): ``weight × component``,
  which sums to the hit's score; :func:`rank_notes` says where a hit's place needs a word (a near
  tie ranked it above a higher score, or it scores 0);
- (the live re-ranker the weights panel drives, :class:`memkit.evaluate.Reranker`, builds on
  :data:`COMPONENTS` and :func:`contributions`; ``memkit.views.Reranker`` still names it);
- :func:`nearest_similarity` — each memory's best cosine to a possible merge partner;
- :func:`memory_states` — what each memory is at an instant: recalled (by search's retrieval floor),
  faded, not yet valid, or dropped by a forget plan.

>>> curves = decay_curves(pl.DataFrame({"label": ["a"], "importance": [0.6], "half_life_hours": [2.0]}),
...                       horizon_hours=4.0, points=3)
>>> curves.select("age_hours", "strength").rows()
[(0.0, 0.6), (2.0, 0.3), (4.0, 0.15)]
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import polars as pl

from .decay import age_hours_expr, below_floor, hours_until, strength, strength_expr
from .errors import ValidationError, check_bool, check_frame
from .params import DecayParams, Weights, check_number
from .schema import check_time

__all__ = [
    "COMPONENTS",
    "SCORE_TOLERANCE",
    "check_frame",
    "contributions",
    "decay_curves",
    "memory_states",
    "nearest_similarity",
    "rank_notes",
    "worked_examples",
]

COMPONENTS = ("similarity", "importance", "recency", "keyword")
"""Score components in the order they are stacked (the fields of :class:`~memkit.params.Weights`)."""

SCORE_TOLERANCE = 1e-6
"""How far (absolute and relative) a recomputed score may be from a search's own before
:func:`contributions` refuses the weights: float noise is ~1e-12, a changed weight moves scores far more."""


def decay_curves(
    memories: pl.DataFrame, *, horizon_hours: float, points: int = 160, log: bool = False
) -> pl.DataFrame:
    """Strength over age -> ``label, importance, half_life_hours, age_hours, age_days, strength``.

    ``memories`` has ``label, importance, half_life_hours``. Ages run from 0 to ``horizon_hours``
    (``log=True``: geometrically from 0.1 h, for a log axis that shows a 2 h and a 90 d half-life
    together).
    """
    check_frame(memories, "memories", ("label", "importance", "half_life_hours"))
    check_bool("log", log)
    if not (np.isfinite(horizon_hours) and horizon_hours > 0):
        raise ValidationError("horizon_hours", f"must be a positive number, got {horizon_hours}")
    if not 2 <= points <= 5000:
        raise ValidationError("points", f"must be in [2, 5000], got {points}")
    ages = np.geomspace(0.1, horizon_hours, points) if log else np.linspace(0.0, horizon_hours, points)
    n = memories.height
    imp = np.repeat(memories["importance"].to_numpy().astype(np.float64), points)  # (n·points,)
    hl = np.repeat(memories["half_life_hours"].to_numpy().astype(np.float64), points)
    age = np.tile(ages, n)
    return pl.DataFrame(
        {
            "label": np.repeat(np.asarray(memories["label"].to_list(), dtype=object), points).tolist(),
            "importance": imp,
            "half_life_hours": hl,
            "age_hours": age,
            "age_days": age / 24.0,
            "strength": strength(imp, age, hl),
        }
    )


def worked_examples() -> pl.DataFrame:
    """DESIGN.md's worked examples as a frame, strength computed: 0.7939 and 0.15."""
    ex = pl.DataFrame(
        {
            "label": [
                "住在杭州滨江 · importance 0.80, half-life 90 d",
                "我现在在开会 · importance 0.60, half-life 2 h",
            ],
            "importance": [0.80, 0.60],
            "half_life_hours": [90 * 24.0, 2.0],
            "age_hours": [24.0, 4.0],
        }
    )
    s = strength(ex["importance"].to_numpy(), ex["age_hours"].to_numpy(), ex["half_life_hours"].to_numpy())
    return ex.with_columns(strength=pl.Series(s).round(4))


def floor_crossings(memories: pl.DataFrame, floor: float) -> pl.DataFrame:
    """When each (importance, half-life) falls below ``floor`` -> ``label, hours``: ``half_life ·
    log2(importance / floor)``; memories that start at or below the floor cross at 0."""
    check_frame(memories, "memories", ("label", "importance", "half_life_hours"))
    h = hours_until(floor, memories["importance"].to_numpy(), memories["half_life_hours"].to_numpy())
    return memories.select("label").with_columns(hours=pl.Series(h, dtype=pl.Float64), floor=pl.lit(floor))


def contributions(hits: pl.DataFrame, weights: Weights) -> pl.DataFrame:
    """One row per (hit, component): ``rank, id, content, component, value, weight, contribution,
    score``, where ``contribution = weight · value`` and the contributions of a hit sum to its score.

    ``hits`` is a search frame (``rank, id, content, similarity, importance, recency[, keyword,
    neighbour, score]``); a missing ``keyword`` column counts as 0 (it is only computed when its weight
    is positive); ``neighbour`` (neighbour expansion) is its own component, value = the neighbours'
    score. ``score`` is ``Σ weight · value`` under ``weights``. When ``hits`` has a ``score`` column (a
    search's), that sum must equal it (to :data:`SCORE_TOLERANCE`): weights other than the search's
    would explain scores the search never gave, so they raise a ValidationError naming ``weights``
    (a search frame does not record its weights: pass the ones it ranked with, ``store.weights`` for a
    store's default). Without a ``score`` column the sums are the scores ``weights`` would give.
    """
    check_frame(hits, "hits", ("rank", "id", "content", "similarity", "importance", "recency"))
    if not isinstance(weights, Weights):
        raise ValidationError("weights", f"must be a memkit.Weights, got {type(weights).__name__}")
    base = hits if "keyword" in hits.columns else hits.with_columns(keyword=pl.lit(0.0))
    w = {c: float(getattr(weights, c)) for c in COMPONENTS}
    parts = list(COMPONENTS)
    if "neighbour" in hits.columns and weights.neighbour > 0:  # the search's λ·(neighbours' score)
        w["neighbour"] = float(weights.neighbour)
        base = base.with_columns(neighbour=pl.col("neighbour") / w["neighbour"])
        parts.append("neighbour")
    score = sum(pl.col(c) * w[c] for c in parts)
    if "score" in hits.columns:  # a search's own scores: the weights must be the ones that made them
        _check_scores(base.select(total=score, score=pl.col("score"), rank=pl.col("rank")))
    long = (
        base.select("rank", "id", "content", *parts, score=score)
        .unpivot(index=["rank", "id", "content", "score"], on=parts, variable_name="component")
        .with_columns(weight=pl.col("component").replace_strict(w, return_dtype=pl.Float64))
        .with_columns(contribution=pl.col("weight") * pl.col("value"))
    )
    order = pl.col("component").replace_strict({c: i for i, c in enumerate(parts)}, return_dtype=pl.Int8)
    return long.sort("rank", order).select(
        "rank", "id", "content", "component", "value", "weight", "contribution", "score"
    )


NEAR_TIE, NO_MATCH = "near tie: newer first", "score 0: matches nothing"
"""The notes of :func:`rank_notes`."""


def rank_notes(hits: pl.DataFrame) -> pl.Series:
    """What a reader of a ranking (``rank, score``) needs told, one note per hit, in ``hits``' row
    order (a String Series named ``note``, null where nothing needs saying):

    - ``"near tie: newer first"`` (:data:`NEAR_TIE`): the hit ranks above one that scores higher. Only
      the near-tie rule does that (``Weights.tie``, :mod:`memkit.ties`): hits within one step of
      ``tie · best`` of each other rank newest first, so a newer memory passes a slightly better one;
    - ``"score 0: matches nothing"`` (:data:`NO_MATCH`): its score is 0 or below — no weighted signal
      found it (all weight on keyword, and the query shares no word with it); it only fills a place
      of the top k because fewer memories than k scored above 0.

    >>> hits = pl.DataFrame({"rank": [1, 2, 3, 4], "score": [0.784, 0.787, 0.5, 0.0]})
    >>> rank_notes(hits).to_list()
    ['near tie: newer first', None, None, 'score 0: matches nothing']
    """
    check_frame(hits, "hits", ("rank", "score"))
    order = hits["rank"].arg_sort().to_numpy()  # (n,) row positions, best rank first
    s = hits["score"].to_numpy().astype(np.float64)[order]  # (n,) scores in rank order
    # the best score of the hits ranked below each one (-inf below the last)
    below = np.append(np.maximum.accumulate(s[::-1])[::-1][1:], -np.inf) if len(s) else s
    notes = np.where(s <= 0, NO_MATCH, np.where(s < below, NEAR_TIE, None)).astype(object)  # (n,)
    back = np.empty(len(s), dtype=object)
    back[order] = notes  # back to the frame's row order
    return pl.Series("note", back.tolist(), dtype=pl.String)


def _check_scores(totals: pl.DataFrame) -> None:
    """ValidationError naming ``weights`` when a recomputed ``total`` differs from the search's
    ``score`` by more than float noise (``totals``: ``total, score, rank``, one row per hit)."""
    t, s = totals["total"].to_numpy(), totals["score"].to_numpy()  # (hits,)
    off = ~np.isclose(t, s, rtol=SCORE_TOLERANCE, atol=SCORE_TOLERANCE)  # NaN never matches
    if off.any():
        i = int(np.argmax(off))  # the first hit (in the frame's order) whose score is not explained
        raise ValidationError(
            "weights",
            f"do not give the hits' scores: rank {totals['rank'][i]} scored {s[i]:.4f}, but "
            f"Σ weight × component under these weights is {t[i]:.4f} ({int(off.sum())} of "
            f"{len(off)} hits differ); pass the weights the search ranked with (store.weights for "
            "a store's default), or drop the score column to see what these weights would give",
        )


def nearest_similarity(frame: pl.DataFrame, embeddings: np.ndarray, block: int = 2048) -> pl.DataFrame:
    """Each active memory's highest cosine to another it could merge with -> ``id, content,
    similarity`` (null for a memory alone in its group).

    Merge partners share namespace, layer, key and access group (``access, owner, created_by``), and
    with a ``_weak`` column (``store.merge_candidates``) its value too, as in ``store.consolidate``
    (:func:`memkit.consolidate.cluster_labels`). A memory joins a cluster at threshold ``t`` only
    when this value is at least ``t`` (and then does, unless the fact rule holds that partner apart:
    :func:`memkit.consolidate.held_apart`), so the histogram of this column is what a merge-threshold
    slider cuts.
    Blocked products per group: memory O(block²), never N×N.
    """
    check_frame(frame, "frame", ("id", "content", "status", "namespace", "layer", "key"))
    emb = np.asarray(embeddings, dtype=np.float32)
    if emb.ndim != 2 or len(emb) != frame.height:
        raise ValidationError("embeddings", f"must be ({frame.height}, dim), got shape {emb.shape}")
    best = np.full(frame.height, np.nan)
    partners = ("namespace", "layer", "key", "access", "owner", "created_by", "_weak")
    keys = [c for c in partners if c in frame.columns]
    groups = (
        frame.with_row_index("_row")
        .filter(pl.col("status") == "active")
        .group_by(keys, maintain_order=True)
        .agg("_row")
    )
    for rows in groups["_row"].to_list():  # a loop over groups; the rows of a group are blocked below
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) < 2:
            continue
        sub = emb[rows]
        for i0 in range(0, len(rows), block):
            sim = sub[i0 : i0 + block] @ sub.T  # (b, dim) @ (dim, r) -> (b, r)
            sim[np.arange(sim.shape[0]), np.arange(i0, i0 + sim.shape[0])] = -np.inf  # not itself
            best[rows[i0 : i0 + block]] = sim.max(1)
    out = frame.select("id", "content").with_columns(similarity=pl.Series(best, dtype=pl.Float64))
    return out.filter(frame["status"] == "active").with_columns(pl.col("similarity").fill_nan(None))


def memory_states(
    frame: pl.DataFrame,
    at: datetime,
    *,
    floor: float = DecayParams().min_strength,
    plan: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """What each memory of ``frame`` is at instant ``at`` -> ``frame`` plus ``strength``,
    ``recalled`` and ``state``.

    ``floor`` is the retrieval floor, what ``store.search`` recalls down to: ``DecayParams.min_strength``,
    0 by default (pass ``store.decay.min_strength`` for a store's own; the forgetting floor,
    ``ForgetParams.min_strength``, is a forget ``plan``'s business). ``recalled`` is True when a
    search at ``at`` may return the memory (whatever the query and the requester): ``active``,
    written by ``at``, valid then (``valid_from <= at < valid_until``) and at least ``floor`` strong.

    ``state``: ``not yet written`` (created after ``at``), ``superseded`` / ``conflict`` /
    ``quarantined`` (its status), ``expired`` (past ``valid_until``), ``not yet valid`` (before its
    ``valid_from``; that column is optional), ``faded`` (strength below ``floor``: no longer
    recalled), else ``recalled``; then a forget ``plan`` (``id, reason``) overrides with ``forget:
    <reason>`` for what a forget pass at ``at`` would drop (``recalled`` keeps saying whether a search
    still returns it until then).
    """
    check_frame(
        frame, "frame", ("id", "status", "importance", "half_life_hours", "created_at", "valid_until")
    )
    at = check_time("at", at)  # in UTC, as the frame's columns are
    floor = check_number("floor", floor, lo=0.0, hi=1.0)
    df = frame.with_columns(strength_expr(age_hours=age_hours_expr("created_at", at)))
    # subtle: valid_from is optional (older frames lack it); a missing one never holds a memory back
    early = (
        (pl.col("valid_from") > pl.lit(at)).fill_null(False) if "valid_from" in df.columns else pl.lit(False)
    )
    state = (
        pl.when(pl.col("created_at") > pl.lit(at))
        .then(pl.lit("not yet written"))
        .when(pl.col("status") != "active")
        .then(pl.col("status"))
        .when(pl.col("valid_until").is_not_null() & (pl.col("valid_until") <= pl.lit(at)))
        .then(pl.lit("expired"))
        .when(early)
        .then(pl.lit("not yet valid"))
        .when(below_floor(pl.col("strength"), floor))
        .then(pl.lit("faded"))
        .otherwise(pl.lit("recalled"))
    )
    df = df.with_columns(state=state).with_columns(recalled=pl.col("state") == "recalled")
    if plan is not None and plan.height:
        reasons = plan.select("id", _reason=pl.format("forget: {}", pl.col("reason")))
        df = (
            df.join(reasons, on="id", how="left")
            .with_columns(state=pl.coalesce("_reason", "state"))
            .drop("_reason")
        )
    return df
