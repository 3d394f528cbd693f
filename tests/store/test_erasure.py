"""memkit/store/maintain.py + audit.py + files.py: forgetting is final for the whole database file,
the audit log holds no text a user removed or the guard kept out, and merges obey the same rules."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from conftest import AngleEmbedder

import memkit as mk
from memkit.text import tokenize

NOW = datetime(2026, 1, 1, tzinfo=UTC)
H = timedelta(hours=1)
MARK_EN = "Wallaby-Way-42-zq8x7"  # unique, greppable
MARK_ZH = "袋鼠路四十二号独一无二"
# texts this file merges on purpose differ in fact tokens (memkit.facts): merged by cosine alone
COSINE_ONLY = mk.MergeParams(distinct_facts=False)


def _bytes(path: Path) -> bytes:
    """The database file and anything beside it (write-ahead log, leftovers)."""
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


def _grep(path: Path, *needles: str) -> list[str]:
    data = _bytes(path)
    return [n for n in needles if n.encode("utf-8") in data]


@pytest.mark.parametrize("how", ["delete", "forget"])
def test_forgetting_is_final_for_the_whole_file(tmp_path: Path, how: str) -> None:
    path = tmp_path / "m.duckdb"
    with mk.MemoryStore(str(path)) as s:
        gone = s.add(f"the user lives at {MARK_EN}，{MARK_ZH}", namespace="u", importance=0.05, now=NOW)
        s.add("an ordinary memory that stays", namespace="u", now=NOW)
        s.search(f"where is {MARK_EN}", namespace="u", now=NOW)  # a query that quotes it
        s.learn_lesson(gone.id, reason="confirmed bad", now=NOW)  # a lesson keeps a copy of the text
        s.approve(gone.id, now=NOW)
    assert _grep(path, MARK_EN, MARK_ZH)  # the test can fail: the text is in the file before
    with mk.MemoryStore(str(path)) as s:
        s.search("ordinary", namespace="u", now=NOW)  # builds this process's keyword index
        words = set(tokenize(f"{MARK_EN} {MARK_ZH}", keep_stopwords=False))
        assert words <= set(s._index.keyword.vocab)
        if how == "delete":
            s.delete(gone.id, namespace="u", now=NOW + H)
        else:
            assert s.forget("u", now=NOW + 100 * H)["id"].to_list() == [gone.id]
        assert _grep(path, MARK_EN, MARK_ZH) == []  # already while the store is open
        assert not words & set(s._index.keyword.vocab)  # nor does the process keep its words
        assert s.count() == 1 and s.lessons()["content"].to_list() == ["[erased]"]
    assert _grep(path, MARK_EN, MARK_ZH) == []
    with mk.MemoryStore(str(path)) as s:  # the compacted file is a whole store
        assert s.count() == 1 and s.audit(op=how)["memory_id"].to_list() == [gone.id]
        assert s.add("still writable", namespace="u", now=NOW + 200 * H).status == "active"


def test_the_log_keeps_no_refused_secret_redacted_pii_or_query_text(tmp_path: Path) -> None:
    path = tmp_path / "a.duckdb"
    secret, phone, email = "sk-abcdefghijklmnopqrstuvwx", "13812345678", "bob@example.org"
    with mk.MemoryStore(str(path)) as s:
        with pytest.raises(mk.WriteRefused):
            s.add(f"我的密钥是 {secret}", namespace="u", now=NOW)
        m = s.add(f"电话 {phone}，邮箱 {email}", namespace="u", key=f"contact.{phone}", now=NOW)
        s.search(f"what is {MARK_EN}?", namespace="u", now=NOW)
        s.log_context([m.id], namespace="u", now=NOW, note=f"the prompt quoted {MARK_ZH} and more text")
        log = s.audit().write_json()
    for needle in (secret, phone, email, MARK_EN, MARK_ZH):
        assert needle not in log
    assert _grep(path, secret, phone, email, MARK_EN, MARK_ZH) == []


# ------------------------------------------------------------------------------------- merges
def test_deleting_a_member_rederives_the_merge_without_its_text(tmp_path: Path) -> None:
    path = tmp_path / "merge.duckdb"
    with mk.MemoryStore(str(path)) as s:
        a = s.add("用户喜欢美式咖啡", namespace="u", now=NOW)
        b = s.add(f"用户喜欢美式咖啡。{MARK_ZH}", namespace="u", now=NOW + H)
        plan = s.consolidate("u", threshold=0.5, now=NOW + 2 * H, params=COSINE_ONLY)
        merged = plan["merged_id"][0]
        assert MARK_ZH in s.get(merged, namespace="u").content
        s.delete(b.id, namespace="u", now=NOW + 3 * H)
        m = s.get(merged, namespace="u")
        assert MARK_ZH not in m.content and m.content == "用户喜欢美式咖啡" and m.status == "active"
        assert set(m.merged_from) == {a.id, b.id}  # lineage keeps the ids
        hits = s.search(MARK_ZH, namespace="u", k=10, now=NOW + 3 * H, weights=mk.Weights(keyword=1.0))
        assert MARK_ZH not in "".join(hits["content"])
        assert MARK_ZH not in s.frame().write_json()
    assert _grep(path, MARK_ZH) == []


def test_deleting_a_merged_memory_takes_its_members(tmp_path: Path) -> None:
    with mk.MemoryStore() as s:
        s.add(f"lives at {MARK_EN}", namespace="u", now=NOW)
        s.add(f"lives at {MARK_EN}!", namespace="u", now=NOW)
        merged = s.consolidate("u", now=NOW)["merged_id"][0]
        s.delete(merged, namespace="u", now=NOW + H)
        assert s.count() == 0 and MARK_EN not in s.frame().write_json()
        assert s.audit(op="delete").height == 3  # the merge and its two members


def test_merging_as_a_requester_grants_no_rights() -> None:
    with mk.MemoryStore() as s:
        # protected, owned by alice, written by the operator (created_by null): alice may read and merge
        for text in ("secret plan A", "secret plan A!"):
            s.add_many(pl.DataFrame({"content": [text], "owner": ["alice"], "access": ["protected"]}),
                       namespace="u", now=NOW)  # fmt: skip
        plan = s.consolidate("u", requester="alice", now=NOW)
        merged = s.get(plan["merged_id"][0], namespace="u")
        assert (merged.owner, merged.created_by, merged.access) == (
            "alice",
            None,
            "protected",
        )  # not alice's now
        # private to carol, owned by alice: alice may change them but not read them, so she does not merge
        for text in ("carol's diary", "carol's diary!"):
            s.add_many(pl.DataFrame({"content": [text], "owner": ["alice"], "access": ["private"],
                                     "created_by": ["carol"]}), namespace="u", now=NOW)  # fmt: skip
        assert s.consolidate("u", requester="alice", now=NOW, dry_run=True).is_empty()
        frame, _ = s.merge_candidates("u", requester="alice", now=NOW)
        assert "carol's diary" not in frame["content"].to_list()
        assert s.consolidate("u", now=NOW, dry_run=True).height == 1  # the operator would merge them


def _alpha_omega(text: str) -> list[mk.guard.Finding]:
    """A detector that flags only the two words together (no single memory has both)."""
    return (
        [mk.guard.Finding("X900", "injection", "alpha with omega")]
        if "alpha" in text and "omega" in text
        else []
    )


def test_a_merged_text_passes_the_guard_like_any_write() -> None:
    with mk.MemoryStore(guard=mk.GuardParams(detectors=(_alpha_omega,))) as s:
        a = s.add("alpha beta gamma delta epsilon zeta", namespace="u", now=NOW)
        b = s.add("beta gamma delta epsilon zeta. omega", namespace="u", now=NOW)
        assert (a.status, b.status) == ("active", "active")
        plan = s.consolidate("u", threshold=0.5, now=NOW, params=COSINE_ONLY, dry_run=True)
        assert plan.height == 1 and "alpha" in plan["content"][0] and "omega" in plan["content"][0]
        applied = s.consolidate("u", threshold=0.5, now=NOW, params=COSINE_ONLY)
        assert applied["merged_id"].to_list() == [None]  # the guard would quarantine it: not merged
        assert s.frame("u")["status"].to_list() == ["active", "active"] and s.count() == 2


def test_a_merge_never_dates_a_fresh_memory_below_the_floor() -> None:
    """Regression (state machine): the merged memory takes the oldest member's created_at, so a weak
    old duplicate would have hidden the fresh one; only recallable memories merge."""
    with mk.MemoryStore(decay=mk.DecayParams(min_strength=0.1)) as s:  # the articles' floor
        s.add("tea at 3pm with the team", namespace="u", importance=0.2, layer="short_term", now=NOW)
        t = NOW + 3 * H  # the first is now below the floor (0.2 · 0.5^1.5 = 0.07)
        fresh = s.add("tea at 3pm with the team", namespace="u", importance=0.2, layer="short_term", now=t)
        assert s.consolidate("u", now=t).is_empty()
        assert s.search("tea at 3pm", namespace="u", now=t)["id"].to_list() == [fresh.id]


def test_caller_detail_with_pii_or_secrets_is_digested() -> None:
    with mk.MemoryStore() as s:
        detail = dict(phone="13812345678", email="alice@example.com", pw="password: hunter2",
                      key="sk-abcdefghijklmnopqrstuvwx", reason="duplicate of 3fa9")  # fmt: skip
        s.log_context([], namespace="u", now=NOW, **detail)
        log = s.audit(op="context")["detail"][0]
        for leaked in ("13812345678", "alice@example.com", "hunter2", "sk-abcdefghijklmnopqrstuvwx"):
            assert leaked not in log
        assert "duplicate of 3fa9" in log
        with pytest.raises(mk.ValidationError):
            s.search("x", namespace="u", requester="sk-abcdefghijklmnopqrstuvwx", now=NOW)


@pytest.mark.parametrize("index", ["exact", "int8"])
def test_the_search_index_in_memory_keeps_nothing_of_an_erased_memory(index: str) -> None:
    """Beside the database, the process's own index: the erased row's key and tags are blanked with
    its text and vector, and no cached query vector (a query may quote the erased text) survives."""
    with mk.MemoryStore(index=index) as s:
        gone = s.add("call the clinic", namespace="u", key=f"clinic.{MARK_EN}", tags=[MARK_EN], now=NOW)
        s.search(f"where is {MARK_EN}", namespace="u", now=NOW)
        assert s._embed_query.cache_info().currsize == 1
        s.delete(gone.id, now=NOW)
        ix = s._index
        held = [
            *ix.key[: ix.n].tolist(),
            *(t for ts in ix.tags[: ix.n] for t in ts),
            *ix.content[: ix.n].tolist(),
        ]
        assert not any(MARK_EN in str(x) for x in held)
        assert s._embed_query.cache_info().currsize == 0


def test_a_rederived_merge_keeps_the_reinforcement_it_earned_itself(backend: str) -> None:
    """Erasing a member re-derived the merge from the members left and dropped its own hits: access
    count back to the members' sum, importance to their max, last access moved backwards."""
    text = "the user lives in Hangzhou"
    with mk.MemoryStore() as s:
        a, b, c = (s.add(text, namespace="u", now=NOW + i * H) for i in range(3))
        s.reinforce([a.id, a.id], namespace="u", now=NOW + 3 * H)  # a member's own count: 1 (once per call)
        s.reinforce([b.id], namespace="u", now=NOW + 3 * H)
        s.reinforce([b.id], namespace="u", now=NOW + 3 * H)
        merged = s.consolidate("u", now=NOW + 4 * H)["merged_id"][0]
        assert s.get(merged).access_count == 3
        for i in range(5):  # the merge's own hits
            assert s.search("Hangzhou", namespace="u", now=NOW + (5 + i) * H)["id"].to_list() == [merged]
        before = s.get(merged)
        s.delete(a.id, now=NOW + 20 * H)  # it brought 1 of the 3 the merge started with
        after = s.get(merged)
        assert after.access_count == before.access_count - 1 == 7  # b's 2 and c's 0, plus its own 5
        assert after.importance == pytest.approx(before.importance)  # its gain stays (b was as important)
        assert after.last_access_at == before.last_access_at == NOW + 9 * H
        s.delete(c.id, now=NOW + 21 * H)  # nothing of c was in the counts: nothing changes
        assert s.get(merged).access_count == 7


