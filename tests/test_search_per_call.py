"""A search's per-call shortcuts change no result: the one-row path of the tie rule gives the grid's
steps bit for bit, a repeated query's BM25 scores follow every write, a component left out of the
hybrid sum is not added, neighbour lookups by ``take`` equal the fancy index, and the hit frame keeps
its columns and types."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import memkit as mk
from memkit.params import Weights
from memkit.scoring import KeywordIndex, hybrid, neighbour_score
from memkit.ties import tie_steps, top_k

FAST = settings(max_examples=200, deadline=None, database=None)
NOW = datetime(2026, 1, 1, tzinfo=UTC)


@FAST
@given(
    st.lists(st.integers(-20, 20), min_size=1, max_size=40),
    st.sampled_from([0.0, 0.05, 0.1, 0.3]),
    st.sampled_from([np.float32, np.float64]),
    st.sampled_from([0.1, 0.7, 3.0]),
)
def test_one_row_tie_steps_are_the_grid_rules(ints: list, tie: float, dtype: type, s: float) -> None:
    scores = (np.asarray(ints, dtype=np.float64) / 10 * s).astype(dtype)  # many exact step edges
    one = tie_steps(scores, tie)  # a search's one row (all finite)
    grid = tie_steps(scores[None, :], tie)[0]  # the general rule, as for a grid of rows
    assert one.dtype == grid.dtype == np.float64
    assert one.tobytes() == grid.tobytes()


def test_top_k_with_ages_of_another_shape_still_broadcasts() -> None:
    scores = np.array([0.5, 0.49, 0.3])
    assert top_k(scores, 2, age=np.array([10.0, 1.0, 0.0]), tie=0.05).tolist() == [1, 0]
    assert top_k(scores, 3, age=np.zeros(3), tie=0.05).tolist() == [0, 1, 2]


def test_hybrid_leaves_out_a_component_given_as_none() -> None:
    w = Weights(similarity=0.5, importance=0.0, recency=0.0, keyword=0.5)
    sim, kw = np.array([-0.0, 0.2, 0.4]), np.array([0.0, 0.5, 1.0])
    left_out = hybrid(sim, None, None, w, kw)
    assert left_out.tolist() == (0.5 * sim + 0.5 * kw).tolist()
    assert np.signbit(hybrid(sim, None, None, w, None)[0])  # nothing added, not even 0 · x
    assert not np.signbit(hybrid(sim, 0.0, 0.0, w, None)[0])  # 0 · 0.0 added: -0.0 + 0.0 = 0.0


def test_neighbour_score_by_take_equals_the_fancy_index() -> None:
    rng = np.random.default_rng(3)
    base = rng.normal(size=(4, 50))  # a grid of rows, as evaluation scores them
    prev, nxt = rng.integers(-1, 50, 50), rng.integers(-1, 50, 50)
    s0 = np.concatenate([np.fmax(base, 0), np.zeros((4, 1))], axis=1)
    want = np.maximum(s0[..., prev], s0[..., nxt])
    assert neighbour_score(base, prev, nxt).tobytes() == want.tobytes()
    assert neighbour_score(base[0], prev, nxt).tobytes() == want[0].tobytes()


def test_a_repeated_query_sees_every_write_to_the_keyword_index() -> None:
    kw = KeywordIndex()
    kw.add(["tea in hangzhou", "coffee with bob"], 0)
    everyone = np.ones(2, dtype=bool)
    assert kw.scores("zebra tea", everyone).tolist()[1] == 0.0
    first = kw.scores("zebra tea", everyone)
    assert kw.scores("zebra tea", everyone).tobytes() == first.tobytes()  # asked again: the same
    kw.add(["a zebra drinks tea"], 2)  # a word the query holds is now indexed
    now = kw.scores("zebra tea", np.ones(3, dtype=bool))
    fresh = KeywordIndex()
    fresh.add(["tea in hangzhou", "coffee with bob", "a zebra drinks tea"], 0)
    assert now.tobytes() == fresh.scores("zebra tea", np.ones(3, dtype=bool)).tobytes()
    assert now[2] > now[0] > 0
    kw.drop_rows(np.array([2]))  # erased: its words go, and so do the query's postings of them
    after = kw.scores("zebra tea", np.array([True, True, False]))
    assert after.tolist() == fresh.scores("tea", np.array([True, True, False])).tolist()
    assert "zebra" not in kw.vocab


def test_a_repeated_search_finds_a_word_written_after_it(tmp_path) -> None:
    with mk.MemoryStore(str(tmp_path / "s.duckdb"), create=True) as store:
        store.add_many(pl.DataFrame({"content": [f"tea with bob on day {i}" for i in range(300)]}),
                       namespace="u", now=NOW - timedelta(hours=1))  # fmt: skip
        before = store.search("quokka tea", namespace="u", now=NOW, reinforce=False)
        assert "quokka" not in " ".join(before["content"])
        store.add("a quokka drinks tea", namespace="u", now=NOW - timedelta(minutes=1))
        hits = store.search("quokka tea", namespace="u", now=NOW, reinforce=False)
        assert hits["content"][0] == "a quokka drinks tea"  # its word is matched now: the other hits
        assert hits["keyword"][0] > hits["keyword"][1] and hits["keyword"][1] < before["keyword"][0]


def test_the_hit_frame_keeps_its_columns_and_types(tmp_path) -> None:
    with mk.MemoryStore(str(tmp_path / "s.duckdb"), create=True) as store:
        store.add_many(pl.DataFrame({"content": [f"tea with bob on day {i}" for i in range(200)]}),
                       namespace="u", now=NOW - timedelta(hours=1))  # fmt: skip
        hits = store.search("tea", namespace="u", now=NOW, reinforce=False)
        none = store.search("tea", namespace="nobody", now=NOW, reinforce=False)
    utc = pl.Datetime("us", "UTC")
    schema = {"rank": pl.Int32, "id": pl.String, "content": pl.String, "score": pl.Float64,
              "similarity": pl.Float64, "importance": pl.Float64, "strength": pl.Float64,
              "recency": pl.Float64, "keyword": pl.Float64, "neighbour": pl.Float64, "key": pl.String,
              "layer": pl.String, "kind": pl.String, "tags": pl.List(pl.String), "created_at": utc,
              "last_access_at": utc, "access_count": pl.Int64, "pending": pl.List(pl.String)}  # fmt: skip
    assert dict(hits.schema) == schema and dict(none.schema) == schema
    assert hits.height == 5 and none.height == 0 and hits["rank"].to_list() == [1, 2, 3, 4, 5]
    assert all(c.n_chunks() == 1 for c in hits.get_columns())
