"""`memkit demo` runs end to end on a DuckDB file and shows what it claims to show."""

from __future__ import annotations

import io
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

import memkit as mk
import memkit.sample
from memkit.demo import run_demo


def test_demo_runs_and_shows_each_section(tmp_path: Path) -> None:
    out = io.StringIO()
    db = tmp_path / "demo.duckdb"
    facts = run_demo(db, out=out)
    text = out.getvalue()
    sections = ["1. Loaded", "2. Recall", "2b.", "3. Decay", "3b.", "4. Conflict", "4b.", "5. Namespace"]
    sections += ["6. Access", "7. Consolidation", "7b.", "8. Forgetting", "8b.", "8c.", "9. Audit"]
    for section in sections:
        assert f"== {section}" in text
    assert facts["loaded"] == 270
    assert facts["conflict_status"] == "conflict"
    assert facts["old"] == "用户住在杭州滨江区" and facts["resolved"] == "用户搬到了上海浦东新区"
    assert facts["leak"] is False and facts["denied"] is True
    assert facts["tea_rank"] == 0
    assert facts["merged"] > 0 and facts["merged_again"] == 0  # consolidation is idempotent
    assert facts["forgotten"] > 0 and facts["remaining"] <= 30  # the keyword weight brings 乌龙茶 to the top
    with mk.MemoryStore(str(db)) as store:  # the file persists and reopens
        assert store.count() == 271 + facts["merged"] - facts["forgotten"]
        assert (
            store.read(
                "user.address", namespace="user_87", now=mk.sample.SAMPLE_NOW + timedelta(days=1)
            ).content
            == facts["resolved"]
        )


def test_demo_is_rerunnable_and_deterministic(tmp_path: Path) -> None:
    first, second = io.StringIO(), io.StringIO()
    run_demo(tmp_path / "d.duckdb", out=first)
    run_demo(tmp_path / "d.duckdb", out=second)

    def strip(s: str) -> list[str]:  # ids, load time and memory ids differ between runs
        return [
            line
            for line in s.splitlines()
            if "ms (" not in line and "memory " not in line and '"ids"' not in line
        ]

    assert strip(first.getvalue()) == strip(second.getvalue())


def test_cli_demo_subprocess(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "memkit", "demo", "--db", str(tmp_path / "x.duckdb")],
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "== 4. Conflict" in r.stdout


def test_cli_reports_memkit_errors(tmp_path: Path) -> None:
    missing = tmp_path / "h.duckdb"
    for cmd in (["info", str(missing)], ["analyze", "--db", str(missing)], ["reembed", "--db", str(missing)],
                ["export", str(tmp_path / "o.jsonl"), "--db", str(missing)]):  # fmt: skip
        r = subprocess.run([sys.executable, "-m", "memkit", *cmd], capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "NotFound" in r.stderr and "does not exist" in r.stderr, (cmd, r.stderr)
        assert not missing.exists()  # the CLI never creates a database by accident


def test_the_demo_replaces_only_its_own_file(tmp_path: Path) -> None:
    """`memkit demo --db FILE` deleted whatever DuckDB file was there: a real memory store, or another
    application's database. It replaces a demo's file or an empty store, and refuses anything else."""
    import duckdb

    mine = tmp_path / "mine.duckdb"
    with mk.MemoryStore(str(mine)) as s:
        s.add("我的真实记忆：周五和客户开会", namespace="user_87")
    other = tmp_path / "analytics.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE sales AS SELECT 1 AS x")
    con.close()
    for db in (mine, other):
        before = db.read_bytes()
        r = subprocess.run([sys.executable, "-m", "memkit", "demo", "--db", str(db)],
                           capture_output=True, text=True, timeout=120)  # fmt: skip
        assert r.returncode == 2 and "not replaced" in r.stderr, r.stderr
        assert db.read_bytes() == before
    empty = tmp_path / "empty.duckdb"
    mk.MemoryStore(str(empty)).close()
    run_demo(empty, out=io.StringIO())  # an empty store is replaced, as a demo's is (rerunnable, above)
    with mk.MemoryStore(str(empty), read_only=True) as s:
        assert s.count() > 200


def test_the_demo_replaces_its_own_file_from_an_older_memkit(tmp_path: Path) -> None:
    """A demo file an older memkit wrote needs an upgrade before a read-only open: `make demo` after
    upgrading memkit still replaces it."""
    import duckdb

    from memkit.store.migrations import MIGRATIONS

    db = tmp_path / "demo.duckdb"
    run_demo(db, out=io.StringIO())
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = ? WHERE name = 'schema_version'", [str(len(MIGRATIONS) - 1)])
    con.close()
    with pytest.raises(mk.MemkitError, match="read-only open cannot upgrade"):  # the test can fail
        mk.MemoryStore(str(db), read_only=True)
    assert run_demo(db, out=io.StringIO())["loaded"] == 270
    # someone's store of that older memkit is refused, and not upgraded by the look (an older
    # memkit could no longer open it)
    theirs = tmp_path / "theirs.duckdb"
    with mk.MemoryStore(str(theirs)) as s:
        s.add("我的真实记忆", namespace="user_87")
    con = duckdb.connect(str(theirs))
    con.execute("UPDATE meta SET value = ? WHERE name = 'schema_version'", [str(len(MIGRATIONS) - 1)])
    con.execute("CHECKPOINT")
    con.close()
    before = theirs.read_bytes()
    with pytest.raises(mk.ValidationError, match="not replaced"):
        run_demo(theirs, out=io.StringIO())
    assert theirs.read_bytes() == before


@pytest.mark.parametrize("holder", ["writer", "reader"])
def test_the_demo_never_touches_a_store_another_process_has_open(tmp_path: Path, holder: str) -> None:
    """A new, empty store open in another process (a server just started), or a demo's file another
    process reads: the demo's look took it for replaceable and deleted the file under the process,
    which then lost what it wrote, or kept reading a deleted file (helpers 71, 72)."""
    db = tmp_path / "store.duckdb"
    if holder == "reader":
        run_demo(db, out=io.StringIO())
    opened = f"mk.MemoryStore({str(db)!r}, read_only={holder == 'reader'})"
    code = (f"import memkit as mk, sys; s = {opened}; print('open', flush=True); sys.stdin.readline(); "
            "s.add('I am allergic to penicillin', namespace='u') if not s.read_only else None"
            "; s.close()")  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "open"
        before = db.read_bytes()
        with pytest.raises(mk.ValidationError, match="not replaced"):
            run_demo(db, out=io.StringIO())
        assert db.read_bytes() == before
    finally:
        proc.communicate("go\n", timeout=60)
    with mk.MemoryStore(str(db), read_only=True) as s:
        assert s.count() == (1 if holder == "writer" else 226)  # 271 added + 13 merged - 58 forgotten


def test_what_a_user_added_to_the_demo_file_survives_as_previous(tmp_path: Path) -> None:
    db = tmp_path / "demo.duckdb"
    run_demo(db, out=io.StringIO())
    with mk.MemoryStore(str(db)) as s:
        s.add("my own note, written into the demo file", namespace="alice_private")
    run_demo(db, out=io.StringIO())
    with mk.MemoryStore(str(db.with_name("demo.duckdb.previous")), read_only=True) as s:
        assert s.frame("alice_private")["content"].to_list() == ["my own note, written into the demo file"]
