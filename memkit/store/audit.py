"""The audit writer: the one place events are written, and the rule that they carry no memory text.

Table ``events`` (``seq, ts, namespace, op, memory_id, requester, detail``) records every write and
every read. An event says *what happened to which id*, never *what the memory said*: forgetting is
final only if the log cannot repeat what was forgotten, and a refused secret or a redacted phone
number must not reappear in it. So:

- store code passes ids, keys, statuses, codes and numbers as ``detail``;
- free text that an event has to identify (a search query) is stored as a digest
  (:func:`digest`: ``b2:`` + 16 hex of blake2b over the NFKC-folded text), which lets you match a
  repeat of the same query without keeping it;
- caller-supplied detail (``log_context(**detail)``), an imported file's history and export paths
  pass through :func:`scrub`, which keeps tokens (ids, keys, codes, statuses) and the context
  builder's reasons (``duplicate of 3fa9…``) and digests every other string;
- an erasure takes the erased memory's key out of its own events, and out of the ``context`` events
  whose detail lists it, with every caller string its key or text holds (:func:`without_erased`);
  a digest is unsalted (a guess can be digested and compared), so it also takes every digest of an
  erased text or key out of every event (:mod:`memkit.store.forgotten`).

Every event that sets a memory's status carries ``detail.status``: ``frame(as_of=t)`` replays them.
"""

from __future__ import annotations

import hashlib
import json
import operator
import re
import unicodedata
from collections.abc import Sequence
from contextlib import suppress
from datetime import datetime
from itertools import repeat
from typing import Any

import pyarrow as pa

from ..errors import ValidationError
from ..guard import identity
from ..guard.names import names_findings
from ..params import GuardParams
from ..portable.columns import arrow_array, repeated
from ..portable.ids import random_token
from ..schema import MAX_CONTENT_CHARS
from ..text import normalize
from .core import StoreCore

__all__ = ["AuditMixin", "check_detail", "digest", "scrub", "without_erased"]

_BULK = 256  # batches of at least this many events go through an Arrow view
# what caller detail keeps verbatim: ASCII tokens without spaces (ids, keys, codes, statuses) and the
# reasons the context builder writes (memkit.agent.context); any other string is kept as its digest
_TOKEN = re.compile(r"^[A-Za-z0-9_.:/@#\[\]\-]{1,128}$")
_REASON = re.compile(
    r"^(?:included|over budget|duplicate of the query|duplicate of [0-9a-f]{1,32}|not active \([a-z_]+\)"
    r"|older value of key [A-Za-z0-9_.:/@#\-]{1,128} \(newest: [0-9a-f]{1,32}\))$"
)


_INTO_EVENTS = "INSERT INTO events (ts, namespace, op, memory_id, requester, detail)"
# a few events: their time (one bound value, or one per event) then lists unnested side by side
_SOME_EVENTS = (
    _INTO_EVENTS + " SELECT {}, unnest(?::VARCHAR[]), ?, unnest(?::VARCHAR[]), ?, unnest(?::JSON[])"
)
_ONE_EVENT = f"{_INTO_EVENTS} VALUES (?, ?, ?, ?, ?, ?)"
_BULK_EVENTS = {  # (ts, namespace, detail bound) -> events from the view _events (op, requester: bound)
    (at, space, detail): f"{_INTO_EVENTS} SELECT {'?' if at else 'ts'}, {'?' if space else 'namespace'}, ?,"
    f" memory_id, ?, {'CAST(? AS JSON)' if detail else 'detail'} FROM _events"
    for at in (False, True) for space in (False, True) for detail in (False, True)
}  # fmt: skip


_DIGEST = re.compile(r"b2:[0-9a-f]{16}\Z")


def digest(text: str) -> str:
    """A stable, text-free stand-in for ``text`` in the audit log.

    >>> digest("Where do I live?") == digest("ｗhere do i live?")  # NFKC and case folded
    True
    >>> digest("x"), digest(digest("x"))  # a digest stands for itself (an export's, imported again)
    ('b2:4adf4367f96e584f', 'b2:4adf4367f96e584f')
    """
    if _DIGEST.match(text):
        return text
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "b2:" + hashlib.blake2b(folded.encode("utf-8"), digest_size=8).hexdigest()


