"""The guard at read time (pure): is a recalled memory consistent with the others, or near a lesson?

Re-exported by :mod:`memkit.guard` (``mk.guard.consistency``, ``mk.guard.lesson_similarity``); the
store calls them for ``search(guard=True)`` and for writes near a lesson (A-MemGuard's "filter after
reading"). Heuristics on embeddings, without an LLM: see each function's honest limits.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import polars as pl

from ..errors import MemkitError, ValidationError
from ..params import GuardParams

__all__ = ["consistency", "lesson_similarity"]


def lesson_similarity(embeddings: np.ndarray, lessons: np.ndarray) -> np.ndarray:
    """Max cosine of each memory to any lesson (both L2-normalized): ``(n, dim), (m, dim) -> (n,)``;
    zeros when there are no lessons."""
    emb = np.asarray(embeddings, dtype=np.float32)
    les = np.asarray(lessons, dtype=np.float32)
    if les.size == 0 or emb.size == 0:  # (before the reshape: no hits has no width to infer)
        return np.zeros(len(emb), dtype=np.float64)
    emb = emb.reshape(len(emb), -1)
    return (emb @ les.reshape(len(les), -1).T).max(axis=1).astype(np.float64)  # (n, m) -> (n,)


_MAD_FLOOR = 0.02  # cosine units: below this spread every hit agrees, so nobody is an outlier
_MAD_NORMAL = 1.4826  # MAD -> standard deviation for normally distributed values


def consistency(
    hits: pl.DataFrame,
    embeddings: np.ndarray,
    params: GuardParams = GuardParams(),
    *,
    query: str | None = None,
) -> pl.DataFrame:
    """Flag recalled memories that disagree with the others (an A-MemGuard-style heuristic).

    For ``n`` hits with embeddings ``(n, dim)`` (row-aligned), a hit's ``consensus`` is its mean
    cosine to the other hits; its robust z-score is ``(consensus - median) / (1.4826 · MAD)``. With at
    least ``params.min_hits`` hits, ``outlier`` is ``z < -params.outlier_z``. If ``params.judge`` is
    set (and ``query`` given), ``judge(query, contents) -> list[bool]`` flags hits too (column
    ``judged``). Returns ``hits`` plus ``consensus, consensus_z, outlier``.

    Honest limits: without an LLM this measures *topical* disagreement, not truth — a poisoned memory
    that shares the others' words passes, and a legitimately unusual memory may be flagged.

    >>> e = np.array([[1, 0, 0], [0.99, 0.14, 0], [0.98, 0, 0.2], [0.97, 0.24, 0], [0, 0, 1]], np.float32)
    >>> e /= np.linalg.norm(e, axis=1, keepdims=True)
    >>> consistency(pl.DataFrame({"id": list("abcde")}), e)["outlier"].to_list()
    [False, False, False, False, True]
    """
    if not isinstance(hits, pl.DataFrame):
        raise ValidationError("hits", f"must be a polars DataFrame, got {type(hits).__name__}")
    emb = np.asarray(embeddings, dtype=np.float64)
    n = hits.height
    if emb.ndim != 2 or emb.shape[0] != n:
        raise ValidationError("embeddings", f"must be ({n}, dim), got {emb.shape}")
    if n >= 2:
        sim = emb @ emb.T  # (n, n)
        consensus = (sim.sum(axis=1) - np.diag(sim)) / (n - 1)
        med = np.median(consensus)
        mad = max(_MAD_NORMAL * float(np.median(np.abs(consensus - med))), _MAD_FLOOR)
        z = (consensus - med) / mad
    else:
        consensus, z = np.full(n, np.nan), np.zeros(n)
    outlier = (z < -params.outlier_z) & (n >= params.min_hits)
    out = hits.with_columns(consensus=pl.Series(consensus, dtype=pl.Float64), consensus_z=pl.Series(z))
    if params.judge is not None and query is not None and n:
        try:  # a judge (often a model call) that fails is named, as a custom detector is
            flags = params.judge(query, hits["content"].to_list())
        except MemkitError:
            raise
        except Exception as e:
            raise MemkitError(f"GuardParams.judge failed: {type(e).__name__}: {e}") from e
        flags = list(flags) if isinstance(flags, Iterable) and not isinstance(flags, (str, bytes)) else None
        if flags is None or len(flags) != n or not all(isinstance(f, (bool, np.bool_)) for f in flags):
            raise ValidationError("GuardParams.judge", f"must return {n} bools, one per hit")
        out = out.with_columns(judged=pl.Series(flags, dtype=pl.Boolean))
        outlier = outlier | np.asarray(flags, dtype=bool)
    return out.with_columns(outlier=pl.Series(outlier, dtype=pl.Boolean))
