"""memkit/store/review.py, guard.py, forgotten.py: a namespace's lessons are those stored under its
plain name and under its log name (the pseudonym of a namespace that holds a secret by the store's own
rules, ``extra_secret_patterns`` included: memkit/store/names.py). A pattern added after a lesson
leaves it under the plain name; a lesson learned under the pattern is stored under the pseudonym.
``lessons(ns)``, the lesson check of a write (MG308), ``search(guard=True)`` and an erasure's
quoted reasons find both. Each test failed before the fix."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest
from conftest import AngleEmbedder

import memkit as mk
from memkit.store import names

NOW = datetime(2026, 1, 1, tzinfo=UTC)
H = timedelta(hours=1)
ACME = mk.GuardParams(extra_secret_patterns=(r"ACME-[0-9]{6}",))
NS = "team-ACME-123456"
A, B, C, D, E = ("User is in a meeting", "User is in a meeting now", "User lives in Hangzhou",
                 "Ignore the meeting", "Ignore the meeting, really")  # fmt: skip
L = "User is in a meeting today"
REASON = "it repeats 'User lives in Hangzhou' to confuse"


@pytest.fixture(params=["duckdb", "postgres"])
def where(request: pytest.FixtureRequest) -> str:
    """A fresh store's path: DuckDB in memory, or a fresh schema of the session's PostgreSQL server."""
    return ":memory:" if request.param == "duckdb" else request.getfixturevalue("url")


def _store(where: str) -> mk.MemoryStore:
    return mk.MemoryStore(where, embedder=AngleEmbedder({A: 0, B: 10, L: 15, C: 80, D: 40, E: 42}))


def _guarded(s: mk.MemoryStore) -> list[str]:
    """What ``search(guard=True)`` returns in NS (hits near a lesson are dropped), once the tests'
    memories are written (a merge is there from its merge event)."""
    hits = s.search("meeting", namespace=NS, k=10, now=NOW + 5 * H, reinforce=False, guard=True)
    return hits["content"].to_list()


def test_a_lesson_learned_before_the_pattern_still_counts(where: str) -> None:
    with _store(where) as s:
        x = s.add(C, namespace=NS, now=NOW)
        y = s.add(D, namespace=NS, now=NOW)
        s.add(E, namespace=NS, now=NOW)
        lid = s.learn_lesson(y.id, reason=REASON, namespace=NS, now=NOW)
        assert E not in _guarded(s)  # (cached under the old rules)
        s.guard = ACME  # the pattern from now on: the lesson stays under the plain name
        assert s.lessons(NS)["id"].to_list() == [lid]
        assert E not in _guarded(s)
        s.delete(x.id, namespace=NS, now=NOW + H)  # the lesson's reason quotes the erased text whole
        assert s.lessons().select("namespace", "reason").rows() == [(NS, "[erased]")]


def test_a_lesson_learned_under_the_pattern_counts_in_its_namespace(where: str) -> None:
    with _store(where) as s:
        x = s.add(C, namespace=NS, now=NOW)
        a = s.add(A, namespace=NS, now=NOW)
        s.add(B, namespace=NS, now=NOW + timedelta(minutes=1))
        (merged,) = s.consolidate(NS, now=NOW + timedelta(minutes=2))["merged_id"].to_list()
        near = s.add(L, namespace=NS, now=NOW + timedelta(minutes=3))  # 5 degrees from the merge (B)
        assert B in _guarded(s)  # no lesson yet (what the cache holds)
        s.guard = ACME  # the rows stay; what the store writes of NS now names it by its pseudonym
        lid = s.learn_lesson(near.id, reason=REASON, namespace=NS, now=NOW + H)
        assert s.lessons().select("id", "namespace").rows() == [(lid, names.log_space(NS, s._secret))]
        assert s.lessons(NS)["id"].to_list() == [lid]
        assert B not in _guarded(s)  # the merge is near the lesson: dropped
        s.unlearn(lid, now=NOW + H)  # the cache forgets it too (its namespace is the pseudonym)
        assert B in _guarded(s) and s.lessons(NS).is_empty()
        lid = s.learn_lesson(near.id, reason=REASON, namespace=NS, now=NOW + 2 * H)
        # erasing a member re-derives the merge from the other: a write there, checked against the lessons
        s.delete(a.id, namespace=NS, now=NOW + 3 * H)
        row = s.frame(NS).filter(pl.col("id") == merged).row(0, named=True)
        assert (row["content"], row["status"]) == (B, "quarantined")
        assert "MG308" in row["findings"]
        s.delete(x.id, namespace=NS, now=NOW + 4 * H)  # the lesson's reason quotes it whole
        assert s.lessons(NS).select("id", "reason").rows() == [(lid, "[erased]")]
