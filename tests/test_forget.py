"""Forgetting: the pure plan (memkit.forget.plan_forget) and store.forget applying it."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import polars as pl
import pytest
from conftest import AngleEmbedder, assert_unchanged, snapshot

import memkit as mk
from memkit import views
from memkit.forget import plan_forget
from memkit.params import ForgetParams

H = timedelta(hours=1)
# texts this file merges on purpose differ in fact tokens (memkit.facts): merged by cosine alone
COSINE_ONLY = mk.MergeParams(distinct_facts=False)


def _frame(now: datetime, **cols) -> pl.DataFrame:
    n = len(cols["id"])
    base = {
        "namespace": ["u"] * n,
        "status": ["active"] * n,
        "importance": [0.9] * n,
        "half_life_hours": [2160.0] * n,
        "created_at": [now - H] * n,
        "valid_until": pl.Series([None] * n, dtype=pl.Datetime("us", "UTC")),
        "access_count": [0] * n,
        "protected": [False] * n,
    }
    return pl.DataFrame({**base, **cols})


def test_reasons_expired_weak_capacity_in_that_order(now: datetime) -> None:
    f = _frame(
        now,
        id=["exp", "weak", "cheap", "dear", "keep"],
        importance=[0.9, 0.6, 0.3, 0.9, 0.9],
        half_life_hours=[2160.0, 2.0, 2160.0, 2160.0, 2160.0],
        created_at=[now - H, now - 8 * H, now - H, now - H, now - H],
        valid_until=pl.Series([now, None, None, None, None], dtype=pl.Datetime("us", "UTC")),
    )
    plan = plan_forget(f, ForgetParams(capacity=2), now)
    assert plan.select("id", "reason").rows() == [("exp", "expired"), ("weak", "weak"), ("cheap", "capacity")]
    assert plan.filter(pl.col("id") == "weak")["strength"][0] == pytest.approx(0.0375)


def test_forget_cost_ranks_by_importance_and_access(now: datetime) -> None:
    # cost = 2·importance + access_count / 1.1: 0.8 / 0 accesses -> 1.6; 0.5 / 2 accesses -> 2.82
    f = _frame(now, id=["a", "b", "c"], importance=[0.8, 0.5, 0.9], access_count=[0, 2, 5])
    plan = plan_forget(f, ForgetParams(capacity=2), now)
    assert plan["id"].to_list() == ["a"]
    assert plan["forget_cost"][0] == pytest.approx(1.6)


def test_forget_cost_divides_access_count_by_1_1(now: datetime) -> None:
    # "once" 0.5 / 1 access: 2·0.5 + 1/1.1 = 1.909091; "never" 0.97 / 0 accesses: 2·0.97 = 1.94.
    # With 1.0 for 1.1, "once" would cost 2.0 and "never" would go first instead.
    f = _frame(now, id=["never", "once", "dear"], importance=[0.97, 0.5, 0.9], access_count=[0, 1, 5])
    plan = plan_forget(f, ForgetParams(capacity=2), now)
    assert plan.select("id", "reason").rows() == [("once", "capacity")]
    assert plan["forget_cost"].to_list() == pytest.approx([1.909091], abs=1e-6)
    plan = plan_forget(f, ForgetParams(capacity=1), now)  # two go, cheapest first; "dear" costs 6.345
    assert plan["id"].to_list() == ["once", "never"]
    assert plan["forget_cost"].to_list() == pytest.approx([1.909091, 1.94], abs=1e-6)


def test_weak_is_strictly_below_the_floor(now: datetime) -> None:
    # half-life 1 h, age 1 h: strength = importance / 2. The plan compares the exact strength (it used to
    # compare it rounded to 6 decimals, and kept "noise", which memory_states calls faded): only a
    # memory exactly at the floor stays, and `detail` shows as many decimals as say "below".
    f = _frame(
        now,
        id=["at", "below", "noise"],
        importance=[0.2, 0.199998, 0.1999999],  # strengths 0.1, 0.099999, 0.09999995 (rounds to 0.1)
        half_life_hours=[1.0, 1.0, 1.0],
    )
    plan = plan_forget(f, ForgetParams(min_strength=0.1), now)
    assert plan.select("id", "reason").rows() == [("below", "weak"), ("noise", "weak")]
    assert plan["strength"].to_list() == pytest.approx([0.099999, 0.09999995], abs=1e-12)
    assert plan["detail"].to_list() == ["strength 0.099999 < 0.1", "strength 0.09999995 < 0.1"]
    # one second older, the memory at the floor falls below it: 0.1 · 0.5^(1/3600) = 0.099981
    older = f.head(1).with_columns(created_at=pl.col("created_at") - timedelta(seconds=1))
    plan = plan_forget(older, ForgetParams(min_strength=0.1), now)
    assert plan.select("id", "reason", "detail").rows() == [("at", "weak", "strength 0.099981 < 0.1")]
    assert plan["strength"][0] == pytest.approx(0.1 * 0.5 ** (1 / 3600), abs=1e-15)
    # the DESIGN.md example: importance 0.6, half-life 2 h, 4 h old -> exactly 0.15
    f = _frame(now, id=["m"], importance=[0.6], half_life_hours=[2.0], created_at=[now - 4 * H])
    assert plan_forget(f, ForgetParams(min_strength=0.15), now).is_empty()
    assert plan_forget(f, ForgetParams(min_strength=0.16), now)["strength"].to_list() == [0.15]


def test_the_default_forgetting_floor_is_the_articles_one_half_life_later(now: datetime) -> None:
    # importance 0.5, half-life 90 days: below the articles' 0.1 after 209 days, below 0.05 after 299
    ages = [now - timedelta(days=250), now - timedelta(days=300)]
    f = _frame(now, id=["250 d", "300 d"], importance=[0.5, 0.5], created_at=ages)
    assert ForgetParams().min_strength == 0.05
    assert plan_forget(f, ForgetParams(), now)["id"].to_list() == ["300 d"]
    assert plan_forget(f, ForgetParams(min_strength=0.1), now)["id"].to_list() == ["300 d", "250 d"]


def test_equal_cost_drops_the_older_first_then_the_first_written(now: datetime) -> None:
    # all cost 2·0.5 = 1.0; ids are listed so that neither frame order nor id order picks the oldest
    f = _frame(
        now,
        id=["b", "a", "c", "d"],
        created_at=[now - 2 * H, now - H, now - 3 * H, now - 3 * H],
        importance=[0.5, 0.5, 0.5, 0.9],  # "d" is dearer: it stays whatever its age
    )
    plan = plan_forget(f, ForgetParams(capacity=2), now)
    assert plan["id"].to_list() == ["c", "b"]
    assert plan["forget_cost"].to_list() == [1.0, 1.0]
    # same cost and same age: the first in the frame (the first written) goes first, never by id
    f = _frame(now, id=["m2", "m3", "m1"], importance=[0.5, 0.5, 0.5])
    assert plan_forget(f, ForgetParams(capacity=1), now)["id"].to_list() == ["m2", "m3"]


def test_protected_and_pending_are_never_dropped(now: datetime) -> None:
    f = _frame(
        now,
        id=["p", "c", "q", "x"],
        importance=[0.01, 0.01, 0.01, 0.01],
        status=["active", "conflict", "quarantined", "active"],
        protected=[True, False, False, False],
    )
    plan = plan_forget(f, ForgetParams(capacity=1), now)
    assert plan["id"].to_list() == ["x"]


def test_the_members_of_a_live_merge_go_with_it_not_one_by_one(now: datetime) -> None:
    """A merge's superseded members are never recalled, so they always decay; dropping one re-derived
    the live merge without its facts. Members of a merge that is itself gone stay history."""
    f = _frame(now, id=["m", "a", "b", "old", "gone"], importance=[0.9, 0.01, 0.01, 0.01, 0.01],
               status=["active", "superseded", "superseded", "superseded", "superseded"]).with_columns(
        merged_from=pl.Series([["a", "b"], [], [], [], []], dtype=pl.List(pl.String)))  # fmt: skip
    assert sorted(plan_forget(f, ForgetParams(), now)["id"]) == ["gone", "old"]
    everything = sorted(plan_forget(f.drop("merged_from"), ForgetParams(), now)["id"])
    assert everything == ["a", "b", "gone", "old"]  # a frame without merges: no member to keep


def test_a_merge_of_merges_and_a_held_merge_keep_their_members_at_any_depth(now: datetime) -> None:
    ids = ["m2", "m1", "a1", "a2", "q", "b1"]
    status = ["active", "superseded", "superseded", "superseded", "quarantined", "superseded"]
    members = pl.Series([["m1"], ["a1", "a2"], [], [], ["b1"], []], dtype=pl.List(pl.String))
    f = _frame(now, id=ids, importance=[0.9, 0.01, 0.01, 0.01, 0.9, 0.01], status=status)
    f = f.with_columns(merged_from=members)
    assert plan_forget(f, ForgetParams(), now).is_empty()  # m1 (a merge inside m2) and its members stay


def test_store_forget_keeps_a_live_merges_members(store: mk.MemoryStore, now: datetime) -> None:
    store.add("用户喜欢喝美式咖啡，不加糖", namespace="u", importance=0.9, protected=True, now=now)
    store.add("用户喜欢喝冰美式咖啡", namespace="u", importance=0.35, now=now)
    merged = store.consolidate("u", now=now, threshold=0.6, params=COSINE_ONLY)["merged_id"][0]
    later = now + timedelta(days=170)  # the weaker member's strength is below 0.1, the merge's is not
    assert store.forget("u", now=later).is_empty()
    assert store.get(merged, namespace="u").content == "用户喜欢喝美式咖啡，不加糖；用户喜欢喝冰美式咖啡"


def test_superseded_versions_do_not_count_towards_capacity(now: datetime) -> None:
    f = _frame(now, id=["old", "new"], status=["superseded", "active"])
    assert plan_forget(f, ForgetParams(capacity=1), now).is_empty()


def test_capacity_is_per_namespace(now: datetime) -> None:
    f = _frame(now, id=["a", "b", "c"], namespace=["u", "u", "v"], importance=[0.5, 0.6, 0.1 + 0.01])
    plan = plan_forget(f, ForgetParams(capacity=1, min_strength=0.0), now)
    assert plan.select("id", "namespace").rows() == [("a", "u")]


def test_empty_frame_gives_typed_empty_plan(now: datetime) -> None:
    plan = plan_forget(pl.DataFrame(), ForgetParams(), now)
    assert plan.is_empty() and plan.schema["strength"] == pl.Float64


@pytest.mark.parametrize(
    "kw",
    [
        dict(capacity=0),
        dict(capacity=1.5),
        dict(min_strength=2.0),
        dict(drop_expired="yes"),
        dict(cost_access=0),
    ],
)
def test_forget_params_validation(kw: dict) -> None:
    with pytest.raises(mk.ValidationError):
        ForgetParams(**kw)


def test_store_forget_dry_run_changes_nothing_then_applies(store: mk.MemoryStore, now: datetime) -> None:
    store.add("fleeting note", namespace="u", importance=0.2, now=now)  # short_term, 2 h half-life
    keep = store.add("remember my birthday", namespace="u", importance=0.2, protected=True, now=now)
    store.add("other tenant", namespace="v", importance=0.2, now=now)
    before = snapshot(store)
    plan = store.forget("u", now=now + 5 * H, dry_run=True)  # 0.2 · 0.5^2.5 = 0.035, below 0.05
    assert plan["reason"].to_list() == ["weak"]
    assert_unchanged(store, before)

    applied = store.forget("u", now=now + 5 * H)
    assert applied.equals(plan)
    assert store.frame("u")["id"].to_list() == [keep.id]
    assert store.count("v") == 1  # the other namespace is untouched
    assert store.search("note", namespace="u", now=now, min_strength=0.0).height == 1  # only the kept one
    events = store.audit(op="forget")
    assert events["memory_id"].to_list() == plan["id"].to_list()
    assert "fleeting" not in events["detail"][0] and '"weak"' in events["detail"][0]


def test_store_forget_is_final_and_survives_reopen(tmp_path, now: datetime) -> None:
    path = str(tmp_path / "f.duckdb")
    with mk.MemoryStore(path) as s:
        s.add("a", namespace="u", importance=0.9, valid_until=now + H, now=now)
        s.add("b", namespace="u", importance=0.9, now=now)
        assert s.forget("u", now=now + 2 * H)["reason"].to_list() == ["expired"]
    with mk.MemoryStore(path) as s:
        assert s.frame("u")["content"].to_list() == ["b"]


def test_store_forget_rejects_bad_policy(store: mk.MemoryStore, now: datetime) -> None:
    store.add("x", namespace="u", now=now)
    before = snapshot(store)
    with pytest.raises(mk.ValidationError, match="policy"):
        store.forget("u", now=now, policy={"capacity": 1})  # type: ignore[arg-type]
    assert_unchanged(store, before)


# ------------------------------------------------------------------------ what an erasure takes along
def test_the_plan_lists_what_a_dropped_merge_takes_with_it(now: datetime) -> None:
    """Erasing a merged memory erases its members (at any depth, within its own group): the plan lists
    them as `cascade` after the memories it drops, so a preview counts what applying erases."""
    lists = pl.List(pl.String)
    f = _frame(
        now,
        id=["m2", "m1", "a", "b", "c", "x"],
        importance=[0.01, 0.9, 0.9, 0.9, 0.9, 0.9],
        status=["active"] + ["superseded"] * 5,
        owner=["o", "o", "o", "o", "o", "intruder"],
        merged_from=pl.Series([["m1", "c", "x"], ["a", "b"], [], [], [], []], dtype=lists),
    )
    plan = plan_forget(f, ForgetParams(), now)
    assert plan.select("id", "reason").rows() == [
        ("m2", "weak"),
        ("m1", "cascade"),
        ("c", "cascade"),
        ("a", "cascade"),
        ("b", "cascade"),
    ]  # x is another owner's: a lineage that names it (a forged file) reaches nothing
    assert (
        plan["detail"].to_list()[1:]
        == ["member of merged memory m2"] * 2 + ["member of merged memory m1"] * 2
    )
    assert plan.filter(reason="cascade")["strength"].to_list() == pytest.approx([0.9 * 0.5 ** (1 / 2160)] * 4)
    # a superseded merge whose members all go goes too (the store erases it: "no member left")
    up = _frame(
        now,
        id=["k", "p", "q"],
        importance=[0.9, 0.01, 0.01],
        status=["superseded"] * 3,
        merged_from=pl.Series([["p", "q"], [], []], dtype=lists),
    )
    plan = plan_forget(up, ForgetParams(), now)
    assert plan.select("id", "reason", "detail").rows() == [
        ("p", "weak", "strength 0.01 < 0.05"),
        ("q", "weak", "strength 0.01 < 0.05"),
        ("k", "cascade", "merged memory with no member left"),
    ]
    one_left = up.with_columns(importance=pl.Series([0.9, 0.01, 0.9]))  # q stays: k is re-derived
    assert plan_forget(one_left, ForgetParams(), now)["id"].to_list() == ["p"]


def _merged_store(now: datetime) -> tuple[mk.MemoryStore, str]:
    """Two near-duplicate short-term notes merged (cosine 0.985) and one strong long-term fact."""
    a, b, c = "User is in a meeting", "User is in a meeting now", "User lives in Hangzhou"
    s = mk.MemoryStore(embedder=AngleEmbedder({a: 0, b: 10, c: 80}))
    s.add(a, namespace="u", importance=0.4, layer="short_term", now=now)
    s.add(b, namespace="u", importance=0.4, layer="short_term", now=now + 5 * timedelta(minutes=1))
    s.add(c, namespace="u", importance=0.8, layer="long_term", now=now)
    merged = s.consolidate("u", now=now + 10 * timedelta(minutes=1))["merged_id"][0]
    return s, merged


def test_store_forget_previews_and_reports_everything_it_erases(now: datetime) -> None:
    """The preview and the report used to list the weak merge only, while its two members were erased
    with it (4 rows -> 1)."""
    s, merged = _merged_store(now)
    members = s.frame("u").filter(pl.col("status") == "superseded")["id"].to_list()
    later = now + 24 * H
    preview = s.forget("u", now=later, dry_run=True)
    assert preview.select("id", "reason").rows()[0] == (merged, "weak")
    assert sorted(preview.select("id", "reason").rows()[1:]) == sorted((m, "cascade") for m in members)
    before = s.frame("u").height
    report = s.forget("u", now=later)
    assert report.equals(preview) and before - s.frame("u").height == report.height == 3
    logged = s.audit("u", op="forget")
    assert logged["memory_id"].to_list() == report["id"].to_list()
    assert [f'"merged_into": "{merged}"' in d for d in logged["detail"]] == [False, True, True]


def test_the_report_adds_what_the_erasure_took_that_the_plan_missed(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report is what was erased, even a cascade the plan could not foresee (here: a plan that
    lists none), with its event's namespace and detail."""
    s, merged = _merged_store(now)
    import memkit.store.maintain as maintain

    without = lambda frame, policy, at: plan_forget(frame, policy, at).filter(pl.col("reason") != "cascade")
    monkeypatch.setattr(maintain, "plan_forget", without)
    report = s.forget("u", now=now + 24 * H)
    assert report.height == 3 and report["reason"].to_list() == ["weak", "cascade", "cascade"]
    assert report["namespace"].to_list() == ["u"] * 3 and report["strength"][1:].to_list() == [None, None]
    assert report["detail"][1:].to_list() == [f"member of merged memory {merged}"] * 2  # as a plan says it
    assert s.frame("u")["content"].to_list() == ["User lives in Hangzhou"]


