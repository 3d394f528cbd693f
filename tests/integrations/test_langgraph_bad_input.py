"""memkit.integrations.langgraph: every argument of a batch is checked before its first put runs, so
a bad search, filter or ttl fails with a ValidationError and stores nothing (an input audit)."""

from __future__ import annotations

import pytest
from conftest import NOW, assert_unchanged, snapshot

pytest.importorskip("langgraph")

from langgraph.store.base import PutOp, SearchOp  # noqa: E402

import memkit as mk  # noqa: E402
from memkit.integrations.langgraph import MemkitStore  # noqa: E402

PUT = PutOp(("users", "u1"), "pref", {"text": "likes jazz", "n": 3})


@pytest.mark.parametrize(
    ("op", "field"),
    [
        (SearchOp(("users",), query="jazz\x00"), "query"),
        (SearchOp(("users",), query="jazz \ud800"), "query"),
        (SearchOp(("users",), query="x" * 100_001), "query"),
        (SearchOp(("users",), query="jazz", filter={"n": object()}), "filter"),
        (SearchOp(("users",), query="jazz", filter={"n": b"3"}), "filter"),
        (SearchOp(("users",), query="jazz", filter={"n": {"$gt": float("nan")}}), "filter"),
        (PutOp(("users", "u1"), "later", {"text": "x"}, ttl=1e10), "ttl"),
        (PutOp(("users", "u1"), "later", {"text": "x"}, ttl=float("inf")), "ttl"),
    ],
)
def test_a_bad_op_after_a_put_stores_nothing(op: object, field: str) -> None:
    s = mk.MemoryStore()
    before = snapshot(s)
    with pytest.raises(mk.ValidationError) as e:
        MemkitStore(s, now=NOW).batch([PUT, op])
    assert e.value.field == field
    assert_unchanged(s, before)


@pytest.mark.parametrize(("kw", "field"), [({"min_strength": float("nan")}, "min_strength"),
                                           ({"min_strength": 2}, "min_strength"),
                                           ({"weights": "x"}, "weights"),
                                           ({"requester": "sk-abcdefghijklmnopqrstuvwx"}, "requester"),
                                           ({"requester": " padded "}, "requester"),
                                           ({"requester": 5}, "requester")])  # fmt: skip
def test_a_bad_option_fails_at_construction(kw: dict, field: str) -> None:
    with pytest.raises(mk.ValidationError) as e:
        MemkitStore(mk.MemoryStore(), now=NOW, **kw)
    assert e.value.field == field


def test_json_operands_of_every_kind_still_filter() -> None:
    import numpy as np

    lg = MemkitStore(mk.MemoryStore(), now=NOW)
    lg.batch([PUT])
    for flt in ({"n": 3}, {"n": np.int64(3)}, {"n": {"$gte": 2.5}}, {"text": "likes jazz"}):
        assert [i.key for i in lg.search(("users",), query="jazz", filter=flt)] == ["pref"]
    assert lg.search(("users",), query="jazz", filter={"n": {"$gt": 3}}) == []
