"""memkit/portable/plan.py ``seen_from`` + memkit/store/gate.py: a requester's import, and its get by id
alone, tell nothing of the ids of other namespaces (held, or erased), as ``get(id, namespace=)`` does."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

import memkit as mk

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _forged(s: mk.MemoryStore, tmp_path: Path, victim: str) -> tuple[Path, str]:
    """eve's export of her note, its id replaced by ``victim`` (another namespace's)."""
    e = s.add("Eve note", namespace="eve_ns", requester="eve", now=NOW)
    s.export(tmp_path / "e.jsonl", namespace="eve_ns", requester="eve", now=NOW)
    forged = tmp_path / "e2.jsonl"
    forged.write_text(
        (tmp_path / "e.jsonl").read_text(encoding="utf-8").replace(e.id, victim), encoding="utf-8"
    )
    return forged, e.id


def test_a_requesters_import_treats_another_namespaces_id_as_unknown(tmp_path: Path) -> None:
    with mk.MemoryStore() as s:
        a = s.add("Alice private diary", namespace="alice_ns", requester="alice", access="private", now=NOW)
        forged, _ = _forged(s, tmp_path, a.id)
        for on_conflict in ("skip", "overwrite", "error"):  # neither skipped, refused nor an error
            report = s.import_(forged, requester="eve", on_conflict=on_conflict, now=NOW)
            assert report["action"].to_list() == ["added"] and report["source_id"].to_list() == [a.id]
            assert report["id"][0] != a.id
            assert s.get(report["id"][0], namespace="eve_ns").content == "Eve note"
        assert s.get(a.id, namespace="alice_ns").content == "Alice private diary"  # untouched
        s.delete(a.id, namespace="alice_ns", now=NOW)
        report = s.import_(forged, requester="eve", now=NOW)  # erased elsewhere: not 'erased' here
        assert report["action"].to_list() == ["added"] and report["id"][0] != a.id


def test_within_its_namespace_and_for_the_operator_the_rules_stay(tmp_path: Path) -> None:
    with mk.MemoryStore() as s:
        a = s.add("Alice private diary", namespace="alice_ns", requester="alice", access="private", now=NOW)
        forged, own = _forged(s, tmp_path, a.id)
        assert s.import_(forged, now=NOW)["action"].to_list() == ["skipped"]  # the operator sees the store
        with pytest.raises(mk.FormatError, match="another namespace"):
            s.import_(forged, on_conflict="overwrite", now=NOW)
        s.delete(own, namespace="eve_ns", requester="eve", now=NOW)  # erased in its own namespace: final
        report = s.import_(tmp_path / "e.jsonl", requester="eve", on_conflict="overwrite", now=NOW)
        assert report["action"].to_list() == ["erased"]


def test_a_get_by_id_alone_of_an_unreadable_memory_is_not_found_and_audited() -> None:
    with mk.MemoryStore() as s:
        a = s.add("Alice private diary", namespace="alice_ns", requester="alice", access="private", now=NOW)
        p = s.add("Alice public note", namespace="alice_ns", requester="alice", now=NOW)
        denials = s.audit(op="deny").height
        with pytest.raises(mk.NotFound) as unknown:
            s.get(a.id, requester="eve", now=NOW)
        assert "private" not in str(unknown.value)
        with pytest.raises(mk.NotFound):
            s.delete(a.id, requester="eve", now=NOW)
        with pytest.raises(mk.AccessDenied, match="namespace"):  # one it may read: name its namespace
            s.get(p.id, requester="eve", now=NOW)
        assert s.audit(op="deny").height == denials + 3
        assert s.count("alice_ns") == 2
