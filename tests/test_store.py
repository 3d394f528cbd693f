"""MemoryStore behaviour per DESIGN.md: writes, reads, search, conflicts, access, namespaces, deletion,
audit, time travel, bulk writes, the embedding cache and persistence."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import NOW, CountingEmbedder, FixedEmbedder, assert_unchanged, snapshot

import memkit as mk
from memkit import decay, scoring

H = timedelta(hours=1)
HIT_COLUMNS = ["rank", "id", "content", "score", "similarity", "importance", "strength", "recency"]


def ops(store: mk.MemoryStore, namespace: str | None = None) -> list[str]:
    return store.audit(namespace)["op"].to_list()


def ids(hits: pl.DataFrame) -> list[str]:
    return hits["id"].to_list()


# ------------------------------------------------------------------------------------------ add / get


def test_add_fills_defaults(store: mk.MemoryStore, now: datetime) -> None:
    m = store.add("用户住在杭州滨江区", namespace="u", requester="assistant", now=now)
    assert isinstance(m, mk.Memory)
    assert (m.namespace, m.content, m.status, m.version) == ("u", "用户住在杭州滨江区", "active", 1)
    assert (m.layer, m.kind, m.importance, m.half_life_hours) == ("long_term", "fact", 0.5, 90 * 24.0)
    assert (m.owner, m.created_by, m.access, m.source) == ("assistant", "assistant", "public", "user")
    assert m.created_at == m.updated_at == m.last_access_at == now
    assert m.access_count == 0 and m.tags == () and m.protected is False
    assert len(m.id) == 16 and store.count() == 1


def test_admission_rule_and_layer_half_lives(store: mk.MemoryStore, now: datetime) -> None:
    low = store.add("闲聊", namespace="u", importance=0.2, now=now)
    ev = store.add("went hiking", namespace="u", kind="event", importance=0.7, now=now)
    custom = store.add("x", namespace="u", layer="short_term", half_life_hours=5.0, now=now)
    assert (low.layer, low.half_life_hours) == ("short_term", 2.0)
    assert (ev.layer, ev.half_life_hours) == ("episodic", 30 * 24.0)
    assert (custom.layer, custom.half_life_hours) == ("short_term", 5.0)


def test_get_round_trips_every_field(store: mk.MemoryStore, now: datetime) -> None:
    m = store.add(
        "deploy url",
        namespace="u",
        requester="w",
        key="deploy.prod.url",
        value={"url": "https://x", "n": [1, 2]},
        kind="reference",
        importance=0.8,
        tags=["ops", "url", "ops"],
        access="protected",
        owner="mod",
        protected=True,
        valid_from=now - H,
        valid_until=now + 10 * H,
        source="tool",
        now=now,
    )
    got = store.get(m.id, requester="mod", now=now)
    assert got == m
    assert got.value == {"url": "https://x", "n": [1, 2]}
    assert got.tags == ("ops", "url")  # duplicates dropped, order kept
    assert got.valid_from == now - H and got.valid_from.tzinfo is not None


def test_non_utc_times_are_stored_in_utc(store: mk.MemoryStore) -> None:
    cst = timezone(timedelta(hours=8))
    m = store.add("x", namespace="u", now=datetime(2026, 1, 1, 8, tzinfo=cst))
    assert store.get(m.id).created_at == datetime(2026, 1, 1, tzinfo=UTC)


def test_get_unknown_id(store: mk.MemoryStore, now: datetime) -> None:
    with pytest.raises(mk.NotFound):
        store.get("0123456789abcdef", now=now)


def test_get_and_read_log_read_events(store: mk.MemoryStore, now: datetime) -> None:
    m = store.add("x", namespace="u", key="k", now=now)
    store.get(m.id, namespace="u", requester="r", now=now)
    assert store.read("k", namespace="u", requester="r", now=now).id == m.id
    reads = store.audit(op="read")
    assert reads["memory_id"].to_list() == [m.id, m.id] and reads["requester"].to_list() == ["r", "r"]


def test_read_missing_key_is_none(store: mk.MemoryStore, now: datetime) -> None:
    assert store.read("nope", namespace="u", now=now) is None


# ------------------------------------------------------------------------------------------ search


@pytest.fixture
def coffee(store: mk.MemoryStore, now: datetime) -> mk.MemoryStore:
    store.add("I like oolong tea in the morning", namespace="u", importance=0.9, tags=["drink"], now=now)
    store.add(
        "I like black coffee", namespace="u", importance=0.4, tags=["drink"], kind="preference", now=now
    )
    store.add("my cat is called Tom", namespace="u", importance=0.6, tags=["pet"], now=now)
    store.add("went to a tea party", namespace="u", kind="event", importance=0.5, now=now)
    return store


def test_search_frame_columns_and_order(coffee: mk.MemoryStore, now: datetime) -> None:
    hits = coffee.search("what tea do I like", namespace="u", k=10, now=now + H)
    assert hits.columns[:10] == HIT_COLUMNS + ["keyword", "neighbour"]  # the default weighs both
    for c in ("key", "layer", "kind", "tags", "access_count", "pending"):
        assert c in hits.columns
    assert hits["rank"].to_list() == list(range(1, hits.height + 1))
    assert hits.height == 4
    assert hits["content"][0] == "I like oolong tea in the morning"
    plain = mk.Weights(similarity=0.5, importance=0.3, recency=0.2, keyword=0.0, neighbour=0.0, tie=0.0)
    s = coffee.search("what tea do I like", namespace="u", k=10, weights=plain, now=now + H)["score"]
    assert (np.diff(s.to_numpy()) <= 0).all() and hits.columns[:8] == HIT_COLUMNS


def test_search_score_is_hybrid_of_its_components(coffee: mk.MemoryStore, now: datetime) -> None:
    w = mk.Weights(similarity=0.5, importance=0.2, recency=0.3, keyword=0.0, neighbour=0.0, tie=0.0)
    hits = coffee.search("tea", namespace="u", k=10, weights=w, now=now + 50 * H)
    expect = scoring.hybrid(hits["similarity"].to_numpy(), hits["importance"].to_numpy(),
                            hits["recency"].to_numpy(), w)  # fmt: skip
    np.testing.assert_allclose(hits["score"].to_numpy(), expect, rtol=1e-12)
    np.testing.assert_allclose(hits["recency"].to_numpy(), np.exp(-50 / 168))
    hl = coffee.frame("u").select("id", "half_life_hours")
    j = hits.join(hl, on="id")
    np.testing.assert_allclose(
        j["strength"].to_numpy(),
        decay.strength(j["importance"].to_numpy(), 50.0, j["half_life_hours"].to_numpy()),
    )
    assert ((hits["similarity"] >= -1.0001) & (hits["similarity"] <= 1.0001)).all()


def test_search_keyword_column_only_when_weighted(coffee: mk.MemoryStore, now: datetime) -> None:
    w = mk.Weights(similarity=0.4, importance=0.1, recency=0.0, keyword=0.5, neighbour=0.0, tie=0.0)
    hits = coffee.search("oolong", namespace="u", k=10, weights=w, now=now)
    assert hits.columns[:9] == HIT_COLUMNS + ["keyword"]
    kw = hits["keyword"].to_numpy()
    assert ((kw >= 0) & (kw <= 1)).all()
    assert hits["content"][0] == "I like oolong tea in the morning" and kw[0] > 0
    assert (kw[1:] == 0).all()
    expect = scoring.hybrid(hits["similarity"].to_numpy(), hits["importance"].to_numpy(),
                            hits["recency"].to_numpy(), w, kw)  # fmt: skip
    np.testing.assert_allclose(hits["score"].to_numpy(), expect, rtol=1e-12)


def test_search_keyword_works_for_chinese(store: mk.MemoryStore, now: datetime) -> None:
    for c in ("用户住在杭州滨江区", "用户喜欢喝乌龙茶", "用户的猫叫汤姆"):
        store.add(c, namespace="u", now=now)
    w = mk.Weights(similarity=0.0, importance=0.0, recency=0.0, keyword=1.0, neighbour=0.0, tie=0.0)
    hits = store.search("乌龙茶", namespace="u", k=3, weights=w, now=now)
    assert hits["content"][0] == "用户喜欢喝乌龙茶" and hits["keyword"][0] > 0


def test_search_k_limits(coffee: mk.MemoryStore, now: datetime) -> None:
    assert coffee.search("tea", namespace="u", k=2, now=now).height == 2
    assert coffee.search("tea", namespace="u", k=1, now=now)["rank"].to_list() == [1]


def test_search_filters(coffee: mk.MemoryStore, now: datetime) -> None:
    def contents(**kw) -> set[str]:
        return set(coffee.search("tea", namespace="u", k=10, now=now, reinforce=False, **kw)["content"])

    assert contents(kind="event") == {"went to a tea party"}
    assert contents(kind=["event", "preference"]) == {"went to a tea party", "I like black coffee"}
    assert contents(layer="episodic") == {"went to a tea party"}
    assert len(contents(layer=["long_term"])) == 3
    assert contents(tags=["pet"]) == {"my cat is called Tom"}
    assert len(contents(tags=["pet", "drink"])) == 3
    assert contents(tags=["nothing"]) == set()
    assert contents(min_strength=0.55) == {"I like oolong tea in the morning", "my cat is called Tom"}


def test_search_on_empty_namespace(coffee: mk.MemoryStore, now: datetime) -> None:
    hits = coffee.search("tea", namespace="nobody", now=now)
    assert hits.height == 0 and hits.columns[:8] == HIT_COLUMNS


def test_empty_search_frame_has_string_columns(store: mk.MemoryStore, now: datetime) -> None:
    hits = store.search("tea", namespace="nobody", now=now)
    assert hits.schema["id"] == pl.String and hits.schema["content"] == pl.String
    assert hits.schema["layer"] == pl.String and hits.schema["kind"] == pl.String


def test_search_logs_event_with_ids(coffee: mk.MemoryStore, now: datetime) -> None:
    hits = coffee.search("cat", namespace="u", requester="r", k=2, now=now)
    ev = coffee.audit(op="search")
    assert ev.height == 1 and ev["requester"][0] == "r" and ev["memory_id"][0] is None
    detail = json.loads(ev["detail"][0])
    # the query is kept as a digest: the log never holds text (a query may quote a memory)
    assert detail["query"] == mk.store.audit.digest("cat") and detail["k"] == 2 and detail["ids"] == ids(hits)
    assert "cat" not in ev["detail"][0]


# ------------------------------------------------------------------------------------------ reinforcement


def test_reinforcement_visible_in_frame_and_next_search(store: mk.MemoryStore, now: datetime) -> None:
    m = store.add("oolong tea", namespace="u", importance=0.5, now=now)
    t = now + 30 * H
    first = store.search("tea", namespace="u", now=t)
    assert ids(first) == [m.id]
    assert first["importance"][0] == 0.5 and first["access_count"][0] == 0  # reported before the touch
    row = store.frame("u").row(0, named=True)
    assert row["last_access_at"] == t and row["access_count"] == 1
    assert row["importance"] == pytest.approx(0.505)
    second = store.search("tea", namespace="u", now=t, reinforce=False)
    assert second["importance"][0] == pytest.approx(0.505)
    assert second["access_count"][0] == 1 and second["recency"][0] == pytest.approx(1.0)
    assert second["last_access_at"][0] == t
    assert store.get(m.id).access_count == 1


def test_reinforce_false_leaves_memory_untouched(store: mk.MemoryStore, now: datetime) -> None:
    store.add("oolong tea", namespace="u", importance=0.5, now=now)
    before = store.frame("u")
    store.search("tea", namespace="u", now=now + 5 * H, reinforce=False)
    assert store.frame("u").equals(before)
    assert store.search("tea", namespace="u", now=now + 5 * H, reinforce=False)["access_count"][0] == 0


def test_reinforcement_caps_importance_at_one(store: mk.MemoryStore, now: datetime) -> None:
    m = store.add("oolong tea", namespace="u", importance=0.998, now=now)
    for _ in range(3):
        store.search("tea", namespace="u", now=now)
    assert store.get(m.id).importance == 1.0
    assert store.get(m.id).access_count == 3
    assert store.search("tea", namespace="u", now=now, reinforce=False)["importance"][0] == 1.0


def test_only_hits_are_reinforced(store: mk.MemoryStore, now: datetime) -> None:
    a = store.add("oolong tea", namespace="u", importance=0.9, now=now)
    b = store.add("black coffee", namespace="u", importance=0.1, now=now)
    assert ids(store.search("tea", namespace="u", k=1, now=now)) == [a.id]
    assert store.get(b.id).access_count == 0 and store.get(b.id).importance == 0.1


# ------------------------------------------------------------------------------------------ decay floor


def test_decay_floor_hides_short_term_memory_after_about_5_2_hours(now: datetime) -> None:
    store = mk.MemoryStore(decay=mk.DecayParams(min_strength=0.1))  # the articles' floor (default: 0)
    m = store.add("临时：会议室在三楼", namespace="u", importance=0.6, half_life_hours=2.0, now=now)
    cutoff = float(decay.hours_until(0.1, 0.6, 2.0))
    assert 5.1 < cutoff < 5.2

    def found(hours: float, **kw) -> bool:
        return m.id in ids(store.search("会议室", namespace="u", now=now + hours * H, reinforce=False, **kw))

    assert found(0.0) and found(4.0) and found(5.1)
    hit = store.search("会议室", namespace="u", now=now + 4 * H, reinforce=False)
    assert hit["strength"][0] == pytest.approx(0.15)
    assert not found(5.25) and not found(24.0)
    assert found(5.25, min_strength=0.0)  # the floor is a parameter
    assert store.count() == 1 and store.get(m.id).status == "active"  # hidden, not forgotten


def test_store_decay_params_floor(now: datetime) -> None:
    with mk.MemoryStore(decay=mk.DecayParams(min_strength=0.5)) as s:
        s.add("tea", namespace="u", importance=0.6, half_life_hours=2.0, now=now)
        assert s.search("tea", namespace="u", now=now, reinforce=False).height == 1
        assert s.search("tea", namespace="u", now=now + 1 * H, reinforce=False).height == 0


# ------------------------------------------------------------------------------------------ validity


def test_validity_window_is_half_open(store: mk.MemoryStore, now: datetime) -> None:
    start, end = now + 1 * H, now + 3 * H
    m = store.add("promo code SPRING", namespace="u", key="promo", valid_from=start, valid_until=end, now=now)

    def visible(t: datetime) -> tuple[bool, bool]:
        in_search = m.id in ids(store.search("promo code", namespace="u", now=t, reinforce=False))
        r = store.read("promo", namespace="u", now=t)
        return in_search, r is not None and r.id == m.id

    assert visible(now) == (False, False)
    assert visible(start - timedelta(microseconds=1)) == (False, False)
    assert visible(start) == (True, True)
    assert visible(end - timedelta(microseconds=1)) == (True, True)
    assert visible(end) == (False, False)  # valid_until itself is excluded
    assert visible(end + 100 * H) == (False, False)
    assert store.versions("promo", namespace="u")["id"].to_list() == [m.id]
    assert store.frame("u")["id"].to_list() == [m.id]


# ------------------------------------------------------------------------------------------ conflicts


def test_flag_policy(store: mk.MemoryStore, now: datetime) -> None:
    old = store.add("用户住在杭州滨江区", namespace="u", key="user.address", now=now)
    new = store.add("用户搬到了上海浦东新区", namespace="u", key="user.address", now=now + H)
    assert (old.status, new.status, new.version) == ("active", "conflict", 2)
    assert ops(store) == ["add", "add", "conflict"]
    assert store.get(old.id).status == "active"
    assert store.read("user.address", namespace="u", now=now + 2 * H).id == old.id
    hits = store.search("上海浦东新区", namespace="u", k=10, now=now + 2 * H, min_strength=0.0)
    assert ids(hits) == [old.id]  # a pending conflict is never searched
    won = store.resolve("user.address", namespace="u", keep=new.id, now=now + 3 * H)
    assert won.id == new.id and won.status == "active"
    assert ops(store)[-2:] == ["resolve", "supersede"]
    assert store.read("user.address", namespace="u", now=now + 3 * H).id == new.id
    assert store.versions("user.address", namespace="u")["status"].to_list() == ["superseded", "active"]
    hits = store.search("杭州滨江区", namespace="u", k=10, now=now + 4 * H, min_strength=0.0)
    assert ids(hits) == [new.id]  # superseded is never searched


def test_resolve_can_keep_the_old_version(store: mk.MemoryStore, now: datetime) -> None:
    old = store.add("杭州", namespace="u", key="addr", now=now)
    new = store.add("上海", namespace="u", key="addr", now=now)
    store.resolve("addr", namespace="u", keep=old.id, now=now)
    assert store.get(new.id).status == "superseded"
    assert store.read("addr", namespace="u", now=now).id == old.id


def test_resolve_rejects_dead_or_unknown_versions(store: mk.MemoryStore, now: datetime) -> None:
    a = store.add("杭州", namespace="u", key="addr", now=now)
    store.add("上海", namespace="u", key="addr", conflict_policy="supersede", now=now)
    with pytest.raises(mk.NotFound):
        store.resolve("addr", namespace="u", keep=a.id, now=now)
    with pytest.raises(mk.NotFound):
        store.resolve("addr", namespace="other", keep=a.id, now=now)


def test_supersede_policy(now: datetime) -> None:
    with mk.MemoryStore(conflict_policy="supersede") as s:
        old = s.add("杭州", namespace="u", key="addr", now=now)
        new = s.add("上海", namespace="u", key="addr", now=now + H)
        assert new.status == "active" and new.version == 2 and new.supersedes == old.id
        assert ops(s) == ["add", "add", "supersede"]
        assert s.get(old.id).status == "superseded"
        assert s.read("addr", namespace="u", now=now + H).id == new.id
        assert ids(s.search("杭州", namespace="u", k=5, now=now + H, min_strength=0.0)) == [new.id]


def test_per_call_policy_overrides_store_policy(store: mk.MemoryStore, now: datetime) -> None:
    store.add("杭州", namespace="u", key="addr", now=now)
    assert (
        store.add("上海", namespace="u", key="addr", conflict_policy="supersede", now=now).status == "active"
    )


@pytest.mark.parametrize("via", ["store", "call"])
def test_strict_policy_raises_and_writes_nothing(via: str, now: datetime) -> None:
    with mk.MemoryStore(conflict_policy="strict" if via == "store" else "flag") as s:
        s.add("杭州", namespace="u", key="addr", now=now)
        before = snapshot(s)
        with pytest.raises(mk.ConflictError):
            s.add(
                "上海",
                namespace="u",
                key="addr",
                now=now + H,
                conflict_policy="strict" if via == "call" else None,
            )
        assert_unchanged(s, before)
        assert s.read("addr", namespace="u", now=now + H).content == "杭州"


@pytest.mark.parametrize("policy", ["flag", "supersede", "strict"])
def test_same_value_supersedes_quietly(policy: str, now: datetime) -> None:
    with mk.MemoryStore(conflict_policy=policy) as s:
        old = s.add("杭州", namespace="u", key="addr", now=now)
        new = s.add("杭州", namespace="u", key="addr", now=now + H)
        assert new.status == "active" and new.version == 2
        assert s.get(old.id).status == "superseded"
        assert "conflict" not in ops(s)
        assert s.read("addr", namespace="u", now=now + H).id == new.id


def test_same_json_value_is_the_same_value(store: mk.MemoryStore, now: datetime) -> None:
    old = store.add("addr v1", namespace="u", key="addr", value={"city": "杭州", "zip": [3, 1]}, now=now)
    new = store.add("addr v2", namespace="u", key="addr", value={"zip": [3, 1], "city": "杭州"}, now=now)
    assert new.status == "active" and store.get(old.id).status == "superseded"
    other = store.add("addr v3", namespace="u", key="addr", value={"city": "上海"}, now=now)
    assert other.status == "conflict"


# ------------------------------------------------------------------------------------------ access


@pytest.fixture
def acl_store(store: mk.MemoryStore, now: datetime) -> tuple[mk.MemoryStore, dict[str, mk.Memory]]:
    ms = {
        a: store.add(
            f"{a} note about tea", namespace="u", requester="writer", owner="module", access=a, now=now
        )
        for a in ("public", "protected", "private")
    }
    return store, ms


@pytest.mark.parametrize(
    "requester, readable",
    [
        (None, {"public", "protected", "private"}),
        ("module", {"public", "protected"}),  # owner
        ("writer", {"public", "private"}),  # creator
        ("stranger", {"public"}),
    ],
)
def test_access_rule_for_get_read_search(acl_store, requester, readable, now: datetime) -> None:
    store, ms = acl_store
    for a, m in ms.items():
        if a in readable:
            assert store.get(m.id, namespace="u", requester=requester, now=now).id == m.id
        else:
            n_deny = store.audit(op="deny").height
            with pytest.raises(mk.AccessDenied):
                store.get(m.id, namespace="u", requester=requester, now=now)
            deny = store.audit(op="deny")
            assert deny.height == n_deny + 1
            assert deny["memory_id"][-1] == m.id and deny["requester"][-1] == requester
    hits = store.search("tea note", namespace="u", requester=requester, k=10, now=now)
    assert set(ids(hits)) == {ms[a].id for a in readable}
    assert store.audit(op="search")["requester"][-1] == requester


def test_search_skips_silently_without_deny_events(acl_store, now: datetime) -> None:
    store, _ = acl_store
    store.search("tea", namespace="u", requester="stranger", k=10, now=now)
    assert store.audit(op="deny").height == 0


def test_read_denied_is_logged(store: mk.MemoryStore, now: datetime) -> None:
    m = store.add("secret plan", namespace="u", key="plan", requester="alice", access="private", now=now)
    with pytest.raises(mk.AccessDenied):
        store.read("plan", namespace="u", requester="bob", now=now)
    assert store.audit(op="deny")["memory_id"].to_list() == [m.id]
    assert store.audit(op="read").height == 0
    assert store.read("plan", namespace="u", requester="alice", now=now).id == m.id


def test_versions_respect_access(store: mk.MemoryStore, now: datetime) -> None:
    store.add("v1", namespace="u", key="k", requester="alice", access="private", now=now)
    store.add(  # the operator may rewrite any slot
        "v2", namespace="u", key="k", requester=None, access="public", conflict_policy="supersede", now=now
    )
    assert store.versions("k", namespace="u", requester="bob")["content"].to_list() == ["v2"]
    assert store.versions("k", namespace="u")["content"].to_list() == ["v1", "v2"]


def test_resolve_needs_modify_right(store: mk.MemoryStore, now: datetime) -> None:
    store.add("杭州", namespace="u", key="addr", requester="alice", now=now)
    new = store.add("上海", namespace="u", key="addr", requester="bob", now=now)  # another writer's value
    with pytest.raises(mk.AccessDenied):
        store.resolve("addr", namespace="u", keep=new.id, requester="mallory", now=now)
    assert store.get(new.id).status == "conflict"
    assert store.audit(op="deny").height == 1
    store.resolve("addr", namespace="u", keep=new.id, requester="bob", now=now)


# ------------------------------------------------------------------------------------------ namespaces


def test_namespaces_are_isolated(store: mk.MemoryStore, now: datetime) -> None:
    a = store.add("用户住在杭州", namespace="A", key="addr", now=now)
    b = store.add("用户住在杭州", namespace="B", key="addr", now=now)
    store.add("用户喜欢茶", namespace="B", now=now)
    assert ids(store.search("杭州", namespace="A", k=10, now=now)) == [a.id]
    assert store.read("addr", namespace="A", now=now).id == a.id
    assert store.read("addr", namespace="B", now=now).id == b.id
    assert store.read("addr", namespace="C", now=now) is None
    assert store.frame("A")["id"].to_list() == [a.id]
    assert store.versions("addr", namespace="A")["id"].to_list() == [a.id]
    assert (store.count("A"), store.count("B"), store.count()) == (1, 2, 3)
    assert set(store.audit("A")["memory_id"].drop_nulls()) == {a.id}
    assert a.status == b.status == "active"  # the same key in two namespaces is no conflict


def test_namespace_named_like_an_owner_does_not_leak(store: mk.MemoryStore, now: datetime) -> None:
    store.add("tea secret", namespace="B", requester="A", owner="A", now=now)
    assert store.search("tea", namespace="A", k=10, now=now).height == 0


# ------------------------------------------------------------------------------------------ delete


def test_delete_erases_and_logs_without_content(store: mk.MemoryStore, now: datetime) -> None:
    m = store.add("我的身份证号是 1234", namespace="u", key="id.card", requester="alice", now=now)
    keep = store.add("我喜欢茶", namespace="u", requester="alice", now=now)
    store.delete(m.id, requester="alice", now=now + H)
    assert store.count() == 1 and store.frame()["id"].to_list() == [keep.id]
    with pytest.raises(mk.NotFound):
        store.get(m.id)
    assert not store.audit()["detail"].drop_nulls().str.contains("身份证|1234").any()
    assert store.read("id.card", namespace="u", now=now + H) is None
    for w in (mk.Weights(), mk.Weights(0.5, 0.0, 0.0, 0.5, neighbour=0.0, tie=0.0)):
        assert m.id not in ids(store.search("身份证号 1234", namespace="u", k=10, weights=w, now=now + H))
    ev = store.audit(op="delete")
    assert ev["memory_id"].to_list() == [m.id] and ev["requester"].to_list() == ["alice"]
    assert "身份证" not in ev["detail"][0] and "1234" not in ev["detail"][0]
    assert store.frame(include_embedding=True).height == 1


def test_delete_drops_the_cached_embedding(counting: CountingEmbedder, now: datetime) -> None:
    with mk.MemoryStore(embedder=counting) as s:
        m = s.add("erase me", namespace="u", now=now)
        s.delete(m.id, now=now)
        s.add("erase me", namespace="u", now=now)
        assert counting.seen == ["erase me", "erase me"]


@pytest.mark.parametrize("who", [None, "owner_mod", "alice"])
def test_delete_allowed_for_operator_owner_creator(store: mk.MemoryStore, now: datetime, who) -> None:
    m = store.add("x", namespace="u", requester="alice", owner="owner_mod", access="public", now=now)
    store.delete(m.id, requester=who, now=now)
    assert store.count() == 0


def test_delete_denied_for_others(store: mk.MemoryStore, now: datetime) -> None:
    m = store.add("public note", namespace="u", requester="alice", access="public", now=now)
    with pytest.raises(mk.AccessDenied):
        store.delete(m.id, requester="bob", now=now)
    assert store.count() == 1 and store.get(m.id).id == m.id
    deny = store.audit(op="deny")
    assert deny["memory_id"].to_list() == [m.id] and "delete" in deny["detail"][0]
    with pytest.raises(mk.NotFound):
        store.delete("ffffffffffffffff", now=now)


# ---------------------------------------------------------------------------------- audit, time travel


def test_audit_records_every_op(store: mk.MemoryStore, now: datetime) -> None:
    a = store.add("杭州", namespace="u", key="addr", requester="alice", now=now)
    b = store.add("上海", namespace="u", key="addr", requester="bob", now=now + H)
    store.read("addr", namespace="u", requester="alice", now=now + H)
    store.search("上海", namespace="u", requester="alice", now=now + H)
    store.resolve("addr", namespace="u", keep=b.id, requester="bob", now=now + 2 * H)
    p = store.add("private", namespace="u", requester="alice", access="private", now=now)
    with pytest.raises(mk.NotFound):  # unreadable by id alone: unknown to bob, the deny still audited
        store.get(p.id, requester="bob", now=now)
    store.delete(p.id, requester="alice", now=now + 3 * H)
    got = ops(store)
    assert got == [
        "add",
        "add",
        "conflict",
        "read",
        "search",
        "resolve",
        "supersede",
        "add",
        "deny",
        "delete",
    ]
    audit = store.audit("u")
    assert audit.columns == ["seq", "ts", "namespace", "op", "memory_id", "requester", "detail"]
    assert audit["seq"].is_sorted() and audit["ts"][0] == now
    assert audit.filter(pl.col("op") == "supersede")["memory_id"].to_list() == [a.id]
    assert store.audit(op="resolve")["memory_id"].to_list() == [b.id]


def test_frame_as_of_replays_statuses(store: mk.MemoryStore, now: datetime) -> None:
    old = store.add("杭州", namespace="u", key="addr", now=now)
    new = store.add("上海", namespace="u", key="addr", now=now + 1 * H)
    store.resolve("addr", namespace="u", keep=new.id, now=now + 2 * H)

    def status_at(t: datetime) -> dict[str, str]:
        return dict(store.frame("u", as_of=t).select("id", "status").rows())

    assert status_at(now - H) == {}
    assert status_at(now) == {old.id: "active"}
    assert status_at(now + 90 * timedelta(minutes=1)) == {old.id: "active", new.id: "conflict"}
    assert status_at(now + 2 * H) == {old.id: "superseded", new.id: "active"}
    assert store.frame("u", as_of=now + H).columns == store.frame("u").columns


def test_frame_columns_and_order(store: mk.MemoryStore, now: datetime) -> None:
    b = store.add("second", namespace="u", now=now + H)
    a = store.add("first", namespace="u", now=now)
    f = store.frame("u")
    assert f["id"].to_list() == [a.id, b.id]  # oldest first
    assert set(mk.Memory.__dataclass_fields__) == set(f.columns)
    assert "embedding" not in f.columns
    emb = store.frame("u", include_embedding=True)["embedding"].to_list()
    assert len(emb[0]) == 384 and np.linalg.norm(emb[0]) == pytest.approx(1.0, rel=1e-6)


# ------------------------------------------------------------------------------------------ add_many


def test_add_many_returns_ids_and_stores_rows(store: mk.MemoryStore, now: datetime) -> None:
    df = pl.DataFrame(
        {
            "content": ["喜欢乌龙茶", "住在杭州", "养了一只猫"],
            "key": ["drink", None, "pet"],
            "importance": [0.9, 0.2, None],
            "tags": [["drink"], [], ["pet", "cat"]],
            "created_at": [now - 2 * H, now - H, now],
        }
    )
    out = store.add_many(df, namespace="u", requester="importer", now=now)
    assert out.columns == ["id", "status"] and out.height == 3
    assert out["status"].to_list() == ["active"] * 3 and out["id"].n_unique() == 3
    f = store.frame("u")
    assert f["id"].to_list() == out["id"].to_list()
    assert f["importance"].to_list() == [0.9, 0.2, 0.5]
    assert f["layer"].to_list() == ["long_term", "short_term", "long_term"]
    assert f["key"].to_list() == ["drink", None, "pet"]
    assert f["tags"].to_list() == [["drink"], [], ["pet", "cat"]]
    assert f["created_by"].to_list() == ["importer"] * 3
    assert f["created_at"].to_list() == [now - 2 * H, now - H, now]
    assert store.audit(op="add")["memory_id"].to_list() == out["id"].to_list()
    assert store.read("drink", namespace="u", now=now).content == "喜欢乌龙茶"
    assert store.search("乌龙茶", namespace="u", k=1, now=now)["id"][0] == out["id"][0]


def test_add_many_with_embedding_column_skips_the_embedder(counting: CountingEmbedder, now: datetime) -> None:
    target = mk.HashEmbedder(dim=8).embed(["oolong tea"])[0]
    other = np.zeros(8, dtype=np.float32)
    other[0] = 1.0
    df = pl.DataFrame(
        {"content": ["A", "B"], "embedding": [list(map(float, target * 3)), list(map(float, other))]}
    )
    with mk.MemoryStore(embedder=counting) as s:
        out = s.add_many(df, namespace="u", now=now)
        assert counting.seen == []
        emb = np.array(s.frame(include_embedding=True)["embedding"].to_list())
        np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, rtol=1e-6)  # normalized on the way in
        hits = s.search("oolong tea", namespace="u", k=2, now=now)
        assert hits["id"][0] == out["id"][0] and hits["similarity"][0] == pytest.approx(1.0, abs=1e-6)


def test_add_many_null_owner_defaults_to_requester(store: mk.MemoryStore, now: datetime) -> None:
    store.add_many(pl.DataFrame({"content": ["a", "b"], "owner": ["mod", None]}), namespace="u",
                   requester="importer", now=now)  # fmt: skip
    assert dict(store.frame("u").select("content", "owner").rows()) == {"a": "mod", "b": "importer"}


# ------------------------------------------------------------------------------------------ embedding cache


def test_same_content_is_embedded_once(counting: CountingEmbedder, now: datetime) -> None:
    with mk.MemoryStore(embedder=counting) as s:
        s.add("用户喜欢茶", namespace="u", now=now)
        s.add("用户喜欢茶", namespace="v", now=now)
        s.add_many(pl.DataFrame({"content": ["用户喜欢茶", "新的", "新的"]}), namespace="u", now=now)
        assert counting.seen == ["用户喜欢茶", "新的"]
        assert s.count() == 5
        f = s.frame(include_embedding=True).filter(pl.col("content") == "用户喜欢茶")
        e = np.array(f["embedding"].to_list())
        assert e.shape == (3, 8) and (e == e[0]).all()


@pytest.mark.parametrize(
    "make, what",
    [
        (lambda n: np.ones((n, 7)), "wrong dim"),
        (lambda n: np.ones((n + 1, 8)), "wrong count"),
        (lambda n: np.full((n, 8), np.nan), "nan"),
        (lambda n: np.full((n, 8), np.inf), "inf"),
        (lambda n: [["a"] * 8] * n, "not numbers"),
    ],
)
def test_bad_embedder_output_is_rejected(make, what: str, now: datetime) -> None:
    with mk.MemoryStore(embedder=FixedEmbedder(make)) as s:
        before = snapshot(s)
        with pytest.raises(mk.ValidationError) as ei:
            s.add("x", namespace="u", now=now)
        assert ei.value.field == "embedding"
        with pytest.raises(mk.ValidationError):
            s.add_many(pl.DataFrame({"content": ["x", "y"]}), namespace="u", now=now)
        with pytest.raises(mk.ValidationError):
            s.search("x", namespace="u", now=now)
        assert_unchanged(s, before)


def test_embedder_without_protocol_rejected() -> None:
    with pytest.raises(mk.ValidationError) as ei:
        mk.MemoryStore(embedder=object())  # type: ignore[arg-type]
    assert ei.value.field == "embedder"


# ------------------------------------------------------------------------------------------ persistence


def _populate(s: mk.MemoryStore, now: datetime) -> None:
    s.add("用户住在杭州滨江区", namespace="u", key="addr", requester="a", tags=["home"], now=now)
    s.add("用户搬到了上海浦东新区", namespace="u", key="addr", requester="a", now=now + H)
    s.add("I like oolong tea", namespace="u", requester="a", access="private", value={"x": 1}, now=now)
    s.add("temp", namespace="v", importance=0.2, valid_until=now + 5 * H, now=now)
    gone = s.add("delete me", namespace="u", now=now)
    s.delete(gone.id, now=now + H)
    s.search("tea", namespace="u", now=now + 2 * H)  # reinforce something


def test_file_store_reopens_identically(tmp_path: Path, now: datetime) -> None:
    path = str(tmp_path / "m.duckdb")
    t = now + 3 * H
    with mk.MemoryStore(path) as s:
        _populate(s, now)
        hits = s.search("where does the user live 杭州", namespace="u", k=5, now=t, reinforce=False)
        w = mk.Weights(0.5, 0.2, 0.1, 0.2, neighbour=0.0, tie=0.0)
        hits_kw = s.search("tea", namespace="u", k=5, weights=w, now=t, reinforce=False)
        frame, audit = s.frame(include_embedding=True), s.audit()
    with mk.MemoryStore(path) as s:
        assert s.frame(include_embedding=True).equals(frame)
        assert s.audit().equals(audit)
        again = s.search("where does the user live 杭州", namespace="u", k=5, now=t, reinforce=False)
        again_kw = s.search("tea", namespace="u", k=5, weights=w, now=t, reinforce=False)
        for a, b in ((hits, again), (hits_kw, again_kw)):
            assert a.height > 0
            assert a.drop("score", "recency").equals(b.drop("score", "recency"))
            np.testing.assert_allclose(a["score"].to_numpy(), b["score"].to_numpy(), rtol=1e-12)
        # the reopened store keeps working
        s.add("新的记忆", namespace="u", now=t)
        assert s.count() == 5


def test_reopen_with_other_embedder_is_readable_not_writable(tmp_path: Path, now: datetime) -> None:
    path = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(path, embedder=mk.HashEmbedder(dim=64)) as s:
        s.add("x", namespace="u", now=now)
        before = s.frame(include_embedding=True)
    for other in (mk.HashEmbedder(dim=128), mk.HashEmbedder(dim=64, trigram_weight=0.0), CountingEmbedder()):
        with mk.MemoryStore(path, embedder=other) as s:
            assert s.count() == 1 and s.frame()["content"].to_list() == ["x"]  # readable
            for write in (lambda: s.add("y", namespace="u", now=now),
                          lambda: s.search("x", namespace="u", now=now)):  # fmt: skip
                with pytest.raises(mk.MemkitError, match="reembed"):
                    write()
    with mk.MemoryStore(path, embedder=mk.HashEmbedder(dim=64)) as s:  # nothing changed
        assert s.frame(include_embedding=True).equals(before)


_LOCK_CHILD = """
import sys, memkit as mk
try:
    mk.MemoryStore(sys.argv[1])
