"""The last review's low findings: a frame that holds a ``_row`` column of its own plans as any other (the
planners number rows under that name), and a merge chart given an empty plan needs no ``id`` column."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl

import memkit as mk
from memkit import charts
from memkit.consolidate import MergeParams, plan_grouped
from memkit.forget import plan_forget
from memkit.params import ForgetParams

T = datetime(2026, 1, 1, tzinfo=UTC)


def _store() -> mk.MemoryStore:
    s = mk.MemoryStore()
    for i, text in enumerate(
        ["The user likes green tea", "The user likes green tea a lot", "Budget is 5000"]
    ):
        s.add(text, namespace="u", now=T + timedelta(hours=i))
    return s


def test_forget_plans_a_frame_with_a_row_column_of_its_own() -> None:
    frame = _store().frame("u")
    want = plan_forget(frame, ForgetParams(capacity=1), T + timedelta(days=1))
    got = plan_forget(frame.with_row_index("_row"), ForgetParams(capacity=1), T + timedelta(days=1))
    assert got.equals(want) and got.height == 2


def test_merges_plan_a_frame_with_a_row_column_of_its_own() -> None:
    s = _store()
    frame = s.frame("u", include_embedding=True)
    emb = np.stack(frame["embedding"].to_list())
    params = MergeParams(threshold=0.6)
    want = plan_grouped(frame.drop("embedding"), emb, params)
    got = plan_grouped(frame.drop("embedding").with_row_index("_row"), emb, params)
    assert got.equals(want)


def test_merge_chart_with_an_empty_plan_needs_no_id() -> None:
    sims = pl.DataFrame({"content": ["likes tea", "likes tea a lot"], "similarity": [0.93, 0.93]})
    plan = pl.DataFrame(
        schema={"members": pl.List(pl.String), "content": pl.String, "min_similarity": pl.Float64}
    )
    chart = charts.merge_chart(sims, 0.85, plan).to_dict()
    assert "0 of 2" in str(chart["title"])
