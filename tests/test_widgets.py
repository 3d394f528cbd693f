"""Widget panels driven headlessly: set a control's value, assert the panel's data and chart changed."""

from __future__ import annotations

from datetime import timedelta

import polars as pl
import pytest
from conftest import CountingEmbedder

import memkit as mk
from memkit import widgets
from memkit.sample import load_into


@pytest.fixture
def sample_store(now):
    s = mk.MemoryStore(embedder=CountingEmbedder())
    load_into(s, now=now)
    yield s
    s.close()


def chart_rows(panel: widgets.Panel, name: str | None = None) -> list[dict]:
    spec = (panel.charts[name] if name else panel.chart).to_dict()
    return [row for rows in spec["datasets"].values() for row in rows]


def test_tune_builds_sliders_from_field_ranges_and_rerenders() -> None:
    panel = widgets.tune(lambda w: mk.charts.score_breakdown(_fixed_hits(), w), mk.Weights())
    assert set(panel.sliders) == set(mk.params.slider_ranges(mk.Weights))  # one slider per field
    s = panel.sliders["similarity"]
    assert (s.min, s.max, s.step, s.value) == (0.0, 1.0, 0.05, 0.3)
    before = chart_rows(panel)
    s.value = 0.2
    assert panel.params.similarity == pytest.approx(0.2)
    assert chart_rows(panel) != before and panel.chart is panel.result
    for name in panel.sliders:  # every weight 0 is invalid: the error is shown, the last params kept
        panel.sliders[name].value = 0.0
    assert "at least one weight" in panel.message.value  # keyword, the last weight, was refused:
    assert panel.params.keyword == pytest.approx(0.7) and panel.params.similarity == 0.0  # kept as before
    frame_panel = widgets.tune(lambda p: pl.DataFrame({"capacity": [p.capacity]}), mk.ForgetParams)
    assert "drop_expired" in frame_panel.controls and "capacity" in frame_panel.sliders
    frame_panel.sliders["capacity"].value = 42
    assert frame_panel.data["capacity"].to_list() == [42] and "42" in frame_panel.table.value
    with pytest.raises(mk.ValidationError, match="params"):
        widgets.tune(lambda p: p, 3)


def _fixed_hits() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "rank": [1, 2],
            "id": ["a", "b"],
            "content": ["x", "y"],
            "similarity": [0.9, 0.2],
            "importance": [0.1, 0.9],
            "recency": [1.0, 0.5],
        }
    )


def test_half_life_explorer_follows_its_sliders() -> None:
    panel = widgets.half_life_explorer(importance=0.6, half_life_hours=2.0, age_hours=4.0)
    assert panel.data["strength"][0] == pytest.approx(0.15)
    assert panel.data["hours_until_faded"][0] == pytest.approx(5.17, abs=0.01)
    panel.sliders["half_life_hours"].value = 24.0
    expected = float(
        mk.decay.strength(0.6, panel.sliders["age_hours"].value, panel.sliders["half_life_hours"].value)
    )
    assert panel.data["strength"][0] == pytest.approx(expected, abs=1e-4)
    labels = {r.get("label") for r in chart_rows(panel)}
    assert any(
        label and "yours" in label and "half-life 1 d" in label for label in labels
    )  # as its slider says
    panel.sliders["floor"].value = 0.5
    assert "0.5" in panel.message.value and panel.data["recalled"][0] == (expected >= 0.5)


def _labelled(store: mk.MemoryStore) -> dict[str, list[str]]:
    f = store.frame("user_87")
    ids = lambda key: f.filter(pl.col("key") == key)["id"].to_list()  # noqa: E731
    return {
        "我住在哪里": ids("user.address"),
        "我喝什么咖啡": ids("user.coffee"),
        "我的猫叫什么": ids("user.pet"),
    }


