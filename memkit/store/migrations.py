"""The database schema as numbered migrations: ``MIGRATIONS[i]`` upgrades a file from version ``i``
to ``i + 1``. Each is a function of ``(execute, embedding dim)``, applied in order, each in its own
transaction, by :meth:`memkit.store.files.FilesMixin._open` (and replayed on a fresh file by a
compaction). Append new ones; never edit an applied one: a file that already ran it would never run
the edited version, and two files of the same ``schema_version`` would differ.

A file records its version in ``meta.schema_version``; a writable open of a file of an older version
runs the missing migrations, so files written by an older memkit stay readable (a read-only open
refuses them). A migration takes the embedding dimension because vector columns are typed
``FLOAT[dim]``: the dimension is part of the schema, and an old file's own (``meta.dim``) is used.

1. ``_m1_initial`` — ``meta``, ``memories``, ``events`` (with its sequence), ``embed_cache``;
2. ``_m2_guard`` — the guard's ``findings`` column and the ``lessons`` table;
3. ``_m3_identities`` — owners, creators and requesters as identities (a data migration).

Data steps that change no schema are not numbered (a numbered one makes every older file refuse a
read-only open until a writable one): :func:`log_spaces` runs once on a writable open, and
:func:`log_patterns` when the opening store's extra secret patterns are not those last applied.

Needing only the dimension, the migrations upgrade a file of any embedder, which keeps its embedder's
name (it then opens *stale*, until ``reembed``). :func:`read_meta` reads ``meta`` in one checked
place: a damaged value is refused before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import MemkitError, ValidationError
from ..guard import identity, pseudonym, secret_names
from ..guard.names import holds_secret
from .core import log_space

__all__ = ["MIGRATIONS", "Execute", "Meta", "log_patterns", "log_spaces", "patterns_mark", "read_meta"]

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


def _secret_names(execute: Execute) -> None:
    """Owners, creators and requesters that hold a secret (an API key given as a requester, which
    memkit up to 2288d78 stored raw; the store now refuses one) as a pseudonym, ``[SECRET:…]`` (96
    bits, as every identity's; a store that ran this step before holds the 32-bit form
    :func:`~memkit.store.core.log_space` gives a namespace): the same name always gets
    the same one, so owner, creator and requester still match, and neither the file nor its exports
    hold the key (an export holding it could not be imported). Part of :func:`log_spaces`."""
    for table, column in (("memories", "owner"), ("memories", "created_by"), ("events", "requester"),
                          ("lessons", "requester")):  # fmt: skip
        names = [n for (n,) in execute(f"SELECT DISTINCT {column} FROM {table} WHERE {column} IS NOT NULL")]
        for name in sorted(secret_names(names)):  # one scan of the distinct names (most hold none)
            hidden = pseudonym("[SECRET]", name)
            execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", [hidden, name])


def _log_tables(execute: Execute) -> bool:
    """Whether the file has the log's tables (``events`` and ``lessons``)."""
    have = {
        t
        for (t,) in execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        )
    }
    return "events" in have and "lessons" in have


def _rename_spaces(execute: Execute, secret: Callable[[str], bool]) -> None:
    """The namespaces of the events and lessons that hold a secret by ``secret``'s rules as the log
    keeps them (:func:`~memkit.store.core.log_space`, a pseudonym)."""
    for table in ("events", "lessons"):
        for (name,) in execute(f"SELECT DISTINCT namespace FROM {table} WHERE namespace IS NOT NULL"):
            if (hidden := log_space(name, secret)) != name:
                execute(f"UPDATE {table} SET namespace = ? WHERE namespace = ?", [hidden, name])


def log_spaces(execute: Execute, secret: Callable[[str], bool] = holds_secret) -> None:
    """Namespaces that hold a secret as the log now keeps them (:func:`~memkit.store.core.log_space`),
    in the events and lessons an older memkit wrote under the raw name, and names holding a secret
    as pseudonyms (:func:`_secret_names`). Not a numbered migration: the schema is the same, so a
    read-only or stale file still opens; a writable open runs it once (``meta.log_spaces`` = 2; 1:
    the namespaces only, as memkit before the names step). ``secret``: the opening store's rules for
    namespaces (:func:`log_patterns` records which)."""
    if _log_tables(execute):
        _rename_spaces(execute, secret)
        _secret_names(execute)
    execute("INSERT OR REPLACE INTO meta VALUES ('log_spaces', '2')")


