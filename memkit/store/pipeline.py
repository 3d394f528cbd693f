"""The write pipeline: the one way rows get into the store.

Every write — ``add``, ``add_many``, ``import_``, the merged rows of ``consolidate`` and everything
:class:`~memkit.agent.MemoryAgent` writes (it calls ``add``) — goes through :meth:`PipelineMixin._write`,
stage by stage:

1. **validate + admission** — done by the caller into complete rows:
   :func:`memkit.portable.rows.build_rows` (defaults, the admission rule for the layer, authorship)
   or :func:`memkit.portable.jsonl.read` (a file, every field through the same validators);
2. **guard** — :meth:`~memkit.store.guard.GuardMixin._screen`: redact, refuse, quarantine;
3. **embed** — through the cache; a given embedding is kept unless the guard changed the text;
   then rows near a lesson are quarantined (a given embedding, and this store's of the text too);
4. **version plan** — :meth:`~memkit.store.versions.VersionsMixin._plan_versions`: the conflict policy
   for keyed rows (may raise ConflictError or AccessDenied: nothing has been written yet);
5. **one transaction** — rows, cache entries, one event per row (with the status it got), quarantine
   and conflict events, version changes, and the caller's own extra statements (``also``); a row that
   changes nothing else (a plain ``add``) is one statement with its event, committed together;
6. **index** — after the commit, the rows and status changes are mirrored into the numpy index (a
   large batch's append is prepared during the transaction: :mod:`memkit.store.staging`).

``approve`` releases a stored row through stages 4-6 (its text passed 1-3 when it was written).
"""

from __future__ import annotations

import json
import operator
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from itertools import repeat
from typing import Any

import numpy as np

from ..embed import content_hashes
from ..embed.hashing import content_digests
from ..guard import identity
from ..portable.columns import hex_array
from . import vectors
from .guard import GuardMixin
from .pg_schema import ANALYZE_ROWS
from .settable import unscreened
from .staging import stage
from .versions import VersionPlan, VersionsMixin

__all__ = ["PipelineMixin"]


