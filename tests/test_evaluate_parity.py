"""memkit.evaluate scores what store.search would return, as the textbook scores it (an audit of the
metrics): a relevant memory that is gone is a miss, memories a search may not return keep their
places as neighbours, exact ties break as the store breaks them, and a requester sees its own view.
Each case compares evaluate(store) with store.search's rankings scored by score_rankings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

import memkit as mk
from memkit import evaluate as ev

T0 = datetime(2024, 1, 1, tzinfo=UTC)
KW = mk.Weights(similarity=0.0, importance=0.0, recency=0.0, keyword=1.0, neighbour=0.0, tie=0.0)


def _h(x: float) -> datetime:
    return T0 + timedelta(hours=x)


def _searched(store: mk.MemoryStore, qs: pl.DataFrame, weights: mk.Weights, k: int, now: datetime,
              requester: str | None = None) -> pl.DataFrame:  # fmt: skip
    """store.search's rankings of the queries, by key, scored by score_rankings."""
    rows = []
    for q in qs.iter_rows(named=True):
        hits = store.search(q["question"], namespace=q["conversation"], k=k, weights=weights, now=now,
                            requester=requester, reinforce=False, min_strength=0.0)  # fmt: skip
        rows += [(q["query_id"], r, key) for r, key in zip(hits["rank"], hits["key"], strict=True)]
    ranked = pl.DataFrame(
        rows, schema={"query_id": pl.String, "rank": pl.Int64, "id": pl.String}, orient="row"
    )
    return ev.score_rankings(ranked, qs, ks=(k,))


def _same(store: mk.MemoryStore, qs: pl.DataFrame, weights: mk.Weights, k: int, now: datetime | None,
          requester: str | None = None, at: datetime | None = None) -> pl.DataFrame:  # fmt: skip
    """evaluate's per-query metrics, asserted equal to the searched ones."""
    got = ev.evaluate(store, qs, weights=weights, k=k, now=now, per_query=True, requester=requester)
    want = _searched(store, qs, weights, k, at or now, requester)
    cols = ["query_id", f"recall@{k}", f"ndcg@{k}", "mrr"]
    assert got.select(cols).rows() == want.select(cols).rows()
    return got


def test_a_relevant_memory_that_is_gone_is_a_miss() -> None:
    store = mk.MemoryStore()
    texts = ["apples are red", "apples grow on trees", "bananas are yellow", "unrelated"]
    frame = pl.DataFrame(
        {"key": ["a1", "a2", "b1", "x"], "content": texts, "created_at": [T0, _h(48), _h(96), _h(144)]}
    )
    store.add_many(frame, namespace="c", now=_h(144))
    qs = pl.DataFrame({"query_id": ["qa", "qb"], "question": ["apples", "bananas"],
                       "relevant": [["a1", "a2"], ["b1"]], "conversation": ["c", "c"]})  # fmt: skip
    for key in ("a2", "b1"):
        store.delete(store.frame("c").filter(pl.col("key") == key)["id"][0], namespace="c", now=_h(160))
    got = _same(store, qs, KW, 1, _h(168))
    assert got.select("query_id", "recall@1").rows() == [("qa", 0.5), ("qb", 0.0)]  # forgetting lowers recall


def test_a_memory_a_search_may_not_return_still_separates_neighbours() -> None:
    weights = dataclasses_replace(KW, neighbour=0.8)
    store = mk.MemoryStore()
    store.add("what instrument does Sam play", namespace="c", key="A", now=_h(0))
    store.add(
        "old note about nothing", namespace="c", key="X", valid_until=_h(2), now=_h(1)
    )  # expired between
    store.add("the violin, since childhood", namespace="c", key="B", now=_h(3))
    store.add("Sam bought an instrument case", namespace="c", key="C", now=_h(100))
    qs = pl.DataFrame({"query_id": ["q"], "question": ["what instrument does Sam play"], "relevant": [["B"]],
                       "conversation": ["c"]})  # fmt: skip
    _same(store, qs, weights, 2, _h(200))


def test_without_now_validity_is_judged_at_the_newest_memory() -> None:
    store = mk.MemoryStore()
    store.add("the meeting room is 4B", namespace="c", key="old", valid_until=_h(10), now=_h(0))
    store.add("the meeting room moved", namespace="c", key="new", now=_h(20))
    qs = pl.DataFrame(
        {"query_id": ["q"], "question": ["meeting room 4B"], "relevant": [["old"]], "conversation": ["c"]}
    )
    got = _same(store, qs, KW, 1, None, at=_h(20))
    assert got["recall@1"].to_list() == [0.0]  # expired by then: a search could not return it