def _strings(value: Any) -> list[str]:
    """Every string in a JSON-like value, object keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def check_detail(detail: dict[str, Any]) -> None:
    """ValidationError unless ``detail`` (``log_context``'s keywords) can be an event's detail: none of
    the event's own fields, strict JSON (no NaN) that UTF-8 can hold (no lone surrogate), however deep,
    and no longer than a memory's text (:data:`~memkit.schema.MAX_CONTENT_CHARS` characters as JSON;
    the error names the longest keyword)."""
    if reserved := sorted({"ts", "op", "memory_id", "status"} & detail.keys()):  # the event's own
        raise ValidationError("detail", f"{reserved[0]!r} is a field of the event itself, not detail")
    try:
        text = json.dumps(detail, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
    except (TypeError, ValueError, RecursionError) as e:  # (UnicodeEncodeError is a ValueError)
        raise ValidationError("detail", f"must be JSON text: {type(e).__name__}: {e}"[:200]) from None
    if len(text) > MAX_CONTENT_CHARS:  # (a 10 MB detail was screened and digested whole)
        size = {k: len(json.dumps(v, ensure_ascii=False)) for k, v in detail.items()}
        longest = max(size, key=size.__getitem__)
        raise ValidationError(longest, f"is {size[longest]:,} characters as JSON; a context event's detail"
                              f" holds at most {MAX_CONTENT_CHARS:,} (a memory's text cap)")  # fmt: skip


def scrub(value: Any, params: GuardParams | None = None) -> Any:
    """Detail as the log keeps it: a string (an object key too) that is not a token or a known
    reason, or in which the guard finds anything (PII, a secret, an injection: the default rules, plus
    the ``extra_secret_patterns`` of ``params``, a store's guard), becomes its digest.

    >>> scrub({"reason": "duplicate of 3fa9", "note": "lives at 42 Elm Street", "n": [1, "a-b"]})
    {'reason': 'duplicate of 3fa9', 'note': 'b2:a1337e3b7ed000a1', 'n': [1, 'a-b']}
    >>> scrub({"phone": "13812345678", "pw": "password: hunter2", "13812345678": 1})
    {'phone': 'b2:73aef4b7508561b2', 'pw': 'b2:546598b30b57fa05', 'b2:73aef4b7508561b2': 1}
    """
    texts = list(dict.fromkeys(_strings(value)))  # each distinct string once, scanned in one batch
    # positions in `texts`; in an id of memkit's shape or a UUID only a secret counts (a digit run that
    # reads as a phone number is chance there: portable.ids)
    found = names_findings(texts, params)
    flagged = {i for i, fs in found.items() if not random_token(texts[i]) or "secret" in {f.kind for f in fs}}
    keep = {t for i, t in enumerate(texts) if i not in flagged and (_TOKEN.match(t) or _REASON.match(t))}

    def walk(v: Any) -> Any:
        """``v`` rebuilt with every string not in ``keep`` replaced by its digest."""
        if isinstance(v, str):
            return v if v in keep else digest(v)
        if isinstance(v, dict):
            return {walk(k): walk(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(x) for x in v]
        return v

    return walk(value)


def without_erased(detail: Any, erased: Sequence[tuple[str | None, str]], ids: set[str]) -> Any:
    """The detail of an event that names erased memories (``erased``: each one's key and text), with
    nothing left of what they said: a string equal to a key is dropped (None; an object key becomes
    its digest), one that holds a key or a text, or that a key or a text holds (memkit.text.normalize,
    3 characters or more: a topic naming it), becomes its digest. ``ids``, digests, numbers stay; a
    string that merely occurs in an erased text (a reason such as ``over budget``) is digested too:
    the rule errs on the side of forgetting.

    >>> without_erased({"ids": ["a1"], "key": "user.city", "topic": "LISBON", "reason": "included"},
    ...                [("user.city", "lives in Lisbon")], {"a1"})
    {'ids': ['a1'], 'key': None, 'topic': 'b2:87e0e65d3af6cc76', 'reason': 'included'}
    """
    keys = {k for k, _ in erased if k}
    folded = [normalize(t) for k, t in erased for t in (k, t) if t]

    def said(s: str) -> bool:
        """Whether ``s`` holds, or is held by, what an erased memory said."""
        f = normalize(s)
        return any(f == t or (len(t) >= 3 and t in f) or (len(f) >= 3 and f in t) for t in folded)

    def walk(v: Any, name: bool = False) -> Any:
        """``v`` rebuilt without the erased memories' keys and text (``name``: an object key)."""
        if isinstance(v, str):
            if v in ids or _DIGEST.match(v) or not said(v):
                return v
            return digest(v) if name or v not in keys else None
        if isinstance(v, dict):
            return {walk(k, True): walk(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(x) for x in v]
        return v

    return walk(detail)


def _json(detail: dict[str, Any] | None) -> str | None:
    """An event's detail as the JSON text of its column; empty detail is NULL. ``default=str``
    writes the odd datetime or number type as text rather than failing the write it records."""
    return json.dumps(detail, ensure_ascii=False, default=str) if detail else None


class AuditMixin(StoreCore):
    """Writes events inside the caller's transaction (see the module docstring)."""

    def _event(
        self,
        ts: datetime,
        op: str,
        namespace: str | None,
        memory_id: str | None,
        requester: str | None,
        **detail: Any,
    ) -> None:
        """One event (inside a transaction). ``detail`` is the store's own (ids, keys, statuses,
        codes): callers pass caller-supplied text through :func:`scrub` first."""
        self._run(_ONE_EVENT, [ts, self._log_space(namespace), op, memory_id, requester, _json(detail)])

    def _logged(
        self, insert: tuple[str, list[Any]], ts: datetime, op: str, namespace: str, requester: str | None,
        detail: dict[str, Any],
    ) -> tuple[str, list[Any]]:  # fmt: skip
        """One row's ``INSERT`` ``(sql, params)`` and its event as ONE statement -> ``(sql, params)``:
        a data-modifying CTE whose ``RETURNING id`` is the event's ``memory_id``. DuckDB runs (and
        commits) it as one: a single add saves two statements (~0.8 ms, most of what it cost above
        DuckDB's own floor)."""
        sql, params = insert
        return (
            f"WITH m AS ({sql} RETURNING id) {_INTO_EVENTS} SELECT ?, ?, ?, id, ?, ? FROM m",
            [*params, ts, self._log_space(namespace), op, requester, _json(detail)],
        )

    def _events(
        self,
        ts: datetime | Sequence[datetime],
        op: str,
        namespaces: Sequence[str | None],
        ids: Sequence[str | None],
        requester: str | None,
        details: Sequence[dict[str, Any] | None],
        id_array: pa.Array | pa.ChunkedArray | None = None,
    ) -> None:
        """One event per id, in one statement (a batch write logs thousands at once: an Arrow view,
        with the detail JSON written once when every row's detail is the same). ``ts``: the events'
        time, or each event's own (a version plan dates each change when it happened in its key's
        history: a ``ts`` column of the view, still one statement). ``id_array``: the ids as Arrow
        already (the batch that inserted their rows)."""
        n = len(ids)
        if not n:
            return
        if not isinstance(ts, datetime):  # each event's own time: one for all is bound once
            ts = ts[0] if ts.count(ts[0]) == len(ts) else list(ts)
        names = {ns: self._log_space(ns) for ns in set(namespaces)}  # a batch has few namespaces
        if any(k != v for k, v in names.items()):  # rarely: no pass over a bulk write's rows otherwise
            namespaces = [names[ns] for ns in namespaces]
        details = list(details)  # (alive while their ids key `made`)
        first = details[0]
        if all(
            map(operator.is_, details, repeat(first))
        ):  # a bulk write's rows, alike: one object (not merely ==:
            # {"v": 1} == {"v": True}, yet their JSON differs)
            texts = [_json(first)] * n
        else:  # one JSON text per detail object (rows alike may share one)
            made: dict[int, str | None] = {}
            texts = [made[id(d)] if id(d) in made else made.setdefault(id(d), _json(d)) for d in details]
        at = isinstance(ts, datetime)
        if n == 1:  # one add: bound values (~0.1 ms less than unnesting lists)
            self._run(_ONE_EVENT, [ts if at else ts[0], namespaces[0], op, ids[0], requester, texts[0]])
            return
        if n < _BULK:
            sql = _SOME_EVENTS.format("?" if at else "unnest(?::TIMESTAMPTZ[])")  # (constant texts)
            self._run(sql, [ts, list(namespaces), op, list(ids), requester, texts])
            return
        # a namespace or detail JSON that every event shares is bound once, not read from Arrow per row
        # (not on a server, where the view is a table filled by COPY: everything goes in it)
        values: dict[str, Any] = {"namespace": list(namespaces), "detail": texts}
        bound = {c: v[0] for c, v in values.items() if self._pg is None and repeated(v)}
        values["memory_id"] = list(ids) if id_array is None else id_array
        columns = {c: arrow_array(v, pa.string()) for c, v in values.items() if c not in bound}
        if not at:
            columns["ts"] = pa.array(ts, pa.timestamp("us", tz="UTC"))
        self._db.register("_events", pa.table(columns))
        try:
            self._run(
                _BULK_EVENTS[at, "namespace" in bound, "detail" in bound],
                [*([ts] if at else []), *([bound["namespace"]] if "namespace" in bound else []), op,
                 requester, *([bound["detail"]] if "detail" in bound else [])],
            )  # fmt: skip
        finally:
            with suppress(Exception):  # an aborted transaction refuses this; the real error propagates
                self._db.unregister("_events")

    def _history(
        self,
        events: Sequence[tuple[datetime, str | None, str, str | None, str | None, str | None]],
        keys: Sequence[str | None] = (),
    ) -> None:
        """Events carried over from elsewhere (an operator's import of a file with its history):
        ``(ts, namespace, op, memory_id, requester, detail JSON)``, checked by
        :func:`memkit.portable.fields.parse_events`; requesters become identities and details are scrubbed,
        so a hand-made file cannot put text into the log. ``keys``: each event's memory's key as
        stored (screened by the guard); a detail naming that key keeps it (``用户.地址`` would be
        digested as free text, though the row itself holds it)."""
        if not events:
            return
        ts, spaces, ops, ids, reqs, details = map(list, zip(*events, strict=True))
        # as the log keeps its own: identities for requesters, no free text in details
        reqs = [None if r is None else identity(r) for r in reqs]
        parsed = [None if d is None else json.loads(d) for d in details]
        details = []
        for i, d in enumerate(parsed):
            kept = scrub(d, self.guard) if d is not None else None
            if isinstance(d, dict) and i < len(keys) and keys[i] is not None and d.get("key") == keys[i]:
                kept["key"] = keys[i]  # the row's own key, as the memory table holds it
            details.append(None if kept is None else json.dumps(kept, ensure_ascii=False))
        self._event_rows(list(zip(ts, spaces, ops, ids, reqs, details, strict=True)))

    def _event_rows(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Events ``(ts, namespace, op, memory_id, requester, detail JSON)`` as they are, in one
        statement: the store's own (deferred reads) or already made safe (:meth:`_history`)."""
        ts, spaces, ops, ids, reqs, details = map(list, zip(*rows, strict=True))
        spaces = [self._log_space(ns) for ns in spaces]  # a journal written before log_space existed
        self._run(
            "INSERT INTO events (ts, namespace, op, memory_id, requester, detail)"
            " SELECT unnest(?::TIMESTAMPTZ[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[]),"
            " unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::JSON[])",
            [ts, spaces, ops, ids, reqs, details],
        )

    def _log(
        self, op: str, ts: datetime, namespace: str | None, requester: str | None, **detail: Any
    ) -> None:
        """Audit a read in its own transaction (joining an open one); a read-only or not yet
        migrated store reads without logging, so a read never fails for the log's sake."""
        if self.read_only or self._stale is not None:
            return
        memory_id = detail.pop("memory_id", None)
        self._tx(lambda: self._event(ts, op, namespace, memory_id, requester, **detail))
