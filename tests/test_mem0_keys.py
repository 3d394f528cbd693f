"""mem0 imports carry the user's fact and preference keys (helper 152): a user-scoped mem0 memory written
without a subject ("Lives in Boston", 喜欢喝茶) is the user's own statement, read in the first person and
keyed as the agent keys it; a text with its own subject, or a record scoped only to an agent or a run,
gets none. Keyed rows supersede in created_at order with the chat import's protections, and a re-import
(of the same file, or of a file an older memkit imported unkeyed) writes nothing."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from memkit.commands import admit
from memkit.portable.adapters import add_frame, import_file, mem0_frame
from memkit.portable.mem0_keys import first_person_mem0

# (mem0's text, the user's statement in the first person): keyed as the agent keys the latter
KEYED = [
    ("Lives in Boston", "I live in Boston"),
    ("Name is Alex", "My name is Alex"),
    ("Likes tea", "I like tea"),
    ("Prefers window seats on flights", "I prefer window seats on flights"),
    ("Moved to Denver", "I moved to Denver"),
    ("Works at Google", "I work at Google"),
    ("Is a nurse", "I am a nurse"),
    ("Currently lives in Seattle", "I currently live in Seattle"),
    ("Studies at MIT", "I study at MIT"),
    ("Goes by Sam", "I go by Sam"),
    ("Wife's name is Sarah", "My wife's name is Sarah"),
    ("Favorite color is blue", "My favorite color is blue"),
    ("- Lives in Berlin", "- I live in Berlin"),
    ("住在杭州", "我住在杭州"),
    ("喜欢喝茶", "我喜欢喝茶"),
    ("叫李明", "我叫李明"),
    ("在腾讯工作", "我在腾讯工作"),
    ("名字是王芳", "我的名字是王芳"),
    ("现在住在深圳", "我现在住在深圳"),
    ("User lives in Paris", "I live in Paris"),
]
# their own subject, or not the user's current fact: no key
UNKEYED = [
    "Her sister lives in Paris",
    "The user's mother lives in Chicago",
    "Alex's wife is a doctor",
    "Sister lives in Paris",
    "Husband likes tea",
    "Sarah lives in Boston",
    "Used to live in Boston",
    "Wants to move to Denver",
    "Lives in Boston and works at Google",
    "Has a sister who lives in Paris",
    "Home is where the heart is",
    "Users live in Rome",
    "她姐姐住在巴黎",
    "用户的妈妈住在杭州",
    "妈妈喜欢喝茶",
    "以前住在北京",
    "叫了外卖",
    "爱人在医院工作",
]


def test_a_user_scoped_memory_gets_the_agents_key() -> None:
    frame = mem0_frame([{"memory": t, "user_id": "u"} for t, _ in KEYED])
    want = [admit(me).key for _, me in KEYED]
    assert None not in want and frame["key"].to_list() == want
    read = first_person_mem0(pl.Series(["Lives in Boston", "Is a nurse", "Name is Alex", "叫李明"]))
    assert read.to_list() == ["I live in Boston", "I am a nurse", "my name is Alex", "我叫李明"]
    # a keyed preference is a preference, as the agent writes it; the rest stay facts
    kinds = dict(zip(frame["content"], frame["kind"], strict=True))
    assert kinds["Likes tea"] == "preference" and kinds["Lives in Boston"] == "fact"


@pytest.mark.parametrize("text", UNKEYED)
def test_a_memory_with_its_own_subject_gets_none(text: str) -> None:
    assert mem0_frame([{"memory": text, "user_id": "u"}])["key"].to_list() == [None]


def test_a_memory_scoped_to_an_agent_or_a_run_gets_none() -> None:
    records = [
        {"memory": "Lives in Boston", "agent_id": "bot"},
        {"memory": "Likes tea", "run_id": "r1"},
        # a user's and an agent's: mem0's agent prompt may have written it about the assistant
        {"memory": "Lives in Denver", "agent_id": "bot", "user_id": "u"},
        {"memory": "Lives in Denver", "user_id": "u"},
    ]
    assert mem0_frame(records, namespace="ns")["key"].to_list() == [None, None, None, "fact.residence"]


def _file(tmp_path: Path, records: list[dict], name: str = "mem0.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps({"results": records}, ensure_ascii=False), encoding="utf-8")
    return p


def _at(now: datetime, days: int) -> str:
    return (now - timedelta(days=days)).isoformat()


def test_keyed_memories_supersede_in_created_at_order(store, tmp_path: Path, now: datetime) -> None:
    """mem0 lists its memories newest first: the older value is superseded, the newest stays, and a
    second import of the file writes nothing."""
    path = _file(tmp_path, [
        {"id": "b", "memory": "Moved to Denver", "user_id": "u", "created_at": _at(now, 1)},
        {"id": "a", "memory": "Lives in Boston", "user_id": "u", "created_at": _at(now, 9)},
        {"id": "c", "memory": "喜欢喝茶", "user_id": "u", "created_at": _at(now, 5)},
    ])  # fmt: skip
    report = import_file(store, path, "mem0", now=now)
    assert report["row"].to_list() == [0, 1, 2] and report["action"].to_list() == ["added"] * 3
    rows = store.frame("u").select("content", "key", "status").sort("content").rows()
    assert rows == [
        ("Lives in Boston", "fact.residence", "superseded"),
        ("Moved to Denver", "fact.residence", "active"),
        ("喜欢喝茶", "preference.drink", "active"),
    ]
    assert store.read("fact.residence", namespace="u", now=now).content == "Moved to Denver"
    again = import_file(store, path, "mem0", now=now + timedelta(hours=1))
    assert again["action"].to_list() == ["present"] * 3 and store.count("u") == 3


def test_another_writers_or_a_newer_value_is_not_replaced(store, tmp_path: Path, now: datetime) -> None:
    """As for a chat: alice's value is not bob's import's to replace, and an old mem0 memory does not
    replace what the user has said since; each is written without the key."""
    store.add("I live in Boston", key="fact.residence", namespace="s", requester="alice", now=now)
    bob = _file(
        tmp_path, [{"memory": "Lives in Denver", "user_id": "s", "created_at": _at(now, -1)}], "bob.json"
    )
    import_file(store, bob, "mem0", requester="bob", now=now + timedelta(days=2))
    store.add("I moved to Austin", key="fact.residence", namespace="u", now=now)
    old = _file(
        tmp_path, [{"memory": "Lives in Boston", "user_id": "u", "created_at": _at(now, 30)}], "old.json"
    )
    import_file(store, old, "mem0", now=now + timedelta(days=2))
    for ns, value, plain in (
        ("s", "I live in Boston", "Lives in Denver"),
        ("u", "I moved to Austin", "Lives in Boston"),
    ):
        held = store.frame(ns).filter(pl.col("status") == "active").select("content", "key").sort("content")
        assert sorted(held.rows()) == sorted([(value, "fact.residence"), (plain, None)])


def test_a_file_an_older_memkit_imported_unkeyed_is_present(store, tmp_path: Path, now: datetime) -> None:
    """An older memkit wrote mem0's memories without keys: importing the file again writes no keyed
    twin beside them (the same text, owner and time is the same record; the held row keeps no key)."""
    records = [
        {"id": "a", "memory": "Lives in Boston", "user_id": "u", "created_at": _at(now, 9)},
        {"id": "b", "memory": "Likes tea", "user_id": "u", "created_at": _at(now, 8)},
        {"id": "c", "memory": "Her sister lives in Paris", "user_id": "u", "created_at": _at(now, 7)},
    ]
    older = mem0_frame({"results": records}).with_columns(key=pl.lit(None, pl.String), kind=pl.lit("fact"))
    add_frame(store, older, now=now)
    report = import_file(store, _file(tmp_path, records), "mem0", now=now + timedelta(hours=1))
    assert report["action"].to_list() == ["present"] * 3
    assert store.count("u") == 3 and store.frame("u")["key"].null_count() == 3


def test_a_key_another_writer_holds_privately_is_dropped_and_audited(store, tmp_path: Path, now: datetime):
    """carol's private value is not dave's to change: his mem0 memory is kept without the key, and the
    refusal is in the audit log, as for a chat's row."""
    store.add(
        "I live in Boston", key="fact.residence", namespace="p", requester="carol", access="private", now=now
    )
    path = _file(tmp_path, [{"memory": "Lives in Denver", "user_id": "p", "created_at": _at(now, -1)}])
    assert (
        import_file(store, path, "mem0", requester="dave", now=now + timedelta(days=2))["action"][0]
        == "added"
    )
    mine = store.frame("p", requester="dave").select("content", "key").rows()
    assert mine == [("Lives in Denver", None)]
    assert store.audit().filter(pl.col("op") == "deny").height == 1


def test_a_memory_mem0_rewrote_later_is_left_unkeyed(store, tmp_path: Path) -> None:
    """mem0 rewrites an updated memory's text and keeps its created_at: keyed by created_at, the
    user's latest statement (Seattle, rewritten in 2025) was superseded by an older one (helper 158)."""
    records = [
        {"id": "a", "memory": "Lives in Seattle", "user_id": "alice",
         "created_at": "2023-01-01T00:00:00Z", "updated_at": "2025-06-01T00:00:00Z"},
        {"id": "b", "memory": "Lives in Denver", "user_id": "alice",
         "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z"},
        {"id": "c", "memory": "Works at Google", "user_id": "alice",
         "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00.300000Z"},
        {"id": "d", "memory": "Likes tea", "user_id": "alice",
         "created_at": "2024-01-01T00:00:00Z", "updated_at": "not a time"},
    ]  # fmt: skip
    assert mem0_frame(records)["key"].to_list() == [None, "fact.residence", "fact.employer", None]
    import_file(store, _file(tmp_path, records), "mem0", requester="alice")
    f = store.frame("alice")
    assert f.filter(pl.col("status") != "active").is_empty()  # the rewritten statement is not superseded
