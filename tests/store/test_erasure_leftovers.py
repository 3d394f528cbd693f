"""What an erasure used to leave behind (an audit's findings): the cached vector of a merge's survivor,
the text of a file whose compaction failed or never ran, a memory's key in the ``context`` events that
list it, an erased tag in the index's code table. Each test failed before the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import memkit as mk
import memkit.store.files as files
from memkit.embed import content_hash

NOW = datetime(2026, 1, 1, tzinfo=UTC)
H = timedelta(hours=1)
MARK = "zebra-marker-7781"  # unique, greppable
TEXT = f"{MARK} lives in Lisbon"
ROOT = Path(mk.__file__).resolve().parents[1]  # the memkit under test, for a child process
# texts this file merges on purpose differ in fact tokens (memkit.facts): merged by cosine alone
COSINE_ONLY = mk.MergeParams(distinct_facts=False)


class CachedHash(mk.HashEmbedder):
    """A hash embedder the store caches by text, as it does a model's (``cache = True``)."""

    cache = True

    def __init__(self) -> None:
        super().__init__()
        self.name = "cached-hash-v1"


@pytest.fixture(params=["duckdb", "postgres"])
def where(request: pytest.FixtureRequest) -> str:
    """A fresh store's path: DuckDB in memory, or a fresh schema of the session's PostgreSQL server."""
    return ":memory:" if request.param == "duckdb" else request.getfixturevalue("url")


def _in_file(path: Path, needle: str = MARK) -> bool:
    """Whether ``needle`` is in the database file or anything beside it (log, journal, leftovers)."""
    return any(needle.encode() in p.read_bytes() for p in path.parent.glob(path.name + "*") if p.is_file())


def _cached(s: mk.MemoryStore) -> set[str]:
    return {r[0] for r in s._run("SELECT content_hash FROM embed_cache")}


def _held(s: mk.MemoryStore) -> set[str]:
    return {r[0] for r in s._run("SELECT content_hash FROM memories")}


def _two_files(path: Path) -> None:
    """A file store with the marked memory (first) and another."""
    with mk.MemoryStore(str(path)) as s:
        s.add(TEXT, namespace="u", now=NOW)
        s.add("another memory", namespace="u", now=NOW)


def _marked(s: mk.MemoryStore) -> str:
    return s.frame().filter(s.frame()["content"] == TEXT)["id"][0]


# ---------------------------------------------------------------------------------- cached vectors
def test_erasing_a_merges_survivor_drops_its_cached_vector(where: str) -> None:
    """The merged text equals the survivor's: the merge held its hash until it was re-derived."""
    with mk.MemoryStore(where, embedder=CachedHash()) as s:
        s.add("The user likes green tea in the morning", namespace="u", now=NOW)
        y = s.add(f"The user likes green tea in the morning. {TEXT}", namespace="u", now=NOW + H)
        merged = s.consolidate("u", threshold=0.5, now=NOW + 2 * H, params=COSINE_ONLY)
        assert merged["content"].to_list() == [y.content]  # y is the survivor: its text is the merge's
        s.delete(y.id, namespace="u", now=NOW + 3 * H)
        assert content_hash(y.content) not in _cached(s)
        assert _cached(s) <= _held(s)  # no cached vector of a text no memory holds
        assert not [c for c in s.frame()["content"] if MARK in c]
        if where == ":memory:":  # nothing to compact, nothing recorded
            assert s._run("SELECT * FROM meta WHERE name = 'compact_due'") == []


def test_erasing_a_member_of_a_merge_of_merges_drops_every_cached_vector_of_its_text(where: str) -> None:
    with mk.MemoryStore(where, embedder=CachedHash()) as s:
        s.add("The user likes green tea in the morning", namespace="u", now=NOW)
        b = s.add(f"The user likes green tea in the morning. {TEXT}", namespace="u", now=NOW)
        s.consolidate("u", threshold=0.5, now=NOW + H, params=COSINE_ONLY)
        s.add("The user likes green tea in the morning. Bob is 40", namespace="u", now=NOW + 2 * H)
        top = s.consolidate("u", threshold=0.5, now=NOW + 3 * H, params=COSINE_ONLY)
        assert MARK in top["content"][0]  # a merge of the first merge holds the text too
        s.delete(b.id, namespace="u", now=NOW + 4 * H)
        assert content_hash(b.content) not in _cached(s)
        assert _cached(s) <= _held(s)
        assert not [c for c in s.frame()["content"] if MARK in c]


