"""store.consolidate applying memkit.consolidate's plan, and the analyzer's MK003; the fact rule
(MergeParams.distinct_facts, store.merge_distinct_facts) on DuckDB and PostgreSQL."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

import polars as pl
import pytest
from conftest import AngleEmbedder, assert_unchanged, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memkit as mk

H = timedelta(hours=1)


def _dupes(store: mk.MemoryStore, now: datetime, **kw) -> list[mk.Memory]:
    return [
        store.add("用户喜欢喝美式咖啡", namespace="u", importance=0.5, now=now, **kw),
        store.add("用户喜欢喝美式咖啡，少加糖", namespace="u", importance=0.7, now=now + H, **kw),
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
        merged.content == "用户喜欢喝美式咖啡，少加糖；用户喜欢喝冰美式咖啡"
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


def test_a_bad_threshold_names_the_argument_passed(store: mk.MemoryStore, now: datetime) -> None:
    """consolidate(threshold=1.5) used to fail naming MergeParams.threshold, a name the caller never
    wrote; the error names `threshold`, with or without params (whose range it keeps)."""
    _dupes(store, now)
    before = snapshot(store)
    for params in (None, mk.MergeParams(max_cluster=10)):
        for bad in (1.5, 0.4, "0.9", True, float("nan")):
            with pytest.raises(mk.ValidationError) as ei:
                store.consolidate("u", threshold=bad, params=params, now=now)
            assert ei.value.field == "threshold", (bad, str(ei.value))
    assert_unchanged(store, before)
    assert store.consolidate("u", threshold=0.5, now=now + 3 * H, dry_run=True).height == 1  # the range's end


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


W1, W2, S = "User likes green tea", "User likes green tea a lot", "User really likes green tea"


def _strengths(store: mk.MemoryStore, ids: list[str], at: datetime) -> list[float]:
    """The strength at ``at`` of each memory of ``ids`` (as forget and the merge planner compute it)."""
    rows = [store.get(i) for i in ids]
    ages = [(at - r.created_at) / H for r in rows]
    return [
        float(mk.decay.strength(r.importance, a, r.half_life_hours)) for r, a in zip(rows, ages, strict=True)
    ]


def test_a_merge_of_weak_memories_stays_weak_and_a_second_plan_finds_none(now: datetime) -> None:
    """W1 (0.9, half-life 1 h, 100 h old) and W2 (0.05, half-life 100,000 h) are both below forget's
    floor; S is strong. Their merge used to take importance 0.9 (W1's), half-life 100,000 h (W2's) and
    W1's date: strength 0.9, no longer weak, so a second consolidate merged it with S (and a merge of
    weak members survived forget). Now it is no stronger at `now` than its strongest member, W2."""
    s = mk.MemoryStore(embedder=AngleEmbedder({W1: 0, W2: 1, S: 2}))
    t = now + 100 * H
    w1 = s.add(W1, namespace="u", importance=0.9, half_life_hours=1.0, layer="long_term", now=now)
    w2 = s.add(W2, namespace="u", importance=0.05, half_life_hours=100_000.0, layer="long_term", now=t - H)
    s.add(S, namespace="u", importance=0.9, layer="long_term", now=t - H)
    assert s.forget("u", now=t, dry_run=True)["reason"].to_list() == ["weak", "weak"]
    plan = s.consolidate("u", now=t)
    assert plan["members"].to_list() == [[w1.id, w2.id]]
    merged = s.get(plan["merged_id"].item())
    assert merged.importance == plan["importance"].item()  # the plan says what is written
    assert (merged.half_life_hours, merged.created_at) == (100_000.0, now)
    assert _strengths(s, [merged.id], t)[0] <= max(_strengths(s, [w1.id, w2.id], t)) < 0.1
    assert s.consolidate("u", now=t, dry_run=True).is_empty()  # was: the merged row and S
    assert s.analyze("u", now=t).filter(pl.col("code") == "MK003").is_empty()  # one planner, one answer
    widgets = pytest.importorskip("memkit.widgets")
    assert widgets.merge_explorer(s, "u", now=t).plan.is_empty()
    assert s.consolidate("u", now=t).is_empty()
    assert set(s.forget("u", now=t)["id"]) == {merged.id, w1.id, w2.id}  # forget's, as the members were


def test_erasing_a_member_rederives_a_merge_as_weak_as_what_is_left(now: datetime) -> None:
    """A re-derived merge follows the same rule at the erasure's `now`: the two weak members left do
    not make a strong memory either."""
    third = "User likes green tea very much"
    s = mk.MemoryStore(embedder=AngleEmbedder({W1: 0, W2: 1, third: 3}))
    t = now + 100 * H
    w1 = s.add(W1, namespace="u", importance=0.9, half_life_hours=1.0, layer="long_term", now=now)
    s.add(W2, namespace="u", importance=0.05, half_life_hours=100_000.0, layer="long_term", now=t - H)
    w3 = s.add(third, namespace="u", importance=0.06, half_life_hours=10.0, layer="long_term", now=t - H)
    merged = s.consolidate("u", now=t)["merged_id"].item()
    s.delete(w3.id, now=t + H)
    again = s.get(merged)
    assert set(again.merged_from) >= {w1.id} and w3.id not in again.content
    left = [m for m in again.merged_from if m != w3.id]
    assert _strengths(s, [merged], t + H)[0] <= max(_strengths(s, left, t + H)) < 0.1


_member = st.tuples(
    st.sampled_from([0.02, 0.05, 0.1, 0.3, 0.6, 0.9, 1.0]),  # importance
    st.sampled_from([1.0, 24.0, 720.0, 2160.0, 100_000.0]),  # half-life, hours
    st.sampled_from([0, 1, 10, 100, 1000]),  # age at `now`, hours
    st.sampled_from([0, 1, 5, 20, 35]),  # angle, degrees: 35 apart is below the threshold
)


@settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(members=st.lists(_member, min_size=2, max_size=5))
def test_consolidation_is_idempotent_and_revives_nothing(members: list, now: datetime) -> None:
    """Property: right after applying a plan, a second plan finds nothing; every merged memory is no
    stronger at `now` than its strongest member, so one of weak members is weak (forget's business)."""
    texts = [f"User likes green tea, note {i}" for i in range(len(members))]
    s = mk.MemoryStore(embedder=AngleEmbedder({t: m[3] for t, m in zip(texts, members, strict=True)}))
    try:
        t = now + 1000 * H
        for text, (imp, hl, age, _) in zip(texts, members, strict=True):
            s.add(text, namespace="u", importance=imp, half_life_hours=hl, layer="long_term", now=t - age * H)
        plan = s.consolidate("u", now=t)
        assert s.consolidate("u", now=t, dry_run=True).is_empty(), plan
        for row in plan.filter(pl.col("merged_id").is_not_null()).iter_rows(named=True):
            strongest = max(_strengths(s, row["members"], t))
            (merged,) = _strengths(s, [row["merged_id"]], t)
            assert merged <= strongest * (1 + 1e-9)
            assert (merged < 0.1) == (strongest < 0.1)  # weak exactly when its members were
    finally:
        s.close()


# ------------------------------------------------------------------------------ the fact rule
D = timedelta(days=1)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Not allergic to peanuts", "Allergic to peanuts"),  # cosine 1.0: "not" is a stopword
        ("Allergic to peanuts", "Not allergic to peanuts"),
        ("Not married", "Married"),
        ("不喜欢吃辣", "喜欢吃辣"),  # cosine 0.91
        ("用户对花生不过敏", "用户对花生过敏"),
    ],
)
def test_a_fact_and_its_negation_both_stay_said_and_searchable(
    store: mk.MemoryStore, now: datetime, older: str, newer: str
) -> None:
    """An audit found "Not allergic to peanuts" + (a month later) "Allergic to peanuts" merged into the
    first alone: the newer fact was gone from the store and from search."""
    store.add(older, namespace="u", now=now)
    store.add(newer, namespace="u", now=now + 30 * D)
    later = now + 31 * D
    assert store.consolidate("u", now=later).is_empty()  # two facts: held apart by default
    active = store.frame("u").filter(pl.col("status") == "active")["content"].to_list()
    assert sorted(active) == sorted([older, newer])
    assert store.search(newer, namespace="u", k=1, now=later, reinforce=False)["content"][0] == newer
    store.merge_distinct_facts = False  # the switch off: merged by cosine, the merged memory says both
    plan = store.consolidate("u", now=later)
    assert plan.height == 1 and plan["merged_id"][0] is not None
    merged = store.get(plan["merged_id"][0], namespace="u").content
    assert older in merged and newer in merged
    hits = store.search(newer, namespace="u", k=1, now=later, reinforce=False)
    assert newer in hits["content"][0]


