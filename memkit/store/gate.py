"""The read gate: which memories a read may see, decided in one place for every read.

A read passes four checks, in this order (DESIGN.md):

1. **namespace** — a requester reads one namespace at a time and must name it; only the operator
   (``requester=None``) may read across namespaces;
2. **access level** — :mod:`memkit.access`: ``public`` anyone, ``protected`` the owner, ``private``
   the creator;
3. **status** — what the read is about (``search`` and ``read``: ``active`` only), as it was at
   ``now`` (:mod:`memkit.store.asof`: only a ``now`` before the last status change pays for it);
4. **validity** — valid at ``now`` (``valid_from <= now < valid_until``) and already written
   (``created_at <= now``, and its write logged by ``now``), for reads that take a ``now``.

:class:`Gate` holds one read's answer to those four questions and renders it as a SQL predicate
(:meth:`Gate.where`), a polars expression (:meth:`Gate.expr`) or, for search, the numpy mask of the
index (:meth:`~memkit.store.index.SearchIndex.mask`, same arguments). Quarantined text is masked for
everyone in ``get`` and ``versions`` (:data:`QUARANTINED_TEXT`): only the quarantine review shows it.

A quarantine reaches back (:meth:`GateMixin._then`): a memory quarantined today counts as quarantined
at every past instant it was written by, as an erased one is gone at every instant, so no read at a
past ``now`` (``search``, ``read``, ``neighbours``, the pending values beside a hit, ``frame(as_of=)``)
serves or scores its text; approved again, its history replays as it was.

Reads by id (``get``, ``delete``, ``approve``, …) go through :meth:`GateMixin._locate`: an id in
another namespace than the one named is :class:`~memkit.errors.NotFound`; without a namespace, a
requester reaches only memories it owns or created (an id alone proves nothing): anything else is
AccessDenied, audited, as any denial — NotFound when it may not read it either (:meth:`GateMixin._unseen`,
out of its audit), so an id alone tells it nothing of a memory it could not read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import polars as pl

from .. import access as acl
from ..errors import AccessDenied, NotFound, ValidationError
from ..guard.fields import names_as_stored
from ..guard.names import older_names
from ..schema import check_name
from .asof import AsOfMixin, Then
from .vectors import COLUMNS

__all__ = ["MASKED_CONTENT", "QUARANTINED_TEXT", "WITHHELD_TEXT", "Gate", "GateMixin", "key_matches"]

# the fields of an event's detail that name other memories (a supersede's successor, a conflict's
# rival, a resolve's losers, a merge's members, an import's source, a search's hits, a prompt's context)
ID_FIELDS = frozenset({"by", "against", "over", "merged_into", "members", "source_id", "ids"})
QUARANTINED_TEXT = "[quarantined: awaiting review]"  # what get() and versions() show instead of the text
WITHHELD_TEXT = "[withheld: another writer's memory]"  # a reply's text a requester may not read (approve)
# the Memory columns with a quarantined row's text and value withheld
# (its key and tags too: an injection may sit there, which is why it was quarantined)
_HELD = "CASE WHEN status = 'quarantined' THEN"
MASKED_CONTENT = f"{_HELD} '{QUARANTINED_TEXT}' ELSE content END"  # the text as a requester's view shows it
# subtle: derived from COLUMNS by replacing its "key, content, value," and " tags," runs, so the two
# lists name the same columns in the same order (a Memory builds from either)
MASKED_COLUMNS = COLUMNS.replace(
    "key, content, value,",
    f"{_HELD} NULL ELSE key END AS key, {MASKED_CONTENT} AS content, {_HELD} NULL ELSE value END AS value,",
).replace(" tags,", f" {_HELD} []::VARCHAR[] ELSE tags END AS tags,")
MASKED_EMBEDDING = f"{_HELD} NULL ELSE embedding END AS embedding"  # frame(include_embedding=True)
# which of the ids a past instant saw live are quarantined today (GateMixin._then)
_HELD_TODAY = "SELECT id FROM memories WHERE status = 'quarantined' AND id IN (SELECT unnest(?::VARCHAR[]))"


def key_matches(stored: str, given: str) -> list[str]:
    """Every name a lookup of a key matches (:meth:`GateMixin._key_names`), ``stored`` first: as given
    (written unscreened), and as stores written before December 2026 kept it (its PII's shorter
    pseudonyms: :func:`~memkit.guard.names.older_names`), so an upgraded store's key is read and
    continued before ``reidentify``. Only a key's: who may read or change a row is its owner's and
    creator's business, which never match an older pseudonym.

    >>> key_matches("contact.[PHONE:fe06744d3e1a9a5be4d35e59]", "contact.13812345678")
    ['contact.[PHONE:fe06744d3e1a9a5be4d35e59]', 'contact.13812345678', 'contact.[PHONE:6798e7e2]']
    """
    return list(dict.fromkeys([stored, given, *older_names(stored, given)]))


@dataclass(frozen=True)
class Gate:
    """One read's view: ``namespace`` (None: all, operator only), ``requester`` (None: the
    operator), ``statuses`` (None: any) and ``valid_at`` (None: any validity, any write time).
    ``hidden``: ids the open transaction erased, which the index holds until its commit (the
    tables no longer do: only the index's mask needs them). ``then``: the statuses at ``valid_at``
    that differ from today's (:class:`~memkit.store.asof.Then`; None: today's are those then)."""

    namespace: str | None
    requester: str | None
    statuses: tuple[str, ...] | None = None
    valid_at: datetime | None = None
    hidden: frozenset[str] = frozenset()
    then: Then | None = field(default=None, compare=False)

    def where(self) -> tuple[str, list[Any]]:
        """The gate as a SQL predicate over ``memories`` and its parameters (values are always bound
        as parameters, never formatted into the text; no condition at all is ``TRUE``).

        >>> Gate("u", "alice", ("active",)).where()[0]  # doctest: +NORMALIZE_WHITESPACE
        "namespace = ? AND (? IS NULL OR access = 'public' OR (access = 'protected' AND owner = ?) OR
         (access = 'private' AND created_by = ?)) AND status IN (SELECT unnest(?::VARCHAR[]))"
        """
        parts: list[str] = []
        params: list[Any] = []
        if self.namespace is not None:
            parts.append("namespace = ?")
            params.append(self.namespace)
        if self.requester is not None:
            parts.append(acl.SQL_READABLE)
            params += [self.requester] * 3
        if self.then is not None:  # as at `valid_at`: today's status unless listed, or listed then
            listed = "id IN (SELECT unnest(?::VARCHAR[]))"
            if self.statuses is None:  # any status, once written
                parts.append(f"NOT {listed}")
                params.append(self.then.ids(None))
            else:
                parts.append(f"((status IN (SELECT unnest(?::VARCHAR[])) AND NOT {listed}) OR {listed})")
                changed = self.then.changed["id"].to_list()
                params += [list(self.statuses), changed, self.then.ids(self.statuses)]
        elif self.statuses is not None:
            parts.append("status IN (SELECT unnest(?::VARCHAR[]))")
            params.append(list(self.statuses))
        if self.valid_at is not None:
            parts.append(
                "(valid_from IS NULL OR valid_from <= ?) AND (valid_until IS NULL OR ? < valid_until)"
                " AND created_at <= ?"
            )
            params += [self.valid_at] * 3
        return " AND ".join(parts) or "TRUE", params

    def expr(self) -> pl.Expr:
        """The same gate as a polars expression over a memories frame (what maintenance filters
        ``frame()`` with). Open validity bounds are nulls here, as in SQL."""
        e = acl.readable_expr(self.requester)
        if self.namespace is not None:
            e = e & (pl.col("namespace") == self.namespace)
        status = pl.col("status") if self.then is None else self.then.status_expr()  # null: not yet
        if self.statuses is not None:
            e = e & status.is_in(list(self.statuses)).fill_null(False)
        elif self.then is not None:
            e = e & status.is_not_null()
        if self.valid_at is not None:
            t = pl.lit(self.valid_at)  # in UTC (check_time), the columns' zone: polars compares no two
            e = e & (
                (pl.col("valid_from").is_null() | (pl.col("valid_from") <= t))
                & (pl.col("valid_until").is_null() | (pl.col("valid_until") > t))
                & (pl.col("created_at") <= t)
            )
        return e


class GateMixin(AsOfMixin):
    """Builds gates, checks access to one memory and audits denials."""

    _held_memo: tuple[Then, Then]  # the last replay (AsOfMixin's) and it with today's quarantine

    def _key_names(self, key: Any) -> tuple[str, str]:
        """A key a caller looks up -> ``(stored, given)``: as a write under this store's guard keeps
        it (PII as a pseudonym), and as given (a key written unscreened: a guard off then, a copied
        store). Lookups match either, and its older forms (:func:`key_matches`); ``stored`` is the
        one writes continue."""
        given = check_name("key", key)
        return names_as_stored([given], self.guard)[0], given

    def _gate(
        self,
        namespace: str | None,
        requester: str | None,
        *,
        statuses: tuple[str, ...] | None = None,
        valid_at: datetime | None = None,
    ) -> Gate:
        """The gate of one read, or ValidationError when a requester names no namespace (the
        namespace rule: only the operator reads across namespaces)."""
        if requester is not None and namespace is None:
            raise ValidationError(
                "namespace", f"is required for requester {requester!r}: only the operator reads across them"
            )
        hidden = frozenset(self._erased) if self._depth else frozenset()
        return Gate(namespace, requester, statuses, valid_at, hidden)

    def _then(self, namespace: str | None, t: datetime, *, synced: bool = False) -> Then | None:
        """:meth:`AsOfMixin._then <memkit.store.asof.AsOfMixin._then>`, with a quarantine that reaches
        back: a memory quarantined today has that status at every past ``t`` it was written by (a
        reviewer's verdict, or the guard's, is not undone by time travel, as an erasure is not), so
        every read at a past ``now`` withholds it as a read today does. Approved, it replays again."""
        with self._lock:  # (re-entrant)
            then = super()._then(namespace, t, synced=synced)
            if then is None:  # today's statuses: quarantined is quarantined
                return None
            memo = self.__dict__.get("_held_memo")
            if memo is not None and memo[0] is then:  # the same replay (remembered by AsOfMixin)
                return memo[1]
            there = then.changed.filter(pl.col("status").is_not_null() & (pl.col("status") != "quarantined"))
            # today's status as the table holds it (inside a transaction: a lesson it learned too)
            held = [r[0] for r in self._run(_HELD_TODAY, [there["id"].to_list()])]
            out = then
            if held:
                status = pl.when(pl.col("id").is_in(held)).then(pl.lit("quarantined"))
                status = status.otherwise(pl.col("status"))
                out = Then(then.at, then.changed.with_columns(status=status))
            self._held_memo = (then, out)
            return out

    def _reply_row(self, row: dict[str, Any], requester: str | None) -> dict[str, Any]:
        """``row`` (every Memory column, unmasked) as a reply to ``requester`` shows it: no lineage
        id of a memory it may not read, and the text, key, value and tags withheld as the gate
        withholds them: a quarantined row's (:data:`QUARANTINED_TEXT`), and a row it may not read
        (:data:`WITHHELD_TEXT`: a reviewer's ``approve`` of another writer's private memory)."""
        row = self._lineage_row(row, requester)
        if row["status"] == "quarantined":
            text = QUARANTINED_TEXT
        elif not acl.can_read(row["access"], row["owner"], row["created_by"], requester):
            text = WITHHELD_TEXT
        else:
            return row
        return {**row, "key": None, "content": text, "value": None, "tags": []}

    def _row(self, memory_id: str, masked: bool = False) -> dict[str, Any] | None:
        """The row of ``memory_id`` (every Memory column; quarantined text withheld if ``masked``),
        or None. No gate: callers decide who may see it (:meth:`_locate`, the review)."""
        cols = MASKED_COLUMNS if masked else COLUMNS
        rows = self._sql(f"SELECT {cols} FROM memories WHERE id = ?", [memory_id]).to_dicts()
        return rows[0] if rows else None

    # ----------------------------------------------------------------------------------- lineage
    def _hidden(self, ids: Iterable[Any], requester: str | None) -> set[str]:
        """Which of ``ids`` name a stored memory ``requester`` may not read (the operator: none).
        An id the store does not hold (erased, or another store's) hides nothing and stays."""
        asked = [*{i for i in ids if isinstance(i, str)}]
        if requester is None or not asked:
            return set()
        where, params = Gate(None, requester).where()  # by id: no namespace to name
        found = self._run(f"SELECT id, COALESCE(({where}), FALSE) FROM memories"
                          " WHERE id IN (SELECT unnest(?::VARCHAR[]))", [*params, asked])  # fmt: skip
        return {i for i, seen in found if not seen}

    def _lineage(self, rows: pl.DataFrame, requester: str | None) -> pl.DataFrame:
        """A requester's view of memory ``rows``: ``supersedes`` and ``merged_from`` do not name
        memories it may not read (an id is not text, but it tells of a memory kept from it)."""
        if requester is None or rows.is_empty():
            return rows
        hide = self._hidden([*rows["supersedes"], *rows["merged_from"].explode()], requester)
        if not hide:
            return rows
        out = pl.Series(sorted(hide), dtype=pl.String)
        return rows.with_columns(
            supersedes=pl.when(pl.col("supersedes").is_in(out)).then(None).otherwise(pl.col("supersedes")),
            merged_from=pl.col("merged_from").list.eval(pl.element().filter(~pl.element().is_in(out))),
        )

    def _lineage_row(self, row: dict[str, Any], requester: str | None) -> dict[str, Any]:
        """:meth:`_lineage` of one row (a dict)."""
        hide = self._hidden([row["supersedes"], *(row["merged_from"] or [])], requester)
        if not hide:
            return row
        return {**row, "supersedes": None if row["supersedes"] in hide else row["supersedes"],
                "merged_from": [m for m in row["merged_from"] if m not in hide]}  # fmt: skip

    def _event_lineage(self, events: pl.DataFrame, requester: str | None) -> pl.DataFrame:
        """A requester's view of audit ``events`` (``detail`` as JSON text): the ids their details
        name in :data:`ID_FIELDS` are null (dropped from lists) where :meth:`_lineage` hides them."""
        if requester is None or events.is_empty():
            return events
        details = [None if d is None else json.loads(d) for d in events["detail"]]
        fields = [(d, f) for d in details if isinstance(d, dict) for f in ID_FIELDS & d.keys()]
        hide = self._hidden([v for d, f in fields for v in (d[f] if isinstance(d[f], list) else [d[f]])],
                            requester)  # fmt: skip
        if not hide:
            return events
        changed = set()  # the requester's events: a few, and audit is no hot path
        for d, f in fields:
            v = d[f]
            if isinstance(v, list) and hide.intersection(v):
                d[f] = [x for x in v if x not in hide]
            elif isinstance(v, str) and v in hide:
                d[f] = None
            else:
                continue
            changed.add(id(d))
        texts = [json.dumps(d, ensure_ascii=False) if id(d) in changed else t
                 for d, t in zip(details, events["detail"], strict=True)]  # fmt: skip
        return events.with_columns(detail=pl.Series(texts, dtype=pl.String))

    def _deny(self, row: dict[str, Any], who: str | None, now: datetime, op: str, why: str = "") -> None:
        """Audit a refused operation on ``row`` and raise AccessDenied, naming the memory only to a
        requester who may read it (a write to another's private key must not tell its id)."""
        self._log("deny", now, row["namespace"], who, memory_id=row["id"], attempted=op,
                  access=row["access"])  # fmt: skip
        seen = acl.can_read(row["access"], row["owner"], row["created_by"], who)
        which = f"memory {row['id']}" if seen else "another writer's memory"
        raise AccessDenied(f"{who!r} may not {op} {which} (access {row['access']!r}){why}")

    def _unknown(self, memory_id: str, namespace: str | None) -> NotFound:
        """What an id of nothing this call may reach gets, from every entry point."""
        return NotFound.memory(memory_id, namespace)

    def _unseen(self, row: dict[str, Any], who: str | None, now: datetime, op: str, ns: str | None) -> None:
        """:meth:`_unknown`'s NotFound if ``who`` may not read ``row``: logged (``answered: NotFound``) for
        the operator and its readers, not in ``who``'s audit (read.py), which a made-up id leaves alone."""
        if not acl.can_read(row["access"], row["owner"], row["created_by"], who):
            self._log("deny", now, row["namespace"], who, memory_id=row["id"], attempted=op,
                      access=row["access"], answered="NotFound")  # fmt: skip
            raise self._unknown(row["id"], ns)

    def _check_read(self, row: dict[str, Any], requester: str | None, now: datetime, op: str) -> None:
        """AccessDenied (audited) unless ``requester`` may read ``row`` (:func:`memkit.access.can_read`)."""
        if not acl.can_read(row["access"], row["owner"], row["created_by"], requester):
            self._deny(row, requester, now, op)

    def _check_modify(self, row: dict[str, Any], requester: str | None, now: datetime, op: str) -> None:
        """AccessDenied (audited) unless ``requester`` may change ``row``: the operator, its owner
        or its creator (:func:`memkit.access.can_modify`), whatever its access level."""
        if not acl.can_modify(row["owner"], row["created_by"], requester):
            self._deny(row, requester, now, op)

    def _locate(
        self,
        memory_id: str,
        *,
        namespace: str | None,
        requester: str | None,
        now: datetime,
        op: str,
        modify: bool = False,
        masked: bool = False,
    ) -> dict[str, Any]:
        """The row of ``memory_id`` as ``requester`` may reach it by id, or NotFound / AccessDenied.

        With ``namespace``, an id of another namespace does not exist for this call; without it, nor
        one the requester may not read (:meth:`_unseen`), and it reaches only what it owns or created
        (AccessDenied, audited). Then the access rule: reading (or, with ``modify``,
        changing: the operator, owner or creator).
        """
        row = self._row(memory_id, masked=masked)
        # subtle: an id of another namespace does not exist for this call (NotFound, not AccessDenied)
        if row is None or (namespace is not None and row["namespace"] != namespace):
            raise self._unknown(memory_id, namespace)
        if namespace is None:
            self._unseen(row, requester, now, op, namespace)
        if namespace is None and not acl.can_modify(row["owner"], row["created_by"], requester):
            self._deny(row, requester, now, op, "; name its namespace (namespace=...) to reach it by id")
        (self._check_modify if modify else self._check_read)(row, requester, now, op)
        return row
