"""The analyzer's findings (memkit.analyze) and the conflict graph (memkit.conflicts.conflict_graph)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import polars as pl

import memkit as mk
from memkit.analyze import CODES, analyze
from memkit.conflicts import conflict_graph

D = timedelta(days=1)


def codes(findings: pl.DataFrame) -> list[tuple[str, str]]:
    return sorted(findings.select("code", "memory_id").rows())


def test_each_code_fires_on_its_case_and_only_there(store: mk.MemoryStore, now: datetime) -> None:
    ok = store.add("a healthy memory", namespace="u", requester="w", importance=0.9, now=now)
    store.add("杭州", namespace="u", requester="w", key="addr", importance=0.8, now=now)
    conflict = store.add("上海", namespace="u", requester="w2", key="addr", importance=0.8, now=now)
    expired = store.add("sale ends", namespace="u", requester="w", valid_until=now + D, now=now)
    orphan = store.add("nobody can read", namespace="u", access="private", now=now)  # no requester
    weak = store.add("a passing remark", namespace="u", requester="w", importance=0.2, now=now)
    stale = store.add("old module note", namespace="u", requester="gone", importance=0.9,
                      created_at=now - 200 * D, now=now)  # fmt: skip
    found = analyze(store.frame("u"), now + 2 * D)
    assert codes(found) == sorted([
        ("MK001", conflict.id), ("MK002", expired.id), ("MK005", orphan.id),
        ("MK006", weak.id), ("MK004", stale.id),
    ])  # fmt: skip
    assert ok.id not in found["memory_id"].to_list()
    assert found["severity"].to_list()[0] == "error"  # most severe first
    assert set(found["severity"]) <= {"error", "warning", "info"}
    assert all(c in CODES for c in found["code"])


def test_contradictory_values_across_layers(now: datetime) -> None:
    f = pl.DataFrame({
        "id": ["a", "b", "c"], "namespace": ["u"] * 3, "key": ["diet", "diet", "diet"],
        "content": ["vegetarian", "eats fish", "vegetarian"], "value": [None, None, None],
        "layer": ["long_term", "episodic", "short_term"], "status": ["active"] * 3,
        "access": ["public"] * 3, "owner": ["x"] * 3, "created_by": ["x"] * 3,
        "importance": [0.9] * 3, "half_life_hours": [2160.0] * 3, "created_at": [now] * 3,
        "valid_until": [None] * 3, "access_count": [1] * 3,
    })  # fmt: skip
    assert [c for c, _ in codes(analyze(f, now))] == ["MK007"] * 3
    same = f.with_columns(content=pl.lit("vegetarian"))
    assert analyze(same, now).is_empty()


def test_empty_frame_no_findings(now: datetime) -> None:
    assert analyze(pl.DataFrame(), now).schema["code"] == pl.String


def test_conflict_graph_lineage_and_disputes(store: mk.MemoryStore, now: datetime) -> None:
    v1 = store.add("杭州", namespace="u", key="addr", now=now)
    v2 = store.add("上海", namespace="u", key="addr", now=now + D)
    v3 = store.add("北京", namespace="u", key="addr", now=now + 2 * D)
    other = store.add("unkeyed", namespace="u", now=now)
    nodes, edges = conflict_graph(store.frame("u"))
    assert set(nodes["id"]) == {v1.id, v2.id, v3.id, other.id}
    assert sorted(edges.rows()) == sorted([
        (v1.id, v2.id, "next_version"), (v2.id, v3.id, "next_version"),
        (v2.id, v1.id, "conflicts_with"), (v3.id, v1.id, "conflicts_with"),
    ])  # fmt: skip
    store.resolve("addr", namespace="u", keep=v3.id, now=now + 3 * D)
    _, edges = conflict_graph(store.frame("u"))
    assert edges.filter(pl.col("kind") == "conflicts_with").is_empty()


def _against(store: mk.MemoryStore, namespace: str) -> dict[str, str]:
    """The store's own record of each conflict: pending id -> the id it was compared with."""
    events = store.audit(namespace, op="conflict")
    return {e["memory_id"]: json.loads(e["detail"])["against"] for e in events.to_dicts()}


