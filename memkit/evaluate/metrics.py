"""Ranking metrics, vectorized over queries: recall@k, hit@k, MRR, nDCG, and per-group summaries.

A labelled set is a frame of queries, each with the ids of the memories that answer it
(``relevant``). Ranking ``k`` memories per query gives a boolean hit matrix ``hits[q, r]`` (is the
memory at rank ``r + 1`` relevant?), and every metric is one numpy expression over it:

- recall@k = |relevant in top k| / |relevant|; hit@k = 1 if any relevant in top k;
- MRR = 1 / rank of the first relevant within the ranked list (0 if none there): with rankings cut
  at the largest ``k`` evaluated (as :func:`score_rankings` and ``evaluate`` cut them), it is
  MRR@max(k), so compare MRR only between runs with the same largest ``k``;
- nDCG@k = Σ_r hits[r] / log2(r + 2) over the top k, divided by the same sum for an ideal ranking.

>>> hits = np.array([[False, True, False], [True, True, False]])  # 2 queries, ranks 1-3
>>> n_rel = np.array([2, 2])
>>> recall_at_k(hits, n_rel, 2).tolist(), hit_at_k(hits, n_rel, 1).tolist(), mrr(hits).tolist()
([0.5, 1.0], [0.0, 1.0], [0.5, 1.0])
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import polars as pl

from ..errors import ValidationError, check_frame

__all__ = ["hit_at_k", "metric_columns", "mrr", "ndcg_at_k", "recall_at_k", "score_rankings", "summarize"]


def require_columns(field: str, frame: Any, cols: Iterable[str]) -> None:
    """Raise :class:`~memkit.errors.ValidationError` naming ``field`` unless ``frame`` is a polars
    DataFrame with every one of ``cols`` (:func:`memkit.errors.check_frame`, arguments in this
    module's order).
    """
    check_frame(frame, field, list(cols))


def check_ks(ks: int | Sequence[int]) -> tuple[int, ...]:
    """The cut-offs ``k`` as a tuple of positive Python ints (one int is a tuple of one). numpy
    integers count as ints (``np.int64(5)``, ``np.arange(1, 4)``), bools do not.

    >>> check_ks(5), check_ks(np.arange(1, 3))
    ((5,), (1, 2))
    """

    def whole(k: Any) -> bool:  # an integer, not a bool (True is no cut-off)
        return isinstance(k, numbers.Integral) and not isinstance(k, (bool, np.bool_))

    values = (ks,) if whole(ks) else ks
    try:
        values = tuple(values) if not isinstance(values, (str, bytes)) else None
    except TypeError:  # not a sequence either
        values = None
    if not values or not all(whole(k) and k >= 1 for k in values):
        raise ValidationError("k", f"must be a positive int or a sequence of them, got {ks!r}")
    return tuple(int(k) for k in values)


def recall_at_k(hits: np.ndarray, n_relevant: np.ndarray, k: int) -> np.ndarray:
    """``(q, K)`` hits, ``(q,)`` relevant counts -> ``(q,)`` recall@k (0 where nothing is relevant)."""
    found = hits[:, :k].sum(axis=1)
    return np.divide(found, n_relevant, out=np.zeros(len(hits)), where=n_relevant > 0)


def hit_at_k(hits: np.ndarray, n_relevant: np.ndarray, k: int) -> np.ndarray:
    """``(q,)`` 1.0 where a relevant memory is among the top ``k``."""
    return (hits[:, :k].any(axis=1) & (n_relevant > 0)).astype(np.float64)


def mrr(hits: np.ndarray) -> np.ndarray:
    """``(q,)`` reciprocal rank of the first hit (0 when the ranked list holds none)."""
    first = hits.argmax(axis=1)  # (q,) index of the first True (0 if none)
    return np.where(hits.any(axis=1), 1.0 / (first + 1), 0.0)


def ndcg_at_k(hits: np.ndarray, n_relevant: np.ndarray, k: int) -> np.ndarray:
    """``(q,)`` binary-gain nDCG@k: DCG of the ranking / DCG of the ideal ranking.

    >>> round(float(ndcg_at_k(np.array([[False, True]]), np.array([1]), 2)[0]), 4)  # 1/log2(3)
    0.6309
    """
    disc = 1.0 / np.log2(np.arange(2, k + 2))  # (k,) discount of ranks 1..k
    dcg = (hits[:, :k] * disc[: hits[:, :k].shape[1]]).sum(axis=1)
    ideal = np.cumsum(disc)[np.clip(np.minimum(n_relevant, k), 1, k) - 1]
    return np.where(n_relevant > 0, dcg / ideal, 0.0)


def metric_columns(hits: np.ndarray, n_rel: np.ndarray, ks: Sequence[int]) -> dict[str, np.ndarray]:
    """Every metric for every ``k``: ``{"recall@5": (q,), ..., "mrr": (q,)}``."""
    out: dict[str, np.ndarray] = {}
    for k in ks:
        out[f"recall@{k}"] = recall_at_k(hits, n_rel, k)
        out[f"hit@{k}"] = hit_at_k(hits, n_rel, k)
        out[f"ndcg@{k}"] = ndcg_at_k(hits, n_rel, k)
    out["mrr"] = mrr(hits)
    return out


def score_rankings(ranked: pl.DataFrame, queries: pl.DataFrame, ks: Sequence[int] = (5, 10)) -> pl.DataFrame:
    """Metrics of rankings made anywhere -> one row per query with relevant ids.

    ``ranked``: ``query_id, rank (1 = best), id``; ``queries``: ``query_id, relevant`` (list of ids)
    and any other columns (``category``...), which are kept. Queries without relevant ids are dropped
    (null ids in ``relevant`` are no ids). A ranking that is not a ranking — an id twice for one
    query, two ids at one rank — and a query listed twice are refused (ValidationError): any
    score of them would depend on row order. MRR is MRR@max(ks) (see the module docstring).

    >>> ranked = pl.DataFrame({"query_id": ["a", "a", "b"], "rank": [1, 2, 1], "id": ["x", "y", "z"]})
    >>> qs = pl.DataFrame({"query_id": ["a", "b"], "relevant": [["y"], ["q"]]})
    >>> score_rankings(ranked, qs, ks=(1, 2)).select("query_id", "recall@1", "recall@2", "mrr").rows()
    [('a', 0.0, 1.0, 0.5), ('b', 0.0, 0.0, 0.0)]
    """
    require_columns("ranked", ranked, ("query_id", "rank", "id"))
    require_columns("queries", queries, ("query_id", "relevant"))
    ks = check_ks(ks)
    if ranked.height and not (ranked["rank"].cast(pl.Int64, strict=False) >= 1).fill_null(False).all():  # 0
        raise ValidationError("rank", "must be whole numbers from 1 (the best) on")  # would wrap to the last
    pairs = ((["query_id", "id"], "an id twice for one query"), (["query_id", "rank"], "two ids at a rank"))
    for cols, what in pairs:
        if (twice := ranked.select(cols).is_duplicated()).any():  # a score would depend on row order
            row = ranked.filter(twice).row(0, named=True)
            raise ValidationError("ranked", f"holds {what} (query {row['query_id']!r}, rank {row['rank']})")
    if (twice := queries["query_id"].is_duplicated()).any():
        raise ValidationError("queries", f"lists query {queries.filter(twice)['query_id'][0]!r} twice")
    queries = queries.with_columns(pl.col("relevant").list.drop_nulls())
    qs = queries.filter(pl.col("relevant").list.len() > 0)
    rel = qs.select("query_id", pl.col("relevant").alias("id")).explode("id").unique().with_columns(hit=True)
    width = max(ks)
    j = (
        ranked.filter(pl.col("rank") <= width)
        .join(rel, on=["query_id", "id"], how="left")
        .with_columns(pl.col("hit").fill_null(False))
    )
    pos = {q: i for i, q in enumerate(qs["query_id"].to_list())}
    hits = np.zeros((qs.height, width), dtype=bool)
    qi = j["query_id"].replace_strict(pos, default=-1, return_dtype=pl.Int64).to_numpy()
    ok = qi >= 0
    hits[qi[ok], j["rank"].to_numpy()[ok] - 1] = j["hit"].to_numpy()[ok]
    n_rel = qs["relevant"].list.unique().list.len().to_numpy()
    return qs.with_columns(**{c: pl.Series(v) for c, v in metric_columns(hits, n_rel, ks).items()})


def summarize(per_query: pl.DataFrame, by: str | None = "category") -> pl.DataFrame:
    """Mean of every metric column per value of ``by``, plus an ``"all"`` row (``n`` = queries).

    The group column becomes a string so ``"all"`` fits; ``by=None`` gives the overall row only (as
    does the default ``"category"`` when the queries have no such column).
    """
    metrics = [c for c in per_query.columns if c.split("@")[0] in ("recall", "hit", "ndcg", "mrr")]
    agg = [pl.len().alias("n"), *[pl.col(c).mean() for c in metrics]]
    overall = per_query.select(pl.lit("all").alias(by or "group"), *agg)
    if by is not None and by not in per_query.columns:
        if by != "category":  # the default groups by category when the queries have one
            raise ValidationError("by", f"names no column of the queries ({by!r}); by=None: the overall row")
        return overall
    if by is None:
        return overall
    parts = per_query.group_by(pl.col(by).cast(pl.String)).agg(agg).sort(by)
    return pl.concat([parts, overall.cast(parts.schema)])
