"""store.consolidate applying memkit.consolidate's plan, and the analyzer's MK003."""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl
import pytest
from conftest import AngleEmbedder, assert_unchanged, snapshot

import memkit as mk

H = timedelta(hours=1)


def _dupes(store: mk.MemoryStore, now: datetime, **kw) -> list[mk.Memory]:
    return [
        store.add("用户喜欢喝美式咖啡", namespace="u", importance=0.5, now=now, **kw),
        store.add("用户喜欢喝美式咖啡，不加糖", namespace="u", importance=0.7, now=now + H, **kw),
        store.add("用户喜欢喝冰美式咖啡", namespace="u", importance=0.6, now=now + 2 * H, **kw),
    ]


def test_dry_run_changes_nothing(store: mk.MemoryStore, now: datetime) -> None:
    _dupes(store, now)
    store.add("completely different: the user lives in Berlin", namespace="u", now=now)
    before = snapshot(store)
    plan = store.consolidate("u", now=now + 3 * H, dry_run=True)
    assert plan.height == 1 and len(plan["members"][0]) == 3
    assert_unchanged(store, before)


def test_apply_merges_fields_and_is_idempotent(store: mk.MemoryStore, now: datetime) -> None:
    a, b, c = _dupes(store, now)
    store.search("美式咖啡", namespace="u", now=now + 3 * H)  # each hit gets access_count 1
    plan = store.consolidate("u", now=now + 4 * H)
    merged = store.get(plan["merged_id"][0])
    assert merged.status == "active" and set(merged.merged_from) == {a.id, b.id, c.id}
    assert (
        merged.content == "用户喜欢喝美式咖啡，不加糖；用户喜欢喝冰美式咖啡"
    )  # the most informative member, nothing repeated
    assert merged.importance == pytest.approx(0.705)  # max, after one reinforcement of +0.005
    assert merged.created_at == now and merged.access_count == 3
    assert {store.get(m.id).status for m in (a, b, c)} == {"superseded"}
    hits = store.search("美式咖啡", namespace="u", now=now + 5 * H, reinforce=False)
    assert hits["id"].to_list() == [merged.id]
    ops = store.audit(op="merge")
    assert ops["memory_id"].to_list() == [merged.id]
    assert store.audit(op="supersede").height == 3
    assert store.consolidate("u", now=now + 5 * H).is_empty()  # a second run merges nothing


def test_access_groups_never_merge(store: mk.MemoryStore, now: datetime) -> None:
    store.add("用户喜欢喝美式咖啡", namespace="u", requester="alice", access="private", now=now)
    store.add("用户喜欢喝美式咖啡", namespace="u", requester="bob", access="public", now=now)
    assert store.consolidate("u", now=now, dry_run=True).is_empty()


def test_merges_survive_reopen(tmp_path, now: datetime) -> None:
    path = str(tmp_path / "c.duckdb")
    with mk.MemoryStore(path) as s:
        _dupes(s, now)
        merged_id = s.consolidate("u", now=now + 3 * H)["merged_id"][0]
        before = s.search("美式咖啡", namespace="u", now=now + 4 * H, reinforce=False)
    with mk.MemoryStore(path) as s:
        after = s.search("美式咖啡", namespace="u", now=now + 4 * H, reinforce=False)
        assert after["id"].to_list() == [merged_id]
        assert after.drop("last_access_at").equals(before.drop("last_access_at"))


def test_analyzer_reports_duplicates_until_consolidated(store: mk.MemoryStore, now: datetime) -> None:
    _dupes(store, now)
    found = store.analyze("u", now=now + 3 * H)
    assert found.filter(pl.col("code") == "MK003").height == 1
    store.consolidate("u", now=now + 3 * H)
    assert store.analyze("u", now=now + 3 * H).filter(pl.col("code") == "MK003").is_empty()


def test_bad_params_change_nothing(store: mk.MemoryStore, now: datetime) -> None:
    _dupes(store, now)
    before = snapshot(store)
    with pytest.raises(mk.ValidationError):
        store.consolidate("u", threshold=1.5, now=now)
    with pytest.raises(mk.ValidationError):
        store.consolidate("u", now=now, params={"threshold": 0.9})  # type: ignore[arg-type]
    assert_unchanged(store, before)


A, B, C = "Alice takes the 7:10 bus to work", "Alice commutes by bus", "Alice drives to work on Fridays"


def test_weak_memories_chained_through_a_strong_one_merge_nowhere(now: datetime) -> None:
    """A and C are a year old (strength ~0.03, below forget's 0.1), B fresh; cos(A,B) = cos(B,C) = 0.906
    but cos(A,C) = 0.643. consolidate, analyze's MK003 and the merge explorer used to merge A with C."""
    s = mk.MemoryStore(embedder=AngleEmbedder({A: 0, B: 25, C: 50}))
    old = now - timedelta(days=400)
    s.add(A, namespace="u", importance=0.5, layer="long_term", now=old)
    s.add(C, namespace="u", importance=0.5, layer="long_term", now=old + H)
    s.add(B, namespace="u", importance=0.8, layer="long_term", now=now)
    frame, _ = s.merge_candidates("u", now=now)
    assert frame.sort("content")["_weak"].to_list() == [False, True, True]  # B, C (drives), A (takes)
    assert s.consolidate("u", now=now, dry_run=True).is_empty()
    assert s.analyze("u", now=now).filter(pl.col("code") == "MK003").is_empty()
    widgets = pytest.importorskip("memkit.widgets")
    assert widgets.merge_explorer(s, "u", now=now).plan.is_empty()
    assert s.consolidate("u", now=now).is_empty()
    assert s.frame("u").filter(pl.col("status") == "active").height == 3  # nothing merged


def test_an_explicit_threshold_wins_over_params(now: datetime) -> None:
    """consolidate(threshold=t, params=MergeParams(...)) used to plan with params' 0.85 whatever t was.
    An explicit argument wins over a parameter object, as search(min_strength=) does."""
    s = mk.MemoryStore(embedder=AngleEmbedder({"User likes tea": 0, "User likes green tea": 30}))
    s.add("User likes tea", namespace="u", now=now)
    s.add("User likes green tea", namespace="u", now=now)  # cosine 0.866
    params = mk.MergeParams(max_cluster=10)
    for t, clusters in ((0.8, 1), (0.85, 1), (0.95, 0)):
        plan = s.consolidate("u", threshold=t, params=params, now=now, dry_run=True)
        assert plan.height == clusters == s.consolidate("u", threshold=t, now=now, dry_run=True).height
    assert (
        "cosine >= 0.8 "
        in s.consolidate("u", threshold=0.8, params=params, now=now, dry_run=True)["reason"][0]
    )
    # without a threshold, params' own; with neither, the store's
    assert s.consolidate("u", params=mk.MergeParams(threshold=0.9), now=now, dry_run=True).is_empty()
    assert s.consolidate("u", now=now, dry_run=True).height == 1
    before = snapshot(s)
    with pytest.raises(mk.ValidationError, match="threshold"):  # checked as a threshold alone is
        s.consolidate("u", threshold=1.5, params=params, now=now)
    assert_unchanged(s, before)
