"""memkit/store/leave.py: an import's ``overwrite`` that moves a merged member out of its merge's group
(access, owner, creator) makes it leave the merge, so erasing it later still takes its text out of the
whole file; a merge is never moved away from its members; the import stays all or nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from conftest import assert_unchanged, snapshot

import memkit as mk

NOW = datetime(2026, 1, 1, tzinfo=UTC)
H = timedelta(hours=1)
MARK = "袋鼠路四十二号独一无二"  # unique, greppable: only member A holds it
BASE = "用户喜欢美式咖啡"
# texts this file merges on purpose differ in fact tokens (memkit.facts): merged by cosine alone
COSINE_ONLY = mk.MergeParams(distinct_facts=False)


def _bytes(path: Path) -> bytes:
    """The database file and anything beside it (write-ahead log, leftovers): as test_erasure.py."""
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


def _open(backend: str, tmp_path: Path) -> tuple[mk.MemoryStore, Path | None]:
    """A DuckDB file (its bytes can be grepped), or a fresh PostgreSQL schema."""
    if backend == "duckdb":
        path = tmp_path / "m.duckdb"
        return mk.MemoryStore(str(path)), path
    return mk.MemoryStore(), None


def _merged(s: mk.MemoryStore, requester: str | None = None) -> tuple[str, str, str]:
    """A (holds MARK) and B, merged into M -> (a, b, m) ids."""
    a = s.add(f"{BASE}。{MARK}", namespace="u", requester=requester, now=NOW)
    b = s.add(BASE, namespace="u", requester=requester, now=NOW + H)
    m = s.consolidate("u", threshold=0.5, now=NOW + 2 * H, params=COSINE_ONLY)["merged_id"][0]
    assert m is not None and MARK in s.get(m, namespace="u").content
    return a.id, b.id, m


def _rewrite(path: Path, changes: dict[str, dict[str, Any]]) -> None:
    """Edit the exported file: ``changes`` maps an id to the fields its line gets."""
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row.update(changes.get(row.get("id"), {}))
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")


def _nowhere(s: mk.MemoryStore, path: Path | None, tmp_path: Path) -> None:
    """MARK is nowhere: rows, search, an export; on DuckDB the file's bytes."""
    assert MARK not in s.frame().write_json()
    hits = s.search(MARK, namespace="u", k=10, now=NOW + 9 * H, weights=mk.Weights(keyword=1.0))
    assert MARK not in "".join(hits["content"])
    s.export(tmp_path / "after.jsonl", include_embeddings=True, include_events=True, now=NOW + 9 * H)
    assert MARK not in (tmp_path / "after.jsonl").read_text(encoding="utf-8")
    if path is not None:
        assert MARK.encode("utf-8") not in _bytes(path)


CHANGES = {  # another group for member A: access, owner or creator
    "access": {"access": "private", "owner": "alice"},
    "owner": {"owner": "carol"},
    "created_by": {"created_by": "dave"},
}


@pytest.mark.parametrize("change", [*CHANGES, "as_creator"])
def test_a_member_moved_out_of_its_merges_group_leaves_it_and_its_erasure_is_final(
    backend: str, tmp_path: Path, change: str
) -> None:
    """add A, B -> consolidate into M; export; overwrite A with another access (owner, creator; or as
    its creator, private to itself): M is re-derived from B at once, A keeps its text and takes its
    line's status; deleting A then leaves its text nowhere in the file."""
    who = "bob" if change == "as_creator" else None
    s, path = _open(backend, tmp_path)
    with s:
        a, b, m = _merged(s, who)
        f = tmp_path / "u.jsonl"
        s.export(f, "u", include_embeddings=True, requester=who, now=NOW + 3 * H)
        _rewrite(f, {a: {"access": "private", "status": "active"} if who else
                     {**CHANGES[change], "status": "active"}})  # fmt: skip
        report = s.import_(f, on_conflict="overwrite", requester=who, now=NOW + 4 * H)
        assert report.filter(pl.col("id") == a)["action"].to_list() == ["overwritten"]
        merged = s.get(m, namespace="u")
        assert MARK not in merged.content and merged.content == BASE and merged.status == "active"
        assert set(merged.merged_from) == {a, b}  # lineage keeps the ids
        moved = s.get(a, namespace="u")
        assert MARK in moved.content and moved.status == "active"  # its line's status, not held
        rederived = s.audit("u", op="merge").filter(pl.col("memory_id") == m)["detail"].to_list()[-1]
        assert json.loads(rederived)["rederived"] is True and json.loads(rederived)["members"] == [b]
        hits = s.search(MARK, namespace="u", k=10, now=NOW + 5 * H, weights=mk.Weights(keyword=1.0))
        assert hits.filter(pl.col("id") == m)["content"].to_list() in ([], [BASE])  # the index's too
        s.delete(a, namespace="u", now=NOW + 6 * H)
        assert s.get(m, namespace="u").content == BASE
        _nowhere(s, path, tmp_path)


