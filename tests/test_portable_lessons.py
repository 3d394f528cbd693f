"""The guard's lessons travel in memkit's JSONL (format version 2): an export and import keep what
makes the guard behave the same, so the copy holds a repeat of a confirmed-bad text for review, as
the original does (h118 F2). Both backends."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest
from conftest import NOW, snapshot

import memkit as mk

ATTACK = "Buy cheap pills at example dot com"  # the guard's rules see nothing in it: only a lesson holds it


def _taught(store: mk.MemoryStore) -> str:
    """A store with one lesson (on ``ATTACK`` in ``u1``) and a plain memory -> the lesson's id."""
    m = store.add(ATTACK, namespace="u1", now=NOW)
    store.add("I like green tea", namespace="u1", now=NOW)
    store.add("other tenant", namespace="u2", now=NOW)
    return store.learn_lesson(m.id, reason="spam", now=NOW + timedelta(minutes=1))


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return path


LATER = NOW + timedelta(hours=1)


@pytest.mark.parametrize("kw", [{}, {"include_embeddings": True, "include_events": True}])
def test_lessons_travel_and_the_copy_holds_a_repeat(store: mk.MemoryStore, tmp_path: Path, kw: dict) -> None:
    lid = _taught(store)
    header = store.export(tmp_path / "a.jsonl", **kw, now=NOW)
    assert header["version"] == 2 and header["counts"]["lessons"] == 1
    assert _lines(tmp_path / "a.jsonl")[-1]["lesson"]["id"] == lid  # after the memories
    with mk.MemoryStore() as dst:
        report = dst.import_(tmp_path / "a.jsonl", now=LATER)
        assert report.filter(action="learned")["id"].to_list() == [lid]
        assert dst.lessons().equals(store.lessons())  # ids, namespace, memory, text, reason, who, when
        for s in (store, dst):  # the guard behaves the same: a repeat is held for review in both
            assert s.add(ATTACK, namespace="u1", now=LATER).status == "quarantined"
            assert s.add(ATTACK, namespace="u2", now=LATER).status == "active"  # lessons are per namespace
        # no event names a lesson the copy lacks (the file's `lesson` event, and the import's own)
        named = {json.loads(d)["lesson"] for d in dst.audit(op="lesson")["detail"]}
        assert named == {lid} and dst.audit(op="lesson").height == (2 if kw else 1)
        assert dst.import_(tmp_path / "a.jsonl", now=LATER)["action"].to_list() == ["skipped"] * 4


def test_a_file_without_lessons_is_version_1_and_imports_as_before(
    store: mk.MemoryStore, tmp_path: Path
) -> None:
    store.add("I like green tea", namespace="u1", now=NOW)
    header = store.export(tmp_path / "a.jsonl", now=NOW)
    assert header["version"] == 1 and "lessons" not in header["counts"]  # readable by an older memkit
    with mk.MemoryStore() as dst:
        assert dst.import_(tmp_path / "a.jsonl", now=LATER)["action"].to_list() == ["added"]
    lines = _lines(tmp_path / "a.jsonl")  # a version 2 header that counts no lesson reads too
    lines[0].update(version=2, counts={**lines[0]["counts"], "lessons": 0})
    with mk.MemoryStore() as dst:
        assert dst.import_(_write(tmp_path / "b.jsonl", lines), now=LATER)["action"].to_list() == ["added"]


def test_a_requester_neither_exports_nor_imports_lessons(store: mk.MemoryStore, tmp_path: Path) -> None:
    """Lessons are the reviewers' record: a requester's export leaves them out (version 1), and a
    requester's import of an operator's file reports them skipped (as it replays no history)."""
    lid = _taught(store)
    assert store.export(tmp_path / "r.jsonl", "u1", requester="bob", now=NOW)["version"] == 1
    store.export(tmp_path / "a.jsonl", "u1", now=NOW)
    rows = _lines(tmp_path / "a.jsonl")
    for r in rows[1:-1]:
        r["created_by"] = "bob"
    with mk.MemoryStore() as dst:
        report = dst.import_(_write(tmp_path / "b.jsonl", rows), requester="bob", now=LATER)
        assert report.filter(source_id=lid)["action"].to_list() == ["skipped"] and dst.lessons().height == 0


def test_an_unlearned_lesson_stays_unlearned(store: mk.MemoryStore, tmp_path: Path) -> None:
    """A reviewer's unlearn is the store's history: re-importing an older backup does not undo it."""
    lid = _taught(store)
    store.export(tmp_path / "a.jsonl", now=NOW)
    with mk.MemoryStore() as dst:
        dst.import_(tmp_path / "a.jsonl", now=LATER)
        dst.unlearn(lid, now=LATER)
        report = dst.import_(tmp_path / "a.jsonl", on_conflict="overwrite", now=LATER)
        assert report.filter(source_id=lid)["action"].to_list() == ["skipped"] and dst.lessons().height == 0


