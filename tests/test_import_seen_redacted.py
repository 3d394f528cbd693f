"""A re-import writes nothing again, also for a record the guard redacted, and add_frame takes a
frame without created_at or key into a namespace that holds memories (review h134 items 3, 4)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import polars as pl
import pytest

import memkit as mk
from memkit.portable.adapters import add_frame, import_file


@pytest.mark.parametrize(
    "extra",
    [{}, {"key": [None]}, {"key": ["note.a"]}, {"created_at": [None]}, {"key": [None], "created_at": [None]}],
)
def test_add_frame_without_a_time_into_a_namespace_with_memories(now: datetime, extra: dict) -> None:
    s = mk.MemoryStore()
    s.add("hello world", namespace="u", key=extra.get("key", [None])[0], now=now)
    frame = pl.DataFrame({"namespace": ["u"], "content": ["hello world"], **extra})
    assert add_frame(s, frame, now=now)["action"].to_list() == ["present"]
    other = pl.DataFrame({"namespace": ["u"], "content": ["something else"], **extra})
    assert add_frame(s, other, now=now)["action"].to_list() == ["added"]


def test_re_import_of_redacted_records_writes_nothing(tmp_path, now: datetime) -> None:
    chat = [{"role": "user", "content": "My email is bob@example.com and I like tea"}]
    mem0 = {"results": [{"id": "d", "memory": "Card 4111 1111 1111 1111", "user_id": "u"},
                        {"id": "e", "memory": "Mail me at ann@example.org", "user_id": "u",
                         "created_at": "2025-12-01T10:00:00Z"}]}  # fmt: skip
    (tmp_path / "chat.json").write_text(json.dumps(chat))
    (tmp_path / "m.json").write_text(json.dumps(mem0))
    for name, source, ns in (("chat.json", "chat", "u"), ("m.json", "mem0", None)):
        s = mk.MemoryStore()
        first = import_file(s, tmp_path / name, source, namespace=ns, now=now)
        assert set(first["action"]) == {"added"}
        again = import_file(s, tmp_path / name, source, namespace=ns, now=now + timedelta(hours=1))
        assert set(again["action"]) == {"present"}, source
        assert s.frame().height == first.height and "@" not in "".join(s.frame()["content"])


def test_another_writers_same_text_is_not_this_record() -> None:
    # alice's import is hers even when bob holds the same text publicly; run again, it is present
    store = mk.MemoryStore()
    store.add("I like green tea", namespace="n", requester="bob", access="public")
    frame = pl.DataFrame({"content": ["I like green tea"], "namespace": ["n"]})
    assert add_frame(store, frame, requester="alice")["action"].to_list() == ["added"]
    assert add_frame(store, frame, requester="alice")["action"].to_list() == ["present"]
    assert sorted(store.frame("n")["owner"].to_list()) == ["alice", "bob"]


def test_a_re_import_reads_only_the_memories_its_records_may_match(now: datetime, monkeypatch) -> None:
    """h142: ``present`` read the whole namespace (every memory, every column) to match a few records;
    it reads only the memories holding a record's text, as given or as the guard stores it."""
    store = mk.MemoryStore()
    store.add_many(pl.DataFrame({"content": [f"note {i}" for i in range(50)]}), namespace="u", now=now)
    store.add("Mail me at [EMAIL]", namespace="u", now=now)  # the guard's copy of an earlier import
    frame = pl.DataFrame({"namespace": ["u"] * 3, "content": ["note 7", "Mail me at ann@example.org", "new"]})
    read, frame_of = [], store.frame
    monkeypatch.setattr(store, "frame", lambda *a, **k: read.append(frame_of(*a, **k)) or read[-1])
    assert add_frame(store, frame, now=now)["action"].to_list() == ["present", "present", "added"]
    assert sorted(c for f in read for c in f["content"]) == ["Mail me at [EMAIL]", "note 7"]
