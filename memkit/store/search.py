"""``search``: the gate as a numpy mask, the hybrid ranking, and reinforcement of what was found.

The candidates are the rows the read gate lets through (namespace, access, ``active``, valid and
already written at ``now``) — :meth:`~memkit.store.index.SearchIndex.mask` renders the same
:class:`~memkit.store.gate.Gate` over the index's integer codes — filtered by layer, kind and tags and
by the retrieval floor; :meth:`~memkit.store.index.SearchIndex.rank` scores them with
:func:`memkit.scoring.hybrid`. At a ``now`` before the store's last status change, status is judged as
it was then (:mod:`memkit.store.asof`), and such a search ranks alone. The query is logged as a
digest, never as text.

A search is also a write: its hits are reinforced (last access, count, importance) with its
``search`` event (deferred: :mod:`memkit.store.deferred`), so what is recalled grows stronger. Times
reach the index as microseconds since the epoch (:func:`epoch_us`).

Threads. The ranking only reads the numpy index, so it holds the store's lock *shared*
(:mod:`memkit.store.rwlock`): searches from several threads rank side by side (numpy's matrix
product releases the GIL), and no write can change the index under them. The event and the
reinforcement then take the lock alone, briefly, at the place in the writers' queue the search took
as its ranking began: a write or ``close`` that comes meanwhile waits for the event. Should a write
have run in between all the same (the index's ``version`` moved), the search ranks again there, so
its event never names a ranking of an index that is gone. Concurrent searches may miss each other's
reinforcement, as if they had run at the same instant. On a server, with ``guard=True`` and with
the int8 index (each reads DuckDB inside the ranking, and a DuckDB connection serves one thread at
a time) the whole search holds the lock alone; writers are still served in the order they came.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from ..errors import MemkitError, ValidationError
from ..guard import consistency, lesson_similarity
from ..guard.fields import names_as_stored
from ..guard.names import older_names
from ..params import Weights, check_number
from ..schema import KINDS, LAYERS, check_choice, check_name, check_text
from .audit import digest
from .deferred import DeferredMixin
from .gate import Gate
from .guard import GuardMixin
from .hits import MAX_HITS, hit_frame, texts_column
from .index import SearchIndex
from .read import ReadMixin, check_ids
from .sync import SyncMixin
from .vectors import epoch_us

__all__ = ["SearchMixin"]


def _names(
    field: str, value: str | Sequence[str] | None, choices: tuple[str, ...] | None
) -> list[str] | None:
    """A filter argument (one name or several) -> a list of checked names, or None (no filter).

    With ``choices`` (layers, kinds) each must be one of them; without (tags) each must be a name.
    """
    if value is None:
        return None
    if not isinstance(value, (str, list, tuple, set, frozenset)):
        raise ValidationError(field, f"must be a str or a list of str, got {type(value).__name__}")
    values = [value] if isinstance(value, str) else list(value)
    if choices is None:
        return [check_name(field, v) for v in values]
    return [check_choice(field, v, choices) for v in values]


class SearchMixin(DeferredMixin, GuardMixin, ReadMixin, SyncMixin):
    """Hybrid search over the index, with reinforcement and the read-time guard."""

    def search(
        self,
        query: str,
        *,
        namespace: str,
        requester: str | None = None,
        k: int = 5,
        weights: Weights | None = None,
        now: datetime | None = None,
        min_strength: float | None = None,
        layer: str | Sequence[str] | None = None,
        kind: str | Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        reinforce: bool = True,
        guard: bool = False,
    ) -> pl.DataFrame:
        """Rank the namespace's memories for ``query`` -> the top ``k``, best first.

        Candidates are the ``active`` memories of ``namespace`` that ``requester`` may read, valid at
        ``now``, matching the ``layer``/``kind`` filters and any of ``tags``, whose strength is at
        least ``min_strength`` (default ``DecayParams.min_strength``). Each is scored
        ``hybrid(similarity, importance, recency [, keyword])`` and the frame keeps every component:
        ``rank, id, content, score, similarity, importance, strength, recency [, keyword], key, layer,
        kind, tags, created_at, last_access_at, access_count, pending`` (``pending``: the text of the
        hit's key's pending ``conflict`` versions, so a prompt can show that the value is disputed).

        ``weights`` defaults to the store's (``Weights()``, or what ``settings=`` gave it).
        Returned memories are reinforced (:meth:`reinforce`) in one batched statement, unless
        ``reinforce=False``. ``guard=True`` is the read-time defence (:func:`memkit.guard.consistency`):
        hits within ``GuardParams.lesson_similarity`` of a lesson are dropped (so fewer than ``k``
        may come back) and the rest gain ``lesson_similarity, consensus, consensus_z, outlier``.
        """
        self._check_open()  # the index outlives close(); a search of a closed store is refused
        query = check_text("query", query)
        namespace = self._space(namespace)
        requester = self._who(requester)
        clock = self._clock(now)  # read under the lock (ask)
        weights = self.weights if weights is None else weights  # the store's (settings=), by default
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= MAX_HITS:
            raise ValidationError("k", f"must be an int in [1, {MAX_HITS}], got {k!r}")
        for name, flag in (("reinforce", reinforce), ("guard", guard)):
            if not isinstance(flag, (bool, np.bool_)):
                raise ValidationError(name, f"must be a bool, got {type(flag).__name__}")
        if not isinstance(weights, Weights):
            raise ValidationError("weights", f"must be a memkit.Weights, got {type(weights).__name__}")
        # the index folds the store's default floor into one compare; another floor costs a little more
        floor = self.decay.min_strength if min_strength is None else check_number(
            "min_strength", min_strength, lo=0.0, hi=1.0)  # fmt: skip
        layers, kinds, tag_list = (
            _names("layer", layer, LAYERS),
            _names("kind", kind, KINDS),
            _names("tags", tags, None),
        )
        if tag_list:  # as writes keep them (PII as a pseudonym), as written unscreened, as older stores did
            stored = names_as_stored(tag_list, self.guard)
            older = [o for s, t in zip(stored, tag_list, strict=True) for o in older_names(s, t)]
            tag_list = list(dict.fromkeys([*stored, *tag_list, *older]))
        if self._stale is not None:  # raises: explains that reembed() is needed
            self._check_writable()  # the vectors are another embedder's: a query would not compare with them
        q = self._embed_query(query)  # (dim,)

        def ask(alone: bool) -> dict[str, Any] | None:
            """The ranking's arguments, under the lock: a wall-clock `now` read there comes after every
            write that ran before (read earlier, a key's new version could be "not yet written" while
            the old one is already superseded: no version at all). At a `now` before the last status
            change the gate judges status as it was then (memkit.store.asof), which reads the log:
            alone only (None when the ranking holds the lock shared: it ranks again, alone)."""
            t = clock()
            gate = self._gate(namespace, requester, statuses=("active",), valid_at=t)  # the read gate
            if not alone and self._past(t):
                return None
            gate = self._as_of(gate, t, synced=True) if alone else gate
            return dict(q=q, query=query, gate=gate, now=t, floor=floor, weights=weights, k=int(k),
                        layer=layers, kind=kinds, tags=tag_list, guard=guard)  # fmt: skip

        # alone, as every statement: a server syncs the index first, the guard reads lessons from
        # DuckDB, an int8 index reads its pool's exact rows from DuckDB inside the ranking, and a
        # past `now` reads the statuses of then from the log
        if self._pg is None and not guard and self.index == "exact" and not self._past(clock(), look=True):
            hits = self._rank_shared(ask, namespace, requester, query, int(k), reinforce)
            if hits is not None:
                return hits
        with self._lock:
            self._check_open()
            ix = self._synced()  # (sync.py: the other processes' writes)
            asked = ask(True)
            assert asked is not None
            hits, hit = self._hits(ix, **asked)
            self._log_search(asked["now"], namespace, requester, query, int(k), hit, reinforce)
        return hits

    def _rank_shared(
        self, ask: Any, namespace: str, requester: str | None, query: str, k: int, reinforce: bool
    ) -> pl.DataFrame | None:
        """A search of an exact index on DuckDB: the ranking beside other rankings, the event and
        reinforcement alone (module docstring) -> the hits, or None when ``ask`` finds its ``now``
        before the last status change (a write dated later came first): then it ranks alone."""
        place = None  # the search's place in the writers' queue, taken as its ranking begins
        try:
            # rankings side by side: they only read the numpy index
            with self._lock.shared(reserve=not self.read_only) as place:
                self._check_open()  # close() may have come first
                ix = self._index
                seen = ix.version
                asked = ask(False)
                if asked is None:
                    return None
                hits, hit = self._hits(ix, **asked)
            if self.read_only:
                return hits
            with self._lock.turn(place):  # the event and reinforcement: alone, before later writers
                self._check_open()
                # subtle: the queue keeps other threads' writes out until here; should one have run
                # all the same, the event would describe a ranking of an index that is gone: rank again
                if self._index is not ix or ix.version != seen:
                    asked["gate"] = self._as_of(asked["gate"], asked["now"])  # (a write dated later)
                    hits, hit = self._hits(self._index, **asked)
                self._log_search(asked["now"], namespace, requester, query, k, hit, reinforce)
            return hits
        finally:
            self._lock.cancel(place)  # nothing once taken; a raise or a read-only store gives it up

    def _check_open(self) -> None:
        """MemkitError once the store is closed (its index outlives close(), its connection not)."""
        if self._con is None:
            raise MemkitError(f"the store {self.path!r} is closed")

    def _hits(
        self,
        ix: SearchIndex,
        *,
        q: np.ndarray,
        query: str,
        gate: Gate,
        now: datetime,
        floor: float,
        weights: Weights,
        k: int,
        layer: list[str] | None,
        kind: list[str] | None,
        tags: list[str] | None,
        guard: bool,
    ) -> tuple[pl.DataFrame, tuple[list[str], SearchIndex, np.ndarray]]:
        """Rank, then the result frame (one column per score component, ``pending``) and its ids, ix, rows.

        Reads only the index (and, with ``guard``, the lessons): it runs under the store's lock,
        shared unless ``guard`` or a server."""
        rows, comp = ix.rank(
            q, query, gate, epoch_us(now), floor=floor, weights=weights, k=k, decay=self.decay,
            keyword=self.keyword, layer=layer, kind=kind, tags=tags,
        )  # fmt: skip
        keys, hits = ix.key[rows].tolist(), None
        if guard:  # drops hits near a lesson, adds the consistency columns
            hits, rows = self._guard_hits(hit_frame(ix, rows, comp), rows, gate.namespace, query)
            keys = hits["key"].to_list()
        pending: list[list[str]] = [[] for _ in keys]  # (hits without a key have none: no gate to build)
        if any(k is not None for k in keys):  # the same gate for the disputed versions of the hits' keys
            disputed = self._gate(gate.namespace, gate.requester, statuses=("conflict",), valid_at=now)
            disputed = replace(disputed, then=gate.then)  # pending then, at a past `now`
            pending = ix.pending(disputed, epoch_us(now), keys)  # (a requester sees those it may read)
        texts = list(dict.fromkeys(t for p in pending for t in p))
        if guard and texts:  # the read-time defence covers what the note would quote, too
            s = self.screen(texts, namespace=gate.namespace)
            ok = {t for t, a in zip(texts, s["action"], strict=True) if a == "store"}
            pending = [[t for t in p if t in ok] for p in pending]
        if hits is None:  # (built once, with the pending notes)
            return hit_frame(ix, rows, comp, pending), (ix.ids[rows].tolist(), ix, rows)
        return hits.hstack([texts_column("pending", pending)]), (ix.ids[rows].tolist(), ix, rows)

    def _log_search(
        self,
        now: datetime,
        namespace: str,
        requester: str | None,
        query: str,
        k: int,
        hit: tuple[list[str], SearchIndex, np.ndarray],
        reinforce: bool,
    ) -> None:
        """The search's event (the query as a digest: the log keeps no text) and the reinforcement
        of its hits, deferred together (memkit.store.deferred): the index is reinforced now, the
        file at the next flush, the journal before returning. A read-only store logs nothing."""
        if not self.read_only:
            ids, touch = hit[0], (hit[0] if reinforce else None)  # hit[1:]: the index, the hits' rows in it
            detail = {"query": digest(query), "k": k, "ids": ids, "reinforce": reinforce}
            self._defer(now, "search", namespace, None, requester, detail, touch, hit[1:])  # (no id lookup)

    def neighbours(
        self, ids: Sequence[str], *, namespace: str, requester: str | None = None, now: datetime | None = None
    ) -> pl.DataFrame:
        """The neighbours neighbour expansion uses -> ``id, prev, next, prev2, next2``: for each of
        ``ids`` (of ``namespace``), the memory of the namespace written just before and just after
        it (within a day), and two places before and after, or null. Only what a search at ``now``
        may return to ``requester`` is named (active memories it may read, valid at ``now`` and
        above the store's retrieval floor: no quarantined, superseded, disputed or expired id);
        any other id gets nulls."""
        namespace = self._space(namespace)
        ids = check_ids("ids", ids)  # a list (a bare string is not read as its characters)
        clock, requester = self._clock(now), self._who(requester)
        self._check_open()
        with self._lock:
            now = clock()  # under the lock, as search reads it
            ix = self._synced()  # on a server, with the other processes' writes (sync.py)
            gate = self._gate(namespace, requester, statuses=("active",), valid_at=now)  # search's
            gate = self._as_of(gate, now, synced=True)  # status as at `now` (memkit.store.asof)
            adj = ix.adjacency(gate)  # prev, next, prev2, next2
            seen = ix.mask(gate, epoch_us(now))  # namespace, access, status, validity, the floor
            rows = np.array([ix.row.get(i, -1) for i in ids], dtype=np.int64)  # the asked ids, a few
            ok = rows >= 0  # known, and (next line) visible to the requester
            ok[ok] = seen[rows[ok]]

            def name(nb: np.ndarray) -> list[str | None]:
                """The id of each asked row's neighbour in ``nb`` (prev or next), or None when the
                row is not visible, has no neighbour, or the neighbour is not visible."""
                # subtle: np.maximum(rows, 0) keeps -1 from indexing the last row; `ok` masks it out
                nb = np.where(ok, nb[np.maximum(rows, 0)], -1)
                keep = (nb >= 0) & seen[np.maximum(nb, 0)]
                return [ix.ids[r] if k else None for r, k in zip(nb.tolist(), keep.tolist(), strict=True)]

            cols = {
                "id": ids,
                **{c: name(a) for c, a in zip(("prev", "next", "prev2", "next2"), adj, strict=True)},
            }
            return pl.DataFrame(cols, schema=dict.fromkeys(cols, pl.String))

    def _guard_hits(
        self, hits: pl.DataFrame, rows: np.ndarray, namespace: str, query: str
    ) -> tuple[pl.DataFrame, np.ndarray]:
        """``search(guard=True)``: drop hits near a lesson, then the consistency check on the rest."""
        emb = self._index.vectors(rows)  # (k, dim) float32 (read from DuckDB by an int8 index)
        sim = lesson_similarity(emb, self._lesson_matrix(namespace))  # (k,): each hit's nearest lesson
        keep = sim < self.guard.lesson_similarity
        hits = hits.with_columns(lesson_similarity=pl.Series(sim)).filter(pl.Series(keep))
        rows = rows[keep]
        hits = consistency(hits, emb[keep], self.guard, query=query)
        return hits.with_columns(rank=pl.int_range(1, hits.height + 1, dtype=pl.Int32)), rows  # re-ranked 1..