def test_weights_tuner_reranks_like_the_store_without_touching_it(sample_store, now) -> None:
    labelled = _labelled(sample_store)
    panel = widgets.weights_tuner(sample_store, labelled, namespace="user_87", now=now, k=3)
    w = mk.Weights(similarity=0.05, importance=0.9)  # the sliders' other values: the defaults
    want = sample_store.search("我住在哪里", namespace="user_87", k=3, weights=w, now=now, reinforce=False)
    seen, events = len(sample_store.embedder.seen), sample_store.audit().height
    assert panel.metrics is not None and panel.metrics.height == 3 and "recall@3" in panel.message.value
    first = panel.data["id"].to_list()
    panel.sliders["similarity"].value = 0.05
    panel.sliders["importance"].value = 0.9
    assert panel.data["id"].to_list() == want["id"].to_list() != first
    contrib = {
        (r["rank"], r["component"]): r["contribution"]
        for r in chart_rows(panel, "breakdown")
        if "component" in r
    }
    assert contrib[(1, "importance")] == pytest.approx(0.9 * want["importance"][0])
    shift = {r["movement"] for r in chart_rows(panel, "shift") if "movement" in r}
    assert shift != {"same"}
    panel.controls["query"].value = "我喝什么咖啡"
    assert panel.data["id"].to_list() != want["id"].to_list()
    # slider moves never embed and never write
    assert len(sample_store.embedder.seen) == seen and sample_store.audit().height == events
    unlabelled = widgets.weights_tuner(sample_store, ["我住在哪里"], namespace="user_87", now=now)
    assert unlabelled.metrics is None and "score =" in unlabelled.message.value


def test_merge_explorer_says_why_a_pair_above_the_threshold_is_not_merged(now) -> None:
    """Two budgets at cosine 0.92 stay two memories; the panel lists the pair and why, and its checkbox
    (MergeParams.distinct_facts) merges them by cosine alone, as the store would."""
    s = mk.MemoryStore()
    s.add("用户买电脑的预算是5000元", namespace="u", now=now)
    s.add("用户买电脑的预算是8000元", namespace="u", now=now + timedelta(hours=1))
    panel = widgets.merge_explorer(s, "u", now=now + timedelta(hours=2))
    assert panel.plan.is_empty() and panel.controls["distinct_facts"].value is True
    assert panel.held_apart["reason"].to_list() == ["fact tokens differ: numbers 5000 ≠ 8000"]
    assert "numbers 5000 ≠ 8000" in panel.table.value and "1 pairs above it held apart" in panel.message.value
    panel.controls["distinct_facts"].value = False
    assert panel.plan.height == 1 and panel.held_apart.is_empty()
    panel.buttons["apply"].click()  # applies what the panel shows: the switch off
    assert panel.applied.height == 1 and s.frame("u").filter(pl.col("status") == "active").height == 1
    s.close()


def test_merge_explorer_plans_like_the_store_and_applies(sample_store, now) -> None:
    panel = widgets.merge_explorer(sample_store, "user_87", now=now)
    frame_before = sample_store.frame("user_87")
    for t in (0.95, 0.7, 0.65, 0.85):
        panel.sliders["threshold"].value = t
        ref = sample_store.consolidate("user_87", threshold=t, now=now, dry_run=True)
        assert sorted(map(sorted, panel.plan["members"].to_list())) == sorted(
            map(sorted, ref["members"].to_list())
        )
        assert sorted(panel.plan["content"].to_list()) == sorted(ref["content"].to_list())
    assert sample_store.frame("user_87").equals(frame_before)  # sliders only preview
    rule = [r for r in chart_rows(panel) if r.get("label", "").startswith("threshold")]
    assert rule[0]["t"] == pytest.approx(0.85)
    n = panel.plan.height
    panel.buttons["apply"].click()
    assert panel.applied is not None and panel.applied.height == n
    assert sample_store.consolidate("user_87", now=now, dry_run=True).height == 0
    assert panel.plan.height == 0 and "merged" in panel.message.value