def test_the_switch_travels_with_the_settings(store: mk.MemoryStore, now: datetime) -> None:
    store.add("用户买电脑的预算是5000元", namespace="u", now=now)
    store.add("用户买电脑的预算是8000元", namespace="u", now=now + H)  # cosine 0.92
    assert store.merge_distinct_facts is True and store.settings.merge_distinct_facts is True
    assert store.consolidate("u", now=now + 2 * H, dry_run=True).is_empty()
    assert store.analyze("u", now=now + 2 * H).filter(pl.col("code") == "MK003").is_empty()
    explicit = store.consolidate(
        "u", now=now + 2 * H, dry_run=True, params=mk.MergeParams(distinct_facts=False)
    )
    assert explicit.height == 1  # params= decides for one call
    store.settings = dataclasses.replace(store.settings, merge_distinct_facts=False)
    assert store.merge_distinct_facts is False and store.merge_params() == mk.MergeParams(
        distinct_facts=False
    )
    assert store.analyze("u", now=now + 2 * H).filter(pl.col("code") == "MK003").height == 1
    assert store.consolidate("u", now=now + 2 * H).height == 1
    with pytest.raises(mk.ValidationError, match="^merge_distinct_facts: must be a bool"):
        store.merge_distinct_facts = "no"  # type: ignore[assignment]


