"""memkit/store/migrations.py ``log_patterns``: the audit log's namespaces follow the opening store's own
``extra_secret_patterns`` when they differ from those last applied (``meta.log_patterns``), and a copy's."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import memkit as mk

NOW = datetime(2026, 1, 1, tzinfo=UTC)
ZQX = mk.GuardParams(extra_secret_patterns=(r"ZQX\d{4}",))


def _spaces(s: mk.MemoryStore) -> set[str]:
    return {*s.audit()["namespace"], *s._sql("SELECT namespace FROM lessons")["namespace"]}


def test_a_store_with_a_new_pattern_renames_the_older_events(tmp_path: Path) -> None:
    path = str(tmp_path / "t.duckdb")
    with mk.MemoryStore(path) as s:  # no extra patterns: the namespace is logged as it is
        m = s.add("hello there", namespace="proj-ZQX9931", now=NOW)
        s.learn_lesson(m.id, namespace="proj-ZQX9931", reason="test", now=NOW)
    with mk.MemoryStore(path, guard=ZQX) as s:
        s.get(m.id, namespace="proj-ZQX9931", now=NOW)
        assert not any("ZQX" in ns for ns in _spaces(s))
        assert {"add", "read"} <= set(s.audit("proj-ZQX9931")["op"])  # still found by its name
    with mk.MemoryStore(path) as s:  # without the pattern it is logged raw again...
        s.get(m.id, namespace="proj-ZQX9931", now=NOW)
        assert "proj-ZQX9931" in _spaces(s)
    with mk.MemoryStore(path, guard=ZQX) as s:  # ...and the store with it hides it again
        assert not any("ZQX" in ns for ns in _spaces(s))


def test_a_copy_names_the_log_by_the_targets_patterns(tmp_path: Path) -> None:
    with mk.MemoryStore(str(tmp_path / "src.duckdb")) as src:
        src.add("hello there", namespace="proj-ZQX9931", now=NOW)
        with mk.MemoryStore(str(tmp_path / "dst.duckdb"), guard=ZQX) as dst:
            src.copy_to(dst)
            assert not any("ZQX" in ns for ns in _spaces(dst)) and dst.count("proj-ZQX9931") == 1


def test_a_store_without_patterns_writes_nothing_on_open(tmp_path: Path) -> None:
    path = str(tmp_path / "t.duckdb")
    with mk.MemoryStore(path) as s:
        s.add("hello there", namespace="proj-ZQX9931", now=NOW)
        marks = s._run("SELECT value FROM meta WHERE name = 'log_patterns'")
    assert marks == []  # never recorded: nothing to rename, no write
