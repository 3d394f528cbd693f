"""Every slider of every lesson's panels moves something real.

Each test builds a lesson's panel(s) the way its notebook does (same data, same arguments) and
drags each slider across its range. What must change is the panel's *output*, read back as data:
``panel.data`` and the specs of ``panel.charts``, never the slider's own readout. A slider that
leaves both unchanged at every position teaches nothing, and fails here.

Lesson 04's controls are dropdowns and a button (no slider); lesson 07's guard panel needs the shared
injection sets (its own tests cover it); lesson 09's panel needs the LoCoMo file and is skipped
without it. The lessons' claims about the data (cluster counts, where wrong merges start, which
question each signal fails, when each layer fades) are asserted beside the sliders.
"""

from __future__ import annotations

import dataclasses
import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import memkit as mk
from memkit import widgets
from memkit.portable.sample import SAMPLE_NOW, load_into, load_sample
from memkit.portable.semantic import (
    SEMANTIC_NOW,
    SemanticEmbedder,
    judge_plan,
    load_semantic_queries,
    semantic_into,
)


def output(panel: widgets.Panel) -> str:
    """What the panel shows, as one comparable string: its data frame and every chart's spec."""
    data = panel.data.write_json() if isinstance(panel.data, pl.DataFrame) else repr(panel.data)
    specs = {n: c.to_dict(validate=False) for n, c in panel.charts.items()}
    return data + json.dumps(specs, sort_keys=True, default=str)


def positions(slider: Any, n: int = 5) -> list[Any]:
    """``n`` positions spread over the slider's range (its options for a selection slider)."""
    if hasattr(slider, "options") and not hasattr(slider, "min"):
        values = (
            [v for _, v in slider.options] if isinstance(slider.options[0], tuple) else list(slider.options)
        )
        return [values[round(i)] for i in np.linspace(0, len(values) - 1, n)]
    lo, hi = slider.min, slider.max
    if hasattr(slider, "base"):  # a log slider: min/max are exponents
        return [slider.base**e for e in np.linspace(lo, hi, n)]
    return list(np.linspace(lo, hi, n))


def assert_every_slider_moves(panel: widgets.Panel, skip: tuple[str, ...] = ()) -> dict[str, int]:
    """Move each slider across its range (then back); each must produce more than one output.

    -> {slider: number of distinct outputs seen}."""
    seen = {}
    for name, slider in panel.sliders.items():
        if name in skip:
            continue
        start = slider.value
        outs = set()
        for v in positions(slider):
            slider.value = v
            outs.add(output(panel))
        slider.value = start
        assert len(outs) > 1, f"slider {name!r} changed nothing over its range"
        seen[name] = len(outs)
    return seen


# ----------------------------------------------------------------------------------- lesson 01
def test_lesson_01_half_life_explorer() -> None:
    panel = widgets.half_life_explorer(importance=0.7, half_life_hours=24.0, age_hours=12.0)
    assert set(assert_every_slider_moves(panel)) == {"importance", "half_life_hours", "age_hours", "floor"}
    # the lesson's claim: a 0.6 / 2 h memory (the meeting) fades after 5.17 h at the floor 0.1
    panel.sliders["importance"].value, panel.sliders["half_life_hours"].value = 0.6, 2.0
    panel.sliders["floor"].value = 0.1
    assert panel.data["hours_until_faded"][0] == pytest.approx(5.17, abs=0.01)


# ----------------------------------------------------------------------------------- lessons 02, 03
@pytest.fixture(scope="module")
def semantic() -> Any:
    store = mk.MemoryStore(embedder=SemanticEmbedder())
    frame = semantic_into(store, now=SEMANTIC_NOW)
    yield store, frame
    store.close()


