"""The database schema as numbered migrations: ``MIGRATIONS[i]`` upgrades a file from version ``i``
to ``i + 1``. Each is a function of ``(execute, embedding dim)``, applied in order, each in its own
transaction, by :meth:`memkit.store.files.FilesMixin._open` (and replayed on a fresh file by a
compaction). Append new ones; never edit an applied one: a file that already ran it would never run
the edited version, and two files of the same ``schema_version`` would differ.

A file records its version in ``meta.schema_version``; opening a file of an older version runs the
missing migrations (in a writable store with the embedder that wrote it), so files written by an
older memkit stay readable. A migration takes the embedding dimension because vector columns are
typed ``FLOAT[dim]``: the dimension is part of the schema.

1. ``_m1_initial`` — ``meta``, ``memories``, ``events`` (with its sequence), ``embed_cache``;
2. ``_m2_guard`` — the guard's ``findings`` column and the ``lessons`` table;
3. ``_m3_identities`` — owners, creators and requesters as identities (a data migration).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..guard import identity
from .core import log_space

__all__ = ["MIGRATIONS", "Execute"]

Execute = Callable[..., Any]
"""``execute(sql, params=())`` -> the fetched rows."""


def _m1_initial(execute: Execute, dim: int) -> None:
    """The first schema, four tables:

    - ``meta`` — name/value pairs: ``schema_version``, ``embedder`` and ``dim``;
    - ``memories`` — one row per version of a memory: the fields of :class:`memkit.schema.Memory`,
      ``content_hash`` (the embedding cache's key) and ``embedding`` (``FLOAT[dim]``, L2-normalized).
      The CHECK constraints repeat the validators' ranges, a last line of defence;
    - ``events`` — the audit log (:mod:`memkit.store.audit`); ``seq``, from a sequence, orders
      events that share a timestamp;
    - ``embed_cache`` — vectors by (embedder name, content hash): a text is embedded once per store.
    """
    execute("CREATE TABLE meta (name VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)")  # values as text
    execute(
        f"""CREATE TABLE memories (
            id VARCHAR PRIMARY KEY,
            namespace VARCHAR NOT NULL,
            key VARCHAR,
            content VARCHAR NOT NULL,
            value JSON,
            layer VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,
            importance DOUBLE NOT NULL CHECK (importance >= 0 AND importance <= 1),
            half_life_hours DOUBLE NOT NULL CHECK (half_life_hours > 0),
            source VARCHAR NOT NULL,
            owner VARCHAR,
            created_by VARCHAR,
            access VARCHAR NOT NULL,
            tags VARCHAR[] NOT NULL,
            status VARCHAR NOT NULL,
            protected BOOLEAN NOT NULL,
            valid_from TIMESTAMPTZ,
            valid_until TIMESTAMPTZ,
            created_at TIMESTAMPTZ NOT NULL,
            updated_at TIMESTAMPTZ NOT NULL,
            last_access_at TIMESTAMPTZ NOT NULL,
            access_count INTEGER NOT NULL,
            version INTEGER NOT NULL,
            supersedes VARCHAR,
            merged_from VARCHAR[] NOT NULL,
            content_hash VARCHAR NOT NULL,
            embedding FLOAT[{int(dim)}] NOT NULL
        )"""
    )
    execute("CREATE SEQUENCE event_seq START 1")  # a compaction carries it on (files.py)
    execute(
        """CREATE TABLE events (
            seq BIGINT PRIMARY KEY DEFAULT nextval('event_seq'),
            ts TIMESTAMPTZ NOT NULL,
            namespace VARCHAR,
            op VARCHAR NOT NULL,
            memory_id VARCHAR,
            requester VARCHAR,
            detail JSON
        )"""
    )
    execute(
        f"""CREATE TABLE embed_cache (
            embedder VARCHAR NOT NULL,
            content_hash VARCHAR NOT NULL,
            embedding FLOAT[{int(dim)}] NOT NULL,
            PRIMARY KEY (embedder, content_hash)
        )"""
    )


def _m2_guard(execute: Execute, dim: int) -> None:
    """The guard: each memory's findings (JSON list, NULL when none) and the lessons record of
    memories confirmed bad (their text and embedding, consulted by later writes and searches)."""
    execute("ALTER TABLE memories ADD COLUMN findings JSON")  # the last column, after the embedding
    execute(  # a lesson outlives its memory: memory_id may name an erased one
        f"""CREATE TABLE lessons (
            id VARCHAR PRIMARY KEY,
            namespace VARCHAR NOT NULL,
            memory_id VARCHAR,
            content VARCHAR NOT NULL,
            reason VARCHAR NOT NULL,
            requester VARCHAR,
            created_at TIMESTAMPTZ NOT NULL,
            embedding FLOAT[{int(dim)}] NOT NULL
        )"""
    )


def _m3_identities(execute: Execute, dim: int) -> None:
    """Owners, creators and requesters as identities (:func:`memkit.guard.identity`): a name
    written before identities were pseudonymized (an e-mail address as owner) is mapped once, so
    its requester, now mapped on every call, still matches it."""
    # every column that holds a person's name, and only those (ids and namespaces are not identities)
    for table, column in (("memories", "owner"), ("memories", "created_by"), ("events", "requester"),
                          ("lessons", "requester")):  # fmt: skip
        for (name,) in execute(f"SELECT DISTINCT {column} FROM {table} WHERE {column} IS NOT NULL"):
            if identity(name) != name:  # most names hold no PII and stay as they are
                execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", [identity(name), name])


def log_spaces(execute: Execute) -> None:
    """Namespaces that hold a secret as the log now keeps them (:func:`~memkit.store.core.log_space`),
    in the events and lessons an older memkit wrote under the raw name. Not a numbered migration:
    the schema is the same, so a read-only or stale file still opens; a writable open runs it once
    (``meta.log_spaces``)."""
    have = {
        t
        for (t,) in execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        )
    }
    for table in ("events", "lessons") if "events" in have and "lessons" in have else ():
        for (name,) in execute(f"SELECT DISTINCT namespace FROM {table} WHERE namespace IS NOT NULL"):
            if log_space(name) != name:
                execute(f"UPDATE {table} SET namespace = ? WHERE namespace = ?", [log_space(name), name])
    execute("INSERT OR REPLACE INTO meta VALUES ('log_spaces', '1')")


MIGRATIONS: tuple[Callable[[Execute, int], None], ...] = (_m1_initial, _m2_guard, _m3_identities)
"""Every migration in order: a file at version ``v`` runs ``MIGRATIONS[v:]``."""
