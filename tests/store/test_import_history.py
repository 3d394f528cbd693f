"""memkit/store/portable.py and memkit/portable: an import restores a file without rewriting the
store's own history — erasure stays final, what the store has superseded stays superseded, and a
file's numbers cannot push a column past what it holds (an adversarial round-trip audit)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from conftest import assert_unchanged, snapshot

import memkit as mk

NOW = datetime(2026, 1, 1, tzinfo=UTC)
H = timedelta(hours=1)
# texts this file merges on purpose differ in fact tokens (memkit.facts): merged by cosine alone
COSINE_ONLY = mk.MergeParams(distinct_facts=False)


def _edit(path: Path, **changes: object) -> None:
    """Every memory line of the export at ``path`` with ``changes`` applied."""
    head, *rows = path.read_text(encoding="utf-8").splitlines()
    rows = [json.dumps({**json.loads(r), **changes}, ensure_ascii=False) for r in rows]
    path.write_text("\n".join([head, *rows]) + "\n", encoding="utf-8")


@pytest.mark.parametrize("on_conflict", ["skip", "overwrite", "new_ids"])
def test_an_erased_memory_never_comes_back_from_a_backup(tmp_path: Path, on_conflict: str) -> None:
    """A backup taken before a delete brings neither the erased memory back nor, through a merge that
    listed it, its text (a later re-derivation would have rebuilt the merge from it)."""
    s = mk.MemoryStore()
    a = s.add("User likes black coffee. User lives in Paris.", namespace="u", now=NOW).id
    b = s.add("User likes black coffee. User owns a cat named Zorglub.", namespace="u", now=NOW + H).id
    c = s.add("User likes black coffee.", namespace="u", now=NOW + 2 * H).id
    merged = s.consolidate("u", now=NOW + 3 * H, threshold=0.6, params=COSINE_ONLY)["merged_id"][0]
    gone = s.add("my old phone pin hint is the cat's birthday", namespace="u", now=NOW + 3 * H).id
    s.export(tmp_path / "backup.jsonl", now=NOW + 4 * H)
    s.delete(b, now=NOW + 5 * H)
    s.delete(gone, now=NOW + 5 * H)
    report = s.import_(tmp_path / "backup.jsonl", on_conflict=on_conflict, now=NOW + 6 * H)
    actions = dict(zip(report["source_id"], report["action"], strict=True))
    assert actions[b] == actions[gone] == "erased"
    if on_conflict == "overwrite":  # the merge's file line holds the erased member's text
        assert actions[merged] == "erased"
    assert not s.frame().filter(pl.col("content").str.contains("Zorglub|pin hint")).height
    s.delete(c, now=NOW + 7 * H)  # the merge is re-derived from the members that remain
    assert "Zorglub" not in s.get(merged, namespace="u").content
    assert a in s.get(merged, namespace="u").merged_from
    hits = s.search("cat Zorglub", namespace="u", now=NOW + 8 * H)
    assert not hits["content"].str.contains("Zorglub").any()


def test_an_overwriting_import_keeps_what_the_store_superseded(tmp_path: Path) -> None:
    """Restoring an older backup over a store that moved on: a merge's members stay retired behind it,
    and an old version of a key stays behind its newer one (no version renumbered, no cycle)."""
    s = mk.MemoryStore()
    v1 = s.add("home address is 1 Elm Street", key="home", namespace="u", requester="ann", now=NOW)
    m1 = s.add("用户喜欢喝美式咖啡，不加糖", namespace="u", now=NOW).id
    m2 = s.add("用户喜欢喝美式咖啡，不加糖。", namespace="u", now=NOW + H).id
    s.export(tmp_path / "old.jsonl", now=NOW + H)
    v2 = s.add("home address is 9 Oak Road", key="home", namespace="u", requester="ann", now=NOW + 2 * H)
    merged = s.consolidate("u", now=NOW + 3 * H)["merged_id"][0]
    report = s.import_(tmp_path / "old.jsonl", on_conflict="overwrite", now=NOW + 4 * H)
    assert set(report["action"]) == {"overwritten"}
    rows = {r["id"]: r for r in s.frame("u").to_dicts()}
    assert [rows[x]["status"] for x in (m1, m2, merged)] == ["superseded", "superseded", "active"]
    assert (rows[v1.id]["status"], rows[v1.id]["version"]) == ("superseded", 1)
    assert rows[v1.id]["supersedes"] is None
    assert (rows[v2.id]["status"], rows[v2.id]["supersedes"]) == ("active", v1.id)
    assert s.read("home", namespace="u", requester="ann", now=NOW + 4 * H).id == v2.id
    assert s.versions("home", namespace="u")["id"].to_list() == [v1.id, v2.id]
    hits = s.search("美式咖啡", namespace="u", now=NOW + 4 * H)["id"].to_list()
    assert merged in hits and m1 not in hits and m2 not in hits


@pytest.mark.parametrize("path_", ["file", "frame"])
def test_an_access_count_at_the_column_limit_saturates(tmp_path: Path, path_: str) -> None:
    """A count at INTEGER's maximum (a file's, a frame's) stays there when reads add to it: the
    store does not fail every later statement, and a file store reopens."""
    db = tmp_path / "m.duckdb"
    with mk.MemoryStore(db) as s:
        if path_ == "file":
            src = mk.MemoryStore()
            src.add("likes green tea", namespace="u", now=NOW)
            src.export(tmp_path / "f.jsonl", now=NOW)
            _edit(tmp_path / "f.jsonl", access_count=2**31 - 1)
            s.import_(tmp_path / "f.jsonl", now=NOW)
        else:
            s.add_many(pl.DataFrame({"content": ["likes green tea"], "access_count": [2**31 - 1]}),
                       namespace="u", now=NOW)  # fmt: skip
        twin = s.add("likes green tea a lot", namespace="u", now=NOW).id
        for i in range(2):
            assert s.search("green tea", namespace="u", k=2, now=NOW + (i + 1) * H).height == 2
        s.consolidate(
            "u", now=NOW + 3 * H, threshold=0.5, params=COSINE_ONLY
        )  # a merge sums its members' counts
        assert s.frame("u")["access_count"].max() == 2**31 - 1
        assert s.add("x", namespace="u", now=NOW + 4 * H).status == "active"
    with mk.MemoryStore(db) as again:
        assert again.frame("u")["access_count"].max() == 2**31 - 1
        assert twin in again.frame("u")["id"].to_list()


@pytest.mark.parametrize(
    ("changes", "field"),
    [({"version": 2**31 - 1}, "version"), ({"last_access_at": "2020-01-01T00:00:00Z"}, "last_access_at")],
)
def test_a_file_number_the_store_cannot_continue_is_refused(
    tmp_path: Path, changes: dict, field: str
) -> None:  # noqa: E501
    """A version the key could not go on from, a last access before the memory existed: a
    FormatError naming line and field, and nothing written."""
    src = mk.MemoryStore()
    src.add("likes tea", key="drink", namespace="u", now=NOW)
    src.export(tmp_path / "f.jsonl", now=NOW)
    _edit(tmp_path / "f.jsonl", **changes)
    s = mk.MemoryStore()
    s.add("something else", namespace="u", now=NOW)
    before = snapshot(s)
    with pytest.raises(mk.FormatError, match=f"line 2: {field}"):
        s.import_(tmp_path / "f.jsonl", now=NOW)
    assert_unchanged(s, before)


def test_an_imported_history_keeps_its_memories_keys(tmp_path: Path) -> None:
    """The file's events name their memory's key as the row holds it, in any script; other text in
    an event's detail is still digested."""
    s = mk.MemoryStore()
    s.add("用户住在杭州", key="用户.地址", namespace="u", now=NOW)
    s.add("likes tea", key="my pref", namespace="u", now=NOW)
    s.export(tmp_path / "f.jsonl", include_events=True, now=NOW)
    lines = (tmp_path / "f.jsonl").read_text(encoding="utf-8").splitlines()
    forged = [json.loads(x) for x in lines]
    for obj in forged:  # a hand-made event naming another key keeps no text
        if obj.get("op") == "add" and obj.get("detail", {}).get("key") == "my pref":
            obj["detail"]["key"] = "Alice lives at 42 Elm Street"
    (tmp_path / "g.jsonl").write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in forged) + "\n")
    d = mk.MemoryStore()
    d.import_(tmp_path / "f.jsonl", now=NOW + H)
    assert sorted(json.loads(e)["key"] for e in d.audit(op="add")["detail"]) == ["my pref", "用户.地址"]
    e = mk.MemoryStore()
    e.import_(tmp_path / "g.jsonl", now=NOW + H)
    keys = [json.loads(x)["key"] for x in e.audit(op="add")["detail"]]
    assert "用户.地址" in keys and not any("Elm" in k for k in keys)


