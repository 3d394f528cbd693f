"""Forgetting's tie order: among equal forget-costs the memory that says least goes first, then the
oldest; the cost still decides whenever it differs (memkit.forget, memkit.information)."""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memkit as mk
from memkit.forget import COST_DECIMALS, plan_forget
from memkit.information import information_of
from memkit.params import ForgetParams

H = timedelta(hours=1)
FACT_EN, CHAT_EN = "Maria volunteers at a homeless shelter downtown", "Thanks, bye!"
FACT_ZH, CHAT_ZH = "用户对花生过敏，出门要带药", "好的，谢谢！"


def _frame(now: datetime, content: list[str], **cols) -> pl.DataFrame:
    n = len(content)
    base = {
        "id": [f"m{i}" for i in range(n)],
        "namespace": ["u"] * n,
        "status": ["active"] * n,
        "importance": [0.5] * n,
        "half_life_hours": [2160.0] * n,
        "created_at": [now - (n - i) * H for i in range(n)],  # m0 oldest
        "valid_until": pl.Series([None] * n, dtype=pl.Datetime("us", "UTC")),
        "access_count": [0] * n,
        "protected": [False] * n,
        "content": content,
    }
    return pl.DataFrame({**base, **cols})


@pytest.mark.parametrize(("fact", "chat"), [(FACT_EN, CHAT_EN), (FACT_ZH, CHAT_ZH)], ids=["en", "zh"])
def test_a_pleasantry_goes_before_an_older_fact_of_equal_cost(now: datetime, fact: str, chat: str) -> None:
    # both cost 2·0.5 = 1.0; the fact is older, so oldest-first alone would drop it
    plan = plan_forget(_frame(now, [fact, chat]), ForgetParams(capacity=1), now)
    assert plan.select("id", "reason").rows() == [("m1", "capacity")]
    assert plan["detail"][0] == f"over capacity 1; forget-cost 1.0, information {information_of(chat)}"


def test_age_breaks_what_the_words_leave_tied(now: datetime) -> None:
    # equal costs, equal information (3 words each): the older goes; equal age too: the first written
    f = _frame(now, ["Likes green tea", "Likes black tea", "Likes oolong tea", "Hi"])
    assert plan_forget(f, ForgetParams(capacity=2), now)["id"].to_list() == ["m3", "m0"]
    same_time = f.with_columns(created_at=pl.lit(now - H), id=pl.Series(["b", "a", "c", "d"]))
    assert plan_forget(same_time, ForgetParams(capacity=2), now)["id"].to_list() == ["d", "b"]


def test_the_cost_still_decides_when_it_differs(now: datetime) -> None:
    # one reinforcement's worth of importance (0.005: cost 0.01 apart) keeps the pleasantry; so does a
    # single recall (access 1: + 0.91), however little the memory says
    f = _frame(now, [FACT_EN, CHAT_EN, CHAT_ZH], importance=[0.5, 0.505, 0.5], access_count=[0, 0, 1])
    assert plan_forget(f, ForgetParams(capacity=2), now)["id"].to_list() == ["m0"]
    assert plan_forget(f, ForgetParams(capacity=1), now)["id"].to_list() == ["m0", "m1"]


def test_equal_means_equal_as_the_plan_shows_it_not_float_noise(now: datetime) -> None:
    # 0.1 + 0.2 is 0.30000000000000004: the costs differ by 1e-16, which is no difference
    f = _frame(now, [FACT_EN, CHAT_EN], importance=[0.3, 0.1 + 0.2])
    assert plan_forget(f, ForgetParams(capacity=1), now)["id"].to_list() == ["m1"]
    assert COST_DECIMALS == 3  # the plan's detail shows the cost to 3 decimals: "forget-cost 0.6"


@pytest.mark.parametrize(
    ("fact", "chat", "shown"),
    [
        (0.45025, 0.35025 + 0.1, "0.901"),
        (0.50025, 0.30025 + 0.2, "1.001"),
        (0.01325, 0.00825 + 0.005, "0.027"),
    ],
)
def test_float_noise_at_a_half_does_not_split_a_band(
    now: datetime, fact: float, chat: float, shown: str
) -> None:
    # 2·0.45025 = 0.9005 and 2·(0.35025 + 0.1) = 0.9005000000000001: one cost, on the edge of 0.9 /
    # 0.901; a plain round(3) put them in two bands, and the wordier fact went first as "cheaper"
    assert fact != chat  # (float noise)
    f = _frame(now, [FACT_EN, CHAT_EN], importance=[fact, chat])
    plan = plan_forget(f, ForgetParams(capacity=1, min_strength=0.0), now)
    assert plan["id"].to_list() == ["m1"]  # equal cost: the pleasantry goes
    assert plan["detail"][0].startswith(f"over capacity 1; forget-cost {shown},")  # a half goes up


def test_without_content_ties_go_by_age_alone(now: datetime) -> None:
    f = _frame(now, [FACT_EN, CHAT_EN]).drop("content")
    plan = plan_forget(f, ForgetParams(capacity=1), now)
    assert plan["id"].to_list() == ["m0"] and plan["detail"][0] == "over capacity 1; forget-cost 1.0"


