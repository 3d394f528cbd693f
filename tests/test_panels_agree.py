"""What a panel's chart shows agrees with what the panel does (helper 145, from the browser audit h143).

Lesson 03's merge chart counted every memory with a partner above the threshold as "would join a
cluster", while the plan holds distinct facts apart: after Apply it read "4 of 189 memories would join
a cluster" in red over a message saying "0 clusters". Lesson 04's conflict graph drew two writes of
one instant in the order of their random ids, and its message line still spoke of the key picked
before.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import ipywidgets as W
import polars as pl
import pytest

import memkit as mk
from memkit import charts
from memkit.portable.semantic import SEMANTIC_NOW, SemanticEmbedder, semantic_into
from memkit.widgets.panel import Panel

T = datetime(2026, 1, 1, tzinfo=UTC)


def _rows(spec: dict[str, Any], column: str) -> list[dict[str, Any]]:
    """Every inline row of a chart spec that has ``column``."""
    return [r for rows in spec["datasets"].values() for r in rows if column in r]


def _bars(spec: dict[str, Any]) -> dict[str, int]:
    """The merge histogram's memories per colour (``merges``: would merge, held apart, stays apart)."""
    out: dict[str, int] = {}
    for r in _rows(spec, "merges"):
        out[r["merges"]] = out.get(r["merges"], 0) + r["memories"]
    return out


@pytest.fixture(scope="module")
def lesson03():
    """Lesson 03's store and panel: the semantic sample, every namespace."""
    store = mk.MemoryStore(embedder=SemanticEmbedder())
    semantic_into(store, now=SEMANTIC_NOW)
    yield store, mk.widgets.merge_explorer(store, None, now=SEMANTIC_NOW)
    store.close()


@pytest.mark.parametrize("distinct_facts", [True, False])
def test_the_merge_chart_counts_and_colours_exactly_the_plans_members(lesson03, distinct_facts) -> None:
    _, panel = lesson03
    panel.controls["distinct_facts"].value = distinct_facts
    for t in (0.95, 0.9, 0.85, 0.8, 0.68):
        panel.sliders["threshold"].value = t
        members = int(panel.plan["members"].list.len().sum())
        above = int((panel.similarities["similarity"] >= t - 1e-6).sum())
        spec = panel.charts["merge"].to_dict()
        bars, title = _bars(spec), spec["title"]
        assert bars.get("would merge", 0) == members  # red: the plan's members, no more
        assert (
            f": {members} of {panel.similarities['similarity'].is_not_null().sum()} memories" in title["text"]
        )
        assert bars.get("held apart", 0) == above - members  # blue: above the line, held apart
        assert title["subtitle"][1].startswith(f"{above - members} memories at or above it are held apart")
        assert f"{members} memories would merge" in panel.message.value
        if above > members:
            assert f"{above - members} memories above it held apart" in panel.message.value
        if not distinct_facts:  # by cosine alone nothing above the threshold is held apart here
            assert above == members
    panel.controls["distinct_facts"].value = True


def test_after_apply_the_merge_chart_says_nothing_merges_as_the_message_does() -> None:
    store = mk.MemoryStore(embedder=SemanticEmbedder())
    semantic_into(store, now=SEMANTIC_NOW)
    panel = mk.widgets.merge_explorer(store, None, now=SEMANTIC_NOW, threshold=0.85)
    panel.buttons["apply"].click()
    spec = panel.charts["merge"].to_dict()
    assert panel.plan.height == 0 and "0 of" in spec["title"]["text"]
    bars = _bars(spec)
    assert "would merge" not in bars and bars["held apart"] > 0  # what stays apart is blue, not red
    held = spec["title"]["subtitle"][1]
    assert held.startswith(f"{bars['held apart']} memories at or above it are held apart")
    store.close()


def test_a_merge_chart_checks_its_plan_against_its_memories() -> None:
    sims = pl.DataFrame({"id": ["a", "b", "c"], "content": ["x", "y", "z"], "similarity": [0.9, 0.9, 0.6]})
    plan = pl.DataFrame({"members": [["a", "b"]], "content": ["x"], "min_similarity": [0.9]})
    assert _bars(charts.merge_chart(sims, 0.85, plan).to_dict()) == {"would merge": 2, "stays apart": 1}
    alone = charts.merge_chart(sims, 0.85).to_dict()  # no plan: cosines only, and the title says so
    assert "have a partner at or above it" in alone["title"]["text"]
    with pytest.raises(mk.ValidationError, match="^similarities"):
        charts.merge_chart(sims.drop("id"), 0.85, plan)
    with pytest.raises(mk.ValidationError, match="^clusters"):
        charts.merge_chart(sims, 0.85, plan.with_columns(members=pl.lit(["a", "q"])))