# -------------------------------------------------------------------------------------- compaction
def _fail_compaction(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rewritten file cannot take the old one's place (as on a full disk)."""
    real = os.replace

    def replace(src: Any, dst: Any) -> None:
        if ".compact-" in str(src):
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(files.os, "replace", replace)


def test_a_failed_compaction_warns_the_erasure_stands_and_closing_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.duckdb"
    _two_files(path)
    with mk.MemoryStore(str(path)) as s:
        gone = _marked(s)
        with monkeypatch.context() as mp:
            _fail_compaction(mp)
            with pytest.warns(RuntimeWarning, match="not compacted after the erasure.*store.compact"):
                s.delete(gone, namespace="u", now=NOW + H)  # done: a warning, not an error
            assert s.count() == 1 and _in_file(path)  # erased from the tables, not yet from the file
            with pytest.raises(mk.NotFound):
                s.delete(gone, namespace="u", now=NOW + H)
        assert s.add("still writable", namespace="u", now=NOW + 2 * H).status == "active"
    assert not _in_file(path)  # closing compacted it
    with mk.MemoryStore(str(path)) as s:
        assert s.count() == 2 and s._run("SELECT * FROM meta WHERE name = 'compact_due'") == []


def test_a_compaction_that_keeps_failing_is_retried_by_the_next_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.duckdb"
    _two_files(path)
    with monkeypatch.context() as mp:
        _fail_compaction(mp)
        s = mk.MemoryStore(str(path))
        with pytest.warns(RuntimeWarning, match="after the erasure"):
            s.delete(_marked(s), namespace="u", now=NOW + H)
        with pytest.warns(RuntimeWarning, match="on close"):
            s.close()
    assert _in_file(path)
    with mk.MemoryStore(str(path), read_only=True) as ro:  # a reader neither compacts nor fails
        assert ro.count() == 1
    assert _in_file(path)
    with mk.MemoryStore(str(path)) as s:
        assert not _in_file(path)  # compacted as it opened
        assert s.count() == 1


def test_a_process_killed_before_its_compaction_leaves_the_file_due(tmp_path: Path) -> None:
    path = tmp_path / "m.duckdb"
    _two_files(path)
    script = f"""
import os
from datetime import datetime, timezone
import memkit as mk
s = mk.MemoryStore({str(path)!r})
gone = s.frame().filter(s.frame()["content"] == {TEXT!r})["id"][0]
type(s).compact = lambda self: os._exit(9)  # killed after the erasure's commit, before compaction
s.delete(gone, namespace="u", now=datetime(2026, 1, 1, 1, tzinfo=timezone.utc))
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=300)
    assert run.returncode == 9, run.stderr[-2000:]
    assert _in_file(path)
    with mk.MemoryStore(str(path)) as s:
        assert s.count() == 1
        assert not _in_file(path)  # the open compacted it


def test_compact_on_erase_false_defers_to_compact_but_the_file_stays_due(tmp_path: Path) -> None:
    path = tmp_path / "m.duckdb"
    _two_files(path)
    with mk.MemoryStore(str(path), compact_on_erase=False) as s:
        s.delete(_marked(s), namespace="u", now=NOW + H)
    assert _in_file(path)  # the user's choice: not even on close
    with mk.MemoryStore(str(path), compact_on_erase=False) as s:
        assert _in_file(path)  # nor on open
    with mk.MemoryStore(str(path)) as s:  # a store with the default compacts what was left due
        assert not _in_file(path)
    other = tmp_path / "n.duckdb"
    _two_files(other)
    with mk.MemoryStore(str(other), compact_on_erase=False) as s:
        s.delete(_marked(s), namespace="u", now=NOW + H)
        s.compact()
        assert not _in_file(other) and s._run("SELECT * FROM meta WHERE name = 'compact_due'") == []


# ------------------------------------------------------------------------------------------ the log
def test_an_erasure_takes_the_key_out_of_the_context_events_that_list_it(where: str) -> None:
    with mk.MemoryStore(where) as s:
        g = s.add(TEXT, namespace="u", key=f"user.{MARK}", now=NOW)
        other = s.add("another memory", namespace="u", key="user.other", now=NOW)
        s.log_context([g.id, other.id], namespace="u", now=NOW, key=g.key, topic=MARK,
                      dropped=[{"id": g.id, "reason": "over budget"}], n=3)  # fmt: skip
        s.log_context([other.id], namespace="u", now=NOW, key=other.key, topic="other")
        s.delete(g.id, namespace="u", now=NOW + H)
        listed, untouched = (json.loads(d) for d in s.audit(op="context")["detail"])
        assert MARK not in json.dumps(listed)
        assert listed["ids"] == [g.id, other.id] and listed["dropped"][0]["id"] == g.id  # ids stay
        assert listed["key"] is None and listed["topic"].startswith("b2:") and listed["n"] == 3
        assert untouched == {"ids": [other.id], "key": "user.other", "topic": "other"}
        assert MARK not in s.audit().write_json()


def test_no_key_of_a_context_event_stays_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "m.duckdb"
    with mk.MemoryStore(str(path)) as s:
        g = s.add(TEXT, namespace="u", key=f"user.{MARK}", now=NOW)
        s.log_context([g.id], namespace="u", now=NOW, key=g.key, topic=MARK)
        s.delete(g.id, namespace="u", now=NOW + H)
        assert not _in_file(path)
    assert not _in_file(path)


# ------------------------------------------------------------------------------- the index in memory
def test_the_index_forgets_a_tag_no_live_memory_carries() -> None:
    with mk.MemoryStore() as s:
        gone = s.add("call the clinic", namespace="u", tags=[f"{MARK}-tag", "shared"], now=NOW)
        kept = s.add("water the plants", namespace="u", tags=["shared"], now=NOW)
        s.delete(gone.id, namespace="u", now=NOW + H)
        codes = s._index.tag_codes.code
        assert not [t for t in codes if isinstance(t, str) and MARK in t] and "shared" in codes
        assert s.search("plants", namespace="u", tags=["shared"], now=NOW + H)["id"].to_list() == [kept.id]
        assert s.search("clinic", namespace="u", tags=[f"{MARK}-tag"], now=NOW + H).is_empty()
        new = s.add("buy bread", namespace="u", tags=["fresh"], now=NOW + H)  # a new tag, a new code
        assert s.search("bread", namespace="u", tags=["fresh"], now=NOW + H)["id"].to_list() == [new.id]
        assert s.search("plants", namespace="u", tags=["fresh"], now=NOW + H)["id"].to_list() == [new.id]
