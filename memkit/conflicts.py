"""What a keyed write does to the versions already stored under that key (pure).

A *key* (``user.address``) names a slot; each write to it is a new version. When a new value arrives
for a key whose current (active) version says something else, the store applies a policy:

==============  ==============================================================================
``flag``        default: the new version is stored as ``conflict``; the old stays ``active`` (and
                is what ``read`` returns) until ``store.resolve(key, keep=...)`` picks the winner
``supersede``   newest wins: the new version is ``active``, every older live version ``superseded``
``strict``      the write is refused with :class:`~memkit.errors.ConflictError`; nothing changes
==============  ==============================================================================

The same value again is not a conflict: the old version is superseded quietly by the new one (which
refreshes its timestamps). A key's value is its JSON ``value`` when it has one, else its content.

>>> plan = plan_keyed_write([("m1", "active", "杭州", 1)], "上海", "flag")
>>> plan.status, plan.version, plan.changes, plan.op
('conflict', 2, (), 'conflict')
>>> plan_keyed_write([("m1", "active", "杭州", 1)], "上海", "supersede").changes
(('m1', 'superseded'),)
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np
import polars as pl

from .errors import ConflictError, ValidationError, check_frame
from .params import check_number
from .scoring import similar_pairs

__all__ = ["POLICIES", "KeyedWrite", "conflict_graph", "plan_keyed_write"]

POLICIES = ("flag", "supersede", "strict")


@dataclass(frozen=True)
class KeyedWrite:
    """The plan for one keyed write: the new version's status and number, what happens to existing
    versions (``(id, new_status)`` pairs) and the audit op that records it."""

    status: str
    version: int
    changes: tuple[tuple[str, str], ...]
    op: str  # "add" (new key), "supersede" or "conflict"
    against: str | None = None  # id of the active version the write was compared with


def plan_keyed_write(
    existing: Sequence[tuple[str, str, str, int]],
    new_value: str,
    policy: str,
    *,
    own: Collection[str] = (),
    fixed: Collection[str] = (),
    hidden: Collection[str] = (),
) -> KeyedWrite:
    """Decide a keyed write.

    ``existing`` holds ``(id, status, value, version)`` of every stored version of the key (any
    status); ``new_value`` is the new version's value text. ``own`` holds the ids of the versions
    the writer itself wrote (its owner or creator, same source): under ``flag``, an update of
    one's own current value supersedes it at once instead of waiting as a conflict. ``fixed`` holds
    the ids of versions the writer may not change (another writer's non-public pending value): they
    stay as they are under every policy, and the plan is the same whatever their values (the
    current version is never one: a write it may not change is refused first). ``hidden`` holds the
    ids of versions whose value the writer may not read (an owner's fact its creator made private):
    their value is taken as different whatever it is, so that no outcome tells a guess from the hidden
    value (never "the same value again", never a pending twin), and a refusal does not name them.
    Raises ConflictError under ``strict``.

    >>> plan_keyed_write([("a", "active", "杭州", 1)], "上海", "flag").status
    'conflict'
    >>> plan_keyed_write([("a", "active", "杭州", 1)], "上海", "flag", own={"a"}).status
    'active'
    >>> plan_keyed_write([("a", "active", "杭州", 1), ("b", "conflict", "上海", 2)], "上海", "flag",
    ...                  fixed={"b"}).changes
    ()
    >>> plan_keyed_write([("a", "active", "杭州", 1)], "杭州", "flag", hidden={"a"}).status
    'conflict'
    """
    _check_keyed(existing, new_value, policy)
    version = max((v for *_, v in existing), default=0) + 1
    live = [e for e in existing if e[1] in ("active", "conflict")]
    active = [e for e in live if e[1] == "active"]
    if not active:
        return KeyedWrite("active", version, (), "add")
    current = max(active, key=lambda e: e[3])
    if current[2] == new_value and current[0] not in hidden:
        return KeyedWrite("active", version, ((current[0], "superseded"),), "supersede", current[0])
    if policy == "strict":  # (a hidden value: "a value", as the writer cannot know it differs)
        which = "a value you may not read" if current[0] in hidden else "a different value"
        named = "another writer's memory" if current[0] in hidden else f"id {current[0]}"
        raise ConflictError(
            f"key already holds {which} (version {current[3]}, {named}); "
            "use conflict_policy='flag' or 'supersede', or resolve it first"
        )
    live = [e for e in live if e[0] not in fixed]  # what this write may change
    if policy == "supersede":
        return KeyedWrite(
            "active", version, tuple((e[0], "superseded") for e in live), "supersede", current[0]
        )
    if policy == "flag" and current[0] in own:  # one's own value: replaced; others' proposals stay pending
        mine = tuple((e[0], "superseded") for e in live if e[0] in own)
        return KeyedWrite("active", version, mine, "supersede", current[0])
    # the same value as a pending conflict replaces it quietly: one open proposal per value
    repeats = tuple(
        (e[0], "superseded") for e in live if e[1] == "conflict" and e[2] == new_value and e[0] not in hidden
    )
    return KeyedWrite("conflict", version, repeats, "conflict", current[0])


def _check_keyed(existing: Any, new_value: Any, policy: Any) -> None:
    """A ValidationError naming the argument of :func:`plan_keyed_write` that is malformed."""
    if isinstance(existing, (str, bytes)) or not isinstance(existing, Sequence):
        raise ValidationError(
            "existing", f"must be a sequence of (id, status, value, version), got {existing!r:.60}"
        )
    for e in existing:  # (a key's versions: a few)
        if not (
            isinstance(e, Sequence)
            and len(e) == 4
            and isinstance(e[3], Integral)
            and not isinstance(e[3], bool)
        ):
            raise ValidationError(
                "existing", f"each must be (id, status, value, version: int), got {e!r:.60}"
            )
    if not isinstance(new_value, str):
        raise ValidationError("new_value", f"must be a str, got {type(new_value).__name__}")
    if policy not in POLICIES:
        raise ValidationError("policy", f"must be one of {', '.join(POLICIES)}, got {policy!r:.40}")


def _check_embeddings(embeddings: Any, rows: int) -> np.ndarray:
    """``embeddings`` as ``(rows, dim)`` float32 rows of unit length (a zero row stays zero), as the
    store keeps vectors; a ValidationError naming them unless they are finite numbers, one row per
    memory of the frame."""
    try:
        emb = np.asarray(embeddings, dtype=np.float32)
    except (TypeError, ValueError):
        raise ValidationError(
            "embeddings", f"must be an (n, dim) array of numbers, got {embeddings!r:.60}"
        ) from None
    if emb.ndim != 2 or len(emb) != rows or emb.shape[1] == 0:
        raise ValidationError(
            "embeddings", f"must be ({rows}, dim): one row per memory, got shape {emb.shape}"
        )
    if not np.isfinite(emb).all():
        raise ValidationError("embeddings", "contains NaN or infinity")
    norms = np.linalg.norm(emb, axis=1, keepdims=True)  # (n, 1)
    return emb / np.where(norms == 0, 1.0, norms)  # (n, dim): a cosine is a dot product


def conflict_graph(
    frame: pl.DataFrame,
    embeddings: np.ndarray | None = None,
    threshold: float = 0.85,
    *,
    audit: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The store's memories as a graph -> ``(nodes, edges)`` polars frames, ready for a chart.

    ``frame`` is ``store.frame()`` (``store.frame(as_of=t)`` gives the graph as the store saw it at
    ``t``). Nodes are the memories: ``id, namespace, key, version, status, content, created_at``.
    Edges are ``source, target, kind``:

    - ``next_version``: from each version of a key to the one written after it (lineage);
    - ``conflicts_with``: from each pending ``conflict`` version to the one version it disputes, the
      one the store compared it with: the key's current version when it was written (an expired
      version still marked ``active`` is not one). ``audit`` (``store.audit(namespace,
      op="conflict")``) gives the store's own record of it, which also names a disputed version
      superseded since (by its owner's update), where the frame alone draws no edge;
    - ``merged_into``: from each consolidated member to the merged memory (its ``merged_from``);
    - ``near_duplicate_of``: with ``embeddings`` (row-aligned with ``frame``), between active
      memories of one namespace whose cosine is at least ``threshold`` (blocked products, never N×N).
      Rows are normalized to unit length first, as the store keeps vectors (a zero row stays zero).

    A frame without those columns, a ``threshold`` that is no number in [-1, 1] and ``embeddings``
    that are not finite numbers, one row per memory, are a ValidationError naming them.

    >>> from datetime import datetime, timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> f = pl.DataFrame({"id": ["a", "b"], "namespace": ["u", "u"], "key": ["addr", "addr"],
    ...                   "version": [1, 2], "status": ["active", "conflict"],
    ...                   "content": ["杭州", "上海"], "created_at": [t, t], "merged_from": [[], []]})
    >>> nodes, edges = conflict_graph(f)
    >>> edges.rows()
    [('a', 'b', 'next_version'), ('b', 'a', 'conflicts_with')]
    """
    cols = ["id", "namespace", "key", "version", "status", "content", "created_at"]
    check_frame(frame, "frame", cols)
    threshold = check_number("threshold", threshold, lo=-1.0, hi=1.0)
    emb = None if embeddings is None else _check_embeddings(embeddings, frame.height)
    edge_schema = {"source": pl.String, "target": pl.String, "kind": pl.String}
    nodes = frame.select(cols)
    if nodes.is_empty():
        return nodes, pl.DataFrame(schema=edge_schema)
    keyed = nodes.filter(pl.col("key").is_not_null()).sort("namespace", "key", "version")
    lineage = (
        keyed.with_columns(target=pl.col("id").shift(-1).over("namespace", "key"))
        .filter(pl.col("target").is_not_null())
        .select(source="id", target="target", kind=pl.lit("next_version"))
    )
    disputes = _disputed_versions(keyed, audit).with_columns(kind=pl.lit("conflicts_with"))
    merged = (
        frame.select(target="id", source="merged_from")
        .explode("source")
        .filter(pl.col("source").is_not_null())
        .select("source", "target", kind=pl.lit("merged_into"))
    )
    parts = [lineage, disputes, merged]
    if emb is not None:
        idx = frame.with_row_index("_row").filter(pl.col("status") == "active")
        for (_,), group in idx.group_by("namespace", maintain_order=True):
            rows = group["_row"].to_numpy()
            i, j = similar_pairs(emb[rows], threshold)  # consolidation's blocked products
            ids = group["id"].to_numpy()
            parts.append(pl.DataFrame({"source": ids[i], "target": ids[j], "kind": "near_duplicate_of"}))
    return nodes, pl.concat([p.cast(edge_schema) for p in parts])


def _disputed_versions(keyed: pl.DataFrame, audit: pl.DataFrame | None = None) -> pl.DataFrame:
    """Which version each pending ``conflict`` version of ``keyed`` (a store frame) disputes ->
    ``source, target`` (pending id, disputed id), one row per pending version whose target is in
    ``keyed``, in ``keyed``'s order.

    The target is the version :func:`plan_keyed_write` compared the write with (its ``against``):
    the key's newest ``active`` version numbered below it that had not expired when it was written
    (``updated_at``, the write's or the approval's instant, else ``created_at``). An expired version
    still marked ``active`` no longer held the key then, so it is not disputed. Given ``audit``
    (``store.audit(..., op="conflict")``), the store's recorded ``against`` is used instead where
    there is one: it also names a target that is no longer active (superseded by its owner's update
    since), which the frame alone cannot place.
    """
    if "valid_until" not in keyed.columns:  # a frame without validity: nothing expires
        keyed = keyed.with_columns(valid_until=pl.lit(None, dtype=keyed.schema["created_at"]))
    written = (
        pl.coalesce("updated_at", "created_at") if "updated_at" in keyed.columns else pl.col("created_at")
    )
    pending = keyed.filter(pl.col("status") == "conflict").select(
        "namespace", "key", "version", source="id", written=written
    )
    held = keyed.filter(pl.col("status") == "active").select(
        "namespace", "key", target="id", t_version="version", t_until="valid_until"
    )
    # every (pending, active) pair of a key, kept where the active one held the key at the write
    pairs = pending.join(held, on=["namespace", "key"], maintain_order="left").filter(
        (pl.col("t_version") < pl.col("version"))
        & (pl.col("t_until").is_null() | (pl.col("t_until") > pl.col("written")))
    )
    # the newest of them: the current version the write was compared with
    derived = pairs.sort("t_version").group_by("source", maintain_order=True).last()
    out = pending.select("source").join(
        derived.select("source", "target"), on="source", how="left", maintain_order="left"
    )
    if audit is not None:
        check_frame(audit, "audit", ("op", "memory_id", "detail"))
        told = (
            audit.filter(pl.col("op") == "conflict", pl.col("memory_id").is_not_null())
            .select(source="memory_id", told=pl.col("detail").str.json_path_match("$.against"))
            .unique("source", keep="last", maintain_order=True)
        )
        out = out.join(told, on="source", how="left", maintain_order="left").select(
            "source", target=pl.coalesce("told", "target")
        )
    # an edge needs both ends on the graph (a requester's frame may lack the disputed version)
    return out.filter(pl.col("target").is_in(keyed["id"].implode()))
