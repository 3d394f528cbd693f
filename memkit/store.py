"""MemoryStore: agent memories in DuckDB, searched through an in-memory numpy index.

The only module that imports duckdb. Each public method validates its input first, then writes in
one transaction (retried on DuckDB's "Conflict on update"), then mirrors the change into the
:class:`~memkit.index.SearchIndex`. A call that raises has changed nothing.

>>> from datetime import datetime, timedelta, timezone
>>> now = datetime(2026, 1, 1, tzinfo=timezone.utc)
>>> with MemoryStore() as store:
...     m = store.add("用户住在杭州滨江区", namespace="user_87", key="user.address", now=now)
...     hits = store.search("住在哪里", namespace="user_87", k=3, now=now)
>>> hits["content"].to_list()
['用户住在杭州滨江区']
"""

from __future__ import annotations

import json
import numbers
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import numpy as np
import polars as pl

from . import access as acl
from . import portable
from .analyze import analyze as lint
from .conflicts import POLICIES, plan_keyed_write
from .consolidate import PLAN_SCHEMA as MERGE_SCHEMA
from .consolidate import MergeParams, plan_merges
from .embed import Embedder, HashEmbedder, content_hash, l2_normalize
from .errors import AccessDenied, MemkitError, NotFound, StoreLocked, ValidationError
from .forget import plan_forget
from .index import SearchIndex
from .params import DecayParams, ForgetParams, GuardParams, KeywordParams, Weights, check_number
from .rows import build_rows, new_id
from .schema import KINDS, LAYERS, MIGRATIONS, OPS, Memory, check_choice, check_name, check_text, check_time
from .store_guard import GuardedStore

__all__ = ["MemoryStore"]

T = TypeVar("T")
_SETTINGS = {
    "enable_external_access": False,  # no file or network access from SQL text
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}
_COLUMNS = (
    "id, namespace, key, content, value, layer, kind, importance, half_life_hours, source, owner, "
    "created_by, access, tags, status, protected, valid_from, valid_until, created_at, updated_at, "
    "last_access_at, access_count, version, supersedes, merged_from, findings"
)
_VALID_AT = "(valid_from IS NULL OR valid_from <= ?) AND (valid_until IS NULL OR ? < valid_until)"
_MAX_K = 10_000
# column types of a search result, so that an empty result has the same schema as a full one
_HIT_TYPES = {
    "rank": pl.Int32, "id": pl.String, "content": pl.String, "score": pl.Float64,
    "similarity": pl.Float64, "importance": pl.Float64, "strength": pl.Float64, "recency": pl.Float64,
    "keyword": pl.Float64, "key": pl.String, "layer": pl.String, "kind": pl.String,
    "tags": pl.List(pl.String), "created_at": pl.Int64, "last_access_at": pl.Int64, "access_count": pl.Int64,
}  # fmt: skip
_OPEN_FILES: set[str | None] = set()  # database files open in this process
_OPEN_LOCK = threading.Lock()


def _utcnow() -> datetime:
    return datetime.now(UTC)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_US_PER_HOUR = 3.6e9
_OPEN_START, _OPEN_END = np.iinfo(np.int64).min, np.iinfo(np.int64).max


def _us(t: datetime) -> int:
    """Datetime -> exact integer microseconds since the Unix epoch (the index's time unit)."""
    return (t - _EPOCH) // _US


def _names(field: str, value: str | Sequence[str] | None, choices: tuple[str, ...]) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, (str, list, tuple, set, frozenset)):
        raise ValidationError(field, f"must be a str or a list of str, got {type(value).__name__}")
    values = [value] if isinstance(value, str) else list(value)
    return [check_choice(field, v, choices) for v in values]


def _union_validity(rows: Sequence[dict[str, Any]]) -> dict[str, datetime | None]:
    """A merged memory holds whenever one of its members held: the earliest start, the latest end
    (an open bound wins)."""
    starts, ends = [r["valid_from"] for r in rows], [r["valid_until"] for r in rows]
    return {
        "valid_from": None if None in starts else min(starts),
        "valid_until": None if None in ends else max(ends),
    }


def _seq(field: str, value: Any) -> list[Any]:
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise ValidationError(field, f"must be a list of str, got {type(value).__name__}")
    return list(value)