def patterns_mark(patterns: tuple[str, ...]) -> str:
    """What ``meta.log_patterns`` records of a store's ``extra_secret_patterns``: ``""`` for none,
    else a digest of them (the patterns themselves are the operator's, not the file's to keep).

    >>> patterns_mark(()), len(patterns_mark((r"ZQX\\d{4}",)))
    ('', 16)
    """
    if not patterns:
        return ""
    return hashlib.sha256(json.dumps(list(patterns)).encode()).hexdigest()[:16]


def log_patterns(execute: Execute, secret: Callable[[str], bool], mark: str) -> None:
    """The log's namespaces judged by the opening store's rules (``secret``: the built-in secret
    rules plus its ``extra_secret_patterns``) when they differ from those last applied
    (``meta.log_patterns``: ``mark``, :func:`patterns_mark`): a store opened writable with a pattern
    its file's log was never judged by keeps the matching namespaces of older events as pseudonyms,
    as its own events name them, so the log never holds one raw beside its pseudonym. A store without
    extra patterns only records that (what it logs is judged by the built-in rules, already applied):
    the next store with patterns judges the names it logged."""
    if mark and _log_tables(execute):
        _rename_spaces(execute, secret)
    execute("INSERT OR REPLACE INTO meta VALUES ('log_patterns', ?)", [mark])


MIGRATIONS: tuple[Callable[[Execute, int], None], ...] = (_m1_initial, _m2_guard, _m3_identities)
"""Every migration in order: a file at version ``v`` runs ``MIGRATIONS[v:]``."""

_OWN = ("meta", "memories", "events", "embed_cache", "lessons")  # the tables the migrations create
_DAMAGED = "the file is damaged (restore it from a backup, or import an export into a new store)"
_WHOLE = re.compile(r"[0-9]+")  # a count as meta keeps it: ASCII digits only ('3', not '3.0' or '-1')


@dataclass(frozen=True)
class Meta:
    """What a database's ``meta`` says, checked. ``version`` 0 is a database without memkit's
    tables (a new store); then ``embedder`` and ``dim`` are None."""

    version: int
    embedder: str | None = None
    dim: int | None = None
    journal_seq: int = 0  # the last deferred read written (memkit.store.deferred)
    log_spaces: bool = False  # whether :func:`log_spaces` has run (its current steps)
    tokens: bool = False  # whether the hash embedder's rows are of today's tokenizer (files.py _retokenize)
    log_patterns: str = ""  # the extra secret patterns the log's namespaces were last judged by (a mark)


def read_meta(execute: Execute, path: str) -> Meta:
    """The database's ``meta``, every value checked before anything is written: ValidationError
    (field ``path``) naming the file and the key when one is missing or damaged, MemkitError when
    the file is of a newer memkit. memkit's tables without ``meta`` (or ``meta`` without
    ``schema_version``: the first migration writes both in one transaction) are damage too, never
    a new store."""
    tables = {t for (t,) in execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
    )}  # fmt: skip
    if "meta" not in tables:
        if ours := sorted(tables & set(_OWN)):  # not a new store: never migrated (nor its journal deleted)
            raise ValidationError(
                "path", f"{path} holds tables named like memkit's ({', '.join(ours)}) but no meta table:"
                f" not a memkit database, or {_DAMAGED}",
            )  # fmt: skip
        return Meta(0)
    meta = dict(execute("SELECT name, value FROM meta"))

    def whole(key: str, least: int) -> int:
        """``meta.<key>`` as an int >= ``least``, or ValidationError naming the file and the key."""
        value = meta.get(key)
        if not isinstance(value, str) or not _WHOLE.fullmatch(value) or int(value) < least:
            found = "no meta." + key if value is None else f"meta.{key} = {value!r}"
            raise ValidationError("path", f"{path} has {found}, not a whole number >= {least}: {_DAMAGED}")
        return int(value)

    version = whole("schema_version", 1)
    if version > len(MIGRATIONS):  # a newer memkit's store: its meaning is not this version's to guess
        raise MemkitError(
            f"{path} has schema version {version}, newer than this memkit's ({len(MIGRATIONS)}):"
            " open it with the memkit that wrote it, or upgrade memkit"
        )
    embedder = meta.get("embedder")
    if not isinstance(embedder, str) or not embedder.strip():
        raise ValidationError("path", f"{path} has meta.embedder = {embedder!r}, not a name: {_DAMAGED}")
    journal = whole("journal_seq", 0) if "journal_seq" in meta else 0
    if "pg_schema" in meta:  # a server's own steps (pg_schema.py), checked here, before any is run
        whole("pg_schema", 1)
    spaces, tokens = meta.get("log_spaces") == "2", meta.get("tokens") == "2"
    mark = meta.get("log_patterns", "")
    return Meta(version, embedder, whole("dim", 1), journal, spaces, tokens, mark)