def test_new_ids_and_a_namespace_map_carry_the_lesson_along(store: mk.MemoryStore, tmp_path: Path) -> None:
    lid = _taught(store)
    store.export(tmp_path / "a.jsonl", "u1", include_embeddings=True, now=NOW)
    with mk.MemoryStore() as dst:
        report = dst.import_(
            tmp_path / "a.jsonl", on_conflict="new_ids", namespace_map={"u1": "v1"}, now=LATER
        )
        (les,) = dst.lessons().to_dicts()
        memory = report.filter(source_id=store.lessons()["memory_id"][0])["id"][0]
        assert les["id"] != lid and les["memory_id"] == memory and les["namespace"] == "v1"
        assert dst.add(ATTACK, namespace="v1", now=LATER).status == "quarantined"


def test_pii_in_a_lesson_is_redacted_by_the_importing_store(store: mk.MemoryStore, tmp_path: Path) -> None:
    _taught(store)
    store.export(tmp_path / "a.jsonl", now=NOW)
    rows = _lines(tmp_path / "a.jsonl")
    rows[-1]["lesson"]["reason"] = "reported by alice@example.com"
    with mk.MemoryStore() as dst:
        dst.import_(_write(tmp_path / "b.jsonl", rows), now=LATER)
        assert dst.lessons()["reason"].to_list() == ["reported by [EMAIL]"]


def test_a_lesson_of_a_memory_erased_here_comes_in_erased(store: mk.MemoryStore, tmp_path: Path) -> None:
    """Erasure is final: the lesson keeps its vector (a repeat is still held), not the erased text."""
    m = store.add(ATTACK, namespace="u1", now=NOW)
    store.export(tmp_path / "before.jsonl", now=NOW)
    store.learn_lesson(m.id, reason="spam", now=NOW)
    store.export(tmp_path / "after.jsonl", include_embeddings=True, now=NOW)
    with mk.MemoryStore() as dst:
        dst.import_(tmp_path / "before.jsonl", now=LATER)
        dst.delete(m.id, namespace="u1", now=LATER)
        report = dst.import_(tmp_path / "after.jsonl", now=LATER)
        assert report["action"].to_list() == ["erased", "learned"]
        assert dst.lessons().select("content", "reason").rows() == [("[erased]", "[erased]")]
        assert dst.add(ATTACK, namespace="u1", now=LATER).status == "quarantined"


def test_an_erased_lesson_needs_its_vector(store: mk.MemoryStore, tmp_path: Path) -> None:
    """A lesson whose memory was erased has only its vector: with the embeddings it travels and
    holds repeats; without them it comes in inert, and the import says so."""
    m = store.add(ATTACK, namespace="u1", now=NOW)
    store.add("I like green tea", namespace="u1", now=NOW)
    store.learn_lesson(m.id, reason="spam", now=NOW)
    store.delete(m.id, namespace="u1", now=NOW)
    store.export(tmp_path / "v.jsonl", include_embeddings=True, now=NOW)
    store.export(tmp_path / "t.jsonl", now=NOW)
    with mk.MemoryStore() as dst:
        assert dst.import_(tmp_path / "v.jsonl", now=LATER)["action"].to_list() == ["added", "learned"]
        assert dst.add(ATTACK, namespace="u1", now=LATER).status == "quarantined"
    with mk.MemoryStore() as dst, pytest.warns(UserWarning, match="1 erased lesson"):
        assert dst.import_(tmp_path / "t.jsonl", now=LATER)["action"].to_list() == ["added", "inert"]
        assert dst.lessons()["content"].to_list() == ["[erased]"]


def _lesson(**changes: object):
    def edit(rows: list[dict]) -> list[dict]:
        rows[-1]["lesson"].update(changes)
        return rows

    return edit


def _drop(field: str):
    def edit(rows: list[dict]) -> list[dict]:
        del rows[-1]["lesson"][field]
        return rows

    return edit


def _twice(rows: list[dict]) -> list[dict]:
    rows[0]["counts"]["lessons"] = 2
    return [*rows, rows[-1]]


def _v1(rows: list[dict]) -> list[dict]:
    rows[0]["version"] = 1
    del rows[0]["counts"]["lessons"]
    return rows


def _uncounted(rows: list[dict]) -> list[dict]:
    del rows[0]["counts"]["lessons"]
    return rows


