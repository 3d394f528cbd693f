"""Connecting to a DuckDB file: a hardened connection, and who may hold the file.

- **Hardened.** Every connection gets :data:`SETTINGS` (no file or network access from SQL text, no
  extension loading), UTC, and then its configuration locked. A path DuckDB would open as a data file
  (an existing JSON, CSV or Parquet file becomes a database in memory, its writes lost at close) is
  refused.
- **One store per file per process.** DuckDB would hand a second connection of the same process the
  same database, but that store's search index would not see the other's writes: :func:`claim`
  refuses it (:class:`~memkit.errors.StoreLocked`), by path and by identity (a hard link).
- **A lock beside the file, for the store's whole life.** DuckDB locks the file per process, but a
  compaction must close its connection to swap in the rewritten file: for that moment the file is
  free, and another process opening it then would write into the replaced file (its writes lost) or
  lock the compacting store out. So a store also holds ``<file>.lock`` (``flock``: shared when read-only,
  exclusive to write) from open to close, and another process is refused while it does. The lock file
  is removed by the last store to let it go; a directory where it cannot be made (read-only), or a
  file system without ``flock``, has DuckDB's lock alone.
"""

from __future__ import annotations

import fcntl
import os
import threading
from contextlib import suppress
from pathlib import Path

import duckdb

from ..errors import StoreLocked, ValidationError, is_duckdb_file

__all__ = ["SETTINGS", "claim", "connect", "is_database", "release"]

# DuckDB settings of every connection, set when it opens and then locked (`lock_configuration`): memkit's
# SQL only touches its own tables, so a value that reached SQL text could not read files, URLs or extensions.
SETTINGS = {
    "enable_external_access": False,  # no file or network access from SQL text
    "autoinstall_known_extensions": False,  # no download of an extension a query names
    "autoload_known_extensions": False,  # no loading of one either
}
_FILE_OF = "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
_OPEN: dict[str, int | None] = {}  # database files open in this process (resolved) -> their lock's fd
# guards _OPEN across threads (and stores); re-entrant: a store dropped unclosed is let go by the
# garbage collector, which may run inside claim() or release() in the same thread
_OPEN_LOCK = threading.RLock()
_SIDE = (".wal", ".reads", ".lock")  # a store's own files beside its database: its log, journal, lock


def is_database(path: str | Path) -> bool:
    """Whether ``path`` is an open store's file (or one of its own beside it) or a DuckDB database:
    never a place to write an export (``export("memories.db")`` by mistake would destroy the store)."""
    target = str(Path(path).resolve())
    with _OPEN_LOCK:
        if any(target == f or target in (f + s for s in _SIDE) for f in tuple(_OPEN)):
            return True
    return is_duckdb_file(target)  # the DuckDB file header's magic bytes


def _same_file(a: str, b: str) -> bool:
    """``a`` and ``b`` are one file (a hard link, a bind mount), as far as the system can tell."""
    with suppress(OSError):
        return os.path.samefile(a, b)
    return False


def claim(file: str, read_only: bool) -> None:
    """Mark ``file`` (a resolved path) open in this process and take its lock file -> StoreLocked if
    this process already holds it, or another process holds its lock."""
    with _OPEN_LOCK:
        if file in _OPEN or any(_same_file(f, file) for f in tuple(_OPEN)):
            raise StoreLocked(f"{file} is already open in this process; close the other MemoryStore")
        _OPEN[file] = _lock_file(file + ".lock", read_only)


def _lock_file(path: str, read_only: bool) -> int | None:
    """Open and ``flock`` the lock file ``path`` -> its descriptor (None: no lock file here).

    The last store out removes the file, so one opened just before that is a deleted file: a lock
    on it would hold nothing (the next opener makes a new file). So the lock must be on the file
    the path names once it is held, or the open is tried again."""
    for _ in range(100):  # (each retry means another process let go meanwhile: a few at most)
        fd: int | None = None
        for flags in (os.O_RDWR | os.O_CREAT, os.O_RDONLY):  # (a lock file another user made: read it)
            with suppress(OSError):
                fd = os.open(path, flags, 0o644)
                break  # neither: a read-only directory, where DuckDB's own lock is all there is
        if fd is None:
            return None
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if read_only else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:  # held by another process
            os.close(fd)
            raise StoreLocked(
                f"{path[:-5]} is locked by another process (one read-write process, or several read-only"
                " ones, per file)"
            ) from None
        except OSError:  # a file system without flock (some network mounts): DuckDB's lock alone
            os.close(fd)
            return None
        with suppress(OSError):
            held, named = os.fstat(fd), os.stat(path)
            if (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino):
                return fd
        os.close(fd)  # removed (or replaced) meanwhile: open the file the path names now
    raise StoreLocked(f"{path[:-5]} is being opened and closed by other processes: try again")


def release(file: str | None) -> None:
    """Let ``file`` go (idempotent): its lock file is removed if no other store holds it."""
    with _OPEN_LOCK:
        fd = _OPEN.pop(file or "", None)
        if fd is None:
            return
        with suppress(OSError):  # nobody else holds it (or the removal is for the last one to do)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.unlink(f"{file}.lock")
        os.close(fd)  # (closing it lets the lock go)


def connect(path: str, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A hardened connection to ``path`` (:data:`SETTINGS`, UTC, configuration locked).

    A file another process holds raises :class:`~memkit.errors.StoreLocked`; anything DuckDB cannot
    open as a database is a ValidationError on ``path``. The connection is closed again if the
    hardening fails, so no half-configured connection escapes.
    """
    try:
        con = duckdb.connect(path, read_only=read_only, config=SETTINGS)
    except duckdb.Error as e:
        if isinstance(e, duckdb.IOException) and "lock" in str(e).lower():
            raise StoreLocked(
                f"{path} is locked by another process (DuckDB allows one read-write process, or"
                f" several read-only ones, per file): {e}"
            ) from None
        raise ValidationError("path", f"cannot open {path!r} as a DuckDB database: {e}") from None
    try:
        # DuckDB opens an existing JSON, CSV or Parquet file as a database in memory (the file a view
        # of it): everything written would vanish at close, so a path must be a database file
        if path != ":memory:" and con.execute(_FILE_OF).fetchone()[0] is None:
            raise ValidationError("path", f"{path!r} is a data file, not a DuckDB database")
        con.execute("SET TimeZone = 'UTC'")  # timestamps come back in UTC, whatever the machine's zone
        con.execute("SET lock_configuration = true")  # last: no SQL text can undo the settings now
    except BaseException:
        con.close()
        raise
    return con
