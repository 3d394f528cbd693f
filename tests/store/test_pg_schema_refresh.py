"""memkit/store/pg_schema.py + migrations.read_meta: a server database whose keyword functions an
older memkit made gets this memkit's (and a rebuilt index) on a writable open, one of pg_schema 4 the
indexes of times; a damaged ``meta.pg_schema`` is refused before anything runs; the server's own
warnings reach Python; a new store records that it has no names to pseudonymize (``meta.log_spaces``)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

import memkit as mk
from memkit.store import pg_schema

psycopg = pytest.importorskip("psycopg")

NOW = datetime(2026, 1, 1, tzinfo=UTC)
FIND = "SELECT content FROM memories WHERE memkit_terms(content) @@ memkit_query(%s) ORDER BY content"
SOFT = "The pass\u00adword reset"  # a soft hyphen: invisible, inside the word (memkit.text.INVISIBLE)


def _meta(url: str) -> dict[str, str]:
    with psycopg.connect(url) as con:
        return dict(con.execute("SELECT name, value FROM meta").fetchall())


def _as_an_older_memkit_left_it(url: str) -> None:
    """Keyword functions whose soft hyphen splits a word (memkit before d84e2a7), their index built
    with them, and no record of which text ran."""
    old = pg_schema._KEYWORDS.replace("\\u00ad", "")  # noqa: SLF001  (the one text that differs)
    assert old != pg_schema._KEYWORDS  # noqa: SLF001  (the test can fail: the older text differs)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(old)
        con.execute("REINDEX INDEX memories_keywords")
        con.execute("DELETE FROM meta WHERE name = 'pg_terms'")


def test_older_keyword_functions_are_replaced_and_the_index_rebuilt(url: str) -> None:
    with mk.MemoryStore(url) as s:
        s.add(SOFT, namespace="u", now=NOW)
        s.add("用户住在杭州", namespace="u", now=NOW)
    assert _meta(url)["pg_terms"] == pg_schema.TERMS  # a new database records it
    _as_an_older_memkit_left_it(url)
    with psycopg.connect(url) as con:
        assert con.execute(FIND, ["password"]).fetchall() == []  # the old rules split "pass|word"
    with mk.MemoryStore(url, read_only=True):  # a read-only open changes nothing
        pass
    assert "pg_terms" not in _meta(url)
    with mk.MemoryStore(url):
        pass
    with psycopg.connect(url) as con:
        con.execute("SET enable_seqscan = off")  # through the rebuilt index, not a recomputation
        assert con.execute(FIND, ["password"]).fetchall() == [(SOFT,)]
        assert con.execute(FIND, ["杭州"]).fetchall() == [("用户住在杭州",)]
    meta = _meta(url)
    assert meta["pg_terms"] == pg_schema.TERMS and meta["pg_schema"] == str(pg_schema.PG_SCHEMA)


@pytest.mark.parametrize("later", ["pg_terms", "pg_schema"])
def test_a_later_releases_keyword_functions_are_left_alone(url: str, later: str) -> None:
    """Two releases sharing a server (a rolling upgrade) took turns replacing each other's functions
    and reindexing on every writable open: a later release's (by meta.pg_terms' release, or a
    pg_schema above this one's) are kept."""
    with mk.MemoryStore(url) as s:
        s.add(SOFT, namespace="u", now=NOW)
    _as_an_older_memkit_left_it(url)  # stands in for another text, which a later release made
    value = {"pg_terms": "99.0.0:0123456789abcdef", "pg_schema": str(pg_schema.PG_SCHEMA + 1)}[later]
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("INSERT INTO meta VALUES (%s, %s) ON CONFLICT (name) DO UPDATE SET value = %s",
                    [later, value, value])  # fmt: skip
    with mk.MemoryStore(url):
        pass
    with psycopg.connect(url) as con:
        assert con.execute(FIND, ["password"]).fetchall() == []  # not replaced
    assert _meta(url)[later] == value


