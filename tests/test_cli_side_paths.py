"""Side paths of the command line and of the files it opens, found by an adversarial audit: each
test is one way a command reported success (or a traceback) while it lost or moved data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import NOW

import memkit as mk
from memkit.cli import main
from memkit.demo import run_demo

T = "--now=2026-01-01T00:00:00+00:00"


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(path) as s:
        s.add("用户住在杭州", namespace="u", key="addr", now=NOW)
        s.add("Alice likes tea", namespace="u", now=NOW)
    return path


@pytest.mark.parametrize("content", ["[]\n", '{"a": 1}\n', "a,b\n1,2\n"])
def test_a_data_file_is_not_opened_as_a_database(tmp_path: Path, content: str, db: str, capsys) -> None:
    """DuckDB opens an existing JSON or CSV file as a database in memory: every write vanished at
    close while the command said it wrote them."""
    target = tmp_path / "target.json"
    target.write_text(content)
    with pytest.raises(mk.ValidationError, match="data file"):
        mk.MemoryStore(str(target))
    exported = tmp_path / "u.jsonl"
    assert main(["export", "--db", db, str(exported), T]) == 0
    assert main(["import", "--db", str(target), "--create", str(exported), T]) == 2
    assert main(["copy", db, str(target)]) == 2
    assert main(["info", str(target)]) == 2
    assert capsys.readouterr().err.count("is a data file, not a DuckDB database") == 3
    assert target.read_text() == content  # untouched, and still there


@pytest.mark.parametrize(
    "argv",
    [
        ["info", ":memory:"],
        ["import", "--db", ":memory:", "--create", "x.jsonl"],
        ["export", "--db", ":memory:", "x.jsonl"],
        ["analyze", "--db", ":memory:"],
        ["copy", "{db}", ":memory:"],
    ],
)
def test_the_cli_refuses_an_in_memory_database(argv: list[str], db: str, capsys) -> None:
    assert main([a.format(db=db) for a in argv]) == 2
    assert "is ':memory:'" in capsys.readouterr().err


def test_copy_to_takes_a_path_object_but_not_memory(db: str, tmp_path: Path) -> None:
    with mk.MemoryStore(db) as s:
        with pytest.raises(mk.ValidationError, match="target"):
            s.copy_to(":memory:")
        assert s.copy_to(tmp_path / "copy.duckdb")["memories"] == 2
    with mk.MemoryStore(tmp_path / "copy.duckdb") as c:
        assert c.count("u") == 2


@pytest.mark.parametrize("kind", ["text", "directory", "empty"])
def test_the_demo_replaces_only_a_database(tmp_path: Path, kind: str) -> None:
    """``memkit demo --db X`` removed X whatever it was (a text file, a pipe, a device)."""
    target = tmp_path / "notes.txt"
    if kind == "directory":
        target.mkdir()
    else:
        target.write_text("" if kind == "empty" else "my notes")
    with pytest.raises(mk.ValidationError, match="db"):
        run_demo(target)
    assert target.is_dir() if kind == "directory" else target.read_text() in ("", "my notes")


def test_an_overwrite_import_never_moves_a_memory_to_another_namespace(db: str, tmp_path: Path) -> None:
    """An import mapped to namespace B with ``overwrite`` replaced namespace A's rows by id: A lost
    them. An id held by another namespace is refused (nothing written); ``new_ids`` copies."""
    out = tmp_path / "u.jsonl"
    with mk.MemoryStore(db) as s:
        s.export(out, namespace="u", now=NOW)
        before = s.frame()
        with pytest.raises(mk.FormatError, match="another namespace"):
            s.import_(out, on_conflict="overwrite", namespace_map={"u": "copy"}, now=NOW)
        assert s.frame().equals(before)
        s.import_(out, on_conflict="overwrite", now=NOW)  # into its own namespace: replaced in place
        assert s.count("u") == 2 and s.count("copy") == 0
        assert set(s.import_(out, on_conflict="new_ids", namespace_map={"u": "copy"}, now=NOW)["action"]) == {
            "added"
        }
        assert s.count("u") == 2 and s.count("copy") == 2


def test_a_header_without_embedding_encoding_imports(db: str, tmp_path: Path) -> None:
    out = tmp_path / "u.jsonl"
    with mk.MemoryStore(db) as s:
        s.export(out, namespace="u", now=NOW)
    lines = out.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    del header["embedding_encoding"]  # optional in the format: a file without embeddings may omit it
    out.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    with mk.MemoryStore() as fresh:
        assert fresh.import_(out, now=NOW)["action"].to_list() == ["added", "added"]


def test_a_newer_schema_is_refused_unchanged(db: str) -> None:
    with mk.MemoryStore(db) as s:
        s._run("UPDATE meta SET value = '99' WHERE name = 'schema_version'")
    before = Path(db).read_bytes()
    with pytest.raises(mk.MemkitError, match="schema version 99, newer"):
        mk.MemoryStore(db)
    assert Path(db).read_bytes() == before


def test_an_export_never_writes_over_the_read_journal(db: str) -> None:
    """The store's read journal (``<file>.reads``) is removed at close: an export there vanished."""
    with mk.MemoryStore(db) as s:
        with pytest.raises(mk.ValidationError, match="path"):
            s.export(f"{db}.reads", namespace="u", now=NOW)


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--namespace", "alice"], "--namespace"),  # a memkit file names its namespaces
        (["--from", "chat", "--namespace", "b", "--namespace-map", "b=c"], "--namespace-map"),
        (["--from", "chat", "--namespace", "b", "--on-conflict", "error"], "--on-conflict"),
        (["--from", "chat", "--namespace", "b", "--reembed"], "--reembed"),
        (["--namespace-map", "u=x", "--namespace-map", "u=y"], "--namespace-map"),  # which one?
    ],
)
def test_an_import_option_that_does_not_apply_is_refused(
    db: str, tmp_path: Path, extra: list[str], named: str, capsys
) -> None:
    """Options the format does not take were ignored with exit 0 (rows landed elsewhere than asked)."""
    out = tmp_path / "u.jsonl"
    with mk.MemoryStore(db) as s:
        s.export(out, namespace="u", now=NOW)
        before = s.frame()
    if "chat" in extra:
        out.write_text('[{"role": "user", "content": "I live in Hangzhou"}]', encoding="utf-8")
    assert main(["import", "--db", db, str(out), T, *extra]) == 2
    assert f"ValidationError: {named}:" in capsys.readouterr().err
    with mk.MemoryStore(db) as s:
        assert s.frame().equals(before)


@pytest.mark.parametrize(
    "bad",
    [
        ["--namespace", ""],
        ["--namespace", "u", "--now", "2026-01-01"],
        ["--namespace", "u", "--requester", "sk-" + "a1" * 20],
    ],
)
def test_an_mcp_server_refused_at_start_leaves_no_new_file(tmp_path: Path, bad: list[str], capsys) -> None:
    pytest.importorskip("mcp")
    new = tmp_path / "new.duckdb"
    assert main(["mcp", "--db", str(new), "--create", *bad]) == 2
    assert "memkit: ValidationError" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # no database, log, journal or lock file left behind


def test_memkit_data_is_still_a_command(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["data", "--help"])
    assert "--no-download" in capsys.readouterr().out