class MemoryStore(GuardedStore):
    """Agent memories in one DuckDB database (a file, or ``":memory:"``).

    Parameters
    ----------
    path : str
        Database file; ``":memory:"`` (default) keeps everything in RAM.
    embedder : Embedder, optional
        Defaults to :class:`~memkit.embed.HashEmbedder` (offline, deterministic). A file remembers
        which embedder wrote it; reopening it with another raises ValidationError.
    conflict_policy : {"flag", "supersede", "strict"}
        What a keyed write with a different value does (see :mod:`memkit.conflicts`).
    decay : DecayParams
        Recency time scale, retrieval floor and reinforcement step.
    keyword : KeywordParams
        BM25 constants of the keyword score.
    read_only : bool
        Open an existing file read-only: reads and searches work (without reinforcement or audit
        events, which would be writes); every write raises MemkitError. DuckDB lets several
        read-only processes share a file, but not while a read-write process holds it
        (:class:`~memkit.errors.StoreLocked`).
    guard : GuardParams
        The write-time guard (:mod:`memkit.guard`): PII redacted, secrets refused
        (:class:`~memkit.errors.WriteRefused`), suspected injections quarantined until
        :meth:`approve`. ``GuardParams(enabled=False)`` turns it off.
    """

    def __init__(
        self,
        path: str = ":memory:",
        *,
        embedder: Embedder | None = None,
        conflict_policy: str = "flag",
        decay: DecayParams = DecayParams(),
        keyword: KeywordParams = KeywordParams(),
        read_only: bool = False,
        guard: GuardParams = GuardParams(),
    ) -> None:
        if not isinstance(path, str) or not path:
            raise ValidationError("path", f"must be a non-empty str, got {path!r}")
        if not isinstance(read_only, bool) or (read_only and path == ":memory:"):
            raise ValidationError("read_only", "must be a bool, and False for ':memory:'")
        self.read_only = read_only
        self.embedder: Embedder = embedder if embedder is not None else HashEmbedder()
        if not isinstance(self.embedder, Embedder):
            raise ValidationError("embedder", "must have name, dim and embed(texts)")
        check_name("embedder.name", self.embedder.name)
        dim = self.embedder.dim
        if isinstance(dim, bool) or not isinstance(dim, int) or not 1 <= dim <= 65536:
            raise ValidationError("embedder.dim", f"must be an int in [1, 65536], got {dim!r}")
        self.conflict_policy = check_choice("conflict_policy", conflict_policy, POLICIES)
        if not isinstance(decay, DecayParams):
            raise ValidationError("decay", "must be a DecayParams")
        if not isinstance(keyword, KeywordParams):
            raise ValidationError("keyword", "must be a KeywordParams")
        self.decay, self.keyword, self.path = decay, keyword, path
        if not isinstance(guard, GuardParams):
            raise ValidationError("guard", f"must be a memkit.GuardParams, got {type(guard).__name__}")
        self.guard = guard
        self._lock = threading.RLock()
        self._con: duckdb.DuckDBPyConnection | None = None
        self._file = None if path == ":memory:" else str(Path(path).resolve())
        with _OPEN_LOCK:
            if self._file in _OPEN_FILES:
                # DuckDB would hand a second connection the same database, but this store's search
                # index would not see the other store's writes: one store per file per process.
                raise StoreLocked(f"{path} is already open in this process; close the other MemoryStore")
            try:
                self._con = duckdb.connect(path, read_only=read_only, config=_SETTINGS)
            except duckdb.Error as e:
                if isinstance(e, duckdb.IOException) and "lock" in str(e).lower():
                    raise StoreLocked(
                        f"{path} is locked by another process (DuckDB allows one read-write process, or"
                        f" several read-only ones, per file): {e}"
                    ) from None
                raise ValidationError("path", f"cannot open {path!r} as a DuckDB database: {e}") from None
            if self._file:
                _OPEN_FILES.add(self._file)
        try:
            self._run("SET TimeZone = 'UTC'")
            self._run("SET lock_configuration = true")
            self._migrate()
            self._embed_query = lru_cache(maxsize=256)(self._embed_query_uncached)
            self._load_index()
        except duckdb.Error as e:  # e.g. a truncated file whose header is intact
            self.close()
            raise ValidationError("path", f"{path} is not a readable memkit database ({e})") from None
        except BaseException:
            self.close()
            raise

    # ----------------------------------------------------------------------------- plumbing
    @property
    def _db(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            raise MemkitError(f"the store {self.path!r} is closed")
        return self._con

    def _run(self, query: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Execute one statement and fetch its whole result (a half-fetched result blocks the
        connection in DuckDB 2.0)."""
        return self._db.execute(query, list(params)).fetchall()

    def _sql(self, query: str, params: Sequence[Any] = ()) -> pl.DataFrame:
        """Run a read query -> polars frame (fully fetched)."""
        return pl.from_arrow(self._db.sql(query, params=list(params)).to_arrow_table())

    def _tx(self, fn: Callable[[], T], retries: int = 5) -> T:
        """Run ``fn`` in one transaction; roll back on any error, retry write-write conflicts."""
        if self.read_only:
            raise MemkitError(f"the store {self.path!r} is open read-only; reopen it without read_only")
        with self._lock:
            for attempt in range(retries):
                self._run("BEGIN TRANSACTION")
                try:
                    out = fn()
                    self._run("COMMIT")
                    return out
                except duckdb.TransactionException as e:
                    self._run("ROLLBACK")
                    if "conflict" not in str(e).lower() or attempt == retries - 1:
                        raise
                    time.sleep(0.01 * 2**attempt)  # subtle: only real lock contention sleeps
                except BaseException:
                    self._run("ROLLBACK")
                    raise
        raise AssertionError("unreachable")

    def _log(self, fn: Callable[[], None]) -> None:
        """Audit a read (in a transaction) unless the store is read-only: reads never fail for it."""
        if not self.read_only:
            self._tx(fn)

    def _event(
        self,
        ts: datetime,
        op: str,
        namespace: str | None,
        memory_id: str | None,
        requester: str | None,
        **detail: Any,
    ) -> None:
        self._run(
            "INSERT INTO events (ts, namespace, op, memory_id, requester, detail) VALUES (?, ?, ?, ?, ?, ?)",
            [
                ts,
                namespace,
                op,
                memory_id,
                requester,
                json.dumps(detail, ensure_ascii=False) if detail else None,
            ],
        )

    def _migrate(self) -> None:
        has_meta = self._run("SELECT count(*) FROM information_schema.tables WHERE table_name = 'meta'")[0][0]
        meta = dict(self._run("SELECT name, value FROM meta")) if has_meta else {}
        version = int(meta.get("schema_version", 0))
        if meta and (meta.get("embedder"), int(meta["dim"])) != (self.embedder.name, self.embedder.dim):
            raise ValidationError(
                "embedder",
                f"{self.path} was written with {meta['embedder']} (dim {meta['dim']}), "
                f"not {self.embedder.name} (dim {self.embedder.dim})",
            )
        if self.read_only and version < len(MIGRATIONS):
            raise MemkitError(
                f"{self.path} has schema version {version}, not {len(MIGRATIONS)}: open it once without"
                " read_only to create or upgrade it"
            )
        for i in range(version, len(MIGRATIONS)):

            def step(i: int = i) -> None:
                MIGRATIONS[i](self._run, self.embedder.dim)
                for name, value in (
                    ("schema_version", i + 1),
                    ("embedder", self.embedder.name),
                    ("dim", self.embedder.dim),
                ):
                    self._run("INSERT OR REPLACE INTO meta VALUES (?, ?)", [name, str(value)])

            self._tx(step)
        if version < len(MIGRATIONS) and self.path != ":memory:":
            self._run("CHECKPOINT")

    def _load_index(self) -> None:
        """(Re)build the search index from DuckDB: columns via Arrow, embeddings flattened. The new
        index replaces the old one only once it is complete."""
        index = SearchIndex(self.embedder.dim, floor=self.decay.min_strength)
        table = self._db.sql(
            "SELECT id, namespace, key, content, tags, owner, created_by, status, access, layer, kind,"
            " importance, half_life_hours AS half_life_h, access_count, epoch_us(created_at) AS created_us,"
            " epoch_us(last_access_at) AS last_access_us, epoch_us(valid_from) AS valid_from_us,"
            " epoch_us(valid_until) AS valid_until_us, embedding FROM memories"
        ).to_arrow_table()
        if table.num_rows == 0:
            self._index = index
            return
        emb_col = table.column("embedding").combine_chunks()
        emb = emb_col.flatten().to_numpy().reshape(table.num_rows, self.embedder.dim)  # (n, dim)
        df = pl.from_arrow(table.drop(["embedding"])).with_columns(
            pl.col("valid_from_us").fill_null(_OPEN_START), pl.col("valid_until_us").fill_null(_OPEN_END)
        )
        index.append(
            {
                c: df[c].to_list() if df[c].dtype in (pl.String, pl.List) else df[c].to_numpy()
                for c in df.columns
            },
            emb,
        )
        self._index = index

    def _embed(self, texts: Sequence[str]) -> tuple[np.ndarray, list[str], dict[str, np.ndarray]]:
        """Embeddings of ``texts`` -> ``(matrix (n, dim), hashes, new cache entries)``.

        Cached vectors (by embedder name and content hash) are reused; the rest are computed once
        per distinct text and validated. Nothing is written here: the caller inserts the new cache
        entries in its transaction.
        """
        hashes = [content_hash(t) for t in texts]
        distinct = list(dict.fromkeys(hashes))
        cached = self._sql(
            "SELECT content_hash, embedding FROM embed_cache WHERE embedder = ?"
            " AND content_hash IN (SELECT unnest(?::VARCHAR[]))",
            [self.embedder.name, distinct],
        )
        vectors: dict[str, np.ndarray] = dict(
            zip(cached["content_hash"].to_list(), cached["embedding"].to_numpy(), strict=True)
        )
        missing = [h for h in distinct if h not in vectors]
        new: dict[str, np.ndarray] = {}
        if missing:
            first = {h: t for h, t in zip(reversed(hashes), reversed(texts), strict=True)}
            new = dict(
                zip(
                    missing,
                    self._check_embeddings(self.embedder.embed([first[h] for h in missing]), len(missing)),
                    strict=True,
                )
            )
            vectors.update(new)
        return np.stack([vectors[h] for h in hashes]).astype(np.float32), hashes, new

    def _check_embeddings(self, x: Any, n: int, field: str = "embedding") -> np.ndarray:
        try:
            arr = np.asarray(x, dtype=np.float32)
        except (TypeError, ValueError):
            raise ValidationError(field, "must be an (n, dim) array of numbers") from None
        if arr.shape != (n, self.embedder.dim):
            raise ValidationError(field, f"expected shape ({n}, {self.embedder.dim}), got {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValidationError(field, "contains NaN or infinite values")
        return l2_normalize(arr)

    def _embed_query_uncached(self, text: str) -> np.ndarray:
        return self._check_embeddings(self.embedder.embed([text]), 1)[0]

    def _insert(
        self, cols: dict[str, list[Any]], emb: np.ndarray, hashes: list[str], new_cache: dict[str, np.ndarray]
    ) -> None:
        """Insert rows (inside a transaction) from one Arrow batch: memories and new cache entries."""
        dim = self.embedder.dim
        batch = pl.DataFrame(
            {"findings": [None] * len(hashes), **cols, "content_hash": hashes, "embedding": emb},
            schema_overrides={
                "findings": pl.String,
                "tags": pl.List(pl.String),
                "merged_from": pl.List(pl.String),
                "value": pl.String,
                "key": pl.String,
                "owner": pl.String,
                "created_by": pl.String,
                "supersedes": pl.String,
                "valid_from": pl.Datetime("us", "UTC"),
                "valid_until": pl.Datetime("us", "UTC"),
                "embedding": pl.Array(pl.Float32, dim),
            },
        )
        self._db.register("_batch", batch.to_arrow())
        try:
            self._run(
                f"INSERT INTO memories ({_COLUMNS}, content_hash, embedding)"
                f" SELECT {_COLUMNS}, content_hash, embedding FROM _batch"
            )
        finally:
            with suppress(duckdb.Error):  # an aborted transaction refuses this; the real error propagates
                self._db.unregister("_batch")
        if new_cache:
            cache = pl.DataFrame(
                {
                    "embedder": self.embedder.name,
                    "content_hash": list(new_cache),
                    "embedding": np.stack(list(new_cache.values())),
                },
                schema_overrides={"embedding": pl.Array(pl.Float32, dim)},
            )
            self._db.register("_cache", cache.to_arrow())
            try:
                self._run("INSERT OR IGNORE INTO embed_cache SELECT * FROM _cache")
            finally:
                with suppress(duckdb.Error):
                    self._db.unregister("_cache")

    def _index_append(self, cols: dict[str, list[Any]], emb: np.ndarray) -> None:
        def us(column: str, missing: int = 0) -> list[int]:
            return [missing if t is None else _us(t) for t in cols[column]]

        times = {
            "created_us": us("created_at"),
            "last_access_us": us("last_access_at"),
            "valid_from_us": us("valid_from", _OPEN_START),
            "valid_until_us": us("valid_until", _OPEN_END),
            "half_life_h": cols["half_life_hours"],
        }
        self._guard_index(lambda: self._index.append({**cols, **times}, emb))

    def _guard_index(self, fn: Callable[[], None]) -> None:
        """Apply a change to the derived index; if it fails, rebuild the index from DuckDB."""
        try:
            fn()
        except Exception:
            self._load_index()
            raise

    # ----------------------------------------------------------------------------- writes
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
        """Write one memory and return it (its ``status`` tells what the conflict policy decided).

        Unset fields get defaults: kind ``fact``, importance 0.5, layer by the admission rule
        (importance < 0.3 → ``short_term``; kind ``event`` → ``episodic``; else ``long_term``),
        half-life by layer, owner and creator = requester, access ``public``, created_at = now.
        A keyed write applies ``conflict_policy`` (default: the store's) to the key's versions.
        """
        namespace = check_name("namespace", namespace)
        requester = check_name("requester", requester, optional=True)
        now = check_time("now", now, optional=True) or _utcnow()
        policy = check_choice("conflict_policy", conflict_policy or self.conflict_policy, POLICIES)
        fields = dict(
            content=content,
            key=key,
            value=value,
            layer=layer,
            kind=kind,
            importance=importance,
            half_life_hours=half_life_hours,
            source=source,
            owner=owner,
            access=access,
            tags=tags,
            valid_from=valid_from,
            valid_until=valid_until,
            protected=protected,
            created_at=created_at,
        )
        cols = build_rows([{k: v for k, v in fields.items() if v is not None}], namespace, requester, now)
        with self._lock:
            self._screen(cols, namespace, requester, now)  # before embedding: redact, refuse, quarantine
            emb, hashes, new_cache = self._embed(cols["content"])
            self._near_lessons(cols, emb, namespace)
            plan = None
            if cols["key"][0] is not None:
                existing = self._sql(
                    "SELECT id, status, coalesce(CAST(value AS VARCHAR), content) AS value, version,"
                    # subtle: only an expired version leaves the slot; a scheduled one (valid_from
                    # later) already holds it, or two versions would both be current once it starts
                    " namespace, access, owner, created_by,"
                    " (valid_until IS NULL OR ? < valid_until) AS valid_now"
                    " FROM memories WHERE namespace = ? AND key = ?",
                    [now, namespace, cols["key"][0]],
                ).to_dicts()
                for row in existing:  # a non-public slot may only be rewritten by its owner or creator
                    if row["status"] == "active" and row["valid_now"] and row["access"] != "public":
                        self._check_modify(row, requester, now, "write a new version of")
                # a version that no longer holds is not the key's current value
                versions = [
                    (r["id"], r["status"] if r["valid_now"] else "out_of_validity", r["value"], r["version"])
                    for r in existing
                ]
                if cols["status"][0] == "quarantined":  # a suspect write changes no version until approved
                    cols["version"] = [max((v[3] for v in versions), default=0) + 1]
                else:
                    plan = plan_keyed_write(versions, cols["value"][0] or cols["content"][0], policy)
                    cols["status"], cols["version"] = [plan.status], [plan.version]
                    cols["supersedes"] = [plan.against if plan.op == "supersede" else None]
            mid = cols["id"][0]

            def write() -> None:
                self._insert(cols, emb, hashes, new_cache)
                self._event(
                    now,
                    "add",
                    namespace,
                    mid,
                    requester,
                    status=cols["status"][0],
                    key=cols["key"][0],
                    version=cols["version"][0],
                )
                self._log_quarantine(cols, now, requester)
                if plan is not None and plan.op == "conflict":
                    self._event(
                        now,
                        "conflict",
                        namespace,
                        mid,
                        requester,
                        key=cols["key"][0],
                        against=plan.against,
                        status="conflict",
                    )
                for old_id, status in plan.changes if plan else ():
                    self._set_status([old_id], status, now)
                    self._event(now, "supersede", namespace, old_id, requester, by=mid, status=status)

            self._tx(write)
            self._index_append(cols, emb)
            if plan is not None:
                for old_id, status in plan.changes:
                    self._index.set_status([old_id], status)
        return Memory.from_row({c: v[0] for c, v in cols.items()})

    def _set_status(self, ids: Sequence[str], status: str, now: datetime) -> None:
        self._run(
            "UPDATE memories SET status = ?, updated_at = ? WHERE id IN (SELECT unnest(?::VARCHAR[]))",
            [status, now, list(ids)],
        )

    def add_many(
        self,
        frame: pl.DataFrame,
        *,
        namespace: str,
        requester: str | None = None,
        now: datetime | None = None,
    ) -> pl.DataFrame:
        """Bulk-insert new memories from a polars frame in one transaction -> frame ``id, status``.

        Columns: ``content`` and any writable :class:`Memory` field (``key``, ``importance``,
        ``created_at``, ``tags``, ...), plus an optional ``embedding`` column (lists of ``dim``
        floats; normalized here) that skips the embedder. Keys must be new to the namespace and
        unique in the frame: updates of an existing key go through :meth:`add`, which applies the
        conflict policy.

        The guard (``MemoryStore(guard=...)``) screens every row: PII is redacted and suspected
        injections are ``quarantined`` row by row, but one row holding a secret refuses the whole
        batch (:class:`~memkit.errors.WriteRefused`, whose ``findings`` name the rows): nothing is
        written, so the caller can drop those rows and retry.
        """
        if not isinstance(frame, pl.DataFrame):
            raise ValidationError("frame", f"must be a polars DataFrame, got {type(frame).__name__}")
        namespace = check_name("namespace", namespace)
        requester = check_name("requester", requester, optional=True)
        now = check_time("now", now, optional=True) or _utcnow()
        given = frame["embedding"] if "embedding" in frame.columns else None
        records = frame.drop("embedding", strict=False).to_dicts()
        cols = build_rows(records, namespace, requester, now)
        keys = [k for k in cols["key"] if k is not None]
        if len(set(keys)) != len(keys):
            raise ValidationError("key", "repeats within the frame; add versions one by one with add()")
        with self._lock:
            if given is not None:
                if given.null_count():
                    raise ValidationError("embedding", "has missing rows")
                arr = given.to_numpy()  # pl.Array -> (n, dim) without Python lists
                emb = self._check_embeddings(given.to_list() if arr.dtype == object else arr, len(frame))
            if keys:
                taken = self._run(
                    "SELECT key FROM memories WHERE namespace = ? AND key IN (SELECT unnest(?::VARCHAR[]))"
                    " LIMIT 1",
                    [namespace, keys],
                )
                if taken:
                    raise ValidationError(
                        "key", f"{taken[0][0]!r} already exists in {namespace!r}; use add()"
                    )
            # the guard, per row: PII redacted, injections quarantined; one secret refuses the batch
            self._screen(cols, namespace, requester, now)
            if given is not None:
                hashes, new_cache = [content_hash(t) for t in cols["content"]], {}
            else:
                emb, hashes, new_cache = self._embed(cols["content"])
            self._near_lessons(cols, emb, namespace)

            def write() -> None:
                self._insert(cols, emb, hashes, new_cache)
                self._run(
                    "INSERT INTO events (ts, namespace, op, memory_id, requester, detail)"
                    " SELECT ?, ?, 'add', id, ?, json_object('status', st, 'bulk', true)"
                    " FROM (SELECT unnest(?::VARCHAR[]) AS id, unnest(?::VARCHAR[]) AS st)",
                    [now, namespace, requester, cols["id"], cols["status"]],
                )
                self._log_quarantine(cols, now, requester)

            self._tx(write)
            self._index_append(cols, emb)
        return pl.DataFrame({"id": cols["id"], "status": cols["status"]})

    # ----------------------------------------------------------------------------- search
    def search(
        self,
        query: str,
        *,
        namespace: str,
        requester: str | None = None,
        k: int = 5,
        weights: Weights = Weights(),
        now: datetime | None = None,
        min_strength: float | None = None,
        layer: str | Sequence[str] | None = None,
        kind: str | Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        reinforce: bool = True,
        guard: bool = False,
    ) -> pl.DataFrame:
        """Rank the namespace's memories for ``query`` -> the top ``k``, best first.

        Candidates are the ``active`` memories of ``namespace`` that ``requester`` may read, valid at
        ``now``, matching the ``layer``/``kind`` filters and any of ``tags``, whose strength is at
        least ``min_strength`` (default ``DecayParams.min_strength``). Each is scored
        ``hybrid(similarity, importance, recency [, keyword])`` and the frame keeps every component:
        ``rank, id, content, score, similarity, importance, strength, recency [, keyword], key, layer,
        kind, tags, created_at, last_access_at, access_count``.

        Returned memories are reinforced (last access = now, access count + 1, importance +
        ``DecayParams.reinforce_step``) in one batched statement, unless ``reinforce=False``.

        ``guard=True`` is the read-time defence (:func:`memkit.guard.consistency`): hits within
        ``GuardParams.lesson_similarity`` of a lesson are dropped (so fewer than ``k`` may come back)
        and the rest gain ``lesson_similarity, consensus, consensus_z, outlier`` columns.
        """
        query = check_text("query", query)
        namespace = check_name("namespace", namespace)
        requester = check_name("requester", requester, optional=True)
        now = check_time("now", now, optional=True) or _utcnow()
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= _MAX_K:
            raise ValidationError("k", f"must be an int in [1, {_MAX_K}], got {k!r}")
        k = int(k)
        if not isinstance(reinforce, bool):
            raise ValidationError("reinforce", f"must be a bool, got {type(reinforce).__name__}")
        if not isinstance(guard, bool):
            raise ValidationError("guard", f"must be a bool, got {type(guard).__name__}")
        if not isinstance(weights, Weights):
            raise ValidationError("weights", f"must be a memkit.Weights, got {type(weights).__name__}")
        floor = (
            self.decay.min_strength
            if min_strength is None
            else check_number("min_strength", min_strength, lo=0.0, hi=1.0)
        )
        layers, kinds = _names("layer", layer, LAYERS), _names("kind", kind, KINDS)
        tag_list = (
            None
            if tags is None
            else [check_name("tags", t) for t in ([tags] if isinstance(tags, str) else _seq("tags", tags))]
        )
        q = self._embed_query(query)  # (dim,)
        now_us = _us(now)
        with self._lock:
            ix = self._index
            rows, comp = ix.rank(
                q, query, namespace, requester, now_us, floor=floor, weights=weights, k=k,
                decay=self.decay, keyword=self.keyword, layer=layers, kind=kinds, tags=tag_list,
            )  # fmt: skip
            out = {
                "rank": np.arange(1, len(rows) + 1, dtype=np.int32),
                "id": ix.ids[rows].tolist(),
                "content": ix.content[rows].tolist(),
                **comp,
            }
            out.update(
                key=ix.key[rows].tolist(),
                layer=[LAYERS[i] for i in ix.layer[rows]],
                kind=[KINDS[i] for i in ix.kind[rows]],
                tags=[list(t) for t in ix.tags[rows]],
                created_at=ix.created_us[rows],
                last_access_at=ix.last_access_us[rows],
                access_count=ix.access_count[rows],
            )
            hits = pl.DataFrame(out, schema_overrides={c: t for c, t in _HIT_TYPES.items() if c in out})
            hits = hits.with_columns(
                pl.from_epoch("created_at", time_unit="us").dt.replace_time_zone("UTC"),
                pl.from_epoch("last_access_at", time_unit="us").dt.replace_time_zone("UTC"),
            )
            if guard:
                hits, rows = self._guard_hits(hits, rows, namespace, query)
            ids = hits["id"].to_list()

            def log() -> None:
                if reinforce and ids:
                    self._run(
                        "UPDATE memories SET last_access_at = greatest(last_access_at, ?),"
                        " access_count = access_count + 1,"
                        " importance = least(1.0, importance + ?) WHERE id IN (SELECT unnest(?::VARCHAR[]))",
                        [now, self.decay.reinforce_step, ids],
                    )
                self._event(now, "search", namespace, None, requester, query=query, k=k, ids=ids)

            self._log(log)
            if reinforce and ids and not self.read_only:
                self._guard_index(lambda: ix.touch(rows, now_us, self.decay.reinforce_step))
        return hits

    # ----------------------------------------------------------------------------- reads
    def _row(self, memory_id: str) -> dict[str, Any] | None:
        rows = self._sql(f"SELECT {_COLUMNS} FROM memories WHERE id = ?", [memory_id]).to_dicts()
        return rows[0] if rows else None

    def _deny(self, row: dict[str, Any], requester: str | None, now: datetime, op: str) -> None:
        """Audit a refused operation on ``row`` and raise AccessDenied."""
        self._log(
            lambda: self._event(
                now, "deny", row["namespace"], row["id"], requester, attempted=op, access=row["access"]
            )
        )
        raise AccessDenied(f"{requester!r} may not {op} memory {row['id']} (access {row['access']!r})")

    def _check_read(self, row: dict[str, Any], requester: str | None, now: datetime, op: str) -> None:
        if not acl.can_read(row["access"], row["owner"], row["created_by"], requester):
            self._deny(row, requester, now, op)

    def _check_modify(self, row: dict[str, Any], requester: str | None, now: datetime, op: str) -> None:
        if not acl.can_modify(row["owner"], row["created_by"], requester):
            self._deny(row, requester, now, op)

    def get(self, memory_id: str, *, requester: str | None = None, now: datetime | None = None) -> Memory:
        """The memory with this id, in whatever status; NotFound or AccessDenied otherwise."""
        memory_id = check_name("memory_id", memory_id)
        requester = check_name("requester", requester, optional=True)
        now = check_time("now", now, optional=True) or _utcnow()
        with self._lock:
            row = self._row(memory_id)
            if row is None:
                raise NotFound(f"no memory with id {memory_id!r}")
            self._check_read(row, requester, now, "read")
            self._log(lambda: self._event(now, "read", row["namespace"], memory_id, requester))
        return Memory.from_row(row)

    def read(
        self, key: str, *, namespace: str, requester: str | None = None, now: datetime | None = None
    ) -> Memory | None:
        """The current version of ``key``: the newest ``active`` one valid at ``now``, or None.

        A pending ``conflict`` version is not current until :meth:`resolve` makes it so.
        """
        key = check_name("key", key)
        namespace = check_name("namespace", namespace)
        requester = check_name("requester", requester, optional=True)
        now = check_time("now", now, optional=True) or _utcnow()
        with self._lock:
            rows = self._sql(
                f"SELECT {_COLUMNS} FROM memories WHERE namespace = ? AND key = ? AND status = 'active'"
                f" AND {_VALID_AT} AND created_at <= ? ORDER BY version DESC LIMIT 1",
                [namespace, key, now, now, now],
            ).to_dicts()
            if not rows:
                return None
            self._check_read(rows[0], requester, now, "read")
            self._log(lambda: self._event(now, "read", namespace, rows[0]["id"], requester, key=key))
        return Memory.from_row(rows[0])

    def versions(self, key: str, *, namespace: str, requester: str | None = None) -> pl.DataFrame:
        """Every version of ``key`` (any status, any validity), oldest first, that requester may read."""
        key = check_name("key", key)
        namespace = check_name("namespace", namespace)
        requester = check_name("requester", requester, optional=True)
        with self._lock:
            return self._sql(
                f"SELECT {_COLUMNS} FROM memories WHERE namespace = ? AND key = ? AND {acl.SQL_READABLE}"
                " ORDER BY version, created_at",
                [namespace, key, requester, requester, requester],
            )

    def frame(
        self,
        namespace: str | None = None,
        *,
        as_of: datetime | None = None,
        include_embedding: bool = False,
    ) -> pl.DataFrame:
        """All memories (of one namespace, or all), oldest first, as a polars frame.

        ``as_of=t`` shows what the store believed at ``t``: the memories written by then (by the
        ``now`` of their write, whatever their ``created_at``), each with the status it had then,
        replayed from the audit log. Deleted memories are gone for good: erasure is not undone by
        time travel; access counts and importance are today's.
        """
        namespace = check_name("namespace", namespace, optional=True)
        as_of = check_time("as_of", as_of, optional=True)
        cols = _COLUMNS + (", embedding" if include_embedding else "")
        with self._lock:
            if as_of is None:
                return self._sql(
                    f"SELECT {cols} FROM memories WHERE (? IS NULL OR namespace = ?) ORDER BY created_at, id",
                    [namespace, namespace],
                )
            # every write logs the status it sets, so the last such event by `t` is the status then,
            # and a memory with no event by `t` had not been written yet
            return self._sql(
                f"""SELECT * REPLACE (s.status_then AS status) FROM
                    (SELECT {cols} FROM memories WHERE (? IS NULL OR namespace = ?)) m
                    JOIN (SELECT memory_id, arg_max(detail->>'status', seq) AS status_then
                          FROM events WHERE ts <= ? AND detail->>'status' IS NOT NULL
                          GROUP BY memory_id) s ON s.memory_id = m.id
                    ORDER BY created_at, id""",
                [namespace, namespace, as_of],
            ).drop("memory_id", "status_then", strict=False)

    def audit(self, namespace: str | None = None, *, op: str | None = None) -> pl.DataFrame:
        """The audit log (``seq, ts, namespace, op, memory_id, requester, detail``), oldest first."""
        namespace = check_name("namespace", namespace, optional=True)
        op = None if op is None else check_choice("op", op, OPS)
        with self._lock:
            return self._sql(
                "SELECT seq, ts, namespace, op, memory_id, requester, CAST(detail AS VARCHAR) AS detail"
                " FROM events WHERE (? IS NULL OR namespace = ?) AND (? IS NULL OR op = ?) ORDER BY seq",
                [namespace, namespace, op, op],
            )

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
        :class:`memkit.agent.MemoryAgent` to answer "which memory did you base this on?")."""
        namespace = check_name("namespace", namespace)
        requester = check_name("requester", requester, optional=True)
        now = check_time("now", now, optional=True) or _utcnow()
        ids = [check_name("ids", i) for i in _seq("ids", ids)]
        try:
            json.dumps(detail, ensure_ascii=False)
        except (TypeError, ValueError) as e:
            raise ValidationError("detail", f"must be JSON-serializable: {e}") from None
        self._tx(lambda: self._event(now, "context", namespace, None, requester, ids=ids, **detail))

    def analyze(
        self, namespace: str | None = None, *, now: datetime | None = None, stale_days: float = 90.0
    ) -> pl.DataFrame:
        """Lint the memories (:mod:`memkit.analyze`) -> findings ``code, severity, namespace,
        memory_id, key, message``, most severe first. Reads only; changes nothing."""
        namespace = check_name("namespace", namespace, optional=True)
        now = check_time("now", now, optional=True) or _utcnow()
        stale_days = check_number("stale_days", stale_days, lo=0.0)
        with self._lock:
            frame = self.frame(namespace, include_embedding=True)
            merges = self._merge_plan(frame, MergeParams())
            return lint(
                frame.drop("embedding"), now, min_strength=self.decay.min_strength, stale_days=stale_days,
                merge_plan=merges,
            )  # fmt: skip

    def count(self, namespace: str | None = None) -> int:
        """Number of stored memories (all statuses)."""
        namespace = check_name("namespace", namespace, optional=True)
        with self._lock:
            return self._run(
                "SELECT count(*) FROM memories WHERE (? IS NULL OR namespace = ?)", [namespace, namespace]
            )[0][0]

    # ----------------------------------------------------------------------------- portable format
    def _memory_columns(self) -> list[portable.Column]:
        """The ``memories`` table's columns as it is now (later migrations included), no embedding."""
        rows = self._run(
            "SELECT column_name, data_type, is_nullable = 'YES' FROM information_schema.columns"
            " WHERE table_name = 'memories' AND column_name <> 'embedding' ORDER BY ordinal_position"
        )
        return [portable.Column(*r) for r in rows]

    def _embedding_matrix(self, where: str, params: Sequence[Any]) -> np.ndarray:
        table = self._db.sql(
            f"SELECT embedding FROM memories WHERE {where}", params=list(params)
        ).to_arrow_table()
        flat = table.column("embedding").combine_chunks().flatten().to_numpy()
        return flat.reshape(table.num_rows, self.embedder.dim)  # (n, dim)

    def export(
        self,
        path: str | Path,
        namespace: str | None = None,
        *,
        include_embeddings: bool = False,
        include_events: bool = False,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Write the memories of ``namespace`` (or all) to a portable JSONL file -> its header.

        Every column of the ``memories`` table is carried (see :mod:`memkit.portable`), plus the
        embeddings and each memory's audit events on request. Logs one ``export`` event.
        """
        namespace = check_name("namespace", namespace, optional=True)
        now = check_time("now", now, optional=True) or _utcnow()
        for name, flag in (("include_embeddings", include_embeddings), ("include_events", include_events)):
            if not isinstance(flag, bool):
                raise ValidationError(name, "must be a bool")
        if not isinstance(path, (str, Path)) or not str(path) or Path(path).is_dir():
            raise ValidationError("path", f"must be a file path, got {path!r}")
        # table order (as the search index holds it), so that ties rank the same after an import
        where, params = "(? IS NULL OR namespace = ?) ORDER BY rowid", [namespace, namespace]
        with self._lock:
            columns = self._memory_columns()
            names = ", ".join(f'"{c.name}"' for c in columns)
            frame = self._sql(f"SELECT {names} FROM memories WHERE {where}", params)
            emb = self._embedding_matrix(where, params) if include_embeddings else None
            events = None
            if include_events:
                events = self._sql(
                    "SELECT memory_id, ts, op, requester, CAST(detail AS VARCHAR) AS detail FROM events"
                    " WHERE memory_id IN (SELECT id FROM memories WHERE (? IS NULL OR namespace = ?))"
                    " ORDER BY seq",
                    params,
                )
            try:
                header = portable.write(
                    path, frame, columns, embedder=(self.embedder.name, self.embedder.dim), now=now,
                    namespace=namespace, embeddings=emb, events=events,
                )  # fmt: skip
            except OSError as e:
                raise ValidationError("path", f"cannot write {str(path)!r}: {e}") from None
            counts = header["counts"]
            detail = {"path": str(path), "embeddings": include_embeddings, **counts}
            self._log(lambda: self._event(now, "export", namespace, None, None, **detail))
        return header

    def import_(
        self,
        path: str | Path,
        *,
        on_conflict: str = "skip",
        namespace_map: dict[str, str] | None = None,
        requester: str | None = None,
        reembed: bool = False,
        now: datetime | None = None,
    ) -> pl.DataFrame:
        """Load a portable JSONL file, all or nothing -> one row per line: ``line, source_id, id,
        namespace, action`` (``added``, ``skipped`` or ``overwritten``).

        The whole file is validated first (FormatError names the line and field). ``on_conflict``
        says what an id already in the store does: ``skip`` (default), ``overwrite``, ``new_ids``
        (fresh ids for every line, lineage inside the file kept) or ``error``. ``namespace_map``
        renames namespaces (``{"old": "new"}``). A keyed live version may not land next to another
        live version of the key already stored. Embeddings are reused only when the file's embedder
        is this store's (name and dim) and ``reembed`` is False; otherwise they are recomputed.
        Rows, events (the file's, then one ``import`` each) commit in one transaction; the search
        index follows only after the commit.
        """
        on_conflict = check_choice("on_conflict", on_conflict, portable.ON_CONFLICT)
        nsmap = portable.check_namespace_map(namespace_map)
        requester = check_name("requester", requester, optional=True)
        now = check_time("now", now, optional=True) or _utcnow()
        if not isinstance(reembed, bool):
            raise ValidationError("reembed", "must be a bool")
        if not isinstance(path, (str, Path)):
            raise ValidationError("path", f"must be a file path, got {path!r}")
        with self._lock:
            columns = self._memory_columns()
            data = portable.read(path, columns)
            ids = data.columns["id"]
            existing = {r[0] for r in self._run(
                "SELECT id FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ids])}  # fmt: skip
            data, report = portable.plan_import(data, existing, on_conflict, nsmap, new_id)
            cols, n = data.columns, len(data.lines)
            replaced = [x for x in cols["id"] if x in existing] if on_conflict == "overwrite" else []
            if replaced and requester is not None:
                query = f"SELECT {_COLUMNS} FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[]))"
                for row in self._sql(query, [replaced]).to_dicts():
                    self._check_modify(row, requester, now, "overwrite")
            self._check_import_keys(data, replaced)
            same = (data.header["embedder"]["name"], data.header["embedder"]["dim"]) == (
                self.embedder.name, self.embedder.dim)  # fmt: skip
            new_cache: dict[str, np.ndarray] = {}
            if n and data.embeddings is not None and same and not reembed:
                emb = data.embeddings  # (n, dim), finite (portable.read checked)
                norms = np.linalg.norm(emb, axis=1)
                # subtle: re-normalizing a unit vector can move its last bits; keep stored ones exact
                unit = (np.abs(norms - 1.0) < 1e-5) | (norms == 0)
                emb = np.where(unit[:, None], emb, l2_normalize(emb)).astype(np.float32)
            elif n:
                emb, _, new_cache = self._embed(cols["content"])
            batch = portable.arrow_batch(
                cols, columns, emb if n else np.zeros((0, self.embedder.dim), np.float32)
            )
            names = ", ".join(f'"{c}"' for c in batch.column_names)

            def write() -> None:
                if not n:
                    return
                if replaced:
                    self._run("DELETE FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[]))", [replaced])
                self._db.register("_import", batch)
                try:
                    self._run(f"INSERT INTO memories ({names}) SELECT {names} FROM _import")
                finally:
                    with suppress(duckdb.Error):
                        self._db.unregister("_import")
                if new_cache:
                    self._insert_cache(new_cache)
                if data.events:
                    rows, ts, ops, reqs, details = map(list, zip(*data.events, strict=True))
                    self._run(
                        "INSERT INTO events (ts, namespace, op, memory_id, requester, detail)"
                        " SELECT unnest(?::TIMESTAMPTZ[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[]),"
                        " unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[])",
                        [ts, [cols["namespace"][r] for r in rows], ops, [cols["id"][r] for r in rows], reqs,
                         details],
                    )  # fmt: skip
                act = report.filter(pl.col("action") != "skipped")
                self._run(
                    "INSERT INTO events (ts, namespace, op, memory_id, requester, detail)"
                    " SELECT ?, unnest(?::VARCHAR[]), 'import', unnest(?::VARCHAR[]), ?,"
                    " json_object('status', unnest(?::VARCHAR[]), 'action', unnest(?::VARCHAR[]),"
                    " 'source_id', unnest(?::VARCHAR[]))",
                    [now, cols["namespace"], cols["id"], requester, cols["status"], act["action"].to_list(),
                     act["source_id"].to_list()],
                )  # fmt: skip

            self._tx(write)
            if n:
                if replaced:
                    self._guard_index(lambda: self._index.erase(replaced))
                self._index_append(cols, emb)
        return report

    def _insert_cache(self, new_cache: dict[str, np.ndarray]) -> None:
        cache = pl.DataFrame(
            {
                "embedder": self.embedder.name,
                "content_hash": list(new_cache),
                "embedding": np.stack(list(new_cache.values())),
            },
            schema_overrides={"embedding": pl.Array(pl.Float32, self.embedder.dim)},
        )
        self._db.register("_cache", cache.to_arrow())
        try:
            self._run("INSERT OR IGNORE INTO embed_cache SELECT * FROM _cache")
        finally:
            with suppress(duckdb.Error):
                self._db.unregister("_cache")

    def _check_import_keys(self, data: portable.Parsed, replaced: list[str]) -> None:
        """A live (active or conflict) keyed version may not join a stored live version of its key."""
        cols = data.columns
        live = [i for i, (k, s) in enumerate(zip(cols["key"], cols["status"], strict=True))
                if k is not None and s in ("active", "conflict")]  # fmt: skip
        if not live:
            return
        clash = self._run(
            "SELECT f.i, m.id FROM (SELECT unnest(?::INTEGER[]) AS i, unnest(?::VARCHAR[]) AS namespace,"
            " unnest(?::VARCHAR[]) AS key) f JOIN memories m USING (namespace, key)"
            " WHERE m.status IN ('active', 'conflict') AND m.id NOT IN (SELECT unnest(?::VARCHAR[]))"
            " ORDER BY f.i LIMIT 1",
            [live, [cols["namespace"][i] for i in live], [cols["key"][i] for i in live], replaced],
        )
        if clash:
            i, other = clash[0]
            raise ValidationError(
                f"line {data.lines[i]}: key",
                f"{cols['key'][i]!r} already has a live version ({other}) in namespace "
                f"{cols['namespace'][i]!r}; import into another namespace (namespace_map) or resolve first",
            )

    # ----------------------------------------------------------------------------- changes
    def resolve(
        self,
        key: str,
        *,
        namespace: str,
        keep: str,
        requester: str | None = None,
        now: datetime | None = None,
    ) -> Memory:
        """Settle a key: version ``keep`` becomes ``active``, every other live version ``superseded``."""
        key = check_name("key", key)
        namespace = check_name("namespace", namespace)
        keep = check_name("keep", keep)
        requester = check_name("requester", requester, optional=True)
        now = check_time("now", now, optional=True) or _utcnow()
        with self._lock:
            live = self._sql(
                f"SELECT {_COLUMNS} FROM memories WHERE namespace = ? AND key = ?"
                " AND status IN ('active', 'conflict')",
                [namespace, key],
            ).to_dicts()
            winner = next((r for r in live if r["id"] == keep), None)
            if winner is None:
                raise NotFound(f"{keep!r} is not a live (active or conflict) version of key {key!r}")
            self._check_modify(winner, requester, now, "resolve")
            losers = [r["id"] for r in live if r["id"] != keep]

            def write() -> None:
                self._set_status([keep], "active", now)
                self._event(now, "resolve", namespace, keep, requester, key=key, status="active", over=losers)
                if losers:
                    self._set_status(losers, "superseded", now)
                for lid in losers:
                    self._event(now, "supersede", namespace, lid, requester, by=keep, status="superseded")

            self._tx(write)

            def mirror() -> None:
                self._index.set_status([keep], "active")
                self._index.set_status(losers, "superseded")

            self._guard_index(mirror)
        return Memory.from_row({**winner, "status": "active", "updated_at": now})

    def delete(self, memory_id: str, *, requester: str | None = None, now: datetime | None = None) -> None:
        """Erase a memory (user-initiated): its row, content and embedding are removed for good.

        Only the operator (``requester=None``), the owner or the creator may delete. The audit log
        keeps a ``delete`` event with the id, key and version but never the content. Older versions
        of the key are not revived.
        """
        memory_id = check_name("memory_id", memory_id)
        requester = check_name("requester", requester, optional=True)
        now = check_time("now", now, optional=True) or _utcnow()
        with self._lock:
            row = self._row(memory_id)
            if row is None:
                raise NotFound(f"no memory with id {memory_id!r}")
            self._check_modify(row, requester, now, "delete")

            detail = {"key": row["key"], "version": row["version"], "status_before": row["status"]}
            self._tx(lambda: self._erase([memory_id], "delete", now, requester, [detail]))
            self._guard_index(lambda: self._index.erase([memory_id]))

    def _erase(
        self, ids: list[str], op: str, now: datetime, requester: str | None, details: list[dict[str, Any]]
    ) -> None:
        """Delete rows for good (inside a transaction) and log one ``op`` event each, never content.

        Cached embeddings of the erased texts go too, unless another memory still has the same text:
        a cached vector would let someone confirm a guess of what was erased.
        """
        self._run(
            "CREATE OR REPLACE TEMP TABLE _gone AS SELECT id, namespace, content_hash FROM memories"
            " WHERE id IN (SELECT unnest(?::VARCHAR[]))",
            [ids],
        )
        self._run("DELETE FROM memories WHERE id IN (SELECT id FROM _gone)")
        self._run(
            "DELETE FROM embed_cache WHERE content_hash IN (SELECT content_hash FROM _gone)"
            " AND content_hash NOT IN (SELECT content_hash FROM memories)"
        )
        self._run(
            "INSERT INTO events (ts, namespace, op, memory_id, requester, detail)"
            " SELECT ?, g.namespace, ?, g.id, ?, d.detail FROM _gone g JOIN"
            " (SELECT unnest(?::VARCHAR[]) AS id, unnest(?::VARCHAR[]) AS detail) d USING (id)",
            [now, op, requester, ids, [json.dumps(d, ensure_ascii=False, default=str) for d in details]],
        )
        self._run("DROP TABLE _gone")

    def _merge_plan(self, frame: pl.DataFrame, params: MergeParams) -> pl.DataFrame:
        """plan_merges within each access group (same access, owner and creator), so a merge never
        moves a private or protected text into a memory other requesters can read."""
        parts = []
        for _, part in frame.group_by("access", "owner", "created_by", maintain_order=True):
            emb = part["embedding"].to_numpy()
            if emb.dtype == object:
                emb = np.stack(list(emb))
            plan = plan_merges(part.drop("embedding"), emb.astype(np.float32), params)
            parts.append(plan)
        if not parts:
            return pl.DataFrame(schema=MERGE_SCHEMA)
        plan = pl.concat(parts)
        return plan.with_columns(cluster=pl.int_range(pl.len()).cast(plan.schema["cluster"]))

    def consolidate(
        self,
        namespace: str | None = None,
        *,
        threshold: float = 0.85,
        now: datetime | None = None,
        dry_run: bool = False,
        params: MergeParams | None = None,
        requester: str | None = None,
    ) -> pl.DataFrame:
        """Merge near-duplicate memories (:mod:`memkit.consolidate`) -> the plan, one row per cluster.

        Clusters form within one namespace, layer, key-or-no-key and access group (same access,
        owner and creator). ``dry_run=True`` returns the plan only. Applying it writes one merged
        memory per cluster (the merged content, importance = max, created_at = min, last_access_at =
        max, access_count = sum, ``merged_from`` = members, the survivor's embedding) and retires the
        members as ``superseded``, with ``merge`` and ``supersede`` events, in one transaction. The
        plan gains a ``merged_id`` column. A second run merges nothing.
        """
        namespace = check_name("namespace", namespace, optional=True)
        requester = check_name("requester", requester, optional=True)
        now = check_time("now", now, optional=True) or _utcnow()
        if params is None:
            params = MergeParams(threshold=threshold)
        if not isinstance(params, MergeParams):
            raise ValidationError("params", f"must be a memkit.MergeParams, got {type(params).__name__}")
        if not isinstance(dry_run, bool):
            raise ValidationError("dry_run", "must be a bool")
        with self._lock:
            frame = self.frame(namespace, include_embedding=True)
            if requester is not None:  # a non-operator merges only what it may change
                frame = frame.filter((pl.col("owner") == requester) | (pl.col("created_by") == requester))
            # only memories that hold at `now` merge: an expired one is forget's business, and as a
            # survivor it would hand its end of validity to the merged memory, hiding the others
            frame = frame.filter(
                (pl.col("valid_from").is_null() | (pl.col("valid_from") <= now))
                & (pl.col("valid_until").is_null() | (pl.col("valid_until") > now))
            )
            plan = self._merge_plan(frame, params)
            if dry_run or plan.is_empty():
                return plan.with_columns(merged_id=pl.lit(None, pl.String))
            members_all = plan["members"].explode()
            by_id = {
                r["id"]: r
                for r in frame.drop("embedding").filter(pl.col("id").is_in(members_all.implode())).to_dicts()
            }
            records, versions, namespaces = [], [], []
            for c in plan.to_dicts():  # one record per cluster (a handful), not per memory
                s = by_id[c["survivor"]]
                records.append({
                    "content": c["content"], "key": s["key"],
                    "value": json.loads(s["value"]) if s["value"] else None,
                    "layer": s["layer"], "kind": s["kind"], "importance": c["importance"],
                    "half_life_hours": max(by_id[m]["half_life_hours"] for m in c["members"]),
                    "source": s["source"], "owner": s["owner"], "created_by": s["created_by"],
                    "access": s["access"], "protected": c["protected"],
                    "tags": list(dict.fromkeys(t for m in c["members"] for t in by_id[m]["tags"])),
                    **_union_validity([by_id[m] for m in c["members"]]),
                    "created_at": c["created_at"], "last_access_at": c["last_access_at"],
                    "access_count": c["access_count"],
                })  # fmt: skip
                versions.append(max(by_id[m]["version"] for m in c["members"]) + (s["key"] is not None))
                namespaces.append(s["namespace"])
            cols: dict[str, list[Any]] = {}
            for ns in dict.fromkeys(namespaces):  # build_rows is per namespace
                rows = build_rows(
                    [r for r, n in zip(records, namespaces, strict=True) if n == ns], ns, requester, now
                )
                for name, values in rows.items():
                    cols.setdefault(name, []).extend(values)
            order = [i for ns in dict.fromkeys(namespaces) for i, n in enumerate(namespaces) if n == ns]
            plan = plan[order]
            cols["version"] = [versions[i] for i in order]
            cols["merged_from"] = plan["members"].to_list()
            cols["supersedes"] = plan["survivor"].to_list()
            emb = self._index.emb[self._index.rows(plan["survivor"].to_list())].copy()
            hashes = [content_hash(t) for t in cols["content"]]
            members = [m for ms in cols["merged_from"] for m in ms]

            def write() -> None:
                self._insert(cols, emb, hashes, {})  # no cache entry: the vector is the survivor's
                for mid, ns, ms in zip(cols["id"], cols["namespace"], cols["merged_from"], strict=True):
                    self._event(now, "merge", ns, mid, requester, members=ms, status="active")
                self._set_status(members, "superseded", now)
                self._run(
                    "INSERT INTO events (ts, namespace, op, memory_id, requester, detail)"
                    ' SELECT ?, namespace, \'supersede\', id, ?, \'{"status": "superseded", "merged": true}\''
                    " FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[]))",
                    [now, requester, members],
                )

            self._tx(write)
            self._index_append(cols, emb)
            self._guard_index(lambda: self._index.set_status(members, "superseded"))
        return plan.with_columns(merged_id=pl.Series(cols["id"], dtype=pl.String))

    def forget(
        self,
        namespace: str | None = None,
        *,
        now: datetime | None = None,
        policy: ForgetParams = ForgetParams(),
        dry_run: bool = False,
        requester: str | None = None,
    ) -> pl.DataFrame:
        """Apply a forgetting policy (:mod:`memkit.forget`) to one namespace, or all -> the plan.

        The plan has one row per dropped memory: ``id, namespace, reason (expired | weak | capacity),
        strength, forget_cost, detail``. ``dry_run=True`` only returns it. Otherwise the memories are
        erased in one transaction (final, like :meth:`delete`), each with a ``forget`` event holding the
        reason but not the content. Protected memories and pending conflicts are never dropped.
        With a ``requester``, only the memories it owns or created are considered (capacity counts
        them alone); ``requester=None`` is the operator's maintenance over everything.
        """
        namespace = check_name("namespace", namespace, optional=True)
        requester = check_name("requester", requester, optional=True)
        now = check_time("now", now, optional=True) or _utcnow()
        if not isinstance(policy, ForgetParams):
            raise ValidationError("policy", f"must be a memkit.ForgetParams, got {type(policy).__name__}")
        if not isinstance(dry_run, bool):
            raise ValidationError("dry_run", "must be a bool")
        with self._lock:
            frame = self.frame(namespace)
            if requester is not None:  # a non-operator forgets only what it may erase
                frame = frame.filter((pl.col("owner") == requester) | (pl.col("created_by") == requester))
            plan = plan_forget(frame, policy, now)
            if dry_run or plan.is_empty():
                return plan
            ids = plan["id"].to_list()
            details = plan.select("reason", "strength", "forget_cost", "detail").to_dicts()
            self._tx(lambda: self._erase(ids, "forget", now, requester, details))
            self._guard_index(lambda: self._index.erase(ids))
        return plan

    # ----------------------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Close the database (idempotent). A file is checkpointed by DuckDB on close."""
        with self._lock:
            if self._con is not None:
                self._con.close()
                self._con = None
                with _OPEN_LOCK:
                    _OPEN_FILES.discard(self._file)

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MemoryStore({self.path!r}, embedder={self.embedder.name}, memories={self._index.n})"
