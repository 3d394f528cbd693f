"""Where a store lives on a PostgreSQL server: the first schema of its URL's ``search_path``.

``pg_server.schema_url(url, "team_a")`` points a URL at the schema ``team_a``; a store opened there
with ``create=True`` makes the schema when it does not exist yet (:func:`memkit.store.pg_schema.
prepare_server`), since PostgreSQL would skip a missing schema of the path without a word and put
the store in the next one (``public``), together with every other such store.

This module reads the path as PostgreSQL does (:func:`path_schemas`), says which schema is the
store's and whether it exists (:func:`home_schema`), and lets a command that made a new store and
was then refused take it back, as a DuckDB file the command made is removed: :func:`new_home` asks,
before the open, which schema the open would make; :func:`drop_new_home` drops it again, only while
it holds no memory (``memkit import --create`` of a file that fails leaves no empty store behind,
which a later run would take for the target, with the embedder it recorded). A store in a schema
that already existed (``public``, one made by hand) keeps its new, empty tables.
"""

from __future__ import annotations

import re

__all__ = ["PATH", "drop_new_home", "home_schema", "new_home", "path_schemas"]

PATH = "SELECT current_setting('search_path'), current_user, current_schema()"
"""The connection's search path as PostgreSQL reads it, its user, and the schema it resolved to."""

_ENTRY = re.compile(r'\s*("(?:[^"]|"")*"|[^,]*?)\s*(?:,|$)')  # one entry: "Quoted, ""with"" commas" or bare


def path_schemas(path: str) -> list[str | None]:
    """The schema names of a ``search_path`` setting, as PostgreSQL resolves them: a bare name folds
    to lower case, a quoted one keeps its case and commas; None stands for ``$user`` (the role's
    schema, when one of that name exists).

    >>> path_schemas('"$user", Team_A, "Mixed Case, Inc", public')
    [None, 'team_a', 'Mixed Case, Inc', 'public']
    """
    out: list[str | None] = []
    for m in _ENTRY.finditer(path):
        e = m.group(1)
        if not e:
            continue
        name = e[1:-1].replace('""', '"') if e.startswith('"') else e.lower()
        out.append(None if name == "$user" else name)
    return out


def home_schema(path: str, user: str, current: str | None) -> tuple[str | None, bool]:
    """The row of :data:`PATH` -> (the store's schema, whether it exists): the first schema the path
    names (``$user``'s only when it exists, as the server resolves it); (None, True) when the path
    names none.

    >>> home_schema("team_a, public", "postgres", "public")
    ('team_a', False)
    >>> home_schema('"$user", public', "postgres", "public")
    ('public', True)
    """
    names = path_schemas(path)
    if names and names[0] is None:  # "$user" first: the role's schema if there is one, else the next
        names = [user] if user == current else names[1:]
    if not names:
        return None, True
    return names[0], names[0] == current  # the server resolves to the first schema that exists


def new_home(url: str) -> str | None:
    """The schema a store opened at ``url`` with ``create=True`` would make -> its name; None when it
    would make none (the schema exists), or when the server cannot say now (no extra, no connection:
    the open then raises what is wrong)."""
    try:
        import psycopg  # noqa: PLC0415  (the extra memkit[postgres])

        with psycopg.connect(url, autocommit=True) as con:
            name, exists = home_schema(*con.execute(PATH).fetchone())
    except Exception:  # the open that follows says why, with the password hidden
        return None
    return None if exists else name


def drop_new_home(url: str, schema: str) -> bool:
    """Drop ``schema``, which :func:`new_home` said an open would make, if it holds no memory (a
    store another process filled meanwhile is kept) -> whether it was dropped. One transaction; the
    statements are composed by the server (``format('%I')``), never a name formatted into SQL here."""
    import psycopg  # noqa: PLC0415  (only after new_home found one: the extra is there)

    with psycopg.connect(url) as con, con.transaction():
        if con.execute("SELECT to_regclass(format('%%I.memories', %s::text))", [schema]).fetchone()[0]:
            count = con.execute("SELECT format('SELECT count(*) FROM %%I.memories', %s::text)", [schema])
            if con.execute(count.fetchone()[0]).fetchone()[0]:
                return False
        drop = con.execute("SELECT format('DROP SCHEMA IF EXISTS %%I CASCADE', %s::text)", [schema])
        con.execute(drop.fetchone()[0])
    return True
