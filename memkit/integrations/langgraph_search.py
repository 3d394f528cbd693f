"""The read side of :class:`~memkit.integrations.langgraph.MemkitStore`: search and namespace listing.

LangGraph's ``SearchOp`` asks for items under a namespace prefix, optionally ranked by a query and
filtered by value. memkit answers it with its own ranking: for every memkit namespace under the
prefix, :meth:`SearchOps._current` is what the namespace holds *now* (the active version of each key
that is valid at ``now``, in the statuses of then: a clock set back replays, as ``get`` does),
:meth:`~memkit.MemoryStore.search` scores it (the same hybrid score, decay floor and weights as any
memkit search, ``reinforce=False``), and hits from several namespaces are merged in memkit's order
(near ties newest first, :func:`memkit.ties.tie_order`: ``score`` need not fall monotonically;
weights with ``tie=0.0, neighbour=0.0`` give plain score order). Items put with ``index=False`` and
a search without a (non-blank) query come after the ranked hits, newest first, unscored. Only the
page returned is reinforced (``refresh_ttl``), never what was merely looked at.
``list_namespaces`` lists the namespaces that hold an item at ``now``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import polars as pl
from langgraph.store.base import ListNamespacesOp, SearchItem, SearchOp

from ..errors import ValidationError
from ..text import is_blank
from ..ties import tie_order
from .langgraph_items import (
    NOINDEX,
    MemkitSearchItem,
    decode_label,
    decode_namespace,
    item_value,
    matches_filter,
    matches_namespace,
)

__all__ = ["SearchOps"]

_MAX_K = 10_000  # memkit's largest search: a bigger namespace contributes its best 10,000 hits
_PARTS = ("similarity", "importance", "strength", "recency", "keyword", "neighbour")  # a score's breakdown


def _labels(name: str) -> tuple[str, ...] | None:
    """A memkit namespace as LangGraph's labels, or None when it is not one LangGraph can address
    (written without LangGraph with a ``%`` or an outer space in a label: never listed or searched)."""
    try:
        return decode_namespace(name)
    except ValidationError:
        return None


def _key(name: str) -> str:
    """A memkit key as LangGraph's key; one written without LangGraph that is no label's encoding
    is shown as it is."""
    try:
        return decode_label(name)
    except ValidationError:
        return name


def _valid(now: datetime) -> pl.Expr:
    """Valid at ``now``: ``valid_from <= now < valid_until`` (either end may be open)."""
    return (pl.col("valid_from").is_null() | (pl.col("valid_from") <= now)) & (
        pl.col("valid_until").is_null() | (pl.col("valid_until") > now)
    )


class SearchOps:
    """Search and namespace listing for :class:`~memkit.integrations.langgraph.MemkitStore` (a mixin:
    it reads ``self.store``, ``self.requester``, ``self.weights`` and ``self.min_strength``; ``weights``
    is read at each search: the store's, as they are then, unless the adapter was given its own)."""

    store: Any
    requester: str | None
    weights: Any
    min_strength: float

    def _refresh(self, refresh: bool | None, ns: str, ids: list[str], now: datetime) -> None:
        """``refresh_ttl``: reinforce what the read returned (never on a read-only store). ``None``
        (LangGraph's "the store's default") reinforces like ``True``; only ``False`` does not."""
        if ids and refresh is not False and not self.store.read_only:
            self.store.reinforce(ids, namespace=ns, requester=self.requester, now=now)

    def _names(self, now: datetime, prefix: tuple[str, ...] = ()) -> list[str]:
        """The memkit namespaces under a LangGraph prefix that hold, at ``now``, something the requester
        may read: written by then, valid then, current or held for review (``store.namespaces(now=)``;
        one whose items all expired, or were all written later, holds nothing ``get`` or search returns).

        Compared label by label on the decoded names, not as strings: the prefix ``("memories",)``
        holds ``"memories.alice"`` but not ``"memories_old"``.
        """
        names = self.store.namespaces(requester=self.requester, now=now)["namespace"].to_list()
        n = len(prefix)
        return [
            name for name in names if (labels := _labels(name)) is not None and labels[:n] == tuple(prefix)
        ]

    def _as_of(self, ns: str, now: datetime) -> pl.DataFrame:
        """The namespace as it stood at ``now`` for the requester: what was written by then, each memory
        in its status then (``frame(as_of=now)``), so a search at an earlier ``now`` (a clock set back,
        a replay) lists what ``get`` returns then, not today's statuses."""
        return self.store.frame(ns, as_of=now, requester=self.requester)

    def _current(self, ns: str, now: datetime) -> pl.DataFrame:
        """The namespace's items at ``now``: the active version of each key valid then (and the
        unkeyed memories), with ``first_at``, the key's first version's time.

        Valid means ``valid_from <= now < valid_until`` (either end may be open), the read gate's rule.
        """
        f = self._as_of(ns, now)
        first = f.filter(pl.col("key").is_not_null()).group_by("key").agg(first_at=pl.col("created_at").min())
        live = f.filter((pl.col("status") == "active") & _valid(now))
        # first_at becomes LangGraph's created_at (an unkeyed memory's own); noindex: put with index=False
        return live.join(first, on="key", how="left", maintain_order="left").with_columns(
            first_at=pl.coalesce("first_at", "created_at"),
            noindex=pl.col("tags").list.contains(NOINDEX),
        )

    def _search(self, op: SearchOp, now: datetime) -> list[SearchItem]:
        """One ``SearchOp`` -> a page of items: ranked hits of every namespace under the prefix (merged in
        memkit's order), then unranked items (no query, or put with ``index=False``), newest first; the
        value filter is applied before ranking, ``offset``/``limit`` after, and only the page is reinforced.

        A ranked item carries ``score`` and its ``breakdown``; an unranked one ``score=None`` and an
        empty breakdown, as LangGraph's own stores list unranked items.
        """
        offset, limit, flt = int(op.offset), int(op.limit), op.filter or {}
        weights = self.weights  # read once: every namespace ranked, and the merge ordered, with the same
        query = None if is_blank(op.query or "") else op.query  # a blank query lists, unranked
        ranked: list[pl.DataFrame] = []  # the query's hits, with their scores ...
        rest: list[pl.DataFrame] = []  # ... and rows without a score (no query, or put with index=False)
        for ns in self._names(now, tuple(op.namespace_prefix)):
            # each row keeps its namespace (to reinforce the page) and a null score until a hit fills it
            cur = self._current(ns, now).with_columns(ns=pl.lit(ns), score=pl.lit(None, pl.Float64))
            every = cur.height  # the store ranks the whole namespace: ask for all of it, then filter
            if flt:  # the values are JSON: matched one by one (LangGraph's semantics, nested dicts)
                keep = [
                    matches_filter(item_value(v, c), flt)
                    for v, c in zip(cur["value"], cur["content"], strict=True)
                ]
                cur = cur.filter(pl.Series(keep, dtype=pl.Boolean))
            if cur.height == 0:
                continue
            if query is None:
                rest.append(cur)
                continue
            hits = self.store.search(
                query, namespace=ns, requester=self.requester, k=min(_MAX_K, every),
                weights=weights, min_strength=self.min_strength, now=now, reinforce=False,
            )  # fmt: skip
            hits = hits.select("id", "score", *(c for c in _PARTS if c in hits.columns))
            # inner join: only filtered rows the search returned (one below the strength floor drops
            # out); the hit's importance part replaces the frame's column, which would clash
            ranked.append(cur.drop("importance", "score").join(hits, on="id").filter(~pl.col("noindex")))
            rest.append(cur.filter(pl.col("noindex")))
        hits_all = pl.concat([f for f in ranked if f.height], how="diagonal_relaxed") if any(
            f.height for f in ranked) else None  # fmt: skip
        # subtle: each namespace was ranked alone; the merged hits are re-ranked with tie_order, whose
        # step is relative to the best score of all. The keyword part is scaled per search, so scores
        # from two namespaces compare only roughly.
        if hits_all is not None:  # memkit's order across namespaces: near ties newest first (tie_order)
            # hours since written (microseconds / 3.6e9), the age tie_order breaks near ties with
            age = (now - hits_all["created_at"]).dt.total_microseconds().to_numpy() / 3.6e9
            hits_all = hits_all[tie_order(hits_all["score"].to_numpy(), age, float(weights.tie))]
        unranked = [f for f in rest if f.height]
        # unranked rows newest first; of one instant, the last written first (each frame is in write
        # order, reversed here; the sort is stable), then by namespace: the same order on every run
        tail = (
            pl.concat([f.reverse() for f in unranked], how="diagonal_relaxed").sort(
                "created_at", descending=True, maintain_order=True)
            if unranked else None
        )  # fmt: skip
        # the page is cut from ranked-then-unranked; only its rows are reinforced, per namespace
        parts = [f for f in (hits_all, tail) if f is not None]
        page = pl.concat(parts, how="diagonal_relaxed").slice(offset, limit).to_dicts() if parts else []
        for ns in dict.fromkeys(r["ns"] for r in page):
            self._refresh(op.refresh_ttl, ns, [r["id"] for r in page if r["ns"] == ns], now)
        return [
            MemkitSearchItem(
                memory_id=r["id"],
                namespace=decode_namespace(r["ns"]),
                # an unkeyed memory (written without LangGraph) is listed under its id
                key=_key(r["key"]) if r["key"] is not None else r["id"],
                value=item_value(r["value"], r["content"]),
                created_at=r["first_at"],
                updated_at=r["created_at"],
                score=r.get("score"),
                breakdown={c: r[c] for c in _PARTS if r.get(c) is not None}
                if r.get("score") is not None
                else None,
            )  # fmt: skip
            for r in page
        ]

    def _list_namespaces(self, op: ListNamespacesOp, now: datetime) -> list[tuple[str, ...]]:
        """One ``ListNamespacesOp`` -> the readable namespaces (as LangGraph tuples) that match every
        prefix/suffix condition and hold an item at ``now``, cut to ``max_depth`` labels,
        de-duplicated, sorted, then paged.

        The conditions see the full namespaces, before the cut; after it, ``("a", "b", "c")`` and
        ``("a", "b", "d")`` at ``max_depth=2`` are one ``("a", "b")``. A namespace whose items all
        expired, or were all written after ``now``, is not listed (search and get find nothing there).
        """
        offset, limit = int(op.offset), int(op.limit)
        spaces = [labels for name in self._names(now) if (labels := _labels(name)) is not None]
        for condition in op.match_conditions or ():
            spaces = [ns for ns in spaces if matches_namespace(condition, ns)]
        if op.max_depth is not None:
            spaces = [ns[: op.max_depth] for ns in spaces]
        return sorted(set(spaces))[offset : offset + limit]