def test_exact_ties_break_as_the_store_breaks_them() -> None:
    n = 20
    store = mk.MemoryStore()
    texts = [f"alpha beta filler{i}" if i % 2 == 0 else f"gamma other{i}" for i in range(n)]
    frame = pl.DataFrame({"key": [f"m{i}" for i in range(n)], "created_at": [T0] * n, "content": texts})
    store.add_many(frame, namespace="c", now=T0)
    qs = pl.DataFrame(
        {"query_id": ["q"], "question": ["alpha beta"], "relevant": [["m4"]], "conversation": ["c"]}
    )
    assert _same(store, qs, KW, 3, T0)["recall@3"].to_list() == [1.0]


def test_a_requester_is_evaluated_on_what_it_may_read() -> None:
    store = mk.MemoryStore()
    store.add(
        "bob's secret plan is tulips", namespace="c", key="p", requester="bob", access="private", now=T0
    )
    store.add("plain note", namespace="c", key="z", requester="bob", now=T0)
    qs = pl.DataFrame(
        {"query_id": ["q"], "question": ["secret plan"], "relevant": [["p"]], "conversation": ["c"]}
    )
    assert _same(store, qs, KW, 1, T0, requester="alice")["recall@1"].to_list() == [0.0]
    assert _same(store, qs, KW, 1, T0, requester="bob")["recall@1"].to_list() == [1.0]


@pytest.mark.parametrize(
    ("rows", "queries"),
    [
        (
            {"query_id": ["a", "a"], "rank": [1, 2], "id": ["x", "x"]},
            {"query_id": ["a"], "relevant": [["x"]]},
        ),
        (
            {"query_id": ["a", "a"], "rank": [1, 1], "id": ["x", "y"]},
            {"query_id": ["a"], "relevant": [["x"]]},
        ),
        ({"query_id": ["a"], "rank": [1], "id": ["x"]}, {"query_id": ["a", "a"], "relevant": [["x"], ["y"]]}),
    ],
)
def test_a_ranking_whose_score_would_depend_on_row_order_is_refused(rows: dict, queries: dict) -> None:
    with pytest.raises(mk.ValidationError):
        ev.score_rankings(pl.DataFrame(rows), pl.DataFrame(queries), ks=(1, 2))


def test_null_and_empty_relevant_lists_are_no_labels() -> None:
    ranked = pl.DataFrame({"query_id": ["a", "b"], "rank": [1, 1], "id": ["x", "y"]})
    qs = pl.DataFrame({"query_id": ["a", "b"], "relevant": [["x", None], []]})
    assert ev.score_rankings(ranked, qs, ks=(1,)).select("query_id", "recall@1").rows() == [("a", 1.0)]


def dataclasses_replace(w: mk.Weights, **kw: float) -> mk.Weights:
    import dataclasses

    return dataclasses.replace(w, **kw)


def test_the_reranker_leaves_out_a_query_without_labels_as_score_rankings_does() -> None:
    store = mk.MemoryStore()
    a = store.add("apples are red", namespace="c", now=T0)
    store.add("bananas are yellow", namespace="c", now=_h(72))
    rr = ev.Reranker.from_store(store, ["apples", "cherries"], namespace="c", now=_h(96))
    labels = {"apples": [a.id], "cherries": []}
    assert rr.sweep(labels, pl.DataFrame([vars(mk.Weights())]), k=1).select("recall", "mrr").row(0) == (
        1.0,
        1.0,
    )
    assert rr.metrics(labels, mk.Weights(), k=1)["query"].to_list() == ["apples"]
    with pytest.raises(mk.ValidationError, match="relevant"):
        rr.sweep({"cherries": []}, pl.DataFrame([vars(mk.Weights())]), k=1)


def test_a_key_is_judged_by_its_current_version_not_a_newer_pending_one() -> None:
    store = mk.MemoryStore()
    store.add("The user drinks green tea every morning", namespace="c", key="k1", requester="a", now=T0)
    store.add("The weather is rainy in Hangzhou", namespace="c", key="k2", requester="a", now=_h(1))
    pending = store.add("The user drinks black coffee", namespace="c", key="k1", requester="b", now=_h(2))
    assert pending.status == "conflict"
    qs = pl.DataFrame(
        {"query_id": ["q"], "question": ["green tea"], "relevant": [["k1"]], "conversation": ["c"]}
    )
    assert _same(store, qs, KW, 5, _h(3))["recall@5"].to_list() == [1.0]


def test_exact_ties_past_the_shortlist_still_break_as_the_store_breaks_them() -> None:
    n = 300  # ties across the first pass's cut (64 rows): a partition would keep any of them
    store = mk.MemoryStore()
    store.add_many(pl.DataFrame({"key": [f"m{i}" for i in range(n)], "content": ["alpha beta"] * n,
                                 "created_at": [T0] * n}), namespace="c", now=T0)  # fmt: skip
    qs = pl.DataFrame(
        {"query_id": ["q"], "question": ["alpha beta"], "relevant": [["m0"]], "conversation": ["c"]}
    )
    assert _same(store, qs, KW, 5, T0)["recall@5"].to_list() == [1.0]
