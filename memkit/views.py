"""Tidy frames for the charts and panels, computed from what the store returns (pure).

The charts (:mod:`memkit.charts`) draw frames; the panels (:mod:`memkit.widgets`) move sliders. What
sits between them lives here, as plain functions of frames and arrays, so a notebook can call any of
them and a test can check every number:

- :func:`decay_curves` — strength over age for (importance, half-life) pairs; :func:`worked_examples`
  the two DESIGN.md numbers (0.7939 and 0.15);
- :func:`contributions` — a search frame as one row per (hit, component): ``weight × component``,
  which sums to the hit's score;
- :class:`Reranker` — every candidate's score components cached once per query, re-ranked for any
  weights with one matrix product (a slider move never re-embeds and never touches the store);
- :func:`nearest_similarity` — each memory's best cosine to a possible merge partner;
- :func:`memory_states` — what each memory is at an instant: recalled, faded, or dropped by a plan.

>>> curves = decay_curves(pl.DataFrame({"label": ["a"], "importance": [0.6], "half_life_hours": [2.0]}),
...                       horizon_hours=4.0, points=3)
>>> curves.select("age_hours", "strength").rows()
[(0.0, 0.6), (2.0, 0.3), (4.0, 0.15)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import numpy as np
import polars as pl

from .decay import age_hours_expr, hours_until, strength, strength_expr
from .errors import ValidationError
from .params import Weights
from .scoring import hybrid, neighbour_score, tie_order, top_k

__all__ = [
    "COMPONENTS",
    "Reranker",
    "contributions",
    "decay_curves",
    "memory_states",
    "nearest_similarity",
    "worked_examples",
]

COMPONENTS = ("similarity", "importance", "recency", "keyword")
"""Score components in the order they are stacked (the fields of :class:`~memkit.params.Weights`)."""


def _need(frame: pl.DataFrame, name: str, columns: Sequence[str]) -> None:
    if not isinstance(frame, pl.DataFrame):
        raise ValidationError(name, f"must be a polars DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValidationError(name, f"missing columns: {', '.join(missing)}")


def decay_curves(
    memories: pl.DataFrame, *, horizon_hours: float, points: int = 160, log: bool = False
) -> pl.DataFrame:
    """Strength over age -> ``label, importance, half_life_hours, age_hours, age_days, strength``.

    ``memories`` has ``label, importance, half_life_hours``. Ages run from 0 to ``horizon_hours``
    (``log=True``: geometrically from 0.1 h, for a log axis that shows a 2 h and a 90 d half-life
    together).
    """
    _need(memories, "memories", ("label", "importance", "half_life_hours"))
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
    _need(memories, "memories", ("label", "importance", "half_life_hours"))
    h = hours_until(floor, memories["importance"].to_numpy(), memories["half_life_hours"].to_numpy())
    return memories.select("label").with_columns(hours=pl.Series(h, dtype=pl.Float64), floor=pl.lit(floor))


def contributions(hits: pl.DataFrame, weights: Weights) -> pl.DataFrame:
    """One row per (hit, component): ``rank, id, content, component, value, weight, contribution,
    score``, where ``contribution = weight · value`` and the contributions of a hit sum to its score.

    ``hits`` is a search frame (``rank, id, content, similarity, importance, recency[, keyword,
    neighbour]``); a missing ``keyword`` column counts as 0 (it is only computed when its weight is
    positive); ``neighbour`` (neighbour expansion) is its own component, value = the neighbours' score.
    """
    _need(hits, "hits", ("rank", "id", "content", "similarity", "importance", "recency"))
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


def _positions(ids: pl.Series, links: pl.DataFrame | None) -> tuple[np.ndarray, np.ndarray]:
    """Positions in ``ids`` of each id's ``prev`` and ``next`` (``links``: ``id, prev, next``), -1
    where there is none or it is not among ``ids`` (a neighbour that is not a candidate counts 0)."""
    if links is None:
        return np.full(len(ids), -1, np.int64), np.full(len(ids), -1, np.int64)
    pos = ids.to_frame("id").with_row_index("pos")
    out = ids.to_frame("id").join(links, on="id", how="left", maintain_order="left")
    for side in ("prev", "next"):
        out = out.join(
            pos.rename({"id": side, "pos": f"{side}_pos"}), on=side, how="left", maintain_order="left"
        )
    return tuple(out[f"{s}_pos"].fill_null(-1).cast(pl.Int64).to_numpy() for s in ("prev", "next"))  # type: ignore[return-value]


class Reranker:
    """Score components of every candidate of each query, cached, re-ranked for any weights.

    Build it once with :meth:`from_store` (one ``store.search`` per query, ``reinforce=False``, the
    query embedded once), then :meth:`rank` costs one ``(c, 4) @ (4,)`` product and a top-k per
    query: no embedding, no DuckDB, no Python loop over memories.
    """

    def __init__(
        self, candidates: Mapping[str, pl.DataFrame], neighbours: Mapping[str, pl.DataFrame] | None = None
    ) -> None:
        """``candidates`` maps each query to its frame of candidates (``id, content`` and the
        components of :data:`COMPONENTS`; a missing ``keyword`` is 0). ``neighbours`` maps a query to
        ``id, prev, next`` (``store.neighbours``), for neighbour expansion; without it, none."""
        self.frames: dict[str, pl.DataFrame] = {}
        self.matrix: dict[str, np.ndarray] = {}
        self.age: dict[str, np.ndarray] = {}
        self.adjacent: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for q, f in candidates.items():
            _need(f, f"candidates[{q!r}]", ("id", "content", "similarity", "importance", "recency"))
            f = f if "keyword" in f.columns else f.with_columns(keyword=pl.lit(0.0))
            self.frames[q] = f
            self.matrix[q] = f.select(COMPONENTS).to_numpy().astype(np.float64)  # (c, 4)
            # hours before the newest candidate it was written (0 without created_at): near ties
            written = (
                f["created_at"].dt.epoch("us").to_numpy() if "created_at" in f.columns else np.zeros(f.height)
            )
            self.age[q] = (written.max(initial=0) - written) / 3.6e9
            self.adjacent[q] = _positions(f["id"], (neighbours or {}).get(q))

    @classmethod
    def from_store(
        cls,
        store: object,
        queries: Sequence[str],
        *,
        namespace: str,
        requester: str | None = None,
        now: datetime | None = None,
        limit: int = 10_000,
    ) -> Reranker:
        """Cache the components of up to ``limit`` candidates per query from ``store.search``."""
        # every component computed (keyword too), none folded in: the re-ranker adds neighbours itself
        probe = Weights(similarity=0.6, importance=0.3, recency=0.1, keyword=0.1, neighbour=0.0, tie=0.0)
        frames = {
            q: store.search(  # type: ignore[attr-defined]
                q, namespace=namespace, requester=requester, k=limit, weights=probe, now=now, reinforce=False
            )
            for q in dict.fromkeys(queries)
        }
        links = {
            q: store.neighbours(f["id"].to_list(), namespace=namespace, requester=requester)  # type: ignore[attr-defined]
            for q, f in frames.items()
        }
        return cls(frames, links)

    def scores(self, query: str, weights: Any) -> np.ndarray:
        """Hybrid score of every cached candidate of ``query`` (:func:`memkit.scoring.hybrid`, the
        store's formula) -> ``(c,)``; with weight arrays of shape ``(g, 1)``, ``(g, c)``."""
        m = self.matrix[query]  # (c, 4) columns in COMPONENTS order
        parts = dict(zip(COMPONENTS, m.T, strict=True))
        base = hybrid(parts["similarity"], parts["importance"], parts["recency"], weights, parts["keyword"])
        lam = getattr(weights, "neighbour", 0.0)
        if not np.any(lam):
            return base
        prev, nxt = self.adjacent[query]  # neighbour expansion, as the store's search does it
        return base + lam * neighbour_score(base, prev, nxt)

    def rank(self, query: str, weights: Weights, k: int = 5) -> pl.DataFrame:
        """The top ``k`` of ``query`` under ``weights``: the cached frame's rows with a new ``rank``
        and ``score``, best first (near ties newest first, as in the store; then the earlier candidate)."""
        if query not in self.frames:
            raise ValidationError("query", f"{query!r} is not one of the cached queries")
        scores = self.scores(query, weights)
        best = top_k(scores, k, age=self.age[query], tie=float(weights.tie))
        f = self.frames[query][best].with_columns(
            rank=pl.int_range(1, len(best) + 1, dtype=pl.Int32), score=pl.Series(scores[best])
        )
        first = ["rank", "id", "content", "score", *COMPONENTS]
        return f.select(first + [c for c in f.columns if c not in first])

    def metrics(self, relevant: Mapping[str, Sequence[str]], weights: Weights, k: int = 5) -> pl.DataFrame:
        """Per labelled query: ``query, recall, reciprocal_rank`` of its relevant ids at ``k``."""
        grid = pl.DataFrame([vars(weights)])
        return self.sweep(relevant, grid, k=k, per_query=True).drop(COMPONENTS)

    def sweep(
        self,
        relevant: Mapping[str, Sequence[str]],
        grid: pl.DataFrame,
        *,
        k: int = 5,
        per_query: bool = False,
    ) -> pl.DataFrame:
        """Mean ``recall`` at ``k`` and ``mrr`` over the labelled queries for every row of ``grid``
        (columns: any of the weight names and ``tie``; missing ones are 0) -> ``grid`` plus
        ``recall, mrr``.

        All grid rows are scored at once per query, ``(g, 4) @ (4, c) -> (g, c)``, then a row-wise
        partial sort finds each row's top k.
        """
        unknown = [q for q in relevant if q not in self.frames]
        if unknown:
            raise ValidationError("relevant", f"queries not cached: {unknown}")
        w = np.column_stack(
            [
                grid[c].to_numpy().astype(np.float64) if c in grid.columns else np.zeros(grid.height)
                for c in COMPONENTS
            ]
        )  # (g, 4)
        tie = grid["tie"].to_numpy().astype(np.float64) if "tie" in grid.columns else np.zeros(grid.height)
        lam = (
            grid["neighbour"].to_numpy().astype(np.float64)
            if "neighbour" in grid.columns
            else np.zeros(grid.height)
        )
        rows = []
        grid_weights = SimpleNamespace(
            **{c: w[:, i : i + 1] for i, c in enumerate(COMPONENTS)}, neighbour=lam[:, None]
        )  # (g, 1) each
        for q, ids in relevant.items():  # a loop over queries, not memories
            scores = self.scores(q, grid_weights)  # (g, c)
            c = scores.shape[1]
            kk = min(k, c)
            # every candidate ordered (near ties newest first, as in the store): c is a search's hits
            top = tie_order(scores, self.age[q], tie[:, None])[:, :kk]  # (g, kk) best first
            is_rel = np.isin(self.frames[q]["id"].to_numpy(), np.asarray(list(ids), dtype=object))  # (c,)
            hit = is_rel[top]  # (g, kk)
            recall = hit.sum(1) / max(len(set(ids)), 1)
            first = np.where(hit.any(1), hit.argmax(1) + 1, 0)
            rr = np.where(first > 0, 1.0 / np.maximum(first, 1), 0.0)
            rows.append(
                pl.DataFrame({"_g": np.arange(len(w)), "query": q, "recall": recall, "reciprocal_rank": rr})
            )
        per = pl.concat(rows)
        base = pl.DataFrame({c: w[:, i] for i, c in enumerate(COMPONENTS)}).with_row_index("_g")
        if per_query:
            return base.join(per, on="_g").drop("_g")
        agg = per.group_by("_g").agg(pl.col("recall").mean(), mrr=pl.col("reciprocal_rank").mean())
        return grid.with_row_index("_g").join(agg, on="_g").sort("_g").drop("_g")


def nearest_similarity(frame: pl.DataFrame, embeddings: np.ndarray, block: int = 2048) -> pl.DataFrame:
    """Each active memory's highest cosine to another it could merge with -> ``id, content,
    similarity`` (null for a memory alone in its group).

    Merge partners share namespace, layer, key and access group (``access, owner, created_by``), as
    in ``store.consolidate``. A memory joins a cluster at threshold ``t`` exactly when this value is
    at least ``t``, so the histogram of this column is what a merge-threshold slider cuts.
    Blocked products per group: memory O(block²), never N×N.
    """
    _need(frame, "frame", ("id", "content", "status", "namespace", "layer", "key"))
    emb = np.asarray(embeddings, dtype=np.float32)
    if emb.ndim != 2 or len(emb) != frame.height:
        raise ValidationError("embeddings", f"must be ({frame.height}, dim), got shape {emb.shape}")
    best = np.full(frame.height, np.nan)
    keys = [c for c in ("namespace", "layer", "key", "access", "owner", "created_by") if c in frame.columns]
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
    frame: pl.DataFrame, at: datetime, *, floor: float = 0.1, plan: pl.DataFrame | None = None
) -> pl.DataFrame:
    """What each memory of ``frame`` is at instant ``at`` -> ``frame`` plus ``strength`` and ``state``.

    ``state``: ``not yet written`` (created after ``at``), ``superseded`` / ``conflict`` /
    ``quarantined`` (its status), ``expired`` (past ``valid_until``), ``faded`` (strength below
    ``floor``: no longer recalled), else ``recalled``; then a forget ``plan`` (``id, reason``)
    overrides with ``forget: <reason>`` for what a forget pass at ``at`` would drop.
    """
    _need(frame, "frame", ("id", "status", "importance", "half_life_hours", "created_at", "valid_until"))
    df = frame.with_columns(strength_expr(age_hours=age_hours_expr("created_at", at)))
    state = (
        pl.when(pl.col("created_at") > pl.lit(at))
        .then(pl.lit("not yet written"))
        .when(pl.col("status") != "active")
        .then(pl.col("status"))
        .when(pl.col("valid_until").is_not_null() & (pl.col("valid_until") <= pl.lit(at)))
        .then(pl.lit("expired"))
        .when(pl.col("strength") < floor)
        .then(pl.lit("faded"))
        .otherwise(pl.lit("recalled"))
    )
    df = df.with_columns(state=state)
    if plan is not None and plan.height:
        reasons = plan.select("id", _reason=pl.format("forget: {}", pl.col("reason")))
        df = (
            df.join(reasons, on="id", how="left")
            .with_columns(state=pl.coalesce("_reason", "state"))
            .drop("_reason")
        )
    return df
