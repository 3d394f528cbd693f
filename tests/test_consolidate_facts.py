"""Consolidation keeps every fact and agrees with itself (an adversarial lifecycle audit): a merge never
drops a sentence that differs by a negation, a number or an order; the same memories merge the same
way in every run; a dry run lists what applying does, in the same order; and analyze() judges with the
store's own merge threshold and forgetting policy. And (an audit on real conversations) the fact rule:
two memories one fact token apart (memkit.facts) are not merged by default, however similar, and no
chain joins them in one cluster."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memkit as mk
from memkit.consolidate import held_apart, merge_content, plan_merges
from memkit.facts import fact_key

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
    ("Budget is $5000", "Budget is €5000"),  # h126 F1: the words were equal, one sentence was dropped
    ("Temperature is -5 degrees", "Temperature is 5 degrees"),
    ("I love 🐶", "I love 🐱"),
]


@pytest.mark.parametrize(("a", "b"), PAIRS)
@pytest.mark.parametrize("distinct_facts", [True, False])
def test_a_merge_keeps_both_sides_of_a_difference(a: str, b: str, distinct_facts: bool) -> None:
    s = mk.MemoryStore()
    s.add(a, namespace="u", now=NOW)
    s.add(b, namespace="u", now=NOW + timedelta(seconds=1))
    params = mk.MergeParams(threshold=0.6, distinct_facts=distinct_facts)  # low: the pair surely clusters
    s.consolidate("u", now=NOW + timedelta(minutes=1), params=params)
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
    cosine_only = mk.MergeParams(distinct_facts=False)  # by default Paris / Lyon are held apart (names)
    for _ in range(8):  # ids are random: a tie between the two survivors was decided by them
        s = mk.MemoryStore()
        s.add_many(pl.DataFrame({"content": [a, b]}), namespace="u", now=NOW)
        assert s.consolidate("u", now=NOW + timedelta(minutes=1), dry_run=True).is_empty()
        merged.add(s.consolidate("u", now=NOW + timedelta(minutes=1), params=cosine_only)["content"][0])
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


# ------------------------------------------------------------------------------ the fact rule
# one fact token apart (a number, a time word, a negation, a name): two facts, however similar
HELD_APART = [
    ("用户买电脑的预算是5000元", "用户买电脑的预算是8000元"),
    ("Has 2 cats named Tom and Jerry", "Has 3 cats named Tom and Jerry"),
    ("用户每天早上跑步5公里", "用户每天早上跑步10公里"),
    ("用户的生日是6月1日", "用户的生日是6月11日"),
    ("周三下午三点开项目例会", "周四下午三点开项目例会"),
    ("Flight to Denver leaves at 9 am", "Flight to Denver leaves at 9 pm"),
    ("用户2019年搬到深圳", "用户2021年搬到深圳"),
    ("The team meeting is on Monday at 3 pm", "The team meeting is on Tuesday at 3 pm"),
    ("I like coffee", "I don't like coffee"),
    ("Allergic to peanuts", "Not allergic to peanuts"),
    ("用户对花生过敏", "用户对花生不过敏"),
    ("喜欢吃辣", "不喜欢吃辣"),
    ("Gina's favorite dance style is contemporary", "Jon's favorite dance style is contemporary"),
    ("Alice decided to learn Rust this winter", "Alice decided to learn Go this winter"),
    ("Gina took the kids to the zoo", "Jon took the kids to the zoo"),  # a name starting the sentence
]
DUPLICATES = [  # spellings of one fact: merged as before
    ("用户喜欢喝美式咖啡。", "用户喜欢喝美式咖啡"),
    ("用户的生日是6月1日", "用户的生日是六月一号"),
    ("Has 2 cats", "has two cats"),
    ("用户买电脑的预算是5,000元", "用户买电脑的预算是五千元"),
    ("I like green tea in the morning", "I like green tea in the morning!"),
    ("用户每天早上跑步5公里", "用户每天早晨跑步五公里"),
    ("Discussed the budget with Jon on Monday", "discussed the budget with Jon on Monday"),  # (a verb,
    ("Reviewed the PRD with the team", "reviewed the PRD with the team."),  # capitalized to start: no name)
]


def _same_vector(texts: list[str], written: list[datetime] | None = None) -> tuple[pl.DataFrame, np.ndarray]:
    """``texts`` as active memories of one group, every embedding the same (cosine 1.0 each pair)."""
    n = len(texts)
    t = written or [NOW + timedelta(minutes=i) for i in range(n)]
    frame = pl.DataFrame({
        "id": [f"m{i}" for i in range(n)], "namespace": ["u"] * n, "layer": ["long_term"] * n,
        "key": pl.Series([None] * n, dtype=pl.String), "content": texts, "importance": [0.5] * n,
        "created_at": t, "last_access_at": t, "access_count": [0] * n, "status": ["active"] * n,
        "protected": [False] * n,
    })  # fmt: skip
    return frame, np.tile(np.array([[1.0, 0.0]], np.float32), (n, 1))


@pytest.mark.parametrize(("a", "b"), HELD_APART)
def test_a_pair_one_fact_token_apart_is_held_apart_by_default_and_merged_with_the_switch_off(
    a: str, b: str
) -> None:
    frame, emb = _same_vector([a, b])
    assert plan_merges(frame, emb).is_empty()  # cosine 1.0, but two facts
    apart = held_apart(frame, emb)
    assert apart.select("id_a", "id_b", "similarity").rows() == [("m0", "m1", 1.0)]
    assert apart["reason"][0].startswith("fact tokens differ: ")
    merged = plan_merges(frame, emb, mk.MergeParams(distinct_facts=False))  # by cosine alone
    assert merged.height == 1 and held_apart(frame, emb, mk.MergeParams(distinct_facts=False)).is_empty()
    assert a.rstrip("。") in merged["content"][0] and b in merged["content"][0]  # both said


@pytest.mark.parametrize(("a", "b"), DUPLICATES)
def test_true_duplicates_still_merge(a: str, b: str) -> None:
    frame, emb = _same_vector([a, b])
    assert plan_merges(frame, emb).height == 1 and held_apart(frame, emb).is_empty()


def test_a_relative_date_said_on_other_days_is_held_apart() -> None:
    """LoCoMo: "a hike next month" said on 8 July and on 1 October merged, dated 8 July: the October
    hike's month was lost. Said on one day, the two merge."""
    text = [
        "Andrew is planning a hike with Audrey next month.",
        "Andrew is planning a hike with Audrey next month!",
    ]
    july, october = datetime(2023, 7, 8, 12, tzinfo=UTC), datetime(2023, 10, 1, 12, tzinfo=UTC)
    frame, emb = _same_vector(text, [july, october])
    assert plan_merges(frame, emb).is_empty()
    assert "relative time words written on other days" in held_apart(frame, emb)["reason"][0]
    frame, emb = _same_vector(text, [july, july + timedelta(hours=3)])
    assert plan_merges(frame, emb).height == 1


