"""Bad input to the pure consolidation and conflict helpers is a MemkitError naming the field (never a
raw AttributeError, TypeError or IndexError), and conflict_graph's near-duplicate edges read
un-normalized vectors as the store does (normalized)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import polars as pl
import pytest

import memkit as mk
from memkit.consolidate import held_apart, plan_grouped, plan_merges
from memkit.errors import ValidationError

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def candidates(store: mk.MemoryStore) -> tuple[pl.DataFrame, np.ndarray]:
    store.add("User likes tea", namespace="u", now=T0)
    store.add("User likes tea.", namespace="u", now=T0)
    return store.merge_candidates("u", now=T0)


@pytest.mark.parametrize("planner", [held_apart, plan_merges, plan_grouped])
def test_planners_name_the_bad_field(planner, candidates) -> None:  # noqa: ANN001
    frame, emb = candidates
    cases = [
        ((None, emb), "frame"),
        (({"id": ["a"]}, emb), "frame"),
        ((frame.drop("content"), emb), "frame"),
        ((frame, None), "embeddings"),
        ((frame, emb[:1]), "embeddings"),
        ((frame, [["x", "y"]] * frame.height), "embeddings"),
        ((frame, np.full_like(emb, np.nan)), "embeddings"),
        ((frame, emb, {"threshold": 0.9}), "params"),
        ((frame, emb, None), "params"),
    ]
    for args, field in cases:
        with pytest.raises(ValidationError) as e:
            planner(*args)
        assert e.value.field == field, (args[:1], field)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ((None, None, None), "existing"),
        (("abc", "x", "flag"), "existing"),
        (([("a", "active", "x")], "x", "flag"), "existing"),
        (([("a", "active", "x", "1")], "x", "flag"), "existing"),
        (([], None, "flag"), "new_value"),
        (([], "x", "overwrite"), "policy"),
        (([], "x", None), "policy"),
    ],
)
def test_plan_keyed_write_names_the_bad_field(args: tuple, field: str) -> None:
    with pytest.raises(ValidationError) as e:
        mk.conflicts.plan_keyed_write(*args)
    assert e.value.field == field


@pytest.fixture
def graph_input(store: mk.MemoryStore) -> tuple[pl.DataFrame, np.ndarray]:
    store.add("User likes tea", namespace="u", now=T0)
    store.add("User likes tea.", namespace="u", now=T0)
    store.add("Other", namespace="u", now=T0)
    return store.frame("u"), store.merge_candidates("u", now=T0)[1]


@pytest.mark.parametrize("threshold", [float("nan"), float("inf"), 5.0, -1.5, "x", None, True])
def test_conflict_graph_refuses_a_bad_threshold(graph_input, threshold) -> None:  # noqa: ANN001
    frame, emb = graph_input
    with pytest.raises(ValidationError) as e:
        mk.conflicts.conflict_graph(frame, emb, threshold=threshold)
    assert e.value.field == "threshold"


def test_conflict_graph_refuses_bad_embeddings(graph_input) -> None:  # noqa: ANN001
    frame, emb = graph_input
    for bad in (emb[:2], np.vstack([emb, emb[:2]]), np.full_like(emb, np.nan), emb[:, :0], emb[0], "x"):
        with pytest.raises(ValidationError) as e:
            mk.conflicts.conflict_graph(frame, bad)
        assert e.value.field == "embeddings"


def test_conflict_graph_normalizes_vectors_as_the_store_does(graph_input) -> None:  # noqa: ANN001
    frame, emb = graph_input
    _, unit = mk.conflicts.conflict_graph(frame, emb)
    _, scaled = mk.conflicts.conflict_graph(frame, emb * np.array([[3.0], [0.2], [7.0]]))
    near = pl.col("kind") == "near_duplicate_of"
    assert scaled.filter(near).rows() == unit.filter(near).rows() and unit.filter(near).height == 1
    zero = emb.copy()
    zero[2] = 0.0  # a zero row stays zero: near nothing
    assert mk.conflicts.conflict_graph(frame, zero)[1].filter(near).rows() == unit.filter(near).rows()
