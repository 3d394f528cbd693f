"""A merge never drops a member's structured ``value``: two different values are two facts (held apart,
in the pure planners and on the store), a value missing on one side merges into the merged memory,
and the re-derivation after a member's erasure keeps the value of what is left."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import polars as pl
import pytest

import memkit as mk
from memkit.consolidate import held_apart, plan_grouped, plan_merges

T0 = datetime(2026, 1, 1, tzinfo=UTC)
H = timedelta(hours=1)


def _frame(texts: list[str], values: list[Any]) -> tuple[pl.DataFrame, np.ndarray]:
    """One group of memories, every two at cosine 1, with these texts and ``value`` strings."""
    n = len(texts)
    t = [T0 + i * H for i in range(n)]
    frame = pl.DataFrame(
        {
            "id": [f"m{i}" for i in range(n)], "namespace": ["u"] * n, "layer": ["long_term"] * n,
            "key": [None] * n, "content": texts, "importance": [0.5] * n, "created_at": t,
            "last_access_at": t, "access_count": [0] * n, "status": ["active"] * n,
            "protected": [False] * n, "access": ["public"] * n, "owner": [None] * n, "created_by": [None] * n,
            "value": pl.Series([None if v is None else json.dumps(v) for v in values], dtype=pl.String),
        }
    )  # fmt: skip
    return frame, np.ones((n, 2), np.float32) / np.sqrt(np.float32(2))


TEXTS = ["User's laptop budget", "User's laptop budget.", "User's laptop budget!"]


def test_two_different_values_are_held_apart_by_the_pure_planners() -> None:
    frame, emb = _frame(TEXTS[:2], [{"amount": 5000}, {"amount": 8000}])
    assert plan_merges(frame, emb).is_empty() and plan_grouped(frame, emb).is_empty()
    assert mk.consolidate.cluster_labels(frame, emb).tolist() == [0, 1]
    apart = held_apart(frame, emb)
    assert apart["reason"].to_list() == ['values differ: {"amount": 5000} ≠ {"amount": 8000}']
    # the value rule is no fact-token rule: it holds with distinct_facts off too
    assert plan_merges(frame, emb, mk.MergeParams(distinct_facts=False)).is_empty()


def test_equal_values_merge_by_content_key_order_aside() -> None:
    frame, emb = _frame(TEXTS[:2], [None, None])
    frame = frame.with_columns(value=pl.Series(['{"a": 1, "b": 2}', '{"b":2,"a":1}']))
    assert plan_merges(frame, emb)["members"].to_list() == [["m0", "m1"]]
    assert held_apart(frame, emb).is_empty()


def test_a_whole_float_equals_its_int() -> None:  # JSON's 5000.0 is 5000 (the review of ec6e90b)
    frame, emb = _frame(TEXTS[:2], [None, None])
    values = ['{"amount": 5000, "n": [1.0]}', '{"n": [1], "amount": 5000.0}']
    frame = frame.with_columns(value=pl.Series(values))
    assert plan_merges(frame, emb)["members"].to_list() == [["m0", "m1"]]


def test_a_missing_value_merges_unless_its_cluster_would_hold_two() -> None:
    frame, emb = _frame(TEXTS[:2], [None, {"amount": 5000}])
    assert plan_merges(frame, emb)["members"].to_list() == [["m0", "m1"]]
    # one without a value beside two different values: no cluster holds two values, and each pair
    # left apart says why
    frame, emb = _frame(TEXTS, [{"amount": 5000}, None, {"amount": 8000}])
    assert plan_merges(frame, emb).is_empty()
    assert set(held_apart(frame, emb)["reason"]) == {
        'values differ: {"amount": 5000} ≠ {"amount": 8000}',
        'values differ: {"amount": 5000} ≠ —',
        'values differ: — ≠ {"amount": 8000}',
    }
    # two without a value still merge with each other there, and two equal values with each other
    frame, emb = _frame([*TEXTS, "User's laptop budget?!", "User's laptop budget..."], [1, None, 2, None, 1])
    members = sorted(sorted(m) for m in plan_merges(frame, emb)["members"].to_list())
    assert members == [["m0", "m4"], ["m1", "m3"]]


def _store_pair(store: mk.MemoryStore, a: Any, b: Any, **kw: Any) -> tuple[mk.Memory, mk.Memory]:
    return (
        store.add(TEXTS[0], value=a, namespace="u", now=T0, **kw),
        store.add(TEXTS[1], value=b, namespace="u", now=T0 + H, **kw),
    )


def test_store_keeps_different_values_apart(store: mk.MemoryStore) -> None:
    a, b = _store_pair(store, {"amount": 5000, "currency": "CNY"}, {"amount": 8000, "currency": "CNY"})
    assert store.consolidate("u", now=T0 + 2 * H, dry_run=True).is_empty()
    assert store.consolidate("u", now=T0 + 2 * H).is_empty()
    assert {store.get(m.id).status for m in (a, b)} == {"active"}
    reasons = held_apart(*store.merge_candidates("u", now=T0 + 2 * H))["reason"].to_list()
    assert reasons == [
        'values differ: {"amount": 5000, "currency": "CNY"} ≠ {"amount": 8000, "currency": "CNY"}'
    ]


def test_store_merge_keeps_a_value_only_another_member_has(store: mk.MemoryStore) -> None:
    # the survivor (higher importance) has no value; the value of the other member stays
    a = store.add(TEXTS[0], namespace="u", importance=0.9, now=T0)
    b = store.add(TEXTS[1], value={"amount": 5000}, namespace="u", now=T0 + H)
    plan = store.consolidate("u", now=T0 + 2 * H)
    assert plan["survivor"].to_list() == [a.id]
    merged = store.get(plan["merged_id"][0])
    assert merged.value == {"amount": 5000}
    assert store.consolidate("u", now=T0 + 3 * H).is_empty()  # a second run merges nothing
    # an erasure re-derives the merge from what is left: the value goes with the member that held it
    store.delete(b.id, namespace="u", now=T0 + 4 * H)
    assert store.get(merged.id).value is None
    # ... and stays with it when the other member goes
    c = store.add(TEXTS[0], namespace="u", importance=0.9, now=T0 + 5 * H)
    d = store.add(TEXTS[1], value={"amount": 7000}, namespace="u", now=T0 + 6 * H)
    merged = store.get(store.consolidate("u", now=T0 + 7 * H)["merged_id"][0])
    assert {c.id, d.id} <= set(merged.merged_from) and merged.value == {"amount": 7000}
    store.delete(c.id, namespace="u", now=T0 + 8 * H)
    assert store.get(merged.id).value == {"amount": 7000}


@pytest.mark.parametrize("value", [None, {"amount": 5000}])
def test_store_merges_equal_values(store: mk.MemoryStore, value: Any) -> None:
    _store_pair(store, value, value)
    merged = store.get(store.consolidate("u", now=T0 + 2 * H)["merged_id"][0])
    assert merged.value == value
