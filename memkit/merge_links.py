"""Which pairs of memories at the merge threshold become links of a cluster, and why the others do not.

:func:`memkit.consolidate.cluster_labels` joins the links into clusters and
:func:`memkit.consolidate.held_apart` lists the rest; both call :func:`candidate_pairs`, so what the
plan does and what it reports agree. A pair is a candidate when both memories are ``active``, in one
group (namespace, layer, key; the planner's callers add the access group) and at cosine >= the
threshold. It is no link when

- ``WEAK``: one memory is below the forgetting floor and the other not (a ``_weak`` column, as
  ``store.merge_candidates`` gives it): merged, the weak one would date fresh facts as old as itself;
- ``FACTS``: their fact tokens differ (:func:`memkit.facts.same_facts`: a number, a negation, a time
  word, a name; a relative time word, "next month", written on another day), when ``distinct_facts``
  is on.

Cost: the pairs come from blocked matrix products (:func:`memkit.scoring.similar_pairs`, memory
O(block²)); the fact rule tokenizes only the rows that candidate pairs name, each once, and compares
one key per row: on LoCoMo's 2,541 observations it reads 22 texts (README, "Consolidation").
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .fact_pairs import fact_differences
from .facts import same_facts
from .scoring import similar_pairs

__all__ = ["FACTS", "GROUP", "LINK", "REASONS", "WEAK", "candidate_pairs", "unlinked"]

LINK, WEAK, FACTS = 0, 1, 2
REASONS = {WEAK: "one is below the forgetting floor, the other not", FACTS: "fact tokens differ"}
"""What each ``cut`` code of :func:`candidate_pairs` but ``LINK`` means, in words."""
GROUP = ("namespace", "layer", "key")
"""The columns two memories must share to be merged (the planner's callers add the access group)."""


def candidate_pairs(
    frame: pl.DataFrame,
    emb: np.ndarray,
    threshold: float,
    block_size: int,
    distinct_facts: bool = True,
    by: tuple[str, ...] = GROUP,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of active rows of ``frame`` in one group (same ``by`` columns) whose rows of ``emb``
    (``(n, dim)``, unit rows) have a cosine >= ``threshold`` -> ``(u, v, cut)``, each ``(e,)``: the
    row indices (``u < v``) and why the pair is no link (``LINK`` when it is one, else ``WEAK`` or
    ``FACTS``, module doc). A loop over groups, never over memories or pairs.

    >>> f = pl.DataFrame({"namespace": ["u"] * 3, "layer": ["l"] * 3, "key": [None] * 3,
    ...                   "status": ["active"] * 3, "content": ["Has 2 cats", "Has two cats", "Has 3 cats"]})
    >>> [a.tolist() for a in candidate_pairs(f, np.ones((3, 1), np.float32), 0.85, 64)]
    [[0, 0, 1], [1, 2, 2], [0, 2, 2]]
    """
    groups = (
        frame.with_row_index("_row")
        .filter(pl.col("status").cast(pl.String) == "active")
        .group_by(*by, maintain_order=True)
        .agg("_row")
        .filter(pl.col("_row").list.len() >= 2)
    )
    edges_u, edges_v = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
    for rows in groups["_row"].to_list():  # a loop over groups, not memories
        rows = np.asarray(rows, dtype=np.int64)
        contiguous = rows[-1] - rows[0] + 1 == len(rows)  # one group, or a sorted frame: no copy
        sub = emb[rows[0] : rows[-1] + 1] if contiguous else emb[rows]
        i, j = similar_pairs(sub, threshold, block_size)
        edges_u.append(rows[i])
        edges_v.append(rows[j])
    u, v = np.concatenate(edges_u), np.concatenate(edges_v)  # (e,), (e,)
    cut = np.full(len(u), LINK, dtype=np.int8)
    if "_weak" in frame.columns:  # a weak-strong pair is no link: each side clusters on its own
        weak = frame["_weak"].to_numpy().astype(bool)  # (n,)
        cut[weak[u] != weak[v]] = WEAK
    if distinct_facts:  # only the candidates' own rows are tokenized: a few, never the whole namespace
        todo = np.flatnonzero(cut == LINK)
        written = frame["created_at"] if "created_at" in frame.columns else None  # (relative dates)
        cut[todo[~same_facts(frame["content"], u[todo], v[todo], written)]] = FACTS
    return u, v, cut


def unlinked(
    frame: pl.DataFrame, emb: np.ndarray, u: np.ndarray, v: np.ndarray, cut: np.ndarray
) -> pl.DataFrame:
    """The candidate pairs of :func:`candidate_pairs` that are no link -> ``namespace, id_a, id_b,
    content_a, content_b, similarity, reason``, most similar first (then by ids). The reason of a fact
    cut names the difference: ``"fact tokens differ: numbers 5000 ≠ 8000"``."""
    keep = cut != LINK
    u, v, cut = u[keep], v[keep], cut[keep]
    a, b = frame["content"].gather(u), frame["content"].gather(v)
    at = frame["created_at"] if "created_at" in frame.columns else None
    facts = np.flatnonzero(cut == FACTS)  # each text tokenized once, the pairs compared by joins
    why = fact_differences(frame["content"], u[facts], v[facts], at)
    reasons = np.array([REASONS[WEAK]] * len(cut), dtype=object)
    reasons[facts] = [f"{REASONS[FACTS]}: {w}" for w in why]
    return pl.DataFrame(
        {
            "namespace": frame["namespace"].gather(u).cast(pl.String),
            "id_a": frame["id"].gather(u),
            "id_b": frame["id"].gather(v),
            "content_a": a.cast(pl.String),
            "content_b": b.cast(pl.String),
            "similarity": np.einsum("ij,ij->i", emb[u], emb[v]).astype(np.float64).round(6),  # (e,)
            "reason": pl.Series(reasons.tolist(), dtype=pl.String),
        }
    ).sort("similarity", "id_a", "id_b", descending=[True, False, False])
