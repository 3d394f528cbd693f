"""Hardened connections: no external access, no extensions, UTC, every value bound, clear errors for
corrupt files, and read-only opens (what DuckDB's single-writer lock allows and what it refuses)."""

from __future__ import annotations

import ast
import importlib
import os
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest
from conftest import assert_unchanged, snapshot

import memkit as mk

NOW = datetime(2026, 1, 1, tzinfo=UTC)
H = timedelta(hours=1)

# SQL a query string must never be able to run: network, files, extensions, loosened settings.
REFUSED = [
    "SELECT * FROM read_csv('https://example.com/data.csv')",
    "SELECT * FROM read_csv('/etc/hostname')",
    "SELECT * FROM read_text('/etc/passwd')",
    "COPY memories TO 'leak.csv'",
    "ATTACH 'other.duckdb' AS other",
    "INSTALL httpfs",
    "LOAD httpfs",
    "INSTALL vss",
    "SET enable_external_access = true",
    "SET autoload_known_extensions = true",
    "SET autoinstall_known_extensions = true",
    "SET lock_configuration = false",
    "SET TimeZone = 'Asia/Shanghai'",
]


@pytest.mark.parametrize("sql", REFUSED)
def test_connection_refuses_external_access_and_setting_changes(sql: str, tmp_path: Path) -> None:
    with mk.MemoryStore(str(tmp_path / "m.duckdb")) as s:
        s.add("x", namespace="u", now=NOW)
        with pytest.raises(Exception, match="disabled|locked|Permission") as ei:
            s._run(sql)
        assert not isinstance(ei.value, mk.MemkitError)  # DuckDB itself refused it
        assert s.count() == 1  # and the connection still works


@pytest.mark.duckdb_only("DuckDB's own settings; a server's are its operator's")
def test_connection_settings_are_the_hardened_ones(store: mk.MemoryStore) -> None:
    settings = dict(
        store._run(
            "SELECT name, value FROM duckdb_settings() WHERE name IN ('enable_external_access',"
            " 'autoinstall_known_extensions', 'autoload_known_extensions', 'lock_configuration', 'TimeZone')"
        )
    )
    assert settings == {
        "enable_external_access": "false",
        "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false",
        "lock_configuration": "true",
        "TimeZone": "UTC",
    }


