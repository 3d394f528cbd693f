"""memkit/evaluate/retrieval.py: evaluating a store ranks at the store's own retrieval floor
(``DecayParams.min_strength``), as its search does, unless ``min_strength=`` says otherwise: a memory
too faded for the store's search is not ranked. Failed before the fix (evaluate ranked it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl

import memkit as mk
from memkit import evaluate as ev

T = datetime(2026, 1, 1, tzinfo=UTC)
NOW = T + timedelta(days=2)  # the short-term memory has faded below 0.1 by then
QS = pl.DataFrame(
    {"query_id": ["q"], "question": ["meeting about tea"], "relevant": [["weak"]], "conversation": ["c"]}
)


def _store(floor: float) -> mk.MemoryStore:
    s = mk.MemoryStore(decay=mk.DecayParams(min_strength=floor))
    s.add("User is in a meeting about tea", namespace="c", key="weak", importance=0.3, layer="short_term",
          now=T)  # fmt: skip
    s.add("unrelated long term fact", namespace="c", key="x", importance=0.9, layer="long_term", now=T)
    return s


def _recall(s: mk.MemoryStore, **kw: float) -> float:
    return ev.evaluate(s, QS, k=5, now=NOW, per_query=True, **kw)["recall@5"][0]


def test_evaluate_of_a_store_ranks_at_its_retrieval_floor() -> None:
    with _store(0.1) as s:
        assert "weak" not in s.search("meeting about tea", namespace="c", now=NOW, reinforce=False)["key"]
        assert _recall(s) == 0.0  # as its search: the faded memory is not ranked
        assert _recall(s, min_strength=0.0) == 1.0  # an explicit floor wins
    with _store(0.0) as s:  # no floor: ranked, as before
        assert _recall(s) == 1.0
        assert _recall(s, min_strength=0.1) == 0.0


def test_sweep_of_a_store_ranks_at_its_retrieval_floor() -> None:
    with _store(0.1) as s:
        grid = [{"keyword": 1.0, "similarity": 0.0}, {"keyword": 1.0, "similarity": 0.0, "min_strength": 0.0}]
        out = ev.sweep(s, QS, grid=grid, k=5, by=None, now=NOW)
        assert out.select("min_strength", "recall@5").rows() == [(0.1, 0.0), (0.0, 1.0)]
        assert "store.decay.min_strength" in (ev.evaluate.__doc__ or "")
