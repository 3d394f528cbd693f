"""Opening, migrating, compacting and closing the database file.

- **Open.** One store per file per process (a second :class:`~memkit.store.MemoryStore` on the same
  file raises :class:`~memkit.errors.StoreLocked`, as does a file another process holds). The
  connection is hardened (no file or network access from SQL, no extension loading, settings locked,
  UTC), then the numbered migrations of :data:`memkit.store.migrations.MIGRATIONS` run, each in a transaction.
- **Embedder check.** The file records which embedder wrote its vectors. Opened with another one
  (or an older version of the same), it opens *stale*: readable, exportable, not writable or
  searchable until :meth:`~memkit.store.reembed.ReembedMixin.reembed` migrates it.
- **Compaction.** Erased text must not linger in the file's free blocks: the file is rewritten
  after every erasure (:mod:`memkit.store.compaction`), and a file an erasure left due (a failed or
  interrupted compaction) is compacted when a store opens it writable and when it closes.
"""

from __future__ import annotations

import glob
import os
import unicodedata
import weakref
from functools import lru_cache
from pathlib import Path

import duckdb
import polars as pl

from ..embed import HashEmbedder, check_embedder
from ..errors import MemkitError, NotFound, ValidationError
from ..text import INVISIBLE
from .compaction import TABLES, CompactionMixin
from .connect import claim, connect, is_database, release
from .hnsw import HNSW_INDEX
from .identities import warn_older_identities
from .migrations import MIGRATIONS, log_patterns, log_spaces, patterns_mark, read_meta
from .names import SecretNames
from .pg_schema import NEVER_ANALYZED, lesson_order, prepare_server
from .postgres import PgConnection, is_url, redact_url
from .settable import refix

__all__ = ["NEEDS_UPGRADE", "FilesMixin", "check_embedder", "is_database"]

NEEDS_UPGRADE = "a read-only open cannot upgrade it"  # in the refusal of an older store's read-only open


@lru_cache(maxsize=1)
def _folds_to_marks() -> str:
    """The characters whose NFKC and case-folded form holds a combining accent (U+0300-036F), which
    the tokenizer keeps inside a word since 2026-12-05: ``İ`` (``i`` + dot), ``ǰ``, polytonic Greek
    ``ῆ`` (a scan of ~0.1 s, once per older store: see :meth:`FilesMixin._retokenize`)."""
    marks, chars = range(0x300, 0x370), (chr(c) for c in range(0xC0, 0x30000) if not 0xD800 <= c < 0xE000)
    return "".join(
        c for c in chars if any(ord(x) in marks for x in unicodedata.normalize("NFKC", c).casefold())
    )