def test_every_judge_of_the_floor_compares_the_exact_strength(now: datetime) -> None:
    """A memory 3e-7 below the floor of 0.1 (0.0999997, "0.1" to 6 decimals): forget used to keep it
    (it compared the rounded strength) while memory_states called it faded and the merge planner weak."""
    s = mk.MemoryStore(settings=mk.Settings(forget=mk.ForgetParams(min_strength=0.1)))  # the articles' floor
    m = s.add("A passing note", namespace="u", importance=0.2, layer="short_term", now=now)  # 2 h half-life
    age = 2.0 * math.log2(0.2 / (0.1 - 3e-7))  # hours until strength = 0.1 - 3e-7
    at = now + timedelta(microseconds=round(age * 3.6e9))
    frame = s.frame("u")
    assert views.memory_states(frame, at, floor=0.1)["strength"][0] == pytest.approx(0.1 - 3e-7, abs=1e-10)
    assert views.memory_states(frame, at, floor=0.1)["state"].to_list() == ["faded"]
    assert s.merge_candidates("u", now=at)[0]["_weak"].to_list() == [True]
    assert s.analyze("u", now=at).filter(pl.col("code") == "MK006")["memory_id"].to_list() == [m.id]
    assert s.search("passing note", namespace="u", now=at, min_strength=0.1).is_empty()
    floored = mk.MemoryStore(decay=mk.DecayParams(min_strength=0.1))  # the index's own floor: an instant
    floored.add("A passing note", namespace="u", importance=0.2, layer="short_term", now=now)
    assert floored.search("passing note", namespace="u", now=at).is_empty()
    assert floored.search("passing note", namespace="u", now=at - timedelta(milliseconds=62)).height == 1
    plan = s.forget("u", now=at, dry_run=True)
    assert plan.select("id", "reason", "detail").rows() == [(m.id, "weak", "strength 0.0999997 < 0.1")]
