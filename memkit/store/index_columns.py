"""The search index's data: the store's memories as numpy columns, how they change, and the read gate
as a mask over them. Ranking over these columns is :mod:`memkit.store.index`.

Layout. Row ``i`` of every column is one memory (any status), in the order DuckDB returned them on
open and then in write order; ``row[id]`` finds it. The columns are preallocated to a capacity and
grow by doubling, so appending one memory is amortized O(dim); only ``[:n]`` is live.

========================  =========  =====================================================
column                    dtype      holds
========================  =========  =====================================================
``emb``                   float32    ``(cap, dim)`` L2-normalized (:meth:`IndexColumns.vectors`;
                                     int8: ``codes``, ``scale``, :mod:`memkit.store.quantized`)
``ids content key tags``  object     the texts (``tags`` as tuples)
``ns owner creator``      int32      name codes (:class:`~memkit.store.codes.Codes`: namespaces, owners and
                                     creators share one table, so access compares codes)
``status access``         int8       position in :data:`~memkit.schema.STATUSES` /
``layer kind``                       ``ACCESS`` / ``LAYERS`` / ``KINDS``; :data:`DELETED` = -1
``importance``            float64    in [0, 1], raised by reinforcement
``half_life_h``           float64    hours
``access_count *_us``    int64      counts; instants in µs since the Unix epoch (exact)
``expire_us``             int64      when strength falls below the default floor
``open_us shut_us``       int64      the mask's window: visible at ``open_us <= now < shut_us``
========================  =========  =====================================================

Every change mirrors a committed DuckDB change (applied after the commit), under the store's lock held
alone; rankings read under it shared (:mod:`memkit.store.rwlock`), so the lazy caches (neighbours, BM25
postings, tag pairs) are built by one reader at a time and published whole.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..access import readable_mask
from ..decay import hours_until
from ..portable.columns import repeated
from ..schema import ACCESS, COUNT_MAX, KINDS, LAYERS, STATUSES
from ..scoring import KeywordIndex
from .adjacency import ACCESS_CODES, AdjacencyMixin
from .codes import DELETED, US_PER_HOUR, Codes, among, enum_codes
from .rowmap import BLOCK_ROWS, RowMap

__all__ = ["DELETED", "US_PER_HOUR", "IndexColumns"]

_NEVER = np.iinfo(np.int64).max  # expire_us of a memory that never fades below the floor
_ENUMS = (("status", STATUSES), ("access", ACCESS), ("layer", LAYERS), ("kind", KINDS))  # coded columns
_DERIVED = ("expire_us", "open_us", "shut_us")  # computed from the others by IndexColumns._expire


class IndexColumns(AdjacencyMixin):
    """Columns of every stored memory, row-aligned with ``emb`` (see the module table): appends,
    status changes, erasure and reinforcement, and :meth:`mask`, the read gate over the columns."""

    # times are int64 microseconds since the Unix epoch, so validity bounds compare exactly
    NUMERIC = ("importance", "half_life_h", "access_count")
    TIMES = ("created_us", "last_access_us", "valid_from_us", "valid_until_us")
    CODED = ("ns", "status", "access", "owner", "creator", "layer", "kind")

    def __init__(self, dim: int, floor: float = 0.1) -> None:
        """An empty index for ``dim``-dimensional embeddings; ``floor`` is the store's default
        retrieval floor (``DecayParams.min_strength``), folded into ``expire_us``."""
        self.dim = dim
        self.floor = floor  # the default retrieval floor, folded into `expire_us`
        self.n = 0  # live rows; the arrays hold `cap`
        self.names = Codes()  # namespaces, owners and creators share one code table
        self.tag_codes = Codes()
        self.row = RowMap()  # memory id -> row
        self.keyword: KeywordIndex | None = None  # built on first keyword query
        self.version = 0  # + 1 on every change but reinforcement: a ranking knows if a write came between
        self._erasures = 0  # + 1 on every erasure (store.erasures; adjacency() and the view are made again)
        self._masks: dict[tuple[Any, ...], tuple[int, int, int, np.ndarray]] = {}  # mask(): the last gates'
        self._serial = threading.Lock()  # readers rank side by side: one builds a cache (or reads SQL)
        self._tag_rows: list[np.ndarray] = []  # tags as (row, tag code) pairs, appended in chunks and
        self._tag_vals: list[np.ndarray] = []  # concatenated on the next tag filter
        self._alloc(1024)

    def _alloc(self, cap: int) -> None:
        """(Re)allocate every column to ``cap`` rows, keeping the first ``n``."""

        def grow(old: np.ndarray | None, dtype: Any, shape: tuple[int, ...] = ()) -> np.ndarray:
            """A zeroed ``(cap, *shape)`` array with ``old``'s live rows copied in."""
            new = np.zeros((cap, *shape), dtype=dtype)
            if old is not None:
                new[: self.n] = old[: self.n]
            return new

        get = self.__dict__.get  # None on the first allocation
        self._alloc_vectors(grow, get)
        for c in (*self.NUMERIC, *self.TIMES, *_DERIVED):  # counts and instants int64, the rest float64
            setattr(self, c, grow(get(c), np.float64 if c in ("importance", "half_life_h") else np.int64))
        for c in self.CODED:
            setattr(self, c, grow(get(c), np.int32 if c in ("ns", "owner", "creator") else np.int8))
        for c in ("ids", "content", "key", "tags"):
            setattr(self, c, grow(get(c), object))
        self.cap = cap

    # -------------------------------------------------------------------------------- vector storage
    # The embeddings' storage is the one thing an index kind changes: here the float32 matrix
    # ``emb``; :class:`~memkit.store.quantized.QuantizedIndex` keeps int8 codes and reads exact rows
    # from DuckDB instead. Every other column, and every update of them, is shared.
    def _alloc_vectors(self, grow: Any, old: Any) -> None:
        """Allocate the embeddings' storage for ``cap`` rows: ``grow(old(name), dtype, shape)``. An
        empty index waits for its first batch (:meth:`_set_vectors`), which may become the matrix."""
        empty = np.zeros((0, self.dim), np.float32)
        self.emb = grow(old("emb"), np.float32, (self.dim,)) if self.n else empty

    def _set_vectors(self, rows: slice | np.ndarray, emb: np.ndarray) -> None:
        """Store embeddings ``(m, dim)`` float32 (normalized) at ``rows``; a batch filling an empty
        index, in an array of its own (no view), becomes the matrix: a bulk load allocates no copy."""
        if len(self.emb) < self.cap:  # the first batch: adopted when it fills the index, else copied
            whole = (isinstance(rows, slice) and rows.start == 0 and rows.stop == self.cap
                     and emb.shape == (self.cap, self.dim) and emb.base is None and emb.dtype == np.float32
                     and emb.flags.c_contiguous and emb.flags.writeable)  # fmt: skip
            self.emb = emb if whole else np.zeros((self.cap, self.dim), np.float32)
        if self.emb is not emb:
            self.emb[rows] = emb

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        """The float32 embeddings of ``rows`` -> ``(len(rows), dim)`` (a copy)."""
        return self.emb[np.asarray(rows, dtype=np.int64)]

    def nbytes(self) -> int:
        """Bytes of the live embedding storage (``n`` rows of the float32 matrix)."""
        return self.n * self.dim * self.emb.itemsize

    # ---------------------------------------------------------------------------------------- writes
    def append(self, cols: dict[str, Any], emb: np.ndarray, staged: Any = None) -> None:
        """Append rows. ``cols`` maps memory column names to sequences, plus the times as int64
        epoch microseconds (``created_us``, ``last_access_us``, ``valid_from_us``,
        ``valid_until_us``; an open validity bound is the int64 minimum / maximum);
        ``emb`` is ``(m, dim)`` float32, normalized. ``staged``: its first part (:meth:`fill`), done
        off to the side (:func:`memkit.store.staging.stage`), taken if the index has not changed since."""
        m, n = len(cols["id"]), self.n
        if staged is None or not staged.publish(self):
            self.fill(cols, emb)
        s = slice(n, n + m)  # the second part: what the new rows share with others (codes, row map)
        for c, f in (("ns", "namespace"), ("owner", "owner"), ("creator", "created_by")):
            getattr(self, c)[s] = self.names.encode(cols[f])
        if any(cols["tags"]):  # one (row, tag) pair per tag: (sum(lens),) each
            lens = np.fromiter(map(len, self.tags[s]), np.int64, m)
            self._tag_rows.append(np.repeat(np.arange(n, n + m, dtype=np.int32), lens))
            self._tag_vals.append(self.tag_codes.encode([t for ts in self.tags[s] for t in ts]))
        # a bulk write's new ids (ascending, also as Arrow): one block of the row map, no dict entries
        if not (m >= BLOCK_ROWS and self.row.add_block(getattr(cols["id"], "arrow", None), n)):
            self.row.update(zip(cols["id"], range(n, n + m), strict=True))
        if self.keyword is not None:  # once built, the BM25 postings follow every append
            self.keyword.add(list(cols["content"]), n)
        self.n, self.version = n + m, self.version + 1

    def fill(self, cols: dict[str, Any], emb: np.ndarray) -> None:
        """The first part of :meth:`append`: the columns grown if they must be, and the new rows'
        own values written after the live rows (vectors, texts, enums, numbers, times, tags as
        tuples); nothing another row shares (name and tag codes, the row map) and not ``n``."""
        m = len(cols["id"])
        if self.n + m > self.cap:
            self._alloc(max(2 * self.cap, self.n + m))
        s = slice(self.n, self.n + m)
        self._set_vectors(s, emb)
        self.ids[s], self.content[s] = cols["id"], cols["content"]
        for c, choices in _ENUMS:
            getattr(self, c)[s] = enum_codes(cols[c], choices)
        for c in ("key", *self.NUMERIC, *self.TIMES):  # a bulk write's one key, time...: one value, filled
            getattr(self, c)[s] = cols[c][0] if repeated(cols[c]) else cols[c]
        self._expire(s)
        if any(cols["tags"]):
            self.tags[s] = [tuple(t or ()) for t in cols["tags"]]
        else:  # no row carries a tag (most batches): no pass over them
            self.tags[s].fill(())

    def set_status(self, ids: Sequence[str], status: str) -> None:
        """Set the status of ``ids`` (one of :data:`~memkit.schema.STATUSES`)."""
        self.status[self.rows(ids)] = STATUSES.index(status)
        self.version += 1

    def erase(self, ids: Sequence[str]) -> None:
        """Forget deleted memories: the rows stay (rows never shift) but match nothing, and their
        BM25 postings are removed."""
        rows = self.rows(ids)
        self.version += 1
        self.row.drop(ids, rows)
        self.status[rows] = DELETED
        self._erasures += 1  # invalidates adjacency()
        self.content[rows] = ""  # the text is gone from memory too, not only unreachable
        self.key[rows] = None  # and so are its names (a key, a tag may say what it was)
        for r in np.atleast_1d(rows).tolist():
            self.tags[r] = ()
        self._set_vectors(rows, np.zeros((len(rows), self.dim), np.float32))
        if self.keyword is not None:
            self.keyword.drop_rows(rows)

    def update(self, rows: np.ndarray, cols: dict[str, Any]) -> None:
        """Set the columns a memory's later writes change (status, access, layer, kind, importance,
        half-life, times, count) of ``rows`` from ``cols`` (as :meth:`append` takes them). Text,
        tags, names and vectors stay: a change of those is an erase and an append."""
        moved = not np.array_equal(self.created_us[rows], cols["created_us"])
        self.version += 1
        for c, choices in _ENUMS:
            getattr(self, c)[rows] = enum_codes(cols[c], choices)
        for c in ("importance", "half_life_h", "access_count", *self.TIMES):
            getattr(self, c)[rows] = cols[c]
        self._expire(rows)
        if moved:  # neighbours are by write time: adjacency() is recomputed
            self._erasures += 1

    def touch(self, rows: np.ndarray, now_us: int, step: float) -> None:
        """Reinforcement after a hit: last access = now, count + 1, importance + step (max 1)."""
        self.last_access_us[rows] = np.maximum(self.last_access_us[rows], now_us)  # never backwards
        self.access_count[rows] = np.minimum(self.access_count[rows] + 1, COUNT_MAX)  # as the column
        self.importance[rows] = np.minimum(self.importance[rows] + step, 1.0)
        self._expire(rows)  # a higher importance fades below the floor later
        for key, (version, _, until, m) in list(self._masks.items()):  # (mask(): no version moves here)
            if version != self.version or not key[3]:  # stale; without the floor: nothing it reads moved
                continue
            if not (m[rows].all() and (self.shut_us[rows] >= until).all()):  # each row touched was in it
                del self._masks[key]  # and still shuts after its window: it holds; else it is made again

    def _expire(self, rows: slice | np.ndarray) -> None:
        """``expire_us``: the instant strength falls below the floor, so the floor is one compare:
        ``created + hours_until(floor, importance, half_life)`` (:func:`memkit.decay.hours_until`).
        A memory that starts below the floor gets the int64 minimum (never recalled). Then the
        mask's window of ``rows``: from ``open_us`` (written and valid) until ``shut_us`` (no
        longer valid, or below the floor): two compares over all rows instead of four."""
        if self.floor <= 0:
            self.expire_us[rows] = _NEVER
        else:
            imp = self.importance[rows]
            life_us = np.clip(hours_until(self.floor, imp, self.half_life_h[rows]) * US_PER_HOUR, 0, 8e18)
            expire = np.minimum(self.created_us[rows] + life_us.astype(np.int64), _NEVER)
            self.expire_us[rows] = np.where(imp < self.floor, np.iinfo(np.int64).min, expire)
        self.open_us[rows] = np.maximum(self.valid_from_us[rows], self.created_us[rows])
        expire = self.expire_us[rows]  # now <= expire is now < expire + 1 (_NEVER stays: never reached)
        expire = np.where(expire < _NEVER, expire + 1, expire)
        self.shut_us[rows] = np.minimum(self.valid_until_us[rows], expire)

    def rows(self, ids: Sequence[str]) -> np.ndarray:
        """Memory ids -> their rows ``(len(ids),)`` int64 (KeyError for an id not in the index)."""
        return self.row.rows(ids)

    # ----------------------------------------------------------------------------------------- reads
    def keyword_index(self) -> KeywordIndex:
        """The BM25 postings, built from the stored contents on first use, then appended to."""
        with self._serial:
            if self.keyword is None:
                kw = KeywordIndex()
                kw.add(list(self.content[: self.n]), 0)
                self.keyword = kw
            # subtle: postings appended since the last query are sorted here, by one reader, so that
            # KeywordIndex.scores, called by readers side by side, only reads them
            self.keyword._postings()
            return self.keyword

    def mask(self, gate: Any, now_us: int, *, floor: bool = True, layer: Sequence[str] | None = None,
             kind: Sequence[str] | None = None, tags: Sequence[str] | None = None) -> np.ndarray:  # fmt: skip
        """The read gate (:class:`~memkit.store.gate.Gate`: namespace, access, statuses (as at
        ``now_us`` with ``gate.then``); validity and write time at ``now_us``) over the index's
        codes, the filters, and (``floor=True``) strength at least :attr:`floor` -> a boolean mask
        ``(n,)``.

        Remembered: a gate's mask is valid until the index changes (``version``), at its instant and,
        once asked again later, until a row's window opens or shuts (:meth:`_until`); reinforcement,
        which changes no version, only pushes a visible row's expiry later (:meth:`touch` checks it)."""
        key = None  # what the mask depends on, besides the index and the instant (no filters, ids
        plain = gate.valid_at is not None and gate.then is None and not gate.hidden  # hidden, statuses
        if plain and layer is None and kind is None and tags is None:  # of a past `now`)
            key = (gate.namespace, gate.requester, gate.statuses, floor)
        known = self._masks.get(key) if key is not None else None  # (version, from, until, mask)
        if known is not None and known[0] == self.version and known[1] <= now_us < known[2]:
            return known[3].copy()  # a copy: callers change theirs
        n = self.n
        space = gate.namespace  # its compare is the first array (not ones, then &=: a pass fewer)
        m = np.ones(n, dtype=bool) if space is None else self.ns[:n] == self.names.lookup(space)
        # status as it was at `now` when the gate says it differed (memkit.store.asof: a past `now`)
        status = self.status[:n] if gate.then is None else gate.then.codes(self)
        if gate.statuses is not None:
            m &= among(status, [STATUSES.index(s) for s in gate.statuses])
        else:
            m &= status >= 0  # not erased (nor, at a past `now`, unwritten)
        if gate.requester is not None:  # memkit.access's rule, over codes instead of names
            req = self.names.lookup(gate.requester)
            m &= readable_mask(self.access[:n], self.owner[:n], self.creator[:n], req, ACCESS_CODES)
        t = np.empty(n, bool)  # one buffer for the compares
        if gate.valid_at is not None:  # [from, until), nothing written after `now` (time travel stays honest)
            m &= np.less_equal(self.open_us[:n], now_us, out=t)  # valid and written (_expire's window)
            end = self.shut_us if floor else self.valid_until_us  # shut_us: the default floor's expiry too
            m &= np.greater(end[:n], now_us, out=t)
        elif floor and self.floor > 0:  # strength >= the default floor, one compare (a floor of 0: every
            m &= np.less_equal(now_us, self.expire_us[:n], out=t)  # expire_us is _NEVER: no row to drop)
        if layer is not None:
            m &= among(self.layer[:n], [LAYERS.index(x) for x in layer])
        if kind is not None:
            m &= among(self.kind[:n], [KINDS.index(x) for x in kind])
        if tags is not None:
            m &= self._has_any_tag(tags)
        if gate.hidden:  # erased inside the open transaction: gone from every read within it
            m[[self.row[i] for i in gate.hidden if i in self.row]] = False
        if key is not None:  # asked again of the same index later: until a row's window opens or shuts
            later = known is not None and known[0] == self.version and now_us > known[1]  # (else this
            until = self._until(now_us, floor) if later else now_us + 1  # instant only: a write came)
            if len(self._masks) >= 8:
                self._masks.clear()
            self._masks[key] = (self.version, now_us, until, m.copy())
        return m

    def _until(self, now_us: int, floor: bool) -> int:
        """The first instant after ``now_us`` at which a row's window (``open_us``, and ``shut_us`` or
        with ``floor=False`` ``valid_until_us``) opens or shuts (the int64 maximum: none): the mask of
        any gate at ``now_us`` holds until then, while the index does not change. Two passes per
        column: ``now + 1 + (x - (now + 1))`` read as unsigned is ``x`` for an instant after ``now``,
        and beyond int64 for one not after it and for the int64 minimum (they wrap): ``min`` keeps none."""
        n, until = self.n, int(np.iinfo(np.int64).max)
        for x in (self.open_us[:n], (self.shut_us if floor else self.valid_until_us)[:n]):
            ahead = int((x - (now_us + 1)).view(np.uint64).min(initial=np.uint64(2**64 - 1)))
            until = min(until, now_us + 1 + ahead)
        return until

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

    def _has_any_tag(self, tags: Sequence[str]) -> np.ndarray:
        """Rows that carry at least one of ``tags`` -> a boolean mask ``(n,)``."""
        hit = np.zeros(self.n, dtype=bool)
        with self._serial:
            if len(self._tag_rows) > 1:  # compact the appended chunks
                self._tag_rows = [np.concatenate(self._tag_rows)]
                self._tag_vals = [np.concatenate(self._tag_vals)]
            pairs = (self._tag_rows[0], self._tag_vals[0]) if self._tag_rows else None
        if pairs is not None:
            wanted = [self.tag_codes.lookup(t) for t in tags]
            hit[pairs[0][np.isin(pairs[1], wanted)]] = True
        return hit
