"""Time travel that tells the truth (memkit.store.asof): at a past ``now``, search, read, neighbours,
frame(as_of=), forget and evaluate judge each memory by its status then, and a merge exists from its
merge event, not from its oldest member's created_at. A deleted memory stays gone at every ``t``, a
memory quarantined today stays held at every ``t`` (tests/store/test_review_leaks.py).
Every index kind ranks alike; a ``now`` at or after the last status change never reads the log."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

import memkit as mk
from memkit import evaluate as ev

T0 = datetime(2026, 1, 1, tzinfo=UTC)
KW = mk.Weights(similarity=0.0, importance=0.0, recency=0.0, keyword=1.0, neighbour=0.0, tie=0.0)


def _h(x: float) -> datetime:
    return T0 + timedelta(hours=x)


def _kinds(backend: str) -> list[str]:
    return ["exact", "int8", "hnsw"] if backend == "postgres" else ["exact", "int8"]


def _found(store: mk.MemoryStore, query: str, at: datetime, k: int = 10) -> list[str]:
    """The contents a search at ``at`` returns (no reinforcement: the store stays as it was)."""
    hits = store.search(query, namespace="u", k=k, now=at, reinforce=False, weights=KW, min_strength=0.0)
    return hits["content"].to_list()


def _shown(store: mk.MemoryStore, at: datetime) -> dict[str, str]:
    """frame(as_of=at): content -> status then."""
    return dict(store.frame("u", as_of=at).select("content", "status").iter_rows())


@pytest.mark.parametrize("kind", ["exact", "int8", "hnsw"])
def test_a_key_superseded_later_is_current_before_it(backend: str, kind: str) -> None:
    if kind not in _kinds(backend):
        pytest.skip("hnsw: PostgreSQL only")
    with mk.MemoryStore(index=kind, conflict_policy="supersede") as store:
        store.add("the user lives in Hangzhou", namespace="u", key="home", now=_h(0))
        store.add("the user lives in Shanghai", namespace="u", key="home", now=_h(10))
        assert _found(store, "user lives", _h(5)) == ["the user lives in Hangzhou"]
        assert _found(store, "user lives", _h(15)) == ["the user lives in Shanghai"]
        assert store.read("home", namespace="u", now=_h(5)).content == "the user lives in Hangzhou"
        assert store.read("home", namespace="u", now=_h(15)).content == "the user lives in Shanghai"
        assert _shown(store, _h(5)) == {"the user lives in Hangzhou": "active"}


@pytest.mark.parametrize("kind", ["exact", "int8"])
def test_a_conflict_resolved_later_is_pending_before_it(kind: str) -> None:
    with mk.MemoryStore(index=kind) as store:  # policy "flag": the second value waits for resolve
        store.add("the office is on floor 3", namespace="u", key="office", requester="a", now=_h(0))
        new = store.add("the office is on floor 7", namespace="u", key="office", requester="b", now=_h(2))
        assert new.status == "conflict"
        store.resolve("office", keep=new.id, namespace="u", now=_h(10))
        assert _found(store, "office floor", _h(5)) == ["the office is on floor 3"]
        hits = store.search("office floor", namespace="u", now=_h(5), reinforce=False)
        assert hits["pending"].to_list() == [["the office is on floor 7"]]  # disputed then
        assert _found(store, "office floor", _h(12)) == ["the office is on floor 7"]
        assert store.read("office", namespace="u", now=_h(5)).content == "the office is on floor 3"


@pytest.mark.parametrize("kind", ["exact", "int8"])
def test_quarantine_then_approve_is_replayed(kind: str) -> None:
    with mk.MemoryStore(index=kind) as store:
        m = store.add("the deploy token lives in the vault", namespace="u", now=_h(0))
        store.learn_lesson(m.id, reason="confirmed wrong", namespace="u", now=_h(10))  # quarantined
        store.approve(m.id, namespace="u", now=_h(20))  # released again
        text = "the deploy token lives in the vault"
        assert [_found(store, "deploy token vault", _h(x)) for x in (5, 15, 25)] == [[text], [], [text]]
        assert [_shown(store, _h(x))[text] for x in (5, 15, 25)] == ["active", "quarantined", "active"]


@pytest.mark.parametrize("kind", ["exact", "int8"])
def test_validity_and_erasure_are_not_undone(kind: str) -> None:
    with mk.MemoryStore(index=kind, conflict_policy="supersede") as store:
        store.add("the parking pass is valid", namespace="u", valid_until=_h(8), now=_h(0))
        gone = store.add("the parking code is 4411", namespace="u", now=_h(0))
        store.add("a later note about parking", namespace="u", key="n", now=_h(9))
        store.delete(gone.id, namespace="u", now=_h(10))
        assert _found(store, "parking", _h(5)) == ["the parking pass is valid"]  # erased: gone at every t
        assert _found(store, "parking", _h(9)) == ["a later note about parking"]  # expired at 8 h
        assert "the parking code is 4411" not in _shown(store, _h(5))


@pytest.mark.parametrize("kind", ["exact", "int8"])
def test_a_merge_exists_from_its_merge_event(kind: str) -> None:
    with mk.MemoryStore(index=kind) as store:
        store.add("the user likes green tea in the morning", namespace="u", now=_h(0))
        store.add("the user likes green tea in the morning!", namespace="u", now=_h(1))
        plan = store.consolidate("u", threshold=0.8, now=_h(100))
        merged = plan["merged_id"][0]
        assert merged is not None and store.get(merged).created_at == _h(0)  # dated by its oldest member
        ids = lambda at: store.search("green tea", namespace="u", now=at, reinforce=False)["id"].to_list()  # noqa: E731
        assert merged not in ids(_h(50)) and len(ids(_h(50))) == 2  # the members, as they were then
        assert ids(_h(150)) == [merged]
        assert merged not in store.frame("u", as_of=_h(50))["id"].to_list()
        # forget dated before the merge neither plans the merge nor erases its members through it
        plan = store.forget("u", now=_h(50), policy=mk.ForgetParams(min_strength=0.99), dry_run=True)
        assert merged not in plan["id"].to_list() and "cascade" not in plan["reason"].to_list()
        assert sorted(plan["reason"].to_list()) == ["weak", "weak"]  # judged on their own


def test_neighbours_at_a_past_now_name_what_a_search_then_returns() -> None:
    with mk.MemoryStore(conflict_policy="supersede") as store:
        a = store.add("first turn", namespace="u", key="a", now=_h(0))
        b = store.add("second turn", namespace="u", key="b", now=_h(1))
        store.add("second turn, corrected", namespace="u", key="b", now=_h(30))
        assert store.neighbours([a.id], namespace="u", now=_h(2))["next"].to_list() == [b.id]
        assert store.neighbours([a.id], namespace="u", now=_h(31))["next"].to_list() == [None]


def _searched(store: mk.MemoryStore, qs: pl.DataFrame, k: int, at: datetime) -> pl.DataFrame:
    rows = []
    for q in qs.iter_rows(named=True):
        hits = store.search(q["question"], namespace=q["conversation"], k=k, weights=KW, now=at,
                            reinforce=False, min_strength=0.0)  # fmt: skip
        rows += [(q["query_id"], r, key) for r, key in zip(hits["rank"], hits["key"], strict=True)]
    schema = {"query_id": pl.String, "rank": pl.Int64, "id": pl.String}
    ranked = pl.DataFrame(rows, schema=schema, orient="row")
    return ev.score_rankings(ranked, qs, ks=(k,))


@pytest.mark.parametrize("at", [_h(5), _h(15), None])
def test_evaluate_ranks_as_search_does_at_a_past_now(at: datetime | None) -> None:
    with mk.MemoryStore() as store:
        store.add("the user drinks green tea", namespace="c", key="tea", requester="a", now=_h(0))
        store.add("the user drinks black coffee", namespace="c", key="tea", requester="b", now=_h(2))
        store.add("the weather is rainy", namespace="c", key="w", now=_h(3))
        pending = store.frame("c").filter(pl.col("status") == "conflict")["id"][0]
        store.resolve("tea", keep=pending, namespace="c", now=_h(10))
        qs = pl.DataFrame({"query_id": ["q1", "q2"], "question": ["green tea", "black coffee"],
                           "relevant": [["tea"], ["tea"]], "conversation": ["c", "c"]})  # fmt: skip
        got = ev.evaluate(store, qs, weights=KW, k=1, now=at, per_query=True, min_strength=0.0)
        want = _searched(store, qs, 1, at or _h(3))  # without now: at the newest memory's time
        assert got.select("query_id", "recall@1").rows() == want.select("query_id", "recall@1").rows()
        expected = [1.0, 0.0] if at != _h(15) else [0.0, 1.0]  # green tea current until 10 h
        assert got["recall@1"].to_list() == expected


def test_a_now_after_the_last_status_change_never_reads_the_log() -> None:
    with mk.MemoryStore(conflict_policy="supersede") as store:
        store.add("v1 of the plan", namespace="u", key="plan", now=_h(0))
        store.add("v2 of the plan", namespace="u", key="plan", now=_h(10))
        _found(store, "plan", _h(20))  # the watermark is looked up once
        asked: list[str] = []
        run, sql = store._run, store._sql

        def spy_run(q: str, p=()):  # noqa: ANN001, ANN202
            asked.append(q)
            return run(q, p)

        def spy_sql(q: str, p=()):  # noqa: ANN001, ANN202
            asked.append(q)
            return sql(q, p)

        store._run, store._sql = spy_run, spy_sql  # type: ignore[method-assign]
        for at in (_h(10), _h(20)):
            _found(store, "plan", at)
            store.read("plan", namespace="u", now=at)
            store.frame("u", as_of=at)
        assert not [q for q in asked if "FROM events" in q]  # (a read's own event is written)
        assert _found(store, "plan", _h(5)) == ["v1 of the plan"]  # the past pays: one look
        assert _found(store, "plan", _h(5)) == ["v1 of the plan"]  # (the same instant again: remembered)
        assert len([q for q in asked if "FROM events" in q]) == 1
        store.add("v3 of the plan", namespace="u", key="plan", now=_h(30))  # raises the watermark
        assert _found(store, "plan", _h(25)) == ["v2 of the plan"]


def test_the_replay_agrees_with_today_after_every_kind_of_change(backend: str) -> None:
    """The rule the watermark relies on: replayed at the last status change, every memory has the
    status it has today (every status change is logged with the status it sets)."""
    with mk.MemoryStore() as store:
        store.add("alpha one", namespace="u", key="a", requester="x", now=_h(0))
        c = store.add("alpha two", namespace="u", key="a", requester="y", now=_h(1))
        store.resolve("a", keep=c.id, namespace="u", now=_h(2))
        store.add("alpha three", namespace="u", key="a", conflict_policy="supersede", now=_h(3))
        m = store.add("beta one", namespace="u", now=_h(4))
        store.learn_lesson(m.id, reason="bad", namespace="u", now=_h(5))
        store.add("gamma tea green", namespace="u", now=_h(6))
        store.add("gamma tea green!", namespace="u", now=_h(7))
        store.consolidate("u", threshold=0.8, now=_h(8))
        store.approve(m.id, namespace="u", now=_h(9))
        today = dict(store.frame("u").select("id", "status").iter_rows())
        last = store.audit("u")["ts"].max()
        before = store.frame("u", as_of=last - timedelta(microseconds=1))
        assert dict(before.select("id", "status").iter_rows()) != today  # just before: replayed
        store._status_mark = _h(10**6)  # the watermark far ahead: the slow path, replaying every event
        store._then_memo = None
        assert dict(store.frame("u", as_of=_h(10**5)).select("id", "status").iter_rows()) == today


def test_a_history_written_later_with_its_own_times_is_there_at_those_times() -> None:
    """A conversation loaded today with its own created_at: there at those times, as written (a
    merge is the one memory whose created_at is not when it was written)."""
    with mk.MemoryStore() as store:
        rows = pl.DataFrame(
            {"content": ["we met in Lisbon", "we moved to Oslo"], "created_at": [_h(0), _h(5)]}
        )
        store.add_many(rows, namespace="u", now=_h(100))
        assert _found(store, "Lisbon Oslo", _h(3)) == ["we met in Lisbon"]
        assert set(_shown(store, _h(6))) == {"we met in Lisbon", "we moved to Oslo"}


def test_a_past_read_inside_a_rolled_back_transaction_leaves_nothing_behind(backend: str) -> None:
    """Inside a transaction a past search agrees with frame(as_of=) (the index still holds the
    statuses from before it, the table the transaction's), and what it saw is not remembered after a
    rollback: neither a status the rollback undid nor a memory it brought back."""
    with mk.MemoryStore() as s:
        m = s.add("the deploy token lives in the vault", namespace="u", now=_h(0))
        s.learn_lesson(m.id, reason="confirmed wrong", namespace="u", now=_h(10))  # quarantined at h10
        late = s.add("the deploy vault moved at hour 25", namespace="u", now=_h(25))
        before = (_found(s, "deploy vault", _h(5)), _shown(s, _h(5)))
        assert before == ([], {m.content: "quarantined"})  # held today: held at every t (it reaches back)
        with pytest.raises(RuntimeError), s.transaction():
            s.approve(m.id, namespace="u", now=_h(30))
            s.delete(late.id, namespace="u", now=_h(31))
            released = ([m.content], {m.content: "active"})  # approved: its history replays, active at h5
            assert (_found(s, "deploy vault", _h(5)), _shown(s, _h(5))) == released
            raise RuntimeError("undo")
        assert (_found(s, "deploy vault", _h(5)), _shown(s, _h(5))) == before
        assert _shown(s, _h(26)) == {m.content: "quarantined", late.content: "active"}