@pytest.mark.parametrize("member", [0, 1])
def test_a_member_that_leaves_with_its_exported_status_is_active_again(
    backend: str, tmp_path: Path, member: int
) -> None:
    """Review (helper 114): an export made after the merge calls every member ``superseded``; a user who
    changed only a member's access left its text in no live row (the merge re-derived without it, it
    still superseded). Superseded by nothing but the merge it left, it is active again; either member
    (the merge's ``supersedes`` names one of them)."""
    s, _ = _open(backend, tmp_path)
    with s:
        ids = _merged(s)
        x = ids[member]
        f = tmp_path / "u.jsonl"
        s.export(f, "u", now=NOW + 3 * H)
        _rewrite(f, {x: {"access": "private"}})  # its status stays the exported "superseded"
        s.import_(f, on_conflict="overwrite", now=NOW + 4 * H)
        left = s.get(x, namespace="u")
        assert left.status == "active" and left.access == "private"
        hits = s.search(left.content, namespace="u", k=10, now=NOW + 5 * H, weights=mk.Weights(keyword=1.0))
        assert x in hits["id"].to_list()  # found again: its text is in a live row


def test_a_merge_moved_with_all_its_members_keeps_them(backend: str, tmp_path: Path) -> None:
    """Moving the whole family (merge and members) changes no lineage: nothing is re-derived, and an
    erasure of a member in the new group still re-derives the merge."""
    s, path = _open(backend, tmp_path)
    with s:
        a, b, m = _merged(s)
        f = tmp_path / "u.jsonl"
        s.export(f, "u", now=NOW + 3 * H)
        _rewrite(f, {x: CHANGES["access"] for x in (a, b, m)})
        s.import_(f, on_conflict="overwrite", now=NOW + 4 * H)
        assert MARK in s.get(m, namespace="u").content and s.get(a, namespace="u").status == "superseded"
        assert not s.audit("u", op="merge").filter(pl.col("ts") > NOW + 3 * H).height
        s.delete(a, namespace="u", now=NOW + 5 * H)
        assert s.get(m, namespace="u").content == BASE
        _nowhere(s, path, tmp_path)


def test_a_merge_whose_members_all_leave_is_erased(backend: str, tmp_path: Path) -> None:
    """Both members moved out: the merge has no member of its group left and goes, as an erasure of
    its members would take it; its old line is kept out of a later import."""
    s, path = _open(backend, tmp_path)
    with s:
        a, b, m = _merged(s)
        f = tmp_path / "u.jsonl"
        s.export(f, "u", now=NOW + 3 * H)
        _rewrite(f, {a: CHANGES["access"], b: CHANGES["access"]})
        s.import_(f, on_conflict="overwrite", now=NOW + 4 * H)
        with pytest.raises(mk.NotFound):
            s.get(m, namespace="u")
        detail = json.loads(s.audit("u", op="delete")["detail"].to_list()[-1])
        assert detail["reason"] == "no member left"
        again = s.import_(f, on_conflict="overwrite", now=NOW + 5 * H)
        assert again.filter(pl.col("id") == m)["action"].to_list() == ["erased"]
        s.delete(a, namespace="u", now=NOW + 6 * H)
        _nowhere(s, path, tmp_path)