except mk.StoreLocked as e:
    print("StoreLocked", e)
else:
    print("opened")
"""


def test_second_process_gets_store_locked(tmp_path: Path, now: datetime) -> None:
    path = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(path) as s:
        s.add("x", namespace="u", now=now)
        r = subprocess.run(
            [sys.executable, "-c", _LOCK_CHILD, path], capture_output=True, text=True, timeout=60
        )
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("StoreLocked"), r.stdout + r.stderr
        assert s.count() == 1  # the holder is unaffected
    r = subprocess.run([sys.executable, "-c", _LOCK_CHILD, path], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "opened", r.stdout + r.stderr


def test_second_store_in_same_process_gets_store_locked(tmp_path: Path) -> None:
    path = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(path):
        with pytest.raises(mk.StoreLocked):
            mk.MemoryStore(path)
    mk.MemoryStore(path).close()


def test_context_manager_closes(tmp_path: Path, now: datetime) -> None:
    with mk.MemoryStore(str(tmp_path / "m.duckdb")) as s:
        s.add("x", namespace="u", now=now)
    with pytest.raises(mk.MemkitError):
        s.count()
    with pytest.raises(mk.MemkitError):
        s.add("y", namespace="u", now=now)
    s.close()  # idempotent
    with mk.MemoryStore(str(tmp_path / "m.duckdb")) as s2:
        assert s2.count() == 1


# validity bounds survive a reopen exactly: this timestamp's epoch hours round differently when computed
# in SQL (epoch_us / 3.6e9) and in Python (timestamp() / 3600), which is what the index compares.
EDGE = datetime(2026, 1, 18, 8, 10, 20, 410570, tzinfo=UTC)


def test_valid_until_boundary_after_reopen(tmp_path: Path) -> None:
    path = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(path) as s:
        s.add("hello", namespace="u", valid_until=EDGE, now=NOW)
        assert s.search("hello", namespace="u", now=EDGE, reinforce=False).height == 0
    with mk.MemoryStore(path) as s:
        assert s.search("hello", namespace="u", now=EDGE, reinforce=False).height == 0


def test_valid_from_boundary_after_reopen(tmp_path: Path) -> None:
    path = str(tmp_path / "m.duckdb")
    with mk.MemoryStore(path) as s:
        s.add("hello", namespace="u", key="k", valid_from=EDGE, now=NOW)
        assert s.search("hello", namespace="u", now=EDGE, reinforce=False).height == 1
    with mk.MemoryStore(path) as s:
        assert s.read("k", namespace="u", now=EDGE) is not None  # the SQL path is right
        assert s.search("hello", namespace="u", now=EDGE, reinforce=False).height == 1


# ------------------------------------------------------------------------------------------ regressions


def test_stranger_cannot_supersede_a_private_memory(store: mk.MemoryStore, now: datetime) -> None:
    m = store.add(
        "alice 的密码提示", namespace="u", key="secret", requester="alice", access="private", now=now
    )
    try:
        store.add("mallory was here", namespace="u", key="secret", requester="mallory",
                  conflict_policy="supersede", now=now + H)  # fmt: skip
    except mk.AccessDenied:
        pass
    assert store.get(m.id).status == "active"
    assert store.read("secret", namespace="u", requester="alice", now=now + H).id == m.id


def test_keyed_write_is_no_oracle_for_unreadable_values(now: datetime) -> None:
    statuses = []
    for guess in ("1234", "9999"):
        with mk.MemoryStore() as s:
            m = s.add("1234", namespace="u", key="pin", requester="alice", access="private", now=now)
            try:
                statuses.append(s.add(guess, namespace="u", key="pin", requester="mallory", now=now).status)
            except mk.AccessDenied:
                statuses.append("denied")
            assert s.get(m.id).status == "active"
    assert statuses[0] == statuses[1]


def test_search_at_now_ignores_memories_written_later(store: mk.MemoryStore, now: datetime) -> None:
    store.add("written today about tea", namespace="u", now=now)
    store.add("written tomorrow about tea", namespace="u", now=now + timedelta(days=1))
    at_now = store.search("tea", namespace="u", now=now, reinforce=False)["content"].to_list()
    assert at_now == ["written today about tea"]
    assert store.search("tea", namespace="u", now=now + timedelta(days=1), reinforce=False).height == 2


def test_public_slot_is_shared_protected_slot_is_not(store: mk.MemoryStore, now: datetime) -> None:
    store.add("dark mode", namespace="u", key="ui.theme", requester="alice", now=now)
    shared = store.add("light mode", namespace="u", key="ui.theme", requester="bob", now=now)
    assert shared.status == "conflict"  # anyone in the namespace may propose a value for a public slot
    store.add("allergic to nuts", namespace="u", key="health", requester="alice", owner="health",
              access="protected", now=now)  # fmt: skip
    before = store.count()
    with pytest.raises(mk.AccessDenied):
        store.add("not allergic", namespace="u", key="health", requester="bob", now=now)
    assert store.count() == before
    assert store.audit(op="deny")["requester"].to_list() == ["bob"]
    owner_write = store.add("allergic to nuts and milk", namespace="u", key="health", requester="health",
                            access="protected", now=now)  # fmt: skip
    assert owner_write.status == "active"  # the owner's own update takes effect at once


def _brute_force(
    frame: pl.DataFrame, q: np.ndarray, now: datetime, weights: mk.Weights, floor: float, k: int
):
    """The ranking by the textbook formulas over every active row of a frame (no index)."""
    emb = np.asarray(frame["embedding"].to_list(), dtype=np.float64)
    age = np.array([(now - t).total_seconds() / 3600 for t in frame["created_at"]])
    idle = np.array([(now - t).total_seconds() / 3600 for t in frame["last_access_at"]])
    imp = frame["importance"].to_numpy()
    st = mk.decay.strength(imp, age, frame["half_life_hours"].to_numpy())
    score = mk.scoring.hybrid(emb @ q, imp, mk.decay.recency(idle), weights)
    score[st < floor] = -np.inf
    return frame["id"].to_numpy()[mk.scoring.top_k(score, k)].tolist()


@pytest.mark.parametrize("big, small", [(900, 0), (900, 150)])
@pytest.mark.parametrize("floor", [0.1, 0.3])
def test_two_stage_ranking_matches_brute_force(now: datetime, big: int, small: int, floor: float) -> None:
    """Both index paths (dense: one matvec over all rows; sparse: a gather) and the float32 shortlist
    give exactly the ranking of the formulas applied row by row in float64."""
    rng = np.random.default_rng(7)
    store = mk.MemoryStore(embedder=mk.HashEmbedder(dim=32))

    def frame(n: int) -> pl.DataFrame:
        v = rng.normal(size=(n, 32)).astype(np.float32)
        return pl.DataFrame({
            "content": [f"memory {i}" for i in range(n)],
            "importance": rng.uniform(0.05, 1.0, n),
            "half_life_hours": rng.uniform(1, 2000, n),
            "created_at": [now - timedelta(hours=float(h)) for h in rng.uniform(0, 1000, n)],
            "embedding": v / np.linalg.norm(v, axis=1, keepdims=True),
        })  # fmt: skip

    store.add_many(frame(big), namespace="big", now=now)
    if small:
        store.add_many(frame(small), namespace="small", now=now)
    q = store._embed_query("memory 3")
    for ns in ["big", "small"] if small else ["big"]:
        w = mk.Weights(similarity=0.5, importance=0.3, recency=0.2, keyword=0.0, neighbour=0.0, tie=0.0)
        hits = store.search("memory 3", namespace=ns, k=10, weights=w, min_strength=floor, now=now,
                            reinforce=False)  # fmt: skip
        expected = _brute_force(
            store.frame(ns, include_embedding=True), q.astype(np.float64), now, w, floor, 10
        )
        assert hits["id"].to_list() == expected
        recomputed = mk.scoring.hybrid(
            hits["similarity"].to_numpy(), hits["importance"].to_numpy(), hits["recency"].to_numpy(), w
        )
        np.testing.assert_allclose(hits["score"].to_numpy(), recomputed, rtol=0, atol=1e-12)


# ------------------------------------------------------------------------- review findings (regressions)
D = timedelta(days=1)


def test_expired_version_does_not_block_its_key(store: mk.MemoryStore, now: datetime) -> None:
    store.add("office in A", namespace="u", key="office", valid_until=now + D, now=now)
    b = store.add("office in B", namespace="u", key="office", now=now + 2 * D, conflict_policy="strict")
    assert b.status == "active"
    assert store.read("office", namespace="u", now=now + 2 * D).content == "office in B"


def test_forget_with_a_requester_only_touches_its_own(store: mk.MemoryStore, now: datetime) -> None:
    a = store.add(
        "alice private", namespace="u", requester="alice", access="private", importance=0.35, now=now
    )
    store.add("m1", namespace="u", requester="mallory", importance=0.9, now=now)
    store.add("m2", namespace="u", requester="mallory", importance=0.4, now=now)
    plan = store.forget("u", requester="mallory", now=now, policy=mk.ForgetParams(capacity=1))
    assert a.id not in plan["id"].to_list() and plan.height == 1
    assert store.get(a.id).content == "alice private"


def test_private_conflict_does_not_lock_the_owner_out(store: mk.MemoryStore, now: datetime) -> None:
    store.add("url a", namespace="u", requester="alice", key="deploy.url", now=now)
    store.add("url evil", namespace="u", requester="bob", key="deploy.url", access="private", now=now)
    mine = store.add("url b", namespace="u", requester="alice", key="deploy.url", now=now)
    assert mine.status == "active"  # alice updates her own value: bob's private proposal does not block it
    statuses = store.versions("deploy.url", namespace="u")["status"].to_list()
    assert statuses == ["superseded", "conflict", "active"]  # bob's proposal stays pending, for review


def test_as_of_a_backdated_write_is_there_from_its_created_at(store: mk.MemoryStore, now: datetime) -> None:
    """A write with its own earlier created_at (a history) is there from then, as written, in
    frame(as_of=) as in search(now=) (memkit.store.asof); before it, nothing."""
    store.add("住在杭州", namespace="u", key="addr", created_at=now - 10 * D, now=now)
    store.add("住在上海", namespace="u", key="addr", conflict_policy="supersede", now=now + H)
    assert store.frame("u", as_of=now - 11 * D).is_empty()  # nothing had been written yet
    assert store.frame("u", as_of=now - 5 * D)["status"].to_list() == ["active"]
    assert store.search("杭州", namespace="u", now=now - 5 * D, reinforce=False)["content"].to_list() == [
        "住在杭州"
    ]
    assert store.frame("u", as_of=now)["status"].to_list() == ["active"]
    assert store.frame("u", as_of=now + H)["status"].to_list() == ["superseded", "active"]


def test_a_backdated_update_never_replaces_a_version_before_it_was_written(
    store: mk.MemoryStore, now: datetime
) -> None:
    """A write dated before the version current today takes its place in the key's history: current from
    its time until the later-written version's, superseded today, the later version left as it is. No
    snapshot shows a version replaced before it was written (tests/store/test_time_travel_keys.py)."""
    v1 = store.add("url a", namespace="u", key="deploy.url", requester="alice", now=now + 10 * H)
    v2 = store.add("url b", namespace="u", key="deploy.url", requester="alice", now=now + 5 * H)
    assert (v2.status, v2.created_at, v2.supersedes) == ("superseded", now + 5 * H, None)
    assert store.get(v1.id).status == "active" and store.get(v1.id).updated_at == now + 10 * H
    assert store.read("deploy.url", namespace="u", now=now + 12 * H).id == v1.id  # the latest-written
    superseded = store.audit("u", op="supersede")
    assert superseded["memory_id"].to_list() == [v2.id] and superseded["ts"].to_list() == [now + 10 * H]
    assert store.frame("u", as_of=now + 6 * H)["id"].to_list() == [v2.id]  # v1 not written yet
    then = store.frame("u", as_of=now + 11 * H)
    assert dict(zip(then["id"], then["status"], strict=True)) == {v1.id: "active", v2.id: "superseded"}


def test_a_backdated_erasure_still_keeps_an_older_backup_out(
    store: mk.MemoryStore, now: datetime, tmp_path: Path
) -> None:
    """An erasure dated before the merge that held the erased text is logged just after the merge's
    last change: a backup taken before the erasure is older than it, so the import's tombstone
    holds (neither the member nor the merge as it was come back)."""
    a = store.add("I like green tea in the morning", namespace="u", now=now + H)
    store.add("I like green tea in the morning.", namespace="u", now=now + 2 * H)
    merged = store.consolidate("u", now=now + 10 * H)["merged_id"][0]
    backup = str(tmp_path / "backup.jsonl")
    store.export(backup, namespace="u", now=now + 11 * H)
    store.delete(a.id, now=now + 5 * H)  # dated before the merge (10 h)
    erased = store.audit("u", op="delete")["ts"].to_list()
    assert erased[0] > now + 10 * H  # just after the merge's last change
    assert store.get(merged).updated_at == erased[0]  # re-derived then, from what is left
    report = store.import_(backup, on_conflict="overwrite", now=now + 12 * H)
    actions = dict(zip(report["source_id"], report["action"], strict=True))
    assert actions[a.id] == actions[merged] == "erased"
    assert a.id not in store.frame("u")["id"].to_list()


def test_search_in_the_past_never_moves_last_access_back(store: mk.MemoryStore, now: datetime) -> None:
    store.add("likes coffee", namespace="u", now=now)
    store.search("coffee", namespace="u", now=now + 3 * D)
    store.search("coffee", namespace="u", now=now + D)
    assert store.frame("u")["last_access_at"][0] == now + 3 * D
    assert (
        store.search("coffee", namespace="u", now=now + 3 * D, reinforce=False)["last_access_at"][0]
        == now + 3 * D
    )


def test_read_ignores_versions_written_after_now(store: mk.MemoryStore, now: datetime) -> None:
    store.add("v1", namespace="u", key="k", now=now)
    store.add("v2", namespace="u", key="k", conflict_policy="supersede", now=now + D)
    assert store.read("k", namespace="u", now=now + D).content == "v2"
    # v1 was the current version then (superseded only later), v2 was not yet written
    assert store.read("k", namespace="u", now=now).content == "v1"


def test_same_value_as_pending_conflict_replaces_it(store: mk.MemoryStore, now: datetime) -> None:
    store.add("杭州", namespace="u", key="addr", now=now)
    store.add("上海", namespace="u", key="addr", now=now + H)
    store.add("上海", namespace="u", key="addr", now=now + 2 * H)
    assert store.versions("addr", namespace="u")["status"].to_list() == ["active", "superseded", "conflict"]


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.search("x", namespace="u", tags=1),
        lambda s: s.search("x", namespace="u", layer=1),
        lambda s: s.search("x", namespace="u", reinforce="no"),
        lambda s: s.add_many(
            pl.DataFrame({"content": ["x"], "access_count": [3_000_000_000]}), namespace="u"
        ),
        lambda s: s.add_many(pl.DataFrame({"content": ["x"], "access_count": [1e30]}), namespace="u"),
        lambda s: s.audit(op="bogus"),
    ],
)
def test_hostile_inputs_raise_validation_errors(store: mk.MemoryStore, call) -> None:
    with pytest.raises(mk.ValidationError):
        call(store)


def test_deeply_nested_value_is_a_validation_error(store: mk.MemoryStore, now: datetime) -> None:
    v: list = []
    for _ in range(100_000):
        v = [v]
    with pytest.raises(mk.ValidationError, match="value"):
        store.add("x", namespace="u", value=v, now=now)


def test_numpy_int_k_is_accepted(store: mk.MemoryStore, now: datetime) -> None:
    store.add("x", namespace="u", now=now)
    assert store.search("x", namespace="u", k=np.int64(3), now=now).height == 1


@pytest.mark.parametrize("path", ["md:x", "/tmp/x.duckdb?x=1"])
def test_unopenable_paths_raise_validation_error(path: str) -> None:
    with pytest.raises(mk.ValidationError, match="path"):
        mk.MemoryStore(path)


def test_huge_half_life_warns_nothing_and_stays_searchable(store: mk.MemoryStore, now: datetime) -> None:
    store.add("forever", namespace="u", half_life_hours=1e308, now=now)  # warnings are errors here
    assert store.search("forever", namespace="u", now=now + 1000 * D).height == 1


def test_keyword_search_after_delete_forgets_the_erased_words(store: mk.MemoryStore, now: datetime) -> None:
    w = mk.Weights(keyword=1.0, neighbour=0.0, tie=0.0)
    gone = store.add("zebra crossing", namespace="u", now=now)
    store.add("a quiet street", namespace="u", now=now)
    assert store.search("zebra", namespace="u", weights=w, now=now, reinforce=False)["keyword"][0] == 1.0
    store.delete(gone.id, now=now)
    hits = store.search("zebra", namespace="u", weights=w, now=now, reinforce=False)
    assert hits["content"].to_list() == ["a quiet street"] and hits["keyword"][0] == 0.0
    assert store._index.keyword is not None  # postings trimmed in place, not rebuilt
