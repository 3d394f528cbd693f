"""What a PostgreSQL server holds beyond the shared migrations: a migration lock and a change log.

The tables themselves come from :data:`memkit.store.migrations.MIGRATIONS`, the same numbered steps a
DuckDB file runs (translated by :func:`memkit.store.postgres.translate`). A server adds:

- **a migration lock**: processes opening a new database at once migrate one after the other.
- **a row order**, ``memories.rowid`` (an identity column): DuckDB's ``rowid``, the write order, which
  orders exports, the index and so neighbour expansion's ties. Not a field: exports never see it.
  ``lessons.rowid`` likewise (step 6): the lessons' write order, their order within one instant.
- **indexes** on what the store's statements filter by: ``(namespace, key)`` (the version plan),
  ``(namespace, status)`` (frames, the HNSW filter) and ``events.memory_id`` (histories, as-of);
  ``events.ts`` and ``memories.created_at`` (step 5: a read at a past ``now`` finds the memories
  changed or written since, :mod:`memkit.store.asof`).
- **a change log**, ``memkit_changes (id, xid)``: statement-level triggers on ``memories`` record, for
  every memory a transaction inserts, updates or deletes, that transaction's id (``xid8``). Each
  process keeps its own numpy search index; before a search it reads the log entries of the
  transactions its previous look's snapshot did not see (``pg_visible_in_snapshot``) and applies
  the rows that changed (:mod:`memkit.store.sync`). A transaction that commits late was not visible
  then, so it is never skipped; one row per memory keeps the log as small as the table.
- **keyword search in SQL**, for a service or a report on the server: ``memkit_terms(text)``, the
  ``tsvector`` of a text (``simple`` configuration, after NFKC, lowercasing and punctuation, the same
  whatever the database's locale; every run of CJK characters spelled out as its characters and
  bigrams, ``用户住在`` -> ``用 用户 户 户住 住 住在 在``, as :func:`memkit.text.tokenize` does, without
  stemming), a GIN index ``memories_keywords`` on ``memkit_terms(content)``, and
  ``memkit_query(text)``, a query any of whose terms may match (bigrams for a CJK run, function words
  dropped; NULL, matching nothing, when no term is left): the README shows a query. The terms are
  those of a text's first :data:`TERMS_CHARS` characters (a tsvector holds at most 1 MB), a query's
  of its first :data:`QUERY_CHARS`. An expression index, not a column: nothing in the table changes,
  an erased memory's terms go with its row, nothing is exported or copied, and ``ANALYZE`` keeps no
  statistics of it. The functions' bodies are SQL-standard (``RETURN``), bound when created, so they
  work from any ``search_path`` (a ``pg_dump`` restores them and the index). Every step names only
  objects of the store's own schema (a store in schema ``a`` never touches ``public``'s). memkit's
  own ranking keeps its BM25 over the process's index (the same numbers as on DuckDB).

Each step of :data:`STEPS` runs once, in its own transaction, in order, and records its number in
``meta.pg_schema``; steps 3 and 4 run again when their text is not this memkit's (``meta.pg_terms``).
A role that does not own the tables (it can read and write, not alter) opens a database an older
memkit made with a warning, the optional steps left to the owner's next open.
"""

from __future__ import annotations

import hashlib
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .._version import __version__
from ..errors import ValidationError
from ..text import CJK, INVISIBLE, STOPWORDS
from .pg_home import PATH, home_schema
from .postgres import PgConnection

__all__ = ["ANALYZE_ROWS", "EMBEDDER", "NEVER_ANALYZED", "PG_SCHEMA", "TERMS_DIGEST", "SNAPSHOT", "STATE",
           "STEPS", "QUERY_CHARS", "TERMS_CHARS", "lesson_order", "prepare_server"]  # fmt: skip

PG_SCHEMA = 6
"""Version of what :data:`STEPS` create (``meta.pg_schema``): an older database runs the steps above."""

SNAPSHOT = "SELECT pg_current_snapshot()::text"
"""Which transactions have committed (``xmin:xmax:running``): a later look at the change log reads
those of transactions this snapshot does not see."""
EMBEDDER = "SELECT name, value FROM meta WHERE name IN ('embedder', 'dim')"
"""What the database records about its vectors: another process's ``reembed`` changes it."""
STATE = ("SELECT pg_current_snapshot()::text, (SELECT value FROM meta WHERE name = 'embedder'),"
         " (SELECT value FROM meta WHERE name = 'dim')")  # fmt: skip