def test_a_merge_re_derived_after_an_erasure_is_imported_again(tmp_path: Path) -> None:
    """Only text from before the erasure is held back: an export taken after it (the merge re-derived
    without the member) imports whole, here as a copy in another namespace."""
    s = mk.MemoryStore()
    texts = [
        "User likes black coffee. Lives in Paris.",
        "User likes black coffee. Has a cat.",
        "User likes black coffee.",
    ]
    for i, text in enumerate(texts):
        s.add(text, namespace="u", now=NOW + i * H)
    plan = s.consolidate("u", now=NOW + 3 * H, threshold=0.6, params=COSINE_ONLY)
    merged, members = plan["merged_id"][0], plan["members"][0]
    s.delete(members[1], now=NOW + 4 * H)
    s.export(tmp_path / "after.jsonl", namespace="u", now=NOW + 5 * H)
    report = s.import_(tmp_path / "after.jsonl", on_conflict="new_ids", namespace_map={"u": "copy"},
                       now=NOW + 6 * H)  # fmt: skip
    assert set(report["action"]) == {"added"} and merged in report["source_id"].to_list()
    assert s.frame("copy").height == s.frame("u").height


def test_an_imported_history_does_not_rewrite_what_the_store_saw_then(tmp_path: Path) -> None:
    """frame(as_of=t) after an overwriting import of a backup with events: the file's old events,
    appended after the store's own, do not outrank the store's later ones at t."""
    s = mk.MemoryStore()
    v1 = s.add("fact version one", key="k", namespace="u", requester="a", now=NOW)
    s.export(tmp_path / "backup.jsonl", include_events=True, now=NOW + H)
    v2 = s.add("fact version two", key="k", namespace="u", requester="a", now=NOW + 50 * H)
    at60 = s.frame("u", as_of=NOW + 60 * H).select("id", "status").rows()
    s.import_(tmp_path / "backup.jsonl", on_conflict="overwrite", now=NOW + 100 * H)
    assert s.frame("u", as_of=NOW + 60 * H).select("id", "status").rows() == at60
    assert dict(at60) == {v1.id: "superseded", v2.id: "active"}
