"""The memkit exception tree.

Every error memkit raises on purpose is a :class:`MemkitError`. Where a built-in exception means the
same thing, the memkit error also inherits from it, so ``except ValueError`` keeps working::

    MemkitError (Exception)
    ├── ValidationError (ValueError)      bad input: the message names the field and the value
    │   └── FormatError                   a bad import file: the message names the line
    ├── AccessDenied (PermissionError)    the requester may not read or change that memory
    ├── NotFound (KeyError)               no memory with that id (or key) in that namespace
    ├── ConflictError                     a keyed write under the ``strict`` conflict policy
    ├── WriteRefused                      the guard refused a write (a secret); ``.findings`` says why
    ├── StoreLocked                       another process holds the DuckDB file open read-write
    ├── ConnectionLost (ConnectionError)  the PostgreSQL server's connection was lost; ``.retryable``
    └── MissingDependency (ImportError)   an optional extra is not installed; names the pip command

A failed call changes nothing: every store method validates first and writes in one transaction.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

__all__ = [
    "AccessDenied",
    "ConflictError",
    "ConnectionLost",
    "FormatError",
    "MemkitError",
    "MissingDependency",
    "NotFound",
    "StoreLocked",
    "ValidationError",
    "WriteRefused",
    "check_bool",
    "check_frame",
    "check_output",
    "check_path",
    "is_duckdb_file",
    "output_target",
]


class MemkitError(Exception):
    """Base class of every error memkit raises on purpose."""


class ValidationError(MemkitError, ValueError):
    """Invalid input. ``field`` names the offending argument or column."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")


class FormatError(ValidationError):
    """A portable-format file that cannot be read (bad header, bad JSON, bad field)."""


class AccessDenied(MemkitError, PermissionError):
    """The requester may not read or change the memory (DESIGN.md's access rule)."""


class NotFound(MemkitError, KeyError):
    """No such memory. Unlike a bare KeyError, ``str()`` is the plain message."""

    def __str__(self) -> str:  # KeyError would show the repr of its argument
        return str(self.args[0]) if self.args else ""

    @classmethod
    def memory(cls, memory_id: object, namespace: str | None = None) -> NotFound:
        """What an id of nothing a call may reach gets, from every entry point (the store's read gate,
        MCP's pinned clock): one message, so no entry point tells such ids apart by its words.

        >>> str(NotFound.memory("m1", "alice"))
        "no memory with id 'm1' in namespace 'alice'"
        """
        where = "" if namespace is None else f" in namespace {namespace!r}"
        return cls(f"no memory with id {memory_id!r}{where}")


class ConflictError(MemkitError):
    """A keyed write with a different value under ``conflict_policy="strict"``; or, on PostgreSQL, a
    ``store.transaction()`` another process's concurrent write made impossible to serialize (rolled
    back: run it again)."""


class WriteRefused(MemkitError):
    """The guard refused a write: the text holds a secret or a never-remember topic.

    Nothing was stored (for ``add_many``: no row of the batch); the refusal is audited as a
    ``deny`` event without the text. ``findings`` is a polars frame (``row, code, kind, severity,
    start, end, message``; spans into the refused text, ``row`` its position in the batch).
    """

    def __init__(self, message: str, findings: object) -> None:
        self.findings = findings
        super().__init__(message)


class StoreLocked(MemkitError):
    """The DuckDB file is held read-write by another process (one writer per file)."""


class ConnectionLost(MemkitError, ConnectionError):
    """The connection to the PostgreSQL server was lost (a restart, a failover, an idle session
    ended). The store has connected again when it could; ``retryable`` says that what was cut short
    was rolled back by the server and may simply run again (the store's own transactions do);
    ``uncertain`` that a write (a COMMIT) was sent and nobody can say whether it took effect."""

    def __init__(self, message: str, *, retryable: bool, uncertain: bool = False) -> None:
        super().__init__(message)
        self.retryable, self.uncertain = retryable, uncertain


class MissingDependency(MemkitError, ImportError):
    """An optional dependency is absent; the message says which extra to install."""


def check_bool(name: str, value: Any) -> bool:
    """A switch (``force``, ``dry_run``, ``time_order``) -> ``value``; ValidationError naming ``name``
    unless it is a bool: a truthy stand-in (``"yes"``, ``"no"``, ``1``) is refused, not taken as true.

    >>> check_bool("force", "no")
    Traceback (most recent call last):
        ...
    memkit.errors.ValidationError: force: must be a bool, got str
    """
    if not isinstance(value, bool):
        raise ValidationError(name, f"must be a bool, got {type(value).__name__}")
    return value