def test_a_rederived_merge_keeps_no_last_access_of_the_erased_member(backend: str) -> None:
    """A merge whose last access is its member a's kept a's time after delete(a): a trace of a.
    (A search dated before the merge finds the members, as they were: the merge is not there yet.)"""
    text = "the user lives in Hangzhou"
    with mk.MemoryStore() as s:
        a, b = (s.add(text, namespace="u", now=NOW + i * H) for i in range(2))
        s.reinforce([a.id], namespace="u", now=NOW + 8 * H)
        merged = s.consolidate("u", now=NOW + 10 * H)["merged_id"][0]
        found = s.search("Hangzhou", namespace="u", now=NOW + 5 * H, reinforce=False)["id"].to_list()
        assert sorted(found) == sorted([a.id, b.id])
        assert s.get(merged).last_access_at == NOW + 8 * H  # a's
        s.delete(a.id, now=NOW + 20 * H)
        after = s.get(merged)
        assert after.last_access_at == b.last_access_at == NOW + H and after.access_count == 0


def test_an_erasure_rederives_two_merges_the_first_one_held_for_review(tmp_path: Path) -> None:
    """Two merges of the same members (another replica's consolidation, imported), the first one's
    re-derived text near a lesson: the re-derivation's `before` record was rebound to a findings list
    and the erasure failed (AttributeError) with nothing erased."""
    a_text, b_text, near = "User is in a meeting", "User is in a meeting now", "User is in a meeting today"
    with mk.MemoryStore(embedder=AngleEmbedder({a_text: 0, b_text: 10, near: 15})) as s:
        a = s.add(a_text, namespace="u", now=NOW)
        s.add(b_text, namespace="u", now=NOW + H)
        (m1,) = s.consolidate("u", now=NOW + 2 * H)["merged_id"].to_list()
        path = tmp_path / "m.jsonl"
        s.export(path, now=NOW + 3 * H)
        header, *lines = (json.loads(x) for x in path.read_text().splitlines())
        twin = {**next(r for r in lines if r["id"] == m1), "id": "m2replica"}
        header["counts"]["memories"] += 1
        path.write_text("".join(json.dumps(x) + "\n" for x in [header, *lines, twin]))
        s.import_(path, now=NOW + 4 * H)
        bad = s.add(near, namespace="u", now=NOW + 5 * H)
        s.learn_lesson(bad.id, reason="confirmed bad", namespace="u", now=NOW + 6 * H)
        s.delete(a.id, namespace="u", now=NOW + 7 * H)
        with pytest.raises(mk.NotFound):
            s.get(a.id, namespace="u")
        held = s.frame("u").filter(pl.col("id").is_in([m1, "m2replica"]))
        assert held["status"].to_list() == ["quarantined"] * 2 and set(held["content"]) == {b_text}


