"""A namespace's events under its pseudonym, and an erasure seen by another store on one server.

- ``audit(namespace)`` finds the events logged under the namespace's pseudonym whatever the rules now
  (:func:`memkit.store.names.log_names`), as the lessons and the erasure's cleanup did already;
- ``forget``'s report names an unforeseen cascade's namespace as given, not as the log names it;
- on PostgreSQL, another store's process drops what an erasure drops from memory (its cached query
  vectors, the word caches) when its next search sees the erasure (:mod:`memkit.store.sync`).

Each test failed before its fix (helper 97, after the audit of helper 92)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from conftest import AngleEmbedder

import memkit as mk
import memkit.store.maintain as maintain
from memkit.embed import hashing
from memkit.forget import plan_forget
from memkit.text import light_stem

NOW = datetime(2026, 1, 1, tzinfo=UTC)
H = timedelta(hours=1)
ACME = mk.GuardParams(extra_secret_patterns=(r"ACME-[0-9]{6}",))
NS = "team-ACME-123456"
WORD = "zebrafoxtrotqu"
TEXT = f"I am allergic to {WORD} peanuts"


def _cached(call: object, *args: object) -> bool:
    """Whether ``call(*args)`` is answered from its cache (and so holds what it was asked)."""
    hits = call.cache_info().hits  # type: ignore[attr-defined]
    call(*args)  # type: ignore[operator]
    return call.cache_info().hits > hits  # type: ignore[attr-defined]


def _logged_under_a_pattern_now_gone(s: mk.MemoryStore) -> str:
    """An add under the default rules, then a search and a read under a pattern that makes NS a
    secret (another process's, or an earlier open's ``settings=``), then the pattern gone again."""
    m = s.add("User likes tea", namespace=NS, requester="alice", access="public", now=NOW)
    s.guard = ACME  # NS is logged by its pseudonym from here
    s.search("tea", namespace=NS, requester="alice", now=NOW)
    s.get(m.id, namespace=NS, requester="alice", now=NOW)
    s.guard = mk.GuardParams()  # a guard is not saved with the store
    return m.id


@pytest.mark.parametrize("where", ["duckdb", "postgres"])
def test_audit_of_a_namespace_finds_what_was_logged_under_its_pseudonym(where: str, request) -> None:
    path = ":memory:" if where == "duckdb" else request.getfixturevalue("url")
    with mk.MemoryStore(path) as s:
        _logged_under_a_pattern_now_gone(s)
        assert s.audit()["namespace"].to_list() == [NS, "[SECRET:6fe47100]", "[SECRET:6fe47100]"]
        assert s.audit(NS)["op"].to_list() == ["add", "search", "read"]
        assert s.audit(NS, requester="alice")["op"].to_list() == ["add", "search", "read"]
        assert s.audit(NS, op="read").height == 1
        assert s.audit("other").is_empty()  # a pseudonym reaches no other namespace's events
        s.guard = ACME  # and under the pattern, the events logged before it by the plain name
        assert s.audit(NS)["op"].to_list() == ["add", "search", "read"]


def test_forget_reports_an_unforeseen_cascade_in_the_namespace_as_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cascade the plan did not list (here: a plan that lists none) used to take its namespace from
    its ``forget`` event, which names a namespace holding a secret by its pseudonym."""
    a, b, c = "User is in a meeting", "User is in a meeting now", "User lives in Hangzhou"
    with mk.MemoryStore(embedder=AngleEmbedder({a: 0, b: 10, c: 80})) as s:
        s.add(a, namespace=NS, importance=0.4, layer="short_term", now=NOW)
        s.add(b, namespace=NS, importance=0.4, layer="short_term", now=NOW + timedelta(minutes=5))
        s.add(c, namespace=NS, importance=0.8, layer="long_term", now=NOW)
        merged = s.consolidate(NS, now=NOW + timedelta(minutes=10))["merged_id"][0]
        s.guard = ACME  # the rows stay forgettable; the log names NS by its pseudonym
        unforeseen = lambda frame, policy, at: plan_forget(frame, policy, at).filter(reason="weak")
        monkeypatch.setattr(maintain, "plan_forget", unforeseen)
        report = s.forget(NS, now=NOW + 24 * H)
        assert report["reason"].to_list() == ["weak", "cascade", "cascade"]
        assert report["namespace"].to_list() == [NS] * 3
        assert report["detail"][1:].to_list() == [f"member of merged memory {merged}"] * 2
        assert s.audit(op="forget")["namespace"].to_list() == ["[SECRET:6fe47100]"] * 3  # the log's


# ------------------------------------------------------------------------ two stores on one server
def test_an_erasure_elsewhere_drops_this_stores_cached_query_vectors(url: str) -> None:
    with mk.MemoryStore(url) as a, mk.MemoryStore(url) as b:
        m = a.add(TEXT, namespace="u", now=NOW)
        b.search(TEXT, namespace="u", now=NOW, reinforce=False)  # b's query cache holds the text
        a.delete(m.id, namespace="u", now=NOW + H)
        b.embedder.embed([TEXT])  # (one process here: a's erasure emptied the word caches already)
        assert _cached(light_stem, WORD)  # the test can fail
        b.search("tea", namespace="u", now=NOW + H, reinforce=False)  # b sees the erasure
        dim = b.embedder.dim
        words = [(hashing._bucket, "w:" + WORD, dim), (hashing._trigrams, WORD, 0.5), (light_stem, WORD)]
        assert not any(_cached(*c) for c in words)
        assert not _cached(b._embed_query, TEXT)  # (after the words: a miss embeds the text again)
        assert b.search(TEXT, namespace="u", now=NOW + H, reinforce=False).is_empty()


def test_an_erasure_elsewhere_of_a_memory_this_store_never_indexed_drops_them_too(url: str) -> None:
    """Written and erased between two of b's searches: b's index never held it, b's cache may."""
    with mk.MemoryStore(url) as a, mk.MemoryStore(url) as b:
        b.search(TEXT, namespace="u", now=NOW, reinforce=False)  # asked before it was written
        m = a.add(TEXT, namespace="u", now=NOW)
        a.delete(m.id, namespace="u", now=NOW + H)
        b.search("tea", namespace="u", now=NOW + H, reinforce=False)
        assert not _cached(b._embed_query, TEXT)


def test_a_write_elsewhere_keeps_this_stores_cached_query_vectors(url: str) -> None:
    """Only an erasure drops them: other changes (writes, status changes) leave the cache alone."""
    with mk.MemoryStore(url) as a, mk.MemoryStore(url) as b:
        b.search(TEXT, namespace="u", now=NOW, reinforce=False)
        a.add("User likes green tea", namespace="u", now=NOW)
        b.search("tea", namespace="u", now=NOW, reinforce=False)
        assert _cached(b._embed_query, TEXT)