def test_timestamps_are_utc_whatever_the_process_time_zone(tmp_path: Path) -> None:
    # a child with TZ=Asia/Shanghai writes 09:00+08:00; the stored instant is 01:00 UTC
    code = (
        "import sys, memkit as mk; from datetime import datetime, timedelta, timezone;"
        "tz = timezone(timedelta(hours=8)); s = mk.MemoryStore(sys.argv[1]);"
        "t = datetime(2026, 1, 1, 9, tzinfo=tz); s.add('x', namespace='u', created_at=t, now=t);"
        "print(s._run(\"SELECT strftime(created_at, '%H:%M %Z') FROM memories\")[0][0]);"
        "s.close()"
    )
    path = str(tmp_path / "m.duckdb")
    r = subprocess.run(
        [sys.executable, "-c", code, path], env={**os.environ, "TZ": "Asia/Shanghai"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "01:00 UTC"
    with mk.MemoryStore(path) as s:
        assert s.frame()["created_at"][0] == datetime(2026, 1, 1, 1, tzinfo=UTC)


# ------------------------------------------------------------------------------------- bound values

# What may be formatted into SQL text, never a value: fixed column lists and predicates (module
# constants, `cols`/`where` built from them in the function), quoted column names read from the table's
# own information_schema (`names`), and an int.
# constant SQL text: column lists, gate predicates (built of constants and "?"), table names from
# constant tuples, and column names read from the table's own schema
_ALLOWED_IN_SQL = {
    "COLUMNS", "MASKED_COLUMNS", "_LESSON_COLUMNS", "cols", "int(dim)", "names", "where", "gate", "mine",
    "table", "column", "INDEX_COLUMNS", "order",
    "self._lesson_order",  # one of two constant texts, chosen at open (test_lesson_order_is_constant_text)
}  # fmt: skip


def _formatted_sql_parts(module) -> list[tuple[int, str]]:
    """Every ``{...}`` inside an f-string passed to a SQL-running call -> (line, expression source)."""
    source = Path(module.__file__).read_text()
    out = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name not in ("_run", "_sql", "execute", "sql"):
            continue
        for sub in ast.walk(node.args[0]):
            if isinstance(sub, ast.FormattedValue):
                out.append((sub.lineno, ast.get_source_segment(source, sub.value)))
    return out


_PKG = Path(mk.__file__).parent
_SQL_MODULES = sorted(
    ".".join(p.relative_to(_PKG).with_suffix("").parts) for p in _PKG.rglob("*.py") if any(
        call in p.read_text(encoding="utf-8") for call in ("_run(", "_sql(", "execute(", ".sql(")
    )
)  # fmt: skip


@pytest.mark.parametrize("name", _SQL_MODULES)
def test_sql_text_only_formats_constants(name: str) -> None:
    module = importlib.import_module(f"memkit.{name}")
    parts = _formatted_sql_parts(module)
    bad = [(line, expr) for line, expr in parts if expr not in _ALLOWED_IN_SQL]
    assert not bad, f"values formatted into SQL instead of bound as parameters in {name}: {bad}"
    for const in (
        "COLUMNS",
        "MASKED_COLUMNS",
        "_LESSON_COLUMNS",
        "INDEX_COLUMNS",
    ):  # allowed names are constant text
        if hasattr(module, const):
            assert isinstance(getattr(module, const), str) and "?" not in getattr(module, const).replace(
                "<= ?", ""
            ).replace("? <", "")


def test_lesson_order_is_constant_text(store: mk.MemoryStore) -> None:
    """The lessons' ORDER BY is formatted into SQL: it is one of two constants, never a caller's value."""
    assert store._lesson_order in ("created_at, rowid", "created_at, id")


def test_sql_scan_covers_the_store() -> None:
    store_parts = {"store.read", "store.pipeline", "store.maintain", "store.files", "store.vectors"}
    assert {"store.migrations"} | store_parts <= set(_SQL_MODULES)


def test_sql_guard_catches_a_formatted_value(tmp_path: Path) -> None:
    """The scanner above is not vacuous: it sees an f-string value in a SQL call."""

    class Fake:
        __file__ = str(tmp_path / "probe.py")

    Path(Fake.__file__).write_text('def f(self, ns):\n    self._run(f"SELECT 1 WHERE namespace = {ns}")\n')
    assert _formatted_sql_parts(Fake) == [(2, "ns")]


HOSTILE = [
    "o'neil",
    'say "hi"; DROP TABLE memories; --',
    "'); DELETE FROM memories; --",
    "%",
    "_",
    "a%b_c",
    "用户_87 🙂",
    "\\N",
    "$1 ? :name",
    "x' OR '1'='1",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_names_are_stored_verbatim_and_isolated(text: str, tmp_path: Path) -> None:
    path = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(path) as s:
        s.add("bystander", namespace="other", key="k", now=NOW)
        m = s.add(
            text, namespace=text, key=text, requester=text, tags=[text], access="private", value={text: text},
            now=NOW,
        )  # fmt: skip
        assert s.read(text, namespace=text, requester=text, now=NOW).id == m.id
        assert s.search(text, namespace=text, requester=text, now=NOW, reinforce=False)["id"].to_list() == [
            m.id
        ]
        assert s.search(text, namespace=text, requester="someone", now=NOW).height == 0
        assert s.versions(text, namespace="other").height == 0
    with mk.MemoryStore(path) as s:  # and they survive a reopen
        got = s.get(m.id, requester=text)
        assert (got.namespace, got.key, got.content, got.owner, got.tags, got.value) == (
            text, text, text, text, (text,), {text: text},
        )  # fmt: skip
        assert s.count(text) == 1 and s.count("other") == 1 and s.count() == 2
        assert set(s.audit(namespace=text)["requester"].drop_nulls()) == {text, "someone"}
        s.delete(m.id, requester=text, now=NOW)
        assert s.count("other") == 1 and s.count() == 1


# ------------------------------------------------------------------------------------- corrupt files


def _valid_file(path: Path) -> bytes:
    with mk.MemoryStore(str(path)) as s:
        for i in range(300):
            s.add(f"memory number {i} about tea and trains", namespace="u", now=NOW)
    return path.read_bytes()


@pytest.mark.parametrize(
    "damage",
    ["random", "text", "empty", "header", "truncated_half", "truncated_4k", "zeroed_tail", "garbage_tail"],
)
def test_corrupt_file_raises_a_clear_error_naming_the_file(damage: str, tmp_path: Path) -> None:
    good = _valid_file(tmp_path / "good.duckdb")
    rnd = random.Random(7)
    noise = rnd.randbytes
    bad = {
        "random": noise(20_000),
        "text": b"id,content\n1,hello\n",
        "empty": b"",
        "header": noise(4096) + good[4096:],
        "truncated_half": good[: len(good) // 2],
        "truncated_4k": good[:4096],
        "zeroed_tail": good[:8192] + bytes(len(good) - 8192),
        "garbage_tail": good[:12288] + noise(len(good) - 12288),
    }[damage]
    path = tmp_path / f"{damage}.duckdb"
    path.write_bytes(bad)
    for _ in range(2):  # a failed open releases the file: the second attempt fails the same way
        with pytest.raises(mk.ValidationError) as ei:
            mk.MemoryStore(str(path))
        assert ei.value.field == "path"
        assert str(path) in str(ei.value), str(ei.value)
    assert path.read_bytes() == bad  # opening never "repaired" (overwrote) the user's file


# ------------------------------------------------------------------------------------- read-only opens

_READER = """
import sys, memkit as mk
from datetime import datetime, timezone
try:
    s = mk.MemoryStore(sys.argv[1], read_only=True)
except mk.StoreLocked as e:
    print("StoreLocked", e)
else:
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    print("opened", s.count(), s.search("tea", namespace="u", now=now).height)
    sys.stdout.flush()
    sys.stdin.readline()  # hold the file until the parent says so
"""


def _reader(path: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", _READER, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_read_only_processes_share_a_file_but_not_with_a_writer(tmp_path: Path) -> None:
    path = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(path) as s:
        s.add("green tea", namespace="u", now=NOW)
        s.add("black tea", namespace="u", now=NOW)
        # beside a writer, DuckDB refuses even a read-only open: a clear StoreLocked
        r = subprocess.run([sys.executable, "-c", _READER, path], capture_output=True, text=True, timeout=120)
        assert r.stdout.startswith("StoreLocked"), r.stdout + r.stderr
        assert "read-only" in r.stdout and path in r.stdout
    readers = [_reader(path) for _ in range(2)]
    try:
        for p in readers:  # two read-only processes at once
            assert p.stdout.readline().split() == ["opened", "2", "2"]
        with pytest.raises(mk.StoreLocked, match="read-only"):  # and then no writer
            mk.MemoryStore(path)
    finally:
        for p in readers:
            p.communicate("\n", timeout=60)
    with mk.MemoryStore(path) as s:  # once they are gone, writing works again
        s.add("oolong", namespace="u", now=NOW)
        assert s.count() == 3


def test_read_only_store_reads_but_never_writes(tmp_path: Path) -> None:
    path = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(path) as s:
        m = s.add("用户住在杭州", namespace="u", key="addr", requester="a", access="private", now=NOW)
        s.add("public tea", namespace="u", now=NOW)
        s.add("public tea", namespace="u", importance=0.4, half_life_hours=10, now=NOW)  # merges; weak later
    with mk.MemoryStore(path, read_only=True) as ro:
        assert ro.consolidate("u", now=NOW, dry_run=True).height == 1  # previews work
        assert ro.forget("u", now=NOW + 100 * H, dry_run=True).height == 1
        before = snapshot(ro)
        assert ro.read("addr", namespace="u", requester="a", now=NOW).id == m.id
        assert ro.get(m.id, requester="a", now=NOW).content == "用户住在杭州"
        with pytest.raises(mk.AccessDenied):  # denied reads still raise; they are just not logged
            ro.get(m.id, namespace="u", requester="b", now=NOW)
        assert ro.search("杭州", namespace="u", requester="a", now=NOW + H).height == 3
        writes = [
            lambda: ro.add("x", namespace="u", now=NOW),
            lambda: ro.add_many(pl.DataFrame({"content": ["y"]}), namespace="u", now=NOW),
            lambda: ro.delete(m.id, now=NOW),
            lambda: ro.resolve("addr", namespace="u", keep=m.id, now=NOW),
            lambda: ro.consolidate("u", now=NOW),
            lambda: ro.forget("u", now=NOW + 100 * H),
            ro.compact,  # it did nothing, silently
        ]
        for write in writes:
            with pytest.raises(mk.MemkitError, match="read-only"):
                write()
        assert_unchanged(ro, before)  # no reinforcement, no audit event, no row
        assert ro.search("杭州", namespace="u", now=NOW)["access_count"].to_list() == [0, 0, 0]


@pytest.mark.parametrize("path", [":memory:", "missing.duckdb"])
def test_read_only_needs_an_existing_store(path: str, tmp_path: Path) -> None:
    target = path if path == ":memory:" else str(tmp_path / path)
    with pytest.raises(mk.MemkitError):
        mk.MemoryStore(target, read_only=True)
    assert not (tmp_path / path).exists()


def test_read_only_refuses_a_file_without_memkit_schema(tmp_path: Path) -> None:
    path = str(tmp_path / "plain.duckdb")
    duckdb.connect(path).close()  # a DuckDB file without memkit's tables
    with pytest.raises(mk.MemkitError, match="schema version 0"):
        mk.MemoryStore(path, read_only=True)
    mk.MemoryStore(path).close()  # read-write creates the schema; then read-only works
    with mk.MemoryStore(path, read_only=True) as ro:
        assert ro.count() == 0
    with pytest.raises(mk.ValidationError, match="read_only"):
        mk.MemoryStore(path, read_only=1)  # type: ignore[arg-type]


def test_read_only_beside_a_writer_in_the_same_process_is_store_locked(tmp_path: Path) -> None:
    path = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(path):
        with pytest.raises(mk.StoreLocked, match="already open in this process"):
            mk.MemoryStore(path, read_only=True)