class PipelineMixin(GuardMixin, VersionsMixin):
    """Stages 2-6 of every write (see the module docstring)."""

    def _write(
        self,
        cols: dict[str, list[Any]],
        *,
        requester: str | None,
        now: datetime,
        policy: str,
        op: str = "add",
        emb: np.ndarray | None = None,
        copied: Future[np.ndarray] | None = None,
        details: list[dict[str, Any]] | None = None,
        before: Callable[[], None] | None = None,
        also: Callable[[], None] | None = None,
        columns: list[Any] | None = None,
        replaced: list[str] | None = None,
        exclude: list[str] | None = None,
        keep_consistent: bool = False,
        where: Callable[[int], str] = lambda i: f"row {i}",
        released: Sequence[int] = (),
        unset: dict[str, Any] | None = None,
    ) -> dict[str, list[Any]]:
        """Write complete rows ``cols`` -> ``cols`` as stored (redacted, with status and version).

        ``op`` names the per-row event (``add``, ``import``, ``merge``), ``details`` adds to each;
        ``emb`` (``(n, dim)``, normalized) skips the embedder for rows the guard left unchanged
        (``copied``: ``emb`` is the caller's own array, and this its copy under way on another thread,
        which the index keeps: the rows are inserted from ``emb``);
        ``columns`` (the table's :class:`~memkit.portable.columns.Column` list) inserts every table column
        ``cols`` carries (an import), not only the Memory fields;
        ``replaced`` ids are deleted in the same transaction (an import's overwrite) and, with
        ``exclude`` (a merge's members), left out of the version plan; ``before`` and ``also`` run
        inside the transaction before the rows' events and after everything else; ``released`` rows
        (an operator's import of memories a reviewer approved) keep their status where the guard
        would quarantine them; ``unset`` says which rows gave no ``access`` (``protected``): a new
        version of its writer's own key takes them from the current one (the version plan).
        """
        self._check_writable()
        self._check_spaces(cols["namespace"])  # stored with every row and event: never a secret
        n = len(cols["id"])
        # stages 2-4 decide everything before the transaction, so a refusal or a conflict under
        # "strict" raises with nothing written; only stage 5 writes
        for field in ("owner", "created_by"):  # identities, as requesters are mapped (an import's rows too)
            # (identity() of an identity is itself, so rows from build_rows pass unchanged)
            names = {x: identity(x) for x in set(cols[field]) if x is not None}  # a batch has few authors
            if any(k != v for k, v in names.items()):
                cols[field] = [None if x is None else names[x] for x in cols[field]]
        keys = list(cols["key"])  # as given: a key the guard renames continues its unscreened chain
        # a large batch of given vectors hashes its texts (as given) on a second thread while the guard
        # screens them: the guard's pre-filter runs in polars, which lets go of the GIL
        later = digests_later(cols["content"]) if emb is not None and n >= OVERLAP_ROWS else None
        redacted = self._screen(cols, requester, now, op=op, where=where, released=released)
        brought: Sequence[int] = ()  # rows whose vector the caller brought (not this store's embedding)
        if emb is None:
            emb, hashes, new_cache = self._embed(cols["content"])
        else:
            hashes, new_cache = _hashes(cols["content"], later and later(), redacted), {}
            brought = range(n)
            if redacted:  # a given vector was of the text before redaction: it would still encode it
                emb, copied = emb.copy() if copied is None else copied.result(), None
                emb[redacted], _, new_cache = self._embed([cols["content"][i] for i in redacted])
                brought = np.setdiff1d(np.arange(n), redacted)
        self._near_lessons(cols, emb, brought)  # a given vector is checked with the text's own as well
        # what the plan decides (access and protected too, when a keyed row may inherit them)
        inherits = unset is not None and any(v is not False for v in unset.values()) and keys.count(None) < n
        decided = ("status", "version", "supersedes") + (("access", "protected") if inherits else ())
        given = {c: list(cols[c]) for c in decided}
        off = unscreened(self.guard)  # a guard off, or partly: every event of the batch says so ({}: on)

        def decide() -> tuple[VersionPlan, list[dict[str, Any]]]:
            """Stage 4, the version plan, and each row's event detail (from the rows as given)."""
            for c, values in given.items():
                cols[c] = list(values)
            plan = self._plan_versions(
                cols,
                now,
                policy,
                requester,
                exclude=(replaced or []) + (exclude or []),
                keep_consistent=keep_consistent,
                given=keys,
                unset=unset if inherits else None,
                live_from=now if op == "merge" else None,
                born=now if op == "merge" else None,
            )
            extra = details or [{}] * n
            key, version = cols["key"], cols["version"]
            # each row's event: the status it went live with (a version the batch or its own place in
            # its key's history replaces later is logged live, then replaced when that happened)
            status = (
                [plan.began.get(i, s) for i, s in enumerate(cols["status"])] if plan.began else cols["status"]
            )

            def detail(s: str, k: str | None, v: int, d: dict[str, Any]) -> dict[str, Any]:
                # (a quarantined row's key may be the injection: the log does not repeat it)
                return {"status": s, "key": None if s == "quarantined" else k, "version": v, **d, **off}

            # rows alike share one detail object, so their events hold one JSON text; alike by identity
            # (or by value and type), not merely by ==: 1 == True == 1.0, whose JSON differs
            # (checked in C, map over operator.is_: a generator's Python pass took ~0.1 s per million rows)
            if n and all(all(map(operator.is_, c, repeat(c[0]))) for c in (status, key, version, extra)):
                return plan, [detail(status[0], key[0], version[0], extra[0])] * n
            alike: dict[tuple[Any, ...], dict[str, Any]] = {}
            return plan, [
                alike.get(r := (s, k, v, type(v), id(d))) or alike.setdefault(r, detail(s, k, v, d))
                for s, k, v, d in zip(status, key, version, extra, strict=True)
            ]

        plan, row_details = decide()
        statuses = cols["status"]
        quarantined = (
            [i for i, st in enumerate(statuses) if st == "quarantined"] if "quarantined" in statuses else []
        )

        # a large batch that grows the index has its append prepared on a second thread once DuckDB has
        # inserted its rows (the insert uses both cores; the events, one). Not inside an outer
        # transaction: what else it mirrors at its commit may come first
        plain = before is None and also is None and not replaced and self._pg is None and not self._depth
        staged = None

        def write() -> None:
            """Stage 5: everything the write changes in DuckDB, in one transaction."""
            nonlocal plan, row_details, staged, emb
            if self._pg is not None:  # other processes may have written since: the vectors must still
                self._check_embedder()  # be the embedder's, and the plan is decided again, inside
                plan, row_details = decide()  # the (serializable) transaction
            if replaced:
                self._run("DELETE FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[]))", [replaced])
            inserted = self._insert(cols, emb, hashes, new_cache, columns)  # their ids as Arrow, or None
            if copied is not None:
                emb = copied.result()  # the index keeps the copy, never the caller's array
            if plain and staged is None:
                staged = stage(self._index, cols, emb, vectors.index_cols)
            if before is not None:
                before()
            self._events(now, op, cols["namespace"], cols["id"], requester, row_details, inserted)
            held = [{"status": "quarantined", "codes": _codes(cols["findings"][i])} for i in quarantined]
            spaces, ids = [cols["namespace"][i] for i in quarantined], [cols["id"][i] for i in quarantined]
            self._events(now, "quarantine", spaces, ids, requester, held)
            self._apply_versions(plan, cols, now, requester)
            if also is not None:
                also()
            if staged is not None:  # its arrays ready before the commit, or its error raised (rolled back)
                staged.finish()

        alone = not (plan.changes or plan.batch or plan.conflicts or quarantined or replaced or new_cache)
        bound = columns is None and n <= vectors.SMALL  # the row as bound values (VectorsMixin._insert)
        try:
            if n == 1 and bound and alone and before is None and also is None and self._pg is None:
                # one row that changes nothing else (a plain add): the row and its event as one statement
                one = self._values_rows(cols, hashes, emb)
                self._tx_one(*self._logged(one, now, op, cols["namespace"][0], requester, row_details[0]))
            else:
                self._tx(write)
        except BaseException:
            if staged is not None:  # the shadow is dropped, the index never saw it
                staged.wait()
            raise
        if self._pg is not None and n >= ANALYZE_ROWS:  # the server's planner must know the table grew
            self._on_commit(self._analyze)
        # stage 6: queued until the commit (an outer transaction() may still roll everything back)
        if replaced:
            self._mirror(lambda: self._index.erase(replaced))
        self._index_append(cols, emb, staged)
        self._mirror_versions(plan)
        return cols


