"""What a PostgreSQL server holds beyond the shared migrations: a migration lock and a change log.

The tables themselves come from :data:`memkit.store.migrations.MIGRATIONS`, the same numbered steps a
DuckDB file runs (translated by :func:`memkit.store.postgres.translate`). A server adds:

- **a migration lock.** Several processes may open a new database at once; an advisory lock makes
  them migrate one after the other, so the second finds the schema current.
- **a row order**, ``memories.rowid`` (an identity column): DuckDB's ``rowid``, the order rows were
  written in, which orders exports, the index, and so the ties of neighbour expansion (turns of one
  session often share a timestamp). It is not a field: exports and imports never see it.
- **indexes** on what the store's statements filter by: ``(namespace, key)`` (the version plan),
  ``(namespace, status)`` (frames, the HNSW filter) and ``events.memory_id`` (histories, as-of).
- **a change log**, ``memkit_changes (id, xid)``: statement-level triggers on ``memories`` record, for
  every memory a transaction inserts, updates or deletes, that transaction's id (``xid8``). Each
  process keeps its own numpy search index; before a search it reads the log entries of the
  transactions its previous look's snapshot did not see (``pg_visible_in_snapshot``) and applies
  the rows that changed (:mod:`memkit.store.sync`). A transaction that commits late was not visible
  then, so it is never skipped; one that another session keeps open costs nothing until it commits;
  one row per memory keeps the log as small as the table.
- **a keyword column for SQL**, ``memories.terms``: a ``tsvector`` the server derives from ``content``
  (generated, so no writer can forget it) with the ``simple`` configuration over the text with every
  run of CJK characters spelled out as its characters and its bigrams (``用户住在`` -> ``用 用户 户 户住
  住 住在 在``), as :func:`memkit.text.tokenize` does, and a GIN index on it. ``memkit_query(text)``
  makes a query of the same terms, any of which may match, so a service or a report on the server
  finds memories by keyword in SQL::

      SELECT id, content FROM memories
      WHERE terms @@ memkit_query('住在哪里') AND status = 'active'
      ORDER BY ts_rank(terms, memkit_query('住在哪里')) DESC LIMIT 10

  memkit's own ranking keeps its BM25 over the process's index (idf over the rows the read gate lets
  through, the same numbers as on DuckDB); the column is derived, so an erased memory's terms go
  with its row, and it is never exported or copied.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..text import CJK as _CJK
from .postgres import PgConnection

__all__ = [
    "ANALYZE_ROWS",
    "CHANGES",
    "EMBEDDER",
    "NEVER_ANALYZED",
    "PG_SCHEMA",
    "SNAPSHOT",
    "STATE",
    "prepare_server",
]

PG_SCHEMA = 2
"""Version of what :data:`CHANGES` creates, kept in ``meta.pg_schema``: a database below it runs
:data:`CHANGES` again (every statement of it is idempotent), so a later memkit can add to it."""

SNAPSHOT = "SELECT pg_current_snapshot()::text"
"""Which transactions have committed as of now (``xmin:xmax:running``): the changes a later look at
the change log has not yet seen are those of transactions this snapshot does not see."""
EMBEDDER = "SELECT name, value FROM meta WHERE name IN ('embedder', 'dim')"
"""What the database records about its vectors: another process's ``reembed`` changes it."""
STATE = (
    "SELECT pg_current_snapshot()::text, (SELECT value FROM meta WHERE name = 'embedder'),"
    " (SELECT value FROM meta WHERE name = 'dim')"
)
""":data:`SNAPSHOT` and :data:`EMBEDDER` in one round trip: what a search's look at the server reads."""

ANALYZE_ROWS = 1000
"""A write of at least this many rows is followed by ``ANALYZE memories`` (the store's ``_analyze``)."""
NEVER_ANALYZED = "SELECT reltuples < 0 FROM pg_class WHERE oid = CAST('memories' AS regclass)"
"""Whether the planner has no statistics of ``memories`` yet (PostgreSQL 14+: ``reltuples`` is -1)."""

_LOCK_KEY = 0x6D656D6B6974  # "memkit": the advisory lock of migrations
CHANGES = """
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
CREATE OR REPLACE FUNCTION memkit_terms_text(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $f$ SELECT coalesce(string_agg(CASE WHEN m[1] IS NULL THEN m[2] ELSE
    (SELECT string_agg(substr(m[1], i, 1) || CASE WHEN i < char_length(m[1])
       THEN ' ' || substr(m[1], i, 2) ELSE '' END, ' ' ORDER BY i)
     FROM generate_series(1, char_length(m[1])) AS i) END, ' ' ORDER BY o), '')
  FROM regexp_matches(coalesce(t, ''), '([CJK]+)|([^CJK]+)', 'g') WITH ORDINALITY AS r(m, o) $f$;
CREATE OR REPLACE FUNCTION memkit_terms(t text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $f$ SELECT to_tsvector('simple'::regconfig, memkit_terms_text(t)) $f$;
CREATE OR REPLACE FUNCTION memkit_query(t text) RETURNS tsquery LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $f$ SELECT coalesce(string_agg(quote_literal(w), ' | ' ORDER BY w), '')::tsquery
  FROM unnest(tsvector_to_array(memkit_terms(t))) AS w $f$;
ALTER TABLE memories ADD COLUMN IF NOT EXISTS terms tsvector
  GENERATED ALWAYS AS (memkit_terms(content)) STORED;
CREATE INDEX IF NOT EXISTS memories_terms ON memories USING gin (terms);
""".replace("CJK", _CJK)
"""Row order, indexes, the change log and its triggers, the keyword column (idempotent; run while
``meta.pg_schema`` is below :data:`PG_SCHEMA`)."""


@contextmanager
def prepare_server(pg: PgConnection, read_only: bool) -> Iterator[None]:
    """Hold the migration lock while the block migrates; then, unless read-only, make sure the
    change log and its triggers exist (for a database migrated by an older memkit too)."""
    if read_only:  # a read-only open migrates nothing (an outdated schema is refused)
        yield
        return
    with pg.pinned():  # the lock is the session's: a lost connection must not be silently replaced
        pg.con.execute("SELECT pg_advisory_lock(%s)", [_LOCK_KEY])
        try:
            yield
            row = pg.con.execute("SELECT value FROM meta WHERE name = 'pg_schema'").fetchone()
            if row is None or int(row[0]) < PG_SCHEMA:  # a fresh database (or one of an older memkit)
                with pg.con.transaction():
                    pg.con.execute(CHANGES)
                    pg.con.execute(
                        "INSERT INTO meta VALUES ('pg_schema', %s)"
                        " ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value",
                        [str(PG_SCHEMA)],
                    )
        finally:
            if not pg.con.broken:  # a lost session released its lock with it
                pg.con.execute("SELECT pg_advisory_unlock(%s)", [_LOCK_KEY])