# ------------------------------------------------------------------- one instant: the order written
SAME_INSTANT = [  # one batch, one instant: the first says most (the survivor); no fact tokens
    "the user likes green tea with honey and lemon",
    "the user likes green tea with honey",
    "works from home",
    "plays the violin",
]


def _reversed_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ids minted in the reverse of the write order (memkit's own are random): a tie broken by id
    comes out reversed."""
    from memkit.portable import rows

    counter = iter(range(2**40, 0, -1))
    monkeypatch.setattr(rows, "new_ids", lambda n: [f"{next(counter):016x}" for _ in range(n)])


def test_one_instants_merge_reads_in_the_order_written(
    monkeypatch: pytest.MonkeyPatch, now: datetime
) -> None:
    """The merged text, members and survivor of memories written at one instant follow the write
    order, also when an erasure re-derives the merge (ids: the reverse of that order)."""
    _reversed_ids(monkeypatch)
    s = mk.MemoryStore(embedder=AngleEmbedder(dict.fromkeys(SAME_INSTANT, 0.0)))
    try:
        tags = [[f"t{i}"] for i in range(len(SAME_INSTANT))]
        batch = pl.DataFrame({"content": SAME_INSTANT, "tags": tags})
        ids = s.add_many(batch, namespace="u", now=now)["id"].to_list()
        assert ids == sorted(ids, reverse=True)
        plan = s.consolidate("u", now=now + H, params=mk.MergeParams(distinct_facts=False))
        assert plan["members"].to_list() == [ids] and plan["survivor"].item() == ids[0]
        merged = s.get(plan["merged_id"].item())
        assert merged.content == "; ".join([SAME_INSTANT[0], *SAME_INSTANT[2:]])
        assert list(merged.merged_from) == ids and list(merged.tags) == ["t0", "t1", "t2", "t3"]
        s.delete(ids[0], now=now + 2 * H)  # the survivor goes: the second says most of what is left
        again = s.get(merged.id)
        assert again.content == "; ".join(SAME_INSTANT[1:])
    finally:
        s.close()


def test_a_survivor_tie_at_one_instant_goes_to_the_first_written(
    monkeypatch: pytest.MonkeyPatch, now: datetime
) -> None:
    _reversed_ids(monkeypatch)
    s = mk.MemoryStore(embedder=AngleEmbedder({"likes tea": 0.0}))
    try:
        ids = s.add_many(pl.DataFrame({"content": ["likes tea"] * 3}), namespace="u", now=now)["id"].to_list()
        plan = s.consolidate("u", now=now + H, dry_run=True)
        assert plan["survivor"].item() == ids[0] and plan["members"].to_list() == [ids]
    finally:
        s.close()