""":data:`SNAPSHOT` and :data:`EMBEDDER` in one round trip: what a search's look at the server reads."""
ANALYZE_ROWS = 1000
"""A write of at least this many rows is followed by ``ANALYZE memories`` (the store's ``_analyze``)."""
NEVER_ANALYZED = "SELECT reltuples < 0 FROM pg_class WHERE oid = CAST('memories' AS regclass)"
"""Whether the planner has no statistics of ``memories`` yet (PostgreSQL 14+: ``reltuples`` is -1)."""

_LOCK_KEY = 0x6D656D6B6974  # "memkit": the advisory lock of migrations
_CORE = """
ALTER TABLE memories ADD COLUMN IF NOT EXISTS rowid BIGINT GENERATED ALWAYS AS IDENTITY;
CREATE INDEX IF NOT EXISTS memories_namespace_key ON memories (namespace, key);
CREATE INDEX IF NOT EXISTS memories_namespace_status ON memories (namespace, status);
CREATE INDEX IF NOT EXISTS events_memory_id ON events (memory_id);
CREATE TABLE IF NOT EXISTS memkit_changes (id VARCHAR PRIMARY KEY, xid xid8 NOT NULL);
CREATE INDEX IF NOT EXISTS memkit_changes_xid ON memkit_changes (xid);
CREATE OR REPLACE FUNCTION memkit_log_changes() RETURNS trigger LANGUAGE plpgsql AS $body$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO memkit_changes SELECT DISTINCT id, pg_current_xact_id() FROM old_rows
      ON CONFLICT (id) DO UPDATE SET xid = EXCLUDED.xid;
  ELSE
    INSERT INTO memkit_changes SELECT DISTINCT id, pg_current_xact_id() FROM new_rows
      ON CONFLICT (id) DO UPDATE SET xid = EXCLUDED.xid;
  END IF;
  RETURN NULL;
END $body$;
CREATE OR REPLACE TRIGGER memkit_changes_insert AFTER INSERT ON memories
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memkit_log_changes();
CREATE OR REPLACE TRIGGER memkit_changes_update AFTER UPDATE ON memories
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memkit_log_changes();
CREATE OR REPLACE TRIGGER memkit_changes_delete AFTER DELETE ON memories
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION memkit_log_changes();
"""

TERMS_CHARS = 20_000
"""``memkit_terms`` reads a text's first this many characters (after NFKC)."""


def _escaped(chars: str) -> str:
    """A regex class body in PostgreSQL's ASCII escapes (``\\u4e00``), whatever the client sends."""
    return "".join(
        c if c.isascii() else f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}" for c in chars
    )


