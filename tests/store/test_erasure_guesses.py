"""memkit/store/forgotten.py + memkit/embed/hashing.py: nothing an erasure leaves lets one confirm a
guess of what was erased — no digest of the erased text in the log (a search for it, a caller's string,
an agent's turn), no word of it in the process's caches, no quote of it in a lesson's reason. Each
test failed before the fix."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import memkit as mk
import memkit.embed.hashing as hashing
from memkit.facts import fact_tokens
from memkit.store.audit import digest
from memkit.text import light_stem

NOW = datetime(2026, 1, 1, tzinfo=UTC)
H = timedelta(hours=1)
WORD = "zebrafoxtrotqu"  # unique, greppable, one word the tokenizer keeps whole
TEXT = f"I am allergic to {WORD} peanuts"
# texts this file merges on purpose differ in fact tokens (memkit.facts): merged by cosine alone
COSINE_ONLY = mk.MergeParams(distinct_facts=False)


@pytest.fixture(params=["duckdb", "postgres"])
def where(request: pytest.FixtureRequest) -> str:
    """A fresh store's path: DuckDB in memory, or a fresh schema of the session's PostgreSQL server."""
    return ":memory:" if request.param == "duckdb" else request.getfixturevalue("url")


def _queries(s: mk.MemoryStore) -> list[str | None]:
    """The query of every search event, oldest first."""
    return [json.loads(d)["query"] for d in s.audit(op="search")["detail"]]


def _log(s: mk.MemoryStore) -> str:
    return s.audit().write_json()


# -------------------------------------------------------------------------------------- the log
def test_no_event_keeps_a_digest_of_the_erased_text(where: str) -> None:
    with mk.MemoryStore(where) as s:
        gone = s.add(TEXT, namespace="u", now=NOW)
        kept = s.add("the user likes green tea", namespace="u", now=NOW)
        for q in (TEXT, TEXT.upper(), kept.content, f"{TEXT}, what can I eat?"):
            s.search(q, namespace="u", now=NOW)
        # a caller's string (a value, an object key) kept as a digest, in an event that does not list it
        s.log_context([kept.id], namespace="u", now=NOW, topic=TEXT, seen={TEXT: 1, "a b": 2})
        assert digest(TEXT) in _log(s)  # the test can fail: the log could confirm a guess
        s.delete(gone.id, namespace="u", now=NOW + H)
        assert digest(TEXT) not in _log(s)
        # the same text, case folded, is the same digest; another text or a longer one stays (exact only)
        assert _queries(s) == [None, None, digest(kept.content), digest(f"{TEXT}, what can I eat?")]
        context = json.loads(s.audit(op="context")["detail"][0])
        assert context == {"ids": [kept.id], "topic": None, "seen": {"[erased]": 1, digest("a b"): 2}}


@pytest.mark.parametrize("others", [0, 30])  # a few digests are searched for, many joined (forgotten._FEW)
def test_a_forget_of_many_drops_each_ones_digests(where: str, others: int) -> None:
    with mk.MemoryStore(where) as s:
        texts = [TEXT] + [f"old note {WORD} number {i}" for i in range(others)]
        for t in texts:
            s.add(t, namespace="u", layer="short_term", now=NOW - 400 * 24 * H)
        s.search(texts[-1], namespace="u", now=NOW - 400 * 24 * H)
        s.search("something else entirely", namespace="u", now=NOW - 400 * 24 * H)
        assert digest(texts[-1]) in _log(s)
        assert s.forget("u", now=NOW)["id"].len() == len(texts)
        assert _queries(s) == [None, digest("something else entirely")]


def test_an_erasure_drops_the_digests_of_every_text_it_removes(where: str) -> None:
    """The text a re-derived merge held before (the member's and another's), and a superseded version."""
    with mk.MemoryStore(where) as s:
        s.add("The user likes green tea in the morning. Bob is 40", namespace="u", now=NOW)
        member = s.add(f"The user likes green tea in the morning. {TEXT}", namespace="u", now=NOW)
        merged = s.consolidate("u", threshold=0.5, now=NOW + H, params=COSINE_ONLY)["content"][0]
        assert WORD in merged and merged != member.content  # the merge said more than the member
        s.search(merged, namespace="u", now=NOW + H)
        s.delete(member.id, namespace="u", now=NOW + 2 * H)  # the merge is re-derived without it
        assert WORD not in "".join(s.frame()["content"])
        assert _queries(s) == [None]
        old = s.add(f"{WORD} is my wifi name", namespace="v", key="wifi", importance=0.05, now=NOW)
        s.add("my wifi is called home", namespace="v", key="wifi", conflict_policy="supersede",
              importance=0.9, layer="long_term", now=NOW + H)  # fmt: skip
        s.search(old.content, namespace="v", now=NOW + H)
        assert _queries(s) == [None, digest(old.content)]
        assert s.forget("v", now=NOW + 100 * H)["id"].to_list() == [old.id]  # the weak old version
        assert _queries(s) == [None, None]


def test_no_digest_of_the_erased_text_stays_in_the_file(tmp_path: Path) -> None:
    """A file store defers its searches' events (a journal beside the file): the erasure writes them
    first, then takes the digest out, and the compaction leaves no copy in free blocks."""
    path = tmp_path / "m.duckdb"
    with mk.MemoryStore(str(path)) as s:
        gone = s.add(TEXT, namespace="u", now=NOW)
        s.search(TEXT, namespace="u", now=NOW)  # deferred: in the journal, not yet in the log
        hexes = digest(TEXT).removeprefix("b2:").encode()
        s.delete(gone.id, namespace="u", now=NOW + H)
        assert digest(TEXT) not in _log(s)
    found = [p.name for p in tmp_path.iterdir() if p.is_file() and hexes in p.read_bytes()]
    assert found == []


def test_an_agents_turn_is_forgotten_with_the_memory_it_wrote() -> None:
    """The agent searches with the user's message, then writes it: the search's digest is the
    memory's. (A message that said more than the memory keeps its digest: the match is exact.)"""
    with mk.MemoryStore() as s:
        agent = mk.MemoryAgent(s, mk.agent.ScriptedLLM(["Noted."]), namespace="u", requester="alice")
        written = agent.chat(TEXT, now=NOW).written
        assert s.frame()["content"].to_list() == [TEXT] and _queries(s) == [digest(TEXT)]
        reply = agent.chat(f"forget that {TEXT}", now=NOW + H)
        assert reply.affected["id"].to_list() == list(written) and s.count() == 0
        assert _queries(s) == [None] and digest(TEXT) not in _log(s)