OVERLAP_ROWS = 8192
"""A batch of given vectors this long or longer hashes its texts on a second thread during the guard, and
(``add_many``) has vectors already of unit length borrowed, their copy made on another thread."""


_CHUNK = 2048  # texts hashed between two moments the hashing thread lets go of the GIL (~1 ms)


def digests_later(texts: Sequence[str]) -> Callable[[], bytes]:
    """:func:`~memkit.embed.hashing.content_digests` of ``texts`` (a copy of the list) on a thread of its
    own -> a call that waits for them (and raises what the thread raised).

    The thread lets go of the GIL after every :data:`_CHUNK` texts: the write's own thread, back from
    polars or numpy, then waits for it about a millisecond, not Python's switch interval (5 ms)."""
    texts = list(texts)

    def digests() -> bytes:
        out = []
        for i in range(0, len(texts), _CHUNK):
            out.append(content_digests(texts[i : i + _CHUNK]))
            time.sleep(0)
        return b"".join(out)

    return on_thread(digests, name="memkit-hashes").result


def on_thread(fn: Callable[..., Any], *args: Any, name: str) -> Future[Any]:
    """``fn(*args)`` on a thread of its own, which ends with it -> its future."""
    pool = ThreadPoolExecutor(1, thread_name_prefix=name)
    done = pool.submit(fn, *args)
    pool.shutdown(wait=False)
    return done


def _hashes(texts: Sequence[str], digests: bytes | None, redacted: Sequence[int]) -> Sequence[str]:
    """The content hashes of ``texts``: a list for a few rows, else one Arrow array (no str per row) made
    from ``digests`` (of the texts before the guard; None: made here), a ``redacted`` row's made again."""
    if len(texts) <= vectors.SMALL:
        return content_hashes(texts)
    raw = content_digests(texts) if digests is None else digests
    if redacted:
        raw = bytearray(raw)
        for i in redacted:
            raw[16 * i : 16 * i + 16] = content_digests((texts[i],))
    return hex_array(raw, 16)


def _codes(findings: str | None) -> list[str]:
    """The distinct finding codes of a row's findings JSON, in order."""
    return list(dict.fromkeys(f["code"] for f in json.loads(findings or "[]")))
