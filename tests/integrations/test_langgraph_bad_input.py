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


BAD_PATHS = ["a[", "a[x]", "a]", "a.{b,}", "a.{b}.c", "{}", "", ".", "items.0.text", " a.b", "a.{b,c}.d",
             "a[1.5]", "{a[0]}"]  # fmt: skip


@pytest.mark.parametrize("path", BAD_PATHS)
def test_a_malformed_index_path_is_refused_and_stores_nothing(path: str) -> None:
    """h132 #2: LangGraph reads ``"a["`` or ``"a..b"`` as some other path, which finds no text: the
    put was stored with the value's JSON as its text, silently."""
    s = mk.MemoryStore()
    before = snapshot(s)
    with pytest.raises(mk.ValidationError, match="not a value path") as e:
        MemkitStore(s, now=NOW).batch([PUT, PutOp(("users", "u1"), "k", {"a": {"b": "x"}}, index=[path])])
    assert e.value.field == "index"
    assert_unchanged(s, before)
    with pytest.raises(mk.ValidationError) as e:
        MemkitStore(s, now=NOW, fields=["text", path])
    assert e.value.field == "fields"


def test_every_path_form_langgraph_reads_is_taken() -> None:
    import polars as pl

    lg = MemkitStore(mk.MemoryStore(), now=NOW)
    value = {"a": {"b": "tea"}, "tags": ["jazz", "blues"], "items": [{"text": "milk"}],
             "m": {"x": "1", "y": "2"}}  # fmt: skip
    paths = {"$": None, "a.b": "tea", "tags[*]": "jazz\nblues", "tags[-1]": "blues", "items[0].text": "milk",
             "*.b": "tea", "m.{x,y}": "1\n2", "{a.b, tags}": None, "a..b": "tea", ".a.b": "tea",
             "a.b.": "tea", "m{x,y}": "1\n2", "items[+0].text": "milk", "items[ 0 ].text": "milk",
             "items[0]text": "milk", "items[*]{text}": "milk"}  # fmt: skip
    for path, text in paths.items():
        lg.put(("users",), "k", value, index=[path])
        if text is not None:
            memory_id = lg.get(("users",), "k").memory_id
            assert lg.store.frame().filter(pl.col("id") == memory_id)["content"].item() == text