def test_lesson_02_weights_tuner(semantic) -> None:
    store, frame = semantic
    alice = load_semantic_queries().filter(pl.col("namespace") == "alice")
    labelled = {
        q: frame.filter(pl.col("group") == g)["id"].to_list()
        for q, g in zip(alice["query"], alice["expects"], strict=True)
    }
    panel = widgets.weights_tuner(store, labelled, namespace="alice", now=SEMANTIC_NOW, k=3)
    moved = assert_every_slider_moves(panel)
    assert set(moved) == {*mk.params.slider_ranges(mk.Weights), "k"}  # one slider per weight, and k
    # the lesson's measurement: similarity alone loses the city question, keyword alone the boss
    for name, value in {
        "similarity": 1.0,
        "keyword": 0.0,
        "neighbour": 0.0,
        "tie": 0.0,
        "importance": 0.0,
    }.items():
        panel.sliders[name].value = value
    rr = dict(panel.metrics.select("query", "reciprocal_rank").iter_rows())
    assert rr["Alice 住在哪个城市？"] == 0 and rr["Who is Alice's boss?"] == 1
    panel.sliders["keyword"].value, panel.sliders["similarity"].value = 1.0, 0.0
    rr = dict(panel.metrics.select("query", "reciprocal_rank").iter_rows())
    assert rr["Alice 住在哪个城市？"] == 1 and rr["Who is Alice's boss?"] == 0


def test_lesson_03_merge_threshold_changes_clusters_at_every_step(semantic) -> None:
    store, frame = semantic
    panel = widgets.merge_explorer(store, None, now=SEMANTIC_NOW, judge=lambda plan: judge_plan(plan, frame))
    plans, wrong = [], []
    for t in (0.70, 0.75, 0.80, 0.85, 0.90, 0.95):
        panel.sliders["threshold"].value = t
        plans.append(sorted(map(sorted, panel.plan["members"].to_list())))
        wrong.append(int(panel.plan["wrong"].sum()))
    assert all(a != b for a, b in zip(plans, plans[1:], strict=False)), (
        "a 0.05 step left the clusters unchanged"
    )
    assert [len(p) for p in plans] == [42, 42, 38, 31, 28, 21]  # the lesson's numbers
    assert wrong == [11, 10, 6, 2, 1, 0]  # wrong merges start between 0.95 and 0.90
    assert panel.held_apart.height == 0  # (at 0.95) and at 0.85 three pairs are held apart, each with why
    panel.sliders["threshold"].value = 0.85
    assert panel.held_apart.height == 3 and panel.held_apart["reason"].str.starts_with("fact tokens").all()
    panel.controls["distinct_facts"].value = False  # the checkbox: cosine alone, the older numbers
    assert (panel.plan.height, int(panel.plan["wrong"].sum()), panel.held_apart.height) == (33, 2, 0)
    panel.controls["distinct_facts"].value = True
    panel.sliders["threshold"].value = 0.85  # the default: one right-coloured bar per cluster, two red
    verdicts = {r.get("verdict") for rows in panel.chart.to_dict()["datasets"].values() for r in rows}
    assert "wrong merge (two facts)" in verdicts and "right merge (one fact)" in verdicts
    assert_every_slider_moves(panel)


# ----------------------------------------------------------------------------------- lesson 04
def test_lesson_04_conflict_explorer_has_no_slider() -> None:
    # its controls are dropdowns (key, version to keep) and a button: test_widgets covers them
    store = mk.MemoryStore()
    store.add("v1", namespace="team", key="k", now=SAMPLE_NOW)
    store.add("v2", namespace="team", key="k", now=SAMPLE_NOW + timedelta(hours=1))
    panel = widgets.conflict_explorer(store, "team", now=SAMPLE_NOW + timedelta(hours=2))
    assert panel.sliders == {}
    store.close()


# ----------------------------------------------------------------------------------- lesson 05
@pytest.fixture(scope="module")
def replayed() -> Any:
    """Lesson 05's store: the sample replayed day by day, plus one protected memory."""
    store = mk.MemoryStore()
    sample = load_sample()
    for (_,), part in sample.sort("created_at").group_by(pl.col("created_at").dt.date(), maintain_order=True):
        for (ns,), rows in part.group_by("namespace", maintain_order=True):
            store.add_many(
                rows.drop("namespace"), namespace=ns, requester="importer", now=rows["created_at"].max()
            )
    store.add("用户要求记住：每周五下午不安排会议", namespace="user_87", requester="user_87", importance=0.9,
              protected=True, layer="long_term", now=SAMPLE_NOW)  # fmt: skip
    asked = [
        "我住在哪里？",
        "我喝什么咖啡？",
        "我的猫叫什么？",
        "我做什么工作？",
        "我怎么去上班？",
        "我对什么过敏？",
    ]
    for day, q in enumerate(asked * 2):  # the lesson's questions: accesses, so the cost weights matter
        store.search(q, namespace="user_87", k=3, now=SAMPLE_NOW - timedelta(days=12 - day))
    yield store
    store.close()


