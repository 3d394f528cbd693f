"""The in-memory search index: the store's memories as numpy columns plus the embedding matrix, and
the ranking of a query over them.

It is *derived* from DuckDB (loaded when a store opens) and kept in step with it: every store write
commits to DuckDB first and then applies the same change here (append rows, change a status, touch
rows). If an update here ever failed half-way, the store drops the index and reloads it from DuckDB.

The columns, their updates and the read gate as a mask are :class:`~memkit.store.index_columns.IndexColumns`
(names are held as small integer codes, so masks are integer comparisons over contiguous arrays;
:meth:`SearchIndex.erase` also drops an erased tag's code once no live row carries it).
:class:`SearchIndex` adds :meth:`SearchIndex.rank`, which scores the rows the mask lets through
with the one formula of :mod:`memkit.scoring`:

    score = hybrid(similarity, importance, recency [, keyword]) [+ λ · neighbour_score]

where ``similarity`` is the cosine of unit vectors (a dot product), ``recency`` decays with the time
since the last access, and the optional neighbour term lends a hit some of the score of the memories
written just before and after it in its namespace (``Weights.neighbour`` = λ; those two places away
count ``Weights.neighbour2`` times as much).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..decay import below_floor, recency, recency_of, strength, strength_of
from ..params import DecayParams, KeywordParams, Weights
from ..scoring import hybrid, neighbour_score
from ..ties import top_k, top_k_best
from .cut import Hours, Read, missed, vectors_of
from .index_columns import DELETED, US_PER_HOUR, IndexColumns
from .reach import neighbour_reach

__all__ = ["DELETED", "SearchIndex", "no_scores"]


class SearchIndex(IndexColumns):
    """Columns of every stored memory, row-aligned with ``emb`` (shape ``(n, dim)``), and the
    ranking of a query over them. A store holds one, rebuilt from DuckDB whenever in doubt."""

    # the first pass scores every candidate within a small error of its exact score (float32 here,
    # int8 codes in the quantized index): its best row joins the shortlist, and its cut can be
    # checked (:func:`~memkit.store.cut.missed`)
    bounded_first_pass = True
    # how many rows the check of the cut (cut.missed) may add at most, once; 0: no check. Not here: a
    # float32 first pass errs by ~1e-7 and changed no list in any test, while every exact tie (a
    # query no memory resembles) would be rescored (10k memories: 1.6 -> 3.1 ms a search). The int8
    # index checks (its codes err by ~1e-3), up to 256 rows, read from DuckDB
    widen_at_most = 0

    def erase(self, ids: Sequence[str]) -> None:
        """:meth:`IndexColumns.erase <memkit.store.index_columns.IndexColumns.erase>`, and a tag of
        the erased rows leaves the tag code table once no live row carries it (the table would keep an
        erased tag's text): their (row, tag) pairs go, in numpy, only when an erased row had tags."""
        tags = {t for r in np.atleast_1d(self.rows(ids)).tolist() for t in self.tags[r]}  # (blanked next)
        super().erase(ids)
        if not tags:
            return
        codes = {t: self.tag_codes.lookup(t) for t in tags}
        with self._serial:  # (a ranking concatenates the pairs under it too: _has_any_tag)
            if not self._tag_rows:
                return
            rows, vals = np.concatenate(self._tag_rows), np.concatenate(self._tag_vals)
            live = self.status[rows] != DELETED
            self._tag_rows, self._tag_vals = [rows[live]], [vals[live]]
            used = set(np.unique(vals[live]).tolist())
        self.tag_codes.forget([t for t, c in codes.items() if c not in used])

    def rank(
        self,
        q: np.ndarray,
        query: str,
        gate: Any,
        now_us: int,
        *,
        floor: float,
        weights: Weights,
        k: int,
        decay: DecayParams,
        keyword: KeywordParams,
        layer: Sequence[str] | None = None,
        kind: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Top-k rows for query vector ``q`` (text ``query``, for BM25) among the rows ``gate`` lets
        through, best first, and their score components in float64: ``score, similarity,
        importance, strength, recency[, keyword]``.

        Two stages keep it near the cost of one matvec: a float32 pass scores every candidate
        (over the whole matrix when candidates are dense, over a gather when they are sparse), then
        a shortlist of the best ``max(4k, 64)`` is re-scored exactly in float64 from the float32 rows
        (:meth:`vectors`) — the numbers that are returned, so reported scores never depend on which
        path ran. Both passes use the one formula, :func:`memkit.scoring.hybrid` with
        :func:`memkit.decay.recency`. An index kind changes only the first pass's cosines
        (:meth:`_similarity32`), how many candidates it keeps (:meth:`_first_pass_size`) and where
        the exact rows come from: the int8 index (:mod:`memkit.store.quantized`) scans int8 codes,
        keeps a larger pool and reads the pool's rows from DuckDB.

        Neighbour expansion in a dense first pass is computed for the rows that can reach the
        shortlist only (:func:`~memkit.store.reach.neighbour_reach`: a bound, the same shortlist).

        Ties: :func:`memkit.scoring.top_k` ranks scores within ``Weights.tie`` of each other newest
        first, in both passes, so the shortlist never cuts a memory the final order would keep.
        ``floor`` other than the index's default is applied here by computing strength exactly.
        """
        ix, n = self, self.n
        default_floor = floor == ix.floor  # the index folds the default floor into `expire_us`
        mask = ix.mask(gate, now_us, floor=default_floor, layer=layer, kind=kind, tags=tags)
        cand = None if default_floor else np.flatnonzero(mask)  # (c,): listed where they are used
        if cand is not None:  # another floor: strength computed for the candidates only
            age_h = (now_us - ix.created_us[cand]) / US_PER_HOUR
            weak = below_floor(strength(ix.importance[cand], age_h, ix.half_life_h[cand]), floor)
            mask[cand[weak]] = False
            cand = cand[~weak]
        c = int(np.count_nonzero(mask)) if cand is None else len(cand)  # how many candidates
        kw_all = kw_first = None  # BM25 of every row (weight 0: None); for the first pass, None when all 0
        if weights.keyword:  # (the exact pass reads zeros then: no_scores, no array)
            kw_first = ix.keyword_index().matches(query, mask, keyword, n_docs=c)
            kw_all = no_scores(n) if kw_first is None else kw_first
        lam = float(weights.neighbour)  # λ: 0 turns neighbour expansion off
        adj = ix.adjacency(gate) if lam > 0 else (None,) * 4  # prev, next, and two places away
        lam2 = float(weights.neighbour2)
        shortlist = max(4 * k, 64)
        size = self._first_pass_size(k, shortlist)  # the exact index: the shortlist; int8: its pool
        # stage 1 (only when there are more candidates than that): float32 scores of all
        if c > size:
            dense = c * 4 >= n  # then one matvec over all rows beats gathering most of them
            cand = np.flatnonzero(mask) if cand is None and not dense else cand
            sel = slice(0, n) if dense else cand  # the r rows scored: all n, or the c candidates
            # a term of weight 0 adds exactly 0: it is left out (None), not computed per row (here a
            # score differs at most in the sign of a zero, which no comparison below tells apart)
            imp, rec = (ix.importance[sel] if weights.importance else None), None
            if weights.recency:
                idle_h = ((now_us - ix.last_access_us[sel]) / US_PER_HOUR).astype(np.float32)
                rec = recency(idle_h, decay.time_scale_hours)
            sim = self._similarity32(q, None if dense else cand, mask)  # (r,) float32, this call's own
            kw = None if kw_first is None else kw_first[sel]
            # the score is written over the cosines (the same float32 operations, no new array)
            score = hybrid(
                sim, imp, rec, weights, kw, dtype=np.float32, out=sim if sim.dtype == np.float32 else None
            )
            if dense and c < n:  # (every row a candidate: nothing to mark)
                score[~mask[:n]] = -np.inf
            tie = float(weights.tie)
            # neighbour expansion of a dense pass: only the rows that can reach the shortlist (reach.py)
            reach = lam > 0 and dense
            near = (
                neighbour_reach(score, adj, lam, lam2, size, tie, c == n) if reach else None
            )  # c == n: every
            if near is not None:
                cand, score = near  # (the rows scored are now a part: as a sparse pass's)
                dense, c = False, len(cand)
            elif lam > 0:  # neighbour expansion: every candidate against its neighbours' scores
                full = score if dense else np.full(n, -np.inf, np.float32)
                if not dense:
                    full[cand] = score
                boost = neighbour_score(full, adj[0], adj[1], lam2, adj[2:])
                boost *= lam  # in place: at 1M rows each float32 temporary is a pass over 4 MB
                score += boost if dense else boost[cand]  # (score is hybrid's own new array)
            # chosen by the final rule (newest first within a tie step), so a near tie is not cut here
            aged = Hours(now_us, ix.created_us, None if dense else cand)
            # top: the best first-pass row (np.argmax's): near ties count their steps from it, and a
            short, top = top_k_best(score, size, n_valid=c, age=aged, tie=tie)  # type: ignore[arg-type]
            top = top if dense else int(cand[top])  # cut by newest first may leave it out
            cand = short if dense else cand[short]
            if self.bounded_first_pass and not (cand == top).any():  # (_rescore sorts cand)
                cand = np.append(cand, top)
        cand = np.flatnonzero(mask) if cand is None else cand  # (few candidates: no first pass)
        # stage 2: exact float64 scores of the shortlist (and, for neighbour expansion, of its neighbours)
        return self._rescore(q, cand, mask, kw_all, adj, now_us, weights, decay, k)

    def _rescore(
        self, q: np.ndarray, cand: np.ndarray, mask: np.ndarray, kw_all: np.ndarray | None,
        adj: tuple[Any, ...], now_us: int, weights: Weights, decay: DecayParams, k: int,
        first: np.ndarray | None = None,
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:  # fmt: skip
        """The second stage of :meth:`rank`, shared by every index kind: float64 scores of ``cand``
        (and of its neighbours, for neighbour expansion) from their exact float32 rows
        (:meth:`vectors`), then the top ``k`` and their score components.

        ``first`` (every row's first-pass score, ``-inf`` off the mask), when ``cand`` is a cut of
        it: a row left out whose first-pass score is within the first pass's error of ranking
        above the ``k``-th hit (:func:`~memkit.store.cut.missed`) joins ``cand`` and the stage runs
        again (reading only the rows it adds), so a near tie the approximate scores put on the
        wrong side of the cut still ranks as the exact scores say. More such rows than
        :attr:`widen_at_most` (a store of thousands of identical memories) join once, the best
        of them by the final rule: the cost stays bounded."""
        cand = np.sort(cand)  # in row order: equal scores and ages keep the earlier row (tie_order),
        # not the order float32 noise gave the first pass
        if first is not None:  # the best first-pass score: near ties count their steps from it, and a
            cand = np.union1d(cand, [int(np.argmax(first))])  # cut by newest first may leave it out
        cap, tie, hours = self.widen_at_most, float(weights.tie), Hours(now_us, self.created_us, None)
        known = None  # (rows, their float32 vectors) read by the last pass: a widened pass reads the rest
        while True:
            rows, comp, score, best, known = self._exact(
                q, cand, mask, kw_all, adj, now_us, weights, decay, k, known
            )  # fmt: skip
            more = np.empty(0, np.int64) if first is None or cap == 0 else missed(
                first, cand, score, best, hours, tie
            )  # fmt: skip
            if not len(more):
                return rows, comp
            if len(more) > cap:  # too many to score: the likeliest, once
                more, cap = more[top_k(first[more], cap, age=hours[more], tie=tie)], 0
            cand = np.union1d(cand, more)

    def _exact(
        self, q: np.ndarray, cand: np.ndarray, mask: np.ndarray, kw_all: np.ndarray | None,
        adj: tuple[Any, ...], now_us: int, weights: Weights, decay: DecayParams, k: int,
        known: Read | None = None,
    ) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray, np.ndarray, Read]:  # fmt: skip
        """One pass of :meth:`_rescore` over ``cand`` (ascending) -> ``(rows, components, exact
        score of each of cand, the top k's positions in cand, (the rows read, their float32
        vectors))``; ``known``: that pair from the pass before, whose rows are not read again."""
        ix, lam, (prev, nxt, prev2, nxt2) = self, float(weights.neighbour), adj
        lam2 = float(weights.neighbour2)
        pc = None  # where each of cand is in rows_u (None: rows_u is cand)
        if lam > 0:  # the shortlist and its visible neighbours, ascending, each once (as np.unique)
            reach = (prev, nxt, prev2, nxt2) if lam2 else (prev, nxt)
            around = np.concatenate([a[cand] for a in reach])  # (-1: none; mask[-1] is then ignored)
            ok = (around >= 0) & mask[around]  # the visible ones
            rows_u = np.sort(np.concatenate([cand, around[ok]]))
            rows_u = rows_u[np.concatenate((rows_u[:1] >= 0, rows_u[1:] != rows_u[:-1]))].astype(
                np.int64, copy=False
            )
            at = np.searchsorted(rows_u, np.concatenate([cand, around]))  # one binary search for all
            pc, around = at[: len(cand)], np.where(ok, at[len(cand) :], -1)  # (-1: no visible neighbour)
        else:
            rows_u = cand
        # subtle: an int8 index reads these rows from DuckDB, whose connection two threads must not
        # use at once; rankings run side by side (the store's lock, shared), so one reads at a time
        with self._serial:
            vec32 = vectors_of(self, rows_u, known)  # (s, dim): exact float32 rows, any index
        vec = vec32.astype(np.float64)
        # (s, dim) . (dim,) -> (s,), row by row: each row's sum the same whichever rows are scored with
        # it (BLAS's matrix-vector product rounds a row differently as the matrix grows)
        sim = np.einsum("ij,j->i", vec, q.astype(np.float64))
        imp = ix.importance[rows_u]
        # the index's own columns and DecayParams are valid already: the formulas alone (fixed cost)
        rec = recency_of((now_us - ix.last_access_us[rows_u]) / US_PER_HOUR, decay.time_scale_hours)
        kw = kw_all[rows_u] if kw_all is not None else None
        base = hybrid(sim, imp, rec, weights, kw)
        near = None
        if lam > 0:  # the neighbours' exact scores, looked up by position (-1 and non-candidates: 0)
            at = around.reshape(len(reach), len(cand))  # prev, next[, prev2, next2] of each of cand
            near = lam * neighbour_score(base, at[0], at[1], lam2, (at[2], at[3]) if lam2 else None)
        score = base if pc is None else base[pc] + near  # (cand's, in cand's order)
        written_h = (now_us - ix.created_us[cand]) / US_PER_HOUR  # newest first on near ties
        best = top_k(score, k, len(score), age=written_h, tie=float(weights.tie))  # (exact: all finite)
        pick = best if pc is None else pc[best]  # the hits' positions in rows_u
        rows = cand[best]
        age_h = written_h[best]
        comp = {  # one column per score component, as search() returns them
            "score": score[best],
            "similarity": sim[pick],
            "importance": imp[pick],
            "strength": strength_of(imp[pick], age_h, ix.half_life_h[rows]),
            "recency": rec[pick],
        }
        if kw_all is not None:
            comp["keyword"] = kw_all[rows]
        if near is not None:
            comp["neighbour"] = near[best]
        return rows, comp, score, best, (rows_u, vec32)

    def _first_pass_size(self, k: int, shortlist: int) -> int:
        """How many candidates the float32 first pass keeps for exact rescoring: the shortlist."""
        return shortlist

    def _similarity32(self, q: np.ndarray, rows: np.ndarray | None, mask: np.ndarray) -> np.ndarray:
        """First-pass cosines of every row (``rows=None``; ``mask`` is then applied by the caller)
        or of ``rows`` -> float32 ``(n,)`` or ``(len(rows),)``."""
        emb = self.emb[: self.n] if rows is None else self.emb[rows]
        return emb @ q  # (r, dim) @ (dim,) -> (r,) float32


def no_scores(n: int) -> np.ndarray:
    """``n`` read-only zeros that take no memory (one value, stride 0): any rows of it read as 0.

    >>> no_scores(4)[[0, 3]].tolist(), no_scores(4).flags.writeable
    ([0.0, 0.0], False)
    """
    return np.ndarray((n,), np.float64, buffer=bytes(8), strides=(0,))