class FilesMixin(CompactionMixin):
    """The file's life: open (with migrations), compaction (when: :mod:`~memkit.store.compaction`), close."""

    def _open(self, create: bool) -> None:
        """Connect, migrate, load the index; on any failure close again and raise."""
        self._con, self._depth, self._after, self._stale, self._lesson_cache = None, 0, [], None, {}
        self._pending, self._flushing, self._journal = [], False, None  # deferred reads (deferred.py)
        self._erased, self._denied = set(), []  # erased / refused in the open transaction (core, deferred)
        self._pg, self._seen_xid, self._due = None, "", False  # postgres.py, sync.py; compaction.py
        self._secret_names = SecretNames()  # names judged by the store's own secret rules (names.py)
        self._let_go = weakref.finalize(self, release, None)  # a file store's: _open_file
        if is_url(self.path):  # a server: no file, no lock; many processes may share it
            self._file, url = None, self.path
            refix(self, "path", redact_url(url))  # what reprs and errors show: never the password
            self._con = self._pg = PgConnection(url, self.read_only)
        else:
            self._open_file(create)
        try:
            self._migrate(create)
            self._lesson_order = lesson_order(self._pg)  # lessons: created_at, then write order
            if self._file or self._pg:  # (a store in memory is new: no older pseudonyms in it)
                warn_older_identities(self._run, self.path)
            if self.index == "hnsw" and not self.read_only:  # the server's index (hnsw.py), once;
                self._run("SET maintenance_work_mem = '1GB'")  # its build is ~10x slower when the
                self._run(HNSW_INDEX)  # graph does not fit (pgvector's advice; this session only)
                if self._run(NEVER_ANALYZED)[0][0]:  # e.g. a copy or a load just made: see _analyze
                    self._analyze()
            self._embed_query = lru_cache(maxsize=256)(self._embed_query_uncached)  # per store and embedder
            self._open_journal()  # replays the reads a crash left unwritten, before the index loads
            self._load_index()
            self._compact_if_due("on opening")  # an erasure's compaction that failed or never ran
            if self._con is None:  # (it could not reconnect: the warning said why)
                raise MemkitError(f"{self.path} could not be opened again after its compaction")
        except duckdb.Error as e:  # e.g. a truncated file whose header is intact
            self.close()
            raise ValidationError("path", f"{self.path} is not a readable memkit database ({e})") from None
        except BaseException:
            self.close()
            raise

    def _open_file(self, create: bool) -> None:
        """Connect to a DuckDB file (or memory): refused when missing without ``create``, or when
        this process already holds it."""
        self._file = None if self.path == ":memory:" else str(Path(self.path).resolve())
        if self._file and not create and not Path(self._file).is_file():
            raise NotFound(
                f"path {self.path!r} does not exist (create=True, or `memkit import --create`, makes a"
                " new store)"
            )
        if self._file:  # one store per file per process, and the file's lock for the store's life
            claim(self._file, self.read_only)
        # let go once: at close, or when a store dropped unclosed is collected (or the file would stay
        # held, by this process and from every other, until it exits)
        self._let_go = weakref.finalize(self, release, self._file)
        try:
            self._con = connect(self.path, self.read_only)
        except BaseException:
            self._let_go()
            raise

    def _migrate(self, create: bool) -> None:
        """Bring the file to the newest schema: run :data:`~memkit.store.migrations.MIGRATIONS`
        from the file's ``schema_version`` on, each in its own transaction, recording the version
        with it (and, in a new store, the embedder). Also decides whether the file is *stale*
        (written by another embedder): the migrations need only the file's dimension, so a stale
        file is upgraded too and stays stale. A read-only open cannot upgrade: it needs a current file.
        """
        if self._pg is not None:  # one process migrates a server at a time; the others wait here
            with prepare_server(self._pg, self.read_only, create):
                return self._migrate_schema(create)
        return self._migrate_schema(create)

    def _migrate_schema(self, create: bool) -> None:
        """:meth:`_migrate` itself (on a server, under its migration lock). Nothing is written
        before ``meta`` is read and checked (:func:`~memkit.store.migrations.read_meta`)."""
        meta = read_meta(self._run, self.path)
        version = meta.version
        if version == 0 and not create and (self._file or self._pg):  # an existing database, not a store
            raise ValidationError("path", f"{self.path} is not a memkit database (create=True makes it one)")
        if version and (meta.embedder, meta.dim) != (self.embedder.name, self.embedder.dim):
            self._stale = (meta.embedder, meta.dim)
        if version < len(MIGRATIONS) and self.read_only:
            raise MemkitError(
                f"{self.path} has schema version {version}, not {len(MIGRATIONS)}, and {NEEDS_UPGRADE}:"
                " open it once without read_only (MemoryStore(path), or `memkit info"
                " FILE`) to upgrade it in place; then it opens read-only too"
            )
        if version == 0 and self._file:  # a new store: a journal beside it is another one's
            Path(self._file + ".reads").unlink(missing_ok=True)  # (one deleted with its journal left)
        dim = meta.dim or self.embedder.dim  # subtle: the file's own, which a stale file keeps
        stale, self._stale = self._stale, None  # writable for the migrations
        try:
            for i in range(version, len(MIGRATIONS)):

                def step(i: int = i) -> None:
                    """Migration ``i`` and the version it reaches, in one transaction; a new store
                    records its embedder too (an old one keeps the name its vectors were made by)."""
                    MIGRATIONS[i](self._run, dim)
                    own = ()  # a new store's: no names to pseudonymize, no old tokens (both done)
                    if version == 0:
                        own = (
                            ("embedder", self.embedder.name),
                            ("dim", dim),
                            ("log_spaces", 2),
                            ("tokens", 2),
                        )
                    for name, value in (("schema_version", i + 1), *own):
                        self._run("INSERT OR REPLACE INTO meta VALUES (?, ?)", [name, str(value)])

                self._tx(step)
        finally:
            self._stale = stale
        if version and not (self.read_only or stale or meta.log_spaces):  # once per database
            self._tx(lambda: log_spaces(self._run, self._secret))  # (a new one, version 0, logged nothing)
        mark = patterns_mark(self.guard.extra_secret_patterns)  # ("" without extra patterns: no query)
        if mark != meta.log_patterns and not (self.read_only or stale):  # the log's names by these rules
            self._tx(lambda: log_patterns(self._run, self._secret, mark))
        hashed = isinstance(self.embedder, HashEmbedder)  # (a model embedder has its own tokenizer)
        if version and hashed and not (self.read_only or stale or meta.tokens):
            self._tx(self._retokenize)  # once per database, as log_spaces
        if version < len(MIGRATIONS) and self._file:  # fold the migrated schema into the file itself
            self._run("CHECKPOINT")

    def _retokenize(self) -> None:
        """The rows whose text memkit's tokenizer reads differently since 2026-12-05 (invisible
        characters removed, combining accents kept inside a word, also those case folding makes:
        ``İ``, ``ǰ``, ``ῆ``) get the
        hash embedder's vectors of today's tokens: its name (``hash-v3``) did not change, and a new
        version would have made every store wait for a whole ``reembed`` over a handful of rows
        (usually none). Memories and lessons alike (an erased lesson's ``[erased]`` text matches none)."""
        changed = f"[{INVISIBLE}\u0300-\u036f{_folds_to_marks()}]"
        vector = pl.Array(pl.Float32, self.embedder.dim)
        for table in ("memories", "lessons"):
            rows = self._sql(f"SELECT id, content FROM {table} WHERE regexp_matches(content, ?)", [changed])
            if rows.height:
                texts = rows["content"].to_list()
                emb = self._check_embeddings(self.embedder.embed(texts), len(texts), "embedder")
                new = pl.DataFrame(
                    {"id": rows["id"], "embedding": emb}, schema_overrides={"embedding": vector}
                )
                sql = f"UPDATE {table} t SET embedding = v.embedding FROM _view v WHERE t.id = v.id"
                self._with_view(new.to_arrow(), sql)
        self._run("INSERT OR REPLACE INTO meta VALUES ('tokens', '2')")

    # --------------------------------------------------------------------------------- compaction
    def compact(self) -> None:
        """Rewrite the file so that nothing erased survives in its free blocks (see the module doc).

        Runs by itself after every erasure unless ``compact_on_erase=False``; a no-op in memory; on
        a server (where erasures run VACUUM by themselves), ``VACUUM FULL``: the operator's purge. A
        read-only store refuses it (MemkitError), as every write.

        Steps: a fresh file next to the old one gets the schema (the same migrations) and a copy of
        every memkit table through Arrow (less ``meta.compact_due``: it is done); the old file's log
        is folded in and the fresh file replaces it with one atomic rename; the store reconnects. If
        the fresh file cannot be written (a full disk), the old file's write-ahead log would not fold
        in, or the rename fails, the fresh copy is dropped and the error raised: nothing is lost, and
        the file stays due (see the module doc).
        """
        with self._lock:
            if self._con is None:
                raise MemkitError(f"the store {self.path!r} is closed")
            if self.read_only:  # (an erasure, which runs it, is refused before it on a read-only store)
                raise MemkitError(f"the store {self.path!r} is open read-only: compact() rewrites it")
            if self._depth:  # inside transaction(): its erasure's commit runs it (_on_commit)
                return
            if self._file is None:  # in memory: nothing to do; a server: every table and index rewritten
                if self._pg is not None:  # (GIN keeps a word as a key after its rows are vacuumed)
                    self._run("VACUUM FULL memories, embed_cache, lessons, events")
                return
            self._check_writable()  # a stale file is not rewritten either
            self._refuse_foreign()
            tmp = f"{self._file}.compact-{os.getpid()}"  # beside the file: os.replace stays on one disk
            folder, name = Path(self._file).parent, Path(self._file).name
            # a crash's leftover: this process holds the file's lock, so no one else is compacting
            for leftover in folder.glob(f"{glob.escape(name)}.compact-*"):
                leftover.unlink(missing_ok=True)
            fresh = connect(tmp)
            try:
                # subtle: the fresh sequence continues where the old one stopped, or the next event
                # would reuse the number (the primary key) of a copied one
                seq = self._run("SELECT coalesce(max(seq), 0) FROM events")[0][0]
                dim = read_meta(self._run, self.path).dim
                for migrate in MIGRATIONS:
                    migrate(lambda q, p=(): fresh.execute(q, list(p)).fetchall(), dim)
                for table in TABLES:
                    self._copy_table(table, fresh)
                fresh.execute("DELETE FROM meta WHERE name = 'compact_due'")  # done, once it replaces
                if seq:
                    fresh.execute("SELECT setval('event_seq', ?)", [seq])
                fresh.execute("CHECKPOINT")
            except BaseException:
                fresh.close()
                Path(tmp).unlink(missing_ok=True)
                raise
            fresh.close()
            self._run("CHECKPOINT")  # fold the write-ahead log into the old file before it is replaced
            self._db.close()
            self._con = None
            stuck = Path(self._file + ".wal").exists()  # the old file still needs its log: keep it
            failed: OSError | None = None
            if not stuck:
                try:
                    os.replace(tmp, self._file)  # atomic: a crash leaves either file whole
                except OSError as e:  # the old file stays, whole: reconnect to it, then say so
                    failed = e
            if stuck or failed:
                Path(tmp).unlink(missing_ok=True)
            try:  # (no other process came in meanwhile: this store holds the file's lock: connect.py)
                self._con = connect(self._file)
            except BaseException:
                self._let_go()
                raise
            if failed is not None:
                raise failed
            if stuck:
                raise MemkitError(f"{self.path} was not compacted (its write-ahead log would not fold in)")
            self._due = False

    def _analyze(self) -> None:
        """On a server, statistics after a large write: not knowing a bulk load's rows, the planner sorts
        a whole namespace instead of asking the HNSW index (120 ms instead of 17 at 100k)."""
        self._run("ANALYZE memories")

    # ---------------------------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Write the deferred reads, compact the file if an erasure left it due (see
        :mod:`~memkit.store.compaction`; a failure is a warning) and close the database
        (idempotent). A file is checkpointed by DuckDB on close."""
        with self._lock:
            if self._con is not None:
                try:
                    self._close_journal()  # the deferred reads are written first
                    self._compact_if_due("on close")
                finally:  # even if that fails: the connection closes and the file is free again
                    if self._con is not None:  # (None: a compaction that could not reconnect)
                        self._con.close()
                        self._con = None
                    self._let_go()

    def __enter__(self) -> FilesMixin:
        """``with MemoryStore(path) as store:`` closes the store when the block ends."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the store, whatever happened in the block (an exception propagates)."""
        self.close()

    def __repr__(self) -> str:
        """``MemoryStore('m.db', embedder=hash-v1-384-tw0.5, memories=12)``: the file, the embedder
        (and the one the file was written with, when stale) and the rows it holds."""
        stale = f", stale={self._stale[0]}" if self._stale else ""
        n = self.count() if self._stale and self._con is not None else self._index.n  # (no index: stale)
        return f"MemoryStore({self.path!r}, embedder={self.embedder.name}{stale}, memories={n})"
