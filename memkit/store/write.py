"""``add`` and ``add_many``: the public writes, thin entrances to the write pipeline.

Both validate their input into complete rows (:func:`memkit.portable.rows.build_rows`: defaults, the
admission rule, authorship) and hand them to :meth:`~memkit.store.pipeline.PipelineMixin._write`,
which screens, embeds, plans versions and commits. ``add_many`` is ``add`` for a frame: the same
rules row by row (keys meet their stored versions, and each other in frame order, under the conflict
policy), one transaction, and given embeddings skip the embedder.

Every argument is checked before the store's lock is taken and before anything is written; the
lock is held only for the pipeline itself.

Two checks a write makes, public without the write, for what acts through the store (an agent, the
MCP server, the LangGraph store): :meth:`~WriteMixin.check_names` (a namespace and a requester, as
every write judges them) and :meth:`~WriteMixin.check_key_write` (whether a keyed write would be
refused, audited as that refusal).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, wait
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from ..conflicts import POLICIES
from ..errors import ValidationError
from ..portable.columns import repeated
from ..portable.rows import build_frame, build_rows
from ..schema import Memory, check_choice
from .pipeline import OVERLAP_ROWS, PipelineMixin, on_thread
from .vectors import ZERO_VECTOR

__all__ = ["WriteMixin"]


class WriteMixin(PipelineMixin):
    """``add`` and ``add_many``; ``check_names``, ``check_writable`` and ``check_key_write``."""

    def _policy(self, conflict_policy: str | None) -> str:
        """The conflict policy of one call: ``conflict_policy=`` if given, else the store's."""
        given = self.conflict_policy if conflict_policy is None else conflict_policy
        return check_choice("conflict_policy", given, POLICIES)

    # ------------------------------------------------------------------ checks without writing
    def check_names(self, *, namespace: str | None = None, requester: str | None = None) -> str | None:
        """Check the names a write carries, as the write checks them, without writing -> the
        requester's identity (:func:`memkit.guard.identity`: a name that is PII, an e-mail address,
        becomes its pseudonym, as owners and creators hold it; None, the operator, stays None).

        ``namespace`` (unless None: not checked) must be a name (:func:`~memkit.schema.check_name`)
        that is not a pseudonym and holds no secret by the store's own rules (the built-in secret
        rules plus ``guard.extra_secret_patterns``: :mod:`memkit.store.names`), ``requester`` a name
        or None that holds no such secret; else ValidationError naming ``namespace`` (checked first)
        or ``requester``. Nothing is read, written or logged. For what binds one namespace or one
        requester for many calls (:class:`~memkit.agent.MemoryAgent`, the MCP server, the LangGraph
        store) to refuse at start what each of its writes would refuse.

        >>> import memkit as mk
        >>> store = mk.MemoryStore()
        >>> store.check_names(namespace="user_87", requester="alice@example.com")
        '[EMAIL:8c7d2f7a9e16d94ac8c1c560]'
        >>> store.check_names(namespace="team-AKIAIOSFODNN7EXAMPLE")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        memkit.errors.ValidationError: namespace: holds something that looks like a secret ...
        """
        if namespace is not None:
            self._check_spaces((self._space(namespace),))
        return self._who(requester)

    def check_writable(self) -> None:
        """MemkitError unless this store may write now: not opened ``read_only``, and its vectors are
        its embedder's (a stale file waits for ``reembed``); the error a write would raise. For what
        must fail before costly work whose result it then writes: the agent checks it before it calls
        its LLM."""
        self._check_writable()

    def check_key_write(
        self, key: str, *, namespace: str, requester: str | None = None, now: datetime | None = None
    ) -> None:
        """AccessDenied (audited: a ``deny`` event, as :meth:`add` logs its refusal) if a keyed write
        of ``requester`` to ``key`` would be refused at ``now`` (the key's current version is another
        writer's and not public), as ``add`` refuses it; else nothing, and nothing is written. For an
        integration to tell a key the requester may not write from one it cannot see at all (a key
        that holds only versions it may not read): the MCP server's ``update_memory``."""
        namespace, requester, now = self._space(namespace), self._who(requester), self._now(now)
        stored, given = self._key_names(key)
        with self._lock:
            versions = self._stored_versions(
                {"namespace": [namespace], "key": [stored]}, [0], now, [], [given]
            )
            self._check_slots(versions, requester, now)

    def add(
        self,
        content: str,
        *,
        namespace: str,
        requester: str | None = None,
        key: str | None = None,
        value: Any = None,
        layer: str | None = None,
        kind: str | None = None,
        importance: float | None = None,
        half_life_hours: float | None = None,
        source: str | None = None,
        owner: str | None = None,
        access: str | None = None,
        tags: Sequence[str] | None = None,
        valid_from: datetime | None = None,
        valid_until: datetime | None = None,
        protected: bool | None = None,
        created_at: datetime | None = None,
        conflict_policy: str | None = None,
        now: datetime | None = None,
    ) -> Memory:
        """Write one memory and return it (its ``status`` tells what the guard and the conflict
        policy decided: ``active``, ``conflict``, ``quarantined``).

        Unset fields get defaults: kind ``fact``, importance 0.5, layer by the admission rule
        (importance < 0.3 → ``short_term``; kind ``event`` → ``episodic``; else ``long_term``),
        half-life by layer, owner and creator = requester, access ``public``, created_at = now.
        A keyed write applies ``conflict_policy`` (default: the store's) to the key's versions; a new
        version of the requester's own current one that gives no ``access`` (``protected``) keeps
        that version's: the next value of a private fact stays private.
        """
        namespace = self._space(namespace)
        requester = self._who(requester)  # an identity: PII in a name becomes its pseudonym
        now = self._now(now)
        policy = self._policy(conflict_policy)
        # a keyword left at None is "not given": build_rows fills in its default
        given = dict(content=content, key=key, value=value, layer=layer, kind=kind, importance=importance,
                     half_life_hours=half_life_hours, source=source, owner=owner, access=access, tags=tags,
                     valid_from=valid_from, valid_until=valid_until, protected=protected,
                     created_at=created_at)  # fmt: skip
        cols = build_rows([{k: v for k, v in given.items() if v is not None}], namespace, requester, now)
        unset = {"access": access is None, "protected": protected is None}  # a new version may inherit them
        with self._lock:
            cols = self._write(cols, requester=requester, now=now, policy=policy, unset=unset)
            row = self._lineage_row({c: v[0] for c, v in cols.items()}, requester)  # as get() shows it
        return Memory.from_row(row)  # the row as stored (redacted)

    def add_many(
        self,
        frame: pl.DataFrame,
        *,
        namespace: str,
        requester: str | None = None,
        now: datetime | None = None,
        conflict_policy: str | None = None,
    ) -> pl.DataFrame:
        """Insert memories from a polars frame in one transaction -> frame ``id, status``.

        Columns: ``content`` and any writable :class:`Memory` field (``key``, ``importance``,
        ``created_at``, ``tags``, ...), plus an optional ``embedding`` column (``dim`` floats per
        row; normalized here) that skips the embedder (an all-zero one only where the embedder gives
        the text no direction either, as ``import_`` accepts it). ``created_by`` is the requester; only the
        operator may set it. Keyed rows meet the key's stored versions, and each other in frame
        order, under ``conflict_policy`` as :meth:`add` does; a keyed row whose ``access``
        (``protected``) is null or has no column keeps its writer's own current version's, as in :meth:`add`.

        The guard screens every row: PII is redacted and suspected injections are ``quarantined``
        row by row, but one row holding a secret refuses the whole batch
        (:class:`~memkit.errors.WriteRefused`, whose ``findings`` name the rows): nothing is
        written, so the caller can drop those rows and retry.
        """
        if not isinstance(frame, pl.DataFrame):
            raise ValidationError("frame", f"must be a polars DataFrame, got {type(frame).__name__}")
        namespace = self._space(namespace)
        requester = self._who(requester)
        now = self._now(now)
        policy = self._policy(conflict_policy)
        self._check_writable()  # (again in the pipeline) before a million vectors are checked and copied
        # the vectors first: a large batch's, already of unit length, are borrowed (not copied), and the
        # copy the index keeps is made on a second thread meanwhile (README, "Ingestion")
        emb, copied = (
            self._given_vectors(frame["embedding"]) if "embedding" in frame.columns else (None, None)
        )
        try:
            cols = build_frame(frame.drop("embedding", strict=False), namespace, requester, now)
            if cols is None:  # not plainly valid column by column: every row through the validators
                try:
                    records = frame.drop("embedding", strict=False).to_dicts()
                except (OverflowError, ValueError) as e:  # e.g. a time with no UTC date in a datetime column
                    raise ValidationError("frame", f"has a value Python cannot hold: {e}") from None
                cols = build_rows(records, namespace, requester, now)
            if emb is not None and (bad := self._lying_zeros(emb, cols["content"])).size:
                raise ValidationError(f"embedding[row {bad[0]}]", ZERO_VECTOR)
            with self._lock:
                cols = self._write(
                    cols,
                    requester=requester,
                    now=now,
                    policy=policy,
                    emb=emb,
                    copied=copied,
                    details=[{"bulk": True}] * len(frame),  # the add events of add_many say so
                    unset={c: _unset(frame, c) for c in ("access", "protected")},
                )
        except BaseException:
            if copied is not None:  # nothing runs on after a failed call
                wait([copied])
            raise
        return pl.DataFrame([_series("id", cols["id"]), _series("status", cols["status"])])  # as `frame`

    def _given_vectors(self, given: pl.Series) -> tuple[np.ndarray, Future[np.ndarray] | None]:
        """A frame's ``embedding`` column -> ``(vectors checked and normalized, None)``, or for a large
        batch already of unit length ``(the column's own array, its copy under way)``: the write
        inserts the column's array and the index keeps the copy (fresh memory of a million rows takes
        the kernel 1-3 s to map here, which the thread overlaps with the checks, guard and insert)."""
        if given.null_count():
            raise ValidationError("embedding", "has missing rows")
        arr = given.to_numpy()  # pl.Array -> (n, dim) without Python lists
        if arr.dtype == object:
            return self._check_embeddings(given.to_list(), len(given)), None
        borrow = len(given) >= OVERLAP_ROWS
        emb = self._check_embeddings(arr, len(given), borrow=borrow)
        return emb, on_thread(np.copy, emb, name="memkit-vectors") if borrow and emb is arr else None


def _unset(frame: pl.DataFrame, column: str) -> bool | pl.Series:
    """Which rows of ``frame`` left ``column`` unset (no such column, or null): True for all, False
    for none, else a bool Series. A keyed row that gave no access (protected) takes its writer's own
    current version's (:func:`memkit.store.versions._inherit`)."""
    if column not in frame.columns:
        return True
    nulls = frame[column].null_count()
    return nulls == len(frame) if nulls in (0, len(frame)) else frame[column].is_null()


def _series(name: str, values: list[str]) -> pl.Series:
    """A column of the result: from its Arrow array when it has one (a bulk write's ids), one value
    repeated when every row holds it (their status), else from the list."""
    arrow = getattr(values, "arrow", None)
    if arrow is not None:
        return pl.Series(name, arrow, dtype=pl.String)
    if repeated(values):
        return pl.repeat(values[0], len(values), dtype=pl.String, eager=True).alias(name)
    return pl.Series(name, values, dtype=pl.String)