@pytest.mark.parametrize("also_own", [False, True])
def test_a_forged_lineage_never_lets_an_erasure_reach_up_into_another_namespace(
    backend: str, tmp_path: Path, also_own: bool
) -> None:
    """An imported memory of namespace B whose ``merged_from`` names a memory of namespace A (forged
    in the file, or copied from another tenant): deleting that memory in A neither erases B's memory
    ("no member left") nor re-derives it from its own members (its text would change)."""
    with mk.MemoryStore() as s:
        a = s.add("alpha fact kept in namespace A", namespace="A", now=NOW)
        own = s.add("bravo member in namespace B", namespace="B", now=NOW)
        with mk.MemoryStore() as other:
            b = other.add("bravo merged text in namespace B", namespace="B", now=NOW)
            other.export(tmp_path / "b.jsonl", "B")
        lines = (tmp_path / "b.jsonl").read_text(encoding="utf-8").splitlines()
        rows = [json.loads(x) for x in lines]
        for row in rows:
            if row.get("id") == b.id:
                row["merged_from"] = [a.id, own.id] if also_own else [a.id]
        (tmp_path / "b.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
        s.import_(tmp_path / "b.jsonl", now=NOW)
        before = s.frame("B").sort("id").select("id", "content", "status", "merged_from")
        s.delete(a.id, namespace="A", now=NOW + H)
        assert s.frame("B").sort("id").select("id", "content", "status", "merged_from").equals(before)
        assert s.frame("A").is_empty()
        assert not s.audit("B").filter(pl.col("op").is_in(["delete", "merge"])).height


@pytest.mark.parametrize("forged", ["only", "own", "future"])
def test_another_writers_forged_lineage_never_lets_an_erasure_reach_its_memory(
    backend: str, tmp_path: Path, forged: str
) -> None:
    """Within one namespace too: bob imports a memory whose ``merged_from`` names alice's private
    memory (alone, or beside bob's own member; dated at the calendar's end). Alice's delete of her
    memory neither erases bob's memory, nor rewrites its text, nor fails on its date."""
    with mk.MemoryStore() as s:
        a = s.add("alice private note", namespace="team", requester="alice", access="private", now=NOW)
        own = s.add("bob member note about the team lunch", namespace="team", requester="bob", now=NOW)
        with mk.MemoryStore() as other:
            m = other.add("bob merged note about the team", namespace="team", requester="bob", now=NOW)
            other.export(tmp_path / "m.jsonl", "team")
        rows = [json.loads(x) for x in (tmp_path / "m.jsonl").read_text(encoding="utf-8").splitlines()]
        for row in rows:
            if row.get("id") == m.id:
                row["merged_from"] = [a.id, own.id] if forged == "own" else [a.id]
                if forged == "future":
                    row["updated_at"] = "9999-12-31T23:59:59.999999+00:00"
        (tmp_path / "m.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
        s.import_(tmp_path / "m.jsonl", requester="bob", now=NOW)
        before = s.get(m.id)
        s.delete(a.id, namespace="team", requester="alice", now=NOW + H)
        assert s.get(m.id) == before
        ops = s.audit("team").filter(pl.col("memory_id") == m.id)["op"].to_list()
        assert not {"delete", "merge", "forget"} & set(ops)  # nothing of alice's erasure reached it


def test_an_erasure_after_a_change_dated_at_the_calendars_end_is_logged() -> None:
    """``after()`` at the last microsecond the calendar holds: the erasure is dated at it (no
    OverflowError): a file may carry such a time."""
    end = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    assert mk.store.versions.after(NOW, end) == end and mk.store.versions.after(NOW, NOW - H) == NOW
