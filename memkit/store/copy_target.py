"""A copy's new target taken away again when the copy fails (:meth:`~memkit.store.copy.CopyMixin.copy_to`).

A target named by path or URL is opened, so created: a DuckDB file (through a symbolic link, the file
it leads to, the link kept; with its ``.wal``, ``.reads`` and ``.lock`` beside it), or a PostgreSQL
schema (:mod:`.pg_home`), or memkit's tables, sequences and functions in a schema that existed. The
copy itself is one transaction, so a failure writes no row; the open's new file or tables stayed
behind, an empty store the next copy would go into. :func:`before` notes what was there before the
open, :func:`discard` takes away what the open added: nothing when the file existed or the schema
held a store already; the schema the open made; in a schema that existed, only the objects it did
not hold before (another program's tables in ``public`` stay).
"""

from __future__ import annotations

import os
from contextlib import suppress
from typing import Any

from .pg_home import drop_new_home, new_home
from .postgres import is_url

__all__ = ["before", "discard"]

# every table, sequence, view and function of the URL's schema (its search path's first), with the
# statement that drops it, composed by the server (format('%I'): no name is formatted into SQL here);
# tables first (their indexes, triggers, identity sequences go with them), then sequences, functions
_OBJECTS = """
SELECT CASE c.relkind WHEN 'S' THEN 1 ELSE 0 END,
       CASE c.relkind WHEN 'S' THEN 'DROP SEQUENCE' WHEN 'v' THEN 'DROP VIEW'
       WHEN 'm' THEN 'DROP MATERIALIZED VIEW' ELSE 'DROP TABLE' END
       || format(' IF EXISTS %I.%I CASCADE', n.nspname, c.relname)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'S', 'v', 'm')
UNION ALL
SELECT 2, format('DROP FUNCTION IF EXISTS %I.%I(%s) CASCADE', n.nspname, p.proname,
       pg_get_function_identity_arguments(p.oid))
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = current_schema() AND p.prokind = 'f'
"""


def before(target: Any) -> Any:
    """What the target holds before the open: True when the file exists, else the files beside it
    that exist already (a stale ``.wal``, another program's ``.lock``: a failed copy keeps them);
    the schema the open would make (its name), else the schema's objects; None when the server
    cannot say now (the open then says why)."""
    if not is_url(target):
        if os.path.lexists(os.path.realpath(target)):
            return True
        return frozenset(p for p in _beside(os.fspath(target)) if os.path.lexists(p))  # kept on failure
    made = new_home(str(target))
    if made is not None:
        return made
    try:
        return _objects(str(target))
    except Exception:  # noqa: BLE001 - the open that follows reports the real error
        return None


def discard(target: Any, held: Any) -> None:
    """Take away what the open of a (closed) target added to what :func:`before` found ``held``."""
    if not is_url(target):
        if held is False or isinstance(held, frozenset):
            _remove(os.fspath(target), held or frozenset())
        return
    if isinstance(held, str):
        drop_new_home(str(target), held)
        return
    store = any(d.startswith("DROP TABLE IF EXISTS") and d.endswith(".meta CASCADE") for _, d in held or ())
    if held is None or store:
        return  # unknown, or a store already (its open may have upgraded it: its objects are its own)
    import psycopg  # noqa: PLC0415  (a URL's extra, as the store's connection)

    with psycopg.connect(str(target), autocommit=True) as con:
        added = sorted(set(_objects(str(target), con)) - set(held))
        if added:
            with con.transaction():
                for _, drop in added:
                    con.execute(drop)  # composed by the server (format('%I')), never here


def _beside(path: str) -> list[str]:
    """The files beside a DuckDB file (DuckDB's ``.wal`` beside the name it was given, memkit's
    ``.lock`` and ``.reads`` beside the file)."""
    bases = dict.fromkeys((path, os.path.realpath(path)))
    return [base + suffix for base in bases for suffix in (".wal", ".reads", ".lock")]


def _remove(path: str, kept: frozenset[str]) -> None:
    """The DuckDB file the open made and the files beside it the open made (not those in ``kept``,
    there before); a link the caller named stays."""
    for side in _beside(path):
        if side not in kept and not os.path.islink(side):
            with suppress(FileNotFoundError):
                os.unlink(side)
    with suppress(FileNotFoundError):
        os.unlink(os.path.realpath(path))


def _objects(url: str, con: Any = None) -> list[tuple[int, str]]:
    """The schema's objects, each as (order, the statement that drops it)."""
    if con is None:
        import psycopg  # noqa: PLC0415

        with psycopg.connect(url, autocommit=True) as fresh:
            return _objects(url, fresh)
    return [(int(k), str(d)) for k, d in con.execute(_OBJECTS).fetchall()]