def test_conflict_explorer_resolves_the_picked_version(sample_store, now) -> None:
    new = sample_store.add(
        "用户搬到了上海浦东", namespace="user_87", key="user.address", now=now + timedelta(hours=1)
    )
    panel = widgets.conflict_explorer(sample_store, "user_87", now=now + timedelta(hours=2))
    assert panel.controls["key"].value == "user.address"  # pending conflicts first
    assert {v for _, v in panel.controls["keep"].options} == set(panel.versions["id"])
    statuses = {r["id"]: r["status"] for r in chart_rows(panel) if "status" in r}
    assert statuses[new.id] == "conflict"
    panel.controls["keep"].value = new.id
    assert sample_store.read("user.address", namespace="user_87", now=now + timedelta(hours=2)).id != new.id
    panel.buttons["resolve"].click()
    assert panel.resolved.id == new.id
    assert sample_store.read("user.address", namespace="user_87", now=now + timedelta(hours=2)).id == new.id
    statuses = {r["id"]: r["status"] for r in chart_rows(panel) if "status" in r}
    assert statuses[new.id] == "active"
    panel.controls["key"].value = "user.coffee"
    assert panel.versions["key"].unique().to_list() == ["user.coffee"]


def test_conflict_explorer_draws_the_stores_disputes(store, now) -> None:
    h = timedelta(hours=1)
    v1 = store.add("URL is a", namespace="t", key="url", requester="dep", now=now, valid_until=now + 10 * h)
    v2 = store.add("URL is b", namespace="t", key="url", requester="dep", now=now + 20 * h)  # v1 expired
    v3 = store.add("URL is c", namespace="t", key="url", requester="other", now=now + 21 * h)  # disputes v2
    panel = widgets.conflict_explorer(store, "t", now=now + 22 * h)
    disputes = panel.edges.filter(pl.col("kind") == "conflicts_with").select("source", "target").rows()
    assert disputes == [(v3.id, v2.id)] and v1.id in panel.nodes["id"].to_list()
    drawn = {(r["source"], r["target"]) for r in chart_rows(panel) if r.get("kind") == "conflicts_with"}
    assert drawn == {(v3.id, v2.id)}


def test_conflict_explorer_reports_refused_resolve(sample_store, now) -> None:
    sample_store.add("Bob 搬到了北京", namespace="bob", key="user.address", now=now + timedelta(hours=1))
    panel = widgets.conflict_explorer(sample_store, "bob", now=now + timedelta(hours=2), requester="stranger")
    panel.buttons["resolve"].click()  # the importer wrote the key: a stranger may not settle it
    assert "may not" in panel.message.value and panel.resolved is None


def test_time_machine_replays_the_store(store, now) -> None:
    for day in range(5):
        store.add(
            f"note of day {day}",
            namespace="u",
            importance=0.5,
            half_life_hours=24.0,
            created_at=now + timedelta(days=day),
            now=now + timedelta(days=day),
        )
    panel = widgets.time_machine(
        store, "u", step_hours=24.0, query="note", policy=mk.ForgetParams(min_strength=0.2)
    )
    assert panel.sliders["at"].options[0][1] == now
    panel.sliders["at"].value = now
    assert panel.data.filter(pl.col("state") != "not yet written").height == 1
    at = now + timedelta(days=4)
    panel.sliders["at"].value = at
    want = mk.forget.plan_forget(store.frame("u", as_of=at), mk.ForgetParams(min_strength=0.2), at)
    assert panel.plan["id"].to_list() == want["id"].to_list() and panel.plan.height == 3
    assert panel.data.filter(pl.col("state") == "forget: weak").height == 3
    # the recall table is the store's own search then (no retrieval floor by default), not one cut at
    # the policy's forgetting floor: the three a forget pass would drop are returned until it runs
    searched = store.search("note", namespace="u", k=5, now=at, reinforce=False)
    assert panel.hits is not None and panel.hits["id"].to_list() == searched["id"].to_list()
    assert panel.hits.height == 5 and panel.data["recalled"].sum() == 5
    # "recalled" names one thing: the state a forget pass keeps (the bars' 2); the search's 5 are "returned"
    assert (
        "a search may return 5 memories, 0 faded below the retrieval floor 0; a forget pass would drop 3"
        " (3 weak; forgetting floor 0.2), 2 stay recalled" in panel.message.value
    )
    dots = [r for r in chart_rows(panel) if "state" in r]
    assert {r["t"] for r in dots} == {at.timestamp() * 1e3}
    bars = {r["state"]: r["memories"] for r in chart_rows(panel, "states")}
    assert bars == {"recalled": 2, "forget: weak": 3}
    with pytest.raises(mk.ValidationError, match="namespace"):
        widgets.time_machine(store, "empty")


