"""A store's guard is not saved with it: what one process (or an earlier guard) logged under a pattern's
pseudonym must still be found once the pattern is gone — lessons, and the digests an erasure removes.
Also: events naming an erased memory lose its digests in any namespace, the lesson cache follows a
rolled-back transaction, and an embedder's buffer behind ``__array__`` is never kept. Each test failed
before its fix (helper 91's review)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
from conftest import AngleEmbedder

import memkit as mk
from memkit.embed.hashing import check_embeddings
from memkit.store.audit import digest

NOW = datetime(2026, 1, 1, tzinfo=UTC)
H = timedelta(hours=1)
ACME = mk.GuardParams(extra_secret_patterns=(r"ACME-[0-9]{6}",))
NS = "team-ACME-123456"
TEXT = "I am allergic to zebrafoxtrotqu peanuts"


def test_an_erasure_finds_what_was_logged_under_a_pattern_now_gone() -> None:
    with mk.MemoryStore() as s:
        m = s.add(TEXT, namespace=NS, now=NOW)
        s.guard = ACME  # NS is logged as a pseudonym from here
        s.search(TEXT, namespace=NS, now=NOW)
        s.log_context([m.id], namespace=NS, now=NOW, topic=TEXT)
        s.guard = mk.GuardParams()  # (or reopened without it)
        s.delete(m.id, namespace=NS, now=NOW + H)
        assert digest(TEXT) not in s.audit().write_json()


def test_a_lesson_learned_under_a_pattern_outlives_the_pattern() -> None:
    c = "User lives in Hangzhou"
    with mk.MemoryStore() as s:
        x = s.add(c, namespace=NS, now=NOW)
        y = s.add("Ignore the meeting", namespace=NS, now=NOW)
        s.guard = ACME
        lid = s.learn_lesson(y.id, reason=f"it repeats '{c}' to confuse", namespace=NS, now=NOW)
        s.guard = mk.GuardParams()
        assert s.lessons(NS)["id"].to_list() == [lid]
        s.delete(x.id, namespace=NS, now=NOW + H)
        assert s.lessons()["reason"].to_list() == ["[erased]"]


def test_an_event_naming_the_erased_memory_loses_its_digests_in_any_namespace() -> None:
    with mk.MemoryStore() as s:
        m = s.add(TEXT, namespace="u", key="user.allergy", now=NOW)
        s.log_context([m.id], namespace="support", now=NOW, topic=TEXT, key_used="user.allergy")
        s.delete(m.id, namespace="u", now=NOW + H)
        assert json.loads(s.audit(op="context")["detail"][0]) == {
            "ids": [m.id],
            "topic": None,
            "key_used": None,
        }


def test_the_lesson_cache_follows_a_rolled_back_transaction() -> None:
    a, b, c = "Ignore the meeting", "Ignore the meeting, really", "Ignore the meeting, truly"

    def status(s: mk.MemoryStore, text: str) -> list[str]:
        return s.frame("u").filter(pl.col("content") == text)["status"].to_list()

    with mk.MemoryStore(embedder=AngleEmbedder({a: 0, b: 2, c: 4})) as s:
        m = s.add(a, namespace="u", now=NOW)
        try:
            with s.transaction():
                s.learn_lesson(m.id, reason="bad", namespace="u", now=NOW)
                s.add(b, namespace="u", now=NOW)  # checked against the uncommitted lesson
                raise RuntimeError("abort")
        except RuntimeError:
            pass
        s.add(c, namespace="u", now=NOW + H)
        assert s.lessons("u").height == 0 and status(s, c) == ["active"]
        lid = s.learn_lesson(m.id, reason="bad", namespace="u", now=NOW + H)
        try:
            with s.transaction():
                s.unlearn(lid, now=NOW + H)
                s.add("something", namespace="u", now=NOW + H)  # the cache, read without the lesson
                raise RuntimeError("abort")
        except RuntimeError:
            pass
        s.add(b, namespace="u", now=NOW + 2 * H)  # the lesson is back: a near text is held
        assert s.lessons("u").height == 1 and status(s, b) == ["quarantined"]


class _Kept:
    """An object exposing a buffer it keeps through ``__array__`` (a CPU tensor does the same)."""

    def __init__(self, rows: list[list[float]]) -> None:
        self.buf = np.array(rows, np.float32)

    def __array__(self, dtype=None, copy=None):  # type: ignore[no-untyped-def]
        return self.buf


def test_a_buffer_behind_array_is_neither_changed_nor_kept() -> None:
    kept = _Kept([[3.0, 4.0]])
    assert check_embeddings(kept, 1, 2).tolist() == [[0.6000000238418579, 0.800000011920929]]
    assert kept.buf.tolist() == [[3.0, 4.0]]
    unit = _Kept([[0.6, 0.8]])
    assert not np.shares_memory(check_embeddings(unit, 1, 2), unit.buf)
