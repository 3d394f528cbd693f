"""Each row's neighbours in its namespace, for neighbour expansion (:func:`memkit.scoring.neighbour_score`):
:meth:`AdjacencyMixin.adjacency` over the search index's columns (:mod:`memkit.store.index_columns`),
cached until rows are appended or erased, and per requester's view (what it may not read is not there
for it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..access import readable_mask
from ..schema import ACCESS
from ..scoring import NEIGHBOUR_WINDOW_HOURS, adjacent, second_neighbours
from .codes import DELETED, US_PER_HOUR

__all__ = ["ACCESS_CODES", "AdjacencyMixin"]

ACCESS_CODES = {a: ACCESS.index(a) for a in ACCESS}  # the access levels as the columns code them


class AdjacencyMixin:
    """:meth:`adjacency` for :class:`~memkit.store.index_columns.IndexColumns` (its columns ``ns``,
    ``status``, ``created_us``, ``access``, ``owner``, ``creator``, ``names``, ``row``, and its
    counters ``n``, ``version``, ``_erasures``)."""

    n: int
    version: int
    _erasures: int
    ns: np.ndarray
    status: np.ndarray
    created_us: np.ndarray
    access: np.ndarray
    owner: np.ndarray
    creator: np.ndarray
    names: Any
    row: Any

    def adjacency(self, gate: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Each row's neighbours ``(prev, next)`` in its namespace (:func:`memkit.scoring.adjacent`),
        in (created_at, row) order, and those two places away (``prev[prev], next[next]``),
        recomputed after rows were appended or erased (one sort of the namespace and time columns).
        Under a ``gate`` (:class:`~memkit.store.gate.Gate`), the rows of its namespace its requester
        may not read and its ``hidden`` ids (erased by an open transaction) are skipped as erased
        rows are: what a requester may not read is not there for it, so it does not keep two of its
        own memories apart (which would tell it that something stands between them)."""
        hidden = gate.hidden if gate is not None else ()
        view = self._view(gate) if gate is not None else None
        if view is None and not hidden:  # erased rows are no one's neighbours (as on reload)
            stamp = (self.n, self._erasures)
            adj = self.__dict__.get("_adj")  # (stamp, prev, nxt, prev2, nxt2): published whole
            if adj is None or adj[0] != stamp:
                adj = self._adj = (stamp, *self._adjacent(self.status[: self.n] != DELETED))
            return adj[1:]
        if not hidden:  # the requester's own view, kept until the index changes
            adj = self.__dict__.get("_adj_for")
            if adj is None or adj[0] != view[0]:
                adj = self._adj_for = (view[0], *self._adjacent(view[1]))
            return adj[1:]
        keep = (self.status[: self.n] != DELETED) if view is None else view[1].copy()
        keep[[self.row[i] for i in hidden if i in self.row]] = False
        return self._adjacent(keep)  # a view of this call's own

    def _adjacent(self, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`adjacency` over the rows ``keep`` marks -> ``(prev, next, prev2, next2)``."""
        window = int(NEIGHBOUR_WINDOW_HOURS * US_PER_HOUR)  # in µs, as the times: compared exactly
        prev, nxt = adjacent(self.ns[: self.n], self.created_us[: self.n], window, keep)
        return prev, nxt, *second_neighbours(prev, nxt)

    def _view(self, gate: Any) -> tuple[tuple[Any, ...], np.ndarray] | None:
        """``(key, rows)``: the rows of ``gate``'s namespace its requester may read (a mask), when
        there are rows there it may not read; None when it may read them all (or is the operator)."""
        if gate.requester is None or gate.namespace is None:
            return None
        n = self.n
        key = (self.version, n, self._erasures, gate.requester, gate.namespace)
        known = self.__dict__.get("_view_of")  # the last requester's, as the index stood
        if known is None or known[0] != key:
            mine = (self.ns[:n] == self.names.lookup(gate.namespace)) & (self.status[:n] != DELETED)
            req = self.names.lookup(gate.requester)
            seen = readable_mask(self.access[:n], self.owner[:n], self.creator[:n], req, ACCESS_CODES)
            known = self._view_of = (key, mine & seen if (mine & ~seen).any() else None)
        return None if known[1] is None else (known[0], known[1])