# separators whatever the locale (a C-locale parser takes every non-ASCII character for a letter):
# ASCII punctuation, Latin-1's, general punctuation, arrows to dingbats, CJK punctuation, emoji
_PUNCT = (
    "!-/:-@\\[-`{-~\u00a1-\u00bf\u00d7\u00f7\u2000-\u206f\u20a0-\u20cf\u2190-\u2bff\u2e00-\u2e7f"
    "\u3000-\u3004\u3008-\u3020\u3030\u303d\ufe10-\ufe6f\U0001f000-\U0001faff"
)
# removed, joining nothing apart: invisible characters, variation selectors, combining marks for symbols
_SILENT = INVISIBLE + "\ufe00-\ufe0f\u20d0-\u20ff"
_UPPER = (
    "".join(
        chr(c)
        for c in (*range(0x41, 0x5B), *range(0xC0, 0x250), *range(0x370, 0x530), *range(0x1E00, 0x1F00))
        if len(chr(c).lower()) == 1 and chr(c).lower() != chr(c)
    )
    + "ς"
)  # Latin, Greek, Cyrillic capitals (lower() folds only ASCII in a C locale); final sigma, as casefold
QUERY_CHARS = 2000
"""``memkit_query`` reads a query's first this many characters (each CJK one is a term: a query of
~20,000 terms exhausts the server's stack)."""
_KEYWORDS = (
    r"""
CREATE OR REPLACE FUNCTION memkit_terms_of(t text, q boolean) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (SELECT coalesce(string_agg(CASE WHEN r.m[1] IS NULL THEN r.m[2] ELSE
    (SELECT string_agg(CASE WHEN NOT q THEN s.c || coalesce(' ' || s.c || s.n, '')
                            WHEN s.n IS NOT NULL THEN s.c || s.n WHEN s.i = 1 THEN s.c END, ' ' ORDER BY s.i)
     FROM (SELECT u.c, u.i, lead(u.c) OVER (ORDER BY u.i) AS n
           FROM unnest(string_to_array(r.m[1], NULL)) WITH ORDINALITY AS u(c, i)) AS s) END,
    ' ' ORDER BY r.o), '')
  FROM regexp_matches(
    regexp_replace(regexp_replace(replace(replace(
      translate(left(normalize(coalesce(t, ''), NFKC), @CHARS@), '@UPPER@', '@LOWER@'),
      'ß', 'ss'), 'ẞ', 'ss'),
      '[@SILENT@]+', '', 'g'), '[@PUNCT@]+', ' ', 'g'),
    '([@CJK@]+)|([^@CJK@]+)', 'g') WITH ORDINALITY AS r(m, o));
CREATE OR REPLACE FUNCTION memkit_terms(t text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN to_tsvector('simple'::regconfig, memkit_terms_of(t, false));
CREATE OR REPLACE FUNCTION memkit_query(t text) RETURNS tsquery LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (SELECT CAST(string_agg(quote_literal(w), ' | ' ORDER BY w) AS tsquery)
  FROM unnest(tsvector_to_array(
    to_tsvector('simple'::regconfig, memkit_terms_of(left(t, @QCHARS@), true)))) AS w
  WHERE w <> ALL (ARRAY[@STOP@]::text[]));
DO $do$ BEGIN  -- pg_schema 2's generated column and its helper, in this schema only (never public's)
  EXECUTE format('ALTER TABLE %I.memories DROP COLUMN IF EXISTS terms', current_schema());
  EXECUTE format('DROP FUNCTION IF EXISTS %I.memkit_terms_text(text)', current_schema());
  EXECUTE format('DROP INDEX IF EXISTS %I.memories_terms', current_schema());
EXCEPTION WHEN dependent_objects_still_exist THEN  -- a view of the user's reads it: it stays, unsampled
  EXECUTE format('ALTER TABLE %I.memories ALTER COLUMN terms SET STATISTICS 0', current_schema());
  RAISE WARNING 'memkit: memories.terms (pg_schema 2) is kept: other objects depend on it';
END $do$;
CREATE INDEX IF NOT EXISTS memories_keywords ON memories USING gin (memkit_terms(content));
ALTER INDEX memories_keywords ALTER COLUMN 1 SET STATISTICS 0;
""".replace("@CHARS@", str(TERMS_CHARS))
    .replace("@QCHARS@", str(QUERY_CHARS))
    .replace("@UPPER@", _UPPER)
    .replace("@LOWER@", "".join("σ" if c == "ς" else c.lower() for c in _UPPER))
    .replace("@SILENT@", _escaped(_SILENT))
    .replace("@PUNCT@", _escaped(_PUNCT))
    .replace("@CJK@", _escaped(CJK))
    .replace("@STOP@", ", ".join(f"'{w}'" for w in sorted(STOPWORDS)))
)
# what a text was must not outlive its erasure in the planner's statistics: ANALYZE (memkit's after a
# bulk write, autovacuum's any time) keeps a sample's most common values and histogram of a column in
# pg_statistic, readable through pg_stats. No column holding words, or a text's unsalted hash, gets
# any (the planner finds rows by id, namespace, key and status through indexes, and estimates without
# them); statistics an older memkit let the server gather are dropped where the role may (a
# superuser), else left with a warning.
_NO_STATS = """
ALTER TABLE memories ALTER COLUMN content SET STATISTICS 0, ALTER COLUMN key SET STATISTICS 0,
  ALTER COLUMN value SET STATISTICS 0, ALTER COLUMN tags SET STATISTICS 0,
  ALTER COLUMN findings SET STATISTICS 0, ALTER COLUMN content_hash SET STATISTICS 0;
ALTER TABLE embed_cache ALTER COLUMN content_hash SET STATISTICS 0;
ALTER TABLE lessons ALTER COLUMN content SET STATISTICS 0, ALTER COLUMN reason SET STATISTICS 0;
ALTER TABLE events ALTER COLUMN detail SET STATISTICS 0;
DO $do$ BEGIN
  DELETE FROM pg_catalog.pg_statistic s USING pg_catalog.pg_attribute a
  WHERE s.starelid = a.attrelid AND s.staattnum = a.attnum AND a.attstattarget = 0
    AND a.attrelid IN (to_regclass(format('%I.memories', current_schema())),
                       to_regclass(format('%I.lessons', current_schema())),
                       to_regclass(format('%I.embed_cache', current_schema())),
                       to_regclass(format('%I.events', current_schema())));
EXCEPTION WHEN insufficient_privilege THEN
  RAISE WARNING 'memkit: statistics gathered before pg_schema 4 stay until a superuser drops them';
END $do$;
"""
# a read at a past `now` looks up the status events after it and the memories written after it
_TIMES = """
CREATE INDEX IF NOT EXISTS events_ts ON events (ts);
CREATE INDEX IF NOT EXISTS memories_created_at ON memories (created_at);
"""
# the lessons' write order, as memories' (DuckDB's rowid): a database made before numbers the lessons
# it holds in the table's stored order (an identity column is filled by one scan)
_LESSONS = "ALTER TABLE lessons ADD COLUMN IF NOT EXISTS rowid BIGINT GENERATED ALWAYS AS IDENTITY;"
STEPS = ((1, _CORE), (3, _KEYWORDS), (4, _NO_STATS), (5, _TIMES), (6, _LESSONS))
"""``(number, statements)``: row order, indexes, the change log and its triggers (1, required); the
keyword functions and their index (3; 2 was a generated column, which 3 drops in this schema unless a
view depends on it); no planner statistics of the columns that hold words (4); the indexes of times
(5); the lessons' row order (6). Each runs once."""
_WHAT = {3: "the keyword functions (memkit_terms, memkit_query)", 4: "no statistics of texts",
         5: "the indexes of times (events_ts, memories_created_at)",
         6: "the lessons' write order (lessons.rowid: until then a tie goes by id)"}  # fmt: skip
