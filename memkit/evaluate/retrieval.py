"""Measuring retrieval: ranking metrics, evaluation of a store or frame, and vectorized weight sweeps.

Metrics (recall@k, hit@k, MRR, nDCG, per-category summaries) live in :mod:`memkit.metrics` and are
re-exported here.

:func:`evaluate` scores a store (or a memories frame) against queries with the store's hybrid
formula; :func:`sweep` does it for a whole grid of weights and half-lives. Both first compute the
score *components* once (:func:`prepare`: each query embedded once, cosine and BM25 of every query
against every memory of its group), so a grid point is a weighted sum and a top-k over a
``(queries, memories)`` matrix: a whole grid over LoCoMo takes seconds. The scenarios of
:mod:`memkit.scenarios` (forgetting correctness, knowledge updates) are re-exported here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from ..decay import below_floor, recency, strength
from ..embed import Embedder, HashEmbedder, l2_normalize
from ..errors import ValidationError, check_bool
from ..params import DecayParams, KeywordParams, Weights
from ..schema import DEFAULT_IMPORTANCE, LAYER_HALF_LIFE_HOURS, check_time
from ..scoring import KeywordIndex, hybrid, neighbour_score
from ..store.vectors import epoch_us
from ..ties import top_k_rows
from .grid import HALF_LIFE_FLOOR, SWEEP_KEYS, WEIGHT_KEYS, check_setting, floor_of, grid_points
from .metrics import check_ks, metric_columns, require_columns, summarize
from .visibility import as_of_groups, rankable

__all__ = ["SWEEP_KEYS", "Prepared", "evaluate", "prepare", "rank", "sweep", "tuned"]

_US_PER_HOUR = 3.6e9


# ------------------------------------------------------------------------------ prepared components
@dataclass
class _Group:
    """One namespace/conversation: its memories' columns and the score matrices of its queries."""

    name: Any  # the group's value (conversation id, namespace)
    ids: np.ndarray  # (n,) memory ids
    query_rows: np.ndarray  # (q,) rows of the prepared queries frame
    sim: np.ndarray  # (q, n) float32 cosine
    kw: np.ndarray  # (q, n) float32 BM25 scaled to [0, 1] (KeywordIndex.scores)
    rel: np.ndarray  # (q, n) bool relevance
    n_rel: np.ndarray  # (q,) relevant ids of each query, found among the memories or not
    visible: np.ndarray  # (n,) bool: what a search may return (the others are only neighbours' places)
    prev: np.ndarray  # (n,) each memory's neighbour written just before it (row, -1: none), as the
    nxt: np.ndarray  # (n,) store pairs them; and just after it (memkit.evaluate.visibility)
    importance: np.ndarray  # (n,)
    half_life_h: np.ndarray  # (n,)
    age_h: np.ndarray  # (n,) hours from creation to `now`
    idle_h: np.ndarray  # (n,) hours from last access to `now`


@dataclass
class Prepared:
    """Score components computed once for a memories frame and a queries frame (see :func:`prepare`).

    ``queries`` holds the evaluated queries (those with at least one relevant id), in the row order
    the groups refer to.
    """

    queries: pl.DataFrame
    groups: list[_Group]
    embedder: str

    def subset(self, names: Iterable[Any]) -> Prepared:
        """Only the groups in ``names`` (e.g. one fold of a cross-validation), without recomputing."""
        wanted = set(names)
        groups, rows, offset = [], [], 0
        for g in self.groups:
            if g.name in wanted:
                groups.append(
                    dataclasses.replace(g, query_rows=np.arange(offset, offset + len(g.query_rows)))
                )
                rows.append(g.query_rows)
                offset += len(g.query_rows)
        queries = self.queries[np.concatenate(rows)] if rows else self.queries.clear()
        return Prepared(queries, groups, self.embedder)


def _hours(col: pl.Series, now: datetime | None) -> tuple[np.ndarray, int]:
    """Hours from each timestamp of ``col`` to ``now`` (default: the column's newest value), and
    that ``now`` in epoch microseconds."""
    us = col.dt.epoch("us").to_numpy()
    now_us = int(us.max()) if now is None else epoch_us(now)  # exact (a float's µs drift past ~2500)
    return (now_us - us) / _US_PER_HOUR, now_us