def test_time_machine_recalls_what_search_returns(store, now) -> None:
    weak = store.add(
        "User is in a meeting until 5pm", namespace="u", importance=0.6, layer="short_term", now=now
    )
    early = store.add("Office moves to Pudong", namespace="u", importance=0.8, now=now,
                      valid_from=now + timedelta(days=30))  # fmt: skip
    at = now + timedelta(hours=8)  # the meeting at 0.6 · 0.5^4 = 0.0375: below the forgetting floor 0.05
    panel = widgets.time_machine(store, "u", query="meeting Pudong", at=at, start=now,
                                 end=now + timedelta(days=1), step_hours=1)  # fmt: skip
    searched = store.search("meeting Pudong", namespace="u", k=5, now=at, reinforce=False)
    assert panel.hits is not None and panel.hits["id"].to_list() == searched["id"].to_list() == [weak.id]
    state = dict(panel.data.select("id", "state").rows())
    assert state[early.id] == "not yet valid"  # before its valid_from: search does not return it
    assert state[weak.id] == "forget: weak"  # what a forget pass would drop ...
    assert panel.data.filter(pl.col("id") == weak.id)["recalled"][0]  # ... is still returned until it runs
    assert (
        f"{at:%Y-%m-%d %H:%M}: a search may return 1 memory, 0 faded below the retrieval floor 0; a forget"
        " pass would drop 1" in panel.message.value
    )
    rules = {(r["strength"]) for r in chart_rows(panel, "timeline") if set(r) == {"strength"}}
    assert rules == {0.0, 0.05}  # the retrieval floor (search's) and the forgetting floor (the policy's)
    # a store whose search has a floor: the panel judges by it, as its search does
    floored = mk.MemoryStore(settings=mk.Settings(decay=mk.DecayParams(min_strength=0.05)))
    m = floored.add(
        "User is in a meeting until 5pm", namespace="u", importance=0.6, layer="short_term", now=now
    )
    panel = widgets.time_machine(floored, "u", query="meeting", at=at, start=now, end=now + timedelta(days=1),
                                 policy=mk.ForgetParams(min_strength=0.01))  # fmt: skip
    assert panel.data.filter(pl.col("id") == m.id)["state"][0] == "faded" and panel.hits.height == 0
    assert floored.search("meeting", namespace="u", now=at, reinforce=False).height == 0
    panel = widgets.time_machine(floored, "u", at=at, start=now, end=now + timedelta(days=1))  # policy: 0.1
    assert panel.data.filter(pl.col("id") == m.id)["state"][0] == "forget: weak"  # the plan's verdict ...
    assert (
        "a search may return 0 memories, 1 faded below the retrieval floor 0.05; a forget pass would drop 1"
        in panel.message.value
    )  # ... faded
    floored.close()