_LESSON_ROWID = (
    "SELECT count(*) FROM pg_attribute WHERE attrelid = CAST('lessons' AS regclass)"
    " AND attname = 'rowid' AND NOT attisdropped"
)
# steps 3 and 4 as this memkit writes them: their text follows memkit.text (its invisible characters,
# its CJK ranges, its stopwords), which a later memkit may change under the same step number. A
# database whose functions another memkit made runs them again, and rebuilds the keyword index (an
# expression index keeps what the old function computed); meta.pg_terms records which text ran
_SET_META = "INSERT INTO meta VALUES (%s, %s) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value"
_REFRESH = _KEYWORDS + _NO_STATS + "REINDEX INDEX memories_keywords;"
TERMS_DIGEST = hashlib.sha256((_KEYWORDS + _NO_STATS).encode("utf-8")).hexdigest()[:16]
TERMS = f"{__version__}:{TERMS_DIGEST}"  # meta.pg_terms: who made them, and which text


def lesson_order(pg: PgConnection | None) -> str:
    """How lessons are ordered (``ORDER BY``): oldest first, one instant's in write order (``rowid``:
    DuckDB's own, a server's step 6). A server whose owner has not opened it since step 6 came (a role
    that may not alter it opened it: a warning said so) has no write order yet: ties go by id there."""
    if pg is None or pg.execute(_LESSON_ROWID).fetchall()[0][0]:
        return "created_at, rowid"
    return "created_at, id"


def _later_terms(pg: PgConnection) -> bool:
    """Whether the keyword functions are this text (whoever made them: no reindex for a new release
    alone) or a later release's (``meta.pg_terms``): two releases sharing a server (a rolling
    upgrade) must not take turns replacing them and reindexing."""
    row = pg.con.execute("SELECT value FROM meta WHERE name = 'pg_terms'").fetchone()
    release = lambda v: tuple(int(x) for x in re.findall(r"[0-9]+", v.partition(":")[0]))  # noqa: E731
    later = row is not None and ":" in row[0] and release(row[0]) > release(TERMS)
    return later or (row is not None and row[0].rpartition(":")[2] == TERMS_DIGEST)


