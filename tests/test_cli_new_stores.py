"""A command that made its store (``import --create``, ``mcp --create``) and was then refused leaves
nothing behind, on a server too.

Found by an audit: into a PostgreSQL URL, a refused ``import --create`` left the schema it made, with
memkit's tables and the embedder it was opened with recorded; a later ``import --create --embedder
hash:64`` into it then failed with the stale-embedder error, though it held nothing. A DuckDB file
was removed already (``tests/test_cli.py``; through a link: ``tests/test_output_files.py``)."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from conftest import NOW

import memkit as mk
from memkit.cli import main
from memkit.store.pg_server import schema_url

T = "--now=2026-01-01T00:00:00+00:00"
_NAMES = itertools.count()


def _schemas(url: str) -> set[str]:
    import psycopg

    with psycopg.connect(url) as con:
        return {r[0] for r in con.execute("SELECT schema_name FROM information_schema.schemata")}


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """(a file every import refuses, an export of a hash:64 store)."""
    bad, good = tmp_path / "bad.jsonl", tmp_path / "good.jsonl"
    bad.write_text('{"format": "memkit", "version": 9}\n', encoding="utf-8")
    with mk.MemoryStore(embedder=mk.HashEmbedder(dim=64)) as s:
        s.add("User likes oolong tea", namespace="u", now=NOW)
        s.export(good, now=NOW)
    return bad, good


def test_a_refused_import_create_drops_the_schema_it_made(pg_url: str, files, capsys) -> None:
    bad, good = files
    name = f"cli_new_{os.getpid()}_{next(_NAMES)}"
    url = schema_url(pg_url, name)
    assert main(["import", str(bad), "--db", url, "--create", T]) == 2
    assert "FormatError: line 1: version: 9 is newer" in capsys.readouterr().err
    assert name not in _schemas(pg_url)
    # the schema is new again: another embedder makes it (before: "holds embeddings of hash-v3-384")
    assert main(["import", str(good), "--db", url, "--create", "--embedder", "hash:64", T]) == 0
    assert "added 1" in capsys.readouterr().out
    # a store that existed before the command is never dropped, nor emptied
    assert main(["import", str(bad), "--db", url, "--create", T]) == 2
    assert name in _schemas(pg_url)
    with mk.MemoryStore(url, embedder=mk.HashEmbedder(dim=64)) as s:
        assert s.count("u") == 1


def test_an_mcp_server_refused_at_start_drops_the_schema_it_made(pg_url: str, capsys) -> None:
    pytest.importorskip("mcp")
    name = f"cli_new_{os.getpid()}_{next(_NAMES)}"
    assert main(["mcp", "--db", schema_url(pg_url, name), "--create", "--namespace", " bad"]) == 2
    assert "namespace" in capsys.readouterr().err
    assert name not in _schemas(pg_url)