# ------------------------------------------------------------------------------------ lesson 04
def test_the_conflict_graph_draws_writes_of_one_instant_in_the_order_written() -> None:
    nodes = pl.DataFrame({
        "id": ["z9", "a1"], "key": ["oncall.rota", "user.editor"], "version": [1, 1],
        "status": ["active", "active"], "content": ["PagerDuty", "VS Code"], "created_at": [T, T],
    })  # fmt: skip
    edges = pl.DataFrame(schema={"source": pl.String, "target": pl.String, "kind": pl.String})
    spec = charts.conflict_graph_chart(nodes, edges).to_dict()
    assert [r["key"] for r in sorted(_rows(spec, "x"), key=lambda r: r["x"])] == [
        "oncall.rota",
        "user.editor",
    ]
    for _ in range(6):  # the store's ids are random: every run must draw the first write first
        s = mk.MemoryStore()
        s.add("The on-call rota lives in PagerDuty", namespace="team", key="oncall.rota", now=T)
        s.add("The team edits in VS Code", namespace="team", key="user.editor", now=T)
        spec = charts.conflict_graph_chart(*mk.conflicts.conflict_graph(s.frame("team"))).to_dict()
        shown = [r["key"] for r in sorted(_rows(spec, "x"), key=lambda r: r["x"])]
        assert shown == ["oncall.rota", "user.editor"]
        s.close()


def test_the_conflict_explorers_message_speaks_of_the_key_picked_now() -> None:
    s = mk.MemoryStore()
    s.add("Production is served from staging", namespace="team", key="deploy.prod.url", requester="a", now=T)
    v2 = s.add("Production moved to app", namespace="team", key="deploy.prod.url", requester="b",
               now=T + timedelta(days=3))  # fmt: skip
    s.add("Releases go out on Tuesdays", namespace="team", key="release.day", requester="a",
          now=T + timedelta(days=4))  # fmt: skip
    s.add("Releases go out on Thursdays", namespace="team", key="release.day", requester="c",
          now=T + timedelta(days=5))  # fmt: skip
    panel = mk.widgets.conflict_explorer(s, "team", now=T + timedelta(days=7))
    panel.controls["key"].value = "deploy.prod.url"
    panel.controls["keep"].value = v2.id
    panel.buttons["resolve"].click()
    assert "deploy.prod.url: kept v2" in panel.message.value
    panel.controls["key"].value = "release.day"
    assert "deploy.prod.url" not in panel.message.value and "release.day: 1 pending" in panel.message.value
    s.close()


def test_a_control_move_clears_what_the_message_line_said_about_the_last_view() -> None:
    """A panel whose refresh says nothing (the guard's) must not keep a refusal under a new view."""

    class Quiet(Panel):
        def __init__(self) -> None:
            super().__init__("quiet", {"x": W.FloatSlider(value=1.0, min=-1.0, max=2.0)})
            self.refresh()

        def refresh(self) -> None:
            if self.controls["x"].value < 0:
                raise mk.ValidationError("x", "must be >= 0")

    panel = Quiet()
    panel.controls["x"].value = -0.5
    assert "must be &gt;= 0" in panel.message.value
    panel.controls["x"].value = 0.5
    assert panel.message.value == ""


def test_the_merge_charts_counts_add_up_to_the_memories_the_panel_says_it_holds() -> None:
    """The title counts memories with a candidate partner; the subtitle's last line counts the rest
    (alone in their namespace, layer and key), so a reader can add them up to the panel's message."""
    store = mk.MemoryStore(embedder=SemanticEmbedder())
    semantic_into(store, now=SEMANTIC_NOW)
    panel = mk.widgets.merge_explorer(store, None, now=SEMANTIC_NOW, threshold=0.85)
    panel.buttons["apply"].click()
    title = panel.charts["merge"].to_dict()["title"]
    counted = int(title["text"].split(" of ")[1].split()[0])
    lone = [s for s in title["subtitle"] if "no candidate partner" in s]
    alone = int(lone[0].split()[0]) if lone else 0
    active = int(panel.message.value.split("the store now has ")[1].split()[0])
    assert alone > 0 and counted + alone == active
    store.close()