def _own_schema(pg: PgConnection, create: bool, read_only: bool) -> None:
    """The store's schema, the first the search path names (``$user``'s only when it exists), exists
    or is made (``create``, not read-only; under the migration lock). PostgreSQL skips a missing
    schema of the path without a word, so two stores of two new schemas would otherwise both live in
    ``public`` and read each other's memories."""
    schema, exists = home_schema(*pg.con.execute(PATH).fetchone())  # (memkit.store.pg_home)
    if exists:  # the schema is there (or the path names none)
        return
    if not create or read_only:
        raise ValidationError(
            "path", f"schema {schema!r} does not exist on the server (create=True makes it)"
        )
    ddl = pg.con.execute("SELECT format('CREATE SCHEMA IF NOT EXISTS %%I', %s::text)", [schema]).fetchone()
    pg.con.execute(ddl[0])


@contextmanager
def prepare_server(pg: PgConnection, read_only: bool, create: bool = True) -> Iterator[None]:
    """Hold the migration lock while the block migrates; then, unless read-only, make sure the
    change log and its triggers exist (for a database migrated by an older memkit too). First, the
    store's own schema must exist (:func:`_own_schema`)."""
    if read_only:  # a read-only open migrates nothing (an outdated schema is refused)
        _own_schema(pg, create, read_only)
        yield
        return
    with pg.pinned():  # the lock is the session's: a lost connection must not be silently replaced
        pg.con.execute("SELECT pg_advisory_lock(%s)", [_LOCK_KEY])
        try:
            _own_schema(pg, create, read_only)  # one process at a time makes a new schema
            yield
            row = pg.con.execute("SELECT value FROM meta WHERE name = 'pg_schema'").fetchone()
            at = 0 if row is None else int(row[0])  # (read_meta checked it before anything ran)
            with _server_warnings(pg):  # then: are steps 3-4 this memkit's? (never a later one's)
                if _upgrade(pg, at) and at <= PG_SCHEMA and not _later_terms(pg):
                    _run_step(pg, "pg_terms", TERMS, _REFRESH, "the keyword functions (refresh)")
        finally:
            if not pg.con.broken:  # a lost session released its lock with it
                pg.con.execute("SELECT pg_advisory_unlock(%s)", [_LOCK_KEY])


def _upgrade(pg: PgConnection, at: int) -> bool:
    """Run the steps above ``at``, each in its own transaction, recording :data:`TERMS_DIGEST` with
    step 3 -> whether every step is done; a role that may not alter the tables skips the optional
    ones (anything above step 1) with a warning."""
    for number, statements in STEPS:
        if number > at:
            also = {"pg_terms": TERMS} if number == 3 else {}
            if not _run_step(pg, "pg_schema", str(number), statements, _WHAT.get(number, ""), also):
                return False
    return True


def _run_step(pg: PgConnection, name: str, value: str, statements: str, what: str, also: Any = None) -> bool:
    """Run ``statements`` and record ``meta.<name> = value`` (and the pairs of dict ``also``) in one
    transaction, unless ``meta`` holds it already -> False when the role may not (a warning)."""
    have = pg.con.execute("SELECT value FROM meta WHERE name = %s", [name]).fetchone()
    if have is not None and have[0] == value:
        return True
    try:
        with pg.con.transaction():
            pg.con.execute(statements)
            for key, v in {name: value, **(also or {})}.items():
                pg.con.execute(_SET_META, [key, v])
    except Exception as exc:
        if (name, value) == ("pg_schema", "1") or getattr(exc, "sqlstate", None) != "42501":
            raise  # 42501: insufficient privilege
        warnings.warn(
            f"memkit: this role may not alter the database's tables, so {what} waits for the"
            f" owner's next open: {exc}",
            RuntimeWarning,
            stacklevel=5,
        )
        return False
    return True


@contextmanager
def _server_warnings(pg: PgConnection) -> Iterator[None]:
    """The server's ``RAISE WARNING 'memkit: ...'`` of the block as Python RuntimeWarnings (psycopg
    passes a notice on to no one unless asked)."""
    said: list[str] = []

    def hear(diag: Any) -> None:
        """Keep memkit's own warnings."""
        if diag.severity_nonlocalized == "WARNING" and (diag.message_primary or "").startswith("memkit:"):
            said.append(diag.message_primary)

    pg.con.add_notice_handler(hear)
    try:
        yield
    finally:
        pg.con.remove_notice_handler(hear)
        for message in said:
            warnings.warn(message, RuntimeWarning, stacklevel=5)