def test_time_machine_steps_end_on_end_and_stop_at_at(store, now) -> None:
    for day in range(3):
        store.add(f"note of day {day}", namespace="u", created_at=now + timedelta(days=day),
                  now=now + timedelta(days=day))  # fmt: skip
    end = now + timedelta(days=2, hours=5)  # not a whole number of 12 h steps from the first write
    at = now + timedelta(days=1, hours=7)  # between two steps
    panel = widgets.time_machine(store, "u", step_hours=12.0, end=end, at=at)
    times = [t for _, t in panel.sliders["at"].options]
    assert times[0] == now and times[-1] == end  # the last position is `end` itself
    assert at in times and panel.at == at  # the slider sits exactly on `at`, not on the step before
    assert times == sorted(times) and len(set(times)) == len(times)
    # at = the last write (the default): the memory written then counts as written
    last = widgets.time_machine(store, "u", step_hours=24.0 * 7, at=now + timedelta(days=2))
    assert last.at == now + timedelta(days=2)
    assert last.data.filter(pl.col("state") == "not yet written").height == 0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"step_hours": 0}, "step_hours"),
        ({"step_hours": -24.0}, "step_hours"),
        ({"step_hours": float("nan")}, "step_hours"),
        ({"step_hours": "daily"}, "step_hours"),
        ({"step_hours": 1e-6}, "step_hours"),  # millions of positions
        ({"start": "yesterday"}, "start"),
        ({"at": "now"}, "at"),
    ],
)
def test_time_machine_refuses_bad_arguments(store, now, kwargs, field) -> None:
    store.add("a note", namespace="u", now=now)
    with pytest.raises(mk.ValidationError, match=f"^{field}:"):
        widgets.time_machine(store, "u", **kwargs)


def test_time_machine_refuses_start_after_end(store, now) -> None:
    store.add("a note", namespace="u", now=now)
    with pytest.raises(mk.ValidationError, match="^start:.*after end"):
        widgets.time_machine(store, "u", start=now, end=now - timedelta(days=1))
    one = widgets.time_machine(store, "u", start=now, end=now)  # a single instant is a valid range
    assert [t for _, t in one.sliders["at"].options] == [now]


@pytest.mark.parametrize(
    ("queries", "k", "field"),
    [([], 5, "queries"), ({}, 5, "queries"), ("我住在哪里", 5, "queries"), (3, 5, "queries"),
     (["我住在哪里"], 0, "k"), (["我住在哪里"], 21, "k"), (["我住在哪里"], 2.5, "k")],
)  # fmt: skip
def test_weights_tuner_refuses_bad_arguments(sample_store, now, queries, k, field) -> None:
    with pytest.raises(mk.ValidationError, match=f"^{field}:"):
        widgets.weights_tuner(sample_store, queries, namespace="user_87", now=now, k=k)


def test_half_life_explorer_sliders_stay_valid_and_on_the_chart() -> None:
    panel = widgets.half_life_explorer()
    floor = panel.sliders["floor"]
    floor.value = floor.min  # the slider's lowest floor is one the formula accepts
    assert floor.min > 0 and "must be" not in panel.message.value
    assert f"below {floor.min:g}" in panel.message.value
    # the longest life the sliders can make: its dot and its cross are inside the x axis
    age, half_life = panel.sliders["age_hours"], panel.sliders["half_life_hours"]
    age.value, half_life.value = age.options[-1][1], half_life.options[-1][1]  # 1 year, 2 years
    panel.sliders["importance"].value = 1.0
    assert (age.value, half_life.value) == (8760.0, 17520.0)
    x_end = panel.chart.to_dict()["layer"][0]["encoding"]["x"]["scale"]["domain"][1]
    assert x_end >= age.value and x_end >= panel.data["hours_until_faded"][0]
    crosses = [r for r in chart_rows(panel) if "hours" in r and "yours" in r.get("label", "")]
    assert len(crosses) == 1 and crosses[0]["hours"] == pytest.approx(panel.data["hours_until_faded"][0])
    for name, bad in [
        ("floor", 0.0),
        ("importance", 1.5),
        ("half_life_hours", 0.0),
        ("age_hours", float("inf")),
    ]:
        with pytest.raises(mk.ValidationError, match=f"^{name}:"):
            widgets.half_life_explorer(**{name: bad})
