"""MK011 compares values normalized (case, punctuation, "now") and per user: in a shared namespace
two users' residences are no conflict (review h134 items 7, 8)."""

from __future__ import annotations

from datetime import datetime

import polars as pl

import memkit as mk
from memkit.analyze import analyze


def _frame(rows: list[tuple[str, str]], t: datetime) -> pl.DataFrame:
    """Active long-term unkeyed memories of namespace ``team``: ``(owner, content)``."""
    n = len(rows)
    return pl.DataFrame(
        {"id": [f"m{i}" for i in range(n)], "namespace": ["team"] * n, "key": [None] * n,
         "content": [r[1] for r in rows], "value": [None] * n, "layer": ["long_term"] * n,
         "status": ["active"] * n, "access": ["public"] * n, "owner": [r[0] for r in rows],
         "created_by": [r[0] for r in rows], "importance": [0.6] * n, "half_life_hours": [2160.0] * n,
         "created_at": [t] * n, "valid_until": [None] * n, "access_count": [1] * n},
        schema_overrides={"key": pl.String, "value": pl.String, "valid_until": pl.Datetime("us", "UTC")},
    )  # fmt: skip


def _mk011(rows: list[tuple[str, str]], now: datetime) -> list[str]:
    got = analyze(_frame(rows, now), now, guard=mk.GuardParams(enabled=False))
    return got.filter(pl.col("code") == "MK011")["memory_id"].to_list()


def test_one_value_in_other_wording_is_no_finding(now: datetime) -> None:
    assert _mk011([("alice", "I live in Boston."), ("alice", "i live in Boston now")], now) == []
    assert _mk011([("alice", "我住在杭州。"), ("alice", "我住在杭州")], now) == []


def test_two_users_of_a_shared_namespace_are_no_conflict(now: datetime) -> None:
    assert _mk011([("alice", "I live in Boston"), ("bob", "I live in Denver")], now) == []
    assert _mk011([("alice", "I live in Boston"), ("alice", "I live in Denver")], now) == ["m0", "m1"]
