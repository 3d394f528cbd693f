"""Lessons of one instant keep their write order (created_at, then DuckDB's rowid or the server's
``lessons.rowid``, pg_schema 6) in every listing, export, import and copy, never their random ids'
order. The ids here are given in the reverse of the write order, so ordering by id fails with
certainty. Both backends; the server's upgrade of an older database at the end."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from conftest import NOW

import memkit as mk
from memkit.store import review

TEXTS = ["Buy cheap pills at example dot com", "Wire the money to account nine", "Click the prize link now"]
LIDS = ["f" * 16, "c" * 16, "a" * 16]  # descending: the reverse of the order they are written in
AT = NOW + timedelta(minutes=1)  # one instant for all three lessons


@pytest.fixture
def taught(store: mk.MemoryStore, monkeypatch: pytest.MonkeyPatch) -> Iterator[mk.MemoryStore]:
    """``store`` with three lessons of ``u1`` learned at one instant, in the order of ``TEXTS``."""
    ids: Iterator[str] = iter(LIDS)
    monkeypatch.setattr(review, "new_id", lambda: next(ids))
    mids = [store.add(t, namespace="u1", now=NOW).id for t in TEXTS]
    for mid in mids:
        store.learn_lesson(mid, reason="spam", now=AT)
    monkeypatch.undo()
    yield store


def test_one_instants_lessons_list_in_write_order(taught: mk.MemoryStore) -> None:
    assert taught.lessons()["id"].to_list() == LIDS
    assert taught.lessons("u1")["content"].to_list() == TEXTS
    later = taught.add("another one", namespace="u1", now=NOW)
    taught.learn_lesson(later.id, reason="spam", now=NOW)  # an older instant still goes first
    assert taught.lessons()["content"].to_list() == ["another one", *TEXTS]


@pytest.mark.parametrize("new_ids", [False, True])
def test_export_and_import_keep_the_write_order(
    taught: mk.MemoryStore, tmp_path: Path, new_ids: bool
) -> None:
    taught.export(tmp_path / "a.jsonl", include_embeddings=True, now=AT)
    lines = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [x["lesson"]["id"] for x in lines if "lesson" in x] == LIDS
    with mk.MemoryStore() as dst:
        dst.import_(tmp_path / "a.jsonl", on_conflict="new_ids" if new_ids else "skip", now=AT)
        assert dst.lessons()["content"].to_list() == TEXTS
        if not new_ids:
            assert dst.lessons()["id"].to_list() == LIDS
        dst.export(tmp_path / "b.jsonl", now=AT)  # and again from the copy
        again = [json.loads(x) for x in (tmp_path / "b.jsonl").read_text(encoding="utf-8").splitlines()]
        assert [x["lesson"]["content"] for x in again if "lesson" in x] == TEXTS


def test_copy_keeps_the_write_order(taught: mk.MemoryStore, tmp_path: Path) -> None:
    taught.copy_to(str(tmp_path / "b.duckdb"))
    with mk.MemoryStore(str(tmp_path / "b.duckdb")) as dst:
        assert dst.lessons()["id"].to_list() == LIDS


def test_an_erasure_and_a_reembed_keep_the_write_order(taught: mk.MemoryStore) -> None:
    first = taught.lessons()["memory_id"][0]
    taught.delete(first)  # its lesson keeps its vector and its place; the text goes
    assert taught.lessons()["id"].to_list() == LIDS
    with pytest.warns(UserWarning, match="inert"):  # (the erased one: its vector was the old embedder's)
        taught.reembed(mk.HashEmbedder(dim=64))  # every vector rewritten (DuckDB: new columns)
    assert taught.lessons()["id"].to_list() == LIDS


@pytest.mark.duckdb_only("copies a DuckDB store to the server")
def test_a_copy_to_the_server_and_back_keeps_the_write_order(
    taught: mk.MemoryStore, tmp_path: Path, url: str
) -> None:
    taught.copy_to(url)
    with mk.MemoryStore(url) as prod:
        assert prod.lessons()["id"].to_list() == LIDS
        prod.copy_to(str(tmp_path / "back.duckdb"))
    with mk.MemoryStore(str(tmp_path / "back.duckdb")) as back:
        assert back.lessons()["id"].to_list() == LIDS


@pytest.mark.duckdb_only("opens a server database an older memkit made")
def test_a_server_database_of_pg_schema_5_gets_the_lessons_write_order(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    ids: Iterator[str] = iter(LIDS)
    monkeypatch.setattr(review, "new_id", lambda: next(ids))
    with mk.MemoryStore(url) as store:
        mids = [store.add(t, namespace="u1", now=NOW).id for t in TEXTS]
        store.learn_lesson(mids[0], reason="spam", now=AT)
    with psycopg.connect(url, autocommit=True) as con:  # as pg_schema 5 left it: no lessons.rowid
        con.execute("ALTER TABLE lessons DROP COLUMN rowid")
        con.execute("UPDATE meta SET value = '5' WHERE name = 'pg_schema'")
        schema = con.execute("SELECT current_schema()").fetchone()[0]
        role = f"writer_{schema}"  # a role that may not alter the tables: no write order yet, ties by id
        con.execute(f"CREATE ROLE {role} LOGIN")
        con.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        con.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}")
        con.execute(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA {schema} TO {role}")
    as_writer = url.replace("postgresql://postgres:@", f"postgresql://{role}:@", 1)
    with pytest.warns(RuntimeWarning, match="lessons' write order"), mk.MemoryStore(as_writer) as store:
        assert store.lessons()["id"].to_list() == LIDS[:1]
        store.learn_lesson(mids[2], reason="spam", now=AT)
        assert store.lessons()["id"].to_list() == [LIDS[1], LIDS[0]]  # (the one just learned: "c"*16)
    with mk.MemoryStore(url) as store:  # the owner's open adds it, numbering the lessons it holds
        store.learn_lesson(mids[1], reason="spam", now=AT)
        assert store.lessons()["content"].to_list() == [TEXTS[0], TEXTS[2], TEXTS[1]]  # as written
    with psycopg.connect(url) as con:
        assert con.execute("SELECT value FROM meta WHERE name = 'pg_schema'").fetchone() == ("6",)