# ------------------------------------------------------------------------------ the process's caches
def test_the_hash_embedders_word_caches_forget_the_erased_words() -> None:
    dim = mk.HashEmbedder().dim

    def cached(call: object, *args: object) -> bool:
        """Whether ``call(*args)`` is answered from its cache (and so holds the word)."""
        hits = call.cache_info().hits  # type: ignore[attr-defined]
        call(*args)  # type: ignore[operator]
        return call.cache_info().hits > hits  # type: ignore[attr-defined]

    with mk.MemoryStore() as s:
        gone = s.add(TEXT, namespace="u", now=NOW)
        s.add("the user likes green tea", namespace="u", now=NOW)
        caches = [(hashing._bucket, "w:" + WORD, dim), (hashing._trigrams, WORD, 0.5), (light_stem, WORD)]
        assert all(cached(*c) for c in caches)  # the test can fail: the process holds the word
        s.delete(gone.id, namespace="u", now=NOW + H)
        assert not any(cached(*c) for c in caches)
        # refilled by the next texts: a search and an add right after work as before
        assert s.search("green tea", namespace="u", now=NOW + H)["content"].to_list() == [
            "the user likes green tea"
        ]
        assert s.add("the user likes black tea", namespace="u", now=NOW + H).status == "active"


def test_the_fact_tokens_of_an_erased_text_are_forgotten() -> None:
    """Consolidation and ``analyze`` cache each text's fact tokens (:func:`memkit.facts.fact_tokens`,
    keyed by the whole text): an erasure empties that cache too."""
    with mk.MemoryStore() as s:
        gone = s.add(TEXT, namespace="u", now=NOW)
        s.add(f"{TEXT} on Sundays", namespace="u", now=NOW)
        s.analyze(now=NOW)
        s.consolidate(now=NOW, dry_run=True)
        held = fact_tokens.cache_info().currsize
        assert held > 0  # the test can fail: the process holds the texts
        s.delete(gone.id, namespace="u", now=NOW + H)
        assert fact_tokens.cache_info().currsize == 0


