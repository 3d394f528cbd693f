"""memkit as a LangGraph store: :class:`MemkitStore`, a ``langgraph.store.base.BaseStore``.

A LangGraph graph keeps long-term memory in a *store*: ``put(namespace, key, value)``,
``get``, ``search(namespace_prefix, query=, filter=)``, ``list_namespaces``. :class:`MemkitStore` is
such a store over a :class:`~memkit.MemoryStore`, so a graph gets memkit's guard, decay, versions,
access rules and audit without glue::

    store = MemkitStore(mk.MemoryStore("memories.duckdb"))
    graph = builder.compile(store=store)          # nodes receive it as `store`

How LangGraph's model maps onto memkit's (every call goes through the store's public API, so the
write pipeline and the read gate hold exactly as for a direct call):

- **Namespaces and keys.** A namespace tuple ``("memories", "alice")`` is the memkit namespace
  ``"memories.alice"`` (LangGraph forbids ``.`` in a label, so the join is lossless); the LangGraph
  key is the memkit ``key``. Characters a memkit name refuses (control and invisible characters,
  whitespace at either end) and ``%`` itself are written ``%XX`` (UTF-8), so every LangGraph label
  and key round-trips (:func:`encode_label`, :func:`decode_label`). A memkit namespace written
  without LangGraph (``"user_87"``) reads as the one-label namespace ``("user_87",)``; its memories
  without a key are listed under their id, with the value ``{"content": text}``. One that is no
  labels' encoding (``"50%"``, ``"%61lice"``) cannot be addressed from LangGraph and is not listed;
  nor is one holding nothing ``get`` or ``search`` would return at ``now`` (all expired, or written
  later). Ops are checked as LangGraph's stores check them (:mod:`.langgraph_ops`).
- **Values.** The dict is the memory's ``value``; the memory's text (embedded, matched by keywords,
  screened by the guard with the value's strings) comes from the fields to index: ``index=[paths]``
  on the put, else the store's ``fields`` (default ``"$"``: every string and number in the value),
  at most 100,000 characters (else a ValidationError naming ``value``). ``index=False`` stores the
  item unsearchable by query (a search lists it only after the ranked hits, with score ``None``, as
  LangGraph's own stores do); its text is then the value's, cut to that limit. The guard redacts PII
  in the value as in any memkit write (``13812345678`` becomes ``"[PHONE]"``): ``get`` returns the
  value as stored; ``GuardParams(redact_pii=False)`` keeps it as put.
- **A put is a new version.** The key's previous version is superseded (``conflict_policy=
  "supersede"``), so ``versions(key)`` keeps the history and ``frame(as_of=t)`` replays it. A put on a
  clock before the key's current version was written is an earlier value: ``get`` on that clock
  returns it, a later clock the later-written one, and it is stored ``superseded`` (``last_writes``
  says so; ``put`` returns None, as LangGraph's API has it).
  ``created_at`` of an item is its first version's, ``updated_at`` the current one's. ``value=None``
  deletes: every version of the key is erased for good (memkit's final forgetting).
- **The guard.** A put whose text or value carries an injection is quarantined, not lost: ``get``
  returns a :class:`MemkitItem` with ``status="quarantined"`` and an empty value (the text is
  withheld until a reviewer approves it), or, when an earlier version is still current, that version
  with ``pending="quarantined"``. A secret is refused: the put raises
  :class:`~memkit.errors.WriteRefused` and the batch's writes are undone. Keys and namespace labels
  are judged as written, not as their ``%XX`` escapes (:mod:`memkit.guard.labels`).
- **Search** ranks with memkit's hybrid score (similarity, importance, recency and, with
  ``weights``, keywords); :class:`MemkitSearchItem` carries the breakdown. Like every memkit search
  it sees only active memories valid at ``now`` (as they stood then: a clock set back replays) and
  above the retrieval floor (``min_strength``; by default there is none), in memkit's order: near
  ties (``Weights.tie``) newest first, so ``score`` need not fall monotonically (weights with
  ``tie=0.0, neighbour=0.0``: plain score order). Neighbour expansion is off by default here: items
  are facts put one by one, not conversation turns. A blank query lists, unranked. ``filter``
  supports exact matches, nested dicts, dotted keys as paths and ``$eq $ne $gt $gte $lt $lte``.
- **TTL** is a validity window: ``put(..., ttl=minutes)`` sets ``valid_until = now + ttl``, after which
  the item is no longer returned (``omit_expired``) and ``forget`` may erase it. memkit does not
  move the window on reads (LangGraph's stores do); ``refresh_ttl`` (LangGraph's default: True)
  instead *reinforces* what a read returned, with or without a ttl: every such read is a write.
- **Batches** run in order: a read sees the puts before it. Consecutive puts form one transaction:
  all of them are written, or (one refused, one not allowed) none.
- **Requester.** ``MemkitStore(store, requester="agent-1")`` acts as that requester: it reads what the
  access rules let it read and changes only what it owns or created; ``None`` is the operator.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

import polars as pl

try:
    from langgraph.store.base import BaseStore, GetOp, Op, PutOp, Result, SearchOp
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError("memkit.integrations.langgraph needs LangGraph: pip install 'memkit[langgraph]'") from e

from ..conflicts import POLICIES
from ..errors import AccessDenied, NotFound, ValidationError
from ..params import Weights
from ..schema import ACCESS, SOURCES, Memory, check_choice, check_number, clock
from ..store import MemoryStore
from ..store.gate import Gate
from ..store.settable import FromStore, an_instance
from .langgraph_items import (
    NOINDEX,
    MemkitItem,
    MemkitSearchItem,
    decode_label,
    decode_namespace,
    encode_label,
    encode_namespace,
    item_value,
)
from .langgraph_ops import check_op, check_path, put_text, until
from .langgraph_search import SearchOps

__all__ = [
    "MemkitItem",
    "MemkitSearchItem",
    "MemkitStore",
    "decode_label",
    "decode_namespace",
    "encode_label",
    "encode_namespace",
]


# ----------------------------------------------------------------------------- the store
class MemkitStore(SearchOps, BaseStore):
    """A LangGraph ``BaseStore`` over a :class:`~memkit.MemoryStore` (module docstring).

    ``requester`` acts as that requester (None: the operator); ``weights`` (default: the store's,
    ``store.weights`` as it is at each search, without neighbour expansion, which suits conversation
    turns rather than items; assign ``None`` to follow the store again) and
    ``min_strength`` are passed to every search; ``fields`` are the value paths whose text is
    indexed when a put names none; ``access`` is the access level of what it writes (default: a
    new key ``public``, anyone in the namespace may read it and write a new version; a put over the
    requester's own current value keeps that value's access, so a private item stays private;
    ``protected``: only the owner, the requester);
    ``conflict_policy`` decides a put on a key that holds a value (default ``supersede``, LangGraph's
    overwrite; ``flag`` keeps the old value current and flags the new one as a conflict); ``now``
    fixes the clock (a datetime or a zero-argument callable; default: the wall clock); ``source`` is
    recorded on every put (default ``agent``: a graph's nodes write what a model produced, as the MCP
    server records; ``user`` for the user's own words, ``tool`` for what a tool returned, which the
    guard screens at its stricter threshold, ``GuardParams.strict_sources``).
    """

    supports_ttl = True
    # the store's weights as they are at each search (`store.weights = ...` reaches an adapter built
    # before it); items are facts put one by one, not conversation turns: no neighbour expansion
    weights = FromStore("weights", an_instance(Weights), lambda w: dataclasses.replace(w, neighbour=0.0))

    def __init__(
        self,
        store: MemoryStore,
        *,
        requester: str | None = None,
        weights: Weights | None = None,
        min_strength: float | None = None,
        fields: Sequence[str] = ("$",),
        access: str | None = None,
        conflict_policy: str = "supersede",
        now: datetime | Callable[[], datetime] | None = None,
        source: str = "agent",
    ) -> None:
        """Wrap ``store``; every option is validated here, so a bad one fails before any operation runs."""
        if not isinstance(store, MemoryStore):
            raise ValidationError("store", f"must be a memkit.MemoryStore, got {type(store).__name__}")
        if isinstance(fields, str) or not all(isinstance(f, str) and f for f in fields):
            raise ValidationError("fields", "must be a list of value paths such as ['$'] or ['memory']")
        for f in fields:
            check_path("fields", f)
        if min_strength is not None:
            min_strength = check_number("min_strength", min_strength, lo=0.0, hi=1.0)
        store.check_names(requester=requester)  # the store's rule for requesters, here, as build_server
        self.store, self.requester, self.min_strength = store, requester, min_strength
        self.weights = weights  # checked; None: the store's, read at each search (the class's `weights`)
        self.fields = tuple(fields)
        self.access = None if access is None else check_choice("access", access, ACCESS)
        self.conflict_policy = check_choice("conflict_policy", conflict_policy, POLICIES)
        # who wrote a put's text: the graph's nodes (a model's tool, as through MCP) unless told; "tool"
        # or "import" screen at the guard's stricter threshold (GuardParams.strict_sources)
        self.source = check_choice("source", source, SOURCES)
        self._clock = clock(now)
        self.last_writes: tuple[Memory, ...] = ()  # what the last puts wrote (their statuses)

    # ------------------------------------------------------------------------- batch
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order -> one result per op (``Item | None``, ``list[SearchItem]``,
        ``list[tuple]``, None for a put). Consecutive puts are one transaction."""
        ops = list(ops)
        for op in ops:
            self._check(op)
        results: list[Result] = [None] * len(ops)
        # the batch runs with the store alone, its clock read there: after every write before it (read
        # earlier, a key another thread updates meanwhile had no version at all: the new one "not yet
        # written", the old one superseded); the store's lock is re-entrant for the calls inside
        # (not store.transaction(): its searches would miss the batch's own puts until the commit)
        with self.store._lock:
            now = self._clock()
            for op in ops:  # a ttl past the calendar's end from this clock (near year 9999) writes nothing
                if isinstance(op, PutOp) and op.ttl is not None:
                    until(now, op.ttl)
            i = 0
            while i < len(ops):
                if isinstance(ops[i], PutOp):
                    j = i
                    while j < len(ops) and isinstance(ops[j], PutOp):
                        j += 1
                    self._put_all(ops[i:j], now)  # type: ignore[arg-type]
                    i = j
                    continue
                op = ops[i]
                if isinstance(op, GetOp):
                    results[i] = self._get(op, now)
                elif isinstance(op, SearchOp):
                    results[i] = self._search(op, now)
                else:
                    results[i] = self._list_namespaces(op, now)  # type: ignore[arg-type]
                i += 1
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` on a worker thread (the store serializes its calls with its own lock)."""
        ops = list(ops)
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, ops)

    def _check(self, op: Any) -> None:
        """Validate one operation before anything in the batch runs (:func:`.langgraph_ops.check_op`: what
        LangGraph's stores refuse, and what memkit refuses more, a put's long indexed text among it)."""
        check_op(op, self.fields)

    # ------------------------------------------------------------------------- writes
    def _put_all(self, puts: list[PutOp], now: datetime) -> None:
        """Run a batch's consecutive puts (and deletes, ``value=None``) in one memkit transaction: all
        of them are written or none. ``last_writes`` holds the Memory records written, for inspection.
        """
        written: list[Memory] = []
        self.last_writes = ()
        with self.store.transaction():  # all the batch's consecutive puts, or none
            for op in puts:
                if op.value is None:
                    self._delete(op, now)
                else:
                    written.append(self._put(op, now))
        self.last_writes = tuple(written)

    def _put(self, op: PutOp, now: datetime) -> Memory:
        """One put -> the Memory written: the value stays the memory's structured ``value``, the text of
        its indexed paths (``index``, else the store's ``fields``; :func:`.langgraph_ops.put_text`)
        becomes ``content``, a ``ttl`` in minutes becomes ``valid_until``, and ``index=False`` tags it so
        that search never ranks it. The value and index were checked with the batch (``_check``).
        """
        value = dict(op.value)  # type: ignore[arg-type]
        return self.store.add(
            put_text(value, op.index, self.fields), namespace=encode_namespace(op.namespace),
            key=encode_label(op.key), value=value, requester=self.requester,
            tags=[NOINDEX] if op.index is False else None, access=self.access,
            valid_until=None if op.ttl is None else until(now, op.ttl),
            conflict_policy=self.conflict_policy, source=self.source, now=now,
        )  # fmt: skip

    def _delete(self, op: PutOp, now: datetime) -> None:
        """Erase every version of the key (or the unkeyed memory with that id). Missing: no-op."""
        ns, key = encode_namespace(op.namespace), encode_label(op.key)
        ids = self.store.versions(key, namespace=ns, requester=self.requester)["id"].to_list()
        if not ids and (m := self._unkeyed(ns, op.key, now, valid=False)) is not None:
            ids = [m.id]
        for memory_id in ids:
            try:
                self.store.delete(memory_id, namespace=ns, requester=self.requester, now=now)
            except NotFound:  # already taken with an erased merge
                pass

    # ------------------------------------------------------------------------- reads
    def _unkeyed(self, ns: str, key: str, now: datetime, *, valid: bool = True) -> Memory | None:
        """A memory written without a key, addressed by its id (memkit's own writes): an active one,
        and (``valid``) valid at ``now`` and written by then, in its status then, as search lists it. A
        delete erases an active one whatever its validity, as it erases every version of a key."""
        # decided on the row before get(), which logs a read: an id this lookup does not serve (another's
        # it may not read, one not yet written or no longer valid at `now`, held, keyed) leaves nothing in
        # the requester's audit, as a made-up id does
        try:
            found = self.store.frame(ns, ids=[key], requester=self.requester)
        except ValidationError:  # not an id at all
            return None
        if not found.height:
            return None
        r = found.row(0, named=True)
        now_valid = found.select(Gate(None, None, valid_at=now).expr()).item()  # written and valid at now
        status = r["status"]
        if valid and now_valid and r["updated_at"] > now:  # its status changed after now (a merge, approval)
            then = self._as_of(ns, now).filter(pl.col("id") == r["id"])["status"].to_list()
            status = then[0] if then else None
        if r["key"] is not None or status != "active" or not (now_valid or not valid):
            return None
        try:
            return self.store.get(key, namespace=ns, requester=self.requester, now=now)
        except (NotFound, ValidationError, AccessDenied):  # (the batch holds the store's lock)
            return None

    def _get(self, op: GetOp, now: datetime) -> MemkitItem | None:
        """The item of a key at ``now``: the current version's value, ``created_at`` of the first version
        and ``updated_at`` of the current one. A newer version held for review (quarantined or in conflict)
        is reported as ``pending`` beside the value that is still current, never served in its place.
        """
        ns, key = encode_namespace(op.namespace), encode_label(op.key)
        versions = self.store.versions(key, namespace=ns, requester=self.requester)
        versions = versions.filter(pl.col("created_at") <= now).sort("created_at", "version")
        names = {"key": op.key, "namespace": tuple(op.namespace)}
        if versions.height == 0:
            m = self._unkeyed(ns, op.key, now)
            if m is None:
                return None
            self._refresh(op.refresh_ttl, ns, [m.id], now)  # both times its writing's, as search lists it
            return MemkitItem(memory_id=m.id, value=item_value(m.value, m.content, parsed=True),
                              created_at=m.created_at,
                              updated_at=m.created_at, **names)  # fmt: skip
        first = versions["created_at"][0]
        newest = versions.row(-1, named=True)
        try:  # the current version another writer's and not readable: the key has no item for us
            current = self.store.read(key, namespace=ns, requester=self.requester, now=now)
        except AccessDenied:
            return None
        held = newest["status"] in ("quarantined", "conflict") and (
            current is None or newest["id"] != current.id
        )
        pending = newest["status"] if held else None
        if current is None:
            if pending is None:
                return None
            return MemkitItem(memory_id=newest["id"], status=pending, pending=pending, value={},
                              created_at=first, updated_at=newest["created_at"], **names)  # fmt: skip
        self._refresh(op.refresh_ttl, ns, [current.id], now)
        value = item_value(current.value, current.content, parsed=True)
        return MemkitItem(memory_id=current.id, pending=pending, value=value, created_at=first,
                          updated_at=current.created_at, **names)  # fmt: skip