def test_the_words_order_only_the_band_where_capacity_cuts(now: datetime) -> None:
    # cheap (importance 0.2) memories all go whatever they say; among the 0.5 ones the words decide;
    # the plan lists them in the order they go, each with its information
    f = _frame(
        now,
        [FACT_EN, "ok", FACT_ZH, "Lunch with Bob at noon", CHAT_EN, "Moved to Denver in May"],
        importance=[0.2, 0.5, 0.2, 0.5, 0.5, 0.5],
    )
    plan = plan_forget(f, ForgetParams(capacity=2), now)
    assert plan["id"].to_list() == ["m0", "m2", "m1", "m4"]
    assert plan["detail"].str.extract(r"information (\S+)").cast(float).to_list() == [5.0, 6.0, 1.0, 2.0]


def test_when_protected_memories_leave_fewer_candidates_than_the_excess_all_go_in_order(
    now: datetime,
) -> None:
    pinned = [False, False, False, True, True]
    f = _frame(now, [FACT_EN, "ok", CHAT_EN, "pinned 1", "pinned 2"], protected=pinned)
    plan = plan_forget(f, ForgetParams(capacity=1), now)  # 4 over capacity, 3 that may go
    assert plan["id"].to_list() == ["m1", "m2", "m0"]
    assert plan["detail"].str.extract(r"information (\S+)").cast(float).to_list() == [1.0, 2.0, 5.0]


def test_every_namespace_has_its_own_queue(now: datetime) -> None:
    f = pl.concat([
        _frame(now, [FACT_EN, CHAT_EN]),
        _frame(now, [CHAT_ZH, FACT_ZH], namespace=["v", "v"], id=["v0", "v1"]),
    ])  # fmt: skip
    assert sorted(plan_forget(f, ForgetParams(capacity=1), now)["id"].to_list()) == ["m1", "v0"]


TEXTS = [FACT_EN, CHAT_EN, FACT_ZH, CHAT_ZH, "ok", "嗯嗯", "User likes oolong tea", "用户住在杭州滨江区", ""]


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(TEXTS),
            st.sampled_from([0.2, 0.5, 0.505, 0.9]),
            st.integers(0, 2),
            st.integers(0, 5),
            st.sampled_from(["u", "v"]),
        ),
        min_size=1,
        max_size=14,
    ),
    capacity=st.integers(1, 6),
)
def test_capacity_drops_the_first_of_cost_information_age_written(rows, capacity: int) -> None:
    """Against the rule written plainly: per namespace, sort by (cost to 3 decimals, information of
    the text, created_at, place in the frame — the order written) and drop the first ``len - capacity``."""
    now = datetime.fromisoformat("2026-01-01T00:00:00+00:00")
    texts, imp, acc, age, ns = map(list, zip(*rows, strict=True))
    f = _frame(now, texts, importance=imp, access_count=acc, namespace=ns,
               created_at=[now - a * H for a in age])  # fmt: skip
    want = set()
    for space in ("u", "v"):
        mine = [(i, r) for i, r in enumerate(f.iter_rows(named=True)) if r["namespace"] == space]
        key = lambda ir: (round(2 * ir[1]["importance"] + ir[1]["access_count"] / 1.1, 3),  # noqa: E731
                          information_of(ir[1]["content"]), ir[1]["created_at"], ir[0])  # fmt: skip
        want |= {r["id"] for _, r in sorted(mine, key=key)[: max(len(mine) - capacity, 0)]}
    plan = plan_forget(f, ForgetParams(capacity=capacity, min_strength=0.0), now)
    assert set(plan["id"].to_list()) == want


# ------------------------------------------------------------------------------------- the store
@pytest.mark.parametrize(("fact", "chat"), [(FACT_EN, CHAT_EN), (FACT_ZH, CHAT_ZH)], ids=["en", "zh"])
def test_store_forget_drops_the_pleasantry_first(now: datetime, fact: str, chat: str) -> None:
    s = mk.MemoryStore()
    old = s.add(fact, namespace="u", now=now - 48 * H)
    new = s.add(chat, namespace="u", now=now - H)
    policy = ForgetParams(capacity=1)
    preview = s.forget("u", now=now, policy=policy, dry_run=True)
    assert preview["id"].to_list() == [new.id]
    assert preview.equals(plan_forget(s.frame("u"), policy, now))  # the pure plan on the store's frame
    done = s.forget("u", now=now, policy=policy)
    assert done["id"].to_list() == [new.id]
    assert s.frame("u")["id"].to_list() == [old.id]
    assert "information" in s.audit("u", op="forget")["detail"][0]  # the number, never the text
    assert chat not in s.audit("u", op="forget")["detail"][0]
    s.close()


def test_one_instants_memories_go_in_the_order_written(
    store: mk.MemoryStore, monkeypatch: pytest.MonkeyPatch, now: datetime
) -> None:
    """Equal costs, equal information, one instant (one batch): the first written goes first, in
    every run; ids, minted here in the reverse of the write order, decide nothing."""
    from memkit.portable import rows

    counter = iter(range(2**40, 0, -1))
    monkeypatch.setattr(rows, "new_ids", lambda n: [f"{next(counter):016x}" for _ in range(n)])
    texts = ["Likes green tea", "Likes black tea", "Likes oolong tea", "Likes white tea"]
    ids = store.add_many(pl.DataFrame({"content": texts}), namespace="u", now=now)["id"].to_list()
    assert ids == sorted(ids, reverse=True)
    plan = store.forget("u", now=now, policy=ForgetParams(capacity=1), dry_run=True)
    assert plan["id"].to_list() == ids[:3]
    assert store.forget("u", now=now, policy=ForgetParams(capacity=1))["id"].to_list() == ids[:3]
    assert store.frame("u")["id"].to_list() == ids[3:]
