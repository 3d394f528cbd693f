"""A file whose ``meta`` is damaged is refused before anything is written: a ValidationError naming
the file and the key (never a raw ValueError or KeyError), the file byte for byte as it was, and a
reads journal left beside it (``<file>.reads``, reads not yet written) kept for a later open."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

import memkit as mk

NOW = datetime(2026, 1, 1, tzinfo=UTC)
JOURNAL = b'{"n": 1, "ts": "2026-01-01T00:00:00+00:00"}\n'  # what a crash might leave: kept

DAMAGE = {  # case -> (SQL that damages a current file, the key the error must name)
    "version_text": ("UPDATE meta SET value = 'three' WHERE name = 'schema_version'", "meta.schema_version"),
    "version_float": ("UPDATE meta SET value = '3.0' WHERE name = 'schema_version'", "meta.schema_version"),
    "version_negative": ("UPDATE meta SET value = '-1' WHERE name = 'schema_version'", "meta.schema_version"),
    "version_zero": ("UPDATE meta SET value = '0' WHERE name = 'schema_version'", "meta.schema_version"),
    "no_version": ("DELETE FROM meta WHERE name = 'schema_version'", "meta.schema_version"),
    "no_dim": ("DELETE FROM meta WHERE name = 'dim'", "meta.dim"),
    "dim_text": ("UPDATE meta SET value = 'abc' WHERE name = 'dim'", "meta.dim"),
    "dim_zero": ("UPDATE meta SET value = '0' WHERE name = 'dim'", "meta.dim"),
    "no_embedder": ("DELETE FROM meta WHERE name = 'embedder'", "meta.embedder"),
    "journal_seq_text": ("INSERT INTO meta VALUES ('journal_seq', 'x')", "meta.journal_seq"),
    "meta_dropped": ("DROP TABLE meta", "no meta table"),
}


def _damaged(tmp_path: Path, sql: str) -> Path:
    path = tmp_path / "m.duckdb"
    with mk.MemoryStore(str(path)) as s:
        s.add("用户住在杭州", namespace="u", now=NOW)
    con = duckdb.connect(str(path))
    con.execute("DELETE FROM meta WHERE name = 'log_spaces'")  # so a writable open would run it
    con.execute(sql)
    con.execute("CHECKPOINT")
    con.close()
    path.with_name(path.name + ".reads").write_bytes(JOURNAL)
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("read_only", [False, True], ids=["writable", "read_only"])
@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_damaged_meta_is_refused_naming_the_file_and_the_key_and_changes_nothing(
    tmp_path: Path, case: str, read_only: bool
) -> None:
    sql, key = DAMAGE[case]
    path = _damaged(tmp_path, sql)
    digest = _digest(path)
    with pytest.raises(mk.ValidationError) as ei:
        mk.MemoryStore(str(path), read_only=read_only)
    assert str(path) in str(ei.value) and key in str(ei.value) and "damaged" in str(ei.value)
    assert _digest(path) == digest  # no migration, no log_spaces, no journal watermark
    assert path.with_name(path.name + ".reads").read_bytes() == JOURNAL  # the unwritten reads stay
    assert not path.with_name(path.name + ".wal").exists()


def test_a_newer_version_is_still_refused_as_newer(tmp_path: Path) -> None:
    path = _damaged(tmp_path, "UPDATE meta SET value = '99' WHERE name = 'schema_version'")
    digest = _digest(path)
    with pytest.raises(mk.MemkitError, match="schema version 99, newer"):
        mk.MemoryStore(str(path))
    assert _digest(path) == digest


def test_a_new_store_still_drops_a_stale_journal_and_a_read_only_open_does_not(tmp_path: Path) -> None:
    path = tmp_path / "plain.duckdb"
    duckdb.connect(str(path)).close()  # an empty database: a new store once opened writable
    journal = path.with_name(path.name + ".reads")
    journal.write_bytes(JOURNAL)
    with pytest.raises(mk.MemkitError, match="schema version 0.*without read_only"):
        mk.MemoryStore(str(path), read_only=True)
    assert journal.read_bytes() == JOURNAL  # a read-only open deletes nothing
    with mk.MemoryStore(str(path)) as s:  # a new store: a journal beside it is another store's
        assert s.count() == 0
    assert not journal.exists()


def test_a_users_table_named_like_memkits_is_not_taken_for_a_new_store(tmp_path: Path) -> None:
    path = tmp_path / "mine.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE events (id INTEGER)")
    con.close()
    digest = _digest(path)
    with pytest.raises(mk.ValidationError, match=r"tables named like memkit's \(events\)"):
        mk.MemoryStore(str(path))
    assert _digest(path) == digest