def test_the_same_functions_of_another_release_are_not_reindexed(url: str) -> None:
    """A release whose keyword functions are the same text does not replace them (helper 70: a
    version bump alone rebuilt the index)."""
    with mk.MemoryStore(url) as s:
        s.add(SOFT, namespace="u", now=NOW)
    node = "SELECT pg_relation_filenode('memories_keywords')"
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("UPDATE meta SET value = %s WHERE name = 'pg_terms'", [f"0.0.9:{pg_schema.TERMS_DIGEST}"])
        before = con.execute(node).fetchone()
    with mk.MemoryStore(url):
        pass
    with psycopg.connect(url) as con:
        assert con.execute(node).fetchone() == before  # REINDEX gives the index a new file


def test_a_database_of_pg_schema_4_gets_the_indexes_of_times_on_a_writable_open(url: str) -> None:
    """A read at a past ``now`` finds the status events after it and the memories written after it
    through ``events_ts`` and ``memories_created_at`` (step 5, memkit.store.asof)."""
    with mk.MemoryStore(url) as s:
        s.add("the user lives in Hangzhou", namespace="u", key="home", now=NOW)
    names = "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
    with psycopg.connect(url, autocommit=True) as con:
        assert {"events_ts", "memories_created_at"} <= {r[0] for r in con.execute(names).fetchall()}
        con.execute("DROP INDEX events_ts, memories_created_at")
        con.execute("UPDATE meta SET value = '4' WHERE name = 'pg_schema'")  # as pg_schema 4 left it
    with mk.MemoryStore(url, read_only=True):  # a read-only open changes nothing
        pass
    assert _meta(url)["pg_schema"] == "4"
    with mk.MemoryStore(url) as s:
        s.add("the user lives in Shanghai", namespace="u", key="home", conflict_policy="supersede",
              now=NOW.replace(hour=10))  # fmt: skip
        assert s.read("home", namespace="u", now=NOW.replace(hour=5)).content == "the user lives in Hangzhou"
    with psycopg.connect(url) as con:
        assert {"events_ts", "memories_created_at"} <= {r[0] for r in con.execute(names).fetchall()}
    assert _meta(url)["pg_schema"] == str(pg_schema.PG_SCHEMA) == "6"


@pytest.mark.parametrize("value", ["abc", "", "4.0", "-1", "0"])
@pytest.mark.parametrize("read_only", [False, True], ids=["writable", "read_only"])
def test_a_damaged_pg_schema_is_refused_naming_it_before_anything_runs(
    url: str, value: str, read_only: bool
) -> None:
    with mk.MemoryStore(url) as s:
        s.add("用户住在杭州", namespace="u", now=NOW)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("UPDATE meta SET value = %s WHERE name = 'pg_schema'", [value])
        con.execute("DELETE FROM meta WHERE name = 'log_spaces'")  # a writable open would run it
    before = _meta(url)
    with pytest.raises(mk.ValidationError, match="meta.pg_schema") as e:
        mk.MemoryStore(url, read_only=read_only)
    assert e.value.field == "path"
    assert _meta(url) == before


def test_a_kept_pg_schema_2_column_gets_no_statistics_and_its_warning_reaches_python(url: str) -> None:
    with mk.MemoryStore(url) as s:
        s.add("用户住在杭州", namespace="u", now=NOW)
    with psycopg.connect(url, autocommit=True) as con:  # pg_schema 2's column, which a user's view reads
        con.execute("ALTER TABLE memories ADD COLUMN terms tsvector GENERATED ALWAYS AS"
                    " (to_tsvector('simple', content)) STORED")  # fmt: skip
        con.execute("CREATE VIEW my_terms AS SELECT id, terms FROM memories")
        con.execute("DELETE FROM meta WHERE name = 'pg_terms'")
    with pytest.warns(RuntimeWarning, match="memories.terms"), mk.MemoryStore(url):
        pass
    with psycopg.connect(url) as con:
        target = con.execute(
            "SELECT attstattarget FROM pg_attribute"
            " WHERE attrelid = 'memories'::regclass AND attname = 'terms'"
        ).fetchone()[0]
    assert target == 0


def test_a_new_store_records_that_it_has_no_names_to_pseudonymize(tmp_path: Path) -> None:
    path = tmp_path / "m.duckdb"
    with mk.MemoryStore(str(path)) as s:
        s.add("用户住在杭州", namespace="u", now=NOW)
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute("SELECT value FROM meta WHERE name = 'log_spaces'").fetchone() == ("2",)
    con.close()
