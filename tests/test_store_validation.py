"""Bad input raises the right MemkitError subclass, naming the field, and writes nothing."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import polars as pl
import pytest
from conftest import NOW, assert_unchanged, snapshot

import memkit as mk

NAIVE = datetime(2026, 1, 1)
H = timedelta(hours=1)
EVIL = "x'); DROP TABLE memories; --"


@pytest.fixture
def seeded(store: mk.MemoryStore, now: datetime) -> mk.MemoryStore:
    """A store with a little in it, so that 'unchanged' compares real rows and events."""
    store.add("用户住在杭州滨江区", namespace="u", key="addr", requester="alice", tags=["home"], now=now)
    store.add("I like oolong tea", namespace="u", requester="alice", now=now)
    return store


BAD_ADD = [
    # importance
    ({"importance": float("nan")}, "importance"),
    ({"importance": float("inf")}, "importance"),
    ({"importance": -0.01}, "importance"),
    ({"importance": 1.01}, "importance"),
    ({"importance": True}, "importance"),
    ({"importance": "0.5"}, "importance"),
    # half-life
    ({"half_life_hours": 0.0}, "half_life_hours"),
    ({"half_life_hours": -2.0}, "half_life_hours"),
    ({"half_life_hours": float("inf")}, "half_life_hours"),
    ({"half_life_hours": float("nan")}, "half_life_hours"),
    # enums
    ({"layer": "mid_term"}, "layer"),
    ({"layer": ""}, "layer"),
    ({"kind": "opinion"}, "kind"),
    ({"kind": "Fact"}, "kind"),
    ({"access": "secret"}, "access"),
    ({"source": "robot"}, "source"),
    ({"conflict_policy": "last_write_wins"}, "conflict_policy"),
    # namespace
    ({"namespace": ""}, "namespace"),
    ({"namespace": " u"}, "namespace"),
    ({"namespace": "u "}, "namespace"),
    ({"namespace": "u\n"}, "namespace"),
    ({"namespace": "a\x00b"}, "namespace"),
    ({"namespace": "a\tb"}, "namespace"),
    ({"namespace": "a\u200bb"}, "namespace"),
    ({"namespace": "x" * 300}, "namespace"),
    ({"namespace": 7}, "namespace"),
    ({"namespace": None}, "namespace"),
    # key
    ({"key": ""}, "key"),
    ({"key": " addr"}, "key"),
    ({"key": "addr\t"}, "key"),
    ({"key": "ad\x07dr"}, "key"),
    ({"key": 1}, "key"),
    # content
    ({"content": b"bytes"}, "content"),
    ({"content": ""}, "content"),
    ({"content": "   \n"}, "content"),
    ({"content": "bad \ud800 surrogate"}, "content"),
    ({"content": "nul\x00char"}, "content"),
    ({"content": 42}, "content"),
    ({"content": None}, "content"),
    ({"content": "x" * 100_001}, "content"),
    # times
    ({"now": NAIVE}, "now"),
    ({"now": "2026-01-01"}, "now"),
    ({"valid_from": NAIVE}, "valid_from"),
    ({"valid_until": NAIVE}, "valid_until"),
    ({"created_at": NAIVE}, "created_at"),
    ({"created_at": "2026-01-01T00:00:00Z"}, "created_at"),
    ({"valid_from": NOW + H, "valid_until": NOW + H}, "valid_until"),
    ({"valid_from": NOW + H, "valid_until": NOW}, "valid_until"),
    # value
    ({"value": {"a": float("nan")}}, "value"),
    ({"value": float("inf")}, "value"),
    ({"value": {1, 2}}, "value"),
    ({"value": object()}, "value"),
    ({"value": b"raw"}, "value"),
    # tags
    ({"tags": "home"}, "tags"),
    ({"tags": b"home"}, "tags"),
    ({"tags": 5}, "tags"),
    ({"tags": [1]}, "tags"),
    ({"tags": [" home"]}, "tags"),
    ({"tags": ["ok", ""]}, "tags"),
    ({"tags": ["a\nb"]}, "tags"),
    # others
    ({"protected": "yes"}, "protected"),
    ({"protected": 1}, "protected"),
    ({"owner": " mod"}, "owner"),
    ({"requester": ""}, "requester"),
    ({"requester": 3}, "requester"),
]


@pytest.mark.parametrize("kwargs, field", BAD_ADD, ids=[f"{f}-{i}" for i, (_, f) in enumerate(BAD_ADD)])
def test_bad_add_raises_validation_error_and_writes_nothing(seeded: mk.MemoryStore, kwargs, field) -> None:
    call = {"content": "新的记忆", "namespace": "u", "key": "addr", "now": NOW, **kwargs}
    content = call.pop("content")
    before = snapshot(seeded)
    with pytest.raises(mk.ValidationError) as ei:
        seeded.add(content, **call)
    assert ei.value.field == field
    assert str(ei.value).startswith(f"{field}: ")
    assert isinstance(ei.value, ValueError) and isinstance(ei.value, mk.MemkitError)
    assert_unchanged(seeded, before)


@pytest.mark.parametrize("field", ["access", "kind", "source"])
def test_empty_string_enum_rejected(store: mk.MemoryStore, field: str) -> None:
    with pytest.raises(mk.ValidationError) as ei:
        store.add("x", namespace="u", now=NOW, **{field: ""})
    assert ei.value.field == field


@pytest.mark.parametrize(
    "text", [EVIL, "Robert'); DROP TABLE events;--", "% _ \\ ' \" ;", "SELECT * FROM meta"]
)
def test_sql_text_is_stored_verbatim(store: mk.MemoryStore, text: str) -> None:
    store.add("innocent", namespace="other", now=NOW)
    m = store.add(text, namespace=text, key=text, tags=[text], value={text: text}, owner=text, now=NOW)
    got = store.get(m.id)
    assert (got.content, got.namespace, got.key, got.tags, got.value, got.owner) == (
        text, text, text, (text,), {text: text}, text,
    )  # fmt: skip
    assert store.count() == 2 and store.count(text) == 1
    assert store.read(text, namespace=text, now=NOW).id == m.id
    assert store.versions(text, namespace=text)["content"].to_list() == [text]
    assert store.search(text, namespace=text, tags=[text], now=NOW)["id"].to_list() == [m.id]
    assert store.frame(text)["content"].to_list() == [text]
    assert store.audit(text)["memory_id"].drop_nulls().unique().to_list() == [m.id]


def test_sql_like_namespace_matches_nothing_else(store: mk.MemoryStore) -> None:
    store.add("tea", namespace="alice", now=NOW)
    for ns in ("' OR '1'='1", "%", "alice' --", "ALICE"):
        assert store.search("tea", namespace=ns, now=NOW).height == 0
        assert store.frame(ns).height == 0 and store.count(ns) == 0


BAD_SEARCH = [
    ({"k": 0}, "k"),
    ({"k": -1}, "k"),
    ({"k": 2.5}, "k"),
    ({"k": True}, "k"),
    ({"k": "5"}, "k"),
    ({"k": 10_001}, "k"),
    ({"weights": {"similarity": 1.0}}, "weights"),
    ({"weights": (0.6, 0.3, 0.1)}, "weights"),
    ({"weights": "default"}, "weights"),  # None is the store's own weights (settings=)
    ({"min_strength": float("nan")}, "min_strength"),
    ({"min_strength": 1.5}, "min_strength"),
    ({"min_strength": -0.1}, "min_strength"),
    ({"min_strength": True}, "min_strength"),
    ({"layer": "mid_term"}, "layer"),
    ({"layer": ["long_term", "x"]}, "layer"),
    ({"kind": "opinion"}, "kind"),
    ({"tags": [" home"]}, "tags"),
    ({"tags": [3]}, "tags"),
    ({"now": NAIVE}, "now"),
    ({"namespace": ""}, "namespace"),
    ({"namespace": "u\n"}, "namespace"),
    ({"requester": " alice"}, "requester"),
    ({"query": ""}, "query"),
    ({"query": b"tea"}, "query"),
    ({"query": "\ud800"}, "query"),
]


@pytest.mark.parametrize("kwargs, field", BAD_SEARCH, ids=[f"{f}-{i}" for i, (_, f) in enumerate(BAD_SEARCH)])
def test_bad_search_raises_and_logs_nothing(seeded: mk.MemoryStore, kwargs, field) -> None:
    call = {"query": "tea", "namespace": "u", "now": NOW, **kwargs}
    query = call.pop("query")
    before = snapshot(seeded)
    with pytest.raises(mk.ValidationError) as ei:
        seeded.search(query, **call)
    assert ei.value.field == field
    assert_unchanged(seeded, before)  # no search event, no reinforcement


def test_bad_ids_and_keys_on_reads(seeded: mk.MemoryStore) -> None:
    before = snapshot(seeded)
    for bad in ("", " x", 5, None):
        with pytest.raises(mk.ValidationError, match="memory_id"):
            seeded.get(bad, now=NOW)  # type: ignore[arg-type]
        with pytest.raises(mk.ValidationError, match="memory_id"):
            seeded.delete(bad, now=NOW)  # type: ignore[arg-type]
        with pytest.raises(mk.ValidationError, match="key"):
            seeded.read(bad, namespace="u", now=NOW)  # type: ignore[arg-type]
        with pytest.raises(mk.ValidationError, match="keep"):
            seeded.resolve("addr", namespace="u", keep=bad, now=NOW)  # type: ignore[arg-type]
    with pytest.raises(mk.ValidationError, match="now"):
        seeded.read("addr", namespace="u", now=NAIVE)
    with pytest.raises(mk.ValidationError, match="as_of"):
        seeded.frame("u", as_of=NAIVE)
    with pytest.raises(mk.ValidationError, match="namespace"):
        seeded.versions("addr", namespace=" u")
    assert_unchanged(seeded, before)


def test_delete_and_resolve_of_unknown_change_nothing(seeded: mk.MemoryStore) -> None:
    before = snapshot(seeded)
    with pytest.raises(mk.NotFound):
        seeded.delete("0000000000000000", now=NOW)
    with pytest.raises(mk.NotFound):
        seeded.resolve("addr", namespace="u", keep="0000000000000000", now=NOW)
    assert_unchanged(seeded, before)


# ------------------------------------------------------------------------------------------ add_many


BAD_FRAMES = [
    (pl.DataFrame({"content": ["a"], "colour": ["red"]}), "colour"),
    (pl.DataFrame({"content": ["a"], "id": ["abc"]}), "id"),
    (pl.DataFrame({"content": ["a"], "status": ["active"]}), "status"),
    (pl.DataFrame({"content": ["a"], "namespace": ["other"]}), "namespace"),
    (pl.DataFrame({"content": ["a", "b", "c"], "importance": [0.5, 1.5, 0.2]}), "importance[row 1]"),
    (pl.DataFrame({"content": ["a", "b", "c"], "importance": [0.5, float("nan"), 0.2]}), "importance[row 1]"),
    (pl.DataFrame({"content": ["a", "", "c"]}), "content[row 1]"),
    (pl.DataFrame({"content": ["a", "b"], "layer": ["long_term", "mid_term"]}), "layer[row 1]"),
    (pl.DataFrame({"content": ["a", "b"], "tags": [["ok"], [" bad"]]}), "tags[row 1]"),
    (pl.DataFrame({"content": ["a", "b"], "key": ["k1", " k2"]}), "key[row 1]"),
    (
        pl.DataFrame({"content": ["a", "b"], "created_by": [None, "someone-else"]}),
        "created_by[row 1]",
    ),  # forged
    (pl.DataFrame({"content": ["a"], "created_at": [NAIVE]}), "created_at"),
    (
        pl.DataFrame({"content": ["a", "b"], "valid_from": [NOW, NOW], "valid_until": [NOW + H, NOW]}),
        "valid_until[row 1]",
    ),  # fmt: skip
    (
        pl.DataFrame(
            {"content": ["a", "b"], "created_at": [NOW - H] * 2, "last_access_at": [NOW, NOW - 2 * H]}
        ),
        "last_access_at[row 1]",
    ),  # recalled before it was written
    (pl.DataFrame({"content": ["a"], "last_access_at": [NOW - H]}), "last_access_at"),  # created_at = now
    (pl.DataFrame({"content": ["a"], "embedding": [[1.0] * 7]}), "embedding"),
    (pl.DataFrame({"content": ["a", "b"], "embedding": [[1.0] * 384, None]}), "embedding"),
    (pl.DataFrame({"content": ["a"], "embedding": [[float("nan")] * 384]}), "embedding"),
    (pl.DataFrame({"content": []}, schema={"content": pl.String}), "frame"),
    (pl.DataFrame({"importance": [0.5]}), "content"),
]


@pytest.mark.parametrize("frame, field", BAD_FRAMES, ids=[f for _, f in BAD_FRAMES])
def test_bad_add_many_writes_nothing(seeded: mk.MemoryStore, frame: pl.DataFrame, field: str) -> None:
    before = snapshot(seeded)
    with pytest.raises(mk.ValidationError) as ei:
        seeded.add_many(frame, namespace="u", requester="importer", now=NOW)
    assert ei.value.field == field
    assert_unchanged(seeded, before)


@pytest.mark.parametrize("frame", [{"content": ["a"]}, [{"content": "a"}], None])
def test_add_many_needs_a_polars_frame(seeded: mk.MemoryStore, frame) -> None:
    before = snapshot(seeded)
    with pytest.raises(mk.ValidationError) as ei:
        seeded.add_many(frame, namespace="u", now=NOW)  # type: ignore[arg-type]
    assert ei.value.field == "frame"
    assert_unchanged(seeded, before)


def test_add_many_bad_namespace_and_time(seeded: mk.MemoryStore) -> None:
    before = snapshot(seeded)
    df = pl.DataFrame({"content": ["a"]})
    with pytest.raises(mk.ValidationError, match="namespace"):
        seeded.add_many(df, namespace=" u", now=NOW)
    with pytest.raises(mk.ValidationError, match="now"):
        seeded.add_many(df, namespace="u", now=NAIVE)
    assert_unchanged(seeded, before)


def test_add_many_same_key_in_other_namespace_is_fine(seeded: mk.MemoryStore) -> None:
    out = seeded.add_many(pl.DataFrame({"content": ["a"], "key": ["addr"]}), namespace="v", now=NOW)
    assert out.height == 1 and seeded.count("v") == 1


# ------------------------------------------------------------------------------------------ constructor


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"path": ""}, "path"),
        ({"path": 3}, "path"),
        ({"conflict_policy": "newest"}, "conflict_policy"),
        ({"decay": {"min_strength": 0.1}}, "decay"),
        ({"keyword": mk.Weights()}, "keyword"),
        ({"embedder": "hash"}, "embedder"),
    ],
)
def test_bad_store_arguments(kwargs: dict, field: str) -> None:
    with pytest.raises(mk.ValidationError) as ei:
        mk.MemoryStore(**kwargs)
    assert ei.value.field == field


def test_numpy_scalars_are_accepted_as_numbers(store: mk.MemoryStore) -> None:
    m = store.add("x", namespace="u", importance=np.float64(0.7), half_life_hours=np.float32(3.0), now=NOW)
    assert m.importance == pytest.approx(0.7) and m.half_life_hours == 3.0


# ------------------------------------------------------------------------------------------ regressions


@pytest.mark.parametrize("value", [{"a": "\ud800"}, ["ok", "\udfff"], "\ud800"])
def test_value_with_lone_surrogate_rejected(seeded: mk.MemoryStore, value) -> None:
    before = snapshot(seeded)
    try:
        with pytest.raises(mk.ValidationError) as ei:
            seeded.add("x", namespace="u", value=value, now=NOW)
        assert ei.value.field == "value"
    finally:
        assert_unchanged(seeded, before)


def test_add_many_fractional_access_count_rejected(seeded: mk.MemoryStore) -> None:
    before = snapshot(seeded)
    try:
        with pytest.raises(mk.ValidationError) as ei:
            seeded.add_many(pl.DataFrame({"content": ["a"], "access_count": [1.5]}), namespace="u", now=NOW)
        assert ei.value.field == "access_count"
    finally:
        assert_unchanged(seeded, before)


class _Embedder:
    def __init__(self, name, dim) -> None:
        self.name, self.dim = name, dim

    def embed(self, texts):
        return np.ones((len(texts), 8), dtype=np.float32)


@pytest.mark.parametrize(
    "name, dim", [("e", 0), ("e", -3), ("e", "8"), ("e", 8.5), ("e", True), (None, 8), ("", 8)]
)
def test_custom_embedder_dim_and_name_validated(name, dim) -> None:
    with pytest.raises(mk.ValidationError) as ei:
        mk.MemoryStore(embedder=_Embedder(name, dim))
    assert ei.value.field.startswith("embedder")


def test_directory_path_raises_memkit_error(tmp_path) -> None:
    with pytest.raises(mk.MemkitError):
        mk.MemoryStore(str(tmp_path))