def prepare(
    memories: pl.DataFrame,
    queries: pl.DataFrame,
    *,
    embedder: Embedder | None = None,
    keyword: KeywordParams = KeywordParams(),
    group: str = "conversation",
    id_col: str = "id",
    now: datetime | None = None,
    requester: str | None = None,
) -> Prepared:
    """Embed and score once: the cosine and BM25 matrices of every query against its group.

    ``memories`` needs ``id_col``, ``content``, ``created_at`` and ``group``; optional
    ``importance`` (default 0.5), ``half_life_hours`` (default long-term 90 days),
    ``last_access_at`` (default ``created_at``), ``valid_from`` and ``valid_until`` (default: open)
    and ``embedding`` (else ``embedder``, default :class:`HashEmbedder`, embeds the contents).
    ``queries`` needs ``query_id``, ``question``, ``relevant`` and ``group``. ``now=None``
    evaluates each group at its newest memory's time.

    Only what a search at ``now`` may return is ranked (:mod:`memkit.evaluate.visibility`): memories
    written by then and valid then, and from a ``store.frame()`` (its ``status`` and access columns)
    the ``active`` ones ``requester`` may read. The others keep their places in the order of
    writing, so neighbour expansion pairs what the store pairs, except what ``requester`` may not
    read: as in the store, that is not there for it. A relevant id that names no rankable memory
    (erased, expired, not yet written, unreadable, mistyped) is a miss. BM25 statistics are those of
    the rankable memories (the store's too when ``min_strength=0``). The strength floor is not applied
    here but when ranking (:func:`rank`; :func:`evaluate` of a store defaults to the store's).
    """
    now = check_time("now", now, optional=True)  # a naive one would be read in the process's zone
    require_columns("memories", memories, (id_col, "content", "created_at", group))
    require_columns("queries", queries, ("query_id", "question", "relevant", group))
    embedder = embedder if embedder is not None else HashEmbedder()
    qs = queries.with_columns(pl.col("relevant").list.drop_nulls()).filter(pl.col("relevant").list.len() > 0)
    groups: list[_Group] = []
    order: list[np.ndarray] = []
    offset = 0
    for (g,), mem in memories.group_by(group, maintain_order=True):
        q_idx = np.flatnonzero((qs[group] == g).to_numpy())
        if not len(q_idx):
            continue
        gq = qs[q_idx]
        ids = mem[id_col].to_numpy()
        if "embedding" in mem.columns:
            emb = l2_normalize(np.asarray(mem["embedding"].to_list(), dtype=np.float32))
        else:
            emb = embedder.embed(mem["content"].to_list())  # (n, dim)
        q_emb = embedder.embed(gq["question"].to_list())  # (q, dim): each query embedded once
        sim = (q_emb @ emb.T).astype(np.float32)  # (q, dim) @ (dim, n) -> (q, n)
        age_h, now_us = _hours(mem["created_at"], now)
        visible, prev, nxt = rankable(mem, now_us, requester)  # the read gate at now; the neighbours
        # an id names its rankable row when it has one (a store's key: the current version, not a
        # newer pending or held one), else its last row
        pos = {ids[i]: int(i) for i in np.argsort(visible, kind="stable")}
        kwi = KeywordIndex()
        kwi.add(mem["content"].to_list(), 0)
        kw = np.stack([kwi.scores(t, visible, keyword) for t in gq["question"]]).astype(np.float32)
        rel = np.zeros(sim.shape, dtype=bool)
        flat = gq.select(pl.int_range(pl.len()).alias("q"), "relevant").explode("relevant")
        cols = flat["relevant"].replace_strict(pos, default=-1, return_dtype=pl.Int64).to_numpy()
        ok = cols >= 0
        rel[flat["q"].to_numpy()[ok], cols[ok]] = True
        last = mem["last_access_at"] if "last_access_at" in mem.columns else mem["created_at"]
        idle_h = (now_us - last.dt.epoch("us").to_numpy()) / _US_PER_HOUR
        n = len(ids)
        imp = mem["importance"].to_numpy() if "importance" in mem.columns else np.full(n, DEFAULT_IMPORTANCE)
        hl = (
            mem["half_life_hours"].to_numpy()
            if "half_life_hours" in mem.columns
            else np.full(n, LAYER_HALF_LIFE_HOURS["long_term"])
        )
        n_rel = gq["relevant"].list.unique().list.len().to_numpy()  # found or not: a miss is a miss
        groups.append(
            _Group(g, ids, np.arange(offset, offset + len(q_idx)), sim, kw, rel & visible, n_rel, visible,
                   prev, nxt, imp.astype(np.float64), hl.astype(np.float64), age_h, np.maximum(idle_h, 0.0))
        )  # fmt: skip
        order.append(q_idx)
        offset += len(q_idx)
    kept = qs[np.concatenate(order)] if order else qs.clear()
    return Prepared(kept, groups, embedder.name)


