"""Many pairs' fact differences at once (memkit/fact_pairs.py): the same words as
memkit.facts.fact_difference, pair by pair, and held_apart's reasons with it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from memkit.consolidate import held_apart
from memkit.fact_pairs import fact_differences
from memkit.facts import fact_difference

POOL = [
    "预算是5000元", "预算是五千元", "预算是8000元", "Has 2 cats", "Has 3 cats and 2 dogs",
    "I don't like coffee", "Meeting on Monday at 9 pm", "Meeting on Tuesday at 9 am", "不喜欢吃辣",
    "Gina likes tea", "Jon likes tea", "Gina and Jon, never on Friday", "Budget is $5000",
    "Budget is €5000 🐶", "Andrew hikes next month", "ok", "Discussed the budget with Jon",
]  # fmt: skip
DAYS = [datetime(2023, 7, 8, tzinfo=UTC), datetime(2023, 10, 1, tzinfo=UTC)]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(POOL) - 1), st.integers(0, len(POOL) - 1)), max_size=30),
       st.lists(st.sampled_from(DAYS), min_size=len(POOL), max_size=len(POOL)))  # fmt: skip
def test_the_words_are_fact_differences_pair_by_pair(pairs: list[tuple[int, int]], written: list) -> None:
    u = np.array([a for a, _ in pairs], dtype=np.int64)
    v = np.array([b for _, b in pairs], dtype=np.int64)
    want = [fact_difference(POOL[a], POOL[b], written[a], written[b]) for a, b in pairs]
    assert fact_differences(POOL, u, v, written) == want
    assert fact_differences(pl.Series(POOL), u, v, pl.Series(written)) == want


def test_held_apart_names_every_difference_of_a_templated_namespace() -> None:
    texts = [f"Item {i % 3} budget is {1000 + i} yuan" for i in range(12)] + ["Not ok", "ok"]
    n, t = len(texts), datetime(2026, 1, 1, tzinfo=UTC)
    frame = pl.DataFrame({
        "id": [f"m{i:02d}" for i in range(n)], "namespace": ["u"] * n, "layer": ["long_term"] * n,
        "key": pl.Series([None] * n, dtype=pl.String), "content": texts, "importance": [0.5] * n,
        "created_at": [t + timedelta(minutes=i) for i in range(n)], "last_access_at": [t] * n,
        "access_count": [0] * n, "status": ["active"] * n, "protected": [False] * n,
        "_weak": [i == 5 for i in range(n)],
    })  # fmt: skip
    apart = held_apart(frame, np.ones((n, 1), np.float32))
    assert apart.height == n * (n - 1) // 2
    for a, b, why in apart.select("content_a", "content_b", "reason").iter_rows():
        weak = "Item 2 budget is 1005 yuan" in (a, b)
        want = "one is below the forgetting floor, the other not" if weak else (
            f"fact tokens differ: {fact_difference(a, b)}")  # fmt: skip
        assert why == want
