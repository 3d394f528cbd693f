"""The live re-ranker: a query's candidates scored once, re-ranked for any weights in microseconds.

A weights slider must answer before the hand leaves it. :class:`Reranker` asks the store once per
query for a wide candidate set with every score component (similarity, importance, recency, keyword;
the store's own :meth:`~memkit.MemoryStore.search` with ``k`` large), caches them as a
``(candidates, 4)`` matrix, and from then on a new weighting is one matrix-vector product and a
top-k: no re-embedding, no database, no side effects on the store (``reinforce=False``). The score is
:func:`memkit.scoring.hybrid` plus the neighbour bonus of :func:`memkit.scoring.neighbour_score`, so
the ranking equals what ``store.search`` would return with the same weights (a test checks it).

:meth:`Reranker.sweep` does the same for a whole grid of weightings at once, which is how the
notebooks draw a metric over two weights as a heatmap.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import numpy as np
import polars as pl

from ..errors import ValidationError, check_bool
from ..params import MAX_WEIGHT, Weights
from ..scoring import hybrid, neighbour_score
from ..ties import tie_order, top_k
from ..views import COMPONENTS, check_frame

__all__ = ["Reranker"]


_SIDES = ("prev", "next", "prev2", "next2")


def _positions(ids: pl.Series, links: pl.DataFrame | None) -> tuple[np.ndarray, ...]:
    """Positions in ``ids`` of each id's ``prev``, ``next``, ``prev2`` and ``next2`` (``links``:
    ``id, prev, next[, prev2, next2]``, as ``store.neighbours`` gives), -1 where there is none or
    it is not among ``ids`` (a neighbour that is not a candidate counts 0)."""
    links = (
        pl.DataFrame(schema={"id": pl.String, "prev": pl.String, "next": pl.String})
        if links is None
        else links
    )
    links = links.with_columns(pl.lit(None, pl.String).alias(c) for c in _SIDES if c not in links.columns)
    pos = ids.to_frame("id").with_row_index("pos")
    out = ids.to_frame("id").join(links.select("id", *_SIDES), on="id", how="left", maintain_order="left")
    for side in _SIDES:
        out = out.join(
            pos.rename({"id": side, "pos": f"{side}_pos"}), on=side, how="left", maintain_order="left"
        )
    return tuple(out[f"{s}_pos"].fill_null(-1).cast(pl.Int64).to_numpy() for s in _SIDES)


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
        components of :data:`COMPONENTS`; a missing ``keyword`` is 0). ``neighbours`` maps a query
        to ``id, prev, next[, prev2, next2]`` (``store.neighbours``), for neighbour expansion;
        without it, none."""
        self.frames: dict[str, pl.DataFrame] = {}
        self.matrix: dict[str, np.ndarray] = {}
        self.age: dict[str, np.ndarray] = {}
        self.adjacent: dict[str, tuple[np.ndarray, ...]] = {}
        for q, f in candidates.items():
            check_frame(f, f"candidates[{q!r}]", ("id", "content", "similarity", "importance", "recency"))
            f = f if "keyword" in f.columns else f.with_columns(keyword=pl.lit(0.0))
            self.frames[q] = f
            self.matrix[q] = f.select(COMPONENTS).to_numpy().astype(np.float64)  # (c, 4)
            # hours before the newest candidate it was written (0 without created_at): near ties
            if "created_at" in f.columns and f["created_at"].null_count():  # an unknown time has no age
                raise ValidationError(f"candidates[{q!r}].created_at", "has missing values")
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
        links = {  # at the same `now`: which neighbours are valid depends on it, as in search
            q: store.neighbours(f["id"].to_list(), namespace=namespace, requester=requester, now=now)  # type: ignore[attr-defined]
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
        prev, nxt, prev2, nxt2 = self.adjacent[query]  # neighbour expansion, as the store's search
        return base + lam * neighbour_score(
            base, prev, nxt, getattr(weights, "neighbour2", 0.0), (prev2, nxt2)
        )

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
        if weights.neighbour > 0:  # λ·(neighbours' score), as search() returns it: a chart's bars then
            boost = scores - self.scores(query, dataclasses.replace(weights, neighbour=0.0))  # sum to score
            f = f.with_columns(neighbour=pl.Series(boost[best]))
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
        (columns: any of the weight names, ``neighbour``, ``neighbour2`` and ``tie``; missing ones
        are 0) -> ``grid`` plus
        ``recall, mrr``.

        All grid rows are scored at once per query, ``(g, 4) @ (4, c) -> (g, c)``, then a row-wise
        partial sort finds each row's top k. A query without relevant ids is left out (as
        :func:`~memkit.evaluate.metrics.score_rankings` leaves it): it has no recall to measure.
        """
        unknown, per_query = [q for q in relevant if q not in self.frames], check_bool("per_query", per_query)
        if unknown:
            raise ValidationError("relevant", f"queries not cached: {unknown}")
        relevant = {q: [i for i in ids if i is not None] for q, ids in relevant.items()}
        relevant = {q: ids for q, ids in relevant.items() if ids}
        if not relevant:
            raise ValidationError("relevant", "holds no query with a relevant id")
        w = np.column_stack(
            [
                grid[c].to_numpy().astype(np.float64) if c in grid.columns else np.zeros(grid.height)
                for c in COMPONENTS
            ]
        )  # (g, 4)
        tie, lam, lam2 = (
            grid[c].to_numpy().astype(np.float64) if c in grid.columns else np.zeros(grid.height)
            for c in ("tie", "neighbour", "neighbour2")
        )
        for name, x in (
            *zip(COMPONENTS, w.T, strict=True),
            ("tie", tie),
            ("neighbour", lam),
            ("neighbour2", lam2),
        ):
            if not (np.isfinite(x) & (x >= 0) & (x <= MAX_WEIGHT)).all():  # as Weights holds them
                raise ValidationError(f"grid.{name}", f"must be finite numbers in [0, {MAX_WEIGHT:g}]")
        rows = []
        grid_weights = SimpleNamespace(
            **{c: w[:, i : i + 1] for i, c in enumerate(COMPONENTS)},
            neighbour=lam[:, None],
            neighbour2=lam2[:, None],
        )  # (g, 1) each
        for q, ids in relevant.items():  # a loop over queries, not memories
            scores = self.scores(q, grid_weights)  # (g, c)
            c = scores.shape[1]
            kk = min(k, c)
            # every candidate ordered (near ties newest first, as in the store): c is a search's hits
            top = (
                tie_order(scores, self.age[q], tie[:, None])[:, :kk] if c else np.zeros((len(w), 0), np.int64)
            )
            is_rel = np.isin(self.frames[q]["id"].to_numpy(), np.asarray(list(ids), dtype=object))  # (c,)
            hit = is_rel[top]  # (g, kk)
            recall = hit.sum(1) / max(len(set(ids)), 1)
            first = np.where(hit.any(1), hit.argmax(1) + 1, 0) if kk else np.zeros(len(w), np.int64)
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