def check_frame(frame: Any, name: str, columns: Sequence[str]) -> None:
    """Raise :class:`ValidationError` naming ``name`` unless ``frame`` is a polars DataFrame holding
    every one of ``columns``."""
    if not isinstance(frame, pl.DataFrame):
        raise ValidationError(name, f"must be a polars DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValidationError(name, f"missing columns: {', '.join(missing)}")


def check_path(name: str, value: Any) -> Path:
    """A file path a caller names (a str or ``os.PathLike``) -> a Path the file system can take:
    not blank, no NUL, valid Unicode, within 255 bytes a part and 4095 in all; else ValidationError naming
    ``name`` (not the OSError or ValueError the first file call would raise).

    >>> check_path("path", "memories.duckdb")
    PosixPath('memories.duckdb')
    """
    text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(text, str):
        raise ValidationError(name, f"must be a file path (str or os.PathLike), got {type(value).__name__}")
    if not text.strip():
        raise ValidationError(name, f"must be a file path, got {text!r}")
    if "\x00" in text:
        raise ValidationError(name, "contains a NUL character")
    try:
        longest = max(len(part.encode("utf-8")) for part in Path(text).parts)
        total = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValidationError(name, "is not valid Unicode text (a lone surrogate)") from None
    if longest > 255 or total > 4095:
        raise ValidationError(name, "is longer than a file system takes (255 bytes a name, 4095 in all)")
    return Path(text)


def is_duckdb_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a DuckDB database (its header's magic bytes): a store, anyone's."""
    if not os.path.isfile(path):  # opening a pipe would wait for a writer
        return False
    try:
        with open(path, "rb") as f:
            return f.read(12)[8:12] == b"DUCK"
    except OSError:
        return False


def check_output(name: str, value: Any, *, is_database: Callable[[Path], bool] = is_duckdb_file) -> Path:
    """A file a call is about to write, replacing what is there -> its Path (:func:`check_path`); else
    ValidationError naming ``name``, nothing written: a folder, a device or a pipe is not replaced, and
    a database is never overwritten (``export("memories.db")`` or ``save_settings("store.json", s)`` by
    mistake would destroy a store). ``is_database``: the store passes its own, which also knows the
    files beside an open store (its ``.wal``); the default reads the file's header. A symbolic link is
    judged by the file it leads to (:func:`output_target`, what :mod:`memkit.outfile` writes).
    """
    path = check_path(name, value)
    output_target(name, path, is_database=is_database)
    return path


_DESCRIPTORS = ("/proc", "/dev/fd")
"""Where a path names a process's open file (``/dev/stdout`` -> ``/proc/self/fd/1``), not a file."""


def output_target(name: str, value: Any, *, is_database: Callable[[Path], bool] = is_duckdb_file) -> Path:
    """The file a write to ``value`` lands in -> its absolute path, a symbolic link followed to the end
    (its target is written; the link stays a link); the checks of :func:`check_output` on it, and:
    a path through ``/proc`` or ``/dev/fd`` (``/dev/stdout`` is a link to one) is an open file
    descriptor of a process, not a file, and is refused; so is a loop of links.

    >>> output_target("path", "/proc/self/fd/1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    memkit.errors.ValidationError: path: '/proc/self/fd/1' is a process's open file (a descriptor), not a...
    """
    path = check_path(name, value)
    # subtle: not abspath, which drops `lnk/..` before the link is followed; realpath resolves as the kernel
    target = os.fspath(path)
    for _ in range(40):  # as many links as the system itself follows
        folder = os.path.realpath(os.path.dirname(target))  # the folder, every link in it resolved
        if any(folder == d or folder.startswith(d + "/") for d in _DESCRIPTORS):
            raise ValidationError(
                name, f"{str(path)!r} is a process's open file (a descriptor), not a file: not replaced"
            )
        target = os.path.join(folder, os.path.basename(target))
        if not os.path.islink(target):
            break
        target = os.path.join(folder, os.readlink(target))  # absolute, or relative to the link's folder
    else:
        raise ValidationError(name, f"{str(path)!r} is a loop of symbolic links")
    real = Path(target)
    if real.exists() and not real.is_file():
        raise ValidationError(name, f"{str(path)!r} exists and is not a regular file: not replaced")
    if is_database(path) or is_database(real):
        raise ValidationError(
            name, f"{str(path)!r} is a database file (a store's, or another): not overwritten"
        )
    return real
