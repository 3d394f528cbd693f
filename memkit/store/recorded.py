"""The embedder a store records, read without opening the store: what the command line opens a file
with when it is not told (:func:`memkit.cli_embedder.file_embedder`).

A store's ``meta`` table records the name and dimension of the embedder that wrote its vectors (the
store compares them with its own embedder when it opens: :meth:`~memkit.store.files.FilesMixin._migrate`).
:func:`recorded_embedder` reads the same record, with the same checks
(:func:`~memkit.store.migrations.read_meta`), through a read-only connection: nothing is created —
no database, no lock file, no journal — and nothing written (a write-ahead log left by a crash is
replayed in memory only). It takes no lock either, so it never waits for or blocks a store.

>>> import tempfile, pathlib, memkit as mk
>>> with tempfile.TemporaryDirectory() as d:
...     path = pathlib.Path(d) / "m.duckdb"
...     before = recorded_embedder(path)            # no file: nothing recorded (and none made)
...     mk.MemoryStore(path, embedder=mk.HashEmbedder(dim=64)).close()
...     before, path.exists() and recorded_embedder(path)
(None, ('hash-v3-64-tw0.5', 64))
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from ..errors import MemkitError
from .connect import connect
from .migrations import read_meta
from .postgres import PgConnection, is_url

__all__ = ["recorded_embedder"]


def recorded_embedder(path: str | os.PathLike[str]) -> tuple[str, int] | None:
    """``(name, dim)`` of the embedder whose vectors the store at ``path`` (a file or a ``postgresql://``
    URL) holds, or None: no store there yet (no file, an empty database, ``":memory:"``), or one that
    cannot be read now (locked by another process, damaged, of a newer memkit — opening it says why).
    Read-only: nothing is created or written (module docstring)."""
    path = os.fspath(path)
    if not is_url(path) and (path == ":memory:" or not Path(path).is_file()):
        return None  # (a read-only connection would refuse a missing file anyway: never one made)
    try:
        con = PgConnection(path, read_only=True) if is_url(path) else connect(path, read_only=True)
        try:
            meta = read_meta(lambda query, params=(): con.execute(query, list(params)).fetchall(), path)
        finally:
            con.close()
    except (MemkitError, duckdb.Error):  # locked, damaged, another memkit's: the open reports it
        return None
    return (meta.embedder, meta.dim) if meta.version else None