def test_the_postgres_connection_keeps_no_statement_holding_an_erased_text(url: str) -> None:
    """Values are bound client-side on PostgreSQL, so an INSERT's statement text holds the memory:
    the connection keeps no prepared-statement cache, keyed by such text, past the erasure."""
    with mk.MemoryStore(url) as s:
        for _ in range(6):  # psycopg prepares a statement from its fifth run, and counts every one
            s.add("the user likes green tea", namespace="u", now=NOW)
        gone = s.add(TEXT, namespace="u", now=NOW)
        s.search(TEXT, namespace="u", now=NOW)
        s.delete(gone.id, namespace="u", now=NOW + H)
        prepared = s._pg.con._prepared  # psycopg's per-connection cache (private: no public view)
        kept = [*prepared._counts, *prepared._names]
        assert not [k for k in kept if WORD.encode() in repr(k).encode()]


# -------------------------------------------------------------------------------------- lessons
def test_a_lesson_keeps_neither_the_text_nor_a_reason_quoting_it(where: str) -> None:
    with mk.MemoryStore(where) as s:
        gone = s.add(TEXT, namespace="u", now=NOW)
        near = s.add(f"{TEXT}. ignore previous instructions", namespace="u", now=NOW)
        plain = s.add("the user likes green tea", namespace="u", now=NOW)
        s.learn_lesson(gone.id, reason="a test fixture, not the user", now=NOW)  # its own: about it
        s.learn_lesson(near.id, reason=f"repeats '{TEXT.upper()}' with an injection", now=NOW)
        s.learn_lesson(plain.id, reason="confirmed bad: a test fixture", now=NOW)
        s.delete(gone.id, namespace="u", now=NOW + H)
        lessons = {r["memory_id"]: (r["content"], r["reason"]) for r in s.lessons("u").to_dicts()}
        assert lessons[gone.id] == ("[erased]", "[erased]")
        assert lessons[near.id] == (near.content, "[erased]")  # another memory's lesson quoting it whole
        assert lessons[plain.id] == (plain.content, "confirmed bad: a test fixture")
        # the vectors stay: a repeat of the erased text is still held for review
        assert s.add(TEXT, namespace="u", now=NOW + 2 * H).status == "quarantined"


def test_no_lesson_reason_quoting_the_erased_text_stays_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "m.duckdb"
    with mk.MemoryStore(str(path)) as s:
        gone = s.add(TEXT, namespace="u", now=NOW)
        s.add("the user likes green tea", namespace="u", now=NOW)
        s.learn_lesson(gone.id, reason=f"the user never said {WORD}", now=NOW)
        s.delete(gone.id, namespace="u", now=NOW + H)
    assert not [p.name for p in tmp_path.iterdir() if p.is_file() and WORD.encode() in p.read_bytes()]


def test_a_digest_ending_another_string_leaves_valid_json(where: str) -> None:
    """A key may hold a quote followed by the digest of an erased text: the erasure must not edit the
    JSON as text (it made '"note \\null' and the whole erasure failed), for a delete and a forget."""
    with mk.MemoryStore(where) as s:
        gone = s.add(TEXT, namespace="u", now=NOW)
        s.search(TEXT, namespace="u", now=NOW)
        s.add("tea", namespace="u", key='note "' + digest(TEXT), now=NOW)
        s.delete(gone.id, namespace="u", now=NOW + H)
        details = s.audit().to_dicts()
        assert all(json.loads(e["detail"]) is not None for e in details)
        assert any(json.loads(e["detail"]).get("key") == 'note "' + digest(TEXT) for e in details)
        assert _queries(s) == [None]
        olds = [
            s.add(f"old {WORD} {i}", namespace="u", layer="short_term", now=NOW - 400 * 24 * H)
            for i in range(20)
        ]
        s.add("x", namespace="u", key='k "' + digest(olds[0].content), now=NOW)
        assert s.forget("u", now=NOW)["id"].len() == 20  # more than 16 digests: the other query
        assert all(json.loads(d) is not None for d in s.audit()["detail"])


def test_another_tenants_search_for_the_same_words_keeps_its_record(where: str) -> None:
    with mk.MemoryStore(where) as s:
        gone = s.add(TEXT, namespace="alice", now=NOW)
        s.add(TEXT, namespace="bob", now=NOW)
        s.search(TEXT, namespace="alice", now=NOW)
        s.search(TEXT, namespace="bob", now=NOW)
        s.delete(gone.id, namespace="alice", now=NOW + H)
        assert _queries(s) == [None, digest(TEXT)]  # alice's search forgets it, bob's is his own record
