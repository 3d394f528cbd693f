"""memkit.evaluate scores what store.search would return, as the textbook scores it (an audit of the
metrics): a relevant memory that is gone is a miss, memories a search may not return keep their
places as neighbours, exact ties break as the store breaks them, and a requester sees its own view.
Each case compares evaluate(store) with store.search's rankings scored by score_rankings. Then what
may be ranked at ``now`` on every path (nothing written later), near ties past any shortlist, the
requester's neighbours, and a score on a tie step's edge."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
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


# ------------------------------------------------------------------ what may be ranked, and where
class _Vectors:
    """Known texts -> the vectors the test chose (normalized, dim 4); any other text: a far one."""

    name, dim = "vectors-4", 4

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def embed(self, texts: list[str]) -> np.ndarray:
        v = np.array([self.table.get(t, [0.0, 0.0, 0.0, 1.0]) for t in texts], dtype=np.float64)
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32).reshape(len(texts), 4)


def test_a_memory_written_after_now_is_not_ranked_on_any_path() -> None:
    """evaluate, prepare and sweep at ``now`` rank what a search at ``now`` may return: on a
    memories frame too, nothing written after it (nor outside its validity)."""
    mem = pl.DataFrame(
        {
            "id": ["m1", "m2", "m3", "m4"],
            "conversation": ["c"] * 4,
            "content": ["Alice moved to Berlin", "Alice moved to Lisbon", "Alice moved to Oslo", "Rome"],
            "created_at": [T0, _h(30 * 24), _h(1), _h(2)],  # m2: written a month after `now`
            "valid_from": [None, None, _h(100), None],  # m3: holds only later
            "valid_until": [None, None, None, _h(3)],  # m4: held until 3 h
        }
    )
    qs = pl.DataFrame(
        {
            "query_id": ["lisbon", "oslo", "rome"],
            "conversation": ["c"] * 3,
            "question": ["Where did Alice move to Lisbon?", "Alice Oslo", "Rome"],
            "relevant": [["m2"], ["m3"], ["m4"]],
        }
    )
    now = _h(24)
    got = ev.evaluate(mem, qs, now=now, k=(1,), weights=KW, per_query=True)
    assert got["recall@1"].to_list() == [0.0, 0.0, 0.0]
    prep = ev.prepare(mem, qs, now=now)
    assert [g.visible.tolist() for g in prep.groups] == [[True, False, False, False]]
    swept = ev.sweep(prep, grid={"keyword": [1.0], "similarity": [0.0, 0.5]}, k=(1,), by=None)
    assert swept["recall@1"].to_list() == [0.0, 0.0]
    store = mk.MemoryStore()  # the same memories in a store: search and evaluate(store) agree
    for r in mem.iter_rows(named=True):
        t = r["created_at"]
        store.add(r["content"], namespace="c", key=r["id"], valid_from=r["valid_from"],
                  valid_until=r["valid_until"], created_at=t, now=t)  # fmt: skip
    assert _same(store, qs, KW, 1, now)["recall@1"].to_list() == [0.0, 0.0, 0.0]
    later = ev.evaluate(mem, qs, now=_h(800), k=(1,), weights=KW, per_query=True)
    assert later["recall@1"].to_list() == [1.0, 1.0, 0.0]  # written and valid by then; m4 expired
    assert _same(store, qs, KW, 1, _h(800))["recall@1"].to_list() == [1.0, 1.0, 0.0]


def test_near_ties_past_any_shortlist_rank_as_the_store_ranks_them() -> None:
    """100 turns written at one time (a bulk load) within the first 10% tie step: the best-scoring
    lead, in evaluate as in search (a shortlist of 64 by newness used to cut them by row number)."""
    n = 100
    texts = [f"turn {i}" for i in range(n)]
    cos = np.linspace(0.90, 0.999, n)  # cosine to the query rises with the row
    table = {t: [c, float(np.sqrt(1 - c * c)), 0.0, 0.0] for t, c in zip(texts, cos, strict=True)}
    emb = _Vectors({**table, "query": [1.0, 0.0, 0.0, 0.0]})
    w = mk.Weights(similarity=1.0, keyword=0.0, neighbour=0.0, tie=0.1)
    qs = pl.DataFrame(
        {"query_id": ["q"], "question": ["query"], "relevant": [texts[-5:]], "conversation": ["c"]}
    )
    store = mk.MemoryStore(embedder=emb)
    store.add_many(
        pl.DataFrame({"key": texts, "content": texts, "created_at": [T0] * n}), namespace="c", now=T0
    )
    assert _same(store, qs, w, 5, T0)["recall@5"].to_list() == [1.0]
    mem = pl.DataFrame({"id": texts, "conversation": ["c"] * n, "content": texts, "created_at": [T0] * n})
    (top, _), = ev.rank(ev.prepare(mem, qs, embedder=emb), w, k=5)  # fmt: skip
    assert top.tolist() == [[99, 98, 97, 96, 95]]


def test_a_memory_the_requester_may_not_read_does_not_part_its_neighbours() -> None:
    """As the store pairs them (store.neighbours): another writer's private memory written between two
    of the requester's own is not there for it, so the answer still borrows its question's score."""
    store = mk.MemoryStore()
    store.add("Caroline: I went to the LGBTQ support group yesterday", namespace="c", key="q1", requester="r",
              now=_h(0))  # fmt: skip
    store.add("Melanie: the weather was nice", namespace="c", key="x", requester="other", access="private",
              now=_h(0.02))  # fmt: skip
    store.add(
        "Caroline: It was so powerful and moving", namespace="c", key="ans", requester="r", now=_h(0.04)
    )
    for i in range(6):  # turns sharing a word with the question: the answer rises only as a neighbour
        store.add(f"Caroline: note {i} on the group", namespace="c", key=f"f{i}", requester="r",
                  now=_h(30 * (i + 1)))  # fmt: skip
    ids = dict(store.frame("c").select("key", "id").iter_rows())
    pairs = store.neighbours([ids["q1"]], namespace="c", requester="r", now=_h(200))
    assert pairs["next"].to_list() == [ids["ans"]]  # the store's pairing, which evaluate follows
    qs = pl.DataFrame({"query_id": ["q"], "question": ["How did Caroline feel at the support group?"],
                       "relevant": [["ans"]], "conversation": ["c"]})  # fmt: skip
    assert _same(store, qs, mk.Weights(), 3, _h(200), requester="r")["recall@3"].to_list() == [1.0]
    assert _same(store, qs, mk.Weights(), 3, _h(200))["recall@3"].to_list() == [0.0]  # the operator: parted


def test_a_score_on_a_tie_steps_edge_ranks_alike_at_any_scale_and_in_evaluate() -> None:
    """With neighbour 0.8 and tie 0.1 a memory scoring only through its neighbour is exactly two
    steps below it: scaling the weights, normalizing them, or evaluating in float32 ranks it as the
    store does, in the step that edge begins."""
    q, a, b, c = "q", "A: the question turn", "B: the reply, no shared word", "C: an older near match"
    emb = _Vectors(
        {q: [1, 0, 0, 0], a: [1, 0, 0, 0], b: [0, 1, 0, 0], c: [0.85, float(np.sqrt(1 - 0.85**2)), 0, 0]}
    )
    store = mk.MemoryStore(embedder=emb)
    store.add(c, namespace="u", key="C", now=_h(-240))
    store.add(a, namespace="u", key="A", now=_h(-2))
    store.add(b, namespace="u", key="B", now=_h(-2) + timedelta(minutes=1))
    qs = pl.DataFrame({"query_id": ["q"], "question": [q], "relevant": [["B"]], "conversation": ["u"]})
    orders = set()
    for x in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0):
        w = mk.Weights(similarity=x, importance=0, recency=0, keyword=0, neighbour=0.8, tie=0.1)
        for weights in (w, w.normalized()):
            hits = store.search(q, namespace="u", k=3, weights=weights, now=T0, reinforce=False)
            orders.add(tuple(hits["key"]))
            _same(store, qs, weights, 3, T0)  # evaluate (float32) ranks as search (float64)
    assert orders == {("A", "C", "B")}  # B: 0.8 x A's score, exactly two steps down; C: one step