LESSON_BAD = {
    "secret text": (
        _lesson(content="my key is sk-live-4eC39HqLyjWDarjtT1zdp7dc"),
        "line 5: lesson.content: holds a secret",
    ),
    "secret reason": (
        _lesson(reason="its key sk-live-4eC39HqLyjWDarjtT1zdp7dc"),
        "line 5: lesson.reason: holds a secret",
    ),
    "secret requester": (_lesson(requester="sk-live-4eC39HqLyjWDarjtT1zdp7dc"), "line 5: lesson.requester"),
    "secret id": (_lesson(id="sk-live-4eC39HqLyjWDarjtT1zdp7dc"), "line 5: lesson.id: holds"),
    "not an id": (_lesson(memory_id="ignore all rules"), "line 5: lesson.memory_id: must be an identifier"),
    "missing field": (_drop("reason"), "line 5: lesson.reason: is missing"),
    "extra field": (_lesson(colour="red"), "line 5: lesson.colour: is not a lesson field"),
    "missing vector": (_drop("embedding"), "line 5: lesson.embedding: is missing"),
    "zero vector": (_lesson(embedding=[0.0] * 384), "line 5: lesson.embedding: is all zeros"),
    "huge vector": (_lesson(embedding=[1e30] * 384), "line 5: lesson.embedding: is too large"),
    "long reason": (_lesson(reason="x" * 1001), "line 5: lesson.reason: is 1001 characters"),
    "naive time": (_lesson(created_at="2026-01-01T00:00:00"), "line 5: lesson.created_at"),
    "empty text": (_lesson(content=" "), "line 5: lesson.content: must not be empty"),
    "repeated": (_twice, "line 6: lesson.id: .* repeats the id of the lesson in line 5"),
    "version 1": (_v1, "line 5: lesson: is not a field named in the header"),
    "uncounted": (_uncounted, "line 1: counts: must be"),
    "miscounted": (lambda rows: rows[:-1], "line 1: counts: the header says 1 lessons, the file has 0"),
}


@pytest.mark.parametrize("case", sorted(LESSON_BAD))
def test_a_bad_lesson_line_refuses_the_file(store: mk.MemoryStore, tmp_path: Path, case: str) -> None:
    _taught(store)
    store.export(tmp_path / "a.jsonl", include_embeddings=True, now=NOW)
    edit, match = LESSON_BAD[case]
    bad = _write(tmp_path / "bad.jsonl", edit(_lines(tmp_path / "a.jsonl")))
    with mk.MemoryStore() as dst:
        dst.add("already here", namespace="u1", now=NOW)
        before = snapshot(dst)
        with pytest.raises(mk.FormatError, match=match):
            dst.import_(bad, now=LATER)
        assert dst.count() == before[0] and dst.audit().equals(before[2]) and dst.lessons().height == 0


SECRET = "Anna Smith lives at 12 Elm Road Springfield"


@pytest.mark.parametrize("on_conflict", ["skip", "overwrite", "new_ids"])
def test_a_backup_does_not_bring_back_a_reason_an_erasure_took(
    store: mk.MemoryStore, tmp_path: Path, on_conflict: str
) -> None:
    """h126 F0 (a): a lesson whose reason quotes a memory deleted since stays erased here, and a
    ``new_ids`` import copies no stored lesson (no duplicate, no second copy with the old reason)."""
    x = store.add(SECRET, namespace="u1", now=NOW).id
    z = store.add(ATTACK, namespace="u1", now=NOW).id
    store.learn_lesson(z, reason=f"spam; same sender as '{SECRET}'", namespace="u1", now=NOW)
    store.export(tmp_path / "a.jsonl", include_embeddings=True, now=NOW)
    store.delete(x, namespace="u1", now=LATER)
    assert store.lessons()["reason"].to_list() == ["[erased]"]
    for _ in range(2):  # and again: a repeated import adds no copy either
        report = store.import_(tmp_path / "a.jsonl", on_conflict=on_conflict, now=LATER)
        assert report.filter(pl.col("source_id") == store.lessons()["id"][0])["action"].to_list() == [
            "skipped"
        ]
        assert store.lessons()["reason"].to_list() == ["[erased]"]


def test_a_backup_does_not_bring_back_the_old_text_of_a_rederived_merge(
    store: mk.MemoryStore, tmp_path: Path
) -> None:
    """h126 F0 (b): a lesson on a merge an erasure re-derived comes in erased (the merge's old text
    held the erased one), as deleting made the stored one; here a lesson of an id not stored yet."""
    x = store.add(
        "buy cheap pills now at pillz, ask for the blue door on elm road", namespace="u1", now=NOW
    ).id
    store.add("buy cheap pills now at pillz", namespace="u1", now=NOW)
    merged = store.consolidate("u1", now=NOW, threshold=0.5)["merged_id"][0]
    store.learn_lesson(merged, reason="spam", namespace="u1", now=NOW)
    store.export(tmp_path / "a.jsonl", include_embeddings=True, include_events=True, now=NOW)
    store.delete(x, namespace="u1", now=LATER)
    assert store.lessons().select("content", "reason").rows() == [("[erased]", "[erased]")]
    lessons = [r for r in _lines(tmp_path / "a.jsonl") if "lesson" in r]
    memories = [r for r in _lines(tmp_path / "a.jsonl") if "lesson" not in r]
    for on_conflict in ("skip", "new_ids"):
        lessons[0]["lesson"]["id"] = f"l-{on_conflict}"  # one this store does not hold, on the merge
        store.import_(_write(tmp_path / "b.jsonl", memories + lessons), on_conflict=on_conflict, now=LATER)
        texts = store.lessons().select("content", "reason").rows()
        assert all(c == r == "[erased]" for c, r in texts) and not any("elm" in c for c, _ in texts)
