"""The in-memory search index: the store's memories as numpy columns plus the embedding matrix.

It is *derived* from DuckDB (loaded when a store opens) and kept in step with it: every store write
commits to DuckDB first and then applies the same change here (append rows, change a status, touch
rows). If an update here ever failed half-way, the store drops the index and reloads it from DuckDB.

Names (namespaces, owners, tags) are held as small integer codes so that masks are integer
comparisons over contiguous arrays; the whole search mask is a handful of vectorized operations.
Arrays grow by doubling, so appending one memory is amortized O(dim).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..access import readable_mask
from ..decay import hours_until, recency, strength
from ..params import DecayParams, KeywordParams, Weights
from ..schema import ACCESS, KINDS, LAYERS, STATUSES
from ..scoring import NEIGHBOUR_WINDOW_HOURS, KeywordIndex, adjacent, hybrid, neighbour_score, top_k

__all__ = ["SearchIndex"]

_NEVER = np.iinfo(np.int64).max
_US_PER_HOUR = 3.6e9
DELETED = -1  # status code of an erased row (the row stays so that row numbers never shift)


class _Codes:
    """Interned names -> int32 codes; code 0 is None."""

    def __init__(self) -> None:
        self.code: dict[str | None, int] = {None: 0}

    def encode(self, values: Sequence[str | None]) -> np.ndarray:
        return np.fromiter((self.code.setdefault(v, len(self.code)) for v in values), np.int32, len(values))

    def lookup(self, value: str | None) -> int:
        """Code of a name, or -2 (matches nothing) if never seen."""
        return self.code.get(value, -2)


def _enum(values: Sequence[str], choices: tuple[str, ...]) -> np.ndarray:
    pos = {c: i for i, c in enumerate(choices)}
    return np.fromiter((pos[v] for v in values), np.int8, len(values))


class SearchIndex:
    """Columns of every stored memory, row-aligned with ``emb`` (shape ``(n, dim)``)."""

    # times are int64 microseconds since the Unix epoch, so validity bounds compare exactly
    NUMERIC = ("importance", "half_life_h", "access_count")
    TIMES = ("created_us", "last_access_us", "valid_from_us", "valid_until_us")
    CODED = ("ns", "status", "access", "owner", "creator", "layer", "kind")

    def __init__(self, dim: int, floor: float = 0.1) -> None:
        self.dim = dim
        self.floor = floor  # the default retrieval floor, folded into `expire_us`
        self.n = 0
        self.names = _Codes()  # namespaces, owners and creators share one code table
        self.tag_codes = _Codes()
        self.row: dict[str, int] = {}  # memory id -> row
        self.keyword: KeywordIndex | None = None  # built on first keyword query
        self._tag_rows: list[np.ndarray] = []
        self._tag_vals: list[np.ndarray] = []
        self._alloc(1024)

    def _alloc(self, cap: int) -> None:
        def grow(old: np.ndarray | None, dtype: Any, shape: tuple[int, ...] = ()) -> np.ndarray:
            new = np.zeros((cap, *shape), dtype=dtype)
            if old is not None:
                new[: self.n] = old[: self.n]
            return new

        get = self.__dict__.get
        self.emb = grow(get("emb"), np.float32, (self.dim,))
        for c in self.NUMERIC:
            setattr(self, c, grow(get(c), np.int64 if c == "access_count" else np.float64))
        for c in (*self.TIMES, "expire_us"):
            setattr(self, c, grow(get(c), np.int64))
        for c in self.CODED:
            setattr(self, c, grow(get(c), np.int32 if c in ("ns", "owner", "creator") else np.int8))
        for c in ("ids", "content", "key", "tags"):
            setattr(self, c, grow(get(c), object))
        self.cap = cap

    # ---------------------------------------------------------------------------------------- writes
    def append(self, cols: dict[str, Any], emb: np.ndarray) -> None:
        """Append rows. ``cols`` maps memory column names to sequences, plus the times as int64
        epoch microseconds (``created_us``, ``last_access_us``, ``valid_from_us``,
        ``valid_until_us``; an open validity bound is the int64 minimum / maximum);
        ``emb`` is ``(m, dim)`` float32, normalized."""
        m = len(cols["id"])
        if self.n + m > self.cap:
            self._alloc(max(2 * self.cap, self.n + m))
        s = slice(self.n, self.n + m)
        self.emb[s] = emb
        self.ids[s] = cols["id"]
        self.content[s] = cols["content"]
        self.key[s] = cols["key"]
        self.tags[s] = [tuple(t or ()) for t in cols["tags"]]
        self.ns[s] = self.names.encode(cols["namespace"])
        self.owner[s] = self.names.encode(cols["owner"])
        self.creator[s] = self.names.encode(cols["created_by"])
        self.status[s] = _enum(cols["status"], STATUSES)
        self.access[s] = _enum(cols["access"], ACCESS)
        self.layer[s] = _enum(cols["layer"], LAYERS)
        self.kind[s] = _enum(cols["kind"], KINDS)
        self.importance[s] = cols["importance"]
        self.half_life_h[s] = cols["half_life_h"]
        for c in self.TIMES:
            getattr(self, c)[s] = cols[c]
        self.access_count[s] = cols["access_count"]
        self._expire(s)
        rows = np.arange(self.n, self.n + m, dtype=np.int32)
        lens = np.fromiter((len(t) for t in self.tags[s]), np.int64, m)
        if lens.sum():
            self._tag_rows.append(np.repeat(rows, lens))
            self._tag_vals.append(self.tag_codes.encode([t for ts in self.tags[s] for t in ts]))
        self.row.update(zip(cols["id"], range(self.n, self.n + m), strict=True))
        if self.keyword is not None:
            self.keyword.add(list(cols["content"]), self.n)
        self.n += m

    def set_status(self, ids: Sequence[str], status: str) -> None:
        self.status[self.rows(ids)] = STATUSES.index(status)

    def erase(self, ids: Sequence[str]) -> None:
        """Forget deleted memories: the rows stay (rows never shift) but match nothing, and their
        BM25 postings are removed."""
        rows = self.rows(ids)
        for i in ids:
            del self.row[i]
        self.status[rows] = DELETED
        self._erasures = self.__dict__.get("_erasures", 0) + 1
        self.content[rows] = ""
        self.emb[rows] = 0.0
        if self.keyword is not None:
            self.keyword.drop_rows(rows)

    def touch(self, rows: np.ndarray, now_us: int, step: float) -> None:
        """Reinforcement after a hit: last access = now, count + 1, importance + step (max 1)."""
        self.last_access_us[rows] = np.maximum(self.last_access_us[rows], now_us)  # never backwards
        self.access_count[rows] += 1
        self.importance[rows] = np.minimum(self.importance[rows] + step, 1.0)
        self._expire(rows)

    def _expire(self, rows: slice | np.ndarray) -> None:
        """``expire_us``: the instant strength falls below the floor, so the floor is one compare:
        ``created + hours_until(floor, importance, half_life)`` (:func:`memkit.decay.hours_until`).
        A memory that starts below the floor gets the int64 minimum (never recalled)."""
        if self.floor <= 0:
            self.expire_us[rows] = _NEVER
            return
        imp = self.importance[rows]
        life_us = np.clip(hours_until(self.floor, imp, self.half_life_h[rows]) * 3.6e9, 0, 8e18)  # huge lives
        expire = np.minimum(self.created_us[rows] + life_us.astype(np.int64), _NEVER)
        self.expire_us[rows] = np.where(imp < self.floor, np.iinfo(np.int64).min, expire)

    def rows(self, ids: Sequence[str]) -> np.ndarray:
        return np.fromiter((self.row[i] for i in ids), np.int64, len(ids))

    # ----------------------------------------------------------------------------------------- reads
    def adjacency(self) -> tuple[np.ndarray, np.ndarray]:
        """Each row's neighbours ``(prev, next)`` in its namespace (:func:`memkit.scoring.adjacent`),
        in (created_at, row) order, recomputed after rows were appended or erased (one sort of the
        namespace and time columns)."""
        stamp = (self.n, self.__dict__.get("_erasures", 0))
        if self.__dict__.get("_adj_stamp") != stamp:  # erased rows are no one's neighbours (as on reload)
            live = np.flatnonzero(self.status[: self.n] != DELETED)
            window = int(NEIGHBOUR_WINDOW_HOURS * _US_PER_HOUR)
            p, q = adjacent(self.ns[live], self.created_us[live], window)
            prev, nxt = np.full(self.n, -1, np.int64), np.full(self.n, -1, np.int64)
            prev[live], nxt[live] = np.where(p >= 0, live[p], -1), np.where(q >= 0, live[q], -1)
            self._adj, self._adj_stamp = (prev, nxt), stamp
        return self._adj

    def keyword_index(self) -> KeywordIndex:
        """The BM25 postings, built from the stored contents on first use, then appended to."""
        if self.keyword is None:
            kw = KeywordIndex()
            kw.add(list(self.content[: self.n]), 0)
            self.keyword = kw
        return self.keyword

    def mask(
        self,
        gate: Any,
        now_us: int,
        *,
        floor: bool = True,
        layer: Sequence[str] | None = None,
        kind: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
    ) -> np.ndarray:
        """The read gate (:class:`~memkit.store.gate.Gate`: namespace, access, statuses; validity and
        write time at ``now_us``) over the index's codes, the filters, and (``floor=True``)
        strength at least :attr:`floor` -> a boolean mask ``(n,)``."""
        n = self.n
        m = np.ones(n, dtype=bool)
        if gate.namespace is not None:
            m &= self.ns[:n] == self.names.lookup(gate.namespace)
        if gate.statuses is not None:
            m &= np.isin(self.status[:n], [STATUSES.index(s) for s in gate.statuses])
        else:
            m &= self.status[:n] != DELETED
        if gate.requester is not None:
            req = self.names.lookup(gate.requester)
            m &= readable_mask(self.access[:n], self.owner[:n], self.creator[:n], req, _ACCESS_CODES)
        if gate.valid_at is not None:
            m &= (self.valid_from_us[:n] <= now_us) & (now_us < self.valid_until_us[:n])  # [from, until)
            m &= self.created_us[:n] <= now_us  # nothing written after `now` (time travel stays honest)
        if floor:  # strength >= the default floor, as one integer compare
            m &= now_us <= self.expire_us[:n]
        if layer is not None:
            m &= np.isin(self.layer[:n], [LAYERS.index(x) for x in layer])
        if kind is not None:
            m &= np.isin(self.kind[:n], [KINDS.index(x) for x in kind])
        if tags is not None:
            m &= self._has_any_tag(tags)
        return m

    def pending(self, gate: Any, now_us: int, keys: Sequence[str | None]) -> list[list[str]]:
        """For each of ``keys``, the text of its pending ``conflict`` versions that ``gate`` (with
        ``statuses=("conflict",)``) lets through: what a prompt must show beside the current value."""
        wanted = [k for k in dict.fromkeys(keys) if k is not None]
        if not wanted:
            return [[] for _ in keys]
        rows = np.flatnonzero(self.mask(gate, now_us, floor=False))  # the few pending versions
        rows = rows[np.isin(self.key[rows], np.asarray(wanted, dtype=object))]
        by_key: dict[str, list[str]] = {}
        for r in rows.tolist():  # pending versions of these keys only: a handful
            by_key.setdefault(self.key[r], []).append(self.content[r])
        return [by_key.get(k, []) if k is not None else [] for k in keys]

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
        a shortlist of the best ``max(4k, 64)`` is re-scored exactly in float64 — the numbers that are
        returned, so reported scores never depend on which path ran. Both passes use the one
        formula, :func:`memkit.scoring.hybrid` with :func:`memkit.decay.recency`.
        """
        ix, n = self, self.n
        default_floor = floor == ix.floor  # the index folds the default floor into `expire_us`
        mask = ix.mask(gate, now_us, floor=default_floor, layer=layer, kind=kind, tags=tags)
        cand = np.flatnonzero(mask)  # (c,)
        if not default_floor:
            age_h = (now_us - ix.created_us[cand]) / _US_PER_HOUR
            weak = strength(ix.importance[cand], age_h, ix.half_life_h[cand]) < floor
            mask[cand[weak]] = False
            cand = cand[~weak]
        kw_all = ix.keyword_index().scores(query, mask, keyword) if weights.keyword else None
        lam = float(weights.neighbour)
        prev, nxt = ix.adjacency() if lam > 0 else (None, None)
        shortlist = max(4 * k, 64)
        if len(cand) > shortlist:
            dense = len(cand) * 4 >= n  # then one matvec over all rows beats gathering most of them
            sel = slice(0, n) if dense else cand
            idle_h = ((now_us - ix.last_access_us[sel]) / _US_PER_HOUR).astype(np.float32)
            score = hybrid(
                ix.emb[sel] @ q,  # (r, dim) @ (dim,) -> (r,) float32
                ix.importance[sel],
                recency(idle_h, decay.time_scale_hours),
                weights,
                None if kw_all is None else kw_all[sel],
                dtype=np.float32,
            )
            if dense:
                score[~mask[:n]] = -np.inf
            if lam > 0:  # neighbour expansion: every candidate against its neighbours' scores
                full = score if dense else np.full(n, -np.inf, np.float32)
                if not dense:
                    full[cand] = score
                boost = lam * neighbour_score(full, prev, nxt)
                score = score + (boost if dense else boost[cand])
            # chosen by the final rule (newest first within a tie step), so a near tie is not cut here
            tie, aged = float(weights.tie), (now_us - ix.created_us[sel]) / _US_PER_HOUR
            short = top_k(score, shortlist, n_valid=len(cand), age=aged, tie=tie)
            cand = short if dense else cand[short]
        # exact float64 scores of the shortlist (and, for neighbour expansion, of its neighbours)
        if lam > 0:
            around = np.concatenate([prev[cand], nxt[cand]])
            around = np.setdiff1d(around[(around >= 0) & mask[np.maximum(around, 0)]], cand)
            rows_u = np.concatenate([cand, around])
        else:
            rows_u = cand
        sim = ix.emb[rows_u].astype(np.float64) @ q.astype(np.float64)  # (s, dim) @ (dim,) -> (s,)
        imp = ix.importance[rows_u]
        rec = recency((now_us - ix.last_access_us[rows_u]) / _US_PER_HOUR, decay.time_scale_hours)
        kw = kw_all[rows_u] if kw_all is not None else None
        base = hybrid(sim, imp, rec, weights, kw)
        near = None
        if lam > 0:  # the neighbours' exact scores, looked up by row (-1 and non-candidates: 0)
            local = np.full(n, -1, np.int64)
            local[rows_u] = np.arange(len(rows_u))
            p_, q_ = prev[cand], nxt[cand]  # -1 (no neighbour) must stay -1, not wrap to the last row
            near = lam * neighbour_score(
                base, np.where(p_ >= 0, local[p_], -1), np.where(q_ >= 0, local[q_], -1)
            )
        s_ = len(cand)
        sim, imp, rec, kw = sim[:s_], imp[:s_], rec[:s_], (None if kw is None else kw[:s_])
        score = base[:s_] if near is None else base[:s_] + near
        written_h = (now_us - ix.created_us[cand]) / _US_PER_HOUR  # newest first on near ties
        best = top_k(score, k, age=written_h, tie=float(weights.tie))
        rows = cand[best]
        age_h = written_h[best]
        comp = {
            "score": score[best],
            "similarity": sim[best],
            "importance": imp[best],
            "strength": strength(imp[best], age_h, ix.half_life_h[rows]),
            "recency": rec[best],
        }
        if kw_all is not None:
            comp["keyword"] = kw_all[rows]
        if near is not None:
            comp["neighbour"] = near[best]
        return rows, comp

    def _has_any_tag(self, tags: Sequence[str]) -> np.ndarray:
        hit = np.zeros(self.n, dtype=bool)
        if self._tag_rows:
            if len(self._tag_rows) > 1:  # compact the appended chunks
                self._tag_rows = [np.concatenate(self._tag_rows)]
                self._tag_vals = [np.concatenate(self._tag_vals)]
            wanted = [self.tag_codes.lookup(t) for t in tags]
            hit[self._tag_rows[0][np.isin(self._tag_vals[0], wanted)]] = True
        return hit


_ACCESS_CODES = {a: ACCESS.index(a) for a in ACCESS}