def test_a_chain_never_joins_two_memories_whose_facts_differ() -> None:
    """A~B and B~C used to put A and C in one cluster whatever they said; equal fact tokens are an
    equivalence, so each cluster holds one set of them."""
    texts = ["预算是5000元", "预算是五千元", "预算是8000元", "预算是8000元。", "预算是8000元吗"]
    frame, emb = _same_vector(texts)
    plan = plan_merges(frame, emb)
    assert sorted(map(sorted, plan["members"].to_list())) == [["m0", "m1"], ["m2", "m3", "m4"]]
    assert held_apart(frame, emb).height == 2 * 3  # every pair across the two: 5000 ≠ 8000


pool = st.sampled_from(
    ["预算是5000元", "预算是五千元", "预算是8000元", "Has 2 cats", "Has two cats", "Has 3 cats",
     "I like coffee", "I don't like coffee", "Meeting on Monday", "Meeting on Tuesday", "喜欢吃辣",
     "不喜欢吃辣", "Gina likes tea", "Jon likes tea", "likes tea", "早上跑步", "晚上跑步"]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(pool, st.floats(0.0, 40.0)), min_size=2, max_size=12))
def test_every_cluster_holds_one_set_of_fact_tokens_and_a_second_plan_merges_nothing(
    rows: list[tuple[str, float]],
) -> None:
    """Memories on a line of angles chain pair by pair at the threshold; whatever the chain, every two
    members of a cluster have equal fact tokens, and the merged memories link to nothing more."""
    texts = [t for t, _ in rows]
    angle = np.radians([a for _, a in rows])
    emb = np.stack([np.cos(angle), np.sin(angle)], axis=1).astype(np.float32)  # (n, 2) unit rows
    frame, _ = _same_vector(texts)
    plan = plan_merges(frame, emb)
    for members in plan["members"].to_list():
        assert len({fact_key(texts[int(m[1:])]) for m in members}) == 1
    # apply it as the store does: members go, the merged text comes with the survivor's vector
    gone = {m for ms in plan["members"].to_list() for m in ms}
    keep = [i for i in range(len(texts)) if f"m{i}" not in gone]
    survivors = [int(s[1:]) for s in plan["survivor"].to_list()]
    after = [texts[i] for i in keep] + plan["content"].to_list()
    frame2, _ = _same_vector(after)
    emb2 = np.vstack([emb[keep], emb[survivors]]) if survivors else emb[keep]
    assert plan_merges(frame2, emb2.reshape(-1, 2)).is_empty()
