"""``panel.reset()`` (memkit/widgets/panel.py): every slider and checkbox back where the panel was
built with them, in one refresh; menus stay as picked; nothing the store holds is undone."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

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


def count_refreshes(panel: widgets.Panel) -> list[int]:
    """Count the panel's refreshes from now on -> the counter."""
    n, refresh = [0], panel.refresh

    def counted(*args: Any) -> None:
        n[0] += 1
        refresh(*args)

    panel.refresh = counted  # type: ignore[method-assign]
    return n


def test_weights_tuner_resets_to_its_baseline_in_one_rerank(sample_store, now) -> None:
    f = sample_store.frame("user_87")
    labelled = {q: f.filter(pl.col("key") == key)["id"].to_list()
                for q, key in (("我住在哪里", "user.address"), ("我喝什么咖啡", "user.coffee"))}  # fmt: skip
    panel = widgets.weights_tuner(sample_store, labelled, namespace="user_87", now=now, k=3)
    first = panel.data
    panel.sliders["similarity"].value = 1.0
    panel.sliders["keyword"].value = 0.0
    panel.sliders["neighbour"].value = 0.0
    panel.sliders["k"].value = 5
    panel.controls["query"].value = "我喝什么咖啡"
    assert panel.weights != panel.baseline
    refreshes = count_refreshes(panel)
    panel.reset()
    assert refreshes == [1]  # one re-rank, not one per slider moved back
    assert panel.weights == panel.baseline == sample_store.weights
    assert panel.controls["k"].value == 3 and panel.controls["query"].value == "我喝什么咖啡"  # kept
    assert panel.data.equals(panel.reranker.rank("我喝什么咖啡", panel.baseline, 3))
    assert panel.metrics is not None and panel.metrics["query"].to_list() == list(labelled)
    panel.controls["query"].value = "我住在哪里"
    assert panel.data.equals(first)  # the panel as it was built


def test_weights_tuner_resets_to_a_given_baseline(sample_store, now) -> None:
    panel = widgets.weights_tuner(
        sample_store, ["我住在哪里"], namespace="user_87", now=now, baseline=mk.Weights.articles()
    )
    for name in panel.sliders:
        panel.sliders[name].value = panel.sliders[name].max
    panel.reset()
    assert panel.weights == mk.Weights.articles() and panel.message.value.startswith(
        "<span style='color:#333'"
    )


def test_merge_explorer_resets_its_threshold_and_keeps_what_it_merged(sample_store, now) -> None:
    panel = widgets.merge_explorer(sample_store, "user_87", now=now)
    start, plan = panel.sliders["threshold"].value, panel.plan
    panel.sliders["threshold"].value = 0.7
    assert not panel.plan.equals(plan)
    panel.reset()
    assert panel.sliders["threshold"].value == start == sample_store.merge_threshold
    assert panel.plan.equals(plan)
    panel.sliders["threshold"].value = 0.7
    panel.buttons["apply"].click()
    merged = sample_store.frame("user_87")
    panel.reset()
    assert panel.sliders["threshold"].value == start and sample_store.frame("user_87").equals(merged)


def test_time_machine_resets_to_the_instant_it_started_on(store, now) -> None:
    for day in range(3):
        store.add(f"note of day {day}", namespace="u", created_at=now + timedelta(days=day),
                  now=now + timedelta(days=day))  # fmt: skip
    panel = widgets.time_machine(store, "u", step_hours=24.0)
    start, data = panel.at, panel.data
    panel.sliders["at"].value = panel.sliders["at"].options[0][1]
    assert panel.at != start
    refreshes = count_refreshes(panel)
    panel.reset()
    assert panel.at == start and panel.data.equals(data) and refreshes == [1]


def test_tune_and_half_life_panels_reset_sliders_and_checkboxes() -> None:
    forget = widgets.tune(lambda p: pl.DataFrame({"capacity": [p.capacity]}), mk.ForgetParams)
    forget.sliders["capacity"].value = 42
    forget.controls["drop_expired"].value = not mk.ForgetParams().drop_expired
    refreshes = count_refreshes(forget)
    forget.reset()
    assert forget.params == mk.ForgetParams() and refreshes == [1]
    assert forget.data["capacity"].to_list() == [mk.ForgetParams().capacity]
    decay = widgets.half_life_explorer(importance=0.6, half_life_hours=2.0, age_hours=4.0)
    data = decay.data
    decay.sliders["half_life_hours"].value = 24.0
    decay.sliders["floor"].value = 0.5
    decay.reset()
    assert decay.data.equals(data) and decay.data["strength"][0] == pytest.approx(0.15)


def test_a_panel_without_settings_keeps_its_picks_and_redraws(sample_store, now) -> None:
    """The conflict explorer's menus are the store's keys and versions: reset leaves the pick."""
    panel = widgets.conflict_explorer(sample_store, "user_87", now=now)
    keys = [v for _, v in panel.controls["key"].options]
    panel.controls["key"].value = keys[-1]
    refreshes = count_refreshes(panel)
    panel.reset()
    assert panel.controls["key"].value == keys[-1] and refreshes == [1]


def test_a_refused_reset_shows_in_the_message_line_and_the_sliders_are_back(sample_store, now) -> None:
    """The store closed under the panel: reset's refresh is refused as a slider move's is."""
    panel = widgets.merge_explorer(sample_store, "user_87", now=now)
    start = panel.sliders["threshold"].value
    panel.sliders["threshold"].value = 0.7
    sample_store.add("a new fact", namespace="user_87", now=now)  # the next refresh reads the store
    sample_store.close()
    panel.reset()
    assert panel.sliders["threshold"].value == start and "closed" in panel.message.value
