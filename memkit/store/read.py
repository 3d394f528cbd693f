"""Reads through the gate: ``get``, ``read``, ``versions``, ``frame``, ``count``, ``namespaces``,
``audit``; and the two writes a reader makes: ``log_context`` and ``reinforce``.

Each read builds one :class:`~memkit.store.gate.Gate` (namespace, access, status, validity) and asks
DuckDB for what it lets through; reads by id go through :meth:`~memkit.store.gate.GateMixin._locate`.
The operator (``requester=None``) sees everything; ``frame()`` without a requester is the operator's
raw view (what maintenance and export work on).

What each read lets through:

==============  ==========  ===========  ===========  ===================================
read            namespace   access       status       validity at ``now``
==============  ==========  ===========  ===========  ===================================
``get``         by id       read         any          any (quarantined text withheld)
``read``        one         read         active       valid and written by ``now``
``versions``    one         read         any          any (quarantined text withheld)
``frame``       one or all  read         any          any; ``as_of`` replays the statuses
``search``      one         read         active       valid, written, strong enough
==============  ==========  ===========  ===========  ===================================

``get`` and ``read`` log a ``read`` event (``search`` a ``search`` event); ``versions``, ``frame``
and ``count`` log nothing. A read-only store reads without logging: a read never fails for the
log's sake.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from ..errors import ValidationError
from ..guard.names import SECRET_IN_NAME
from ..schema import OPS, Memory, check_choice, check_name, check_time
from .audit import check_detail, scrub
from .gate import MASKED_COLUMNS, MASKED_CONTENT, MASKED_EMBEDDING, Gate, GateMixin, key_matches
from .names import id_holds_secret, log_names
from .vectors import COLUMNS, REINFORCE, VectorsMixin, epoch_us

__all__ = ["ReadMixin", "check_ids"]

_HELD = ("active", "conflict", "quarantined")  # a memory's statuses while it holds (not superseded)


def check_ids(field: str, ids: Any) -> list[str]:
    """A list of memory ids (each a valid name); a bare string is refused, not read as characters.

    >>> check_ids("ids", ("a1", "b2"))
    ['a1', 'b2']
    """
    listed = (
        isinstance(ids, (list, tuple, set, frozenset, pl.Series, np.ndarray)) and getattr(ids, "ndim", 1) == 1
    )
    if isinstance(ids, str) or not listed:
        raise ValidationError(field, f"must be a list of ids, got {type(ids).__name__}")
    return [str(check_name(field, i)) for i in ids]  # (a numpy str becomes a str)


def _texts(contents: Any) -> list[str]:
    """``frame(contents=)``: a list of texts (a bare string is refused, not read as characters)."""
    texts = contents.to_list() if isinstance(contents, pl.Series) else contents
    if not isinstance(texts, (list, tuple, set, frozenset)) or not all(isinstance(t, str) for t in texts):
        raise ValidationError("contents", f"must be a list of texts, got {type(contents).__name__}")
    return list(texts)


class ReadMixin(GateMixin, VectorsMixin):
    """Gated reads, the audit log, provenance and reinforcement."""

    def get(
        self,
        memory_id: str,
        *,
        namespace: str | None = None,
        requester: str | None = None,
        now: datetime | None = None,
    ) -> Memory:
        """The memory with this id in ``namespace``, in whatever status -> Memory; NotFound if there
        is none there, AccessDenied if ``requester`` may not read it.

        Name the namespace: without it, a requester reaches only memories it owns or created. The
        text of a ``quarantined`` memory is withheld (``[quarantined: awaiting review]``): only the
        quarantine review (:meth:`quarantine`) shows it. ``now`` dates the ``read`` event only: an id
        names a memory as it is today (what held at an instant: ``read``, ``search``, ``frame(as_of=)``)."""
        memory_id = check_name("memory_id", memory_id)
        namespace = self._space(namespace, optional=True)
        requester = self._who(requester)
        now = self._now(now)
        with self._lock:
            row = self._locate(memory_id, namespace=namespace, requester=requester, now=now, op="read",
                               masked=True)  # fmt: skip
            self._log("read", now, row["namespace"], requester, memory_id=memory_id)
            return Memory.from_row(self._lineage_row(row, requester))

    def read(
        self, key: str, *, namespace: str, requester: str | None = None, now: datetime | None = None
    ) -> Memory | None:
        """The current version of ``key``: the newest ``active`` one valid at ``now``, or None.

        A pending ``conflict`` version is not current until :meth:`resolve` makes it so.
        """
        key, raw = self._key_names(key)
        names = key_matches(key, raw)  # also as written unscreened, and as an older store kept it
        namespace = self._space(namespace)
        requester = self._who(requester)
        clock = self._clock(now)
        with self._lock:
            now = clock()  # under the lock: after every write that ran before
            # access is checked on the one row found, so a denial is audited (a gate would just hide it)
            gate = self._gate(namespace, None, statuses=("active",), valid_at=now)
            where, params = self._as_of(gate, now).where()  # status as at `now` (memkit.store.asof)
            rows = self._sql(
                f"SELECT {COLUMNS} FROM memories WHERE key IN (SELECT unnest(?::VARCHAR[])) AND {where}"
                " ORDER BY key = ? DESC, version DESC LIMIT 1",  # the screened chain's first: it is the one
                [names, *params, key],  # writes continue; then the others' newest (one chain, continued)
            ).to_dicts()
            if not rows:
                return None
            self._check_read(rows[0], requester, now, "read")
            self._log("read", now, namespace, requester, memory_id=rows[0]["id"], key=key)
            return Memory.from_row(self._lineage_row(rows[0], requester))

    def versions(self, key: str, *, namespace: str, requester: str | None = None) -> pl.DataFrame:
        """Every version of ``key`` (any status, any validity) that ``requester`` may read, oldest
        first; quarantined text withheld. The key's history: superseded and disputed values too,
        for a conflict review or a timeline."""
        names = key_matches(*self._key_names(key))  # as stored, given, and as an older store kept it
        namespace = self._space(namespace)
        requester = self._who(requester)
        where, params = self._gate(namespace, requester).where()
        with self._lock:
            rows = self._sql(
                f"SELECT {MASKED_COLUMNS} FROM memories WHERE key IN (SELECT unnest(?::VARCHAR[]))"
                f" AND {where} ORDER BY version, created_at",
                [names, *params],
            )
            return self._lineage(rows, requester)  # no id of a version kept from it

    def frame(
        self,
        namespace: str | None = None,
        *,
        as_of: datetime | None = None,
        include_embedding: bool = False,
        requester: str | None = None,
        withhold: bool | None = None,
        contents: Sequence[str] | None = None,
        ids: Sequence[str] | None = None,
    ) -> pl.DataFrame:
        """All memories (of one namespace, or all), oldest first, as a polars frame.

        ``as_of=t`` shows what the store believed at ``t``: the memories written by then (by their
        ``created_at``; a merge by its ``merge`` event), each with the status it had then, replayed
        from the audit log (:mod:`memkit.store.asof`, the rule every read at a past ``now``
        follows). Deleted memories are gone for good: erasure is not undone by
        time travel, nor is a quarantine (one quarantined today is quarantined at every ``t``:
        :meth:`~memkit.store.gate.GateMixin._then`); access counts and importance are today's. With
        a ``requester`` (and its namespace) only what it may read, quarantined text withheld;
        without, the operator's view.
        ``withhold=True`` withholds quarantined rows' text, key, value and tags
        (``[quarantined: awaiting review]``) in the operator's view too, for what reaches a model or
        a user (the MCP server, an agent's reply); a requester's view always withholds them.
        ``contents=[...]`` reads only the rows whose text, as the frame shows it, is one of those
        (``frame(...).filter(pl.col("content").is_in(texts))``, without reading the rest: what an
        adapter import matches its records against, :mod:`memkit.portable.seen`). ``ids=[...]`` reads
        only the rows with those ids (an agent asks which of its buffered turns' memories still exist).
        """
        namespace = self._space(namespace, optional=True)
        as_of = check_time("as_of", as_of, optional=True)
        requester = self._who(requester)
        for name, flag in (("include_embedding", include_embedding), ("withhold", withhold)):
            if not isinstance(flag, bool) and not (name == "withhold" and flag is None):
                raise ValidationError(name, "must be a bool")
        where, params = self._gate(namespace, requester).where()  # no status or validity filter
        masked = requester is not None or withhold is True  # a requester's view: withheld
        if contents is not None:  # the text as selected below: a requester's quarantined rows' withheld
            where = f"{where} AND {MASKED_CONTENT if masked else 'content'} IN (SELECT unnest(?::VARCHAR[]))"
            params = [*params, _texts(contents)]
        if ids is not None:  # (checked first: a bad list reads nothing)
            params = [*params, check_ids("ids", ids)]
            where = f"{where} AND id IN (SELECT unnest(?::VARCHAR[]))"
        cols = (MASKED_COLUMNS if masked else COLUMNS) + (
            f", {MASKED_EMBEDDING if masked else 'embedding'}" if include_embedding else ""
        )
        with self._lock:
            # (created_at, write order): the index's order, so neighbour ties match search's
            frame = self._sql(f"SELECT {cols} FROM memories WHERE {where} ORDER BY created_at, rowid", params)
            # as_of: every write logs the status it sets, so the last such event by `t` is the status
            # then, and a memory with no event by `t` had not been written yet (memkit.store.asof;
            # None: `t` is at or after the last status change, today's statuses are those then)
            then = None if as_of is None else self._then(namespace, as_of)
            if as_of is not None:  # written by then, as a search at that `now` sees it (asof's rule)
                frame = frame.filter(pl.col("created_at") <= as_of)
            return self._lineage(frame if then is None else then.apply(frame), requester)

    def count(self, namespace: str | None = None) -> int:
        """Number of stored memories (all statuses) of one namespace, or all; the operator's count."""
        namespace = self._space(namespace, optional=True)
        where, params = self._gate(namespace, None).where()
        with self._lock:
            return self._run(f"SELECT count(*) FROM memories WHERE {where}", params)[0][0]

    def namespaces(self, *, requester: str | None = None, now: datetime | None = None) -> pl.DataFrame:
        """The namespaces that hold memories -> ``namespace, memories`` (stored, any status), sorted.

        A ``requester`` sees only the namespaces where it may read at least one memory, counted by
        what it may read: the names and the counts, nothing of the memories themselves. With ``now``,
        only what holds then counts (a namespace left with none is not listed): memories written by
        ``now``, valid at ``now``, and current or held for review then (``active``, ``conflict`` or
        ``quarantined``, in their status as of ``now``: what a read at ``now`` may show).
        """
        # across namespaces on purpose (Gate, not _gate): only names and counts of what it may read
        gate = Gate(None, self._who(requester))
        with self._lock:
            if now is not None:  # (the statuses replayed at `now` when it is before a later change)
                now = check_time("now", now)
                gate = self._as_of(replace(gate, statuses=_HELD, valid_at=now), now)
            where, params = gate.where()
            return self._sql(
                f"SELECT namespace, count(*) AS memories FROM memories WHERE {where}"
                " GROUP BY namespace ORDER BY namespace",
                params,
            )

    def audit(
        self, namespace: str | None = None, *, op: str | None = None, requester: str | None = None
    ) -> pl.DataFrame:
        """The audit log (``seq, ts, namespace, op, memory_id, requester, detail``), oldest first.

        A namespace's events are those logged under its name and under its pseudonym
        (:func:`~memkit.store.names.log_names`: whatever rules made the log name it so). The operator
        sees every event. A ``requester`` (with its namespace) sees its own events and
        those about memories it may read; its refusals name no memory it may not read (the refusal
        told it none), and one answered NotFound (an id alone: ``answered`` in its detail) is the
        operator's only, as a made-up id's leaves none. Events never hold memory text
        (:mod:`memkit.store.audit`).
        """
        namespace = self._space(namespace, optional=True)
        op = None if op is None else check_choice("op", op, OPS)
        requester = self._who(requester)
        where, params = self._gate(namespace, requester).where()
        # as the events may name it: as it is, and its pseudonym under *any* rules (names.log_names)
        logged = [None, None] if namespace is None else log_names(namespace)
        # a requester's events: those it made, and those about memories it may read now
        mine, cols, head, tail = "TRUE", "memory_id", [], []
        if requester is not None:
            readable = f"e.memory_id IN (SELECT id FROM memories WHERE {where})"
            # its refusals answered as unknown ids (gate._unseen) are the operator's: a made-up id has none
            unseen = "e.op = 'deny' AND e.detail->>'answered' IS NOT NULL"
            mine = f"((e.requester = ? AND NOT ({unseen})) OR {readable})"
            # no id of a memory it may not read: its refusals' (that memory may be erased since), and
            # its own events' about one kept from it (the old version its write superseded)
            hidden = f"e.memory_id IN (SELECT id FROM memories WHERE NOT COALESCE(({where}), FALSE))"
            cols = f"CASE WHEN (e.op = 'deny' AND NOT {readable}) OR {hidden} THEN NULL ELSE e.memory_id END"
            cols += " AS memory_id"
            head, tail = [*params, *params], [requester, *params]  # the parameters of cols, and of mine
        with self._lock:
            events = self._sql(
                f"SELECT seq, ts, namespace, op, {cols}, requester, CAST(detail AS VARCHAR) AS detail"
                " FROM events e WHERE (? IS NULL OR namespace IN (?, ?)) AND (? IS NULL OR op = ?)"
                f" AND {mine} ORDER BY seq",
                [*head, namespace, *logged, op, op, *tail],
            )
            return self._event_lineage(events, requester)  # details name no memory kept from it

    def log_context(
        self,
        ids: Sequence[str],
        *,
        namespace: str,
        requester: str | None = None,
        now: datetime | None = None,
        **detail: Any,
    ) -> None:
        """Audit which memories entered a prompt: one ``context`` event (``detail.ids``; used by
        :class:`memkit.agent.MemoryAgent` to answer "which memory did you base this on?"). ``detail``
        passes through :func:`~memkit.store.audit.scrub`: ASCII tokens without spaces (ids, keys,
        codes, statuses) and the context builder's reasons stay, every other string (free text, or
        anything the guard flags, the store's own secret patterns included) becomes a digest. The
        ``ids`` are kept as they are, so one that holds a secret by the store's rules is refused
        (ValidationError ``ids``), as a namespace or a requester would be (one of the shape memkit
        mints, by the built-in rules only: :func:`~memkit.store.names.id_holds_secret`). Once a
        listed memory is erased, its key and any token its key or text holds leave the event too
        (:func:`~memkit.store.audit.without_erased`), and once any memory is erased, a digest of its
        text or key (:mod:`memkit.store.forgotten`). A requester's event names only memories it may read."""
        namespace = self._space(namespace)
        requester = self._who(requester)
        now = self._now(now)
        ids = check_ids("ids", ids)
        if any(id_holds_secret(i, self._secret) for i in ids):  # logged as they are (memkit.store.names)
            raise ValidationError("ids", SECRET_IN_NAME)
        check_detail(detail)  # here, naming the field, rather than inside the transaction
        if requester is not None and ids:  # one kept from it and a made-up one alike leave (its audit
            where, params = Gate(namespace, requester).where()  # would tell them apart otherwise)
            sql = f"SELECT id FROM memories WHERE {where} AND id IN (SELECT unnest(?::VARCHAR[]))"
            ids = list(filter({r for (r,) in self._run(sql, [*params, ids])}.__contains__, ids))  # (in order)
        # its own transaction, or the caller's open one; ids only, free text as digests
        kept = scrub(detail, self.guard)  # (before the transaction: the guard's scan holds no lock)
        self._tx(lambda: self._event(now, "context", namespace, None, requester, ids=ids, **kept))

    def reinforce(
        self, ids: Sequence[str], *, namespace: str, requester: str | None = None, now: datetime | None = None
    ) -> list[str]:
        """Reinforce recalled memories: last access = now (never backwards), access count + 1,
        importance + ``DecayParams.reinforce_step`` (at most 1) -> the ids reinforced.

        What ``search`` does to its hits; an agent that searches with ``reinforce=False`` calls it
        once the answer stands. Only active memories of ``namespace`` that ``requester`` may read
        count; unknown ids are ignored.
        """
        namespace = self._space(namespace)
        requester = self._who(requester)
        now = self._now(now)
        ids = check_ids("ids", ids)
        # no validity check: reinforce follows a search, which checked validity at its own `now`
        where, params = self._gate(namespace, requester, statuses=("active",)).where()
        with self._lock:
            found = self._run(
                f"SELECT id FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[])) AND {where}",
                [ids, *params],
            )
            have = {r[0] for r in found}
            ok = [i for i in dict.fromkeys(ids) if i in have]  # in the caller's order, on every backend
            if ok:
                self._touch(ok, now)
        return ok

    def _touch(self, ids: list[str], now: datetime) -> None:
        """The reinforcement write (in a transaction, mirrored into the index after the commit)."""

        def write() -> None:
            """One UPDATE for every id: last access, count and importance, as in the index."""
            self._run(REINFORCE, [now, self.decay.reinforce_step, ids])

        self._tx(write)  # the rows are looked up at commit: a memory added in the same transaction too
        # subtle: the index is touched after the commit, so a rolled-back transaction leaves it as it was
        self._mirror(
            lambda: self._index.touch(self._index.rows(ids), epoch_us(now), self.decay.reinforce_step)
        )
