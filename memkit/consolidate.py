"""Consolidation: find near-duplicate memories and plan their merge, as a pure function.

The source articles merge two memories when their cosine similarity reaches a threshold (0.85; they
found 0.82–0.88 safe: 0.7 merges different intents, 0.95 hardly merges anything). Their loop compares
every pair in Python and concatenates the texts. :func:`plan_merges` keeps the rule and fixes the rest:

1. **Candidates.** Only ``active`` memories, and only within one group of the same namespace, the same
   layer and the same key (two unkeyed memories may merge; a keyed and an unkeyed one never do).
2. **Pairs.** Cosine of L2-normalized rows is a dot product, so a group's pairs come from blocked
   matrix products: tiles of ``block_size × block_size`` rows, upper triangle only, each thresholded and
   dropped. Memory stays O(block_size²), never O(N²), and no Python loop runs over pairs.
3. **Clusters.** Pairs are edges; clusters are the connected components (vectorized union-find:
   hook the larger root onto the smaller, then pointer jumping). So A~B and B~C put A, B, C in one
   cluster even when A and C are not similar. Clusters above ``max_cluster`` are left out of the plan:
   a chain that long usually means a threshold too loose or a templated text, not one fact. A
   ``_weak`` memory and a stronger one are never linked, nor (``distinct_facts``, the default) two
   memories whose fact tokens differ: a number, a negation, a time word, a name (:mod:`memkit.facts`;
   "预算5000元" / "预算8000元" at cosine 0.92 stay two memories), nor, always, two whose ``value`` columns
   differ (a merged memory holds one value; a missing one joins a cluster of one value only:
   :mod:`memkit.merge_links`). Equal tokens are an equivalence, so
   every two members of a cluster have the same ones (:func:`cluster_labels`); :func:`held_apart`
   lists the pairs above the threshold left unlinked, and why.
4. **Merge.** One plan row per cluster (below). Nothing is written: the store applies the plan.

The merge rule
--------------
- **survivor**: the most informative member, i.e. most distinct tokens (:func:`memkit.text.tokenize`),
  ties to the highest importance, then the newest ``created_at``, then the first text, then the
  first written (the frame's order: ``store.frame()`` lists memories of one instant in the order they
  were written; never the id, which is random). Its embedding becomes the merged row's.
- **content**: the survivor's content, plus, for each other member in ``created_at`` order (one
  instant's in the frame's order), the sentences (split on ``。！？!?``, the ``;`` / ``；`` a merged text
  joins with, newlines, and a ``.`` before a space or the end, so ``3.10`` is not split) not yet said,
  each once (a sentence a later one says is dropped, the survivor's too): a sentence is covered when its
  words in order (as written, stopwords too — "not", "am"/"pm", "he"/"she", "was"/"is" change a fact —
  but articles and Chinese particles; single CJK characters; punctuation, case and width aside) are a
  run of the words of a sentence already in the text, and the words around that run in its clause do not
  change what it says (a negation, a subject, a modal, a condition: :func:`memkit.facts.alters`; "Not
  allergic to peanuts" does not say "Allergic to peanuts", "Likes coffee without sugar" does say "Likes
  coffee"). So a duplicate adds nothing, and two sentences that differ in a negation, a number or an
  order (Beijing to Shanghai / Shanghai to Beijing) are both kept: a merge never drops a fact one of its
  members states. Added sentences are joined with ``"；"`` when the survivor is CJK-dominant, else
  ``"; "``.
- **fields**: the survivor's key, kind, source and value (else another member's: they agree),
  importance = max, created_at = min, last_access_at = max, access_count = sum,
  protected = any member protected; with ``half_life_hours`` and ``_age_hours`` (hours from each
  ``created_at`` to ``now``; ``store.merge_candidates`` adds it), the importance is capped so that
  the merged memory (half-life = max) is no stronger at ``now`` than its strongest member
  (:func:`memkit.merge_rule.capped_importance`): a merge of weak members stays weak.

Applying a plan is idempotent: merged rows keep the survivor's embedding, rows of different
components are below the threshold (or one weak, one not, or of other fact tokens) by construction, a
merged row is weak exactly when its members were (the cap; and never weaker than its oldest member)
and says its members' fact tokens (they share one set): a second plan finds none.

Examples
--------
>>> from datetime import datetime, timezone
>>> t = [datetime(2026, 1, d, tzinfo=timezone.utc) for d in (1, 2, 3)]
>>> frame = pl.DataFrame({
...     "id": ["a", "b", "c"], "namespace": ["u"] * 3, "layer": ["long_term"] * 3,
...     "key": [None, None, None],
...     "content": ["I like Python for scripts.", "I like Python for scripts", "Tea at 3pm."],
...     "importance": [0.5, 0.8, 0.4], "created_at": t, "last_access_at": t,
...     "access_count": [1, 2, 0], "status": ["active"] * 3, "protected": [False, True, False]})
>>> emb = np.array([[1, 0], [0.96, 0.28], [0, 1]], dtype=np.float32)     # (3, 2), unit rows
>>> plan = plan_merges(frame, emb)
>>> plan.select("members", "survivor", "content", "importance", "access_count", "protected").rows()
[(['a', 'b'], 'b', 'I like Python for scripts', 0.8, 3, True)]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from .decay import strength
from .errors import ValidationError, check_frame
from .merge_links import LINK, candidate_pairs, components, unlinked
from .merge_rule import by_survivor_rule, capped_importance, merge_content, remerge
from .params import check_number

__all__ = [
    "PLAN_SCHEMA", "MergeParams", "cluster_labels", "held_apart", "merge_content", "plan_grouped",
    "plan_merges", "remerge",
]  # fmt: skip

REQUIRED = ("id", "namespace", "layer", "key", "content", "importance", "created_at", "last_access_at",
            "access_count", "status", "protected")  # fmt: skip
PLAN_SCHEMA: dict[str, Any] = {
    "cluster": pl.Int64, "namespace": pl.String, "layer": pl.String, "key": pl.String,
    "members": pl.List(pl.String), "survivor": pl.String, "content": pl.String, "importance": pl.Float64,
    "created_at": pl.Datetime("us", "UTC"), "last_access_at": pl.Datetime("us", "UTC"),
    "access_count": pl.Int64, "protected": pl.Boolean, "min_similarity": pl.Float64, "reason": pl.String,
}  # fmt: skip
"""Columns of a merge plan (the two timestamps take the input frame's datetime type)."""

_EPS = 1e-6  # subtle: float32 dot products round; a cosine "exactly at" the threshold must still merge


@dataclass(frozen=True)
class MergeParams:
    """How near-duplicates are found and merged.

    - ``threshold``: pairs with cosine >= threshold are near-duplicates (0.85; safe 0.82–0.88).
    - ``block_size``: rows per side of one tile of the blocked matrix product; a tile holds
      ``block_size²`` float32 scores (2048 -> 16 MB).
    - ``max_cluster``: clusters with more members are left out of the plan (too loose to be one fact).
    - ``distinct_facts``: never link two memories whose fact tokens differ (a number, a negation, a
      time word, a name: :mod:`memkit.facts`), however similar; ``False`` links by cosine alone.

    >>> MergeParams(threshold=0.4)
    Traceback (most recent call last):
    ...
    memkit.errors.ValidationError: MergeParams.threshold: must be >= 0.5, got 0.4
    """

    threshold: float = field(default=0.85, metadata={"range": (0.5, 1.0, 0.01), "doc": "cosine to merge"})
    block_size: int = field(default=2048, metadata={"range": (1, 16384, 1), "doc": "rows per tile side"})
    max_cluster: int = field(default=50, metadata={"range": (2, 10_000, 1), "doc": "largest cluster merged"})
    distinct_facts: bool = field(
        default=True, metadata={"doc": "never link memories whose fact tokens differ"}
    )

    def __post_init__(self) -> None:
        """Validate and normalize every field at construction, naming the bad one."""
        object.__setattr__(
            self, "threshold", check_number("MergeParams.threshold", self.threshold, lo=0.5, hi=1.0)
        )
        for name, lo in (("block_size", 1), ("max_cluster", 2)):
            v = check_number(f"MergeParams.{name}", getattr(self, name), lo=lo)
            if v != int(v):
                raise ValidationError(f"MergeParams.{name}", f"must be a whole number, got {v}")
            object.__setattr__(self, name, int(v))
        if not isinstance(self.distinct_facts, bool):
            raise ValidationError(
                "MergeParams.distinct_facts", f"must be a bool, got {self.distinct_facts!r}"
            )


# ----------------------------------------------------------------------------------------- clusters
def _as_float(embeddings: Any) -> np.ndarray:
    """``embeddings`` as a float32 array, or a ValidationError naming them (not numbers)."""
    try:
        return np.asarray(embeddings, dtype=np.float32)
    except (TypeError, ValueError):
        raise ValidationError(
            "embeddings", f"must be an (n, dim) array of numbers, got {embeddings!r:.60}"
        ) from None


def _check_params(params: Any) -> None:
    """A ValidationError naming ``params`` unless it is a :class:`MergeParams`."""
    if not isinstance(params, MergeParams):
        raise ValidationError("params", f"must be a memkit.MergeParams, got {type(params).__name__}")


def _check(frame: pl.DataFrame, embeddings: np.ndarray) -> np.ndarray:
    """Check that ``frame`` is a polars DataFrame with the planner's columns and ``embeddings`` one
    finite row per memory -> the embeddings as float32."""
    check_frame(frame, "frame", REQUIRED)
    emb = _as_float(embeddings)
    if emb.ndim != 2 or len(emb) != frame.height:
        raise ValidationError("embeddings", f"must be ({frame.height}, dim), got shape {emb.shape}")
    if not np.isfinite(emb).all():
        raise ValidationError("embeddings", "contains NaN or infinity")
    return emb


def cluster_labels(
    frame: pl.DataFrame, embeddings: np.ndarray, params: MergeParams = MergeParams()
) -> np.ndarray:
    """Component label of every row of ``frame``: the row index of its cluster's first row.

    Singletons and non-active rows label themselves. ``(n, dim) -> (n,)`` int64. Two cuts come before
    the components are found:

    - a boolean ``_weak`` column (below the forgetting floor) cuts each weak-strong pair (merged, the
      weak one would date fresh facts as old as itself, and ``forget()`` erase them): each side
      clusters among itself, connected at the threshold (two weak memories linked only through a
      strong one stay apart);
    - with ``params.distinct_facts`` (default), a pair whose fact tokens differ
      (:func:`memkit.facts.same_facts`: a number, a negation, a time word, a name) is no link. Equal
      tokens are an equivalence, so every member of a cluster has the same tokens as every other:
      A~B and B~C never put two memories whose tokens differ in one cluster, and the merged memory
      has those tokens too (a second plan links it to nothing the first held apart).

    :func:`held_apart` lists the pairs these cuts leave unlinked, and why."""
    _check_params(params)
    emb = _check(frame, embeddings)
    u, v, cut = candidate_pairs(frame, emb, params.threshold - _EPS, params.block_size, params.distinct_facts)
    return components(frame.height, u[cut == LINK], v[cut == LINK])


def held_apart(
    frame: pl.DataFrame, embeddings: np.ndarray, params: MergeParams = MergeParams()
) -> pl.DataFrame:
    """The pairs at or above the threshold that the plan does not link, and why -> ``namespace, id_a,
    id_b, content_a, content_b, similarity, reason``, most similar first. Pairs are those
    :func:`plan_grouped` could join (same namespace, layer, key and access group); the reason is
    ``"fact tokens differ: numbers 5000 ≠ 8000"`` (:func:`memkit.facts.fact_difference`) or ``"one is
    below the forgetting floor, the other not"``.

    >>> from datetime import datetime, timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> frame = pl.DataFrame({"id": ["a", "b"], "namespace": ["u"] * 2, "layer": ["long_term"] * 2,
    ...     "key": [None, None], "content": ["预算是5000元", "预算是8000元"], "importance": [0.5] * 2,
    ...     "created_at": [t] * 2, "last_access_at": [t] * 2, "access_count": [0] * 2,
    ...     "status": ["active"] * 2, "protected": [False] * 2})
    >>> emb = np.array([[1, 0], [0.95, 0.31]], dtype=np.float32)
    >>> plan_merges(frame, emb).height, held_apart(frame, emb).select("similarity", "reason").rows()
    (0, [(0.95, 'fact tokens differ: numbers 5000 ≠ 8000')])
    """
    _check_params(params)
    emb = _check(frame, embeddings)
    by = tuple(
        c for c in ("namespace", "layer", "key", "access", "owner", "created_by") if c in frame.columns
    )
    pairs = candidate_pairs(frame, emb, params.threshold - _EPS, params.block_size, params.distinct_facts, by)
    return unlinked(frame, emb, *pairs)


# --------------------------------------------------------------------------------------------- plan
def plan_grouped(
    frame: pl.DataFrame, embeddings: np.ndarray, params: MergeParams = MergeParams()
) -> pl.DataFrame:
    """:func:`plan_merges` within each access group (same ``access``, ``owner`` and ``created_by``),
    so a merge never moves a private or protected text into a memory other requesters can read ->
    one plan, clusters renumbered 0.. This is the plan ``store.consolidate`` applies and the merge
    explorer shows. Bad input is a ValidationError naming ``frame``, ``embeddings`` or ``params``."""
    _check_params(params)
    check_frame(frame, "frame", (*REQUIRED, "access", "owner", "created_by"))
    emb = _check(frame, embeddings)
    parts = [
        plan_merges(g.drop("_row"), emb[g["_row"].to_numpy()], params)
        for _, g in frame.drop("_row", strict=False)
        .with_row_index("_row")
        .group_by("access", "owner", "created_by", maintain_order=True)
    ]
    if not parts:
        return plan_merges(frame.head(0), emb[:0], params)
    plan = pl.concat(parts)
    return plan.with_columns(cluster=pl.int_range(pl.len()).cast(plan.schema["cluster"]))


def plan_merges(
    frame: pl.DataFrame, embeddings: np.ndarray, params: MergeParams = MergeParams()
) -> pl.DataFrame:
    """The merge plan: one row per cluster of >= 2 near-duplicate active memories (see module doc).

    ``frame`` needs ``id, namespace, layer, key, content, importance, created_at, last_access_at,
    access_count, status, protected`` (``store.frame()`` has them); ``embeddings`` is ``(n, dim)``,
    L2-normalized, row-aligned with ``frame``. Optional columns, as ``store.merge_candidates`` gives
    them: ``_weak`` (:func:`cluster_labels`), ``half_life_hours`` with ``_age_hours`` (the importance
    cap of the module doc). Returns :data:`PLAN_SCHEMA` columns, clusters numbered 0.. in order of
    their first row; empty (typed) when nothing merges. Pure: no I/O, no clock. Memories of one
    ``created_at`` are taken in the order of ``frame`` (the order written, from ``store.frame()``),
    never by id: one frame gives one plan, in every run.
    """
    _check_params(params)
    _check(frame, embeddings)  # (before the frame's schema is read)
    times = {c: frame.schema.get(c, PLAN_SCHEMA[c]) for c in ("created_at", "last_access_at")}
    schema = {**PLAN_SCHEMA, **times}  # timestamps keep the input's datetime type
    labels = cluster_labels(frame, embeddings, params)
    emb = np.asarray(embeddings, dtype=np.float32)
    size = np.bincount(labels, minlength=len(labels))[labels]  # (n,) members in each row's cluster
    rows = np.flatnonzero((size >= 2) & (size <= params.max_cluster))
    if rows.size == 0:
        return pl.DataFrame(schema=schema)
    members = by_survivor_rule(
        frame[rows].with_columns(_row=pl.Series(rows), _label=pl.Series(labels[rows])), "_label"
    ).with_columns(_survivor_row=pl.col("_row").first().over("_label"))
    surv = members["_survivor_row"].to_numpy()
    sim = np.einsum("ij,ij->i", emb[members["_row"].to_numpy()], emb[surv])  # (m, dim)·(m, dim) -> (m,)
    is_survivor = pl.col("_row") == pl.col("_survivor_row")
    members = members.with_columns(_sim=pl.when(~is_survivor).then(pl.Series(sim.astype(np.float64))))
    capped = {"half_life_hours", "_age_hours"} <= set(frame.columns)  # the store's candidates: at `now`
    if capped:  # each member's strength at `now`, for the cap on the merged importance (merge_rule)
        cols = (members[c].to_numpy() for c in ("importance", "_age_hours", "half_life_hours"))
        members = members.with_columns(_strength=pl.Series(strength(*cols), dtype=pl.Float64))
    at_now = [pl.col("_strength").max(), pl.col("half_life_hours").max(), pl.col("_age_hours").max()]
    plan = (
        members.group_by("_label")
        .agg(
            pl.col("namespace", "layer", "key").first(),
            pl.col("id").sort_by("created_at", "_row").alias("members"),  # one instant's: as written
            pl.col("id").filter(is_survivor).first().alias("survivor"),
            pl.col("content").filter(is_survivor).first().alias("_survivor_content"),
            pl.col("content")
            .sort_by("created_at", "_row")
            .filter(~is_survivor.sort_by("created_at", "_row"))
            .alias("_others"),
            pl.col("importance").max(),
            pl.col("created_at").min(),
            pl.col("last_access_at").max(),
            pl.col("access_count").sum(),
            pl.col("protected").any(),
            pl.col("_sim").min().alias("min_similarity"),
            pl.col("_row").min().alias("_first"),
            *(at_now if capped else []),
        )
        .sort("_first")
    )
    if capped:  # no stronger at `now` than its strongest member (merge_rule.capped_importance)
        top, hl, age = (plan[c].to_numpy() for c in ("_strength", "half_life_hours", "_age_hours"))
        plan = plan.with_columns(importance=capped_importance(top, plan["importance"].to_numpy(), hl, age))
    merged = [merge_content(s, o) for s, o in zip(plan["_survivor_content"], plan["_others"], strict=True)]
    reason = pl.format(
        "{} memories chained by cosine >= {} (min {} to the survivor)",
        pl.col("members").list.len(),
        pl.lit(f"{params.threshold:g}"),
        pl.col("min_similarity").round(3),
    )
    return (
        plan.with_columns(
            cluster=pl.int_range(pl.len(), dtype=pl.Int64), content=pl.Series(merged), reason=reason
        )
        .select(list(schema))
        .cast(schema)
    )