def rank(
    prep: Prepared,
    weights: Weights = Weights(),
    *,
    k: int = 10,
    time_scale_hours: float = DecayParams().time_scale_hours,
    half_life_hours: float | None = None,
    min_strength: float = 0.0,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Top-``k`` per query for one setting -> per group ``(top, hits)``, both ``(q, k)``.

    The store's formula: ``score = w.similarity·cos + w.importance·importance + w.recency·recency +
    w.keyword·keyword``; memories whose strength ``importance · 0.5^(age / half_life)`` is below
    ``min_strength`` are not recalled (``half_life_hours`` overrides every memory's half-life).
    Positions past the candidates are ``-1`` and count as misses.
    """
    if len(ks := check_ks(k)) > 1:  # one cut-off; each setting as evaluate and search check it
        raise ValidationError("k", f"must be one positive int, got {k!r}")
    k, time_scale_hours = ks[0], check_setting("time_scale_hours", time_scale_hours)
    min_strength = check_setting("min_strength", min_strength)
    half_life_hours = None if half_life_hours is None else check_setting("half_life_hours", half_life_hours)
    out = []
    for g in prep.groups:
        rec = recency(g.idle_h, time_scale_hours)  # (n,)
        score = hybrid(g.sim, g.importance, rec, weights, g.kw, dtype=np.float32)  # (q, n): the store's
        score[:, ~g.visible] = -np.inf  # not rankable: a place in the order of writing only
        if min_strength > 0:
            hl = g.half_life_h if half_life_hours is None else half_life_hours
            weak = below_floor(strength(g.importance, g.age_h, hl), min_strength)  # (n,)
            score[:, weak] = -np.inf
        if np.any(weights.neighbour):  # neighbour expansion, as the store's search does it
            near = neighbour_score(score, g.prev, g.nxt, float(weights.neighbour2))
            score = score + np.float32(weights.neighbour) * near
        # best first, near ties newest first (memkit.ties, the store's rule); exact, however many
        # memories share the first tie step and their writing time
        top = top_k_rows(score, k, g.age_h, float(weights.tie))  # (q, min(k, n)), -1 past the candidates
        kk = top.shape[1]
        hits = np.take_along_axis(g.rel, np.maximum(top, 0), axis=1) & (top >= 0)
        if kk < k:  # fewer memories than k: pad with misses
            pad = np.full((len(top), k - kk), -1)
            top, hits = np.hstack([top, pad]), np.hstack([hits, pad > 0])
        out.append((top, hits))
    return out


def query_metrics(
    prep: Prepared, ranked: list[tuple[np.ndarray, np.ndarray]], ks: Sequence[int]
) -> pl.DataFrame:
    """The queries frame with one column per metric and cut-off (hit@k, recall@k, MRR, nDCG) of a
    ranking (``ranked``: per group, the top ids and whether each is relevant)."""
    hits = np.vstack([h for _, h in ranked]) if ranked else np.zeros((0, max(ks)), bool)
    n_rel = np.concatenate([g.n_rel for g in prep.groups]) if ranked else np.zeros(0, int)
    return prep.queries.with_columns(**{c: pl.Series(v) for c, v in metric_columns(hits, n_rel, ks).items()})


def as_prepared(source: Any, queries: pl.DataFrame, kw: dict[str, Any]) -> Prepared:
    """What to evaluate -> :class:`Prepared`: a Prepared passes through; a memories frame, or a
    store's memories (every stored one: one group per namespace, the store's embedder and BM25
    settings; :func:`prepare` ranks only what a search may return), is prepared against ``queries``."""
    if isinstance(source, Prepared):
        return source
    if isinstance(source, pl.DataFrame):
        return prepare(source, queries, **kw)
    if hasattr(source, "frame") and hasattr(source, "embedder"):  # a MemoryStore
        group = kw.pop("group", "conversation")
        mem = source.frame(include_embedding=True).drop(group, strict=False).rename({"namespace": group})
        kw["now"] = check_time("now", kw.get("now"), optional=True)
        mem = as_of_groups(source, mem, group, kw["now"])  # each group's statuses at its `now`
        if kw.get("requester") is not None:
            kw["requester"] = source.check_names(requester=kw["requester"])  # its identity, as a search's
        kw.setdefault("id_col", "key")
        return prepare(mem, queries, embedder=source.embedder, keyword=source.keyword, group=group, **kw)
    got = f"must be a MemoryStore, a memories frame or Prepared, got {source!r}"
    raise ValidationError("store_or_frame", got)


def tuned(source: Any, weights: Weights | None, time_scale_hours: float | None) -> tuple[Any, float]:
    """The weights and recency time scale to rank with: those given, else a store's own (its search's:
    ``store.weights``, ``store.decay``), else the defaults."""
    store = hasattr(source, "frame") and hasattr(source, "weights")  # a MemoryStore
    if weights is None:
        weights = source.weights if store else Weights()
    if time_scale_hours is None:
        time_scale_hours = (source.decay if store else DecayParams()).time_scale_hours
    return weights, time_scale_hours


def evaluate(
    store_or_frame: Any,
    queries: pl.DataFrame | None = None,
    *,
    weights: Weights | None = None,
    k: int | Sequence[int] = (5, 10),
    now: datetime | None = None,
    by: str | None = "category",
    per_query: bool = False,
    time_scale_hours: float | None = None,
    min_strength: float | None = None,
    **prepare_kw: Any,
) -> pl.DataFrame:
    """Retrieval quality of one weighting -> a tidy frame: one row per ``by`` value and ``"all"``.

    ``store_or_frame``: a :class:`~memkit.MemoryStore` (namespaces are the groups, memories are
    matched to ``relevant`` by their ``key``), a memories frame (see :func:`prepare`) or a
    :class:`Prepared`. Columns: ``by``, ``n``, ``recall@k``, ``hit@k``, ``ndcg@k`` for each ``k``,
    ``mrr``. ``per_query=True`` returns the per-query metrics instead. ``weights`` and
    ``time_scale_hours`` default to a store's own (what its search ranks with), else ``Weights()``;
    ``min_strength`` (the strength floor) to a store's retrieval floor ``store.decay.min_strength``
    (what its search drops), else 0.
    """
    ks, per_query = check_ks(k), check_bool("per_query", per_query)
    weights, time_scale_hours = tuned(store_or_frame, weights, time_scale_hours)
    time_scale_hours = check_setting("time_scale_hours", time_scale_hours)  # before any work, as search
    min_strength = check_setting("min_strength", floor_of(store_or_frame, min_strength))
    if not isinstance(weights, Weights):
        raise ValidationError("weights", f"must be a memkit.Weights, got {type(weights).__name__}")
    prep = as_prepared(store_or_frame, queries, {"now": now, **prepare_kw})
    ranked = rank(prep, weights, k=max(ks), time_scale_hours=time_scale_hours, min_strength=min_strength)
    pq = query_metrics(prep, ranked, ks)
    return pq if per_query else summarize(pq, by)


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
    ``time_scale_hours`` (recency), ``half_life_hours`` and ``min_strength`` (the strength floor,
    default a store's retrieval floor ``store.decay.min_strength``, else 0). A point that sets
    ``half_life_hours`` but no ``min_strength`` uses that floor, or when it is 0
    :data:`~memkit.evaluate.grid.HALF_LIFE_FLOOR` (0.1, the articles'): a half-life changes a ranking
    only through a floor. Each row shows the ``min_strength`` it used. Embeddings and BM25 are
    computed once; points whose weights are all zero are skipped. ``base`` and the time scale
    default to a store's own (what its search ranks with), else ``Weights()``.
    """
    ks = check_ks(k)
    base, scale = tuned(store_or_frame, base, None)
    if not isinstance(base, Weights):
        raise ValidationError("base", f"must be a memkit.Weights, got {type(base).__name__}")
    points = grid_points(grid)  # every value checked before any work (grid.<name>)
    floor = floor_of(store_or_frame)  # a half-life point without a floor: the store's, else the articles'
    hl_floor = floor or HALF_LIFE_FLOOR
    prep = as_prepared(store_or_frame, queries, dict(prepare_kw))
    frames = []
    for p in points:
        w = {f: p.get(f, getattr(base, f)) for f in WEIGHT_KEYS}
        if sum(w[f] for f in WEIGHT_KEYS[:4]) <= 0:  # neighbour and tie alone rank nothing
            continue
        opts = {
            "time_scale_hours": p.get("time_scale_hours", scale),
            "half_life_hours": p.get("half_life_hours"),
            "min_strength": p.get("min_strength", hl_floor if "half_life_hours" in p else floor),
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
