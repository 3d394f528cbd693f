"""memkit/store/gate.py + index_columns.py + quantized.py: inside ``transaction()``, what it erased is
gone from every read of the index (search, neighbours), with the scores the search gives after the
commit, in both indexes and on both backends; a rollback brings it back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import memkit as mk

NOW = datetime(2026, 1, 1, tzinfo=UTC)
H = timedelta(hours=1)
INDEXES = ["exact", pytest.param("int8", marks=pytest.mark.skipif(
    not __import__("importlib").util.find_spec("numba"), reason="the int8 index needs numba"))]  # fmt: skip


def _ranked(store: mk.MemoryStore, query: str) -> list[tuple[str, float]]:
    hits = store.search(query, namespace="u", k=5, now=NOW + H, reinforce=False)
    return [(i, round(s, 9)) for i, s in zip(hits["id"], hits["score"], strict=True)]


def _filled(index: str) -> tuple[mk.MemoryStore, list[str]]:
    store = mk.MemoryStore(index=index)
    ids = [store.add(f"memory about topic {i} apples", namespace="u", now=NOW).id for i in range(40)]
    return store, ids


@pytest.mark.parametrize("index", INDEXES)
def test_a_search_inside_the_transaction_ranks_as_after_its_commit(index: str, backend: str) -> None:
    store, ids = _filled(index)
    with store:
        with store.transaction():
            store.delete(ids[0], namespace="u")
            store.delete(ids[7], namespace="u")
            inside = _ranked(store, "topic 0 apples")
        after = _ranked(store, "topic 0 apples")
    assert not {ids[0], ids[7]} & {i for i, _ in inside}  # the erased text is not returned
    assert inside == after  # nor does it lend its neighbours a score


@pytest.mark.parametrize("index", INDEXES)
def test_a_hits_erased_neighbour_gives_way_to_the_next_one_inside_the_transaction(
    index: str, backend: str
) -> None:
    """Neighbour expansion: the row after an erased neighbour becomes the hit's neighbour, as after
    the commit (the hidden row was kept as a neighbour that lends nothing: helper 68)."""
    texts = ["the user adores kangaroo sandwiches"] + [f"unrelated filler note number {i}" for i in range(20)]
    with mk.MemoryStore(index=index) as store:
        ids = [store.add(t, namespace="u", now=NOW + i * H / 60).id for i, t in enumerate(texts)]
        with store.transaction():
            store.delete(ids[1], namespace="u")
            inside = _ranked(store, "kangaroo sandwiches")
            nb = store.neighbours([ids[0]], namespace="u", now=NOW + H).to_dicts()[0]
        assert inside == _ranked(store, "kangaroo sandwiches") and inside[1][0] == ids[2]
        assert nb["next"] == ids[2] == store.neighbours([ids[0]], namespace="u", now=NOW + H)["next"][0]


def test_both_indexes_agree_inside_the_transaction() -> None:
    pytest.importorskip("numba")
    ranked = []
    for index in ("exact", "int8"):
        store, ids = _filled(index)
        with store, store.transaction():
            store.delete(ids[0], namespace="u")
            ranked.append([(ids.index(i), s) for i, s in _ranked(store, "topic 0 apples")])
    assert ranked[0] == ranked[1]


@pytest.mark.parametrize("index", INDEXES)
def test_a_rollback_brings_the_erased_memory_back(index: str, backend: str) -> None:
    store, ids = _filled(index)
    with store:
        before = _ranked(store, "topic 0 apples")
        with pytest.raises(RuntimeError), store.transaction():
            store.delete(ids[0], namespace="u")
            assert ids[0] not in {i for i, _ in _ranked(store, "topic 0 apples")}
            raise RuntimeError("undo")
        assert _ranked(store, "topic 0 apples") == before
        assert store.get(ids[0], namespace="u").content == "memory about topic 0 apples"


def test_neighbours_inside_the_transaction_name_nothing_it_erased(backend: str) -> None:
    with mk.MemoryStore() as store:
        ids = [store.add(f"turn {i} of the talk", namespace="u", now=NOW + i * H / 60).id for i in range(5)]
        with store.transaction():
            store.delete(ids[2], namespace="u")
            nb = store.neighbours([ids[1], ids[2], ids[3]], namespace="u", now=NOW + H)
        rows = {r["id"]: r for r in nb.to_dicts()}
        assert ids[2] not in {v for r in rows.values() for v in r.values() if v != r["id"]}
        assert all(v is None for c, v in rows[ids[2]].items() if c != "id")
        assert rows[ids[1]]["prev"] == ids[0]  # what is not erased is named as before


def test_a_merge_holding_an_erased_member_is_not_returned_inside_the_transaction(backend: str) -> None:
    mark = "袋鼠路四十二号独一无二"
    with mk.MemoryStore() as store:
        store.add("用户喜欢美式咖啡", namespace="u", now=NOW)
        b = store.add(f"用户喜欢美式咖啡。{mark}", namespace="u", now=NOW + H)
        store.consolidate("u", threshold=0.5, now=NOW + 2 * H)
        kw = mk.Weights(keyword=1.0)
        with store.transaction():
            store.delete(b.id, namespace="u")
            hits = store.search(mark, namespace="u", k=10, now=NOW + 3 * H, weights=kw, reinforce=False)
            assert mark not in "".join(hits["content"])  # the index's copy of the merge held it
        hits = store.search("美式咖啡", namespace="u", k=10, now=NOW + 3 * H, weights=kw, reinforce=False)
        assert "用户喜欢美式咖啡" in hits["content"].to_list()  # the re-derived merge, after the commit