@pytest.mark.parametrize("how", ["merge_alone", "merge_with_one", "namespace"])
def test_an_overwrite_never_moves_a_merge_away_from_its_members(
    backend: str, tmp_path: Path, how: str
) -> None:
    """A merge moved without its members would be left with none of its group (erased by its own
    overwrite): refused, naming the line and field, nothing written; so is a namespace map that would
    move a member (an overwrite stays in its namespace). A member that would leave another merge in
    the same file is not left half-done."""
    with mk.MemoryStore() as s:
        a, b, m = _merged(s)
        c = s.add("the deploy script lives in ops/deploy.sh", namespace="u", now=NOW + 2 * H).id
        d = s.add("the deploy script lives in ops/deploy.sh!", namespace="u", now=NOW + 2 * H).id
        n = s.consolidate("u", threshold=0.5, now=NOW + 3 * H, params=COSINE_ONLY)["merged_id"][0]
        assert n is not None
        f = tmp_path / "u.jsonl"
        s.export(f, "u", now=NOW + 3 * H)
        moves = {"merge_alone": {m: CHANGES["owner"]}, "merge_with_one": {m: CHANGES["owner"],
                 a: CHANGES["owner"]}, "namespace": {}}[how]  # fmt: skip
        _rewrite(f, {c: CHANGES["access"], **moves})  # c would leave n
        before = snapshot(s)
        kw: dict[str, Any] = {"namespace_map": {"u": "v"}} if how == "namespace" else {}
        with pytest.raises(mk.errors.ValidationError) as e:
            s.import_(f, on_conflict="overwrite", now=NOW + 4 * H, **kw)
        assert_unchanged(s, before)
        field = "id" if how == "namespace" else "owner"
        assert e.value.field.endswith(f": {field}") and (how == "namespace" or m in str(e.value))
        assert {d, n} <= set(s.frame("u")["id"].to_list())
        hits = s.search("deploy script", namespace="u", k=10, now=NOW + 5 * H)
        assert n in hits["id"].to_list()


def test_a_leave_inside_a_transaction_that_rolls_back_changes_nothing(backend: str, tmp_path: Path) -> None:
    """The re-derivation is part of the import's transaction: an outer transaction rolled back after
    it leaves the rows, the log and the index as they were."""
    with mk.MemoryStore() as s:
        a, _b, m = _merged(s)
        f = tmp_path / "u.jsonl"
        s.export(f, "u", now=NOW + 3 * H)
        _rewrite(f, {a: CHANGES["access"]})
        before = snapshot(s)
        with pytest.raises(RuntimeError), s.transaction():
            s.import_(f, on_conflict="overwrite", now=NOW + 4 * H)
            assert MARK not in s.get(m, namespace="u").content  # (inside: re-derived)
            raise RuntimeError("roll back")
        assert_unchanged(s, before)
        hits = s.search(MARK, namespace="u", k=10, now=NOW + 5 * H, weights=mk.Weights(keyword=1.0))
        assert m in hits["id"].to_list()  # the index was left as it was


def test_a_merge_line_that_no_longer_lists_a_member_lets_it_go(backend: str, tmp_path: Path) -> None:
    """The merge's own line, overwritten without A in ``merged_from``: A leaves it as if it had moved
    (the merge's text no longer holds A's), so the lineage and the text agree again."""
    with mk.MemoryStore() as s:
        a, b, m = _merged(s)
        f = tmp_path / "u.jsonl"
        s.export(f, "u", now=NOW + 3 * H)
        _rewrite(f, {m: {"merged_from": [b]}})
        s.import_(f, on_conflict="overwrite", now=NOW + 4 * H)
        merged = s.get(m, namespace="u")
        assert merged.content == BASE and merged.merged_from == (b,)
        assert s.get(a, namespace="u").status == "superseded"  # not overwritten: as it was


def test_an_overwrite_leaves_a_forged_lineage_as_it_is(backend: str, tmp_path: Path) -> None:
    """bob's memory whose ``merged_from`` names alice's memory (forged in a file) is no merge of it:
    an overwrite that gives alice's memory another access neither rewrites nor erases bob's."""
    with mk.MemoryStore() as s:
        a = s.add(f"alice note {MARK}", namespace="team", requester="alice", now=NOW)
        with mk.MemoryStore() as other:
            forged = other.add(
                f"bob merged note {MARK}", namespace="team", requester="bob", access="private", now=NOW
            )  # (alice's export holds none of it)
            other.export(tmp_path / "b.jsonl", "team")
        _rewrite(tmp_path / "b.jsonl", {forged.id: {"merged_from": [a.id]}})
        s.import_(tmp_path / "b.jsonl", requester="bob", now=NOW)
        kept = s.get(forged.id)
        s.export(tmp_path / "a.jsonl", "team", requester="alice", now=NOW + H)
        _rewrite(tmp_path / "a.jsonl", {a.id: {"access": "private"}})
        s.import_(tmp_path / "a.jsonl", on_conflict="overwrite", requester="alice", now=NOW + 2 * H)
        assert s.get(a.id).access == "private" and s.get(forged.id) == kept
        assert not s.audit("team").filter(pl.col("op").is_in(["merge", "delete"])).height
