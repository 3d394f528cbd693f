"""Consolidation keeps every fact and agrees with itself (an adversarial lifecycle audit): a merge never
drops a sentence that differs by a negation, a number or an order; the same memories merge the same
way in every run; a dry run lists what applying does, in the same order; and analyze() judges with the
store's own merge threshold and forgetting policy."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

import memkit as mk
from memkit.consolidate import merge_content

NOW = datetime(2026, 1, 1, tzinfo=UTC)
PAIRS = [
    ("I like coffee.", "I don't like coffee."),
    ("My flight is at 9:30 am.", "My flight is at 9:30 pm."),
    ("The train goes from Beijing to Shanghai.", "The train goes from Shanghai to Beijing."),
    ("Alice owes Bob 20 dollars.", "Bob owes Alice 20 dollars."),
    ("He is the manager.", "She is the manager."),
    ("他是经理。", "她是经理。"),
    ("会议定在3月5日下午", "会议定在5月3日下午"),
    ("用户每天早上喝咖啡，加糖", "用户每天早上喝咖啡，不加糖"),
    ("The user is a teacher.", "The user was a teacher."),
    ("Anna lives in Paris.", "Anna lived in Paris."),
    ("Tea and coffee are fine.", "Tea or coffee are fine."),
]


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_a_merge_keeps_both_sides_of_a_difference(a: str, b: str) -> None:
    s = mk.MemoryStore()
    s.add(a, namespace="u", now=NOW)
    s.add(b, namespace="u", now=NOW + timedelta(seconds=1))
    s.consolidate("u", threshold=0.6, now=NOW + timedelta(minutes=1))  # low: the pair surely clusters
    active = " | ".join(s.frame("u").filter(pl.col("status") == "active")["content"])
    for text in (a, b):  # each side is still said, word for word, in what is active
        assert text.rstrip("。.") in active


def test_a_duplicate_still_adds_nothing() -> None:
    assert merge_content("用户住在杭州。", ["用户住在杭州", "用户住杭州"]) == "用户住在杭州。"
    assert (
        merge_content("Lives in Hangzhou.", ["lives in Hangzhou!", "LIVES IN HANGZHOU"])
        == "Lives in Hangzhou."
    )


def test_the_same_memories_merge_the_same_way_in_every_run() -> None:
    a = "The user likes green tea, lives in Paris, works at a bank and runs every morning."
    b = "The user likes green tea, lives in Lyon, works at a bank and runs every morning."
    merged = set()
    for _ in range(8):  # ids are random: a tie between the two survivors was decided by them
        s = mk.MemoryStore()
        s.add_many(pl.DataFrame({"content": [a, b]}), namespace="u", now=NOW)
        merged.add(s.consolidate("u", now=NOW + timedelta(minutes=1))["content"][0])
    assert len(merged) == 1


def test_a_dry_run_lists_the_clusters_in_the_order_applying_returns_them() -> None:
    s = mk.MemoryStore()
    for ns, who, access in (("a", "alice", "public"), ("b", "bob", "public"), ("a", "alice", "private")):
        s.add("My locker is by the desk.", namespace=ns, requester=who, access=access, now=NOW)
        s.add("My locker is by the desk!", namespace=ns, requester=who, access=access, now=NOW)
    dry = s.consolidate(now=NOW + timedelta(hours=1), dry_run=True).drop("merged_id")
    applied = s.consolidate(now=NOW + timedelta(hours=1))
    assert dry.equals(applied.drop("merged_id")) and applied["merged_id"].null_count() == 0


def test_analyze_plans_with_the_stores_threshold_and_forgetting_policy() -> None:
    s = mk.MemoryStore(settings=mk.Settings(merge_threshold=0.95))
    s.add("Allergic to peanuts: yes.", namespace="u", now=NOW)
    s.add("Allergic to peanuts: no.", namespace="u", now=NOW + timedelta(seconds=1))  # cosine ~0.87
    later = NOW + timedelta(minutes=1)
    assert s.consolidate("u", now=later, dry_run=True).height == 0
    assert s.analyze(namespace="u", now=later).filter(code="MK003").height == 0
    for floor, hours, flagged in ((0.3, 4, 1), (0.05, 7, 0)):  # strength 0.2 at 4 h, 0.07 at 7 h
        s = mk.MemoryStore(settings=mk.Settings(forget=mk.ForgetParams(min_strength=floor)))
        s.add(
            "Pick up the parcel at the front desk.",
            namespace="u",
            importance=0.8,
            layer="short_term",
            now=NOW,
        )
        at = NOW + timedelta(hours=hours)
        assert s.forget(namespace="u", now=at, dry_run=True).height == flagged
        assert s.analyze(namespace="u", now=at).filter(code="MK006").height == flagged


def test_a_fresh_fact_is_not_merged_into_an_old_duplicate_that_forget_would_drop() -> None:
    """A merged memory takes its oldest member's created_at: merged with a year-old duplicate, a fact
    written today would be dated a year old, and forget() would erase it with the merge."""
    s = mk.MemoryStore()
    year_ago = NOW - timedelta(days=400)  # 0.9 · 0.5^(400 / 90) = 0.041: below the forgetting floor
    s.add("The user likes oolong tea.", namespace="u", importance=0.9, now=year_ago)
    fresh = s.add("The user likes oolong tea!", namespace="u", importance=0.9, now=NOW)
    a = s.add("The user likes oolong tea.", namespace="v", importance=0.9, now=year_ago)
    b = s.add("The user likes oolong tea?", namespace="v", importance=0.9, now=year_ago)
    plan = s.consolidate(now=NOW)  # u: not merged; v: two weak duplicates merge among themselves
    assert [sorted(m) for m in plan["members"].to_list()] == [sorted([a.id, b.id])]
    gone = s.forget(namespace="u", now=NOW)["id"].to_list()
    assert fresh.id not in gone and fresh.id in s.frame("u")["id"].to_list()
    assert "_weak" in s.merge_candidates("u", now=NOW)[0].columns