def test_lesson_05_time_machine(replayed) -> None:
    policy = mk.ForgetParams(capacity=30)
    panel = widgets.time_machine(replayed, "user_87", policy=policy, query="我住在哪里？", at=SAMPLE_NOW)
    assert set(assert_every_slider_moves(panel)) == {"at"}


def test_lesson_05_policy_tuner(replayed) -> None:
    later = SAMPLE_NOW + timedelta(days=30)
    frame_then = replayed.frame("user_87")

    def summary(params: mk.ForgetParams) -> pl.DataFrame:  # the lesson draws this frame as bars
        plan = mk.forget.plan_forget(frame_then, params, later)
        return frame_then.join(plan.select("id", "reason"), on="id", how="left").select(
            "id", "importance", "access_count", pl.col("reason").fill_null("kept")
        )  # each memory's fate: which ones go, not only how many

    panel = widgets.tune(summary, mk.ForgetParams(capacity=30))
    moved = assert_every_slider_moves(panel)
    assert set(moved) == {f for f in mk.params.slider_ranges(mk.ForgetParams)}
    assert dataclasses.asdict(panel.params)["capacity"] == 30


# ----------------------------------------------------------------------------------- lesson 01 data
def test_lesson_01_layers_fade_when_the_prose_says() -> None:
    store = mk.MemoryStore()
    load_into(store, now=SAMPLE_NOW)
    frame = store.frame()
    fade_h = mk.decay.hours_until(0.1, frame["importance"].to_numpy(), frame["half_life_hours"].to_numpy())
    written_h = frame.select((pl.col("created_at") - SAMPLE_NOW).dt.total_seconds() / 3600).to_series()
    days = frame.select("layer").with_columns(d=(written_h + fade_h) / 24)
    by = {
        r[0]: (r[1], r[2])
        for r in days.group_by("layer").agg(lo=pl.col("d").min(), hi=pl.col("d").max()).iter_rows()
    }
    assert by["short_term"][1] < 0  # every short-term note has faded by now
    assert 0 < by["episodic"][1] < 90  # episodic events are all gone within the quarter
    assert by["long_term"][0] > 90  # long-term facts outlast it
    store.close()


# ----------------------------------------------------------------------------------- lesson 09
def test_lesson_09_recall_tuner_on_locomo(monkeypatch: pytest.MonkeyPatch) -> None:
    shared = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo"
    try:  # the lesson's rule: $MEMKIT_LOCOMO, else ../shared/data, else the cache; never downloads
        path = mk.evaluate.fetch_locomo(os.environ.get("MEMKIT_LOCOMO") or shared, download=False)
    except mk.MemkitError as e:
        pytest.skip(f"LoCoMo not available: {str(e).splitlines()[0]}")
    memories, queries = mk.evaluate.load_locomo(path)
    prepared = mk.evaluate.prepare(memories, queries.filter(pl.col("category") <= 4))
    panel = widgets.recall_tuner(prepared, k=5)
    moved = assert_every_slider_moves(panel)
    assert set(moved) == {"similarity", "importance", "recency", "keyword", "floor"}
    overall = lambda: float(panel.data.filter(pl.col("category") == "all")["recall@5"][0])  # noqa: E731
    default = overall()  # the sliders start at Weights(): the default's tick and the bar agree
    ref = panel.references.filter((pl.col("setting") == "default") & (pl.col("category") == "all"))
    assert default == pytest.approx(float(ref["recall@5"][0]))
    panel.sliders["keyword"].value = 0.0
    assert overall() < default - 0.1  # the lesson: keyword carries LoCoMo
    settings = set(panel.references["setting"])
    assert settings == {"default", "articles (floor 0.1)"}
    ticks = [r for rows in panel.chart.to_dict()["datasets"].values() for r in rows if "setting" in r]
    assert {r["setting"] for r in ticks} == settings
