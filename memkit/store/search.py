"""``search``: the gate as a numpy mask, the hybrid ranking, and reinforcement of what was found.

The candidates are the rows the read gate lets through (namespace, access, ``active``, valid and
already written at ``now``) — :meth:`~memkit.store.index.SearchIndex.mask` renders the same
:class:`~memkit.store.gate.Gate` over the index's integer codes — filtered by layer, kind and tags and
by the retrieval floor; :meth:`~memkit.store.index.SearchIndex.rank` scores them with
:func:`memkit.scoring.hybrid`. The query is logged as a digest, never as text.

A search is also a write: its hits are reinforced (last access, count, importance) in the same
transaction as its ``search`` event, so what is recalled grows stronger. Times reach the index as
microseconds since the epoch (:func:`epoch_us`).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from datetime import datetime

import numpy as np
import polars as pl

from ..errors import MemkitError, ValidationError
from ..guard import consistency, lesson_similarity
from ..params import Weights, check_number
from ..schema import KINDS, LAYERS, check_choice, check_name, check_text
from .audit import digest
from .deferred import DeferredMixin
from .guard import GuardMixin
from .read import ReadMixin
from .sync import SyncMixin
from .vectors import epoch_us

__all__ = ["SearchMixin"]

_MAX_K = 10_000  # a search returns a few memories for a prompt, not the store
# column types of a search result, so that an empty result has the same schema as a full one
_HIT_TYPES = {
    "rank": pl.Int32, "id": pl.String, "content": pl.String, "score": pl.Float64,
    "similarity": pl.Float64, "importance": pl.Float64, "strength": pl.Float64, "recency": pl.Float64,
    "keyword": pl.Float64, "key": pl.String, "layer": pl.String, "kind": pl.String,
    "tags": pl.List(pl.String), "created_at": pl.Datetime("us", "UTC"),
    "last_access_at": pl.Datetime("us", "UTC"), "access_count": pl.Int64,
}  # fmt: skip
_UTC_US = pl.Datetime("us", "UTC")


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
        if self._con is None:  # the index outlives close(); a search of a closed store is refused
            raise MemkitError(f"the store {self.path!r} is closed")
        query = check_text("query", query)
        namespace = check_name("namespace", namespace)
        requester = self._who(requester)
        now = self._now(now)
        weights = self.weights if weights is None else weights  # the store's (settings=), by default
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= _MAX_K:
            raise ValidationError("k", f"must be an int in [1, {_MAX_K}], got {k!r}")
        for name, flag in (("reinforce", reinforce), ("guard", guard)):
            if not isinstance(flag, bool):
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
        if self._stale is not None:  # raises: explains that reembed() is needed
            self._check_writable()  # the vectors are another embedder's: a query would not compare with them
        gate = self._gate(namespace, requester, statuses=("active",), valid_at=now)  # the read gate
        q = self._embed_query(query)  # (dim,)
        with self._lock:
            ix = self._synced()  # on a server, with the other processes' writes (sync.py)
            rows, comp = ix.rank(
                q, query, gate, epoch_us(now), floor=floor, weights=weights, k=int(k), decay=self.decay,
                keyword=self.keyword, layer=layers, kind=kinds, tags=tag_list,
            )  # fmt: skip
            out = {"rank": np.arange(1, len(rows) + 1, dtype=np.int32), "id": ix.ids[rows].tolist(),
                   "content": ix.content[rows].tolist(), **comp}  # fmt: skip
            out.update(
                key=ix.key[rows].tolist(),
                layer=[LAYERS[i] for i in ix.layer[rows]],
                kind=[KINDS[i] for i in ix.kind[rows]],
                tags=[list(t) for t in ix.tags[rows]],
                # microseconds -> UTC datetimes, as frame() returns them (a cast, not a query plan)
                created_at=pl.Series(ix.created_us[rows]).cast(_UTC_US),
                last_access_at=pl.Series(ix.last_access_us[rows]).cast(_UTC_US),
                access_count=ix.access_count[rows],
            )
            hits = pl.DataFrame(out, schema_overrides={c: t for c, t in _HIT_TYPES.items() if c in out})
            if guard:
                hits, rows = self._guard_hits(hits, rows, namespace, query)
            # the same gate for the hits' disputed versions: a requester sees only those it may read
            disputed = self._gate(namespace, requester, statuses=("conflict",), valid_at=now)
            pending = ix.pending(disputed, epoch_us(now), hits["key"].to_list())
            texts = list(dict.fromkeys(t for p in pending for t in p))
            if guard and texts:  # the read-time defence covers what the note would quote, too
                s = self.screen(texts, namespace=namespace)
                ok = {t for t, a in zip(texts, s["action"], strict=True) if a == "store"}
                pending = [[t for t in p if t in ok] for p in pending]
            hits = hits.with_columns(pending=pl.Series(pending, dtype=pl.List(pl.String)))
            ids = hits["id"].to_list()
            if not self.read_only:  # the query is logged as a digest: the log keeps no text
                # the event and the reinforcement are deferred together (memkit.store.deferred): the
                # index is reinforced now, the file at the next flush, the journal before returning
                detail = {"query": digest(query), "k": int(k), "ids": ids, "reinforce": reinforce}
                self._defer(now, "search", namespace, None, requester, detail, ids if reinforce else None)
        return hits

    def neighbours(self, ids: Sequence[str], *, namespace: str, requester: str | None = None) -> pl.DataFrame:
        """The neighbours neighbour expansion uses -> ``id, prev, next``: for each of ``ids`` (of
        ``namespace``), the memory of the namespace written just before and just after it (within
        a day), or null. Only what ``requester`` may read is named; ids elsewhere get nulls."""
        namespace = check_name("namespace", namespace)
        ids = [check_name("ids", i) for i in ids]
        gate = self._gate(namespace, self._who(requester))
        with self._lock:
            ix = self._synced()  # on a server, with the other processes' writes (sync.py)
            prev, nxt = ix.adjacency()
            seen = ix.mask(gate, 0, floor=False)  # namespace and access only (no validity at 0)
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

            return pl.DataFrame({"id": ids, "prev": name(prev), "next": name(nxt)},
                                schema={"id": pl.String, "prev": pl.String, "next": pl.String})  # fmt: skip

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