def test_conflict_graph_disputes_only_the_version_the_write_was_compared_with(
    store: mk.MemoryStore, now: datetime
) -> None:
    h = timedelta(hours=1)
    v1 = store.add(
        "URL is a.example", namespace="t", key="url", requester="dep", now=now, valid_until=now + 10 * h
    )
    v2 = store.add(
        "URL is b.example", namespace="t", key="url", requester="dep", now=now + 20 * h
    )  # v1 expired
    v3 = store.add("URL is c.example", namespace="t", key="url", requester="other", now=now + 21 * h)
    assert store.frame("t").filter(pl.col("id") == v1.id)["status"][0] == "active"  # expired, still "active"
    assert _against(store, "t") == {v3.id: v2.id}
    want = [(v3.id, v2.id)]  # never v3 -> v1: v1 had left the key before v3 was written
    _, edges = conflict_graph(store.frame("t"))
    assert edges.filter(pl.col("kind") == "conflicts_with").select("source", "target").rows() == want
    _, edges = conflict_graph(store.frame("t"), audit=store.audit("t", op="conflict"))
    assert edges.filter(pl.col("kind") == "conflicts_with").select("source", "target").rows() == want
    _, edges = conflict_graph(store.frame("t", as_of=now + 21 * h))  # as the store saw it then
    assert edges.filter(pl.col("kind") == "conflicts_with").select("source", "target").rows() == want


def test_conflict_graph_with_audit_draws_the_stores_record(store: mk.MemoryStore, now: datetime) -> None:
    # alice's value, bob's pending dispute, then alice's own update: bob's write was compared with v1
    v1 = store.add("a", namespace="t", key="k", requester="alice", access="public", now=now)
    v2 = store.add("b", namespace="t", key="k", requester="bob", access="public", now=now + D)
    v3 = store.add("c", namespace="t", key="k", requester="alice", access="public", now=now + 2 * D)
    assert (v2.status, v3.status) == ("conflict", "active") and _against(store, "t") == {v2.id: v1.id}
    _, edges = conflict_graph(store.frame("t"), audit=store.audit("t", op="conflict"))
    assert edges.filter(pl.col("kind") == "conflicts_with").select("source", "target").rows() == [
        (v2.id, v1.id)
    ]
    _, edges = conflict_graph(store.frame("t"))  # the frame alone: v1 is superseded, so no edge is drawn
    disputes = edges.filter(pl.col("kind") == "conflicts_with").select("source", "target").rows()
    assert (v2.id, v3.id) not in disputes  # v2 was never compared with v3


def test_conflict_graph_unkeyed_distinct_no_edges(store: mk.MemoryStore, now: datetime) -> None:
    store.add("x", namespace="u", now=now)
    nodes, edges = conflict_graph(store.frame("u"))
    assert nodes.height == 1 and edges.is_empty() and edges.columns == ["source", "target", "kind"]


def test_conflict_graph_merges_and_near_duplicates(store: mk.MemoryStore, now: datetime) -> None:
    a = store.add("用户喜欢喝美式咖啡", namespace="u", now=now)
    b = store.add("用户喜欢喝美式咖啡，少加糖", namespace="u", now=now)
    store.add("用户喜欢喝美式咖啡", namespace="v", now=now)  # another namespace: never an edge
    frame = store.frame(include_embedding=True)
    emb = frame["embedding"].to_numpy()
    _, edges = conflict_graph(frame.drop("embedding"), emb, threshold=0.85)
    assert [({s, t}, k) for s, t, k in edges.rows()] == [({a.id, b.id}, "near_duplicate_of")]
    merged = store.consolidate("u", now=now)["merged_id"][0]
    _, edges = conflict_graph(store.frame("u"))
    assert sorted(edges.rows()) == sorted([(a.id, merged, "merged_into"), (b.id, merged, "merged_into")])


def test_store_analyze_matches_the_pure_function(store: mk.MemoryStore, now: datetime) -> None:
    store.add("杭州", namespace="u", key="addr", now=now)
    store.add("上海", namespace="u", key="addr", now=now)
    store.add("elsewhere", namespace="v", key="addr", now=now)
    store.add("elsewhere too", namespace="v", key="addr", now=now)
    assert store.analyze("u", now=now).equals(analyze(store.frame("u"), now))
    assert store.analyze(now=now)["namespace"].to_list() == ["u", "v"]


def test_store_analyze_reports_weak_never_accessed_memories_with_the_default_floor() -> None:
    """MK006 uses the forgetting floor (0.1) when the store's retrieval floor is the default 0
    (regression: it passed 0 and so never fired)."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    with mk.MemoryStore() as store:
        weak = store.add("a passing note", namespace="u", importance=0.2, layer="short_term", now=now)
        strong = store.add("the user is allergic to peanuts", namespace="u", importance=0.9, now=now)
        later = now + timedelta(days=3)  # the short-term note has decayed far below 0.1
        codes = store.analyze("u", now=later).filter(pl.col("code") == "MK006")["memory_id"].to_list()
        assert weak.id in codes and strong.id not in codes
        floored = mk.MemoryStore(decay=mk.DecayParams(min_strength=0.95))
        with floored:
            m = floored.add("the user is allergic to peanuts", namespace="u", importance=0.9, now=now)
            found = floored.analyze("u", now=later).filter(pl.col("code") == "MK006")["memory_id"]
            assert m.id in found.to_list()  # a retrieval floor set by the user is the floor
