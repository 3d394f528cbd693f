"""Writing a file the caller names: the one rule of every memkit writer (``export``, ``save_settings``,
``export_cogx`` / ``write_cogx``, ``LearnedModel.save``).

A careful tool writing ``out.jsonl`` must not destroy what the name leads to, nor leave half a file:

1. the path is checked first (:func:`memkit.errors.check_output`): a folder, a device, a pipe, a
   process's open descriptor (``/dev/stdout``, ``/proc/self/fd/1``) or a database is refused with a
   ValidationError naming the argument, and nothing is written;
2. a symbolic link is followed to the file it leads to (:func:`memkit.errors.output_target`), and
   *that* file is written: the link stays a link (``current.jsonl -> exports/2026-12.jsonl`` keeps
   pointing at the new export), where a rename onto the link's own name would have replaced the link
   by a regular file, and for ``/dev/stdout`` replaced the system's link;
3. the bytes go to a temporary file in the target's own folder (the same file system), flushed to
   disk, then renamed over the target in one step (:func:`os.replace`): a crash or a full disk leaves
   the old file or the new one, never half of either; an existing file keeps its permission bits, a
   new one gets ``mode`` less the umask, and the temporary file has those bits before its first byte
   is written (created ``0600``, then given the replaced file's bits): a ``0600`` export is never
   rewritten through a world-readable file;
4. an existing file nobody may write (``chmod a-w``, mode ``0444``), or that this process may not write, is
   refused with a ValidationError naming the argument, and left as it is, as ``cp`` without ``-f``
   refuses it: a rename would replace it silently, since a rename asks the folder, not the file; make it
   writable (``chmod u+w``), remove it, or pass ``force=True`` (every writer takes it; the CLI's
   ``--force``: the message names the one the caller has, :func:`force_named`) to replace it anyway,
   keeping its bits;
5. a path the file system refuses (a missing folder, a read-only one) is a ValidationError naming the
   argument and the path the caller gave, never the temporary file's name; any other OSError (a disk
   that fails) propagates as it is.

``stdout=True`` lets ``"-"`` mean standard output (``memkit export - | gzip``), written as it comes:
no rename, so no atomicity, which a stream cannot have.
"""

from __future__ import annotations

import io
import os
import secrets
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Any

from .errors import ValidationError, check_bool, is_duckdb_file, output_target

__all__ = ["STDOUT", "force_named", "write_file"]

STDOUT = "-"
"""The path that means standard output, for a writer that allows it (``stdout=True``)."""

_BAD_PATH = (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)
"""What a path the caller named can do wrong: a ValidationError naming it, not an OSError."""

_FORCE: ContextVar[str] = ContextVar("memkit_force", default="force=True")
"""How the caller says "replace it anyway", as a read-only target's refusal names it."""


@contextmanager
def force_named(option: str) -> Iterator[None]:
    """Within it, a read-only target's refusal names ``option`` (the CLI's ``--force``) as the way to
    replace it anyway, not the Python API's ``force=True``."""
    token = _FORCE.set(option)
    try:
        yield
    finally:
        _FORCE.reset(token)


def write_file(
    name: str,
    path: Any,
    write: Callable[[IO[Any]], None],
    *,
    binary: bool = False,
    mode: int = 0o666,
    is_database: Callable[[Path], bool] = is_duckdb_file,
    stdout: bool = False,
    force: bool = False,
) -> None:
    """Call ``write(f)`` with a file object whose bytes replace the file ``path`` leads to, as the
    module docstring says; ``name`` is the argument errors name. Text files are UTF-8 with ``\\n`` line
    ends; ``binary=True`` gives ``write`` a bytes file (``np.savez`` writes to one)."""
    check_bool("force", force)  # every writer's switch: "no" is not taken as true
    if stdout and isinstance(path, str) and path == STDOUT:
        _to_stdout(write, binary)
        return
    target = output_target(name, path, is_database=is_database)
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")  # unique, beside the target
    try:
        try:  # the file replaced keeps who may read it, from the first byte on
            keep: int | None = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            keep = None  # a new file: `mode` less the umask, as for any file
        if keep is not None and not force and (not keep & 0o222 or not os.access(target, os.W_OK)):
            raise ValidationError(
                name,
                f"{os.fspath(path)!r} is read-only: it is left as it is; make it writable "
                f"(chmod u+w), remove it, or pass {_FORCE.get()} to replace it anyway",
            )
        # subtle: never more readable than the final file while written (an open descriptor outlives a chmod)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode if keep is None else 0o600)
        try:
            if keep is not None:
                os.fchmod(fd, keep)
            with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())  # the bytes are on disk before the name points at them
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except _BAD_PATH as e:  # the path's fault: said with the caller's path, not the temporary name
        raise ValidationError(name, f"cannot write {os.fspath(path)!r}: {e.strerror or e}") from None


def _to_stdout(write: Callable[[IO[Any]], None], binary: bool) -> None:
    """``write`` to standard output: UTF-8 whatever the locale, through its byte stream when it has one
    (a terminal, a pipe), else as text (a notebook's)."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        if binary:
            raise ValidationError("path", "standard output takes no binary file here")
        write(sys.stdout)
        return
    sys.stdout.flush()  # what was printed before comes first
    if binary:
        write(buffer)
        buffer.flush()
        return
    text = io.TextIOWrapper(buffer, encoding="utf-8", newline="\n", write_through=True)
    try:
        write(text)
        text.flush()
    finally:
        text.detach()  # the stream stays open for the rest of the program
